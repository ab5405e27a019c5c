"""Exact channel loads of oblivious routing: expected loads, ideal throughput, worst case.

A routing is *oblivious* when the path a packet takes depends only on its source, its
destination and random draws made without looking at the network (Towles and Dally, "Worst-case
traffic for oblivious routing functions", IEEE Computer Architecture Letters 1, 2002).  Its
channel loads are then linear in the traffic: for a traffic matrix Λ (``Λ[s, d]``: the share of
node s's packets sent to d, each row summing to 1) the expected load of channel c per unit of
per-node injection is ``γ_c = Σ_sd Λ[s, d] · P_c(s, d)``, where ``P_c(s, d)`` is the
probability that a packet from s to d crosses c.  The busiest channel saturates first, so the
*ideal throughput* in the units of γ (docs/model.md §6: γ = 1 saturates the busiest channel of
a perfectly balanced minimal routing under uniform traffic, ``Topology.max_channel_load_factor``)
is ``max_channel_load_factor / max_c γ_c``: an upper bound on what a simulation can sustain,
reached only with ideal flow control.

The *worst-case permutation* of a routing (Towles and Dally): for each channel c, the
permutation π that maximises ``Σ_s P_c(s, π(s))`` is a maximum-weight bipartite matching
(``scipy.optimize.linear_sum_assignment``); the channel whose matching is heaviest gives the
permutation with the lowest throughput of all permutations.

What a routing is, is read from its :class:`~icsim.routing.program.Program` (the same one both
engines run): every phase must give each packet one port (an adaptive group of more than one
port, or an adaptive port that is not the escape port, chooses by the queues: not oblivious);
the decision at injection may be none, :class:`~icsim.routing.program.Uniform` (a mixture of
its options) or :class:`~icsim.routing.program.RandomTarget` (an intermediate node drawn
uniformly: two oblivious segments); :class:`~icsim.routing.program.Profit` looks at queue
occupancy and is refused.  On a torus whose every dimension is a ring, with tables keyed by
coordinate offsets (DOR, Valiant over DOR, ...), the routing is the same from every node, and
the paths of node 0 alone are walked (``N · hops`` entries); otherwise (tables of pairs, source
routes, meshes, graphs) every pair is walked (``N² · hops`` entries, refused beyond
:data:`MAX_ENTRIES`).  On a topology with several terminals per router (a dragonfly, fat tree or
HyperX) the traffic matrix is over terminals and is folded onto the routers with terminals; a phase
that reads the destination terminal (``terminal_escape``: D-mod-k at a leaf) is walked once per
terminal index; a :class:`~icsim.routing.program.TableTarget` decision (Valiant's target drawn
from the source router's row) is two segments weighted by the row's shares.

>>> from icsim.model.topology import Torus
>>> from icsim.model.config import Config
>>> from icsim.routing.registry import ROUTING
>>> from icsim.traffic.patterns import make_pattern
>>> torus = Torus((8, 8))
>>> dor = Oblivious(torus, ROUTING.get("dor")(torus, Config(topology={"dims": [8, 8]})))
>>> tornado = make_pattern("tornado", torus, seed=0).rates()
>>> round(dor.throughput(dor.loads(tornado)), 4)      # 3 hops on every x+ channel: 1/3
0.3333
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icsim.routing.program import (OFFSET, ROUTE, Option, Profit, Program, QueueQuadrant,
                                   RandomInBox,
                                   RandomTarget, TableTarget, Uniform)

#: the most (pair, channel) entries walked for a routing that is not the same from every node
MAX_ENTRIES = 60_000_000
#: the most nodes of an analysis (it holds N x N traffic and weight matrices)
MAX_NODES = 4096


class NotOblivious(ValueError):
    """The routing chooses by the network's state (or has no program): no exact loads."""


@dataclass(frozen=True)
class WorstCase:
    """The worst-case permutation of a routing: ``mapping[s]`` is s's destination; ``load`` the
    expected load it puts on ``channel`` (node, port), the heaviest of any permutation."""

    mapping: np.ndarray
    load: float
    channel: tuple[int, int]
    throughput: float


