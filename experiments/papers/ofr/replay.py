"""OFR Table 2's searches replayed over recorded runs, without simulating.

``python -m icsim.experiments.papers.ofr.replay`` runs the reproduction's own sweeps
(:func:`~icsim.experiments.papers.ofr.table2._plans`, :func:`~.table2._run`: the same curves,
searches, guesses and scheduling as ``icsim reproduce ofr-table2``) on a
:class:`ReplayExecutor`, a virtual clock with N slots.  A run is not simulated: its outcome is
the committed run of the same curve and load (``experiments/results/ofr_k8/<profile>`` and
``ofr_k16/table2/<profile>``, :class:`Recorded`), and it takes the time a timing gives it.  So
a search strategy is known in seconds: the runs it makes, how long they take on N workers (the
wall time of the table, and the core time), the γ* it finds against the committed ones.

What a replayed run is
    The committed run's verdict, with the early stops the sweep asks for
    (``run.stop_when_saturated``): a finite-mode run whose recorded mean latency exceeds its
    latency limit is saturated and stops early, a window-mode run saturated by throughput or
    growing source queues stops as its window closes.  A load of a curve with no committed run
    has to be simulated anew: it is judged by the committed γ* (sustained at or below it,
    saturated above it: saturation taken as monotone) and listed, since a real run could say
    otherwise.

Timings (``--timing``)
    ``events`` (default): a run takes its recorded events times the seconds per event of its
    column on this machine (:data:`SECONDS_PER_EVENT`, fitted so that the replay of
    ``--guess paper`` gives the whole table measured on 2026-11-28, commit 7ca9508: k = 8 in
    146 s, 16x16x16 clean 334 s, 16x16x16 reference 1,786 s, docs/performance.md), times the
    share it runs when stopped early (:func:`stopped_share`).  ``wall``: the committed run's own
    ``wall_s`` (older builds; SimPy for k = 8).  ``--measured FILE`` takes the ``wall_s`` of
    the runs in a results file made on this build wherever it holds the same run (same curve,
    load and early stop), e.g. a reproduction's ``<profile>/results.csv``.  A run with no
    timing of its own (one to simulate anew) takes that of the nearest recorded load of its
    curve on the same side of the committed γ* (stopped early as that run would be).
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from icsim.experiments.papers.ofr import table2
from icsim.experiments.pipeline.execution import Executor, format_duration
from icsim.experiments.pipeline.saturation import load_key

RESULTS = Path(__file__).resolve().parents[2] / "results"
#: the committed runs of each column of Table 2
COLUMNS = {(8, "clean"): "ofr_k8/clean", (8, "reference"): "ofr_k8/reference",
           (16, "clean"): "ofr_k16/table2/clean", (16, "reference"): "ofr_k16/table2/reference"}
#: seconds a recorded event takes on this machine, per column (``--timing events``, module
#: docstring): 11.7 M events/s for k = 8, 6.0 M for 16x16x16 clean, 8.8 M for its reference
SECONDS_PER_EVENT = {(8, "clean"): 1 / 11.7e6, (8, "reference"): 1 / 11.7e6,
                     (16, "clean"): 1 / 5.99e6, (16, "reference"): 1 / 8.78e6}
#: a run: (k, profile, pattern, algorithm, load)
Key = tuple[int, str, str, str, float]


def run_key(config: dict[str, Any]) -> Key:
    """Which recorded run a resolved config is: k (the torus' first side), the profile (by its
    measurement mode: finite is the reference profile), pattern, algorithm, load."""
    return (int(config["topology"]["dims"][0]),
            "reference" if config["run"]["mode"] == "finite" else "clean",
            config["traffic"]["pattern"], config["routing"]["algorithm"],
            load_key(config["traffic"]["load"]))


@dataclass
class Recorded:
    """Committed runs and γ* of Table 2's columns."""

    rows: dict[Key, dict[str, Any]] = field(default_factory=dict)
    gamma: dict[tuple[int, str, str, str], float | None] = field(default_factory=dict)

    @classmethod
    def committed(cls, root: Path = RESULTS) -> "Recorded":
        rec = cls()
        for (k, profile), folder in COLUMNS.items():
            for r in pd.read_csv(root / folder / "results.csv").to_dict("records"):
                pattern, algorithm = r["curve"].split()
                rec.rows[(k, profile, pattern, algorithm, load_key(r["offered_load"]))] = r
            for r in pd.read_csv(root / folder / "gamma_star.csv").to_dict("records"):
                pattern, algorithm = r["curve"].split()
                rec.gamma[(k, profile, pattern, algorithm)] = \
                    None if pd.isna(r["gamma_star"]) else float(r["gamma_star"])
        return rec

    def nearest(self, key: Key, saturated: bool) -> dict[str, Any] | None:
        """The recorded run of ``key``'s curve nearest ``key``'s load on the same side of its
        committed γ* (any, if there is none on that side)."""
        gamma = self.gamma.get(key[:4])
        same = [r for k, r in self.rows.items() if k[:4] == key[:4]]
        side = [r for r in same
                if (gamma is None or r["offered_load"] > gamma + 1e-9) == saturated]
        return min(side or same, key=lambda r: abs(r["offered_load"] - key[4]), default=None)


