"""Angara tables on tori with failed links and nodes: a failed link is never used, failed nodes
are not routed, and pairs that cannot be routed deadlock-free on one VC are reported with the
reason, not hidden."""

import pytest

from icsim.model.topology import Torus
from icsim.routing.table import RoutingTable
from icsim.routing.tables.check import check_table
from icsim.routing.tables.faults import (UnroutableError, dor_blocked_pairs,
                                         fault_tolerant_routing_graph, random_failed_links,
                                         routability)
from icsim.routing.tables.generators import generate
from icsim.routing.tables.metrics import table_metrics

FAST = {"bfs": {}, "sssp": {}, "refined": {"max_moves": 5000},
        "optimal": {"time_limit_s": 20}}
# a faulty Desmos torus: links 0-1 (x), 5-1 (y), 22-23 (x) down, node 12 down
FAULTY = Torus((4, 2, 2, 2), failed_links=[(0, 0), (5, 3), (22, 0)], failed_nodes=[12])


@pytest.mark.parametrize("name", list(FAST))
def test_a_failed_link_or_node_is_never_used(name):
    table = generate(name, FAULTY, **FAST[name])
    assert 12 not in table.nodes and len(table.nodes) == 31
    for s, t in table.pairs():
        path = table.node_path(s, t)
        assert 12 not in path
        for u, p in table.channel_path(s, t):
            assert (u, p) not in FAULTY.failed_links
            assert FAULTY.neighbor(u, p) >= 0
        assert len(path) - 1 >= FAULTY.hop_distances(s)[t]
    report = check_table(table)
    assert report.shape_violation is None and report.deadlock_free
    m = table_metrics(table)
    assert m.channels == FAULTY.num_channels            # every working channel between nodes


def test_every_generator_agrees_on_what_is_routable():
    rep = routability(fault_tolerant_routing_graph(FAULTY))
    assert rep.ok and rep.pairs == 31 * 30
    # the dimension-order routes cross the failures: DOR cannot run this torus at all
    blocked = dor_blocked_pairs(FAULTY)
    assert (0, 1) in blocked and len(blocked) > 0


def test_a_node_whose_positive_links_fail_cannot_reach_upward():
    # node 0 of a 4x2 keeps only x- (out) and x+ from 3 (in): a route that starts negative
    # never turns positive, and one that ends positive never went negative before, so the
    # y = 1 row (nodes 4-7) is out of reach both ways
    topo = Torus((4, 2), failed_links=[(0, 0), (0, 2)])
    rep = routability(fault_tolerant_routing_graph(topo))
    assert rep.counts() == {"no-angara-route": 8}
    assert {(u.src, u.dst) for u in rep.unroutable} == (
        {(0, d) for d in (4, 5, 6, 7)} | {(s, 0) for s in (4, 5, 6, 7)})
    with pytest.raises(UnroutableError, match="8 of 56 pairs cannot be routed") as err:
        generate("sssp", topo)
    assert err.value.report.counts() == {"no-angara-route": 8}
    assert "no route of the Angara shape" in str(err.value)


def test_a_cut_off_node_is_reported_disconnected():
    line = Torus((3,), wrap=(False,), failed_links=[(0, 0)])
    rep = routability(fault_tolerant_routing_graph(line))
    assert rep.counts() == {"disconnected": 4}
    assert sorted((u.src, u.dst) for u in rep.unroutable) == [(0, 1), (0, 2), (1, 0), (2, 0)]


def test_a_turn_theorem_2_refuses_is_named():
    # node 28 of 4x4x4 lost x+ and y+: towards 33 every shortest Angara route starts z+ and
    # turns x+ against the order, which Theorem 2 refuses (z+ is used again after (44, x+))
    links = [(38, 4), (26, 0), (37, 2), (1, 4), (28, 2), (49, 2), (28, 0), (16, 0)]
    topo = Torus((4, 4, 4), failed_links=links)
    rep = routability(fault_tolerant_routing_graph(topo))
    assert rep.counts() == {"refused-turns": 1}
    bad = rep.unroutable[0]
    assert (bad.src, bad.dst, bad.route, bad.turns) == (28, 33, (4, 0, 2), ((28, 4, 44, 0),))
    assert "(28, z+) -> (44, x+)" in bad.describe(topo)
    with pytest.raises(UnroutableError, match="1 of 4032 pairs"):
        generate("bfs", topo)


def test_table_files_keep_the_failures(tmp_path):
    table = generate("sssp", FAULTY)
    table.save(tmp_path / "t.json")
    back = RoutingTable.load(tmp_path / "t.json")
    assert back.topology == FAULTY and back.routes == table.routes


def test_random_failed_links_are_distinct_links():
    import numpy as np

    links = random_failed_links(Torus((4, 2, 2, 2)), 8, np.random.default_rng(3))
    assert len(set(links)) == 8 and all(p % 2 == 0 for _, p in links)
    assert len(Torus((4, 2, 2, 2), failed_links=links).failed_links) == 16


@pytest.mark.parametrize("table", [{"generator": "sssp"},
                                   {"generator": "optimal", "options": {"sigma": False}},
                                   {"generator": "minimal", "layers": "acro"}])
def test_the_simulator_runs_a_degraded_torus_with_a_table(table):
    # an alltoall on a torus with a failed link and a failed node: only the 31 nodes in service
    # exchange (31 * 30 messages of one packet) and every one arrives
    from icsim.model.config import config_from_dict
    from icsim.simulator.simulation import run

    cfg = config_from_dict({
        "seed": 1, "topology": {"kind": "torus", "dims": [4, 2, 2, 2],
                                "failed_links": [[0, 1], [5, "y-"]], "failed_nodes": [12]},
        "packet": {"size_bytes": 4096},
        "routing": {"algorithm": "table", "table": table},
        "traffic": {"workload": "collective", "collective": "alltoall",
                    "message_bytes": 4096}})
    r = run(cfg)
    assert r["packets_delivered"] == 31 * 30 and r["completion_time_ns"] > 0


def test_a_job_on_a_failed_node_is_refused():
    from icsim.model.config import ConfigError
    from icsim.simulator.build import from_dict

    with pytest.raises(ConfigError, match="traffic.nodes"):
        from_dict({
            "topology": {"kind": "torus", "dims": [4, 2, 2, 2], "failed_nodes": [3]},
            "routing": {"algorithm": "table", "table": {"generator": "sssp"}},
            "traffic": {"workload": "collective", "nodes": [1, 2, 3]}})


def test_the_optimum_and_the_lp_bound_on_a_faulty_torus():
    from icsim.routing.tables.optimal import load_lower_bound

    bound = load_lower_bound(FAULTY, routes="deadlock-free")
    assert not bound.symmetric and bound.lp == pytest.approx(279 / 11)
    table = generate("optimal", FAULTY, sigma=False)
    assert table.meta["status"] == "optimal"
    assert table_metrics(table).max_load == table.meta["load_bound"] == bound.bound == 26
