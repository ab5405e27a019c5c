"""The Angara paper's §5.1: SSSP against BFS (and Genetic) on random 2D, 3D and 4D tori
(``icsim reproduce angara-tori``).

Random tori of §5.1
-------------------
"49 2D, 339 3D, 1173 4D random systems, each size in [2; 8]".  49 is all 7^2 ordered size
pairs; 339 and 1173 are not the ordered or sorted tuples under any node limit (ordered 4D
tuples jump from 1155 to 1183 between 431 and 432 nodes; sorted tuples number 28/84/210).
They are what about 1,600 uniform random draws per dimensionality leave after removing
duplicates (expected distinct: 49.0, 339.9 and 1168 +- 13).  So the population here is drawn
the same way: ordered size tuples uniform on [2, 8]^n from a seeded generator, duplicates
skipped, until the paper's count is reached.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from time import perf_counter
from typing import Sequence

import numpy as np
import pandas as pd

from icsim.experiments.papers.angara.analysis import value_text
from icsim.experiments.papers.published import paper_table
from icsim.experiments.pipeline.bench import time_generators
from icsim.experiments.pipeline.execution import read_appended, run_appending
from icsim.model.topology import Torus
from icsim.routing.tables.augment import deadlock_free_routing_graph
from icsim.routing.tables.generators import generate
from icsim.routing.tables.metrics import table_metrics

TORI_COUNTS = {2: 49, 3: 339, 4: 1173}
TORI_SIZES = (2, 8)


def tori_population(seed: int = 0, counts: dict[int, int] | None = None,
                    sizes: tuple[int, int] = TORI_SIZES) -> dict[int, list[tuple[int, ...]]]:
    """The §5.1 systems: per dimensionality, distinct ordered size tuples drawn uniformly from
    ``sizes`` (inclusive) until the paper's count (49, 339, 1173) is reached.

    >>> pop = tori_population()
    >>> {n: len(v) for n, v in pop.items()}
    {2: 49, 3: 339, 4: 1173}
    """
    counts = counts or TORI_COUNTS
    rng = np.random.default_rng(seed)
    out = {}
    lo, hi = sizes
    for n, count in counts.items():
        if count > (hi - lo + 1) ** n:
            raise ValueError(f"only {(hi - lo + 1) ** n} distinct {n}D systems exist")
        seen: dict[tuple[int, ...], None] = {}
        while len(seen) < count:
            seen.setdefault(tuple(int(x) for x in rng.integers(lo, hi + 1, n)), None)
        out[n] = list(seen)
    return out


def tori_system(dims: Sequence[int], genetic: bool = False,
                genetic_opts: dict | None = None, seed: int = 0) -> dict:
    """Run BFS and SSSP (and Genetic) on one torus; edge-forwarding indices, σ4, the share of
    pairs with a single minimal route, times."""
    topo = Torus(tuple(dims))
    t0 = perf_counter()
    graph = deadlock_free_routing_graph(topo)
    graph_time = perf_counter() - t0
    row = {"dims": "x".join(map(str, dims)), "n": len(dims), "nodes": topo.num_nodes,
           "seed": seed, "graph_time_s": graph_time}
    for alg in ("bfs", "sssp") + (("genetic",) if genetic else ()):
        opts = dict(genetic_opts or {}) if alg == "genetic" else {}
        table = generate(alg, topo, seed=seed, graph=graph, **opts)
        m = table_metrics(table)
        row[f"{alg}_max_load"] = m.max_load
        row[f"{alg}_sigma4"] = m.sigma4
        row[f"{alg}_time_s"] = table.meta["time_s"]
        if alg == "sssp":
            pairs = topo.num_nodes * (topo.num_nodes - 1)
            row["unique_pairs_share"] = table.meta["unique_pairs"] / pairs
            row["sssp_calls"] = table.meta["sssp_calls"]
        if alg == "genetic":
            row["genetic_generations"] = table.meta["generations"]
            row["genetic_opts"] = json.dumps(opts, sort_keys=True)
    return row


#: columns of ``angara_tori_systems.csv`` (the Genetic ones empty where it did not run)
TORI_COLUMNS = ["dims", "n", "nodes", "seed", "graph_time_s", "bfs_max_load", "bfs_sigma4",
                "bfs_time_s", "sssp_max_load", "sssp_sigma4", "sssp_time_s",
                "unique_pairs_share", "sssp_calls", "genetic_max_load", "genetic_sigma4",
                "genetic_time_s", "genetic_generations", "genetic_opts"]


def _tori_job(args) -> list[dict]:
    return [tori_system(*args)]


def _finished_systems(path: Path, jobs: list) -> dict[int, dict]:
    """Rows of ``path`` that answer jobs (by index): same dims and seed, and Genetic with the
    same options where the job asks for it."""
    old = read_appended(path, dtype={"genetic_opts": str})
    if old.empty:
        return {}
    if list(old.columns) != TORI_COLUMNS:
        raise ValueError(f"{path} has the columns of another icsim version "
                         f"({', '.join(old.columns)}); move it away or choose another --out")
    rows = {(r["dims"], int(r["seed"])): r for r in old.to_dict("records")}
    found = {}
    for i, (dims, genetic, opts, seed) in enumerate(jobs):
        r = rows.get(("x".join(map(str, dims)), seed))
        if r is not None and (not genetic or (pd.notna(r["genetic_max_load"]) and
                                              r["genetic_opts"] == json.dumps(opts or {},
                                                                              sort_keys=True))):
            found[i] = r
    return found


def _split_sample(sample: int, available: dict[int, int]) -> dict[int, int]:
    """Share ``sample`` equally among dimensionalities; what one cannot use goes to the rest."""
    take = {n: 0 for n in available}
    left = sample
    open_dims = [n for n in available if available[n] > 0]
    while left > 0 and open_dims:
        share = max(left // len(open_dims), 1)
        for n in list(open_dims):
            add = min(share, available[n] - take[n], left)
            take[n] += add
            left -= add
            if take[n] == available[n]:
                open_dims.remove(n)
            if left == 0:
                break
    return take


def reproduce_tori(out_dir: str | Path, sample: int | None = None, seed: int = 0,
                   max_nodes: int | None = None, genetic_max_nodes: int = 0,
                   genetic_opts: dict | None = None, workers: int = 1,
                   timing_repeats: int = 3) -> str:
    """The §5.1 comparison on random 2D/3D/4D tori: SSSP vs BFS (and Genetic) edge-forwarding
    index, and the share of pairs with a single minimal route.

    Parameters
    ----------
    out_dir : path
        Receives ``angara_tori_systems.csv`` (one row per system), ``angara_tori_summary.csv``
        and ``angara_tori.md``.
    sample : int, optional
        Run a seeded sample of this many systems, shared equally among 2D, 3D and 4D (2D has
        only 49; what it cannot take goes to the others).  Default: every system.
    seed : int
        Seeds the population draw and the sample.
    max_nodes : int, optional
        Leave out systems with more nodes (the 4D population reaches 4096 nodes); the report
        states how many were left out.
    genetic_max_nodes : int
        Also run Genetic on systems up to this many nodes (0: never).
    genetic_opts : dict, optional
        Genetic options, e.g. ``{'time_limit_s': 30}``.
    workers : int
        Processes to spread the systems over.
    timing_repeats : int
        Repeats of the SSSP/BFS timing of :data:`~icsim.experiments.pipeline.bench.TIMING_CASES` (best kept); 0 skips it.

    Returns
    -------
    str
        The Markdown report.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    population = tori_population(seed)
    eligible = {n: [d for d in dims if max_nodes is None or math.prod(d) <= max_nodes]
                for n, dims in population.items()}
    rng = np.random.default_rng(seed + 1)
    chosen: list[tuple[int, ...]] = []
    if sample is None:
        for n in eligible:
            chosen.extend(eligible[n])
    else:
        take = _split_sample(sample, {n: len(v) for n, v in eligible.items()})
        for n, dims in eligible.items():
            idx = np.sort(rng.choice(len(dims), take[n], replace=False))
            chosen.extend(dims[i] for i in idx)
    jobs = [(d, math.prod(d) <= genetic_max_nodes, genetic_opts, seed) for d in chosen]
    systems_csv = out_dir / "angara_tori_systems.csv"
    done = _finished_systems(systems_csv, jobs)
    t0 = perf_counter()
    run_appending([j for i, j in enumerate(jobs) if i not in done], _tori_job, systems_csv,
                  TORI_COLUMNS, workers, reused=len(done), label="angara-tori")
    wall = perf_counter() - t0
    # a system rerun (e.g. now with Genetic) supersedes its older row
    if systems_csv.exists():
        pd.read_csv(systems_csv, dtype={"genetic_opts": str}).drop_duplicates(
            ["dims", "seed"], keep="last").to_csv(systems_csv, index=False)
    finished = _finished_systems(systems_csv, jobs)
    df = pd.DataFrame([finished[i] for i in range(len(jobs))], columns=TORI_COLUMNS)
    summary = summarise_tori(df, population, eligible)
    summary.to_csv(out_dir / "angara_tori_summary.csv", index=False)
    timing = time_generators(repeats=timing_repeats) if timing_repeats else []
    md = _tori_markdown(summary, df, population, eligible, sample, seed, max_nodes,
                        genetic_max_nodes, genetic_opts, wall, timing)
    (out_dir / "angara_tori.md").write_text(md)
    return md


