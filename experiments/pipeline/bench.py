"""``icsim bench``: simulation speed on a fixed set of cases.

Speed is reported as simulated router-to-router packet hops per wall second of the event loop
(model construction excluded), model events per second and wall time.  Every case uses Table 1
parameters and a fixed seed, so the work done is identical from run to run; compare figures from
one invocation (the machine is shared and noisy).

``icsim bench --tables`` times Angara table generation instead: SSSP and BFS on the whole
5x3x3x2 (90 nodes, 4D) and 6x5x5 (150 nodes, 3D) tori, the sizes at which the paper's C code
takes 0.25 s; best of ``repeats``, routing graph included.
"""

from __future__ import annotations

from typing import Any, Callable

from icsim.simulator.config import config_from_dict
from icsim.simulator.simulation import Simulation

ENGINE = "simpy"

# name, config overrides, (warmup, measure, drain) in µs
CASES: list[tuple[str, dict[str, Any], tuple[float, float, float]]] = [
    ("torus8x8x8-dor-uniform-0.3",
     {"topology": {"kind": "torus", "dims": [8, 8, 8]}, "routing": {"algorithm": "dor"},
      "traffic": {"pattern": "uniform", "load": 0.3}}, (40.0, 80.0, 20.0)),
    ("torus4x4x4-dor-uniform-0.8",
     {"topology": {"kind": "torus", "dims": [4, 4, 4]}, "routing": {"algorithm": "dor"},
      "traffic": {"pattern": "uniform", "load": 0.8}}, (40.0, 160.0, 20.0)),
]


def bench_case(name: str, overrides: dict[str, Any], times: tuple[float, float, float],
               scale: float = 1.0) -> dict[str, Any]:
    warm, meas, drain = times
    cfg = config_from_dict({**overrides, "seed": 1,
                            "run": {"warmup_us": warm * scale, "measure_us": meas * scale,
                                    "drain_us": drain * scale}})
    result = Simulation(cfg).run()
    wall = result["wall_s"]
    return {
        "case": name,
        "engine": ENGINE,
        "packet_hops": result["packet_hops"],
        "events": result["events"],
        "packet_hops_per_s": result["packet_hops"] / wall,
        "events_per_s": result["events"] / wall,
        "wall_s": wall,
        "sim_time_ns": result["sim_time_ns"],
    }


def run_bench(quick: bool = False,
              progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    rows = []
    for name, overrides, times in CASES:
        row = bench_case(name, overrides, times, scale=0.25 if quick else 1.0)
        rows.append(row)
        if progress:
            progress(f"{name:32s} {row['packet_hops_per_s']:>12,.0f} packet-hops/s "
                     f"{row['events_per_s']:>12,.0f} events/s {row['wall_s']:8.2f} s wall")
    return rows


def run_table_bench(quick: bool = False,
                    progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Generation time of SSSP and BFS tables on the paper's timing tori (module docstring)."""
    from icsim.experiments.papers.angara.analysis import TIMING_CASES, time_generators

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
