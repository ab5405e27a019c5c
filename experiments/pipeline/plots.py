"""Figures from a sweep's results file, redrawable without simulating (``icsim plot``).

Three figures, each as PNG and SVG, with one panel per traffic pattern (when the results hold
several) and one line per curve (labelled by whatever distinguishes the curves within a panel,
usually the routing algorithm, with its γ*):

``latency``
    Mean latency versus offered load (the OutFlank paper's Fig. 4), every run: sustained loads
    as filled markers, saturated ones hollow, runs that measured no latency (an error, nothing
    delivered) as hollow triangles on the top edge.  A dashed vertical line marks each curve's
    γ*; in finite mode a dotted horizontal line marks the 1.2 × (latency at γ = 0.10) threshold
    of the rule.  The y-axis is fitted to the data, logarithmic when the latencies span more
    than a factor of :data:`LOG_RATIO` (a saturated window-mode run can be 100 × slower).
``accepted``
    Accepted versus offered load, every run; saturated runs hollow; γ* marked.
``derouted``
    Share of derouted packets versus offered load (Fig. 5 style): total, plus outflank and
    wraparound where non-zero; saturated runs hollow.

Points are drawn only where runs exist, and a line joins two of them only when they are
neighbours on the load grid (no more than one grid step apart; the step is the smallest gap
between two grid loads of one curve in the file): a bisection search's far-apart runs stay
separate points, not a line "measured" between them.

With several seeds per curve (``icsim sweep --seeds N``) each point is the mean over the seeds
with its 95 % Student-t confidence interval as an error bar; it is drawn hollow when any seed
saturated at that load; γ* is judged per seed (its mean is marked, the range shaded).

Sustained/saturated is judged with :mod:`icsim.experiments.pipeline.saturation` (window rule or
finite-mode 1.2 × latency at γ = 0.10), per curve and seed.  Runs belong to one curve when their
configs are equal except for the load and the seed (compared by their non-default values, as the
sweep's point keys, so results written under an older config schema still group right).  The
functions ending in ``_figure`` return matplotlib Figures (Agg canvas; nothing touches pyplot's
global state); :func:`plot_results` writes them.
"""

from __future__ import annotations

import io
import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.confidence import mean_ci
from icsim.experiments.pipeline.outputs import Outputs
from icsim.experiments.pipeline.saturation import (BASELINE_LOAD, LATENCY_FACTOR, analyse_rows,
                                                   is_load, load_key)
from icsim.experiments.pipeline.sweep import config_of_row, curve_hash
from icsim.model.input_files import InputFileError, read_text

RESULTS_NAME = "results.csv"
#: the largest results file read (the committed k = 16 Table 2 runs take 356 KB)
MAX_RESULTS_BYTES = 1 << 30
#: the columns every figure reads (the others, such as the derouted shares, are drawn if present)
NEEDED_COLUMNS = ("offered_load", "latency_ns", "accepted_load")
FORMATS = ("png", "svg")
X_LABEL = "Offered load γ (1 = uniform-traffic bisection capacity)"
PANEL_COLUMN = "config.traffic.pattern"
DEROUTE_STYLES = {"derouted.total": ("-", "total"), "derouted.outflank": ("--", "outflank"),
                  "derouted.wraparound": (":", "wraparound"),
                  "derouted.orthant": ("-.", "orthant")}
#: latency axes are logarithmic when the largest drawn latency exceeds the smallest this much
LOG_RATIO = 4.0
PANEL_SIZE = (5.2, 3.6)
MARKERS = ("o", "s", "D", "P", "X", "v", "<", ">", "p", "h")                # inches per panel, legend and titles come on top
RULE_TEXT = {
    "finite": (f"sustained: latency ≤ {LATENCY_FACTOR:g} × the latency at γ = "
               f"{BASELINE_LOAD:.2f} (dotted)"),
    "window": ("sustained: the run's own test (accepted ≥ 0.95 × offered, every measured "
               "packet delivered, source queues not growing)"),
}
GAMMA_TEXT = "γ* (dashed): the largest load such that it and every lower load are sustained"


