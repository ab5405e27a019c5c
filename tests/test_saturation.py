"""The saturation search: γ* follows docs/model.md §7's rules, on synthetic curves and on a
real sweep."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from icsim.experiments.pipeline.saturation import (CurveSearch, analyse_rows, judge, load_key,
                                                   sustained_above)
from icsim.experiments.pipeline.curves import make_curves, parse_loads
from icsim.experiments.pipeline.sweep import run_sweep
from icsim.simulator.engines import DeadlockError

GRID = parse_loads("0.1:1.0:0.05")


def climb(search: CurveSearch, point_at) -> list[float]:
    """Run a search one load at a time (no parallelism); return the loads in run order."""
    ran = []
    while (proposal := search.next_load(set())) is not None:
        load, _ = proposal
        ran.append(load)
        search.record(load, point_at(load))
    return ran


def window(saturated_loads, latency=1000.0):
    saturated_loads = {load_key(x) for x in saturated_loads}
    return lambda load: {"saturated": load_key(load) in saturated_loads,
                         "saturation_reason": "throughput" if load_key(load) in saturated_loads
                         else None, "latency_ns": latency}


def finite(latency_of):
    return lambda load: {"saturated": False, "latency_ns": latency_of(load)}


# ---------------------------------------------------------------------------------- window rule
def test_climbing_stops_after_two_saturated_loads_in_a_row():
    s = CurveSearch(GRID, "window")
    ran = climb(s, window({0.45, 0.5, 0.55, 0.6}))
    assert ran == [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]
    r = s.result()
    assert r.gamma_star == 0.4 and r.first_saturated == 0.45 and r.complete
    assert r.first_saturated_reason == "throughput"


def test_a_sustained_load_above_a_saturated_one_does_not_count():
    s = CurveSearch(GRID, "window")
    ran = climb(s, window({0.3, 0.4, 0.45}))           # 0.35 sustained between them
    assert ran[-4:] == [0.3, 0.35, 0.4, 0.45]          # one saturated load does not stop
    assert s.result().gamma_star == 0.25
    assert sustained_above(s.result()) == [0.35]           # the flip a sweep notes


def test_a_monotone_curve_has_no_load_sustained_above_its_first_saturated_one():
    s = CurveSearch(GRID, "window", full=True)
    climb(s, window({x for x in GRID if x >= 0.5}))
    assert (s.result().gamma_star, sustained_above(s.result())) == (0.45, [])
    every = CurveSearch(GRID, "window")
    climb(every, window(set()))
    assert sustained_above(every.result()) == []


def test_every_load_sustained_gives_the_top_of_the_grid_as_a_lower_bound():
    s = CurveSearch(GRID, "window")
    assert climb(s, window(set())) == GRID
    assert s.result().gamma_star == 1.0 and s.result().first_saturated is None
    assert s.result().gamma_star_lower_bound and s.result().gamma_star_text == "≥1"


def test_the_lowest_load_saturated_means_no_gamma_star():
    s = CurveSearch(GRID, "window")
    assert climb(s, window(set(GRID))) == [0.1, 0.15]
    assert s.result().gamma_star is None


def test_stop_after_is_a_parameter():
    s = CurveSearch(GRID, "window", stop_after=3)
    assert climb(s, window({0.3, 0.35, 0.4, 0.45}))[-1] == 0.4


def test_full_runs_every_load_but_judges_by_the_same_rule():
    s = CurveSearch(GRID, "window", full=True)
    assert climb(s, window({0.3, 0.35})) == GRID
    assert s.result().gamma_star == 0.25


def test_a_run_that_failed_or_measured_nothing_is_saturated_with_its_reason():
    assert judge({"error": "DeadlockError: stuck", "saturated": False, "latency_ns": 5.0},
                 "window") == judge({"error": "DeadlockError: stuck"}, "window")
    assert judge({"error": "DeadlockError: stuck"}, "window").reason == \
        "error: DeadlockError: stuck"
    assert judge({"saturated": False, "latency_ns": None}, "window").reason == "no packets measured"
    assert judge({"saturated": "True", "saturation_reason": "unfinished"}, "finite", 1.0).reason \
        == "unfinished"


# ---------------------------------------------------------------------------------- finite rule
def test_finite_mode_runs_the_baseline_first_and_applies_the_1_2_rule():
    lat = {0.1: 1000.0, 0.15: 1050.0, 0.2: 1150.0, 0.25: 1200.0, 0.3: 1201.0, 0.35: 1500.0}
    s = CurveSearch(parse_loads("0.1:0.6:0.05"), "finite")
    assert s.next_load(set()) == (0.1, "grid")
    ran = climb(s, finite(lambda x: lat.get(load_key(x), 9999.0)))
    assert ran == [0.1, 0.15, 0.2, 0.25, 0.3, 0.35]
    r = s.result()
    assert r.gamma_star == 0.25                       # 1200 <= 1.2 x 1000 < 1201
    assert r.baseline_latency_ns == 1000.0
    assert r.first_saturated_reason.startswith("latency 1201 ns > 1.2 x 1000 ns")


def test_finite_mode_without_0_10_on_the_grid_runs_it_anyway_as_the_baseline():
    s = CurveSearch([0.2, 0.3, 0.4, 0.5], "finite")
    assert s.next_load(set()) == (0.1, "baseline")
    ran = climb(s, finite(lambda x: 1000.0 if x < 0.35 else 2000.0))
    assert ran == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert s.result().gamma_star == 0.3


def test_finite_mode_judges_nothing_until_the_baseline_is_in():
    s = CurveSearch([0.1, 0.2, 0.3, 0.4], "finite")
    s.record(0.2, {"saturated": False, "latency_ns": 5000.0})
    s.record(0.3, {"saturated": False, "latency_ns": 5000.0})
    assert s.verdict(0.2) is None and s.result().gamma_star is None
    assert s.next_load({0.1}) == (0.4, "grid")        # still speculating: nothing decided
    s.record(0.1, {"saturated": False, "latency_ns": 1000.0})
    assert s.next_load(set()) is None                 # 0.2 and 0.3 saturated: stop
    assert s.result().gamma_star == 0.1


def test_a_failed_baseline_leaves_no_sustained_load():
    s = CurveSearch([0.1, 0.2, 0.3], "finite")
    climb(s, lambda x: {"error": "DeadlockError: x"} if x == 0.1 else
          {"saturated": False, "latency_ns": 1.0})
    r = s.result()
    assert r.gamma_star is None
    assert s.verdict(0.2).reason.startswith("baseline γ=0.10 unusable (error: DeadlockError")


# ---------------------------------------------------------------------------------- refinement
def test_refinement_bisects_between_gamma_star_and_the_first_saturated_load():
    threshold = 0.33
    s = CurveSearch(GRID, "window", refine_steps=3)
    ran = climb(s, lambda x: {"saturated": x > threshold, "latency_ns": 1.0})
    assert ran[-3:] == [0.325, 0.3375, 0.33125]
    r = s.result()
    assert r.gamma_star == 0.3 and r.gamma_star_refined == 0.325


def test_refinement_from_csv_rows_follows_the_recorded_bisection():
    rows = [{"offered_load": x, "role": "grid", "saturated": x > 0.33, "latency_ns": 1.0}
            for x in (0.1, 0.2, 0.3, 0.4, 0.5)]
    rows += [{"offered_load": x, "role": "refine", "saturated": x > 0.33, "latency_ns": 1.0}
             for x in (0.35, 0.325)]
    r = analyse_rows(rows, "window")
    assert (r.gamma_star, r.gamma_star_refined) == (0.3, 0.325)


# ---------------------------------------------------------------------------------- speculation
def test_speculative_proposals_never_change_gamma_star():
    """With loads in flight the search proposes the next grid loads; results arriving out of
    order give the same γ* as climbing one by one."""
    point = window({0.35, 0.4, 0.45})
    s = CurveSearch(GRID, "window")
    in_flight = []
    for _ in range(4):
        load, _ = s.next_load(set(in_flight))
        in_flight.append(load)
    assert in_flight == [0.1, 0.15, 0.2, 0.25]
    while in_flight or s.next_load(set()) is not None:
        while len(in_flight) < 4 and (p := s.next_load(set(in_flight))) is not None:
            in_flight.append(p[0])
        done = in_flight.pop()                         # last submitted finishes first
        s.record(done, point(done))
    assert s.result().gamma_star == 0.3 and s.result().complete


def test_speculation_stops_above_two_finished_saturated_loads_while_a_lower_one_runs():
    s = CurveSearch(GRID, "window")
    s.record(0.1, {"saturated": False, "latency_ns": 1.0})
    for load in (0.2, 0.25):
        s.record(load, {"saturated": True, "saturation_reason": "throughput"})
    assert s.next_load({0.15}) is None                 # 0.3 and above can never be needed
    assert s.remaining_bound({0.15}) == 0
    s.record(0.15, {"saturated": False, "latency_ns": 1.0})
    assert s.next_load(set()) is None and s.result().gamma_star == 0.15


# ---------------------------------------------------------------------------------- in a sweep
CALLS: list[float] = []


def fake_run(cfg):
    """A synthetic curve: saturated above 0.33; deadlock at 0.7."""
    load = cfg.traffic.load
    CALLS.append(load)
    if load_key(load) == 0.7:
        raise DeadlockError("no packet moved for 50 us\nqueues: (0, 1)")
    return {"offered_load": load, "mode": cfg.run.mode, "accepted_load": min(load, 0.33),
            "latency_ns": 1000.0 + load, "saturated": load > 0.33,
            "saturation_reason": "throughput" if load > 0.33 else None,
            "derouted": {"outflank": 0.0, "total": 0.0}, "seed": cfg.seed, "version": "t",
            "wall_s": 0.0, "config": cfg.to_dict()}


def small(**sections):
    data = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"message_packets": 4},
            "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}}
    data.update(sections)
    return data


def test_a_sweep_records_a_failing_run_as_saturated_with_its_error(tmp_path):
    CALLS.clear()
    out = run_sweep(make_curves(small(), [0.2, 0.3, 0.7, 0.8], []), tmp_path, run_fn=fake_run,
                    full=True, plots=False, progress=False)
    df = pd.read_csv(tmp_path / "results.csv")
    bad = df[df["offered_load"] == 0.7].iloc[0]
    assert bad["status"] == "error" and bool(bad["saturated"])
    assert bad["saturation_reason"] == "error"
    assert bad["error"] == "DeadlockError: no packet moved for 50 us | queues: (0, 1)"
    assert pd.isna(bad["latency_ns"])
    assert out.curves[0].result.gamma_star == 0.3
    assert out.curves[0].result.verdicts[0.7].reason.startswith("error: DeadlockError")


def test_a_sweep_with_refinement_records_the_bisection_points(tmp_path):
    CALLS.clear()
    out = run_sweep(make_curves(small(), parse_loads("0.1:0.6:0.1"), []), tmp_path,
                    run_fn=fake_run, refine=2, plots=False, progress=False)
    assert CALLS == [0.1, 0.2, 0.3, 0.4, 0.5, 0.35, 0.325]
    r = out.curves[0].result
    assert (r.gamma_star, r.gamma_star_refined) == (0.3, 0.325)
    roles = pd.read_csv(tmp_path / "results.csv").set_index("offered_load")["role"]
    assert roles[0.325] == "refine" and roles[0.3] == "grid"


def test_gamma_star_of_a_real_dor_sweep_is_where_its_curve_says(tmp_path):
    """Run every load of a tiny DOR curve; γ* is the last load of the sustained prefix of the
    simulator's own verdicts; the stopping search finds the same γ* with fewer runs."""
    grid = parse_loads("0.1:0.9:0.1")
    full = run_sweep(make_curves(small(), grid), tmp_path / "full", full=True, plots=False,
                     progress=False)
    df = pd.read_csv(tmp_path / "full" / "results.csv").sort_values("offered_load")
    assert list(df["offered_load"]) == grid
    sustained = list(~df["saturated"].astype(bool))
    assert sustained[0] and not sustained[-1]          # the curve does saturate on the grid
    expected = grid[sustained.index(False) - 1]
    assert full.curves[0].result.gamma_star == expected

    stopped = run_sweep(make_curves(small(), grid), tmp_path / "stop", plots=False,
                        progress=False)
    assert stopped.curves[0].result.gamma_star == expected
    assert stopped.ran <= sustained.index(False) + 2 < len(grid)


