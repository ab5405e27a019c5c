"""Both engines run the same model: on the reference profile (ordered tie-breaks, aligned
deterministic arrivals, ack/nak, stop-and-wait NICs, finite runs) and with random tie-breaks
(both draw from the same stream), every field of the result record is the same — latency sums,
completion time, packet-hops, derouted counts — at a low and at a saturating load."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from icsim.configs import bundled
from icsim.model.config import ConfigError, config_from_dict, load_config
from icsim.simulator.engines import DeadlockError
from icsim.simulator.simulation import run

SHAPES = {"4x4x4": ("[4,4,4]", ("transpose3d", "bitreverse", "butterfly")),
          "8x8": ("[8,8]", ("transpose", "bitreverse", "butterfly"))}
ALGORITHMS = ("abr", "por", "ofr", "table")
LOADS = (0.1, 0.9)


def config(profile: str, dims: str, pattern: str, algorithm: str, load: float,
           extra: tuple[str, ...] = ()):
    overrides = [f"topology.dims={dims}", f"traffic.pattern={pattern}",
                 f"routing.algorithm={algorithm}", f"traffic.load={load}",
                 "traffic.message_packets=8", *extra]
    if algorithm == "table":
        overrides.append("routing.table.generator=sssp")
    if profile == "reference":
        overrides.append("run.messages_per_node=3")
    else:
        overrides += ["run.warmup_us=5", "run.measure_us=20", "run.drain_us=40"]
    return load_config(bundled("ofr", profile, "k8.yaml"), overrides)


def result(profile: str, dims: str, pattern: str, algorithm: str, load: float,
           engine: str, extra: tuple[str, ...] = ()) -> dict:
    r = dict(run(config(profile, dims, pattern, algorithm, load, extra), engine=engine))
    for volatile in ("wall_s", "engine"):
        r.pop(volatile)
    return r


CASES = [pytest.param(shape, pattern, algorithm, load,
                      marks=[] if (shape, pattern, load) == ("4x4x4", "transpose3d", 0.9)
                      else [pytest.mark.slow],
                      id=f"{shape}-{pattern}-{algorithm}-{load}")
         for shape, (_, patterns) in SHAPES.items() for pattern in patterns
         for algorithm in ALGORITHMS for load in LOADS]


@pytest.mark.parametrize("shape,pattern,algorithm,load", CASES)
def test_the_reference_profile_gives_the_same_record_in_both_engines(shape, pattern, algorithm,
                                                                     load):
    dims = SHAPES[shape][0]
    simpy = result("reference", dims, pattern, algorithm, load, "simpy")
    compiled = result("reference", dims, pattern, algorithm, load, "compiled")
    assert simpy["packets_delivered"] == simpy["packets_measured"] > 0
    assert compiled == simpy


@pytest.mark.parametrize("times", [("router.cycle_ns=0.7",),
                                   ("link.latency_ns=201.3", "router.cycle_ns=1.1")],
                         ids=["cycle-0.7ns", "latency-201.3ns-cycle-1.1ns"])
def test_ack_nak_off_the_clock_edges_gives_the_same_record_too(times):
    """The reference profile's times are whole clock cycles; with link times that are not,
    packets and ACKs arrive between edges, so ports are marked between decision phases, some
    busy past the coming edge (``fabric.mark_dirty`` leaves those off the dirty list)."""
    simpy = result("reference", "[4,4,4]", "transpose3d", "abr", 0.9, "simpy", times)
    assert simpy["packets_delivered"] == simpy["packets_measured"] > 0
    assert result("reference", "[4,4,4]", "transpose3d", "abr", 0.9, "compiled", times) == simpy


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("load", [0.1, pytest.param(0.9, marks=pytest.mark.slow)])
def test_random_tie_breaks_and_uniform_traffic_give_the_same_record_too(algorithm, load):
    simpy = result("clean", "[4,4,4]", "uniform", algorithm, load, "simpy")
    compiled = result("clean", "[4,4,4]", "uniform", algorithm, load, "compiled")
    assert compiled == simpy


def test_kernel_cached_says_whether_a_first_run_must_compile(tmp_path):
    """After a compiled run in this process numba's cache holds the kernel; an empty cache
    directory does not (the first run's compile announcement depends on that answer)."""
    import os
    import subprocess
    import sys

    from icsim.simulator.engines.compiled import kernel_cached

    result("reference", "[4,4]", "transpose", "abr", 0.1, "compiled")
    assert kernel_cached()
    code = "from icsim.simulator.engines.compiled import kernel_cached; print(kernel_cached())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("profile,dims,pattern", [("reference", "[4,4,4]", "transpose3d"),
                                                  ("clean", "[4,4,4]", "uniform")])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_prefetching_changes_nothing(monkeypatch, profile, dims, pattern, algorithm):
    """The kernel asks for rows ahead of use only on networks larger than the cache
    (``PREFETCH_ABOVE_BYTES``); forced on for a small one, at a saturating load, the record is
    still the SimPy engine's."""
    from icsim.simulator.engines.compiled import engine as compiled
    from icsim.simulator.engines.compiled import layout as kernel
    from icsim.simulator.simulation import Simulation

    simpy = result(profile, dims, pattern, algorithm, 0.9, "simpy")
    cfg = config(profile, dims, pattern, algorithm, 0.9)
    assert Simulation(cfg, engine="compiled").engine.a["prm"][kernel.K_PREFETCH] == 0
    monkeypatch.setattr(compiled, "PREFETCH_ABOVE_BYTES", -1)
    assert Simulation(cfg, engine="compiled").engine.a["prm"][kernel.K_PREFETCH] == 1
    assert result(profile, dims, pattern, algorithm, 0.9, "compiled") == simpy


