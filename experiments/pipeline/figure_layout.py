"""How the sweep figures are laid out: panels, legends outside the data, fitted axes, titles
wrapped to their width, the markers of sustained and saturated runs, γ* marked.

Shared by the three figures of :mod:`.plots`; ``wrap_to_width`` also by :mod:`.run_figures`.
Figures are drawn on an Agg canvas of their own (nothing touches pyplot's global state).
"""

from __future__ import annotations

import math
import textwrap
from typing import Iterable

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.figure_style import DEFAULT, FigureStyle
from icsim.experiments.pipeline.lines import (PANEL_COLUMN, Line, dims_text, joined,
                                             seed_column)
from icsim.experiments.pipeline.saturation import BASELINE_LOAD, LATENCY_FACTOR

#: latency axes are logarithmic when the largest drawn latency exceeds the smallest this much
LOG_RATIO = 4.0
PANEL_SIZE = DEFAULT.panel_size      # inches per panel (default style), legend and titles on top
#: two curves coincide where their values differ by at most this share at most of their loads
SAME_SHARE, SAME_AT = 0.02, 0.8
#: how far apart (points) the paper style sets curves that coincide
DODGE_PT = 2.2


def describe(df: pd.DataFrame) -> str:
    parts = []
    if "topology" in df and df["topology"].nunique() == 1 and isinstance(df["topology"].iloc[0],
                                                                         str):
        parts.append(df["topology"].iloc[0])            # "torus 8x8x8", "mesh 4x4"
    elif "config.topology.dims" in df and df["config.topology.dims"].nunique() == 1:
        kind = df["config.topology.kind"].iloc[0] if "config.topology.kind" in df else "torus"
        parts.append(f"{dims_text(df['config.topology.dims'].iloc[0])} {kind}")
    for col, fmt in ((PANEL_COLUMN, "{} traffic"), ("config.run.mode", "{} mode"),
                     ("config.traffic.message_packets", "{}-packet messages")):
        if col in df and df[col].nunique() == 1:
            parts.append(fmt.format(df[col].iloc[0]))
    column = seed_column(df)
    numbered = [(i, int(s)) for i, s in zip(df.index, column) if str(s).lstrip("-").isdigit()]
    seeds = sorted({s for _, s in numbered})
    per_curve = {}
    if "curve" in df:
        for i, s in numbered:
            per_curve.setdefault(df.at[i, "curve"], set()).add(s)
    if len({frozenset(v) for v in per_curve.values()}) > 1:
        # curves of several sweeps in one folder: each curve's count is in its legend
        parts.append(f"seeds {seeds[0]}–{seeds[-1]}, not the same for every curve "
                     f"(mean ± 95 % CI where a curve has several)")
    elif len(seeds) == 1:
        parts.append(f"seed {seeds[0]}")
    elif seeds:
        parts.append(f"{len(seeds)} seeds ({seeds[0]}–{seeds[-1]}), mean ± 95 % CI")
    return ", ".join(parts)


