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

from icsim.experiments.pipeline.lines import PANEL_COLUMN, Line, dims_text, seed_column
from icsim.experiments.pipeline.saturation import BASELINE_LOAD, LATENCY_FACTOR

#: latency axes are logarithmic when the largest drawn latency exceeds the smallest this much
LOG_RATIO = 4.0
PANEL_SIZE = (5.2, 3.6)             # inches per panel, legend and titles come on top
MARKERS = ("o", "s", "D", "P", "X", "v", "<", ">", "p", "h")


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


def new_figure(n_panels: int, legend_rows: int):
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


def by_panel(lines: list[Line]) -> dict[str, list[Line]]:
    panels: dict[str, list[Line]] = {}
    for line in lines:
        panels.setdefault(line.panel, []).append(line)
    return panels


def gamma_label(line: Line) -> str:
    """The legend text of a curve: its label and γ* (over seeds: mean and range)."""
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


def set_titles(fig, axes, titles: list[str], title: str, lines: Iterable[str]) -> None:
    """Panel titles and the figure title, wrapped to their widths (never clipped)."""
    fig_w = fig.get_figwidth() * fig.dpi
    for ax, t in zip(axes, titles):
        ax_w = ax.get_position().width * fig_w
        ax.set_title(wrap_to_width(fig, t, 0.85 * ax_w, 11))
    body = "\n".join([title, *[s for s in lines if s]])
    fig.suptitle(wrap_to_width(fig, body, 0.96 * fig_w, 11), fontsize=11)


def fit_x(ax, plines: list[Line], step: float | None) -> None:
    """The panel spans the loads that were run, with a margin (never below zero)."""
    loads = np.concatenate([line.loads for line in plines])
    lo, hi = float(np.nanmin(loads)), float(np.nanmax(loads))
    pad = max(0.04 * (hi - lo), (step or 0.05) * 0.5)
    ax.set_xlim(max(0.0, lo - pad), hi + pad)


def panel_legend(ax) -> None:
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


def legend_rows(labels_per_panel: list[list[str]]) -> int:
    """Rows the tallest panel legend takes (as :func:`panel_legend` lays it out)."""
    rows = 1
    for labels in labels_per_panel:
        if labels:
            per_entry = max(len(t) for t in labels) * 0.075 + 0.55
            ncols = int(max(1, min(len(labels), PANEL_SIZE[0] // per_entry)))
            rows = max(rows, math.ceil(len(labels) / ncols))
    return rows


def key_legend(fig, finite: bool, seeds: bool, failed: bool, gamma: bool = True) -> None:
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


def mark_gamma_star(ax, line: Line, color: str) -> None:
    have = [g for g in line.gamma_stars.values() if g is not None]
    if not have:
        return
    ax.axvline(float(np.mean(have)), color=color, ls="--", lw=1, alpha=0.8,
               gid=f"gamma_star:{line.label}")
    if len(have) > 1 and max(have) > min(have):
        ax.axvspan(min(have), max(have), color=color, alpha=0.08, lw=0)


def curve_style(i: int) -> tuple[str, str, float]:
    """Colour, marker and marker size of the i-th curve of a panel: shapes differ too, and
    earlier curves are drawn a little larger, so that equal curves stay visible."""
    return f"C{i % 10}", MARKERS[i % len(MARKERS)], max(3.5, 6.0 - 0.5 * i)


def draw_values(ax, line: Line, column: str, i: int, step: float | None, *,
                 scale: float = 1.0, ls: str = "-", kind: str = "") -> None:
    """Segments joining grid neighbours, filled/hollow markers, error bars over seeds."""
    pts = line.points
    if column not in pts:
        return
    y = pts[column].to_numpy(dtype=float) * scale
    ci = pts[f"{column}_ci"].to_numpy(dtype=float) * scale
    x = line.loads
    color, marker, ms = curve_style(i)
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


def fit_y(ax, values: list[float], *, log_ok: bool, floor: float | None = None) -> bool:
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
