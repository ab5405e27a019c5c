"""Injection-time decisions of OutFlank Routing (OFR) and Pick-Orthant Routing (POR).

When a packet enters the network at its source ``s``, OFR may give it one intermediate
destination node (IDN) and POR fixes one sign per dimension (an orthant).  This module
answers those two questions, and nothing else: it knows neither queues nor time.  The routing
classes hand it the occupancy of the source router's adaptive output queues and apply the
answer.  Everything is a pure function of a :class:`~icsim.model.topology.Torus`, the
source, the destination and that occupancy.

Conventions
-----------
* Every dimension must be a ring of at least 3 nodes (``Torus.is_ring``); anything else is
  a ``ValueError``.
* Ports are the topology's: ``2*dim`` for +, ``2*dim + 1`` for -.  ``used[port]`` is the
  number of used slots (an integer) of the adaptive queue of ``port`` at ``s`` (``None``
  for an absent port; a torus of rings has none).
* ``d_i`` is the signed minimal offset ``s -> t`` of :meth:`Torus.offsets` (a k/2 tie is
  reported as ``+k/2``); the *minimal direction* of a dimension is the sign of ``d_i``.
  The paper calls dimensions with ``d_i != 0`` "mu-nu" and those with ``d_i == 0``
  "nu-nu".
* ``both_on_tie`` (the paper rules only): at an exact k/2 offset both directions are
  minimal.  It changes which links count as minimal in :func:`admissible` and which queues
  are averaged in the paper profit.  The reference rules always use the reference code's
  convention (one direction per dimension, + at a tie; docs/model.md §5a.6), so a
  ``reference`` candidate set or profit ignores ``both_on_tie``.

Two variants
------------
``"paper"`` follows the paper (§3, eqs. 1-17); ``"reference"`` reproduces what the paper's
OMNeT++ simulator actually coded (docs/model.md §5a.8–§5a.12).  The candidate sets
(``candidates=`` / ``variant=``) and the profit (``profit=``) are chosen independently.

Wraparound IDNs (eq. 1).  Paper: per dimension the two points
``floor((s_i + t_i + beta_i k_i) / 2) mod k_i``; all ``2^n`` combinations.  The set is exactly
eq. (1)'s, but it is enumerated with ``beta_i = 0`` meaning "the point on the minimal arc"
(for ``d_i = 0``: ``s_i`` itself), dimension 0 varying slowest.  Eq. (1)'s literal labels
swap when ``s_i + t_i`` wraps past ``k_i``; the relative labelling makes the order (which
breaks ties) translation-invariant.  Reference: per dimension ``int`` = the coded "half"
(below) and ``ext = (int + k//2) mod k``, in the coded order (int,int,int), (int,int,ext), ...
(dimension 0 slowest).  For even k this is the same set as eq. (1); for odd k it can differ
by one.

Outflank IDNs (eqs. 2-3).  Paper: ``q(lambda)`` of :func:`outflank_idn`, where for a mu-nu
dimension ``lambda_i`` is read relative to the minimal direction ``m_i`` (the paper's
examples assume positive minimal directions w.l.o.g.): ``+1`` is Delta beyond t
(``t_i + m_i Delta``, leaving the minimal orthant through t's non-minimal link), ``-1`` is
Delta behind s (``s_i - m_i Delta``, leaving through s's non-minimal link) and ``0`` is the
midpoint *along the minimal path*, ``s_i + m_i floor(|d_i|/2)``.  Eq. (2) writes the
midpoint as ``floor((s_i + t_i)/2)``, which lies on the far side of the ring when the
minimal path wraps (e.g. k = 8, s_i = 1, t_i = 6 gives 3, but the minimal path is
1, 0, 7, 6): that would turn an outflank IDN into a wraparound one, so the midpoint along
the path is used.  For a nu-nu dimension ``lambda_i`` is absolute: ``s_i + lambda_i Delta``
(eq. 3).  The lambda sets (:func:`outflank_lambdas`) are

* n = 3: eqs. (9)-(14) exactly, in the paper's order;
* n = 2: Remark 1's small-dilation covering set ``q0, q1, q4, q5`` of Example 1 for
  collinear s, t and the two outflank IDNs of Example 1 for non-collinear s, t;
* any n (the same rule, which reproduces both lists above):

  - at least two mu-nu dimensions: for every pair ``a < b`` of them (pairs in reverse
    lexicographic order), ``(a behind s, b beyond t)`` then ``(a beyond t, b behind s)``,
    the other mu-nu dimensions at their midpoints and the nu-nu ones at ``s_i``; then for
    every nu-nu dimension ``j`` (ascending), ``s_j + Delta`` and ``s_j - Delta`` with all
    mu-nu dimensions at their midpoints;
  - exactly one mu-nu dimension ``m`` and one nu-nu dimension ``j`` (n = 2): ``(m behind,
    j+)``, ``(m mid, j+)``, ``(m mid, j-)``, ``(m beyond, j-)``;
  - one mu-nu dimension ``m`` and nu-nu dimensions ``j0 < j1 < ...``: for each ``j``,
    ``(j+, m X)`` then ``(j-, m mid)``, where X is "beyond" for ``j0``, "behind" for ``j1``
    and "mid" for the others (eqs. 13-14 for n = 3);
  - n = 1: none (on a single ring the only non-minimal route is the wraparound one).

  Without wraparound (``|d_i| + Delta < k_i/2``) these use every non-minimal link of s and
  of t, and all are admissible; every candidate moves at most two coordinates off s's
  minimal path.  (Example 1 lists the two non-collinear lambdas as ``(1,-1), (-1,1)`` but
  the links as ``(x-,y+), (x+,y-)``, which is ``(-1,1), (1,-1)``; the order here follows
  the links and eq. 11.)

Reference: docs/model.md §5a.9 with its coded order and quirky "half"
(:func:`reference_half`); ``ofshort = true`` (two collinear candidates, ``(i0 - Delta, mid)``
and ``(i1 - Delta, mid)``).  The code is 3-D only; for other n the same rules are applied
per case (all ordered pairs for two or more mu-nu dimensions, then ``+-Delta`` in each
nu-nu dimension; one ``-Delta`` candidate per nu-nu dimension when collinear).

Both variants keep only :func:`admissible` candidates (order preserved, duplicates dropped).

Dilation bound
--------------
Write ``delta(q) = d(s,q) + d(q,t) - d(s,t) = sum_i delta_i`` per dimension.  For a paper
OIDN, ``delta_i = 0`` where ``lambda_i = 0`` (the midpoint lies on the minimal path) and,
by the triangle inequality on the ring, ``0 <= delta_i <= 2 Delta`` elsewhere, with
``delta_i = 2 Delta`` exactly when ``|d_i| + Delta <= k_i / 2`` (``d_i = 0`` for a nu-nu
dimension).  Otherwise the coordinate wraps round (Remark 2: the OIDN "jumps" into another
orthant) and the detour is shorter: ``delta_i = k_i - 2|d_i| < 2 Delta`` when
``Delta <= k_i/2``.  So Remark 2 never breaks the bound; for any lambda
``delta(q) <= 2 Delta * #{i: lambda_i != 0} <= 2 n Delta`` (eq. 6), and for the sets above,
which move at most two coordinates, ``delta(q) <= 4 Delta`` whatever n is.  Wraparound IDNs
are not bounded by a constant (``delta_i = k_i - 2|d_i|`` in each flipped dimension, minus
one for an odd ring with ``d_i = 0``), nor are reference OIDNs whose quirky "half" lands on
the far side of the ring.

Profits
-------
``profit="paper"``: eqs. (15)-(16), ``pi_q = u*/u_q + eta d/d~_q`` with ``u*`` the least
used present adaptive queue of s, ``u_q`` the mean used slots over the minimal ports
``s -> q`` (first term 1 when ``u_q = u* = 0``), ``pi_0 = u*/u_0 + eta``.  Derouting needs
``max pi_q > pi_0`` strictly; equal best candidates are drawn uniformly with ``rng`` or else
the first in candidate order wins (OIDNs before WIDNs).  Equality is exact float equality.
POR uses the same with an orthant's ports (non-zero-offset dimensions) and its path length.

``profit="reference"``: docs/model.md §5a.8 and §5a.12, with free slots
``F = capacity - used``: profit 0 when the candidate's average free ``f`` is 0, otherwise
(1 if ``u* = 0`` else ``u*/(C - f)``) ``+ eta / D``; an IDN's ``f`` divides the first leg's
free slots by the number of dimensions of the *second* leg, an orthant's by ``n`` (3 in
the code); the best OIDN and best WIDN (first wins ties, profit > 0) compete, the OIDN wins
an exact tie, and the winner must beat ``pi_0`` strictly.  ``rng`` is not used.

Speed
-----
:class:`OutflankPlanner` and :class:`OrthantPlanner` cache, per offset vector (and per
"half" position for the reference rules), the candidate lists with their first-leg ports
and dilations; a decision is then a dictionary look-up and a loop over a dozen candidates.
:func:`choose_idn` and :func:`choose_orthant` build a fresh planner on every call: routing
classes should keep one planner per run.  Measured (CPython 3.11, CPU time, warm caches,
random pairs, idle to fully busy routers): 1.2-3.7 us per decision on 8x8x8 and 16x16x16,
OFR and POR, both variants.  A plan takes 0.1-0.2 ms to build, once per key; all keys of a
16x16x16 torus take about 9 MB (paper) or 36 MB (reference, keyed by "half" too).

For the compiled engine, ``export()`` builds every key at once and hands the plans over as
flat numpy arrays (:class:`IdnPlans`, :class:`OrthantPlans`), over which
``icsim.simulator.engines.compiled.decide`` restates the decision (0.1-0.3 us).  On
16x16x16 that takes 0.5-0.8 s of CPU time and 2 MB of arrays for the paper OFR rules and
POR, 5-6 s and 15 MB for the reference OFR rules (29,791 keys).

Examples
--------
>>> from icsim.model.topology import Torus
>>> topo = Torus((16, 16))
>>> s, t = topo.node((1, 1)), topo.node((4, 1))              # collinear along x, d = 3
>>> [topo.coords(q) for q in outflank_idns(topo, s, t)]      # Remark 1: q0, q1, q4, q5
[(15, 3), (2, 3), (2, 15), (6, 15)]
>>> [round(dilation(topo, s, t, q) * 3) for q in outflank_idns(topo, s, t)]   # d + 4D, d + 2D
[11, 7, 7, 11]

On an 8x8 torus with the x+ queue full and every other queue idle, eq. (15) only rewards
routes that leave through idle queues (u* = 0): OFR takes the wraparound IDN on the far arc
(5 hops instead of 3) and POR the - orthant.

>>> topo = Torus((8, 8))
>>> s, t = topo.node((1, 1)), topo.node((4, 1))
>>> q, kind = choose_idn(topo, s, t, [8, 0, 0, 0], capacity=8)
>>> topo.coords(q), kind
((6, 1), 'wraparound')
>>> choose_orthant(topo, s, t, [8, 0, 0, 0], capacity=8)
((-1, 0), True)
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations, permutations, product
from typing import NamedTuple, Sequence

import numpy as np

from icsim.model.notes import noted

OUTFLANK = "outflank"
WRAPAROUND = "wraparound"
VARIANTS = ("paper", "reference")


# ---------------------------------------------------------------------------- validation
def _check_torus(topo) -> None:
    topo.require({"coordinates", "rings"}, "OFR/POR")


def _check_name(what: str, value: str) -> None:
    if value not in VARIANTS:
        raise ValueError(f"unknown {what} {value!r}; valid: {', '.join(VARIANTS)}")


def _check_delta(delta) -> int:
    if isinstance(delta, bool) or int(delta) != delta or delta < 1:
        raise ValueError(f"delta must be a positive integer, got {delta!r}")
    return int(delta)


def _min_used(used: Sequence):
    """u*: the least used present adaptive queue (absent ports are ``None``)."""
    try:
        return min(used)
    except TypeError:
        return min(u for u in used if u is not None)


# ---------------------------------------------------------------------------- candidate sets
def reference_half(k: int, a: int, b: int) -> int:
    """The reference code's "half" coordinate between ``a`` and ``b`` on a ring of size ``k``.

    ``floor((lo+hi)/2)`` if ``hi - lo <= k//2``, else ``floor(((lo+hi) mod k)/2)``.  The
    second branch is the wraparound midpoint only when ``lo + hi >= k``; otherwise it is the
    midpoint of the *non-minimal* arc (docs/model.md §5a.9, reproduced on purpose).

    >>> reference_half(8, 2, 7), reference_half(8, 1, 6)   # 2->7 wraps: 0 is on it; 3 is not
    (0, 3)
    """
    lo, hi = (a, b) if a <= b else (b, a)
    if hi - lo <= k // 2:
        return (lo + hi) // 2
    return ((lo + hi) % k) // 2


def outflank_lambdas(offsets: Sequence[int]) -> list[tuple[int, ...]]:
    """The lambda vectors of the paper variant for an ``s -> t`` offset vector, in order.

    Only which offsets are zero matters.  For mu-nu dimensions lambda is relative to the
    minimal direction (+1 beyond t, -1 behind s, 0 midpoint); for nu-nu ones it is the sign
    of the move.  See the module docstring for the rule; n = 3 gives eqs. (9)-(14).

    >>> outflank_lambdas((1, 2, 3))            # eqs. (9)-(10)
    [(0, -1, 1), (0, 1, -1), (-1, 0, 1), (1, 0, -1), (-1, 1, 0), (1, -1, 0)]
    >>> outflank_lambdas((0, 0, -3))           # eqs. (13)-(14)
    [(1, 0, 1), (-1, 0, 0), (0, 1, -1), (0, -1, 0)]
    """
    n = len(offsets)
    mu = [i for i, d in enumerate(offsets) if d != 0]
    nu = [i for i, d in enumerate(offsets) if d == 0]

    def lam(*moves: tuple[int, int]) -> tuple[int, ...]:
        v = [0] * n
        for dim, value in moves:
            v[dim] = value
        return tuple(v)

    out: list[tuple[int, ...]] = []
    if len(mu) >= 2:
        # one link behind s and one beyond t: eqs. (9)-(11), Example 1 (non-collinear)
        for a, b in reversed(list(combinations(mu, 2))):
            out.append(lam((a, -1), (b, 1)))
            out.append(lam((a, 1), (b, -1)))
        # a nu-nu link at both ends, mu-nu dimensions at their midpoints: eq. (12)
        for j in nu:
            out.append(lam((j, 1)))
            out.append(lam((j, -1)))
    elif len(mu) == 1:
        m = mu[0]
        if len(nu) == 1:
            # Remark 1's smaller-dilation covering set q0, q1, q4, q5 of eqs. (4)-(5)
            j = nu[0]
            for lm, lj in ((-1, 1), (0, 1), (0, -1), (1, -1)):
                out.append(lam((m, lm), (j, lj)))
        else:
            # eqs. (13)-(14): s's link behind and t's link beyond ride on the + moves of the
            # first two nu-nu dimensions
            for rank, j in enumerate(nu):
                rider = 1 if rank == 0 else -1 if rank == 1 else 0
                out.append(lam((j, 1), (m, rider)))
                out.append(lam((j, -1)))
    return out


def _oidn_coords(topo, cs, ct, lam, delta) -> tuple[int, ...]:
    q = []
    for i, (a, b, li) in enumerate(zip(cs, ct, lam)):
        if li not in (-1, 0, 1):
            raise ValueError(f"lambda must be in {{-1, 0, 1}}, got {tuple(lam)}")
        k = topo.dims[i]
        d = topo.offset_table[i][a][b]
        if d == 0:                                   # eq. (3)
            q.append((a + li * delta) % k)
            continue
        m = 1 if d > 0 else -1
        if li == 0:                                  # the midpoint along the minimal path
            q.append((a + m * (abs(d) // 2)) % k)
        elif li == 1:                                # t's non-minimal link
            q.append((b + m * delta) % k)
        else:                                        # s's non-minimal link
            q.append((a - m * delta) % k)
    return tuple(q)


def outflank_idn(topo, s: int, t: int, lam: Sequence[int], delta: int = 2) -> int:
    """The outflank IDN ``q(lambda)`` of eqs. (2)-(3), without the admissibility filter.

    ``lam[i]`` is relative to the minimal direction in a mu-nu dimension (``+1``:
    ``t_i + m_i Delta``; ``-1``: ``s_i - m_i Delta``; ``0``: the midpoint along the minimal
    path ``s_i + m_i floor(|d_i|/2)``) and absolute in a nu-nu one (``s_i + lam_i Delta``).
    In eq. (2)'s absolute notation this is ``lambda_i * m_i``.

    >>> from icsim.model.topology import Torus
    >>> topo = Torus((8, 8, 8))
    >>> s, t = topo.node((1, 1, 1)), topo.node((6, 3, 0))    # x: -3, y: +2, z: -1
    >>> topo.coords(outflank_idn(topo, s, t, (0, -1, 1)))
    (0, 7, 6)
    """
    return topo.node(_oidn_coords(topo, topo.coords(s), topo.coords(t), lam, delta))


def _paper_oidns(topo, cs, ct, delta):
    offsets = [topo.offset_table[i][a][b] for i, (a, b) in enumerate(zip(cs, ct))]
    return [_oidn_coords(topo, cs, ct, lam, delta) for lam in outflank_lambdas(offsets)]


def _reference_oidns(topo, cs, ct, delta):
    """docs/model.md §5a.9 (``chooseOFmid1``, ``ofshort = true``), coded order."""
    dims = topo.dims
    mu = [i for i in range(topo.n) if cs[i] != ct[i]]
    nu = [i for i in range(topo.n) if cs[i] == ct[i]]
    # the code's direction bit: + if 0 < (t - s) mod k <= k/2 (a k/2 tie goes +)
    sign = {i: 1 if topo.offset_table[i][cs[i]][ct[i]] > 0 else -1 for i in mu}

    def back(i):
        return (cs[i] - delta * sign[i]) % dims[i]

    def beyond(i):
        return (ct[i] + delta * sign[i]) % dims[i]

    def half(i):
        return reference_half(dims[i], cs[i], ct[i])

    points = []
    if len(mu) >= 2:
        for a, b in permutations(mu, 2):
            q = list(cs)
            q[a], q[b] = back(a), beyond(b)
            for c in mu:
                if c not in (a, b):
                    q[c] = half(c)
            points.append(tuple(q))
        for j in nu:
            for step in (delta, -delta):
                q = list(cs)
                q[j] = (cs[j] + step) % dims[j]
                for c in mu:
                    q[c] = half(c)
                points.append(tuple(q))
    elif len(mu) == 1:
        m = mu[0]
        for j in nu:
            q = list(cs)
            q[j] = (cs[j] - delta) % dims[j]
            q[m] = half(m)
            points.append(tuple(q))
    return points


def _paper_widns(topo, cs, ct):
    per_dim = []
    for i, (a, b) in enumerate(zip(cs, ct)):
        k = topo.dims[i]
        x = (b - a) % k
        # eq. (1)'s two points as displacements from s: x//2 and (x+k)//2.  The first is on
        # the minimal arc when the minimal direction is + (or d = 0), the second otherwise.
        near, far = x // 2, ((x + k) // 2) % k
        if topo.offset_table[i][a][b] < 0:
            near, far = far, near
        per_dim.append(((a + near) % k, (a + far) % k))
    return list(product(*per_dim))


def _reference_widns(topo, cs, ct):
    """docs/model.md §5a.10 (``chooseOFmid2``): int/ext per dimension, x slowest."""
    per_dim = []
    for k, a, b in zip(topo.dims, cs, ct):
        m = reference_half(k, a, b)
        per_dim.append((m, (m + k // 2) % k))
    return list(product(*per_dim))


def _raw_candidates(topo, cs, ct, delta, variant):
    """(OIDN, WIDN) coordinate lists before the admissibility filter."""
    if variant == "paper":
        return _paper_oidns(topo, cs, ct, delta), _paper_widns(topo, cs, ct)
    return _reference_oidns(topo, cs, ct, delta), _reference_widns(topo, cs, ct)


def admissible(topo, s: int, t: int, q: int, *, both_on_tie: bool = True) -> bool:
    """Whether ``q`` may serve as an IDN from ``s`` to ``t`` (docs/model.md §5a.11).

    The minimal route ``s -> q`` must use at least one direction that is not a minimal
    direction ``s -> t``, and so must the minimal route ``q -> t``; a move along a
    dimension where ``s_i = t_i`` is non-minimal.  "Uses" means "is among
    :meth:`Torus.minimal_ports`" (with ``both_on_tie``, a k/2 offset offers both).  This
    rejects ``q = s``, ``q = t``, points inside the minimal orthant and the minimal-orthant
    wraparound IDN.

    >>> from icsim.model.topology import Torus
    >>> topo = Torus((8, 8))
    >>> s, t = topo.node((0, 0)), topo.node((3, 0))
    >>> admissible(topo, s, t, topo.node((1, 2))), admissible(topo, s, t, topo.node((2, 0)))
    (True, False)
    """
    if q == s or q == t:
        return False
    minimal = set(topo.minimal_ports(s, t, both_on_tie=both_on_tie))
    return (any(p not in minimal for p in topo.minimal_ports(s, q, both_on_tie=both_on_tie))
            and any(p not in minimal for p in topo.minimal_ports(q, t, both_on_tie=both_on_tie)))


def dilation(topo, s: int, t: int, q: int) -> float:
    """``(d(s,q) + d(q,t)) / d(s,t)``: how much longer the route through ``q`` is.

    >>> from icsim.model.topology import Torus
    >>> topo = Torus((8, 8))
    >>> dilation(topo, 0, topo.node((2, 0)), topo.node((1, 2)))
    3.0
    """
    d = topo.distance(s, t)
    if d == 0:
        raise ValueError("dilation is undefined when s == t")
    return (topo.distance(s, q) + topo.distance(q, t)) / d


def _idn_nodes(topo, s, t, delta, variant, both_on_tie) -> tuple[list[int], list[int]]:
    """Admissible (OIDNs, WIDNs) as node ids, in candidate order, without duplicates."""
    if s == t:
        return [], []
    raw = _raw_candidates(topo, topo.coords(s), topo.coords(t), delta, variant)
    rule = both_on_tie if variant == "paper" else False
    out = []
    for coords in raw:
        nodes, seen = [], set()
        for q in map(topo.node, coords):
            if q not in seen and admissible(topo, s, t, q, both_on_tie=rule):
                nodes.append(q)
            seen.add(q)
        out.append(nodes)
    return out[0], out[1]


# ---------------------------------------------------------------------------- planners
def _paper_choice(plan, used, eta, rng):
    """Index of the best candidate under eq. (15)-(16) (ties: ``rng`` if given, else the
    first), or None when none beats the minimal route."""
    winners = _best_paper(plan.paper_groups, used, *plan.min_terms, eta)
    if not winners:
        return None
    if len(winners) > 1 and rng is not None:
        return winners[int(rng.integers(len(winners)))]
    return winners[0]


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


def _paper_groups(terms, intern, index=None):
    """Candidates grouped by first-leg ports for the paper profit, best ``d/d~`` first.

    ``terms[j] = (ports, n, ratio)``; members are reported as ``index[j]`` (default ``j``).
    Within a group the profit differs only by
    ``eta * ratio``, so only the members with the group's largest ratio can win (they tie).
    Returns ``(ports, n, ratio, members)`` sorted by ratio, descending: since eq. (15)'s first
    term is at most 1, a group with ``1 + eta * ratio`` below the best profit so far ends the
    search.
    """
    groups: dict[tuple[int, ...], list] = {}
    for j, (ports, n, ratio) in enumerate(terms):
        g = groups.get(ports)
        if g is None or ratio > g[2]:
            groups[ports] = [ports, n, ratio, [j]]
        elif ratio == g[2]:
            g[3].append(j)
    ordered = sorted(groups.values(), key=lambda g: (-g[2], g[3][0]))
    index = index or range(len(terms))
    return intern(tuple(intern((p, n, r, intern(tuple(index[j] for j in m))))
                        for p, n, r, m in ordered))


def _best_paper(groups, used, min_ports, n_min, eta):
    """Eqs. (15)-(17): the members tied for the best profit, ascending, if it beats pi_0
    strictly; otherwise an empty list."""
    try:
        u_star = min(used)
    except TypeError:
        u_star = min(u for u in used if u is not None)
    total = 0
    for p in min_ports:
        total += used[p]
    # eq. (16); the first term is 1 when u_0 = u* = 0
    best = (1.0 if total == 0 else u_star * n_min / total) + eta
    winners = []
    for ports, n, ratio, members in groups:
        if 1.0 + eta * ratio < best:
            break
        total = 0
        for p in ports:
            total += used[p]
        # eq. (15): u*/u_q with u_q = total/n (u_q = 0 implies u* = 0)
        pi = (1.0 if total == 0 else u_star * n / total) + eta * ratio
        if pi > best:
            best, winners = pi, [members]
        elif pi == best and winners:
            winners.append(members)
    if len(winners) == 1:
        return winners[0]
    return sorted(j for members in winners for j in members)


def _reference_order(terms, intern, divisor=None):
    """The search order of :func:`_best_reference` for ``terms[j] = (ports, n, legs, D)``.

    With free slots ``F <= C - u*`` on every queue, a candidate whose "average" divides by
    at least its number of ports (``n <= legs``, always true for orthants) has
    ``f <= C - u*``, so its first term is at most 1 and its profit at most ``1 + eta/D``.
    Those come last, by increasing D; the others (whose quirky average can exceed C) first.
    Entries are ``(j, ports, n, divisor, D, bounded)``.
    """
    rows = [(j, ports, n, divisor or legs, dil, n <= (divisor or legs))
            for j, (ports, n, legs, dil) in enumerate(terms)]
    rows.sort(key=lambda r: (r[5], r[4] if r[5] else 0, r[0]))
    return intern(tuple(intern(r) for r in rows))


def _best_reference(order, used, u_star, capacity, eta, top):
    """§5.2 profits, §5.6 selection: ``(profit, j)`` of the first candidate (smallest ``j``)
    with the highest profit above ``top``, or ``(top, None)``.

    Starting from ``top = pi_0`` is exact: a candidate that does not beat pi_0 can never be
    chosen (and pi_0 >= 0 covers "profit > 0").
    """
    top_j = None
    for j, ports, n, div, dil, bounded in order:
        if bounded and 1.0 + eta / dil < top:
            break                             # and so are all the later ones
        total = 0
        for p in ports:
            total += used[p]
        if total == n * capacity:
            continue                          # f = 0: profit 0
        if u_star == 0:
            pr = 1.0 + eta / dil
        else:
            # the coded "average": free slots / second-leg dimensions (orthants: n)
            f = (n * capacity - total) / div
            pr = math.inf if f == capacity else u_star / (capacity - f) + eta / dil
        if pr > top or (pr == top and top_j is not None and j < top_j):
            top, top_j = pr, j
    return top, top_j


def _reference_profit(term, used, u_star, capacity, eta, divisor=None):
    """One candidate's §5.2 profit (may be negative or infinite; for analysis)."""
    ports, n, legs, dil = term
    total = 0
    for p in ports:
        total += used[p]
    f = (n * capacity - total) / (divisor or legs)
    if f == 0:
        return 0.0
    if u_star == 0:
        return 1.0 + eta / dil
    return (math.inf if f == capacity else u_star / (capacity - f)) + eta / dil


