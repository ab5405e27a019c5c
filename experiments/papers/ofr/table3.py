"""``icsim reproduce ofr-table3``: the OutFlank paper's Table 3, derouted packet shares of OFR
(outflank / wraparound IDNs) and POR on the 16x16x16 torus.

The paper's ratios are "pretty stable within γ ≤ γ*" and equal the γ = 0.10 ratios of its k = 16
sweep (docs/model.md §5a.14 item 15), so each entry is one finite run at γ = 0.10: a couple of
messages per node for the fixed patterns, 12 for butterfly (so that every one of its 12 address
bits is flipped once), 4 for uniform.  Both profiles are run (the clean one in finite mode with
the same message counts, so the two are comparable); the paper's numbers come from the reference
profile.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Literal, Sequence

import pandas as pd

from icsim.experiments.papers.ofr.table2 import PATTERNS, default_configs_dir
from icsim.experiments.papers.published import paper_table
from icsim.experiments.papers.reproduce import Reproduction
from icsim.experiments.pipeline.execution import (add_engine_argument, compile_first, csv_list,
                                                  cut_partial_line, positive_int,
                                                  positive_number)
from icsim.experiments.pipeline.outputs import note
from icsim.model.config import load_config
from icsim.model.input_files import InputFileError
from icsim.simulator.simulation import run as simulate

MESSAGES = {"butterfly": 12, "uniform": 4}        # others: --messages (default 2)
COLUMNS = {"ofr_oidn": ("ofr", "outflank"), "ofr_widn": ("ofr", "wraparound"),
           "ofr_total": ("ofr", "total"), "por_total": ("por", "total")}
EPILOG = __doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--k", type=int, default=16, choices=(8, 16))
    parser.add_argument("--profile", default="both", choices=("clean", "reference", "both"))
    parser.add_argument("--load", type=positive_number, default=0.10)
    parser.add_argument("--messages", type=positive_int, default=2,
                        help="messages per node for the fixed patterns (default 2)")
    parser.add_argument("--patterns", type=csv_list(PATTERNS), default=list(PATTERNS),
                        metavar="P,Q,...", help=f"patterns (default {','.join(PATTERNS)})")
    parser.add_argument("--configs", default=None, metavar="DIR",
                        help="directory holding <profile>/k<k>.yaml (default: the bundled configs/ofr)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/ofr-table3-k<k>)")
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="8x8x8, one message per node")
    add_engine_argument(parser)


def _one(job: dict) -> dict:
    cfg = load_config(job["config"], job["overrides"])
    r = simulate(cfg)
    d = r["derouted"]
    return {**{k: job[k] for k in ("profile", "pattern", "algorithm", "messages")},
            # a run counts only its algorithm's kinds: another's is 0 by definition
            **{kind: d.get(kind, 0.0) for kind in ("outflank", "wraparound", "orthant")},
            "total": d["total"], "packets": r["packets_delivered"],
            "latency_ns": r["latency_ns"], "hops": r["hops"], "dilation": r["dilation"],
            "wall_s": r["wall_s"]}


def jobs(*, k: int, profile: str, load: float, messages: int, patterns: list[str],
         configs: str | Path | None, engine: str | None, quick: bool) -> list[dict]:
    """One finite run per profile, pattern and algorithm (POR, OFR): ``messages`` per node
    (:data:`MESSAGES` for butterfly and uniform; one when ``quick``)."""
    profiles = ("clean", "reference") if profile == "both" else (profile,)
    out = []
    for prof in profiles:
        config = str(Path(configs or default_configs_dir()) / prof / f"k{k}.yaml")
        for pattern in patterns:
            m = 1 if quick else MESSAGES.get(pattern, messages)
            dims = [k, k, 2 * k] if (pattern == "transpose" and k == 8) else [k, k, k]
            for algorithm in ("por", "ofr"):
                out.append({"profile": prof, "pattern": pattern, "algorithm": algorithm,
                            "messages": m, "config": config, "overrides": [
                                f"routing.algorithm={algorithm}", f"traffic.pattern={pattern}",
                                f"traffic.load={load}", "run.mode=finite",
                                f"run.messages_per_node={m}", f"topology.dims={dims}",
                                *([f"run.engine={engine}"] if engine else [])]})
    return out


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Rows per (profile, pattern) with the paper's four columns."""
    rows = []
    for (profile, pattern), g in df.groupby(["profile", "pattern"], sort=False):
        by = g.set_index("algorithm")
        row = {"profile": profile, "pattern": pattern}
        for col, (algo, kind) in COLUMNS.items():
            row[col] = float(by.loc[algo, kind]) if algo in by.index else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(tab: pd.DataFrame, k: int, load: float, wall: float, run_s: float) -> str:
    paper = paper_table("ofr_table3_derouted").set_index("pattern")
    lines = [f"# OutFlank Table 3: derouted shares, {k}x{k}x{k}, γ = {load:.2f}", "",
             "Each cell: reproduced (paper). Paper: reference simulator, 16x16x16.", ""]
    for profile, g in tab.groupby("profile", sort=False):
        lines += [f"## {profile} profile", "",
                  "| pattern | OFR/OIDN | OFR/WIDN | OFR total | POR | max |Δ| |",
                  "|---|---|---|---|---|---|"]
        for _, r in g.iterrows():
            cells, worst = [], 0.0
            for col in COLUMNS:
                p = paper.loc[r.pattern, col] if r.pattern in paper.index else float("nan")
                cells.append(f"{r[col]:.2f} ({p:.2f})")
                if pd.notna(p):
                    worst = max(worst, abs(r[col] - p))
            lines.append(f"| {r.pattern} | {' | '.join(cells)} | {worst:.2f} |")
        lines.append("")
    lines.append(f"Wall time of this invocation {wall / 60:.1f} min; run time {run_s / 60:.1f} "
                 f"min (the sum of the runs' wall times, over every invocation that made them).")
    return "\n".join(lines) + "\n"


