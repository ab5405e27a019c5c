"""``icsim bench``: simulation speed of both engines on a fixed set of cases.

Speed is reported as simulated router-to-router packet hops per wall second of the event loop
(model construction excluded), model events per second and wall time.  Every case is a bundled
config (the OutFlank paper's Table 1 parameters) with a fixed seed and a fixed window, so the
work done is identical from run to run and between engines: each case runs on every engine asked
for, one after the other, and the compiled/SimPy ratio is printed beside it.  Compare figures
from one invocation (the machine is shared and noisy).  ``--repeat N`` runs each case N times on
each engine and reports the run of median wall time (with every run's wall time beside it):
a case's runs do identical work, so the spread is the machine's, and the median of five is a
steadier figure than one run.

The compiled engine's first use in a process loads its machine code from numba's cache (the
*warm start*, included in no case's wall time: an untimed zero-load run comes first).
``--compile`` also measures a *cold compile*: a fresh process with an empty numba cache.

``icsim bench --tables`` times Angara table generation instead: SSSP and BFS on the whole
5x3x3x2 (90 nodes, 4D) and 6x5x5 (150 nodes, 3D) tori, the sizes at which the paper's C code
takes 0.25 s; best of ``repeats``, routing graph included.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Iterable, Sequence

from icsim.configs import bundled

# the model and the simulator are imported where a case runs: the command line's parser takes
# the case names from here (icsim --help imports this module)

ENGINES = ("simpy", "compiled")
#: the tori of ``--tables``: the paper's 90-node 4D and 150-node 3D limits
TIMING_CASES = ((5, 3, 3, 2), (6, 5, 5))

#: name, bundled config, overrides, (warmup, measure, drain) in µs: OFR with credit flow control
#: (clean profile) on 8x8x8 at γ 0.3 and 16x16x16 at γ 0.2, the reference profile (ack/nak,
#: window mode here so that both engines do the same bounded work, with each node's phase
#: drawn at random: aligned, every node posts its 96-packet messages at the same instants,
#: 65.5 µs apart, and the quarter-length window of ``--quick`` held none) and DOR for comparison
CASES: list[tuple[str, str, list[str], tuple[float, float, float]]] = [
    ("8x8x8-ofr-uniform-0.3", "ofr/clean/k8.yaml", ["traffic.load=0.3"], (20.0, 80.0, 20.0)),
    ("16x16x16-ofr-uniform-0.2", "ofr/clean/k16.yaml", ["traffic.load=0.2"], (10.0, 30.0, 10.0)),
    ("8x8x8-ofr-reference-0.3", "ofr/reference/k8.yaml",
     ["traffic.load=0.3", "run.mode=window", "traffic.phase=random"], (20.0, 80.0, 20.0)),
    ("8x8x8-dor-uniform-0.3", "ofr/clean/k8.yaml",
     ["traffic.load=0.3", "routing.algorithm=dor"], (20.0, 80.0, 20.0)),
]
#: the torus routing literature beside ABR, the same run (``--case`` names them; not run by
#: default): issue 47 holds each within 1.5x ABR's time per packet-hop
LITERATURE = ("abr", "val", "romm", "rlb", "rlbth", "goal", "cqr")
EXTRA_CASES: list[tuple[str, str, list[str], tuple[float, float, float]]] = [
    (f"8x8x8-{a}-uniform-0.3", "ofr/clean/k8.yaml",
     ["traffic.load=0.3", f"routing.algorithm={a}"], (20.0, 80.0, 20.0)) for a in LITERATURE]
EXTRA_CASES += [
    (f"8x8x8-{a}-dateline-uniform-0.3", "ofr/clean/k8.yaml",
     ["traffic.load=0.3", f"routing.algorithm={a}", f"routing.{a}.deadlock=dateline"],
     (20.0, 80.0, 20.0)) for a in ("dor", "rlb")]
#: the topology families (``--case``; compiled engine only, each in a process of its own whose
#: peak memory is reported): issue 46's 1,056-terminal dragonfly under UGAL-L at γ 0.5
#: (speed), the 16,512-terminal dragonfly and the 32-ary 3-tree (memory, under 4 GB)
FAMILY_CASES: list[tuple[str, str, list[str], tuple[float, float, float]]] = [
    ("dragonfly1056-ugal_l-uniform-0.5", "families/dragonfly_1056.yaml",
     ["traffic.load=0.5"], (20.0, 60.0, 40.0)),
    ("dragonfly16512-ugal_l-uniform-0.3", "families/dragonfly_1056.yaml",
     ["topology.p=8", "topology.a=16", "topology.h=8", "traffic.load=0.3"], (5.0, 10.0, 10.0)),
    ("fattree32x3-dmodk-uniform-0.3", "families/fat_tree.yaml",
     ["topology.k=32", "traffic.load=0.3"], (5.0, 10.0, 10.0)),
]
EXTRA_CASES += FAMILY_CASES
#: a closed-loop application (``--case``; in a process of its own): issue 45's 512-node motif
#: run, 10 iterations of a 3D halo and an allreduce (finite: the times do not apply)
APP_CASES: list[tuple[str, str, list[str], tuple[float, float, float]]] = [
    ("app512-halo3d-allreduce", "apps/halo3d_512.yaml", [], (0.0, 1.0, 0.0)),
]
EXTRA_CASES += APP_CASES
ALONE = {c[0] for c in FAMILY_CASES + APP_CASES}
DEFAULT = {c[0] for c in CASES}


def case_config(config: str, overrides: list[str], times: tuple[float, float, float],
                scale: float = 1.0):
    from icsim.model.config import load_config

    warm, meas, drain = (t * scale for t in times)
    return load_config(bundled(config), [*overrides, "seed=1", f"run.warmup_us={warm}",
                                         f"run.measure_us={meas}", f"run.drain_us={drain}"])


def bench_case(name: str, config: str, overrides: list[str], times: tuple[float, float, float],
               engine: str, scale: float = 1.0, repeat: int = 1) -> dict[str, Any]:
    """One case on one engine, ``repeat`` times: the speeds of the run of median wall time
    (the mean of the middle two for an even count), and every run's wall time."""
    from icsim.simulator.simulation import Simulation

    cfg = case_config(config, overrides, times, scale)
    results = [Simulation(cfg, engine=engine).run() for _ in range(repeat)]
    result = results[0]
    if any((r["packet_hops"], r["events"]) != (result["packet_hops"], result["events"])
           for r in results):
        raise RuntimeError(f"bench case {name} on {engine}: runs of one config and seed did "
                           "different work")
    wall = statistics.median(r["wall_s"] for r in results)
    return {
        "case": name,
        "engine": result["engine"],
        "packet_hops": result["packet_hops"],
        "events": result["events"],
        "packet_hops_per_s": result["packet_hops"] / wall,
        "events_per_s": result["events"] / wall,
        "wall_s": wall,
        "wall_s_runs": [r["wall_s"] for r in results],
        "sim_time_ns": result["sim_time_ns"],
    }


