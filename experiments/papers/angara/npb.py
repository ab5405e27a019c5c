"""``icsim reproduce angara-npb``: the Angara paper's Table 3 -- NPB kernels on the 32-node
Desmos torus with BFS, Genetic and SSSP tables -- as closed-loop applications.

Setup.  The 4x2x2x2 torus of the other Angara simulations (``angara-sim``: Table 1 links,
20 Gb/s and 200 ns, NIC 64 Gb/s; 4 KiB packets; one bubble VC; a table per generator on the
whole machine, which is the paper's 32-node node set), the NPB skeletons of
:mod:`icsim.traffic.apps.motifs.npb` at class C with 4 ranks per node (128 ranks, rank r on
node r // 4), :data:`ITERATIONS` iterations each (the paper, too, cut the kernels' iteration
counts).

Compute time per iteration is a calibrated input, the same for every table: the paper's own BFS
run gives the whole iteration's time, T_paper = ops per iteration / Mop/s (the operation counts
NPB itself reports Mop/s with, :func:`ops_per_iteration`), and the compute time is the one with
which the simulated BFS iteration takes T_paper (:func:`calibrate`: about T_paper less the
skeleton's network time alone, T_net(BFS)). The gain of SSSP over BFS is then the paper's
measure, Mop/s(SSSP) / Mop/s(BFS) = T(BFS) / T(SSSP), and the report shows how it moves when
the compute time is halved, doubled or dropped.

Without ``--simulate`` the report is redrawn from ``runs.csv``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from icsim.experiments.papers.published import paper_table
from icsim.experiments.papers.reproduce import Reproduction, from_runs
from icsim.model.config import config_from_dict
from icsim.simulator.simulation import run

KERNELS = ("LU", "MG", "CG", "FT", "IS")
GENERATORS = ("bfs", "genetic", "sssp")
ITERATIONS = 2
#: compute time as multiples of the calibrated one
SCALES = (0.0, 0.5, 1.0, 2.0)


def ops_per_iteration(kernel: str) -> float:
    """Operations per iteration of the class-C kernel, as NPB 3.x counts them for its Mop/s
    (the print-out's formulas, less the set-up terms): FT ``ntotal (5.23518 + 7.21113 ln
    ntotal)``, MG ``58 n^3``, CG ``2 na (3 + z(z+1) + 25 (5 + z(z+1)) + 3)`` with z = nonzer,
    LU ``1984.77 n^3 - 10923.3 n^2 + 27770.9 n - 144010``, IS the keys."""
    if kernel == "FT":
        n = 512 ** 3
        return n * (5.23518 + 7.21113 * math.log(n))
    if kernel == "MG":
        return 58.0 * 512 ** 3
    if kernel == "CG":
        na, z = 150000, 15
        return 2.0 * na * (3 + z * (z + 1) + 25 * (5 + z * (z + 1)) + 3)
    if kernel == "LU":
        n = 162
        return 1984.77 * n ** 3 - 10923.3 * n ** 2 + 27770.9 * n - 144010.0
    if kernel == "IS":
        return float(2 ** 27)
    raise ValueError(f"no kernel {kernel!r}")


def paper_iteration_us(kernel: str, generator: str = "bfs") -> float:
    """The paper's time per iteration: ops per iteration over its Mop/s."""
    t = paper_table("angara_table3_npb")
    mops = float(t[(t.kernel == kernel) & (t.algorithm == generator)].mops.iloc[0])
    return ops_per_iteration(kernel) / mops      # ops / (Mop/s) = µs


#: the alltoall under IS and FT, alone: (ranks per node, algorithm, bytes per pair) -- one rank
#: per node as osu_alltoall's 1 MB (here 512 KiB per node pair), and IS's 32 KiB at 4 ranks
#: per node by MPICH's blocked algorithm and by pairwise exchange
ANATOMY = ((1, "scattered", 524288), (4, "scattered", 32768), (4, "pairwise", 32768))


def run_job(generator: str, job: dict) -> dict:
    """One job on the Desmos torus with a table of ``generator``: the run's record."""
    cfg = config_from_dict({
        "seed": 1, "topology": {"kind": "torus", "dims": [4, 2, 2, 2]},
        "packet": {"size_bytes": 4096},
        "routing": {"algorithm": "table", "table": {"generator": generator}},
        "traffic": {"workload": "app", "jobs": [job]}})
    return run(cfg, engine="compiled")


