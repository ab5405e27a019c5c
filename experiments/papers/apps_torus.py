"""``icsim reproduce apps-torus``: what the OutFlank paper did not measure -- applications,
not γ*, under DOR, ABR, POR and OFR on the 8x8x8 torus, two jobs sharing the machine.

Two jobs of 256 ranks each, one rank per node: a 3D halo exchange (``halo3d``, an 8x8x4
process grid, 16 KiB faces, an 8-byte allreduce and 5 µs of computation per iteration, 10
iterations) and an alltoall (``alltoall``, pairwise, 2 KiB per pair, 2 iterations), placed
two ways:

* ``slabs`` -- the halo job on nodes 0-255 (z = 0..3), the alltoall on 256-511 (z = 4..7):
  a scheduler's contiguous allocation.  Minimal routes between two nodes of one slab stay in
  it (their z distance is at most 3 < k/2), so only routing that leaves the minimal box (POR
  and OFR's deroutes) can make one job disturb the other;
* ``scattered`` -- the 512 nodes shuffled (seed 0) and dealt to the two jobs: a fragmented
  machine, where every route crosses the other job's nodes.

Each job's slowdown is its completion time sharing the machine over its time alone (the same
job, placement, routing and stream; :func:`icsim.experiments.pipeline.apps.slowdowns`).  Table
1's network (the OutFlank paper's parameters, its clean profile), one-packet-per-512-byte
messages.  Without ``--simulate`` the report and figures are redrawn from ``runs.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from icsim.experiments.papers.reproduce import Reproduction, from_runs
from icsim.experiments.pipeline.apps import iteration_figure, slowdown_figure, slowdowns
from icsim.experiments.pipeline.outputs import Outputs
from icsim.model.config import config_from_dict

ROUTINGS = ("dor", "abr", "por", "ofr")
PLACEMENTS = ("slabs", "scattered")
HALO = {"motif": "halo3d", "name": "halo3d",
        "params": {"iterations": 10, "bytes": 16384, "compute_us": 5, "allreduce_bytes": 8,
                   "grid": [8, 8, 4]}}
ALLTOALL = {"motif": "alltoall", "name": "alltoall",
            "params": {"iterations": 2, "bytes": 2048, "algorithm": "pairwise"}}


def nodes(placement: str) -> tuple[list[int], list[int]]:
    """The two jobs' nodes (module docstring)."""
    if placement == "slabs":
        return list(range(256)), list(range(256, 512))
    order = np.random.default_rng(0).permutation(512).tolist()
    return order[:256], order[256:]


def config(routing: str, placement: str):
    a, b = nodes(placement)
    return config_from_dict({
        "seed": 1, "topology": {"kind": "torus", "dims": [8, 8, 8]},
        "routing": {"algorithm": routing},
        "traffic": {"workload": "app", "jobs": [
            {**HALO, "placement": "list", "nodes": a},
            {**ALLTOALL, "placement": "list", "nodes": b}]}})


def run_all(progress=print) -> pd.DataFrame:
    rows = []
    for placement in PLACEMENTS:
        for routing in ROUTINGS:
            shared, slow = slowdowns(config(routing, placement), engine="compiled")
            for job, s in zip(shared["jobs"], slow):
                rows.append({"placement": placement, "routing": routing, "job": job["name"],
                             "shared_us": s["shared_ns"] / 1000.0,
                             "alone_us": s["alone_ns"] / 1000.0, "slowdown": s["slowdown"],
                             "iteration_mean_us": job["iteration_mean_ns"] / 1000.0,
                             "iteration_std_us": job["iteration_std_ns"] / 1000.0,
                             "iterations_us": " ".join(f"{t / 1000.0:.3f}"
                                                       for t in job["iteration_ns"]),
                             "wait_share": job["wait_share_mean"],
                             "derouted": shared["derouted"].get("total", 0.0),
                             "hops": shared["hops"]})
                progress(f"{placement} {routing} {job['name']}: slowdown "
                         f"{s['slowdown']:.3f}")
    return pd.DataFrame(rows)


