"""``icsim reproduce dragonfly``: the balanced 1,056-terminal dragonfly's latency and throughput
under minimal (MIN), Valiant (VAL), UGAL-L, UGAL-G and progressive adaptive (PAR) routing,
uniform random (UR) and the group-shift "worst case" (WC), beside the exact bounds and the
papers' claims.

The network is Kim, Dally, Scott and Abts's balanced dragonfly ("Technology-driven,
highly-scalable dragonfly topology", ISCA 2008): p = 4, a = 8, h = 4, g = 33
(``configs/families/dragonfly_1056.yaml``: global links 1 µs, local 48 ns, all 20 Gb/s).
Single-packet messages, Poisson arrivals, NICs fast enough (160 Gb/s, injection rate factor
8) not to cap a terminal below its link; window runs of 20 µs warm-up, 60 µs measured, 40 µs
drain; one full sweep of the load grid per curve (latency and accepted load at every load).

What the papers say, as their abstracts and the later literature state it (their figures could
not be read here): MIN suits uniform traffic and collapses under the adversarial group shift,
where every group's traffic crowds its one global link to the next group; VAL balances any
traffic at about half the capacity; UGAL-G (ideal global queue information) performs like MIN
on uniform traffic and like VAL on the adversarial one; UGAL-L, deciding from the source
router's own queues, approaches it less well (Kim et al. 2008; Jiang, Kim and Dally, "Indirect
adaptive routing on large scale interconnection networks", ISCA 2009), where PAR, deciding
again at the gateway, comes closer to UGAL-G on the adversarial traffic.  icsim computes the
exact bounds of the two oblivious algorithms (:func:`exact_throughput`: every channel's load
per unit of per-terminal injection, over every pair of routers) and checks each claim against
the simulation with its verdict (:func:`checks`).

BookSim2 beside it: ``booksim.csv`` in the output folder, when present, holds BookSim2's own
dragonfly (``topology = dragonflynew``, ``k = 4``: the same p, a, h, g and absolute
arrangement; 1-flit packets, 3 VCs of 256 flits, local channels 10 cycles and global 100, its
``min`` and ``ugal`` routing, the ``uniform`` and ``bad_dragon`` traffic -- the group shift),
its γ* bisected on the same 0.05 grid (a load sustained: no "unstable" ending and accepted at
least 0.95 x offered); the report sets it beside icsim's.  BookSim2 is not part of icsim: the
file says how it was made (public source, built here, run by hand).
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
                                                   star_cell, sweep_curves, write_exact)
from icsim.experiments.papers.reproduce import Reproduction, simulated_source
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.outputs import Outputs, file_times
from icsim.model.config import set_path
from icsim.model.topology import Dragonfly
from icsim.routing.algorithms.dragonfly import MinimalRoutes

NETWORK = "families/dragonfly_1056.yaml"
#: (label, algorithm)
ALGORITHMS = (("MIN", "dfly_min"), ("VAL", "dfly_val"), ("UGAL-L", "ugal_l"),
              ("UGAL-G", "ugal_g"), ("PAR", "par"))
#: (column, pattern)
PATTERNS = (("UR", "uniform"), ("WC", "group_shift"))
#: the model around the routing (module docstring)
OVERRIDES = {"traffic.message_packets": 1, "traffic.arrivals": "exponential",
             "nic.bandwidth_gbps": 160, "nic.injection_rate_factor": 8,
             "run.warmup_us": 20, "run.measure_us": 60, "run.drain_us": 40}
#: fine below MIN's group-shift ceiling (1/32), then the 0.05 grid of the papers' figures
LOADS = "0.01,0.02,0.03,0.04," + ",".join(f"{x:.2f}" for x in np.arange(0.05, 1.0001, 0.05))


def rates(topology: Dragonfly, column: str) -> np.ndarray:
    """Router-to-router traffic per unit of per-terminal injection (``R[s, d]``: packets per
    link time from router s's terminals to router d's): UR over the other terminals, WC each
    terminal to the terminals of the next group."""
    n, p, a = topology.num_nodes, topology.terminals_per_router, topology.routers_per_group
    if column == "UR":
        t = topology.num_terminals
        out = np.full((n, n), p * p / (t - 1))
        np.fill_diagonal(out, p * (p - 1) / (t - 1))
        return out
    out = np.zeros((n, n))
    groups = np.arange(n) // a
    nxt = (groups + 1) % topology.num_groups
    out[np.arange(n)[:, None], (nxt[:, None] * a + np.arange(a)[None, :])] = p / a
    return out


def channel_loads(routes: MinimalRoutes, traffic: np.ndarray) -> np.ndarray:
    """Every channel's load ``[router, port]`` when the router pairs' traffic follows the
    minimal routes."""
    topo = routes.topology
    n = topo.num_nodes
    load = np.zeros((n, topo.num_ports))
    src, dst = np.nonzero(traffic)
    w = traffic[src, dst]
    cur = src.copy()
    for _ in range(3):                       # at most local, global, local
        on = cur != dst
        if not on.any():
            break
        port = routes.port[cur[on] * n + dst[on]]
        np.add.at(load, (cur[on], port), w[on])
        cur[on] = topo.neighbor_array[cur[on], port]
    return load


def exact_throughput(routes: MinimalRoutes, column: str, valiant: bool) -> float:
    """The ideal throughput (γ units) of MIN, or with ``valiant`` of VAL (each packet through
    the entry router of a uniformly drawn other group), under the column's traffic: the
    capacity 1 of a channel over its heaviest expected load, at most 1 (a terminal's link)."""
    traffic = rates(routes.topology, column)
    if valiant:
        entry = routes.entry                        # (n, g - 1)
        m = entry.shape[1]
        first = np.zeros_like(traffic)
        second = np.zeros_like(traffic)
        out_of = traffic.sum(axis=1)
        for j in range(m):
            e = entry[:, j]
            np.add.at(first, (np.arange(len(e)), e), out_of / m)
            np.add.at(second, e, traffic / m)
        traffic = first + second
    worst = channel_loads(routes, traffic).max()
    return float(min(1.0, 1.0 / worst))


def base_config() -> dict[str, Any]:
    data = yaml.safe_load(bundled(NETWORK).read_text())
    for key, value in OVERRIDES.items():
        set_path(data, key, value)
    return data


def curves() -> list[Curve]:
    grid = parse_loads(LOADS)
    out = []
    for label, name in ALGORITHMS:
        for column, pattern in PATTERNS:
            data = base_config()
            set_path(data, "routing.algorithm", name)
            set_path(data, "traffic.pattern", pattern)
            out.append(Curve(f"{label} {column}", data, grid,
                             {"algorithm": label, "column": column}))
    return out


def run_sweep(out: Path, workers: int | None = None, report_only: bool = False,
              figures: Path | None = None, outputs: Any = None) -> pd.DataFrame:
    """The sweep in ``out/sim`` (resumable from its ``results.csv``): one row per (algorithm,
    column) with γ*, the accepted load at the top of the grid, the latency at γ 0.1, and the
    figures."""
    def extra(c: Any) -> dict:
        by_load = {round(float(r["offered_load"]), 6): r for r in c.rows}
        top = by_load.get(max(by_load)) if by_load else None
        low = by_load.get(0.1)
        return {"accepted_at_1": float(top["accepted_load"]) if top else float("nan"),
                "latency_ns_at_0.1": float(low["latency_ns"]) if low else float("nan")}

    return sweep_curves(curves(), out / "sim", workers, report_only, "dragonfly", extra,
                        figures=figures, outputs=outputs)


def checks(sim: pd.DataFrame, exact: dict[tuple[str, str], float]) -> list[tuple[str, str, str]]:
    """(claim, figures, verdict) for each claim of the module docstring."""
    g = {(r.algorithm, r.column): r.gamma_star for r in sim.itertuples()}
    out = []

    def add(claim: str, figures: str, ok: bool, why: str = "") -> None:
        out.append((claim, figures, ("agrees" if ok else "differs") + (f": {why}" if why else "")))

    def num(x: Any) -> float:
        return float("nan") if x is None or pd.isna(x) else float(x)

    step = 0.05
    for label in ("MIN", "VAL"):
        for column in ("UR", "WC"):
            ideal = exact[(label, column)]
            got = num(g.get((label, column)))
            add(f"{label} {column} at or below its exact bound {ideal:.4f}",
                f"γ* {got:.3f}", got <= ideal + 1e-9 or np.isnan(got))
    got = num(g.get(("MIN", "WC")))
    add("MIN collapses under group shift (Kim et al. 2008): every group's traffic on one "
        "global link, at most 1/(a p) = 1/32",
        f"γ* {got:.3f}, exact {exact[('MIN', 'WC')]:.4f}", got <= 1 / 32 + 1e-9 or np.isnan(got))
    val = [num(g.get(("VAL", c))) for c in ("UR", "WC")]
    add("VAL's ceiling near one half on both traffics",
        f"UR {val[0]:.3f}, WC {val[1]:.3f}", all(0.35 <= v <= 0.5 + 1e-9 for v in val))
    for column in ("UR", "WC"):
        best = max(num(g.get(("MIN", column))), num(g.get(("VAL", column))))
        ug = num(g.get(("UGAL-G", column)))
        add(f"UGAL-G near the better of MIN and VAL on {column} (Kim et al. 2008)",
            f"UGAL-G {ug:.3f}, better of the two {best:.3f}", ug >= best - 2 * step,
            "within two grid steps" if ug >= best - 2 * step else "more than two grid steps "
            "below")
    for column in ("UR", "WC"):
        gl, ll = num(g.get(("UGAL-G", column))), num(g.get(("UGAL-L", column)))
        add(f"UGAL-L at or below UGAL-G on {column} (local information; Jiang et al. 2009)",
            f"UGAL-L {ll:.3f}, UGAL-G {gl:.3f}", ll <= gl + step, "within a grid step")
    par, ll, gl = (num(g.get((a, "WC"))) for a in ("PAR", "UGAL-L", "UGAL-G"))
    add("PAR at least UGAL-L and near UGAL-G on WC (Jiang et al. 2009)",
        f"PAR {par:.3f}, UGAL-L {ll:.3f}, UGAL-G {gl:.3f}",
        par >= ll - step and par >= gl - 2 * step, "within the grid steps stated")
    return out


def report(sim: pd.DataFrame | None, exact: dict[tuple[str, str], float],
           booksim: pd.DataFrame | None = None) -> str:
    lines = ["# Dragonfly routing: the balanced 1,056-terminal network", "",
             "Made by `icsim reproduce dragonfly --simulate --out DIR`; the same command "
             "without `--simulate` redraws this report from `DIR/sim/results.csv`.", "",
             "Network: p = 4, a = 8, h = 4, g = 33 (264 routers, 1,056 terminals, one global "
             "link between every two groups), global links 1 µs, local 48 ns, 20 Gb/s, "
             "512-byte single-packet messages, 8-packet queues, credit flow control "
             "(`configs/families/dragonfly_1056.yaml`; module docstring of "
             "`icsim.experiments.papers.dragonfly`). γ = 1: one packet per link time per "
             "terminal.", "",
             "## Exact bounds of the oblivious algorithms", "",
             "| algorithm | UR | WC (group shift) |", "|---|---|---|"]
    for label in ("MIN", "VAL"):
        lines.append(f"| {label} | {exact[(label, 'UR')]:.4f} | {exact[(label, 'WC')]:.4f} |")
    lines += ["", "Every channel's expected load per unit of per-terminal injection, over all "
              "264 x 264 router pairs on icsim's own routes; the bound is 1 over the heaviest "
              "(capped at 1, a terminal's link).", ""]
    if sim is None:
        lines += ["No simulation in this folder: `--simulate` runs it."]
        return "\n".join(lines) + "\n"
    lines += ["## Simulated saturation throughput γ*", "",
              "| algorithm | UR | WC (group shift) | latency at γ 0.1, UR (ns) |",
              "|---|---|---|---|"]
    for label, _ in ALGORITHMS:
        row = sim[sim.algorithm == label].set_index("column")
        cells = [star_cell(row.at[c, "gamma_star"], row.at[c, "lower_bound"])
                 for c in ("UR", "WC")]
        lines.append(f"| {label} | {cells[0]} | {cells[1]} | "
                     f"{row.at['UR', 'latency_ns_at_0.1']:.0f} |")
    lines += ["", "Why the simulation stops below the exact bounds: MIN (and UGAL and PAR, which "
              "route uniform traffic mostly minimally) at γ* 0.80 of its bound 1.0 is buffer-bound: a global "
              "link of 1 µs needs more than the 8 packets of a queue in flight to run flat out. "
              "Measured with 32-packet queues (`icsim run configs/families/dragonfly_1056.yaml "
              "--set routing.algorithm=dfly_min --set traffic.load=0.95 --set "
              "router.queue_packets=32 --set nic.bandwidth_gbps=160 --set "
              "nic.injection_rate_factor=8`): sustained at γ 0.95 (accepted 0.932; with 8 "
              "packets, 0.828). VAL's 0.45 is 90 % of its bound 0.5, the loss of credit flow "
              "control on its two global hops.",
              "", "Figures: `sim/latency.png`, `sim/accepted.png`, `sim/derouted.png`.", "",
              "## The claims, and the verdicts", "", "| claim | figures | verdict |",
              "|---|---|---|"]
    for claim, figures, verdict in checks(sim, exact):
        lines.append(f"| {claim} | {figures} | {verdict} |")
    if booksim is not None:
        lines += ["", "## BookSim2's own dragonfly on the same network", "",
                  "| algorithm | UR: icsim | UR: BookSim2 | WC: icsim | WC: BookSim2 |",
                  "|---|---|---|---|---|"]
        g = {(r.algorithm, r.column): r.gamma_star for r in sim.itertuples()}
        b = {(r.algorithm, r.column): r.gamma_star for r in booksim.itertuples()}
        for label in ("MIN", "UGAL-L"):
            cells = []
            for column in ("UR", "WC"):
                cells += [star_cell(g.get((label, column))), star_cell(b.get((label, column)))]
            lines.append(f"| {label} | {' | '.join(cells)} |")
        lines += ["", str(booksim.attrs.get("how", "")), ""]
    return "\n".join(lines) + "\n"



def read_booksim(path: Path) -> pd.DataFrame | None:
    """BookSim2's γ* (``algorithm, column, gamma_star``; comment lines first, saying how they
    were made), or None without the file."""
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    df = pd.read_csv(path, comment="#")
    df.attrs["how"] = " ".join(line.lstrip("# ").strip() for line in text.splitlines()
                               if line.startswith("#"))
    return df


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_sweep_arguments(parser, "dragonfly", "10 curves x 24 loads, a few minutes on two cores")


def reproduce(*, out: str | Path | None = None, simulate: bool = False,
              workers: int | None = None) -> Reproduction:
    """``report.md``, ``exact.csv`` and, with ``simulate`` (or a sweep already in the folder),
    ``simulated.csv`` and the figures in ``out/sim``."""
    source = simulated_source("dragonfly", out, simulate, "sim/results.csv")
    out = source.out
    out.mkdir(parents=True, exist_ok=True)
    since, outputs = file_times(out), Outputs(force=True)
    topo = Dragonfly(4, 8, 4)
    routes = MinimalRoutes(topo)
    exact = {(label, column): exact_throughput(routes, column, label == "VAL")
             for label in ("MIN", "VAL") for column in ("UR", "WC")}
    write_exact(out, exact, outputs)
    sim = simulated(source, run_sweep, simulate, workers, outputs)
    booksim = read_booksim(source.runs / "booksim.csv")
    text = report(sim, exact, booksim if sim is not None else None)
    return reproduction(source, text, since, outputs)


DRAGONFLY = SimpleNamespace(add_arguments=add_arguments, reproduce=reproduce)
