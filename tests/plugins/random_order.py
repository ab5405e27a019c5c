"""Dimension-order routing in a random order per packet (O1TURN on 2D tori, generalised): at
injection the source draws one of the n! orders of the dimensions; the packet then routes in
that order, on a VC of the order's own under the bubble rule, so that no two orders share a
ring's buffers."""

from itertools import permutations

import numpy as np

from icsim.routing.program import OFFSET, Option, Phase, Program, Uniform
from icsim.routing.registry import ESCAPE, ROUTING, VC, Routing


@ROUTING.register("random_order")
class RandomOrder(Routing):
    requires = frozenset({"offsets"})

    def __init__(self, topology, config, settings=None):
        super().__init__(topology, config, settings)
        self.orders = list(permutations(range(topology.n)))
        self.vcs = tuple(VC(f"order{i}", ESCAPE, bubble=True) for i in range(len(self.orders)))

    def program(self):
        off = self.topology.relative_offsets()          # signed minimal offset per dimension
        phases = []
        for i, order in enumerate(self.orders):
            ports = np.zeros(len(off), np.int64)
            for d in reversed(order):                   # the first dimension of the order wins
                step = np.where(off[:, d] > 0, 1 << (2 * d), 1 << (2 * d + 1))
                ports = np.where(off[:, d] != 0, step, ports)
            phases.append(Phase(OFFSET, ports=ports, escape_vc=i))
        return Program(tuple(phases), Uniform(tuple(Option(phase=i)
                                                    for i in range(len(phases)))))
