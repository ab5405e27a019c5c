"""Open-loop traffic is made as the run goes, in both engines, and is the traffic a schedule
made before the run would hold: the same messages at the same times to the same
destinations, in the same order, draw for draw from each node's own stream; memory holds what
is in flight, not the run's messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numba import njit

from icsim.configs import bundled
from icsim.model.config import ConfigError, config_from_dict, load_config
from icsim.model.topology import Dragonfly, HyperX, Torus
from icsim.simulator.build import build
from icsim.simulator.engines.compiled import CompiledEngine
from icsim.simulator.engines.compiled import layout as kl
from icsim.simulator.engines.compiled import traffic as compiled_traffic
from icsim.simulator.engines.compiled.layout import C_DUE_N, G_DST, G_TIME
from icsim.simulator.engines.compiled.pcg import exponential_at, random_at, rng_state
from icsim.simulator.simulation import Simulation, run
from icsim.traffic.patterns import PATTERNS, PatternError, make_pattern
from icsim.traffic.rules import KINDS

TOPOLOGIES = [Torus((4, 4)), Torus((4, 4, 4)), Torus((3, 5)), Torus((4, 4), (False, False)),
              Torus((8,)), Dragonfly(2, 4, 2), HyperX((3, 4), 2)]


def patterns_on(topology):
    out = []
    for name in PATTERNS.names():
        try:
            out.append(make_pattern(name, topology, seed=3))
        except PatternError:
            pass                                # a precondition the topology fails
    return out


CASES = [(t, p) for t in TOPOLOGIES for p in patterns_on(t)]


@njit
def _destinations(prm, fprm, gs, gt, sources, indices):
    out = np.empty(len(sources), np.int64)
    for i in range(len(sources)):
        out[i] = compiled_traffic.destination(prm, fprm, gs, gt, sources[i], indices[i])
    return out


def compiled_destinations(pattern, sources, indices, seed):
    """What the compiled engine's ``destination`` gives, each node drawing from the stream of
    ``default_rng(seed + node)``."""
    rule = pattern.rule()
    n = pattern.num_nodes
    prm = np.zeros(kl.K_NPRM, np.int64)
    fprm = np.zeros(kl.F_NPRM, np.float64)
    prm[kl.K_T], prm[kl.K_G_RULE] = n, rule.code
    prm[kl.K_G_SIZE], prm[kl.K_G_OFFSET] = rule.size, rule.offset
    prm[kl.K_G_SKIP], prm[kl.K_G_NHOT] = rule.skip_self, len(rule.hot)
    fprm[kl.F_FRACTION] = rule.fraction
    gs = np.array([rng_state(np.random.default_rng(seed + v)) for v in range(n)])
    return _destinations(prm, fprm, gs, compiled_traffic.rule_table(rule),
                         np.asarray(sources), np.asarray(indices)).tolist()


@pytest.mark.parametrize("topology,pattern", CASES,
                         ids=[f"{p.name}-{t.describe()}" for t, p in CASES])
@given(seed=st.integers(0, 2**32), data=st.data())
@settings(max_examples=10, deadline=None)
def test_every_patterns_rule_gives_its_destinations_draw_for_draw(topology, pattern, seed, data):
    """A built-in pattern's :class:`Rule` — in Python and in the compiled engine — gives what
    its ``destination`` gives, message by message, drawing the same numbers from each node's
    stream."""
    n = pattern.num_nodes
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=40))
    indices = data.draw(st.lists(st.integers(0, 10**6), min_size=len(sources),
                                 max_size=len(sources)))
    rule = pattern.rule()
    assert rule is not None and rule.kind in KINDS
    python = [np.random.default_rng(seed + v) for v in range(n)]
    ruled = [np.random.default_rng(seed + v) for v in range(n)]
    want = [pattern.destination(s, i, python[s]) for s, i in zip(sources, indices)]
    assert [rule.destination(s, i, ruled[s]) for s, i in zip(sources, indices)] == want
    assert compiled_destinations(pattern, sources, indices, seed) == want


@njit
def _draws(state, kinds, scale):
    out = np.empty(len(kinds))
    for i in range(len(kinds)):
        out[i] = exponential_at(state, 0, scale) if kinds[i] else random_at(state, 0)
    return out


@given(seed=st.integers(0, 2**63), scale=st.floats(1e-3, 1e12),
       kinds=st.lists(st.booleans(), min_size=1, max_size=3000))
@settings(max_examples=30, deadline=None)
def test_a_stream_rows_draws_are_numpys_bit_for_bit(seed, scale, kinds):
    """``exponential(scale)`` (NumPy's ziggurat, its rare branches included) and ``random()``,
    interleaved in any order, give NumPy's numbers and leave NumPy's state."""
    g = np.random.default_rng(seed)
    state = rng_state(g).reshape(1, 4)
    got = _draws(state, np.array(kinds, dtype=np.bool_), scale)
    want = [g.exponential(scale) if k else g.random() for k in kinds]
    assert got.tolist() == want
    assert state[0].tolist() == rng_state(g).tolist()


def test_the_ziggurats_rare_branches_are_drawn_as_numpy_draws_them():
    """One draw in about 90 leaves the ziggurat's fast path (its tail, idx 0, about one in
    25,000): two million draws take both rare branches many times."""
    g = np.random.default_rng(2024)
    state = rng_state(g).reshape(1, 4)
    got = _draws(state, np.ones(2_000_000, dtype=np.bool_), 1.0)
    assert np.array_equal(got, g.exponential(1.0, 2_000_000))
    assert (got > 7.69711747013105).sum() > 10          # the tail, past the ziggurat's r


# ------------------------------------------------------------------ made as the run goes
def eager_schedule(config, topology, pattern, window, horizon):
    """The messages of every node, made before the run and sorted by (time, source): how the
    schedule was made before traffic was made as the run goes, restated here from
    docs/model.md §6 as the independent reference."""
    tc = config.traffic
    from icsim.traffic.load import gamma1_packet_period_ns

    t1 = gamma1_packet_period_ns(topology, config.packet.size_bytes, config.link.bandwidth_gbps)
    interval = tc.message_packets * t1 * 1000.0 / tc.load
    finite = window is None
    streams = np.random.SeedSequence(config.seed).spawn(2)[1].spawn(topology.num_terminals)
    rows = []
    for node, ss in enumerate(streams):
        rng = np.random.Generator(np.random.PCG64(ss))
        if tc.arrivals == "exponential":
            first = int(round(rng.exponential(interval)))
        elif tc.phase == "aligned":
            first = 0
        else:
            first = int(rng.random() * interval)
        t, idx = first, 0
        while True:
            if not finite and t > horizon:
                break
            rows.append((t, node, pattern.destination(node, idx, rng),
                         finite or window[0] <= t < window[1]))
            idx += 1
            if finite and idx >= config.run.messages_per_node:
                break
            if tc.arrivals == "exponential":
                t += max(1, int(round(rng.exponential(interval))))
            else:
                t = first + int(round(idx * interval))
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


@njit
def _drain(ctr, prm, fprm, gn, gs, gt, due, out):
    i = 0
    while ctr[C_DUE_N] > 0:
        node = due[0]
        out[i, 0], out[i, 1], out[i, 2] = gn[node, G_TIME], node, gn[node, G_DST]
        i += 1
        compiled_traffic.take(ctr, prm, fprm, gn, gs, gt, due)
    return i


def compiled_messages(model):
    """The messages the compiled engine's traffic makes, in the order it posts them."""
    engine = CompiledEngine(model.spec, model.workload, np.random.default_rng(0))
    a = engine.a
    compiled_traffic.start(a["ctr"], a["prm"], a["fprm"], a["gn"], a["gs"], a["gt"], a["due"])
    out = np.zeros((200_000, 3), np.int64)
    n = _drain(a["ctr"], a["prm"], a["fprm"], a["gn"], a["gs"], a["gt"], a["due"], out)
    return [tuple(r) for r in out[:n].tolist()]


