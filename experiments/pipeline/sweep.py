"""Load sweeps with saturation search, resumable, in parallel (``icsim sweep``).

A sweep is a set of *curves* (:mod:`.curves`) — one config swept over a load grid — each climbed
by a :class:`icsim.experiments.pipeline.saturation.CurveSearch`.  :class:`Sweep` coordinates
their runs: every finished run becomes one row of ``OUT/results.csv`` (:mod:`.rows`,
:mod:`.results_file`), written the moment it finishes.  :func:`run_sweep` runs a sweep and then
writes ``OUT/gamma_star.csv`` (one row per curve), ``OUT/verdicts.csv`` (every run judged
sustained or saturated, with the reason; :mod:`.summaries`) and the figures (:mod:`.plots`).

Resumption
----------
A restarted sweep reads ``results.csv`` and takes every point whose key (config hash and seed)
is there from it instead of running it.  Rows are reused regardless of the code version they
were made with (a warning names the commits); delete the file to start over.  A sweep whose
workload does not depend on the load (a collective, a trace) is refused before anything runs
(:func:`~icsim.experiments.pipeline.curves.load_independence`).

Parallelism
-----------
The coordinator keeps ``slots`` runs in flight.  Whenever a slot is free it asks the curves,
fewest-in-flight first and among those the least advanced (fewest finished runs) first, for
their next load.  So every curve's first run starts before any curve's second: the
finite-mode baselines, which a curve's later runs wait for, all come early, and the curves'
chains of runs advance side by side instead of one curve's chain running alone at the end
beside an idle slot (the 16x16x16 reference column of OFR Table 2, replayed with its measured
run times: 3,671 s instead of 3,754 s in the order of the curves, against a bound of 3,625 s).
A curve that takes its guess from others (:attr:`Curve.guess_from`, e.g. the same pattern under
another routing algorithm) makes its first probe after theirs are decided, starting at their γ*,
unless a slot would otherwise be idle; a bisecting curve whose probe is running may run its next
probe beside it when no curve has anything else to start (one curve alone keeps two workers
busy; :meth:`~icsim.experiments.pipeline.saturation.CurveSearch.speculate`).
A climbing curve proposes its lowest grid load that is neither finished nor in flight, until
the finished runs show ``stop_after`` saturated loads in a row (then refinement, if asked,
proceeds one bisection point at a time).  Many curves thus run side by side one load each, and
a single curve speculatively runs up to ``slots`` consecutive loads at once.  A curve never
proposes a load above ``stop_after`` consecutive grid loads already finished saturated, even
while lower loads still run, so speculation wastes at most the runs in flight when the stop
becomes certain; they still finish and are recorded.  γ* never depends on the timing — only
on the finished runs, judged in grid order — but which loads above the stop get run can.
Runs are never cancelled: a finished point is never lost, and a running process cannot be
stopped cleanly anyway.  Before the first run starts, the coordinator compiles the compiled
engine when numba's cache lacks it and a curve runs on it
(:func:`~icsim.experiments.pipeline.execution.compile_first`): the workers then load its
machine code instead of each compiling it.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from icsim.experiments.pipeline.curves import Curve, CurveOutcome
from icsim.experiments.pipeline.execution import (Executor, Progress, SerialExecutor,
                                                  compile_first, execute_point, git_commit,
                                                  package_version)
from icsim.experiments.pipeline.outputs import Outputs
from icsim.experiments.pipeline.results_file import RESULTS_NAME, ResultsFile, SweepError
from icsim.experiments.pipeline.rows import config_hash, make_row, point_key
from icsim.experiments.pipeline.saturation import (BASELINE_LOAD, STOP_AFTER, CurveSearch,
                                                   judge, load_key)
from icsim.experiments.pipeline.summaries import write_summaries

Key = tuple[str, str]
#: a run sustained above its curve's bound is run again with this many times its window
GUARD_WINDOW = 10


@dataclass
class SweepOutcome:
    """What a :class:`Sweep` did: every curve's verdict and rows, how many runs it made and
    reused, and the files written (``results.csv``, then what :func:`write_files` adds)."""

    curves: list[CurveOutcome]
    ran: int
    reused: int
    out_dir: Path
    files: list[Path]
    wall_s: float
    outputs: Outputs = field(default_factory=Outputs)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every run of the sweep once (a run several curves share is one row)."""
        seen, out = set(), []
        for c in self.curves:
            for r in c.rows:
                key = point_key(r["config_hash"], r["seed"])
                if key not in seen:
                    seen.add(key)
                    out.append(r)
        return out


