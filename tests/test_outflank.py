"""OFR's intermediate destinations and POR's orthants, decided at injection.

Worked examples of the OutFlank paper (Examples 1-2, eqs. 1-14, Remarks 1-2), the rules the
paper's own simulator coded (docs/model.md §5a.8–§5a.12), and the profit (eqs. 15-17).
Coordinates are written out; the torus sizes are large enough for no wraparound unless a test
says otherwise.
"""

from functools import lru_cache
from itertools import product

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from icsim.model.topology import Torus
from icsim.routing.outflank import (OUTFLANK, WRAPAROUND, OrthantPlanner, OutflankPlanner,
                                    admissible, choose_idn, choose_orthant, dilation,
                                    orthant_dor_port, orthant_ports, outflank_idn, outflank_idns,
                                    outflank_lambdas, reference_half, wraparound_idns)

DELTA = 2
C = 8


@lru_cache(maxsize=None)
def torus(*dims):
    return Torus(tuple(dims))


@lru_cache(maxsize=None)
def planner(dims, variant="paper", both_on_tie=True, delta=DELTA):
    return OutflankPlanner(torus(*dims), delta=delta, variant=variant, both_on_tie=both_on_tie)


@lru_cache(maxsize=None)
def por_planner(dims, both_on_tie=True):
    return OrthantPlanner(torus(*dims), both_on_tie=both_on_tie)


def coords(topo, nodes):
    return [topo.coords(q) for q in nodes]


def extra(topo, s, t, q):
    """Additive dilation delta(q) = d(s,q) + d(q,t) - d(s,t)."""
    return topo.distance(s, q) + topo.distance(q, t) - topo.distance(s, t)


def nu_links(topo, s, t):
    """Non-minimal links of s (outgoing) and of t (incoming, named by t's port)."""
    ports = set(range(topo.num_ports))
    return (ports - set(topo.minimal_ports(s, t)), ports - set(topo.minimal_ports(t, s)))


def links_used(topo, s, t, q):
    """Links of s and of t that some minimal route s -> q -> t crosses."""
    return set(topo.minimal_ports(s, q)), set(topo.minimal_ports(t, q))


@st.composite
def pairs(draw, max_n=4, min_k=3, max_k=9, distinct=True):
    n = draw(st.integers(1, max_n))
    dims = tuple(draw(st.integers(min_k, max_k)) for _ in range(n))
    topo = torus(*dims)
    s = draw(st.integers(0, topo.num_nodes - 1))
    t = draw(st.integers(0, topo.num_nodes - 1))
    if distinct:
        assume(s != t)
    return topo, s, t


@st.composite
def unwrapped_pairs(draw, max_n=5):
    """s, t and Delta with |d_i| + Delta < k_i/2 in every dimension: no wraparound, no tie."""
    n = draw(st.integers(1, max_n))
    delta = draw(st.integers(1, 3))
    offsets = [draw(st.integers(-3, 3)) for _ in range(n)]
    assume(any(offsets))
    dims = tuple(2 * (abs(d) + delta) + draw(st.integers(1, 3)) for d in offsets)
    topo = torus(*dims)
    cs = tuple(draw(st.integers(0, k - 1)) for k in dims)
    s = topo.node(cs)
    t = topo.node([c + d for c, d in zip(cs, offsets)])
    return topo, s, t, delta


# ---------------------------------------------------------------------------- the torus
@pytest.mark.parametrize("topo", [Torus((8, 2)), Torus((8, 1)), Torus((8, 8), wrap=(True, False))])
def test_every_dimension_must_be_a_ring_of_at_least_three(topo):
    with pytest.raises(ValueError, match="ring of at least 3"):
        OutflankPlanner(topo)
    with pytest.raises(ValueError, match="ring of at least 3"):
        choose_orthant(topo, 0, 1, [0] * topo.num_ports, capacity=C)
    with pytest.raises(ValueError, match="ring of at least 3"):
        outflank_idns(topo, 0, 1)


def test_unknown_names_and_bad_delta_are_rejected_with_the_valid_choices():
    topo = torus(8, 8)
    with pytest.raises(ValueError, match="paper, reference"):
        OutflankPlanner(topo, variant="ofshort")
    with pytest.raises(ValueError, match="paper, reference"):
        choose_idn(topo, 0, 3, [0] * 4, capacity=C, profit="clean")
    with pytest.raises(ValueError, match="paper, reference"):
        choose_orthant(topo, 0, 3, [0] * 4, capacity=C, profit="clean")
    with pytest.raises(ValueError, match="delta"):
        OutflankPlanner(topo, delta=0)
    with pytest.raises(ValueError, match="entries for 4 ports"):
        planner((8, 8)).choose_idn(0, 3, [0] * 6, capacity=C)
    with pytest.raises(ValueError, match="eta"):
        planner((8, 8)).choose_idn(0, 3, [0] * 4, capacity=C, eta=-1.0)