def simulate(kernel: str, generator: str, compute_us: float) -> dict:
    """One run: the kernel's skeleton with a table of ``generator`` and ``compute_us`` per
    iteration; its time per iteration (µs) and the run's size."""
    r = run_job(generator, {"motif": f"npb_{kernel.lower()}", "ranks_per_node": 4, "params": {
        "cls": "C", "iterations": ITERATIONS, "compute_us": compute_us}})
    job = r["jobs"][0]
    return {"kernel": kernel, "generator": generator, "compute_us": compute_us,
            "iteration_us": job["completion_ns"] / 1000.0 / ITERATIONS,
            "wait_share": job["wait_share_mean"], "packets": r["packets_delivered"],
            "wall_s": r["wall_s"]}


def calibrate(kernel: str, net: dict, progress=print) -> tuple[float, dict]:
    """The compute time per iteration that makes the simulated BFS iteration take the paper's
    (within 0.5 %), and that run: first the difference of the two times, then secant steps
    on the simulated time (LU's skeleton spreads its compute over the wavefront, where part
    of it overlaps the pipeline, so its time is not the sum)."""
    goal, t0 = paper_iteration_us(kernel), net["iteration_us"]
    compute = max(0.0, goal - t0)
    row = net
    for _ in range(4):
        if compute <= 0:
            break
        row = simulate(kernel, "bfs", round(compute, 3))
        progress(f"{kernel} calibration: {compute:,.0f} us of compute -> "
                 f"{row['iteration_us']:,.0f} us per iteration (goal {goal:,.0f})")
        if abs(row["iteration_us"] / goal - 1) <= 0.005 or row["iteration_us"] <= t0:
            break
        compute *= (goal - t0) / (row["iteration_us"] - t0)
    return round(compute, 3), row


def run_all(progress=print) -> pd.DataFrame:
    """Every kernel: BFS with no compute, the calibration (:func:`calibrate`), then every
    generator at every :data:`SCALES` multiple of the calibrated compute time."""
    rows = []
    for kernel in KERNELS:
        net = simulate(kernel, "bfs", 0.0)
        compute, at_one = calibrate(kernel, net, progress)
        for generator in GENERATORS:
            for scale in SCALES:
                row = (net if generator == "bfs" and scale == 0.0 else
                       at_one if generator == "bfs" and scale == 1.0 else
                       simulate(kernel, generator, round(scale * compute, 3)))
                rows.append({**row, "scale": scale, "calibrated_us": compute})
                progress(f"{kernel} {generator} x{scale}: {rows[-1]['iteration_us']:.1f} us "
                         f"per iteration")
    for rpn, algorithm, nbytes in ANATOMY:
        for generator in ("bfs", "sssp"):
            r = run_job(generator, {"motif": "alltoall", "ranks_per_node": rpn, "params": {
                "bytes": nbytes, "algorithm": algorithm}})
            rows.append({"kernel": "alltoall", "generator": generator,
                         "iteration_us": r["completion_time_ns"] / 1000.0,
                         "packets": r["packets_delivered"], "wall_s": r["wall_s"],
                         "ranks_per_node": rpn, "algorithm": algorithm, "bytes": nbytes})
    return pd.DataFrame(rows)


def anatomy(runs: pd.DataFrame) -> pd.DataFrame:
    """The alltoall alone (:data:`ANATOMY`): BFS and SSSP times and SSSP's gain, per case."""
    a = runs[runs.kernel == "alltoall"].pivot_table(
        index=["ranks_per_node", "algorithm", "bytes"], columns="generator",
        values="iteration_us", sort=False)
    a["gain"] = (a["bfs"] / a["sssp"] - 1) * 100
    return a.reset_index()


def gains(runs: pd.DataFrame) -> pd.DataFrame:
    """Per kernel and scale: each generator's time per iteration and its gain over BFS in the
    paper's measure, T(BFS) / T(X) - 1, in percent."""
    t = runs.pivot_table(index=["kernel", "scale"], columns="generator", values="iteration_us")
    out = t.copy()
    for g in ("genetic", "sssp"):
        out[f"{g}_gain"] = (t["bfs"] / t[g] - 1.0) * 100.0
    return out.reset_index()


def why(kernel: str, g: pd.DataFrame, runs: pd.DataFrame) -> str:
    """The reason behind a kernel's simulated gain where it is not the paper's."""
    row = g[g.kernel == kernel].set_index("scale")["sssp_gain"]
    x0, x1 = row[0.0], row[1.0]
    paper = paper_gain()[kernel]
    bfs = runs[(runs.kernel == kernel) & (runs.generator == "bfs")].set_index("scale")
    share = bfs.at[0.0, "iteration_us"] / bfs.at[1.0, "iteration_us"]
    if abs(x1 - paper) <= 2.0:
        return ""
    if paper > 0 and x0 > paper:
        return (f"the network alone gains {x0:+.1f} %; the paper's {paper:+.2f} % is that gain "
                f"with the network taking {paper / x0:.0%} of the iteration, where Table 1's "
                f"links and no overlap make it {share:.0%} here")
    a = anatomy(runs).set_index(["ranks_per_node", "algorithm"])["gain"]
    if kernel == "IS" and len(a):
        return (f"the network alone gains {x0:+.2f} %: IS's 32 KiB key exchange is MPICH's "
                f"blocked alltoallv, which at 4 ranks per node moves a window of 8 nodes at a "
                f"time, where SSSP gains {a[(4, 'scattered')]:+.1f} % alone; the same exchange "
                f"pairwise gains {a[(4, 'pairwise')]:+.1f} % and one rank per node "
                f"{a[(1, 'scattered')]:+.1f} % (the paper's osu_alltoall: +11.1 %): the rank "
                f"placement or MPICH's choice on Desmos differs from the skeleton's")
    return (f"the network alone gains {x0:+.2f} %: on this pattern the model's two tables "
            f"differ less than Desmos's did (not explained here)")


