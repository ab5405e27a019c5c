"""The simulated side of ``icsim reproduce torus-routing --simulate``: every algorithm's
saturation throughput γ* on the k-ary n-cube, beside the exact ideal of every oblivious entry.

One sweep (:mod:`icsim.experiments.pipeline.sweep`, bisection on a 0.05 grid refined by two
more bisection steps to 0.0125, resumable from ``OUT/sim/results.csv``) of the clean profile
(``configs/ofr/clean/k8.yaml``: 512-byte packets, credit flow control, 8-packet queues, window
runs) on the k-ary n-cube, with single-packet messages (the RLB and GOAL papers' packets), NICs
fast enough (160 Gbps, injection rate factor 8) not to cap nearest-neighbour traffic below its
ideal 4, and shorter windows (50 µs warm-up, 200 µs measured, 50 µs drain: 64 nodes settle
fast).  The drain is short on purpose: γ* is judged network-wide, and on a permutation whose
bottleneck carries a few flows (DOR's worst case: 4 of 64) a few per cent of overload on them
leaves a backlog that a 150 µs drain clears unseen (DOR's worst case was then sustained at
0.2625, 5 % above its exact 0.25); 50 µs leaves it undelivered (starved), while uniform and NN
runs near their γ* still finish.  Then a confirming sweep (``OUT/sim/confirm/``) runs every
curve again with 2 ms windows around its first γ* (:func:`confirming`): a randomised routing's
draws load a channel as their expectation only on average (RLBth's worst case on the 2-cube at
γ 0.28: channels up to 0.065 of their bandwidth off their expected utilisation over 200 µs,
0.014 over 2 ms); its γ* is the one reported.
Curves: the algorithms of
:data:`SIMULATED` under NN, UR, BC, TP and TOR; each oblivious algorithm's own worst-case
permutation (WC; the adaptive ones run DOR's and RLB's and report the lower, the adversaries
known here: their own worst case has no exact form); and ``perms`` of the analytic RP column's
random permutations (RP: their mean).  Permutations run from files written to ``OUT/sim/``
(``traffic.pattern: permutation``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from icsim.configs import bundled
from icsim.experiments.analyze import write_permutation
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.execution import SerialExecutor, make_executor
from icsim.experiments.pipeline.plots import plot_results
from icsim.experiments.pipeline.rows import UNIT_FIELD
from icsim.experiments.pipeline.sweep import Sweep
from icsim.model.config import Config, set_path
from icsim.model.topology import Torus
from icsim.routing.oblivious import Oblivious
from icsim.routing.registry import ROUTING
from icsim.traffic.load import packets_per_link_time

#: (label, algorithm, settings, oblivious)
SIMULATED = (("DOR", "dor", {}, True), ("ROMM, random ties", "romm", {"tie": "random"}, True),
             ("VAL", "val", {}, True), ("RLB", "rlb", {}, True), ("RLBth", "rlbth", {}, True),
             ("O1TURN", "o1turn", {}, True),
             ("minimal adaptive (ABR)", "abr", {}, False), ("POR", "por", {}, False),
             ("OFR", "ofr", {}, False), ("GOAL", "goal", {}, False), ("CQR", "cqr", {}, False))
#: the oblivious ones again on dateline VCs (``deadlock: dateline``), on the 2-cube: the
#: papers' deadlock scheme beside icsim's bubble rule, on the same paths
DATELINE = tuple((f"{label}, dateline", name, {**settings, "deadlock": "dateline"}, True)
                 for label, name, settings, oblivious in SIMULATED if oblivious)
#: the traffics the dateline variants run (their RP and TP would repeat what UR and WC show)
DATELINE_COLUMNS = ("NN", "UR", "BC", "TOR", "WC")
#: (column, pattern) of the named traffics
NAMED = (("NN", "neighbor"), ("UR", "uniform"), ("BC", "bitcomplement"), ("TP", "transpose"),
         ("TOR", "tornado"))
#: whose worst-case permutations the adaptive algorithms run
ADVERSARIES = ("DOR", "RLB")
#: the model around the routing (docs: module docstring)
OVERRIDES = {"traffic.message_packets": 1, "nic.bandwidth_gbps": 160,
             "nic.injection_rate_factor": 8, "run.warmup_us": 50, "run.measure_us": 200,
             "run.drain_us": 50}
STEP = 0.05
#: bisection steps below the grid: γ* to within STEP / 2^REFINE
REFINE = 2
#: the confirming search's window (µs): ten times the first search's.  A randomised routing's
#: draws load a channel as the exact analysis says only on average: on RLBth's worst case on
#: the 8-ary 2-cube at γ 0.28 the channels ran up to 0.065 of their bandwidth off their
#: expected utilisation over 200 µs, 0.014 over 2 ms -- enough for a short window to sustain
#: a load above the exact ideal, or to lose one below it
CONFIRM_MEASURE_US = 2000
#: the confirming grid: the first search's γ* and this many fine steps below and above it
CONFIRM_BELOW, CONFIRM_ABOVE = 8, 2


def base_config(k: int, n: int = 2) -> dict[str, Any]:
    data = yaml.safe_load(Path(bundled("ofr/clean/k8.yaml")).read_text())
    set_path(data, "topology.dims", [k] * n)
    for key, value in OVERRIDES.items():
        set_path(data, key, value)
    return data


def permutations(k: int, perms: int, seed: int, folder: Path,
                 ideal: dict[str, Oblivious], n: int = 2) -> dict[str, Path]:
    """Write the permutation files: ``WC <label>`` for each oblivious algorithm, ``RP <i>``
    for the first ``perms`` of the analytic RP column's permutations (the same draws)."""
    files = {}
    for label, exact in ideal.items():
        if base_label(label) != label:          # the same paths: the same worst case
            files[f"WC {label}"] = files[f"WC {base_label(label)}"]
            continue
        wc = exact.worst_case()
        path = folder / f"wc-{label.split(',')[0].lower()}.txt"
        write_permutation(path, wc.mapping, f"worst case of {label} on the {k}-ary {n}-cube")
        files[f"WC {label}"] = path
    rng = np.random.default_rng(seed)
    for i in range(perms):
        path = folder / f"rp-{i}.txt"
        write_permutation(path, rng.permutation(k ** n), f"random permutation {i} (seed {seed})")
        files[f"RP {i}"] = path
    return files


