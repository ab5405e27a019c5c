"""Refinement of an Angara table by local search: re-route pairs inside the routing graph while
the (edge-forwarding index, ``σ(4)``) pair goes down (``generator: refined``).

For systems too big for the MILP (:mod:`icsim.routing.tables.optimal`).  The search starts from
a table (SSSP's by default) and moves one pair at a time to another of its candidate routes --
its shortest paths in the deadlock-free routing graph (:mod:`icsim.routing.tables.routes`) -- so
every intermediate table, and the result, is deadlock-free by Theorem 1.

Objective: lexicographic, first the max channel load ``L``, then ``S = Σ_{c∈C} (γ_c - p)^4``
(``p`` the perfect load; ``σ(4) = (S / |C|)^(1/4)``).  The search is simulated annealing on ``S``
under the hard cap ``γ_c ≤ L_best``: a move that would push a channel above the best max load
seen so far is refused, and the cap drops whenever the max does.  The fourth power makes the
top channels expensive, so annealing on ``S`` also drains them; half the moves pick a pair
whose route crosses a channel at the current max, the other half any pair.  Temperatures fall
geometrically from ``t0`` (a multiple of the typical ``|ΔS|`` of a random move) to ``t0 *
1e-4`` over the budget, so the end is a greedy descent.  The best table seen (lowest ``L``, then
lowest ``S``) is returned.  On a node subset whose routes may leave it, the metric's ``C``
(and so ``p``) depends on the table while the search keeps the start's; the refined table is
returned only if the metrics rate it at least as good as the start.

With ``traffic`` the pairs' loads are weighted (:mod:`icsim.routing.tables.traffic`); weights are
scaled to integers (the largest to ``weight_resolution``) so that loads stay exact integers.

Budget and seed: ``time_limit_s`` (wall time) and ``max_moves`` (proposals), whichever comes
first; the annealing schedule follows the fraction of the budget used.  With ``max_moves`` and
no time limit the run is reproducible exactly; with a time limit the number of moves depends on
the machine.

Examples
--------
>>> from icsim.model.topology import Torus
>>> from icsim.routing.tables.metrics import table_metrics
>>> t = refined(Torus((4, 2, 2, 2)), seed=1, max_moves=20000, time_limit_s=None)
>>> m = table_metrics(t)
>>> m.max_load <= 27, t.meta["start_max_load"]          # SSSP starts at 28
(True, 28)
"""

from __future__ import annotations

import math
from time import perf_counter
from typing import Iterable

import numpy as np

from icsim.routing.table import RoutingTable
from icsim.routing.tables.generators import generate, make_table, node_list, prepare, register
from icsim.routing.tables.metrics import counted_channels, metrics_from_loads, minimal_total_load
from icsim.routing.tables.routes import RouteSet, route_set
from icsim.routing.tables.routing_graph import RoutingGraph
from icsim.routing.tables.traffic import pair_weights

#: fraction of moves that start from a channel at the current max load
HOT_SHARE = 0.5


