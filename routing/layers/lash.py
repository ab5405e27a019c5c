"""LASH: each route in one virtual layer, the first whose dependencies stay acyclic.

As the ACRO paper evaluates it (§IV-A1): routes are taken one by one, in the table's pair order
(source-major, destinations ascending); a route goes into the lowest-numbered layer whose channel
dependency graph stays acyclic when the route's dependencies are added, or into a new layer.  The
path selection of the original LASH does not happen: the table fixes every route.

Each layer's dependency graph is kept as an :class:`IncrementalCDG`, which maintains a
topological order of its channels (Pearce & Kelly's dynamic topological sort) so that most
acyclicity checks need no search at all.
"""

from __future__ import annotations

from icsim.model.notes import noted
from icsim.routing.layers import IndexedRoutes, LayerAssignment, register
from icsim.routing.table import RoutingTable


class IncrementalCDG:
    """One layer's channel dependency graph over channels ``0 .. n-1``, kept acyclic.

    ``pos`` is a topological order: for every dependency ``u -> v``, ``pos[u] < pos[v]``.
    A chain of channels ``c_0 .. c_k`` (a route or part of one) can be added without closing a
    cycle exactly when the graph has no path from a later ``c_b`` to an earlier ``c_a``; such a
    path needs ``pos[c_b] < pos[c_a]``, which both prunes and usually avoids the search.

    Examples
    --------
    >>> g = IncrementalCDG(3)
    >>> g.add_chain([2, 0])
    >>> g.fits([0, 1, 2]), g.fits([0, 1])
    (False, True)
    """

    __slots__ = ("succ", "pred", "pos")

    def __init__(self, num_channels: int) -> None:
        self.succ: list[set[int]] = [set() for _ in range(num_channels)]
        self.pred: list[set[int]] = [set() for _ in range(num_channels)]
        self.pos: list[int] = list(range(num_channels))

    # ------------------------------------------------------------------ searches
    def _reaches(self, src: int, targets: set[int], bound: int) -> bool:
        """Some target is reachable from ``src`` (targets all have ``pos <= bound``)."""
        pos, succ = self.pos, self.succ
        stack, seen = [src], {src}
        while stack:
            for y in succ[stack.pop()]:
                if y in targets:
                    return True
                if pos[y] < bound and y not in seen:
                    seen.add(y)
                    stack.append(y)
        return False

    def _reached(self, dst: int, sources: set[int], bound: int) -> bool:
        """``dst`` is reachable from some source (sources all have ``pos >= bound``)."""
        pos, pred = self.pos, self.pred
        stack, seen = [dst], {dst}
        while stack:
            for y in pred[stack.pop()]:
                if y in sources:
                    return True
                if pos[y] > bound and y not in seen:
                    seen.add(y)
                    stack.append(y)
        return False

    # ------------------------------------------------------------------ queries
    def fits(self, chain) -> bool:
        """Adding the dependencies of ``chain`` keeps the graph acyclic."""
        pos = self.pos
        earlier: set[int] = set()
        top = -1
        for c in chain:
            if c in earlier:
                return False
            p = pos[c]
            if p < top and self._reaches(c, earlier, top):
                return False
            earlier.add(c)
            if p > top:
                top = p
        return True

    def longest_fitting_suffix(self, chain, end: int) -> int:
        """Smallest ``start`` such that ``chain[start:end]`` fits (``end`` when none does)."""
        pos = self.pos
        later: set[int] = set()
        low = len(pos)
        start = end
        while start > 0:
            c = chain[start - 1]
            if c in later:
                break
            p = pos[c]
            if p > low and self._reached(c, later, low):
                break
            later.add(c)
            if p < low:
                low = p
            start -= 1
        return start

    # ------------------------------------------------------------------ update
    def add_chain(self, chain) -> None:
        """Add the dependencies of ``chain``; the caller has checked that it fits."""
        succ, pred, pos = self.succ, self.pred, self.pos
        for u, v in zip(chain, chain[1:]):
            if v in succ[u]:
                continue
            if pos[u] > pos[v]:
                self._reorder(u, v)
            succ[u].add(v)
            pred[v].add(u)

    def _reorder(self, u: int, v: int) -> None:
        """Pearce-Kelly: make room for ``u -> v`` when ``pos[u] > pos[v]``."""
        pos, succ, pred = self.pos, self.succ, self.pred
        lo, hi = pos[v], pos[u]
        fwd, stack = {v}, [v]
        while stack:
            for y in succ[stack.pop()]:
                if y == u:
                    raise RuntimeError("IncrementalCDG.add_chain: the chain closes a cycle")
                if pos[y] < hi and y not in fwd:
                    fwd.add(y)
                    stack.append(y)
        back, stack = {u}, [u]
        while stack:
            for y in pred[stack.pop()]:
                if pos[y] > lo and y not in back:
                    back.add(y)
                    stack.append(y)
        moved = sorted(back, key=pos.__getitem__) + sorted(fwd, key=pos.__getitem__)
        for x, p in zip(moved, sorted(pos[x] for x in moved)):
            pos[x] = p

    def order(self, channels) -> dict:
        """Theorem-1 labels: ``channels[i]`` -> its rank, decreasing along every dependency."""
        last = len(self.pos) - 1
        return {channels[c]: last - p for c, p in enumerate(self.pos)}