# ---------------------------------------------------------------------------- Example 1 (2D)
LAMBDAS_EQ_4_5 = [(-1, 1), (0, 1), (1, 1), (-1, -1), (0, -1), (1, -1)]   # lambda^0..lambda^5
DELTAS_EQ_7_8 = [4, 2, 4, 4, 2, 4]                                         # in units of Delta


@pytest.mark.parametrize("s_c, t_c", [((3, 5), (7, 5)), ((7, 5), (3, 5)),       # x+ and x-
                                      ((5, 3), (5, 7)), ((5, 14), (5, 1))])      # y+, y- wrapping
def test_collinear_2d_has_exactly_the_six_admissible_oidns_of_eqs_4_5_with_dilations_7_8(s_c, t_c):
    topo = torus(16, 16)
    s, t = topo.node(s_c), topo.node(t_c)
    m = 0 if s_c[0] != t_c[0] else 1            # the mu-nu dimension; the paper has it first
    admissible_lams = set()
    for lam in product((-1, 0, 1), repeat=2):
        if admissible(topo, s, t, outflank_idn(topo, s, t, lam, DELTA)):
            admissible_lams.add(lam if m == 0 else lam[::-1])
    assert admissible_lams == set(LAMBDAS_EQ_4_5)
    for lam, dil in zip(LAMBDAS_EQ_4_5, DELTAS_EQ_7_8):
        q = outflank_idn(topo, s, t, lam if m == 0 else lam[::-1], DELTA)
        assert extra(topo, s, t, q) == dil * DELTA


def test_collinear_2d_uses_remark_1s_small_dilation_cover_q0_q1_q4_q5():
    topo = torus(16, 16)
    s, t = topo.node((3, 5)), topo.node((7, 5))          # d = 4 along x+
    got = coords(topo, outflank_idns(topo, s, t))
    # q0 = (behind s, y+2), q1 = (mid, y+2), q4 = (mid, y-2), q5 = (beyond t, y-2)
    assert got == [(1, 7), (5, 7), (5, 3), (9, 3)]
    assert [extra(topo, s, t, q) for q in outflank_idns(topo, s, t)] == [8, 4, 4, 8]
    # they use every non-minimal link of s and of t (Remark 1) ...
    need_s, need_t = nu_links(topo, s, t)
    used = [links_used(topo, s, t, q) for q in outflank_idns(topo, s, t)]
    assert need_s <= set().union(*(u[0] for u in used))
    assert need_t <= set().union(*(u[1] for u in used))
    # ... as does the paper's other cover q0, q2, q3, q5, at dilation 4 Delta each
    other = [outflank_idn(topo, s, t, LAMBDAS_EQ_4_5[i], DELTA) for i in (0, 2, 3, 5)]
    assert need_s <= set().union(*(links_used(topo, s, t, q)[0] for q in other))
    assert need_t <= set().union(*(links_used(topo, s, t, q)[1] for q in other))


def test_non_collinear_2d_has_the_two_oidns_of_example_1():
    topo = torus(16, 16)
    s, t = topo.node((3, 3)), topo.node((6, 14))            # x+3, y-5
    admissible_lams = {lam for lam in product((-1, 0, 1), repeat=2)
                       if admissible(topo, s, t, outflank_idn(topo, s, t, lam, DELTA))}
    assert admissible_lams == {(-1, 1), (1, -1)}
    # (x behind s, y beyond t) then (x beyond t, y behind s); y's minimal direction is -
    assert coords(topo, outflank_idns(topo, s, t)) == [(1, 12), (8, 5)]
    assert [extra(topo, s, t, q) for q in outflank_idns(topo, s, t)] == [4 * DELTA] * 2


# ---------------------------------------------------------------------------- Example 2 (3D)
def test_the_3d_lambda_sets_are_those_of_eqs_9_to_14():
    eq_9_10 = [(0, -1, 1), (0, 1, -1), (-1, 0, 1), (1, 0, -1), (-1, 1, 0), (1, -1, 0)]
    eq_11_12 = [(0, -1, 1), (0, 1, -1), (1, 0, 0), (-1, 0, 0)]
    eq_13_14 = [(1, 0, 1), (-1, 0, 0), (0, 1, -1), (0, -1, 0)]
    for signs in product((1, -1), repeat=3):          # mu-links of either sign: same lambdas
        assert outflank_lambdas([2 * x for x in signs]) == eq_9_10
        assert outflank_lambdas([0, 3 * signs[1], 2 * signs[2]]) == eq_11_12
        assert outflank_lambdas([0, 0, 4 * signs[2]]) == eq_13_14


def test_non_coplanar_oidns_with_mu_links_of_both_signs():
    topo = torus(16, 16, 16)
    s, t = topo.node((5, 5, 5)), topo.node((8, 2, 9))       # x+3, y-3, z+4
    # lambda relative to the minimal direction: +1 = Delta beyond t, -1 = Delta behind s,
    # 0 = midpoint along the minimal path (5 + 1, 5 - 1, 5 + 2)
    assert coords(topo, outflank_idns(topo, s, t)) == [
        (6, 7, 11), (6, 0, 3), (3, 4, 11), (10, 4, 3), (3, 0, 7), (10, 7, 7)]
    assert [extra(topo, s, t, q) for q in outflank_idns(topo, s, t)] == [4 * DELTA] * 6


