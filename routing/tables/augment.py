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
>>> from simulator.topology import Torus
>>> augmenting_turns(Torus((5, 5))).shape[0]     # rings everywhere: nothing can be added
0
>>> turns = augmenting_turns(Torus((4, 2)))
>>> turns[:2].tolist()                          # y+ then x+ from node 0 and node 1
[[0, 2, 4, 0], [1, 2, 5, 0]]
"""

from __future__ import annotations

import numpy as np

from routing.tables.routing_graph import (RoutingGraph, build_routing_graph, direction_order,
                                          direction_rank, port_positive)
from simulator.topology import Torus


def base_dependencies(topology: Torus) -> tuple[np.ndarray, np.ndarray]:
    """Edges of the CDG of direction-order routing as arrays of channel ids
    (``node * num_ports + port``): every ``(u, p) -> (v, q)`` with ``rank(q) >= rank(p)``."""
    P = topology.num_ports
    nbr = np.asarray(topology.neighbor_table, dtype=np.int64)
    rank = direction_rank(topology.n)
    src, dst = [], []
    for p in range(P):
        u = np.flatnonzero(nbr[:, p] >= 0)
        v = nbr[u, p]
        for q in range(P):
            if rank[q] < rank[p]:
                continue
            ok = nbr[v, q] >= 0
            src.append(u[ok] * P + p)
            dst.append(v[ok] * P + q)
    return np.concatenate(src), np.concatenate(dst)


def used_direction_sets(topology: Torus, src: np.ndarray | None = None,
                        dst: np.ndarray | None = None) -> np.ndarray:
    """``B[channel]``: bit mask (bit = port) of the directions reachable from each channel in
    the dependency graph ``src -> dst`` (default: :func:`base_dependencies`)."""
    if src is None:
        src, dst = base_dependencies(topology)
    P = topology.num_ports
    bits = (np.int64(1) << (np.arange(topology.num_nodes * P) % P)).astype(np.int64)
    while True:
        new = bits.copy()
        np.bitwise_or.at(new, src, bits[dst])
        if np.array_equal(new, bits):
            return bits
        bits = new


def augmenting_turns(topology: Torus) -> np.ndarray:
    """The turns against the direction order that Theorem 2 allows, added greedily.

    Returns
    -------
    int64 array of shape (k, 4)
        Rows ``(node, port, next_node, next_port)``: after arriving at ``next_node`` over
        channel ``(node, port)`` a packet may leave by ``next_port`` although it comes earlier
        in the direction order.  Pass them to
        :func:`routing.tables.routing_graph.build_routing_graph`.
    """
    P = topology.num_ports
    N = topology.num_nodes
    nbr = topology.neighbor_table
    rank = direction_rank(topology.n)
    src, dst = base_dependencies(topology)
    B = used_direction_sets(topology, src, dst).tolist()
    preds: list[list[int]] = [[] for _ in range(N * P)]
    for a, b in zip(src.tolist(), dst.tolist()):
        preds[b].append(a)
    order = direction_order(topology.n)
    added: list[tuple[int, int, int, int]] = []
    for u in range(N):
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


def all_dependencies(topology: Torus, turns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The base CDG plus the added ``turns``, as channel-id arrays."""
    P = topology.num_ports
    src, dst = base_dependencies(topology)
    turns = np.asarray(turns, dtype=np.int64).reshape(-1, 4)
    return (np.concatenate([src, turns[:, 0] * P + turns[:, 1]]),
            np.concatenate([dst, turns[:, 2] * P + turns[:, 3]]))


def deadlock_free_routing_graph(topology: Torus) -> RoutingGraph:
    """The routing graph of ``topology`` with every turn :func:`augmenting_turns` allows.

    Examples
    --------
    >>> from simulator.topology import Torus
    >>> g = deadlock_free_routing_graph(Torus((4, 2, 2, 2)))
    >>> g.accepts(0, [2, 0])          # first step y+, then x+: allowed on this torus
    5
    """
    return build_routing_graph(topology, augmenting_turns(topology))
