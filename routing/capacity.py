"""The capacity bound: the most uniform injection any routing over a set of paths can carry.

An adaptive routing has no fixed channel loads (it chooses by the queues), but it cannot carry
more than the network's channels allow: the *maximum concurrent flow* of the traffic (every
source router u sends ``λ · R[u, d]`` to every destination router d; each channel carries at
most one packet per link time, the channels taken as equal in bandwidth, as in
:mod:`icsim.routing.oblivious`) is an upper bound on what it sustains.  The flow may use every
channel (the bound of *any* routing: Valiant's, UGAL, PAR, DAL), or only the channels the
routing's own program offers a packet for its destination (its adaptive port masks: a minimal
adaptive routing's minimal paths).  Commodities with one destination share their flow
conservation, so the linear program has one flow variable per (destination router, channel):
solved by HiGHS (``scipy.optimize.linprog``).  In γ units the bound is
``max_channel_load_factor · λ`` (docs/model.md §6, §8.1).

>>> from icsim.model.topology import HyperX
>>> hx = HyperX((4,), p=2)                       # 4 routers all-to-all, 2 terminals each
>>> T = hx.num_terminals
>>> uniform = (np.ones((T, T)) - np.eye(T)) / (T - 1)
>>> round(capacity_bound(hx, uniform), 4)        # a link carries 2 x 2/7 per unit: 7/4
1.75
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icsim.routing.program import PAIR

#: the most flow variables (destinations x channels) of a program solved here
MAX_VARIABLES = 200_000


def router_traffic(topology: Any, rates: np.ndarray) -> np.ndarray:
    """Router-to-router traffic (N x N) per unit of per-terminal injection from a traffic
    matrix over terminals (T x T; over nodes where they are the same)."""
    lam = np.asarray(rates, dtype=float)
    N, T = int(topology.num_nodes), int(topology.num_terminals)
    if lam.shape == (N, N) and T == N:
        return lam
    if lam.shape != (T, T):
        raise ValueError(f"traffic of shape {lam.shape} for {T} terminals")
    A = np.zeros((T, N))
    A[np.arange(T), np.asarray(topology.terminal_routers, dtype=np.int64)] = 1.0
    return A.T @ lam @ A


def program_masks(topology: Any, routing: Any) -> np.ndarray | None:
    """The ports a routing's program offers toward each destination, ``mask[u, d]`` (bits by
    port), when it has one phase keyed by router pair and no decision at injection (a minimal
    adaptive routing: HyperX's, up*/down* on a fat tree); ``None`` otherwise (the bound then
    lets the flow use every channel)."""
    program = routing.program() if hasattr(routing, "program") else None
    if program is None or program.decision is not None or len(program.phases) != 1:
        return None
    phase = program.phases[0]
    if phase.key != PAIR or phase.ports is None or phase.detour is not None:
        return None
    N = int(topology.num_nodes)
    mask = np.asarray(phase.ports, dtype=np.int64).reshape(N, N).copy()
    if phase.escape is not None:                       # the escape port is offered too
        esc = np.asarray(phase.escape, dtype=np.int64).reshape(N, N)
        mask |= np.where(esc >= 0, np.left_shift(1, np.maximum(esc, 0)), 0)
    return mask


def capacity_bound(topology: Any, rates: np.ndarray, masks: np.ndarray | None = None) -> float:
    """The maximum concurrent flow of ``rates`` (module docstring) in γ units; ``masks``
    (:func:`program_masks`) restricts each destination's flow to the ports offered for it."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, hstack

    R = router_traffic(topology, rates)
    np.fill_diagonal(R, 0.0)
    N, P = int(topology.num_nodes), int(topology.num_ports)
    nbr = np.asarray(topology.neighbor_array, dtype=np.int64)
    cu, cp = np.nonzero(nbr >= 0)                       # channels: (router, port)
    cv = nbr[cu, cp]
    C = len(cu)
    dests = np.flatnonzero(R.sum(axis=0) > 0)
    if not len(dests):
        return float("inf")
    cols_d, cols_c = [], []
    for d in dests:
        ok = cu != d                                    # nothing leaves the destination
        if masks is not None:
            ok &= (masks[cu, d] >> cp) & 1 == 1
        c = np.flatnonzero(ok)
        cols_d.append(np.full(len(c), d))
        cols_c.append(c)
    vd, vc = np.concatenate(cols_d), np.concatenate(cols_c)
    V = len(vd)
    if V > MAX_VARIABLES:
        raise ValueError(f"{topology.describe()}: the capacity program would have {V:,} flow "
                         f"variables (at most {MAX_VARIABLES:,})")
    drow = {int(d): i for i, d in enumerate(dests)}
    di = np.array([drow[int(d)] for d in vd])
    # conservation at every router u != d: out - in - λ R[u, d] = 0; rows (d index, u)
    out_rows = di * N + cu[vc]
    in_rows = di * N + cv[vc]
    keep_in = cv[vc] != vd                               # the destination absorbs
    rows = np.concatenate([out_rows, in_rows[keep_in]])
    cols = np.concatenate([np.arange(V), np.arange(V)[keep_in]])
    vals = np.concatenate([np.ones(V), -np.ones(int(keep_in.sum()))])
    eq = coo_matrix((vals, (rows, cols)), shape=(len(dests) * N, V)).tocsr()
    demand = -R[:, dests].T.ravel()                      # (d index, u)
    a_eq = hstack([eq, coo_matrix(demand[:, None])]).tocsr()
    used = np.flatnonzero(np.diff(a_eq.indptr) > 0)
    a_eq = a_eq[used]
    a_ub = hstack([coo_matrix((np.ones(V), (vc, np.arange(V))), shape=(C, V)),
                   coo_matrix((C, 1))]).tocsr()
    cost = np.zeros(V + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=a_ub, b_ub=np.ones(C), A_eq=a_eq, b_eq=np.zeros(len(used)),
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"the capacity program failed: {res.message}")
    return float(topology.max_channel_load_factor * res.x[-1])


