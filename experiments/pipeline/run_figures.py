"""Figures of one run: its latency distribution and the load on its channels.

Both take the data a run reports and return a matplotlib Figure (Agg canvas, nothing touches
pyplot's global state); write them with :class:`icsim.experiments.pipeline.outputs.Outputs`
(``outputs.figure(fig, path)``) or ``fig.savefig``.

Latency distribution
    A run's ``latency_histogram`` is ``{"edges_ns": [...], "counts": [...]}`` over fixed
    log-spaced bins, :func:`latency_bin_edges`: 10 ns to 1 s, 20 bins per decade (so that two
    runs, or two engines, always share their bins); ``counts`` has one entry less than
    ``edges_ns``, and latencies below the first or above the last edge are counted in the
    first or last bin.  :func:`latency_distribution_figure` draws one or several such
    histograms (fraction of packets per bin) beside their cumulative distribution, with the
    median and the 99th percentile read off the histogram (:func:`histogram_percentile`).
Channel load
    A run's channel table has one row per channel and virtual channel: ``node``, ``port``,
    ``direction`` ("x+", "y-"; "p3" on graphs), ``dim`` and ``sign`` (-1 and 0 on graphs),
    ``vc``, ``vc_name``, ``utilisation`` (the fraction of the measurement window the channel
    was busy, repeated on each of its VC rows), ``packets`` (crossing on this VC),
    ``mean_occupancy`` (packets in this VC's queue on average) and on tori the node's
    coordinates ``c0, c1, ...``.  :func:`channel_heatmap_figure` lays a torus's channels out on
    its coordinates, one panel per dimension and direction, each an image of the (x, y) planes
    side by side, the axes named by coordinate as the ports are (every channel drawn; on big
    tori the planes folded by their maximum, so that a hot channel anywhere shows);
    a dragonfly's become a (from group, to group) matrix of its global channels beside its
    groups' local ones, a fat tree's an image of each level's switches (up and down); a
    graph's (and a HyperX's) channels become a ranked bar chart.  :func:`channel_totals` is
    the per-channel table they draw from.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Mapping

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.figure_layout import wrap_to_width
from icsim.experiments.pipeline.figure_style import DEFAULT, FigureStyle, drawing, style_of

#: the fixed latency bins: 10 ns .. 1 s, 20 per decade
FIRST_DECADE, LAST_DECADE, BINS_PER_DECADE = 1.0, 9.0, 20
VALUES = {"utilisation": "Utilisation (fraction of the window busy)",
          "packets": "Packets that crossed the channel",
          "mean_occupancy": "Mean queue occupancy (packets, all VCs)"}


# ---------------------------------------------------------------------------------- latency
def latency_bin_edges() -> np.ndarray:
    """The edges of the latency histogram bins in ns: ``10 ** arange(1, 9 + 1e-9, 0.05)``.

    >>> e = latency_bin_edges(); len(e), float(e[0]), round(float(e[20]), 9), round(float(e[-1]))
    (161, 10.0, 100.0, 1000000000)
    """
    return 10 ** np.arange(FIRST_DECADE, LAST_DECADE + 1e-9, 1.0 / BINS_PER_DECADE)


def latency_histogram(latencies_ns: Any) -> dict[str, list]:
    """Count latencies (ns) into :func:`latency_bin_edges` bins, clamping values outside the
    range into the first or last bin.

    >>> h = latency_histogram([5.0, 10.0, 150.0, 2e9])
    >>> sum(h["counts"]), h["counts"][0], h["counts"][23], h["counts"][-1]
    (4, 2, 1, 1)
    """
    edges = latency_bin_edges()
    x = np.asarray(latencies_ns, dtype=float)
    x = x[np.isfinite(x)]
    index = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    counts = np.bincount(index, minlength=len(edges) - 1)
    return {"edges_ns": edges.tolist(), "counts": counts.astype(int).tolist()}


def _check_histogram(hist: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    try:
        edges = np.asarray(hist["edges_ns"], dtype=float)
        counts = np.asarray(hist["counts"], dtype=float)
    except (KeyError, TypeError) as exc:
        raise ValueError("a latency histogram is {'edges_ns': [...], 'counts': [...]}") \
            from exc
    if len(counts) != len(edges) - 1 or len(counts) == 0:
        raise ValueError(f"latency histogram: {len(counts)} counts for {len(edges)} edges "
                         f"(expected one count per bin, len(edges) - 1)")
    if np.any(np.diff(edges) <= 0) or edges[0] <= 0:
        raise ValueError("latency histogram: edges must be positive and increasing")
    if np.any(counts < 0):
        raise ValueError("latency histogram: negative counts")
    return edges, counts


def histogram_percentile(hist: Mapping[str, Any], q: float) -> float | None:
    """The ``q``-th percentile (0-100) read off a histogram, interpolating log-linearly
    within its bin (exact to within one bin, 12 % at 20 bins per decade); ``None`` if empty.

    >>> h = latency_histogram([1000.0] * 100)      # all in the bin [891, 1000) ns
    >>> 891.0 < histogram_percentile(h, 50) < 1000.0
    True
    """
    edges, counts = _check_histogram(hist)
    total = counts.sum()
    if total <= 0:
        return None
    target = q / 100.0 * total
    cum = np.cumsum(counts)
    i = int(np.searchsorted(cum, target, side="left"))
    i = min(i, len(counts) - 1)
    below = cum[i] - counts[i]
    frac = 0.0 if counts[i] == 0 else (target - below) / counts[i]
    lo, hi = math.log10(edges[i]), math.log10(edges[i + 1])
    return float(10 ** (lo + frac * (hi - lo)))


def _agg_canvas(figsize: tuple[float, float], style: FigureStyle = DEFAULT):
    """A figure of this size (the paper style: scaled to two columns' width)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if style.panel_size is None:
        wide = style.column_widths[1]
        figsize = (wide, figsize[1] * wide / figsize[0] * 1.15)
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _suptitle(fig, text: str, style: FigureStyle, given: str | None = None, **kw) -> None:
    """The figure's title: the paper style keeps only one the caller gave."""
    if style.titles or given:
        fig.suptitle(given if not style.titles else text, **kw)


def run_label(record: Mapping[str, Any]) -> str:
    """What ran, for a figure's title: ``torus 8x8x8, ofr, uniform at γ 0.30`` (the topology
    as the record names it, the algorithm, the pattern or workload, the load).

    >>> run_label({"topology": "mesh 4x4", "offered_load": 0.3, "workload": "open",
    ...            "config": {"routing": {"algorithm": "dor"}, "traffic": {"pattern": "uniform"}}})
    'mesh 4x4, dor, uniform at γ 0.30'
    """
    cfg = record.get("config", {})
    traffic = cfg.get("traffic", {})
    what = (f"{traffic.get('pattern')} at γ {record.get('offered_load', 0):.2f}"
            if record.get("workload", "open") == "open"
            else traffic.get("collective") or traffic.get("trace") or record.get("workload"))
    topo = record.get("topology") or "x".join(map(str, cfg.get("topology", {}).get("dims", [])))
    return f"{topo}, {cfg.get('routing', {}).get('algorithm')}, {what}"


def latency_distribution_figure(histograms: Mapping[str, Any], title: str | None = None,
                                style: str | None = None):
    """Histogram and cumulative distribution of packet latency, for one run or several.

    Parameters
    ----------
    histograms : mapping
        One run's ``latency_histogram`` (``{"edges_ns", "counts"}``), or several as
        ``{label: histogram}`` (e.g. one per routing algorithm) drawn on the same axes.
    title : str, optional
        The figure title (default: "Packet latency distribution"; the paper style has none
        unless given).
    style : {"default", "paper"}, optional
        How it looks (:mod:`.figure_style`).

    Returns
    -------
    matplotlib.figure.Figure
        Left: fraction of the measured packets per bin (log latency axis); right: the
        cumulative fraction, with each run's median and 99th percentile marked.
    """
    if "edges_ns" in histograms:
        histograms = {"": histograms}
    checked = {label: _check_histogram(h) for label, h in histograms.items()}
    st = style_of(style)
    with drawing(st):
        return _distribution(checked, title, st)


def _distribution(checked, title, st):
    fig = _agg_canvas((11.0, 4.4), st)
    ax_hist, ax_cdf = fig.subplots(1, 2)
    lo_used, hi_used = math.inf, 0.0
    for i, (label, (edges, counts)) in enumerate(checked.items()):
        color = st.color(i)
        total = counts.sum()
        frac = counts / total if total else counts
        name = label or "packets"
        ax_hist.stairs(frac, edges / 1000.0, color=color, lw=1.4, ls=st.dash(i),
                       label=f"{name} ({int(total)})", gid=f"histogram:{label}")
        cdf = np.concatenate([[0.0], np.cumsum(frac)])
        ax_cdf.step(edges / 1000.0, cdf, where="post", color=color, lw=1.4, ls=st.dash(i),
                    label=name, gid=f"cdf:{label}")
        used = np.flatnonzero(counts)
        if len(used):
            lo_used = min(lo_used, edges[used[0]])
            hi_used = max(hi_used, edges[used[-1] + 1])
        for q, marker in ((50, "o"), (99, "^")):
            p = histogram_percentile({"edges_ns": edges, "counts": counts}, q)
            if p is not None:
                ax_cdf.plot([p / 1000.0], [q / 100.0], marker, color=color, ms=6,
                            gid=f"p{q}:{label}")
    from matplotlib.ticker import FuncFormatter

    for ax in (ax_hist, ax_cdf):
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("Packet latency (µs, log scale; 20 bins per decade)")
        ax.grid(alpha=0.3)
        if hi_used > 0:
            ax.set_xlim(lo_used / 1000.0 / 1.5, hi_used / 1000.0 * 1.5)
    ax_hist.set_ylabel("Fraction of measured packets per bin")
    ax_hist.set_ylim(bottom=0)
    ax_cdf.set_ylabel("Cumulative fraction of measured packets")
    ax_cdf.set_ylim(0, 1.02)
    ax_cdf.plot([], [], "o", color="0.3", label="median")
    ax_cdf.plot([], [], "^", color="0.3", label="99th percentile")
    for ax in (ax_hist, ax_cdf):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize="small",
                  frameon=False, ncols=min(3, len(ax.get_legend_handles_labels()[1])))
    _suptitle(fig, title or "Packet latency distribution", st, title)
    return fig