class ConventionalCDG(IncrementalCDG):
    """The same layer graph, checked the conventional way: every check searches everything
    reachable from the chain's channels, with no topological-order pruning — one
    O(|C| + |E|) cycle search per check, as the ACRO paper describes LASH-TOR's implementation
    (§III-B, [10]).  Same answers as :class:`IncrementalCDG`, its cost model for comparisons.
    """

    __slots__ = ()

    def fits(self, chain) -> bool:
        earlier: set[int] = set()
        n = len(self.pos)
        for c in chain:
            if c in earlier or (earlier and self._reaches(c, earlier, n)):
                return False
            earlier.add(c)
        return True

    def longest_fitting_suffix(self, chain, end: int) -> int:
        later: set[int] = set()
        start = end
        while start > 0:
            c = chain[start - 1]
            if c in later or (later and self._reached(c, later, -1)):
                break
            later.add(c)
            start -= 1
        return start


CHECKS = {"incremental": IncrementalCDG, "conventional": ConventionalCDG}


def _orders(cdgs, channels) -> dict:
    return {i: g.order(channels) for i, g in enumerate(cdgs)}


@register("lash")
def lash(table: RoutingTable) -> LayerAssignment:
    """Assign each route of ``table`` to one virtual layer, first fit (LASH).

    Parameters
    ----------
    table : RoutingTable

    Returns
    -------
    LayerAssignment
        Every hop of a route carries the route's layer; ``orders`` is each layer's topological
        order as Theorem-1 labels.

    Raises
    ------
    ValueError
        When a route uses a channel twice (no layer can hold it).

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> from icsim.routing.layers.minimal import minimal_table
    >>> table = minimal_table(Graph.from_edges(5, [(i, (i + 1) % 5) for i in range(5)]))
    >>> lash(table).num_layers
    2
    """
    idx = IndexedRoutes.of(table)
    cdgs: list[IncrementalCDG] = []
    hop_layers = []
    routes = noted(zip(idx.pairs, idx.paths), len(idx.paths), "LASH layers, route by route")
    for pair, path in routes:
        for i, g in enumerate(cdgs):
            if g.fits(path):
                break
        else:
            g = IncrementalCDG(len(idx.channels))
            if not g.fits(path):
                raise ValueError(f"route {pair[0]}->{pair[1]} uses a channel twice; "
                                 f"no virtual layer can hold it")
            cdgs.append(g)
            i = len(cdgs) - 1
        g.add_chain(path)
        hop_layers.append((i,) * len(path))
    return LayerAssignment("lash", max(1, len(cdgs)), idx.hop_layers(hop_layers),
                           _orders(cdgs, idx.channels))
