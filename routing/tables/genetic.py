"""Genetic routing-table generation (Angara paper §4.2).

A chromosome picks, for every ordered pair of the node set (its genes, pairs in sorted order),
one of the pair's minimal Angara routes (enumerated from the deadlock-free routing graph).
The fitness is ``σ(4, R)`` (lower is better, :mod:`icsim.routing.tables.metrics`).  The first
generation is ``population`` random chromosomes.  Each generation makes ``population``
children: parents are drawn uniformly from the whole population (panmixia) in pairs, each
pair gives two children by two-point crossover, and every child gene is replaced by a random
route with probability ``mutation`` (2 %).  Parents and children compete; the ``population``
best survive (elitist).

Stopping rule.  The paper stops "after 30 consecutive iteration[s] or if the fitness value of
next best solution [is] less than 0.05 of [the] fitness value of [the] global best solution",
after saying that it "stops when it can not improve the best chromosomes after a rather large
number of generations".  Read literally: stop after ``patience`` (30) consecutive generations
that do not improve the global best, or as soon as a generation's best falls below
``collapse`` (0.05) times the previous global best (the deviation collapsed: in practice it
reached 0, a perfectly balanced table).  ``max_generations`` and ``time_limit_s`` cap the run
(tests and large systems); ``meta['stopped_by']`` records which rule ended it.

Examples
--------
>>> from icsim.model.topology import Torus
>>> from icsim.routing.tables.metrics import table_metrics
>>> t = genetic(Torus((4, 2, 2, 2)), nodes=range(4), seed=1, max_generations=20)
>>> table_metrics(t).sigma4
0.0
"""

from __future__ import annotations

from time import perf_counter
from typing import Iterable

import numpy as np

from icsim.routing.table import RoutingTable
from icsim.routing.tables.generators import make_table, node_list, prepare, register, search_graph
from icsim.routing.tables.metrics import counted_channels, minimal_total_load
from icsim.routing.tables.routing_graph import RoutingGraph, source_dag


class RouteChoices:
    """Every minimal route of every pair, as padded channel-id rows.

    ``chans[ptr[g] + l]`` is route ``l`` of gene ``g`` (pair ``pairs[g]``), padded with the "no
    channel" id ``C``; ``ports`` likewise with -1.
    """

    def __init__(self, graph: RoutingGraph, nodes: tuple[int, ...],
                 max_routes: int | None = None):
        g = search_graph(graph, nodes)
        P = g.topology.num_ports
        nbr = g.topology.neighbor_table
        self.C = g.num_channels_dense
        self.pairs: list[tuple[int, int]] = []
        per_pair: list[list[tuple[int, ...]]] = []
        for s in nodes:
            targets = [t for t in nodes if t != s]
            if not targets:
                continue
            dag = source_dag(g, s, targets)
            for i, t in enumerate(targets):
                self.pairs.append((s, t))
                per_pair.append(dag.enumerate_routes(i, limit=max_routes))
        self.nvar = np.array([len(r) for r in per_pair], dtype=np.int64)
        self.ptr = np.concatenate(([0], np.cumsum(self.nvar)))
        width = max((len(r) for rs in per_pair for r in rs), default=1)
        self.ports = np.full((int(self.ptr[-1]), width), -1, dtype=np.int64)
        self.chans = np.full((int(self.ptr[-1]), width), self.C, dtype=np.int64)
        k = 0
        for (s, _), rs in zip(self.pairs, per_pair):
            for r in rs:
                u = s
                for h, p in enumerate(r):
                    self.ports[k, h] = p
                    self.chans[k, h] = u * P + p
                    u = nbr[u][p]
                k += 1

    def route(self, gene: int, variant: int) -> tuple[int, ...]:
        row = self.ports[self.ptr[gene] + variant]
        return tuple(int(p) for p in row if p >= 0)


def _fitness(choices: RouteChoices, genes: np.ndarray, inside: np.ndarray, total_min: int,
             k: int = 4) -> np.ndarray:
    """σ(k, R) of each chromosome (rows of ``genes``)."""
    pop = len(genes)
    C1 = choices.C + 1
    rows = choices.chans[choices.ptr[:-1][None, :] + genes]          # (pop, genes, width)
    offset = (np.arange(pop, dtype=np.int64) * C1)[:, None, None]
    loads = np.bincount((rows + offset).ravel(), minlength=pop * C1).reshape(pop, C1)[:, :-1]
    mask = inside[None, :] | (loads > 0)
    count = mask.sum(axis=1)
    perfect = total_min / np.maximum(count, 1)
    dev = np.where(mask, np.abs(perfect[:, None] - loads) ** k, 0.0)
    return (dev.sum(axis=1) / np.maximum(count, 1)) ** (1.0 / k)