# ---------------------------------------------------------------------------------- channels
def channel_totals(channels: pd.DataFrame) -> pd.DataFrame:
    """One row per channel from the per-VC table: ``utilisation`` (the channel's, equal on its
    VC rows), ``packets`` and ``mean_occupancy`` summed over its VCs, the other columns of its
    first VC row; sorted by utilisation, busiest first."""
    need = {"node", "port", "utilisation", "packets", "mean_occupancy"}
    missing = need - set(channels.columns)
    if missing:
        raise ValueError(f"channel table: missing column(s) {', '.join(sorted(missing))}")
    keep = [c for c in channels.columns if c not in
            ("vc", "vc_name", "utilisation", "packets", "mean_occupancy")]
    g = channels.groupby(["node", "port"], sort=True)
    out = g[keep].first().drop(columns=["node", "port"], errors="ignore")
    out["utilisation"] = g["utilisation"].max()
    out["packets"] = g["packets"].sum()
    out["mean_occupancy"] = g["mean_occupancy"].sum()
    out["vcs"] = g.size()
    return out.reset_index().sort_values(["utilisation", "node", "port"],
                                         ascending=[False, True, True], kind="stable") \
        .reset_index(drop=True)


def _is_torus(totals: pd.DataFrame) -> bool:
    return "c0" in totals and "dim" in totals and bool((totals["dim"] >= 0).all())