def reproduce(*, k: Literal[8, 16] = 16, profile: Literal["clean", "reference", "both"] = "both",
              load: float = 0.10, messages: int = 2, patterns: Sequence[str] = PATTERNS,
              configs: str | Path | None = None, out: str | Path | None = None,
              workers: int = os.cpu_count() or 1, quick: bool = False,
              engine: Literal["auto", "simpy", "compiled"] | None = None) -> Reproduction:
    """OutFlank Table 3 (module docstring); ``icsim.reproduce("ofr-table3", ...)``, the command
    line calls it too.  Finished runs in ``out/runs.jsonl`` are reused; the table is
    ``tables["table3"]``."""
    k = 8 if quick else k
    out = Path(out or f"runs/ofr-table3-k{k}" + ("-quick" if quick else ""))
    out.mkdir(parents=True, exist_ok=True)
    todo = jobs(k=k, profile=profile, load=load, messages=messages, patterns=list(patterns),
                configs=configs, engine=engine, quick=quick)
    done_path = out / "runs.jsonl"
    done = _finished(done_path)
    have = {(d["profile"], d["pattern"], d["algorithm"], d["messages"]) for d in done}
    todo = [j for j in todo if (j["profile"], j["pattern"], j["algorithm"], j["messages"])
            not in have]
    loaded = [load_config(j["config"], j["overrides"]) for j in todo]    # errors: before any run
    if workers > 1:
        compile_first(loaded)               # once here, not in every worker
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=workers) as pool, done_path.open("a") as fh:
        futures = {pool.submit(_one, j): j for j in todo}
        for f in as_completed(futures):
            r = f.result()
            fh.write(json.dumps(r) + "\n")
            fh.flush()
            done.append(r)
            note(f"[ofr-table3] {r['profile']} {r['pattern']} {r['algorithm']}: derouted "
                 f"{r['total']:.3f} ({time.time() - t0:.0f} s)")
    df = pd.DataFrame(done)
    order = {p: i for i, p in enumerate(PATTERNS)}
    df = df.sort_values(["profile", "pattern"], key=lambda s: s.map(order) if s.name == "pattern"
                        else s)
    tab = table(df)
    tab.to_csv(out / "table3.csv", index=False)
    text = markdown(tab, k, load, time.time() - t0, float(df["wall_s"].sum()))
    (out / "table3.md").write_text(text)
    files = {done_path: "written" if todo else "read", out / "table3.csv": "written",
             out / "table3.md": "written"}
    return Reproduction("ofr-table3", out, text, files, {"table3": tab})


def _finished(path: Path) -> list[dict]:
    """The runs already in ``runs.jsonl`` (a last line cut short by a kill dropped first)."""
    done = []
    cut_partial_line(path)
    if path.exists():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            try:
                done += [json.loads(line)] if line.strip() else []
            except json.JSONDecodeError:
                raise InputFileError(str(path), "not a run's JSON record; remove the line "
                                                "to run it again", n) from None
    return done
