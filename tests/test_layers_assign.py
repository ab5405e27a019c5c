"""ACRO, LASH and LASH-TOR: every assignment is deadlock-free by independent verification."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import Graph, Torus
from icsim.routing.deadlock import dependency_graph, find_cycle
from icsim.routing.layers import assigner_names, get_assigner
from icsim.routing.layers.acro import acro
from icsim.routing.layers.minimal import minimal_table
from icsim.routing.layers.verify import verify_assignment, verify_layers
from icsim.routing.table import RoutingTable

ASSIGNERS = ("acro", "lash", "lash_tor")


def ring(n):
    return Graph.from_edges(n, [(i, (i + 1) % n) for i in range(n)])


def all_paths(table):
    return [table.channel_path(s, t) for s, t in table.pairs()]


# ---------------------------------------------------------------------------- hand-checkable
@pytest.mark.parametrize("name", ASSIGNERS)
@pytest.mark.parametrize("n", [5, 7])
def test_an_odd_ring_needs_exactly_two_layers(name, n):
    """Each direction's 2-hop routes close a cycle around the ring; one more layer breaks it."""
    table = minimal_table(ring(n))
    assert find_cycle(dependency_graph(all_paths(table))) is not None
    a = get_assigner(name)(table)
    assert a.num_layers == 2
    assert verify_assignment(table, a).ok


@pytest.mark.parametrize("name", ASSIGNERS)
def test_a_tree_needs_one_layer(name):
    """Minimal routes on a tree have acyclic dependencies: nothing to break."""
    tree = Graph.from_edges(7, [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6)])
    table = minimal_table(tree)
    a = get_assigner(name)(table)
    assert a.num_layers == 1
    assert set(x for ls in a.layers.values() for x in ls) == {0}


def test_acro_on_a_5_ring_places_each_route_as_the_paper_prescribes():
    """Layer 0 is built from the destinations: the last hop of every route is in layer 0, and a
    route that cannot stay there climbs to layer 1 for its first hop only."""
    table = minimal_table(ring(5))
    a = acro(table)
    for (s, t), lay in a.layers.items():
        assert lay[-1] == 0
        assert lay in {(0,), (0, 0), (1, 0)}
        for (u, port), x in zip(table.channel_path(s, t), lay):
            assert a.vc[(t, (u, port))] == x


def test_acro_weights_stay_exact_on_a_deep_tree():
    """w grows like |N|**depth (here 60**59, far past int64); ACRO must not overflow."""
    line = Graph.from_edges(60, [(i, i + 1) for i in range(59)])
    table = minimal_table(line)
    a = acro(table)
    assert a.num_layers == 1 and verify_assignment(table, a).ok


def complete(n):
    return Graph.from_edges(n, [(u, v) for u in range(n) for v in range(u + 1, n)])


def test_acro_accepts_a_source_routed_table_with_acyclic_dependencies_per_destination():
    """Towards 4, channel 0->1 is followed by 1->4 on one route and by 1->3 on another: T_4 is a
    DAG, not a tree, and 0->1 may only be placed once both successors are."""
    k5 = complete(5)
    routes = {(s, t): (k5.port_to(s, t),) for s in range(5) for t in range(5) if s != t}
    routes[(0, 4)] = tuple(k5.port_to(u, v) for u, v in [(0, 1), (1, 4)])
    routes[(2, 4)] = tuple(k5.port_to(u, v) for u, v in [(2, 0), (0, 1), (1, 3), (3, 4)])
    table = RoutingTable(k5, routes)
    a = acro(table)
    assert verify_assignment(table, a).ok


def test_acro_refuses_routes_that_depend_cyclically_towards_one_destination():
    k4 = complete(4)
    routes = {(s, t): (k4.port_to(s, t),) for s in range(4) for t in range(4) if s != t}
    for a, b, c in [(0, 1, 2), (1, 2, 0), (2, 0, 1)]:        # a -> b -> c -> 3 for each rotation
        routes[(a, 3)] = (k4.port_to(a, b), k4.port_to(b, c), k4.port_to(c, 3))
    with pytest.raises(ValueError, match="towards node 3 depend on each other cyclically"):
        acro(RoutingTable(k4, routes))