def algorithms(n: int) -> tuple:
    """:data:`SIMULATED` on an n-cube (O1TURN is 2-D), and :data:`DATELINE` on the 2-cube."""
    return tuple(a for a in SIMULATED if n == 2 or a[1] != "o1turn") + (DATELINE if n == 2
                                                                       else ())


def base_label(label: str) -> str:
    """The bubble-rule algorithm a :data:`DATELINE` label runs the paths of."""
    return label.removesuffix(", dateline")


def named_traffics(n: int) -> tuple:
    """:data:`NAMED` on an n-cube (TP is the 3-D transpose on a 3-cube)."""
    return tuple((c, "transpose3d" if p == "transpose" and n == 3 else p) for c, p in NAMED)


def curves(k: int, files: dict[str, Path], ideal: dict[str, Oblivious],
           named: dict[tuple[str, str], float], n: int = 2) -> list[Curve]:
    """One curve per (algorithm, traffic); ``guess`` the ideal where there is one."""
    base = base_config(k, n)
    top = max([v for v in named.values() if np.isfinite(v)] + [1.0]) + 0.5
    grid = parse_loads(f"{STEP}:{round(top / STEP) * STEP:.2f}:{STEP}")
    out = []
    for label, name, settings, oblivious in algorithms(n):
        traffics = [(c, p, None) for c, p in named_traffics(n)]
        if oblivious:
            traffics.append(("WC", "permutation", files[f"WC {label}"]))
        else:
            traffics += [("WC", "permutation", files[f"WC {a}"]) for a in ADVERSARIES
                         if f"WC {a}" in files]
        traffics += [("RP", "permutation", f) for key, f in files.items()
                     if key.startswith("RP ")]
        if base_label(label) != label:
            traffics = [t for t in traffics if t[0] in DATELINE_COLUMNS]
        for column, pattern, file in traffics:
            d = json.loads(json.dumps(base))
            set_path(d, "routing.algorithm", name)
            if settings:
                set_path(d, f"routing.{name}", dict(settings))
            set_path(d, "traffic.pattern", pattern)
            if file is not None:
                set_path(d, "traffic.params.permutation.file", str(Path(file).resolve()))
            guess = named.get((label, column)) if file is None else None
            tag = "" if file is None else f" {Path(file).stem}"
            out.append(Curve(f"{label} {column}{tag}", d, grid,
                             {"algorithm": label, "column": column, "file": tag.strip()},
                             guess=guess if guess is not None and np.isfinite(guess) else None))
    return out


