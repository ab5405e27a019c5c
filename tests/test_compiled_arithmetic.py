"""The compiled engine's integer arithmetic: the multiplication that stands in for division
(``speed.divide``) gives Python's floor division for every time and id a run can hold, and a
time's slot is the clock edge at or after it; the packed-key sorts of a decision phase
(``credit.sort_heads``, ``credit.escape_priority``) give the order the SimPy engine's sorts
give."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from icsim.simulator.engines.compiled import layout as kn
from icsim.simulator.engines.compiled.calendar import slot_of
from icsim.simulator.engines.compiled.credit import escape_priority, sort_heads
from icsim.simulator.engines.compiled.speed import divide, inverse


def prm_dividing_by(d: int) -> np.ndarray:
    """A ``prm`` whose cycle is d (with its inverse beside it, as the engine builds it)."""
    prm = np.zeros(kn.K_NPRM, np.int64)
    prm[kn.K_CYC] = d
    prm[kn.K_CYC_INV] = inverse(d)
    return prm


@settings(deadline=None)              # the first call compiles
@given(x=st.integers(0, 2**62), d=st.integers(1, 2**24))
@example(x=(2**63 - 1) // 800, d=800)       # the last x the product serves for d
@example(x=(2**63 - 1) // 800 + 1, d=800)   # the first it divides for
@example(x=(2**63 - 1) // 3, d=3)
@example(x=(2**63 - 1) // 7 - 1, d=7)      # M * 7 - 2**63 = 6, the most; x % 7 = 6
@example(x=2**62, d=3)
@example(x=2**62, d=1)
@example(x=2**62 - 1, d=2**24 - 3)
@example(x=800 * 2**40, d=800)
@example(x=800 * 2**40 - 1, d=800)
@example(x=0, d=1)
def test_divide_is_floor_division(x, d):
    assert divide(prm_dividing_by(d), x, kn.K_CYC) == x // d


@settings(deadline=None)
@given(t=st.integers(0, 2**56), cyc=st.integers(1, 10**6))
@example(t=2**32, cyc=800)
@example(t=800 * 2**40, cyc=800)
def test_the_slot_of_a_time_is_the_first_edge_at_or_after_it(t, cyc):
    slot = slot_of(prm_dividing_by(cyc), t)
    assert (slot - 1) * cyc < t <= slot * cyc


@settings(deadline=None)
@given(q=st.integers(0, 2**40), d=st.integers(1, 2**10))
@example(q=385954743282472 // 49, d=49)     # the product alone gives q - 1 here
def test_divide_at_and_just_below_a_multiple(q, d):
    """Where a truncated product alone goes wrong: x a multiple of d, or one below."""
    prm = prm_dividing_by(d)
    assert divide(prm, q * d, kn.K_CYC) == q
    if q:
        assert divide(prm, q * d - 1, kn.K_CYC) == q - 1


def heads_with_ages(ages: list[tuple[int, int]]) -> np.ndarray:
    hd = np.zeros((len(ages) + 3, kn.H_NCOL), np.int64)     # spare rows, as the engine's
    hd[:len(ages), kn.H_HI] = [hi for hi, _ in ages]
    hd[:len(ages), kn.H_LO] = [lo for _, lo in ages]
    return hd


@st.composite
def distinct_ages(draw):
    """The ages of a phase's heads: distinct (hi, lo) pairs, hi = birth * N + source, some
    packets of one message (equal hi), hi spanning a few bits or 2**62 (the double-argsort
    path)."""
    span = draw(st.sampled_from([2**8, 2**40, 2**62]))
    his = draw(st.lists(st.integers(0, span), min_size=1, max_size=30))
    ages = {(hi, lo) for hi in his for lo in draw(st.lists(st.integers(0, 2**20), min_size=1,
                                                           max_size=8))}
    return draw(st.permutations(sorted(ages)))


@settings(deadline=None)
@given(ages=distinct_ages())
@example(ages=[(7 * (i % 13), 60 - i) for i in range(60)])       # many, runs of equal hi
@example(ages=[((i % 2) * 2**62 + i, i % 3) for i in range(60)])  # many, hi over 62 bits
@example(ages=[((i * 7919) % 1000 * 2**30, -i % 7) for i in range(7000)])  # a radix sort
def test_heads_are_sorted_oldest_first(ages):
    """``sort_heads`` orders by (hi, lo), on each of its paths (few heads; many, with hi in
    few bits, by quicksort or radix sort; many, with hi spanning 62 bits)."""
    assert len(set(ages)) == len(ages)
    hd = heads_with_ages(ages)
    order = np.full(len(hd), -1, np.int64)
    sort_heads(hd, order, len(ages))
    assert [ages[i] for i in order[:len(ages)]] == sorted(ages)


@settings(deadline=None)
@given(ports=st.lists(st.integers(0, 40), min_size=1, max_size=120),
       vcs=st.lists(st.integers(-1, 2), min_size=1000, max_size=1000))
@example(ports=[(7 * i) % 40 for i in range(1000)], vcs=[i % 4 - 1 for i in range(1000)])
def test_escape_priority_groups_a_ports_heads_by_vc_rank(ports, vcs):
    """``escape_priority``: ports in the order of their oldest head, within a port the NIC
    head (vc -1) first, then VCs by rank, and equal keys in their (age) order — the stable
    sort the SimPy engine makes."""
    n = len(ports)
    V = 3
    prm = np.zeros(kn.K_NPRM + V * kn.V_NCOL, np.int64)
    prm[kn.K_V] = V
    rank = [2, 0, 1]
    for vc in range(V):
        prm[kn.K_NPRM + vc * kn.V_NCOL + kn.V_RANK] = rank[vc]
    pt = np.zeros((41, kn.T_NCOL), np.int64)
    pt[:, kn.T_FIRST] = -1
    hd = np.zeros((n, kn.H_NCOL), np.int64)
    hd[:, kn.H_PID] = ports
    hd[:, kn.H_VC] = vcs[:n]
    order = np.arange(n)[::-1].copy()                        # the age order, some permutation
    first = {}
    for j, i in enumerate(order):
        first.setdefault(ports[i], j)
    want = sorted(order, key=lambda i: (first[ports[i]], -1 if vcs[i] < 0 else rank[vcs[i]]))
    escape_priority(prm, pt, hd, order, n)
    assert list(order) == want
    assert (pt[:, kn.T_FIRST] == -1).all()