def new_figure(n_panels: int, legend_rows: int, style: FigureStyle = DEFAULT):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = min(max(n_panels, 1), 3 if style.panel_size else 2)
    nrows = math.ceil(max(n_panels, 1) / ncols)
    fig = Figure(figsize=style.figure_size(n_panels, ncols, nrows, legend_rows),
                 layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def by_panel(lines: list[Line]) -> dict[str, list[Line]]:
    panels: dict[str, list[Line]] = {}
    for line in lines:
        panels.setdefault(line.panel, []).append(line)
    return panels


def gamma_label(line: Line, same: dict[str, str] | None = None,
                style: FigureStyle = DEFAULT) -> str:
    """The legend text of a curve: its label and γ* (over seeds: mean and range), and the
    earlier curve it coincides with (:func:`coincident`), if any; the paper style's shorter
    (``abr, γ* 0.65``)."""
    text = _gamma_text(line)
    bound = line.exact_bound
    if bound is not None:
        text += f", exact bound {bound:.3g}"
    if not style.titles:
        text = text.replace(": γ* = ", ", γ* ").replace(": γ* ", ", γ* ").replace(
            ", exact bound ", " (bound ") + (")" if bound is not None else "")
    if same and line.label in same:
        text += f" (= {same[line.label]})"
    return text


def _gamma_text(line: Line) -> str:
    stars = list(line.gamma_stars.values())
    have = [g for g in stars if g is not None]
    if not have:
        return f"{line.label}: no sustained load"
    # no saturated grid load above it (the top of the grid was sustained): a lower bound
    bound = "≥ " if line.lower_bound else "= "
    if len(stars) == 1:
        return f"{line.label}: γ* {bound}{have[0]:.2f}"
    if min(have) == max(have):
        text = f"{line.label}: γ* {bound}{have[0]:.2f} in {len(have)} seeds"
    else:
        text = (f"{line.label}: γ* {bound}{np.mean(have):.2f} "
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


def set_titles(fig, axes, titles: list[str], title: str, lines: Iterable[str],
               style: FigureStyle = DEFAULT) -> None:
    """Panel titles and the figure title, wrapped to their widths (never clipped); the paper
    style gives the panels their short titles only (the rest is the caption's)."""
    fig_w = fig.get_figwidth() * fig.dpi
    size = 11 if style.titles else style.font_size
    for ax, t in zip(axes, titles):
        ax_w = ax.get_position().width * fig_w
        ax.set_title(wrap_to_width(fig, t, 0.85 * ax_w, size), fontsize=size)
    if not style.titles:
        return
    body = "\n".join([title, *[s for s in lines if s]])
    fig.suptitle(wrap_to_width(fig, body, 0.96 * fig_w, 11), fontsize=11)


def fit_x(ax, plines: list[Line], step: float | None) -> None:
    """The panel spans the loads that were run, with a margin (never below zero)."""
    loads = np.concatenate([line.loads for line in plines])
    lo, hi = float(np.nanmin(loads)), float(np.nanmax(loads))
    pad = max(0.04 * (hi - lo), (step or 0.05) * 0.5)
    ax.set_xlim(max(0.0, lo - pad), hi + pad)


def _legend_columns(labels: list[str], style: FigureStyle) -> int:
    """How many legend entries fit side by side under a panel (balanced rows)."""
    char = 0.075 if style.panel_size else 0.052                     # inches, "small" font
    width = style.panel_size[0] if style.panel_size else style.column_widths[0] - 0.3
    per_entry = max(len(t) for t in labels) * char + (0.55 if style.panel_size else 0.45)
    ncols = int(max(1, min(len(labels), width // per_entry)))
    if len(labels) > ncols:                                         # balance the rows
        ncols = math.ceil(len(labels) / math.ceil(len(labels) / ncols))
    return ncols


def panel_legend(ax, style: FigureStyle = DEFAULT) -> None:
    """The curves' legend under the panel's x label: outside the data, in as many columns as
    the panel's width holds."""
    labels = ax.get_legend_handles_labels()[1]
    if not labels:
        return
    paper = style.panel_size is None
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2 if paper else -0.16),
              fontsize=style.rc.get("legend.fontsize", "small"),
              ncols=_legend_columns(labels, style), frameon=False, borderaxespad=0.0,
              handlelength=2.6 if paper else 1.6, columnspacing=1.0)


def legend_rows(labels_per_panel: list[list[str]], style: FigureStyle = DEFAULT) -> int:
    """Rows the tallest panel legend takes (as :func:`panel_legend` lays it out)."""
    rows = 1
    for labels in labels_per_panel:
        if labels:
            rows = max(rows, math.ceil(len(labels) / _legend_columns(labels, style)))
    return rows


def key_legend(fig, finite: bool, seeds: bool, failed: bool, gamma: bool = True,
               style: FigureStyle = DEFAULT) -> None:
    """The symbols shared by every panel, once, at the foot of the figure."""
    from matplotlib.lines import Line2D

    star = (Line2D([], [], color="0.3", marker="v", ms=4, ls="none", label="γ* (top edge)")
            if style.dodge else Line2D([], [], color="0.3", ls="--", lw=1, label="γ*"))
    handles = [Line2D([], [], color="0.3", marker="o", ls="none", label="sustained run"),
               Line2D([], [], color="0.3", marker="o", mfc="none", ls="none",
                      label="saturated" + (" (any seed)" if seeds else " run")),
               star][: 3 if gamma else 2]
    if failed:
        handles.insert(2, Line2D([], [], color="0.3", marker="^", mfc="none", ls="none",
                                 label="no latency (failed run)"))
    if finite:
        handles.append(Line2D([], [], color="0.3", ls=":", lw=1.2,
                              label=f"{LATENCY_FACTOR:g} × latency at γ = {BASELINE_LOAD:.2f}"))
    if seeds:
        handles.append(Line2D([], [], color="0.3", marker="|", ms=10, ls="none",
                              label="95 % CI over seeds"))
    char = 0.075 if style.panel_size else 0.052
    per_entry = max(len(h.get_label()) for h in handles) * char + 0.6     # inches
    ncols = int(max(1, min(len(handles), fig.get_figwidth() // per_entry)))
    ncols = math.ceil(len(handles) / math.ceil(len(handles) / ncols))
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols,
               fontsize=style.rc.get("legend.fontsize", "small"), frameon=False)


def gamma_offsets(lines: list[Line], style: FigureStyle) -> dict[str, float]:
    """Paper style: each curve's γ* tick offset (points), so that ticks at one load sit side
    by side; nothing in the default style (its γ* lines are drawn through the panel)."""
    if not style.dodge:
        return {}
    out: dict[str, float] = {}
    groups: dict[float, list[str]] = {}
    for line in lines:
        if line.gamma_star is not None:
            groups.setdefault(round(line.gamma_star, 6), []).append(line.label)
    for labels in groups.values():
        for k, label in enumerate(labels):
            out[label] = (k - (len(labels) - 1) / 2) * 2.2 * DODGE_PT
    return out


def mark_gamma_star(ax, line: Line, color: str, style: FigureStyle = DEFAULT,
                    marker: str = "v", dx_pt: float = 0.0) -> None:
    """γ* of a curve: a dashed line through the panel (default style), or a tick on the top
    edge in the curve's colour and marker (paper style); over seeds the range shaded."""
    have = [g for g in line.gamma_stars.values() if g is not None]
    if not have:
        return
    gamma = float(np.mean(have))
    if style.dodge:
        from matplotlib.transforms import ScaledTranslation, blended_transform_factory

        where = blended_transform_factory(ax.transData, ax.transAxes) + ScaledTranslation(
            dx_pt / 72, 0, ax.figure.dpi_scale_trans)
        ax.plot([gamma], [1.0], marker=marker, ms=style.marker_size + 0.6, color=color,
                mec="white", mew=0.4, ls="none", transform=where, clip_on=False,
                gid=f"gamma_star:{line.label}", zorder=5)
        ax.plot([gamma, gamma], [0.965, 1.0], color=color, lw=0.8, transform=where,
                clip_on=False, zorder=4)
    else:
        ax.axvline(gamma, color=color, ls="--", lw=1, alpha=0.8,
                   gid=f"gamma_star:{line.label}")
    if len(have) > 1 and max(have) > min(have):
        ax.axvspan(min(have), max(have), color=color, alpha=0.08, lw=0)


def style_index(lines: list[Line]) -> dict[str, int]:
    """Each curve's place in the palette, by its label: one curve looks the same in every
    panel of a figure."""
    out: dict[str, int] = {}
    for line in lines:
        out.setdefault(line.label, len(out))
    return out


def curve_style(i: int, style: FigureStyle = DEFAULT) -> tuple[str, str, float]:
    """Colour, marker and marker size of the i-th curve: shapes differ too, and (default
    style) earlier curves are drawn a little larger, so that equal curves stay visible."""
    return style.color(i), style.marker(i), style.size(i)


def coincident(lines: list[Line], column: str, log: bool = False) -> dict[str, str]:
    """Curves of one panel that lie on an earlier one (``label -> the earlier label``): the
    same loads sustained where both ran (so the same γ*: two curves that part where one
    saturates are not one), and at least :data:`SAME_AT` of their common sustained loads (two
    or more; else of all their common loads) within :data:`SAME_SHARE` of each other (relative
    on a logarithmic axis; of the panel's span on a linear one)."""
    values, kept = {}, {}
    for line in lines:
        if column in line.points:
            loads = np.round(line.loads, 6)
            values[line.label] = dict(zip(loads, line.points[column].to_numpy(dtype=float)))
            kept[line.label] = set(loads[line.sustained])
    every = [v for d in values.values() for v in d.values() if np.isfinite(v)]
    span = (max(every) - min(every)) if every else 0.0
    out: dict[str, str] = {}
    labels = list(values)
    for j, b in enumerate(labels):
        for a in labels[:j]:
            if a in out:
                continue
            common = [x for x in values[b] if x in values[a] and np.isfinite(values[a][x])
                      and np.isfinite(values[b][x])]
            if any((x in kept[a]) != (x in kept[b]) for x in common):
                continue
            both = [x for x in common if x in kept[a] and x in kept[b]]
            common = both if len(both) >= 2 else common
            if len(common) < 2:
                continue
            if log:
                near = [abs(values[a][x] - values[b][x]) <= SAME_SHARE * max(
                    abs(values[a][x]), abs(values[b][x]), 1e-12) for x in common]
            else:
                near = [abs(values[a][x] - values[b][x]) <= SAME_SHARE * max(span, 1e-9)
                        for x in common]
            if sum(near) >= SAME_AT * len(common) and sum(near) >= 2:
                out[b] = a
                break
    return out


def dodges(lines: list[Line], same: dict[str, str], style: FigureStyle) -> dict[str, float]:
    """Paper style: each curve's sideways offset (points), the curves that coincide set apart
    symmetrically; none in the default style."""
    if not style.dodge or not same:
        return {}
    groups: dict[str, list[str]] = {}
    for line in lines:
        root = line.label
        while root in same:
            root = same[root]
        groups.setdefault(root, []).append(line.label)
    out = {}
    for labels in groups.values():
        for k, label in enumerate(labels):
            out[label] = (k - (len(labels) - 1) / 2) * DODGE_PT
    return out


def _within(x: np.ndarray, step: float | None) -> np.ndarray:
    """Neighbours at most one ``step`` apart (``None``: all)."""
    if step is None:
        return np.ones(max(len(x) - 1, 0), dtype=bool)
    return np.diff(x) <= step * (1 + 1e-6)


def draw_values(ax, line: Line, column: str, i: int, step: float | None, *,
                scale: float = 1.0, ls: str | None = None, kind: str = "",
                style: FigureStyle = DEFAULT, dx_pt: float = 0.0,
                grid: np.ndarray | None = None) -> None:
    """Segments joining sustained grid neighbours (:func:`~.lines.joined` over the figure's
    ``grid``; never a line into a saturated run: its mean covers only what was delivered, and
    a line would read as a trend), filled markers for sustained runs and hollow ones for
    saturated runs, error bars over seeds; ``dx_pt`` sets the whole curve that many points
    sideways (paper style, curves that coincide)."""
    pts = line.points
    if column not in pts:
        return
    y = pts[column].to_numpy(dtype=float) * scale
    ci = pts[f"{column}_ci"].to_numpy(dtype=float) * scale
    x = line.loads
    color, marker, ms = curve_style(i, style)
    dash = style.dash(i) if ls is None else ls
    where = ax.transData
    if dx_pt:
        from matplotlib.transforms import ScaledTranslation

        where = ax.transData + ScaledTranslation(dx_pt / 72, 0, ax.figure.dpi_scale_trans)
    tag = f"{line.label}{':' + kind if kind else ''}"
    drawn = np.isfinite(y) & line.sustained            # no value, or saturated: no line
    links = drawn[:-1] & drawn[1:] & (joined(x, grid, step) if grid is not None
                                      else _within(x, step))
    for part in np.split(np.arange(len(x)), np.flatnonzero(~links) + 1):
        if len(part) > 1:
            ax.plot(x[part], y[part], ls=dash, color=color, lw=style.line_width,
                    transform=where, gid=f"segment:{tag}")
    good = line.sustained & np.isfinite(y)
    bad = ~line.sustained & np.isfinite(y)
    ax.plot(x[good], y[good], marker, ls="none", ms=ms, color=color, transform=where,
            gid=f"sustained:{tag}")
    ax.plot(x[bad], y[bad], marker, ls="none", ms=ms + 0.5, mfc="white",
            mew=1.3 if not style.dodge else 0.9, color=color, transform=where,
            gid=f"saturated:{tag}")
    if np.isfinite(ci).any():
        ok = np.isfinite(ci) & np.isfinite(y)
        ax.errorbar(x[ok], y[ok], yerr=ci[ok], fmt="none", ecolor=color, elinewidth=1,
                    capsize=2.5, transform=where, gid=f"ci:{tag}")


def wants_log(values: list[float]) -> bool:
    """Whether a latency axis over ``values`` is logarithmic (they span more than
    :data:`LOG_RATIO`)."""
    v = np.array([x for x in values if np.isfinite(x)], dtype=float)
    return bool(len(v)) and float(v.min()) > 0 and float(v.max()) / float(v.min()) > LOG_RATIO


def fit_y(ax, values: list[float], *, log_ok: bool, floor: float | None = None,
          log: bool | None = None) -> bool:
    """Fit the y-axis to ``values``: logarithmic when ``log`` says so (one scale for every
    panel of a figure), else (``log`` None) when they span more than :data:`LOG_RATIO` and
    ``log_ok``; returns whether it is logarithmic."""
    v = np.array([x for x in values if np.isfinite(x)], dtype=float)
    if floor is not None:
        v = np.append(v, floor)
    if len(v) == 0:
        ax.set_ylim(0, 1)
        return False
    lo, hi = float(v.min()), float(v.max())
    if log is None:
        log = log_ok and wants_log(list(v))
    if log and lo > 0:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        ratio = hi / lo
        ax.set_ylim(lo / 1.25, hi * 1.25)
        subs = (1.0, 2.0, 3.0, 5.0) if ratio < 30 else (1.0, 2.0, 5.0)   # >= 3 labels
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