# ---------------------------------------------------------------------------- registry
def test_registry_lists_the_assigners_and_refuses_unknown_names():
    assert assigner_names() == ("acro", "lash", "lash_tor", "lash_tor_conventional")
    with pytest.raises(ValueError, match=r"unknown layer assigner 'dfsssp' \(valid: acro, lash, "
                                         r"lash_tor, lash_tor_conventional\)"):
        get_assigner("dfsssp")


# ---------------------------------------------------------------------------- properties
regular_tables = st.tuples(st.integers(3, 6), st.integers(6, 24), st.integers(0, 10_000),
                           st.sampled_from(["lowest_port", "random"])).filter(
    lambda t: t[0] * t[1] % 2 == 0 and t[0] < t[1]).map(
    lambda t: minimal_table(Graph.random_regular(t[1], t[0], t[2]), tie_break=t[3], seed=t[2]))


@given(regular_tables)
@settings(max_examples=40, deadline=None)
def test_every_assignment_verifies(table):
    for name in ASSIGNERS:
        a = get_assigner(name)(table)
        check = verify_assignment(table, a)
        assert check.ok, (name, check.problems)
        assert check.num_layers == a.num_layers


@given(regular_tables)
@settings(max_examples=20, deadline=None)
def test_lash_keeps_a_route_in_one_layer_and_acro_by_destination_and_channel(table):
    lash = get_assigner("lash")(table)
    assert all(len(set(ls)) <= 1 for ls in lash.layers.values())
    a = acro(table)
    for s, t in table.pairs():
        assert a.layers[(s, t)] == tuple(a.vc[(t, c)] for c in table.channel_path(s, t))


def test_layers_are_independent_of_verification_orders():
    """Without the assigner's channel orders, the layers alone still verify."""
    table = minimal_table(Graph.random_regular(24, 4, seed=9), tie_break="random", seed=9)
    for name in ASSIGNERS:
        assert verify_layers(table, get_assigner(name)(table).layers).ok


def test_assignments_on_a_torus_verify():
    table = minimal_table(Torus((4, 4)), tie_break="random", seed=2)
    for name in ASSIGNERS:
        assert verify_assignment(table, get_assigner(name)(table)).ok


def test_acro_needs_no_more_layers_than_lash_on_average():
    """Not a theorem per instance; over fixed seeds ACRO's mean is at most LASH's."""
    counts = {name: 0 for name in ("acro", "lash")}
    for seed in range(1, 7):
        table = minimal_table(Graph.random_regular(48, 4, seed), tie_break="random", seed=seed)
        for name in counts:
            counts[name] += get_assigner(name)(table).num_layers
    assert counts["acro"] <= counts["lash"]


def test_an_assigned_table_round_trips_through_the_file_format(tmp_path):
    table = minimal_table(Graph.random_regular(12, 3, seed=4), tie_break="random", seed=4)
    a = get_assigner("lash_tor")(table)
    table.layers = None
    a.attach(table).save(tmp_path / "t.json")
    loaded = RoutingTable.load(tmp_path / "t.json")
    assert loaded.layers == a.layers and loaded.meta["num_layers"] == a.num_layers
    assert verify_layers(loaded).ok


def test_a_route_crossing_a_channel_twice_needs_a_layer_change():
    """0 -> 1 -> 0 -> 1 -> 2: no single layer holds it (LASH refuses), ACRO sees a cycle towards
    node 2, LASH-TOR splits it across two layers."""
    square = ring(4)
    table = minimal_table(square)
    table.routes[(0, 2)] = tuple(square.port_to(u, v) for u, v in [(0, 1), (1, 0), (0, 1), (1, 2)])
    with pytest.raises(ValueError, match="route 0->2 uses a channel twice"):
        get_assigner("lash")(table)
    with pytest.raises(ValueError, match="towards node 2 depend on each other cyclically"):
        acro(table)
    a = get_assigner("lash_tor")(table)
    assert len(set(a.layers[(0, 2)])) == 2 and verify_assignment(table, a).ok


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_conventional_lash_tor_check_gives_the_same_layers(seed):
    from icsim.routing.layers.lash_tor import lash_tor
    table = minimal_table(Graph.random_regular(32, 4, seed), tie_break="random", seed=seed)
    a, b = lash_tor(table), lash_tor(table, check="conventional")
    assert a.num_layers == b.num_layers and a.layers == b.layers
