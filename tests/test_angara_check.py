"""The Angara table checker: route shape, the first bad route, dependency cycles."""

import pytest

from icsim.model.topology import Torus
from icsim.routing.table import RoutingTable, TableError
from icsim.routing.tables.check import (AngaraRuleError, DeadlockError, assert_angara, check_table,
                                        route_violation)


def dor_table(topo):
    """Dimension order in the Angara direction order: positive moves by dimension, then
    negative moves by dimension."""
    routes = {}
    for s in range(topo.num_nodes):
        for t in range(topo.num_nodes):
            if s == t:
                continue
            off = topo.offsets(s, t)
            pos = [2 * d for d, o in enumerate(off) for _ in range(max(o, 0))]
            neg = [2 * d + 1 for d, o in enumerate(off) for _ in range(max(-o, 0))]
            routes[(s, t)] = tuple(pos + neg)
    return RoutingTable(topo, routes)


@pytest.mark.parametrize("ports", [[], [0, 0, 2], [2, 0], [0, 2, 1, 3], [3, 1], [0, 3, 1],
                                   [2, 0, 3, 1], [0, 1], [4, 0, 2, 5, 1]])
def test_angara_shapes_are_accepted(ports):
    assert route_violation(Torus((4, 4, 4)), ports) is None


@pytest.mark.parametrize("ports,hop,words", [
    ([0, 2, 0], 2, "against the direction order"),
    ([1, 0], 1, "both signs of dimension 0"),
    ([3, 1, 1], 2, "follows the last negative step"),
    ([2, 0, 3, 2], 3, "both signs of dimension 1"),
    ([4, 2, 0], 2, "against the direction order"),
])
def test_a_broken_shape_names_the_hop_and_the_reason(ports, hop, words):
    bad = route_violation(Torus((4, 4, 4)), ports)
    assert bad is not None and bad[0] == hop and words in bad[1]


def test_dimension_order_tables_pass_both_checks():
    for dims in [(4, 4), (3, 5), (4, 2, 2, 2)]:
        report = check_table(dor_table(Torus(dims)))
        assert report.ok and report.cycle is None


def test_a_staircase_of_first_steps_is_reported_with_its_cycle():
    topo = Torus((3, 3))
    table = dor_table(topo)
    n = topo.node
    # x+ y+ (dimension order) and y+ x+ (a first step out of order) alternate around the torus
    for a, b in [((1, 0), (2, 1)), ((2, 1), (0, 2)), ((0, 2), (1, 0))]:
        table.routes[(n(a), n(b))] = (2, 0)
    report = check_table(table)
    assert report.shape_violation is None and not report.deadlock_free
    cycle = report.cycle
    assert len(cycle) == 6 and {p for _, p in cycle} == {0, 2}
    for (u, p), (v, _) in zip(cycle, cycle[1:] + cycle[:1]):
        assert topo.neighbor(u, p) == v                      # consecutive channels
    assert set(report.cycle_pairs) >= {(n((1, 0)), n((2, 1))), (n((0, 0)), n((1, 1)))}
    with pytest.raises(DeadlockError, match="channel dependency cycle") as err:
        assert_angara(table)
    assert err.value.cycle == cycle


def test_the_first_route_breaking_the_shape_is_named_with_its_hop():
    topo = Torus((4, 4))
    table = dor_table(topo)
    table.routes[(5, 0)] = (1, 3)                  # x- y-: fine
    table.routes[(2, 9)] = (3, 1, 2, 2, 2)         # y-, x- (a last step), then y+: hop 2
    table.routes[(9, 2)] = (2, 2, 0)               # y+ y+ x+: broken too, but a later pair
    with pytest.raises(AngaraRuleError) as err:
        assert_angara(table)
    assert err.value.pair == (2, 9) and err.value.hop == 2
    assert "route 2->9: hop 2" in str(err.value)


def test_a_malformed_table_names_the_first_bad_entry():
    topo = Torus((4, 2))
    table = dor_table(topo)
    table.routes[(0, 4)] = (3,)              # y- does not exist at y = 0
    with pytest.raises(TableError, match=r"route 0->4: hop 0 takes port 3"):
        check_table(table)
    table = dor_table(topo)
    del table.routes[(1, 2)]
    with pytest.raises(TableError, match=r"route 1->2: missing"):
        check_table(table)


def test_a_cycle_through_a_ring_segment_and_turns_is_a_deadlock():
    # the bubble keeps a ring moving, not the packets queued in it to turn out: (0, x+) waits
    # for (1, x+) (same ring), whose packets wait to turn into (2, y+), ... back to (0, x+)
    from icsim.routing.tables.check import cross_ring_cycle
    from icsim.routing.tables.generators import generate

    topo = Torus((3, 3))
    routes = dict(generate("sssp", topo).routes)
    routes.update({(0, 5): (0, 0, 2), (2, 3): (2, 0), (5, 6): (0, 2), (3, 0): (2, 2),
                   (6, 1): (2, 0)})
    report = check_table(RoutingTable(topo, routes))
    assert report.shape_violation is None and not report.deadlock_free
    assert report.describe_cycle(topo) == ("(1, x+) -> (2, y+) -> (5, x+) -> (3, y+) -> "
                                           "(6, y+) -> (0, x+)")
    assert report.cycle_pairs == [(0, 5), (2, 3), (5, 6), (3, 0), (6, 1), (0, 5)]
    assert sorted(cross_ring_cycle(RoutingTable(topo, routes))) == sorted(report.cycle)
