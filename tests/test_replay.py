"""The replay of OFR Table 2's searches over the committed runs: the reproduction's own sweeps
on a virtual clock, every γ* as committed."""

from __future__ import annotations

import pytest

from icsim.experiments.papers.ofr import replay as rp


@pytest.fixture(scope="module")
def recorded():
    return rp.Recorded.committed()


def test_the_committed_gamma_star_as_guesses_takes_the_fewest_runs_there_are(recorded):
    """Started at its committed γ*, each curve runs γ* and the load above it, plus the
    finite-mode baseline: 2 x 15 clean runs and 3 x 15 reference runs, all of them committed,
    every γ* as committed."""
    r = rp.replay(8, recorded=recorded, committed_guess=True)
    assert not r.differs and len(r.gamma) == 30
    assert [sum(x.key[1] == p for x in r.runs) for p in ("clean", "reference")] == [30, 45]
    assert not any(x.new for x in r.runs)


@pytest.mark.parametrize("k", [8, 16])
def test_the_default_search_finds_every_committed_gamma_star_in_fewer_runs(recorded, k):
    """The reproduction's default search (bisecting from related curves' γ*, saturated runs
    stopped early) finds the 30 committed γ* of the column, with fewer runs and less time on
    two workers than bisecting from the middle of every grid."""
    new = rp.replay(k, recorded=recorded)
    old = rp.replay(k, recorded=recorded, guess="none")
    assert not new.differs and not old.differs and len(new.gamma) == 30
    assert len(new.runs) < len(old.runs) and new.wall_s < old.wall_s


def test_a_replay_keeps_two_workers_busy_and_its_clock_is_their_work(recorded):
    """Two slots: the clock ends between half the core time and the core time, no run starts
    before another ends when both slots are taken, and runs stopped early are the saturated
    ones."""
    r = rp.replay(8, profile="reference", recorded=recorded)
    assert r.core_s / 2 <= r.wall_s <= r.core_s
    ends = sorted(x.start + x.seconds for x in r.runs)
    for x in r.runs:
        assert sum(y.start <= x.start < y.start + y.seconds for y in r.runs) <= 2
    assert all(x.saturated for x in r.runs if x.stopped)
    assert ends[-1] == pytest.approx(r.wall_s)


def test_a_finite_run_over_its_limit_stops_and_a_window_run_saturated_by_throughput_stops():
    finite = {"run": {"mode": "finite", "latency_limit_ns": 1200.0}}
    row = {"saturated": "False", "saturation_reason": None, "latency_ns": 2400.0}
    result, stopped = rp.replayed(row, finite)
    assert stopped and result["saturated"]
    assert rp.stopped_share(row, finite) == pytest.approx(2 ** -0.4)
    assert rp.replayed({**row, "latency_ns": 1100.0}, finite) == (
        {"saturated": False, "saturation_reason": None, "latency_ns": 1100.0,
         "packet_hops": None, "events": None}, False)
    window = {"run": {"mode": "window", "stop_when_saturated": True, "warmup_us": 100,
                      "measure_us": 400}}
    sat = {"saturated": True, "saturation_reason": "throughput: ...", "latency_ns": 1.0,
           "sim_time_ns": 800000.0}
    assert rp.replayed(sat, window)[1] and rp.stopped_share(sat, window) == 0.625
    assert not rp.replayed({**sat, "saturation_reason": "unfinished", "accepted_load": 0.5,
                            "offered_measured_load": 0.5}, window)[1]
