"""What the topology families' reproductions share (``dragonfly``, ``fat-tree``, ``hyperx``):
their options, one full sweep of every curve with its figures, and a γ* table's cells."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from icsim.experiments.pipeline.curves import Curve
from icsim.experiments.pipeline.execution import SerialExecutor, make_executor, positive_int
from icsim.experiments.pipeline.plots import plot_results
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
                 label: str, extra: Callable[[Any], dict] | None = None) -> pd.DataFrame:
    """Every load of every curve's grid (resumable from ``folder/results.csv``; with
    ``report_only`` nothing is run), the figures in ``folder``, and one row per curve: its
    ``params``, ``gamma_star``, ``lower_bound`` and what ``extra(curve outcome)`` adds."""
    sweep = Sweep(curves, folder, search="climb", full=True, run_missing=not report_only,
                  label=label)
    executor = SerialExecutor() if workers == 1 else make_executor(workers)
    with executor:
        outcome = sweep.run(executor)
    plot_results(outcome.rows, folder)
    return pd.DataFrame([{**c.curve.params, "gamma_star": c.result.gamma_star,
                          "lower_bound": c.result.gamma_star_lower_bound,
                          **(extra(c) if extra else {})} for c in outcome.curves])


def write_exact(out: Path, exact: dict[tuple[str, str], float]) -> None:
    """``out/exact.csv``: one row per (algorithm, column) exact bound."""
    pd.DataFrame([{"algorithm": a, "column": c, "throughput": v}
                  for (a, c), v in exact.items()]).to_csv(out / "exact.csv", index=False,
                                                          float_format="%.6g")


def simulated(out: Path, run_sweep: Callable[..., pd.DataFrame], simulate: bool,
              workers: int | None) -> pd.DataFrame | None:
    """The γ* table (``out/simulated.csv``) when ``simulate`` asks for the sweep or
    ``out/sim`` holds one (judged again, nothing run); None otherwise."""
    if not (simulate or (out / "sim" / "results.csv").exists()):
        return None
    sim = run_sweep(out, workers, report_only=not simulate)
    sim.to_csv(out / "simulated.csv", index=False, float_format="%.6g")
    return sim


def star_cell(gamma: Any, lower_bound: Any = False) -> str:
    """A γ* as a table cell: ``0.45``, ``≥1.00`` for a lower bound, ``–`` for none."""
    if gamma is None or pd.isna(gamma):
        return "–"
    return f"{'≥' if lower_bound else ''}{float(gamma):.2f}"
