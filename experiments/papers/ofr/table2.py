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
saturation test.

How each curve's γ* is found (it is the same γ* whichever way, on a curve whose saturation is
monotone in load; only the runs made differ): by default a bisection of its load grid
(``--search bisect``) that starts from a guess (``--guess related``): the clean profile runs
first, a pattern's first routing algorithm bisecting from the middle of the grid and the
others starting at its γ*; each reference-profile curve then starts at the same curve's clean
γ*.  Runs stop once they are saturated for sure (``--stop-when-saturated``), and a slot that
would be idle runs a curve's next probe beside its running one.  ``--guess paper`` starts at
the paper's γ* instead, ``--guess none`` bisects from the middle; ``--search climb`` climbs each
grid from 0.10, as the paper did, until two saturated loads in a row (``--full`` runs the whole
range, for complete latency curves).

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
kept (and listed, exit status 1) unless ``--force`` is given.  ``--report-only`` draws what the
folder's ``provenance.json`` says its runs are (``--k``, ``--profile``, ``--search`` and the
other options of the redraw command, :data:`DRAWN`): an option left out is taken from there, one
given otherwise is refused (``--force`` draws them so).  No invocation replaces a ``table2.csv`` with a less complete one
(an entry that had a γ* losing it, a complete search becoming incomplete) without ``--force``:
it stops before writing anything, naming the first entry it would lose.

From Python, :func:`reproduce` takes the options as keyword arguments
(``icsim.reproduce("ofr-table2", k=8, profile="both", report_only=True, out=...)``) and returns
the tables as DataFrames with the report.

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
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

import pandas as pd
import yaml

from icsim.configs import bundled
from icsim.experiments.papers.ofr.table2_report import (GRID_START, GRID_STEP, QUICK_STEP,
                                                        markdown_table2, number, paper_table2,
                                                        table2_rows, table3_rows, write_report)
from icsim.experiments.papers.reproduce import Reproduction, add_common_arguments
from icsim.experiments.pipeline.curves import Curve, parse_loads
from icsim.experiments.pipeline.execution import (Executor, SerialExecutor, csv_list,
                                                  format_duration, git_commit, make_executor,
                                                  natural_int, package_version)
from icsim.experiments.pipeline.outputs import Outputs, add_output_arguments
from icsim.experiments.pipeline.saturation import SEARCHES, as_bool
from icsim.experiments.pipeline.sweep import Sweep, SweepOutcome, write_files
from icsim.model.config import ConfigError, apply_overrides, parse_override, set_path
from icsim.model.input_files import InputFileError
from icsim.simulator.build import from_dict

PATTERNS = ("butterfly", "transpose", "transpose3d", "uniform", "bitreverse")
ALGORITHMS = ("abr", "por", "ofr")
PROFILES = ("clean", "reference")
#: where a bisecting curve starts (``--guess``)
GUESSES = ("related", "paper", "none")
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
  latency at 0.10; window: the run's own saturation test).  Each grid is bisected from a
  guess: the clean profile first (a pattern's first algorithm from the middle, the others
  from its gamma*), then each reference curve from its clean gamma*; saturated runs stop
  early.  --guess paper starts from the paper's gamma*, --search climb climbs from 0.10.

outputs (in --out):
  table2.csv, table3.csv, report.md (beside the paper's numbers, with the provenance of the
  runs), provenance.json (the invocation that last changed them), and per profile
  <profile>/results.csv, gamma_star.csv, verdicts.csv and figures.
  Rerunning the same command resumes: finished runs are reused.  Files whose content does
  not change are left untouched; files tracked by git that would change are kept unless
  --force is given; a table2.csv is never replaced by a less complete one without --force.

