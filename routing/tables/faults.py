"""Angara tables on a torus with failed links and nodes: which pairs can be routed on one VC,
why the others cannot, and a routing graph that keeps the first/last steps detours need.

A failed link or node is an absent channel (:class:`~icsim.model.topology.Torus`), so the
routing graph (§3.1) and its deadlock-free augmentation (§3.2) of a faulty torus simply lack
its edges; every path of the augmented graph is still a deadlock-free Angara route (Theorem 1),
now over the links in service.  A detour around a failure usually needs a *first step* (a
positive step before the direction-bit list, out of order) or a *last step* (a negative step
after it) -- what the paper says the Angara router has them for.  Whether a pair can be routed
deadlock-free on one VC is then whether ``end(dst)`` is reachable from ``begin(src)``.  When it
is not, one of three things is to blame (:data:`REASONS`):

``disconnected``
    the failures cut ``dst`` off from ``src``: no path at all over the links in service;
``no-angara-route``
    paths exist, but none has the Angara shape (first positive step, direction-bit list --
    directions in the order +X +Y ... -X -Y ..., never both signs of a dimension -- last negative
    step): not even with every first/last step the router can take;
``refused-turns``
    Angara routes exist, but each needs a first/last step that the deadlock-free augmentation
    refused: by Theorem 2 that turn could close a channel-dependency cycle together with the
    turns already admitted.  The report names one shortest such route and the refused turns.

The greedy augmentation visits channels in id order, so it may spend the budget of admissible
turns on turns no detour needs.  :func:`fault_tolerant_routing_graph` repeats it offering the
refused turns of unroutable pairs first, and keeps the graph that routes the most pairs.

Examples
--------
>>> from icsim.model.topology import Torus
>>> t = Torus((4, 4), failed_links=[(0, 0)])               # link 0 - 1 (x) down
>>> rep = routability(fault_tolerant_routing_graph(t))
>>> rep.ok, rep.pairs
(True, 240)
>>> cut = Torus((4, 2), failed_nodes=[1, 3])              # 0 - 4 - 5 ... 2 - 6 - 7 remain
>>> rep = routability(fault_tolerant_routing_graph(cut))
>>> rep.ok, rep.counts()
(True, {})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from icsim.model.topology import Torus
from icsim.routing.table import TableError
from icsim.routing.tables.augment import (angara_routing_graph, augmenting_turns,
                                          deadlock_free_routing_graph)
from icsim.routing.tables.routing_graph import (AUG_FS, AUG_LS, RoutingGraph, build_routing_graph,
                                                dirbit_last_rank, expand_edges)

REASONS = ("disconnected", "no-angara-route", "refused-turns")


@dataclass(frozen=True)
class UnroutablePair:
    """A pair with no deadlock-free Angara route on one VC, and why (see the module docstring).

    ``route`` is one shortest Angara route (ports) that needs the refused ``turns`` (rows
    ``(node, port, next_node, next_port)``); both empty for the other reasons.
    """

    src: int
    dst: int
    reason: str
    route: tuple[int, ...] = ()
    turns: tuple[tuple[int, int, int, int], ...] = ()

    def describe(self, topology: Torus) -> str:
        name = topology.port_name
        if self.reason == "disconnected":
            return f"{self.src}->{self.dst}: the failures cut {self.dst} off from {self.src}"
        if self.reason == "no-angara-route":
            return (f"{self.src}->{self.dst}: no route of the Angara shape (first positive step, "
                    f"direction-bit list, last negative step) over the links in service")
        turns = ", ".join(f"({u}, {name(p)}) -> ({v}, {name(q)})" for u, p, v, q in self.turns)
        return (f"{self.src}->{self.dst}: every Angara route needs a first/last step the "
                f"deadlock-free augmentation refused (Theorem 2: it could close a channel-"
                f"dependency cycle); e.g. {' '.join(name(p) for p in self.route)} needs {turns}")


@dataclass
class Routability:
    """Which ordered pairs of ``nodes`` have a path in a routing graph.

    Attributes
    ----------
    nodes : tuple of int
    pairs : int
        Ordered pairs considered.
    unroutable : list of UnroutablePair
    """

    nodes: tuple[int, ...]
    pairs: int
    unroutable: list[UnroutablePair] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unroutable

    @property
    def routable_share(self) -> float:
        return 1.0 - len(self.unroutable) / self.pairs if self.pairs else 1.0

    def counts(self) -> dict[str, int]:
        """Unroutable pairs per reason (reasons with none left out)."""
        out: dict[str, int] = {}
        for u in self.unroutable:
            out[u.reason] = out.get(u.reason, 0) + 1
        return out

    def refused_turns(self) -> list[tuple[int, int, int, int]]:
        """The refused turns the reported routes need, first seen first."""
        return list(dict.fromkeys(t for u in self.unroutable for t in u.turns))

    def summary(self, topology: Torus, limit: int = 5) -> str:
        if self.ok:
            return f"all {self.pairs} pairs routable"
        counts = ", ".join(f"{v} {k}" for k, v in self.counts().items())
        lines = [f"{len(self.unroutable)} of {self.pairs} pairs cannot be routed deadlock-free "
                 f"on one VC ({counts}):"]
        lines += ["  " + u.describe(topology) for u in self.unroutable[:limit]]
        if len(self.unroutable) > limit:
            lines.append(f"  ... and {len(self.unroutable) - limit} more")
        return "\n".join(lines)


class UnroutableError(TableError):
    """No table exists on this routing graph: some pairs have no route; ``report`` says which
    and why (:class:`Routability`)."""

    def __init__(self, message: str, report: Routability):
        super().__init__(message)
        self.report = report


# ----------------------------------------------------------------------------- searches
def _reach(graph: RoutingGraph, src: int, adjacency=None) -> np.ndarray:
    """Vertices reachable from begin(src) (a breadth-first search in compiled code)."""
    from scipy.sparse.csgraph import breadth_first_order

    adj = _adjacency(graph) if adjacency is None else adjacency
    seen = np.zeros(graph.num_vertices, dtype=bool)
    seen[breadth_first_order(adj, graph.begin(src), return_predecessors=False)] = True
    return seen


def reachable_ends(graph: RoutingGraph, nodes: np.ndarray) -> np.ndarray:
    """``out[i, j]``: ``end(nodes[j])`` is reachable from ``begin(nodes[i])``.

    All sources at once: every vertex carries a bit set of the sources that reach it, and each
    round ORs the sets of the tails into the heads, until nothing changes (as many rounds as
    the longest shortest path is long).
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    words = max(1, -(-len(nodes) // 64))
    bits = np.zeros((graph.num_vertices, words), dtype=np.uint64)
    idx = np.arange(len(nodes))
    bits[graph.begin(nodes), idx // 64] = np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64))
    order = np.argsort(graph.head, kind="stable")
    tail, head = graph.tail[order], graph.head[order]
    starts = np.flatnonzero(np.r_[True, head[1:] != head[:-1]])
    heads = head[starts]
    while True:
        incoming = np.bitwise_or.reduceat(bits[tail], starts, axis=0)
        new = bits[heads] | incoming
        if np.array_equal(new, bits[heads]):
            break
        bits[heads] = new
    ends = bits[graph.end(nodes)]                                  # (targets, words)
    word, bit = idx // 64, (idx % 64).astype(np.uint64)
    return ((ends[:, word] >> bit) & np.uint64(1)).astype(bool).T


def _adjacency(graph: RoutingGraph):
    import scipy.sparse as sp

    return sp.csr_matrix((np.ones(graph.num_edges, dtype=np.int8), graph.head, graph.indptr),
                         shape=(graph.num_vertices, graph.num_vertices))


def _turn_of_edges(graph: RoutingGraph) -> np.ndarray:
    """For every edge added by a turn (kinds AUG_FS, AUG_LS), the turn as
    ``(node, port, next_node, next_port)``; -1 rows for the other edges."""
    topo = graph.topology
    n = topo.n
    nbr = np.asarray(topo.neighbor_table, dtype=np.int64)
    V = graph.vertices_per_node
    out = np.full((graph.num_edges, 4), -1, dtype=np.int64)
    w, loc = np.divmod(graph.tail, V)
    fs = graph.kind == AUG_FS
    p_fs = 2 * (loc - 1)                                  # FS_j: arrived by j+
    ls = graph.kind == AUG_LS
    order = np.array([2 * j for j in range(n)] + [2 * j + 1 for j in range(n)])
    last = np.zeros(graph.num_edges, dtype=np.int64)
    if ls.any():
        codes = loc[ls] - n
        ranks = np.array([dirbit_last_rank(int(c), n) for c in codes], dtype=np.int64)
        last[ls] = order[ranks]
    p = np.where(fs, p_fs, last)
    aug = fs | ls
    idx = np.flatnonzero(aug)
    u = nbr[w[idx], p[idx] ^ 1]                          # the node the packet came from
    out[idx] = np.stack([u, p[idx], w[idx], graph.port[idx]], axis=1)
    return out


def _explain(full: RoutingGraph, allowed: set, src: int, targets: np.ndarray,
             turn_rows: np.ndarray) -> dict[int, tuple[tuple[int, ...], tuple]]:
    """Shortest begin(src) -> end(t) paths in ``full`` (the graph with every Angara turn), each
    with as few turns outside ``allowed`` as such a path can have: ``{t: (ports, refused)}``."""
    refused = np.zeros(full.num_edges, dtype=np.int64)
    aug = np.flatnonzero(turn_rows[:, 0] >= 0)
    for e in aug.tolist():
        if tuple(turn_rows[e].tolist()) not in allowed:
            refused[e] = 1
    V = full.num_vertices
    level = np.full(V, -1, dtype=np.int64)
    cost = np.full(V, np.iinfo(np.int64).max // 4, dtype=np.int64)
    parent = np.full(V, -1, dtype=np.int64)
    b = full.begin(src)
    level[b], cost[b] = 0, 0
    front = np.array([b], dtype=np.int64)
    ends = full.end(targets)
    lv = 0
    while front.size and (level[ends] < 0).any():
        e = expand_edges(full.indptr, front)
        h = full.head[e]
        fresh = (level[h] < 0) | (level[h] == lv + 1)
        e, h = e[fresh], h[fresh]
        if not e.size:
            break
        lv += 1
        level[h] = lv
        cand = cost[full.tail[e]] + refused[e]
        order = np.lexsort((cand, h))
        e, h, cand = e[order], h[order], cand[order]
        first = np.r_[True, h[1:] != h[:-1]]
        cost[h[first]] = cand[first]
        parent[h[first]] = e[first]
        front = np.unique(h)
    out = {}
    for t, end in zip(targets.tolist(), ends.tolist()):
        if level[end] < 0:
            continue
        ports, turns, v = [], [], end
        while v != b:
            e = int(parent[v])
            if full.port[e] >= 0:
                ports.append(int(full.port[e]))
            if refused[e]:
                turns.append(tuple(int(x) for x in turn_rows[e]))
            v = int(full.tail[e])
        out[t] = (tuple(reversed(ports)), tuple(reversed(turns)))
    return out


def routability(graph: RoutingGraph, nodes: Iterable[int] | None = None,
                explain: bool = True) -> Routability:
    """Which ordered pairs of ``nodes`` the routing graph joins, and why the others are not.

    Parameters
    ----------
    graph : RoutingGraph
        Usually :func:`fault_tolerant_routing_graph` or
        :func:`~icsim.routing.tables.augment.deadlock_free_routing_graph` of a faulty torus.
    nodes : iterable of int, optional
        Default every node in service.
    explain : bool
        Give every unroutable pair its reason (and a route with the refused turns); otherwise
        the pairs are listed with reason ``'refused-turns'`` unchecked (faster).

    Returns
    -------
    Routability
    """
    topo = graph.topology
    nodes = tuple(sorted(int(v) for v in (topo.alive_nodes if nodes is None else nodes)))
    arr = np.asarray(nodes, dtype=np.int64)
    bad: list[tuple[int, np.ndarray]] = []
    ok = reachable_ends(graph, arr)
    for i, s in enumerate(nodes):
        miss = arr[~ok[i] & (arr != s)]
        if len(miss):
            bad.append((s, miss))
    rep = Routability(nodes, len(nodes) * (len(nodes) - 1))
    if not bad:
        return rep
    if not explain:
        rep.unroutable = [UnroutablePair(s, int(t), "refused-turns") for s, m in bad for t in m]
        return rep
    full = angara_routing_graph(topo)
    rows = _turn_of_edges(full)
    allowed = {tuple(t) for t in graph.turns.tolist()}
    for s, miss in bad:
        hop = topo.hop_distances(s)
        seen = _reach(full, s)
        angara = miss[seen[full.end(miss)]]
        why = _explain(full, allowed, s, angara, rows) if len(angara) else {}
        for t in miss.tolist():
            if hop[t] < 0:
                rep.unroutable.append(UnroutablePair(s, t, "disconnected"))
            elif t not in why:
                rep.unroutable.append(UnroutablePair(s, t, "no-angara-route"))
            else:
                ports, turns = why[t]
                rep.unroutable.append(UnroutablePair(s, t, "refused-turns", ports, turns))
    return rep


def require_routable(graph: RoutingGraph, nodes: Sequence[int] | None = None) -> None:
    """Raise :class:`UnroutableError` (with the full :class:`Routability` report) unless every
    ordered pair of ``nodes`` has a path in ``graph``."""
    rep = routability(graph, nodes)
    if not rep.ok:
        raise UnroutableError("no deadlock-free single-VC Angara table on "
                              f"{graph.topology.describe()}: " + rep.summary(graph.topology),
                              rep)


def fault_tolerant_routing_graph(topology: Torus, nodes: Iterable[int] | None = None,
                                 rounds: int = 4) -> RoutingGraph:
    """The deadlock-free routing graph of a faulty torus that routes the most pairs we can find.

    Starts from :func:`~icsim.routing.tables.augment.deadlock_free_routing_graph`; while pairs
    are unroutable for want of refused turns, repeats the augmentation offering those turns
    first (:func:`~icsim.routing.tables.augment.augmenting_turns` ``prefer=``), at most
    ``rounds`` times, and keeps the graph with the fewest unroutable pairs (the first on
    ties).  Every graph it returns is deadlock-free: the augmentation still applies Theorem 2
    to each turn.  On a healthy torus it is the plain deadlock-free routing graph.

    Examples
    --------
    >>> t = Torus((4, 2, 2), failed_links=[(0, 2)])            # 0 - 4 (y) down
    >>> g = fault_tolerant_routing_graph(t)
    >>> g.accepts(0, [0, 2, 1])     # first step x+, y+ at node 1, then x- (no longer a U-turn)
    4
    """
    graph = deadlock_free_routing_graph(topology)
    if not topology.has_failures:
        return graph
    rep = routability(graph, nodes)
    best, best_bad = graph, len(rep.unroutable)
    prefer: list[tuple[int, int, int, int]] = []
    for _ in range(rounds):
        if rep.ok:
            break
        new = [t for t in rep.refused_turns() if t not in prefer]
        if not new:
            break
        prefer = new + prefer
        graph = build_routing_graph(topology, augmenting_turns(topology, prefer=np.asarray(prefer)))
        rep = routability(graph, nodes)
        if len(rep.unroutable) < best_bad:
            best, best_bad = graph, len(rep.unroutable)
    return best


# ----------------------------------------------------------------------------- fault draws
def healthy_links(topology: Torus) -> list[tuple[int, int]]:
    """Every link of the healthy torus once, as ``(node, port)`` with a positive port."""
    healthy = Torus(topology.dims, topology.wrap)
    nbr = healthy.neighbor_table
    return [(u, p) for u in range(healthy.num_nodes) for p in range(0, healthy.num_ports, 2)
            if nbr[u][p] >= 0]


def random_failed_links(topology: Torus, k: int, rng: np.random.Generator
                        ) -> list[tuple[int, int]]:
    """``k`` distinct links drawn uniformly (without replacement) from the healthy torus, as
    ``(node, positive port)``.

    >>> random_failed_links(Torus((4, 4)), 2, np.random.default_rng(0))
    [(13, 0), (10, 0)]
    """
    links = healthy_links(topology)
    if not 0 <= k <= len(links):
        raise ValueError(f"cannot fail {k} of {len(links)} links")
    return [links[i] for i in rng.choice(len(links), k, replace=False).tolist()]


def random_failed_nodes(topology: Torus, k: int, rng: np.random.Generator) -> list[int]:
    """``k`` distinct nodes drawn uniformly, ascending."""
    if not 0 <= k < topology.num_nodes:
        raise ValueError(f"cannot fail {k} of {topology.num_nodes} nodes")
    return sorted(rng.choice(topology.num_nodes, k, replace=False).tolist())


def dor_blocked_pairs(topology: Torus, nodes: Iterable[int] | None = None
                      ) -> list[tuple[int, int]]:
    """Pairs whose dimension-order route (the ``dor`` algorithm's: dimensions in order, the
    minimal direction, + on a tie) crosses a failed link or node.

    >>> dor_blocked_pairs(Torus((3,), failed_links=[(0, 0)]))
    [(0, 1), (1, 0)]
    """
    healthy = Torus(topology.dims, topology.wrap)
    nbr = topology.neighbor_table
    nodes = tuple(topology.alive_nodes if nodes is None else nodes)
    out = []
    for s in nodes:
        for t in nodes:
            if s == t:
                continue
            u = s
            while u != t:
                p = healthy.dor_port(u, t)
                v = nbr[u][p]
                if v < 0:
                    out.append((s, t))
                    break
                u = v
    return out