def report(runs: pd.DataFrame) -> str:
    lines = ["# Applications on the 8x8x8 torus: DOR, ABR, POR and OFR, two jobs sharing it",
             "", "Made by `icsim reproduce apps-torus --simulate --out DIR`; without "
             "`--simulate` it redraws this report and its figures from `runs.csv`.", "",
             "A 3D halo job and an alltoall job, 256 ranks each, one per node, placed as "
             "contiguous slabs or scattered (module docstring of "
             "`icsim.experiments.papers.apps_torus`).  Slowdown: completion time sharing the "
             "machine over the same job alone.", ""]
    for placement in PLACEMENTS:
        part = runs[runs.placement == placement]
        lines += [f"## {placement}", "", "| routing | job | alone µs | shared µs | slowdown | "
                  "iteration mean ± sd µs | waiting share | derouted (run) |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in part.itertuples():
            lines.append(f"| {r.routing} | {r.job} | {r.alone_us:,.1f} | {r.shared_us:,.1f} | "
                         f"{r.slowdown:.3f} | {r.iteration_mean_us:,.1f} ± "
                         f"{r.iteration_std_us:,.1f} | {r.wait_share:.2f} | {r.derouted:.3f} |")
        lines.append("")
    lines += ["## What it shows", ""] + findings(runs) + ["", "Figures: `slowdown_slabs.png`, "
              "`slowdown_scattered.png`, `iterations.png` (the halo job's iteration times, "
              "scattered)."]
    return "\n".join(lines) + "\n"


def findings(runs: pd.DataFrame) -> list[str]:
    """The study's statements, each with its numbers."""
    s = runs.set_index(["placement", "routing", "job"])["slowdown"]
    alone = runs.set_index(["placement", "routing", "job"])["alone_us"]
    dor = [s[("slabs", "dor", j)] for j in ("halo3d", "alltoall")]
    abr = [s[("slabs", "abr", j)] for j in ("halo3d", "alltoall")]
    out = [f"* Slabs under minimal routing: no route leaves its slab, so the jobs never meet. "
           f"DOR's slowdowns are exactly {dor[0]:.3f} and {dor[1]:.3f}; ABR's "
           f"{abr[0]:.3f} and {abr[1]:.3f}, not exactly 1 because its adaptive ties draw from "
           f"the run's one stream, which the other job's packets advance: a second job "
           f"changes the draws, not the routes' reach.  Differences of a few percent between "
           f"runs of the adaptive algorithms are this noise (a slowdown below 1 is one)."]
    out.append("* Slabs under POR and OFR, whose deroutes leave the minimal box and cross "
               "the other slab: slowdowns halo / alltoall " + "; ".join(
                   f"{r.upper()} {s[('slabs', r, 'halo3d')]:.3f} / "
                   f"{s[('slabs', r, 'alltoall')]:.3f}" for r in ("por", "ofr")) +
               ": the alltoall, whose packets deroute, pays most.")
    sc = {r: (s[("scattered", r, "halo3d")], s[("scattered", r, "alltoall")]) for r in ROUTINGS}
    out.append("* Scattered, every route crosses the other job: slowdowns halo / alltoall " +
               "; ".join(f"{r.upper()} {h:.2f} / {a:.2f}" for r, (h, a) in sc.items()) + ".")
    best = min(ROUTINGS, key=lambda r: alone[("scattered", r, "alltoall")])
    out.append(f"* The alltoall alone on scattered nodes is fastest under {best.upper()} "
               f"({alone[('scattered', best, 'alltoall')]:,.0f} µs; DOR "
               f"{alone[('scattered', 'dor', 'alltoall')]:,.0f} µs).")
    return out


def figures(runs: pd.DataFrame, out: Path, outputs: Outputs) -> None:
    import matplotlib.pyplot as plt

    def save(fig, name: str) -> None:
        outputs.figure(fig, out / name)
        plt.close(fig)

    for placement in PLACEMENTS:
        save(slowdown_figure(runs[runs.placement == placement],
                             f"8x8x8 torus, two jobs sharing it ({placement})"),
             f"slowdown_{placement}.png")
    halo = runs[(runs.placement == "scattered") & (runs.job == "halo3d")]
    results = [(r.routing.upper(), {"jobs": [{"name": "halo3d (scattered, shared)",
                                              "iteration_ns": [float(t) * 1000 for t in
                                                               r.iterations_us.split()]}]})
               for r in halo.itertuples()]
    save(iteration_figure(results), "iterations.png")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/apps-torus)")
    parser.add_argument("--simulate", action="store_true",
                        help="run 2 placements x 4 routings, each shared and each job alone "
                             "(24 runs, a few minutes)")


def reproduce(*, out: str | Path | None = None, simulate: bool = False) -> Reproduction:
    """``runs.csv`` (with ``--simulate``), ``report.md`` and the figures."""
    def draw(runs: pd.DataFrame, folder: Path, outputs: Outputs) -> str:
        figures(runs, folder, outputs)
        return report(runs)

    return from_runs("apps-torus", out, simulate, run_all, draw)


APPS_TORUS = SimpleNamespace(add_arguments=add_arguments, reproduce=reproduce)
