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