# ---------------------------------------------------------------------------------- data
def read_results(path: str | Path) -> pd.DataFrame:
    """A sweep's results as a DataFrame (``path`` is the CSV or its directory).

    A truncated last line (an interrupted write) is ignored.  A file that is not a sweep's
    results (not UTF-8 text, not a CSV table, without one of :data:`NEEDED_COLUMNS`, or a load
    that is not a number) raises :class:`~icsim.model.input_files.InputFileError`, one line
    naming the file and what is wrong.
    """
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_NAME
    name = str(p)
    text = read_text(p, max_bytes=MAX_RESULTS_BYTES)
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    if not text.strip():
        raise InputFileError(name, "empty: a sweep's results.csv starts with its header line")
    try:
        df = pd.read_csv(io.StringIO(text))
    except pd.errors.ParserError as exc:
        raise InputFileError(name, f"not a CSV table ({' '.join(str(exc).split())})") from None
    missing = _missing_columns(df)
    if missing:
        raise InputFileError(name, f"no {missing} column: not a sweep's results.csv", 1)
    bad = ~df["offered_load"].map(is_load)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputFileError(name, f"row {row + 1}: offered_load "
                                   f"{df['offered_load'].iloc[row]!r} is not a load (a number "
                                   f"of at least 0)")
    return df.assign(offered_load=df["offered_load"].astype(float))


def _missing_columns(df: pd.DataFrame) -> str:
    """Which of :data:`NEEDED_COLUMNS` the frame lacks, as text ("" if none)."""
    return " or ".join(c for c in NEEDED_COLUMNS if c not in df.columns)


def to_frame(data: Any) -> pd.DataFrame:
    """Rows (list of dicts), a DataFrame or a path, as a DataFrame; ``ValueError`` if rows lack
    one of :data:`NEEDED_COLUMNS` (they are not a sweep's)."""
    if isinstance(data, (str, Path)):
        return read_results(data)
    df = data.copy() if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    missing = _missing_columns(df)
    if len(df) and missing:
        raise ValueError(f"results: no {missing} column (the rows of a sweep's "
                         f"results.csv, as icsim.sweep returns them)")
    return df


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in df.to_dict("records")]


def _dims_text(value: Any) -> str:
    try:
        dims = json.loads(value) if isinstance(value, str) else value
        return "x".join(str(int(d)) for d in dims)
    except (TypeError, ValueError):
        return str(value)


def _short(column: str) -> str:
    return column.split(".")[-1]


def _value_text(column: str, value: Any) -> str:
    if column == "config.topology.dims":
        return _dims_text(value)
    return str(value)


