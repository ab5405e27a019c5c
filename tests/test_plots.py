"""Figures: drawn from the CSV alone; every run drawn, saturated ones distinctly; γ* and its
rule marked; lines only between grid neighbours; axes fitted to the data; nothing clipped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icsim.experiments.cli import main
from icsim.experiments.pipeline import plots
from icsim.experiments.pipeline.confidence import mean_ci
from icsim.experiments.pipeline.outputs import render_figure
from icsim.experiments.pipeline.lines import curve_lines, grid_step, latency_series
from icsim.experiments.pipeline.plots import accepted_figure, latency_figure, plot_results


def row(load, *, algorithm="dor", pattern="uniform", saturated=False, latency=1000.0,
        mode="window", role="grid", error=None, outflank=0.0, seed=1, dims="[4, 4, 4]",
        accepted=None):
    cfg = f"{algorithm}-{pattern}-{mode}"
    return {"curve": cfg, "role": role, "config_hash": f"{cfg}-{load}", "seed": seed,
            "curve_hash": f"{cfg}-{seed}", "offered_load": load,
            "status": "error" if error else "ok",
            "error": error, "mode": mode, "saturated": saturated,
            "saturation_reason": "throughput" if saturated else None,
            "accepted_load": min(load, 0.4) if accepted is None else accepted,
            "latency_ns": latency,
            "derouted.outflank": outflank, "derouted.wraparound": 0.0,
            "derouted.total": outflank, "config.routing.algorithm": algorithm,
            "config.traffic.pattern": pattern, "config.traffic.load": load,
            "config.run.mode": mode, "config.topology.dims": dims,
            "config.topology.kind": "torus", "config.seed": seed}


def window_curve(algorithm="dor", pattern="uniform", saturated=(0.5, 0.7, 0.8), **kw):
    return [row(x, algorithm=algorithm, pattern=pattern, saturated=x in saturated,
                latency=1000 * (1 + x), **kw) for x in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)]


def artist(fig, gid):
    """The one artist of the figure with this gid (what _draw_values tags)."""
    found = [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, (gid, len(found))
    return found[0]


def xy(fig, gid):
    line = artist(fig, gid)
    return list(np.round(line.get_xdata(), 6)), list(np.round(line.get_ydata(), 6))


def gids(fig, prefix):
    return sorted(a.get_gid() for ax in fig.axes for a in ax.get_children()
                  if (a.get_gid() or "").startswith(prefix))


# ---------------------------------------------------------------------------------- what is drawn
def test_every_run_is_drawn_saturated_ones_hollow_beside_the_sustained_ones():
    fig = latency_figure(window_curve())           # 0.6 is sustained above saturated 0.5
    x, y = xy(fig, "sustained:dor")
    assert x == [0.1, 0.2, 0.3, 0.4, 0.6] and y == [1.1, 1.2, 1.3, 1.4, 1.6]      # µs
    x, y = xy(fig, "saturated:dor")
    assert x == [0.5, 0.7, 0.8] and y == [1.5, 1.7, 1.8]
    assert artist(fig, "saturated:dor").get_markerfacecolor() == "white"
    assert artist(fig, "sustained:dor").get_markerfacecolor() != "white"
    assert artist(fig, "gamma_star:dor").get_xdata()[0] == pytest.approx(0.4)
    [ax] = [a for a in fig.axes if a.get_visible()]
    assert "γ* = 0.40" in ax.get_legend().get_texts()[0].get_text()


def test_curves_made_on_different_engines_are_labelled_by_what_differs_not_by_the_engine():
    rows = ([{**r, "config.run.engine": "auto"} for r in window_curve("abr")]
            + [{**r, "config.run.engine": "compiled"} for r in window_curve("ofr")])
    assert [line.label for line in curve_lines(rows)] == ["abr", "ofr"]


def test_latency_series_is_every_load_run_with_its_verdict():
    [(label, loads, lat, sustained)] = latency_series(window_curve())[""]
    assert label == "dor" and list(loads) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    assert np.allclose(lat, [1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8])
    assert list(sustained) == [True] * 4 + [False, True, False, False]


def test_failed_runs_without_a_latency_are_marked_on_the_top_edge():
    rows = window_curve(saturated=())
    rows[2] = row(0.3, error="DeadlockError: stuck", latency=None, saturated=True)
    fig = latency_figure(rows)
    assert xy(fig, "failed:dor")[0] == [0.3]
    assert 0.3 not in xy(fig, "sustained:dor")[0] + xy(fig, "saturated:dor")[0]
    segments = [list(np.round(a.get_xdata(), 2)) for a in fig.axes[0].get_lines()
                if a.get_gid() == "segment:dor"]
    assert sorted(segments) == [[0.1, 0.2], [0.4, 0.5, 0.6, 0.7, 0.8]]   # no line across 0.3
    [line] = curve_lines(rows)
    assert line.gamma_star == 0.2


def test_finite_mode_marks_the_1_2_threshold_and_gamma_star():
    lat = {0.1: 1000, 0.2: 1100, 0.3: 1250, 0.4: 1300}
    rows = [row(x, mode="finite", latency=v) for x, v in lat.items()]
    [line] = curve_lines(rows)
    assert line.gamma_star == 0.2 and list(line.sustained) == [True, True, False, False]
    fig = latency_figure(rows)
    assert artist(fig, "threshold:dor").get_ydata()[0] == pytest.approx(1.2)       # µs
    assert artist(fig, "gamma_star:dor").get_xdata()[0] == pytest.approx(0.2)
    assert any("1.2 × the latency at γ = 0.10" in t.get_text() for t in fig.texts)


def test_a_bisection_curve_joins_only_grid_neighbours():
    # grid step 0.05: 0.10 (baseline), then bisection 0.55, 0.35, 0.45, 0.50
    lat = {0.10: 1000, 0.35: 1010, 0.45: 1020, 0.50: 1100, 0.55: 1500}
    rows = [row(x, mode="finite", latency=v) for x, v in lat.items()]
    fig = latency_figure(rows)
    assert grid_step(curve_lines(rows)) == pytest.approx(0.05)
    segments = [a for ax in fig.axes for a in ax.get_lines() if a.get_gid() == "segment:dor"]
    # 0.10 and 0.35 alone; 0.55 saturated: no line into it
    assert sorted(list(np.round(s.get_xdata(), 2)) for s in segments) == [[0.45, 0.5]]
    assert xy(fig, "sustained:dor")[0] == [0.1, 0.35, 0.45, 0.5]


def test_latency_axes_fit_the_data_and_go_logarithmic_for_a_saturation_knee():
    flat = window_curve(saturated=())                       # 1.1 .. 1.8 µs
    fig = latency_figure(flat)
    [ax] = [a for a in fig.axes if a.get_visible()]
    lo, hi = ax.get_ylim()
    assert ax.get_yscale() == "linear" and 1.0 < lo < 1.1 and 1.8 < hi < 1.95
    knee = [row(x, latency=v, saturated=x > 0.3)
            for x, v in ((0.1, 1000), (0.2, 1050), (0.3, 1200), (0.4, 9000), (0.5, 60000))]
    ax = latency_figure(knee).axes[0]
    assert ax.get_yscale() == "log" and "log scale" in ax.get_ylabel()
    lo, hi = ax.get_ylim()
    assert 0.5 < lo < 1.0 and 60 < hi < 100


def test_an_all_saturated_curve_still_shows_its_runs():
    rows = [row(x, saturated=True, latency=50_000 * (1 + x)) for x in (0.6, 0.7, 0.8)]
    fig = latency_figure(rows)
    assert xy(fig, "saturated:dor") == ([0.6, 0.7, 0.8], [80.0, 85.0, 90.0])
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert 70 < lo < 80 and 90 < hi < 100                   # not an empty 0-0.05 axis
    # DOR on 4x4x4 under uniform traffic: its exact bound (icsim analyze) beside γ*
    assert ax.get_legend().get_texts()[0].get_text() == \
        "dor: no sustained load, exact bound 0.656"
    assert gids(fig, "gamma_star") == []


def test_a_curve_that_never_saturates_reports_gamma_star_as_a_lower_bound():
    fig = latency_figure(window_curve(saturated=()))
    assert fig.axes[0].get_legend().get_texts()[0].get_text() == \
        "dor: γ* ≥ 0.80, exact bound 0.656"


def test_accepted_figure_draws_the_diagonal_and_the_runs():
    fig = accepted_figure(window_curve())
    x, y = xy(fig, "saturated:dor")
    assert x == [0.5, 0.7, 0.8] and y == [0.4, 0.4, 0.4]
    ax = fig.axes[0]
    assert ax.get_ylim()[0] > 0.0 and ax.get_ylim()[1] < 0.9    # fitted, not from zero


# ---------------------------------------------------------------------------------- seeds
def test_several_seeds_give_means_with_confidence_intervals_and_gamma_star_per_seed():
    rows = []
    for seed, (noise, sat) in enumerate([(0, (0.5, 0.6)), (40, (0.4, 0.5, 0.6)),
                                         (80, (0.5, 0.6))], start=1):
        rows += [row(x, seed=seed, latency=1000 * (1 + x) + noise, saturated=x in sat)
                 for x in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)]
    [line] = curve_lines(rows)
    assert line.gamma_stars == {"1": 0.4, "2": 0.3, "3": 0.4}
    assert line.gamma_star == pytest.approx(1.1 / 3)
    assert list(line.points["seeds"]) == [3] * 6
    assert list(line.sustained) == [True, True, True, False, False, False]  # 0.4: seed 2 not
    mean, half, n = mean_ci([1100, 1140, 1180])
    assert line.points["latency_ns"].iloc[0] == pytest.approx(mean)
    assert line.points["latency_ns_ci"].iloc[0] == pytest.approx(half)
    fig = latency_figure(rows)
    ax = fig.axes[0]
    [bars] = [c for c in ax.collections if c.get_gid() == "ci:dor"]
    first = bars.get_segments()[0]                   # the error bar at γ = 0.10, in µs
    assert first[0, 0] == pytest.approx(0.1)
    assert first[:, 1] == pytest.approx([(mean - half) / 1000, (mean + half) / 1000])
    text = ax.get_legend().get_texts()[0].get_text()
    assert text == "dor: γ* = 0.37 [0.30–0.40] over 3 seeds, exact bound 0.656"


# ---------------------------------------------------------------------------------- layout
def _inside(fig, artists):
    fig.canvas.draw()
    box = fig.bbox
    renderer = fig.canvas.get_renderer()
    for a in artists:
        ext = a.get_window_extent(renderer)
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1, a
        assert ext.y0 >= box.y0 - 1 and ext.y1 <= box.y1 + 1, a


def test_titles_are_never_clipped_even_on_a_single_8x8_panel():
    rows = window_curve(dims="[8, 8]", mode="finite") + window_curve(
        "ofr", dims="[8, 8]", mode="finite")
    for draw in (latency_figure, accepted_figure):
        fig = draw(rows)
        _inside(fig, [fig._suptitle, *[ax.title for ax in fig.axes if ax.get_visible()]])
        assert "8x8 torus" in fig._suptitle.get_text()


@pytest.mark.slow
def test_legends_sit_outside_the_data():
    rows = [r for p in ("uniform", "transpose", "butterfly", "bitreverse")
            for a in ("abr", "ofr") for r in window_curve(a, p)]
    fig = latency_figure(rows)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in (a for a in fig.axes if a.get_visible()):
        legend = ax.get_legend().get_window_extent(renderer)
        assert legend.y1 < ax.get_window_extent(renderer).y0     # below the plotting area
    _inside(fig, [fig.legends[0]])


def test_redrawing_the_same_data_gives_the_same_files():
    rows = window_curve("abr") + window_curve("ofr", saturated=(0.7, 0.8))
    svg = render_figure(latency_figure(rows), "svg")       # PNGs: see test_sweep's rerun
    assert svg == render_figure(latency_figure(rows), "svg")
    assert b"<dc:date>" not in svg and b"Mean packet latency" in svg


# ---------------------------------------------------------------------------------- files
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


@pytest.mark.slow
def test_icsim_plot_redraws_from_the_csv_without_simulating(tmp_path, capsys):
    pd.DataFrame(window_curve()).to_csv(tmp_path / "results.csv", index=False)
    with open(tmp_path / "results.csv", "a") as f:
        f.write("dor-uniform,grid,trunc")               # an interrupted last line
    assert main(["plot", str(tmp_path), "--format", "png"]) == 0
    assert (tmp_path / "latency.png").stat().st_size > 0
    assert not (tmp_path / "latency.svg").exists()
    assert f"wrote {tmp_path / 'latency.png'}" in capsys.readouterr().out
    assert main(["plot", str(tmp_path), "--format", "png"]) == 0
    assert f"unchanged {tmp_path / 'latency.png'}" in capsys.readouterr().out
    out = tmp_path / "figs"
    assert main(["plot", str(tmp_path / "results.csv"), "--out", str(out), "--format",
                 "svg"]) == 0
    assert (out / "accepted.svg").exists() and not (out / "accepted.png").exists()


def test_icsim_plot_without_results_is_an_error(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "no results file" in capsys.readouterr().err


@pytest.mark.parametrize("n_panels", [1, 4])
def test_every_panel_has_labelled_axes_and_a_legend(n_panels):
    patterns = ["uniform", "transpose", "butterfly", "bitreverse"][:n_panels]
    rows = [r for p in patterns for r in window_curve("dor", p)]
    for stem, draw in plots.FIGURES.items():
        axes = [ax for ax in draw(rows).axes if ax.get_visible()]
        assert len(axes) == n_panels, stem
        for ax in axes:
            assert "Offered load" in ax.get_xlabel()
            assert ax.get_ylabel() and ax.get_legend() is not None
            assert "(" in ax.get_ylabel()                           # units


def test_the_derouting_figure_draws_the_kinds_the_algorithms_declare_in_their_styles():
    """Deroute kinds are the algorithms' own words: a sweep of algorithms that declare none
    (DOR) draws no derouting figure; OFR's kinds get the styles OFR declares, a kind no
    registered algorithm declares (a plug-in's) a spare one."""
    dor = pd.DataFrame([{k: v for k, v in r.items() if k not in ("derouted.outflank",
                                                                  "derouted.wraparound")}
                        for r in window_curve("dor")])
    assert plots.derouted_figure(dor) is None
    styles = plots.deroute_styles(["derouted.total", "derouted.outflank",
                                   "derouted.wraparound", "derouted.hand_made"])
    assert styles == {"derouted.total": ("-", "total"), "derouted.hand_made": ("-.", "hand_made"),
                      "derouted.outflank": ("--", "outflank"),
                      "derouted.wraparound": (":", "wraparound")}
    ofr = pd.DataFrame(window_curve("ofr", outflank=0.1))
    fig = plots.derouted_figure(ofr)
    labels = [line.get_label() for ax in fig.axes for line in ax.get_lines()]
    # every packet derouted is an outflank one here: the two lines coincide, and say so
    assert "ofr outflank (= ofr total)" in labels and "ofr total" in labels


def test_a_title_over_curves_of_different_seed_counts_does_not_give_one_count():
    from icsim.experiments.pipeline.figure_layout import describe
    rows = [{"curve": "dor", "seed": s, "offered_load": 0.1} for s in (1, 2, 3)]
    same = describe(pd.DataFrame(rows + [{**r, "curve": "abr"} for r in rows]))
    assert "3 seeds (1–3), mean ± 95 % CI" in same
    mixed = describe(pd.DataFrame(rows + [{"curve": "abr", "seed": 1, "offered_load": 0.1}]))
    assert "3 seeds" not in mixed and "not the same for every curve" in mixed


# ---------------------------------------------------------------------------------- reading
def test_no_line_runs_into_a_saturated_run():
    """A saturated run's mean latency covers only what it delivered (8x8 transpose under DOR:
    28 µs at 0.30, 13 µs at 0.35): a line into it would show a curve that falls.  Lines join
    sustained grid neighbours only, in both styles."""
    rows = window_curve(saturated=(0.5, 0.7, 0.8))          # 0.6 sustained between them
    for style in ("default", "paper"):
        fig = latency_figure(rows, style=style)
        segments = sorted(list(np.round(a.get_xdata(), 2)) for ax in fig.axes
                          for a in ax.get_lines() if a.get_gid() == "segment:dor")
        assert segments == [[0.1, 0.2, 0.3, 0.4]], style


def test_the_load_axis_says_what_gamma_1_is_in_packets_per_terminal_per_link_time():
    """γ = 1 is 2 packets per terminal per link time on 4x4x4 (c = 1/2), 1 on 8x8x8, 0.5 on
    16x16x16 (docs/model.md §6): read from the runs' records, or from their topology for runs
    recorded before the field."""
    for dims, default, paper in (
            ("[4, 4, 4]", "= γ × 2 packets per terminal per link time",
             "(1 = 2 packets / terminal / link time)"),
            ("[8, 8, 8]", "= packets per terminal per link time",
             "(packets / terminal / link time)"),
            ("[16, 16, 16]", "= γ × 0.5 packets per terminal per link time",
             "(1 = 0.5 packets / terminal / link time)")):
        ax = latency_figure(window_curve(dims=dims)).axes[0]
        assert ax.get_xlabel().startswith("Offered load γ (1 = the uniform bisection bound)")
        assert ax.get_xlabel().endswith(default), dims
        ax = latency_figure(window_curve(dims=dims), style="paper").axes[0]
        assert ax.get_xlabel() == "Offered load γ " + paper, dims
    recorded = [dict(r, offered_packets_per_terminal_link_time=2 * r["offered_load"],
                     **{"config.topology.dims": "[9, 9]"}) for r in window_curve()]
    assert "2 packets per terminal per link time" in latency_figure(recorded).axes[0].get_xlabel()


def test_one_latency_scale_for_every_panel_of_a_figure():
    flat = [dict(r, **{"config.traffic.pattern": "uniform"}) for r in window_curve(saturated=())]
    knee = [row(x, latency=v, saturated=x > 0.3, pattern="transpose")
            for x, v in ((0.1, 1000), (0.2, 1050), (0.3, 1200), (0.4, 9000), (0.5, 60000))]
    axes = [a for a in latency_figure(flat + knee).axes if a.get_visible()]
    assert [a.get_yscale() for a in axes] == ["log", "log"]


def test_curves_that_coincide_are_named_and_in_the_paper_style_set_apart():
    rows = window_curve("abr") + window_curve("ofr") + window_curve("dor", saturated=(0.3,))
    rows = [dict(r, latency_ns=r["latency_ns"] * (3 if r["config.routing.algorithm"] == "dor"
                                                     else 1)) for r in rows]
    for style in ("default", "paper"):
        fig = latency_figure(rows, style=style)
        texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        first = "ofr: γ* = 0.40" if style == "default" else "ofr, γ* 0.40"
        assert texts[1].startswith(first) and texts[1].endswith("(= abr)"), texts
        assert "(=" not in texts[0] + texts[2]
        abr, ofr = artist(fig, "sustained:abr"), artist(fig, "sustained:ofr")
        fig.canvas.draw()
        gap = (ofr.get_transform().transform((0.3, 1.3))
               - abr.get_transform().transform((0.3, 1.3)))[0]
        assert (gap > 2.0) if style == "paper" else (gap == 0.0), (style, gap)


def test_the_paper_style_has_no_title_a_column_width_and_small_fonts(tmp_path):
    rows = window_curve("abr") + window_curve("ofr", saturated=(0.7, 0.8))
    one = latency_figure(rows, style="paper")
    assert one._suptitle is None and one.get_figwidth() == pytest.approx(3.5)
    two = latency_figure(rows + [dict(r, **{"config.traffic.pattern": "transpose"})
                                 for r in rows], style="paper")
    assert two.get_figwidth() == pytest.approx(7.16)
    ax = one.axes[0]
    assert ax.xaxis.label.get_fontsize() == 8.0
    colours = {artist(one, f"sustained:{a}").get_color() for a in ("abr", "ofr")}
    assert colours == {"#000000", "#E69F00"}                    # Okabe and Ito, black first
    markers = {artist(one, f"sustained:{a}").get_marker() for a in ("abr", "ofr")}
    assert len(markers) == 2
    files = plot_results(rows, tmp_path, style="paper")
    assert sorted(f.name for f in files if f.stem == "latency") == [
        "latency.pdf", "latency.png", "latency.svg"]
    pdf = (tmp_path / "latency.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf
    again = tmp_path / "again"
    plot_results(rows, again, style="paper")
    assert (again / "latency.pdf").read_bytes() == pdf            # no date: the same file
    assert b"/FontFile2" in pdf                                    # TrueType fonts embedded


def test_a_grid_of_two_steps_is_joined_throughout_and_a_bisection_is_not():
    """The dragonfly's grid (0.01 to 0.04, then 0.05 to 1.0 by 0.05) is joined from end to end;
    a bisection's far-apart runs (0.35 then 0.45 on a 0.05 grid) are not."""
    loads = [0.01, 0.02, 0.03, 0.04, 0.05, 0.1, 0.15, 0.2, 0.25]
    rows = [row(x, latency=1000 * (1 + x)) for x in loads]
    segments = [list(np.round(a.get_xdata(), 2)) for a in latency_figure(rows).axes[0].get_lines()
                if a.get_gid() == "segment:dor"]
    assert segments == [loads]
    lat = {0.10: 1000, 0.35: 1010, 0.45: 1020, 0.50: 1030, 0.55: 1040}
    rows = [row(x, mode="finite", latency=v) for x, v in lat.items()]
    segments = [list(np.round(a.get_xdata(), 2)) for a in latency_figure(rows).axes[0].get_lines()
                if a.get_gid() == "segment:dor"]
    assert segments == [[0.45, 0.5, 0.55]]


def test_curves_that_part_where_one_saturates_are_not_named_as_one():
    # two curves equal wherever both are sustained, one saturating a step earlier (a HyperX's
    # DOR at 0.3 beside minimal adaptive, sustained throughout): different γ*, no "(= ...)"
    rows = window_curve("abr", saturated=()) + window_curve("dor", saturated=(0.3,))
    for figure in (latency_figure, plots.accepted_figure):
        texts = [t.get_text() for t in figure(rows).axes[0].get_legend().get_texts()]
        assert not any("(=" in t for t in texts), texts


@pytest.mark.parametrize("still_sustained", [False, True])
def test_a_recheck_gives_its_verdict_to_the_run_it_checks_and_is_no_curve_of_its_own(
        still_sustained):
    # the bounds guard ran 0.4 again in a 10x window (config.run.measure_us differs, so the
    # recheck alone would be a curve of its own, 'measure_us=600'): saturated there, or a model
    # error if still sustained; either way 0.4 is not sustained and γ* is 0.3
    rows = window_curve(saturated=(0.5, 0.6, 0.7, 0.8))
    for r in rows:
        r["config.run.measure_us"] = 60.0
    check = dict(row(0.4, role="recheck", saturated=not still_sustained, latency=9999.0),
                 **{"config.run.measure_us": 600.0})
    lines = curve_lines(rows + [check])
    assert len(lines) == 1 and lines[0].label == "dor"
    assert lines[0].gamma_star == 0.3
    point = lines[0].points.set_index("offered_load").loc[0.4]
    assert not point["sustained"] and point["latency_ns"] == 1400.0     # the checked run's
