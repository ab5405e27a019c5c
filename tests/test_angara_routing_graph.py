"""The Angara routing graph (§3.1): its size, Theorem 1 against a brute-force route checker,
and the deadlock-free augmentation (§3.2, Theorem 2)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import Torus
from icsim.routing.deadlock import find_cycle
from icsim.routing.tables.augment import (augmenting_turns, deadlock_free_routing_graph,
                                          direction_order_cdg, used_direction_sets)
from icsim.routing.tables.check import bubble_exempt
from icsim.routing.tables.routing_graph import (BEGIN_DIRBIT, BEGIN_END, BEGIN_FS, DIRBIT_DIRBIT,
                                                DIRBIT_END, DIRBIT_LS, FS_DIRBIT, FS_END, LS_END,
                                                build_routing_graph, direction_order, source_dag)


def rank_of(port, n):
    return (port >> 1) if port % 2 == 0 else n + (port >> 1)


# ----------------------------------------------------------------------------- brute force
def legal_route(topo, src, ports, turns):
    """Independent statement of the Angara rules: the node where ``ports`` ends if it is
    [first positive step] + direction-bit list in order + [last negative step], the out-of-order
    joins being allowed only where ``turns`` lists them; None otherwise."""
    n = topo.n
    path = [src]
    for p in ports:
        nxt = topo.neighbor(path[-1], p)
        if nxt < 0:
            return None
        path.append(nxt)
    m = len(ports)

    def dirbit_list(seq):
        ranks = [rank_of(p, n) for p in seq]
        signs = {}
        for p in seq:
            signs.setdefault(p >> 1, set()).add(p & 1)
        return ranks == sorted(ranks) and all(len(s) == 1 for s in signs.values())

    for f, l in itertools.product((0, 1), repeat=2):
        if f + l > m or (f and ports[0] % 2) or (l and ports[-1] % 2 == 0):
            continue
        mid = list(ports[f:m - l])
        if f and l and not mid:
            continue                                   # no FS -> LS edge (rule 2)
        if not dirbit_list(mid):
            continue
        if f and mid and not (rank_of(mid[0], n) > rank_of(ports[0], n)
                              or (path[0], ports[0], path[1], mid[0]) in turns):
            continue
        if l and mid and not (rank_of(ports[-1], n) > rank_of(mid[-1], n)
                              or (path[m - 2], mid[-1], path[m - 1], ports[-1]) in turns):
            continue
        return path[-1]
    return None


small_dims = st.lists(st.integers(1, 4), min_size=1, max_size=3)


# ----------------------------------------------------------------------------- sizes
def test_direction_order_in_ports_is_positive_dimensions_then_negative():
    assert direction_order(4) == (0, 2, 4, 6, 1, 3, 5, 7)
    assert direction_order(2) == (0, 2, 1, 3)


@pytest.mark.parametrize("dims", [(3,), (4, 3), (3, 3, 3), (3, 3, 3, 3)])
def test_every_node_has_3_to_the_n_plus_2n_plus_1_vertices_and_the_paper_edge_counts(dims):
    topo = Torus(dims)
    n, N = len(dims), topo.num_nodes
    g = build_routing_graph(topo)
    assert g.vertices_per_node == 3 ** n + 2 * n + 1
    assert g.num_vertices == N * (3 ** n + 2 * n + 1)
    count = {k: int(np.count_nonzero(g.kind == k)) // N for k in range(11)}
    # begin: n first steps + 2n single-direction lists + the empty route  (paper: n + 2n + 1)
    assert count[BEGIN_FS] + count[BEGIN_DIRBIT] + count[BEGIN_END] == 3 * n + 1
    # first step FS_j: 2n - j steps into a list  (paper: sum = (3n^2 - n) / 2), plus the end
    assert count[FS_DIRBIT] == (3 * n * n - n) // 2
    assert count[FS_END] == n
    # a list with last direction of rank r continues by the 2n - r directions not before it
    # (at most 2n, as the paper says), plus the end
    expected = 0
    for signs in itertools.product((0, 1, 2), repeat=n):
        if any(signs):
            used = [j if s == 1 else n + j for j, s in enumerate(signs) if s]
            expected += 2 * n - max(used)
    assert count[DIRBIT_DIRBIT] + count[DIRBIT_LS] == expected
    assert count[DIRBIT_END] == 3 ** n - 1
    assert count[LS_END] == n
    # the paper's C_E(n) = 2n 3^n + 1.5n^2 + 1.5n + 1 counts every list vertex as 2n edges and
    # leaves out the FS and list edges into end: it is an upper bound of the rest
    c_e = 2 * n * 3 ** n + 1.5 * n * n + 1.5 * n + 1
    assert g.num_edges / N - count[FS_END] - count[DIRBIT_END] <= c_e
    out_deg = np.diff(g.indptr).reshape(N, -1)
    lists = out_deg[:, n + 1:n + 3 ** n] - 1               # minus the edge into end
    assert lists.max() <= 2 * n


def test_size_two_dimensions_only_have_the_mesh_link():
    g = build_routing_graph(Torus((4, 2)))
    assert g.accepts(0, [2]) == 4 and g.accepts(0, [3]) is None
    assert g.accepts(4, [3]) == 0 and g.accepts(4, [2]) is None


# ----------------------------------------------------------------------------- Theorem 1
@given(small_dims, st.data())
@settings(max_examples=40, deadline=None)
def test_theorem_1_a_port_sequence_is_a_path_begin_to_end_iff_it_is_an_angara_route(dims, data):
    wrap = data.draw(st.lists(st.booleans(), min_size=len(dims), max_size=len(dims)))
    topo = Torus(tuple(dims), tuple(wrap))                   # lines of any size as well
    augmented = data.draw(st.booleans())
    turns = augmenting_turns(topo) if augmented else np.zeros((0, 4), dtype=int)
    g = build_routing_graph(topo, turns)
    allowed = {tuple(t) for t in turns.tolist()}
    src = data.draw(st.integers(0, topo.num_nodes - 1))
    max_len = 4 if topo.n <= 2 else 3
    for length in range(max_len + 1):
        for ports in itertools.product(range(topo.num_ports), repeat=length):
            assert g.accepts(src, ports) == legal_route(topo, src, ports, allowed), \
                (dims, augmented, src, ports)


@pytest.mark.parametrize("dims", [(4, 2, 2), (4, 4), (3, 2, 2), (2, 2, 2, 2), (6,)])
def test_minimal_subgraph_counts_each_minimal_route_exactly_once(dims):
    topo = Torus(dims)
    full = deadlock_free_routing_graph(topo)
    allowed = {tuple(t) for t in full.turns.tolist()}
    g = full.minimal()
    for src in range(topo.num_nodes):
        targets = [t for t in range(topo.num_nodes) if t != src]
        dag = source_dag(g, src, targets)
        for i, t in enumerate(targets):
            d = topo.distance(src, t)
            brute = [p for p in itertools.product(range(topo.num_ports), repeat=d)
                     if legal_route(topo, src, p, allowed) == t]
            assert dag.count[i] == len(brute) and dag.hops[i] == d
            assert sorted(dag.enumerate_routes(i)) == sorted(brute)


# ----------------------------------------------------------------------------- Theorem 2
def bubble_acyclic(topo, turns):
    cdg = direction_order_cdg(topo, turns, exempt=bubble_exempt(topo))
    return find_cycle(cdg) is None


@given(st.lists(st.tuples(st.integers(2, 5), st.booleans()), min_size=1, max_size=4))
@settings(max_examples=30, deadline=None)
def test_theorem_2_augmented_dependencies_stay_acyclic_under_the_bubble_rule(dims_wrap):
    topo = Torus(tuple(k for k, _ in dims_wrap), tuple(w for _, w in dims_wrap))
    turns = augmenting_turns(topo)
    assert bubble_acyclic(topo, turns)
    rank = [rank_of(p, topo.n) for p in range(topo.num_ports)]
    for u, p, v, q in turns.tolist():
        assert topo.neighbor(u, p) == v and rank[q] < rank[p] and p % 2 == q % 2


def test_rings_admit_no_turn_but_the_desmos_torus_admits_every_same_sign_one():
    assert len(augmenting_turns(Torus((5, 4, 3)))) == 0
    topo = Torus((4, 2, 2, 2))
    turns = augmenting_turns(topo)
    # every (first step after a later positive direction) and (last step after a later
    # negative direction) between existing channels: 144 on this torus
    assert len(turns) == 144
    B = used_direction_sets(topo)
    for u, p, v, q in turns.tolist():
        assert not B[v * topo.num_ports + q] & (1 << p)      # Theorem 2's condition held


def test_a_turn_the_theorem_refuses_would_close_a_cycle():
    topo = Torus((3, 3))
    # y+ then x+ is against the order; on rings x+ reaches y+ again, so B(x+) holds y+
    B = used_direction_sets(topo)
    assert B[topo.neighbor(0, 2) * 4 + 0] & (1 << 2)
    assert not bubble_acyclic(topo, np.array([[u, 2, topo.neighbor(u, 2), 0] for u in range(9)]))