@register("genetic")
def genetic(topology, nodes: Iterable[int] | None = None, *, seed: int = 0,
            graph: RoutingGraph | None = None, population: int = 100, mutation: float = 0.02,
            patience: int = 30, collapse: float = 0.05, max_generations: int | None = None,
            time_limit_s: float | None = None, max_routes: int | None = None) -> RoutingTable:
    """Generate an Angara routing table with the Genetic algorithm (paper §4.2).

    Parameters
    ----------
    topology : Torus
    nodes : iterable of int, optional
        Node subset; routes only between these nodes (through any node).
    seed : int
        Seed of the ``numpy.random.Generator`` driving initialisation, pairing, crossover and
        mutation: the same seed gives the same table.
    graph : RoutingGraph, optional
        A prebuilt deadlock-free routing graph of ``topology``.
    population : int
        Chromosomes per generation (100 in the paper).
    mutation : float
        Probability that a child gene is replaced by a random route (0.02).
    patience, collapse : int, float
        Stopping rule (30 generations, 0.05); see the module docstring.
    max_generations, time_limit_s : optional
        Hard caps on generations and wall time.
    max_routes : int, optional
        Keep at most this many routes per pair (enumeration order) on large systems.

    Returns
    -------
    RoutingTable
        ``meta``: generator, seed, options, generations, fitness (σ4 of the table), stopped_by,
        time_s, graph_time_s.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> a = genetic(Torus((4, 4)), nodes=range(4), seed=3, max_generations=5)
    >>> b = genetic(Torus((4, 4)), nodes=range(4), seed=3, max_generations=5)
    >>> a.routes == b.routes
    True
    """
    if population < 2:
        raise ValueError(f"population must be at least 2, got {population}")
    if not 0.0 <= mutation <= 1.0:
        raise ValueError(f"mutation must be a probability, got {mutation}")
    t0 = perf_counter()
    rng = np.random.default_rng(seed)
    nodes = node_list(topology, nodes)
    full, graph_time = prepare(topology, graph)
    choices = RouteChoices(full, nodes, max_routes)
    G = len(choices.pairs)
    meta = {"generator": "genetic", "seed": int(seed), "graph_time_s": graph_time,
            "population": population, "mutation": mutation, "patience": patience,
            "collapse": collapse, "max_generations": max_generations,
            "time_limit_s": time_limit_s}
    if G == 0:
        return make_table(topology, nodes, {}, {**meta, "generations": 0, "fitness": 0.0,
                                                "stopped_by": "no pairs"}, t0)
    loads0 = np.zeros(choices.C, dtype=np.int64)
    inside = counted_channels(topology, nodes, loads0)
    total_min = minimal_total_load(topology, nodes)
    nvar = choices.nvar

    def random_genes(shape) -> np.ndarray:
        return (rng.random(shape) * nvar).astype(np.int64)

    pop = random_genes((population, G))
    fit = _fitness(choices, pop, inside, total_min)
    order = np.argsort(fit, kind="stable")
    pop, fit = pop[order], fit[order]
    stale, generation, stopped_by = 0, 0, "patience"
    cols = np.arange(G)
    while True:
        if fit[0] == 0:
            stopped_by = "optimal"
            break
        if max_generations is not None and generation >= max_generations:
            stopped_by = "max_generations"
            break
        if time_limit_s is not None and perf_counter() - t0 >= time_limit_s:
            stopped_by = "time_limit_s"
            break
        generation += 1
        half = (population + 1) // 2
        a, b = rng.integers(0, population, half), rng.integers(0, population, half)
        cuts = np.sort(rng.integers(0, G + 1, (half, 2)), axis=1)
        seg = (cols[None, :] >= cuts[:, :1]) & (cols[None, :] < cuts[:, 1:])
        kids = np.concatenate([np.where(seg, pop[b], pop[a]),
                               np.where(seg, pop[a], pop[b])])[:population]
        mutate = rng.random(kids.shape) < mutation
        kids = np.where(mutate, random_genes(kids.shape), kids)
        kfit = _fitness(choices, kids, inside, total_min)
        previous = fit[0]
        allpop = np.concatenate([pop, kids])
        allfit = np.concatenate([fit, kfit])
        order = np.argsort(allfit, kind="stable")[:population]
        pop, fit = allpop[order], allfit[order]
        if fit[0] < previous * collapse:
            stopped_by = "collapse"
            break
        stale = 0 if fit[0] < previous else stale + 1
        if stale >= patience:
            break
    best = pop[0]
    routes = {pair: choices.route(gene, int(best[gene]))
              for gene, pair in enumerate(choices.pairs)}
    return make_table(topology, nodes, routes,
                      {**meta, "generations": generation, "fitness": float(fit[0]),
                       "stopped_by": stopped_by}, t0)