def _reference_pi0(used, min_ports, n_min, u_star, capacity, eta):
    total = 0
    for p in min_ports:
        total += used[p]
    f = (n_min * capacity - total) / n_min
    if f == 0:
        return 0.0
    return (1.0 if u_star == 0 else u_star / (capacity - f)) + eta


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


def _paper_profit(used, ports, n, ratio, u_star, eta):
    total = 0
    for p in ports:
        total += used[p]
    return (1.0 if total == 0 else u_star * n / total) + eta * ratio


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


def orthant_ports(topo, node: int, target: int, signs: Sequence[int]) -> tuple[int, ...]:
    """Ports of ``node`` that move towards ``target`` inside the orthant ``signs``.

    One port per dimension with a remaining offset, in the orthant's direction, in port
    order.  A dimension with sign 0 must have no remaining offset.

    >>> from icsim.model.topology import Torus
    >>> topo = Torus((8, 8, 8))
    >>> orthant_ports(topo, 0, topo.node((2, 0, 3)), (-1, 0, 1))
    (1, 4)
    """
    out = []
    for i, (a, b, sg) in enumerate(zip(topo.coords(node), topo.coords(target), signs)):
        if a != b:
            if sg == 0:
                raise ValueError(f"dimension {i} still has an offset but the orthant's sign is 0")
            out.append(2 * i + (0 if sg > 0 else 1))
    return tuple(out)