# ---------------------------------------------------------------------------------- bisection
def monotone_curve(threshold, finite_mode):
    """A curve saturated from grid index ``threshold`` on (none past the grid's end), as the
    run function of its mode, and the mode."""
    edge = GRID[threshold] if threshold < len(GRID) else 2.0
    if finite_mode:
        return finite(lambda load: 100.0 if load_key(load) < edge else 500.0), "finite"
    return window([g for g in GRID if g >= edge]), "window"


@given(threshold=st.integers(min_value=0, max_value=len(GRID)), finite_mode=st.booleans())
def test_bisection_finds_the_climbing_gamma_star_of_a_monotone_curve_in_log_runs(threshold,
                                                                                  finite_mode):
    """Saturated from grid index ``threshold`` on: both searches agree on γ*; bisection needs
    at most the baseline plus ceil(log2(grid + 1)) runs."""
    point, mode = monotone_curve(threshold, finite_mode)
    climbing, bisecting = CurveSearch(GRID, mode), CurveSearch(GRID, mode, search="bisect")
    climb(climbing, point)
    ran = climb(bisecting, point)
    expected = GRID[threshold - 1] if threshold > 0 else None
    if finite_mode and threshold == 0:
        expected = GRID[-1]      # every load at the baseline's own latency: all sustained
    assert bisecting.result().gamma_star == climbing.result().gamma_star == expected
    assert bisecting.result().complete
    assert len(ran) == len(set(ran)) <= 1 + math.ceil(math.log2(len(GRID) + 1))
    assert bisecting.remaining_bound() == 0


