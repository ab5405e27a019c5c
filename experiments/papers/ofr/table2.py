"""``icsim reproduce ofr-table2``: the OutFlank paper's Tables 2 and 3.

For each traffic pattern (butterfly, transpose, transpose3d, uniform, bitreverse) and each
routing algorithm (ABR, POR, OFR by default; ``--algorithms`` takes any registered ones, e.g.
``dor``), a saturation search (:mod:`icsim.experiments.pipeline.saturation`) over the pattern's load range on
the paper's torus, as the reference simulator ran it (docs/model.md §5a.13):

=============  ===========  ==================  =============
pattern        loads        torus for k = 8     k = 16
=============  ===========  ==================  =============
butterfly      0.10–1.00    8x8x8               16x16x16
transpose      0.10–0.80    **8x8x16**          16x16x16
transpose3d    0.10–0.60    8x8x8               16x16x16
uniform        0.10–1.00    8x8x8               16x16x16
bitreverse     0.10–0.80    8x8x8               16x16x16
=============  ===========  ==================  =============

Loads step by 0.05.  The runs take their parameters from the profile's config,
``configs/ofr/<profile>/k<k>.yaml`` (``reference``: the reference simulator's behaviour, finite
runs of 32 messages per node; ``clean``: icsim's default model); the routing algorithm, the
pattern and ``topology.dims`` are set per curve.  Pattern parameters come from the config's
``traffic.params``, keyed by pattern (e.g. ``uniform: {include_self: true}`` in the reference
profile).  The saturation rule follows the profile's
``run.mode``: finite mode uses 1.2 × the latency at γ = 0.10, window mode the run's own
saturation test.  Climbing a curve stops after two saturated loads in a row (``--full`` runs
the whole range, as the paper's runs did, for complete latency curves).

Outputs in ``--out`` (default ``runs/ofr-table2-k<k>``; ``-quick`` appended with ``--quick``):

* ``<profile>/results.csv``, ``<profile>/gamma_star.csv`` and the figures of each profile
  (latency at sustained loads per pattern, accepted load, derouted share);
* ``table2.csv``: ``pattern, algorithm, profile, k, gamma_star, paper_gamma_star, diff`` (+
  ``torus, mode, complete, first_saturated, first_saturated_reason, points``);
* ``table3.csv``: derouted shares at γ = 0.10, columns as the paper's Table 3
  (``ofr_oidn, ofr_widn, ofr_total, por_total``) with ``paper_*`` and ``diff_*`` beside;
* ``report.md``: both tables beside the paper's, figures and the provenance of the runs (code
  versions, commits, dates, configs) with the command that redraws it;
* ``provenance.json``: the invocation that last changed any of these files (date, wall time,
  command, backend, runs made and reused); an invocation that changes nothing leaves it as is.

Files whose content does not change are not rewritten, so ``--report-only`` on unchanged runs
leaves a committed results folder as it is; a file tracked by git whose content would change is
kept (and listed, exit status 1) unless ``--force`` is given.

``diff`` columns are filled only where the run is comparable with the paper (same torus:
not ``--quick``, dims not overridden; Table 3 only for k = 16, the size the paper reports).

``--quick`` is a smoke test: 4x4x4 tori for every pattern, loads 0.10, 0.20, ... up to the
pattern's limit, 16-packet messages, 4 messages per node in finite mode and a 10 + 40 µs
window (100 µs drain) in window mode.  A few minutes for all 15 curves on two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from icsim.configs import bundled
from icsim.experiments.papers.published import paper_table
from icsim.experiments.papers.reproduce import add_common_arguments
from icsim.experiments.pipeline.execution import (csv_list, engine_overrides, format_duration,
                                                  git_commit, make_executor, natural_int,
                                                  package_version)
from icsim.experiments.pipeline.outputs import (Outputs, add_output_arguments, progress_option,
                                                report_outputs)
from icsim.experiments.pipeline.saturation import SEARCHES
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.results_file import SweepError
from icsim.experiments.pipeline.sweep import SweepOutcome, run_sweep
from icsim.model.config import ConfigError, apply_overrides, parse_override, set_path
from icsim.simulator.build import from_dict

PATTERNS = ("butterfly", "transpose", "transpose3d", "uniform", "bitreverse")
ALGORITHMS = ("abr", "por", "ofr")
PROFILES = ("clean", "reference")
MAX_LOAD = {"butterfly": 1.00, "transpose": 0.80, "transpose3d": 0.60, "uniform": 1.00,
            "bitreverse": 0.80}
GRID_START, GRID_STEP, QUICK_STEP = 0.10, 0.05, 0.10
TABLE3_LOAD = 0.10
QUICK_DIMS = (4, 4, 4)
QUICK_OVERRIDES = {"traffic.message_packets": 16, "run.messages_per_node": 4,
                   "run.warmup_us": 10, "run.measure_us": 40, "run.drain_us": 100}
#: keys set per curve; --set on them would silently contradict the table's labels
RESERVED = {"routing.algorithm": "use --algorithms", "traffic.pattern": "use --patterns",
            "traffic.load": "each pattern has its own load grid, from 0.10 in steps of 0.05"}

TABLE3_COLUMNS = {"ofr_oidn": ("ofr", "derouted.outflank"),
                  "ofr_widn": ("ofr", "derouted.wraparound"),
                  "ofr_total": ("ofr", "derouted.total"),
                  "por_total": ("por", "derouted.total")}

EPILOG = """\
what it runs:
  patterns x algorithms saturation searches with the profile's config
  (CONFIGS/<profile>/k<k>.yaml), algorithm, pattern and torus set per curve:
  butterfly, uniform 0.10-1.00; transpose, bitreverse 0.10-0.80; transpose3d 0.10-0.60;
  step 0.05; k=8 on 8x8x8 except transposition on 8x8x16 (as the paper's simulator did);
  k=16 on 16x16x16.  gamma* rule from the profile's run.mode (finite: latency <= 1.2 x the
  latency at 0.10; window: the run's own saturation test).

outputs (in --out):
  table2.csv, table3.csv, report.md (beside the paper's numbers, with the provenance of the
  runs), provenance.json (the invocation that last changed them), and per profile
  <profile>/results.csv, gamma_star.csv, verdicts.csv and figures.
  Rerunning the same command resumes: finished runs are reused.  Files whose content does
  not change are left untouched; files tracked by git that would change are kept unless
  --force is given.

quick mode (--quick):
  4x4x4 tori, loads step 0.10, 16-packet messages, 4 messages per node (finite) or a
  10+40 us window (window); minutes, for smoke tests only.

examples:
  icsim reproduce ofr-table2 --k 8 --profile reference --workers 8
  icsim reproduce ofr-table2 --k 16 --profile both --scheduler tcp://head:8786
  icsim reproduce ofr-table2 --quick --algorithms dor        # smoke test, any algorithm
"""


def paper_table2() -> pd.DataFrame:
    """The paper's Table 2 (γ* per pattern, algorithm and k)."""
    return paper_table("ofr_table2_saturation")


def paper_table3() -> pd.DataFrame:
    """The paper's Table 3 (derouted shares on the 16x16x16 torus)."""
    return paper_table("ofr_table3_derouted")


def torus_dims(pattern: str, k: int) -> tuple[int, int, int]:
    """The torus the reference simulator used: 8x8x16 for transposition at k = 8."""
    if pattern == "transpose" and k == 8:
        return (8, 8, 16)
    return (k, k, k)


def load_grid(pattern: str, quick: bool = False) -> list[float]:
    """0.10, 0.15, ... up to the pattern's limit (step 0.10 when quick)."""
    step = QUICK_STEP if quick else GRID_STEP
    return parse_loads(f"{GRID_START}:{MAX_LOAD[pattern]}:{step}")


# ---------------------------------------------------------------------------------- arguments
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--k", type=int, choices=(8, 16), default=8,
                        help="torus size: 8 (8x8x8; transposition on 8x8x16) or 16 (16x16x16); "
                             "default 8")
    parser.add_argument("--profile", choices=(*PROFILES, "both"), default="reference",
                        help="fidelity profile (docs/model.md §5a): reference = the paper's "
                             "simulator, "
                             "clean = icsim's default model, both; default reference")
    add_common_arguments(parser, "runs/ofr-table2-k<k>[-quick]")
    parser.add_argument("--algorithms", type=csv_list(), default=list(ALGORITHMS),
                        metavar="A,B,...",
                        help="routing algorithms to compare (default abr,por,ofr)")
    parser.add_argument("--patterns", type=csv_list(PATTERNS), default=list(PATTERNS),
                        metavar="P,Q,...",
                        help=f"patterns (default all: {','.join(PATTERNS)})")
    parser.add_argument("--configs", default=None, metavar="DIR",
                        help="directory holding <profile>/k<k>.yaml (default configs/ofr of "
                             "the repository)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="override a config value in every run (repeatable), e.g. "
                             "--set run.messages_per_node=8")
    parser.add_argument("--full", action="store_true",
                        help="run each pattern's whole load range (no stopping after two "
                             "saturated loads)")
    parser.add_argument("--refine", type=natural_int, default=0, metavar="STEPS",
                        help="bisection steps beyond the 0.05 grid (reported separately)")
    parser.add_argument("--search", choices=SEARCHES, default="climb",
                        help="climb each load grid from 0.10 (default, as the paper) or bisect "
                             "it (about half the runs; assumes saturation is monotone in load; "
                             "starts from the runs already in --out)")
    parser.add_argument("--guess", choices=("paper",), default=None,
                        help="with --search bisect: start each curve's bisection at the "
                             "paper's γ* and walk outward from it (the same γ*; two runs "
                             "plus the baseline where the paper's value holds)")
    parser.add_argument("--stop-when-saturated", action="store_true",
                        help="stop a run once it is saturated for sure "
                             "(run.stop_when_saturated): a window-mode run (clean) as its window "
                             "closes when throughput or source queues already say so, a "
                             "finite-mode run (reference) once its mean latency is certain to "
                             "exceed 1.2 x the baseline's; the same γ* in less time; runs made "
                             "without it are not reused")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: write the tables, figures and report from the runs "
                             "already in --out (unfinished searches marked incomplete)")
    parser.add_argument("--no-plots", action="store_true",
                        help="write the tables and the report, not the figures")
    add_output_arguments(parser)