def _text(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and value != value) else str(value)


def replayed(row: dict[str, Any], config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The result a recorded run gives under ``config``'s early stops, and whether it stopped
    early (module docstring)."""
    saturated = str(row["saturated"]).strip().lower() == "true"
    result = {"saturated": saturated, "saturation_reason": _text(row.get("saturation_reason")),
              "latency_ns": row["latency_ns"], "packet_hops": row.get("packet_hops"),
              "events": row.get("events")}
    run = config["run"]
    limit = run.get("latency_limit_ns")
    if limit is not None and row["latency_ns"] > limit:
        result.update(saturated=True, saturation_reason="latency (replay: stopped early)")
        return result, True
    if run["mode"] == "window" and run.get("stop_when_saturated") and saturated:
        accepted, offered = row.get("accepted_load"), row.get("offered_measured_load")
        if str(result["saturation_reason"]).startswith(("throughput", "growing")) or \
                (offered and accepted / offered < 0.95):
            return result, True
    return result, False


def stopped_share(row: dict[str, Any], config: dict[str, Any]) -> float:
    """The share of a recorded run's work it does when stopped early: a window-mode run up to
    its window's end (of the simulated time it ran); a finite-mode run whose mean latency ends
    R times its limit, R^-0.4, at least 1/4 (the 16x16x16 runs docs/performance.md names
    stopped after 28 %, 88 % and 95 % of their packet-hops at R = 23, 1.24, 1.03)."""
    run = config["run"]
    if run["mode"] == "finite":
        r = row["latency_ns"] / run["latency_limit_ns"]
        return min(1.0, max(0.25, r ** -0.4))
    window = (run["warmup_us"] + run["measure_us"]) * 1000
    return min(1.0, window / float(row["sim_time_ns"]))


Timing = Callable[[Key, dict[str, Any], dict[str, Any], bool], float]


def events_timing(per_event: dict[tuple[int, str], float] = SECONDS_PER_EVENT) -> Timing:
    """Recorded events x seconds per event of the column, x :func:`stopped_share` if stopped."""
    def seconds(key: Key, row: dict[str, Any], config: dict[str, Any], stopped: bool) -> float:
        share = stopped_share(row, config) if stopped else 1.0
        return float(row["events"]) * per_event[key[:2]] * share
    return seconds


def wall_timing(key: Key, row: dict[str, Any], config: dict[str, Any], stopped: bool) -> float:
    """The recorded run's own wall time, x :func:`stopped_share` if stopped."""
    return float(row["wall_s"]) * (stopped_share(row, config) if stopped else 1.0)


def measured_timing(files: Iterable[Path], otherwise: Timing) -> Timing:
    """The ``wall_s`` of the same run (same curve and load, stopped early or not) in results
    files made on this build; ``otherwise`` for a run they do not hold."""
    times: dict[tuple[Key, bool], float] = {}
    for path in files:
        for r in pd.read_csv(path).to_dict("records"):
            config = {"topology": {"dims": [int(str(r["config.topology.dims"]).strip("[]")
                                                .split(",")[0])]},
                      "run": {"mode": r["config.run.mode"]},
                      "traffic": {"pattern": r["config.traffic.pattern"],
                                  "load": r["offered_load"]},
                      "routing": {"algorithm": r["config.routing.algorithm"]}}
            stopped = "stopped" in str(r.get("saturation_reason"))
            times[(run_key(config), stopped)] = float(r["wall_s"])

    def seconds(key: Key, row: dict[str, Any], config: dict[str, Any], stopped: bool) -> float:
        found = times.get((key, stopped))
        return found if found is not None else otherwise(key, row, config, stopped)
    return seconds


@dataclass
class ReplayRun:
    """One run the replay made."""

    key: Key
    start: float
    seconds: float
    saturated: bool
    stopped: bool
    new: bool          # no committed run: it would be simulated anew


class ReplayExecutor(Executor):
    """An executor that simulates nothing: ``slots`` workers on a virtual clock, each run's
    outcome the recorded one (:func:`replayed`) and its duration the timing's."""

    name = "replay"
    local = False                   # nothing to compile

    def __init__(self, recorded: Recorded, timing: Timing, slots: int = 2) -> None:
        self.recorded, self.timing, self.slots = recorded, timing, slots
        self.now = 0.0
        self.runs: list[ReplayRun] = []
        self._ends: list[tuple[float, int]] = []
        self._outcomes: dict[int, dict[str, Any]] = {}
        self._ids = itertools.count()

    def submit(self, fn: Callable, config: dict[str, Any], *args: Any) -> int:
        key = run_key(config)
        row = self.recorded.rows.get(key)
        new = row is None
        if new:
            gamma = self.recorded.gamma.get(key[:4])
            saturated = gamma is None or key[4] > gamma + 1e-9
            like = self.recorded.nearest(key, saturated)
            result = {"saturated": saturated, "latency_ns": 1.0,
                      "saturation_reason": "replay: above the committed γ*" if saturated else None}
            stopped, seconds = False, 0.0
            if like is not None:         # timed as the nearest recorded run on its side
                stopped = replayed(like, config)[1] and saturated
                seconds = self.timing(key, like, config, stopped)
        else:
            result, stopped = replayed(row, config)
            seconds = self.timing(key, row, config, stopped)
        handle = next(self._ids)
        heapq.heappush(self._ends, (self.now + seconds, handle))
        self.runs.append(ReplayRun(key, self.now, seconds, result["saturated"], stopped, new))
        self._outcomes[handle] = {"result": result, "error": None, "started_at": "",
                                  "finished_at": "", "elapsed_s": seconds, "host": "replay"}
        return handle

    def wait(self, handles: list[int]) -> list[int]:
        end, handle = heapq.heappop(self._ends)
        self.now = max(self.now, end)
        return [handle]

    def result(self, handle: int) -> dict[str, Any]:
        return self._outcomes.pop(handle)


@dataclass
class ColumnReplay:
    """One invocation's replay: its runs, its wall time, and the γ* it found."""

    k: int
    profiles: list[str]
    runs: list[ReplayRun]
    wall_s: float
    gamma: dict[tuple[int, str, str, str], float | None]
    differs: list[str]

    @property
    def core_s(self) -> float:
        return sum(r.seconds for r in self.runs)

    @property
    def longest_curve_s(self) -> float:
        """The longest single curve's runs end to end: the least wall time on any number of
        workers, for a search that runs a curve's probes one after another."""
        per: dict[tuple, float] = {}
        for r in self.runs:
            per[r.key[:4]] = per.get(r.key[:4], 0.0) + r.seconds
        return max(per.values(), default=0.0)


def replay(k: int, *, profile: str = "both", search: str = "bisect", guess: str = "related",
           stop_when_saturated: bool = True, workers: int = 2, timing: Timing | None = None,
           recorded: Recorded | None = None, committed_guess: bool = False,
           patterns: Iterable[str] = table2.PATTERNS,
           algorithms: Iterable[str] = table2.ALGORITHMS) -> ColumnReplay:
    """Replay ``icsim reproduce ofr-table2 --k K --profile P --search S --guess G
    [--stop-when-saturated] --workers N [--patterns ...] [--algorithms ...]`` (module
    docstring).  ``committed_guess`` starts each curve at its committed γ* instead (no strategy
    can know it: the least any search needs)."""
    recorded = recorded or Recorded.committed()
    executor = ReplayExecutor(recorded, timing or events_timing(), workers)
    drawn = table2.Drawn(k=k, profile=profile, search=search,
                         guess="none" if committed_guess else guess,
                         stop_when_saturated=stop_when_saturated, patterns=tuple(patterns),
                         algorithms=tuple(algorithms))
    with tempfile.TemporaryDirectory() as tmp:
        plans = table2._plans(drawn, Path(tmp), table2.default_configs_dir(), [], False, False)
        if committed_guess:
            for p, _, _, sweep in plans:
                for c in sweep.tracks:
                    c.search.suggest(recorded.gamma[(k, p, *c.curve.label.split())])
        sweeps, _ = table2._run(plans, Path(tmp), workers=workers, scheduler=None,
                                related=drawn.guess == "related", executor=executor)
    found, differs = {}, []
    for p, _, _, outcome in sweeps:
        for c in outcome.curves:
            key = (k, p, *c.curve.label.split())
            found[key] = c.result.gamma_star
            if c.result.gamma_star != recorded.gamma.get(key):
                differs.append(f"{p} {c.curve.label}: {c.result.gamma_star} against "
                               f"{recorded.gamma.get(key)}")
    return ColumnReplay(k, drawn.profiles, executor.runs, executor.now, found, differs)


def describe(r: ColumnReplay) -> str:
    """One line per profile and one for the invocation."""
    lines = []
    for p in r.profiles:
        runs = [x for x in r.runs if x.key[1] == p]
        lines.append(f"  {p:9s} {len(runs):3d} runs ({sum(x.stopped for x in runs)} stopped "
                     f"early, {sum(x.new for x in runs)} not committed), "
                     f"{sum(x.seconds for x in runs):7.0f} core-s")
    new = [x.key for x in r.runs if x.new]
    lines.append(f"  k = {r.k}: {len(r.runs)} runs, {format_duration(r.wall_s)} on the clock "
                 f"({r.wall_s:.0f} s, {r.core_s:.0f} core-s, longest curve "
                 f"{r.longest_curve_s:.0f} s); γ* "
                 f"{len(r.gamma) - len(r.differs)} of {len(r.gamma)} as committed"
                 + "".join(f"\n    differs: {d}" for d in r.differs)
                 + (f"\n    to simulate anew: " + ", ".join(
                     f"{p} {pat} {alg} {load:g}" for _, p, pat, alg, load in new) if new else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icsim.experiments.papers.ofr.replay",
        description="Replay OFR Table 2's searches over the committed runs (module docstring).")
    parser.add_argument("--k", type=int, nargs="+", choices=(8, 16), default=[8, 16])
    parser.add_argument("--profile", choices=(*table2.PROFILES, "both"), default="both")
    parser.add_argument("--search", choices=("climb", "bisect"), default="bisect")
    parser.add_argument("--guess", choices=(*table2.GUESSES, "committed"), default="related",
                        help="committed: start at the committed γ* (the least any search needs)")
    parser.add_argument("--no-stop-when-saturated", dest="stop", action="store_false")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--patterns", type=lambda t: t.split(","), default=list(table2.PATTERNS))
    parser.add_argument("--algorithms", type=lambda t: t.split(","),
                        default=list(table2.ALGORITHMS))
    parser.add_argument("--timing", choices=("events", "wall"), default="events")
    parser.add_argument("--measured", type=Path, nargs="*", default=[], metavar="FILE",
                        help="results files made on this build: their runs' wall_s")
    args = parser.parse_args(argv)
    timing = events_timing() if args.timing == "events" else wall_timing
    if args.measured:
        timing = measured_timing(args.measured, timing)
    recorded = Recorded.committed()
    total = 0.0
    for k in args.k:
        r = replay(k, profile=args.profile, search=args.search,
                   guess="none" if args.guess == "committed" else args.guess,
                   stop_when_saturated=args.stop, workers=args.workers, timing=timing,
                   recorded=recorded, committed_guess=args.guess == "committed",
                   patterns=args.patterns, algorithms=args.algorithms)
        print(describe(r))
        total += r.wall_s
    print(f"whole: {format_duration(total)} ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
