"""Every committed γ* beside its exact bound (issue 56): one table, from the committed CSVs.

``python -m icsim.experiments.bound_table`` reads each committed reproduction's γ* (its table
CSV) and the config of every run behind it (its ``results.csv``), and computes the bound of
that config without simulating:

exact
    an oblivious routing's ideal throughput from its channel loads (``icsim analyze``, per
    terminal on the families: D-mod-k, MIN, VAL, DOR, ROMM, RLB, ...);
paths
    a minimal adaptive routing's capacity: the maximum concurrent flow over the paths its
    program offers (:mod:`icsim.routing.capacity`; HyperX minimal adaptive, up*/down*);
capacity
    any routing's: the maximum concurrent flow over every channel where the linear program is
    small (:data:`LP_VARIABLES`), else the weaker of two counts no routing beats -- the
    channel time of minimal routes over the channels (every topology) and, on a dragonfly,
    the global channels a packet must cross (one to a group it has a direct link to within
    that link's capacity, else two).

A γ* that is the lowest over several adversaries (torus-routing's adaptive WC) is held to the
lowest of their bounds; a mean over random permutations (RP) to the mean of theirs.  It writes
``bounds.csv`` and ``report.md`` to ``--out`` (default ``experiments/results/bounds``) and
prints the rows above their bound; re-run it after the committed reproductions change.
Closed-loop reproductions (apps, Angara NPB, Angara's exchanges) have no γ* and are listed so.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
#: the most flow variables of an any-routing capacity program solved for the table
LP_VARIABLES = 60_000
#: the reproductions without a γ* (closed-loop applications, exchanges, table studies)
NO_GAMMA = (("apps_torus", "closed-loop application jobs: completion times, no γ*"),
            ("angara_npb", "closed-loop NPB skeletons: completion times, no γ*"),
            ("angara", "routing tables and single exchanges: no load sweep, no γ*"),
            ("acro", "virtual-layer assignment: no simulation"))


# ---------------------------------------------------------------------------------- bounds
def _local(data: dict[str, Any]) -> dict[str, Any]:
    """A committed config with its permutation file found in this checkout (the runs recorded
    the absolute path of the tree they ran in)."""
    params = (data.get("traffic") or {}).get("params") or {}
    perm = params.get("permutation") if isinstance(params, dict) else None
    if isinstance(perm, dict) and perm.get("file"):
        path = str(perm["file"])
        at = path.find("experiments/results/")
        if at >= 0:
            perm["file"] = str(ROOT / path[at:])
    return data


@functools.lru_cache(maxsize=None)
def bound_of(text: str) -> tuple[float, str]:
    """(bound in γ units, kind) of a config given as JSON text (module docstring)."""
    from icsim.experiments.analyze import analyze_config
    from icsim.model.config import ConfigError, config_from_dict
    from icsim.routing.capacity import (capacity_bound, channel_time_bound,
                                        global_channel_bound, program_masks)
    from icsim.simulator.build import prepare

    config = config_from_dict(_local(json.loads(text)))
    try:
        report = analyze_config(config)
        return float(report["throughput"]), "exact"
    except ConfigError:
        pass
    prep = prepare(config)
    topo = prep.topology
    rates = prep.pattern.rates()
    routing = prep.routing_cls(topo, prep.config, prep.settings)
    masks = program_masks(topo, routing)
    if masks is not None:
        return capacity_bound(topo, rates, masks), "paths"
    channels = int((np.asarray(topo.neighbor_array) >= 0).sum())
    if topo.num_nodes * channels <= LP_VARIABLES:
        return capacity_bound(topo, rates), "capacity (LP)"
    value = channel_time_bound(topo, rates)
    kind = "capacity (channel time)"
    if "groups" in getattr(topo, "capabilities", ()):
        g = global_channel_bound(topo, rates)
        if g < value:
            value, kind = g, "capacity (global channels)"
    return value, kind


def _bound(row: pd.Series) -> tuple[float, str]:
    from icsim.experiments.pipeline.rows import config_of_row

    data = config_of_row({k: v for k, v in row.to_dict().items() if v == v})   # no NaN
    keep = {k: data[k] for k in ("seed", "topology", "routing", "traffic", "packet", "link",
                                 "nic") if k in data}
    return bound_of(json.dumps(keep, sort_keys=True, default=str))


def _runs(path: Path) -> dict[str, pd.Series]:
    """The first run of every curve of a results file (its config is the curve's)."""
    runs = pd.read_csv(path, low_memory=False)
    return {str(c): g.iloc[0] for c, g in runs.groupby("curve", sort=False)}


# ---------------------------------------------------------------------------------- sources
def _families() -> list[dict[str, Any]]:
    out = []
    for name in ("fat_tree", "dragonfly", "hyperx"):
        folder = RESULTS / name
        runs = _runs(folder / "sim" / "results.csv")
        for r in pd.read_csv(folder / "simulated.csv").itertuples():
            label = f"{r.algorithm} {r.column}"
            value, kind = _bound(runs[label])
            out.append(_row(name, label, float(r.gamma_star), bool(r.lower_bound), value, kind))
    return out


def _torus_routing() -> list[dict[str, Any]]:
    folder = RESULTS / "torus_routing"
    sim = pd.read_csv(folder / "simulated.csv")
    runs = {"8-ary 2-cube": _runs(folder / "sim" / "confirm" / "results.csv")
            | _other(folder / "sim"),
            "8-ary 3-cube": _runs(folder / "sim-3" / "confirm" / "results.csv")
            | _other(folder / "sim-3")}
    out = []
    for r in sim.itertuples():
        if r.simulated != r.simulated:
            continue
        label = f"{r.algorithm} {r.column}"
        curves = {c: row for c, row in runs[r.network].items()
                  if c == label or c.startswith(label + " ")}
        bounds = [_bound(row) for row in curves.values()]
        if not bounds:
            continue
        if r.column == "RP":
            value = float(np.mean([b for b, _ in bounds]))
            how = "mean over the permutations"
        else:                  # one curve, or the lowest γ* of several adversaries
            value = min(b for b, _ in bounds)
            how = "lowest over the adversaries" if len(bounds) > 1 else ""
        kinds = sorted({k for _, k in bounds})
        kind = "/".join(kinds) + (f", {how}" if how else "")
        out.append(_row("torus_routing", f"{r.network} {label}", float(r.simulated),
                        not bool(r.complete), value, kind))
    return out


def _other(folder: Path) -> dict[str, pd.Series]:
    """Curves of the first search that the confirming one did not run (their γ* stands)."""
    return {c: row for c, row in _runs(folder / "results.csv").items()}


def _ofr() -> list[dict[str, Any]]:
    out = []
    for name, folder in (("ofr_k8", RESULTS / "ofr_k8"), ("ofr_k16", RESULTS / "ofr_k16" /
                                                          "table2")):
        table = pd.read_csv(folder / "table2.csv")
        for profile, g in table.groupby("profile", sort=False):
            runs = _runs(folder / str(profile) / "results.csv")
            for r in g.itertuples():
                label = f"{r.pattern} {r.algorithm}"
                if label not in runs or r.gamma_star != r.gamma_star:
                    continue
                value, kind = _bound(runs[label])
                out.append(_row(name, f"{profile} {r.torus} {label} ({r.mode})",
                                float(r.gamma_star), not bool(r.complete), value, kind))
    return out


def _seeds() -> list[dict[str, Any]]:
    folder = RESULTS / "sweep_seeds_8x8"
    runs = pd.read_csv(folder / "results.csv", low_memory=False)
    out = []
    for r in pd.read_csv(folder / "gamma_star.csv").itertuples():
        g = runs[(runs.curve == r.curve) & (runs["config.seed"] == r.seed)]
        value, kind = _bound(g.iloc[0])
        top = str(getattr(r, "first_saturated", "")) in ("", "nan")
        out.append(_row("sweep_seeds_8x8", f"{r.curve} seed {r.seed}", float(r.gamma_star),
                        top, value, kind))
    return out


def _row(source: str, curve: str, gamma: float, at_least: bool, bound: float,
         kind: str) -> dict[str, Any]:
    margin = round(bound - gamma, 9) + 0.0          # no -0.0000 where they are equal
    return {"reproduction": source, "curve": curve, "gamma_star": gamma,
            "gamma_star_lower_bound": at_least, "bound": bound, "bound_kind": kind,
            "margin": margin, "above": bool(margin < -1e-9)}


SOURCES = (("fat tree, dragonfly, HyperX", _families), ("torus routing", _torus_routing),
           ("OFR Table 2", _ofr), ("seeds example", _seeds))


# ---------------------------------------------------------------------------------- output
def table() -> pd.DataFrame:
    """Every committed γ* with its bound (module docstring)."""
    rows = []
    for _, source in SOURCES:
        rows += source()
    return pd.DataFrame(rows)


def report(df: pd.DataFrame, seconds: float) -> str:
    above = df[df.above]
    lines = ["# Every committed γ* beside its exact bound", "",
             "Written by `python -m icsim.experiments.bound_table` from the committed CSVs (no "
             f"simulation; {seconds:.0f} s on the two shared cores). Bound kinds: **exact**, an "
             "oblivious routing's ideal throughput from its channel loads (`icsim analyze`, per terminal "
             "on the families); **paths**, the maximum concurrent flow over the paths a minimal "
             "adaptive routing's program offers (`icsim analyze --capacity`); **capacity**, any "
             "routing's: the maximum concurrent flow over every channel (LP) where small, else "
             "the channel time of minimal routes over the channels or, on a dragonfly, the "
             "global channels every packet must cross. A mean γ* (RP) is held to the mean of "
             "its permutations' bounds, a lowest over adversaries (adaptive WC) to the lowest "
             "of theirs. Margin: bound − γ*; negative is a γ* above what the network can "
             "carry. `≥`: γ* is only a lower bound (the top of its grid).", "",
             f"**{len(above)} of {len(df)} above their bound**"
             + (":" if len(above) else "."), ""]
    for r in above.itertuples():
        star = ("≥ " if r.gamma_star_lower_bound else "") + f"{r.gamma_star:.4g}"
        lines.append(f"* {r.reproduction}: {r.curve}: γ* {star} > {r.bound_kind} "
                     f"{r.bound:.4g} ({r.margin:+.4f})")
    lines += ["", "Without a γ*: " + "; ".join(f"`{n}/` ({why})" for n, why in NO_GAMMA) + ".",
              "", "| reproduction | curve | γ* | bound | kind | margin |",
              "|---|---|---|---|---|---|"]
    for r in df.itertuples():
        star = ("≥ " if r.gamma_star_lower_bound else "") + f"{r.gamma_star:.4g}"
        flag = " **above**" if r.above else ""
        lines.append(f"| {r.reproduction} | {r.curve} | {star} | {r.bound:.4g} | "
                     f"{r.bound_kind} | {r.margin:+.4f}{flag} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icsim.experiments.bound_table",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(RESULTS / "bounds"),
                        help="folder for bounds.csv and report.md")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    df = table()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "bounds.csv", index=False, float_format="%.6g")
    (out / "report.md").write_text(report(df, time.perf_counter() - t0), encoding="utf-8")
    for r in df[df.above].itertuples():
        print(f"above its bound: {r.reproduction} {r.curve}: γ* {r.gamma_star:.4g} > "
              f"{r.bound:.4g} ({r.bound_kind})")
    print(f"{len(df)} γ*, {int(df.above.sum())} above their bound; wrote {out}/bounds.csv, "
          f"{out}/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
