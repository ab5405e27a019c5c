"""The OFR and POR planners: per-offset caches of candidates and their profit terms, the
injection decisions (:meth:`OutflankPlanner.choose_idn`, :meth:`OrthantPlanner.choose_orthant`)
and one-off functions over them.
"""

from __future__ import annotations

from itertools import product
from typing import NamedTuple, Sequence

import numpy as np

from icsim.model.notes import noted
from icsim.routing.outflank.candidates import (OUTFLANK, VARIANTS, WRAPAROUND, _check_delta,
                                               _check_name, _check_torus, _idn_nodes, _min_used,
                                               _raw_candidates, reference_half)
from icsim.routing.outflank.export import (IdnPlans, OrthantPlans, _export_idn, _export_once,
                                           _export_orthants)
from icsim.routing.outflank.profits import (_best_reference, _paper_choice, _paper_groups,
                                            _paper_profit, _reference_order, _reference_pi0,
                                            _reference_profit)


class _Planner:
    """Shared machinery: cache keys, relative arithmetic, interning.

    The key of ``(s, t)`` is ``sum_i table_i[s_i][t_i]``, a mixed-radix number of a
    per-dimension code (the offset; or the offset and the reference "half").  Plans store
    candidates as displacements from ``s``; tuples that recur across plans (port sets,
    profit terms) are interned so that a plan costs well under a kilobyte.
    """

    def __init__(self, topo, code):
        _check_torus(topo)
        self.topo = topo
        self._code = code
        self._num_ports = topo.num_ports
        self._coords = tuple(topo.coords(v) for v in range(topo.num_nodes))
        # signed minimal offset of a forward difference x, per dimension (ties +k/2)
        self._signed = [[topo.offset_table[i][0][x] for x in range(k)]
                        for i, k in enumerate(topo.dims)]
        self._tie = [k // 2 if topo.is_tie(i, k // 2) else None for i, k in enumerate(topo.dims)]
        self._place = [[[((a + e) % k) * st for e in range(k)] for a in range(k)]
                       for k, st in zip(topo.dims, topo.strides)]
        mult, tables = 1, []
        for i, k in enumerate(topo.dims):
            tables.append([[code(k, a, b) * mult for b in range(k)] for a in range(k)])
            mult *= k * k
        self._key = _key_function(tables, self._coords)
        self._interned: dict = {}
        self._plans: dict = {}
        self._exported = None           # export(), made once


    def _checked_plan(self, s: int, t: int, used: Sequence, eta: float):
        if len(used) != self._num_ports:
            raise ValueError(f"used has {len(used)} entries for {self._num_ports} ports")
        if eta < 0:
            raise ValueError(f"eta must be >= 0, got {eta}")
        return self._plan(s, t)
    def _intern(self, value):
        return self._interned.setdefault(value, value)

    def _ports(self, offsets, both_on_tie: bool) -> tuple[int, ...]:
        """Minimal ports of a signed offset vector, as ``Torus.minimal_ports``."""
        out = []
        for i, o in enumerate(offsets):
            if o > 0:
                out.append(2 * i)
                if both_on_tie and o == self._tie[i]:
                    out.append(2 * i + 1)
            elif o < 0:
                out.append(2 * i + 1)
        return self._intern(tuple(out))

    def _absolute(self, s: int, rel: tuple[int, ...]) -> int:
        node = 0
        for place, a, e in zip(self._place, self._coords[s], rel):
            node += place[a][e]
        return node

    def _plan(self, s: int, t: int):
        key = self._key(s, t)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._build(s, t)
        return plan

    def _export_keys(self):
        """The dense key space of an export: ``(code, radix, pairs)``.

        ``code[i, a, b]`` numbers the distinct values of this planner's per-dimension code
        (the offset; or the offset and the reference "half") in increasing order (-1 past
        ``k_i``); ``radix[0] = 1`` and ``radix[i + 1] = radix[i] * codes_i``, so that
        ``key = sum_i code[i, s_i, t_i] * radix[i]`` numbers the plans ``0 .. P-1``.
        ``pairs`` lists, for every key in increasing order, one ``(s, t)`` that has it.
        """
        topo = self.topo
        n, kmax = topo.n, max(topo.dims)
        code = np.full((n, kmax, kmax), -1, np.int32)
        radix = np.ones(n, np.int64)
        firsts, size = [], 1
        for i, k in enumerate(topo.dims):
            raw = np.array([[self._code(k, a, b) for b in range(k)] for a in range(k)])
            values, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
            code[i, :k, :k] = inverse.reshape(k, k)
            firsts.append([divmod(int(f), k) for f in first])   # one (a, b) per code
            radix[i] = size
            size *= len(values)
        pairs = []
        # dimension 0 varies fastest, as radix[0] = 1
        for digits in product(*(range(len(f)) for f in reversed(firsts))):
            s = t = 0
            for f, digit, stride in zip(firsts, reversed(digits), topo.strides):
                s += f[digit][0] * stride
                t += f[digit][1] * stride
            pairs.append((s, t))
        return code, radix, pairs

    def _export_plans(self):
        """The key arrays and every plan of the key space, in key order (a generator: plans
        not cached yet are built for the export and not kept)."""
        code, radix, pairs = self._export_keys()
        key, plans = self._key, self._plans
        built = (plans.get(key(s, t)) or self._build(s, t) for s, t in pairs)
        what = f"building {self.label}'s injection plans, one per offset key (once per process)"
        return code, radix, noted(built, len(pairs), what)


def _key_function(tables, coords):
    """``(s, t) -> sum_i tables[i][s_i][t_i]``, unrolled up to three dimensions (the generic
    loop costs three times as much, and this runs once per injected packet)."""
    if len(tables) == 1:
        (t0,) = tables
        return lambda s, t: t0[coords[s][0]][coords[t][0]]
    if len(tables) == 2:
        t0, t1 = tables

        def key2(s, t):
            a, b = coords[s], coords[t]
            return t0[a[0]][b[0]] + t1[a[1]][b[1]]
        return key2
    if len(tables) == 3:
        t0, t1, t2 = tables

        def key3(s, t):
            a, b = coords[s], coords[t]
            return t0[a[0]][b[0]] + t1[a[1]][b[1]] + t2[a[2]][b[2]]
        return key3

    def key(s, t):
        total = 0
        for tab, a, b in zip(tables, coords[s], coords[t]):
            total += tab[a][b]
        return total
    return key


def _offset_code(k, a, b):
    return (b - a) % k


def _half_code(k, a, b):
    # the reference "half" depends on absolute coordinates: key on (offset, half - s)
    return (b - a) % k + k * ((reference_half(k, a, b) - a) % k)


class _IdnPlan:
    """What an OFR decision needs for one cache key.

    ``cands[j] = (rel, kind)``, OIDNs first (``n_oidn`` of them), then WIDNs; ``joint``
    indexes the candidates the paper profit ranks (a WIDN equal to an OIDN appears once).
    """

    __slots__ = ("d", "cands", "n_oidn", "joint", "min_terms", "min_code_terms",
                 "paper_terms", "paper_groups", "ref_oidn_terms", "ref_widn_terms",
                 "ref_oidn_order", "ref_widn_order")


class OutflankPlanner(_Planner):
    """OFR's injection decision with per-offset caches; one per run and topology.

    Parameters
    ----------
    topo : Torus
        Every dimension a ring of at least 3 nodes.
    delta : int
        Delta, how far outside the minimal orthant an outflank IDN lies (2 in the paper).
    variant : {"paper", "reference"}
        Which candidate sets (``routing.ofr.candidates``).
    both_on_tie : bool
        Whether a k/2 offset offers both directions (paper rules only).

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> planner = OutflankPlanner(Torus((8, 8, 8)))
    >>> t = planner.topo.node((3, 0, 0))
    >>> planner.choose_idn(0, t, [0] * 6, capacity=8)       # idle router: stay minimal
    (None, None)
    >>> q, kind = planner.choose_idn(0, t, [8, 0, 0, 0, 0, 0], capacity=8)   # x+ full
    >>> planner.topo.coords(q), kind
    ((5, 0, 0), 'wraparound')
    """

    label = "OFR"

    def __init__(self, topo, delta: int = 2, variant: str = "paper", both_on_tie: bool = True):
        _check_name("variant", variant)
        self.delta = _check_delta(delta)
        self.variant = variant
        self.both_on_tie = bool(both_on_tie)
        super().__init__(topo, _offset_code if variant == "paper" else _half_code)
        self._legs: dict[tuple[int, ...], tuple] = {}

    def _leg(self, e: tuple[int, ...]) -> tuple:
        """``(ports, code_ports, length, dims)`` of a minimal route by the displacement ``e``
        (``e_i = (b_i - a_i) mod k_i``): its first ports with ``both_on_tie`` and with + at a
        tie, its length and how many dimensions it travels.  Cached: a planner meets at most N
        displacements, and every candidate of every plan has two legs."""
        leg = self._legs.get(e)
        if leg is None:
            offsets = [sg[x] for sg, x in zip(self._signed, e)]
            leg = self._legs[e] = (self._ports(offsets, self.both_on_tie),
                                   self._ports(offsets, False), sum(abs(o) for o in offsets),
                                   sum(1 for o in offsets if o))
        return leg

    def _build(self, s: int, t: int) -> _IdnPlan:
        dims, signed, intern = self.topo.dims, self._signed, self._intern
        cs, ct = self._coords[s], self._coords[t]
        x = [(b - a) % k for a, b, k in zip(cs, ct, dims)]
        offsets = [sg[xi] for sg, xi in zip(signed, x)]
        d = sum(abs(o) for o in offsets)
        raw = _raw_candidates(self.topo, cs, ct, self.delta, self.variant) if d else ([], [])
        rule = self.both_on_tie if self.variant == "paper" else False
        minimal = set(self._ports(offsets, rule))
        cands, paper_terms, ref_terms = [], [], []
        for kind, coords in zip((OUTFLANK, WRAPAROUND), raw):
            seen = set()
            for cq in coords:
                rel = tuple([(q - a) % k for q, a, k in zip(cq, cs, dims)])
                if rel in seen:
                    continue
                seen.add(rel)
                ports, code_ports, first, _ = self._leg(rel)
                ports2, code_ports2, second, legs = self._leg(
                    tuple([(xi - e) % k for xi, e, k in zip(x, rel, dims)]))
                # admissible(): both legs use a direction that is not minimal s -> t
                if (minimal.issuperset(ports if rule else code_ports)
                        or minimal.issuperset(ports2 if rule else code_ports2)):
                    continue
                routed = first + second
                cands.append(intern((intern(rel), kind)))
                paper_terms.append(intern((ports, len(ports), d / routed)))
                ref_terms.append(intern((code_ports, len(code_ports), legs, routed / d)))
        plan = _IdnPlan()
        plan.d = d
        plan.cands = tuple(cands)
        plan.n_oidn = n_oidn = sum(1 for _, kind in cands if kind == OUTFLANK)
        oidn_rels = {rel for rel, _ in cands[:n_oidn]}
        plan.joint = intern(tuple(j for j, (rel, kind) in enumerate(cands)
                                  if j < n_oidn or rel not in oidn_rels))
        plan.paper_terms = tuple(paper_terms[j] for j in plan.joint)
        plan.paper_groups = _paper_groups(plan.paper_terms, intern, plan.joint)
        plan.ref_oidn_terms = tuple(ref_terms[:n_oidn])
        plan.ref_widn_terms = tuple(ref_terms[n_oidn:])
        plan.ref_oidn_order = _reference_order(plan.ref_oidn_terms, intern)
        plan.ref_widn_order = _reference_order(plan.ref_widn_terms, intern)
        mp, mc = self._ports(offsets, self.both_on_tie), self._ports(offsets, False)
        plan.min_terms = intern((mp, len(mp)))
        plan.min_code_terms = intern((mc, len(mc)))
        return plan

    def export(self) -> IdnPlans:
        """Every plan this planner can be asked for, as flat arrays (:class:`IdnPlans`),
        copied from the plan objects :meth:`choose_idn` uses (``_build``; plans already cached
        are reused, the others are not kept).  Made on the first call and kept: the engines
        only read it.

        >>> from icsim.model.topology import Torus
        >>> plans = OutflankPlanner(Torus((8, 8, 8))).export()
        >>> len(plans.d), plans.radix.tolist()                 # one plan per offset vector
        (512, [1, 8, 64])
        >>> key = 3                                             # offsets (3, 0, 0)
        >>> first, last = plans.cand_ptr[key], plans.cand_ptr[key + 1]
        >>> int(plans.n_oidn[key]), plans.cand_rel[first:first + 4].tolist()   # eqs. 13-14
        (4, [[5, 2, 0], [1, 6, 0], [6, 0, 2], [1, 0, 6]])
        >>> planner = OutflankPlanner(Torus((4, 4)))
        >>> planner.export() is planner.export()                # made once, then kept
        True
        """
        if self._exported is None:      # made once: a run asks for it several times
            self._exported = _export_once(
                (self.label, self.topo, self.delta, self.variant, self.both_on_tie),
                lambda: _export_idn(self))
        return self._exported

    def outflank_idns(self, s: int, t: int) -> list[int]:
        """Admissible outflank IDNs, in candidate order."""
        plan = self._plan(s, t)
        return [self._absolute(s, rel) for rel, _ in plan.cands[:plan.n_oidn]]

    def wraparound_idns(self, s: int, t: int) -> list[int]:
        """Admissible wraparound IDNs, in candidate order."""
        plan = self._plan(s, t)
        return [self._absolute(s, rel) for rel, _ in plan.cands[plan.n_oidn:]]

    def candidates(self, s: int, t: int) -> list[tuple[int, str]]:
        """``(idn, kind)`` for the IDNs the paper profit ranks: OIDNs, then the WIDNs that
        are not also OIDNs."""
        plan = self._plan(s, t)
        return [(self._absolute(s, plan.cands[j][0]), plan.cands[j][1]) for j in plan.joint]

    def scores(self, s: int, t: int, used: Sequence, *, capacity: int, eta: float = 2.0,
               profit: str = "paper") -> tuple[float, list[tuple[int, str, float]]]:
        """``(pi_0, [(idn, kind, pi_q), ...])`` as :meth:`choose_idn` sees them, for analysis
        and tests (slower).  Paper: the candidates of :meth:`candidates`; reference: all
        OIDNs, then all WIDNs."""
        _check_name("profit", profit)
        plan = self._plan(s, t)
        if plan.d == 0:
            return 0.0, []
        u_star = _min_used(used)
        if profit == "paper":
            pi0 = _paper_profit(used, *plan.min_terms, 1.0, u_star, eta)
            rows = [(plan.cands[j], _paper_profit(used, p, n, r, u_star, eta))
                    for j, (p, n, r) in zip(plan.joint, plan.paper_terms)]
        else:
            pi0 = _reference_pi0(used, *plan.min_code_terms, u_star, capacity, eta)
            rows = [(c, _reference_profit(term, used, u_star, capacity, eta))
                    for c, term in zip(plan.cands, plan.ref_oidn_terms + plan.ref_widn_terms)]
        return pi0, [(self._absolute(s, rel), kind, pi) for (rel, kind), pi in rows]

    def choose_idn(self, s: int, t: int, used: Sequence, *, capacity: int, eta: float = 2.0,
                   profit: str = "paper", min_deroute_distance: int = 1,
                   rng=None) -> tuple[int | None, str | None]:
        """OFR at injection: ``(idn, "outflank" | "wraparound")``, or ``(None, None)`` to
        route minimally.  No derouting when ``d(s, t) < min_deroute_distance`` (or s = t).
        See the module docstring for the two profits."""
        plan = self._checked_plan(s, t, used, eta)
        if plan.d < min_deroute_distance or plan.d == 0:
            return None, None
        if profit == "paper":
            j = _paper_choice(plan, used, eta, rng)
            if j is None:
                return None, None
        elif profit == "reference":
            j = self._choose_reference(plan, used, capacity, eta)
            if j is None:
                return None, None
        else:
            raise ValueError(f"unknown profit {profit!r}; valid: {', '.join(VARIANTS)}")
        rel, kind = plan.cands[j]
        return self._absolute(s, rel), kind

    @staticmethod
    def _choose_reference(plan: _IdnPlan, used, capacity, eta):
        try:
            u_star = min(used)
        except TypeError:
            u_star = min(u for u in used if u is not None)
        pi0 = _reference_pi0(used, *plan.min_code_terms, u_star, capacity, eta)
        if u_star == 0 and pi0 > 0:
            return None    # §5.2: every first term is 1 and D >= 1: nothing beats 1 + eta
        # best OIDN above pi_0; a WIDN must beat it strictly (the OIDN wins an exact tie)
        p_o, j_o = _best_reference(plan.ref_oidn_order, used, u_star, capacity, eta, pi0)
        _, j_w = _best_reference(plan.ref_widn_order, used, u_star, capacity, eta, p_o)
        if j_w is not None:
            return plan.n_oidn + j_w
        return j_o


class Orthant(NamedTuple):
    """One candidate orthant for an ``s -> t`` offset vector."""

    signs: tuple[int, ...]          # paper: 0 in zero-offset dimensions
    code_signs: tuple[int, ...]     # reference: + (bit 0) in zero-offset dimensions
    ports: tuple[int, ...]          # the orthant's ports at s, non-zero-offset dimensions
    length: int                     # path length inside the orthant
    derouted: bool                  # paper: longer than minimal
    code_derouted: bool             # reference §5.6 step 5


class _OrthantPlan:
    __slots__ = ("d", "orthants", "min_terms", "min_code_terms", "paper_groups", "ref_terms",
                 "ref_order")


class OrthantPlanner(_Planner):
    """POR's injection decision with per-offset caches; one per run and topology.

    Parameters
    ----------
    topo : Torus
        Every dimension a ring of at least 3 nodes.
    both_on_tie : bool
        Whether a k/2 offset offers both directions (the minimal queues averaged by the
        paper profit's pi_0); the reference profit always uses + at a tie.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> planner = OrthantPlanner(Torus((8, 8, 8)))
    >>> t = planner.topo.node((2, 2, 0))
    >>> planner.choose_orthant(0, t, [0] * 6, capacity=8)   # idle router: stay minimal
    (None, False)
    >>> planner.choose_orthant(0, t, [8, 0, 8, 0, 0, 0], capacity=8)   # x+ and y+ full
    ((-1, -1, 0), True)
    """

    label = "POR"

    def __init__(self, topo, both_on_tie: bool = True):
        self.both_on_tie = bool(both_on_tie)
        super().__init__(topo, _offset_code)

    def _build(self, s: int, t: int) -> _OrthantPlan:
        topo, intern = self.topo, self._intern
        cs, ct = self._coords[s], self._coords[t]
        n = topo.n
        offsets = [sg[(b - a) % k] for sg, a, b, k in zip(self._signed, cs, ct, topo.dims)]
        d = sum(abs(o) for o in offsets)
        code_min = set(self._ports(offsets, False))
        orthants = []
        for index in range(1 << n):
            bits = [(index >> i) & 1 for i in range(n)]
            if any(bits[i] and offsets[i] == 0 for i in range(n)):
                continue        # the same path as the orthant with + there, listed before
            code_signs = tuple(1 - 2 * b for b in bits)
            signs = tuple(0 if offsets[i] == 0 else code_signs[i] for i in range(n))
            length = sum(topo.ring_distance(i, cs[i], ct[i], signs[i])
                         for i in range(n) if signs[i])
            # the code flags a dimension whose bit is not a minimal direction; a zero-offset
            # dimension has none, so it is always flagged (§5.6 step 5)
            code_derouted = any(2 * i + bits[i] not in code_min for i in range(n))
            ports = intern(tuple(2 * i + bits[i] for i in range(n) if signs[i]))
            orthants.append(intern(Orthant(intern(signs), intern(code_signs), ports, length,
                                           length > d, code_derouted)))
        plan = _OrthantPlan()
        plan.d = d
        plan.orthants = tuple(orthants)
        mp, mc = self._ports(offsets, self.both_on_tie), self._ports(offsets, False)
        plan.min_terms = intern((mp, len(mp)))
        plan.min_code_terms = intern((mc, len(mc)))
        paper_terms = [(o.ports, len(o.ports), d / o.length) for o in orthants] if d else []
        plan.paper_groups = _paper_groups(paper_terms, intern)
        plan.ref_terms = tuple(intern((o.ports, len(o.ports), n, o.length / d))
                               for o in orthants) if d else ()
        # the coded "average" divides by the number of dimensions (3) always
        plan.ref_order = _reference_order(plan.ref_terms, intern, divisor=n)
        return plan

    def export(self) -> OrthantPlans:
        """Every plan this planner can be asked for, as flat arrays (:class:`OrthantPlans`),
        copied from the plan objects :meth:`choose_orthant` uses (``_build``; plans already
        cached are reused, the others are not kept).  Made on the first call and kept: the
        engines only read it.

        >>> from icsim.model.topology import Torus
        >>> plans = OrthantPlanner(Torus((8, 8, 8))).export()
        >>> key = 2 + 2 * 8                                     # offsets (2, 2, 0)
        >>> first, last = plans.orthant_ptr[key], plans.orthant_ptr[key + 1]
        >>> plans.signs[first:last].tolist()
        [[1, 1, 0], [-1, 1, 0], [1, -1, 0], [-1, -1, 0]]
        >>> plans.sel[first:last].tolist(), plans.derouted[first:last].tolist()
        ([21, 22, 25, 26], [False, True, True, True])
        """
        if self._exported is None:      # made once: a run asks for it several times
            self._exported = _export_once((self.label, self.topo, self.both_on_tie),
                                          lambda: _export_orthants(self))
        return self._exported

    def orthants(self, s: int, t: int) -> list[Orthant]:
        """The candidate orthants, one per distinct path, in index order (bit i of the index
        is the direction of dimension i, 0 = +)."""
        return list(self._plan(s, t).orthants)

    def scores(self, s: int, t: int, used: Sequence, *, capacity: int, eta: float = 1.0,
               profit: str = "paper") -> tuple[float, list[tuple[Orthant, float]]]:
        """``(pi_0, [(orthant, pi_o), ...])`` as :meth:`choose_orthant` sees them."""
        _check_name("profit", profit)
        plan = self._plan(s, t)
        if plan.d == 0:
            return 0.0, []
        u_star = _min_used(used)
        if profit == "paper":
            pi0 = _paper_profit(used, *plan.min_terms, 1.0, u_star, eta)
            pis = [_paper_profit(used, o.ports, len(o.ports), plan.d / o.length, u_star, eta)
                   for o in plan.orthants]
        else:
            pi0 = _reference_pi0(used, *plan.min_code_terms, u_star, capacity, eta)
            pis = [_reference_profit(term, used, u_star, capacity, eta, divisor=term[2])
                   for term in plan.ref_terms]
        return pi0, list(zip(plan.orthants, pis))

    def choose_orthant(self, s: int, t: int, used: Sequence, *, capacity: int,
                       eta: float = 1.0, profit: str = "paper", min_deroute_distance: int = 1,
                       rng=None) -> tuple[tuple[int, ...] | None, bool]:
        """POR at injection: ``(signs, derouted)``, or ``(None, False)`` to route minimally
        (ABR-style).  ``signs`` has 0 in zero-offset dimensions with the paper profit and +1
        there with the reference one (the code's bit 0).

        The candidates include the minimal-length orthants: at a k/2 tie one of them may win
        (it pins the packet to one of the two minimal directions) and then ``derouted`` is
        False with the paper profit, True with the reference one (§5.6 step 5)."""
        plan = self._checked_plan(s, t, used, eta)
        if plan.d < min_deroute_distance or plan.d == 0:
            return None, False
        if profit == "paper":
            j = _paper_choice(plan, used, eta, rng)
            if j is None:
                return None, False
            o = plan.orthants[j]
            return o.signs, o.derouted
        if profit == "reference":
            try:
                u_star = min(used)
            except TypeError:
                u_star = min(u for u in used if u is not None)
            pi0 = _reference_pi0(used, *plan.min_code_terms, u_star, capacity, eta)
            if u_star == 0 and pi0 > 0:
                return None, False     # §5.2: nothing beats 1 + eta while a queue is idle
            _, j = _best_reference(plan.ref_order, used, u_star, capacity, eta, pi0)
            if j is None:
                return None, False
            o = plan.orthants[j]
            return o.code_signs, o.code_derouted
        raise ValueError(f"unknown profit {profit!r}; valid: {', '.join(VARIANTS)}")


def wraparound_idns(topo, s: int, t: int, *, variant: str = "paper",
                    both_on_tie: bool = True) -> list[int]:
    """Admissible wraparound IDNs (eq. 1 / reference §5.4), in candidate order."""
    _check_torus(topo)
    _check_name("variant", variant)
    return _idn_nodes(topo, s, t, 1, variant, both_on_tie)[1]


def outflank_idns(topo, s: int, t: int, delta: int = 2, *, variant: str = "paper",
                  both_on_tie: bool = True) -> list[int]:
    """Admissible outflank IDNs (eqs. 2-3, 9-14 / reference §5.3), in candidate order."""
    _check_torus(topo)
    _check_name("variant", variant)
    return _idn_nodes(topo, s, t, _check_delta(delta), variant, both_on_tie)[0]


def choose_idn(topo, s: int, t: int, used: Sequence, *, capacity: int, eta: float = 2.0,
               delta: int = 2, profit: str = "paper", candidates: str = "paper",
               min_deroute_distance: int = 1, both_on_tie: bool = True,
               rng=None) -> tuple[int | None, str | None]:
    """OFR's decision at injection (see :meth:`OutflankPlanner.choose_idn`)."""
    planner = OutflankPlanner(topo, delta=delta, variant=candidates, both_on_tie=both_on_tie)
    return planner.choose_idn(s, t, used, capacity=capacity, eta=eta, profit=profit,
                              min_deroute_distance=min_deroute_distance, rng=rng)


def choose_orthant(topo, s: int, t: int, used: Sequence, *, capacity: int, eta: float = 1.0,
                   profit: str = "paper", min_deroute_distance: int = 1,
                   both_on_tie: bool = True, rng=None) -> tuple[tuple[int, ...] | None, bool]:
    """POR's decision at injection (see :meth:`OrthantPlanner.choose_orthant`)."""
    planner = OrthantPlanner(topo, both_on_tie=both_on_tie)
    return planner.choose_orthant(s, t, used, capacity=capacity, eta=eta, profit=profit,
                                  min_deroute_distance=min_deroute_distance, rng=rng)