def config_path(configs: Path, profile: str, k: int) -> Path:
    return configs / profile / f"k{k}.yaml"


def default_configs_dir() -> Path:
    """The bundled ``configs/ofr`` (package data, so it works from any directory)."""
    return bundled("ofr")


# ---------------------------------------------------------------------------------- curves
def build_curves(data: dict[str, Any], *, k: int, patterns: list[str], algorithms: list[str],
                 overrides: list[str], quick: bool, guess: str | None = None,
                 stop_when_saturated: bool = False) -> list[Curve]:
    """Patterns × algorithms curves of one profile's config; ``guess="paper"`` gives each the
    paper's γ* at this k (where it has one) as where a bisecting search starts;
    ``stop_when_saturated`` sets ``run.stop_when_saturated`` (in finite mode the sweep then
    gives each run after the baseline its latency limit)."""
    paper = (paper_table2().set_index(["pattern", "algorithm", "k"])["gamma_star"]
             if guess == "paper" else None)
    user_keys = {".".join(parse_override(o)[0]) for o in overrides}
    for key, flag in RESERVED.items():
        if key in user_keys:
            raise ConfigError(key, f"set per curve by the reproduction; {flag}")
    base = apply_overrides(data, overrides)
    curves = []
    for pattern in patterns:
        grid = load_grid(pattern, quick)
        for algorithm in algorithms:
            d = json.loads(json.dumps(base))
            set_path(d, "traffic.pattern", pattern)
            set_path(d, "routing.algorithm", algorithm)
            if quick:
                for key, value in QUICK_OVERRIDES.items():
                    if key not in user_keys:
                        set_path(d, key, value)
            if stop_when_saturated:
                set_path(d, "run.stop_when_saturated", True)
            if "topology.dims" not in user_keys:
                set_path(d, "topology.dims", list(QUICK_DIMS if quick else torus_dims(pattern, k)))
            start = None
            if paper is not None and (pattern, algorithm, k) in paper.index:
                start = _num(paper[(pattern, algorithm, k)])
            curves.append(Curve(f"{pattern} {algorithm}", d, grid,
                                {"pattern": pattern, "algorithm": algorithm}, guess=start))
    return curves