@pytest.mark.parametrize("chunks", [(2, 3), (2, 4096)], ids=["exhausted", "many-per-slot"])
@pytest.mark.parametrize("profile,pattern", [("reference", "butterfly"), ("clean", "uniform")])
def test_event_chunks_change_nothing(monkeypatch, profile, pattern, chunks):
    """A wheel slot's events take rows from chunks of the event pool (``event_chunks``); with
    chunks of two rows — three in all, so that most events fall back to the free list, or
    thousands, so that a slot chains many — the record is still the SimPy engine's."""
    from icsim.simulator.engines.compiled import engine as compiled

    simpy = result(profile, "[4,4,4]", pattern, "ofr", 0.9, "simpy")
    monkeypatch.setattr(compiled, "event_chunks", lambda reserve, wsize: chunks)
    assert result(profile, "[4,4,4]", pattern, "ofr", 0.9, "compiled") == simpy


def test_an_action_due_at_an_edge_joins_the_no_op_there_and_both_count(tmp_path):
    """A batch between clock edges (0.8 ns) that leaves work for a decision makes the SimPy
    calendar schedule a no-op action at the next edge, unless one is due there; an action
    scheduled there afterwards joins that batch, and ``events`` counts both.  Messages created
    at 1.0, 1.3 and 1.6 ns: the first marks its NIC (a no-op at 1.6 ns), the second schedules
    the third's creation at 1.6 ns.  Then 3 posts, the no-op, and for each of the 3 packets
    the NIC's end, its arrival, the link's end, its arrival and the ejection's end, and the
    stop: 20 actions in both engines."""
    trace = tmp_path / "trace.csv"
    trace.write_text("time_ns,src,dst,bytes\n1.0,0,1,512\n1.3,2,3,512\n1.6,1,2,512\n")
    cfg = load_config(bundled("ofr", "clean", "k8.yaml"),
                      ["topology.dims=[4]", "routing.algorithm=dor", "traffic.workload=trace",
                       f"traffic.trace={trace}"])
    simpy, compiled = (dict(run(cfg, engine=engine)) for engine in ("simpy", "compiled"))
    for r in (simpy, compiled):
        r.pop("wall_s"), r.pop("engine")
    assert simpy["events"] == 20
    assert compiled == simpy


# ------------------------------------------------------------------ any small config
TORI = [(4,), (5,), (3, 3), (4, 4), (3, 5), (2, 4), (4, 2, 2), (3, 3, 3), (2, 2, 2, 2)]