def _num(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x


@dataclass
class Line:
    """One curve as drawn: its panel and label, its runs, and per load what is plotted.

    Attributes
    ----------
    rows : DataFrame
        Every run of the curve (all seeds), sorted by load.
    points : DataFrame
        One row per load that was run: ``offered_load``, ``seeds`` (runs at that load),
        ``sustained`` (every seed sustained it), ``saturated_seeds``, and for ``latency_ns``,
        ``accepted_load`` and the ``derouted.*`` columns the mean over seeds and ``<col>_ci``,
        the 95 % confidence half-width (NaN with one seed).
    gamma_stars : dict
        Seed -> γ* of that seed's runs (``None``: not even the lowest load sustained).
    baseline_latency_ns : float or None
        Finite mode: the mean over seeds of the latency at γ = 0.10 (the 1.2× rule's basis).
    """

    panel: str
    label: str
    mode: str
    rows: pd.DataFrame
    points: pd.DataFrame
    gamma_stars: dict[Any, float | None] = field(default_factory=dict)
    baseline_latency_ns: float | None = None

    @property
    def loads(self) -> np.ndarray:
        return self.points["offered_load"].to_numpy(dtype=float)

    @property
    def sustained(self) -> np.ndarray:
        return self.points["sustained"].to_numpy(dtype=bool)

    @property
    def gamma_star(self) -> float | None:
        """γ* (the mean over seeds of those that have one; ``None`` if none has)."""
        values = [g for g in self.gamma_stars.values() if g is not None]
        return float(np.mean(values)) if values else None

    @property
    def n_seeds(self) -> int:
        return len(self.gamma_stars)

    def segments(self, step: float | None) -> list[np.ndarray]:
        """Indices of :attr:`points` split where two neighbouring loads are more than one grid
        ``step`` apart (``None``: never split)."""
        loads = self.loads
        if len(loads) == 0:
            return []
        if step is None:
            return [np.arange(len(loads))]
        cut = np.flatnonzero(np.diff(loads) > step * (1 + 1e-6)) + 1
        return np.split(np.arange(len(loads)), cut)


def _mode_of(first: pd.Series) -> str:
    mode = first.get("mode")
    if not isinstance(mode, str):
        mode = first.get("config.run.mode", "window")
    return mode if isinstance(mode, str) else "window"


def _line_keys(df: pd.DataFrame) -> pd.Series:
    """Which curve each row belongs to: the hash of its config's non-default values without
    the load and the seed (recomputed from the ``config.*`` columns, so that rows stored under
    an older config schema group with new ones)."""
    cols = [c for c in df.columns if c.startswith("config.") and c not in
            ("config.traffic.load", "config.seed")]
    if not cols:
        return (df["curve_hash"] if "curve_hash" in df else
                df.get("curve", pd.Series("run", index=df.index))).astype(str)
    cache: dict[tuple, str] = {}
    keys = []
    for values in df[cols].itertuples(index=False, name=None):
        text = tuple("" if (isinstance(v, float) and math.isnan(v)) else v for v in values)
        if text not in cache:
            config = config_of_row(dict(zip(cols, text)))
            cache[text] = curve_hash(config)
        keys.append(cache[text])
    return pd.Series(keys, index=df.index)


def _seed_column(df: pd.DataFrame) -> pd.Series:
    """Each row's seed as text (a seed column with a gap is read as floats: 1.0 is "1"; a
    missing seed is "", a group of its own)."""
    def text(v: Any) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else str(int(v)) if v.is_integer() else str(v)
        return str(v)

    for col in ("seed", "config.seed"):
        if col in df:
            return df[col].map(text)
    return pd.Series("1", index=df.index)


VALUE_COLUMNS = ("latency_ns", "accepted_load", *DEROUTE_STYLES)


def _points(rows: pd.DataFrame, verdicts: dict[str, dict[float, Any]]) -> pd.DataFrame:
    out = []
    for load, g in rows.groupby(rows["offered_load"].map(load_key), sort=True):
        seeds = g["_seed"].tolist()
        judged = [verdicts[s].get(load) for s in seeds]
        good = [v is not None and v.sustained for v in judged]
        rec: dict[str, Any] = {"offered_load": float(load), "seeds": len(g),
                               "sustained": all(good), "saturated_seeds": good.count(False)}
        for col in VALUE_COLUMNS:
            if col in g:
                mean, half, _ = mean_ci(g[col].map(_num))
                rec[col], rec[f"{col}_ci"] = mean, half
        out.append(rec)
    return pd.DataFrame(out)


def curve_lines(data: Any) -> list[Line]:
    """Group results into drawable curves, judged sustained/saturated per seed
    (docs/model.md §7)."""
    df = to_frame(data)
    if df.empty:
        return []
    df = df.assign(_curve=_line_keys(df), _seed=_seed_column(df))
    # the engine is how a run was computed, not what (both give the same results): no label
    config_cols = [c for c in df.columns if c.startswith("config.")
                   and c not in ("config.traffic.load", "config.seed", "config.run.engine")]
    multi_panel = PANEL_COLUMN in df and df[PANEL_COLUMN].nunique(dropna=False) > 1
    lines = []
    panels = df[PANEL_COLUMN].astype(str) if multi_panel else pd.Series("", index=df.index)
    dims_vary = ("config.topology.dims" in df and multi_panel
                 and df.groupby(panels)["config.topology.dims"].nunique().max() == 1
                 and df["config.topology.dims"].nunique() > 1)
    for panel in dict.fromkeys(panels):
        pdf = df[panels == panel]
        title = panel
        if dims_vary:
            title = f"{panel} on {_dims_text(pdf['config.topology.dims'].iloc[0])}"
        varying = [c for c in config_cols
                   if pdf.groupby("_curve")[c].first().astype(str).nunique() > 1]
        for _, cdf in pdf.groupby("_curve", sort=False):
            cdf = cdf.sort_values("offered_load", kind="stable")
            first = cdf.iloc[0]
            if varying == ["config.routing.algorithm"]:
                label = str(first["config.routing.algorithm"])
            elif varying:
                label = ", ".join(f"{_short(c)}={_value_text(c, first[c])}" for c in varying)
            else:
                label = str(first.get("config.routing.algorithm", first.get("curve", "run")))
            mode = _mode_of(first)
            verdicts, stars, baselines = {}, {}, []
            for seed, sdf in cdf.groupby("_seed", sort=False):
                result = analyse_rows(_records(sdf), mode)
                verdicts[seed] = result.verdicts
                stars[seed] = result.gamma_star
                if result.baseline_latency_ns is not None:
                    baselines.append(result.baseline_latency_ns)
            lines.append(Line(title, label, mode, cdf.reset_index(drop=True),
                              _points(cdf, verdicts), stars,
                              float(np.mean(baselines)) if baselines else None))
    return lines


def grid_step(lines: list[Line]) -> float | None:
    """The load grid's step: the smallest gap between two loads a curve ran on its grid (one
    seed's grid runs; refinement runs are off the grid); ``None`` if no curve has two."""
    gaps = []
    for line in lines:
        rows = line.rows
        if "role" in rows:
            rows = rows[rows["role"].fillna("grid").astype(str) == "grid"]
        for _, sdf in rows.groupby("_seed"):
            loads = np.unique([load_key(x) for x in sdf["offered_load"]])
            d = np.diff(loads)
            gaps += list(d[d > 1e-9])
    return float(min(gaps)) if gaps else None


def latency_series(data: Any) -> dict[str, list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]]:
    """What the latency figure draws: panel -> [(label, loads, mean latency in µs, sustained)],
    every load that was run (NaN latency where no run of the load measured one)."""
    out: dict[str, list] = {}
    for line in curve_lines(data):
        out.setdefault(line.panel, []).append(
            (line.label, line.loads, line.points["latency_ns"].to_numpy(dtype=float) / 1000.0,
             line.sustained))
    return out


