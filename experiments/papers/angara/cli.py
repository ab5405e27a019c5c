"""Command-line front ends for the Angara routing tables (the Angara paper); ``icsim tables``,
one table at a time, is :mod:`.tables`.

* ``icsim reproduce angara-table2`` — Table 2 on the 4x2x2x2 Desmos torus (:data:`TABLE2`);
* ``icsim reproduce angara-tori`` — §5.1 on random 2D/3D/4D tori (:data:`TORI`);
* ``icsim reproduce angara-sim`` — §5.2's communication patterns, simulated (:data:`SIM`);
* beyond the paper: ``angara-optimum`` (proven optimal tables, :data:`OPTIMUM`),
  ``angara-bounds`` (LP bounds vs SSSP vs refined on random tori, :data:`BOUNDS`),
  ``angara-traffic`` (traffic-aware tables for the jobs, simulated, :data:`TRAFFIC`),
  ``angara-faults`` (failed links and nodes, :data:`FAULTS`).

The simulated comparison (§5.2) runs one exchange to completion per table on the 32-node
4x2x2x2 torus, with Table 1 links (20 Gb/s, 200 ns; NIC 64 Gb/s, 80 ns), 1 MiB messages cut into
4 KiB packets (so that an alltoall is ~250k packets, not 2M), one bubble VC per direction:

* ``alltoall`` interleaved — every node posts its 31 messages at once and its NIC sends them
  packet by packet round robin (what concurrent MPI sends do; ``osu_alltoall``);
* ``alltoall`` step by step — message i to s + i only after message i - 1 (pairwise order);
* ``tornado`` — rank r to r + ceil(N/2) - 1 (MPI ranks, ``over: index``) and ``neighbor``.
  (The paper's Transpose needs a square node count under docs/model.md §6's definition; 32 is not.)

Improvement = (T_BFS - T_X) / T_BFS, as the paper's Fig. 6.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Literal

from icsim.experiments.papers.angara.analysis import parse_dims, reproduce_table2
from icsim.experiments.papers.angara.bounds import reproduce_bounds
from icsim.experiments.papers.angara.faults import reproduce_faults
from icsim.experiments.papers.angara.jobs import reproduce_traffic
from icsim.experiments.papers.angara.optimum import reproduce_optimum
from icsim.experiments.papers.angara.simulation import reproduce_sim
from icsim.experiments.papers.angara.tori import reproduce_tori
from icsim.experiments.papers.reproduce import Reproduction
from icsim.experiments.pipeline.execution import natural_int, positive_int, positive_number
from icsim.experiments.pipeline.outputs import file_times, written_since


# ----------------------------------------------------------------------------- reproductions
# Each reproduction: its options (``_*_arguments``) and a function with the same keyword
# arguments (``icsim.reproduce("angara-table2", seed=1)``; the command line calls it too).
def _out(out: str | Path | None, default: str) -> Path:
    path = Path(out or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _made(name: str, out: Path, report: str, since: dict[Path, int]) -> Reproduction:
    """The reproduction's report and the files it wrote in ``out`` since ``since``."""
    return Reproduction(name, out, report,
                        {p: "written" for p in written_since(out, since)})


def _table2_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-table2)")
    parser.add_argument("--seed", type=natural_int, default=0)


def table2(*, out: str | Path | None = None, seed: int = 0) -> Reproduction:
    """Angara Table 2 on the 4x2x2x2 Desmos torus (:func:`~.analysis.reproduce_table2`)."""
    out = _out(out, "runs/angara-table2")
    since = file_times(out)
    return _made("angara-table2", out, reproduce_table2(out, seed=seed), since)


def _tori_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-tori)")
    parser.add_argument("--sample", type=positive_int, default=None,
                        help="a seeded sample of this many systems (default: the paper's whole "
                             "population of 49 2D, 339 3D and 1173 4D systems)")
    parser.add_argument("--max-nodes", type=positive_int, default=None,
                        help="leave out systems with more nodes than this")
    parser.add_argument("--genetic-max-nodes", type=natural_int, default=0,
                        help="also run Genetic on systems up to this size (slow)")
    parser.add_argument("--seed", type=natural_int, default=0)
    parser.add_argument("--workers", type=positive_int, default=1)
    parser.add_argument("--quick", action="store_true", help="30 systems of at most 64 nodes")