@dataclass
class _Track:
    """One curve as the coordinator follows it."""

    curve: Curve
    search: CurveSearch
    rows: list[dict[str, Any]] = field(default_factory=list)
    in_flight: set[float] = field(default_factory=set)
    roles: dict[float, str] = field(default_factory=dict)     # every load run or running
    siblings: list[_Track] = field(default_factory=list)     # the other seeds of this curve
    stalled: bool = False            # run_missing=False: its next point is not run
    bound: Any = None                # the guard's bound (bounds.Bound), or None

    def record(self, load: float, row: dict[str, Any], role: str) -> None:
        self.search.record(load, row)
        self.rows.append(row)
        self.roles.setdefault(load_key(load), role)

    def _mine(self) -> set[float]:
        return set(self.search.points) | {load_key(x) for x in self.in_flight}

    def seed_fill(self) -> tuple[float, str] | None:
        """A load another seed of this curve runs (or ran) that this seed has not: every load
        of a multi-seed curve is run with every seed."""
        mine = self._mine()
        for other in self.siblings:
            for load, role in sorted(other.roles.items()):
                if load not in mine:
                    return load, role
        return None

    def remaining(self) -> int:
        """At most how many more runs this curve may need (for the progress estimate)."""
        fills = {x for other in self.siblings for x in other.roles} - self._mine()
        return self.search.remaining_bound(self.in_flight) + len(fills)