@st.composite
def small_configs(draw) -> dict:
    """A config from most of the model's knobs on a network of at most 32 nodes, valid by
    construction: the algorithm fits the topology (POR and OFR deroute round rings of at least
    3 nodes; random regular graphs take tables), the pattern its size, a run lasts tens of µs."""
    pick = lambda *xs: draw(st.sampled_from(xs))                  # noqa: E731
    if draw(st.integers(0, 7)) == 0:
        nodes = pick(8, 10, 12)
        topology = {"kind": "random_regular", "nodes": nodes, "degree": 3,
                    "seed": draw(st.integers(0, 4))}
        algorithm, patterns = "table", ["uniform", "hotspot", "permutation", "alltoall"]
    else:
        dims = pick(*TORI)
        nodes = math.prod(dims)
        topology = {"kind": "torus", "dims": list(dims)}
        algorithm = pick("dor", "abr", "table", *(("por", "ofr") if min(dims) >= 3 else ()))
        if algorithm in ("dor", "table") and draw(st.booleans()):
            topology["wrap"] = [draw(st.booleans()) for _ in dims]
        patterns = ["uniform", "hotspot", "permutation", "tornado", "neighbor", "alltoall"]
        if nodes & (nodes - 1) == 0:
            patterns += ["bitreverse", "bitcomplement", "shuffle", "bitrotation", "butterfly"]
        if math.isqrt(nodes) ** 2 == nodes:
            patterns.append("transpose")
        if len(dims) == 3 and len(set(dims)) == 1:
            patterns.append("transpose3d")
    routing: dict = {"algorithm": algorithm}
    if algorithm == "table":
        generator = pick("sssp", "bfs", "minimal") if topology["kind"] == "torus" else "minimal"
        layers = pick(None, "acro", "lash", "lash_tor")
        routing["table"] = {"generator": generator, **({"layers": layers} if layers else {})}
    elif algorithm in ("por", "ofr"):
        routing[algorithm] = {"profit": pick("paper", "reference"),
                              "min_deroute_distance": pick(1, 2)}
        if algorithm == "ofr":
            routing["ofr"]["candidates"] = pick("paper", "reference")
    queue = pick(2, 3, 4, 8, 16)
    router = {"queue_packets": queue,
              "switching": pick("store_and_forward", "virtual_cut_through"),
              "flow_control": pick("credit", "ack_nak"),
              "arbitration": pick("oldest_first", "escape_priority"),
              "tie_break": pick("random", "ordered"), "cycle_ns": pick(0.8, 0.7, 1.1),
              "delay_cycles": pick(0, 1, 3)}
    if draw(st.booleans()):
        router["injection_min_free"] = draw(st.integers(1, queue))
    if draw(st.integers(0, 4)) == 0:
        traffic = {"workload": "collective", "collective": "alltoall",
                   "interleave": draw(st.booleans()), "message_bytes": pick(512, 2048)}
        run_section = {}
    else:
        pattern = pick(*patterns)
        traffic = {"pattern": pattern, "load": pick(0.05, 0.3, 0.6, 0.9, 1.3),
                   "message_packets": pick(1, 4, 8),
                   "arrivals": pick("deterministic", "exponential"),
                   "phase": pick("random", "aligned")}
        if pattern == "hotspot":
            traffic["params"] = {"hotspot": {"nodes": [0], "fraction": 0.3}}
        run_section = (pick({"mode": "finite", "messages_per_node": pick(1, 2, 3)},
                            {"warmup_us": pick(0.0, 2.0), "measure_us": pick(5.0, 10.0),
                             "drain_us": pick(5.0, 20.0)}))
    return {"seed": draw(st.integers(0, 99)), "topology": topology, "routing": routing,
            "router": router, "nic": {"handshake": pick("none", "stop_and_wait")},
            "link": {"latency_ns": pick(200.0, 0.0, 201.3)},
            "packet": {"size_bytes": pick(512, 64, 4096)},
            "traffic": traffic, "run": run_section}


def outcome(data: dict, engine: str) -> tuple[str, object]:
    """("ok", the record less wall time and engine) or ("error", the error's one line)."""
    try:
        r = dict(run(config_from_dict(data), engine=engine))
    except (DeadlockError, ConfigError) as exc:
        return "error", f"{type(exc).__name__}: {exc}"
    r.pop("wall_s"), r.pop("engine")
    return "ok", r


@given(small_configs())
@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
def test_any_small_config_gives_the_same_record_or_the_same_error_in_both_engines(data):
    """The engines' agreement beyond the cases above: random configs over flow control,
    arbitration, tie-breaks, switching, clock and link times, injection rules, NIC handshakes,
    routing (every algorithm and table generator, virtual layers, meshes, random graphs),
    patterns, arrival processes, workloads and run modes; and every routing but a minimal table
    without virtual layers is deadlock-free here.  A differential fuzz of 2,887 such
    configs (2026-11-28, some also with failed links, traces and jobs on node subsets) found
    one disagreement, SimPy's no-op action counted in ``events`` (fixed; 6 of the first 338),
    and, in both engines alike, deadlocks of ack/nak oldest-first arbitration starving a VC
    (fixed: ``tests/test_model.py``)."""
    simpy = outcome(data, "simpy")
    assume(not str(simpy[1]).startswith("ConfigError"))     # a window too short for a message
    table = data["routing"].get("table", {})
    if table.get("generator") != "minimal" or table.get("layers"):
        assert simpy[0] == "ok", simpy[1]           # deadlock-free routing: no deadlock either
    assert outcome(data, "compiled") == simpy


@pytest.mark.parametrize("flow", ["credit", "ack_nak"])
def test_hops_longer_than_the_timing_wheel_wait_in_the_heap_with_the_same_record(flow):
    """The wheel covers at most ``MAX_WHEEL_SLOTS`` clock cycles, so that a slow link costs
    time, not memory (a 1 s link latency once asked for 8 TiB); a 5 µs link (6,250 cycles)
    sends every arrival through the heap, and the record is still the SimPy engine's."""
    from icsim.simulator.engines.compiled import MAX_WHEEL_SLOTS
    from icsim.simulator.simulation import Simulation

    cfg = load_config(bundled("ofr", "clean", "k8.yaml"),
                      ["topology.dims=[4,4]", "routing.algorithm=abr", "link.latency_ns=5000",
                       f"router.flow_control={flow}", "traffic.load=0.5",
                       "traffic.message_packets=4", "run.warmup_us=0", "run.measure_us=20",
                       "run.drain_us=60"])
    sim = Simulation(cfg, engine="compiled")
    assert len(sim.engine.a["wheel"]) == MAX_WHEEL_SLOTS
    compiled = dict(sim.run())
    simpy = dict(run(cfg, engine="simpy"))
    for r in (simpy, compiled):
        r.pop("wall_s"), r.pop("engine")
    assert simpy["packets_delivered"] > 0
    assert compiled == simpy
