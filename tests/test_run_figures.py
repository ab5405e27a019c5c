"""Figures of one run: latency histogram/CDF from the fixed log bins, channel heatmaps."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from icsim.experiments.pipeline.run_figures import (channel_heatmap_figure, channel_totals,
                                                    histogram_percentile, latency_bin_edges,
                                                    latency_distribution_figure,
                                                    latency_histogram, tile_planes,
                                                    torus_arrays)

AXES = "xyz"


def dor_transpose3d_channels(k: int = 8, vcs: int = 2) -> pd.DataFrame:
    """A channel table as a run would give it, made by routing transpose3d
    (dest[d] = src[(d + 1) mod 3]) with dimension-order routing on a k x k x k torus, one
    packet per node (ties at k/2 go +); utilisation proportional to the packets."""
    load: dict[tuple[tuple[int, ...], int, int], int] = {}
    for src in itertools.product(range(k), repeat=3):
        dest = (src[1], src[2], src[0])
        here = list(src)
        for d in range(3):
            off = (dest[d] - here[d]) % k
            sign = 1 if off <= k // 2 else -1
            for _ in range(off if sign == 1 else k - off):
                load[(tuple(here), d, sign)] = load.get((tuple(here), d, sign), 0) + 1
                here[d] = (here[d] + sign) % k
    top = max(load.values())
    rows = []
    for node, coord in enumerate(itertools.product(range(k), repeat=3)):
        c = coord[::-1]                                    # first dimension lowest in the index
        for d, sign in itertools.product(range(3), (1, -1)):
            n = load.get((c, d, sign), 0)
            for vc in range(vcs):
                rows.append({"node": node, "port": 2 * d + (sign < 0),
                             "direction": f"{AXES[d]}{'+' if sign > 0 else '-'}", "dim": d,
                             "sign": sign, "vc": vc, "vc_name": f"vc{vc}",
                             "utilisation": 0.9 * n / top, "packets": n if vc == 0 else 0,
                             "mean_occupancy": 0.1 * n, "c0": c[0], "c1": c[1], "c2": c[2]})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- latency
def test_the_bins_are_fixed_log_spaced_from_10_ns_to_1_s():
    edges = latency_bin_edges()
    assert len(edges) == 161 and edges[0] == 10.0 and edges[-1] == pytest.approx(1e9)
    assert np.allclose(np.diff(np.log10(edges)), 0.05)


def test_latencies_outside_the_range_are_clamped_into_the_end_bins():
    h = latency_histogram([1.0, 9.99, 10.0, 12.0, 999.0, 5e8, 3e9, 1e12, np.nan])
    counts = np.array(h["counts"])
    edges = np.array(h["edges_ns"])
    assert len(counts) == len(edges) - 1 and counts.sum() == 8
    assert counts[0] == 3                                  # 1 and 9.99 clamped, 10
    assert counts[1] == 1 and edges[1] < 12.0 < edges[2]   # 10^1.05 = 11.2 ns
    assert counts[39] == 1 and edges[39] < 999.0 < edges[40]
    assert counts[153] == 1 and counts[-1] == 2            # 5e8; 3e9 and 1e12 clamped


def test_percentiles_from_the_histogram_are_within_one_bin():
    rng = np.random.default_rng(3)
    lat = rng.lognormal(np.log(5000.0), 0.6, 20_000)
    h = latency_histogram(lat)
    for q in (50, 90, 99):
        exact = np.percentile(lat, q)
        assert abs(np.log10(histogram_percentile(h, q) / exact)) < 0.05, q
    assert histogram_percentile({"edges_ns": [1, 2, 3], "counts": [0, 0]}, 50) is None
    with pytest.raises(ValueError, match="one count per bin"):
        histogram_percentile({"edges_ns": [1, 2, 3], "counts": [1, 2, 3]}, 50)


def test_the_distribution_figure_draws_each_run_and_its_percentiles():
    rng = np.random.default_rng(1)
    fast = latency_histogram(rng.lognormal(np.log(2000.0), 0.3, 5000))
    slow = latency_histogram(rng.lognormal(np.log(20000.0), 0.8, 5000))
    fig = latency_distribution_figure({"abr": fast, "ofr": slow})
    ax_hist, ax_cdf = fig.axes
    bars = {a.get_gid(): a for a in ax_hist.patches}
    data = bars["histogram:abr"].get_data()
    values, edges = data.values, data.edges
    assert values.sum() == pytest.approx(1.0) and np.allclose(edges, latency_bin_edges() / 1e3)
    assert ax_hist.get_xscale() == ax_cdf.get_xscale() == "log"
    lines = {a.get_gid(): a for a in ax_cdf.get_lines() if a.get_gid()}
    assert lines["cdf:ofr"].get_ydata()[-1] == pytest.approx(1.0)
    assert lines["p50:abr"].get_xdata()[0] == pytest.approx(histogram_percentile(fast, 50) / 1e3)
    assert lines["p99:ofr"].get_ydata()[0] == 0.99
    lo, hi = ax_cdf.get_xlim()                         # fitted to the bins that hold packets
    assert 0.3 < lo < 2.0 and 50 < hi < 2000
    single = latency_distribution_figure(fast)         # one run without a label
    assert single.axes[0].patches[0].get_gid() == "histogram:"


# ---------------------------------------------------------------------------------- channels
def test_channel_totals_fold_the_virtual_channels():
    df = dor_transpose3d_channels(4)
    totals = channel_totals(df)
    assert len(totals) == 64 * 6 and (totals["vcs"] == 2).all()
    assert totals["utilisation"].is_monotonic_decreasing
    one = df[(df.node == 5) & (df.port == 0)]
    row = totals[(totals.node == 5) & (totals.port == 0)].iloc[0]
    assert row["packets"] == one["packets"].sum()
    assert row["mean_occupancy"] == pytest.approx(one["mean_occupancy"].sum())


def test_the_8x8x8_transpose3d_dor_heatmap_shows_its_hot_channels():
    df = dor_transpose3d_channels(8)
    arrays = torus_arrays(df)
    assert set(arrays) == {(d, s) for d in range(3) for s in (1, -1)}
    totals = channel_totals(df)
    for r in totals.sample(50, random_state=0).itertuples():     # every channel in place
        assert arrays[(r.dim, r.sign)][r.c2, r.c1, r.c0] == r.utilisation
    # DOR routes x first: the 8 packets of an x ring meet at node x = y and then all travel
    # the same y path (8 packets per channel), while the x funnels and the z fan-outs carry
    # at most 4: the hot channels are y channels, on the planes where c1 is between c0 and c2
    hottest = max(np.nanmax(a) for a in arrays.values())
    assert hottest == pytest.approx(0.9)
    assert np.nanmax(arrays[(1, 1)]) == np.nanmax(arrays[(1, -1)]) == hottest
    for d in (0, 2):
        assert np.nanmax(arrays[(d, 1)]) == pytest.approx(0.45)
    z, y, x = np.nonzero(arrays[(1, 1)] == hottest)
    assert np.all((y - x) % 8 < (z - x) % 8) and np.all((z - x) % 8 <= 4)

    fig = channel_heatmap_figure(df)
    images = {im.get_gid(): im for ax in fig.axes for im in ax.get_images()}
    assert set(images) == {f"heatmap:{a}{s}" for a in AXES for s in "+-"}
    shown = np.ma.filled(images["heatmap:y+"].get_array(), np.nan)
    assert shown.shape == (8, 8 * 8 + 7)                   # the 8 (c0, c1) planes, 1-pixel gaps
    assert np.array_equal(shown[:, 9:17], arrays[(1, 1)][1], equal_nan=True)    # c2 = 1
    assert np.isnan(shown[:, 8]).all()
    assert all(im.norm.vmin == 0 and im.norm.vmax == pytest.approx(0.9)
               for im in images.values())                 # one colour scale for all panels
    fig.canvas.draw()
    title = fig._suptitle.get_window_extent(fig.canvas.get_renderer())
    assert title.x0 >= 0 and title.x1 <= fig.bbox.x1               # not clipped
    busiest = fig._suptitle.get_text().split("\n", 1)[1].replace("\n", " ")
    assert busiest.startswith("busiest: node ") and busiest.count(" 0.9") == 5
    assert all(part.split()[-2] in ("y+", "y-") for part in busiest.split("; "))


def test_big_tori_fold_their_planes():
    a = np.arange(2 * 3 * 4 * 5, dtype=float).reshape(2, 3, 4, 5)     # a[c3, c2, c1, c0]
    tiled = tile_planes(a)
    assert tiled.shape == (2 * 4 + 1, 3 * 5 + 2)
    assert np.array_equal(tiled[5:9, 6:11], a[1, 1])                # c3 = 1 up, c2 = 1 across
    assert np.array_equal(tile_planes(a, "max"), a[1, 2])
    assert np.array_equal(tile_planes(a[0, 0]), a[0, 0])


def test_a_graph_gets_a_ranked_bar_chart():
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({"node": np.repeat(np.arange(n), 3), "port": np.tile([0, 1, 2], n),
                       "direction": [f"p{p}" for p in np.tile([0, 1, 2], n)], "dim": -1,
                       "sign": 0, "vc": 0, "vc_name": "vc0",
                       "utilisation": rng.random(3 * n), "packets": 1,
                       "mean_occupancy": 0.1})
    fig = channel_heatmap_figure(df, top=10)
    ax_all, ax_top = fig.axes
    ranked = [a for a in ax_all.get_lines() if a.get_gid() == "ranked"][0].get_ydata()
    assert len(ranked) == 3 * n and np.all(np.diff(ranked) <= 0)
    bars = [p.get_width() for p in ax_top.patches]
    assert bars == pytest.approx(sorted(df["utilisation"], reverse=True)[:10])
    best = df.loc[df["utilisation"].idxmax()]
    assert ax_top.get_yticklabels()[0].get_text() == f"{best.node}:{best.direction}"