def channel_time_bound(topology: Any, rates: np.ndarray) -> float:
    """A bound no routing passes, cheap on any topology: a packet crosses at least its minimal
    hops, so the channels' total time per unit of injection is at least the traffic's minimal
    hops, and the busiest channel at least their mean: ``factor · C / Σ R[u, v] dist(u, v)``
    (``C`` channels).  Weaker than :func:`capacity_bound`, equal to it where minimal routes
    can load every channel alike (uniform traffic on a torus or HyperX)."""
    R = router_traffic(topology, rates)
    hops = float((R * np.asarray(topology.distances, dtype=float)).sum())
    C = int((np.asarray(topology.neighbor_array) >= 0).sum())
    return float("inf") if hops <= 0 else float(topology.max_channel_load_factor * C / hops)


def global_channel_bound(topology: Any, rates: np.ndarray) -> float:
    """On a dragonfly, a bound no routing passes from the global channels alone: traffic from
    group G to group H crosses at least one global channel, and what the ``c(G, H)`` direct
    links between them do not carry crosses at least two; the total over every pair of groups
    is at most the number of global channels.  The largest γ that meets it (bisection; the
    total is increasing in γ).  Group shift on the balanced dragonfly: (a h + 1) / (2 a p)."""
    R = router_traffic(topology, rates)
    a, g = topology.routers_per_group, topology.num_groups
    group = np.arange(topology.num_nodes) // a
    D = np.zeros((g, g))
    np.add.at(D, (group[:, None].repeat(topology.num_nodes, 1), group[None, :].repeat(
        topology.num_nodes, 0)), R)
    np.fill_diagonal(D, 0.0)
    nbr = np.asarray(topology.neighbor_array)
    links = np.zeros((g, g))
    u, p = np.nonzero(nbr >= 0)
    cross = group[u] != group[nbr[u, p]]
    np.add.at(links, (group[u[cross]], group[nbr[u[cross], p[cross]]]), 1.0)
    total = float(cross.sum())

    def need(x: float) -> float:
        direct = np.minimum(D * x, links)
        return float(direct.sum() + 2 * (D * x - direct).sum())

    if need(1.0) <= 0:
        return float("inf")
    lo, hi = 0.0, 1.0
    while need(hi) <= total:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if need(mid) <= total else (lo, mid)
    return float(topology.max_channel_load_factor * lo)