@given(dims=st.sampled_from([[4, 4], [3, 3, 2], [8]]),
       pattern=st.sampled_from(["uniform", "transpose", "butterfly", "tornado", "neighbor",
                                "hotspot", "alltoall", "permutation", "bitreverse"]),
       load=st.floats(0.02, 3.0), packets=st.integers(1, 5),
       arrivals=st.sampled_from(["deterministic", "exponential"]),
       phase=st.sampled_from(["random", "aligned"]), finite=st.booleans(),
       seed=st.integers(0, 1000), times=st.tuples(st.floats(0, 5), st.floats(0.5, 8),
                                                   st.floats(0, 5)))
@settings(max_examples=60, deadline=None)
def test_messages_made_as_they_fall_due_are_the_schedule_by_time_then_source(
        dims, pattern, load, packets, arrivals, phase, finite, seed, times):
    cfg = {"seed": seed, "topology": {"dims": dims},
           "traffic": {"pattern": pattern, "load": load, "message_packets": packets,
                       "arrivals": arrivals, "phase": phase},
           "run": {"mode": "finite" if finite else "window", "messages_per_node": 7,
                   "warmup_us": times[0], "measure_us": times[1], "drain_us": times[2]}}
    try:
        model = build(config_from_dict(cfg))
    except ConfigError as exc:
        assume(exc.path not in ("traffic.pattern", "run.measure_us"))   # n/a, or no message
        raise
    spec, traffic = model.spec, model.workload.open
    want = eager_schedule(model.config, model.topology, traffic.pattern, spec.window,
                          spec.horizon_ps)
    assert list(traffic.messages()) == want                        # the SimPy engine's
    assert compiled_messages(model) == [r[:3] for r in want]       # the compiled engine's
    assert traffic.any_measured() == any(r[3] for r in want)