report only (--report-only):
  runs nothing; --k, --profile, --search and the other options that decide what is drawn
  come from DIR/provenance.json when left out, and one that differs from it is refused
  (--force draws the runs so).

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
    # the options that decide what is drawn default to None, "not given": --report-only then
    # takes them from the folder's provenance.json (Drawn holds their defaults)
    parser.add_argument("--k", type=int, choices=(8, 16), default=None,
                        help="torus size: 8 (8x8x8; transposition on 8x8x16) or 16 (16x16x16); "
                             "default 8")
    parser.add_argument("--profile", choices=(*PROFILES, "both"), default=None,
                        help="fidelity profile (docs/model.md §5a): reference = the paper's "
                             "simulator, "
                             "clean = icsim's default model, both; default reference")
    add_common_arguments(parser, "runs/ofr-table2-k<k>[-quick]")
    parser.set_defaults(quick=None)
    parser.add_argument("--algorithms", type=csv_list(), default=None, metavar="A,B,...",
                        help="routing algorithms to compare (default abr,por,ofr)")
    parser.add_argument("--patterns", type=csv_list(PATTERNS), default=None,
                        metavar="P,Q,...",
                        help=f"patterns (default all: {','.join(PATTERNS)})")
    parser.add_argument("--configs", default=None, metavar="DIR",
                        help="directory holding <profile>/k<k>.yaml (default configs/ofr of "
                             "the repository)")
    parser.add_argument("--set", dest="overrides", action="append", default=None,
                        metavar="KEY=VALUE",
                        help="override a config value in every run (repeatable), e.g. "
                             "--set run.messages_per_node=8")
    parser.add_argument("--full", action="store_true", default=None,
                        help="run each pattern's whole load range (no stopping after two "
                             "saturated loads)")
    parser.add_argument("--refine", type=natural_int, default=None, metavar="STEPS",
                        help="bisection steps beyond the 0.05 grid (reported separately)")
    parser.add_argument("--search", choices=SEARCHES, default=None,
                        help="bisect each load grid (default: about half the runs of climbing; "
                             "assumes saturation is monotone in load; starts from the runs "
                             "already in --out) or climb it from 0.10, as the paper did")
    parser.add_argument("--guess", choices=GUESSES, default=None,
                        help="where each curve's bisection starts (the same γ* whatever it is, "
                             "only the runs differ): related (default) the γ* of the curves "
                             "searched before it, the clean profile's for the reference profile "
                             "and, within a profile, the first routing algorithm's of the same "
                             "pattern for the others; paper the paper's γ*; none bisects from "
                             "the middle of the grid")
    parser.add_argument("--stop-when-saturated", action=argparse.BooleanOptionalAction,
                        default=None,
                        help="stop a run once it is saturated for sure "
                             "(run.stop_when_saturated; the default): a window-mode run (clean) "
                             "as its window closes when throughput or source queues already say "
                             "so, a finite-mode run (reference) once its mean latency is certain "
                             "to exceed 1.2 x the baseline's; the same γ* in less time; runs "
                             "made without it are not reused")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: write the tables, figures and report from the runs "
                             "already in --out (unfinished searches marked incomplete); the "
                             "options above left out are taken from its provenance.json, "
                             "and one that differs from it is refused (--force draws them so)")
    parser.add_argument("--no-plots", action="store_true",
                        help="write the tables and the report, not the figures")
    add_output_arguments(parser)


def config_path(configs: Path, profile: str, k: int) -> Path:
    return configs / profile / f"k{k}.yaml"


def default_configs_dir() -> Path:
    """The bundled ``configs/ofr`` (package data, so it works from any directory)."""
    return bundled("ofr")


# ---------------------------------------------------------------------------------- what is drawn
@dataclass(frozen=True)
class Drawn:
    """The options that decide what the tables show (those of the redraw command), with their
    defaults; ``provenance.json`` records them."""

    k: int = 8
    profile: str = "reference"
    quick: bool = False
    algorithms: tuple[str, ...] = ALGORITHMS
    patterns: tuple[str, ...] = PATTERNS
    overrides: tuple[str, ...] = ()
    full: bool = False
    refine: int = 0
    search: str = "bisect"
    guess: str = "related"
    stop_when_saturated: bool = True

    @property
    def profiles(self) -> list[str]:
        return list(PROFILES) if self.profile == "both" else [self.profile]

    @property
    def comparable(self) -> bool:
        """Whether the runs are the paper's tori (not quick, dims not overridden)."""
        keys = {".".join(parse_override(o)[0]) for o in self.overrides}
        return not self.quick and "topology.dims" not in keys

    def record(self) -> dict[str, Any]:
        """As ``provenance.json`` holds them (``profiles`` for ``profile``)."""
        return {"profiles" if k == "profile" else k:
                self.profiles if k == "profile" else list(v) if isinstance(v, tuple) else v
                for k, v in asdict(self).items()}


