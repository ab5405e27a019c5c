"""Figures: drawn from the CSV alone, saturated loads left out of the latency curves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icsim.experiments.cli import main
from icsim.experiments.pipeline.plots import curve_lines, latency_series, plot_results


def row(load, *, algorithm="dor", pattern="uniform", saturated=False, latency=1000.0,
        mode="window", role="grid", error=None, outflank=0.0):
    cfg = f"{algorithm}-{pattern}-{mode}"
    return {"curve": cfg, "role": role, "config_hash": f"{cfg}-{load}", "seed": 1,
            "curve_hash": cfg, "offered_load": load, "status": "error" if error else "ok",
            "error": error, "mode": mode, "saturated": saturated,
            "saturation_reason": "throughput" if saturated else None,
            "accepted_load": min(load, 0.4), "latency_ns": latency,
            "derouted.outflank": outflank, "derouted.wraparound": 0.0,
            "derouted.total": outflank, "config.routing.algorithm": algorithm,
            "config.traffic.pattern": pattern, "config.traffic.load": load,
            "config.run.mode": mode, "config.topology.dims": "[4, 4, 4]",
            "config.topology.kind": "torus", "config.seed": 1}


def window_curve(algorithm="dor", pattern="uniform", saturated=(0.5, 0.7, 0.8)):
    return [row(x, algorithm=algorithm, pattern=pattern, saturated=x in saturated,
                latency=1000 * (1 + x)) for x in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)]


def test_latency_curves_stop_before_the_first_saturated_load():
    series = latency_series(window_curve())           # 0.6 is sustained above saturated 0.5
    [(label, loads, lat)] = series[""]
    assert label == "dor"
    assert list(loads) == [0.1, 0.2, 0.3, 0.4]
    assert np.allclose(lat, [1.1, 1.2, 1.3, 1.4])      # µs


def test_failed_runs_are_left_out_like_saturated_ones():
    rows = window_curve(saturated=())
    rows[2] = row(0.3, error="DeadlockError: stuck", latency=None, saturated=True)
    [(_, loads, _)] = latency_series(rows)[""]
    assert list(loads) == [0.1, 0.2]


def test_finite_mode_curves_use_the_1_2_latency_rule():
    lat = {0.1: 1000, 0.2: 1100, 0.3: 1250, 0.4: 1300}
    rows = [row(x, mode="finite", latency=v) for x, v in lat.items()]
    [(_, loads, _)] = latency_series(rows)[""]
    assert list(loads) == [0.1, 0.2]
    [line] = curve_lines(rows)
    assert line.gamma_star == 0.2 and list(line.sustained) == [True, True, False, False]


def test_patterns_become_panels_and_algorithms_lines():
    rows = (window_curve("abr", "uniform") + window_curve("ofr", "uniform", saturated=(0.8,))
            + window_curve("abr", "transpose", saturated=(0.3, 0.4)))
    series = latency_series(rows)
    assert list(series) == ["uniform", "transpose"]
    assert [s[0] for s in series["uniform"]] == ["abr", "ofr"]
    assert list(series["uniform"][1][1]) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert list(series["transpose"][0][1]) == [0.1, 0.2]


def test_figures_are_written_as_non_empty_png_and_svg(tmp_path):
    rows = window_curve("abr") + window_curve("ofr", saturated=(0.7, 0.8))
    rows = [dict(r, **{"derouted.outflank": 0.1, "derouted.total": 0.2}) if
            r["config.routing.algorithm"] == "ofr" else r for r in rows]
    files = plot_results(rows, tmp_path)
    names = sorted(f.name for f in files)
    assert names == ["accepted.png", "accepted.svg", "derouted.png", "derouted.svg",
                     "latency.png", "latency.svg"]
    for f in files:
        data = f.read_bytes()
        if f.suffix == ".png":
            assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
        else:
            assert b"<svg" in data[:1000] and len(data) > 10_000
    svg = (tmp_path / "latency.svg").read_text()
    assert "Mean packet latency" in svg or "Mean" in svg


def test_icsim_plot_redraws_from_the_csv_without_simulating(tmp_path, capsys):
    pd.DataFrame(window_curve()).to_csv(tmp_path / "results.csv", index=False)
    with open(tmp_path / "results.csv", "a") as f:
        f.write("dor-uniform,grid,trunc")               # an interrupted last line
    assert main(["plot", str(tmp_path), "--format", "png"]) == 0
    assert (tmp_path / "latency.png").stat().st_size > 0
    assert not (tmp_path / "latency.svg").exists()
    assert "wrote" in capsys.readouterr().out
    out = tmp_path / "figs"
    assert main(["plot", str(tmp_path / "results.csv"), "--out", str(out)]) == 0
    assert (out / "accepted.svg").exists()


def test_icsim_plot_without_results_is_an_error(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "no results file" in capsys.readouterr().err


@pytest.mark.parametrize("n_panels", [1, 4])
def test_every_panel_has_labelled_axes_and_a_legend(tmp_path, n_panels):
    from icsim.experiments.pipeline import plots

    patterns = ["uniform", "transpose", "butterfly", "bitreverse"][:n_panels]
    rows = [r for p in patterns for r in window_curve("dor", p)]
    captured = {}
    original = plots._save

    def spy(fig, out_dir, stem, formats):
        captured[stem] = [ax for ax in fig.axes if ax.get_visible()]
        return original(fig, out_dir, stem, formats)

    plots._save = spy
    try:
        plot_results(rows, tmp_path, formats=("png",))
    finally:
        plots._save = original
    for stem, axes in captured.items():
        assert len(axes) == n_panels, stem
        for ax in axes:
            assert "Offered load" in ax.get_xlabel()
            assert ax.get_ylabel() and ax.get_legend() is not None
        assert all("(" in ax.get_ylabel() for ax in axes)          # units