@given(threshold=st.integers(min_value=0, max_value=len(GRID)),
       search=st.sampled_from(["climb", "bisect"]), runs=st.integers(min_value=0, max_value=25))
def test_a_gamma_star_not_flagged_as_a_lower_bound_is_exact(threshold, search, runs):
    """Saturated from grid index ``threshold`` on, the search stopped after ``runs`` runs: a γ*
    not flagged as a lower bound is the curve's true γ*, a flagged one at most it; a finished
    search flags it only when the top of the grid was sustained ("γ* ≥ 1.00")."""
    point = window([g for g in GRID if g >= (GRID[threshold] if threshold < len(GRID) else 2)])
    s = CurveSearch(GRID, "window", search=search)
    for _ in range(runs):
        proposal = s.next_load(set())
        if proposal is None:
            break
        s.record(proposal[0], point(proposal[0]))
    r, true = s.result(), GRID[threshold - 1] if threshold > 0 else None
    if r.gamma_star is None:
        assert not r.gamma_star_lower_bound
    elif r.gamma_star_lower_bound:
        assert r.gamma_star <= true and r.gamma_star_text == f"≥{r.gamma_star:.4g}"
    else:
        assert r.gamma_star == true and r.gamma_star_text == f"{true:.4g}"
    if s.next_load(set()) is None:                       # finished
        assert r.gamma_star_lower_bound == (threshold == len(GRID))


