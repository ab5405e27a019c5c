"""Saturation search (docs/model.md §7): which loads a curve sustains, and its γ*.

A *curve* is one configuration swept over offered load γ.  Every run of it is judged
*sustained* or *saturated* by the rule of its measurement mode:

window mode
    sustained when the run reports ``saturated`` false (the simulator's own test:
    accepted/offered ≥ 0.95, every measured packet delivered within the drain, NIC source
    queues not growing through the window; see :mod:`simulator.simulation`).
finite mode (the OutFlank paper's method)
    sustained when the run finished (``saturated`` false) and its mean latency is at most
    1.2 × the mean latency of the same curve at γ = 0.10 (the *baseline*).  The baseline run is
    always made, first, even when the load grid does not contain 0.10; it then only serves as
    the reference and is not a grid point.  If the baseline run itself fails, no load of the
    curve can be judged sustained and γ* is undefined.

In both modes a run that raised (for example ``icsim.simulator.engines.DeadlockError``), reported
an error, or measured no packet at all is *saturated*, with the reason recorded — never a
silent number.

γ* is the largest grid load such that it and every lower grid load are sustained (``None``
when the lowest grid load is already saturated).  A sustained load above a saturated one does
not count; a sweep notes the curve (:func:`sustained_above`), since such a flip is more often
noise near the rule's line than the network.  Climbing a curve stops once ``stop_after`` (2)
grid loads in a row are saturated.
An optional refinement bisects between γ* and the first saturated grid load for a few steps;
the refined value is the last sustained bisection point (or γ* itself).

``search="bisect"`` finds the same γ* with fewer runs when saturation is monotone in load (a
load above a saturated one is saturated too; the climbing search does not assume it): after
the finite-mode baseline, it bisects the grid between the highest load known sustained and the
lowest known saturated — about log2(grid size) runs per curve instead of one per grid load up
to γ* + 2 steps.  Grid loads it skips are taken to be sustained when they lie below γ*; runs
already finished (e.g. by an earlier climbing search of the same curve) narrow the bracket.
A *guess* (a published γ*, or the γ* of a related curve found first) starts the bisection
there and walks out from it (:meth:`CurveSearch._probe`): the same γ*, two runs besides the
baseline when the guess is right.  A guess may come, or change, between probes
(:meth:`CurveSearch.suggest`).  While a probe runs, a slot that would otherwise be idle may run
the next probe beside it, as if the running one ends as expected (:meth:`CurveSearch.speculate`);
γ* is decided from finished runs only, so neither changes it on a monotone curve.  On a curve
that is not monotone, a bisection ends at a grid load it ran and found sustained, with the grid
load above it run and saturated and no run below it saturated: a γ* of the rule over the runs
it made, not necessarily the climbing search's (which pair of loads it finds depends on where it
started and on the order its runs ended); a sweep notes such curves when its runs show a flip
(:func:`sustained_above`).

:class:`CurveSearch` is the climbing logic as a small state machine that proposes the next
load to run given what is finished and what is in flight, so that an executor can run several
curves, and several loads of one curve, at once (see :mod:`icsim.experiments.pipeline.sweep`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

BASELINE_LOAD = 0.10
LATENCY_FACTOR = 1.2
STOP_AFTER = 2
SEARCHES = ("climb", "bisect")
#: a bisecting search walks up to this many grid loads from its guess, one at a time, before
#: it gallops: a guess k grid steps low then costs k + 2 runs up to k = 4, where a gallop from
#: the guess costs 4, 4, 6, 6 (on OFR Table 2 with the paper's γ* as guesses: 174 runs, not 187)
GUESS_WALK = 5


def load_key(load: float) -> float:
    """A load rounded so that grid loads computed in different ways compare equal."""
    return round(float(load), 9)


def is_load(value: Any) -> bool:
    """Whether a stored ``offered_load`` (a number or a CSV cell) is a load: a finite number of
    at least 0 (a damaged results file can hold other text, an empty cell or ``inf`` there)."""
    x = None if isinstance(value, bool) else as_float(value)
    return x is not None and math.isfinite(x) and x >= 0


def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, float) and math.isnan(value):
        return False
    return not (isinstance(value, str) and value.strip() == "")


def as_float(value: Any) -> float | None:
    """A number from a result field or CSV cell; ``None`` for missing/empty/NaN."""
    if not _present(value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def as_bool(value: Any) -> bool:
    """A boolean from a result field or CSV cell (``True``/``"True"``/``1``)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    if not _present(value):
        return False
    return bool(value)


