"""A sweep's results as drawable curves: read back, grouped, judged (the figures' data).

:func:`read_results` reads a ``results.csv`` (checking every row's values as the sweep does,
:func:`~icsim.experiments.pipeline.rows.row_problem`); :func:`curve_lines` groups its rows into
curves and judges them.  Runs belong to one curve when their configs are equal except for the
load and the seed (compared by their non-default values, as the sweep's point keys,
:func:`~icsim.experiments.pipeline.rows.curve_hash`, so results written under an older config
schema still group right).  Sustained/saturated is judged with
:mod:`icsim.experiments.pipeline.saturation` (window rule or finite-mode 1.2 × latency at
γ = 0.10), per curve and seed.  With several seeds per curve each point is the mean over the
seeds with its 95 % Student-t confidence interval.  Nothing here draws: :mod:`.plots` does.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.confidence import mean_ci
from icsim.experiments.pipeline.results_file import RESULTS_NAME
from icsim.experiments.pipeline.rows import (UNIT_FIELD, config_of_row, curve_hash, load_unit,
                                             row_problem)
from icsim.experiments.pipeline.saturation import analyse_rows, load_key
from icsim.model.input_files import InputFileError, read_text

#: the largest results file read (the committed k = 16 Table 2 runs take 356 KB)
MAX_RESULTS_BYTES = 1 << 30
#: the columns every figure reads (the others, such as the derouted shares, are drawn if present)
NEEDED_COLUMNS = ("offered_load", "latency_ns", "accepted_load")
PANEL_COLUMN = "config.traffic.pattern"


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
    for row, record in enumerate(df.to_dict("records"), 1):
        problem = row_problem(record)
        if problem is not None:
            raise InputFileError(name, f"row {row}: {problem}")
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
    return fold_rechecks(df)


def fold_rechecks(df: pd.DataFrame) -> pd.DataFrame:
    """Rows as curves see them: a recheck (role ``recheck``: a run sustained above its exact
    bound, run again with a window :data:`~icsim.experiments.pipeline.sweep.GUARD_WINDOW` times
    as long; docs/model.md §8.1) is no point of its own.  The run it checks (same curve, seed
    and load) takes its verdict: saturated by the longer window's rule, or, still sustained
    there, a model error as the sweep calls it."""
    if "role" not in df or not (df["role"].astype(str) == "recheck").any():
        return df
    is_check = df["role"].astype(str) == "recheck"
    rest = df[~is_check].copy()
    seeds, loads = seed_column(rest), rest["offered_load"].map(load_key)
    for _, r in df[is_check].iterrows():
        same = ((rest["curve"] == r["curve"]) & (loads == load_key(r["offered_load"]))
                & (seeds == seed_column(pd.DataFrame([r])).iloc[0]))
        window = number(r.get("config.run.measure_us"))
        longer = f"the recheck's {window:g} µs window" if math.isfinite(window) else "a recheck"
        reason = (f"{r['saturation_reason']} (in {longer})" if bool(r.get("saturated")) else
                  f"model error: sustained above its exact bound, also in {longer}")
        if "saturated" in rest:
            rest["saturated"] = rest["saturated"].astype(object)
        rest.loc[same, "saturated"] = True
        rest.loc[same, "saturation_reason"] = reason
    return rest.reset_index(drop=True)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in df.to_dict("records")]


def dims_text(value: Any) -> str:
    try:
        dims = json.loads(value) if isinstance(value, str) else value
        return "x".join(str(int(d)) for d in dims)
    except (TypeError, ValueError):
        return str(value)


def _short(column: str) -> str:
    return column.split(".")[-1]


def _value_text(column: str, value: Any) -> str:
    if column == "config.topology.dims":
        return dims_text(value)
    return str(value)


def number(value: Any) -> float:
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
    lower_bounds : dict
        Seed -> whether that seed's γ* is only a lower bound (no saturated grid load above it).
    baseline_latency_ns : float or None
        Finite mode: the mean over seeds of the latency at γ = 0.10 (the 1.2× rule's basis).
    unit : float or None
        The offered load at γ = 1 in packets per terminal per link time (docs/model.md §6):
        from the runs' records, or from the topology of their config (``None``: neither).
    """

    panel: str
    label: str
    mode: str
    rows: pd.DataFrame
    points: pd.DataFrame
    gamma_stars: dict[Any, float | None] = field(default_factory=dict)
    baseline_latency_ns: float | None = None
    lower_bounds: dict[Any, bool] = field(default_factory=dict)
    unit: float | None = None

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
    def lower_bound(self) -> bool:
        """Whether γ* (over seeds: its mean) is only a lower bound: some seed's is."""
        return any(self.lower_bounds.get(s, False) for s, g in self.gamma_stars.items()
                   if g is not None)

    @property
    def n_seeds(self) -> int:
        return len(self.gamma_stars)

    @property
    def exact_bound(self) -> float | None:
        """The exact bound of the curve's routing and traffic where it is cheap to know
        (:mod:`.bounds`: a deterministic routing on a torus), else ``None``."""
        if "_exact" not in self.__dict__:
            from icsim.experiments.pipeline.bounds import exact_bound

            first = _records(self.rows.head(1))
            self.__dict__["_exact"] = exact_bound(config_of_row(first[0])) if first and any(
                c.startswith("config.") for c in first[0]) else None
        return self.__dict__["_exact"]


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


