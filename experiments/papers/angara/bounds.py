"""Beyond the Angara paper, 2: LP lower bounds, SSSP and the refined tables on random tori.

The systems are the committed §5.1 population (:func:`~icsim.experiments.papers.angara.tori.
tori_population`, seed 0: 49 2D, 339 3D, 1173 4D tori with sizes in [2, 8]), or a seeded sample
of it.  Per system:

* two LP lower bounds on the edge-forwarding index (:func:`~icsim.routing.tables.optimal.
  load_lower_bound`): over every minimal Angara route (any table, deadlock-free or not) and
  over the routes of the deadlock-free routing graph (every table BFS, SSSP, refined and
  optimal can make);
* SSSP's and the refined table's max load and ``σ(4)``, with their run times.

``icsim reproduce angara-bounds`` writes ``angara_bounds_systems.csv`` (one row per system),
``angara_bounds_summary.csv`` and ``angara_bounds.md``.
"""

from __future__ import annotations

import math
from pathlib import Path
from time import perf_counter
from typing import Sequence

import numpy as np
import pandas as pd

from icsim.experiments.papers.angara.tori import tori_population
from icsim.experiments.pipeline.execution import read_appended, run_appending
from icsim.model.topology import Torus
from icsim.routing.tables.augment import deadlock_free_routing_graph
from icsim.routing.tables.generators import generate
from icsim.routing.tables.metrics import table_metrics
from icsim.routing.tables.optimal import load_lower_bound

COLUMNS = ["dims", "n", "nodes", "lp_angara", "lp_deadlock_free", "lp_time_s",
           "sssp_max_load", "sssp_sigma4", "sssp_time_s", "refined_max_load", "refined_sigma4",
           "refined_time_s", "refined_moves", "seed", "refine_time_limit_s"]


def bounds_system(dims: Sequence[int], refine_time_s: float = 5.0, seed: int = 0,
                  lp_time_limit_s: float = 120.0, refine_moves: int | None = None) -> dict:
    """Bounds, SSSP and refined on one whole torus (the refinement stops after
    ``refine_time_s`` seconds, or after ``refine_moves`` proposals, the same on any machine).

    >>> r = bounds_system((4, 2, 2, 2), refine_moves=5000)
    >>> r["lp_angara"], r["lp_deadlock_free"], r["sssp_max_load"], r["refined_max_load"]
    (26.0, 26.0, 28, 26)
    """
    topo = Torus(tuple(dims))
    graph = deadlock_free_routing_graph(topo)
    t0 = perf_counter()
    lp_a = load_lower_bound(topo, time_limit_s=lp_time_limit_s)
    lp_d = load_lower_bound(topo, graph=graph, time_limit_s=lp_time_limit_s)
    lp_time = perf_counter() - t0
    sssp = generate("sssp", topo, seed=seed, graph=graph)
    ref = generate("refined", topo, seed=seed, graph=graph, start=sssp,
                   time_limit_s=None if refine_moves else refine_time_s, max_moves=refine_moves)
    ms, mr = table_metrics(sssp), table_metrics(ref)
    return {"dims": "x".join(map(str, dims)), "n": len(dims), "nodes": topo.num_nodes,
            "lp_angara": lp_a.bound, "lp_deadlock_free": lp_d.bound, "lp_time_s": lp_time,
            "sssp_max_load": ms.max_load, "sssp_sigma4": ms.sigma4,
            "sssp_time_s": sssp.meta["time_s"], "refined_max_load": mr.max_load,
            "refined_sigma4": mr.sigma4, "refined_time_s": ref.meta["refine_time_s"],
            "refined_moves": ref.meta["moves"], "seed": seed,
            "refine_time_limit_s": refine_time_s}


def _job(args) -> list[dict]:
    return [bounds_system(*args)]