def simulate(k: int, out: Path, *, n: int = 2, perms: int = 2, seed: int = 0,
             workers: int | None = None, report_only: bool = False,
             analytic: pd.DataFrame | None = None) -> pd.DataFrame:
    """Run (or resume, or only read with ``report_only``) the sweep of the k-ary n-cube in
    ``out/sim`` (``out/sim-<n>`` for n other than 2); one row per (algorithm, column):
    simulated γ*, whether the search finished, and the ideal."""
    folder = out / ("sim" if n == 2 else f"sim-{n}")
    folder.mkdir(parents=True, exist_ok=True)
    topo = Torus((k,) * n)
    config = Config(topology={"dims": [k] * n})
    ideal = {}
    for label, name, settings, oblivious in algorithms(n):
        if oblivious:
            cls = ROUTING.get(name)
            ideal[label] = Oblivious(topo, cls(topo, config, cls.Settings(**settings)))
    named = {}
    if analytic is not None:
        part = analytic.set_index("algorithm")
        for label in ideal:
            for column, _ in NAMED:
                named[(label, column)] = float(part.at[base_label(label), column])
    files = permutations(k, perms, seed, folder, ideal, n)
    sweep = Sweep(curves(k, files, ideal, named, n), folder, search="bisect", refine=REFINE,
                  run_missing=not report_only, label="torus-routing --simulate")
    executor = SerialExecutor() if workers == 1 else make_executor(workers)
    with executor:
        outcome = sweep.run(executor)
        confirm = Sweep(confirming(outcome), folder / "confirm", search="bisect",
                        run_missing=not report_only, label="torus-routing --simulate (confirm)")
        confirmed = {c.curve.label: c for c in confirm.run(executor).curves}
    rows = []
    for c in outcome.curves:
        p, first = c.curve.params, c.result.gamma_star_refined
        final = confirmed.get(c.curve.label)
        gamma = None if final is None else final.result.gamma_star
        at = [r for r in (final.rows if final else []) if gamma is not None
              and abs(float(r["offered_load"]) - gamma) < 1e-9]
        rows.append({"algorithm": p["algorithm"], "column": p["column"], "file": p["file"],
                     "gamma_star": gamma, "first": first,
                     # no first γ* (its lowest grid load saturated): nothing to confirm
                     "complete": c.result.complete if final is None else
                     final.result.complete and not final.result.gamma_star_lower_bound,
                     "accepted": float(at[0]["accepted_load"]) if at else float("nan")})
    runs = pd.DataFrame(rows)
    table = _table(runs, _ideals(ideal, named, files))
    table.insert(0, "network", f"{k}-ary {n}-cube")
    # the one unit across families (docs/model.md §6), for runs that record it (a table of
    # runs made before the field stays as it was committed)
    if any(r.get(UNIT_FIELD) not in (None, "") for r in outcome.rows):
        table.insert(4, "simulated_packets_per_terminal_link_time",
                     table["simulated"] * packets_per_link_time(Torus((k,) * n)))
    # the figures: the named traffics, one line per algorithm (the dateline variants only in
    # the table: on the same paths, their curves lie within a few per cent of the bubble rule's)
    named_rows = [r for r in outcome.rows if r.get("config.traffic.pattern") != "permutation"
                  and ", dateline" not in str(r.get("curve", ""))]
    plot_results(pd.DataFrame(named_rows) if named_rows else outcome.rows, folder)
    return table


def confirming(outcome: Any) -> list[Curve]:
    """The second search: each curve again with a :data:`CONFIRM_MEASURE_US` window, bisected
    on the fine grid around the first search's γ* (``CONFIRM_BELOW`` steps below it,
    ``CONFIRM_ABOVE`` above); its γ* is the one reported (none below the grid: "–")."""
    fine = STEP / 2 ** REFINE
    out = []
    for c in outcome.curves:
        first = c.result.gamma_star_refined
        if first is None:
            continue
        grid = [round(first + i * fine, 6) for i in range(-CONFIRM_BELOW, CONFIRM_ABOVE + 1)
                if first + i * fine > 1e-9]
        data = json.loads(json.dumps(c.curve.data))
        set_path(data, "run.measure_us", CONFIRM_MEASURE_US)
        out.append(Curve(c.curve.label, data, grid, dict(c.curve.params), guess=first))
    return out


def _ideals(ideal: dict[str, Oblivious], named: dict[tuple[str, str], float],
            files: dict[str, Path]) -> dict[tuple[str, str], float]:
    """The exact throughput of every oblivious entry: the named traffics' from the analytic
    table, WC the algorithm's worst case, RP the mean over the same permutation files."""
    out = dict(named)
    perms = [np.loadtxt(f, dtype=np.int64, comments="#") for key, f in files.items()
             if key.startswith("RP ")]
    for label, exact in ideal.items():
        out[(label, "WC")] = exact.worst_case().throughput
        if perms:
            every = np.arange(exact.N)
            values = []
            for m in perms:
                rates = np.zeros((exact.N, exact.N))
                rates[every, m] = 1.0
                values.append(exact.throughput(exact.loads(rates)))
            out[(label, "RP")] = float(np.mean(values))
    return out


def _table(runs: pd.DataFrame, ideals: dict[tuple[str, str], float]) -> pd.DataFrame:
    """Per algorithm and column: γ* (WC: the lowest of the adversaries; RP: the mean), the
    first search's γ* beside it (``first``, the same way), and the exact ideal of the same
    traffic where the algorithm is oblivious (NaN otherwise)."""
    out = []
    for (label, column), g in runs.groupby(["algorithm", "column"], sort=False):
        values = pd.to_numeric(g.gamma_star, errors="coerce")
        first = pd.to_numeric(g["first"], errors="coerce")
        at = int(values.idxmin()) if column == "WC" and values.notna().any() else None

        def pick(v: pd.Series) -> float:
            return (v.min() if column == "WC" else v.mean(skipna=False) if column == "RP"
                    else v.iloc[0])
        accepted = (g.accepted[at] if at is not None else g.accepted.mean() if column == "RP"
                    else g.accepted.iloc[0])
        out.append({"algorithm": label, "column": column, "simulated": pick(values),
                    "accepted": accepted, "ideal": ideals.get((label, column), float("nan")),
                    "complete": bool(g.complete.all()), "first": pick(first)})
    return pd.DataFrame(out)
