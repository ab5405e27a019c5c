"""Two traffic patterns in one file, loaded by ``traffic.plugins``.

``pairs`` sends node 2i to 2i + 1 and back (a permutation: its ``mapping`` is its rule, so the
compiled engine makes its messages); ``far_random`` sends each message to a random node among
the N/2 after its source, drawn per message in Python (no ``rule``: runs on the SimPy engine).
"""

from types import MappingProxyType

import numpy as np

from icsim.traffic.patterns import Pattern, register


@register("pairs")
class Pairs(Pattern):
    permutation = True

    def _build(self):
        if self.num_nodes % 2:
            raise self._error(f"{self.num_nodes} nodes: pairs needs an even number")
        return {}

    def destination(self, src, index, rng):
        return src ^ 1

    def mapping(self):
        return np.arange(self.num_nodes) ^ 1


@register("far_random")
class FarRandom(Pattern):
    defaults = MappingProxyType({"span": 0.5})

    def _build(self, *, span):
        self._span = max(1, int(span * self.num_nodes))
        return {"span": span}

    def destination(self, src, index, rng):
        return (src + 1 + int(rng.random() * self._span)) % self.num_nodes
