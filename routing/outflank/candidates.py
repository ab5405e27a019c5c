"""OFR's candidate sets: wraparound and outflank IDNs (eqs. 1-3, 9-14; the reference rules), their
admissibility and dilation, and POR's orthant ports; pure functions of a torus (the package
docstring says which rule is which).
"""

from __future__ import annotations

from itertools import combinations, permutations, product
from typing import Sequence

OUTFLANK = "outflank"


WRAPAROUND = "wraparound"


VARIANTS = ("paper", "reference")


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