def seed_column(df: pd.DataFrame) -> pd.Series:
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


#: the columns whose mean over seeds :attr:`Line.points` has, besides every ``derouted.*``
VALUE_COLUMNS = ("latency_ns", "accepted_load")


def _points(rows: pd.DataFrame, verdicts: dict[str, dict[float, Any]]) -> pd.DataFrame:
    values = [*VALUE_COLUMNS, *(c for c in rows.columns if c.startswith("derouted."))]
    out = []
    for load, g in rows.groupby(rows["offered_load"].map(load_key), sort=True):
        seeds = g["_seed"].tolist()
        judged = [verdicts[s].get(load) for s in seeds]
        good = [v is not None and v.sustained for v in judged]
        rec: dict[str, Any] = {"offered_load": float(load), "seeds": len(g),
                               "sustained": all(good), "saturated_seeds": good.count(False)}
        for col in values:
            if col in g:
                mean, half, _ = mean_ci(g[col].map(number))
                rec[col], rec[f"{col}_ci"] = mean, half
        out.append(rec)
    return pd.DataFrame(out)


def curve_lines(data: Any) -> list[Line]:
    """Group results into drawable curves, judged sustained/saturated per seed
    (docs/model.md §7)."""
    df = to_frame(data)
    if df.empty:
        return []
    df = df.assign(_curve=_line_keys(df), _seed=seed_column(df))
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
            title = f"{panel} on {dims_text(pdf['config.topology.dims'].iloc[0])}"
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
            verdicts, stars, bounds, baselines = {}, {}, {}, []
            for seed, sdf in cdf.groupby("_seed", sort=False):
                result = analyse_rows(_records(sdf), mode)
                verdicts[seed] = result.verdicts
                stars[seed] = result.gamma_star
                bounds[seed] = result.gamma_star_lower_bound
                if result.baseline_latency_ns is not None:
                    baselines.append(result.baseline_latency_ns)
            lines.append(Line(title, label, mode, cdf.reset_index(drop=True),
                              _points(cdf, verdicts), stars,
                              float(np.mean(baselines)) if baselines else None, bounds,
                              load_unit(_records(cdf.head(1)) if UNIT_FIELD not in cdf
                                        else _records(cdf), from_config=True)))
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


def grid_loads(lines: list[Line]) -> np.ndarray:
    """Every grid load some curve of a figure ran, sorted (refinement runs are off the grid)."""
    loads: set[float] = set()
    for line in lines:
        rows = line.rows
        if "role" in rows:
            rows = rows[rows["role"].fillna("grid").astype(str) == "grid"]
        loads |= {load_key(x) for x in rows["offered_load"]}
    return np.array(sorted(loads), dtype=float)


def joined(loads: np.ndarray, grid: np.ndarray, step: float | None) -> np.ndarray:
    """Which consecutive loads of a curve a line may join (``len(loads) - 1`` booleans): two
    grid loads when the second is the next grid load some curve ran after the first and their
    gap is no wider than the grid's step there (the smaller of the next two gaps of that grid):
    a bisection's far-apart runs stay separate points, and a grid of two steps (0.01 to 0.05,
    then 0.05 to 1) is joined throughout; a load off the grid (a refinement) within one
    ``step`` of its neighbour."""
    out = np.zeros(max(len(loads) - 1, 0), dtype=bool)
    keys = [load_key(x) for x in grid]
    where = {k: i for i, k in enumerate(keys)}
    gaps = np.diff(grid)
    for i in range(len(out)):
        a, b = load_key(loads[i]), load_key(loads[i + 1])
        ia, ib = where.get(a), where.get(b)
        if ia is None or ib is None:
            out[i] = step is not None and b - a <= step * (1 + 1e-6)
            continue
        local = gaps[ia:ia + 2]
        out[i] = ib == ia + 1 and len(local) > 0 and b - a <= float(local.min()) * (1 + 1e-6)
    return out


def latency_series(data: Any) -> dict[str, list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]]:
    """What the latency figure draws: panel -> [(label, loads, mean latency in µs, sustained)],
    every load that was run (NaN latency where no run of the load measured one)."""
    out: dict[str, list] = {}
    for line in curve_lines(data):
        out.setdefault(line.panel, []).append(
            (line.label, line.loads, line.points["latency_ns"].to_numpy(dtype=float) / 1000.0,
             line.sustained))
    return out

