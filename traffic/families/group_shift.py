"""The dragonfly papers' adversarial pattern: every terminal of group ``i`` sends to a random
terminal of group ``i + shift`` (Kim et al., ISCA 2008, "worst-case" traffic; Jiang et al.,
ISCA 2009).  Minimal routing crowds each group's traffic onto its one global link to the next
group: MIN saturates at 1 / (a p) of a terminal's bandwidth on the balanced networks."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from icsim.traffic.patterns import Pattern, _is_int, register
from icsim.traffic.rules import Rule


@register("group_shift")
class GroupShift(Pattern):
    """A random terminal of the group ``shift`` groups on (modulo the groups), drawn per
    message.  Needs a topology of groups (a dragonfly).

    Parameters
    ----------
    shift : int, default 1
        Groups on, 1 .. groups - 1.
    """

    defaults = MappingProxyType({"shift": 1})

    def _build(self, *, shift: Any) -> dict[str, Any]:
        topo = self.topology
        if "groups" not in getattr(topo, "capabilities", ()):
            raise self._error(f"needs a topology of groups (a dragonfly), got "
                              f"{topo.describe()}")
        g = topo.num_groups
        if not _is_int(shift) or not 1 <= shift < g:
            raise self._error(f"shift must be an integer in 1..{g - 1}, got {shift!r}", "shift")
        self._shift, self._groups = int(shift), g
        self._per_group = topo.routers_per_group * topo.terminals_per_router
        return {"shift": int(shift)}

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        group = (src // self._per_group + self._shift) % self._groups
        return group * self._per_group + int(rng.random() * self._per_group)

    def rule(self) -> Rule:
        src = np.arange(self.num_nodes, dtype=np.int64)
        base = (src // self._per_group + self._shift) % self._groups * self._per_group
        return Rule.of_block(base, self._per_group, self.num_nodes)

    def rates(self) -> np.ndarray:
        n, m = self.num_nodes, self._per_group
        out = np.zeros((n, n))
        for s in range(0, n, m):
            d = ((s // m + self._shift) % self._groups) * m
            out[s:s + m, d:d + m] = 1.0 / m
        return out