@dataclass(frozen=True)
class Verdict:
    """Whether one run sustained its load, and if not, why."""

    sustained: bool
    reason: str | None = None


def run_failure(point: Mapping[str, Any]) -> str | None:
    """Why a run is saturated on its own account (error, unfinished, ...), or ``None``."""
    error = point.get("error")
    if _present(error):
        return f"error: {error}"
    if as_bool(point.get("saturated")):
        reason = point.get("saturation_reason")
        return str(reason) if _present(reason) else "saturated"
    if as_float(point.get("latency_ns")) is None:
        return "no packets measured"
    return None


def judge(point: Mapping[str, Any], mode: str, baseline_latency_ns: float | None = None,
          baseline_failure: str | None = None,
          factor: float = LATENCY_FACTOR) -> Verdict:
    """Classify one run (a result dict or a CSV row) as sustained or saturated.

    Parameters
    ----------
    point : mapping
        Needs ``saturated``, ``saturation_reason``, ``latency_ns`` and optionally ``error``.
    mode : {"window", "finite"}
        The run's measurement mode, which selects the rule.
    baseline_latency_ns : float, optional
        Finite mode: mean latency of the same curve at γ = 0.10.
    baseline_failure : str, optional
        Finite mode: why the baseline run has no usable latency (reported as the reason).
    factor : float
        Finite mode: the latency ratio above which a load is saturated (1.2).

    Examples
    --------
    >>> judge({"saturated": False, "latency_ns": 500.0}, "window")
    Verdict(sustained=True, reason=None)
    >>> judge({"saturated": False, "latency_ns": 1300.0}, "finite", 1000.0).sustained
    False
    >>> judge({"saturated": True, "saturation_reason": "throughput"}, "window").reason
    'throughput'
    """
    failure = run_failure(point)
    if failure is not None:
        return Verdict(False, failure)
    if mode != "finite":
        return Verdict(True)
    if baseline_latency_ns is None:
        return Verdict(False, f"baseline γ={BASELINE_LOAD:.2f} unusable"
                       + (f" ({baseline_failure})" if baseline_failure else ""))
    latency = as_float(point.get("latency_ns"))
    if latency > factor * baseline_latency_ns:
        return Verdict(False, f"latency {latency:.0f} ns > {factor:g} x {baseline_latency_ns:.0f} "
                              f"ns at γ={BASELINE_LOAD:.2f}")
    return Verdict(True)


@dataclass
class CurveResult:
    """What a curve's runs say about its saturation point.

    Attributes
    ----------
    gamma_star : float or None
        Largest grid load with it and all lower grid loads sustained.
    gamma_star_refined : float or None
        After bisection between γ* and the first saturated grid load (= γ* without refinement).
    first_saturated : float or None
        The lowest saturated grid load (``None`` if none was found).
    first_saturated_reason : str or None
        Why it is saturated.
    complete : bool
        Every grid load up to the decision is known (the stop rule fired, or the grid was
        exhausted).  ``False`` means γ* is only a lower bound (an interrupted sweep).
    verdicts : dict
        Load -> :class:`Verdict` for every run of the curve that could be judged.
    baseline_latency_ns : float or None
        Finite mode: the latency at γ = 0.10 the 1.2× rule compares with.
    gamma_star_lower_bound : bool
        γ* is only a lower bound: no grid load just above it is known saturated (every load
        up to the top of the grid was sustained, or the search did not finish).  Reported as
        "γ* ≥ ..." (:attr:`gamma_star_text`).
    """

    gamma_star: float | None
    gamma_star_refined: float | None
    first_saturated: float | None
    first_saturated_reason: str | None
    complete: bool
    verdicts: dict[float, Verdict] = field(default_factory=dict)
    baseline_latency_ns: float | None = None
    gamma_star_lower_bound: bool = False

    @property
    def gamma_star_text(self) -> str:
        """γ* as text, ``≥`` before a lower bound, ``-`` for none (``"≥0.8"``, ``"0.65"``)."""
        return bound_text(self.gamma_star, self.gamma_star_lower_bound)


