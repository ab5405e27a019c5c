"""Destination patterns: definitions, bijections and fixed points, statistics, preconditions."""

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import Graph, Torus
from icsim.traffic import patterns as patterns_module
from icsim.traffic.patterns import PATTERNS, Pattern, PatternError, make_pattern

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True)

ALL_NAMES = {"uniform", "transpose", "transpose3d", "butterfly", "fft", "bitreverse",
             "bitcomplement", "shuffle", "bitrotation", "tornado", "neighbor", "permutation",
             "hotspot", "alltoall", "group_shift", "line_shift"}
FIXED_MAPPINGS = {"transpose", "transpose3d", "bitreverse", "bitcomplement", "shuffle",
                  "bitrotation", "tornado", "permutation"}


def path_graph(n):
    return Graph.from_edges(n, [(i, i + 1) for i in range(n - 1)])


def fixed_points(mapping):
    return int((mapping == np.arange(len(mapping))).sum())


def assert_bijection(pattern):
    m = pattern.mapping()
    n = pattern.num_nodes
    assert m.shape == (n,)
    assert sorted(m.tolist()) == list(range(n))
    for src in range(0, n, max(1, n // 17)):                     # destination agrees with it
        assert pattern.destination(src, 0, None) == pattern.destination(src, 7, None) == m[src]
    return m


class ExtremeRng:
    """Stands in for a Generator whose next random() is a chosen value."""

    def __init__(self, value):
        self.value = value

    def random(self):
        return self.value


LARGEST_BELOW_ONE = float(np.nextafter(1.0, 0.0))

# ---------------------------------------------------------------------------- topology strategies


@st.composite
def power_of_two_tori(draw, max_bits=12):
    """A torus of 1-4 dimensions, every size a power of two, 2 <= N <= 2**max_bits."""
    exps = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)
                .filter(lambda e: 1 <= sum(e) <= max_bits))
    return Torus(tuple(2 ** e for e in exps))