@given(threshold=st.integers(min_value=0, max_value=len(GRID)),
       guess=st.floats(min_value=0.0, max_value=1.5), finite_mode=st.booleans())
def test_a_guessed_bisection_finds_the_same_gamma_star_and_two_runs_confirm_a_right_guess(
        threshold, guess, finite_mode):
    """Saturated from grid index ``threshold`` on: a bisection that starts from any guess ends
    at the climbing search's γ*; before each run, remaining_bound() is at least the runs still
    to come; a guess equal to γ* takes the guess and the load above it (plus the baseline), one
    a grid step above γ* the guess and γ*."""
    point, mode = monotone_curve(threshold, finite_mode)
    if finite_mode:
        threshold = threshold or len(GRID)       # all at the baseline's latency: all sustained
    climbing = CurveSearch(GRID, mode)
    climb(climbing, point)
    right = GRID[threshold - 1] if threshold > 0 else None
    high = GRID[threshold] if 0 < threshold < len(GRID) else None
    for g in (guess, right, high):
        if g is None:
            continue
        s = CurveSearch(GRID, mode, search="bisect", guess=g)
        bounds, ran = [], []
        while (proposal := s.next_load(set())) is not None:
            bounds.append(s.remaining_bound())
            ran.append(proposal[0])
            s.record(proposal[0], point(proposal[0]))
        assert s.result().gamma_star == climbing.result().gamma_star
        assert s.result().complete and s.remaining_bound() == 0
        assert all(b >= len(ran) - i for i, b in enumerate(bounds))
        assert len(ran) == len(set(ran))
        if g == right:
            assert set(ran) == {g, *GRID[threshold:threshold + 1], *([0.1] * finite_mode)}
        if g == high:                                # a grid step too high
            assert set(ran) == {g, right, *([0.1] * finite_mode)}


