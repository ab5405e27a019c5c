"""What the topology families' reproductions share (``dragonfly``, ``fat-tree``, ``hyperx``):
their options, one full sweep of every curve with its figures, and a γ* table's cells."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from icsim.experiments.papers.reproduce import READ, Reproduction, Source
from icsim.experiments.pipeline.curves import Curve
from icsim.experiments.pipeline.execution import SerialExecutor, make_executor, positive_int
from icsim.experiments.pipeline.outputs import WRITTEN, Outputs, written_since
from icsim.experiments.pipeline.plots import plot_results
from icsim.experiments.pipeline.results_file import RESULTS_NAME
from icsim.experiments.pipeline.rows import load_unit
from icsim.experiments.pipeline.summaries import UNIT_STAR_COLUMN, in_unit
from icsim.experiments.pipeline.sweep import Sweep


def add_sweep_arguments(parser: argparse.ArgumentParser, name: str, sweep: str) -> None:
    """``--out``, ``--simulate`` (``sweep`` says what it runs) and ``--workers``."""
    parser.add_argument("--out", default=None, metavar="DIR",
                        help=f"output directory (default runs/{name})")
    parser.add_argument("--simulate", action="store_true",
                        help=f"run the sweep ({sweep}; resumable from OUT/sim/results.csv)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="simulation processes (default: one per core)")


def sweep_curves(curves: list[Curve], folder: Path, workers: int | None, report_only: bool,
                 label: str, extra: Callable[[Any], dict] | None = None,
                 figures: Path | None = None, outputs: Outputs | None = None,
                 plot: bool = True) -> pd.DataFrame:
    """Every load of every curve's grid (resumable from ``folder/results.csv``; with
    ``report_only`` nothing is run), the figures in ``figures`` (default ``folder``; none
    without ``plot``: a reproduction that draws its own), and one row per curve: its
    ``params``, ``gamma_star``, ``lower_bound`` and what ``extra(curve outcome)`` adds."""
    sweep = Sweep(curves, folder, search="climb", full=True, run_missing=not report_only,
                  label=label)
    executor = SerialExecutor() if workers == 1 else make_executor(workers)
    with executor:
        outcome = sweep.run(executor)
    if plot:
        plot_results(outcome.rows, figures or folder, outputs=outputs)
    # γ* in the one unit across families (docs/model.md §6), for runs that record it: a table
    # of runs made before the field redraws as it was committed
    units = [load_unit(c.rows) for c in outcome.curves]
    unit = any(u is not None for u in units)
    return pd.DataFrame([{**c.curve.params, "gamma_star": c.result.gamma_star,
                          **({UNIT_STAR_COLUMN: in_unit(c.result.gamma_star, u)} if unit
                             else {}),
                          "lower_bound": c.result.gamma_star_lower_bound,
                          **(extra(c) if extra else {})} for c, u in zip(outcome.curves, units)])


def write_csv(outputs: Outputs, path: Path, df: pd.DataFrame) -> None:
    """A table as CSV through ``outputs`` (an unchanged file is not rewritten)."""
    outputs.write(path, df.to_csv(index=False, float_format="%.6g"))


def write_exact(out: Path, exact: dict[tuple[str, str], float], outputs: Outputs) -> None:
    """``out/exact.csv``: one row per (algorithm, column) exact bound."""
    write_csv(outputs, out / "exact.csv", pd.DataFrame(
        [{"algorithm": a, "column": c, "throughput": v} for (a, c), v in exact.items()]))


def simulated(source: Source, run_sweep: Callable[..., pd.DataFrame], simulate: bool,
              workers: int | None, outputs: Outputs) -> pd.DataFrame | None:
    """The γ* table (``simulated.csv`` in ``source.out``) when ``simulate`` asks for the sweep
    or ``source.runs/sim`` holds one (judged again, nothing run; its figures drawn in
    ``source.out/sim``); None otherwise."""
    if not (simulate or (source.runs / "sim" / RESULTS_NAME).exists()):
        return None
    figures = None if source.runs == source.out else source.out / "sim"
    sim = run_sweep(source.runs, workers, report_only=not simulate, figures=figures,
                    outputs=outputs)
    write_csv(outputs, source.out / "simulated.csv", sim)
    return sim


def reproduction(source: Source, text: str, since: dict[Path, int],
                 outputs: Outputs) -> Reproduction:
    """What a family's reproduction made: ``report.md`` (written here), every file written in
    ``source.out`` and the committed results it read."""
    outputs.write(source.out / "report.md", text)
    files = {source.runs / "sim" / RESULTS_NAME: READ} if source.committed else {}
    files.update({p: WRITTEN for p in written_since(source.out, since)})
    files.update(outputs.status)
    note = source.note("sim/")
    return Reproduction(source.name, source.out, text, files,
                        summary=text + (f"\n{note}\n" if note else ""))


def star_cell(gamma: Any, lower_bound: Any = False) -> str:
    """A γ* as a table cell: ``0.45``, ``≥1.00`` for a lower bound, ``–`` for none."""
    if gamma is None or pd.isna(gamma):
        return "–"
    return f"{'≥' if lower_bound else ''}{float(gamma):.2f}"