@st.composite
def square_tori(draw):
    """A torus of 1-3 dimensions whose node count is q*q, q in 2..40."""
    q = draw(st.integers(2, 40))
    n = q * q
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    a = draw(st.sampled_from(divisors))
    rest = n // a
    b = draw(st.sampled_from([d for d in divisors if rest % d == 0]))
    return Torus(tuple(k for k in (a, b, rest // b) if k > 1)), q


@st.composite
def cubes(draw):
    """A torus of n >= 2 dimensions, all of size k."""
    k = draw(st.integers(2, 12))
    n = draw(st.integers(2, 4).filter(lambda n: k ** n <= 4096))
    return Torus((k,) * n), k, n


tori = st.lists(st.integers(1, 9), min_size=1, max_size=4).filter(
    lambda d: 2 <= math.prod(d) <= 3000).map(tuple)

# ---------------------------------------------------------------------------- registry and errors


def test_registry_holds_every_pattern_and_fft_is_butterfly():
    assert set(PATTERNS.names(aliases=True)) == ALL_NAMES
    assert PATTERNS["fft"] is PATTERNS["butterfly"]
    assert all(issubclass(cls, Pattern) for cls in PATTERNS.values())
    assert {name for name, cls in PATTERNS.items(aliases=True) if cls.permutation} == FIXED_MAPPINGS


def test_an_unknown_pattern_name_lists_the_valid_ones_sorted():
    with pytest.raises(PatternError) as err:
        make_pattern("tranpose", Torus((4, 4)), seed=0)
    msg = str(err.value)
    assert "'tranpose'" in msg
    assert msg.endswith(", ".join(sorted(ALL_NAMES)) + ")")


def test_register_refuses_a_name_twice():
    with pytest.raises(ValueError, match="uniform"):
        patterns_module.register("uniform")(type("Again", (Pattern,), {}))
    assert PATTERNS["uniform"].__name__ == "Uniform"


@pytest.mark.parametrize("name,topology,reason", [
    ("transpose", Torus((8, 8, 8)), "transpose: 8x8x8 has 512 nodes, not a perfect square"),
    ("transpose", path_graph(10), "transpose: the graph has 10 nodes, not a perfect square"),
    ("butterfly", Torus((6, 6)), "butterfly: 6x6 has 36 nodes, not a power of two"),
    ("fft", Torus((6, 6)), "butterfly: 6x6 has 36 nodes, not a power of two"),
    ("bitreverse", Torus((4, 3)), "bitreverse: 4x3 has 12 nodes, not a power of two"),
    ("shuffle", Torus((6,)), "shuffle: 6 has 6 nodes, not a power of two"),
    ("bitrotation", path_graph(3), "bitrotation: the graph has 3 nodes, not a power of two"),
    ("bitcomplement", path_graph(5), "bitcomplement: the graph has 5 nodes, not a power of two"),
    ("transpose3d", Torus((8, 8, 16)), "transpose3d: 8x8x16 has unequal sizes"),
    ("transpose3d", Torus((8,)), "transpose3d: 8 has one dimension"),
    ("tornado", Torus((2, 2, 2)), "tornado: 2x2x2 has no dimension of size >= 3"),
    ("tornado", path_graph(4), "tornado: needs a torus"),
    ("transpose3d", path_graph(8), "transpose3d: needs a torus"),
    ("neighbor", path_graph(4), "neighbor: needs a torus"),
    ("uniform", Torus((1,)), "uniform: 1 has 1 node(s); a traffic pattern needs at least 2"),
    ("alltoall", Torus((1, 1)), "alltoall: 1x1 has 1 node(s)"),
])
def test_a_failed_precondition_names_the_pattern_and_the_reason(name, topology, reason):
    with pytest.raises(PatternError) as err:
        make_pattern(name, topology, seed=0)
    assert str(err.value).startswith(reason)


@pytest.mark.parametrize("name,params,reason", [
    ("uniform", {"include_self": 1}, "uniform: include_self must be true or false"),
    ("uniform", {"fraction": 0.5}, "uniform: unknown parameter(s) fraction; valid: include_self"),
    ("transpose", {"q": 4}, "transpose: unknown parameter(s) q; valid: none"),
    ("permutation", {"derangement": "no"}, "permutation: derangement must be true or false"),
    ("hotspot", {"fraction": 1.5}, "hotspot: fraction must be a number in [0, 1]"),
    ("hotspot", {"fraction": True}, "hotspot: fraction must be a number in [0, 1]"),
    ("hotspot", {"nodes": []}, "hotspot: nodes is empty"),
    ("hotspot", {"nodes": "0"}, "hotspot: nodes must be a list of node ids"),
    ("hotspot", {"nodes": [3, 16]}, "hotspot: hotspot node 16 is not a node id in [0, 16)"),
    ("hotspot", {"nodes": [1.0]}, "hotspot: hotspot node 1.0 is not a node id"),
    ("hotspot", {"nodes": [2, 2]}, "hotspot: hotspot nodes [2, 2] contain duplicates"),
])
def test_a_bad_parameter_names_the_pattern_and_the_parameter(name, params, reason):
    with pytest.raises(PatternError) as err:
        make_pattern(name, Torus((4, 4)), seed=0, **params)
    assert str(err.value).startswith(reason)


@pytest.mark.parametrize("seed", [-1, 1.5, "1", None, True])
def test_the_seed_must_be_a_non_negative_integer(seed):
    with pytest.raises(PatternError, match="uniform: seed must be a non-negative integer"):
        make_pattern("uniform", Torus((4, 4)), seed=seed)


def test_resolved_parameters_are_kept_read_only_with_defaults_filled_in():
    p = make_pattern("hotspot", Torus((4, 4)), seed=3, nodes=np.array([5, 2]))
    assert dict(p.params) == {"fraction": 0.1, "nodes": (5, 2)}
    assert all(type(v) is int for v in p.params["nodes"])
    with pytest.raises(TypeError):
        p.params["fraction"] = 0.5
    assert make_pattern("uniform", Torus((4,)), seed=0).params == {"include_self": False}
    assert "hotspot" in repr(p) and "4x4" in repr(p)


# ---------------------------------------------------------------------------- every pattern


@pytest.mark.parametrize("topology", [Torus((4, 4, 4)), Torus((2, 8)), Torus((16,)),
                                      Torus((4, 4), wrap=(False, True)), path_graph(16)],
                         ids=["4x4x4", "2x8", "16", "4x4-mesh", "graph16"])
@pytest.mark.parametrize("name", sorted(ALL_NAMES))
def test_every_applicable_pattern_returns_python_ints_in_range(name, topology):
    # every size here is a power of two and a square; only shape preconditions can fail
    rejected = ((PATTERNS[name].needs_torus and not isinstance(topology, Torus))
                or (name == "tornado" and not isinstance(topology, Torus))   # coordinates
                or (name == "transpose3d" and topology.dims in ((2, 8), (16,)))
                or name in ("group_shift", "line_shift"))     # a dragonfly's, a HyperX's
    if rejected:
        pytest.raises(PatternError, make_pattern, name, topology, seed=1)
        return
    p = make_pattern(name, topology, seed=1)
    n = topology.num_nodes
    rng = np.random.default_rng(7)
    for src in range(n):
        for i in range(3 * n):
            d = p.destination(src, i, rng)
            assert type(d) is int and 0 <= d < n
    assert (p.mapping() is not None) == p.permutation


def test_patterns_without_a_fixed_mapping_have_none():
    from icsim.model.topology import Dragonfly, HyperX

    family = {"group_shift": Dragonfly(2, 4, 2), "line_shift": HyperX((4, 4), 4)}
    for name in ALL_NAMES - FIXED_MAPPINGS:
        topology = family.get(name, Torus((4, 4)))
        assert make_pattern(name, topology, seed=0).mapping() is None


# ---------------------------------------------------------------------------- fixed mappings


@given(square_tori())
@PROPERTY
def test_transpose_is_a_bijection_fixing_exactly_the_q_diagonal_nodes(topology_q):
    topology, q = topology_q
    m = assert_bijection(make_pattern("transpose", topology, seed=0))
    a = np.arange(q * q)
    assert (m == a // q + q * (a % q)).all()
    assert fixed_points(m) == q
    assert (m[m] == a).all()                                    # an involution


def test_transpose_on_8x8x16_maps_i_plus_32j_to_j_plus_32i():
    p = make_pattern("transpose", Torus((8, 8, 16)), seed=0)
    for i in range(32):
        for j in range(32):
            assert p.destination(i + 32 * j, 0, None) == j + 32 * i


def test_transpose_works_on_the_index_of_a_graph():
    m = assert_bijection(make_pattern("transpose", path_graph(9), seed=0))
    assert m.tolist() == [0, 3, 6, 1, 4, 7, 2, 5, 8]


@given(cubes())
@PROPERTY
def test_transpose3d_rotates_coordinates_and_fixes_the_k_diagonal_nodes(cube):
    topology, k, n = cube
    m = assert_bijection(make_pattern("transpose3d", topology, seed=0))
    assert fixed_points(m) == k
    for src in range(0, topology.num_nodes, 7):
        c = topology.coords(src)
        assert topology.coords(int(m[src])) == c[1:] + c[:1]


def test_transpose3d_on_a_3d_torus_is_dest_x_src_y_dest_y_src_z_dest_z_src_x():
    t = Torus((4, 4, 4))
    p = make_pattern("transpose3d", t, seed=0)
    assert t.coords(p.destination(t.node((1, 2, 3)), 0, None)) == (2, 3, 1)


@given(power_of_two_tori())
@PROPERTY
def test_bitreverse_is_a_bijection_fixing_exactly_the_palindromes(topology):
    n = topology.num_nodes
    b = n.bit_length() - 1
    m = assert_bijection(make_pattern("bitreverse", topology, seed=0))
    assert fixed_points(m) == 2 ** math.ceil(b / 2)
    for a in range(0, n, 3):
        assert format(int(m[a]), f"0{b}b") == format(a, f"0{b}b")[::-1]


@given(power_of_two_tori())
@PROPERTY
def test_shuffle_and_bitrotation_rotate_the_bits_and_undo_each_other(topology):
    n = topology.num_nodes
    b = n.bit_length() - 1
    shuffle = assert_bijection(make_pattern("shuffle", topology, seed=0))
    rotation = assert_bijection(make_pattern("bitrotation", topology, seed=0))
    assert (rotation[shuffle] == np.arange(n)).all()            # each the other's inverse
    assert set(np.flatnonzero(shuffle == np.arange(n))) == ({0, n - 1} if b > 1 else {0, 1})
    for a in range(0, n, 3):
        bits = format(a, f"0{b}b")
        assert format(int(shuffle[a]), f"0{b}b") == bits[1:] + bits[0]      # left by one
        assert format(int(rotation[a]), f"0{b}b") == bits[-1] + bits[:-1]   # right by one
    # b shuffles bring every node back
    m = np.arange(n)
    for _ in range(b):
        m = shuffle[m]
    assert (m == np.arange(n)).all()


def test_shuffle_and_bitrotation_on_8_nodes():
    t = Torus((2, 2, 2))
    assert make_pattern("shuffle", t, seed=0).mapping().tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert make_pattern("bitrotation", t, seed=0).mapping().tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


@given(power_of_two_tori())
@PROPERTY
def test_bitcomplement_complements_every_coordinate_and_fixes_nothing(topology):
    m = assert_bijection(make_pattern("bitcomplement", topology, seed=0))
    assert fixed_points(m) == 0
    for a in range(0, topology.num_nodes, 5):
        assert topology.coords(int(m[a])) == tuple(
            k - 1 - c for k, c in zip(topology.dims, topology.coords(a)))


@given(tori.filter(lambda d: max(d) >= 3))
@PROPERTY
def test_tornado_shifts_each_coordinate_by_ceil_k_half_minus_one(dims):
    t = Torus(dims)
    m = assert_bijection(make_pattern("tornado", t, seed=0))
    for a in range(0, t.num_nodes, 5):
        assert t.coords(int(m[a])) == tuple(
            (c + math.ceil(k / 2) - 1) % k for k, c in zip(dims, t.coords(a)))
    # no fixed points once some dimension has k >= 3 (size 1 and 2 dimensions shift by 0)
    assert fixed_points(m) == 0


def test_tornado_shifts_by_3_on_k8_and_by_7_on_k16():
    t = Torus((8, 16))
    p = make_pattern("tornado", t, seed=0)
    assert t.coords(p.destination(t.node((1, 1)), 0, None)) == (4, 8)


@given(st.integers(2, 500), st.integers(0, 2 ** 32), st.booleans())
@PROPERTY
def test_permutation_is_a_seeded_bijection_and_a_derangement_by_default(n, seed, derangement):
    p = make_pattern("permutation", path_graph(n) if n <= 64 else Torus((n,)), seed=seed,
                     derangement=derangement)
    m = assert_bijection(p)
    if derangement:
        assert fixed_points(m) == 0
    again = make_pattern("permutation", Torus((n,)), seed=seed, derangement=derangement)
    assert (again.mapping() == m).all()


def test_permutation_defaults_to_a_derangement_and_depends_on_the_seed():
    a = make_pattern("permutation", Torus((8, 8)), seed=1)
    b = make_pattern("permutation", Torus((8, 8)), seed=2)
    assert a.params == {"derangement": True}
    assert (a.mapping() != b.mapping()).any()
    assert make_pattern("permutation", Torus((2,)), seed=5).mapping().tolist() == [1, 0]


def test_permutation_without_derangement_may_fix_points():
    fixed = [fixed_points(make_pattern("permutation", Torus((16,)), seed=s,
                                       derangement=False).mapping()) for s in range(40)]
    assert any(fixed)                          # a uniform permutation fixes 1 point on average


def test_mapping_is_a_copy():
    p = make_pattern("bitcomplement", Torus((4, 4)), seed=0)
    p.mapping()[:] = 0
    assert p.destination(0, 0, None) == 15


# ---------------------------------------------------------------------------- butterfly


def test_butterfly_on_512_nodes_flips_bits_0_to_8_in_turn_then_starts_again():
    p = make_pattern("butterfly", Torus((8, 8, 8)), seed=0)
    for src in (0, 1, 100, 511):
        flipped = [(p.destination(src, i, None) ^ src).bit_length() - 1 for i in range(20)]
        assert flipped == [0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1]


def test_butterfly_on_8x8x8_exchanges_along_one_dimension_at_distance_1_2_4():
    t = Torus((8, 8, 8))
    p = make_pattern("fft", t, seed=0)
    for src in (0, 77, 300):
        for i in range(9):
            dst = p.destination(src, i, None)
            changed = [d for d in range(3) if t.coords(src)[d] != t.coords(dst)[d]]
            assert changed == [i // 3]
            assert t.distance(src, dst) == 2 ** (i % 3)


@given(power_of_two_tori(), st.data())
@PROPERTY
def test_butterfly_flips_bit_index_mod_b(topology, data):
    n = topology.num_nodes
    b = n.bit_length() - 1
    p = make_pattern("butterfly", topology, seed=0)
    src = data.draw(st.integers(0, n - 1))
    i = data.draw(st.integers(0, 10 ** 6))
    assert p.destination(src, i, None) == src ^ (1 << (i % b))


# ---------------------------------------------------------------------------- neighbor, alltoall


def test_neighbor_visits_the_six_neighbours_of_a_3d_torus_in_port_order():
    t = Torus((4, 4, 4))
    p = make_pattern("neighbor", t, seed=0)
    src = t.node((1, 2, 3))
    got = [p.destination(src, i, None) for i in range(12)]
    assert got[:6] == [t.neighbor(src, port) for port in range(6)]
    assert got[6:] == got[:6]
    assert len(set(got)) == 6


def test_neighbor_skips_absent_ports_at_a_mesh_edge_and_on_a_size_two_dimension():
    mesh = make_pattern("neighbor", Torus((4, 4), wrap=(False, False)), seed=0)
    assert [mesh.destination(0, i, None) for i in range(4)] == [1, 4, 1, 4]
    pair = make_pattern("neighbor", Torus((4, 2)), seed=0)          # y has only y+ at y = 0
    assert [pair.destination(0, i, None) for i in range(4)] == [1, 3, 4, 1]


@given(tori)
@PROPERTY
def test_neighbor_cycles_over_exactly_the_present_ports(dims):
    t = Torus(dims)
    p = make_pattern("neighbor", t, seed=0)
    for src in range(0, t.num_nodes, 11):
        present = [v for v in t.neighbor_table[src] if v >= 0]
        got = [p.destination(src, i, None) for i in range(2 * len(present))]
        assert got == present * 2
        assert all(t.distance(src, v) == 1 for v in got)


@given(st.integers(2, 300), st.data())
@PROPERTY
def test_alltoall_reaches_every_other_node_once_in_any_n_minus_1_messages(n, data):
    p = make_pattern("alltoall", Torus((n,)), seed=0)
    src = data.draw(st.integers(0, n - 1))
    start = (n - 1) * data.draw(st.integers(0, 5)) + data.draw(st.integers(0, n - 1))
    got = [p.destination(src, i, None) for i in range(start, start + n - 1)]
    assert sorted(got) == sorted(set(range(n)) - {src})


def test_alltoall_starts_with_the_next_node_and_works_on_a_graph():
    p = make_pattern("alltoall", path_graph(5), seed=0)
    assert [p.destination(3, i, None) for i in range(5)] == [4, 0, 1, 2, 4]


# ---------------------------------------------------------------------------- uniform, hotspot

def chi_square(counts):
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


def chi2_limit(categories: int) -> float:
    """The 0.1 % upper quantile of the chi-square distribution of ``categories`` - 1 degrees of
    freedom: a uniform draw exceeds it once in a thousand seeds (103.4 for 63; the limit was
    150, p = 2e-9, which a visibly skewed pattern passes)."""
    from scipy.stats import chi2
    return float(chi2.ppf(0.999, categories - 1))


def test_the_chi_square_limit_catches_one_node_drawn_too_often():
    """Over 25,200 draws among 63 nodes, one node drawn 630 times where 400 are expected (the
    others evenly less) exceeds the limit; the old limit of 150 passed it."""
    counts = np.full(63, 400.0)
    counts[0] = 630
    counts[1:] -= 230 / 62
    assert 150 > chi_square(counts) > chi2_limit(63)


def test_uniform_is_uniform_over_the_other_nodes():
    n, draws = 65, 65 * 400
    p = make_pattern("uniform", Torus((5, 13)), seed=0)
    rng = np.random.default_rng(2024)
    counts = np.bincount([p.destination(9, i, rng) for i in range(draws)], minlength=n)
    assert counts[9] == 0
    assert chi_square(np.delete(counts, 9)) < chi2_limit(n - 1)


def test_uniform_with_include_self_is_uniform_over_all_nodes():
    n, draws = 64, 64 * 400
    p = make_pattern("uniform", Torus((8, 8)), seed=0, include_self=True)
    rng = np.random.default_rng(2025)
    counts = np.bincount([p.destination(9, i, rng) for i in range(draws)], minlength=n)
    assert counts[9] > 0
    assert chi_square(counts) < chi2_limit(n)


@given(st.integers(2, 200), st.integers(0, 2 ** 32))
@PROPERTY
def test_uniform_never_addresses_the_source_and_is_deterministic(n, seed):
    p = make_pattern("uniform", Torus((n,)), seed=0)
    for src in {0, n // 2, n - 1}:
        a = [p.destination(src, i, np.random.default_rng(seed)) for i in range(50)]
        rng = np.random.default_rng(seed)
        b = [p.destination(src, i, rng) for i in range(50)]
        assert src not in b and all(0 <= d < n for d in b)
        assert a == [b[0]] * 50                     # same stream state, same answer
        rng = np.random.default_rng(seed)
        assert [p.destination(src, i, rng) for i in range(50)] == b


@pytest.mark.parametrize("include_self", [False, True])
def test_uniform_stays_in_range_at_the_extremes_of_the_random_double(include_self):
    n = 1000003                                            # not a power of two
    p = make_pattern("uniform", Graph(n, ()), seed=0, include_self=include_self)
    assert p.destination(n - 1, 0, ExtremeRng(LARGEST_BELOW_ONE)) == (n - 1 if include_self
                                                                      else n - 2)
    assert p.destination(0, 0, ExtremeRng(LARGEST_BELOW_ONE)) == n - 1
    assert p.destination(0, 0, ExtremeRng(0.0)) == (0 if include_self else 1)


def test_hotspot_sends_about_fraction_to_the_hotspot():
    n, draws = 64, 20000
    p = make_pattern("hotspot", Torus((8, 8)), seed=0)          # fraction 0.1, node 0
    rng = np.random.default_rng(11)
    dst = np.array([p.destination(5, i, rng) for i in range(draws)])
    assert (dst != 5).all()
    # the uniform branch lands on the hotspot too: 0.1 + 0.9/63
    assert abs((dst == 0).mean() - (0.1 + 0.9 / (n - 1))) < 0.01
    others = np.bincount(dst, minlength=n)[1:][np.arange(1, n) != 5]
    assert chi_square(others) < chi2_limit(len(others))


def test_hotspot_with_several_nodes_shares_the_fraction_among_them():
    n, draws = 64, 30000
    hot = [3, 40, 63]
    p = make_pattern("hotspot", Torus((4, 4, 4)), seed=0, fraction=0.3, nodes=hot)
    rng = np.random.default_rng(12)
    dst = np.array([p.destination(10, i, rng) for i in range(draws)])
    for h in hot:
        assert abs((dst == h).mean() - (0.1 + 0.7 / (n - 1))) < 0.01


def test_hotspot_fraction_one_sends_only_to_hotspots_and_zero_is_uniform_without_self():
    rng = np.random.default_rng(13)
    always = make_pattern("hotspot", Torus((4, 4)), seed=0, fraction=1.0, nodes=[6, 9])
    assert {always.destination(2, i, rng) for i in range(200)} == {6, 9}
    never = make_pattern("hotspot", Torus((4, 4)), seed=0, fraction=0.0, nodes=[6])
    got = {never.destination(2, i, rng) for i in range(2000)}
    assert got == set(range(16)) - {2}


def test_hotspot_stays_in_range_at_the_edges_of_the_draw():
    # with fraction 0.3 the largest draw rescales to exactly 1.0: the clamp must catch it
    assert (LARGEST_BELOW_ONE - 0.3) / (1 - 0.3) == 1.0
    p = make_pattern("hotspot", Torus((4, 4)), seed=0, fraction=0.3, nodes=[4, 5, 6])
    just_below = float(np.nextafter(0.3, 0.0))
    assert p.destination(0, 0, ExtremeRng(just_below)) == 6
    assert p.destination(0, 0, ExtremeRng(0.0)) == 4
    assert p.destination(0, 0, ExtremeRng(0.3)) == 1
    assert p.destination(0, 0, ExtremeRng(LARGEST_BELOW_ONE)) == 15
    assert p.destination(15, 0, ExtremeRng(LARGEST_BELOW_ONE)) == 14


# ---------------------------------------------------------------------------- documentation


def test_the_docstring_examples_run():
    result = doctest.testmod(patterns_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("topology", [Torus((4, 2, 2, 2)), path_graph(15)], ids=["4x2x2x2", "p15"])
def test_tornado_over_the_index_shifts_every_node_almost_half_way_round(topology):
    n = topology.num_nodes
    p = make_pattern("tornado", topology, seed=0, over="index")
    assert p.mapping().tolist() == [(s + (n + 1) // 2 - 1) % n for s in range(n)]
    with pytest.raises(PatternError, match="over must be"):
        make_pattern("tornado", topology, seed=0, over="rows")