def test_coplanar_oidns_are_those_of_figure_3():
    topo = torus(16, 16, 16)
    s, t = topo.node((5, 5, 5)), topo.node((5, 1, 7))       # y-4, z+2
    assert coords(topo, outflank_idns(topo, s, t)) == [(5, 7, 9), (5, 15, 3), (7, 3, 6), (3, 3, 6)]
    assert [extra(topo, s, t, q) for q in outflank_idns(topo, s, t)] == [8, 8, 4, 4]


@pytest.mark.parametrize("t_c, expected", [
    ((5, 5, 2), [(7, 5, 0), (3, 5, 4), (5, 7, 7), (5, 3, 4)]),       # z-3
    ((5, 5, 8), [(7, 5, 10), (3, 5, 6), (5, 7, 3), (5, 3, 6)]),      # z+3
])
def test_collinear_3d_oidns_are_those_of_eqs_13_14(t_c, expected):
    topo = torus(16, 16, 16)
    s, t = topo.node((5, 5, 5)), topo.node(t_c)
    # (x+, z beyond t), (x-, z mid), (y+, z behind s), (y-, z mid)
    assert coords(topo, outflank_idns(topo, s, t)) == expected
    assert [extra(topo, s, t, q) for q in outflank_idns(topo, s, t)] == [8, 4, 8, 4]


def test_the_midpoint_follows_the_minimal_path_when_it_wraps():
    topo = torus(16, 16, 16)
    s, t = topo.node((1, 5, 5)), topo.node((14, 5, 5))      # x-3 through 0
    # eq. (2)'s floor((1 + 14)/2) = 7 would sit on the far side of the ring
    q = outflank_idn(topo, s, t, (0, 1, 0), DELTA)
    assert topo.coords(q) == (0, 7, 5)
    assert extra(topo, s, t, q) == 2 * DELTA


@pytest.mark.slow
@given(unwrapped_pairs())
@settings(max_examples=150, deadline=None)
def test_the_oidns_use_every_non_minimal_link_of_s_and_t_for_any_n(case):
    topo, s, t, delta = case
    oidns = outflank_idns(topo, s, t, delta)
    raw = [outflank_idn(topo, s, t, lam, delta)
           for lam in outflank_lambdas(topo.offsets(s, t))]
    assert oidns == raw                         # without wraparound every candidate is kept
    if topo.n == 1:
        assert oidns == []                      # a ring has no way round but the long one
        return
    need_s, need_t = nu_links(topo, s, t)
    used = [links_used(topo, s, t, q) for q in oidns]
    assert need_s <= set().union(*(u[0] for u in used))
    assert need_t <= set().union(*(u[1] for u in used))


# ---------------------------------------------------------------------------- dilation bound
@given(pairs(max_n=4, max_k=10), st.integers(1, 4), st.data())
@settings(max_examples=200, deadline=None)
def test_dilation_per_dimension_is_at_most_2_delta_and_exactly_2_delta_without_wraparound(
        case, delta, data):
    """delta(q(lambda)) = sum over lambda_i != 0 of delta_i, 0 <= delta_i <= 2 Delta, with
    equality iff |d_i| + Delta <= k_i/2.  Hence delta <= 2 Delta * nnz(lambda) <= 2 n Delta
    (eq. 6), whatever the wraparound (Remark 2) does."""
    topo, s, t = case
    lam = data.draw(st.tuples(*[st.sampled_from((-1, 0, 1))] * topo.n))
    q = outflank_idn(topo, s, t, lam, delta)
    cs, ct, cq = topo.coords(s), topo.coords(t), topo.coords(q)
    total = 0
    for i, (k, a, b, c) in enumerate(zip(topo.dims, cs, ct, cq)):
        ring = lambda x, y: abs(topo.offset_table[i][x][y])   # noqa: E731
        delta_i = ring(a, c) + ring(c, b) - ring(a, b)
        d_i = ring(a, b)
        if lam[i] == 0:
            assert delta_i == 0
        else:
            assert 0 <= delta_i <= 2 * delta
            assert (delta_i == 2 * delta) == (d_i + delta <= k / 2)
            if d_i + delta > k / 2 and delta <= k / 2:     # Remark 2: it wrapped round
                assert delta_i == k - 2 * d_i
        total += delta_i
    assert extra(topo, s, t, q) == total <= 2 * delta * sum(1 for x in lam if x) <= 2 * topo.n * delta