def orthant_dor_port(topo, node: int, target: int, signs: Sequence[int]) -> int:
    """The escape (dimension-order) port inside the orthant: the first dimension with a
    remaining offset, in the orthant's direction; -1 at the target.

    >>> from icsim.model.topology import Torus
    >>> topo = Torus((8, 8, 8))
    >>> orthant_dor_port(topo, 0, topo.node((2, 0, 3)), (-1, 0, 1))
    1
    """
    for i, (a, b, sg) in enumerate(zip(topo.coords(node), topo.coords(target), signs)):
        if a != b:
            if sg == 0:
                raise ValueError(f"dimension {i} still has an offset but the orthant's sign is 0")
            return 2 * i + (0 if sg > 0 else 1)
    return -1


def orthant_select(signs: Sequence[int]) -> int:
    """The port bitmask POR pins a packet to: the orthant's port in every dimension, + where
    the sign is 0 or +1 (what :meth:`PickOrthant.inject` stores in the packet).

    >>> orthant_select((-1, 0, 1)), orthant_select((-1, 1, 1))
    (22, 22)
    """
    return sum(1 << (2 * d + (1 if sg < 0 else 0)) for d, sg in enumerate(signs))


# ---------------------------------------------------------------------------- export
KIND_CODES = {None: 0, OUTFLANK: 1, WRAPAROUND: 2}
"""An IDN's kind as the compiled engine codes it (0: no IDN)."""
PROFIT_CODES = {"paper": 0, "reference": 1}
"""The profit variant as the compiled engine codes it."""