def test_bisection_waits_for_its_probe_and_uses_runs_it_is_given():
    s = CurveSearch(GRID, "window", search="bisect")
    load, role = s.next_load(set())
    assert (load, role) == (GRID[(len(GRID) - 1) // 2], "grid")
    assert s.next_load({load}) is None
    s.record(0.3, {"saturated": False, "latency_ns": 1.0})        # e.g. from an earlier climb
    s.record(0.4, {"saturated": True, "saturation_reason": "throughput"})
    assert s.next_load(set()) == (0.35, "grid")
    s.record(0.35, {"saturated": True, "saturation_reason": "throughput"})
    assert s.next_load(set()) is None and s.result().gamma_star == 0.3


def test_a_bisecting_sweep_resumes_from_a_climbing_one(tmp_path):
    """The synthetic curve saturates above 0.33: a climbing sweep stopped early, then a
    bisecting one over the same folder runs only the loads it still needs."""
    grid = parse_loads("0.1:0.6:0.05")
    curves = make_curves(small(), grid, [])
    CALLS.clear()
    run_sweep(curves, tmp_path, run_fn=fake_run, full=False, plots=False, progress=False,
              stop_after=2)
    climbed = list(CALLS)
    assert climbed == [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]
    CALLS.clear()
    out = run_sweep(curves, tmp_path, run_fn=fake_run, search="bisect", plots=False,
                    progress=False)
    assert CALLS == [] and out.curves[0].result.gamma_star == 0.3 and out.ran == 0
    CALLS.clear()
    fresh = run_sweep(curves, tmp_path / "fresh", run_fn=fake_run, search="bisect",
                      plots=False, progress=False)
    assert fresh.curves[0].result.gamma_star == 0.3 and len(CALLS) < len(climbed)


def test_a_bisecting_sweep_starts_each_curve_at_its_guess(tmp_path):
    """Saturated above 0.33: guessed right, two runs; guessed four steps low, it walks up to
    it (six runs); six steps high, it walks down five steps, then bisects what is left."""
    grid = parse_loads("0.1:0.6:0.05")
    walked = [0.6, 0.55, 0.5, 0.45, 0.4, 0.35]
    for guess, loads in ((0.3, [0.3, 0.35]), (0.1, [0.1, 0.15, 0.2, 0.25, 0.3, 0.35]),
                         (0.6, walked + [0.2, 0.25, 0.3])):
        curves = [dataclasses.replace(c, guess=guess) for c in make_curves(small(), grid, [])]
        CALLS.clear()
        out = run_sweep(curves, tmp_path / str(guess), run_fn=fake_run, search="bisect",
                        plots=False, progress=False)
        assert CALLS == loads and out.curves[0].result.gamma_star == 0.3


def test_a_sweep_that_runs_nothing_reports_from_the_finished_points(tmp_path):
    """run_missing=False judges from results.csv only: an unfinished bisection is incomplete
    with its lower bound, and nothing runs."""
    curves = make_curves(small(), parse_loads("0.1:0.6:0.05"), [])
    CALLS.clear()
    run_sweep(curves, tmp_path, run_fn=fake_run, plots=False, progress=False, search="bisect",
              full=False, stop_after=2)
    assert sorted(CALLS) == [0.2, 0.25, 0.3, 0.35]        # 0.35 first, then up from 0.2
    rows = pd.read_csv(tmp_path / "results.csv")
    rows[rows["offered_load"] != 0.35].to_csv(tmp_path / "results.csv", index=False)
    CALLS.clear()
    out = run_sweep(curves, tmp_path, run_fn=fake_run, plots=False, progress=False,
                    search="bisect", run_missing=False)
    r = out.curves[0].result
    assert CALLS == [] and out.ran == 0
    assert not r.complete and r.gamma_star == 0.3 and r.first_saturated is None


# ---------------------------------------------------------------------------------- speculation
class Pool:
    """A pool of ``slots`` workers in this process that ends its runs in an order ``pick``
    chooses (a Hypothesis draw), to check that γ* never depends on it."""

    name, local = "pool", True

    def __init__(self, slots, pick):
        self.slots, self.pick, self.most = slots, pick, 0
        self.flying = []

    class Task:
        def __init__(self, fn, args):
            self.fn, self.args, self.value = fn, args, None

    def submit(self, fn, *args):
        self.flying.append(self.Task(fn, args))
        self.most = max(self.most, len(self.flying))
        return self.flying[-1]

    def wait(self, handles):
        task = handles[self.pick(len(handles))]
        self.flying.remove(task)
        task.value = task.fn(*task.args)
        return [task]

    def result(self, task):
        return task.value


def run_with_slots(search, point, order):
    """Drive ``search`` with two slots, ending the runs in flight in ``order`` (indices drawn
    by Hypothesis): its regular proposals first, its speculative ones on a free slot."""
    flying, ran = [], []
    while True:
        while len(flying) < 2:
            proposal = search.next_load(set(flying)) or search.speculate(set(flying))
            if proposal is None:
                break
            flying.append(proposal[0])
            ran.append(proposal[0])
        if not flying:
            return ran
        load = flying.pop(order.pop() % len(flying) if order else 0)
        search.record(load, point(load))


@given(threshold=st.integers(min_value=0, max_value=len(GRID)),
       guess=st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.2)),
       later=st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.2)),
       finite_mode=st.booleans(), order=st.lists(st.integers(0, 3), max_size=30))
