"""Figures from a sweep's results file, redrawable without simulating (``icsim plot``).

Three figures, each as PNG and SVG (the paper style: PDF, SVG and PNG), with one panel per
traffic pattern (when the results hold several) and one line per curve (labelled by whatever
distinguishes the curves within a panel, usually the routing algorithm, with its γ*):

``latency``
    Mean latency versus offered load (the OutFlank paper's Fig. 4), every run: sustained loads
    as filled markers joined by lines, saturated ones hollow and never joined (a saturated
    run's mean covers only the packets it delivered: a line into it would read as a curve
    that falls), runs that measured no latency (an error, nothing delivered) as hollow
    triangles on the top edge.  A dashed vertical line marks each curve's γ* (the paper style:
    a tick on the top edge); in finite mode a horizontal line marks the 1.2 × (latency at
    γ = 0.10) threshold of the rule.  The y-axis is fitted to the data, logarithmic in every
    panel when the latencies span more than a factor of
    :data:`~icsim.experiments.pipeline.figure_layout.LOG_RATIO` in any (a saturated
    window-mode run can be 100 × slower).
``accepted``
    Accepted versus offered load, every run; saturated runs hollow; γ* marked.
``derouted``
    Share of derouted packets versus offered load (Fig. 5 style): total, plus each deroute kind
    where non-zero, in the line style its algorithm declares (``deroute_styles``: OFR's
    outflank and wraparound, POR's orthant, a plug-in's own); saturated runs hollow.

The load axis is γ, with what γ = 1 is in packets per terminal per link time (docs/model.md
§6).  Points are drawn only where runs exist, and a line joins two of them only when they are
sustained neighbours on the load grid (no more than one grid step apart; the step is the
smallest gap between two grid loads of one curve in the file): a bisection search's far-apart
runs stay separate points, not a line "measured" between them.  A curve that coincides with
an earlier one of its panel is named in the legend (``ofr (= abr)``) and, in the paper style,
drawn a few points aside (:mod:`.figure_style`).

With several seeds per curve (``icsim sweep --seeds N``) each point is the mean over the seeds
with its 95 % Student-t confidence interval as an error bar; it is drawn hollow when any seed
saturated at that load; γ* is judged per seed (its mean is marked, the range shaded).

Sustained/saturated is judged per curve and seed, and runs are grouped into curves, by
:mod:`.lines` (the figures' data); the layout is :mod:`.figure_layout`'s, the look
:mod:`.figure_style`'s.  The functions ending in ``_figure`` return matplotlib Figures (Agg
canvas; nothing touches pyplot's global state); :func:`plot_results` writes them.  A γ* that
is only a lower bound (every grid load up to the top sustained) is labelled "γ* ≥ ...".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from icsim.experiments.pipeline.figure_layout import (by_panel, coincident, curve_style,
                                                      describe, dodges, draw_values, fit_x,
                                                      fit_y, gamma_label, gamma_offsets,
                                                      key_legend, legend_rows, mark_gamma_star,
                                                      new_figure, panel_legend, set_titles,
                                                      style_index, wants_log)
from icsim.experiments.pipeline.figure_style import FigureStyle, drawing, style_of
from icsim.experiments.pipeline.lines import (Line, curve_lines, grid_loads, grid_step, number,
                                             to_frame)
from icsim.experiments.pipeline.outputs import Outputs
from icsim.experiments.pipeline.saturation import BASELINE_LOAD, LATENCY_FACTOR
from icsim.routing.registry import ROUTING

FORMATS = ("png", "svg")
#: what γ = 1 is on a torus, a mesh or a graph (docs/model.md §6)
GAMMA_ONE = "the uniform bisection bound"
#: what γ = 1 is on a dragonfly, a fat tree or a HyperX
GAMMA_ONE_TERMINAL = "a terminal's link bandwidth"
X_LABEL = f"Offered load γ (1 = {GAMMA_ONE})"
X_LABEL_TERMINAL = f"Offered load γ (1 = {GAMMA_ONE_TERMINAL})"
#: the topology kinds whose γ is per terminal link
TERMINAL_KINDS = frozenset({"dragonfly", "fat_tree", "hyperx"})


def _packets(unit: float) -> str:
    return "one packet" if abs(unit - 1.0) < 1e-9 else f"{unit:.3g} packets"


def x_label(lines: Any, style: FigureStyle | None = None) -> str:
    """The load axis's label: γ, what γ = 1 is on the lines' topologies, and the same load in
    packets per terminal per link time (docs/model.md §6), the one unit for every family."""
    style = style_of(style)
    kinds: set = set()
    units: set = set()
    for line in lines:
        if "config.topology.kind" in line.rows:
            kinds |= set(line.rows["config.topology.kind"].dropna())
        if line.unit is not None:
            units.add(round(line.unit, 9))
    one = GAMMA_ONE_TERMINAL if kinds and kinds <= TERMINAL_KINDS else GAMMA_ONE
    if len(units) != 1:
        tail = ("" if not units else
                "; in packets per terminal per link time: × " + " or × ".join(
                    f"{u:.3g}" for u in sorted(units)))
        return f"Offered load γ (1 = {one}{tail})"
    unit = units.pop()
    if style.titles:
        return (f"Offered load γ (1 = {one})\n= γ × {unit:.3g} packets per terminal per link "
                f"time" if abs(unit - 1.0) > 1e-9 else
                f"Offered load γ (1 = {one})\n= packets per terminal per link time")
    if abs(unit - 1.0) < 1e-9:
        return "Offered load γ (packets / terminal / link time)"
    return f"Offered load γ (1 = {_packets(unit)} / terminal / link time)"
#: line styles of deroute kinds no algorithm gives one for, in turn
SPARE_STYLES = ("--", ":", "-.", (0, (3, 1, 1, 1)), (0, (5, 2)))


def deroute_styles(columns) -> dict[str, tuple[Any, str]]:
    """``{"derouted.total": ("-", "total"), "derouted.<kind>": (style, kind), ...}`` for the
    ``derouted.*`` columns present: the style the registered algorithm that declares the kind
    gives it (``Routing.deroute_styles``), else the next spare one.

    >>> deroute_styles(["derouted.total", "derouted.wraparound", "derouted.valiant"])
    {'derouted.total': ('-', 'total'), 'derouted.valiant': ('--', 'valiant'), 'derouted.wraparound': (':', 'wraparound')}
    """
    declared = {kind: style for cls in ROUTING.values()
                for kind, style in cls.deroute_styles.items()}
    kinds = sorted(c[len("derouted."):] for c in columns
                   if c.startswith("derouted.") and c != "derouted.total"
                   and not c.endswith("_ci"))
    spare = iter(s for s in SPARE_STYLES if s not in {declared[k] for k in kinds
                                                        if k in declared})
    out = {"derouted.total": ("-", "total")}
    for kind in kinds:
        out[f"derouted.{kind}"] = (declared[kind] if kind in declared
                                   else next(spare, "--"), kind)
    return out
RULE_TEXT = {
    "finite": (f"sustained: latency ≤ {LATENCY_FACTOR:g} × the latency at γ = "
               f"{BASELINE_LOAD:.2f} (dotted)"),
    "window": ("sustained: the run's own test (accepted ≥ 0.95 × offered, every measured "
               "packet delivered, source queues not growing)"),
}
GAMMA_TEXT = "γ* (dashed): the largest load such that it and every lower load are sustained"


def _lines_of(data: Any, lines: list[Line] | None):
    df = to_frame(data)
    return df, (curve_lines(df) if lines is None else lines)


def latency_figure(data: Any, lines: list[Line] | None = None, style: str | None = None):
    """Mean latency versus offered load: every run, γ* and its rule marked (module docstring).

    ``data``: rows, a DataFrame or a results path; ``style``: ``"default"`` or ``"paper"``
    (:mod:`.figure_style`); returns a matplotlib Figure (``None`` if there is nothing to
    draw)."""
    st = style_of(style)
    df, lines = _lines_of(data, lines)
    if not lines:
        return None
    with drawing(st):
        return _latency(df, lines, st)


def _latency(df, lines: list[Line], st: FigureStyle):
    from matplotlib.transforms import blended_transform_factory

    step, grid = grid_step(lines), grid_loads(lines)
    panels = by_panel(lines)
    index = style_index(lines)
    # one scale (linear or logarithmic) for every panel of the figure
    every = [v / 1e3 for line in lines for v in line.points["latency_ns"].to_numpy(float)]
    log = wants_log(every)
    same = {p: coincident(plines, "latency_ns", log) for p, plines in panels.items()}
    fig, axes = new_figure(len(panels), legend_rows(
        [[gamma_label(line, same[p], st) for line in pl] for p, pl in panels.items()], st), st)
    any_failed = False
    for ax, (panel, plines) in zip(axes, panels.items()):
        values = []
        shift = dodges(plines, same[panel], st)
        ticks = gamma_offsets(plines, st)
        for line in plines:
            i = index[line.label]
            color, marker, ms = curve_style(i, st)
            draw_values(ax, line, "latency_ns", i, step, scale=1e-3, style=st,
                        dx_pt=shift.get(line.label, 0.0), grid=grid)
            pts = line.points
            lat, ci = pts["latency_ns"].to_numpy(float), pts["latency_ns_ci"].to_numpy(float)
            values += list(lat / 1e3) + list((lat + np.nan_to_num(ci)) / 1e3) \
                + list((lat - np.nan_to_num(ci)) / 1e3)
            if line.mode == "finite" and line.baseline_latency_ns is not None:
                limit = LATENCY_FACTOR * line.baseline_latency_ns / 1e3
                if st.dodge:
                    # the curve's own dashes and marker, so that each threshold is told apart
                    ax.axhline(limit, color=color, ls=st.dash(i), lw=0.7, alpha=0.9,
                               gid=f"threshold:{line.label}")
                    ax.plot([1.0], [limit], marker=marker, ms=ms * 0.8, color=color,
                            transform=blended_transform_factory(ax.transAxes, ax.transData),
                            clip_on=False, ls="none")
                else:
                    ax.axhline(limit, color=color, ls=":", lw=1.2,
                               gid=f"threshold:{line.label}")
                values.append(limit)
            missing = ~np.isfinite(lat)
            if missing.any():
                any_failed = True
                top = blended_transform_factory(ax.transData, ax.transAxes)
                ax.plot(line.loads[missing], np.full(missing.sum(), 0.97), "^", ms=6,
                        mfc="white", mew=1.3, color=color, transform=top, clip_on=False,
                        gid=f"failed:{line.label}")
            mark_gamma_star(ax, line, color, st, marker, ticks.get(line.label, 0.0))
            ax.plot([], [], ls=st.dash(i), marker=marker, color=color, ms=ms,
                    lw=st.line_width, label=gamma_label(line, same[panel], st))
        log_here = fit_y(ax, values, log_ok=True, log=log)
        if not np.isfinite(values).any():
            ax.text(0.5, 0.5, "no run measured a latency", transform=ax.transAxes,
                    ha="center", va="center", color="0.4")
            ax.set_yticks([])
        ax.set_xlabel(x_label(plines, st))
        ax.set_ylabel("Mean packet latency (µs" + (", log scale)" if log_here else ")"))
        fit_x(ax, plines, step)
        ax.grid(alpha=0.3)
        panel_legend(ax, st)
    modes = sorted({line.mode for line in lines})
    seeds = any(line.n_seeds > 1 for line in lines)
    key_legend(fig, "finite" in modes, seeds, any_failed, style=st)
    set_titles(fig, axes, list(panels), "Mean packet latency vs offered load",
               [describe(df), GAMMA_TEXT, *(RULE_TEXT.get(m, "") for m in modes)], st)
    return fig


def accepted_figure(data: Any, lines: list[Line] | None = None, style: str | None = None):
    """Accepted versus offered load: every run, saturated ones hollow, γ* marked."""
    st = style_of(style)
    df, lines = _lines_of(data, lines)
    if not lines:
        return None
    with drawing(st):
        return _accepted(df, lines, st)


def _accepted(df, lines: list[Line], st: FigureStyle):
    step, grid = grid_step(lines), grid_loads(lines)
    panels = by_panel(lines)
    index = style_index(lines)
    same = {p: coincident(plines, "accepted_load") for p, plines in panels.items()}
    fig, axes = new_figure(len(panels), legend_rows(
        [["accepted = offered"] + [gamma_label(line, same[p], st) for line in pl]
         for p, pl in panels.items()], st), st)
    for ax, (panel, plines) in zip(axes, panels.items()):
        fit_x(ax, plines, step)
        x0, x1 = ax.get_xlim()
        ax.plot([x0, x1], [x0, x1], ls="--", color="0.6", lw=1, label="accepted = offered",
                gid="diagonal")
        values = []
        shift = dodges(plines, same[panel], st)
        ticks = gamma_offsets(plines, st)
        for line in plines:
            i = index[line.label]
            color, marker, ms = curve_style(i, st)
            draw_values(ax, line, "accepted_load", i, step, style=st,
                        dx_pt=shift.get(line.label, 0.0), grid=grid)
            values += list(line.points["accepted_load"].to_numpy(float))
            mark_gamma_star(ax, line, color, st, marker, ticks.get(line.label, 0.0))
            ax.plot([], [], ls=st.dash(i), marker=marker, color=color, ms=ms,
                    lw=st.line_width, label=gamma_label(line, same[panel], st))
        loads = np.concatenate([line.loads for line in plines])
        fit_y(ax, values + list(loads), log_ok=False)
        ax.set_xlim(x0, x1)
        ax.set_xlabel(x_label(plines, st))
        ax.set_ylabel("Accepted load (γ units)")
        ax.grid(alpha=0.3)
        panel_legend(ax, st)
    seeds = any(line.n_seeds > 1 for line in lines)
    key_legend(fig, False, seeds, False, style=st)
    modes = sorted({line.mode for line in lines})
    set_titles(fig, axes, list(panels), "Accepted vs offered load",
               [describe(df), GAMMA_TEXT, *(RULE_TEXT.get(m, "") for m in modes)], st)
    return fig


def derouted_figure(data: Any, lines: list[Line] | None = None, style: str | None = None):
    """Share of derouted packets versus offered load (``None`` without derouting columns)."""
    st = style_of(style)
    df = to_frame(data)
    if not any(c.startswith("derouted.") and c != "derouted.total" and not c.endswith("_ci")
               for c in df):
        return None         # no algorithm of the sweep can deroute (it declares no kind)
    lines = curve_lines(df) if lines is None else lines
    if not lines:
        return None
    with drawing(st):
        return _derouted(df, lines, st)


def _derouted(df, lines: list[Line], st: FigureStyle):
    step, grid = grid_step(lines), grid_loads(lines)
    panels = by_panel(lines)
    index = style_index(lines)
    styles = deroute_styles(df.columns)
    kinds = [c for c in styles if c in df and (c == "derouted.total"
                                               or np.nansum(df[c].map(number)))]
    fig, axes = new_figure(len(panels), legend_rows(
        [[f"{line.label} {styles[c][1]} (= {line.label})" for line in p for c in kinds]
         for p in panels.values()], st), st)
    for ax, (panel, plines) in zip(axes, panels.items()):
        values = []
        # every (curve, kind) drawn as a curve of its own: ones that coincide (two algorithms'
        # zero lines) named and, in the paper style, set apart
        drawn = [(line, col) for line in plines for col in kinds if col in line.points
                 and (col == "derouted.total"
                      or np.nansum(line.points[col].to_numpy(dtype=float)))]
        named = [Line(line.panel, f"{line.label} {styles[col][1]}", line.mode, line.rows,
                      line.points.assign(_value=line.points[col]), line.gamma_stars)
                 for line, col in drawn]
        same = coincident(named, "_value")
        shift = dodges(named, same, st)
        for (line, col), as_named in zip(drawn, named):
            style, kind = styles[col]
            i = index[line.label]
            draw_values(ax, line, col, i, step, ls=style, kind=kind, style=st,
                        dx_pt=shift.get(as_named.label, 0.0), grid=grid)
            values += list(line.points[col].to_numpy(dtype=float))
            color, marker, ms = curve_style(i, st)
            label = as_named.label + (f" (= {same[as_named.label]})"
                                      if as_named.label in same else "")
            ax.plot([], [], ls=style, marker=marker, ms=ms, color=color, lw=st.line_width,
                    label=label)
        fit_x(ax, plines, step)
        top = max(0.05, float(np.nanmax(values)) * 1.12 if np.isfinite(values).any() else 0)
        ax.set_ylim(bottom=-0.02 * top, top=top)           # a line at zero stays visible
        ax.set_xlabel(x_label(plines, st))
        ax.set_ylabel("Derouted packets (fraction of measured)")
        ax.grid(alpha=0.3)
        panel_legend(ax, st)
    seeds = any(line.n_seeds > 1 for line in lines)
    key_legend(fig, False, seeds, False, gamma=False, style=st)
    set_titles(fig, axes, list(panels), "Derouted packets vs offered load", [describe(df)], st)
    return fig


FIGURES = {"latency": latency_figure, "accepted": accepted_figure, "derouted": derouted_figure}


def _save(fig, out_dir: Path, stem: str, formats: Iterable[str], outputs: Outputs,
          style: FigureStyle) -> list[Path]:
    paths = []
    with drawing(style):                # the style's settings read at writing (PDF fonts)
        for fmt in formats:
            path = out_dir / f"{stem}.{fmt}"
            outputs.figure(fig, path)
            paths.append(path)
            fig.set_layout_engine("none")   # laid out by the first save; keep it (and its cost)
    return paths


def plot_results(data: Any, out_dir: str | Path, formats: Iterable[str] | None = None,
                 prefix: str = "", outputs: Outputs | None = None,
                 style: str | None = None) -> list[Path]:
    """Draw the latency, accepted-load and derouting figures; return their paths.

    Parameters
    ----------
    data : list of dict, DataFrame or path
        Rows of a results file (or the file / its directory).
    out_dir : path
        Where ``latency.png``, ``latency.svg``, ``accepted.*``, ``derouted.*`` go.
    formats : iterable of str, optional
        File formats (``png``, ``svg``, ``pdf`` ...); default the style's (``png``, ``svg``;
        paper: ``pdf``, ``svg``, ``png``).
    prefix : str
        Prepended to the file stems.
    outputs : Outputs, optional
        Writes the files (unchanged ones are not touched, committed ones kept without
        ``force``: :mod:`icsim.experiments.pipeline.outputs`); a new one by default.
    style : {"default", "paper"}, optional
        How the figures look (:mod:`.figure_style`; default: the one in use).
    """
    st = style_of(style)
    df = to_frame(data)
    lines = curve_lines(df)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not lines:
        return []
    outputs = outputs if outputs is not None else Outputs()
    formats = tuple(formats) if formats is not None else st.formats
    files: list[Path] = []
    for stem, draw in FIGURES.items():
        fig = draw(df, lines, st.name)
        if fig is not None:
            files += _save(fig, out_dir, prefix + stem, formats, outputs, st)
    return files