@pytest.mark.slow
@given(pairs(max_n=5, max_k=9), st.integers(1, 3))
@settings(max_examples=150, deadline=None)
def test_every_paper_oidn_is_at_most_4_delta_longer_and_every_widn_goes_round(case, delta):
    topo, s, t = case
    for q in outflank_idns(topo, s, t, delta):
        assert admissible(topo, s, t, q)
        assert extra(topo, s, t, q) <= min(4, 2 * topo.n) * delta
    # a wraparound IDN's detour is k_i - 2|d_i| in each dimension where it is on the far arc
    # (one less on an odd ring with d_i = 0): not bounded by a constant
    offsets = topo.offsets(s, t)
    for q in wraparound_idns(topo, s, t):
        assert admissible(topo, s, t, q)
        expected = 0
        for i, (k, d) in enumerate(zip(topo.dims, offsets)):
            a, c, b = topo.coords(s)[i], topo.coords(q)[i], topo.coords(t)[i]
            on_minimal_arc = abs(topo.offset_table[i][a][c]) + abs(topo.offset_table[i][c][b]) == abs(d)
            if not on_minimal_arc:
                expected += k - 2 * abs(d) - (1 if d == 0 and k % 2 else 0)
        assert extra(topo, s, t, q) == expected


def test_a_reference_oidn_whose_quirky_half_lands_on_the_far_side_is_not_bounded():
    topo = torus(32, 32, 32)
    s, t = topo.node((1, 0, 0)), topo.node((29, 3, 0))      # x-4 through 0; lo + hi < k
    assert reference_half(32, 1, 29) == 15                   # the far arc's midpoint
    oidns = outflank_idns(topo, s, t, variant="reference")
    q = topo.node((15, 1, 2))                                # (z + Delta, both halves)
    assert q in oidns
    assert extra(topo, s, t, q) == 2 * DELTA + 24 > 2 * topo.n * DELTA


