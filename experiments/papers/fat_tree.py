"""``icsim reproduce fat-tree``: destination-mod-k routing on k-ary 3-trees beside Zahavi's
theorem, and D-mod-k against adaptive up*/down* in simulation.

The published source: E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift
permutations on real life fat trees" (Technion CCIT report 776, 2010): on a full fat tree,
D-mod-k (up port ``(d / k^l) mod k`` at level ``l`` for destination terminal ``d``) routes
every *shift* permutation (``d = s + j mod N``) with no two packets on one channel.  That is a
statement about paths, checked here exactly on the 4-, 8- and 16-ary 3-trees (64, 512 and
4,096 terminals) by walking icsim's own D-mod-k routes (:func:`max_channel_load`: the busiest
channel's packets when every terminal sends one, over all N - 1 shifts); the same walk over
100 random permutations gives the price of static routing on traffic that is not a shift
(the ideal throughput ``1 / max load``, the quantity Hoefler, Schneider and Lumsdaine's
"effective bisection bandwidth" estimates on real InfiniBand fat trees, "Multistage switches
are not crossbars", Cluster 2008: well below 1 for static routing -- their figures could not be
read here).  The simulation (``--simulate``) runs D-mod-k and adaptive up*/down* on the 4-ary
3-tree under uniform traffic, a shift and a random permutation, a full
load grid each (``configs/families/fat_tree.yaml``: Table 1's links and routers, 1-packet
messages, fast NICs).  The simulated shift is the tornado over the terminals' index (j = 31);
the random permutation is the ``permutation`` pattern drawn from the config's seed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import yaml

from icsim.configs import bundled
from icsim.experiments.papers.curve_sweeps import (add_sweep_arguments, reproduction, simulated,
                                                   star_cell, sweep_curves, write_csv)
from icsim.experiments.papers.reproduce import Reproduction, simulated_source
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.outputs import Outputs, file_times
from icsim.model.config import set_path
from icsim.model.topology import FatTree
from icsim.routing.algorithms.fattree import TreeRoutes

ARITIES = (4, 8, 16)
PERMUTATIONS = 100
ALGORITHMS = (("D-mod-k", "dmodk"), ("adaptive", "updown_adaptive"))
OVERRIDES = {"traffic.message_packets": 1, "traffic.arrivals": "exponential",
             "nic.bandwidth_gbps": 160, "nic.injection_rate_factor": 8,
             "run.warmup_us": 20, "run.measure_us": 100, "run.drain_us": 40}
LOADS = "0.05:1.0:0.05"


def channel_loads(tree: FatTree, routes: TreeRoutes, mapping: np.ndarray
                  ) -> tuple[int, float]:
    """Every terminal ``s`` sends one packet to ``mapping[s]`` along icsim's D-mod-k routes
    (the leaf's up port by the destination terminal, then the routers' table; a terminal
    sending to its own leaf uses no channel): ``(the most packets on one channel, the mean
    over flows of 1 / the most on a channel of its path)`` -- the second is Hoefler et al.'s
    effective bisection bandwidth model (each flow gets the share of its busiest link)."""
    k, n = tree.k, tree.num_nodes
    N = tree.num_terminals
    dst = np.asarray(mapping, dtype=np.int64)
    cur, target = np.arange(N) // k, dst // k
    load = np.zeros((n, tree.num_ports), dtype=np.int64)
    path = []                                  # per hop: (flows, channel ids)
    first = True
    while True:
        on = np.nonzero(cur != target)[0]
        if not on.size:
            break
        c, t = cur[on], target[on]
        port = routes.port[c * n + t]
        if first:                              # at the leaf: by the destination terminal
            port = np.where(port < 0, routes.terminal[c * k + dst[on] % k], port)
            first = False
        np.add.at(load, (c, port), 1)
        path.append((on, c * tree.num_ports + port))
        cur[on] = tree.neighbor_array[c, port]
    worst = np.ones(N, dtype=np.int64)
    flat = load.ravel()
    for flows, channels in path:
        worst[flows] = np.maximum(worst[flows], flat[channels])
    return int(load.max()), float(np.mean(1.0 / worst))


def exact_table(seed: int = 0) -> pd.DataFrame:
    """Per k-ary 3-tree: D-mod-k's busiest channel over every shift, and over ``PERMUTATIONS``
    random permutations their mean ideal throughput (``1 / max load``) and effective bisection
    bandwidth (:func:`channel_loads`)."""
    rows = []
    rng = np.random.default_rng(seed)
    for k in ARITIES:
        tree = FatTree(k, 3)
        routes = TreeRoutes(tree)
        N = tree.num_terminals
        every = np.arange(N)
        shifts = [channel_loads(tree, routes, (every + j) % N)[0] for j in range(1, N)]
        perms = [channel_loads(tree, routes, rng.permutation(N)) for _ in range(PERMUTATIONS)]
        rows.append({"tree": f"{k}-ary 3-tree", "terminals": N,
                     "shift_max_load": max(shifts), "shifts": N - 1,
                     "random_mean_throughput": float(np.mean([1 / x for x, _ in perms])),
                     "random_ebb": float(np.mean([e for _, e in perms]))})
    return pd.DataFrame(rows)


def curves() -> list[Curve]:
    """D-mod-k and adaptive up*/down* on the 4-ary 3-tree: uniform, a shift (the tornado over
    the terminals' index, ``j = N/2 - 1 = 31``) and a random permutation (the ``permutation``
    pattern drawn from the config's seed); no file, so the sweep's rows match wherever it
    runs."""
    base = yaml.safe_load(bundled("families/fat_tree.yaml").read_text())
    for key, value in OVERRIDES.items():
        set_path(base, key, value)
    out = []
    for label, name in ALGORITHMS:
        for column, pattern in (("UR", "uniform"), ("shift", "tornado"),
                                ("RP", "permutation")):
            data = yaml.safe_load(yaml.safe_dump(base))
            set_path(data, "routing.algorithm", name)
            set_path(data, "traffic.pattern", pattern)
            if pattern == "tornado":
                set_path(data, "traffic.params.tornado.over", "index")
            out.append(Curve(f"{label} {column}", data, parse_loads(LOADS),
                             {"algorithm": label, "column": column}))
    return out


def run_sweep(out: Path, workers: int | None = None, report_only: bool = False,
              figures: Path | None = None, outputs: Any = None) -> pd.DataFrame:
    return sweep_curves(curves(), out / "sim", workers, report_only, "fat-tree",
                        figures=figures, outputs=outputs)


def report(exact: pd.DataFrame, sim: pd.DataFrame | None) -> str:
    lines = ["# Fat trees: D-mod-k beside Zahavi's theorem", "",
             "Made by `icsim reproduce fat-tree --simulate --out DIR`; without `--simulate` "
             "it redraws this report from `DIR/sim/results.csv`.", "",
             "## Exact: D-mod-k's busiest channel (every terminal sends one packet)", "",
             "| tree | terminals | busiest channel over all shifts | random permutations: "
             "mean 1/max load | effective bisection bandwidth |", "|---|---|---|---|---|"]
    for r in exact.itertuples():
        lines.append(f"| {r.tree} | {r.terminals:,} | {r.shift_max_load} (of {r.shifts:,} "
                     f"shifts) | {r.random_mean_throughput:.3f} | {r.random_ebb:.3f} |")
    ok = bool((exact.shift_max_load == 1).all())
    lines += ["", f"Zahavi (2010): D-mod-k routes every shift permutation without contention "
              f"-- **{'agrees' if ok else 'differs'}**: no channel carries two packets in any "
              f"of the shifts of the three trees." if ok else "", "",
              "Static routing on a random permutation (100, seed 0): D-mod-k's ideal "
              "throughput, 1 over the busiest channel, falls to the mean above; the effective "
              "bisection bandwidth (the mean over flows of 1 over the busiest channel of each "
              "flow's path, Hoefler, Schneider and Lumsdaine's model, Cluster 2008) falls "
              f"with the tree's size, {', '.join(f'{x:.2f}' for x in exact.random_ebb)}: "
              "static routing on large fat trees gives random traffic about half the "
              "bisection, as they report for InfiniBand clusters (their figures could not be "
              "read here; the trend and the level are what is compared). An adaptive "
              "up*/down* router balances the way up instead.", ""]
    if sim is not None:
        lines += ["## Simulated γ* on the 4-ary 3-tree (64 terminals)", "",
                  "| algorithm | UR | shift (j = 31) | random permutation |",
                  "|---|---|---|---|"]
        for label, _ in ALGORITHMS:
            row = sim[sim.algorithm == label].set_index("column")
            cells = [star_cell(row.at[c, "gamma_star"], row.at[c, "lower_bound"])
                     for c in ("UR", "shift", "RP")]
            lines.append(f"| {label} | {' | '.join(cells)} |")
        g = {(r.algorithm, r.column): r.gamma_star for r in sim.itertuples()}
        shift = g.get(("D-mod-k", "shift"))
        rp_d, rp_a = g.get(("D-mod-k", "RP")), g.get(("adaptive", "RP"))
        lines += ["", f"D-mod-k sustains the shift at γ {float(shift or 0):.2f} (no "
                  f"contention: the exact result above; what stops it is the links' own "
                  f"rate and the flow control), and the random permutation at "
                  f"{float(rp_d or 0):.2f}; the adaptive up*/down* sustains the random "
                  f"permutation at {float(rp_a or 0):.2f}.", "",
                  "Figures: `sim/latency.png`, `sim/accepted.png`."]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_sweep_arguments(parser, "fat-tree", "6 curves x 20 loads on the 4-ary 3-tree, seconds")


def reproduce(*, out: str | Path | None = None, simulate: bool = False,
              workers: int | None = None) -> Reproduction:
    """``exact.csv`` and ``report.md`` (and with a sweep, ``simulated.csv`` and ``sim/``)."""
    source = simulated_source("fat-tree", out, simulate, "sim/results.csv")
    out = source.out
    out.mkdir(parents=True, exist_ok=True)
    since, outputs = file_times(out), Outputs(force=True)
    exact = exact_table()
    write_csv(outputs, out / "exact.csv", exact)
    sim = simulated(source, run_sweep, simulate, workers, outputs)
    return reproduction(source, report(exact, sim), since, outputs)


FAT_TREE = SimpleNamespace(add_arguments=add_arguments, reproduce=reproduce)