def bench_alone(name: str, scale: float = 1.0, repeat: int = 1) -> dict[str, Any]:
    """:func:`bench_case` of the case ``name`` on the compiled engine in a fresh process, with
    that process's peak resident memory (``peak_rss_mb``: model, tables, run)."""
    code = ("import json, resource\n"
            "from icsim.experiments.pipeline.bench import bench_case, EXTRA_CASES\n"
            f"case = next(c for c in EXTRA_CASES if c[0] == {name!r})\n"
            f"row = bench_case(*case, 'compiled', {scale!r}, {repeat!r})\n"
            "row['peak_rss_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
            "print(json.dumps(row))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def warm_start() -> float:
    """Seconds to make the compiled engine's first zero-load run in this process (loading the
    machine code from numba's cache, or compiling it when the cache is empty)."""
    from icsim.simulator.simulation import Simulation

    t0 = time.perf_counter()
    Simulation(case_config("ofr/clean/k8.yaml", ["topology.dims=[3,3]", "traffic.load=0"],
                           (0.1, 0.1, 0.1)), engine="compiled").run()
    return time.perf_counter() - t0


def cold_compile() -> float:
    """Seconds for :func:`warm_start` in a fresh process with an empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        code = "from icsim.experiments.pipeline.bench import warm_start; print(warm_start())"
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def run_bench(quick: bool = False, engines: tuple[str, ...] = ENGINES, compile: bool = False,
              cases: list[str] | None = None, repeat: int = 1,
              progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    say = progress or (lambda line: None)
    rows: list[dict[str, Any]] = []
    if "compiled" in engines:
        if compile:
            cold = cold_compile()
            rows.append({"case": "cold-compile", "engine": "compiled", "wall_s": cold})
            say(f"{'compiled engine, cold compile':32s} {cold:8.2f} s (empty numba cache)")
        warm = warm_start()
        rows.append({"case": "warm-start", "engine": "compiled", "wall_s": warm})
        say(f"{'compiled engine, first run':32s} {warm:8.2f} s (machine code from numba's cache; "
            "compiled first if the cache was empty)")
    for name, config, overrides, times in CASES + EXTRA_CASES:
        if (name not in cases) if cases else (name not in DEFAULT):
            continue
        speeds = {}
        for engine in engines:
            if name in ALONE and engine != "compiled":
                continue
            scale = 0.25 if quick else 1.0
            if name in ALONE:
                row = bench_alone(name, scale, repeat)
            else:
                row = bench_case(name, config, overrides, times, engine, scale, repeat)
            rows.append(row)
            speeds[engine] = row["packet_hops_per_s"]
            spread = ""
            if repeat > 1:
                fast = row["packet_hops"] / min(row["wall_s_runs"])
                slow = row["packet_hops"] / max(row["wall_s_runs"])
                spread = f"  (median of {repeat}: {slow:,.0f} to {fast:,.0f})"
            memory = (f"  peak {row['peak_rss_mb']:,.0f} MB" if "peak_rss_mb" in row else "")
            say(f"{name:26s} {engine:8s} {row['packet_hops_per_s']:>12,.0f} packet-hops/s "
                f"{row['events_per_s']:>12,.0f} events/s {row['wall_s']:8.2f} s wall{spread}"
                f"{memory}")
        if len(speeds) == 2:
            ratio = speeds["compiled"] / speeds["simpy"]
            rows.append({"case": name, "engine": "compiled/simpy", "ratio": ratio})
            say(f"{name:26s} compiled/simpy speed ratio {ratio:.1f}")
    return rows


def time_generators(cases: Iterable[Sequence[int]] = TIMING_CASES, repeats: int = 3
                    ) -> list[dict]:
    """Best-of-``repeats`` wall time of SSSP and BFS on whole tori (routing graph included)."""
    from icsim.model.topology import Torus
    from icsim.routing.tables.generators import generate

    out = []
    for dims in cases:
        topo = Torus(tuple(dims))
        row = {"dims": "x".join(map(str, dims)), "nodes": topo.num_nodes}
        for alg in ("sssp", "bfs"):
            times, graph_times = [], []
            for _ in range(repeats):
                table = generate(alg, topo)
                times.append(table.meta["time_s"])
                graph_times.append(table.meta["graph_time_s"])
            row[f"{alg}_s"] = min(times)
            row[f"{alg}_graph_s"] = graph_times[times.index(min(times))]
        out.append(row)
    return out


def run_table_bench(quick: bool = False,
                    progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Generation time of SSSP and BFS tables on the paper's timing tori (module docstring)."""
    rows = []
    for case in time_generators(TIMING_CASES, repeats=1 if quick else 5):
        for alg in ("sssp", "bfs"):
            n = case["nodes"]
            row = {"case": f"{alg}-{case['dims']}", "generator": alg, "dims": case["dims"],
                   "nodes": n, "wall_s": case[f"{alg}_s"], "graph_s": case[f"{alg}_graph_s"],
                   "routes_per_s": n * (n - 1) / case[f"{alg}_s"], "paper_c_s": 0.25}
            rows.append(row)
            if progress:
                progress(f"{row['case']:20s} {n:4d} nodes {row['wall_s']:8.3f} s "
                         f"(routing graph {row['graph_s']:.3f} s; the paper's C: 0.25 s)")
    return rows
