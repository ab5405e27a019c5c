"""Table routing in the simulator: packets follow the table's source routes."""

from __future__ import annotations

import pytest

from icsim.model.config import ConfigError
from icsim.model.topology import Torus
from icsim.routing.table import RoutingTable
from icsim.simulator.build import build
from icsim.simulator.build import from_dict as config_from_dict  # schema and build checks
from icsim.simulator.engines import DeadlockError
from icsim.simulator.simulation import run
from tests.conftest import channel_crossings


def dor_table(topo: Torus) -> RoutingTable:
    routes = {}
    for s in range(topo.num_nodes):
        for t in range(topo.num_nodes):
            if s != t:
                u, ports = s, []
                while u != t:
                    p = topo.dor_port(u, t)
                    ports.append(p)
                    u = topo.neighbor(u, p)
                routes[(s, t)] = tuple(ports)
    return RoutingTable(topo, routes)


def cfg(extra_routing, dims=(4, 4), load=0.4, **run_over):
    return config_from_dict({
        "topology": {"kind": "torus", "dims": list(dims)},
        "routing": extra_routing,
        "traffic": {"load": load, "message_packets": 8},
        "run": {"warmup_us": 5, "measure_us": 40, "drain_us": 100, **run_over}})


def test_a_table_of_dor_routes_behaves_exactly_like_dor(tmp_path):
    path = tmp_path / "dor.json"
    dor_table(Torus((4, 4))).save(path)
    a = run(cfg({"algorithm": "table", "table": str(path)}))
    b = run(cfg({"algorithm": "dor"}))
    for key in ("latency_ns", "accepted_load", "hops", "packets_delivered", "events"):
        assert a[key] == b[key], key


def channel_packets(config, engine: str) -> dict[tuple[int, int], int]:
    """An all-to-all of one packet per pair on ``engine``: the packets on each channel."""
    n = build(config).spec.num_nodes
    return channel_crossings(config, [(s, t) for s in range(n) for t in range(n) if s != t],
                             engine)


def table_loads(table: RoutingTable) -> dict[tuple[int, int], int]:
    """The table's channel loads: how many of its routes cross each channel (node, port)."""
    topo = table.topology
    loads = {(u, p): 0 for u in range(topo.num_nodes) for p in range(topo.num_ports)
             if topo.neighbor(u, p) >= 0}
    for s, t in table.pairs():
        for channel in table.channel_path(s, t):
            loads[channel] += 1
    return loads


def detour_table() -> RoutingTable:
    """Every route on a 5-ring goes the + way, the long way round for half of the pairs."""
    return RoutingTable(Torus((5,)), {(s, t): (0,) * ((t - s) % 5)
                                      for s in range(5) for t in range(5) if s != t})


def sssp_table() -> RoutingTable:
    """The SSSP table of a 4x4 torus: balanced by its generator, irregular channel by channel."""
    from icsim.routing.tables.generators import generate
    return generate("sssp", Torus((4, 4)))


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
@pytest.mark.parametrize("make", [detour_table, sssp_table])
def test_every_packet_takes_exactly_its_table_route(tmp_path, make, engine):
    """An all-to-all of one packet per pair puts on each channel exactly the table's load of
    that channel (before, only the mean hop count was compared, which a packet taking another
    route of the same length passes)."""
    table = make()
    path = tmp_path / "table.json"
    table.save(path)
    dims = list(table.topology.dims)
    config = config_from_dict({"topology": {"kind": "torus", "dims": dims},
                               "routing": {"algorithm": "table", "table": str(path)}})
    loads = table_loads(table)
    assert channel_packets(config, engine) == loads
    assert len(set(loads.values())) > 1 or make is detour_table     # not uniform: telling
    r = run(config_from_dict({"topology": {"kind": "torus", "dims": dims},
                              "routing": {"algorithm": "table", "table": str(path)},
                              "traffic": {"workload": "collective", "collective": "alltoall",
                                          "message_bytes": 512}}), engine=engine)
    assert r["hops"] == pytest.approx(sum(loads.values()) / len(table.pairs()))


def test_a_table_for_another_topology_is_a_config_error(tmp_path):
    path = tmp_path / "t.json"
    dor_table(Torus((4, 4))).save(path)
    with pytest.raises(ConfigError, match="routing.table.file: .* was made for torus 4x4"):
        cfg({"algorithm": "table", "table": str(path)}, dims=(4, 2))


def test_a_malformed_table_names_the_first_bad_entry(tmp_path):
    topo = Torus((4, 4))
    table = dor_table(topo)
    doc = table.to_json()
    doc["routes"][3][2] = [0, 0]                     # wrong destination
    path = tmp_path / "bad.json"
    import json
    path.write_text(json.dumps(doc))
    s, t = doc["routes"][3][:2]
    with pytest.raises(ConfigError, match=rf"route {s}->{t}: ends at node"):
        cfg({"algorithm": "table", "table": str(path)})


