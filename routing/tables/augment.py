"""Deadlock-free augmentation of the Angara routing graph (paper §3.2, Theorem 2).

The channel dependency graph (CDG) of the plain routing graph has a vertex per channel
``(node, port)`` and an edge ``(u, p) -> (v, q)``, ``v`` the node behind ``p``, for every turn the
§3.1 graph can make: ``q`` not before ``p`` in the direction order (straight on, a turn, or a
U-turn through a first/last step).  All of its cycles run around one ring in one direction and
are harmless under the bubble rule.

The *used direction set* ``B(c)`` is the set of directions of all channels reachable from ``c``
(``c`` included), kept as a bit mask over ports.  Theorem 2: an edge ``(u, D_j) -> (v, D_k)``
against the order (``D_j > D_k``) closes no cycle when ``D_j`` is not in ``B(v, D_k)``.

Stage 1 computes every ``B``.  Stage 2 visits the channels ``(u, D_i)`` (nodes in id order,
ports in direction order), adds every admissible turn ``(u, D_i) -> (v, D_j)`` against the order,
then adds ``B(v, D_j)`` to ``B`` of ``(u, D_i)`` and of every channel that reaches it (a
backward search over the graph with the edges added so far).  Only turns that a route can use
are candidates: both directions positive (a first step out of order) or both negative (a last
step out of order); a turn from a negative to a positive direction could never appear in an
Angara route, so adding it would only forbid useful turns.  ``B`` only grows, so one pass
decides every candidate.

Examples
--------
>>> from icsim.model.topology import Torus
>>> augmenting_turns(Torus((5, 5))).shape[0]     # rings everywhere: nothing can be added
0
>>> turns = augmenting_turns(Torus((4, 2)))
>>> turns[:2].tolist()                          # y+ then x+ from node 0 and node 1
[[0, 2, 4, 0], [1, 2, 5, 0]]
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from icsim.model.topology import Torus
from icsim.routing.deadlock import DependencyGraph, dependency_graph
from icsim.routing.tables.routing_graph import (RoutingGraph, build_routing_graph, direction_order,
                                                direction_rank, port_positive)


def order_keeping_turns(topology: Torus) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every pair of consecutive channels ``((u, p), (v, q))`` the §3.1 routing graph can
    produce: ``v`` behind ``p`` and ``q`` not before ``p`` in the direction order."""
    nbr = topology.neighbor_table
    rank = direction_rank(topology.n)
    P = topology.num_ports
    out = []
    for u in range(topology.num_nodes):
        for p in range(P):
            v = nbr[u][p]
            if v < 0:
                continue
            for q in range(P):
                if rank[q] >= rank[p] and nbr[v][q] >= 0:
                    out.append(((u, p), (v, q)))
    return out


def direction_order_cdg(topology: Torus, turns: np.ndarray | None = None,
                        exempt: Callable | None = None) -> DependencyGraph:
    """The channel dependency graph of direction-order routing (plus the extra ``turns``,
    rows ``(node, port, next_node, next_port)``), built by
    :func:`icsim.routing.deadlock.dependency_graph`; channels are ``(node, port)``."""
    pairs = order_keeping_turns(topology)
    if turns is not None:
        pairs += [((u, p), (v, q)) for u, p, v, q in np.asarray(turns).reshape(-1, 4).tolist()]
    return dependency_graph(pairs, exempt=exempt)


def used_direction_sets(topology: Torus, cdg: DependencyGraph | None = None) -> np.ndarray:
    """``B[node * num_ports + port]``: bit mask (bit = port) of the directions of all channels
    reachable from each channel in ``cdg`` (default :func:`direction_order_cdg`), itself
    included."""
    cdg = direction_order_cdg(topology) if cdg is None else cdg
    P = topology.num_ports
    src = np.array([u * P + p for (u, p), succ in cdg.items() for _ in succ], dtype=np.int64)
    dst = np.array([v * P + q for succ in cdg.values() for v, q in succ], dtype=np.int64)
    bits = (np.int64(1) << (np.arange(topology.num_nodes * P) % P)).astype(np.int64)
    while True:
        new = bits.copy()
        np.bitwise_or.at(new, src, bits[dst])
        if np.array_equal(new, bits):
            return bits
        bits = new


