"""Exact bounds as guards (issue 56): a sweep computes its curve's bound first, runs a load
sustained above it again with a 10x window, and never reports a γ* above it.

Mutation tried: with the guard's check removed (``Sweep._above`` returning False), the fat
tree's D-mod-k permutation curve reports γ* 0.35 above its exact 1/3 and these tests fail."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from icsim.configs import bundled
from icsim.experiments.pipeline.bounds import guard_bound
from icsim.experiments.pipeline.curves import make_curves
from icsim.experiments.pipeline.sweep import GUARD_WINDOW, run_sweep

RAN: list[tuple[float, float]] = []


def tree(**over):
    data = yaml.safe_load(bundled("families/fat_tree.yaml").read_text())
    data["traffic"]["pattern"] = "permutation"
    data["run"].update(measure_us=100)
    for key, value in over.items():
        data[key].update(value)
    return data


def fake(limit_short: float, limit_long: float):
    """A stand-in run: sustained up to ``limit_short`` in the config's window, up to
    ``limit_long`` in a longer one (the issue's short window that misses one overloaded
    channel)."""
    def run(cfg):
        load, window = cfg.traffic.load, cfg.run.measure_us
        RAN.append((load, window))
        limit = limit_short if window <= 100 else limit_long
        bad = load > limit + 1e-9
        return {"offered_load": load, "mode": cfg.run.mode, "accepted_load": load,
                "latency_ns": 1000.0, "saturated": bad,
                "saturation_reason": "throughput" if bad else None,
                "derouted": {"total": 0.0}, "seed": cfg.seed, "version": "test",
                "wall_s": 0.01, "config": cfg.to_dict()}
    return run


@pytest.fixture(autouse=True)
def clean():
    RAN.clear()
    yield
    RAN.clear()


def test_the_fat_tree_permutation_bound_is_one_third():
    bound = guard_bound(make_curves(tree(), [0.3])[0].config(0.3))
    assert bound.value == pytest.approx(1 / 3) and "dmodk" in bound.what


def test_a_load_sustained_above_the_bound_is_run_again_with_a_longer_window(tmp_path):
    """Short window: 0.35 passes (the issue's committed γ*); the 10x window saturates it."""
    curves = make_curves(tree(), [0.25, 0.30, 0.35, 0.40, 0.45])
    out = run_sweep(curves, tmp_path, run_fn=fake(0.35, 0.30), guard=True, plots=False,
                    progress=False)
    result = out.curves[0].result
    assert result.gamma_star == pytest.approx(0.30)
    assert (0.35, 100 * GUARD_WINDOW) in RAN and (0.30, 1000) not in RAN
    rows = pd.read_csv(tmp_path / "results.csv")
    assert sorted(rows["role"]) == ["grid"] * 4 + ["recheck"]
    assert result.first_saturated_reason == "throughput"


def test_a_load_above_the_bound_is_never_reported_it_is_a_model_error(tmp_path):
    """Sustained even in the long window: γ* stays at or below the bound, the verdict names
    it as a model error."""
    curves = make_curves(tree(), [0.25, 0.30, 0.35, 0.40, 0.45])
    out = run_sweep(curves, tmp_path, run_fn=fake(0.40, 0.40), guard=True, plots=False,
                    progress=False)
    result = out.curves[0].result
    assert result.gamma_star == pytest.approx(0.30)
    assert result.first_saturated == pytest.approx(0.35)
    assert result.first_saturated_reason.startswith("model error: sustained at γ 0.35 above "
                                                    "the dmodk's exact ideal throughput 0.3333")
    verdicts = pd.read_csv(tmp_path / "verdicts.csv")
    assert verdicts["reason"].astype(str).str.contains("model error").any()


def test_a_resumed_sweep_reuses_the_recheck(tmp_path):
    curves = make_curves(tree(), [0.25, 0.30, 0.35, 0.40, 0.45])
    run_sweep(curves, tmp_path, run_fn=fake(0.40, 0.40), guard=True, plots=False,
              progress=False)
    RAN.clear()
    out = run_sweep(make_curves(tree(), [0.25, 0.30, 0.35, 0.40, 0.45]), tmp_path,
                    run_fn=fake(0.40, 0.40), guard=True, plots=False, progress=False)
    assert RAN == [] and out.curves[0].result.gamma_star == pytest.approx(0.30)


def test_without_a_bound_nothing_is_run_again(tmp_path):
    """Adaptive up*/down* may take any up port: no cheap path bound beyond 1; a load below
    the bound is never rechecked."""
    curves = make_curves(tree(routing={"algorithm": "updown_adaptive"}), [0.25, 0.30, 0.35])
    out = run_sweep(curves, tmp_path, run_fn=fake(0.35, 0.30), guard=True, plots=False,
                    progress=False)
    assert all(w == 100 for _, w in RAN) and out.curves[0].result.gamma_star == 0.35


def test_a_redraw_judges_as_the_guarded_sweep_did(tmp_path):
    """Nothing run (``run_missing=False``): the recheck in results.csv decides the load, so
    the redraw's γ* is the guarded sweep's, not the short window's."""
    grid = [0.25, 0.30, 0.35, 0.40, 0.45]
    run_sweep(make_curves(tree(), grid), tmp_path, run_fn=fake(0.40, 0.40), guard=True,
              plots=False, progress=False)
    RAN.clear()
    out = run_sweep(make_curves(tree(), grid), tmp_path, run_fn=fake(0.40, 0.40), guard=True,
                    run_missing=False, plots=False, progress=False)
    assert RAN == [] and out.curves[0].result.gamma_star == pytest.approx(0.30)
    assert out.curves[0].result.first_saturated_reason.startswith("model error")
