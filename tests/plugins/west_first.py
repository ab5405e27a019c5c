"""West-first routing on a 2D mesh (Glass and Ni's turn model): every west hop first, then the
minimal directions adaptively; one VC, no bubble (the turns it forbids break every cycle)."""

import numpy as np

from icsim.routing.program import OFFSET, Phase, Program
from icsim.routing.registry import ADAPTIVE, ROUTING, VC, Routing


@ROUTING.register("west_first")
class WestFirst(Routing):
    requires = frozenset({"coordinates", "offsets"})
    vcs = (VC("adaptive", ADAPTIVE),)

    @classmethod
    def check_config(cls, topology, config, settings):
        if topology.n != 2 or any(topology.is_ring(d) for d in range(2)):
            raise ValueError(f"west_first routes on a 2D mesh, not on {topology.describe()}")

    def program(self):
        off = self.topology.relative_offsets()          # (dx, dy) of every relative index
        dx, dy = off[:, 0], off[:, 1]
        adaptive = (np.where(dx > 0, 1 << 0, 0) | np.where(dy > 0, 1 << 2, 0)
                    | np.where(dy < 0, 1 << 3, 0))
        ports = np.where(dx < 0, 1 << 1, adaptive)    # west (x-) first, alone
        return Program((Phase(OFFSET, ports=ports, adaptive_vc=0),))
