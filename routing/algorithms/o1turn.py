"""O1TURN: XY or YX, drawn per packet, on two VC sets (Seo, Ali, Lim, Rafique and Thottethodi,
"Near-optimal worst-case throughput routing for two-dimensional mesh networks", ISCA 2005)."""

from __future__ import annotations

from typing import Any

from icsim.model.config import ConfigError
from icsim.routing.algorithms.dor import dor_mask
from icsim.routing.program import OFFSET, Option, Phase, Program, Uniform
from icsim.routing.registry import ESCAPE, VC, EscapeSettings, Routing, register


@register("o1turn")
class O1Turn(Routing):
    """On a 2-D mesh or torus, each packet draws at injection, half and half, dimension order
    XY (on the ``xy`` VC) or YX (on the ``yx`` VC); each order's dependencies are acyclic on a
    mesh, and on a torus its rings keep the bubble rule.  Minimal, oblivious: half of every
    pair's traffic takes each of its two one-turn paths, which on a mesh balances the
    channels that DOR overloads (the y channels at a mesh's edge gather k - 1 flows of a
    permutation under XY).  Ties at k/2 go +, as DOR's.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.config import Config
    >>> o1 = O1Turn(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
    >>> [int(p.ports[9]) for p in o1.program().phases]          # offset (+1, +1): x+, y+
    [1, 4]
    """

    vcs = (VC("xy", ESCAPE, bubble=True), VC("yx", ESCAPE, bubble=True))
    requires = frozenset({"offsets"})
    Settings = EscapeSettings

    @classmethod
    def check_config(cls, topology: Any, config: Any, settings: Any) -> None:
        if len(topology.dims) != 2:
            raise ConfigError("topology.dims", f"O1TURN routes 2-D networks; "
                                               f"{topology.describe()} has {len(topology.dims)} "
                                               f"dimensions")

    def program(self) -> Program:
        return Program((Phase(OFFSET, ports=dor_mask(self.topology), escape_vc=0),
                        Phase(OFFSET, ports=dor_mask(self.topology, reverse=True), escape_vc=1)),
                       Uniform((Option(phase=0), Option(phase=1))))
