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

``icsim bench --whole`` measures what a user waits for instead: each case of
:data:`WHOLE_CASES` is one ``icsim run`` as a whole process (compiled engine, numba cache
warm), timed from outside — start (interpreter and imports), set-up (config, topology, routing,
engine arrays), the loop, the summary — with the process's peak resident memory; a case that
comes as a short and a long window also gives the marginal whole-run speed (the difference of
their packet-hops over the difference of their process times) beside the loop's, and the
ratio of their peak memories.

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
#: what a user waits for (``--whole``): name, bundled config, overrides, (warmup, measure,
#: drain) in µs, and the long window of the marginal pair (0: none).  One-packet messages
#: throughout, as BookSim2's one-flit packets (docs/performance.md): the 8-ary 3-cube, the
#: 4-ary 3-tree and the 1,056-terminal dragonfly of issue 55's comparison, and a long-window
#: pair per family
WHOLE_CASES: list[tuple[str, str, list[str], tuple[float, float, float], float]] = [
    ("8x8x8-dor-uniform-0.3", "ofr/clean/k8.yaml",
     ["routing.algorithm=dor", "traffic.message_packets=1", "traffic.load=0.3"],
     (100.0, 1000.0, 300.0), 10000.0),
    ("fattree4x3-dmodk-uniform-0.3", "families/fat_tree.yaml", ["traffic.load=0.3"],
     (20.0, 1000.0, 40.0), 20000.0),
    ("fattree4x3-dmodk-uniform-0.3-10ms", "families/fat_tree.yaml", ["traffic.load=0.3"],
     (20.0, 10000.0, 40.0), 0.0),
    ("dragonfly1056-min-uniform-0.5", "families/dragonfly_1056.yaml",
     ["routing.algorithm=dfly_min", "traffic.load=0.5"], (20.0, 600.0, 40.0), 6000.0),
    ("hyperx8x8-dor-uniform-0.5", "families/hyperx.yaml", ["traffic.load=0.5"],
     (20.0, 1000.0, 40.0), 10000.0),
]
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


#: the child process of a whole-run case: times its own parts, prints them as JSON
WHOLE_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from icsim.model.config import load_config
from icsim.simulator.simulation import Simulation
from icsim.simulator.results import make_result
t1 = time.perf_counter()
cfg = load_config(sys.argv[1], json.loads(sys.argv[2]))
sim = Simulation(cfg, engine="compiled")
t2 = time.perf_counter()
tally = sim.engine.run()
t3 = time.perf_counter()
m = sim.model
record = make_result(m.config, m.spec, m.workload, tally, "compiled")
t4 = time.perf_counter()
print(json.dumps({"imports_s": t1 - t0, "setup_s": t2 - t1, "run_s": t3 - t2,
                  "loop_s": tally.wall_s, "summary_s": t4 - t3,
                  "packet_hops": record["packet_hops"], "saturated": record["saturated"],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def whole_run(config: str, overrides: list[str], times: tuple[float, float, float],
              measure_us: float | None = None) -> dict[str, Any]:
    """One case as a whole process (:data:`WHOLE_CHILD`), timed from outside: its parts, its
    process time (``whole_s``, start to exit) and its peak resident memory."""
    warm, meas, drain = times
    ov = [*overrides, "seed=1", f"run.warmup_us={warm}",
          f"run.measure_us={measure_us or meas}", f"run.drain_us={drain}"]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", WHOLE_CHILD, str(bundled(config)),
                           json.dumps(ov)], capture_output=True, text=True)
    whole = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"bench case {config} {ov}: exit {proc.returncode}: "
                           f"{proc.stderr.strip().splitlines()[-1:]}")
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["whole_s"] = whole
    row["start_s"] = whole - row["setup_s"] - row["run_s"] - row["summary_s"]
    return row


def run_whole(cases: list[str] | None = None, repeat: int = 1,
              progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The :data:`WHOLE_CASES` (or those named), each ``repeat`` times (the run of median
    process time reported), and each pair's marginal speed and memory ratio."""
    say = progress or (lambda line: None)
    warm_start()                                  # numba's cache filled, if it was not
    rows = []
    for name, config, overrides, times, long_us in WHOLE_CASES:
        if cases and name not in cases:
            continue
        pair = []
        for measure in ([times[1], long_us] if long_us else [times[1]]):
            runs = [whole_run(config, overrides, times, measure) for _ in range(repeat)]
            row = sorted(runs, key=lambda r: r["whole_s"])[len(runs) // 2]
            label = f"{name}-{measure:g}us"
            row.update(case=label, engine="compiled", measure_us=measure,
                       whole_s_runs=[r["whole_s"] for r in runs],
                       packet_hops_per_s=row["packet_hops"] / row["whole_s"],
                       loop_packet_hops_per_s=row["packet_hops"] / row["loop_s"])
            rows.append(row)
            pair.append(row)
            say(f"{label:40s} whole {row['whole_s']:7.2f} s (start {row['start_s']:.2f}, "
                f"set-up {row['setup_s']:.2f}, loop {row['loop_s']:.2f}, summary "
                f"{row['summary_s']:.2f}) {row['packet_hops_per_s'] / 1e6:6.2f} M/s whole, "
                f"{row['loop_packet_hops_per_s'] / 1e6:6.2f} M/s loop, peak "
                f"{row['peak_rss_mb']:,.0f} MB")
        if len(pair) == 2:
            short, long = pair
            more = long["whole_s"] - short["whole_s"]
            # (None where the machine's noise made the long run no longer than the short)
            marginal = (long["packet_hops"] - short["packet_hops"]) / more if more > 0 else None
            loop = long["loop_packet_hops_per_s"]
            memory = long["peak_rss_mb"] / short["peak_rss_mb"]
            rows.append({"case": name, "engine": "marginal", "packet_hops_per_s": marginal,
                         "loop_packet_hops_per_s": loop,
                         "ratio": marginal / loop if marginal else None,
                         "memory_ratio": memory})
            speed = (f"{marginal / 1e6:.2f} M/s = {marginal / loop:.2f} x the loop's"
                     if marginal else "not measurable (the long run took no longer)")
            say(f"{name:40s} marginal whole-run speed {speed}; peak memory x{memory:.2f} for "
                f"x{long_us / times[1]:g} the window")
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