class IdnPlans(NamedTuple):
    """Every OFR plan of one planner as flat arrays (:meth:`OutflankPlanner.export`).

    Made into the compiled engine's profit options (``ofr_option_plans``), which
    reads them as :meth:`OutflankPlanner.choose_idn` reads its plan objects; every array is
    copied from those objects.  ``P`` plans, ``n`` dimensions; "CSR" means the entries of
    row ``r`` are ``[ptr[r], ptr[r + 1])``.  Candidate, member and row indices ``j`` are
    local to their plan, as in Python.

    Keys: ``dims``, ``strides`` (int64, n) and ``coords`` (int32, N x n) are the torus';
    ``code`` (int32, n x kmax x kmax, -1 past ``k_i``) numbers the distinct per-dimension
    codes (the offset ``(b - a) mod k``; with the reference candidates also the "half"
    relative to ``a``), ``radix`` (int64, n) makes ``key = sum_i code[i, s_i, t_i] *
    radix[i]`` number the plans ``0 .. P-1``.

    Port sets: the interned port tuples, ``portset_ports`` (int8) CSR by ``portset_ptr``.

    Per plan (P): ``d`` (minimal distance), ``min_portset``/``min_n`` (``min_terms``, the
    minimal ports with ``both_on_tie``), ``min_code_portset``/``min_code_n``
    (``min_code_terms``, + at a tie), ``n_oidn``, ``widn_order`` (the first row of the
    WIDN order); CSR pointers (P + 1) ``cand_ptr``, ``group_ptr``, ``order_ptr``.  A plan's
    rows are its OIDN order, ``[order_ptr[p], widn_order[p])``, then its WIDN order,
    ``[widn_order[p], order_ptr[p + 1])``.

    Candidates (``cands``): ``cand_rel`` (int16/int32, C x n) the IDN's displacement from
    ``s`` (``(q_i - s_i) mod k_i``), ``cand_kind`` (int8, :data:`KIND_CODES`), OIDNs first.

    Paper groups (``paper_groups`` rows ``(ports, n, ratio, members)``, best ratio first):
    ``group_portset``, ``group_n`` (int8), ``group_ratio`` (float64), ``members`` (int16, the
    candidates of the group, ascending) CSR by ``member_ptr``.

    Reference orders (``ref_oidn_order`` then ``ref_widn_order`` rows ``(j, ports, n,
    divisor, D, bounded)``): ``row_j`` (int16; a WIDN's ``j`` counts from the first WIDN),
    ``row_portset``, ``row_n`` (int8), ``row_div`` (int8), ``row_dil`` (float64),
    ``row_bounded`` (bool).
    """

    dims: np.ndarray
    strides: np.ndarray
    coords: np.ndarray
    code: np.ndarray
    radix: np.ndarray
    portset_ptr: np.ndarray
    portset_ports: np.ndarray
    d: np.ndarray
    min_portset: np.ndarray
    min_n: np.ndarray
    min_code_portset: np.ndarray
    min_code_n: np.ndarray
    group_ptr: np.ndarray
    group_portset: np.ndarray
    group_n: np.ndarray
    group_ratio: np.ndarray
    member_ptr: np.ndarray
    members: np.ndarray
    row_j: np.ndarray
    row_portset: np.ndarray
    row_n: np.ndarray
    row_div: np.ndarray
    row_dil: np.ndarray
    row_bounded: np.ndarray
    cand_ptr: np.ndarray
    cand_rel: np.ndarray
    cand_kind: np.ndarray
    n_oidn: np.ndarray
    order_ptr: np.ndarray
    widn_order: np.ndarray

    @property
    def nbytes(self) -> int:
        """Memory of all the arrays."""
        return sum(a.nbytes for a in self)