def choose_systems(per_dim: dict[int, int], max_nodes: int | None, seed: int = 0
                   ) -> list[tuple[int, ...]]:
    """A seeded sample of the committed population: ``per_dim[n]`` systems of ``n``
    dimensions with at most ``max_nodes`` nodes (all of them when fewer)."""
    pop = tori_population(0)
    rng = np.random.default_rng(seed + 19)
    out = []
    for n, count in per_dim.items():
        eligible = [d for d in pop[n] if max_nodes is None or math.prod(d) <= max_nodes]
        if count >= len(eligible):
            out += eligible
        else:
            out += [eligible[i] for i in np.sort(rng.choice(len(eligible), count,
                                                            replace=False))]
    return out


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Per dimensionality: how far SSSP and refined are from the bounds, the refinement's
    improvement over SSSP, run times."""
    rows = []
    for n, d in df.groupby("n"):
        gap_s = d.sssp_max_load / d.lp_deadlock_free - 1
        gap_r = d.refined_max_load / d.lp_deadlock_free - 1
        imp = 1 - d.refined_max_load / d.sssp_max_load
        room = d[d.sssp_max_load > d.lp_deadlock_free]
        rows.append({
            "dims": int(n), "systems": len(d), "mean_nodes": d.nodes.mean(),
            "max_nodes": int(d.nodes.max()),
            "sssp_at_bound_share": float((d.sssp_max_load <= d.lp_deadlock_free).mean()),
            "refined_at_bound_share": float((d.refined_max_load <= d.lp_deadlock_free).mean()),
            "sssp_gap_mean_pct": 100 * gap_s.mean(), "sssp_gap_max_pct": 100 * gap_s.max(),
            "refined_gap_mean_pct": 100 * gap_r.mean(),
            "angara_vs_deadlock_free_pct": 100 * (1 - d.lp_angara / d.lp_deadlock_free).mean(),
            "improvement_mean_pct": 100 * imp.mean(), "improvement_max_pct": 100 * imp.max(),
            "improvement_mean_with_room_pct": 100 * (1 - room.refined_max_load
                                                     / room.sssp_max_load).mean()
            if len(room) else 0.0,
            "systems_with_room": len(room),
            "refined_better_share": float((d.refined_max_load < d.sssp_max_load).mean()),
            "sigma4_improvement_mean_pct": 100 * (1 - d.refined_sigma4
                                                  / d.sssp_sigma4.where(d.sssp_sigma4 > 0)
                                                  ).mean(),
            "sssp_time_mean_s": d.sssp_time_s.mean(), "refined_time_mean_s":
                d.refined_time_s.mean(), "lp_time_mean_s": d.lp_time_s.mean(),
            "lp_time_max_s": d.lp_time_s.max()})
    return pd.DataFrame(rows)


def reproduce_bounds(out_dir: str | Path, per_dim: dict[int, int] | None = None,
                     max_nodes: int | None = 256, refine_time_s: float = 5.0, seed: int = 0,
                     workers: int = 1, command: str = "icsim reproduce angara-bounds") -> str:
    """Run :func:`bounds_system` on a sample of the committed population and write the report.

    Finished systems in ``angara_bounds_systems.csv`` are reused (same dims, seed and refine
    budget), so an interrupted run continues.  ``ValueError`` if no system is chosen.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    per_dim = per_dim or {2: 49, 3: 60, 4: 60}
    systems = choose_systems(per_dim, max_nodes, seed)
    if not systems:
        raise ValueError(f"no system to run: {per_dim} systems per dimensionality"
                         + (f", of at most {max_nodes} nodes" if max_nodes else ""))
    path = out_dir / "angara_bounds_systems.csv"
    done = set()
    old = read_appended(path)
    if not old.empty:
        done = {(r.dims, int(r.seed), float(r.refine_time_limit_s)) for r in old.itertuples()}
    jobs = [(d, refine_time_s, seed) for d in systems
            if ("x".join(map(str, d)), seed, float(refine_time_s)) not in done]
    t0 = perf_counter()
    run_appending(jobs, _job, path, COLUMNS, workers, reused=len(systems) - len(jobs),
                  label="angara-bounds")
    wall = perf_counter() - t0
    df = pd.read_csv(path)
    keys = {("x".join(map(str, d)), seed, float(refine_time_s)) for d in systems}
    df = df[[(r.dims, int(r.seed), float(r.refine_time_limit_s)) in keys
             for r in df.itertuples()]].drop_duplicates(["dims", "seed"], keep="last")
    summary = summarise(df)
    summary.to_csv(out_dir / "angara_bounds_summary.csv", index=False)
    md = _markdown(summary, df, per_dim, max_nodes, refine_time_s, seed, wall, command)
    (out_dir / "angara_bounds.md").write_text(md)
    return md


def _markdown(summary, df, per_dim, max_nodes, refine_time_s, seed, wall, command) -> str:
    busy = df[["lp_time_s", "sssp_time_s", "refined_time_s"]].sum().sum()
    lines = [
        "# LP bounds, SSSP and refined tables on random tori", "",
        f"Made by `{command}`: a seeded sample (seed {seed}) of the committed §5.1 population "
        f"(`experiments/results/angara/tori`, population seed 0) — "
        + ", ".join(f"{v} {k}D" for k, v in per_dim.items())
        + (f" systems of at most {max_nodes} nodes" if max_nodes else " systems")
        + f" (all of them where fewer exist); refinement {refine_time_s:g} s per system "
          f"(or 50 proposals per pair with a choice, whichever ends first), seed {seed}.  "
          f"Generation and solve time summed {busy:.0f} s; wall time of the last "
          f"invocation {wall:.0f} s (one process, HiGHS single-threaded).", "",
        "Bounds (⌈LP relaxation⌉ of the route-choice MILP, aggregated per source and reduced "
        "by ring symmetry): *deadlock-free* over the routes of the deadlock-free routing graph "
        "— no table BFS, SSSP, refined or optimal can make does better; *Angara* over every "
        "minimal Angara route, deadlock-free or not.  Gap = max load / deadlock-free bound − 1.  "
        "Improvement = 1 − refined / SSSP max load, mean over systems; 'with room': over the "
        "systems where SSSP is above the deadlock-free bound.", "",
        "| dims | systems | mean (max) nodes | SSSP at bound | SSSP gap mean (max) "
        "| refined at bound | refined gap mean | refined < SSSP | improvement mean (max) "
        "| improvement, with room (systems) | σ4 improvement mean | Angara bound below "
        "deadlock-free | SSSP s | refine s | LP s mean (max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        lines.append(
            f"| {r.dims}D | {r.systems} | {r.mean_nodes:.0f} ({r.max_nodes}) "
            f"| {100 * r.sssp_at_bound_share:.0f} % "
            f"| {r.sssp_gap_mean_pct:.1f} % ({r.sssp_gap_max_pct:.1f} %) "
            f"| {100 * r.refined_at_bound_share:.0f} % | {r.refined_gap_mean_pct:.2f} % "
            f"| {100 * r.refined_better_share:.0f} % "
            f"| {r.improvement_mean_pct:.1f} % ({r.improvement_max_pct:.1f} %) "
            f"| {r.improvement_mean_with_room_pct:.1f} % ({r.systems_with_room}) "
            f"| {r.sigma4_improvement_mean_pct:.1f} % "
            f"| {r.angara_vs_deadlock_free_pct:.1f} % "
            f"| {r.sssp_time_mean_s:.2f} | {r.refined_time_mean_s:.2f} "
            f"| {r.lp_time_mean_s:.2f} ({r.lp_time_max_s:.2f}) |")
    lines += ["", "Every system, in `angara_bounds_systems.csv`."]
    return "\n".join(lines) + "\n"
