"""Concentration: several terminals per router, each with its own NIC, injection input and
ejection port, in both engines (docs/model.md §4).  A router of one terminal is the model as
before (the pinned results of ``tests/golden`` did not move)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from icsim.model.config import config_from_dict
from icsim.simulator.build import build
from icsim.simulator.engines.compiled.engine import CompiledEngine
from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
from icsim.simulator.simulation import run
from icsim.traffic.workloads import scheduled
from tests.golden.cases import pinned
from tests.test_model import zero_load_ns

ENGINES = ["simpy", "compiled"]
P = 3                                           # terminals per router


def ring(flow="credit", **sections):
    """A ring of 4 routers (a random 2-regular graph on 4 nodes), 3 terminals each."""
    data = {"seed": 1,
            "topology": {"kind": "random_regular", "nodes": 4, "degree": 2, "seed": 0,
                         "p": P},
            "routing": {"algorithm": "table", "generator": "minimal", "layers": "acro"},
            "router": {"flow_control": flow}}
    data.update(sections)
    return config_from_dict(data)


def deliver(cfg, messages, engine):
    """Run the messages ``(time_ps, src terminal, dst terminal, packets)``; the measured
    packets as the engine summarised them: the tally (per terminal ``sent`` and ``received``,
    the (hops, distance) ``pairs``) and every latency in ns, sorted."""
    model = build(cfg)
    spec = dataclasses.replace(model.spec, window=None, horizon_ps=None)
    workload = scheduled("collective", messages)
    if engine == "compiled":
        tally = CompiledEngine(spec, workload, np.random.default_rng(0)).run()
    else:
        tally = SimpyEngine(spec, workload, RandomStream(np.random.default_rng(0))).run()
    return tally, (tally.latencies.values() / 1000.0).tolist()


def test_terminals_are_numbered_router_by_router():
    topo = build(ring()).topology
    assert topo.num_nodes == 4 and topo.num_terminals == 12
    assert topo.terminal_routers.tolist() == [t // P for t in range(12)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("flow", ["credit", "ack_nak"])
def test_a_packet_at_zero_load_takes_the_formula_between_any_two_terminals(table1, flow, engine):
    cfg = ring(flow)
    topo = build(cfg).topology
    for src, dst in [(0, 1), (0, 3), (4, 11), (7, 2), (11, 6)]:
        tally, (t,) = deliver(cfg, [(0, src, dst, 1)], engine)
        h = topo.distance(src // P, dst // P)
        assert tally.sent[src] == tally.received[dst] == 1 and tally.pairs == {(h, h): 1}
        assert t == pytest.approx(zero_load_ns(table1, h), abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_terminal_has_its_own_ejection_port(table1, engine):
    # the three terminals of router 0 send to one another at once: each crosses its own
    # injection and ejection links, so none waits (one shared ejection port would serialise
    # them, 64 ns apart)
    tally, times = deliver(ring(), [(0, 0, 1, 1), (0, 1, 2, 1), (0, 2, 0, 1)], engine)
    assert tally.sent[:3] == tally.received[:3] == [1, 1, 1] and tally.pairs == {(0, 0): 3}
    assert times == pytest.approx([zero_load_ns(table1, 0)] * 3, abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_terminals_of_one_router_share_its_links(table1, engine):
    # two terminals of router 0 send to two terminals of a neighbour at once: the one link
    # between the routers carries both, one serialisation (204.8 ns) apart
    topo = build(ring()).topology
    v = topo.neighbor(0, 0)
    _, times = deliver(ring(), [(0, 0, P * v, 1), (0, 1, P * v + 1, 1)], engine)
    assert times[0] == pytest.approx(zero_load_ns(table1, 1), abs=1e-6)
    assert times[1] - times[0] == pytest.approx(512 * 8 / 20.0, abs=1e-6)


@pytest.mark.parametrize("flow", ["credit", "ack_nak"])
@pytest.mark.parametrize("load", [0.4, 1.5])
def test_both_engines_give_identical_results_with_several_terminals_per_router(flow, load):
    cfg = ring(flow, traffic={"pattern": "uniform", "load": load, "message_packets": 2},
               run={"warmup_us": 5, "measure_us": 20, "drain_us": 40})
    a, b = run(cfg, engine="simpy"), run(cfg, engine="compiled")
    assert pinned(a) == pinned(b)
    if load < 1:
        # γ per terminal: what every terminal offers, it delivers
        assert a["accepted_load"] == pytest.approx(load, rel=0.05)


@pytest.mark.parametrize("engine", ENGINES)
def test_every_packet_is_delivered_past_saturation(engine):
    cfg = ring(traffic={"pattern": "uniform", "load": 1.5, "message_packets": 2},
               run={"mode": "finite", "messages_per_node": 20})
    res = run(cfg, engine=engine)
    assert res["packets_generated"] == res["packets_delivered"] == 12 * 20 * 2
    assert not res["saturated"]
    assert res["topology"].endswith("3 terminals per node")