class OrthantPlans(NamedTuple):
    """Every POR plan of one planner as flat arrays (:meth:`OrthantPlanner.export`).

    Keys, port sets, per-plan ``d`` and min terms, paper groups (members are orthant indices)
    and reference rows (``ref_order``, ``row_div = n``) as in :class:`IdnPlans`.  Per plan
    the CSR pointers ``orthant_ptr`` and ``order_ptr`` (P + 1).  Orthants (``orthants``, in
    index order): ``signs`` and ``code_signs`` (int8, O x n), ``sel`` and ``code_sel``
    (int64, :func:`orthant_select` of the signs: the mask ``PickOrthant.inject`` stores; the
    two agree, as a zero-offset dimension has sign 0 in one and +1 in the other),
    ``derouted`` and ``code_derouted`` (bool).
    """

    dims: np.ndarray
    strides: np.ndarray
    coords: np.ndarray
    code: np.ndarray
    radix: np.ndarray
    portset_ptr: np.ndarray
    portset_ports: np.ndarray
    d: np.ndarray
    min_portset: np.ndarray
    min_n: np.ndarray
    min_code_portset: np.ndarray
    min_code_n: np.ndarray
    group_ptr: np.ndarray
    group_portset: np.ndarray
    group_n: np.ndarray
    group_ratio: np.ndarray
    member_ptr: np.ndarray
    members: np.ndarray
    row_j: np.ndarray
    row_portset: np.ndarray
    row_n: np.ndarray
    row_div: np.ndarray
    row_dil: np.ndarray
    row_bounded: np.ndarray
    orthant_ptr: np.ndarray
    signs: np.ndarray
    code_signs: np.ndarray
    sel: np.ndarray
    code_sel: np.ndarray
    derouted: np.ndarray
    code_derouted: np.ndarray
    order_ptr: np.ndarray

    @property
    def nbytes(self) -> int:
        """Memory of all the arrays."""
        return sum(a.nbytes for a in self)


