"""The SimPy network model: exact zero-load latency, conservation, throughput, the bubble rule."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icsim.model.topology import Torus
from icsim.simulator.engines import DeadlockError
from icsim.simulator.simulation import Simulation, run
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
    first = max(wl.open.source(s).t for s in range(engine.spec.num_nodes))
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


# --------------------------------------------------------------- oldest first under ack/nak
def _port(vcs):
    """A real ack/nak protocol (the SimPy engine's :class:`AckNakFlow`) on a 4x4 torus whose
    ports have ``vcs`` VCs; its port 0 (node 0, x+) is the one driven below."""
    import dataclasses

    import numpy as np

    from icsim.simulator.build import build
    from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
    from icsim.traffic.workloads import scheduled

    spec = build(small_config((4, 4), router={"flow_control": "ack_nak"})).spec
    spec = dataclasses.replace(spec, vcs=spec.vcs * vcs, window=None, horizon_ps=None)
    flow = SimpyEngine(spec, scheduled("collective", []),
                       RandomStream(np.random.default_rng(0))).flow
    assert type(flow).__name__ == "AckNakFlow" and flow.fab.V == vcs
    return flow


def _packet(age):
    from icsim.model.packet import Packet
    return Packet(pid=age, src=0, dst=1, birth=0, age=age, measured=True)


def _send(flow):
    """What the decision phase does on port 0's idle channel: the head it sends
    (``oldest_unrejected``) leaves its queue; (vc, packet), or (-1, None)."""
    pq = flow.fab.port_queues[0]
    vc = flow.oldest_unrejected(0, pq)
    return (vc, pq[vc].popleft()) if vc >= 0 else (-1, None)


def _answer(flow, vc, packet, nak):
    """The receiver's ACK (the slot is freed) or NAK (the packet goes back into its queue)
    reaches port 0: the protocol's own ``ack``."""
    flow.fab.occ[vc] += 1                      # the slot the packet held, freed by an ACK
    flow.ack(vc, packet if nak else None)       # port 0's queues are 0 .. V - 1


@given(ages=st.lists(st.integers(0, 5), min_size=2, max_size=8, unique=True),
       sends=st.integers(1, 40))
@settings(max_examples=100, deadline=None)
def test_while_every_packet_sent_is_rejected_each_vc_gets_the_channel_in_turn(ages, sends):
    """Under ack/nak a port sends its oldest head, passing over the VCs rejected this round:
    with every packet rejected, the first round sends the V heads oldest first, and each
    round after it the V - 1 VCs but the last one rejected, so every VC is sent at least once
    in any 2 (V - 1) sends, however old its head (before, two VCs rejected in turn kept a
    third off the channel).  The protocol itself answers: each NAK puts the packet back."""
    V = len(ages)
    flow = _port(V)
    for vc, age in enumerate(ages):
        flow.fab.port_queues[0][vc].append(_packet(age))
    sent = []
    for _ in range(sends):
        vc, packet = _send(flow)
        assert packet.age == ages[vc]
        sent.append(vc)
        _answer(flow, vc, packet, nak=True)
        assert [q[0].age for q in flow.fab.port_queues[0]] == ages     # back in its place
    by_age = sorted(range(V), key=lambda v: ages[v])
    assert sent[:V] == by_age[:sends]                               # the first round
    window = 2 * (V - 1)
    for i in range(len(sent) - window + 1):
        assert set(sent[i:i + window]) == set(range(V))


@given(steps=st.lists(st.tuples(st.sampled_from(["send", "send", "ack", "nak", "arrive"]),
                                st.integers(0, 7)), max_size=60))
@settings(max_examples=300, deadline=None)
def test_with_two_vcs_the_round_is_the_last_rejected_vc_passed_over(steps):
    """With two VCs the rule is the one it replaced: the oldest head, but not the VC whose last
    packet was rejected while the other has one (an ACK of that VC ends it), so two-VC runs
    (DOR, ABR, single-layer tables) keep their results.  Packets are sent, answered in any
    order while in flight (ACK or NAK, by the protocol's own ``ack``) and arrive; each send
    must pick the VC the rule names."""
    flow = _port(2)
    pq = flow.fab.port_queues[0]
    in_flight, nak, age = [], -1, 0
    for op, arg in steps:
        if op == "arrive":
            age += 1
            pq[arg % 2].append(_packet(age))
        elif op == "send":
            heads = [q[0].age if q else None for q in pq]
            expected = -1
            for v in range(2):
                if heads[v] is not None and v != nak and (expected < 0
                                                          or heads[v] < heads[expected]):
                    expected = v
            if expected < 0 and nak >= 0 and heads[nak] is not None:
                expected = nak
            vc, packet = _send(flow)
            assert vc == expected, (heads, nak)
            if packet is not None:
                in_flight.append((vc, packet))
        elif in_flight:
            vc, packet = in_flight.pop(arg % len(in_flight))
            _answer(flow, vc, packet, nak=op == "nak")
            nak = vc if op == "nak" else (-1 if nak == vc else nak)


def test_ofr_under_ack_nak_and_oldest_first_delivers_a_whole_all_to_all():
    """OFR's three VCs under ack/nak with oldest-first arbitration: this all-to-all on a 4x6
    torus deadlocked while the rule passed over only the last rejected VC (an adaptive and an
    escape VC rejected in turn kept the other escape VC's packets off the channel); every
    packet now arrives, in both engines alike."""
    cfg = small_config((4, 6), seed=7, routing={"algorithm": "ofr"},
                       router={"flow_control": "ack_nak", "arbitration": "oldest_first",
                               "tie_break": "ordered", "queue_packets": 16},
                       traffic={"workload": "collective", "collective": "alltoall",
                                "message_bytes": 2048})
    simpy, compiled = (dict(run(cfg, engine=engine)) for engine in ENGINES)
    for r in (simpy, compiled):
        r.pop("wall_s"), r.pop("engine")
    assert simpy["packets_delivered"] == 24 * 23 * 4
    assert simpy["retransmissions"] > 0
    assert compiled == simpy


def test_the_compiled_engine_declines_more_vcs_than_a_round_has_bits():
    """The kernel keeps a port's round as a bit per VC (``layout.T_NAK_MASK``); beyond
    ``MAX_ROUND_VCS`` VCs under ack/nak and oldest-first arbitration it says so, and ``auto``
    runs the SimPy engine, whose rounds have no such bound."""
    import dataclasses

    from icsim.simulator.build import build
    from icsim.simulator.engines.compiled import layout as kernel
    from icsim.simulator.engines.compiled import supports

    spec = build(small_config((4, 4), router={"flow_control": "ack_nak"})).spec
    assert supports(spec) is None
    assert spec.num_vcs == 1
    many = dataclasses.replace(spec, vcs=spec.vcs * (kernel.MAX_ROUND_VCS + 1))
    assert f"{kernel.MAX_ROUND_VCS + 1} VCs" in supports(many)
    assert supports(dataclasses.replace(many, arbitration="escape_priority")) is None
    assert supports(dataclasses.replace(many, flow_control="credit")) is None
