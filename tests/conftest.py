"""Shared helpers: small configs and single-message runs; on a machine whose numba cache has no
compiled engine yet (a fresh clone, CI), the engine compiles in a background process while the
tests that never run it go first."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from icsim.simulator.build import build
from icsim.simulator.config import config_from_dict
from icsim.simulator.engines import compiled
from icsim.simulator.engines.compiled import CompiledEngine
from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
from icsim.traffic.workloads import scheduled


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
        tally = CompiledEngine(spec, workload, np.random.default_rng(0)).run()
        return [(int(h), (int(lat) + at) / 1000.0)
                for h, lat in zip(tally.arrays()["hops"], tally.arrays()["latency"])]
    sim = SimpyEngine(spec, workload, RandomStream(np.random.default_rng(0)))
    got = []
    sink = sim.flow.sink
    sim.flow.sink = lambda p, t: (got.append((p.hops, t / 1000.0)), sink(p, t))
    sim.run()
    return got


@pytest.fixture
def table1():
    """Table 1's link and NIC times, in ns."""
    return {"S": 512, "B_link": 20.0, "lat_link": 200.0, "B_nic": 64.0, "lat_nic": 80.0}


# ------------------------------------------------------------- compiling beside the first tests
#: test modules that never run the compiled engine (none starts a process that might), and the
#: golden cases' SimPy halves: they run first, beside the background compile.  A test listed
#: wrongly only waits for the compile, as it would have compiled itself.
ENGINE_FREE_MODULES = {
    "test_angara_beyond.py", "test_angara_check.py", "test_angara_experiments.py",
    "test_angara_generators.py", "test_angara_metrics.py", "test_angara_optimal.py",
    "test_angara_refine.py", "test_angara_routing_graph.py", "test_compiled_planners.py",
    "test_deadlock.py", "test_layers_assign.py", "test_layers_experiments.py",
    "test_layers_minimal.py", "test_layers_verify.py", "test_outflank.py", "test_patterns.py",
    "test_plots.py", "test_run_figures.py", "test_topology.py", "test_trace.py"}
_background: list[subprocess.Popen] = []


def _engine_free(item: pytest.Item) -> bool:
    return item.path.name in ENGINE_FREE_MODULES or (
        item.path.name == "test_golden.py" and item.nodeid.endswith("-simpy]"))


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not _engine_free(item))        # stable: file order kept


def pytest_sessionstart(session):
    """Cold numba cache: compile the engine in another process (``bench.warm_start``, which
    caches it) while the engine-free tests run, and make the first compiled run here wait for
    it and load the machine code instead of compiling it a second time."""
    if compiled.kernel_cached():
        return
    code = "from icsim.experiments.pipeline.bench import warm_start; warm_start()"
    _background.append(subprocess.Popen([sys.executable, "-c", code],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    announce = compiled.announce_compilation

    def wait_for_the_background_compile() -> None:
        for proc in _background:
            proc.wait()
        announce()

    compiled.announce_compilation = wait_for_the_background_compile


def pytest_sessionfinish(session, exitstatus):
    for proc in _background:
        if proc.poll() is None:
            proc.terminate()
            proc.wait()
