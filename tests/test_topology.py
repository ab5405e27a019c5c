"""The topology value: ids, ports, offsets, distances, load factors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import ABSENT, Graph, Torus

dims_strategy = st.lists(st.integers(1, 6), min_size=1, max_size=4)


@given(dims_strategy, st.data())
@settings(max_examples=60, deadline=None)
def test_ids_and_coordinates_round_trip_first_dimension_fastest(dims, data):
    t = Torus(tuple(dims))
    node = data.draw(st.integers(0, t.num_nodes - 1))
    c = t.coords(node)
    assert t.node(c) == node
    assert node == sum(x * s for x, s in zip(c, t.strides))
    assert t.strides[0] == 1


@given(dims_strategy, st.data())
@settings(max_examples=60, deadline=None)
def test_distance_is_a_metric_and_equals_bfs_hops(dims, data):
    t = Torus(tuple(dims))
    a = data.draw(st.integers(0, t.num_nodes - 1))
    b = data.draw(st.integers(0, t.num_nodes - 1))
    assert t.distance(a, b) == t.distance(b, a)
    # breadth-first search over the neighbour table gives the same hop count
    seen, frontier, d = {a}, [a], 0
    while b not in seen:
        d += 1
        frontier = [v for u in frontier for v in t.neighbor_table[u] if v != ABSENT and v not in seen]
        seen.update(frontier)
    assert t.distance(a, b) == d


def test_size_two_dimension_is_one_link_each_way():
    t = Torus((4, 2))
    assert t.neighbor(0, 2) == 4 and t.neighbor(0, 3) == ABSENT   # y+ exists, y- does not
    assert t.neighbor(4, 3) == 0 and t.neighbor(4, 2) == ABSENT
    assert t.num_channels == 8 * 2 + 8


def test_mesh_dimension_has_no_wraparound():
    t = Torus((4, 4), wrap=(False, True))
    assert t.neighbor(3, 0) == ABSENT
    assert t.distance(0, 3) == 3
    assert t.distance(0, 12) == 1


def test_minimal_ports_offer_both_directions_at_half_ring_but_dor_goes_positive():
    t = Torus((8, 8))
    assert t.minimal_ports(0, 4) == (0, 1)
    assert t.minimal_ports(0, 4, both_on_tie=False) == (0,)
    assert t.dor_port(0, 4) == 0
    assert t.dor_port(0, 7 + 8 * 3) == 1          # x offset -1 first


@pytest.mark.parametrize("dims,expected", [((8, 8, 8), 1.0), ((16, 16, 16), 2.0),
                                           ((5,), 24 / 40), ((4, 2, 2, 2), 0.5), ((8, 8, 16), 2.0)])
def test_channel_load_factor_matches_spec(dims, expected):
    assert Torus(dims).max_channel_load_factor == pytest.approx(expected)


def test_graph_ports_follow_neighbour_order_and_reject_bad_edges():
    g = Graph.from_edges(4, [(2, 0), (0, 1), (1, 2), (2, 3)])
    assert g.adjacency[2] == (0, 1, 3)
    assert g.port_to(2, 3) == 2
    with pytest.raises(ValueError, match="not connected"):
        Graph.from_edges(4, [(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="appears twice"):
        Graph.from_edges(3, [(0, 1), (1, 0), (1, 2)])


def test_random_regular_is_regular_connected_and_seeded():
    g1, g2 = Graph.random_regular(32, 3, seed=7), Graph.random_regular(32, 3, seed=7)
    assert g1 == g2
    assert {len(a) for a in g1.adjacency} == {3}
    assert (g1.distances >= 0).all()


@given(dims=st.lists(st.integers(2, 5), min_size=1, max_size=3), data=st.data())
@settings(max_examples=40, deadline=None)
def test_relative_offset_tables_agree_with_the_per_pair_answers(dims, data):
    t = Torus(tuple(dims))
    a = data.draw(st.integers(0, t.num_nodes - 1))
    b = data.draw(st.integers(0, t.num_nodes - 1))
    r = t.relative(a, b)
    assert 0 <= r < t.relative_size <= 2 ** t.n * t.num_nodes
    port = t.dor_port_table[r]
    assert port == (t.dor_port(a, b) if a != b else 255)
    mask = t.minimal_mask_table(both_on_tie=True)[r]
    assert [p for p in range(t.num_ports) if mask >> p & 1] == list(t.minimal_ports(a, b))


def test_a_failed_link_takes_out_both_directions_and_a_failed_node_every_link():
    t = Torus((4, 4), failed_links=[(5, 2)], failed_nodes=[0])   # 5 -y+-> 9
    assert t.neighbor(5, 2) == ABSENT and t.neighbor(9, 3) == ABSENT
    assert all(t.neighbor(0, p) == ABSENT for p in range(4))
    assert all(v != 0 for row in t.neighbor_table for v in row)
    assert t.num_channels == 64 - 2 - 8
    assert 0 not in t.alive_nodes and len(t.alive_nodes) == 15
    # the way round: 5 -> 9 now takes three hops (x, y, x back), 1 -> 0 is cut off
    assert t.hop_distances(5)[9] == 3 and t.hop_distances(1)[0] == -1


def test_failures_that_do_not_exist_are_refused():
    with pytest.raises(ValueError, match="no link"):
        Torus((4, 2), failed_links=[(0, 3)])          # the size-2 dimension's y- is absent
    with pytest.raises(ValueError, match="not a node"):
        Torus((4, 4), failed_nodes=[16])


@given(st.integers(1, 14).flatmap(lambda n: st.tuples(
    st.just(n), st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                        .filter(lambda e: e[0] != e[1]), max_size=3 * n))))
@settings(max_examples=200, deadline=None)
def test_graph_distances_are_networkx_shortest_path_lengths(drawn):
    """``Graph.distances`` builds and checks the minimal tables and normalises γ on graphs;
    against networkx's BFS on random graphs, connected or not (-1 where unreachable)."""
    import networkx as nx

    n, pairs = drawn
    edges = tuple(sorted({(min(u, v), max(u, v)) for u, v in pairs}))
    g = Graph(n, edges)
    reference = nx.Graph()
    reference.add_nodes_from(range(n))
    reference.add_edges_from(edges)
    expected = [[-1] * n for _ in range(n)]
    for s, lengths in nx.all_pairs_shortest_path_length(reference):
        for t, d in lengths.items():
            expected[s][t] = d
    assert g.distances.tolist() == expected
    assert all(g.distance(s, t) == expected[s][t] for s in range(n) for t in range(n))


def test_graph_distances_of_a_random_regular_graph_are_networkx_shortest_paths():
    import networkx as nx

    g = Graph.random_regular(64, 4, seed=3)
    reference = nx.Graph(list(g.edges))
    lengths = dict(nx.all_pairs_shortest_path_length(reference))
    assert g.distances.tolist() == [[lengths[s][t] for t in range(64)] for s in range(64)]
