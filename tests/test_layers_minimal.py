"""Destination-based minimal tables: one shortest path per pair, a BFS tree per destination."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import Graph, Torus
from icsim.routing.layers.minimal import minimal_next_ports, minimal_table

regular_graphs = st.tuples(st.integers(3, 5), st.integers(6, 20), st.integers(0, 10_000)).filter(
    lambda t: t[0] * t[1] % 2 == 0).map(lambda t: Graph.random_regular(t[1], t[0], t[2]))


@given(regular_graphs, st.sampled_from(["lowest_port", "random"]), st.integers(0, 99))
@settings(max_examples=40, deadline=None)
def test_every_route_is_a_shortest_path(graph, tie_break, seed):
    table = minimal_table(graph, tie_break=tie_break, seed=seed)
    table.validate()
    for s, t in table.pairs():
        assert len(table.route(s, t)) == graph.distance(s, t)


@given(regular_graphs, st.integers(0, 99))
@settings(max_examples=20, deadline=None)
def test_routes_to_one_destination_form_a_tree(graph, seed):
    """Destination-based: wherever a route towards t passes node u, it leaves by one port."""
    table = minimal_table(graph, tie_break="random", seed=seed)
    port_at = {}
    for s, t in table.pairs():
        for u, port in table.channel_path(s, t):
            assert port_at.setdefault((u, t), port) == port


def test_lowest_port_takes_the_lowest_neighbour_among_shortest_ones():
    square = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    table = minimal_table(square)
    assert table.node_path(0, 2) == [0, 1, 2]
    assert table.node_path(1, 3) == [1, 0, 3]


def test_random_tie_break_is_seeded_and_does_choose_among_minimal_paths():
    g = Graph.random_regular(32, 4, seed=3)
    a = minimal_next_ports(g, tie_break="random", seed=5)
    assert (a == minimal_next_ports(g, tie_break="random", seed=5)).all()
    assert (a != minimal_next_ports(g, tie_break="random", seed=6)).any()
    assert (a != minimal_next_ports(g, tie_break="lowest_port")).any()


def test_works_on_a_torus_too():
    torus = Torus((4, 3))
    table = minimal_table(torus, tie_break="random", seed=1)
    for s, t in table.pairs():
        assert len(table.route(s, t)) == torus.distance(s, t)


def test_bad_tie_break_is_refused_with_the_valid_names():
    with pytest.raises(ValueError, match="lowest_port, random"):
        minimal_table(Graph.random_regular(8, 3, seed=1), tie_break="shortest")
    with pytest.raises(ValueError, match="needs a seed"):
        minimal_table(Graph.random_regular(8, 3, seed=1), tie_break="random")