def angara_turns(topology: Torus) -> np.ndarray:
    """Every turn against the direction order that an Angara route can make: both directions
    positive (a first step out of order) or both negative (a last step out of order), between
    channels in service.

    Together with the order-keeping turns these are all the router can express; the routing
    graph built with all of them (:func:`angara_routing_graph`) holds every Angara route,
    deadlock-free or not.  Rows ``(node, port, next_node, next_port)``, nodes in id order, ports
    in direction order.

    >>> angara_turns(Torus((4, 2))).tolist()[:2]
    [[0, 2, 4, 0], [1, 2, 5, 0]]
    >>> len(angara_turns(Torus((4, 2, 2, 2)))), len(augmenting_turns(Torus((4, 2, 2, 2))))
    (144, 144)
    """
    nbr = topology.neighbor_table
    rank = direction_rank(topology.n)
    order = direction_order(topology.n)
    out = []
    for u in range(topology.num_nodes):
        for p in order:
            v = nbr[u][p]
            if v < 0:
                continue
            for q in order:
                if rank[q] < rank[p] and port_positive(q) == port_positive(p) and nbr[v][q] >= 0:
                    out.append((u, p, v, q))
    return np.asarray(out, dtype=np.int64).reshape(-1, 4)


def angara_routing_graph(topology: Torus) -> RoutingGraph:
    """The routing graph with every turn of :func:`angara_turns`: each Angara route of the
    topology is a path of it (deadlock-free or not), so it bounds what any Angara table can do."""
    return build_routing_graph(topology, angara_turns(topology))


def augmenting_turns(topology: Torus, prefer: np.ndarray | None = None) -> np.ndarray:
    """The turns against the direction order that Theorem 2 allows, added greedily.

    Parameters
    ----------
    topology : Torus
        Failed links and nodes are simply absent channels.
    prefer : array of shape (k, 4), optional
        Turns (rows ``(node, port, next_node, next_port)``, as :func:`angara_turns`) to try
        first, in the given order, before the channel-by-channel pass; a turn is still added
        only where Theorem 2 allows it.  Used to keep the turns that routes around failures
        need (:func:`icsim.routing.tables.faults.fault_tolerant_routing_graph`).

    Returns
    -------
    int64 array of shape (k, 4)
        Rows ``(node, port, next_node, next_port)``: after arriving at ``next_node`` over
        channel ``(node, port)`` a packet may leave by ``next_port`` although it comes earlier
        in the direction order.  Pass them to
        :func:`routing.tables.routing_graph.build_routing_graph`.
    """
    P = topology.num_ports
    nbr = topology.neighbor_table
    rank = direction_rank(topology.n)
    cdg = direction_order_cdg(topology)
    B = used_direction_sets(topology, cdg).tolist()
    preds: list[list[int]] = [[] for _ in range(topology.num_nodes * P)]
    for (u, p), succ in cdg.items():
        for v, q in succ:
            preds[v * P + q].append(u * P + p)
    order = direction_order(topology.n)
    added: list[tuple[int, int, int, int]] = []
    taken: set[tuple[int, int, int, int]] = set()
    for u, p, v, q in ([] if prefer is None else np.asarray(prefer).reshape(-1, 4).tolist()):
        if (u, p, v, q) in taken or nbr[u][p] != v or nbr[v][q] < 0 or rank[q] >= rank[p] \
                or port_positive(q) != port_positive(p):
            continue
        a, b = u * P + p, v * P + q
        if B[b] & (1 << p):             # Theorem 2: would close a cycle
            continue
        added.append((u, p, v, q))
        taken.add((u, p, v, q))
        preds[b].append(a)
        if B[b] & ~B[a]:
            _propagate(a, B[b], B, preds)
    for u in range(topology.num_nodes):
        for p in order:
            v = nbr[u][p]
            if v < 0:
                continue
            a = u * P + p
            bit = 1 << p
            gained = 0
            for q in order:
                if rank[q] >= rank[p] or port_positive(q) != port_positive(p) or nbr[v][q] < 0:
                    continue
                b = v * P + q
                if (u, p, v, q) in taken:
                    continue
                if B[b] & bit:          # Theorem 2: D_i is used after (v, D_j): would close a cycle
                    continue
                added.append((u, p, v, q))
                preds[b].append(a)
                gained |= B[b]
            if gained & ~B[a]:
                _propagate(a, gained, B, preds)
    return np.asarray(added, dtype=np.int64).reshape(-1, 4)


def _propagate(start: int, bits: int, B: list[int], preds: list[list[int]]) -> None:
    """Add ``bits`` to B of ``start`` and of every channel that reaches it.  A channel that
    already has them needs no visit: whatever reaches it has them too (B only grows along
    edges)."""
    stack = [start]
    B[start] |= bits
    while stack:
        c = stack.pop()
        for a in preds[c]:
            if bits & ~B[a]:
                B[a] |= bits
                stack.append(a)


def deadlock_free_routing_graph(topology: Torus) -> RoutingGraph:
    """The routing graph of ``topology`` with every turn :func:`augmenting_turns` allows.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> g = deadlock_free_routing_graph(Torus((4, 2, 2, 2)))
    >>> g.accepts(0, [2, 0])          # first step y+, then x+: allowed on this torus
    5
    """
    return build_routing_graph(topology, augmenting_turns(topology))
