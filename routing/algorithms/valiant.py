"""Valiant's randomised routing (VAL): to a node drawn uniformly at random, then to the
destination, each leg by dimension order (Valiant and Brebner, "Universal schemes for parallel
communication", STOC 1981; on tori as in the RLB, GOAL and CQR papers' comparisons)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from icsim.routing.algorithms.dor import dor_masks
from icsim.routing.program import OFFSET, Option, Phase, Program, RandomTarget
from icsim.routing.registry import ESCAPE, VC, EscapeSettings, Routing, register


class ValSettings(EscapeSettings):
    """``routing.val``: ``tie`` -- at an exact k/2 tie each leg goes ``plus`` (as icsim's DOR)
    or a side drawn per packet and leg (``random``, the default: the published analyses'
    VAL, half of capacity on every traffic)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tie: Literal["plus", "random"] = "random"


@register("val")
class Valiant(Routing):
    """A packet draws an intermediate node uniformly over the network
    (:class:`~icsim.routing.program.RandomTarget`), goes there by dimension order on the first
    escape VC, then to its destination by dimension order on the second.  Any traffic becomes
    two rounds of uniform traffic: half of the uniform throughput of a balanced minimal
    routing, whatever the pattern, at twice its hops.  Every packet counts as derouted
    (``valiant``).

    With ``tie: random`` each leg's direction at an exact k/2 tie is drawn independently (four
    options of first- and second-leg phases, one draw after the intermediate's); the sides of
    the dimensions of one leg are drawn together, as DOR's ``tie: random``.  The paper's
    deadlock avoidance (a VC set per phase, datelines in each ring) is one escape VC per leg
    under the bubble rule here (docs/model.md §4).  The README's plug-in example
    (``tests/plugins/valiant.py``) is this algorithm with + ties.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.config import Config
    >>> val = Valiant(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
    >>> [(o.phase, val.program().phases[o.phase].next) for o in val.program().decision.options()]
    [(0, 4), (1, 5), (2, 4), (3, 5)]
    """

    vcs = (VC("to_intermediate", ESCAPE, bubble=True, priority=1),
           VC("to_destination", ESCAPE, bubble=True))         # escape_priority: E_final first
    requires = frozenset({"offsets"})
    deroute_kinds = ("valiant",)
    deroute_styles = {"valiant": "--"}
    Settings = ValSettings

    def program(self) -> Program:
        plus, minus = dor_masks(self.topology)
        if self.settings.tie == "plus":
            return Program((Phase(OFFSET, ports=plus, escape_vc=0, next=1),
                            Phase(OFFSET, ports=plus, escape_vc=1)),
                           RandomTarget(Option(phase=0, kind="valiant")))
        first = [Phase(OFFSET, ports=p, escape_vc=0, next=4 + j)
                 for p in (plus, minus) for j in (0, 1)]
        second = [Phase(OFFSET, ports=p, escape_vc=1) for p in (plus, minus)]
        options = [Option(phase=i, kind="valiant") for i in range(4)]
        return Program((*first, *second), RandomTarget(options[0], tuple(options[1:])))
