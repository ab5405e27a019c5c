"""Every candidate route of every pair, as arrays: what the exact and local-search generators
choose from.

A *route set* lists, for each ordered pair of a node set, every shortest begin -> end path of a
routing graph, read as a port sequence.  On a healthy torus and the minimal subgraph
(:meth:`~icsim.routing.tables.routing_graph.RoutingGraph.minimal`) these are exactly the pair's
minimal Angara routes; on a torus with failed links or nodes the search runs on the whole
routing graph (a detour around a failure may need an edge the minimal subgraph drops) and the
routes are the pair's shortest Angara routes over the links in service, duplicates (one route
read as two paths) removed.  Since every route is a path of the routing graph, any choice of
one route per pair is a table of that graph: deadlock-free when the graph is
(:func:`~icsim.routing.tables.augment.deadlock_free_routing_graph`, Theorem 1).

Routes are enumerated a breadth-first level at a time over each source's shortest-path DAG
(:func:`~icsim.routing.tables.routing_graph.source_dag`): every prefix of a path is a row of
a prefix tree, and the routes to a target are the prefixes that end at its ``end`` vertex.

Examples
--------
>>> from icsim.model.topology import Torus
>>> from icsim.routing.tables.augment import deadlock_free_routing_graph
>>> rs = route_set(deadlock_free_routing_graph(Torus((4,))))
>>> rs.num_pairs, rs.num_routes                 # 12 pairs; the 4 half-ring pairs have two
(12, 16)
>>> [rs.route(r) for r in rs.routes_of(0, 2)]   # x+ x+ or x- x-
[(0, 0), (1, 1)]
>>> rs.loads(rs.first_choice()).tolist()        # every pair on its first candidate
[3, 2, 2, 3, 1, 2, 2, 1]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from icsim.model.errors import Picklable
from icsim.routing.tables.routing_graph import RoutingGraph, expand_edges, source_dag


class UnroutedPairsError(Picklable, ValueError):
    """Some pairs have no path in the routing graph; ``pairs`` lists them (src, dst)."""

    def __init__(self, message: str, pairs: list[tuple[int, int]]):
        super().__init__(message)
        self.pairs = pairs


@dataclass(frozen=True, eq=False)
class RouteSet:
    """Candidate routes of the ordered pairs of ``nodes``.

    Attributes
    ----------
    topology : Torus
    nodes : tuple of int
    pairs : int64 array (G, 2)
        The ordered pairs ``(src, dst)``, source-major in node order.
    ptr : int64 array (G + 1,)
        Routes of pair ``g`` are rows ``ptr[g]:ptr[g+1]``.
    ports : int16 array (R, W)
        Route ``r`` as ports, padded with -1.
    chans : int32 array (R, W)
        Route ``r`` as dense channel ids ``node * num_ports + port``, padded with ``C``.
    hops : int16 array (R,)
        Length of each route.
    C : int
        Number of dense channel ids (``num_nodes * num_ports``); ``C`` itself is "no channel".
    """

    topology: object
    nodes: tuple[int, ...]
    pairs: np.ndarray
    ptr: np.ndarray
    ports: np.ndarray
    chans: np.ndarray
    hops: np.ndarray
    C: int

    @property
    def num_pairs(self) -> int:
        return len(self.pairs)

    @property
    def num_routes(self) -> int:
        return int(self.ptr[-1])

    @cached_property
    def counts(self) -> np.ndarray:
        """Routes per pair."""
        return np.diff(self.ptr)

    @cached_property
    def pair_of_route(self) -> np.ndarray:
        """Pair index of every route row."""
        return np.repeat(np.arange(self.num_pairs, dtype=np.int64), self.counts)

    @cached_property
    def pair_index(self) -> dict[tuple[int, int], int]:
        return {(int(s), int(t)): g for g, (s, t) in enumerate(self.pairs.tolist())}

    def routes_of(self, src: int, dst: int) -> range:
        g = self.pair_index[(src, dst)]
        return range(int(self.ptr[g]), int(self.ptr[g + 1]))

    def route(self, r: int) -> tuple[int, ...]:
        """Ports of route row ``r``."""
        return tuple(int(p) for p in self.ports[r, :int(self.hops[r])])

    def first_choice(self) -> np.ndarray:
        """Route row of every pair's first candidate (a valid, arbitrary table)."""
        return self.ptr[:-1].copy()

    def routes_dict(self, choice: Sequence[int]) -> dict[tuple[int, int], tuple[int, ...]]:
        """``{(src, dst): ports}`` for one route row per pair."""
        return {(int(s), int(t)): self.route(int(r))
                for (s, t), r in zip(self.pairs.tolist(), choice)}

    def choice_of(self, routes: dict[tuple[int, int], tuple[int, ...]]) -> np.ndarray:
        """Route row of each pair's route in ``routes`` (a table's); ValueError for a route that
        is not a candidate."""
        out = np.empty(self.num_pairs, dtype=np.int64)
        for g, (s, t) in enumerate(self.pairs.tolist()):
            want = tuple(routes[(s, t)])
            for r in range(int(self.ptr[g]), int(self.ptr[g + 1])):
                if self.route(r) == want:
                    out[g] = r
                    break
            else:
                raise ValueError(f"route {s}->{t} {list(want)} is not a candidate route of this "
                                 f"route set (not a shortest path of its routing graph)")
        return out

    @cached_property
    def incidence(self):
        """Sparse ``(C, R)`` matrix: 1 where route ``r`` crosses channel ``c``."""
        import scipy.sparse as sp

        rows = self.chans.ravel().astype(np.int64)
        cols = np.repeat(np.arange(self.num_routes, dtype=np.int64), self.chans.shape[1])
        keep = rows < self.C
        return sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])),
                             shape=(self.C, self.num_routes))

    def loads(self, choice: Sequence[int], weights: np.ndarray | None = None) -> np.ndarray:
        """Channel loads (dense ids, length ``C``) of one route row per pair, each pair counted
        ``weights[g]`` times (default once)."""
        rows = self.chans[np.asarray(choice, dtype=np.int64)]
        w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
        out = np.bincount(rows.ravel(), weights=np.repeat(w, rows.shape[1]),
                          minlength=self.C + 1)[:self.C]
        return np.rint(out).astype(np.int64) if weights is None else out


