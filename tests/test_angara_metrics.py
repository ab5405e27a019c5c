"""Channel loads and the quality metrics of docs/model.md §8 on cases small enough to do by
hand."""

import numpy as np
import pytest

from icsim.model.topology import Torus
from icsim.routing.table import RoutingTable
from icsim.routing.tables.metrics import channel_loads, counted_channels, table_metrics


def test_clockwise_three_ring_by_hand():
    # routes 0->1, 1->2, 2->0 take one hop clockwise, the other three take two: every clockwise
    # channel carries 3 routes, every counter-clockwise one none.  Minimal routes would total
    # 6 hops over 6 channels: perfect load 1.
    t = Torus((3,))
    routes = {(s, d): (0,) * ((d - s) % 3) for s in range(3) for d in range(3) if s != d}
    m = table_metrics(RoutingTable(t, routes))
    assert (m.max_load, m.min_load, m.channels, m.max_d, m.total_load) == (3, 0, 6, 2, 9)
    assert m.perfect_load == 1.0
    assert m.sigma4 == pytest.approx(((3 * 2 ** 4 + 3 * 1 ** 4) / 6) ** 0.25)


def test_balanced_four_ring_is_perfect():
    t = Torus((4,))
    routes = {}
    for s in range(4):
        routes[(s, (s + 1) % 4)] = (0,)
        routes[(s, (s - 1) % 4)] = (1,)
    routes.update({(0, 2): (0, 0), (2, 0): (0, 0), (1, 3): (1, 1), (3, 1): (1, 1)})
    m = table_metrics(RoutingTable(t, routes))
    assert (m.max_load, m.min_load, m.sigma4, m.perfect_load, m.channels) == (2, 2, 0.0, 2.0, 8)


def test_a_subset_counts_the_channels_between_its_nodes_and_any_used_outside():
    t = Torus((4, 2))
    pair = RoutingTable(t, {(0, 1): (0,), (1, 0): (1,)}, nodes=(0, 1))
    m = table_metrics(pair)
    assert (m.channels, m.max_load, m.min_load, m.sigma4, m.nodes) == (2, 1, 1, 0.0, 2)
    # the same two nodes joined the long way round: the channels used outside count too
    detour = RoutingTable(t, {(0, 1): (1, 1, 1), (1, 0): (1,)}, nodes=(0, 1))
    loads = channel_loads(detour)
    mask = counted_channels(t, (0, 1), loads)
    assert mask.sum() == 5 and sorted(loads[mask].tolist()) == [0, 1, 1, 1, 1]
    m = table_metrics(detour)
    assert m.perfect_load == pytest.approx(2 / 5) and m.min_load == 0 and m.max_d == 3


def test_loads_count_each_route_once_per_channel():
    t = Torus((4, 4))
    table = RoutingTable(t, {(0, 5): (0, 2), (5, 0): (1, 3), (0, 1): (0,), (1, 0): (1,),
                             (1, 5): (2,), (5, 1): (3,), (0, 4): (2,), (4, 0): (3,),
                             (4, 5): (0,), (5, 4): (1,), (1, 4): (1, 2), (4, 1): (0, 3)},
                         nodes=(0, 1, 4, 5))
    loads = channel_loads(table)
    assert loads[0 * 4 + 0] == 2              # 0->5 and 0->1 leave 0 by x+
    assert loads[1 * 4 + 2] == 2              # 0->5 and 1->5 leave 1 by y+
    assert loads.sum() == 16
    assert np.count_nonzero(loads) == 8