# ---------------------------------------------------------------------------------- tables
def _num(x: Any) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _diff(a: Any, b: Any) -> float | None:
    a, b = _num(a), _num(b)
    return None if a is None or b is None else round(a - b, 4)


def table2_rows(outcome: SweepOutcome, profile: str, k: int, comparable: bool) -> list[dict]:
    paper = paper_table2().set_index(["pattern", "algorithm", "k"])["gamma_star"]
    rows = []
    for co in outcome.curves:
        pattern, algorithm = co.curve.params["pattern"], co.curve.params["algorithm"]
        p = paper.get((pattern, algorithm, k))
        p = None if p is None else float(p)
        dims = co.curve.data["topology"]["dims"]
        r = co.result
        rows.append({
            "pattern": pattern, "algorithm": algorithm, "profile": profile, "k": k,
            "gamma_star": r.gamma_star, "paper_gamma_star": p,
            "diff": _diff(r.gamma_star, p) if comparable else None,
            "torus": "x".join(map(str, dims)), "mode": co.mode,
            "gamma_star_refined": r.gamma_star_refined, "complete": r.complete,
            "first_saturated": r.first_saturated,
            "first_saturated_reason": r.first_saturated_reason, "points": len(co.rows)})
    return rows


def table3_rows(outcome: SweepOutcome, profile: str, k: int, comparable: bool) -> list[dict]:
    paper = paper_table3().set_index("pattern")
    at = {}
    for co in outcome.curves:
        for r in co.rows:
            if abs(float(r["offered_load"]) - TABLE3_LOAD) < 1e-9:
                at[(co.curve.params["pattern"], co.curve.params["algorithm"])] = r
    patterns = list(dict.fromkeys(co.curve.params["pattern"] for co in outcome.curves))
    rows = []
    for pattern in patterns:
        row: dict[str, Any] = {"pattern": pattern, "profile": profile, "k": k,
                               "load": TABLE3_LOAD}
        for col, (algorithm, field) in TABLE3_COLUMNS.items():
            r = at.get((pattern, algorithm))
            row[col] = _num(r.get(field)) if r is not None else None
        for col in TABLE3_COLUMNS:
            pv = float(paper.loc[pattern, col]) if pattern in paper.index else None
            row[f"paper_{col}"] = pv
            row[f"diff_{col}"] = _diff(row[col], pv) if comparable and k == 16 else None
        rows.append(row)
    return rows