def route_set(graph: RoutingGraph, nodes: Iterable[int] | None = None,
              minimal: bool | None = None) -> RouteSet:
    """Enumerate the shortest routes of every ordered pair of ``nodes`` in ``graph``.

    Parameters
    ----------
    graph : RoutingGraph
        Usually :func:`~icsim.routing.tables.augment.deadlock_free_routing_graph`.
    nodes : iterable of int, optional
        Node subset (default: the topology's nodes in service).
    minimal : bool, optional
        Search the minimal subgraph (default: when the topology has no failures).

    Returns
    -------
    RouteSet

    Raises
    ------
    UnroutedPairsError
        When some pair has no path at all (see :mod:`icsim.routing.tables.faults` for why).
    """
    topo = graph.topology
    nodes = tuple(sorted(int(v) for v in (topo.alive_nodes if nodes is None else nodes)))
    if minimal is None:
        minimal = not topo.has_failures
    g = graph.minimal() if minimal else graph
    C = g.num_channels_dense
    pairs, ptr, port_rows, chan_rows, hop_rows = [], [0], [], [], []
    missing: list[tuple[int, int]] = []
    for s in nodes:
        targets = np.array([t for t in nodes if t != s], dtype=np.int64)
        if not len(targets):
            continue
        try:
            dag = source_dag(g, s, targets)
        except ValueError:
            ok = _reachable(g, s, targets)
            missing += [(s, int(t)) for t in targets[~ok]]
            targets = targets[ok]
            if not len(targets):
                continue
            dag = source_dag(g, s, targets)
        ports, chans, pair_of = _enumerate(dag, C)
        if not minimal:
            ports, chans, pair_of = _dedupe(ports, chans, pair_of)
        counts = np.bincount(pair_of, minlength=len(targets))
        pairs.append(np.stack([np.full(len(targets), s), targets], axis=1))
        ptr.extend((ptr[-1] + np.cumsum(counts)).tolist())
        port_rows.append(ports)
        chan_rows.append(chans)
        hop_rows.append(np.repeat(dag.hops, counts))
    if missing:
        raise UnroutedPairsError(
            f"{len(missing)} pair(s) have no route in the routing graph, e.g. "
            f"{', '.join(f'{a}->{b}' for a, b in missing[:5])}", missing)
    width = max((p.shape[1] for p in port_rows), default=1)
    pad = lambda arrs, fill, dt: np.concatenate(                       # noqa: E731
        [np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=fill) for a in arrs]
    ).astype(dt) if arrs else np.zeros((0, width), dtype=dt)
    return RouteSet(topo, nodes,
                    np.concatenate(pairs).astype(np.int64) if pairs else np.zeros((0, 2), np.int64),
                    np.asarray(ptr, dtype=np.int64), pad(port_rows, -1, np.int16),
                    pad(chan_rows, C, np.int32),
                    np.concatenate(hop_rows).astype(np.int16) if hop_rows else
                    np.zeros(0, np.int16), C)


