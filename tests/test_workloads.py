"""Workloads: the generator delivers the load asked for, the stop-and-wait NIC cap, collectives
and trace replay."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.config import ConfigError
from icsim.model.topology import Torus
from icsim.simulator.build import from_dict as config_from_dict  # schema and build checks
from icsim.simulator.simulation import run
from tests.conftest import small_config


@pytest.mark.parametrize("arrivals", ["deterministic", "exponential"])
@pytest.mark.parametrize("dims,window_us", [((4, 4), 800.0), ((8, 8), 500.0)])
def test_measured_offered_load_equals_the_configured_load(arrivals, dims, window_us):
    # one-packet messages: ~25k messages in the window, so Poisson noise is ~0.6 %
    r = run(small_config(dims, traffic={"load": 0.2, "message_packets": 1, "arrivals": arrivals},
                         run={"warmup_us": 20, "measure_us": window_us, "drain_us": 50}))
    assert r["offered_measured_load"] == pytest.approx(0.2, rel=0.02)
    assert r["accepted_load"] == pytest.approx(0.2, rel=0.03)


def test_a_window_no_message_is_created_in_is_a_config_error_naming_run_measure_us():
    """A node creates a 96-packet message every 98.3 µs at load 0.1 on 4x4 (aligned, from
    t = 0): a 40 µs window after 5 µs of warm-up holds none, and its record, measuring nothing,
    would read as a sustained load.  A window of 800 µs holds 8 messages of every node."""
    traffic = {"load": 0.1, "message_packets": 96, "phase": "aligned"}
    with pytest.raises(ConfigError) as err:
        run(small_config((4, 4), traffic=traffic,
                         run={"warmup_us": 5, "measure_us": 40, "drain_us": 5}))
    assert err.value.path == "run.measure_us"
    assert ("no message is created inside the measurement window (5 to 45 µs): at load 0.1 a "
            "node creates a 96-packet message every 98.3 µs") in str(err.value)
    r = run(small_config((4, 4), traffic=traffic,
                         run={"warmup_us": 5, "measure_us": 800, "drain_us": 400}))
    assert r["packets_measured"] == 16 * 8 * 96 and not r["saturated"]


def test_a_zero_load_window_run_is_still_allowed():
    """Load 0 creates no message on purpose (the bench's warm start, an idle network)."""
    r = run(small_config((3, 3), traffic={"load": 0},
                         run={"warmup_us": 0.1, "measure_us": 0.1, "drain_us": 0.1}))
    assert r["packets_measured"] == 0 and r["packet_hops"] == 0


def test_aligned_phase_creates_every_nodes_messages_at_the_same_instants():
    cfg = small_config((4, 4), traffic={"load": 0.5, "message_packets": 2, "phase": "aligned"},
                       run={"mode": "finite", "messages_per_node": 3})
    r = run(cfg)
    assert r["packets_delivered"] == 16 * 3 * 2
    # with aligned bursts every node's first message is created at t = 0
    from icsim.simulator.simulation import Simulation
    wl = Simulation(cfg).model.workload
    assert {wl.open.source(s).t for s in range(16)} == {0}


def test_the_stop_and_wait_nic_caps_injection_at_0_8_gamma0_on_an_8x8x8_torus():
    # docs/model.md §5a.3: tick 204.8/2.4 ns, round trip 64+80+1.25+80 ns -> one packet
    # per 3 ticks = 256 ns, i.e. 0.8 of the γ = 1 rate (one packet per 204.8 ns).  Nearest-
    # neighbour traffic keeps the network out of the way.
    r = run(small_config((8, 8, 8), nic={"handshake": "stop_and_wait"},
                         traffic={"pattern": "neighbor", "load": 2.0, "message_packets": 6},
                         run={"warmup_us": 10, "measure_us": 20, "drain_us": 0}))
    assert r["accepted_load"] == pytest.approx(0.8, rel=0.02)


def test_without_the_handshake_the_same_nic_injects_faster():
    r = run(small_config((8, 8), traffic={"pattern": "neighbor", "load": 2.0,
                                          "message_packets": 4},
                         run={"warmup_us": 10, "measure_us": 20, "drain_us": 0}))
    assert r["accepted_load"] > 1.0


def alltoall_config(link_gbps, packet_bytes=32768, algorithm="dor"):
    return config_from_dict({
        "topology": {"kind": "torus", "dims": [4, 2, 2, 2]},
        "packet": {"size_bytes": packet_bytes},
        "link": {"bandwidth_gbps": link_gbps, "latency_ns": 200},
        "routing": {"algorithm": algorithm},
        "traffic": {"workload": "collective", "collective": "alltoall",
                    "message_bytes": 1 << 20}})


def test_an_alltoall_of_1mb_messages_completes_on_4x2x2x2():
    r = run(alltoall_config(20.0))
    assert not r["saturated"]
    assert r["packets_delivered"] == 32 * 31 * 32          # 1 MiB = 32 packets of 32 KiB
    assert r["completion_time_ns"] == max(r["finish_time_ns"])


def test_alltoall_at_zero_contention_matches_its_serialisation_bound():
    # Links 80x faster than the NICs: only NIC serialisation limits.  Node s posts its 31
    # messages (32 packets each) at t = 0 in step order; step i goes to s + i.  Its NIC sends
    # 31*32 packets back to back (S/B_nic each); the last one goes to s - 1 (step 31).  Node d
    # therefore cannot finish before the last packet from d + 1 arrives:
    #   31*32*S/B_nic + λ_nic + h(d+1 -> d) (S/B_link + λ_link) + S/B_nic + λ_nic.
    # It may finish slightly later: where consecutive steps' paths shorten, two streams meet at
    # the ejection link (as fast as the injection link) and the later one keeps a small lag.
    topo = Torus((4, 2, 2, 2))
    S = 32768
    ser_nic = S * 8 / 64.0
    ser_link = S * 8 / 5120.0
    r = run(alltoall_config(5120.0))
    bounds = []
    for d in range(32):
        s = (d + 1) % 32
        h = topo.distance(s, d)
        bound = 31 * 32 * ser_nic + 80 + h * (ser_link + 200) + ser_nic + 80
        bounds.append(bound)
        assert bound - 1e-6 <= r["finish_time_ns"][d] <= bound * 1.001, d
    assert r["completion_time_ns"] == pytest.approx(max(bounds), rel=1e-3)


def test_neighbor_and_transpose_exchanges_send_the_right_messages():
    cfg = alltoall_config(20.0).model_copy(update={"traffic": alltoall_config(20.0).traffic
                                                    .model_copy(update={"collective": "neighbor"})})
    r = run(cfg)
    # 4x2x2x2: x ring of 4 (2 neighbours) + 3 mesh links = 5 neighbours, 32 packets each
    assert r["packets_delivered"] == 32 * 5 * 32
    cfg = config_from_dict({"topology": {"kind": "torus", "dims": [4, 4]},
                            "traffic": {"workload": "collective", "collective": "transpose",
                                        "message_bytes": 2048}})
    r = run(cfg)
    assert r["packets_delivered"] == (16 - 4) * 4        # diagonal nodes send nothing


def test_a_trace_is_replayed_as_recorded(tmp_path, table1):
    trace = tmp_path / "t.csv"
    trace.write_text("time_ns,src,dst,bytes\n0,0,1,512\n1000,3,0,1024\n")
    r = run(config_from_dict({"topology": {"kind": "torus", "dims": [4, 4]},
                              "traffic": {"workload": "trace", "trace": str(trace)}}))
    assert r["packets_delivered"] == 3
    one_hop = 2 * (64 + 80) + (204.8 + 200)
    assert r["finish_time_ns"][1] == pytest.approx(one_hop)
    # the second message: 2 packets, 1 hop, back to back behind the slower link
    assert r["finish_time_ns"][0] == pytest.approx(1000 + one_hop + 204.8)


@pytest.mark.parametrize("body,reason", [
    ("time_ns,src,dst,bytes\n0,0,99,512\n", ":2: "),
    ("time_ns,src,dst,bytes\n10,0,1,512\n5,1,0,512\n", ":3: "),
])
def test_a_bad_trace_is_a_config_error_naming_file_and_line(tmp_path, body, reason):
    trace = tmp_path / "bad.csv"
    trace.write_text(body)
    with pytest.raises(ConfigError) as err:
        config_from_dict({"topology": {"kind": "torus", "dims": [4, 4]},
                          "traffic": {"workload": "trace", "trace": str(trace)}})
    assert err.value.path == "traffic.trace"
    assert f"bad.csv{reason}" in str(err.value)


def test_an_interleaved_exchange_sends_the_same_packets_round_robin():
    from icsim.traffic.workloads import collective_messages
    topo = Torus((4, 4))
    seq = collective_messages("alltoall", topo, 4 * 512, 512, 0)
    inter = collective_messages("alltoall", topo, 4 * 512, 512, 0, interleave=True)
    from collections import Counter

    def packets(msgs):
        c = Counter()
        for _, s, d, p in msgs:
            c[(s, d)] += p
        return c

    assert packets(seq) == packets(inter) and all(p == 1 for *_, p in inter)
    node0 = [d for _, s, d, _ in inter if s == 0]
    assert node0[:15] == [(0 + i) % 16 for i in range(1, 16)]     # one packet to each first


# ----------------------------------------------------------------------------- a job's nodes
jobs_of_4x4 = st.lists(st.integers(0, 15), min_size=2, max_size=16, unique=True)


@settings(max_examples=40, deadline=None)
@given(job=jobs_of_4x4)
def test_an_alltoall_on_a_jobs_nodes_sends_once_between_every_ordered_pair_of_them(job):
    from icsim.traffic.workloads import collective_messages
    msgs = collective_messages("alltoall", Torus((4, 4)), 1024, 512, 0, nodes=job)
    pairs = [(s, d) for _, s, d, _ in msgs]
    assert sorted(pairs) == sorted((s, d) for s in job for d in job if s != d)
    assert all(p == 2 for *_, p in msgs)
    # rank r's step i goes to rank r + i
    first = [d for _, s, d, _ in msgs[:len(job)]]
    assert first == [job[(r + 1) % len(job)] for r in range(len(job))]


@settings(max_examples=40, deadline=None)
@given(job=jobs_of_4x4)
def test_a_neighbor_exchange_on_a_jobs_nodes_uses_exactly_the_links_inside_the_job(job):
    from icsim.traffic.workloads import collective_messages
    topo = Torus((4, 4))
    msgs = collective_messages("neighbor", topo, 512, 512, 0, nodes=job)
    inside = sorted((s, v) for s in job for v in topo.neighbor_table[s] if v in job)
    assert sorted((s, d) for _, s, d, _ in msgs) == inside


def test_a_permutation_on_a_job_maps_ranks_and_coordinate_patterns_are_refused():
    from icsim.traffic.patterns import PatternError
    from icsim.traffic.workloads import collective_messages
    job = [3, 5, 8, 13, 14, 15]
    msgs = collective_messages("tornado", Torus((4, 4)), 512, 512, 0, {"over": "index"},
                               nodes=job)
    assert [(s, d) for _, s, d, _ in msgs] == [(job[r], job[(r + 2) % 6]) for r in range(6)]
    with pytest.raises(PatternError, match="tornado: needs a torus"):
        collective_messages("tornado", Torus((4, 4)), 512, 512, 0, nodes=job)
    with pytest.raises(PatternError, match="transpose: a job of 6 ranks has 6 nodes, not a "
                                           "perfect square"):
        collective_messages("transpose", Torus((4, 4)), 512, 512, 0, nodes=job)


@pytest.mark.parametrize("traffic,reason", [
    ({"nodes": [0, 1]}, "apply to the collective workload, not 'open'"),
    ({"workload": "collective", "nodes": [0, 16]}, "node 16 is not in the topology"),
    ({"workload": "collective", "nodes": [0, 3, 0]}, "node 0 is listed twice"),
    ({"workload": "collective", "nodes": [4]}, "at least 2 nodes, got 1"),
])
def test_bad_job_nodes_are_a_config_error_naming_traffic_nodes(traffic, reason):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": traffic})
    assert err.value.path == "traffic.nodes"
    assert reason in str(err.value)
