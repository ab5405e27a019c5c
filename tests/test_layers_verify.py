"""Verification names what is wrong: the route, the layer, the cycle and who closes it."""

import pytest

from icsim.model.topology import Graph
from icsim.routing.layers import get_assigner
from icsim.routing.layers.minimal import minimal_table
from icsim.routing.layers.verify import LayerVerificationError, verify_assignment, verify_layers


@pytest.fixture
def ring5():
    return minimal_table(Graph.from_edges(5, [(i, (i + 1) % 5) for i in range(5)]))


def one_layer(table):
    return {p: (0,) * len(r) for p, r in table.routes.items()}


def test_one_layer_on_a_ring_is_refused_with_the_cycle_and_the_routes_closing_it(ring5):
    check = verify_layers(ring5, one_layer(ring5))
    assert not check.ok and check.cycle_layer == 0
    # the cycle is one direction around the ring: five channels, each leading to the next
    nodes = [u for u, _ in check.cycle]
    succ = [ring5.topology.neighbor(u, p) for u, p in check.cycle]
    assert len(nodes) == 5 and succ == nodes[1:] + nodes[:1]
    # each dependency of the cycle is induced by a 2-hop route named in the message
    assert len(check.cycle_routes) == 5
    for (s, t), a, b in zip(check.cycle_routes, check.cycle, check.cycle[1:] + check.cycle[:1]):
        assert ring5.channel_path(s, t) == [a, b]
    message = check.problems[0]
    assert message.startswith("layer 0: dependency cycle ")
    assert " -> ".join(f"{u}->{v}" for u, v in zip(nodes, succ)) in message
    assert all(f"{s}->{t}" in message for s, t in check.cycle_routes)
    with pytest.raises(LayerVerificationError, match="dependency cycle"):
        check.raise_if_failed()


def test_a_layer_that_rises_along_a_route_is_named(ring5):
    layers = get_assigner("acro")(ring5).layers
    s, t = next(p for p, ls in layers.items() if ls == (1, 0))
    layers = dict(layers)
    layers[(s, t)] = (0, 1)
    check = verify_layers(ring5, layers)
    assert not check.ok
    assert f"route {s}->{t}: layer rises from 0 to 1 at hop 1" in check.problems[0]


def test_labels_that_do_not_decrease_break_theorem_1(ring5):
    a = get_assigner("acro")(ring5)
    flipped = {x: {c: -o for c, o in order.items()} for x, order in a.orders.items()}
    check = verify_layers(ring5, a.layers, orders=flipped)
    assert not check.ok and "Theorem 1" in check.problems[0]


def test_missing_or_short_layers_and_a_wrong_count_are_reported(ring5):
    a = get_assigner("lash")(ring5)
    layers = dict(a.layers)
    del layers[(0, 2)]
    layers[(0, 3)] = ()
    check = verify_layers(ring5, layers, num_layers=a.num_layers + 1)
    text = "\n".join(check.problems)
    assert "route 0->2: needs 2 layers, one per hop, got None" in text
    assert "route 0->3: needs 2 layers, one per hop, got 0" in text
    assert f"claims {a.num_layers + 1} layers but its routes use {a.num_layers}" in text


def test_every_assigner_passes_on_the_ring(ring5):
    for name in ("acro", "lash", "lash_tor"):
        assert verify_assignment(ring5, get_assigner(name)(ring5)).ok