_PTR = np.int32
_DTYPES = {
    "portset_ptr": _PTR, "portset_ports": np.int8, "d": np.int32,
    "min_portset": np.int32, "min_n": np.int8, "min_code_portset": np.int32,
    "min_code_n": np.int8, "group_ptr": _PTR, "group_portset": np.int32, "group_n": np.int8,
    "group_ratio": np.float64, "member_ptr": _PTR, "members": np.int16, "row_j": np.int16,
    "row_portset": np.int32, "row_n": np.int8, "row_div": np.int8, "row_dil": np.float64,
    "row_bounded": np.bool_, "cand_ptr": _PTR, "cand_kind": np.int8, "n_oidn": np.int16,
    "widn_order": _PTR, "orthant_ptr": _PTR,
    "signs": np.int8, "code_signs": np.int8, "sel": np.int64, "code_sel": np.int64,
    "derouted": np.bool_, "code_derouted": np.bool_, "order_ptr": _PTR,
}


class _Flat:
    """An export's tables, filled plan by plan in key order.  Paper groups and reference rows
    are kept as the plans hold them (interned tuples) and turned into columns at the end;
    port tuples become port sets (numbered in order of first use)."""

    def __init__(self, planner, ptrs: Sequence[str]):
        self.planner = planner
        self.code, self.radix, self.plans = planner._export_plans()
        self.cols: defaultdict[str, list] = defaultdict(
            list, {p: [0] for p in ("group_ptr", *ptrs)})
        self.groups: list[tuple] = []
        self.rows: list[tuple] = []
        self._portsets: dict[tuple[int, ...], int] = {}

    def portset(self, ports: tuple[int, ...]) -> int:
        return self._portsets.setdefault(ports, len(self._portsets))

    def common(self, plan) -> None:
        """``d``, the min terms and the paper groups of one plan."""
        cols = self.cols
        cols["d"].append(plan.d)
        for name, (ports, n) in (("min", plan.min_terms), ("min_code", plan.min_code_terms)):
            cols[f"{name}_portset"].append(self.portset(ports))
            cols[f"{name}_n"].append(n)
        self.groups.extend(plan.paper_groups)
        cols["group_ptr"].append(len(self.groups))

    def arrays(self, cls, **extra):
        topo, cols = self.planner.topo, self.cols
        out = dict(dims=np.array(topo.dims, np.int64), strides=np.array(topo.strides, np.int64),
                   coords=topo.coord_array.astype(np.int32), code=self.code, radix=self.radix)
        out.update(extra)
        ports, cols["group_n"], cols["group_ratio"], members = _columns(self.groups, 4)
        cols["group_portset"] = [self.portset(p) for p in ports]
        cols["members"] = [j for m in members for j in m]
        cols["member_ptr"] = _offsets(members)
        (cols["row_j"], ports, cols["row_n"], cols["row_div"], cols["row_dil"],
         cols["row_bounded"]) = _columns(self.rows, 6)
        cols["row_portset"] = [self.portset(p) for p in ports]
        portsets = list(self._portsets)          # in id order (dicts keep insertion order)
        cols["portset_ports"] = [p for ps in portsets for p in ps]
        cols["portset_ptr"] = _offsets(portsets)
        for name in cls._fields:
            if name not in out:
                out[name] = np.array(cols[name], _DTYPES[name])
        return cls(**out)


