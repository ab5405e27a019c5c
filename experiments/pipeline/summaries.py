"""What a sweep says at its end: γ* per curve, every run's verdict, the spread over seeds.

``gamma_star.csv``
    One row per curve (per curve and seed with several seeds, with the spread of γ* over the
    seeds): γ* (and, for runs that record the offered load in packets per terminal per link
    time, γ* in that unit: docs/model.md §6), refined γ*, the first saturated load and why.
    When a curve's γ* is only a lower bound — every load up to the top of its grid was
    sustained, or its search did not finish —
    the file has a ``gamma_star_lower_bound`` column (True on those curves), and the printed
    summary says ``≥0.8``.
``verdicts.csv``
    Every run judged sustained or saturated by its curve's (and seed's) rule.
``load_summary.csv``
    With several seeds: per curve and load, the seeds that ran and sustained it and the mean
    and 95 % confidence half-width of latency and accepted load.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterable

from icsim.experiments.pipeline.confidence import mean_ci
from icsim.experiments.pipeline.curves import CurveOutcome
from icsim.experiments.pipeline.outputs import Outputs
from icsim.experiments.pipeline.results_file import cell_text
from icsim.experiments.pipeline.rows import UNIT_FIELD, cell, load_unit
from icsim.experiments.pipeline.saturation import as_float, bound_text, load_key, sustained_above

SUMMARY_NAME = "gamma_star.csv"
VERDICTS_NAME = "verdicts.csv"
LOAD_SUMMARY_NAME = "load_summary.csv"

SUMMARY_COLUMNS = ("curve", "mode", "gamma_star", "gamma_star_refined", "first_saturated",
                   "first_saturated_reason", "complete", "baseline_latency_ns", "points",
                   "curve_hash")
#: gamma_star.csv of a sweep with several seeds: the spread of γ* over the seeds of the curve
SPREAD_COLUMNS = ("seeds", "gamma_star_mean", "gamma_star_sd", "gamma_star_min",
                  "gamma_star_max")
#: gamma_star.csv of a sweep with a curve whose γ* is a lower bound, after ``gamma_star``
BOUND_COLUMN = "gamma_star_lower_bound"
LOAD_SUMMARY_COLUMNS = ("curve", "offered_load", "seeds", "sustained_seeds",
                        "latency_ns_mean", "latency_ns_ci95", "accepted_load_mean",
                        "accepted_load_ci95")


#: gamma_star.csv's γ* in packets per terminal per link time, after ``gamma_star`` (for runs
#: that record the offered load in that unit, docs/model.md §6)
UNIT_STAR_COLUMN = "gamma_star_packets_per_terminal_link_time"


def in_unit(value: Any, unit: float | None) -> float | None:
    """A load in γ units as packets per terminal per link time (``None`` without one)."""
    x = as_float(value)
    return None if x is None or unit is None else round(x * unit, 9)


def _groups(outcomes: list[CurveOutcome]) -> dict[str, list[CurveOutcome]]:
    """Outcomes by curve label: the seeds of one curve together."""
    groups: dict[str, list[CurveOutcome]] = {}
    for o in outcomes:
        groups.setdefault(o.curve.label, []).append(o)
    return groups


def _multi_seed(outcomes: list[CurveOutcome]) -> bool:
    return any(o.curve.seed is not None for o in outcomes)


def gamma_star_spread(group: list[CurveOutcome]) -> dict[str, Any]:
    """Seeds, mean, sample standard deviation, min and max of the seeds' γ* (the seeds without
    a sustained load count in ``seeds`` but not in the statistics)."""
    stars = [o.result.gamma_star for o in group if o.result.gamma_star is not None]
    out: dict[str, Any] = {"seeds": len(group), "gamma_star_mean": None, "gamma_star_sd": None,
                           "gamma_star_min": None, "gamma_star_max": None}
    if stars:
        mean = sum(stars) / len(stars)
        out.update(gamma_star_mean=round(mean, 9), gamma_star_min=min(stars),
                   gamma_star_max=max(stars))
        if len(stars) > 1:
            var = sum((x - mean) ** 2 for x in stars) / (len(stars) - 1)
            out["gamma_star_sd"] = round(var ** 0.5, 9)
    return out


def summary_rows(outcomes: list[CurveOutcome]) -> list[dict[str, Any]]:
    """One dict per curve (and seed): its varied parameters and its saturation verdict; with
    several seeds also the spread of γ* over the curve's seeds (:func:`gamma_star_spread`)."""
    spread = {label: gamma_star_spread(g) for label, g in _groups(outcomes).items()}
    rows = []
    for o in outcomes:
        r = o.result
        row = {"curve": o.curve.label, **{k: cell(v) for k, v in o.curve.params.items()},
               "mode": o.mode, "gamma_star": r.gamma_star,
               UNIT_STAR_COLUMN: in_unit(r.gamma_star, load_unit(o.rows)),
               BOUND_COLUMN: r.gamma_star_lower_bound,
               "gamma_star_refined": r.gamma_star_refined,
               "first_saturated": r.first_saturated,
               "first_saturated_reason": r.first_saturated_reason, "complete": r.complete,
               "baseline_latency_ns": r.baseline_latency_ns, "points": len(o.rows),
               "curve_hash": o.rows[0]["curve_hash"] if o.rows else ""}
        if o.curve.seed is not None:
            row.update(seed=o.curve.seed, **spread[o.curve.label])
        rows.append(row)
    return rows