def test_a_bisection_on_two_slots_with_any_guess_finds_the_exact_gamma_star(
        threshold, guess, later, finite_mode, order):
    """A monotone curve, saturated from grid index ``threshold`` on: a bisection that probes
    ahead on a free slot (:meth:`CurveSearch.speculate`), starting from any guess or none and
    told another after its first probe, ends at the climbing search's γ* whatever order its
    runs end in, running no load twice."""
    point, mode = monotone_curve(threshold, finite_mode)
    climbing = CurveSearch(GRID, mode)
    climb(climbing, point)
    s = CurveSearch(GRID, mode, search="bisect", guess=guess)
    first = s.next_load(set())
    s.record(first[0], point(first[0]))
    s.suggest(later)
    ran = [first[0], *run_with_slots(s, point, list(order))]
    assert s.result().gamma_star == climbing.result().gamma_star and s.result().complete
    assert len(ran) == len(set(ran))


def test_a_probe_in_flight_gets_a_second_beside_it_on_a_free_slot():
    """Without a guess the second probe splits the larger part of the bracket (the upper of
    two equal ones); with a guess, it is the load the walk needs next if the guess holds; none
    before the finite-mode baseline is in, nor for a climbing search."""
    s = CurveSearch(GRID, "window", search="bisect")
    assert s.speculate(set()) is None
    first, _ = s.next_load(set())
    assert first == GRID[9] and s.speculate({first}) == (GRID[14], "grid")
    s.record(GRID[16], {"saturated": True, "saturation_reason": "throughput"})
    assert s.speculate({first}) == (GRID[4], "grid")          # (-1, 9) is now the larger
    g = CurveSearch(GRID, "window", search="bisect", guess=0.5)
    assert g.next_load(set()) == (0.5, "grid") and g.speculate({0.5}) == (0.55, "grid")
    f = CurveSearch(GRID, "finite", search="bisect")
    assert f.next_load(set()) == (0.1, "grid") and f.speculate({0.1}) is None
    assert CurveSearch(GRID, "window").speculate({0.1}) is None      # climbing: no


