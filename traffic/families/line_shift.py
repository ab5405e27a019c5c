"""A HyperX's adversarial pattern: every terminal sends to a random terminal of the router
``shift`` positions further along dimension ``dim`` (modulo its size).  Each pair of routers
then has one minimal path, a single link of its line: minimal routing (dimension order or
adaptive) carries a router's p terminals on it, 1/p of a terminal's bandwidth with one link
per pair; load-balancing routing spreads it (Ahn et al., SC 2009, motivate DAL with it)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from icsim.traffic.patterns import Pattern, _is_int, register
from icsim.traffic.rules import Rule


@register("line_shift")
class LineShift(Pattern):
    """A random terminal of the router ``shift`` further along dimension ``dim``, drawn per
    message.  Needs a topology of lines (a HyperX).

    Parameters
    ----------
    dim : int, default 0
    shift : int, default 1
        1 .. S_dim - 1.
    """

    defaults = MappingProxyType({"dim": 0, "shift": 1})

    def _build(self, *, dim: Any, shift: Any) -> dict[str, Any]:
        topo = self.topology
        if "lines" not in getattr(topo, "capabilities", ()):
            raise self._error(f"needs a topology of lines (a HyperX), got {topo.describe()}")
        if not _is_int(dim) or not 0 <= dim < topo.n:
            raise self._error(f"dim must be an integer in 0..{topo.n - 1}, got {dim!r}", "dim")
        size = topo.dims[dim]
        if not _is_int(shift) or not 1 <= shift < size:
            raise self._error(f"shift must be an integer in 1..{size - 1}, got {shift!r}",
                              "shift")
        self._p = topo.terminals_per_router
        coords = np.asarray(topo.coord_array)
        stride = topo.strides[dim]
        x = coords[:, dim]
        self._to = np.arange(topo.num_nodes) + (((x + shift) % size) - x) * stride
        return {"dim": int(dim), "shift": int(shift)}

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        router = int(self._to[src // self._p])
        return router * self._p + int(rng.random() * self._p)

    def rule(self) -> Rule:
        src = np.arange(self.num_nodes, dtype=np.int64)
        return Rule.of_block(self._to[src // self._p] * self._p, self._p, self.num_nodes)

    def rates(self) -> np.ndarray:
        n, p = self.num_nodes, self._p
        out = np.zeros((n, n))
        for r, v in enumerate(self._to.tolist()):
            out[r * p:(r + 1) * p, v * p:(v + 1) * p] = 1.0 / p
        return out