class Oblivious:
    """The exact channel loads of one routing on one topology (module docstring).

    Parameters
    ----------
    topology : Topology
    routing : Routing
        A built routing algorithm (``ROUTING.get(name)(topology, config)``).
    """

    def __init__(self, topology: Any, routing: Any) -> None:
        self.topology = topology
        self.name = getattr(routing, "name", type(routing).__name__)
        program = routing.program()
        if program is None:
            raise NotOblivious(f"{self.name} routes in Python at every hop (no program): "
                               f"its paths cannot be read ahead")
        self.program: Program = program
        self.N = int(topology.num_nodes)
        self.P = int(topology.num_ports)
        if self.N > MAX_NODES:
            raise ValueError(f"{topology.describe()} has {self.N:,} nodes; the analysis holds "
                             f"N x N matrices and takes at most {MAX_NODES:,}")
        self.neighbors = np.asarray(topology.neighbor_array, dtype=np.int64)
        decision = program.decision
        if isinstance(decision, (Profit, QueueQuadrant)):
            raise NotOblivious(f"{self.name} chooses its route at injection by the occupancy "
                               f"of the source's queues: not oblivious")
        if decision is None:
            self.segments = [((Option(),), None)]
        elif isinstance(decision, Uniform):
            self.segments = [(tuple(decision.choices), None)]
        elif isinstance(decision, RandomTarget):
            # the legs of each option, equally likely; loads add up, so what the second leg
            # of an option is matters only through its share
            firsts = decision.options()
            afters = tuple(Option(phase=self._after(program, o)) for o in firsts)
            self.segments = [(firsts, "to"), (afters, "from")]
        elif isinstance(decision, TableTarget):
            # a target drawn from the source router's row of the table, then the next phase
            first = decision.option
            self.segments = [((first,), "table_to"),
                             ((Option(phase=self._after(program, first)),), "table_from")]
            targets = np.asarray(decision.targets, dtype=np.int64)
            self._target_share = np.zeros((self.N, self.N))     # M[s, t]: P(target t | s)
            np.add.at(self._target_share, (np.repeat(np.arange(self.N), targets.shape[1]),
                                           targets.ravel()), 1.0 / targets.shape[1])
        elif isinstance(decision, RandomInBox):
            first = decision.option
            self.segments = [((first, Option(phase=self._after(program, first))), "box")]
        else:
            raise NotOblivious(f"{self.name}: no analysis for the decision "
                               f"{type(decision).__name__}")
        phases = {o.phase for opts, _ in self.segments for o in opts}
        caps = topology.capabilities
        # several terminals per router (docs/model.md §4): traffic counts terminals, routing
        # sees routers; a phase that reads the destination terminal (D-mod-k's leaf up port,
        # ``terminal_escape``) is walked once per terminal index j of the destination router
        self.c = int(topology.terminals_per_router)
        self.T = int(topology.num_terminals)
        self.by_terminal = any(program.phases[p].terminal_escape is not None for p in phases)
        self.classes: list[int | None] = list(range(self.c)) if self.by_terminal else [None]
        self.symmetric = ("rings" in caps and "offsets" in caps and not self.by_terminal
                          and all(program.phases[p].key == OFFSET for p in phases))
        if self.symmetric:
            self._coords = np.asarray(topology.coord_array, dtype=np.int64)
            self._dims = np.asarray(topology.dims, dtype=np.int64)
            self._strides = np.asarray(topology.strides, dtype=np.int64)
        if self.segments[0][1] == "box" and not self.symmetric:
            raise NotOblivious(f"{self.name}: a box decision is analysed on a torus of rings "
                               f"with offset tables only")
        # per segment and destination-terminal class: its paths as (source, target, channel
        # node, port, weight) arrays
        self._paths = [[self._walk_box(*opts)] if role == "box" else
                       [self._walk_options(opts, j) for j in self.classes]
                       for opts, role in self.segments]
        if self.symmetric:                       # by destination offset, for loads()
            self._paths = [[tuple(col[np.argsort(path[1], kind="stable")] for col in path)]
                           for (path,) in self._paths]
        self.segments = [(opts, None if role == "box" else role)
                         for opts, role in self.segments]

    @staticmethod
    def _after(program: Program, option: Option) -> int:
        """The phase a packet of ``option`` enters at its target."""
        after = program.phases[option.phase].next
        return option.phase if after is None else after

    # ------------------------------------------------------------------ walking
    def _shift(self, a: np.ndarray, b: int | np.ndarray, sign: int = 1) -> np.ndarray:
        """Node ids of coordinates ``a + sign * b`` (modulo every ring)."""
        c = self._coords[a] + sign * self._coords[b]
        return (c % self._dims) @ self._strides

    def _walk_options(self, options: tuple[Option, ...], terminal: int | None = None):
        """Every option's paths, weighted by the option's share (``terminal``: the destination
        terminal's index on its router, for a phase that reads it)."""
        parts = [self._walk(o, 1.0 / len(options), terminal=terminal) for o in options]
        return tuple(np.concatenate(cols) for cols in zip(*parts))

    def _walk_box(self, first: Option, then: Option):
        """Node 0's paths through each intermediate i of each destination r's box (the
        decision's own rows, :meth:`~icsim.routing.program.BoxTable.rows`, with their
        probabilities): ``first``'s phase from 0 to i, then ``then``'s from i to r (node 0's
        path to r - i, translated by i), under the row's port filter."""
        N = self.N
        box = self.program.decision.table(tuple(int(k) for k in self._dims))
        walked: dict[int, list] = {}

        def by_target(sel: int) -> list:
            if sel not in walked:
                walked[sel] = []
                for option in (first, then):
                    s, d, u, p, w = self._walk(Option(phase=option.phase, sel=sel), 1.0,
                                               lenient=True)
                    order = np.argsort(d, kind="stable")
                    starts = np.searchsorted(d[order], np.arange(N + 1))
                    walked[sel].append((u[order], p[order], starts))
            return walked[sel]

        rs, mids, sels, probs = [], [], [], []
        for r in range(N):                      # node 0's offset class of r is r's coordinates
            steps, sel, prob = box.rows(self._coords[r].tolist())
            rs.append(np.full(len(sel), r))
            mids.append((steps % self._dims) @ self._strides)
            sels.append(sel)
            probs.append(prob)
        rs, mids, sels, probs = (np.concatenate(x) for x in (rs, mids, sels, probs))
        cols = ([], [], [], [])
        for sel in np.unique(sels):
            on = sels == sel
            r, i, w = rs[on], mids[on], probs[on]
            (u0, p0, a0), (u1, p1, a1) = by_target(int(sel))
            rest = self._shift(r, i, -1)                          # r - i
            for (u, p, a), at, shift in (((u0, p0, a0), i, False), ((u1, p1, a1), rest, True)):
                take, row = _ranges(a[at], a[at + 1])
                cols[0].append(self._shift(u[take], i[row]) if shift else u[take])
                cols[1].append(p[take])
                cols[2].append(r[row])
                cols[3].append(w[row])
        u, p, d, w = (np.concatenate(c) for c in cols)
        # one entry per (destination, channel): the rows' shares summed
        key, inv = np.unique((d * N + u) * self.P + p, return_inverse=True)
        w = np.bincount(inv, weights=w)
        d, u, p = key // (N * self.P), key // self.P % N, key % self.P
        return np.zeros(len(key), dtype=np.int64), d, u, p, w

    def _walk(self, option: Option, weight: float, lenient: bool = False,
              terminal: int | None = None):
        """The channels of every path of ``option``'s phase: arrays (source, target, channel
        origin, port, weight); from node 0 only when the routing is the same everywhere."""
        N, phase = self.N, self.program.phases[option.phase]
        if self.symmetric:
            src = np.zeros(N, dtype=np.int64)
            dst = np.arange(N, dtype=np.int64)
        else:
            if N * N * max(1, self._diameter_guess()) > MAX_ENTRIES:
                raise ValueError(f"{self.topology.describe()}: {self.name}'s paths differ from "
                                 f"node to node, and walking all {N * N:,} pairs would hold "
                                 f"more than {MAX_ENTRIES:,} entries")
            ends = self._ends()
            src = np.repeat(ends, len(ends))
            dst = np.tile(ends, len(ends))
        if phase.key == ROUTE:
            return self._walk_routes(phase, src, dst, weight)
        return self._walk_tables(option, phase, src, dst, weight, lenient, terminal)

    def _ends(self) -> np.ndarray:
        """The routers a path may start or end at: those with terminals, and the targets a
        decision may draw (a fat tree's upper switches are neither: no packet heads there)."""
        ends = np.unique(np.asarray(self.topology.terminal_routers, dtype=np.int64))
        share = getattr(self, "_target_share", None)
        if share is not None:
            ends = np.union1d(ends, np.flatnonzero(share.any(axis=0)))
        return ends

    def _diameter_guess(self) -> int:
        """Node 0's eccentricity: about the hops of a path (of a minimal one, at least)."""
        far = np.asarray(self.topology.hop_distances(0))
        return int(far[far >= 0].max(initial=1))

    def _walk_tables(self, option: Option, phase, src, dst, weight, lenient=False,
                     terminal=None):
        """Every pair's path in ``phase``; ``lenient``: a pair that finds no port (its
        filter forbids it: a target the option never gives) is left out, not an error."""
        N, P = self.N, self.P
        ports = np.asarray(phase.ports, dtype=np.int64)
        escape = None if phase.escape is None else np.asarray(phase.escape, dtype=np.int64)
        by_terminal = (None if phase.terminal_escape is None or terminal is None else
                       np.asarray(phase.terminal_escape, dtype=np.int64))
        if phase.key == OFFSET:
            codes = np.asarray(self.topology.relative_codes, dtype=np.int64)
            base = int(self.topology.relative_base)
        out = ([], [], [], [])
        pair = np.arange(len(src))
        cur = src.copy()
        dead = np.zeros(len(src), dtype=bool)
        for _ in range(N + 1):
            live = cur != dst[pair]
            pair, cur = pair[live], cur[live]
            if not len(pair):
                return self._columns(out, src, dst, weight, dead)
            t = dst[pair]
            k = codes[t] - codes[cur] + base if phase.key == OFFSET else cur * N + t
            mask = ports[k]
            if phase.filtered and option.sel != -1:
                mask = mask & option.sel
            lowest = np.where(mask > 0, np.log2(np.maximum(mask & -mask, 1)).astype(np.int64), -1)
            if phase.adaptive_vc is not None:
                several = (mask & (mask - 1)) != 0
                esc = escape[k] if escape is not None else lowest
                if several.any() or (phase.escape_vc is not None and (esc != lowest).any()):
                    i = int(np.flatnonzero(several | (esc != lowest))[0])
                    raise NotOblivious(
                        f"{self.name} is adaptive: at node {int(cur[i])} a packet for "
                        f"{int(t[i])} may take more than one port, chosen by the queues")
            port = escape[k] if (escape is not None and phase.escape_vc is not None) else lowest
            if by_terminal is not None:          # -1: by the destination terminal's index
                port = np.where(port == -1, by_terminal[cur * self.c + terminal], port)
            if lenient and (port < 0).any():
                dead[pair[port < 0]] = True
                keep = port >= 0
                pair, cur, port = pair[keep], cur[keep], port[keep]
            if (port < 0).any():
                i = int(np.flatnonzero(port < 0)[0])
                raise ValueError(f"{self.name}: no port at node {int(cur[i])} for {int(t[i])}")
            out[0].append(pair)
            out[1].append(cur)
            out[2].append(port)
            cur = self.neighbors[cur, port]
            if (cur < 0).any():
                raise ValueError(f"{self.name}: a path leaves by an absent port")
        raise ValueError(f"{self.name}: a path is longer than {N} hops (a routing loop)")

    def _walk_routes(self, phase, src, dst, weight):
        route, hops = phase.routes.arrays(self.N)
        out = ([], [], [], [])
        pair = np.flatnonzero(src != dst)
        first, count = route[src[pair] * self.N + dst[pair], 0], route[src[pair] * self.N
                                                                       + dst[pair], 1]
        cur = src[pair].copy()
        for i in range(int(count.max(initial=0))):
            live = count > i
            pair, first, count, cur = pair[live], first[live], count[live], cur[live]
            port = hops[first + i, 0]
            out[0].append(pair)
            out[1].append(cur)
            out[2].append(port)
            cur = self.neighbors[cur, port]
        return self._columns(out, src, dst, weight)

    @staticmethod
    def _columns(out, src, dst, weight, dead=None):
        if not out[0]:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, empty, np.zeros(0)
        pair = np.concatenate(out[0])
        u, p = np.concatenate(out[1]), np.concatenate(out[2])
        if dead is not None and dead.any():
            keep = ~dead[pair]
            pair, u, p = pair[keep], u[keep], p[keep]
        return src[pair], dst[pair], u, p, np.full(len(pair), weight)

    # ------------------------------------------------------------------ loads
    def _segment_loads(self, paths, lam: np.ndarray) -> np.ndarray:
        """Expected load per channel (node * P + port) of one segment under ``lam``."""
        s, d, u, p, w = paths
        N, P = self.N, self.P
        loads = np.zeros(N * P)
        if not self.symmetric:
            np.add.at(loads, u * P + p, w * lam[s, d])
            return loads
        # paths from node 0 (sorted by r): a packet s -> s + r crosses channel (s + u, p)
        every = np.arange(N, dtype=np.int64)
        starts = np.searchsorted(d, np.arange(N + 1))
        for r in np.flatnonzero(np.diff(starts)):
            lam_r = lam[every, self._shift(every, r)]
            src = np.flatnonzero(lam_r)              # a permutation: one source per r
            if not len(src):
                continue
            a, b = starts[r], starts[r + 1]
            nodes = self._shift(src[None, :], u[a:b, None])         # s + x, per entry
            loads += np.bincount((nodes * P + p[a:b, None]).ravel(),
                                 weights=(w[a:b, None] * lam_r[src][None, :]).ravel(),
                                 minlength=N * P)
        return loads

    def terminal_traffic(self, rates: np.ndarray) -> list[np.ndarray]:
        """Router-to-router traffic from a traffic matrix over terminals (T x T): one N x N
        matrix per destination-terminal class of :attr:`classes` (``R_j[u, v]``: the share of
        per-terminal injection from u's terminals to terminal j of v's), or one for all."""
        lam = np.asarray(rates, dtype=float)
        routers = np.asarray(self.topology.terminal_routers, dtype=np.int64)
        A = np.zeros((self.T, self.N))
        A[np.arange(self.T), routers] = 1.0
        index = np.arange(self.T) % self.c
        out = []
        for j in self.classes:
            cols = np.ones(self.T, dtype=bool) if j is None else index == j
            out.append(A.T @ lam[:, cols] @ A[cols])
        return out

    def loads(self, rates: np.ndarray) -> np.ndarray:
        """Expected load of every channel (index ``node * num_ports + port``) per unit of
        per-node injection, under traffic ``rates`` (N x N, rows summing to 1); on a topology
        with several terminals per router (or routers without terminals), ``rates`` is over
        terminals (T x T) and the loads are per unit of per-terminal injection."""
        lam = np.asarray(rates, dtype=float)
        if self.c != 1 or self.T != self.N:
            if lam.shape != (self.T, self.T):
                raise ValueError(f"traffic of shape {lam.shape} for {self.T} terminals")
            by_class = self.terminal_traffic(lam)
        else:
            if lam.shape != (self.N, self.N):
                raise ValueError(f"traffic of shape {lam.shape} for {self.N} nodes")
            by_class = [lam]
        total = np.zeros(self.N * self.P)
        for (options, role), paths in zip(self.segments, self._paths):
            for lam_j, paths_j in zip(by_class if len(paths) > 1 else [sum(by_class)], paths):
                total += self._segment_loads(paths_j, self._segment_traffic(role, lam_j))
        return total

    def _segment_traffic(self, role: str | None, lam: np.ndarray) -> np.ndarray:
        """The traffic a segment of the route carries, from the end-to-end traffic."""
        if role == "to":             # s -> a random intermediate, drawn over all nodes
            return np.repeat(lam.sum(axis=1, keepdims=True) / self.N, self.N, axis=1)
        if role == "from":           # the intermediate -> d
            return np.repeat(lam.sum(axis=0, keepdims=True) / self.N, self.N, axis=0)
        if role == "table_to":       # s -> t drawn from s's row of the table
            return lam.sum(axis=1)[:, None] * self._target_share
        if role == "table_from":     # t -> d, over every s that drew t
            return self._target_share.T @ lam
        return lam

    def throughput(self, loads: np.ndarray) -> float:
        """The ideal throughput in units of γ: the uniform bound over the busiest channel."""
        top = float(loads.max(initial=0.0))
        return float("inf") if top == 0 else self.topology.max_channel_load_factor / top

    # ------------------------------------------------------------------ worst case
    def _weights(self, channel: tuple[int, int]) -> np.ndarray:
        """``W[s, d]``: the expected crossings of ``channel`` by one packet from s to d."""
        N, (node, port) = self.N, channel
        W = np.zeros((N, N))
        if self.by_terminal or self.c != 1 or self.T != self.N:
            raise NotOblivious(f"{self.name}: the worst case is searched over permutations of "
                               f"nodes; {self.topology.describe()} has {self.T} terminals on "
                               f"{self.N} routers (not analysed)")
        for (options, role), ((s, d, u, p, w),) in zip(self.segments, self._paths):
            on = p == port
            if self.symmetric:        # (s, s + r) crosses (node, port) where s + u = node
                s_abs = self._shift(np.full(int(on.sum()), node), u[on], -1)
                d_abs = self._shift(s_abs, d[on])
                ss, dd, ww = s_abs, d_abs, w[on]
            else:
                on &= u == node
                ss, dd, ww = s[on], d[on], w[on]
            if role is None:
                np.add.at(W, (ss, dd), ww)
            elif role == "table_to":     # s -> t, t from s's row: a term of s alone
                a = np.zeros(N)
                np.add.at(a, ss, ww * self._target_share[ss, dd])
                W += a[:, None]
            elif role == "table_from":   # t -> d, weighted by the share of s drawing t
                B = np.zeros((N, N))
                np.add.at(B, (ss, dd), ww)
                W += self._target_share @ B
            elif role == "to":           # s -> i, i uniform: a term of s alone
                a = np.zeros(N)
                np.add.at(a, ss, ww / N)
                W += a[:, None]
            else:                        # i -> d: a term of d alone
                b = np.zeros(N)
                np.add.at(b, dd, ww / N)
                W += b[None, :]
        return W

    def channels(self) -> list[tuple[int, int]]:
        """The channels the worst case is searched over: one per port class when the routing
        is the same from every node (the rest are its translates), else every channel."""
        if self.symmetric:
            return [(0, p) for p in range(self.P) if self.neighbors[0, p] >= 0]
        return [(int(u), int(p)) for u in range(self.N) for p in range(self.P)
                if self.neighbors[u, p] >= 0]

    def worst_case(self) -> WorstCase:
        """The permutation that loads some channel most (module docstring)."""
        from scipy.optimize import linear_sum_assignment

        best = None
        for channel in self.channels():
            W = self._weights(channel)
            if not W.any():
                continue
            rows, cols = linear_sum_assignment(W, maximize=True)
            load = float(W[rows, cols].sum())
            if best is None or load > best[0] + 1e-12:
                mapping = np.empty(self.N, dtype=np.int64)
                mapping[rows] = cols
                best = (load, channel, mapping)
        if best is None:
            return WorstCase(np.arange(self.N), 0.0, (0, 0), float("inf"))
        load, channel, mapping = best
        factor = self.topology.max_channel_load_factor
        return WorstCase(mapping, load, channel, factor / load)


def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The indices ``lo[j] .. hi[j] - 1`` of every j, concatenated, and the j of each.

    >>> [a.tolist() for a in _ranges(np.array([0, 5]), np.array([2, 8]))]
    [[0, 1, 5, 6, 7], [0, 0, 1, 1, 1]]
    """
    n = hi - lo
    row = np.repeat(np.arange(len(lo)), n)
    start = np.repeat(lo - np.concatenate([[0], np.cumsum(n)[:-1]]), n)
    return np.arange(int(n.sum())) + start, row