#: the options :class:`Drawn` holds, in the order of the redraw command
DRAWN = tuple(Drawn.__dataclass_fields__)
#: the values of the options a ``provenance.json`` written before they existed (or before their
#: defaults changed) leaves out, which its runs were made with; the redraw command gives every
#: option whose value differs from these
PLAIN = Drawn(search="climb", guess="none", stop_when_saturated=False)


def folder_options(out: Path) -> dict[str, Any] | None:
    """The drawn options of the runs in ``out``, from its ``provenance.json`` (``None`` when it
    has none); :class:`~icsim.model.input_files.InputFileError` when the file is not the
    provenance of this reproduction."""
    path = out / "provenance.json"
    if not path.is_file():
        return None
    try:
        prov = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputFileError(str(path), f"not JSON ({exc})") from None
    if not isinstance(prov, dict) or prov.get("reproduction") != "ofr-table2":
        raise InputFileError(str(path), "not the provenance of an ofr-table2 reproduction")
    profiles = prov.get("profiles")
    found = {key: prov[key] if key in prov else getattr(PLAIN, key) for key in DRAWN}
    if found["guess"] is None:                 # written when no guess was None
        found["guess"] = "none"
    if isinstance(profiles, list) and sorted(profiles) == list(PROFILES):
        found["profile"] = "both"
    elif isinstance(profiles, list) and len(profiles) == 1:
        found["profile"] = profiles[0]
    try:
        drawn = Drawn(**{k: tuple(v) if isinstance(v, list) else v for k, v in found.items()})
    except TypeError as exc:
        raise InputFileError(str(path), f"unreadable options ({exc})") from None
    if drawn.k not in (8, 16) or drawn.profile not in (*PROFILES, "both") \
            or drawn.search not in SEARCHES or drawn.guess not in GUESSES:
        raise InputFileError(str(path), f"k {drawn.k!r}, profiles {profiles!r} or search "
                                        f"{drawn.search!r} is not one of this reproduction's")
    return asdict(drawn)


def _flag(key: str) -> str:
    return "--set" if key == "overrides" else "--" + key.replace("_", "-")


def _shown(key: str, value: Any) -> str:
    if isinstance(value, tuple):
        return (" " if key == "overrides" else ",").join(value) or "(none)"
    return str(value)


def resolve(given: Mapping[str, Any], out: Path, report_only: bool,
            force: bool = False) -> Drawn:
    """The drawn options: those ``given`` (``None``: not given), the rest from the defaults,
    or, with ``report_only``, from the folder's ``provenance.json``, which an option given
    otherwise contradicts (a ConfigError naming it: its tables would be of other runs, unless
    ``force``)."""
    if report_only and not (out / "results.csv").is_file() \
            and not any(out.glob("*/results.csv")):
        raise ConfigError("--out", f"{out} holds no runs of this reproduction (no "
                                   f"results.csv in it or its profile folders): nothing to "
                                   f"draw; give the folder a reproduction wrote")
    folder = folder_options(out) if report_only else None
    chosen = {}
    for key in DRAWN:
        value = given.get(key)
        if isinstance(value, list):
            value = tuple(value)
        if folder is not None and value is None:
            value = folder[key]
        elif folder is not None and value != folder[key] and not force:
            raise ConfigError(_flag(key), f"the runs in {out} are of {_flag(key)} "
                                          f"{_shown(key, folder[key])} (its provenance.json); "
                                          f"leave {_flag(key)} out to draw them, or give "
                                          f"--force to draw them as {_shown(key, value)}")
        if value is not None:
            chosen[key] = value
    if chosen.get("full") and "search" not in chosen:
        chosen["search"] = "climb"            # a bisecting search cannot run the whole grid
    if chosen.get("search", Drawn.search) != "bisect" and "guess" not in chosen:
        chosen["guess"] = "none"              # only a bisecting search starts from a guess
    return Drawn(**chosen)