def tori(*, out: str | Path | None = None, sample: int | None = None,
         max_nodes: int | None = None, genetic_max_nodes: int = 0, seed: int = 0,
         workers: int = 1, quick: bool = False) -> Reproduction:
    """Angara §5.1 on random tori (:func:`~.tori.reproduce_tori`)."""
    if quick:
        sample, max_nodes = sample or 30, max_nodes or 64
    out = _out(out, "runs/angara-tori")
    since = file_times(out)
    return _made("angara-tori", out, reproduce_tori(
        out, sample=sample, seed=seed, max_nodes=max_nodes,
        genetic_max_nodes=genetic_max_nodes, workers=workers), since)


def _sim_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-sim)")
    parser.add_argument("--quick", action="store_true", help="64 KiB messages, 3 random jobs "
                        "per size")
    parser.add_argument("--jobs", type=positive_int, default=20,
                        help="random jobs per job size (8, 16, 24 nodes; default 20)")


def sim(*, out: str | Path | None = None, quick: bool = False, jobs: int = 20) -> Reproduction:
    """Angara §5.2's exchanges, simulated (:func:`~.simulation.reproduce_sim`)."""
    out = _out(out, "runs/angara-sim")
    since = file_times(out)
    return _made("angara-sim", out, reproduce_sim(
        out, message_bytes=(64 << 10) if quick else (1 << 20), jobs=3 if quick else jobs),
        since)


# ----------------------------------------------------------------------------- beyond the paper
def _optimum_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-optimum)")
    parser.add_argument("--time-limit", type=positive_number, default=600.0, metavar="S",
                        help="HiGHS time limit per MILP stage (default 600 s)")
    parser.add_argument("--seed", type=natural_int, default=0, help="seed of the refined tables")
    parser.add_argument("--quick", action="store_true", help="2-16 nodes only, no caps")


def optimum(*, out: str | Path | None = None, time_limit: float = 600.0, seed: int = 0,
            quick: bool = False, command: str | None = None) -> Reproduction:
    """Proven optimal tables (:func:`~.optimum.reproduce_optimum`)."""
    out = _out(out, "runs/angara-optimum")
    since = file_times(out)
    return _made("angara-optimum", out, reproduce_optimum(
        out, time_limit_s=time_limit, seed=seed,
        node_counts=(2, 4, 8, 16) if quick else (2, 4, 8, 16, 32),
        caps=() if quick else (27, 28), command=command or "icsim reproduce angara-optimum"),
        since)


def _bounds_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-bounds)")
    parser.add_argument("--systems", nargs=3, type=natural_int, default=(49, 60, 60),
                        metavar=("N2", "N3", "N4"),
                        help="systems per dimensionality (default 49 60 60: every 2D one)")
    parser.add_argument("--max-nodes", type=positive_int, default=256,
                        help="leave out systems with more nodes (default 256)")
    parser.add_argument("--refine-time", type=positive_number, default=5.0, metavar="S",
                        help="refinement budget per system (default 5 s)")
    parser.add_argument("--seed", type=natural_int, default=0)
    parser.add_argument("--workers", type=positive_int, default=1)
    parser.add_argument("--quick", action="store_true", help="4 systems per dimensionality, "
                        "at most 64 nodes, 1 s refinement")


def bounds(*, out: str | Path | None = None, systems: tuple[int, int, int] = (49, 60, 60),
           max_nodes: int = 256, refine_time: float = 5.0, seed: int = 0, workers: int = 1,
           quick: bool = False, command: str | None = None) -> Reproduction:
    """LP lower bounds vs SSSP vs refined tables (:func:`~.bounds.reproduce_bounds`); a
    ValueError when ``systems`` and ``max_nodes`` leave no system to run."""
    per_dim = dict(zip((2, 3, 4), (4, 4, 4) if quick else systems))
    out = _out(out, "runs/angara-bounds")
    since = file_times(out)
    return _made("angara-bounds", out, reproduce_bounds(
        out, per_dim=per_dim, max_nodes=64 if quick else max_nodes,
        refine_time_s=1.0 if quick else refine_time, seed=seed, workers=workers,
        command=command or "icsim reproduce angara-bounds"), since)


def _traffic_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-traffic)")
    parser.add_argument("--jobs", type=positive_int, default=20,
                        help="random jobs per job size (8, 16, 24 nodes; default 20)")
    parser.add_argument("--time-limit", type=positive_number, default=60.0, metavar="S",
                        help="MILP time limit per traffic-aware table (default 60 s)")
    parser.add_argument("--quick", action="store_true",
                        help="64 KiB messages, 2 random jobs per size")