def long_and_short(path, overrides):
    """The compiled engine's arrays after a run of 1x and 8x a window: bytes of each, and the
    bytes of its latencies."""
    sizes = []
    for scale in (1, 8):
        cfg = load_config(bundled(path), [*overrides, f"run.measure_us={40 * scale}"])
        sim = Simulation(cfg, engine="compiled")
        sim.run()
        arrays = {k: v.nbytes for k, v in sim.engine.a.items() if hasattr(v, "nbytes")}
        sizes.append((arrays, sim.engine.latencies))
    return sizes


@pytest.mark.parametrize("path,overrides", [
    ("families/fat_tree.yaml", ["traffic.load=0.3"]),
    ("quickstart.yaml", ["traffic.load=0.2", "traffic.message_packets=2"])])
def test_memory_holds_what_is_in_flight_and_a_byte_or_two_a_latency(path, overrides):
    """Every array of a run is as large after a window 8 times as long: no schedule, no
    packet of the past is held; the measured packets' latencies take a byte or two each."""
    (short, short_lat), (long, long_lat) = long_and_short(path, overrides)
    assert long == short
    assert 6 * len(short_lat) < len(long_lat) < 10 * len(short_lat)
    assert long_lat.nbytes < 2.5 * len(long_lat)


def test_latencies_handed_over_a_chunk_at_a_time_give_the_same_record(monkeypatch):
    """The kernel hands its measured latencies to Python as its chunk fills (every 1,000 here
    instead of every million), and pairs beyond its (hops, distance) counts as their rows
    fill: the record is the same."""
    from icsim.simulator.engines.compiled import engine as compiled

    cfg = load_config(bundled("families/fat_tree.yaml"), ["traffic.load=0.3",
                                                          "run.measure_us=30"])
    want = dict(run(cfg, engine="compiled"))
    monkeypatch.setattr(compiled, "CHUNK", 1000)
    original = CompiledEngine._measured

    def few_counts(self):
        original(self)
        self.dil_h = 2                       # (hops, distance) counts of hops 0 and 1 only
        self.a["mdil"] = np.zeros(self.dil_h * self.dil_d, np.int64)
    monkeypatch.setattr(CompiledEngine, "_measured", few_counts)
    sim = Simulation(cfg, engine="compiled")
    got = dict(sim.run())
    for r in (want, got):
        r.pop("wall_s")
    assert got == want and got["packets_delivered"] > 2500
    assert len(sim.engine.latencies._chunks) > 3 and len(sim.engine.pairs_beyond) > 0
