"""SSSP routing-table generation (Angara paper §4.3, Algorithms 3 and 4).

1. *Unique routes.*  From every source a breadth-first search over the routing graph counts the
   minimal routes to every destination (:func:`~routing.tables.routing_graph.source_dag`);
   pairs with exactly one take it, and the weights of its channels grow by one.
2. *Sort and group.*  The other pairs are sorted by (turn number, route length, source) and
   grouped by that key; the turn number of a pair is the number of dimensions in which source
   and destination differ, minus one -- the turns of any dimension-ordered minimal route (a
   pair's routes are not fixed yet, so the pair's own value is used).
3. For every group: BUILD_SSSP (Algorithm 4, BFS with relaxation) from the source with the
   current weights, then accept, in destination order, the paths that share no channel with a
   path already accepted in this round; apply them and add one to the weight of each of their
   channels; repeat with the remaining destinations.  Paths that share no channel do not
   change each other's weights, so accepting them together gives what one SSSP per pair would.

Edge weights start at ``|N|^2`` (the paper, after Hoefler et al.) so that no detour is ever
cheaper than a minimal route; the weight of an edge is that plus the number of applied routes
through its channel ("increase edge weight by 1 along all paths" is read as the applied paths,
so a weight is exactly a channel load).  Because of the ``|N|^2`` term BUILD_SSSP only relaxes
along the breadth-first DAG of minimal paths; it runs on the DAG kept from step 1, which gives
the same distances as relaxing the whole graph, with far fewer edges.

Examples
--------
>>> from simulator.topology import Torus
>>> from routing.tables.metrics import table_metrics
>>> m = table_metrics(sssp(Torus((4, 2, 2, 2))))
>>> m.max_load <= 28, m.max_d
(True, 5)
"""

from __future__ import annotations

from itertools import groupby
from time import perf_counter
from typing import Iterable

import numpy as np

from routing.table import RoutingTable
from routing.tables.generators import make_table, new_weights, node_list, prepare, register
from routing.tables.routing_graph import RoutingGraph, dag_shortest_paths, source_dag


def turn_numbers(coords: np.ndarray, src: int, targets: np.ndarray) -> np.ndarray:
    """Dimensions in which each target differs from ``src``, minus one (0 for a straight line);
    ``coords[node]`` are the node coordinates."""
    differ = (coords[targets] != coords[src]).sum(axis=1)
    return np.maximum(differ - 1, 0)


@register("sssp")
def sssp(topology, nodes: Iterable[int] | None = None, *, seed: int = 0,
         graph: RoutingGraph | None = None) -> RoutingTable:
    """Generate an Angara routing table with the SSSP algorithm (paper Algorithms 3-4).

    Parameters
    ----------
    topology : Torus
    nodes : iterable of int, optional
        Node subset; routes only between these nodes (through any node).
    seed : int
        Recorded in ``meta``; the algorithm is deterministic.
    graph : RoutingGraph, optional
        A prebuilt :func:`~routing.tables.augment.deadlock_free_routing_graph` of ``topology``.

    Returns
    -------
    RoutingTable
        ``meta``: generator, seed, time_s, graph_time_s, unique_pairs (pairs settled in step 1),
        sssp_calls (BUILD_SSSP calls in step 3).

    Examples
    --------
    >>> from simulator.topology import Torus
    >>> t = sssp(Torus((4, 4)), nodes=[0, 1, 2, 3])
    >>> [t.route(s, (s + 2) % 4) for s in range(4)]     # half-ring pairs: two go each way
    [(0, 0), (1, 1), (0, 0), (1, 1)]
    """
    t0 = perf_counter()
    nodes = node_list(topology, nodes)
    full, graph_time = prepare(topology, graph)
    g = full.minimal()
    w = new_weights(g, initial=len(nodes) ** 2)
    routes: dict[tuple[int, int], tuple[int, ...]] = {}
    dags = {}
    pending: list[tuple[int, int, int, int]] = []
    unique = 0
    coords = np.asarray([topology.coords(v) for v in range(topology.num_nodes)], dtype=np.int64)
    for s in nodes:                                              # 1) unique routes
        targets = np.array([t for t in nodes if t != s], dtype=np.int64)
        if not len(targets):
            continue
        dag = source_dag(g, s, targets)
        one = np.flatnonzero(dag.count == 1)
        for i, (ports, chans) in zip(one.tolist(), dag.paths(dag.unique_parent(), one)):
            routes[(s, int(targets[i]))] = ports
            w[chans] += 1
        unique += len(one)
        many = np.flatnonzero(dag.count > 1)
        if len(many):
            dags[s] = dag
            turns = turn_numbers(coords, s, targets[many])
            pending.extend(zip(turns.tolist(), dag.hops[many].tolist(), [s] * len(many),
                               many.tolist()))
    pending.sort()                                               # 2) sort and group
    calls = 0
    for (_, hops, s), group in groupby(pending, key=lambda x: x[:3]):
        dag = dags[s]
        todo = [x[3] for x in group]
        while todo:                                              # 3) SSSP rounds
            _, parent = dag_shortest_paths(dag, w, max_level=hops + 1)
            calls += 1
            used: set[int] = set()
            rest = []
            for i, (ports, chans) in zip(todo, dag.paths(parent, todo)):
                cs = chans.tolist()
                if used.isdisjoint(cs):
                    used.update(cs)
                    routes[(s, int(dag.targets[i]))] = ports
                    w[chans] += 1
                else:
                    rest.append(i)
            todo = rest
    return make_table(topology, nodes, routes,
                      {"generator": "sssp", "seed": int(seed), "graph_time_s": graph_time,
                       "unique_pairs": unique, "sssp_calls": calls}, t0)