@given(verdicts=st.lists(st.booleans(), min_size=len(GRID), max_size=len(GRID)),
       guess=st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.2)),
       order=st.lists(st.integers(0, 3), max_size=30))
def test_on_a_curve_that_is_not_monotone_a_bisection_ends_on_a_flip_it_ran(verdicts, guess,
                                                                           order):
    """A curve sustained and saturated at random: a bisection (any guess, two slots) ends,
    as the module docstring says, at a grid load it ran and found sustained whose grid load
    above it it ran and found saturated (or the top of the grid), no run below saturated: a
    γ* of the rule over the runs it made, which a climb need not agree with."""
    point = window([g for g, v in zip(GRID, verdicts) if not v])
    s = CurveSearch(GRID, "window", search="bisect", guess=guess)
    run_with_slots(s, point, list(order))
    r = s.result()
    assert r.complete
    ran = sorted(s.points)
    below = [x for x in ran if r.first_saturated is None or x < r.first_saturated]
    assert all(s.verdict(x).sustained for x in below)
    if r.gamma_star is None:
        assert r.first_saturated == GRID[0]
    else:
        assert r.gamma_star in ran and s.verdict(r.gamma_star).sustained
        i = GRID.index(r.gamma_star)
        assert r.first_saturated == (GRID[i + 1] if i + 1 < len(GRID) else None)


# ---------------------------------------------------------------------------------- informants
def test_a_curve_starts_at_the_gamma_star_of_the_curves_it_takes_its_guess_from(tmp_path):
    """Two curves saturated above 0.33: the second takes its guess from the first, so its
    search waits for the first's γ* (0.3) and runs 0.3 and 0.35 only; told nothing, it would
    bisect from the middle."""
    grid = parse_loads("0.1:0.6:0.05")
    first, second = make_curves(small(), grid, vary=[("traffic.message_packets", [4, 5])])
    second = dataclasses.replace(second, guess_from=(first.label,))
    CALLS.clear()
    out = run_sweep([first, second], tmp_path, run_fn=fake_run, search="bisect", plots=False,
                    progress=False)
    assert [c.result.gamma_star for c in out.curves] == [0.3, 0.3]
    assert CALLS[-2:] == [0.3, 0.35] and len(CALLS) == 4 + 2
    assert [r["offered_load"] for r in out.curves[1].rows] == [0.3, 0.35]


@given(order=st.lists(st.integers(0, 3), max_size=40))
def test_two_curves_on_two_slots_keep_both_busy_and_their_gamma_star(tmp_path_factory, order):
    """Two bisecting curves, one taking its guess from the other, on a pool of two whose runs
    end in any order: both slots work at once and each curve ends at its γ*."""
    grid = parse_loads("0.1:0.6:0.05")
    first, second = make_curves(small(), grid, vary=[("traffic.message_packets", [4, 5])])
    second = dataclasses.replace(second, guess_from=(first.label,))
    pool = Pool(2, lambda n: order.pop() % n if order else 0)
    from icsim.experiments.pipeline.sweep import Sweep
    out = Sweep([first, second], tmp_path_factory.mktemp("s"), run_fn=fake_run,
                search="bisect", progress=False).run(pool)
    assert [c.result.gamma_star for c in out.curves] == [0.3, 0.3] and pool.most == 2
