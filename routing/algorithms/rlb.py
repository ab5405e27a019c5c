"""Randomized Local Balance (RLB) and its threshold variant (RLBth): oblivious routing that
trades a little locality for load balance on a torus (Singh, Dally, Towles and Gupta,
"Locality-preserving randomized oblivious routing on torus networks", SPAA 2002)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from icsim.routing.algorithms.adaptive import both_dimension_ports
from icsim.routing.algorithms.dor import dor_mask
from icsim.routing.program import OFFSET, Option, Phase, Program, RandomInBox
from icsim.routing.registry import ESCAPE, VC, EscapeSettings, Routing, register


class RlbthSettings(EscapeSettings):
    """``routing.rlbth``: ``threshold`` -- a dimension whose minimal distance is below it is
    routed the minimal way (default 2: on the 8-ary cubes of the paper, a distance of 1 never
    goes the long way, whose 7 hops RLB takes one time in 8)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    threshold: int = Field(2, ge=0)


@register("rlb")
class Rlb(Routing):
    """In each dimension a direction is drawn -- the minimal one with probability (k - Δ)/k,
    the other with Δ/k, Δ the minimal distance -- then an intermediate node uniformly from
    the box those directions span (:class:`~icsim.routing.program.RandomInBox`, balanced); the
    packet goes there in dimension order on the first escape VC and on to its destination in
    dimension order on the second, always in the drawn directions (its port filter).  Every
    dimension's load is balanced over both directions in proportion to their lengths, so no
    permutation loads a ring more than uniform traffic over that dimension would twice.

    Deadlock: by default one escape VC per phase under the bubble rule, as ROMM and DOR
    (docs/model.md §4); ``routing.rlb.deadlock: dateline`` gives each phase two dateline VCs
    instead (:class:`~icsim.routing.registry.EscapeSettings`).

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.config import Config
    >>> rlb = Rlb(Torus((8, 8)), Config(topology={"dims": [8, 8]}))
    >>> rlb.program().decision.balanced, [bin(m) for m in rlb.program().phases[0].ports[:2]]
    (True, ['0b0', '0b11'])
    """

    vcs = (VC("to_intermediate", ESCAPE, bubble=True, priority=1),
           VC("to_destination", ESCAPE, bubble=True))         # escape_priority: E_final first
    requires = frozenset({"offsets", "rings"})
    Settings = EscapeSettings
    threshold = 0

    def program(self) -> Program:
        # dimension order, both directions of its dimension: the port filter picks the drawn one
        ports = both_dimension_ports(dor_mask(self.topology), self.topology.n)
        return Program((Phase(OFFSET, ports=ports, escape_vc=0, next=1, filtered=True),
                        Phase(OFFSET, ports=ports, escape_vc=1, filtered=True)),
                       RandomInBox(Option(phase=0), balanced=True,
                                   threshold=self._threshold()))

    def _threshold(self) -> int:
        return self.threshold


@register("rlbth")
class Rlbth(Rlb):
    """RLB, except that a dimension whose minimal distance is below ``routing.rlbth.threshold``
    goes the minimal way: local traffic stays local (the paper's RLBth)."""

    Settings = RlbthSettings

    def _threshold(self) -> int:
        return self.settings.threshold
