"""``icsim reproduce hyperx``: minimal against load-balanced routing on a HyperX, uniform and
adversarial, beside the exact bounds and Ahn et al.'s motivation.

The published source: J. H. Ahn, N. Binkert, A. Davis, M. McLaren and R. S. Schreiber,
"HyperX: topology, routing, and packaging of efficient large-scale networks" (SC 2009).  Its
case, as its abstract states it: a HyperX's minimal routes are single links within a line, so
an adversarial pattern that sends a router's traffic along one line crowds one link, and only
non-minimal, load-balancing routing (their DAL; here Valiant's and UGAL, DAL itself is not in
icsim yet) keeps it near half the bandwidth, while uniform traffic runs near full bandwidth
on minimal routes.  Their figures could not be read here: the exact bounds of DOR and Valiant
(:func:`exact_throughput`, every channel's load over every pair of routers) and the simulated
γ* are compared with that statement.  The network: ``configs/families/hyperx.yaml`` (8 x 8
routers, 8 terminals each, one link per pair; Table 1's links and routers), 1-packet
messages, fast NICs; traffic ``uniform`` and ``line_shift`` (every terminal to a random
terminal of the next router along dimension 0).
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
from icsim.experiments.papers.curve_sweeps import (add_sweep_arguments, simulated, star_cell,
                                                  sweep_curves, write_exact)
from icsim.experiments.papers.reproduce import Reproduction
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.outputs import file_times, written_since
from icsim.model.config import set_path
from icsim.model.topology import HyperX
from icsim.routing.algorithms.generic import ShortestPaths

SHAPE, P = (8, 8), 8
ALGORITHMS = (("DOR", "hx_dor"), ("minimal adaptive", "hx_adaptive"), ("VAL", "vlb"),
              ("UGAL", "ugal"))
PATTERNS = (("UR", "uniform"), ("shift", "line_shift"))
OVERRIDES = {"traffic.message_packets": 1, "traffic.arrivals": "exponential",
             "nic.bandwidth_gbps": 160, "nic.injection_rate_factor": 8,
             "run.warmup_us": 20, "run.measure_us": 60, "run.drain_us": 40}
LOADS = "0.05:1.0:0.05"


def rates(hx: HyperX, column: str) -> np.ndarray:
    """Router-to-router traffic per unit of per-terminal injection."""
    n, p = hx.num_nodes, hx.terminals_per_router
    if column == "UR":
        t = hx.num_terminals
        out = np.full((n, n), p * p / (t - 1))
        np.fill_diagonal(out, p * (p - 1) / (t - 1))
        return out
    x = hx.coord_array[:, 0]
    to = np.arange(n) + ((x + 1) % hx.dims[0] - x) * hx.strides[0]
    out = np.zeros((n, n))
    out[np.arange(n), to] = p
    return out


def channel_loads(hx: HyperX, paths: ShortestPaths, traffic: np.ndarray) -> np.ndarray:
    """Every channel's load when the router pairs' traffic follows the shortest paths."""
    n = hx.num_nodes
    load = np.zeros((n, hx.num_ports))
    src, dst = np.nonzero(traffic)
    w = traffic[src, dst]
    cur = src.copy()
    for _ in range(hx.n):
        on = cur != dst
        port = paths.port[cur[on] * n + dst[on]]
        np.add.at(load, (cur[on], port), w[on])
        cur[on] = hx.neighbor_array[cur[on], port]
    return load


def exact_throughput(hx: HyperX, paths: ShortestPaths, column: str, valiant: bool) -> float:
    """DOR's (or, with ``valiant``, Valiant's through a uniform router) ideal throughput: 1
    over the heaviest channel, at most 1."""
    traffic = rates(hx, column)
    if valiant:
        n = hx.num_nodes
        out_of = traffic.sum(axis=1)
        traffic = (np.repeat(out_of[:, None], n, axis=1) + traffic.sum(axis=0)[None, :]) / n
    return float(min(1.0, 1.0 / channel_loads(hx, paths, traffic).max()))


def curves() -> list[Curve]:
    base = yaml.safe_load(bundled("families/hyperx.yaml").read_text())
    for key, value in OVERRIDES.items():
        set_path(base, key, value)
    out = []
    for label, name in ALGORITHMS:
        for column, pattern in PATTERNS:
            data = yaml.safe_load(yaml.safe_dump(base))
            set_path(data, "routing.algorithm", name)
            set_path(data, "traffic.pattern", pattern)
            out.append(Curve(f"{label} {column}", data, parse_loads(LOADS),
                             {"algorithm": label, "column": column}))
    return out


def run_sweep(out: Path, workers: int | None, report_only: bool) -> pd.DataFrame:
    return sweep_curves(curves(), out / "sim", workers, report_only, "hyperx")


def checks(sim: pd.DataFrame, exact: dict[tuple[str, str], float]) -> list[tuple[str, str, str]]:
    g = {(r.algorithm, r.column): r.gamma_star for r in sim.itertuples()}

    def num(x: Any) -> float:
        return float("nan") if x is None or pd.isna(x) else float(x)

    out = []

    def add(claim: str, figures: str, ok: bool) -> None:
        out.append((claim, figures, "agrees" if ok else "differs"))

    for label in ("DOR", "VAL"):
        for column in ("UR", "shift"):
            got = num(g.get((label, column)))
            add(f"{label} {column} at or below its exact bound {exact[(label, column)]:.4f}",
                f"γ* {got:.3f}", got <= exact[(label, column)] + 1e-9)
    dor, ada = num(g.get(("DOR", "shift"))), num(g.get(("minimal adaptive", "shift")))
    add(f"minimal routing collapses on the line shift: one link per pair carries a router's "
        f"{P} terminals, at most 1/{P} (Ahn et al. 2009)", f"DOR {dor:.3f}, minimal adaptive "
        f"{ada:.3f}", dor <= 1 / P + 1e-9 and ada <= 1 / P + 1e-9)
    val, ug = num(g.get(("VAL", "shift"))), num(g.get(("UGAL", "shift")))
    add("load-balanced routing keeps the shift near half the bandwidth (Ahn et al.'s DAL; here "
        "VAL and UGAL)", f"VAL {val:.3f}, UGAL {ug:.3f}", min(val, ug) >= 0.35)
    dor_ur, ug_ur = num(g.get(("DOR", "UR"))), num(g.get(("UGAL", "UR")))
    add("uniform traffic runs near full bandwidth on minimal routes, and UGAL keeps most of it",
        f"DOR {dor_ur:.3f}, UGAL {ug_ur:.3f}", dor_ur >= 0.75 and ug_ur >= dor_ur - 0.1)
    return out


def report(exact: dict[tuple[str, str], float], sim: pd.DataFrame | None) -> str:
    lines = ["# HyperX: minimal against load-balanced routing", "",
             "Made by `icsim reproduce hyperx --simulate --out DIR`; without `--simulate` it "
             "redraws this report from `DIR/sim/results.csv`.", "",
             f"Network: {SHAPE[0]} x {SHAPE[1]} routers, {P} terminals each (512), one link per "
             "pair of routers of a line, Table 1's links (module docstring of "
             "`icsim.experiments.papers.hyperx`). γ = 1: one packet per link time per terminal.",
             "", "## Exact bounds", "", "| algorithm | UR | line shift |", "|---|---|---|"]
    for label in ("DOR", "VAL"):
        lines.append(f"| {label} | {exact[(label, 'UR')]:.4f} | {exact[(label, 'shift')]:.4f} |")
    if sim is not None:
        lines += ["", "## Simulated γ*", "", "| algorithm | UR | line shift |", "|---|---|---|"]
        for label, _ in ALGORITHMS:
            row = sim[sim.algorithm == label].set_index("column")
            cells = [star_cell(row.at[c, "gamma_star"], row.at[c, "lower_bound"])
                     for c in ("UR", "shift")]
            lines.append(f"| {label} | {' | '.join(cells)} |")
        lines += ["", "DAL (Ahn et al.'s own routing) is not in icsim yet; Valiant's and UGAL "
                  "stand for load-balanced routing here.", "",
                  "Figures: `sim/latency.png`, `sim/accepted.png`, `sim/derouted.png`.", "",
                  "## The claims, and the verdicts", "", "| claim | figures | verdict |",
                  "|---|---|---|"]
        for claim, figures, verdict in checks(sim, exact):
            lines.append(f"| {claim} | {figures} | {verdict} |")
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_sweep_arguments(parser, "hyperx", "8 curves x 20 loads, a few minutes")


def reproduce(*, out: str | Path | None = None, simulate: bool = False,
              workers: int | None = None) -> Reproduction:
    """``exact.csv`` and ``report.md`` (and with a sweep, ``simulated.csv`` and ``sim/``)."""
    out = Path(out or "runs/hyperx")
    out.mkdir(parents=True, exist_ok=True)
    since = file_times(out)
    hx = HyperX(SHAPE, P, 1)
    paths = ShortestPaths(hx)
    exact = {(label, column): exact_throughput(hx, paths, column, label == "VAL")
             for label in ("DOR", "VAL") for column in ("UR", "shift")}
    write_exact(out, exact)
    sim = simulated(out, run_sweep, simulate, workers)
    text = report(exact, sim)
    (out / "report.md").write_text(text, encoding="utf-8")
    return Reproduction("hyperx", out, text, {p: "written" for p in written_since(out, since)})


HYPERX = SimpleNamespace(add_arguments=add_arguments, reproduce=reproduce)