def ring_table_with_layers(layered: bool) -> RoutingTable:
    """Unidirectional 6-ring, every route the + way: one VC has a cyclic dependency; two
    layers with a dateline at node 0 (hops after crossing 5 -> 0 drop to layer 0) do not."""
    topo = Torus((6,))
    routes, layers = {}, {}
    for s in range(6):
        for t in range(6):
            if s != t:
                n = (t - s) % 6
                routes[(s, t)] = (0,) * n
                # hop i leaves node s + i; hops after crossing the dateline 5 -> 0 use layer 0
                layers[(s, t)] = tuple(1 if s + i < 6 else 0 for i in range(n))
    return RoutingTable(topo, routes, layers=layers if layered else None)


@pytest.mark.parametrize("layered", [False, True])
def test_layers_make_a_cyclic_table_deadlock_free_without_bubbles(tmp_path, layered):
    path = tmp_path / "ring.json"
    ring_table_with_layers(layered).save(path)
    config = config_from_dict({
        "topology": {"kind": "torus", "dims": [6]},
        "router": {"bubble": False, "queue_packets": 2},
        "routing": {"algorithm": "table", "table": str(path)},
        "traffic": {"load": 2.0, "message_packets": 8},
        "run": {"warmup_us": 5, "measure_us": 40, "drain_us": 100, "watchdog_us": 20}})
    if layered:
        r = run(config)
        assert r["packets_delivered"] > 0
    else:
        with pytest.raises(DeadlockError):
            run(config)


def shortest_path_run(layers):
    return config_from_dict({
        "seed": 1, "topology": {"kind": "torus", "dims": [6, 6]},
        "routing": {"algorithm": "table", "generator": "minimal", "layers": layers},
        "traffic": {"load": 0.8, "message_packets": 16},
        "run": {"warmup_us": 10, "measure_us": 60, "drain_us": 60, "watchdog_us": 20}})


def test_shortest_path_tables_on_one_vc_have_a_cycle_and_deadlock_a_saturated_6x6_torus():
    from icsim.routing.deadlock import dependency_graph, find_cycle
    from icsim.simulator.simulation import Simulation

    sim = Simulation(shortest_path_run(None))
    table = sim.model.routing.table
    cycle = find_cycle(dependency_graph(table.channel_path(s, d) for s, d in table.pairs()))
    assert cycle is not None and len(cycle) >= 4
    # caught as a cycle of stuck channels, before the whole network stops
    with pytest.raises(DeadlockError, match=r"a cycle of \d+ channels .* -> node "):
        sim.run()


def test_acro_layers_make_the_same_tables_deadlock_free_at_the_same_load():
    from icsim.routing.layers.verify import verify_layers
    from icsim.simulator.simulation import Simulation

    sim = Simulation(shortest_path_run("acro"))
    assert verify_layers(sim.model.routing.table).ok
    assert len(sim.model.spec.vcs) >= 2 and not any(sim.model.spec.bubble)
    r = sim.run()                                    # the watchdog would raise
    assert r["packets_delivered"] > 0


# ----------------------------------------------------------------------------- a job's nodes
def tornado_job(generator=None, table=None, nodes=tuple(range(8))):
    return config_from_dict({
        "seed": 1, "topology": {"kind": "torus", "dims": [4, 2, 2, 2]},
        "packet": {"size_bytes": 4096},
        "routing": {"algorithm": "table", "generator": generator, "table": table},
        "traffic": {"workload": "collective", "collective": "tornado", "message_bytes": 1 << 20,
                    "nodes": list(nodes), "params": {"tornado": {"over": "index"}}}})


def test_a_tornado_job_on_8_nodes_with_sssp_tables_runs_at_link_speed_and_bfs_tables_do_not():
    # The 8-node job (a 4x2 plane of the Desmos torus), rank r -> r + 3.  SSSP's table for the
    # job gives every flow its own channels, so the exchange takes one message's serialisation
    # on a link (256 packets of 4 KiB at 20 Gb/s) plus a few packet times; BFS's table puts two
    # flows on channel (6, x-) and two on (5, y-), and head-of-line blocking in the one FIFO
    # per direction stretches it to about three.
    message_ns = 256 * 4096 * 8 / 20.0
    sssp = run(tornado_job("sssp"))
    bfs = run(tornado_job("bfs"))
    assert sssp["packets_delivered"] == bfs["packets_delivered"] == 8 * 256
    assert message_ns < sssp["completion_time_ns"] < 1.01 * message_ns
    assert bfs["completion_time_ns"] > 2 * message_ns


def test_a_table_file_must_cover_the_jobs_nodes(tmp_path):
    from icsim.routing.tables.generators import generate
    path = tmp_path / "job.json"
    generate("sssp", Torus((4, 2, 2, 2)), range(8)).save(path)
    assert run(tornado_job(table=str(path)))["packets_delivered"] == 8 * 256
    with pytest.raises(ConfigError, match=r"routing.table.file: .*job.json has no routes for node"
                                          r"\(s\) \[8, 9\]; .* all of traffic.nodes"):
        tornado_job(table=str(path), nodes=range(10))
    with pytest.raises(ConfigError, match=r"no routes for node\(s\) \[8, 9, 10"):
        config_from_dict({"topology": {"kind": "torus", "dims": [4, 2, 2, 2]},
                          "routing": {"algorithm": "table", "table": str(path)}})
