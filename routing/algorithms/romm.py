"""Two-phase ROMM: minimal oblivious routing through a random intermediate node of the minimal
box (Nesson and Johnsson, "ROMM routing on mesh and torus networks", SPAA 1995; the two-phase
variant the RLB and GOAL papers compare with)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from icsim.routing.algorithms.dor import dor_masks
from icsim.routing.program import OFFSET, Option, Phase, Program, RandomInBox
from icsim.routing.registry import ESCAPE, VC, EscapeSettings, Routing, register


class RommSettings(EscapeSettings):
    """``routing.romm``: ``tie`` -- at an exact k/2 tie the box lies on the + side
    (``plus``, as icsim's DOR) or on a side drawn per packet and dimension (``random``, the
    published analyses' ROMM)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tie: Literal["plus", "random"] = "plus"


@register("romm")
class Romm(Routing):
    """A packet draws, at injection, an intermediate node uniformly from the minimal box of its
    source and destination (:class:`~icsim.routing.program.RandomInBox`), goes there by
    dimension order on the first escape VC, then to its destination by dimension order on the
    second: a minimal path that spreads a permutation's packets over the box.

    The paper's deadlock avoidance (virtual channels per phase, dateline VCs per ring) is
    replaced here by one escape VC per phase under the bubble rule, as icsim's DOR does: a
    packet only moves from the first VC to the second, and each phase's rings are kept
    deadlock-free by the bubble (docs/model.md §4).  With ``tie: random`` both phases carry
    both ports at a tie and the packet's port filter keeps the side it drew.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.config import Config
    >>> romm = Romm(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
    >>> type(romm.program().decision).__name__, len(romm.program().phases)
    ('RandomInBox', 2)
    """

    vcs = (VC("to_intermediate", ESCAPE, bubble=True, priority=1),
           VC("to_destination", ESCAPE, bubble=True))         # escape_priority: E_final first
    requires = frozenset({"offsets", "rings"})
    Settings = RommSettings

    def program(self) -> Program:
        plus, minus = dor_masks(self.topology)
        ties = self.settings.tie == "random"
        ports = plus | minus if ties else plus
        return Program((Phase(OFFSET, ports=ports, escape_vc=0, next=1, filtered=ties),
                        Phase(OFFSET, ports=ports, escape_vc=1, filtered=ties)),
                       RandomInBox(Option(phase=0), random_ties=ties))
