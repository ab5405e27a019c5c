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
