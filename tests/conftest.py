"""Shared helpers: small configs and single-message runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import settings

from icsim.model.config import config_from_dict
from icsim.model.registry import forget_files
from icsim.simulator.build import build
from icsim.simulator.engines.compiled import CompiledEngine
from icsim.simulator.engines.compiled.building import compile_now
from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
from icsim.traffic.workloads import scheduled

# Hypothesis checks what the model does, not how fast: no per-example deadline (a shared, busy
# two-core machine takes 250 ms for an example of 50), as no test here is timed
settings.register_profile("icsim", deadline=None)
settings.load_profile("icsim")


@pytest.fixture(scope="session", autouse=True)
def compiled_engine_built():
    """numba's cache holds the compiled engine before the first test: with it missing,
    ``auto`` answers a small run on the SimPy engine (and builds it in the background), so a
    test expecting the compiled engine would depend on whether an earlier test compiled it."""
    compile_now()


@pytest.fixture(autouse=True)
def plugins_forgotten():
    """What a test's plug-ins registered (``routing.plugins``, ``traffic.plugins``,
    ``load_plugin``) is gone after it, so that no test sees another's algorithms or patterns
    (registries are per process)."""
    yield
    forget_files()


def small_config(dims=(4, 4), **sections):
    """A config on a small torus; keyword arguments are whole sections (dicts) or scalars."""
    data = {"topology": {"kind": "torus", "dims": list(dims)}}
    for key, value in sections.items():
        data[key] = value
    return config_from_dict(data)


def send_one(cfg, src, dst, packets=1, at=0, engine="simpy"):
    """Run a network with a single message; (hops, consume time in ns) of each packet, in
    consumption order."""
    model = build(cfg)
    spec = dataclasses.replace(model.spec, window=None, horizon_ps=None)
    workload = scheduled("collective", [(at, src, dst, packets)])
    if engine == "compiled":
        # the engine keeps latencies and (hops, distance) counts, not packets: hops and
        # consume times each in order (tests send packets of one path)
        tally = CompiledEngine(spec, workload, np.random.default_rng(0)).run()
        hops = sorted(h for (h, _), n in tally.pairs.items() for _ in range(n))
        return [(h, (int(lat) + at) / 1000.0)
                for h, lat in zip(hops, tally.latencies.values())]
    sim = SimpyEngine(spec, workload, RandomStream(np.random.default_rng(0)))
    got = []
    sink = sim.flow.sink
    sim.flow.sink = lambda p, t: (got.append((p.hops, t / 1000.0)), sink(p, t))
    sim.run()
    return got


def channel_crossings(config, pairs, engine: str) -> dict[tuple[int, int], int]:
    """Send one packet for each ``(source, destination)`` of ``pairs`` at time 0 on
    ``engine``; the packets that crossed each router-to-router channel ``(node, port)`` (every
    VC), from the engine's own counters."""
    from icsim.simulator.engines.compiled import layout as kernel

    model = build(config)
    spec = dataclasses.replace(model.spec, window=None, horizon_ps=None)
    workload = scheduled("collective", [(0, s, t, 1) for s, t in pairs])
    if engine == "compiled":
        sim = CompiledEngine(spec, workload, np.random.default_rng(0))
        tally = sim.run()
        per_queue = sim.a["qs"][:, kernel.Q_PACKETS]
    else:
        sim = SimpyEngine(spec, workload, RandomStream(np.random.default_rng(0)))
        tally = sim.run()
        per_queue = sim.fab.link_packets
    assert tally.delivered == len(pairs)
    n, P, V = spec.num_nodes, spec.num_ports + 1, spec.num_vcs
    return {(u, p): int(sum(per_queue[(u * P + p) * V + vc] for vc in range(V)))
            for u in range(n) for p in range(spec.num_ports) if spec.neighbor[u, p] >= 0}


@pytest.fixture
def table1():
    """Table 1's link and NIC times, in ns."""
    return {"S": 512, "B_link": 20.0, "lat_link": 200.0, "B_nic": 64.0, "lat_nic": 80.0}