def summarise_tori(df: pd.DataFrame, population: dict, eligible: dict) -> pd.DataFrame:
    """Per dimensionality: counts, SSSP vs BFS (and Genetic) groups and ratios, unique share."""
    paper = paper_table("angara_fig5_summary")
    rows = []
    for n in sorted(population):
        d = df[df.n == n]
        if d.empty:
            continue
        less = d[d.sssp_max_load < d.bfs_max_load]
        ref = paper[paper.dims == n]
        row = {
            "dims": n, "population": len(population[n]), "eligible": len(eligible[n]),
            "systems": len(d), "mean_nodes": d.nodes.mean(), "max_nodes": d.nodes.max(),
            "sssp_le_bfs_share": (d.sssp_max_load <= d.bfs_max_load).mean(),
            "sssp_lt_bfs": len(less), "sssp_eq_bfs": int((d.sssp_max_load == d.bfs_max_load).sum()),
            "sssp_gt_bfs": int((d.sssp_max_load > d.bfs_max_load).sum()),
            "improvement_less_group_pct": 100 * (1 - less.sssp_max_load.sum()
                                                 / less.bfs_max_load.sum()) if len(less) else 0.0,
            "improvement_all_pct": 100 * (1 - d.sssp_max_load.sum() / d.bfs_max_load.sum()),
            "improvement_mean_per_system_pct": 100 * (1 - d.sssp_max_load / d.bfs_max_load).mean(),
            "paper_improvement_pct": float(ref.sssp_better_than_bfs_percent.iloc[0])
            if len(ref) else None,
            "unique_pairs_pct": 100 * d.unique_pairs_share.mean(),
            "paper_unique_pairs_pct": float(ref.unique_minimal_route_pairs_percent.iloc[0])
            if len(ref) else None,
            "sssp_time_mean_s": d.sssp_time_s.mean(), "bfs_time_mean_s": d.bfs_time_s.mean(),
        }
        if "genetic_max_load" in d and d.genetic_max_load.notna().any():
            g = d[d.genetic_max_load.notna()]
            gl = g[g.sssp_max_load < g.genetic_max_load]
            row.update({
                "genetic_systems": len(g),
                "sssp_le_genetic_share": (g.sssp_max_load <= g.genetic_max_load).mean(),
                "sssp_vs_genetic_less_group_pct": 100 * (1 - gl.sssp_max_load.sum()
                                                         / gl.genetic_max_load.sum())
                if len(gl) else 0.0,
                "sssp_vs_genetic_all_pct": 100 * (1 - g.sssp_max_load.sum()
                                                  / g.genetic_max_load.sum()),
                "paper_sssp_vs_genetic_pct": ref.sssp_better_than_genetic_percent.iloc[0]
                if len(ref) else None,
            })
        rows.append(row)
    return pd.DataFrame(rows)