def bound_text(value: float | None, lower_bound: bool) -> str:
    """A γ* as text: ``-`` for none, ``≥`` before a lower bound.

    >>> bound_text(0.8, True), bound_text(0.65, False), bound_text(None, False)
    ('≥0.8', '0.65', '-')
    """
    if value is None:
        return "-"
    return ("≥" if lower_bound else "") + f"{value:.4g}"


def sustained_above(result: CurveResult) -> list[float]:
    """Loads judged sustained above the curve's first saturated load, in order: verdicts that
    flip back, which γ* does not count (module docstring).  On a real network saturation is
    monotone in load; such a flip is most often noise (a short window or few messages per
    node leaves accepted/offered near 0.95, or a mean latency near 1.2 × the baseline's)."""
    if result.first_saturated is None:
        return []
    return sorted(load for load, v in result.verdicts.items()
                  if v.sustained and load > result.first_saturated)


class CurveSearch:
    """Climb one curve's load grid and decide its γ* (the rules in the module docstring).

    The search never runs anything itself: :meth:`next_load` proposes what to run next given
    the loads already in flight, :meth:`record` takes a finished run, :meth:`result` judges.
    Proposals are speculative: while earlier loads are still running, the next grid load
    above them may be proposed, so a parallel executor can work on several loads of one curve;
    the stop rule is applied to finished runs only, in grid order.  Speculation never goes
    above a run of ``stop_after`` consecutive grid loads already finished saturated (climbing
    stops there at the latest, whatever the loads still running turn out to be).

    Parameters
    ----------
    grid : iterable of float
        The load grid (any order; duplicates removed).
    mode : {"window", "finite"}
        Measurement mode of the curve's runs.
    stop_after : int
        Stop climbing after this many saturated grid loads in a row (2).
    refine_steps : int
        Bisection steps between γ* and the first saturated grid load (0 = none).
    full : bool
        Run every grid load (no stop rule); γ* is still judged by the same rule.
    baseline_load : float
        Finite mode: the load whose latency the 1.2× rule compares with (0.10).
    search : {"climb", "bisect"}
        Climb the grid from the bottom (default) or bisect it (module docstring).
    guess : float, optional
        Bisecting search: where γ* is expected (e.g. a published value).  The search runs the
        grid load nearest to it first and walks, then gallops, outward until it has a bracket
        (:meth:`_probe`); γ* is the same as without a guess, only the number of runs differs.

    Examples
    --------
    >>> s = CurveSearch([0.1, 0.2, 0.3, 0.4, 0.5], "window")
    >>> for load in (0.1, 0.2, 0.3, 0.4):
    ...     assert s.next_load(set()) == (load, "grid")
    ...     s.record(load, {"saturated": load > 0.2, "latency_ns": 1.0})
    >>> s.next_load(set()) is None, s.result().gamma_star
    (True, 0.2)
    """

    def __init__(self, grid: Iterable[float], mode: str, *, stop_after: int = STOP_AFTER,
                 refine_steps: int = 0, full: bool = False,
                 baseline_load: float = BASELINE_LOAD, factor: float = LATENCY_FACTOR,
                 search: str = "climb", guess: float | None = None):
        self.grid = sorted({load_key(g) for g in grid})
        if not self.grid:
            raise ValueError("empty load grid")
        if stop_after < 1:
            raise ValueError("stop_after must be at least 1")
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {', '.join(SEARCHES)}, not {search!r}")
        if search == "bisect" and full:
            raise ValueError("a bisecting search cannot run the full grid (full=True)")
        if guess is not None and search != "bisect":
            raise ValueError("a guess needs the bisecting search (search='bisect')")
        self.search = search
        self._guess_index: int | None = None
        self.suggest(guess)
        self.mode = mode
        self.stop_after = stop_after
        self.refine_steps = max(0, int(refine_steps))
        self.full = full
        self.baseline = load_key(baseline_load) if mode == "finite" else None
        self.factor = factor
        self.points: dict[float, Mapping[str, Any]] = {}

    @property
    def guess(self) -> float | None:
        """The grid load a bisecting search starts from (nearest its guess), or ``None``."""
        return None if self._guess_index is None else self.grid[self._guess_index]

    def suggest(self, guess: float | None) -> None:
        """Where γ* is expected, from now on (bisecting search; ``None`` forgets it): the grid
        load nearest it (the lower of two equally near) is probed next if it lies inside the
        bracket, and the search walks out from it (:meth:`_probe`).  A guess, given before the
        first probe or between two, changes which loads run, never γ*."""
        if guess is not None and self.search != "bisect":
            raise ValueError("a guess needs the bisecting search (search='bisect')")
        self._guess_index = (None if guess is None else
                             min(range(len(self.grid)),
                                 key=lambda i: (abs(self.grid[i] - guess), i)))

    def probing(self) -> bool:
        """Bisecting search: whether the curve is yet to make its first grid probe (the
        finite-mode baseline aside), where a guess would decide that probe."""
        if self.search != "bisect":
            return False
        return not any(load != self.baseline for load in self.points)

    # ------------------------------------------------------------------ bookkeeping
    def record(self, load: float, point: Mapping[str, Any]) -> None:
        """A finished run (result dict or CSV row) of this curve at ``load``."""
        self.points[load_key(load)] = point

    def _baseline(self) -> tuple[bool, float | None, str | None]:
        """(known, latency, failure) of the finite-mode baseline."""
        if self.baseline is None:
            return True, None, None
        point = self.points.get(self.baseline)
        if point is None:
            return False, None, None
        failure = run_failure(point)
        if failure is not None:
            return True, None, failure
        return True, as_float(point.get("latency_ns")), None

    def latency_limit(self, load: float) -> float | None:
        """Finite mode: the mean latency above which a run at ``load`` is saturated (``factor``
        × the baseline's), once the baseline is judged usable; ``None`` for the baseline load
        itself, before, or in window mode.  A sweep under ``run.stop_when_saturated`` gives it
        to the run as ``run.latency_limit_ns``, so the engine stops a run it already finds
        saturated (:func:`icsim.simulator.results.latency_rule`)."""
        if self.baseline is None or load_key(load) == self.baseline:
            return None
        known, base, _ = self._baseline()
        return self.factor * base if known and base is not None else None

    def verdict(self, load: float) -> Verdict | None:
        """The verdict on a finished load, or ``None`` if not run or not yet judgeable."""
        point = self.points.get(load_key(load))
        if point is None:
            return None
        known, base, failure = self._baseline()
        if not known:
            failure = run_failure(point)
            return Verdict(False, failure) if failure else None
        return judge(point, self.mode, base, failure, self.factor)

    def _grid_decision(self) -> tuple[float | None, float | None, bool, bool]:
        """(γ*, first saturated, decided, over) from the finished runs.

        *decided*: γ* can no longer change (``stop_after`` saturated grid loads in a row, or
        every grid load judged).  *over*: no more grid loads need running (decided, and with
        ``full`` every grid load finished).
        """
        if self.search == "bisect":
            lo, hi = self._bracket()
            best = self.grid[lo] if lo >= 0 else None       # a lower bound until decided
            first_sat = self.grid[hi] if hi is not None and hi < len(self.grid) else None
            decided = hi is not None and lo + 1 >= hi
            return best, first_sat, decided, decided
        best, first_sat, saturated_run, decided = None, None, 0, False
        for g in self.grid:
            v = self.verdict(g)
            if v is None:
                return best, first_sat, decided, False
            if v.sustained:
                if first_sat is None:
                    best = g
                saturated_run = 0
            else:
                if first_sat is None:
                    first_sat = g
                saturated_run += 1
                if saturated_run >= self.stop_after:
                    decided = True
                    if not self.full:
                        return best, first_sat, True, True
        return best, first_sat, True, True

    def _bracket(self) -> tuple[int, int | None]:
        """Bisecting search: grid indices (highest sustained below the lowest saturated,
        lowest saturated) over the finished runs; -1 and ``len(grid)`` stand for "none".
        ``hi`` is ``None`` while the finite-mode baseline is not yet judged."""
        if not self._baseline()[0]:
            return -1, None
        hi = len(self.grid)
        for i, g in enumerate(self.grid):
            v = self.verdict(g)
            if v is not None and not v.sustained:
                hi = i
                break
        lo = max((i for i, g in enumerate(self.grid[:hi])
                  if (v := self.verdict(g)) is not None and v.sustained), default=-1)
        return lo, hi

    def _probe(self, lo: int, hi: int) -> int:
        """Bisecting search: the grid index to run next inside the bracket (``lo``, ``hi``).

        Without a guess, the middle.  With one, the guess itself first; then walk away from
        it one grid load at a time, up from a sustained guess or down from a saturated one,
        for up to :data:`GUESS_WALK` grid loads; beyond them gallop, in steps that double,
        while the next step stays inside the bracket; then bisect.  A right guess costs two
        runs (the guess and the grid load above it), as does one a grid step too high (the
        guess and the load below it); one k steps too low, k + 2 runs up to k = 4 (a gallop
        from the guess would cost 4, 4, 6, 6), one k steps too high, k + 1 up to k = 5."""
        g = self._guess_index
        if g is not None:
            if lo < g < hi:
                return g
            gone = lo - g if g <= lo else g - hi         # how far the walk has come
            step = gone + 1 if gone < GUESS_WALK else 2 * gone + 1
            step = g + step if g <= lo else g - step
            if lo < step < hi:
                return step
        return (lo + hi) // 2

    def _probes_needed(self, lo: int, hi: int) -> int:
        """Bisecting search: the most runs :meth:`_probe` may still make from the bracket
        (``lo``, ``hi``), over every place γ* may turn out to be in it."""
        worst = 0
        for top in range(lo, hi):               # the highest sustained grid index
            a, b, n = lo, hi, 0
            while a + 1 < b:
                i = self._probe(a, b)
                a, b = (i, b) if i <= top else (a, i)
                n += 1
            worst = max(worst, n)
        return worst

    def _bisection(self) -> tuple[float | None, float | None, int]:
        """Walk the refinement from finished runs: (lo, next mid to run or None, steps done)."""
        best, first_sat, decided, _ = self._grid_decision()
        if not decided or best is None or first_sat is None:
            return best, None, 0
        lo, hi = best, first_sat
        for step in range(self.refine_steps):
            mid = load_key((lo + hi) / 2)
            v = self.verdict(mid)
            if v is None:
                return lo, mid, step
            if v.sustained:
                lo = mid
            else:
                hi = mid
        return lo, None, self.refine_steps

    # ------------------------------------------------------------------ proposing
    def next_load(self, in_flight: set[float]) -> tuple[float, str] | None:
        """The next load to run as ``(load, role)``, or ``None`` if nothing may start now.

        ``role`` is ``"baseline"`` (finite-mode γ = 0.10 reference not on the grid),
        ``"grid"`` or ``"refine"``.  ``None`` while loads are in flight means: wait for them.
        """
        busy = {load_key(x) for x in in_flight} | set(self.points)
        if self.baseline is not None and self.baseline not in busy:
            return self.baseline, ("grid" if self.baseline in self.grid else "baseline")
        _, _, _, over = self._grid_decision()
        if not over and self.search == "bisect":
            if in_flight:
                return None
            lo, hi = self._bracket()
            if hi is None:
                return None
            return self.grid[self._probe(lo, hi)], "grid"
        if not over:
            ceiling = self._ceiling()
            for g in self.grid:
                if g >= ceiling:
                    break
                if g not in busy:
                    return g, "grid"
            return None
        if self.refine_steps:
            _, mid, _ = self._bisection()
            if mid is not None and mid not in busy:
                return mid, "refine"
        return None

    def speculate(self, in_flight: set[float]) -> tuple[float, str] | None:
        """Bisecting search with probes in flight: the probe it would make next if each of them
        ends as expected, to run beside them on a slot that would otherwise be idle; ``None``
        if there is none (or the search does not bisect).

        A probe in flight is expected sustained at or below the guess and saturated above it;
        without a guess, to leave the larger part of the bracket, the upper of two equal ones
        (so two probes at once cut the bracket in three; above lie the loads whose runs take
        longest, in window mode, so a curve's chain of runs is shortest when they are settled
        first: over the 15 curves of OFR Table 2's 16x16x16 clean column, replayed alone on two
        workers, 476 s against 550 s for the lower part).  Whatever the runs in flight turn out to be, the speculative
        probe lies inside the bracket of the finished runs: at worst it is not needed, and it
        still narrows the bracket when it ends.  γ* is decided from finished runs only."""
        if self.search != "bisect" or not in_flight:
            return None
        if self._grid_decision()[3]:
            return None
        lo, hi = self._bracket()
        if hi is None:
            return None
        index = {g: i for i, g in enumerate(self.grid)}
        busy = {load_key(x) for x in in_flight} | set(self.points)
        for i in sorted(index[x] for x in {load_key(x) for x in in_flight} if x in index):
            if not lo < i < hi:
                continue
            g = self._guess_index
            sustained = i <= g if g is not None else hi - i >= i - lo
            lo, hi = (i, hi) if sustained else (lo, i)
        if lo + 1 >= hi:
            return None
        probe = self.grid[self._probe(lo, hi)]
        return None if probe in busy else (probe, "grid")

    def _ceiling(self) -> float:
        """Loads at or above this are never needed: the top of the lowest run of
        ``stop_after`` consecutive grid loads already finished and saturated.  Whatever the
        loads still running below it turn out to be, climbing stops there at the latest."""
        if self.full:
            return math.inf
        run = 0
        for g in self.grid:
            v = self.verdict(g)
            run = run + 1 if (v is not None and not v.sustained) else 0
            if run >= self.stop_after:
                return g + 1e-12
        return math.inf

    def remaining_bound(self, in_flight: set[float] = frozenset()) -> int:
        """At most how many more runs, besides those in flight, this curve may need (for
        progress estimates)."""
        busy = {load_key(x) for x in in_flight} | set(self.points)
        _, _, _, over = self._grid_decision()
        if self.search == "bisect" and not over:
            lo, hi = self._bracket()
            n = self._probes_needed(lo, len(self.grid) if hi is None else hi) - len(in_flight)
            if self.baseline is not None and self.baseline not in busy:
                n += 1
            return max(0, n) + self.refine_steps
        ceiling = self._ceiling()
        n = 0 if over else sum(1 for g in self.grid if g not in busy and g < ceiling)
        if self.baseline is not None and self.baseline not in busy \
                and self.baseline not in self.grid:
            n += 1
        if self.refine_steps:
            n += self.refine_steps - self._bisection()[2]
        return n

    def result(self) -> CurveResult:
        """Judge the curve from the runs recorded so far."""
        best, first_sat, decided, _ = self._grid_decision()
        refined = self._bisection()[0] if self.refine_steps else best
        verdicts = {load: v for load in self.points if (v := self.verdict(load)) is not None}
        _, base, _ = self._baseline()
        # the grid load just above γ* is known saturated, or γ* is only a lower bound
        bound = best is not None and (first_sat is None
                                      or self.grid.index(first_sat) > self.grid.index(best) + 1)
        return CurveResult(
            gamma_star=best, gamma_star_refined=refined, first_saturated=first_sat,
            first_saturated_reason=verdicts[first_sat].reason if first_sat in verdicts else None,
            complete=decided, verdicts=verdicts, baseline_latency_ns=base,
            gamma_star_lower_bound=bound)


def analyse_rows(rows: Iterable[Mapping[str, Any]], mode: str, grid: Iterable[float] | None = None,
                 *, baseline_load: float = BASELINE_LOAD,
                 stop_after: int = STOP_AFTER) -> CurveResult:
    """Judge one curve from its result rows (e.g. read back from a sweep CSV).

    ``grid`` defaults to the loads of rows whose ``role`` is ``"grid"`` (every row if there is
    no ``role``); rows with role ``"refine"`` are followed as a bisection.
    """
    rows = list(rows)
    if grid is None:
        grid = [r["offered_load"] for r in rows if r.get("role", "grid") == "grid"]
        if not grid:
            grid = [r["offered_load"] for r in rows]
    search = CurveSearch(grid, mode, stop_after=stop_after,
                         refine_steps=64 if any(r.get("role") == "refine" for r in rows) else 0,
                         baseline_load=baseline_load)
    for r in rows:
        search.record(r["offered_load"], r)
    return search.result()