def refine_choice(rs: RouteSet, choice: np.ndarray, *, weights: np.ndarray | None = None,
                  counted: np.ndarray | None = None, perfect: float | None = None,
                  seed: int = 0, time_limit_s: float | None = 10.0,
                  max_moves: int | None = None, t0_factor: float = 0.3) -> tuple[np.ndarray, dict]:
    """Anneal one route row per pair (``choice``) towards a lower (max load, ``S``).

    Parameters
    ----------
    rs : RouteSet
    choice : int array (G,)
        Starting route row of every pair.
    weights : int array (G,), optional
        Integer load each pair adds to its channels (default 1).
    counted : bool array (C,), optional
        The channels of ``C`` in ``S`` (default every channel some candidate can use).
    perfect : float, optional
        ``p`` in ``S`` (default total load / ``|C|``).
    seed : int
        Seed of the ``numpy.random.Generator`` that draws pairs, routes and acceptances.
    time_limit_s, max_moves : optional
        Budget; at least one must be given.
    t0_factor : float
        Initial temperature as a multiple of the median ``|ΔS|`` of random moves.

    Returns
    -------
    choice : int array (G,)
        The best table found.
    stats : dict
        ``moves``, ``accepted``, ``start_max_load``, ``start_S``, ``max_load``, ``S``,
        ``time_s``.
    """
    if time_limit_s is None and max_moves is None:
        raise ValueError("give time_limit_s or max_moves")
    if time_limit_s is not None and not time_limit_s > 0:      # 0 divides; < 0 never ends
        raise ValueError(f"time_limit_s must be above 0, got {time_limit_s}")
    t_start = perf_counter()
    rng = np.random.default_rng(seed)
    G = rs.num_pairs
    w = np.ones(G, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    choice = np.asarray(choice, dtype=np.int64).copy()
    C = rs.C
    loads = np.bincount(rs.chans[choice].ravel(), weights=np.repeat(w, rs.chans.shape[1]),
                        minlength=C + 1).astype(np.int64)
    loads[C] = 0
    if counted is None:
        counted = np.zeros(C, dtype=bool)
        counted[np.unique(rs.chans[rs.chans < C])] = True
    cnt = np.append(np.asarray(counted, dtype=bool), False)
    if perfect is None:
        perfect = float(loads.sum()) / max(int((cnt[:C] | (loads[:C] > 0)).sum()), 1)
    p = float(perfect)
    scale = max(float(w.max(initial=1)), 1.0)
    movable = np.flatnonzero((rs.counts > 1) & (w > 0))

    # Python lists for the inner loop (a move touches a few dozen entries)
    chans = [[c for c in row if c < C] for row in rs.chans.tolist()]
    ptr = rs.ptr.tolist()
    L = loads.tolist()
    isc = cnt.tolist()
    wl = w.tolist()
    ch = choice.tolist()

    def contrib(c: int, x: int) -> float:
        """A channel's term of S: channels outside C count once they carry load."""
        return ((x - p) / scale) ** 4 if (isc[c] or x > 0) else 0.0

    S = float(sum(contrib(c, L[c]) for c in range(C)))
    stats = {"moves": 0, "accepted": 0, "start_max_load": int(loads.max()), "start_S": S,
             "movable_pairs": int(len(movable))}
    if not len(movable):
        stats.update(max_load=int(loads.max()), S=S, time_s=perf_counter() - t_start)
        return choice, stats
    top = int(max(L))
    level = np.bincount(loads[:C], minlength=top + 1).tolist()     # channels per load value
    cap = top
    through: list[set] = [set() for _ in range(C)]
    for g in movable.tolist():
        for c in chans[ch[g]]:
            through[c].add(g)
    mov = movable.tolist()

    def delta(g: int, r_new: int) -> tuple[float, int]:
        """ΔS of moving pair g to route r_new, and the highest load it gives a channel."""
        wg, old, new = wl[g], chans[ch[g]], chans[r_new]
        olds, news = set(old), set(new)
        d, hi = 0.0, -1
        for c in old:
            if c not in news:
                x = L[c]
                d += contrib(c, x - wg) - contrib(c, x)
        for c in new:
            if c not in olds:
                x = L[c]
                y = x + wg
                if y > hi:
                    hi = y
                d += contrib(c, y) - contrib(c, x)
        return d, hi

    def apply(g: int, r_new: int) -> None:
        nonlocal top
        wg = wl[g]
        for c in chans[ch[g]]:
            through[c].discard(g)
            x = L[c]
            level[x] -= 1
            level[x - wg] += 1
            L[c] = x - wg
        for c in chans[r_new]:
            through[c].add(g)
            x = L[c]
            y = x + wg
            level[x] -= 1
            if y >= len(level):
                level.extend([0] * (y + 1 - len(level)))
            level[y] += 1
            L[c] = y
            if y > top:
                top = y
        ch[g] = r_new
        while top > 0 and level[top] == 0:
            top -= 1

    # initial temperature from a sample of random moves
    sample = []
    for _ in range(min(200, 4 * len(mov))):
        g = mov[int(rng.integers(len(mov)))]
        r = ptr[g] + int(rng.integers(ptr[g + 1] - ptr[g]))
        if r != ch[g]:
            sample.append(abs(delta(g, r)[0]))
    t0 = t0_factor * (float(np.median(sample)) if sample else 1.0) or 1e-9
    t_end = t0 * 1e-4
    best_key = (top, S)
    best = list(ch)
    hot: list[int] = []
    block = 4096
    u = rng.random((block, 4))
    k = block
    moves = accepted = 0
    budget_moves = max_moves if max_moves is not None else math.inf
    while True:
        if moves >= budget_moves:
            break
        if moves % 256 == 0:
            frac_t = 0.0 if time_limit_s is None else (perf_counter() - t_start) / time_limit_s
            frac = max(frac_t, moves / budget_moves if max_moves else 0.0)
            if frac >= 1.0:
                break
            temp = t0 * (t_end / t0) ** frac
            hot = [c for c in range(C) if L[c] == top] if top > 0 else []
        if k == block:
            u = rng.random((block, 4))
            k = 0
        a, b_, c_, d_ = u[k]
        k += 1
        moves += 1
        g = -1
        if hot and a < HOT_SHARE:
            c = hot[int(b_ * len(hot))]
            if L[c] == top and through[c]:
                tg = tuple(through[c])
                g = tg[int(c_ * len(tg))]
        if g < 0:
            g = mov[int(c_ * len(mov))]
        n = ptr[g + 1] - ptr[g]
        r = ptr[g] + int(d_ * n)
        if r == ch[g]:
            r = ptr[g] + (r - ptr[g] + 1) % n
        dS, hi = delta(g, r)
        if hi > cap:
            continue
        if dS > 0 and rng.random() >= math.exp(-dS / temp):
            continue
        apply(g, r)
        accepted += 1
        S += dS
        if top < cap:
            cap = top
        if top < best_key[0] or (top == best_key[0] and S < best_key[1] - 1e-9 * abs(S)):
            best_key = (top, S)
            best = list(ch)
    out = np.asarray(best, dtype=np.int64)
    final = np.bincount(rs.chans[out].ravel(), weights=np.repeat(w, rs.chans.shape[1]),
                        minlength=C + 1)[:C]
    used = cnt[:C] | (final > 0)
    stats.update(moves=moves, accepted=accepted, max_load=int(final.max()),
                 S=float(np.sum(((final[used] - p) / scale) ** 4)),
                 time_s=perf_counter() - t_start)
    return out, stats


def _better(rs: RouteSet, nodes, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether choice ``a`` has a lower (max load, σ(4)) than ``b`` by the table metrics (not
    worse on ties)."""
    ma, mb = (metrics_from_loads(rs.topology, nodes, rs.loads(c), 0) for c in (a, b))
    return (ma.max_load, ma.sigma4) <= (mb.max_load, mb.sigma4)


def default_moves(rs: RouteSet) -> int:
    """The default budget: 50 proposals per pair with a choice, between 50,000 and 2,000,000
    (a few seconds on the Desmos torus, about a minute at 500 nodes)."""
    return int(np.clip(50 * int(np.count_nonzero(rs.counts > 1)), 50_000, 2_000_000))


@register("refined")
def refined(topology, nodes: Iterable[int] | None = None, *, seed: int = 0,
            graph: RoutingGraph | None = None, start: str | RoutingTable = "sssp",
            traffic=None, time_limit_s: float | None = None, max_moves: int | None = None,
            weight_resolution: int = 1000) -> RoutingTable:
    """SSSP's table (or ``start``'s), refined by annealing; see the module docstring.

    Parameters
    ----------
    topology : Torus
    nodes : iterable of int, optional
        Node subset (default every node in service).
    seed : int
        Seed of the search.
    graph : RoutingGraph, optional
        A prebuilt deadlock-free routing graph of ``topology``.
    start : str or RoutingTable
        Generator name of the starting table, or a table of this graph.
    traffic : mapping or array, optional
        Pair weights; loads are weighted sums (pairs that send nothing keep their route).
    time_limit_s, max_moves : optional
        Search budget (refinement only; the starting table's time is extra).  Default: no time
        limit and :func:`default_moves` proposals, so that the table depends on the seed only.
    weight_resolution : int
        With traffic, weights are scaled so the largest is this integer.

    Returns
    -------
    RoutingTable
        ``meta``: generator, seed, start, start_max_load (weighted when ``traffic`` is given),
        moves, accepted, movable_pairs, kept_start (the search found nothing better by the
        table metrics), refine_time_s, time_s, graph_time_s.
    """
    t0 = perf_counter()
    nodes = node_list(topology, nodes)
    full, graph_time = prepare(topology, graph)
    base = start if isinstance(start, RoutingTable) else generate(start, topology, nodes,
                                                                  seed=seed, graph=full)
    rs = route_set(full, nodes)
    choice = rs.choice_of(base.routes)
    w = pair_weights(traffic, rs.pairs.tolist())
    if w is None:
        wi = None
        counted = counted_channels(topology, nodes, np.zeros(rs.C, dtype=np.int64))
        perfect = minimal_total_load(topology, nodes) / max(int(counted.sum()), 1)
    else:
        wi = np.rint(w * weight_resolution).astype(np.int64)
        counted, perfect = None, None
    if time_limit_s is None and max_moves is None:
        max_moves = default_moves(rs)
    out, stats = refine_choice(rs, choice, weights=wi, counted=counted, perfect=perfect,
                               seed=seed, time_limit_s=time_limit_s, max_moves=max_moves)
    if wi is None and not _better(rs, nodes, out, choice):
        out = choice          # on a subset the metric's C (and p) move with the table: keep
        stats["kept_start"] = True                       # the start unless it really improved
    meta = {"generator": "refined", "seed": int(seed), "graph_time_s": graph_time,
            "start": start if isinstance(start, str) else base.meta.get("generator", "table"),
            "traffic": traffic is not None, "time_limit_s": time_limit_s,
            "max_moves": max_moves, "refine_time_s": stats["time_s"],
            "kept_start": stats.get("kept_start", False),
            **{k: stats[k] for k in ("moves", "accepted", "start_max_load", "movable_pairs")}}
    return make_table(topology, nodes, rs.routes_dict(out), meta, t0)
