"""Figures from a sweep's results file, redrawable without simulating (``icsim plot``).

Three figures, each as PNG and SVG, with one panel per traffic pattern (when the results hold
several) and one line per curve (labelled by whatever distinguishes the curves within a panel,
usually the routing algorithm, with its γ*):

``latency``
    Mean latency versus offered load, at sustained loads only, as in the OutFlank paper's
    Fig. 4: each line stops before the first saturated load (a sustained load above a saturated
    one is not drawn either — it is not below γ*).
``accepted``
    Accepted versus offered load, every run; saturated runs as hollow markers.
``derouted``
    Share of derouted packets versus offered load (Fig. 5 style): total, plus outflank and
    wraparound where non-zero; saturated runs hollow.

Sustained/saturated is judged with :mod:`icsim.experiments.pipeline.saturation` (window rule or finite-mode
1.2 × latency at γ = 0.10), per curve (``curve_hash``).  Only the Agg canvas is used; nothing
touches pyplot's global state.
"""

from __future__ import annotations

import io
import json
import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.saturation import analyse_rows, load_key

RESULTS_NAME = "results.csv"
FORMATS = ("png", "svg")
X_LABEL = "Offered load γ (1 = uniform-traffic bisection capacity)"
PANEL_COLUMN = "config.traffic.pattern"
DEROUTE_STYLES = {"derouted.total": ("-", "total"), "derouted.outflank": ("--", "outflank"),
                  "derouted.wraparound": (":", "wraparound"),
                  "derouted.orthant": ("-.", "orthant")}


# ---------------------------------------------------------------------------------- data
def read_results(path: str | Path) -> pd.DataFrame:
    """A sweep's results as a DataFrame (``path`` is the CSV or its directory).

    A truncated last line (an interrupted write) is ignored.
    """
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_NAME
    text = p.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    return pd.read_csv(io.StringIO(text))


def to_frame(data: Any) -> pd.DataFrame:
    """Rows (list of dicts), a DataFrame or a path, as a DataFrame."""
    if isinstance(data, pd.DataFrame):
        return data.copy()
    if isinstance(data, (str, Path)):
        return read_results(data)
    return pd.DataFrame(list(data))


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


@dataclass
class Line:
    """One curve as drawn: its panel, label, rows sorted by load and their verdicts."""

    panel: str
    label: str
    rows: pd.DataFrame
    sustained: np.ndarray
    gamma_star: float | None

    @property
    def loads(self) -> np.ndarray:
        return self.rows["offered_load"].to_numpy(dtype=float)

    def sustained_prefix(self) -> pd.DataFrame:
        """The rows up to (excluding) the first saturated load."""
        bad = np.flatnonzero(~self.sustained)
        return self.rows.iloc[: bad[0] if len(bad) else len(self.rows)]


def _curve_column(df: pd.DataFrame) -> pd.Series:
    if "curve_hash" in df:
        return df["curve_hash"].astype(str)
    cols = [c for c in df.columns if c.startswith("config.") and c != "config.traffic.load"]
    return df[cols].astype(str).agg("|".join, axis=1)


def curve_lines(data: Any) -> list[Line]:
    """Group results into drawable curves, judged sustained/saturated per SPEC §7."""
    df = to_frame(data)
    if df.empty:
        return []
    df = df.assign(_curve=_curve_column(df))
    config_cols = [c for c in df.columns if c.startswith("config.") and c != "config.traffic.load"]
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
            mode = first.get("mode")
            if not isinstance(mode, str):
                mode = first.get("config.run.mode", "window")
            result = analyse_rows(_records(cdf), mode)
            sustained = np.array([
                bool(result.verdicts.get(load_key(x)) and result.verdicts[load_key(x)].sustained)
                for x in cdf["offered_load"]])
            lines.append(Line(title, label, cdf.reset_index(drop=True), sustained,
                              result.gamma_star))
    return lines


def latency_series(data: Any) -> dict[str, list[tuple[str, np.ndarray, np.ndarray]]]:
    """What the latency figure draws: panel -> [(label, loads, mean latency in µs)].

    Only sustained loads below the first saturated one.
    """
    out: dict[str, list] = {}
    for line in curve_lines(data):
        pre = line.sustained_prefix()
        out.setdefault(line.panel, []).append(
            (line.label, pre["offered_load"].to_numpy(dtype=float),
             pre["latency_ns"].to_numpy(dtype=float) / 1000.0))
    return out


# ---------------------------------------------------------------------------------- figures
def _describe(df: pd.DataFrame) -> str:
    parts = []
    if "config.topology.dims" in df and df["config.topology.dims"].nunique() == 1:
        kind = df["config.topology.kind"].iloc[0] if "config.topology.kind" in df else "torus"
        parts.append(f"{_dims_text(df['config.topology.dims'].iloc[0])} {kind}")
    for col, fmt in ((PANEL_COLUMN, "{} traffic"), ("config.run.mode", "{} mode"),
                     ("config.traffic.message_packets", "{}-packet messages"),
                     ("config.seed", "seed {}")):
        if col in df and df[col].nunique() == 1:
            parts.append(fmt.format(df[col].iloc[0]))
    return ", ".join(parts)


