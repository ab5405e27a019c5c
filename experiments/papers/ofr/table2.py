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
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from icsim.configs import bundled
from icsim.experiments.papers.ofr.table2_report import (GRID_START, GRID_STEP, QUICK_STEP,
                                                        markdown_table2, number, paper_table2,
                                                        table2_rows, table3_rows, write_report)
from icsim.experiments.papers.reproduce import add_common_arguments
from icsim.experiments.pipeline.execution import (csv_list, engine_overrides, format_duration,
                                                  git_commit, make_executor, natural_int,
                                                  package_version)
from icsim.experiments.pipeline.outputs import (Outputs, add_output_arguments, progress_option,
                                                report_outputs)
from icsim.experiments.pipeline.saturation import SEARCHES
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.results_file import SweepError
from icsim.experiments.pipeline.sweep import run_sweep
from icsim.model.config import ConfigError, apply_overrides, parse_override, set_path
from icsim.simulator.build import from_dict

PATTERNS = ("butterfly", "transpose", "transpose3d", "uniform", "bitreverse")
ALGORITHMS = ("abr", "por", "ofr")
PROFILES = ("clean", "reference")
MAX_LOAD = {"butterfly": 1.00, "transpose": 0.80, "transpose3d": 0.60, "uniform": 1.00,
            "bitreverse": 0.80}
QUICK_DIMS = (4, 4, 4)
QUICK_OVERRIDES = {"traffic.message_packets": 16, "run.messages_per_node": 4,
                   "run.warmup_us": 10, "run.measure_us": 40, "run.drain_us": 100}
#: keys set per curve; --set on them would silently contradict the table's labels
RESERVED = {"routing.algorithm": "use --algorithms", "traffic.pattern": "use --patterns",
            "traffic.load": "each pattern has its own load grid, from 0.10 in steps of 0.05"}

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
                start = number(paper[(pattern, algorithm, k)])
            curves.append(Curve(f"{pattern} {algorithm}", d, grid,
                                {"pattern": pattern, "algorithm": algorithm}, guess=start))
    return curves


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