def _tori_markdown(summary, df, population, eligible, sample, seed, max_nodes,
                   genetic_max_nodes, genetic_opts, wall, timing) -> str:
    busy = df[["graph_time_s", "bfs_time_s", "sssp_time_s", "genetic_time_s"]].sum().sum()
    lines = ["# Angara paper §5.1: SSSP vs BFS on random tori", "",
             f"Population: distinct ordered size tuples uniform on [2, 8]^n, drawn with seed "
             f"{seed} until {', '.join(f'{v} {k}D' for k, v in TORI_COUNTS.items())} systems "
             f"(see `experiments/angara.py`).  "
             + (f"Systems over {max_nodes} nodes left out: "
                + ", ".join(f"{len(population[n]) - len(eligible[n])} of {len(population[n])} "
                            f"{n}D" for n in population) + ".  " if max_nodes else "")
             + (f"Seeded sample of {len(df)} systems." if sample else "Every system.")
             + f"  Generation time summed over the systems {busy:.0f} s; wall time of the "
               f"last invocation {wall:.0f} s.", "",
             "Edge-forwarding index π = max channel load.  Groups as in the paper's Figure 5: "
             "systems where SSSP's π is less than, equal to or greater than BFS's; the "
             "improvement is 1 − Σπ_SSSP / Σπ_BFS over the 'less' group (the paper's 'in most "
             "cases, on average'), also given over all systems.  Unique share = mean over "
             "systems of the share of ordered pairs with exactly one minimal Angara route in "
             "the deadlock-free routing graph.", "",
             "| dims | systems | mean nodes | SSSP ≤ BFS | less / equal / greater "
             "| improvement, less group (paper) | improvement, all | unique pairs % (paper) "
             "| SSSP mean s | BFS mean s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        lines.append(
            f"| {int(r.dims)}D | {int(r.systems)} | {r.mean_nodes:.0f} "
            f"| {100 * r.sssp_le_bfs_share:.1f} % "
            f"| {int(r.sssp_lt_bfs)} / {int(r.sssp_eq_bfs)} / {int(r.sssp_gt_bfs)} "
            f"| {r.improvement_less_group_pct:.1f} % ({value_text(r.paper_improvement_pct)} %) "
            f"| {r.improvement_all_pct:.1f} % "
            f"| {r.unique_pairs_pct:.1f} ({value_text(r.paper_unique_pairs_pct)}) "
            f"| {r.sssp_time_mean_s:.2f} | {r.bfs_time_mean_s:.2f} |")
    if "genetic_systems" in summary:
        lines += ["", f"Genetic on the systems of at most {genetic_max_nodes} nodes "
                      f"(options {genetic_opts or {}}):", "",
                  "| dims | systems | SSSP ≤ Genetic | SSSP better than Genetic, less group "
                  "(paper) | all |", "|---|---|---|---|---|"]
        for _, r in summary.iterrows():
            if not isinstance(r.get("genetic_systems"), (int, float)) or \
                    not r.get("genetic_systems") > 0:
                continue
            lines.append(f"| {int(r.dims)}D | {int(r.genetic_systems)} "
                         f"| {100 * r.sssp_le_genetic_share:.1f} % "
                         f"| {r.sssp_vs_genetic_less_group_pct:.1f} % "
                         f"({value_text(r.paper_sssp_vs_genetic_pct)}) "
                         f"| {r.sssp_vs_genetic_all_pct:.1f} % |")
    if timing:
        lines += ["", "Generation time, whole torus, best of repeats (this machine, Python; "
                      "the paper's C code: 0.25 s at 150 nodes 3D and 90 nodes 4D):", "",
                  "| torus | nodes | SSSP s | BFS s | of which routing graph s |",
                  "|---|---|---|---|---|"]
        for t in timing:
            lines.append(f"| {t['dims']} | {t['nodes']} | {t['sssp_s']:.3f} | {t['bfs_s']:.3f} "
                         f"| {t['sssp_graph_s']:.3f} |")
    return "\n".join(lines) + "\n"
