"""The channel dependency graph and its cycle search."""

from hypothesis import given, settings, strategies as st

from icsim.routing.deadlock import dependency_graph, find_cycle, node_path_channels


def test_unidirectional_ring_routes_close_a_cycle():
    n = 5
    paths = [node_path_channels([(s + i) % n for i in range(3)]) for s in range(n)]
    cycle = find_cycle(dependency_graph(paths))
    assert cycle is not None and len(cycle) == n


def test_exempting_same_ring_dependencies_breaks_the_cycle():
    n = 5
    paths = [node_path_channels([(s + i) % n for i in range(3)]) for s in range(n)]
    assert find_cycle(dependency_graph(paths, exempt=lambda a, b: True)) is None


@given(st.lists(st.lists(st.integers(0, 30), min_size=2, max_size=6), max_size=30))
@settings(max_examples=100, deadline=None)
def test_a_reported_cycle_is_a_real_cycle_and_increasing_paths_are_acyclic(raw):
    paths = [[(c, c + 1) for c in p] for p in raw]
    g = dependency_graph(paths)
    cyc = find_cycle(g)
    if cyc is not None:
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            assert b in g[a]
    increasing = [sorted(set(p)) for p in paths]
    assert find_cycle(dependency_graph(increasing)) is None