def _coords(totals: pd.DataFrame) -> list[str]:
    return sorted((c for c in totals.columns if c[:1] == "c" and c[1:].isdigit()),
                  key=lambda c: int(c[1:]))


def torus_arrays(channels: pd.DataFrame, value: str = "utilisation"
                 ) -> dict[tuple[int, int], np.ndarray]:
    """The torus's channels as arrays: ``(dim, sign) -> array`` indexed by the coordinates of
    the node a channel leaves, last coordinate first (``a[c2, c1, c0]`` on a 3D torus, so that
    the last two axes are an image's rows and columns), holding ``value``; NaN where no such
    channel exists (a mesh edge, a failed link)."""
    totals = channel_totals(channels)
    if value not in totals:
        raise ValueError(f"no column {value!r} in the channel table")
    coords = _coords(totals)
    shape = tuple(int(totals[c].max()) + 1 for c in reversed(coords))
    out = {}
    for (dim, sign), g in totals.groupby(["dim", "sign"], sort=True):
        a = np.full(shape, np.nan)
        index = tuple(g[c].to_numpy(int) for c in reversed(coords))
        a[index] = g[value].to_numpy(float)
        out[(int(dim), int(sign))] = a
    return out


def tile_planes(a: np.ndarray, agg: str | None = None, gap: int = 1) -> np.ndarray:
    """One image of an n-dimensional array ``a[..., c1, c0]``: its (c0, c1) planes side by side
    (c2 left to right, c3 and further top to bottom as rows of tiles), ``gap`` NaN pixels
    between them; with ``agg`` (``max``, ``mean``, ``sum``) the planes are folded into one
    instead."""
    if a.ndim == 1:
        return a[None, :]
    if a.ndim == 2:
        return a
    if agg is not None:
        fold = {"max": np.nanmax, "mean": np.nanmean, "sum": np.nansum}[agg]
        with np.errstate(all="ignore"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return fold(a, axis=tuple(range(a.ndim - 2)))
    ny, nx = a.shape[-2:]
    across = a.shape[-3]                                   # c2
    down = int(np.prod(a.shape[:-3])) if a.ndim > 3 else 1  # c3, c4, ...
    planes = a.reshape(down, across, ny, nx)
    out = np.full((down * (ny + gap) - gap, across * (nx + gap) - gap), np.nan)
    for r in range(down):
        for c in range(across):
            y0, x0 = r * (ny + gap), c * (nx + gap)
            out[y0:y0 + ny, x0:x0 + nx] = planes[r, c]
    return out


#: more (c0, c1) planes than this per direction are folded (maximum) instead of tiled
MAX_TILES = 16


def channel_heatmap_figure(channels: pd.DataFrame, value: str = "utilisation",
                           agg: str | None = "max", top: int = 30, title: str | None = None,
                           label: str | None = None, style: str | None = None):
    """The load on a run's channels: on a torus laid out on its coordinates, on a graph ranked.

    Parameters
    ----------
    channels : DataFrame
        The run's channel table (module docstring), one row per channel and VC.
    value : {"utilisation", "packets", "mean_occupancy"}
        What to colour (torus) or rank (graph) the channels by.
    agg : {"max", "mean", "sum"} or None
        Torus with more than two dimensions: every (c0, c1) plane is drawn, side by side,
        while there are at most :data:`MAX_TILES` per direction (every channel visible);
        beyond that, or with ``"mean"``/``"sum"``, the planes are folded into one by ``agg``
        (``max``: a pixel is as hot as its hottest channel).
    top : int
        Graph: how many of the busiest channels get a labelled bar.
    title : str, optional
        The figure title.
    label : str, optional
        What ran (:func:`run_label`), named in the default title.
    style : {"default", "paper"}, optional
        How it looks (:mod:`.figure_style`; the paper style: no title unless given).

    Returns
    -------
    matplotlib.figure.Figure
        Torus: one panel per dimension and direction, a shared colour scale from 0, the five
        busiest channels listed under the title.  Graph: the ranked values of
        every channel, and bars for the ``top`` busiest, labelled ``node:port``.
    """
    totals = channel_totals(channels)
    if value not in totals:
        raise ValueError(f"no column {value!r} in the channel table")
    st = style_of(style)
    with drawing(st):
        if _is_torus(totals):
            return _torus_heatmap(totals, channels, value, agg, title, label, st)
        if "to_group" in totals:
            return _group_heatmap(totals, value, title, label, st)
        if "level" in totals:
            return _level_heatmap(totals, value, title, label, st)
        return _ranked_channels(totals, value, top, title, label, st)


def _image_panel(fig, ax, image, value, xlabel, ylabel, gid):
    import matplotlib

    cmap = matplotlib.colormaps["magma_r"].with_extremes(bad="0.85")
    shown = ax.imshow(np.ma.masked_invalid(image), origin="lower", cmap=cmap, vmin=0.0,
                      vmax=float(np.nanmax(image)) if np.isfinite(image).any() else 1.0,
                      interpolation="nearest", aspect="auto")
    shown.set_gid(gid)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    fig.colorbar(shown, ax=ax, shrink=0.85).set_label(VALUES.get(value, value), fontsize=8)


def _group_heatmap(totals, value, title, label=None, st: FigureStyle = DEFAULT):
    """A dragonfly's channels: the global ones as a (from group, to group) matrix (the
    busiest link of the pair; grey: no link), the local ones per group (busiest and mean)."""
    g = int(max(totals["group"].max(), totals["to_group"].max())) + 1
    glob = totals[totals["link_class"] == "global"]
    matrix = np.full((g, g), np.nan)
    pairs = glob.groupby(["group", "to_group"])[value].max()
    for (i, j), v in pairs.items():
        matrix[int(i), int(j)] = v
    local = totals[totals["link_class"] == "local"].groupby("group")[value]
    fig = _agg_canvas((12.0, 5.2), st)
    ax_g, ax_l = fig.subplots(1, 2, width_ratios=(1.15, 1))
    _image_panel(fig, ax_g, matrix, value, "to group", "from group", "heatmap:global")
    ax_g.set_title("global channels, by group pair", fontsize=10, loc="left")
    groups = np.arange(g)
    ax_l.plot(groups, local.max().reindex(groups).to_numpy(float), "o-", ms=3, label="busiest",
              gid="local:max")
    ax_l.plot(groups, local.mean().reindex(groups).to_numpy(float), "s--", ms=3, label="mean",
              gid="local:mean")
    ax_l.set_xlabel("group", fontsize=9)
    ax_l.set_ylabel(VALUES.get(value, value), fontsize=9)
    ax_l.set_ylim(bottom=0)
    ax_l.grid(alpha=0.3)
    ax_l.legend(fontsize="small")
    ax_l.set_title("local channels of each group", fontsize=10, loc="left")
    text = title or (f"Channel {value}" + (f": {label}" if label else " on the dragonfly"))
    _suptitle(fig, text + "\n" + _busiest_text(totals, value), st, title, fontsize=10)
    return fig


def _level_heatmap(totals, value, title, label=None, st: FigureStyle = DEFAULT):
    """A fat tree's channels: per level (rows) and switch (columns), the busiest up channel
    and the busiest down channel of each switch (grey: none)."""
    levels = int(totals["level"].max()) + 1
    width = int(totals.groupby("level")["node"].nunique().max())
    fig = _agg_canvas((12.0, 2.2 + 0.9 * levels), st)
    axes = fig.subplots(1, 2)
    for ax, cls in zip(axes, ("up", "down")):
        part = totals[totals["link_class"] == cls]
        image = np.full((levels, width), np.nan)
        for (lv, node), v in part.groupby(["level", "node"])[value].max().items():
            first = int(totals.loc[totals["level"] == lv, "node"].min())
            image[int(lv), int(node) - first] = v
        _image_panel(fig, ax, image, value, "switch within its level", "level (0: leaves)",
                     f"heatmap:{cls}")
        ax.set_yticks(range(levels))
        ax.set_title(f"{cls} channels: each switch's busiest", fontsize=10, loc="left")
    text = title or (f"Channel {value}" + (f": {label}" if label else " on the fat tree"))
    _suptitle(fig, text + "\n" + _busiest_text(totals, value), st, title, fontsize=10)
    return fig


def axis_names(totals: pd.DataFrame) -> dict[str, str]:
    """Each coordinate column's name as the ports name its dimension: ``c0`` is ``x``, ``c1``
    ``y``, ``c2`` ``z`` (a 4D torus's fourth ``w``)."""
    names = {}
    for d, direction in totals.drop_duplicates("dim")[["dim", "direction"]].itertuples(
            index=False):
        if d >= 0:
            names[f"c{int(d)}"] = str(direction).rstrip("+-")
    return {c: names.get(c, c) for c in _coords(totals)}


def _busiest_text(totals: pd.DataFrame, value: str, n: int = 5) -> str:
    coords = _coords(totals)
    parts = []
    for r in totals.sort_values(value, ascending=False, kind="stable").head(n).itertuples():
        where = ("(" + ",".join(str(int(getattr(r, c))) for c in coords) + ")") if coords \
            else ""
        parts.append(f"node {int(r.node)} {where} {r.direction} {getattr(r, value):.3g}")
    return "busiest: " + "; ".join(parts)


def _torus_heatmap(totals, channels, value, agg, title, label=None,
                   st: FigureStyle = DEFAULT):
    import matplotlib
    from matplotlib.colors import Normalize

    columns = _coords(totals)
    named = axis_names(totals)
    coords = [named[c] for c in columns]               # x, y, z: what the axes are called
    arrays = torus_arrays(channels, value)
    tiles = int(np.prod(next(iter(arrays.values())).shape[:-2])) if len(coords) > 2 else 1
    fold = agg if (agg is not None and tiles > MAX_TILES) or agg in ("mean", "sum") else None
    images = {key: tile_planes(a, fold) for key, a in arrays.items()}
    vmax = float(max(np.nanmax(a) if np.isfinite(a).any() else 0.0
                     for a in arrays.values())) or 1.0
    norm = Normalize(0.0, vmax)
    cmap = matplotlib.colormaps["magma_r"].with_extremes(bad="0.85")
    names = totals.drop_duplicates(["dim", "sign"]).set_index(["dim", "sign"])["direction"]
    keys = sorted(images, key=lambda ds: (ds[0], -ds[1]))
    ny, nx = images[keys[0]].shape
    wide = nx > 2 * ny                                     # tiled planes: one panel per row
    ncols = 1 if wide else 2
    nrows = math.ceil(len(keys) / ncols)
    panel_w = 10.0 if wide else 3.6
    panel_h = panel_w * ny / nx * (1.0 if wide else 1.0) + 0.6
    fig = _agg_canvas((panel_w * ncols + 1.4, panel_h * nrows + 1.0), st)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    k0 = arrays[keys[0]].shape[-1]
    k1 = arrays[keys[0]].shape[-2] if len(coords) > 1 else 1
    mappable = None
    for ax, key in zip(axes, keys):
        mappable = ax.imshow(np.ma.masked_invalid(images[key]), origin="lower", cmap=cmap,
                             norm=norm, interpolation="nearest", aspect="equal")
        mappable.set_gid(f"heatmap:{names[key]}")
        where = ""
        if len(coords) > 2 and fold is None:
            where = f": ({coords[0]}, {coords[1]}) planes for {coords[2]} = 0, 1, ... " \
                    f"left to right" + (f", {', '.join(coords[3:])} bottom to top"
                                        if len(coords) > 3 else "")
        elif len(coords) > 2:
            where = f" ({fold} over {', '.join(coords[2:])})"
        ax.set_title(f"{names[key]} channels{where}", fontsize=9, loc="left")
        if len(coords) > 2 and fold is None:
            across = arrays[key].shape[-3]
            ax.set_xticks([c * (k0 + 1) + (k0 - 1) / 2 for c in range(across)],
                          [f"{coords[2]}={c}" for c in range(across)], fontsize=7)
            ax.set_yticks([0, k1 - 1], ["0", str(k1 - 1)], fontsize=7)
            ax.set_ylabel(coords[1], fontsize=8)
            ax.set_xlabel(f"{coords[0]} = 0 .. {k0 - 1} within each plane", fontsize=8)
            for c in range(1, across):                     # gaps between planes: white
                ax.axvspan(c * (k0 + 1) - 1.5, c * (k0 + 1) - 0.5, color="white", lw=0)
        else:
            ax.set_xlabel(coords[0])
            ax.set_xticks(range(0, k0, max(1, k0 // 8)))
            if len(coords) > 1:
                ax.set_ylabel(coords[1])
                ax.set_yticks(range(0, k1, max(1, k1 // 8)))
            else:
                ax.set_yticks([])
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    if mappable is not None:
        bar = fig.colorbar(mappable, ax=axes[: len(keys)].tolist(), shrink=0.8)
        bar.set_label(VALUES.get(value, value))
    dims_text = "x".join(str(int(totals[c].max()) + 1) for c in columns)
    where = f": {label};" if label else f" on the {dims_text} torus,"
    text = (title or f"Channel {value}{where} each channel at the node it leaves (grey: no "
            f"channel)") + "\n" + _busiest_text(totals, value)
    if st.titles or title:
        fig.suptitle(wrap_to_width(fig, text if st.titles else title,
                                   0.95 * fig.get_figwidth() * fig.dpi, 10), fontsize=10)
    return fig


def _ranked_channels(totals, value, top, title, label=None, st: FigureStyle = DEFAULT):
    ranked = totals.sort_values(value, ascending=False, kind="stable").reset_index(drop=True)
    fig = _agg_canvas((11.0, max(4.0, 0.18 * min(top, len(ranked)) + 1.6)), st)
    ax_all, ax_top = fig.subplots(1, 2, width_ratios=(1, 1.3))
    ax_all.plot(np.arange(1, len(ranked) + 1), ranked[value].to_numpy(float), color="C0",
                gid="ranked")
    ax_all.set_xlabel("Channel rank (busiest first)")
    ax_all.set_ylabel(VALUES.get(value, value))
    ax_all.set_ylim(bottom=0)
    ax_all.grid(alpha=0.3)
    mean = float(ranked[value].mean())
    ax_all.axhline(mean, color="0.5", ls="--", lw=1, label=f"mean {mean:.3g}")
    ax_all.legend(fontsize="small")
    head = ranked.head(top)
    labels = [f"{int(r.node)}:{r.direction}" for r in head.itertuples()]
    y = np.arange(len(head))
    ax_top.barh(y, head[value].to_numpy(float), color="C0", gid="bars")
    ax_top.set_yticks(y, labels, fontsize=8)
    ax_top.invert_yaxis()
    ax_top.set_xlabel(VALUES.get(value, value))
    ax_top.set_title(f"the {len(head)} busiest of {len(ranked)} channels (node:port)",
                     fontsize=10)
    ax_top.grid(alpha=0.3, axis="x")
    _suptitle(fig, title or f"Channel {value}, ranked" + (f" ({label})" if label else ""), st,
              title, fontsize=11)
    return fig