# ---------------------------------------------------------------------------- wraparound IDNs
@given(pairs(max_n=3, max_k=9))
@settings(max_examples=150, deadline=None)
def test_wraparound_idns_are_the_admissible_points_of_eq_1(case):
    topo, s, t = case
    cs, ct = topo.coords(s), topo.coords(t)
    eq1 = {topo.node([(a + b + beta * k) // 2 % k for a, b, k, beta in zip(cs, ct, topo.dims, betas)])
           for betas in product((0, 1), repeat=topo.n)}
    got = wraparound_idns(topo, s, t)
    assert len(got) == len(set(got))
    assert set(got) == {q for q in eq1 if admissible(topo, s, t, q)}
    # the reference int/ext construction is the same set on even rings
    if all(k % 2 == 0 for k in topo.dims):
        ref = set(wraparound_idns(topo, s, t, variant="reference", both_on_tie=False))
        assert ref == {q for q in eq1 if admissible(topo, s, t, q, both_on_tie=False)}


def test_in_2d_the_three_non_minimal_orthants_each_have_a_widn():
    topo = torus(16, 16)
    s, t = topo.node((2, 2)), topo.node((6, 5))
    # beta = 0 is the midpoint of the minimal arc (4, 3); beta = 1 the far arc's (12, 11)
    assert coords(topo, wraparound_idns(topo, s, t)) == [(4, 11), (12, 3), (12, 11)]


# ---------------------------------------------------------------------------- admissibility
def test_admissibility_needs_a_non_minimal_direction_on_both_legs():
    topo = torus(8, 8, 8)
    s, t = topo.node((0, 0, 0)), topo.node((2, 2, 0))
    assert not admissible(topo, s, t, s) and not admissible(topo, s, t, t)
    assert not admissible(topo, s, t, topo.node((2, 1, 0)))     # inside the minimal orthant
    assert not admissible(topo, s, t, topo.node((7, 0, 0)))     # behind s: second leg minimal
    assert admissible(topo, s, t, topo.node((6, 0, 0)))         # ... unless it wraps (Remark 2)
    assert admissible(topo, s, t, topo.node((2, 1, 2)))         # z is non-minimal both ways
    assert dilation(topo, s, t, topo.node((2, 1, 2))) == 8 / 4
    with pytest.raises(ValueError):
        dilation(topo, s, s, t)


def test_a_k_over_2_offset_counts_both_directions_as_minimal_with_both_on_tie():
    topo = torus(8, 8)
    s, t = topo.node((0, 0)), topo.node((4, 1))                 # x is a tie
    q = topo.node((6, 3))                                       # leaves s by x-, arrives by y+
    assert admissible(topo, s, t, q, both_on_tie=False)         # x- is not the + of a tie
    assert not admissible(topo, s, t, q, both_on_tie=True)      # x- is minimal too


# ---------------------------------------------------------------------------- the planners
@given(pairs(max_n=4, max_k=8, distinct=False), st.sampled_from(["paper", "reference"]),
       st.booleans(), st.integers(1, 3), st.data())
@settings(max_examples=200, deadline=None)
def test_the_cached_planner_gives_the_same_candidates_as_the_functions(case, variant, tie, delta, data):
    topo, s, t = case
    pl = planner(topo.dims, variant, tie, delta)
    # warm the cache through a translate of (s, t), then ask for (s, t) itself
    shift = data.draw(st.integers(0, topo.num_nodes - 1))
    moved = [topo.node([a + b for a, b in zip(topo.coords(v), topo.coords(shift))]) for v in (s, t)]
    pl.choose_idn(*moved, [0] * topo.num_ports, capacity=C)
    assert pl.outflank_idns(s, t) == outflank_idns(topo, s, t, delta, variant=variant, both_on_tie=tie)
    assert pl.wraparound_idns(s, t) == wraparound_idns(topo, s, t, variant=variant, both_on_tie=tie)


def test_the_reference_candidates_ignore_both_on_tie():
    topo = torus(8, 8, 8)
    s, t = topo.node((0, 0, 0)), topo.node((4, 2, 0))
    for fn in (outflank_idns, wraparound_idns):
        assert fn(topo, s, t, variant="reference", both_on_tie=True) == \
            fn(topo, s, t, variant="reference", both_on_tie=False)


def test_a_single_ring_has_only_the_wraparound_idn():
    topo = torus(9)
    assert outflank_idns(topo, 1, 5) == []
    assert wraparound_idns(topo, 1, 5) == [(1 + 5 + 9) // 2 % 9]
    assert choose_idn(topo, 1, 5, [8, 0], capacity=C) == (7, WRAPAROUND)     # 5 hops for 4


# ---------------------------------------------------------------------------- reference rules
def test_the_reference_half_is_the_wraparound_midpoint_only_when_lo_plus_hi_reaches_k():
    assert reference_half(8, 3, 6) == 4            # no wrap: (3 + 6) // 2
    assert reference_half(8, 2, 7) == 0            # wraps, 2 + 7 >= 8: on the path 2,1,0,7
    assert reference_half(8, 6, 1) == 3            # wraps, 1 + 6 < 8: 3 is on the long arc
    assert reference_half(8, 0, 4) == 2            # a tie stays on the + side


def test_reference_collinear_oidns_are_the_two_ofshort_ones():
    topo = torus(8, 8, 8)
    s = topo.node((1, 2, 3))
    # (i0 - Delta, mid) and (i1 - Delta, mid): the paper's + candidates are not generated
    assert coords(topo, outflank_idns(topo, s, topo.node((4, 2, 3)), variant="reference")) == \
        [(2, 0, 3), (2, 2, 1)]
    assert coords(topo, outflank_idns(topo, s, topo.node((1, 2, 6)), variant="reference")) == \
        [(7, 2, 4), (1, 0, 4)]


def test_reference_oidns_take_the_ordered_pairs_in_coded_order():
    topo = torus(8, 8, 8)
    t = topo.node((2, 3, 1))
    # (x behind, y beyond, z half), (x behind, z beyond, y half), (y behind, x beyond), ...
    assert coords(topo, outflank_idns(topo, 0, t, variant="reference")) == [
        (6, 5, 0), (6, 1, 3), (4, 6, 0), (1, 6, 3), (4, 1, 6), (1, 5, 6)]
    # the paper lists the same six points in the order of eqs. (9)-(10)
    assert coords(topo, outflank_idns(topo, 0, t)) == [
        (1, 6, 3), (1, 5, 6), (6, 1, 3), (4, 1, 6), (6, 5, 0), (4, 6, 0)]


def test_reference_widns_are_int_ext_combinations_in_coded_order():
    topo = torus(8, 8, 8)
    t = topo.node((2, 3, 1))                   # int = (1, 1, 0), ext = (5, 5, 4)
    # (int, int, int) is the minimal orthant's and (int, int, ext) leaves s by z+4 = z+
    assert coords(topo, wraparound_idns(topo, 0, t, variant="reference")) == [
        (1, 5, 0), (1, 5, 4), (5, 1, 0), (5, 1, 4), (5, 5, 0), (5, 5, 4)]
    # x from 1 to 6 (minimal: 1, 0, 7, 6): the quirky int = 3 is the far arc's midpoint, so
    # (int, int, int) is admissible and (ext, int, int) = (7, 0, 0) is the minimal one
    s, t = topo.node((1, 0, 0)), topo.node((6, 0, 0))
    assert coords(topo, wraparound_idns(topo, s, t, variant="reference")) == [
        (3, 0, 0), (3, 0, 4), (3, 4, 0), (3, 4, 4), (7, 0, 4), (7, 4, 0), (7, 4, 4)]


def test_reference_ofr_divides_the_first_legs_free_slots_by_the_second_legs_dimensions():
    topo = torus(8, 8, 8)
    pl = planner((8, 8, 8), "reference")
    s, t = topo.node((1, 0, 0)), topo.node((0, 3, 0))          # x-1, y+3
    q = topo.node((0, 1, 2))                                   # (z + Delta, x half, y half)
    assert coords(topo, pl.outflank_idns(s, t)) == [(3, 5, 0), (6, 6, 0), (0, 1, 2), (0, 1, 6)]
    # first leg x-, y+, z+ (3 queues); second leg y+, z- (2 dimensions)
    used = [7] * 6
    used[1], used[2], used[4] = 2, 3, 3                        # free 6 + 5 + 5 = 16, u* = 2
    _, rows = pl.scores(s, t, used, capacity=C, profit="reference")
    assert dict((n, p) for n, _, p in rows)[q] == float("inf")  # f = 16/2 = C: u*/(C - f)
    assert pl.choose_idn(s, t, used, capacity=C, profit="reference") == (q, OUTFLANK)
    used = [5] * 6
    used[1], used[2], used[4] = 1, 1, 1                        # free 21/2 > C: negative term
    _, rows = pl.scores(s, t, used, capacity=C, profit="reference")
    assert dict((n, p) for n, _, p in rows)[q] == pytest.approx(1 / (C - 10.5) + 2.0 / 2)


def test_reference_ofr_prefers_the_oidn_on_an_exact_tie_with_the_widn():
    topo = torus(8, 8, 8)
    pl = planner((8, 8, 8), "reference")
    t = topo.node((2, 0, 0))
    used = [8, 0, 0, 0, 0, 0]                                  # x+ full, the rest idle
    pi0, rows = pl.scores(0, t, used, capacity=C, profit="reference")
    best = {kind: max(p for _, k, p in rows if k == kind) for kind in (OUTFLANK, WRAPAROUND)}
    assert pi0 == 0.0 and best[OUTFLANK] == best[WRAPAROUND] == 1 + 2.0 / 3
    assert pl.choose_idn(0, t, used, capacity=C, profit="reference") == (topo.node((1, 6, 0)), OUTFLANK)


def test_reference_profit_is_zero_when_the_first_leg_has_no_free_slot():
    topo = torus(8, 8, 8)
    pl = planner((8, 8, 8), "reference")
    t = topo.node((2, 0, 0))
    used = [8, 0, 0, 8, 0, 8]                       # x+, y-, z- full: both OIDNs leave by them
    _, rows = pl.scores(0, t, used, capacity=C, profit="reference")
    assert [p for _, kind, p in rows if kind == OUTFLANK] == [0.0, 0.0]
    assert pl.choose_idn(0, t, used, capacity=C, profit="reference") == (topo.node((5, 0, 0)), WRAPAROUND)


@given(pairs(max_n=3, min_k=3, max_k=9), st.data())
@settings(max_examples=200, deadline=None)
def test_reference_never_deroutes_while_an_adaptive_queue_is_idle_unless_minimal_is_full(case, data):
    topo, s, t = case
    used = data.draw(st.lists(st.integers(0, C), min_size=topo.num_ports, max_size=topo.num_ports))
    used[data.draw(st.integers(0, topo.num_ports - 1))] = 0
    minimal = topo.minimal_ports(s, t, both_on_tie=False)
    assume(any(used[p] < C for p in minimal))
    for variant in ("paper", "reference"):
        assert planner(topo.dims, variant).choose_idn(
            s, t, used, capacity=C, profit="reference") == (None, None)
    assert por_planner(topo.dims).choose_orthant(s, t, used, capacity=C, profit="reference") == (None, False)


def test_reference_derouting_starts_once_every_adaptive_queue_holds_a_packet():
    topo = torus(8, 8, 8)
    t = topo.node((3, 0, 0))
    used = [6, 1, 1, 1, 1, 0]
    assert choose_idn(topo, 0, t, used, capacity=C, profit="reference", candidates="reference") == (None, None)
    used[5] = 1
    q, kind = choose_idn(topo, 0, t, used, capacity=C, profit="reference", candidates="reference")
    assert kind is not None


@pytest.mark.parametrize("profit", ["paper", "reference"])
def test_min_deroute_distance_two_keeps_neighbours_minimal(profit):
    topo = torus(8, 8, 8)
    t = topo.node((1, 0, 0))                                   # a neighbour along x+
    used = [8, 0, 0, 0, 0, 0]                                  # and its queue full
    kw = dict(capacity=C, profit=profit, candidates=profit, eta=0.5)
    assert choose_idn(topo, 0, t, used, **kw)[0] is not None
    assert choose_idn(topo, 0, t, used, min_deroute_distance=2, **kw) == (None, None)
    assert choose_orthant(topo, 0, t, used, capacity=C, profit=profit)[0] is not None
    assert choose_orthant(topo, 0, t, used, capacity=C, profit=profit,
                          min_deroute_distance=2) == (None, False)


def test_reference_por_divides_free_slots_by_three_even_for_a_1d_destination():
    topo = torus(8, 8, 8)
    pl = por_planner((8, 8, 8))
    t = topo.node((2, 0, 0))
    used = [7, 1, 4, 4, 4, 4]                                  # x+ nearly full, x- nearly idle
    pi0, rows = pl.scores(0, t, used, capacity=C, profit="reference", eta=1.0)
    profit = {o.code_signs: p for o, p in rows}
    assert pi0 == pytest.approx(1 / (C - 1) + 1)
    assert profit[(-1, 1, 1)] == pytest.approx(1 / (C - 7 / 3) + 1 / 3)   # true mean: 1 + 1/3
    assert pl.choose_orthant(0, t, used, capacity=C, profit="reference") == (None, False)
    assert pl.choose_orthant(0, t, used, capacity=C, profit="paper") == ((-1, 0, 0), True)


def test_por_taking_the_other_direction_of_a_tie_is_derouted_only_for_the_reference():
    topo = torus(8, 8, 8)
    pl = por_planner((8, 8, 8))
    t = topo.node((4, 2, 0))                                   # x is a k/2 tie
    used = [7, 1, 4, 4, 4, 4]
    assert pl.choose_orthant(0, t, used, capacity=C, profit="reference") == ((-1, 1, 1), True)
    assert pl.choose_orthant(0, t, used, capacity=C, profit="paper") == ((-1, 1, 0), False)


# ---------------------------------------------------------------------------- profits
@given(pairs(max_n=4, max_k=8, distinct=False), st.sampled_from(["paper", "reference"]),
       st.sampled_from(["paper", "reference"]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_an_idle_router_never_deroutes(case, candidates, profit, tie):
    topo, s, t = case
    idle = [0] * topo.num_ports
    assert planner(topo.dims, candidates, tie).choose_idn(
        s, t, idle, capacity=C, profit=profit) == (None, None)
    assert por_planner(topo.dims, tie).choose_orthant(
        s, t, idle, capacity=C, profit=profit) == (None, False)


@given(pairs(max_n=3, max_k=9), st.sampled_from(["paper", "reference"]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_with_the_minimal_queues_full_and_the_rest_idle_both_deroute_if_a_way_is_idle(
        case, candidates, tie):
    topo, s, t = case
    full = set(topo.minimal_ports(s, t, both_on_tie=tie))
    used = [C if p in full else 0 for p in range(topo.num_ports)]
    d = topo.distance(s, t)
    pl = planner(topo.dims, candidates, tie)
    idns = outflank_idns(topo, s, t, variant=candidates, both_on_tie=tie) + \
        wraparound_idns(topo, s, t, variant=candidates, both_on_tie=tie)

    def idle(q):
        return not set(topo.minimal_ports(s, q, both_on_tie=tie)) & full

    # POR (eta = 1): an orthant leaving through idle queues scores 1 + d/len > 1 = pi_0, any
    # other one d/len <= 1 (u* = 0).  On a k/2 tie with both_on_tie there is none.
    signs, derouted = por_planner(topo.dims, tie).choose_orthant(s, t, used, capacity=C)
    idle_orthants = {o.signs: o.length for o in por_planner(topo.dims, tie).orthants(s, t)
                     if not set(o.ports) & full}
    assert (signs is not None) == bool(idle_orthants)
    # the other direction of a k/2 tie is as short as minimal: not "derouted"
    assert signs is None or (signs in idle_orthants and derouted == (idle_orthants[signs] > d))
    # the reference profit: pi_0 = 0, and any IDN with a free slot on its first leg wins
    idn, _ = pl.choose_idn(s, t, used, capacity=C, profit="reference")
    with_room = [q for q in idns if set(topo.minimal_ports(s, q, both_on_tie=False)) - full]
    assert (idn is not None) == bool(with_room)
    # eq. (15) with u* = 0 rewards only IDNs reached through idle queues, and those beat
    # pi_0 = eta = 2 only if d~ < 2d
    idle_and_short = [q for q in idns if idle(q) and 1 + 2.0 / dilation(topo, s, t, q) > 2.0]
    idn, _ = pl.choose_idn(s, t, used, capacity=C)
    assert (idn is not None) == bool(idle_and_short)
    assert idn is None or idn in idle_and_short


def test_with_the_minimal_queue_full_ofr_and_por_leave_the_other_way():
    topo = torus(8, 8, 8)
    t = topo.node((3, 0, 0))
    used = [8, 0, 0, 0, 0, 0]
    assert choose_idn(topo, 0, t, used, capacity=C) == (topo.node((5, 0, 0)), WRAPAROUND)
    assert choose_orthant(topo, 0, t, used, capacity=C) == ((-1, 0, 0), True)
    # the reference: pi_0 = 0 and every first term 1, so the shortest detour with a free
    # queue wins: this WIDN (D = 5/3) over the OIDN (1, 6, 0) (D = 7/3)
    assert choose_idn(topo, 0, t, used, capacity=C, profit="reference", candidates="reference") \
        == (topo.node((5, 0, 0)), WRAPAROUND)
    assert choose_orthant(topo, 0, t, used, capacity=C, profit="reference") == ((-1, 1, 1), True)


@pytest.mark.parametrize("target", [s for s in product((1, -1), repeat=3) if s != (1, 1, 1)])
def test_por_chooses_the_orthant_whose_queues_are_empty(target):
    topo = torus(8, 8, 8)
    t = topo.node((2, 2, 2))
    ports = orthant_ports(topo, 0, t, target)
    used = [0 if p in ports else 4 for p in range(6)]
    assert choose_orthant(topo, 0, t, used, capacity=C) == (target, True)
    # the reference profit treats any idle queue as "nothing is congested": use 1 for idle
    used = [1 if p in ports else 7 for p in range(6)]
    assert choose_orthant(topo, 0, t, used, capacity=C, profit="reference") == (target, True)


def test_por_stays_minimal_when_the_minimal_orthants_queues_are_the_empty_ones():
    topo = torus(8, 8, 8)
    t = topo.node((2, 2, 2))
    used = [0, 4, 0, 4, 0, 4]
    assert choose_orthant(topo, 0, t, used, capacity=C) == (None, False)


def test_ties_between_equally_good_idns_are_drawn_with_the_rng():
    topo = torus(8, 8, 8)
    pl = planner((8, 8, 8))
    t = topo.node((1, 0, 0))
    used = [8, 0, 0, 0, 0, 0]
    # (y - Delta) and (z - Delta) leave by idle queues at the same dilation: a tie
    a, b = topo.node((0, 6, 0)), topo.node((0, 0, 6))
    _, rows = pl.scores(0, t, used, capacity=C, eta=0.5)
    top = max(p for _, _, p in rows)
    assert [q for q, _, p in rows if p == top] == [a, b]
    assert pl.choose_idn(0, t, used, capacity=C, eta=0.5) == (a, OUTFLANK)
    rng = np.random.default_rng(7)
    picks = [pl.choose_idn(0, t, used, capacity=C, eta=0.5, rng=rng)[0] for _ in range(400)]
    assert set(picks) == {a, b} and 150 < picks.count(a) < 250


@pytest.mark.slow
@given(pairs(max_n=3, max_k=9), st.sampled_from(["paper", "reference"]), st.booleans(),
       st.floats(0.25, 3.0), st.data())
@settings(max_examples=300, deadline=None)
def test_the_fast_decision_agrees_with_the_profits_it_is_built_on(case, candidates, tie, eta, data):
    topo, s, t = case
    used = data.draw(st.lists(st.integers(0, C), min_size=topo.num_ports, max_size=topo.num_ports))
    pl = planner(topo.dims, candidates, tie)
    # paper: argmax over all candidates, first in order on ties, strictly above pi_0
    pi0, rows = pl.scores(s, t, used, capacity=C, eta=eta)
    best = max([p for _, _, p in rows], default=-1.0)
    expected = next(((q, k) for q, k, p in rows if p == best), None) if best > pi0 else None
    assert pl.choose_idn(s, t, used, capacity=C, eta=eta) == (expected or (None, None))
    # reference: best OIDN and best WIDN (first on ties, > 0), OIDN on a tie, above pi_0
    pi0, rows = pl.scores(s, t, used, capacity=C, eta=eta, profit="reference")
    tops = {}
    for q, kind, p in rows:
        if p > tops.get(kind, (0.0, None))[0]:
            tops[kind] = (p, (q, kind))
    p_o, o = tops.get(OUTFLANK, (0.0, None))
    p_w, w = tops.get(WRAPAROUND, (0.0, None))
    pick, choice = (p_o, o) if p_o >= p_w else (p_w, w)
    expected = choice if choice is not None and pick > pi0 else (None, None)
    assert pl.choose_idn(s, t, used, capacity=C, eta=eta, profit="reference") == expected
    # POR, both profits
    por = por_planner(topo.dims, tie)
    for profit in ("paper", "reference"):
        pi0, rows = por.scores(s, t, used, capacity=C, eta=eta, profit=profit)
        best = max([p for _, p in rows], default=-1.0)
        if best > pi0 and (profit == "paper" or best > 0):
            o = next(o for o, p in rows if p == best)
            expected = (o.signs, o.derouted) if profit == "paper" else (o.code_signs, o.code_derouted)
        else:
            expected = (None, False)
        assert por.choose_orthant(s, t, used, capacity=C, eta=eta, profit=profit) == expected


# ---------------------------------------------------------------------------- orthant routing
def test_orthant_ports_follow_the_signs_including_the_long_way_round():
    topo = torus(8, 8, 8)
    t = topo.node((2, 0, 7))
    assert orthant_ports(topo, 0, t, (1, 0, -1)) == (0, 5)       # x+, z- (minimal)
    assert orthant_ports(topo, 0, t, (-1, 0, 1)) == (1, 4)       # x- and z+ the long way
    assert orthant_dor_port(topo, 0, t, (-1, 0, 1)) == 1
    assert orthant_ports(topo, t, t, (-1, 0, 1)) == ()
    assert orthant_dor_port(topo, t, t, (-1, 0, 1)) == -1
    assert orthant_dor_port(topo, topo.node((2, 0, 0)), t, (-1, 0, 1)) == 4
    with pytest.raises(ValueError, match="sign is 0"):
        orthant_ports(topo, 0, t, (1, 0, 0))


def test_orthants_that_differ_only_where_the_offset_is_zero_are_one_candidate():
    topo = torus(8, 8, 8)
    orthants = por_planner((8, 8, 8)).orthants(0, topo.node((3, 0, 5)))
    assert [o.signs for o in orthants] == [(1, 0, 1), (-1, 0, 1), (1, 0, -1), (-1, 0, -1)]
    assert [o.code_signs for o in orthants] == [(1, 1, 1), (-1, 1, 1), (1, 1, -1), (-1, 1, -1)]
    assert [o.length for o in orthants] == [8, 10, 6, 8]          # z's minimal direction is -
    assert [o.derouted for o in orthants] == [True, True, False, True]