def _csv_text(columns: list[str], rows: Iterable[Iterable[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([cell_text(x) for x in r])
    return buf.getvalue()


def write_summary(outcomes: list[CurveOutcome], path: Path,
                  outputs: Outputs | None = None) -> Path:
    """Write ``gamma_star.csv`` (one row per curve; per curve and seed with several seeds,
    with the spread columns; the lower-bound column when a γ* is one)."""
    rows = summary_rows(outcomes)
    params = [k for o in outcomes for k in o.curve.params]
    bound = [BOUND_COLUMN] if any(r[BOUND_COLUMN] for r in rows) else []
    unit = [UNIT_STAR_COLUMN] if any(load_unit(o.rows) for o in outcomes) else []
    columns = ["curve", *(["seed"] if _multi_seed(outcomes) else []), *dict.fromkeys(params),
               SUMMARY_COLUMNS[1], SUMMARY_COLUMNS[2], *unit, *bound, *SUMMARY_COLUMNS[3:],
               *(SPREAD_COLUMNS if _multi_seed(outcomes) else ())]
    (outputs or Outputs()).write(path, _csv_text(columns, ([r.get(c) for c in columns]
                                                           for r in rows)))
    return path


def write_verdicts(outcomes: list[CurveOutcome], path: Path,
                   outputs: Outputs | None = None) -> Path:
    """Write ``verdicts.csv``: every run of the sweep judged sustained or saturated by its
    curve's (and seed's) rule (in finite mode this is where the 1.2 x rule's outcome is
    visible)."""
    unit = any(load_unit(o.rows) for o in outcomes)
    columns = ["curve", "offered_load", *([UNIT_FIELD] if unit else []), "role", "sustained",
               "reason", "config_hash", "seed"]
    rows = []
    for o in outcomes:
        per = load_unit(o.rows)
        for r in sorted(o.rows, key=lambda r: float(r["offered_load"])):
            v = o.result.verdicts.get(load_key(r["offered_load"]))
            rows.append((o.curve.label, r["offered_load"],
                         *([in_unit(r["offered_load"], per)] if unit else []), r.get("role"),
                         None if v is None else v.sustained, None if v is None else v.reason,
                         r["config_hash"], r["seed"]))
    (outputs or Outputs()).write(path, _csv_text(columns, rows))
    return path


def load_summary_rows(outcomes: list[CurveOutcome]) -> list[dict[str, Any]]:
    """Per curve and load, over its seeds: how many ran it and sustained it, and the mean and
    the 95 % confidence half-width (Student t) of the mean latency and the accepted load."""
    out = []
    for label, group in _groups(outcomes).items():
        by_load: dict[float, list[tuple[CurveOutcome, dict]]] = {}
        for o in group:
            for r in o.rows:
                by_load.setdefault(load_key(r["offered_load"]), []).append((o, r))
        for load in sorted(by_load):
            pairs = by_load[load]
            row: dict[str, Any] = {"curve": label, **{k: cell(v) for k, v in
                                                      group[0].curve.params.items()},
                                   "offered_load": load,
                                   UNIT_FIELD: in_unit(load, load_unit(r for _, r in pairs)),
                                   "seeds": len(pairs)}
            row["sustained_seeds"] = sum(
                1 for o, _ in pairs if (v := o.result.verdicts.get(load)) and v.sustained)
            for col in ("latency_ns", "accepted_load"):
                mean, half, n = mean_ci(as_float(r.get(col)) for _, r in pairs)
                row[f"{col}_mean"] = None if n == 0 else round(mean, 6)
                row[f"{col}_ci95"] = None if n < 2 else round(half, 6)
            out.append(row)
    return out


def write_load_summary(outcomes: list[CurveOutcome], path: Path,
                       outputs: Outputs | None = None) -> Path:
    """Write ``load_summary.csv`` (:func:`load_summary_rows`)."""
    rows = load_summary_rows(outcomes)
    params = [k for o in outcomes for k in o.curve.params]
    unit = [UNIT_FIELD] if any(r[UNIT_FIELD] is not None for r in rows) else []
    columns = ["curve", *dict.fromkeys(params), LOAD_SUMMARY_COLUMNS[1], *unit,
               *LOAD_SUMMARY_COLUMNS[2:]]
    (outputs or Outputs()).write(path, _csv_text(columns, ([r.get(c) for c in columns]
                                                           for r in rows)))
    return path


def write_summaries(outcomes: list[CurveOutcome], out_dir: Path,
                    outputs: Outputs | None = None) -> list[Path]:
    """Write ``gamma_star.csv`` and ``verdicts.csv`` (with several seeds also
    ``load_summary.csv``) into ``out_dir``; return their paths."""
    files = [write_summary(outcomes, out_dir / SUMMARY_NAME, outputs),
             write_verdicts(outcomes, out_dir / VERDICTS_NAME, outputs)]
    if _multi_seed(outcomes):
        files.append(write_load_summary(outcomes, out_dir / LOAD_SUMMARY_NAME, outputs))
    return files


def flip_notes(outcomes: list[CurveOutcome]) -> list[str]:
    """One line per curve whose verdicts flip back to sustained above its first saturated load
    (:func:`~icsim.experiments.pipeline.saturation.sustained_above`): the loads, and what would
    settle them."""
    notes = []
    for o in outcomes:
        above = sustained_above(o.result)
        if not above:
            continue
        r = o.result
        label = o.curve.label + ("" if o.curve.seed is None else f" (seed {o.curve.seed})")
        longer = ("a longer window (run.measure_us)" if o.mode == "window"
                  else "more messages per node (run.messages_per_node)")
        notes.append(f"note: {label} is saturated at {r.first_saturated:g} "
                     f"({r.first_saturated_reason}) yet sustained at "
                     f"{', '.join(f'{x:g}' for x in above)} above it; γ* counts only the loads "
                     f"below the first saturated one. A verdict that flips back is more often "
                     f"noise than the network: {longer} or more seeds (--seeds) settle it.")
    return notes


def _seeds_line(label: str, group: list[CurveOutcome], width: int) -> str:
    """A curve's line of the multi-seed summary: γ*'s mean and range over its seeds (``≥``
    where a seed's γ* is a lower bound, so is the mean), and each seed's."""
    spread = gamma_star_spread(group)
    have = [o.result for o in group if o.result.gamma_star is not None]
    bound = any(r.gamma_star_lower_bound for r in have)
    top = any(r.gamma_star_lower_bound for r in have
              if r.gamma_star == spread["gamma_star_max"])
    low, high = spread["gamma_star_min"], spread["gamma_star_max"]
    rng = ("-" if low is None else bound_text(high, top) if low == high else
           f"{bound_text(low, False)}–{bound_text(high, top)}")
    per_seed = ", ".join(f"{o.curve.seed}: {o.result.gamma_star_text}" for o in group)
    note = "" if all(o.result.complete for o in group) else "  [incomplete]"
    if 0 < len(have) < len(group):
        note += (f"  [mean and range over {len(have)} of {len(group)} seeds; the "
                 f"others have no γ*]")
    mean = spread["gamma_star_mean"]
    shown = "-" if mean is None else ("≥" if bound else "") + f"{mean:.{grid_digits(group)}f}"
    return (f"{label:{width}s} {group[0].mode:7s} {len(group):>5d} "
            f"{shown:>8s} {rng:>11s}  {per_seed}{note}")


def grid_digits(group: list[CurveOutcome]) -> int:
    """The decimals of a curve's load grid (0.05 -> 2, 0.0125 -> 4): a mean of grid values is
    printed with no more digits than the grid has (``0.28``, not ``0.2833``, over seeds whose
    γ* are 0.3, 0.3 and 0.25)."""
    digits = 2
    for o in group:
        for x in o.curve.grid:
            text = f"{float(x):.6f}".rstrip("0")
            digits = max(digits, len(text.partition(".")[2]))
    return digits


def format_summary(outcomes: list[CurveOutcome]) -> str:
    """A plain-text table of γ* per curve (full curve names; ``≥`` before a γ* that is only a
    lower bound; with several seeds, γ* as the mean over the seeds with its range, and each
    seed's)."""
    width = max([len("curve"), *(len(o.curve.label) for o in outcomes)])
    if _multi_seed(outcomes):
        lines = [f"{'curve':{width}s} {'mode':7s} {'seeds':>5s} {'γ* mean':>8s} "
                 f"{'range':>11s}  γ* per seed"]
        lines += [_seeds_line(label, group, width) for label, group in _groups(outcomes).items()]
        return "\n".join(lines)
    # the refined column only where a curve was refined (--refine N bisected past its γ*)
    refining = any(r.get("role") == "refine" for o in outcomes for r in o.rows) or any(
        o.result.gamma_star_refined != o.result.gamma_star for o in outcomes)
    # the exact bound where icsim analyze knows it cheaply (a deterministic routing on a torus)
    exact = {id(o): curve_bound(o) for o in outcomes}
    bounded = any(v is not None for v in exact.values())
    lines = [f"{'curve':{width}s} {'mode':7s} {'γ*':>6s} "
             + (f"{'refined':>8s} " if refining else "")
             + (f"{'exact':>6s} " if bounded else "") + " first saturated"]
    for o in outcomes:
        r = o.result
        sat = "none" if r.first_saturated is None else \
            f"{r.first_saturated:g} ({r.first_saturated_reason})"
        note = "" if r.complete else "  [incomplete]"
        refined = bound_text(r.gamma_star_refined, r.gamma_star_lower_bound
                             and r.gamma_star_refined == r.gamma_star)
        ideal = "-" if exact[id(o)] is None else f"{exact[id(o)]:.3g}"
        lines.append(f"{o.curve.label:{width}s} {o.mode:7s} {r.gamma_star_text:>6s} "
                     + (f"{refined:>8s} " if refining else "")
                     + (f"{ideal:>6s} " if bounded else "") + f" {sat}{note}")
    return "\n".join(lines)


def curve_bound(outcome: CurveOutcome) -> float | None:
    """The exact bound of a curve's routing and traffic, where cheap (:mod:`.bounds`)."""
    from icsim.experiments.pipeline.bounds import exact_bound

    try:
        return exact_bound(outcome.curve.config(min(outcome.curve.grid)))
    except Exception:           # noqa: BLE001 -- an aside: a curve that cannot say has none
        return None