def _fmt(x: Any) -> str:
    v = _num(x)
    return "–" if v is None else f"{v:.2f}"


def _signed(x: Any) -> str:
    v = _num(x)
    return "–" if v is None else f"{v:+.2f}"


def markdown_table2(t2: pd.DataFrame, profiles: list[str]) -> str:
    head = "| pattern | algorithm | paper γ* |" + "".join(
        f" {p} γ* | {p} diff |" for p in profiles)
    sep = "|---|---|---:|" + "---:|---:|" * len(profiles)
    lines = [head, sep]
    keys = list(dict.fromkeys(zip(t2["pattern"], t2["algorithm"])))
    for pattern, algorithm in keys:
        sel = t2[(t2["pattern"] == pattern) & (t2["algorithm"] == algorithm)]
        cells = [pattern, algorithm, _fmt(sel["paper_gamma_star"].iloc[0])]
        for p in profiles:
            s = sel[sel["profile"] == p]
            if s.empty:
                cells += ["–", "–"]
                continue
            g = _fmt(s["gamma_star"].iloc[0])
            if not bool(s["complete"].iloc[0]):
                g += " (incomplete)"
            cells += [g, _signed(s["diff"].iloc[0])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def comparison_notes(t2: pd.DataFrame, tolerance: float = 0.05) -> list[str]:
    """Markdown bullets: per profile, how many finished entries are within ``tolerance`` of the
    paper and whether its orderings (POR >= ABR, OFR >= ABR per pattern) hold; then every
    finished entry that differs from the paper, with the verdict at its first saturated load."""
    lines = []
    done = t2[t2["complete"].astype(bool) & t2["diff"].notna()]
    for profile, part in done.groupby("profile", sort=False):
        diff = part["diff"].astype(float).abs()
        line = (f"* **{profile}**: {int((diff <= tolerance + 1e-9).sum())} of {len(part)} "
                f"finished entries within ±{tolerance:.2f} of the paper "
                f"({int((diff < 1e-9).sum())} equal)")
        g = part.set_index(["pattern", "algorithm"])["gamma_star"].astype(float)
        for alg in ("por", "ofr"):
            pats = [p for p in dict.fromkeys(part["pattern"])
                    if (p, alg) in g.index and (p, "abr") in g.index]
            if pats:
                held = sum(g[(p, alg)] >= g[(p, "abr")] - 1e-9 for p in pats)
                line += f"; {alg.upper()} ≥ ABR on {held} of {len(pats)} patterns"
        lines.append(line)
    for r in done[done["diff"].astype(float).abs() > 1e-9].to_dict("records"):
        reason = r.get("first_saturated_reason")
        why = (f"first saturated load {_fmt(r['first_saturated'])}: {reason}"
               if isinstance(reason, str) and reason else "no saturated load on the grid")
        lines.append(f"* {r['pattern']} {r['algorithm']} ({r['profile']}): "
                     f"{_fmt(r['gamma_star'])} vs the paper's {_fmt(r['paper_gamma_star'])} "
                     f"({_signed(r['diff'])}); {why}")
    return lines


def markdown_table3(t3: pd.DataFrame, profiles: list[str], k: int) -> str:
    cols = list(TABLE3_COLUMNS)
    head = "| pattern | source |" + "".join(f" {c} |" for c in cols)
    lines = [head, "|---|---|" + "---:|" * len(cols)]
    for pattern in dict.fromkeys(t3["pattern"]):
        sel = t3[t3["pattern"] == pattern]
        first = sel.iloc[0]
        lines.append(f"| {pattern} | paper (k=16) | "
                     + " | ".join(_fmt(first[f"paper_{c}"]) for c in cols) + " |")
        for p in profiles:
            s = sel[sel["profile"] == p]
            if s.empty:
                continue
            r = s.iloc[0]
            lines.append(f"| {pattern} | {p} (k={k}) | "
                         + " | ".join(_fmt(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _write_csv(rows: list[dict], path: Path, outputs: Outputs) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    outputs.write(path, df.to_csv(index=False))
    return df


# ---------------------------------------------------------------------------------- running
def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    profiles = list(PROFILES) if args.profile == "both" else [args.profile]
    configs = Path(args.configs) if args.configs else default_configs_dir()
    out = Path(args.out) if args.out else \
        Path("runs") / f"ofr-table2-k{args.k}{'-quick' if args.quick else ''}"
    user_keys = {".".join(parse_override(o)[0]) for o in args.overrides}
    comparable = not args.quick and "topology.dims" not in user_keys
    if args.guess and args.search != "bisect":
        raise ConfigError("--guess", "starts a bisecting search: add --search bisect")

    # every config is read and every curve validated before the first run
    plans = []
    for profile in profiles:
        path = config_path(configs, profile, args.k)
        if not path.exists():
            raise ConfigError(str(path), f"no {profile} profile config for k={args.k} "
                                         f"(expected {profile}/k{args.k}.yaml under {configs})")
        text = path.read_text()
        data = yaml.safe_load(text) or {}
        from_dict(data)
        curves = build_curves(data, k=args.k, patterns=args.patterns,
                              algorithms=args.algorithms,
                              overrides=args.overrides + engine_overrides(args),
                              quick=args.quick, guess=args.guess,
                              stop_when_saturated=args.stop_when_saturated)
        for c in curves:
            c.config(c.grid[0])
        # the digest of the config's values (canonical JSON), so that comments do not change it
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        plans.append((profile, path, hashlib.sha256(canonical.encode()).hexdigest()[:12],
                      curves))

    outputs = Outputs(force=args.force)
    t2_rows, t3_rows, sweeps = [], [], []
    try:
        with make_executor(args.workers, args.scheduler) as executor:
            for profile, path, digest, curves in plans:
                outcome = run_sweep(curves, out / profile, executor=executor,
                                    refine=args.refine, full=args.full, search=args.search,
                                    run_missing=not args.report_only, plots=not args.no_plots,
                                    progress=progress_option(args),
                                    label=f"ofr-table2 {profile}", outputs=outputs)
                sweeps.append((profile, path, digest, outcome))
                t2_rows += table2_rows(outcome, profile, args.k, comparable)
                t3_rows += table3_rows(outcome, profile, args.k, comparable)
            backend = f"{executor.name}, {executor.slots} slot(s)"
    except SweepError as exc:
        print(f"icsim reproduce ofr-table2: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"icsim reproduce ofr-table2: interrupted; finished runs are in {out}/<profile>/"
              f"results.csv, run the same command again to resume", file=sys.stderr)
        raise

    out.mkdir(parents=True, exist_ok=True)
    t2 = _write_csv(t2_rows, out / "table2.csv", outputs)
    t3 = _write_csv(t3_rows, out / "table3.csv", outputs)
    wall = time.perf_counter() - t0
    provenance = {
        "reproduction": "ofr-table2", "k": args.k, "profiles": profiles, "quick": args.quick,
        "algorithms": args.algorithms, "patterns": args.patterns, "overrides": args.overrides,
        "full": args.full, "refine": args.refine, "search": args.search, "guess": args.guess,
        "stop_when_saturated": args.stop_when_saturated,
        "report_only": args.report_only,
        "date": started, "wall_s": round(wall, 1), "git_commit": git_commit(),
        "version": package_version(), "backend": backend,
        "command": getattr(args, "command_line", None) or " ".join(sys.argv),
        "configs": {p: {"path": str(path), "sha256": digest} for p, path, digest, _ in sweeps},
        "runs": {p: {"ran": o.ran, "reused": o.reused} for p, _, _, o in sweeps},
    }
    provenance["redraw"] = redraw_command(args, out)
    write_report(out, t2, t3, sweeps, provenance, comparable, outputs,
                 bundled=args.configs is None)
    # provenance.json records the last invocation that changed an output: one that changes
    # nothing (a report-only redraw of unchanged data) leaves it as it is
    changed = any(s == "written" for s in outputs.status.values())
    outputs.write(out / "provenance.json", json.dumps(provenance, indent=2) + "\n",
                  same=None if changed else (lambda old, new: True))
    print(markdown_table2(t2, profiles))
    print()
    print(f"wall time {format_duration(wall)}; {sum(o.ran for *_, o in sweeps)} runs, "
          f"{sum(o.reused for *_, o in sweeps)} reused; results in "
          + ", ".join(str(out / p / "results.csv") for p in profiles))
    return report_outputs(outputs, "icsim reproduce ofr-table2")


def redraw_command(args: argparse.Namespace, out: Path) -> str:
    """The command that redraws these tables from the runs in ``out`` (only the options that
    change what is drawn; no paths of the machine that ran it except ``--out``)."""
    parts = ["icsim reproduce ofr-table2", f"--k {args.k}", f"--profile {args.profile}"]
    if args.quick:
        parts.append("--quick")
    if list(args.algorithms) != list(ALGORITHMS):
        parts.append(f"--algorithms {','.join(args.algorithms)}")
    if list(args.patterns) != list(PATTERNS):
        parts.append(f"--patterns {','.join(args.patterns)}")
    parts += [f"--set {o}" for o in args.overrides]
    if args.full:
        parts.append("--full")
    if args.refine:
        parts.append(f"--refine {args.refine}")
    if args.search != "climb":
        parts.append(f"--search {args.search}")
    if args.guess:
        parts.append(f"--guess {args.guess}")
    if args.stop_when_saturated:
        parts.append("--stop-when-saturated")
    return " ".join([*parts, "--report-only", "--out DIR"])


def _commits_text(rows: list[dict[str, Any]]) -> str:
    """Which code made these runs, and when: ``at commit `abc` (61 runs) between ...``."""
    counts: dict[str, int] = {}
    for r in rows:
        c = str(r.get("git_commit") or "unknown")
        counts[c] = counts.get(c, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"`{c[:12]}{'+dirty' if c.endswith('+dirty') else ''}` ({n})"
                      for c, n in ranked[:3])
    if len(ranked) > 3:
        shown += f" and {len(ranked) - 3} more"
    versions = sorted({str(r.get("version")) for r in rows if r.get("version")})
    done = sorted(str(r["finished_at"]) for r in rows if r.get("finished_at"))
    when = f" between {done[0][:16]} and {done[-1][:16]} UTC" if done else ""
    return (f"icsim {', '.join(versions) or '?'} at commit{'s' if len(ranked) > 1 else ''} "
            f"{shown}{when}")


def _config_text(path: Path, digest: str, bundled: bool) -> str:
    """A profile config as the report names it: relative for the bundled configs, so that the
    report does not depend on where icsim is installed."""
    if bundled:
        return f"`configs/ofr/{path.parent.name}/{path.name}` (bundled, values sha256 {digest})"
    return f"`{path}` (values sha256 {digest})"


def write_report(out: Path, t2: pd.DataFrame, t3: pd.DataFrame, sweeps: list,
                 prov: dict[str, Any], comparable: bool, outputs: Outputs | None = None,
                 bundled: bool = False) -> Path:
    """``report.md``: the reproduced tables beside the paper's, figures and provenance.

    The report is a function of the runs, the configs and the code only: its provenance
    names the code versions, commits and dates of the runs it shows (from ``results.csv``) and
    the command that redraws it, not the invocation that wrote it (date, wall time, backend,
    runs made and reused: those are in ``provenance.json``).  Redrawing unchanged data
    therefore gives the same file, which is left untouched."""
    profiles = prov["profiles"]
    k = prov["k"]
    lines = [f"# OutFlank Routing, Tables 2 and 3 — reproduction (k = {k})", ""]
    if prov["quick"]:
        lines += ["**Quick mode**: 4x4x4 tori, 16-packet messages, a coarse 0.10 grid and short "
                  "runs. A smoke test of the machinery; the numbers are *not* comparable with "
                  "the paper's and no differences are computed.", ""]
    elif not comparable:
        lines += ["**topology.dims was overridden**: not the paper's tori, no differences "
                  "computed.", ""]
    lines += [
        "## Provenance", "",
        f"* redraw these tables and figures from the runs: `{prov['redraw']}`; the invocation "
        f"that last changed them (date, wall time, command, execution backend, runs made and "
        f"reused) is in `provenance.json`",
        f"* algorithms: {', '.join(prov['algorithms'])}; patterns: {', '.join(prov['patterns'])}",
    ]
    if prov["overrides"]:
        lines.append(f"* overrides: {', '.join('`' + o + '`' for o in prov['overrides'])}")
    for profile, path, digest, outcome in sweeps:
        mode = outcome.curves[0].mode if outcome.curves else "?"
        rule = ("finite mode: sustained when mean latency <= 1.2 x latency at γ = 0.10"
                if mode == "finite" else "window mode: sustained when the run is not saturated")
        compute = sum(_num(r.get("wall_s")) or 0.0 for r in outcome.rows)
        made = _commits_text(outcome.rows) if outcome.rows else "no runs yet"
        lines.append(f"* profile **{profile}**: config {_config_text(Path(path), digest, bundled)}"
                     f", {rule}; {len(outcome.rows)} runs in the tables, made "
                     f"with {made}; {format_duration(compute)} of run time in all (the sum of "
                     f"their wall times)")
    step = QUICK_STEP if prov["quick"] else GRID_STEP
    how = ("the grid was bisected between the highest load known sustained and the lowest "
           "known saturated (assumes saturation is monotone in load; loads not run below γ* "
           "are taken as sustained)" if prov.get("search") == "bisect" else
           "a curve stops after two saturated loads in a row")
    if prov.get("guess") == "paper":
        how += (", starting each curve at the paper's γ* and walking outward from it (the "
                "same γ* as from anywhere else, in fewer runs)")
    if prov.get("stop_when_saturated"):
        how += ("; saturated runs stopped early (run.stop_when_saturated): window-mode runs "
                "as their window closed when throughput or source queues already found them "
                "saturated, finite-mode runs once their mean latency was certain to exceed "
                "1.2 × the baseline's")
    lines += ["", f"γ* is the largest load of the grid (0.10 to the pattern's limit, step "
              f"{step:.2f}) such that it and every lower grid load are sustained; {how}.", "",
              "## Table 2 — maximum sustained load γ* (γ0 units)", "",
              markdown_table2(t2, profiles), ""]
    notes = [r for r in t2.to_dict("records") if not r["complete"]]
    for r in notes:
        lines.append(f"* {r['pattern']} {r['algorithm']} ({r['profile']}): search incomplete; "
                     f"γ* is a lower bound")
    lines += comparison_notes(t2)
    lines += ["", f"## Table 3 — share of derouted packets at γ = {TABLE3_LOAD:.2f}", "",
              "The paper reports k = 16 only; differences are computed for k = 16 runs only. "
              "Outflank and wraparound IDN shares come from the OFR runs "
              "(`derouted.outflank`, `derouted.wraparound`, `derouted.total`), POR's from "
              "`derouted.total` of the POR runs.", ""]
    missing = [a for a in ("ofr", "por") if a not in prov["algorithms"]]
    if missing:
        lines += [f"{', '.join(a.upper() for a in missing)} not run (--algorithms): "
                  f"{'its' if len(missing) == 1 else 'their'} columns are empty.", ""]
    empty = [p for p in profiles
             if t3[t3["profile"] == p][list(TABLE3_COLUMNS)].isna().all(axis=None)]
    if empty:
        lines += [f"No {' or '.join(empty)} run at γ = {TABLE3_LOAD:.2f} (a bisection starts "
                  f"above it): those rows are empty (`icsim reproduce ofr-table3` measures "
                  f"Table 3 on its own).", ""]
    lines += [markdown_table3(t3, profiles, k), ""]
    errors = []
    for profile, _, _, outcome in sweeps:
        for r in outcome.rows:
            if r.get("status") == "error":
                errors.append(f"* {profile} {r['curve']} γ={r['offered_load']}: {r['error']}")
    if errors:
        lines += ["## Runs that failed (counted as saturated)", "", *errors, ""]
    lines += ["## Figures", ""]
    for profile, _, _, outcome in sweeps:
        for stem, what in (("latency", "latency at sustained loads"),
                           ("accepted", "accepted vs offered load"),
                           ("derouted", "derouted share")):
            if (out / profile / f"{stem}.png").exists():
                lines.append(f"![{profile}: {what}]({profile}/{stem}.png)")
                lines.append("")
    path = out / "report.md"
    (outputs or Outputs()).write(path, "\n".join(lines) + "\n")
    return path