class Sweep:
    """The coordinator of one sweep: proposes runs, starts them, records them, judges curves.

    Parameters
    ----------
    curves : list of Curve
        What to sweep (:func:`~icsim.experiments.pipeline.curves.make_curves`).  Curves of one
        label with different :attr:`Curve.seed` are replications: each runs its own search (γ*
        per seed), and every load one of them runs is run with all of them.
    out_dir : path
        Where ``results.csv`` is; an existing one is resumed.
    run_fn : callable, optional
        ``run_fn(Config) -> result dict`` instead of the simulator (tests inject fakes).
    stop_after, refine, full, baseline_load, search
        Saturation search options (:class:`~icsim.experiments.pipeline.saturation.CurveSearch`);
        a bisecting search starts from every grid load of the curve already in ``results.csv``.
    run_missing : bool
        False: run nothing, judge the curves from the points already in ``results.csv``
        (a curve whose search needs another run is reported incomplete).
    progress : Progress or bool, optional
        Progress line on stderr; ``None``: only when stderr is a terminal.
    guard : bool, optional
        Exact bounds as guards (issue 56): a window-mode curve's bound is computed first where
        it is cheap (:func:`~icsim.experiments.pipeline.bounds.guard_bound`); a run sustained
        above it is run again with :data:`GUARD_WINDOW` times its ``run.measure_us`` (role
        ``recheck`` in ``results.csv``), and the curve is given that run's verdict, saturated
        as a *model error* naming the bound if it too is sustained: γ* is never above the
        bound.  ``None`` (default): on for the simulator, off for an injected ``run_fn`` (a
        test's stand-in is no model).  With ``run_missing`` False (a redraw) a recheck already
        in ``results.csv`` is used, and a run without one is judged as it is (runs made before
        the guard redraw unchanged).

    Raises
    ------
    ConfigError
        A curve's config is invalid, or its runs do not depend on the load: raised here,
        before anything runs.
    """

    def __init__(self, curves: list[Curve], out_dir: str | Path, *,
                 run_fn: Callable | None = None, stop_after: int = STOP_AFTER, refine: int = 0, full: bool = False,
                 baseline_load: float = BASELINE_LOAD, search: str = "climb",
                 run_missing: bool = True, progress: Progress | bool | None = None,
                 label: str = "sweep", guard: bool | None = None):
        # every config is validated before the first run (docs/model.md §9)
        self.tracks = [_Track(c, CurveSearch(
            c.grid, c.check().run.mode, stop_after=stop_after, refine_steps=refine, full=full,
            baseline_load=baseline_load, search=search,
            guess=c.guess if search == "bisect" else None)) for c in curves]
        for t in self.tracks:
            t.siblings = [o for o in self.tracks if o is not t and o.curve.seed is not None
                          and t.curve.seed is not None and o.curve.label == t.curve.label]
        self.out_dir = Path(out_dir)
        self.executor: Executor = SerialExecutor()
        self.run_fn = run_fn
        self.run_missing = run_missing
        self.label = label
        self.progress = progress if isinstance(progress, Progress) else \
            Progress(label, enabled=progress)
        self.store = ResultsFile(self.out_dir / RESULTS_NAME)
        self.provenance = {"version": package_version(), "git_commit": git_commit()}
        self.finished: dict[Key, dict[str, Any]] = {}
        self.waiting: dict[Key, list[tuple[_Track, float]]] = {}     # runs several tracks need
        self.handles: dict[Any, tuple[Key, str, _Track, dict[str, Any]]] = {}
        self.ran = self.reused = 0
        self.old_commits: set[str] = set()
        self.compiled = run_fn is not None       # a fake run function needs no engine
        self.guard = run_fn is None if guard is None else guard
        # a recheck's key -> the key and role of the run it checks
        self.rechecks: dict[Key, tuple[Key, str]] = {}
        if self.guard:
            from icsim.experiments.pipeline.bounds import guard_bound

            for t in self.tracks:
                if t.search.mode == "window":
                    t.bound = guard_bound(t.curve.config(min(t.curve.grid)))

    # ------------------------------------------------------------------ the loop
    def run(self, executor: Executor | None = None) -> SweepOutcome:
        """Run (or resume) the sweep on ``executor`` (default in-process,
        :class:`SerialExecutor`; not closed here); every finished run is in ``results.csv`` as
        it finishes.

        Raises
        ------
        SweepError
            Another sweep holds ``results.csv``, or the execution backend failed.
        KeyboardInterrupt
            Passed on (close the executor with ``abort``); every finished point is saved.
        """
        t0 = time.perf_counter()
        self.executor = executor or SerialExecutor()
        with self.store.lock():
            self._read_store()
            try:
                self._inform()
                self._fill()
                if self.handles:          # shown before the first run ends, which may be long
                    self.progress.update(len(self.handles), sum(
                        t.remaining() for t in self.tracks))
                while self.handles:
                    for handle in self.executor.wait(list(self.handles)):
                        last = self._collect(handle)
                        self._inform()
                        self._fill()
                        self.progress.update(len(self.handles), sum(
                            t.remaining() for t in self.tracks), last)
            finally:
                self.progress.close()
        if self.old_commits:
            print(f"{self.label}: reused points computed with other code versions "
                  f"({', '.join(sorted(self.old_commits))}; now "
                  f"{self.provenance['git_commit'] or 'unknown'})", file=sys.stderr)
        outcomes = [CurveOutcome(t.curve, t.search.mode, t.search.result(), t.rows)
                    for t in self.tracks]
        return SweepOutcome(outcomes, self.ran, self.reused, self.out_dir, [self.store.path],
                            time.perf_counter() - t0)

    def _read_store(self) -> None:
        """The finished points of ``results.csv``; a bisecting search starts from every grid
        load of its curve already there."""
        self.finished.update(self.store.load())
        if self.store.dropped:
            why = f" ({self.store.first_problem})" if self.store.first_problem else ""
            print(f"{self.label}: dropped {self.store.dropped} damaged line(s) of "
                  f"{self.store.path}{why}; their points run again", file=sys.stderr)
        for t in self.tracks:
            if t.search.search != "bisect":
                continue
            # the finite-mode baseline first: the other loads' configs depend on it
            base = t.search.baseline
            for load in sorted(t.curve.grid, key=lambda x: load_key(x) != base):
                cfg, key, alias = self._point_config(t, load)
                row = self._finished_row(key, alias)
                if row is not None and not self._held(t, load, cfg, key, row, "grid"):
                    self._reuse(t, load, row, "grid", note_commit=False)

    def _fill(self) -> None:
        """Start runs until every slot is busy or no curve proposes one."""
        while len(self.handles) < self.executor.slots:
            proposal = self._proposal()
            if proposal is None:
                return
            self._take(*proposal)

    def _proposal(self) -> tuple[_Track, float, str] | None:
        """The next run to start: fewest in flight, then least advanced first, so that every
        curve's first run (a finite-mode baseline, which its later runs wait for) goes before
        any curve's second.  A curve whose first probe waits for the γ* of the curves it takes
        its guess from (:attr:`Curve.guess_from`) goes after every other; when nothing else
        is left to start, a bisecting curve with a probe in flight runs its next probe beside
        it (:meth:`CurveSearch.speculate`) rather than leave a slot idle."""
        order = [t for t in sorted(self.tracks, key=lambda t: (len(t.in_flight),
                                                                len(t.search.points)))
                 if not t.stalled]
        for patient in (True, False):
            for t in order:
                if patient and self._awaits_guess(t):
                    continue
                proposal = t.search.next_load(t.in_flight) or t.seed_fill()
                if proposal is not None:
                    return (t, *proposal)
        for t in order:
            proposal = t.search.speculate(t.in_flight)
            if proposal is not None:
                return (t, *proposal)
        return None

    def suggest(self, label: str, guess: float | None) -> None:
        """Where the curve(s) labelled ``label`` are expected to saturate, from now on (a
        bisecting search; see :meth:`CurveSearch.suggest`); e.g. γ* of the same curve in
        another sweep that ran first."""
        for t in self.tracks:
            if t.curve.label == label and t.search.search == "bisect":
                t.search.suggest(guess)

    def _informants(self, t: _Track) -> list[_Track]:
        return [o for o in self.tracks if o.curve.label in t.curve.guess_from and o is not t]

    def _awaits_guess(self, t: _Track) -> bool:
        """Whether curve ``t`` has yet to make its first probe, without a guess, while some of
        the curves it takes its guess from are still searching."""
        if not t.curve.guess_from or t.search.guess is not None or not t.search.probing():
            return False
        if t.search.baseline is not None and t.search.baseline not in t.search.points:
            return False             # the finite-mode baseline needs no guess
        return any(not o.search.result().complete for o in self._informants(t))

    def _inform(self) -> None:
        """Give every curve without a guess, still to make its first probe, the median γ* of
        the curves it takes its guess from that have finished their search."""
        for t in self.tracks:
            if not t.curve.guess_from or t.search.guess is not None or not t.search.probing():
                continue
            found = sorted(r.gamma_star for o in self._informants(t)
                           if (r := o.search.result()).complete and r.gamma_star is not None)
            if found:
                t.search.suggest(found[(len(found) - 1) // 2])

    def _take(self, t: _Track, load: float, role: str) -> None:
        """Curve ``t`` needs its run at ``load``: reuse a finished one, wait for the same run
        another curve started, or start it."""
        cfg, key, alias = self._point_config(t, load)
        row = self._finished_row(key, alias)
        if row is not None:
            if self._held(t, load, cfg, key, row, role):
                return
            self._reuse(t, load, row, role)
            return
        if not self.run_missing:
            t.stalled = True
            return
        t.in_flight.add(load)
        t.roles.setdefault(load_key(load), role)
        if key in self.waiting:
            self.waiting[key].append((t, load))
            return
        self.waiting[key] = [(t, load)]
        self._submit(key, role, t, cfg)

    def _submit(self, key: Key, role: str, t: _Track, cfg: dict[str, Any]) -> None:
        if not self.compiled:
            # before the first run starts a worker: the compiled engine compiled once, here
            self.compiled = True
            if self.executor.local:
                compile_first(c.curve.config(min(c.curve.grid)) for c in self.tracks)
        self.handles[self.executor.submit(execute_point, cfg, self.run_fn)] = (key, role, t, cfg)

    # ------------------------------------------------------------------ the guard
    def _above(self, t: _Track, cfg: dict[str, Any], row: dict[str, Any]) -> bool:
        """Whether ``row`` (of curve ``t``) is a window run sustained above the curve's bound."""
        return (t.bound is not None and cfg["run"]["mode"] == "window"
                and float(cfg["traffic"]["load"]) > t.bound.value * (1 + 1e-9)
                and judge(row, "window").sustained)

    def _recheck_config(self, cfg: dict[str, Any]) -> tuple[dict[str, Any], Key]:
        longer = json.loads(json.dumps(cfg))
        longer["run"]["measure_us"] = cfg["run"]["measure_us"] * GUARD_WINDOW
        return longer, point_key(config_hash(longer), longer["seed"])

    def _held(self, t: _Track, load: float, cfg: dict[str, Any], key: Key,
              row: dict[str, Any], role: str) -> bool:
        """A finished run of ``t`` sustained above its bound is held back until its recheck
        (a longer window) is known: reuse a finished recheck, or start it.  Whether it is."""
        if not self._above(t, cfg, row):
            return False
        longer, key2 = self._recheck_config(cfg)
        if key2 in self.finished:
            self._reuse(t, load, self._guarded(t, longer, self.finished[key2]), role)
            return True
        if not self.run_missing:
            return False
        t.in_flight.add(load)
        t.roles.setdefault(load_key(load), role)
        if key in self.waiting:
            self.waiting[key].append((t, load))
        else:
            self.waiting[key] = [(t, load)]
        if key2 not in self.rechecks:
            self.rechecks[key2] = (key, role)
            self._submit(key2, "recheck", t, longer)
        return True

    def _guarded(self, t: _Track, cfg: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
        """A recheck's row as its curve sees it: sustained above the bound even in the longer
        window is a model error, saturated, naming the bound."""
        if not self._above(t, cfg, row):
            return row
        row = dict(row)
        row["saturated"] = True
        row["saturation_reason"] = (
            f"model error: sustained at γ {float(cfg['traffic']['load']):g} above the "
            f"{t.bound.what} {t.bound.value:.4g} (icsim analyze), in a "
            f"{cfg['run']['measure_us']:g} µs window ({GUARD_WINDOW} x run.measure_us)")
        return row

    def _collect(self, handle: Any) -> str:
        """A run finished: save its row, give it to every curve waiting for it; returns the
        progress line's note on it."""
        key, role, t, cfg = self.handles.pop(handle)
        try:
            outcome = self.executor.result(handle)
        except Exception as exc:
            # the run itself never raises (execute_point records its errors): this is the
            # backend (a worker process died, a dask worker was lost)
            raise SweepError(
                f"execution backend failed ({type(exc).__name__}: {exc}); the "
                f"{len(self.finished)} finished points are saved in {self.store.path}, run "
                f"again to resume") from exc
        row = make_row(t.curve.label, role, cfg, outcome, self.provenance)
        self.store.append(row)
        self.finished[key] = row
        self.ran += 1
        self.progress.ran += 1
        if role == "recheck":             # the curves waiting for the run it checks
            (key, role), row = self.rechecks.pop(key), self._guarded(t, cfg, row)
        elif self._above(t, cfg, row):    # sustained above the bound: a longer window first
            longer, key2 = self._recheck_config(cfg)
            if key2 in self.finished:
                row = self._guarded(t, longer, self.finished[key2])
            else:
                self.rechecks[key2] = (key, role)
                self._submit(key2, "recheck", t, longer)
                return f"{t.curve.label} γ={cfg['traffic']['load']:g} above its bound: recheck"
        for other, load in self.waiting.pop(key):
            other.in_flight.discard(load)
            other.record(load, row, role)
        status = ("error" if row["status"] == "error" else
                  "saturated" if row.get("saturated") else "ok")
        seed = f" seed {cfg['seed']}" if t.curve.seed is not None else ""
        return f"{t.curve.label}{seed} γ={cfg['traffic']['load']:g} {status}"

    def _reuse(self, t: _Track, load: float, row: dict[str, Any], role: str,
               note_commit: bool = True) -> None:
        commit = str(row.get("git_commit") or "")
        if note_commit and commit and commit != self.provenance["git_commit"]:
            self.old_commits.add(commit)
        t.record(load, row, role)
        self.reused += 1
        self.progress.reused += 1

    # ------------------------------------------------------------------ points
    def _point_config(self, t: _Track, load: float) -> tuple[dict[str, Any], Key, Key | None]:
        """The config of curve ``t``'s run at ``load``, its key, and the key of a finished run
        that serves as well (or ``None``).  Under ``run.stop_when_saturated`` a finite-mode run
        after the baseline gets the curve's latency limit (:meth:`CurveSearch.latency_limit`),
        so that it stops once it is saturated for sure; a run of the same point made without
        the limit (one that started before the baseline was known) serves as well."""
        cfg = t.curve.config(load).to_dict()
        plain = point_key(config_hash(cfg), cfg["seed"])
        run = cfg["run"]
        limit = t.search.latency_limit(load)
        if run["stop_when_saturated"] and run["latency_limit_ns"] is None and limit is not None:
            run["latency_limit_ns"] = limit
            return cfg, point_key(config_hash(cfg), cfg["seed"]), plain
        return cfg, plain, None

    def _finished_row(self, key: Key, alias: Key | None) -> dict[str, Any] | None:
        row = self.finished.get(key)
        return row if row is not None or alias is None else self.finished.get(alias)


def write_files(outcome: SweepOutcome, *, plots: bool = True,
                outputs: Outputs | None = None) -> SweepOutcome:
    """Write a sweep's summaries (:func:`~icsim.experiments.pipeline.summaries.write_summaries`)
    and, with ``plots``, its figures (:func:`~icsim.experiments.pipeline.plots.plot_results`)
    into its folder; the outcome, with the files added and ``outputs`` set."""
    outputs = outputs if outputs is not None else Outputs()
    files = write_summaries(outcome.curves, outcome.out_dir, outputs)
    if plots:
        # the figures load matplotlib, which a sweep without plots never needs
        from icsim.experiments.pipeline.plots import plot_results

        files += plot_results([r for o in outcome.curves for r in o.rows], outcome.out_dir,
                              outputs=outputs)
    outcome.files += files
    outcome.outputs = outputs
    return outcome


def run_sweep(curves: list[Curve], out_dir: str | Path, *, executor: Executor | None = None,
              run_fn: Callable | None = None, stop_after: int = STOP_AFTER, refine: int = 0,
              full: bool = False, baseline_load: float = BASELINE_LOAD, search: str = "climb",
              run_missing: bool = True, plots: bool = True, progress: Progress | bool | None = None,
              label: str = "sweep", outputs: Outputs | None = None,
              guard: bool | None = None) -> SweepOutcome:
    """Run (or resume) a sweep (:class:`Sweep`, whose parameters these are; ``executor`` as for
    :meth:`Sweep.run`), then write
    ``gamma_star.csv``, ``verdicts.csv`` (with several seeds also ``load_summary.csv``) and, with
    ``plots``, the figures to ``out_dir`` (:func:`write_files`; ``outputs`` writes them:
    unchanged files untouched, committed files kept unless forced,
    :mod:`icsim.experiments.pipeline.outputs`).

    Raises
    ------
    ConfigError
        A curve's config is invalid, or its runs do not depend on the load: raised before
        anything runs.
    SweepError
        Another sweep holds ``results.csv``, or the execution backend failed.
    KeyboardInterrupt
        Passed on (close the executor with ``abort``); every finished point is already saved.
    """
    sweep = Sweep(curves, out_dir, run_fn=run_fn, stop_after=stop_after, refine=refine,
                  full=full, baseline_load=baseline_load, search=search,
                  run_missing=run_missing, progress=progress, label=label, guard=guard)
    return write_files(sweep.run(executor), plots=plots, outputs=outputs)