# ---------------------------------------------------------------------------------- layout
def _describe(df: pd.DataFrame) -> str:
    parts = []
    if "config.topology.dims" in df and df["config.topology.dims"].nunique() == 1:
        kind = df["config.topology.kind"].iloc[0] if "config.topology.kind" in df else "torus"
        parts.append(f"{_dims_text(df['config.topology.dims'].iloc[0])} {kind}")
    for col, fmt in ((PANEL_COLUMN, "{} traffic"), ("config.run.mode", "{} mode"),
                     ("config.traffic.message_packets", "{}-packet messages")):
        if col in df and df[col].nunique() == 1:
            parts.append(fmt.format(df[col].iloc[0]))
    seeds = sorted({int(s) for s in _seed_column(df) if str(s).lstrip("-").isdigit()})
    if len(seeds) == 1:
        parts.append(f"seed {seeds[0]}")
    elif seeds:
        parts.append(f"{len(seeds)} seeds ({seeds[0]}–{seeds[-1]}), mean ± 95 % CI")
    return ", ".join(parts)


def _figure(n_panels: int, legend_rows: int):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = min(max(n_panels, 1), 3)
    nrows = math.ceil(max(n_panels, 1) / ncols)
    height = PANEL_SIZE[1] + 0.22 * legend_rows + 0.9      # axes, its legend below, labels
    width = PANEL_SIZE[0] * ncols + (1.2 if ncols == 1 else 0.0)   # room for a lone title
    fig = Figure(figsize=(width, height * nrows + 1.3), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def _by_panel(lines: list[Line]) -> dict[str, list[Line]]:
    panels: dict[str, list[Line]] = {}
    for line in lines:
        panels.setdefault(line.panel, []).append(line)
    return panels


def _gstar(line: Line) -> str:
    """The legend text of a curve: its label and γ* (over seeds: mean and range)."""
    stars = list(line.gamma_stars.values())
    have = [g for g in stars if g is not None]
    if not have:
        return f"{line.label}: no sustained load"
    # no saturated run at all: γ* is the top of what was run, a lower bound
    bound = "≥ " if line.points["sustained"].all() else "= "
    if len(stars) == 1:
        return f"{line.label}: γ* {bound}{have[0]:.2f}"
    if min(have) == max(have):
        text = f"{line.label}: γ* {bound}{have[0]:.2f} in {len(have)} seeds"
    else:
        text = (f"{line.label}: γ* = {np.mean(have):.2f} "
                f"[{min(have):.2f}–{max(have):.2f}] over {len(have)} seeds")
    if len(have) < len(stars):
        text += f", none in {len(stars) - len(have)}"
    return text


def wrap_to_width(fig, text: str, width_px: float, fontsize: float) -> str:
    """``text`` re-wrapped (each paragraph) so that no line is wider than ``width_px`` when
    drawn on ``fig`` (an Agg canvas) at ``fontsize``."""
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(size=fontsize)
    renderer = fig.canvas.get_renderer()

    def width(s: str) -> float:
        return renderer.get_text_width_height_descent(s, prop, ismath=False)[0]

    out = []
    for para in text.split("\n"):
        chars = max(len(para), 1)
        wrapped = para
        while chars > 8 and any(width(s) > width_px for s in wrapped.split("\n")):
            chars = int(chars * 0.9)
            wrapped = textwrap.fill(para, chars, break_long_words=False)
        out.append(wrapped)
    return "\n".join(out)


def _titles(fig, axes, titles: list[str], title: str, lines: Iterable[str]) -> None:
    """Panel titles and the figure title, wrapped to their widths (never clipped)."""
    fig_w = fig.get_figwidth() * fig.dpi
    for ax, t in zip(axes, titles):
        ax_w = ax.get_position().width * fig_w
        ax.set_title(wrap_to_width(fig, t, 0.85 * ax_w, 11))
    body = "\n".join([title, *[s for s in lines if s]])
    fig.suptitle(wrap_to_width(fig, body, 0.96 * fig_w, 11), fontsize=11)


def _xlim(ax, plines: list[Line], step: float | None) -> None:
    """The panel spans the loads that were run, with a margin (never below zero)."""
    loads = np.concatenate([line.loads for line in plines])
    lo, hi = float(np.nanmin(loads)), float(np.nanmax(loads))
    pad = max(0.04 * (hi - lo), (step or 0.05) * 0.5)
    ax.set_xlim(max(0.0, lo - pad), hi + pad)


def _panel_legend(ax) -> None:
    """The curves' legend under the panel's x label: outside the data, in as many columns as
    the panel's width holds."""
    labels = ax.get_legend_handles_labels()[1]
    if not labels:
        return
    per_entry = max(len(t) for t in labels) * 0.075 + 0.55        # inches, "small" font
    ncols = int(max(1, min(len(labels), PANEL_SIZE[0] // per_entry)))
    if len(labels) > ncols:                                         # balance the rows
        ncols = math.ceil(len(labels) / math.ceil(len(labels) / ncols))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize="small", ncols=ncols,
              frameon=False, borderaxespad=0.0, handlelength=1.6, columnspacing=1.0)


def _legend_height(labels_per_panel: list[list[str]]) -> int:
    """Rows the tallest panel legend takes (as :func:`_panel_legend` lays it out)."""
    rows = 1
    for labels in labels_per_panel:
        if labels:
            per_entry = max(len(t) for t in labels) * 0.075 + 0.55
            ncols = int(max(1, min(len(labels), PANEL_SIZE[0] // per_entry)))
            rows = max(rows, math.ceil(len(labels) / ncols))
    return rows


def _key_legend(fig, finite: bool, seeds: bool, failed: bool, gamma: bool = True) -> None:
    """The symbols shared by every panel, once, at the foot of the figure."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="0.3", marker="o", ls="none", label="sustained run"),
               Line2D([], [], color="0.3", marker="o", mfc="none", ls="none",
                      label="saturated" + (" (any seed)" if seeds else " run")),
               Line2D([], [], color="0.3", ls="--", lw=1, label="γ*")][: 3 if gamma else 2]
    if failed:
        handles.insert(2, Line2D([], [], color="0.3", marker="^", mfc="none", ls="none",
                                 label="no latency (failed run)"))
    if finite:
        handles.append(Line2D([], [], color="0.3", ls=":", lw=1.2,
                              label=f"{LATENCY_FACTOR:g} × latency at γ = {BASELINE_LOAD:.2f}"))
    if seeds:
        handles.append(Line2D([], [], color="0.3", marker="|", ms=10, ls="none",
                              label="95 % CI over seeds"))
    per_entry = max(len(h.get_label()) for h in handles) * 0.075 + 0.6     # inches
    ncols = int(max(1, min(len(handles), fig.get_figwidth() // per_entry)))
    ncols = math.ceil(len(handles) / math.ceil(len(handles) / ncols))
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, fontsize="small",
               frameon=False)


def _mark_gamma_star(ax, line: Line, color: str) -> None:
    have = [g for g in line.gamma_stars.values() if g is not None]
    if not have:
        return
    ax.axvline(float(np.mean(have)), color=color, ls="--", lw=1, alpha=0.8,
               gid=f"gamma_star:{line.label}")
    if len(have) > 1 and max(have) > min(have):
        ax.axvspan(min(have), max(have), color=color, alpha=0.08, lw=0)


def _style(i: int) -> tuple[str, str, float]:
    """Colour, marker and marker size of the i-th curve of a panel: shapes differ too, and
    earlier curves are drawn a little larger, so that equal curves stay visible."""
    return f"C{i % 10}", MARKERS[i % len(MARKERS)], max(3.5, 6.0 - 0.5 * i)


def _draw_values(ax, line: Line, column: str, i: int, step: float | None, *,
                 scale: float = 1.0, ls: str = "-", kind: str = "") -> None:
    """Segments joining grid neighbours, filled/hollow markers, error bars over seeds."""
    pts = line.points
    if column not in pts:
        return
    y = pts[column].to_numpy(dtype=float) * scale
    ci = pts[f"{column}_ci"].to_numpy(dtype=float) * scale
    x = line.loads
    color, marker, ms = _style(i)
    tag = f"{line.label}{':' + kind if kind else ''}"
    for seg in line.segments(step):
        for part in np.split(seg, np.flatnonzero(~np.isfinite(y[seg])) + 1):  # gaps: no value
            part = part[np.isfinite(y[part])]
            if len(part) > 1:
                ax.plot(x[part], y[part], ls=ls, color=color, lw=1.3, gid=f"segment:{tag}")
    good = line.sustained & np.isfinite(y)
    bad = ~line.sustained & np.isfinite(y)
    ax.plot(x[good], y[good], marker, ls="none", ms=ms, color=color, gid=f"sustained:{tag}")
    ax.plot(x[bad], y[bad], marker, ls="none", ms=ms + 0.5, mfc="white", mew=1.3, color=color,
            gid=f"saturated:{tag}")
    if np.isfinite(ci).any():
        ok = np.isfinite(ci) & np.isfinite(y)
        ax.errorbar(x[ok], y[ok], yerr=ci[ok], fmt="none", ecolor=color, elinewidth=1,
                    capsize=2.5, gid=f"ci:{tag}")


def _fit_y(ax, values: list[float], *, log_ok: bool, floor: float | None = None) -> bool:
    """Fit the y-axis to ``values`` (logarithmic when they span more than :data:`LOG_RATIO`
    and ``log_ok``); returns whether it is logarithmic."""
    v = np.array([x for x in values if np.isfinite(x)], dtype=float)
    if floor is not None:
        v = np.append(v, floor)
    if len(v) == 0:
        ax.set_ylim(0, 1)
        return False
    lo, hi = float(v.min()), float(v.max())
    if log_ok and lo > 0 and hi / lo > LOG_RATIO:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        ax.set_ylim(lo / 1.25, hi * 1.25)
        subs = (1.0, 2.0, 3.0, 5.0) if hi / lo < 30 else (1.0, 2.0, 5.0)   # >= 3 labels
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        return True
    span = hi - lo if hi > lo else max(abs(hi), 1e-9) * 0.2
    bottom = lo - 0.12 * span
    if floor is not None:
        bottom = max(bottom, floor - 0.02 * span)
    ax.set_ylim(bottom, hi + 0.12 * span)
    return False


# ---------------------------------------------------------------------------------- figures
def latency_figure(data: Any, lines: list[Line] | None = None):
    """Mean latency versus offered load: every run, γ* and its rule marked (module docstring).

    ``data``: rows, a DataFrame or a results path; returns a matplotlib Figure (``None`` if
    there is nothing to draw)."""
    from matplotlib.transforms import blended_transform_factory

    df = to_frame(data)
    lines = curve_lines(df) if lines is None else lines
    if not lines:
        return None
    step = grid_step(lines)
    panels = _by_panel(lines)
    fig, axes = _figure(len(panels), _legend_height(
        [[_gstar(line) for line in p] for p in panels.values()]))
    any_failed = False
    for ax, (panel, plines) in zip(axes, panels.items()):
        values = []
        for i, line in enumerate(plines):
            color, marker, ms = _style(i)
            _draw_values(ax, line, "latency_ns", i, step, scale=1e-3)
            pts = line.points
            lat, ci = pts["latency_ns"].to_numpy(float), pts["latency_ns_ci"].to_numpy(float)
            values += list(lat / 1e3) + list((lat + np.nan_to_num(ci)) / 1e3) \
                + list((lat - np.nan_to_num(ci)) / 1e3)
            if line.mode == "finite" and line.baseline_latency_ns is not None:
                limit = LATENCY_FACTOR * line.baseline_latency_ns / 1e3
                ax.axhline(limit, color=color, ls=":", lw=1.2, gid=f"threshold:{line.label}")
                values.append(limit)
            missing = ~np.isfinite(lat)
            if missing.any():
                any_failed = True
                top = blended_transform_factory(ax.transData, ax.transAxes)
                ax.plot(line.loads[missing], np.full(missing.sum(), 0.97), "^", ms=6,
                        mfc="white", mew=1.3, color=color, transform=top, clip_on=False,
                        gid=f"failed:{line.label}")
            _mark_gamma_star(ax, line, color)
            ax.plot([], [], ls="-", marker=marker, color=color, ms=ms, label=_gstar(line))
        log = _fit_y(ax, values, log_ok=True)
        if not np.isfinite(values).any():
            ax.text(0.5, 0.5, "no run measured a latency", transform=ax.transAxes,
                    ha="center", va="center", color="0.4")
            ax.set_yticks([])
        ax.set_xlabel(X_LABEL)
        ax.set_ylabel("Mean packet latency (µs" + (", log scale)" if log else ")"))
        _xlim(ax, plines, step)
        ax.grid(alpha=0.3)
        _panel_legend(ax)
    modes = sorted({line.mode for line in lines})
    seeds = any(line.n_seeds > 1 for line in lines)
    _key_legend(fig, "finite" in modes, seeds, any_failed)
    _titles(fig, axes, list(panels), "Mean packet latency vs offered load",
            [_describe(df), GAMMA_TEXT, *(RULE_TEXT.get(m, "") for m in modes)])
    return fig


def accepted_figure(data: Any, lines: list[Line] | None = None):
    """Accepted versus offered load: every run, saturated ones hollow, γ* marked."""
    df = to_frame(data)
    lines = curve_lines(df) if lines is None else lines
    if not lines:
        return None
    step = grid_step(lines)
    panels = _by_panel(lines)
    fig, axes = _figure(len(panels), _legend_height(
        [["accepted = offered"] + [_gstar(line) for line in p] for p in panels.values()]))
    for ax, (panel, plines) in zip(axes, panels.items()):
        _xlim(ax, plines, step)
        x0, x1 = ax.get_xlim()
        ax.plot([x0, x1], [x0, x1], ls="--", color="0.6", lw=1, label="accepted = offered",
                gid="diagonal")
        values = []
        for i, line in enumerate(plines):
            color, marker, ms = _style(i)
            _draw_values(ax, line, "accepted_load", i, step)
            values += list(line.points["accepted_load"].to_numpy(float))
            _mark_gamma_star(ax, line, color)
            ax.plot([], [], ls="-", marker=marker, color=color, ms=ms, label=_gstar(line))
        loads = np.concatenate([line.loads for line in plines])
        _fit_y(ax, values + list(loads), log_ok=False)
        ax.set_xlim(x0, x1)
        ax.set_xlabel(X_LABEL)
        ax.set_ylabel("Accepted load (γ units)")
        ax.grid(alpha=0.3)
        _panel_legend(ax)
    seeds = any(line.n_seeds > 1 for line in lines)
    _key_legend(fig, False, seeds, False)
    modes = sorted({line.mode for line in lines})
    _titles(fig, axes, list(panels), "Accepted vs offered load",
            [_describe(df), GAMMA_TEXT, *(RULE_TEXT.get(m, "") for m in modes)])
    return fig


def derouted_figure(data: Any, lines: list[Line] | None = None):
    """Share of derouted packets versus offered load (``None`` without derouting columns)."""
    df = to_frame(data)
    if "derouted.total" not in df:
        return None
    lines = curve_lines(df) if lines is None else lines
    if not lines:
        return None
    step = grid_step(lines)
    panels = _by_panel(lines)
    kinds = [c for c in DEROUTE_STYLES if c in df and (c == "derouted.total"
                                                        or np.nansum(df[c].map(_num)))]
    fig, axes = _figure(len(panels), _legend_height(
        [[f"{line.label} {DEROUTE_STYLES[c][1]}" for line in p for c in kinds] for p in panels.values()]))
    for ax, (panel, plines) in zip(axes, panels.items()):
        values = []
        for i, line in enumerate(plines):
            for col in kinds:
                style, kind = DEROUTE_STYLES[col]
                if col not in line.points:
                    continue
                vals = line.points[col].to_numpy(dtype=float)
                if col != "derouted.total" and not np.nansum(vals):
                    continue
                _draw_values(ax, line, col, i, step, ls=style, kind=kind)
                values += list(vals)
                color, marker, ms = _style(i)
                ax.plot([], [], ls=style, marker=marker, ms=ms, color=color,
                        label=f"{line.label} {kind}")
        _xlim(ax, plines, step)
        top = max(0.05, float(np.nanmax(values)) * 1.12 if np.isfinite(values).any() else 0)
        ax.set_ylim(bottom=-0.02 * top, top=top)           # a line at zero stays visible
        ax.set_xlabel(X_LABEL)
        ax.set_ylabel("Derouted packets (fraction of measured)")
        ax.grid(alpha=0.3)
        _panel_legend(ax)
    seeds = any(line.n_seeds > 1 for line in lines)
    _key_legend(fig, False, seeds, False, gamma=False)
    _titles(fig, axes, list(panels), "Derouted packets vs offered load", [_describe(df)])
    return fig


FIGURES = {"latency": latency_figure, "accepted": accepted_figure, "derouted": derouted_figure}


def _save(fig, out_dir: Path, stem: str, formats: Iterable[str], outputs: Outputs) -> list[Path]:
    paths = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        outputs.figure(fig, path)
        paths.append(path)
        fig.set_layout_engine("none")       # laid out by the first save; keep it (and its cost)
    return paths


def plot_results(data: Any, out_dir: str | Path, formats: Iterable[str] = FORMATS,
                 prefix: str = "", outputs: Outputs | None = None) -> list[Path]:
    """Draw the latency, accepted-load and derouting figures; return their paths.

    Parameters
    ----------
    data : list of dict, DataFrame or path
        Rows of a results file (or the file / its directory).
    out_dir : path
        Where ``latency.png``, ``latency.svg``, ``accepted.*``, ``derouted.*`` go.
    formats : iterable of str
        File formats (``png``, ``svg``, ``pdf`` ...).
    prefix : str
        Prepended to the file stems.
    outputs : Outputs, optional
        Writes the files (unchanged ones are not touched, committed ones kept without
        ``force``: :mod:`icsim.experiments.pipeline.outputs`); a new one by default.
    """
    df = to_frame(data)
    lines = curve_lines(df)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not lines:
        return []
    outputs = outputs if outputs is not None else Outputs()
    formats = tuple(formats)
    files: list[Path] = []
    for stem, draw in FIGURES.items():
        fig = draw(df, lines)
        if fig is not None:
            files += _save(fig, out_dir, prefix + stem, formats, outputs)
    return files