def redraw_command(drawn: Drawn) -> str:
    """The command that redraws these tables from the runs in ``out`` (only the options that
    change what is drawn; no paths of the machine that ran it except ``--out``)."""
    parts = ["icsim reproduce ofr-table2", f"--k {drawn.k}", f"--profile {drawn.profile}"]
    if drawn.quick:
        parts.append("--quick")
    if list(drawn.algorithms) != list(ALGORITHMS):
        parts.append(f"--algorithms {','.join(drawn.algorithms)}")
    if list(drawn.patterns) != list(PATTERNS):
        parts.append(f"--patterns {','.join(drawn.patterns)}")
    parts += [f"--set {o}" for o in drawn.overrides]
    if drawn.full:
        parts.append("--full")
    if drawn.refine:
        parts.append(f"--refine {drawn.refine}")
    if drawn.search != PLAIN.search:
        parts.append(f"--search {drawn.search}")
    if drawn.guess != PLAIN.guess:
        parts.append(f"--guess {drawn.guess}")
    if drawn.stop_when_saturated != PLAIN.stop_when_saturated:
        parts.append("--stop-when-saturated")
    return " ".join([*parts, "--report-only", "--out DIR"])


# ---------------------------------------------------------------------------------- curves
def build_curves(data: dict[str, Any], *, k: int, patterns: list[str], algorithms: list[str],
                 overrides: list[str], quick: bool, guess: str | None = None,
                 stop_when_saturated: bool = False) -> list[Curve]:
    """Patterns × algorithms curves of one profile's config; ``guess="paper"`` gives each the
    paper's γ* at this k (where it has one) as where a bisecting search starts,
    ``guess="related"`` each curve but a pattern's first the γ* of the pattern's curves before
    it (:attr:`Curve.guess_from`; the reproduction adds the other profile's, :func:`_run`);
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
            before = algorithms[:algorithms.index(algorithm)] if guess == "related" else []
            curves.append(Curve(f"{pattern} {algorithm}", d, grid,
                                {"pattern": pattern, "algorithm": algorithm}, guess=start,
                                guess_from=tuple(f"{pattern} {a}" for a in before)))
    return curves


# ---------------------------------------------------------------------------------- completeness
def _score(row: Mapping[str, Any]) -> int:
    """How complete a Table 2 entry is: 2 a finished search, 1 a γ* that is a lower bound, 0
    no γ*."""
    gamma = pd.to_numeric(pd.Series([row.get("gamma_star")]), errors="coerce").iloc[0]
    if pd.isna(gamma):
        return 0
    return 2 if as_bool(row.get("complete")) else 1


def lost_entries(old: Path, new: pd.DataFrame) -> list[str]:
    """The entries of the ``table2.csv`` at ``old`` that ``new`` would make less complete (an
    entry that had a γ* losing it, a finished search becoming unfinished), in words; none
    when there is no readable table there."""
    try:
        before = pd.read_csv(old) if old.is_file() else pd.DataFrame()
    except (ValueError, UnicodeDecodeError):           # a damaged table: nothing to keep
        return []
    key = ["profile", "pattern", "algorithm", "k"]
    if not {*key, "gamma_star", "complete"} <= set(before.columns):
        return []
    now = {tuple(r[c] for c in key): _score(r) for r in new.to_dict("records")}
    words = {2: "a finished γ*", 1: "an unfinished γ*", 0: "no γ*"}
    lost = []
    for r in before.to_dict("records"):
        had, has = _score(r), now.get(tuple(r[c] for c in key), 0)
        if has < had:
            lost.append(f"{r['profile']} {r['pattern']} {r['algorithm']} (k = {r['k']}): "
                        f"{words[had]} there, {words[has]} from these runs")
    return lost


def refuse_less_complete(out: Path, t2: pd.DataFrame) -> None:
    """Stop before anything is written when ``t2`` would replace a more complete table."""
    lost = lost_entries(out / "table2.csv", t2)
    if lost:
        more = f", and {len(lost) - 1} more" if len(lost) > 1 else ""
        raise InputFileError(str(out / "table2.csv"), f"holds a more complete table than these "
                                                      f"runs give ({lost[0]}{more}); nothing "
                                                      f"written: check --k, --profile, "
                                                      f"--search and --out, or give --force "
                                                      f"to replace it")


# ---------------------------------------------------------------------------------- running
def reproduce(*, k: Literal[8, 16] | None = None,
              profile: Literal["clean", "reference", "both"] | None = None,
              out: str | Path | None = None, quick: bool | None = None,
              engine: Literal["auto", "simpy", "compiled"] | None = None,
              workers: int | None = None, scheduler: str | None = None,
              algorithms: Sequence[str] | None = None, patterns: Sequence[str] | None = None,
              configs: str | Path | None = None,
              overrides: Sequence[str] | Mapping[str, Any] | None = None,
              full: bool | None = None, refine: int | None = None,
              search: Literal["climb", "bisect"] | None = None,
              guess: Literal["related", "paper", "none"] | None = None,
              stop_when_saturated: bool | None = None,
              report_only: bool = False, no_plots: bool = False, force: bool = False,
              progress: bool = False, quiet: bool = False,
              command: str | None = None) -> Reproduction:
    """OutFlank Tables 2 and 3 (module docstring); the options are the command line's.

    ``None`` means an option not given: its default (:class:`Drawn`), or with ``report_only``
    the folder's (:func:`resolve`).  ``overrides`` is ``--set``: ``["key.path=value", ...]``
    or a dict of dotted keys.  Returns the tables (``tables["table2"]``, ``tables["table3"]``),
    the text of ``report.md`` and what happened to each file; the status is 1 when committed
    files were kept.

    Raises
    ------
    ConfigError
        A config or an option is wrong, or contradicts the folder's provenance
        (``report_only``): before anything runs.
    InputFileError
        The folder's ``table2.csv`` is more complete than these runs give (without ``force``):
        after the runs, before anything else is written.
    SweepError
        Another run holds a profile's ``results.csv``, or the execution backend failed.
    """
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if isinstance(overrides, Mapping):
        overrides = [f"{key}={json.dumps(value)}" for key, value in overrides.items()]
    out = Path(out) if out else \
        Path("runs") / f"ofr-table2-k{k or Drawn.k}{'-quick' if quick else ''}"
    drawn = resolve(dict(k=k, profile=profile, quick=quick, algorithms=algorithms,
                         patterns=patterns, overrides=overrides, full=full, refine=refine,
                         search=search, guess=guess, stop_when_saturated=stop_when_saturated),
                    out, report_only, force)
    if drawn.guess != "none" and drawn.search != "bisect":
        raise ConfigError("--guess", "starts a bisecting search: add --search bisect")
    show = False if quiet else True if progress else None
    plans = _plans(drawn, out, Path(configs) if configs else default_configs_dir(),
                   [f"run.engine={engine}"] if engine else [], report_only, show)
    sweeps, backend = _run(plans, out, workers=1 if report_only else workers,
                           scheduler=None if report_only else scheduler,
                           related=drawn.guess == "related" and not report_only)
    t2 = pd.DataFrame([r for p, _, _, o in sweeps
                       for r in table2_rows(o, p, drawn.k, drawn.comparable)])
    t3 = pd.DataFrame([r for p, _, _, o in sweeps
                       for r in table3_rows(o, p, drawn.k, drawn.comparable)])
    if not force:
        refuse_less_complete(out, t2)
    outputs = Outputs(force=force)
    for *_, outcome in sweeps:
        write_files(outcome, plots=not no_plots, outputs=outputs)
    report = _write(out, t2, t3, sweeps, outputs, provenance={
        "reproduction": "ofr-table2", **drawn.record(), "report_only": report_only,
        "date": started, "wall_s": round(time.perf_counter() - t0, 1),
        "git_commit": git_commit(), "version": package_version(), "backend": backend,
        "command": command or " ".join(sys.argv),
        "configs": {p: {"path": str(path), "sha256": digest} for p, path, digest, _ in sweeps},
        "runs": {p: {"ran": o.ran, "reused": o.reused} for p, _, _, o in sweeps},
        "redraw": redraw_command(drawn)}, bundled=configs is None, comparable=drawn.comparable)
    summary = (f"{markdown_table2(t2, drawn.profiles)}\n\nwall time "
               f"{format_duration(time.perf_counter() - t0)}; "
               f"{sum(o.ran for *_, o in sweeps)} new, {sum(o.reused for *_, o in sweeps)} "
               f"reused; results in " + ", ".join(str(out / p / "results.csv")
                                                  for p in drawn.profiles))
    return Reproduction("ofr-table2", out, report, dict(outputs.status),
                        {"table2": t2, "table3": t3}, summary)


def _plans(drawn: Drawn, out: Path, configs: Path, engine: list[str], report_only: bool,
           progress: bool | None) -> list[tuple[str, Path, str, Sweep]]:
    """Per profile: its config, the digest of its values, and its sweep; every config read and
    every curve checked before the first run."""
    plans = []
    for profile in drawn.profiles:
        path = config_path(configs, profile, drawn.k)
        if not path.exists():
            raise ConfigError(str(path), f"no {profile} profile config for k={drawn.k} "
                                         f"(expected {profile}/k{drawn.k}.yaml under {configs})")
        data = yaml.safe_load(path.read_text()) or {}
        from_dict(data)
        curves = build_curves(data, k=drawn.k, patterns=list(drawn.patterns),
                              algorithms=list(drawn.algorithms),
                              overrides=list(drawn.overrides) + engine, quick=drawn.quick,
                              guess=drawn.guess, stop_when_saturated=drawn.stop_when_saturated)
        # the digest of the config's values (canonical JSON), so that comments do not change it
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        sweep = Sweep(curves, out / profile, refine=drawn.refine, full=drawn.full,
                      search=drawn.search, run_missing=not report_only, progress=progress,
                      label=f"ofr-table2 {profile}")
        plans.append((profile, path, hashlib.sha256(canonical.encode()).hexdigest()[:12], sweep))
    return plans


def _run(plans: list, out: Path, *, workers: int | None, scheduler: str | None,
         related: bool = False, executor: Executor | None = None
         ) -> tuple[list[tuple[str, Path, str, SweepOutcome]], str]:
    """Every profile's sweep on one executor (``executor``, or one for ``workers`` and
    ``scheduler``), one after the other; the outcomes and the backend, in words.  With
    ``related`` each curve's γ* is where the same curve's search starts in the profiles after
    it (``--guess related``)."""
    sweeps = []
    try:
        if executor is None:
            executor = SerialExecutor() if workers == 1 and not scheduler else \
                make_executor(workers, scheduler)
        with executor:
            for i, (profile, path, digest, sweep) in enumerate(plans):
                outcome = sweep.run(executor)
                sweeps.append((profile, path, digest, outcome))
                for *_, later in plans[i + 1:] if related else []:
                    for c in outcome.curves:
                        if c.result.gamma_star is not None:
                            later.suggest(c.curve.label, c.result.gamma_star)
    except KeyboardInterrupt:
        print(f"icsim reproduce ofr-table2: interrupted; finished runs are in {out}/<profile>/"
              f"results.csv, run the same command again to resume", file=sys.stderr)
        raise
    return sweeps, f"{executor.name}, {executor.slots} slot(s)"


def _write(out: Path, t2: pd.DataFrame, t3: pd.DataFrame, sweeps: list, outputs: Outputs, *,
           provenance: dict[str, Any], bundled: bool, comparable: bool) -> str:
    """Write the tables, the report and ``provenance.json``; return the report's text."""
    out.mkdir(parents=True, exist_ok=True)
    outputs.write(out / "table2.csv", t2.to_csv(index=False))
    outputs.write(out / "table3.csv", t3.to_csv(index=False))
    report = write_report(out, t2, t3, sweeps, provenance, comparable, outputs, bundled=bundled)
    # provenance.json records the last invocation that changed an output: one that changes
    # nothing (a report-only redraw of unchanged data) leaves it as it is
    changed = any(s == "written" for s in outputs.status.values())
    outputs.write(out / "provenance.json", json.dumps(provenance, indent=2) + "\n",
                  same=None if changed else (lambda old, new: True))
    return report