def traffic(*, out: str | Path | None = None, jobs: int = 20, time_limit: float = 60.0,
            quick: bool = False, command: str | None = None) -> Reproduction:
    """Traffic-aware tables for the jobs, simulated (:func:`~.jobs.reproduce_traffic`)."""
    out = _out(out, "runs/angara-traffic")
    since = file_times(out)
    return _made("angara-traffic", out, reproduce_traffic(
        out, message_bytes=(64 << 10) if quick else (1 << 20), count=2 if quick else jobs,
        time_limit_s=time_limit, command=command or "icsim reproduce angara-traffic"), since)


def _torus_dims(text: str) -> tuple[int, ...]:
    """``--dims``: a torus such as ``4x2x2x2``, every size at least 2."""
    try:
        dims = parse_dims(text)
    except ValueError:
        dims = ()
    if not dims or min(dims) < 2:
        raise argparse.ArgumentTypeError(f"expected sizes of at least 2 joined by x, e.g. "
                                         f"4x2x2x2, got {text!r}")
    return dims


def _faults_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/angara-faults)")
    parser.add_argument("--dims", type=_torus_dims, default=(4, 2, 2, 2),
                        help="torus, e.g. 4x2x2x2 or 8x8x8")
    parser.add_argument("--draws", type=positive_int, default=100,
                        help="fault sets per number of failed links (default 100)")
    parser.add_argument("--node-draws", type=positive_int, default=None,
                        help="fault sets per number of failed nodes (default --draws; single "
                             "nodes are enumerated when that covers them all)")
    parser.add_argument("--load-draws", type=natural_int, default=None,
                        help="on the first this many sets of each case also build the BFS, "
                             "SSSP and refined tables and ACRO's layers (default all)")
    parser.add_argument("--refine-time", type=positive_number, default=5.0, metavar="S")
    parser.add_argument("--check", choices=("all", "refined"), default="all",
                        help="which tables go through the deadlock checker (default all)")
    parser.add_argument("--sim-draws", type=natural_int, default=0,
                        help="simulate an alltoall on this many routable sets per number of "
                             "failed links (default 0: no simulation)")
    parser.add_argument("--sim-kib", type=positive_int, default=256,
                        help="alltoall message size in KiB (default 256)")
    parser.add_argument("--seed", type=natural_int, default=0)
    parser.add_argument("--workers", type=positive_int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help="5 sets per case, 2 with tables, 1 simulated")


def faults(*, out: str | Path | None = None, dims: tuple[int, ...] = (4, 2, 2, 2),
           draws: int = 100, node_draws: int | None = None, load_draws: int | None = None,
           refine_time: float = 5.0, check: Literal["all", "refined"] = "all",
           sim_draws: int = 0, sim_kib: int = 256, seed: int = 0, workers: int = 1,
           quick: bool = False, command: str | None = None) -> Reproduction:
    """Tables around failed links and nodes (:func:`~.faults.reproduce_faults`)."""
    out = _out(out, "runs/angara-faults")
    since = file_times(out)
    return _made("angara-faults", out, reproduce_faults(
        out, dims=tuple(dims), draws=5 if quick else draws,
        node_draws=5 if quick else node_draws, load_draws=2 if quick else load_draws,
        seed=seed, refine_time_s=1.0 if quick else refine_time, check=check,
        sim_draws=(1 if sim_draws else 0) if quick else sim_draws,
        sim_message_bytes=(64 if quick else sim_kib) << 10, workers=workers,
        command=command or "icsim reproduce angara-faults"), since)


OPTIMUM = SimpleNamespace(add_arguments=_optimum_arguments, reproduce=optimum)
BOUNDS = SimpleNamespace(add_arguments=_bounds_arguments, reproduce=bounds)
TRAFFIC = SimpleNamespace(add_arguments=_traffic_arguments, reproduce=traffic)
FAULTS = SimpleNamespace(add_arguments=_faults_arguments, reproduce=faults)
TABLE2 = SimpleNamespace(add_arguments=_table2_arguments, reproduce=table2)
TORI = SimpleNamespace(add_arguments=_tori_arguments, reproduce=tori)
SIM = SimpleNamespace(add_arguments=_sim_arguments, reproduce=sim, EPILOG=__doc__)
