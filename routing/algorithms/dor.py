"""Dimension-order routing (DOR): the baseline, and the escape network of the adaptive routers."""

from __future__ import annotations

from typing import Any

import numpy as np

from icsim.model.topology import NO_PORT
from icsim.routing.registry import ESCAPE, VC, Groups, Routing, register


def require_torus(topology: Any, algorithm: str) -> None:
    """Coordinate routing needs a healthy torus."""
    if topology.kind != "torus":
        raise ValueError(f"{algorithm} routes on tori; topology is {topology.describe()} "
                         f"(use routing.algorithm: table on graphs)")
    if topology.has_failures:
        raise ValueError(f"{algorithm} routes on a healthy torus; {topology.describe()} has "
                         f"failed links or nodes (use routing.algorithm: table, whose "
                         f"generators route around them)")


@register("dor")
class DimensionOrder(Routing):
    """First dimension with a non-zero offset, in its minimal direction (+ at an exact k/2 tie),
    on one escape VC per direction under the bubble rule.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.packet import Packet
    >>> from icsim.model.config import Config
    >>> dor = DimensionOrder(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
    >>> p = Packet(0, src=0, dst=6, birth=0, age=0, measured=False)
    >>> dor.candidates(0, p), dor.candidates(2, p), dor.candidates(6, p)
    ((((0, 0),),), (((2, 0),),), (((4, 0),),))
    """

    vcs = (VC("escape", ESCAPE, bubble=True),)

    def __init__(self, topology: Any, config: Any, settings: Any = None):
        super().__init__(topology, config, settings)
        self._codes = topology.relative_codes
        self._base = topology.relative_base
        self._ports = topology.dor_port_table
        self._groups = tuple((((p, 0),),) for p in range(topology.num_ports))

    @classmethod
    def check_config(cls, topology: Any, config: Any, settings: Any) -> None:
        require_torus(topology, cls.name)

    def compiled(self) -> dict:
        return {"kind": 0, "dor_ports": np.frombuffer(self._ports, dtype=np.uint8)}

    def candidates(self, node: int, packet) -> Groups:
        codes = self._codes
        port = self._ports[codes[packet.dst] - codes[node] + self._base]
        if port == NO_PORT:
            return self.eject_groups
        return self._groups[port]
