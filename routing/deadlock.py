"""Channel dependency graphs (Dally & Seitz) and their cycles.

A set of paths is deadlock-free on one virtual channel per link when the graph whose vertices are
channels and whose edges join consecutive channels of some path is acyclic.  This module is the
one place that graph is built and searched; the Angara table checker (bubble rule) and the
virtual-layer assigners (ACRO, LASH, LASH-TOR) all use it.

Channels are any hashable values: ``(node, port)`` on a torus, ``(u, v)`` on a graph.

Examples
--------
>>> ring = [[(0, 1), (1, 2)], [(1, 2), (2, 0)], [(2, 0), (0, 1)]]
>>> g = dependency_graph(ring)
>>> sorted(find_cycle(g))
[(0, 1), (1, 2), (2, 0)]
>>> find_cycle(dependency_graph(ring[:2])) is None
True
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Sequence

Channel = Hashable
DependencyGraph = dict[Channel, set[Channel]]


def node_path_channels(nodes: Sequence[int]) -> list[tuple[int, int]]:
    """The channels ``(u, v)`` a path given as a node sequence crosses, in order."""
    return [(nodes[i], nodes[i + 1]) for i in range(len(nodes) - 1)]


def dependency_graph(
    paths: Iterable[Sequence[Channel]],
    *,
    exempt: Callable[[Channel, Channel], bool] | None = None,
) -> DependencyGraph:
    """Build the channel dependency graph of ``paths``.

    Parameters
    ----------
    paths : iterable of channel sequences
        Each path is the ordered list of channels a packet holds.
    exempt : callable, optional
        ``exempt(c1, c2)`` true means the dependency c1 -> c2 cannot close a deadlock and is
        left out (the bubble rule makes same-ring, same-direction dependencies harmless).

    Returns
    -------
    dict
        Adjacency sets; every channel on some path is a key.
    """
    graph: DependencyGraph = {}
    for path in paths:
        prev = None
        for c in path:
            graph.setdefault(c, set())
            if prev is not None and (exempt is None or not exempt(prev, c)):
                graph[prev].add(c)
            prev = c
    return graph


def find_cycle(graph: DependencyGraph) -> list[Channel] | None:
    """Return one cycle of ``graph`` as a list of channels (first not repeated), or None.

    Iterative depth-first search, so deep graphs do not hit the recursion limit; vertices are
    visited in insertion order, so the answer is deterministic.
    """
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in graph:
        if colour[root] != WHITE:
            continue
        colour[root] = GREY
        stack = [(root, iter(graph[root]))]
        on_path = [root]
        while stack:
            v, it = stack[-1]
            for w in it:
                cw = colour.get(w, WHITE)
                if cw == GREY:
                    return on_path[on_path.index(w):]
                if cw == WHITE:
                    colour[w] = GREY
                    stack.append((w, iter(graph.get(w, ()))))
                    on_path.append(w)
                    break
            else:
                colour[v] = BLACK
                stack.pop()
                on_path.pop()
    return None


def is_acyclic(graph: DependencyGraph) -> bool:
    return find_cycle(graph) is None


def cycle_in_edges(num_channels: int, src, dst) -> list[int] | None:
    """One cycle of the dependency graph given as edge arrays ``src[i] -> dst[i]`` over
    channels ``0 .. num_channels - 1`` (a list of channel ids, first not repeated), or None.

    An acyclic graph (graphs of millions of dependencies: every pair of routers of a tree or
    a dragonfly) is told by its strongly connected components (scipy's csgraph: every one a
    single channel without a loop); otherwise Kahn's peeling in numpy, then
    :func:`find_cycle` on what is left, which only a cycle keeps.

    >>> import numpy as np
    >>> cycle_in_edges(4, np.array([0, 1, 2, 3]), np.array([1, 2, 0, 0]))
    [0, 1, 2]
    >>> cycle_in_edges(4, np.array([0, 1, 2]), np.array([1, 2, 3])) is None
    True
    """
    import numpy as np

    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    graph_ = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)),
                        shape=(num_channels, num_channels))
    parts, _ = connected_components(graph_, directed=True, connection="strong")
    if parts == num_channels and not (src == dst).any():
        return None
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    start = np.searchsorted(src, np.arange(num_channels + 1))
    indeg = np.bincount(dst, minlength=num_channels)
    alive = np.ones(num_channels, dtype=bool)
    frontier = np.nonzero(indeg == 0)[0]
    while frontier.size:
        alive[frontier] = False
        counts = start[frontier + 1] - start[frontier]
        idx = np.repeat(start[frontier] - np.cumsum(counts) + counts, counts) + np.arange(
            counts.sum())
        targets = dst[idx]
        np.subtract.at(indeg, targets, 1)
        frontier = np.unique(targets[(indeg[targets] == 0) & alive[targets]])
    if not alive.any():
        return None
    keep = alive[src] & alive[dst]
    graph: DependencyGraph = {}
    for a, b in zip(src[keep].tolist(), dst[keep].tolist()):
        graph.setdefault(a, set()).add(b)
    cycle = find_cycle(graph)
    return [int(c) for c in cycle] if cycle else None