def _figure(n_panels: int):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = min(max(n_panels, 1), 3)
    nrows = math.ceil(max(n_panels, 1) / ncols)
    fig = Figure(figsize=(5.2 * ncols, 4.0 * nrows + 0.7), layout="constrained")
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
    return f"{line.label} (γ* = {line.gamma_star:.2f})" if line.gamma_star is not None \
        else f"{line.label} (no sustained load)"


def _suptitle(fig, title: str, subtitle: str, n_panels: int) -> None:
    width = 60 * min(max(n_panels, 1), 3)
    fig.suptitle(title + ("\n" + textwrap.fill(subtitle, width) if subtitle else ""))


def _xlim(ax, plines: list[Line]) -> None:
    """Every panel spans its whole load range, saturated runs included, from zero."""
    top = max(float(np.nanmax(line.loads)) for line in plines)
    ax.set_xlim(0, top * 1.04)


def _save(fig, out_dir: Path, stem: str, formats: Iterable[str]) -> list[Path]:
    paths = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        fig.savefig(path, dpi=130 if fmt == "png" else None)
        paths.append(path)
        fig.set_layout_engine("none")       # laid out by the first save; keep it (and its cost)
    return paths


def plot_results(data: Any, out_dir: str | Path, formats: Iterable[str] = FORMATS,
                 prefix: str = "") -> list[Path]:
    """Draw the latency, accepted-load and derouting figures; return the files written.

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
    """
    df = to_frame(data)
    lines = curve_lines(df)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not lines:
        return []
    formats = tuple(formats)
    panels = _by_panel(lines)
    subtitle = _describe(df)
    files: list[Path] = []

    # latency at sustained loads
    fig, axes = _figure(len(panels))
    for ax, (panel, plines) in zip(axes, panels.items()):
        for i, line in enumerate(plines):
            pre = line.sustained_prefix()
            ax.plot(pre["offered_load"], pre["latency_ns"] / 1000.0, marker="o", ms=4,
                    color=f"C{i}", label=_gstar(line))
        ax.set_title(panel)
        ax.set_xlabel(X_LABEL)
        ax.set_ylabel("Mean packet latency (µs)")
        _xlim(ax, plines)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    _suptitle(fig, "Mean latency vs offered load (sustained loads only)", subtitle, len(panels))
    files += _save(fig, out_dir, prefix + "latency", formats)

    # accepted vs offered
    fig, axes = _figure(len(panels))
    for ax, (panel, plines) in zip(axes, panels.items()):
        top = max(float(np.nanmax(line.loads)) for line in plines)
        ax.plot([0, top], [0, top], ls="--", color="0.6", lw=1, label="accepted = offered")
        for i, line in enumerate(plines):
            acc = line.rows["accepted_load"].to_numpy(dtype=float)
            ax.plot(line.loads, acc, color=f"C{i}", lw=1.2, label=_gstar(line))
            ax.plot(line.loads[line.sustained], acc[line.sustained], "o", ms=4, color=f"C{i}")
            ax.plot(line.loads[~line.sustained], acc[~line.sustained], "o", ms=5,
                    mfc="none", color=f"C{i}")
        ax.plot([], [], "o", mfc="none", color="0.3", label="saturated run")
        ax.set_title(panel)
        ax.set_xlabel(X_LABEL)
        ax.set_ylabel("Accepted load (γ units)")
        _xlim(ax, plines)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    _suptitle(fig, "Accepted vs offered load", subtitle, len(panels))
    files += _save(fig, out_dir, prefix + "accepted", formats)

    # derouted share
    if "derouted.total" in df:
        fig, axes = _figure(len(panels))
        for ax, (panel, plines) in zip(axes, panels.items()):
            for i, line in enumerate(plines):
                for col, (style, kind) in DEROUTE_STYLES.items():
                    if col not in line.rows:
                        continue
                    vals = line.rows[col].to_numpy(dtype=float)
                    if col != "derouted.total" and not np.nansum(vals):
                        continue
                    ax.plot(line.loads, vals, ls=style, color=f"C{i}", lw=1.2,
                            label=f"{line.label} {kind}")
                    ax.plot(line.loads[~line.sustained], vals[~line.sustained], "o", ms=5,
                            mfc="none", color=f"C{i}")
            ax.plot([], [], "o", mfc="none", color="0.3", label="saturated run")
            ax.set_title(panel)
            ax.set_xlabel(X_LABEL)
            ax.set_ylabel("Derouted packets (fraction of measured)")
            _xlim(ax, plines)
            top = max(0.05, ax.get_ylim()[1])
            ax.set_ylim(bottom=-0.02 * top, top=top)  # a line at zero stays visible
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        _suptitle(fig, "Derouted packets vs offered load", subtitle, len(panels))
        files += _save(fig, out_dir, prefix + "derouted", formats)
    return files
