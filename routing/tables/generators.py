"""Registry of Angara routing-table generators (BFS, SSSP, Genetic; refined, optimal) and what
they share.

A generator is a function ``gen(topology, nodes=None, *, seed=0, **opts) -> RoutingTable``
registered under a name with :func:`register`.  ``nodes`` is a node subset (a job's nodes on a
bigger torus): routes join every ordered pair of subset nodes and may pass through any node.
The table's ``meta`` records the generator, the seed, the options and ``time_s``, the wall time
of the generation including the routing graph (``graph_time_s`` is its share; zero when a
prebuilt graph was passed as ``graph=``).

Examples
--------
>>> from icsim.model.topology import Torus
>>> table = generate("sssp", Torus((4, 2, 2, 2)), nodes=range(8))
>>> table.meta["generator"], len(table.routes)
('sssp', 56)
>>> generate("dijkstra", Torus((4, 4)))
Traceback (most recent call last):
...
icsim.model.registry.UnknownNameError: unknown table generator 'dijkstra' (valid: bfs, genetic, minimal, optimal, refined, sssp)
"""

from __future__ import annotations

from time import perf_counter
from typing import Iterable, Protocol, Sequence

import numpy as np

from icsim.model.notes import gc_paused
from icsim.model.registry import Registry, UnknownNameError
from icsim.routing.table import RoutingTable
from icsim.routing.tables.augment import deadlock_free_routing_graph
from icsim.routing.tables.faults import fault_tolerant_routing_graph, require_routable
from icsim.routing.tables.routing_graph import RoutingGraph


class Generator(Protocol):
    def __call__(self, topology, nodes: Iterable[int] | None = None, *, seed: int = 0,
                 **opts) -> RoutingTable: ...


#: table generators by name; the modules of :mod:`icsim.routing.tables` and
#: :mod:`icsim.routing.layers` register theirs
GENERATORS: Registry[Generator] = Registry(
    "table generator", packages=("icsim.routing.tables", "icsim.routing.layers"),
    entry_points="icsim.table_generators")
register = GENERATORS.register
UnknownGeneratorError = UnknownNameError


def available() -> list[str]:
    """Registered generator names, sorted."""
    return GENERATORS.names()


def get_generator(name: str) -> Generator:
    """The generator registered as ``name``; :class:`UnknownGeneratorError` otherwise."""
    return GENERATORS.get(name)


def generate(name: str, topology, nodes: Iterable[int] | None = None, *, seed: int = 0,
             **opts) -> RoutingTable:
    """Run the generator ``name``: ``get_generator(name)(topology, nodes, seed=seed, **opts)``.

    Parameters
    ----------
    name : {'bfs', 'sssp', 'genetic', 'refined', 'optimal', 'minimal'}
    topology : Torus
    nodes : iterable of int, optional
        Node subset; default every node.
    seed : int
        Seed of the generator's ``numpy.random.Generator`` (Genetic and refined draw from it;
        BFS, SSSP and optimal are deterministic and just record it).
    **opts
        Generator options, e.g. ``graph=`` (a prebuilt deadlock-free routing graph) for all,
        ``max_generations=`` for Genetic, ``time_limit_s=``, ``max_moves=`` and ``traffic=``
        for refined, ``time_limit_s=`` and ``traffic=`` for optimal.
    """
    with gc_paused():               # millions of route tuples and no cycles (notes.py)
        return get_generator(name)(topology, nodes, seed=seed, **opts)


# ----------------------------------------------------------------------------- shared
def node_list(topology, nodes: Iterable[int] | None) -> tuple[int, ...]:
    """The node subset as a sorted tuple, checked against the topology; default every node in
    service (failed nodes neither send nor receive)."""
    if nodes is None:
        return topology.alive_nodes
    out = sorted({int(v) for v in nodes})
    bad = [v for v in out if not 0 <= v < topology.num_nodes]
    if bad:
        raise ValueError(f"node(s) {bad} outside the {topology.num_nodes}-node torus")
    dead = sorted(set(out) & topology.failed_nodes)
    if dead:
        raise ValueError(f"node(s) {dead} of the subset have failed; a table routes only nodes "
                         f"in service")
    if not out:
        raise ValueError("the node subset is empty")
    return tuple(out)


def search_graph(graph: RoutingGraph, nodes: Sequence[int]) -> RoutingGraph:
    """The graph a generator searches: the minimal subgraph on a healthy torus (every minimal
    route is one path of it); the whole routing graph on a torus with failures, where the
    shortest route around a failed link may need an edge the minimal subgraph drops (e.g. a
    first step x+, then y+, then x-).  On a torus with failures every pair must have a path;
    otherwise :class:`~icsim.routing.tables.faults.UnroutableError` says which pairs cannot be
    routed and why."""
    if not graph.topology.has_failures:
        return graph.minimal()

    require_routable(graph, nodes)
    return graph


def prepare(topology, graph: RoutingGraph | None) -> tuple[RoutingGraph, float]:
    """The deadlock-free routing graph (built unless given) and the seconds it took."""
    topology.require({"coordinates"}, "the Angara table generators")
    if graph is not None:
        if graph.topology != topology:
            raise ValueError("the routing graph passed as graph= belongs to another topology")
        return graph, 0.0
    t0 = perf_counter()
    if topology.has_failures:
        g = fault_tolerant_routing_graph(topology)
    else:
        g = deadlock_free_routing_graph(topology)
    return g, perf_counter() - t0


def new_weights(graph: RoutingGraph, initial: int = 0) -> np.ndarray:
    """Per-channel weights (dense ids) plus a final always-zero entry for "no channel"."""
    w = np.full(graph.num_channels_dense + 1, initial, dtype=np.int64)
    w[-1] = 0
    return w


def make_table(topology, nodes, routes, meta: dict, t_start: float) -> RoutingTable:
    meta = dict(meta)
    meta["time_s"] = perf_counter() - t_start
    return RoutingTable(topology, routes, tuple(nodes), None, meta)