def _columns(rows: list[tuple], width: int) -> list:
    return list(zip(*rows)) if rows else [()] * width


def _offsets(rows) -> np.ndarray:
    """CSR pointers of a list of sequences."""
    out = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=out[1:])
    return out


def _rel_dtype(topo):
    return np.int16 if max(topo.dims) <= np.iinfo(np.int16).max else np.int32


#: the last exports made in this process, by what defines them (:func:`_export_once`)
_EXPORTS: dict[tuple, NamedTuple] = {}
_EXPORTS_KEPT = 4


def _export_once(key: tuple, make) -> NamedTuple:
    """A planner's export, made once per process for every planner of the same topology and
    parameters (``key``): each run of a sweep builds its own routing, and flattening the
    16x16x16 reference-variant OFR plans (29,791 of them, 15 MB) takes about 8 s.  The last
    :data:`_EXPORTS_KEPT` are kept; the engines only read them."""
    plans = _EXPORTS.pop(key, None)
    if plans is None:
        plans = make()
        while len(_EXPORTS) >= _EXPORTS_KEPT:
            del _EXPORTS[next(iter(_EXPORTS))]        # the least recently used
    _EXPORTS[key] = plans
    return plans


def _export_idn(planner: "OutflankPlanner") -> IdnPlans:
    flat = _Flat(planner, ("cand_ptr", "order_ptr"))
    cols, rows, rel = flat.cols, flat.rows, []
    for plan in flat.plans:
        flat.common(plan)
        for r, kind in plan.cands:
            rel.append(r)
            cols["cand_kind"].append(KIND_CODES[kind])
        cols["cand_ptr"].append(len(rel))
        cols["n_oidn"].append(plan.n_oidn)
        rows.extend(plan.ref_oidn_order)
        cols["widn_order"].append(len(rows))
        rows.extend(plan.ref_widn_order)
        cols["order_ptr"].append(len(rows))
    n = planner.topo.n
    return flat.arrays(IdnPlans, cand_rel=np.array(rel, _rel_dtype(planner.topo)).reshape(-1, n))


def _export_orthants(planner: "OrthantPlanner") -> OrthantPlans:
    flat = _Flat(planner, ("orthant_ptr", "order_ptr"))
    cols, rows, signs, code_signs = flat.cols, flat.rows, [], []
    for plan in flat.plans:
        flat.common(plan)
        for o in plan.orthants:
            signs.append(o.signs)
            code_signs.append(o.code_signs)
            cols["sel"].append(orthant_select(o.signs))
            cols["code_sel"].append(orthant_select(o.code_signs))
            cols["derouted"].append(o.derouted)
            cols["code_derouted"].append(o.code_derouted)
        cols["orthant_ptr"].append(len(signs))
        rows.extend(plan.ref_order)
        cols["order_ptr"].append(len(rows))
    n = planner.topo.n
    return flat.arrays(OrthantPlans, signs=np.array(signs, np.int8).reshape(-1, n),
                       code_signs=np.array(code_signs, np.int8).reshape(-1, n))


# ---------------------------------------------------------------------------- functions
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