def _reachable(g: RoutingGraph, src: int, targets: np.ndarray) -> np.ndarray:
    seen = np.zeros(g.num_vertices, dtype=bool)
    front = np.array([g.begin(src)], dtype=np.int64)
    seen[front] = True
    while front.size:
        h = g.head[expand_edges(g.indptr, front)]
        h = np.unique(h[~seen[h]])
        seen[h] = True
        front = h
    return seen[g.end(targets)]


def _enumerate(dag, C: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All begin -> end paths of a source DAG: ports and channels per route (routes grouped by
    target in target order) and the target index of each."""
    nv = len(dag.vertices)
    order = np.argsort(dag.e_tail, kind="stable")
    indptr = np.zeros(nv + 1, dtype=np.int64)
    np.cumsum(np.bincount(dag.e_tail, minlength=nv), out=indptr[1:])
    # prefix tree: prefix i sits at vertex pv[i], was made by edge pe[i] from prefix pp[i]
    pv, pp, pe = [np.zeros(1, np.int64)], [np.full(1, -1, np.int64)], [np.full(1, -1, np.int64)]
    front = np.zeros(1, dtype=np.int64)           # prefix ids of the current level
    verts = np.zeros(1, dtype=np.int64)           # and the vertices they sit at
    base = 1
    while front.size:
        deg = indptr[verts + 1] - indptr[verts]
        e = order[expand_edges(indptr, verts)]
        if not e.size:
            break
        verts = dag.e_head[e]
        pv.append(verts)
        pp.append(np.repeat(front, deg))
        pe.append(e)
        front = np.arange(base, base + len(e), dtype=np.int64)
        base += len(e)
    pv, pp, pe = np.concatenate(pv), np.concatenate(pp), np.concatenate(pe)
    end_of = np.full(nv, -1, dtype=np.int64)
    end_of[dag.end_local] = np.arange(len(dag.end_local))
    leaves = np.flatnonzero(end_of[pv] >= 0)
    target = end_of[pv[leaves]]
    leaves = leaves[np.argsort(target, kind="stable")]
    target = end_of[pv[leaves]]
    # walk the prefix tree back from every leaf at once
    steps = []
    cur = leaves
    while (live := cur > 0).any():
        steps.append(np.where(live, pe[cur], -1))
        cur = np.where(live, pp[cur], 0)
    edges = np.stack(steps[::-1], axis=1) if steps else np.zeros((len(leaves), 0), np.int64)
    hops = dag.hops[target]
    width = int(hops.max()) if len(hops) else 0
    # the last edge of a path goes into end (no port); real hops are the hops columns before it
    ports = np.full((len(leaves), width), -1, dtype=np.int64)
    chans = np.full((len(leaves), width), C, dtype=np.int64)
    last = edges.shape[1] - 1
    for k in np.unique(hops).tolist():
        rows = np.flatnonzero(hops == k)
        cols = edges[rows, last - k:last]
        ports[rows, :k] = dag.e_port[cols]
        chans[rows, :k] = dag.e_chan[cols]
    return ports, chans, target


def _dedupe(ports, chans, pair_of):
    """Drop repeated (target, port sequence) rows, keeping the first of each."""
    key = np.concatenate([pair_of[:, None], ports], axis=1)
    _, first = np.unique(key, axis=0, return_index=True)
    first.sort()
    return ports[first], chans[first], pair_of[first]
