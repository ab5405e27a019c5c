"""Verdicts that must be right: Poisson arrivals are not saturation, deadlocks are not
saturation, γ* does not depend on the arrival process (the issue's cases, re-run)."""

from __future__ import annotations

import pytest

from icsim.simulator.config import config_from_dict
from icsim.simulator.engines import DeadlockError
from icsim.simulator.simulation import run

ABR_4X4X4 = {"topology": {"kind": "torus", "dims": [4, 4, 4]}, "routing": {"algorithm": "abr"},
             "traffic": {"arrivals": "exponential", "message_packets": 16},
             "run": {"warmup_us": 20, "measure_us": 100, "drain_us": 200}}


def at(base, load, seed, **sections):
    cfg = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    cfg["traffic"] = {**cfg["traffic"], "load": load}
    for key, value in sections.items():
        cfg[key] = {**cfg.get(key, {}), **value}
    cfg["seed"] = seed
    return config_from_dict(cfg)


@pytest.mark.parametrize("load", [0.2, pytest.param(0.3, marks=pytest.mark.slow)])
def test_poisson_arrivals_well_below_saturation_are_never_called_saturated(load):
    flagged = []
    for seed in range(1, 21):
        r = run(at(ABR_4X4X4, load, seed))
        if r["saturated"]:
            flagged.append((seed, r["saturation_reason"]))
        # the verdict compares with what was offered, which Poisson arrivals scatter
        assert abs(r["offered_measured_load"] - load) < 0.1 * load
    assert flagged == []


def gamma_star(arrivals: str) -> float:
    # the default window (50 + 200 + 500 us): Poisson backlogs need a window long against the
    # message size to average out (with 96-packet messages, measure 500 us)
    base = {**ABR_4X4X4, "run": {}}
    best = 0.0
    for i in range(2, 21):
        load = round(0.05 * i, 2)
        r = run(at(base, load, 1, traffic={"arrivals": arrivals}))
        if r["saturated"]:
            break
        best = load
    return best


@pytest.mark.slow
def test_gamma_star_with_poisson_arrivals_is_within_a_grid_step_of_the_deterministic_one():
    assert abs(gamma_star("exponential") - gamma_star("deterministic")) <= 0.05 + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("dims", [[4, 4], [4, 4, 4]])
def test_without_the_bubble_rule_a_run_that_does_not_finish_is_a_named_deadlock_or_moving(dims):
    outcomes = {"finished": 0, "deadlock": 0, "moving": 0}
    for seed in range(1, 21):
        cfg = config_from_dict({
            "seed": seed, "topology": {"kind": "torus", "dims": dims},
            "routing": {"algorithm": "dor"}, "router": {"bubble": False},
            "traffic": {"load": 0.7 + 0.05 * (seed % 4), "message_packets": 16},
            "run": {"warmup_us": 10, "measure_us": 50, "drain_us": 100, "watchdog_us": 10}})
        try:
            r = run(cfg)
        except DeadlockError as exc:
            assert " -> node " in str(exc) or "blocked queues" in str(exc)   # a cycle, or all
            outcomes["deadlock"] += 1
            continue
        if r["packets_delivered"] == r["packets_measured"]:
            outcomes["finished"] += 1
        else:
            assert "no port stuck" in r["saturation_reason"], r["saturation_reason"]
            outcomes["moving"] += 1
    assert outcomes["deadlock"] > 0                 # without the bubble rule rings do deadlock


# ---------------------------------------------------------------- stopping as the window closes
STOP_BASE = {"topology": {"kind": "torus", "dims": [4, 4, 4]}, "routing": {"algorithm": "abr"},
             "traffic": {"message_packets": 8},
             "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 60}}


def stop_pair(load, engine):
    full = run(at(STOP_BASE, load, 1), engine=engine)
    stopped = run(at(STOP_BASE, load, 1, run={"stop_when_saturated": True}), engine=engine)
    for r in (full, stopped):
        for volatile in ("wall_s", "engine", "config"):
            r.pop(volatile)
    return full, stopped


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_saturated_run_stops_as_its_window_closes_with_the_same_verdict(engine):
    """Far above saturation the throughput rule fires at the window's end: the stopped run is
    saturated by it, ends there (25 us), and agrees with the full run on everything the window
    alone decides."""
    full, stopped = stop_pair(1.0, engine)
    assert full["saturated"] and stopped["saturated"]
    assert full["sim_time_ns"] > 25_000 and stopped["sim_time_ns"] == 25_000
    assert stopped["saturation_reason"].startswith("throughput: accepted ")
    assert stopped["saturation_reason"].endswith(
        "; the run stopped as the window closed (run.stop_when_saturated)")
    for key in ("accepted_load", "offered_measured_load", "packets_measured"):
        assert stopped[key] == full[key], key
    assert stopped["packets_delivered"] < stopped["packets_measured"]


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_sustained_run_is_the_same_with_or_without_the_early_stop(engine):
    full, stopped = stop_pair(0.2, engine)
    assert not full["saturated"] and stopped == full


def test_both_engines_stop_a_saturated_run_identically():
    assert stop_pair(1.0, "simpy")[1] == stop_pair(1.0, "compiled")[1]


def test_the_early_stop_needs_a_window(capsys):
    from icsim.configs import bundled
    from icsim.experiments.cli import main

    assert main(["run", str(bundled("ofr", "reference", "k8.yaml")), "--set",
                 "run.stop_when_saturated=true"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "run.stop_when_saturated: stops a run as its measurement " \
        "window closes: needs run.mode window and open-loop traffic" in err


def test_the_source_queue_rule_fires_on_a_backlog_that_grows_through_the_window():
    import numpy as np

    from icsim.simulator.results import GROWING_QUEUES, SUSTAINED, queue_growth, window_rule

    ramp = np.arange(21, dtype=np.int64) * 64          # 64 nodes: one packet per node a sample
    assert queue_growth(ramp, 64) == (np.mean(ramp[-5:]) - np.mean(ramp[:5])) / 64 == 16.0
    assert window_rule(100, 100, ramp, 64, 1000.0, 1.0, 15.0) == GROWING_QUEUES
    assert window_rule(100, 100, ramp, 64, 1000.0, 1.0, 16.0) == SUSTAINED
    assert window_rule(100, 100, ramp[:7], 64, 1000.0, 1.0, 0.5) == SUSTAINED   # too few