def paper_gain() -> pd.Series:
    """Table 3's SSSP gain over BFS per kernel, in percent."""
    paper = paper_table("angara_table3_npb").pivot(index="kernel", columns="algorithm",
                                                    values="mops")
    return (paper["sssp"] / paper["bfs"] - 1) * 100


def checks(g: pd.DataFrame, runs: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(claim, figures, verdict) for the paper's statements, at the calibrated compute; a
    verdict that differs says why."""
    at1 = g[g.scale == 1.0].set_index("kernel")
    pgain = paper_gain()
    out = []

    def add(claim: str, figures: str, ok: bool, reason: str = "") -> None:
        out.append((claim, figures, "agrees" if ok else
                    "differs" + (f": {reason}" if reason else "")))

    s = at1["sssp_gain"]
    noise = [k for k in KERNELS if s[k] <= 0 and abs(s[k]) <= 1.0]
    add("SSSP beats BFS on every kernel (Table 3: +0.74 % to +5.41 %)",
        ", ".join(f"{k} {s[k]:+.2f} %" for k in KERNELS), bool((s > 0).all()),
        f"{', '.join(noise)} within ±1 %, the paper's own run-to-run spread (CoV up to "
        f"0.65 %)" if noise and all(s[k] > 0 or k in noise for k in KERNELS) else "")
    add("the alltoall kernels FT and IS gain the most (Table 3: 5.41 %, 5.28 %)",
        f"FT {s['FT']:+.2f} %, IS {s['IS']:+.2f} %; the others at most "
        f"{s[['LU', 'MG', 'CG']].max():+.2f} %",
        min(s["FT"], s["IS"]) > s[["LU", "MG", "CG"]].max(),
        "CG's gain is larger than the paper's and IS's smaller (their rows below)")
    add("MG's difference is negligible and LU's small (Table 3: 0.74 %, 1.15 %)",
        f"MG {s['MG']:+.2f} %, LU {s['LU']:+.2f} %", s["MG"] < 1.5 and s["LU"] < 2.5)
    diff = (at1["sssp"] / at1["genetic"] - 1).abs() * 100
    add("Genetic and SSSP tables perform alike (Table 3: within 0.7 %)",
        ", ".join(f"{k} {diff[k]:.2f} %" for k in KERNELS), bool((diff < 1.5).all()),
        "icsim's Genetic tables (the same σ4-driven search, its own seed and budget) land "
        "farther from SSSP's on these patterns than the paper's did")
    for k in KERNELS:
        add(f"{k}: SSSP's gain over BFS near the paper's {pgain[k]:.2f} % (within 2 points)",
            f"{s[k]:+.2f} %", abs(s[k] - pgain[k]) <= 2.0, why(k, g, runs))
    return out


def report(runs: pd.DataFrame, command: str) -> str:
    g = gains(runs)
    paper = paper_table("angara_table3_npb").pivot(index="kernel", columns="algorithm",
                                                    values="mops")
    cal = runs[runs.scale == 1.0].groupby("kernel").calibrated_us.first()
    net = runs[(runs.scale == 0.0) & (runs.generator == "bfs")].set_index("kernel")
    lines = ["# Angara Table 3: NPB on 32 Desmos nodes, BFS vs Genetic vs SSSP tables", "",
             f"Made by `{command}`; without `--simulate` it redraws this report from "
             "`runs.csv`.", "",
             "The 4x2x2x2 torus with Table 1 links and 4 KiB packets, the tables generated on "
             "the whole machine (the paper's 32-node set), NPB class C skeletons with 4 ranks "
             f"per node (128 ranks), {ITERATIONS} iterations each "
             "(module docstring of `icsim.experiments.papers.angara.npb`).", "",
             "## Calibration: compute time per iteration", "",
             "The compute time per iteration with which the simulated BFS iteration takes the "
             "paper's (NPB's operation count over its Mop/s; about that time less the "
             "skeleton's network time with no computation, `calibrate`):", "",
             "| kernel | paper BFS µs/iteration | network (BFS, simulated) | compute | "
             "waiting share with no compute |", "|---|---|---|---|---|"]
    for k in KERNELS:
        lines.append(f"| {k} | {paper_iteration_us(k):,.0f} | {net.at[k, 'iteration_us']:,.0f} "
                     f"| {cal[k]:,.0f} | {net.at[k, 'wait_share']:.2f} |")
    lines += ["", "## SSSP's gain over BFS beside Table 3", "",
              "| kernel | paper BFS / Genetic / SSSP Mop/s | paper SSSP gain | simulated µs per "
              "iteration BFS / Genetic / SSSP | simulated SSSP gain | Genetic gain |",
              "|---|---|---|---|---|---|"]
    at1 = g[g.scale == 1.0].set_index("kernel")
    for k in KERNELS:
        p = paper.loc[k]
        lines.append(
            f"| {k} | {p['bfs']:,.0f} / {p['genetic']:,.0f} / {p['sssp']:,.0f} | "
            f"{(p['sssp'] / p['bfs'] - 1) * 100:+.2f} % | {at1.at[k, 'bfs']:,.0f} / "
            f"{at1.at[k, 'genetic']:,.0f} / {at1.at[k, 'sssp']:,.0f} | "
            f"{at1.at[k, 'sssp_gain']:+.2f} % | {at1.at[k, 'genetic_gain']:+.2f} % |")
    lines += ["", "Ordering per kernel (fastest first), simulated: " + "; ".join(
        f"{k} " + " > ".join(sorted(GENERATORS, key=lambda x: at1.at[k, x]))
        for k in KERNELS) + ".", "",
        "## How the gain moves with the compute time", "",
        "SSSP's gain over BFS with the calibrated compute time scaled (x0: the network "
        "alone):", "", "| kernel | " + " | ".join(f"x{s:g}" for s in SCALES) + " |",
        "|---|" + "---|" * len(SCALES)]
    for k in KERNELS:
        row = g[g.kernel == k].set_index("scale")["sssp_gain"]
        lines.append(f"| {k} | " + " | ".join(f"{row[s]:+.2f} %" for s in SCALES) + " |")
    a = anatomy(runs)
    if len(a):
        lines += ["", "## The alltoall underneath IS and FT", "",
                  "The exchange alone on the same machine and tables (no compute, one "
                  "iteration):", "",
                  "| ranks per node | algorithm | bytes per pair | BFS µs | SSSP µs | SSSP gain |",
                  "|---|---|---|---|---|---|"]
        for r in a.itertuples():
            lines.append(f"| {int(r.ranks_per_node)} | {r.algorithm} | {int(r.bytes):,} | "
                         f"{r.bfs:,.0f} | {r.sssp:,.0f} | {r.gain:+.1f} % |")
        lines += ["", "MPICH's medium-message algorithm (up to 32 KiB a pair, and every "
                  "alltoallv) posts its messages in blocks of 32 peers: at 4 ranks per node "
                  "a block reaches 8 neighbouring node ids, a window of node offsets rather "
                  "than the all-pairs traffic SSSP's tables balance. FT's 128 KiB transposes "
                  "take the pairwise exchange."]
    lines += ["", "## The claims, and the verdicts", "", "| claim | figures | verdict |",
              "|---|---|---|"]
    for claim, figures, verdict in checks(g, runs):
        lines.append(f"| {claim} | {figures} | {verdict} |")
    lines += ["", "Why the simulated gains differ from the measured ones where they do:", "",
              "* the calibration holds the compute time per iteration fixed and lets nothing "
              "overlap it, where the real kernels overlap some communication with computation "
              "and vary from rank to rank: a share of the network time the paper could not "
              "see is counted here in full (the x0 column is the other extreme);",
              "* the model's 4 ranks per node share one NIC and send even node-local messages "
              "through it (no shared-memory path), and its links are Table 1's, not Angara's "
              "(the calibration absorbs the absolute speed, not the ratio of network to NIC);",
              "* the skeletons leave out set-up, verification and MG's coarsest levels "
              "(`icsim.traffic.apps.motifs.npb`)."]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-npb)")
    parser.add_argument("--simulate", action="store_true",
                        help="run the 5 kernels x 3 tables x 4 compute times (a few minutes)")


def reproduce(*, out: str | Path | None = None, simulate: bool = False) -> Reproduction:
    """``runs.csv`` (with ``--simulate``) and ``report.md``."""
    return from_runs("angara-npb", out, simulate, run_all, lambda runs, *_: report(
        runs, "icsim reproduce angara-npb --simulate --out DIR"))


NPB = SimpleNamespace(add_arguments=add_arguments, reproduce=reproduce)
