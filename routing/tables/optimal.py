"""Provably optimal Angara tables (an exact MILP) and LP lower bounds on the edge-forwarding
index.

The paper names the approach it did not take: "MILP can be used to obtain an optimal solution
of the global routing problem ... but this approach does not scale well", and SGR's LP bounds.
Both are here, solved by HiGHS (:func:`scipy.optimize.milp`, :func:`scipy.optimize.linprog`).

The exact problem (``generator: optimal``)
------------------------------------------
Choose one route per ordered pair among its candidates -- the pair's shortest paths in the
deadlock-free routing graph (:mod:`icsim.routing.tables.routes`; on a healthy torus exactly its
minimal Angara routes) -- so that every route is a path of that graph and the table is
deadlock-free by Theorem 1.  With a binary ``x_r`` per candidate route ``r``, channel load
``γ_c = Σ_r w_r A_cr x_r`` (``w`` the pair's traffic weight, 1 by default):

1. *edge-forwarding index*: minimise ``L`` subject to ``Σ_{r of pair g} x_r = 1`` and
   ``γ_c ≤ L``;
2. *deviation at that optimum*: with ``γ_c ≤ L*`` fixed, minimise ``Σ_{c ∈ C} (γ_c - γ_perfect)^4``,
   i.e. ``σ(4)``.  ``(γ - p)^4`` is convex, so the epigraph of its secants between consecutive
   integers (``t_c ≥ f(k) + (f(k+1) - f(k)) (γ_c - k)``) equals it at every integer load: the
   MILP minimises ``σ(4)`` exactly, not a proxy.  With weights that are not whole multiples of
   one another the breakpoints are a grid and the objective is the secant interpolation (a
   linearised proxy, exact at the breakpoints).

Pairs with a single candidate route are constants.  Stage 1 gets ``time_limit_s``, stage 2
``sigma_time_limit_s``; a stage stopped by its limit gives its best table with HiGHS's bound
and the gap (``meta``).  If stage 1 has no table at all when stopped, the ``refined`` table is
returned with the bound.

``C`` and ``γ_perfect`` are those of :mod:`icsim.routing.tables.metrics`: on a whole torus every
channel; on a node subset the channels between subset nodes plus every channel a candidate
route can use (the metric counts only the used ones, so on subsets whose minimal routes leave
the subset stage 2 is a close proxy of the reported ``σ(4)``).

The LP bound
------------
:func:`load_lower_bound` relaxes ``x`` to ``[0, 1]`` and aggregates the routes of one source into
a flow over its shortest-path DAG (one variable per DAG edge, demand at each destination's
``end`` vertex): an integral aggregated flow is exactly one route per pair, so the two
relaxations are equal and the flow form has far fewer variables.  On a healthy torus the LP is
further reduced by symmetry: translations along ring dimensions map Angara routes to Angara
routes, an optimal LP solution may be taken invariant under them (average the translates), and
then only sources with coordinate 0 in every ring dimension carry variables, with one load
constraint per orbit of channels.  ``ceil`` of the LP optimum bounds the edge-forwarding index of
every table whose routes are shortest paths of the graph: by default (``routes='angara'``) the
graph with every first/last step the router can take, i.e. any minimal Angara table,
deadlock-free or not.

Examples
--------
>>> from icsim.model.topology import Torus
>>> from icsim.routing.tables.metrics import table_metrics
>>> t = optimal(Torus((4,)))                       # the 4-node ring: half-ring pairs split
>>> table_metrics(t).max_load, t.meta["status"], t.meta["load_bound"]
(2, 'optimal', 2.0)
>>> load_lower_bound(Torus((4, 2, 2, 2))).bound    # the Desmos torus: SSSP 28, the optimum 26
26.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from time import perf_counter
from typing import Iterable

import numpy as np
import scipy.sparse as sp

from icsim.routing.table import RoutingTable
from icsim.routing.tables.augment import angara_routing_graph
from icsim.routing.tables.generators import make_table, node_list, prepare, register
from icsim.routing.tables.metrics import counted_channels, minimal_total_load
from icsim.routing.tables.refine import refined
from icsim.routing.tables.routes import RouteSet, route_set
from icsim.routing.tables.routing_graph import RoutingGraph, source_dag
from icsim.routing.tables.sssp import sssp
from icsim.routing.tables.traffic import integral_weights, pair_weights

#: stage 2 is exact (secants between consecutive integer loads) up to this many per channel;
#: beyond, 32 secants on a grid (a linearised proxy)
MAX_BREAKPOINTS = 256
#: HiGHS status codes of scipy.optimize.milp, as words
MILP_STATUS = {0: "optimal", 1: "time_limit", 2: "infeasible", 3: "unbounded", 4: "error"}


def milp_status(res) -> str:
    """The solver's stop as a word; HiGHS's stop at ``mip_max_nodes`` ("Solution limit
    reached", which scipy passes on as an unrecognised status) is ``node_limit``."""
    if res.status == 4 and "Solution limit reached" in str(res.message):
        return "node_limit"
    return MILP_STATUS.get(res.status, str(res.status))


# ----------------------------------------------------------------------------- LP bound
@dataclass(frozen=True)
class LoadBound:
    """An LP lower bound on the edge-forwarding index.

    Attributes
    ----------
    lp : float
        Optimum of the LP relaxation (NaN when it did not solve).
    bound : float
        The proved bound on the max (weighted) load: ``ceil(lp)`` when loads are integers.
    status : str
        ``'optimal'`` or why not.
    time_s : float
        Building and solving.
    variables, constraints : int
    symmetric : bool
        Whether the ring-translation reduction was used.
    routes : str
        Which route set: ``'angara'`` (every Angara route) or ``'graph'`` (a given graph's).
    """

    lp: float
    bound: float
    status: str
    time_s: float
    variables: int
    constraints: int
    symmetric: bool
    routes: str


def load_lower_bound(topology, nodes: Iterable[int] | None = None, *, routes: str = "angara",
                     graph: RoutingGraph | None = None, traffic=None,
                     symmetric: bool | None = None,
                     time_limit_s: float | None = None) -> LoadBound:
    """LP lower bound on the edge-forwarding index of any table of shortest routes.

    Parameters
    ----------
    topology : Torus
    nodes : iterable of int, optional
        Node subset (default every node in service).
    routes : {'angara', 'deadlock-free'}
        ``'angara'``: the routing graph with every first/last step the router can take, so the
        bound holds for any minimal Angara table, deadlock-free or not.  ``'deadlock-free'``: the
        graph the generators use (:func:`~icsim.routing.tables.generators.prepare`).
    graph : RoutingGraph, optional
        Bound the tables of this graph instead (overrides ``routes``).
    traffic : mapping or array, optional
        Pair weights (:func:`~icsim.routing.tables.traffic.pair_weights`): bound the max
        weighted load.
    symmetric : bool, optional
        Use the ring-translation reduction (default: whenever it is valid -- whole healthy
        torus, no traffic, a translation-invariant graph).
    time_limit_s : float, optional

    Returns
    -------
    LoadBound

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> b = load_lower_bound(Torus((8, 8, 8)))
    >>> b.bound, b.symmetric, b.variables < 3000      # one source carries the whole LP
    (512.0, True, True)
    """
    from scipy.optimize import linprog

    t0 = perf_counter()
    nodes = node_list(topology, nodes)
    if graph is None:
        if routes == "angara":
            graph = angara_routing_graph(topology)
        elif routes == "deadlock-free":
            graph, _ = prepare(topology, None)
        else:
            raise ValueError(f"routes must be 'angara' or 'deadlock-free', got {routes!r}")
        label = routes
    else:
        label = "graph"
    whole = len(nodes) == topology.num_nodes
    can_sym = (whole and traffic is None and not topology.has_failures and
               bool(_ring_dims(topology)) and _invariant(graph))
    if symmetric is None:
        symmetric = can_sym
    elif symmetric and not can_sym:
        raise ValueError("the symmetric reduction needs the whole healthy torus, no traffic "
                         "and a translation-invariant routing graph")
    g = graph.minimal() if not topology.has_failures else graph
    pairs = [(s, t) for s in nodes for t in nodes if s != t]
    w = pair_weights(traffic, pairs)
    weight = {} if w is None else dict(zip(pairs, w.tolist()))
    orbit, sources = _orbits(topology, symmetric, nodes)
    cols, rows_eq, vals_eq, b_eq, load_rows, load_cols = [], [], [], [], [], []
    nvar = nrow = 0
    for s in sources:
        targets = np.array([t for t in nodes if t != s], dtype=np.int64)
        dag = source_dag(g, s, targets)
        m, nv = len(dag.e_head), len(dag.vertices)
        ids = nvar + np.arange(m)
        rows_eq += [nrow + dag.e_head, nrow + dag.e_tail]
        vals_eq += [np.ones(m), -np.ones(m)]
        cols += [ids, ids]
        demand = np.zeros(nv)
        demand[dag.end_local] = [weight.get((s, int(t)), 1.0) if weight else 1.0
                                 for t in targets]
        b_eq.append(demand[1:])                    # the begin row is implied by the others
        real = dag.e_chan < g.num_channels_dense
        load_rows.append(orbit[dag.e_chan[real]])
        load_cols.append(ids[real])
        nvar += m
        nrow += nv
    rows_eq = np.concatenate(rows_eq)
    cols_eq = np.concatenate(cols)
    keep = np.ones(len(rows_eq), dtype=bool)
    # drop the begin rows (row index of each source's local vertex 0)
    begin_rows = np.cumsum([0] + [len(b) + 1 for b in b_eq[:-1]])
    keep &= ~np.isin(rows_eq, begin_rows)
    remap = np.full(nrow, -1, dtype=np.int64)
    live = np.setdiff1d(np.arange(nrow), begin_rows)
    remap[live] = np.arange(len(live))
    A_eq = sp.csr_matrix((np.concatenate(vals_eq)[keep], (remap[rows_eq[keep]], cols_eq[keep])),
                         shape=(len(live), nvar + 1))
    lr, lc = np.concatenate(load_rows), np.concatenate(load_cols)
    used, lr = np.unique(lr, return_inverse=True)
    A_ub = sp.csr_matrix((np.ones(len(lr)), (lr, lc)), shape=(len(used), nvar + 1)).tolil()
    A_ub[:, nvar] = -1.0
    c = np.zeros(nvar + 1)
    c[-1] = 1.0
    opts = {} if time_limit_s is None else {"time_limit": float(time_limit_s)}
    res = linprog(c, A_ub=A_ub.tocsr(), b_ub=np.zeros(len(used)), A_eq=A_eq,
                  b_eq=np.concatenate(b_eq), bounds=(0, None), method="highs", options=opts)
    lp = float(res.fun) if res.status == 0 else math.nan
    if w is not None and lp == lp:
        iw = integral_weights(w)
        scale = 1.0 if iw is None else float(w[w > 0].min())
        bound = math.ceil(lp / scale - 1e-6) * scale if iw is not None else lp
    else:
        bound = float(math.ceil(lp - 1e-6)) if lp == lp else math.nan
    return LoadBound(lp, float(bound), "optimal" if res.status == 0 else res.message,
                     perf_counter() - t0, nvar + 1, A_eq.shape[0] + len(used), symmetric, label)


def _ring_dims(topology) -> list[int]:
    return [d for d in range(topology.n) if topology.is_ring(d)]


def _invariant(graph: RoutingGraph) -> bool:
    """Whether the graph's extra turns are invariant under unit translations of the rings."""
    topo = graph.topology
    turns = {tuple(t) for t in graph.turns.tolist()}
    if not turns:
        return True
    coords = topo.coord_array
    for d in _ring_dims(topo):
        shift = lambda u: topo.node(tuple(coords[u] + np.eye(topo.n, dtype=np.int64)[d]))  # noqa
        if {(shift(u), p, shift(v), q) for u, p, v, q in turns} != turns:
            return False
    return True


def _orbits(topology, symmetric: bool, nodes) -> tuple[np.ndarray, list[int]]:
    """Orbit id of every dense channel id (plus the "no channel" id) and the sources that
    carry variables."""
    P = topology.num_ports
    C = topology.num_nodes * P
    if not symmetric:
        return np.arange(C + 1), list(nodes)
    coords = topology.coord_array.copy()
    ring = _ring_dims(topology)
    coords[:, ring] = 0
    rep = coords @ np.asarray(topology.strides, dtype=np.int64)
    orbit = np.append(np.repeat(rep, P) * P + np.tile(np.arange(P), topology.num_nodes), C)
    sources = [v for v in nodes if (topology.coord_array[v, ring] == 0).all()]
    return orbit, sources


# ----------------------------------------------------------------------------- the MILP
@dataclass
class _Model:
    """The routes that matter: the candidates of multi-route pairs (the MILP's columns) and
    the constant loads of the single-route pairs."""

    rs: RouteSet
    weights: np.ndarray            # per pair
    cols: np.ndarray               # route rows that are variables
    col_pair: np.ndarray           # their pair (0..G_m-1, renumbered)
    const: np.ndarray              # constant load per dense channel
    fixed: dict                    # pair index -> route row (single candidate, or weight 0)
    integral: bool


def _model(rs: RouteSet, w: np.ndarray, base_choice: np.ndarray) -> _Model:
    multi = (rs.counts > 1) & (w > 0)
    fixed = {g: (int(rs.ptr[g]) if rs.counts[g] == 1 else int(base_choice[g]))
             for g in np.flatnonzero(~multi).tolist()}
    single = np.flatnonzero((rs.counts == 1) & (w > 0))
    const = rs.loads(rs.ptr[single], w[single]) if len(single) else np.zeros(rs.C)
    mg = np.flatnonzero(multi)
    cols = np.concatenate([np.arange(rs.ptr[g], rs.ptr[g + 1]) for g in mg]) if len(mg) \
        else np.zeros(0, dtype=np.int64)
    col_pair = np.repeat(np.arange(len(mg)), rs.counts[mg])
    iw = integral_weights(w)
    return _Model(rs, w, cols.astype(np.int64), col_pair, const, fixed, iw is not None)


def _milp(c, constraints, integrality, bounds, time_limit_s, node_limit=None):
    from scipy.optimize import milp

    t0 = perf_counter()
    opts = {"time_limit": float(time_limit_s), "disp": False, "mip_rel_gap": 1e-9}
    if node_limit is not None:
        opts["node_limit"] = int(node_limit)
    res = milp(c, constraints=constraints, integrality=integrality, bounds=bounds,
               options=opts)
    return res, perf_counter() - t0


@register("optimal")
def optimal(topology, nodes: Iterable[int] | None = None, *, seed: int = 0,
            graph: RoutingGraph | None = None, traffic=None, time_limit_s: float = 60.0,
            sigma: bool = True, sigma_time_limit_s: float | None = None,
            sigma_cap: float | None = None, node_limit: int | None = None) -> RoutingTable:
    """An Angara routing table of least edge-forwarding index, then least ``σ(4)`` at that
    index, by an exact MILP (module docstring).

    Parameters
    ----------
    topology : Torus
        Failed links and nodes are avoided (the routes are shortest paths of the
        fault-tolerant deadlock-free routing graph).
    nodes : iterable of int, optional
        Node subset (default every node in service).
    seed : int
        Seed of the ``refined`` fallback; the MILP is deterministic.
    graph : RoutingGraph, optional
        A prebuilt deadlock-free routing graph of ``topology``.
    traffic : mapping or array, optional
        Traffic weights per pair (:mod:`icsim.routing.tables.traffic`): minimise the max weighted
        load, then the weighted deviation; pairs that send nothing keep their SSSP route.
    time_limit_s : float
        HiGHS time limit of stage 1 (the edge-forwarding index).
    sigma : bool
        Run stage 2 (``σ(4)`` at the optimal index).
    sigma_time_limit_s : float, optional
        Time limit of stage 2 (default ``time_limit_s``).
    sigma_cap : float, optional
        Stage 2 caps the loads at this value instead of the optimal index (e.g. one more, to
        see whether a higher max load buys a lower ``σ(4)``); the table's max load is then
        only bounded by it.
    node_limit : int, optional
        A budget that does not depend on the machine: each stage stops after this many
        branch-and-bound nodes (HiGHS ``mip_max_nodes``), whichever of it and the time limit
        comes first; with no incumbent by then, the ``refined`` fallback runs its default
        number of moves instead of a share of the time limit.  A table made under it is the
        same on any machine that finishes within the time limit.

    Returns
    -------
    RoutingTable
        ``meta``: ``status`` (stage 1: ``optimal`` -- the max load equals the proved bound --,
        ``time_limit`` or ``node_limit``), ``max_load`` (of the table; with traffic the
        weighted load, in units of the heaviest pair's weight), ``load_bound`` (proved lower
        bound), ``load_gap`` (relative),
        ``load_solve_s``, ``sigma_status``, ``sigma4`` (stage 2's value), ``sigma4_bound``,
        ``sigma_solve_s``, ``variables``, ``routes`` (candidates), ``fallback`` and the usual
        ``generator``, ``seed``, ``time_s``, ``graph_time_s``.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.routing.tables.metrics import table_metrics
    >>> m = table_metrics(optimal(Torus((2, 2, 2))))
    >>> m.max_load, m.perfect_load            # 19 routes leave node (1,1,1) by 3 channels
    (7, 4.0)
    """
    from scipy.optimize import Bounds, LinearConstraint

    t0 = perf_counter()
    nodes = node_list(topology, nodes)
    full, graph_time = prepare(topology, graph)
    rs = route_set(full, nodes)
    meta = {"generator": "optimal", "seed": int(seed), "graph_time_s": graph_time,
            "time_limit_s": time_limit_s, "node_limit": node_limit,
            "traffic": traffic is not None,
            "pairs": rs.num_pairs, "routes": rs.num_routes}
    if rs.num_pairs == 0:
        return make_table(topology, nodes, {}, {**meta, "status": "optimal", "max_load": 0,
                                                "load_bound": 0.0, "load_gap": 0.0}, t0)
    w = pair_weights(traffic, rs.pairs.tolist())
    w = np.ones(rs.num_pairs) if w is None else w
    idle = (w == 0) & (rs.counts > 1)          # pairs that send nothing keep SSSP's route
    base = _sssp_choice(topology, nodes, full, rs) if idle.any() else rs.first_choice()
    iw = integral_weights(w)
    unit = float(w[w > 0].min())
    wi = iw.astype(float) if iw is not None else w / unit        # loads in units of `unit`
    mdl = _model(rs, wi, base)
    A = rs.incidence[:, mdl.cols] @ sp.diags(wi[rs.pair_of_route[mdl.cols]]) \
        if len(mdl.cols) else sp.csr_matrix((rs.C, 0))
    A = A.tocsr()
    rows = np.flatnonzero(np.diff(A.indptr) > 0)                   # channels a variable loads
    Ar, const_r = A[rows], mdl.const[rows]
    nx, M = len(mdl.cols), len(rows)
    G = int(mdl.col_pair.max()) + 1 if nx else 0
    assign = sp.csr_matrix((np.ones(nx), (mdl.col_pair, np.arange(nx))), shape=(G, nx))
    floor = float(mdl.const.max(initial=0.0))
    meta.update(variables=nx, channels_in_model=M)
    # stage 1: min L
    c1 = np.r_[np.zeros(nx), 1.0]
    cons1 = [LinearConstraint(sp.hstack([assign, sp.csr_matrix((G, 1))]), 1, 1),
             LinearConstraint(sp.hstack([Ar, -sp.csr_matrix(np.ones((M, 1)))]), -np.inf,
                              -const_r)]
    integ1 = np.r_[np.ones(nx), 1.0 if mdl.integral else 0.0]
    bnd1 = Bounds(np.r_[np.zeros(nx), floor], np.r_[np.ones(nx), np.inf])
    if nx:
        res1, t1 = _milp(c1, cons1, integ1, bnd1, time_limit_s, node_limit)
    else:
        res1, t1 = None, 0.0
    status = "optimal" if res1 is None else milp_status(res1)
    if res1 is not None and res1.x is None:
        budget = ({"time_limit_s": None} if node_limit is not None else
                  {"time_limit_s": max(1.0, time_limit_s / 4)})
        table = refined(topology, nodes, seed=seed, graph=full, traffic=traffic, **budget)
        loads = rs.loads(rs.choice_of(table.routes), w)
        lb = _finite(res1.mip_dual_bound) * unit
        lp = load_lower_bound(topology, nodes, graph=full, traffic=traffic,
                              time_limit_s=None if node_limit is not None
                              else max(1.0, time_limit_s)).bound
        lb = max(x for x in (lb, lp, floor * unit) if x == x)
        mx = float(loads.max())
        return make_table(topology, nodes, table.routes, {
            **meta, "status": "optimal" if mx <= lb else status, "milp_status": status,
            "fallback": "refined", "max_load": _num(mx),
            "load_bound": lb, "load_gap": (mx - lb) / mx if mx else 0.0,
            "load_solve_s": t1}, t0)
    choice = base.copy()
    for g, r in mdl.fixed.items():
        choice[g] = r
    if nx:
        _apply(choice, res1.x[:nx], mdl)
    loads_u = mdl.const + (A @ np.rint(res1.x[:nx]) if nx else 0.0)
    L1 = float(loads_u.max())
    bound = L1 if res1 is None else float(res1.mip_dual_bound)
    if mdl.integral:
        bound = math.ceil(bound - 1e-6)
    meta.update(status=status, max_load=_num(L1 * unit), load_bound=float(bound) * unit,
                load_gap=(L1 - bound) / L1 if L1 else 0.0, load_solve_s=t1)
    # stage 2: min sum (gamma - p)^4 with gamma <= L1
    if sigma and nx:
        cap = L1 if sigma_cap is None else float(sigma_cap) / unit
        meta["sigma_cap"] = _num(cap * unit)
        res2 = _sigma_stage(topology, nodes, rs, mdl, A, rows, cap, wi, assign,
                            sigma_time_limit_s if sigma_time_limit_s is not None
                            else time_limit_s, node_limit)
        meta.update(res2["meta"])
        if res2["x"] is not None:
            _apply(choice, res2["x"], mdl)
            meta["max_load"] = _num(float(rs.loads(choice, wi).max()) * unit)
    return make_table(topology, nodes, rs.routes_dict(choice), meta, t0)


def _finite(x) -> float:
    return float(x) if x is not None and np.isfinite(x) else math.nan


def _num(x: float):
    return int(round(x)) if abs(x - round(x)) < 1e-9 else float(x)


def _apply(choice: np.ndarray, x: np.ndarray, mdl: _Model) -> None:
    """Write the chosen route of every variable pair into ``choice``."""
    rs = mdl.rs
    picked = mdl.cols[x > 0.5]
    choice[rs.pair_of_route[picked]] = picked


def _sssp_choice(topology, nodes, graph, rs: RouteSet) -> np.ndarray:
    return rs.choice_of(sssp(topology, nodes, graph=graph).routes)


def _sigma_stage(topology, nodes, rs: RouteSet, mdl: _Model, A, rows, L1: float,
                 wi: np.ndarray, assign, time_limit_s: float,
                 node_limit: int | None = None) -> dict:
    """Stage 2: with every load at most ``L1``, minimise Σ_C (γ_c - p)^4 over the counted
    channels (secant epigraph; exact at integer loads)."""
    from scipy.optimize import Bounds, LinearConstraint

    nx, G = A.shape[1], assign.shape[0]
    mask = counted_channels(topology, nodes, np.zeros(rs.C, dtype=np.int64))
    in_model = np.zeros(rs.C, dtype=bool)
    in_model[rows] = True
    counted = mask | in_model
    Cn = int(counted.sum())
    # γ_perfect: the metric's (minimal routes) without traffic; with traffic the weighted
    # total load, the same for every table (all candidates of a pair are equally long)
    if np.all(wi == 1.0):
        total = float(minimal_total_load(topology, nodes))
    else:
        total = float((wi * rs.hops[rs.ptr[:-1]]).sum())
    p = total / Cn
    f = lambda g: (g - p) ** 4                                          # noqa: E731
    var_ch = rows                                   # channels with a load variable
    const_ch = np.flatnonzero(counted & ~in_model)
    constant = float(f(mdl.const[const_ch]).sum())
    lo = mdl.const[var_ch]
    exact = mdl.integral and L1 - lo.min(initial=L1) <= MAX_BREAKPOINTS
    if exact:
        bps = [np.arange(math.floor(a), int(L1) + 1, dtype=float) for a in lo]
    else:
        bps = [np.unique(np.linspace(a, L1, 33)) for a in lo]
    scale = max(float(f(0.0)), float(f(L1)), 1.0)
    M = len(var_ch)
    # variables: x (nx), gamma (M), t (M)
    nv = nx + 2 * M
    r_i, r_j, r_v, r_lo = [], [], [], []
    row = 0
    for i, b in enumerate(bps):
        if len(b) < 2:
            continue
        k0, k1 = b[:-1], b[1:]
        slope = (f(k1) - f(k0)) / (k1 - k0) / scale
        inter = f(k0) / scale - slope * k0
        n = len(k0)
        rr = row + np.arange(n)
        r_i += [rr, rr]
        r_j += [np.full(n, nx + M + i), np.full(n, nx + i)]
        r_v += [np.ones(n), -slope]
        r_lo.append(inter)
        row += n
    sec = sp.csr_matrix((np.concatenate(r_v), (np.concatenate(r_i), np.concatenate(r_j))),
                        shape=(row, nv))
    link = sp.hstack([A[rows], -sp.identity(M), sp.csr_matrix((M, M))])
    cons = [LinearConstraint(sp.hstack([assign, sp.csr_matrix((G, 2 * M))]), 1, 1),
            LinearConstraint(link, -mdl.const[var_ch], -mdl.const[var_ch]),
            LinearConstraint(sec, np.concatenate(r_lo), np.inf)]
    t_lo = np.array([f(np.clip(p, a, L1)) / scale for a in lo])
    bnd = Bounds(np.r_[np.zeros(nx), lo, t_lo], np.r_[np.ones(nx), np.full(M, L1),
                                                     np.full(M, np.inf)])
    c = np.r_[np.zeros(nx + M), np.ones(M)]
    integ = np.r_[np.ones(nx), np.full(M, 1.0 if exact else 0.0), np.zeros(M)]
    res, t = _milp(c, cons, integ, bnd, time_limit_s, node_limit)
    status = milp_status(res)
    out = {"sigma_status": status, "sigma_solve_s": t, "sigma_channels": Cn,
           "sigma_exact": bool(exact)}
    if res.x is None:
        return {"x": None, "meta": out}
    val = (res.fun * scale + constant) / Cn
    lb = (res.mip_dual_bound * scale + constant) / Cn if res.mip_dual_bound is not None else val
    out.update(sigma4=max(val, 0.0) ** 0.25, sigma4_bound=max(lb, 0.0) ** 0.25)
    out["sigma_gap"] = max(0.0, (out["sigma4"] - out["sigma4_bound"]) / out["sigma4"]) \
        if out["sigma4"] else 0.0
    return {"x": res.x[:nx], "meta": out}
