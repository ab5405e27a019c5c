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


def _networkx(graph):
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, succ in graph.items() for b in succ)
    return g


def _assert_is_a_cycle_of(cycle, graph):
    assert len(set(cycle)) == len(cycle) >= 1                  # simple: no channel twice
    for a, b in zip(cycle, cycle[1:] + cycle[:1]):
        assert b in graph[a], (a, b)


graphs = st.integers(1, 12).flatmap(lambda n: st.dictionaries(
    st.integers(0, n - 1), st.sets(st.integers(0, n - 1), max_size=4), min_size=1))


@given(graphs)
@settings(max_examples=500, deadline=None)
def test_find_cycle_finds_a_cycle_exactly_when_networkx_says_the_graph_is_cyclic(graph):
    """The oracle behind every layer and table check: a false "acyclic" would pass a table that
    can deadlock.  Random digraphs (self-loops, 2-cycles, vertices only named as successors
    included) against networkx's acyclicity test."""
    import networkx as nx

    cycle = find_cycle(graph)
    assert (cycle is None) == nx.is_directed_acyclic_graph(_networkx(graph))
    if cycle is not None:
        _assert_is_a_cycle_of(cycle, graph)


@given(st.lists(st.lists(st.integers(0, 9), min_size=2, max_size=6), max_size=12),
       st.booleans())
@settings(max_examples=300, deadline=None)
def test_the_dependency_graph_of_paths_is_cyclic_exactly_when_networkx_says_so(raw, exempt):
    """Paths over the channels (c, c + 1 mod 10) of a 10-ring, with and without an exemption:
    find_cycle agrees with networkx on the graph dependency_graph builds, and that graph has
    exactly the consecutive-channel edges the paths make."""
    import networkx as nx

    paths = [[(c, (c + 1) % 10) for c in p] for p in raw]
    rule = (lambda a, b: a[0] == 9) if exempt else None
    g = dependency_graph(paths, exempt=rule)
    edges = {(a, b) for p in paths for a, b in zip(p, p[1:]) if rule is None or not rule(a, b)}
    assert {(a, b) for a, succ in g.items() for b in succ} == edges
    cycle = find_cycle(g)
    assert (cycle is None) == nx.is_directed_acyclic_graph(_networkx(g))
    if cycle is not None:
        _assert_is_a_cycle_of(cycle, g)


def test_a_cycle_reachable_only_late_in_a_deep_graph_is_found():
    """A 100,000-vertex chain (iterative search: no recursion limit) whose last vertex closes a
    cycle back to the middle."""
    n = 100_000
    graph = {v: {v + 1} for v in range(n)}
    graph[n] = {n // 2}
    cycle = find_cycle(graph)
    assert cycle is not None and len(cycle) == n - n // 2 + 1
    _assert_is_a_cycle_of(cycle, graph)
    graph[n] = set()
    assert find_cycle(graph) is None


@given(graphs)
@settings(max_examples=300, deadline=None)
def test_cycle_in_edges_finds_a_cycle_exactly_when_networkx_says_the_graph_is_cyclic(graph):
    """The edge-array form the build's dependency check uses (strong components, then Kahn's
    peeling), on the same random digraphs."""
    import networkx as nx
    import numpy as np

    from icsim.routing.deadlock import cycle_in_edges

    edges = [(a, b) for a, succ in graph.items() for b in succ]
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    cycle = cycle_in_edges(12, src, dst)
    assert (cycle is None) == nx.is_directed_acyclic_graph(_networkx(graph))
    if cycle is not None:
        _assert_is_a_cycle_of(cycle, graph)
