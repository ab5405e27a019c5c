"""The SimPy network model: exact zero-load latency, conservation, throughput, the bubble rule."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from icsim.simulator.engines import DeadlockError
from icsim.simulator.simulation import Simulation, run
from icsim.simulator.topology import Torus
from tests.conftest import send_one, small_config


def zero_load_ns(t1, h, delay_cycles=0, cycle_ns=0.8):
    """docs/model.md §4: 2 (S/B_nic + λ_nic) + h (S/B_link + λ_link) + (h + 1) delay cycles."""
    nic = t1["S"] * 8 / t1["B_nic"] + t1["lat_nic"]
    link = t1["S"] * 8 / t1["B_link"] + t1["lat_link"]
    return 2 * nic + h * link + (h + 1) * delay_cycles * cycle_ns


ENGINES = ["simpy", "compiled"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("flow", ["credit", "ack_nak"])
@pytest.mark.parametrize("dst,h", [(1, 1), (9, 2), (8 * 2 + 1, 3)])
def test_a_packet_at_zero_load_takes_exactly_the_formula_on_an_8x8_torus(table1, dst, h, flow,
                                                                          engine):
    got = send_one(small_config((8, 8), router={"flow_control": flow}), 0, dst, engine=engine)
    (hops, t), = got
    assert hops == h
    assert t == pytest.approx(zero_load_ns(table1, h), rel=1e-3)
    assert t == pytest.approx(zero_load_ns(table1, h), abs=1e-6)     # exact in fact


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("delay", [0, 3])
def test_zero_load_latency_on_a_mixed_size_torus_with_mesh_dimensions(table1, delay, engine):
    cfg = small_config((4, 2, 2, 2), router={"delay_cycles": delay})
    topo = Torus((4, 2, 2, 2))
    for dst in (1, 2, 6, 31):
        (hops, t), = send_one(cfg, 0, dst, engine=engine)
        h = topo.distance(0, dst)
        assert hops == h
        assert t == pytest.approx(zero_load_ns(table1, h, delay), abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_message_pipelines_behind_its_first_packet(table1, engine):
    # packets of one message leave the NIC back to back; the last one is limited by the
    # slower of NIC and link serialisation (the link, 204.8 ns per packet)
    got = send_one(small_config((8, 8)), 0, 1, packets=4, engine=engine)
    times = sorted(t for _, t in got)
    assert times[0] == pytest.approx(zero_load_ns(table1, 1), abs=1e-6)
    assert [b - a for a, b in zip(times, times[1:])] == pytest.approx([204.8] * 3, abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_self_addressed_packets_go_straight_to_ejection(table1, engine):
    (hops, t), = send_one(small_config((4, 4)), 5, 5, engine=engine)
    assert hops == 0 and t == pytest.approx(zero_load_ns(table1, 0), abs=1e-6)


@given(dims=st.sampled_from([(4,), (5,), (3, 3), (4, 4), (4, 2, 2), (3, 4)]),
       algorithm=st.sampled_from(["dor", "abr"]),
       load=st.floats(0.05, 2.0), seed=st.integers(0, 10_000),
       queue=st.integers(2, 4), stop_us=st.floats(2.0, 30.0),
       flow=st.sampled_from(["credit", "ack_nak"]),
       handshake=st.sampled_from(["none", "stop_and_wait"]),
       arbitration=st.sampled_from(["oldest_first", "escape_priority"]),
       switching=st.sampled_from(["store_and_forward", "virtual_cut_through"]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_packets_are_conserved_and_no_queue_exceeds_its_capacity(
        dims, algorithm, load, seed, queue, stop_us, flow, handshake, arbitration, switching):
    cfg = small_config(dims, seed=seed,
                       router={"queue_packets": queue, "flow_control": flow,
                               "arbitration": arbitration, "switching": switching},
                       nic={"handshake": handshake}, routing={"algorithm": algorithm},
                       traffic={"load": load, "message_packets": 4},
                       run={"warmup_us": 1, "measure_us": 10, "drain_us": 100})
    engine = Simulation(cfg, engine="simpy").engine      # stepped between SimPy events
    wl, env = engine.workload, engine.env
    engine.start_workload()
    first = max(int(wl.time[wl.src == s].min()) for s in range(engine.spec.num_nodes))
    stop = int(stop_us * 1e6) + first                # every node has created a message
    steps = 0
    while env.peek() < stop:
        env.step()                       # between steps the model is quiescent
        steps += 1
        if steps % 50 == 0:
            engine.check_invariants()
    engine.check_invariants()
    assert engine.tally.generated > 0 and steps > 0


def test_below_saturation_accepted_load_equals_offered_on_an_8x8_torus():
    r = run(small_config((8, 8), traffic={"load": 0.2, "message_packets": 16},
                         run={"warmup_us": 50, "measure_us": 400, "drain_us": 300}))
    assert not r["saturated"]
    assert r["accepted_load"] == pytest.approx(0.2, rel=0.03)
    assert r["packets_delivered"] == r["packets_measured"] > 0


def test_far_beyond_saturation_accepted_load_plateaus_and_is_flagged():
    def at(load):
        return run(small_config((8, 8), traffic={"load": load, "message_packets": 16},
                                run={"warmup_us": 30, "measure_us": 200, "drain_us": 50}))
    r1, r2 = at(1.0), at(1.6)
    assert r1["saturated"] and r2["saturated"]
    assert r1["accepted_load"] < 0.7 and r2["accepted_load"] < 0.7
    assert r2["accepted_load"] == pytest.approx(r1["accepted_load"], rel=0.1)


def ring_config(bubble):
    return small_config((8,), router={"bubble": bubble, "queue_packets": 2},
                        traffic={"load": 1.5, "message_packets": 8},
                        run={"warmup_us": 10, "measure_us": 50, "drain_us": 100,
                             "watchdog_us": 20})


def test_without_the_bubble_rule_a_one_vc_ring_deadlocks_and_the_watchdog_says_where():
    with pytest.raises(DeadlockError, match=r"port x\+ vc escape: 2/2 packets"):
        run(ring_config(bubble=False))


def test_with_the_bubble_rule_the_same_ring_run_completes():
    r = run(ring_config(bubble=True))
    assert r["packets_delivered"] > 0 and r["accepted_load"] > 0.2


def test_same_config_and_seed_give_identical_results_and_another_seed_differs():
    def once(seed):
        r = run(small_config((4, 4), seed=seed, traffic={"load": 0.3, "message_packets": 8},
                             run={"warmup_us": 5, "measure_us": 30, "drain_us": 50}))
        r.pop("wall_s")
        return r
    a, b, c = once(3), once(3), once(4)
    assert a == b
    assert a["latency_ns"] != c["latency_ns"]
    assert a["config"]["seed"] == 3 and c["seed"] == 4
