"""The Angara paper's §5.2 by simulation: one exchange per table run to
completion on the 32-node 4x2x2x2 Desmos torus (``icsim reproduce angara-sim``), and the same
exchanges inside jobs placed on the machine (:func:`reproduce_sim_jobs`).  The command line is
:mod:`icsim.experiments.papers.angara.cli`; its docstring gives the setup."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from icsim.experiments.papers.published import paper_table
from icsim.experiments.pipeline.outputs import note
from icsim.model.config import config_from_dict
from icsim.simulator.simulation import run

EXCHANGES = (  # name, collective, interleave, paper's case
    ("alltoall (interleaved)", "alltoall", True, "alltoall_32"),
    ("alltoall (step by step)", "alltoall", False, "alltoall_32"),
    ("tornado", "tornado", False, "tornado_32"),
    ("neighbor", "neighbor", False, "neighbor_32"),
)


def simulate_exchange(generator: str, collective: str, interleave: bool, message_bytes: int,
                      packet_bytes: int = 4096, seed: int = 1,
                      nodes: list[int] | None = None) -> dict:
    """Completion time of one exchange on 4x2x2x2 with a generated table; ``nodes``: run it
    as a job on these nodes (ranks in list order), with a table generated for them."""
    traffic = {"workload": "collective", "collective": collective, "interleave": interleave,
               "message_bytes": message_bytes, "params": {"tornado": {"over": "index"}}}
    if nodes is not None:
        traffic["nodes"] = list(nodes)
    cfg = config_from_dict({
        "seed": seed,
        "topology": {"kind": "torus", "dims": [4, 2, 2, 2]},
        "packet": {"size_bytes": packet_bytes},
        "routing": {"algorithm": "table", "table": {"generator": generator}},
        "traffic": traffic})
    r = run(cfg)
    return {"completion_time_us": r["completion_time_ns"] / 1000.0,
            "packets": r["packets_delivered"], "wall_s": r["wall_s"]}


JOB_SIZES = (8, 16, 24)
JOB_EXCHANGES = (("tornado", "tornado", False), ("alltoall (interleaved)", "alltoall", True))
#: two completion times closer than this (relative) count as equal
EQUAL_WITHIN = 0.005


def job_placements(sizes=JOB_SIZES, count: int = 20, seed: int = 0,
                   num_nodes: int = 32) -> list[tuple[int, str, list[int]]]:
    """Jobs on the Desmos torus: per size, Table 2's contiguous job (ids ``0 .. k-1``) and
    ``count`` seeded random ones (distinct sorted ids, as a scheduler hands out free nodes);
    ``(size, placement, nodes)``.

    >>> jobs = job_placements((4,), count=2)
    >>> jobs[0], [(k, how, len(set(nodes))) for k, how, nodes in jobs[1:]]
    ((4, 'contiguous', [0, 1, 2, 3]), [(4, 'random', 4), (4, 'random', 4)])
    """
    rng = np.random.default_rng(seed)
    out = []
    for k in sizes:
        out.append((k, "contiguous", list(range(k))))
        out += [(k, "random", sorted(rng.choice(num_nodes, k, replace=False).tolist()))
                for _ in range(count)]
    return out


def job_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per exchange and job size, SSSP against BFS over the jobs of ``df`` (one row per job,
    exchange and generator): how many jobs finish sooner / equal / later with SSSP, the mean
    and the largest improvement, and the contiguous job's."""
    wide = df.pivot_table(index=["exchange", "size", "job", "placement"], columns="generator",
                          values="completion_time_us").reset_index()
    wide["improvement"] = 100.0 * (wide["bfs"] - wide["sssp"]) / wide["bfs"]
    rows = []
    for (exchange, size), g in wide.groupby(["exchange", "size"], sort=False):
        imp = g["improvement"]
        rows.append({"exchange": exchange, "size": int(size), "jobs": len(g),
                     "sooner": int((imp > 100 * EQUAL_WITHIN).sum()),
                     "equal": int((imp.abs() <= 100 * EQUAL_WITHIN).sum()),
                     "later": int((imp < -100 * EQUAL_WITHIN).sum()),
                     "mean_percent": float(imp.mean()), "max_percent": float(imp.max()),
                     "contiguous_percent": float(
                         g.loc[g.placement == "contiguous", "improvement"].iloc[0])})
    return pd.DataFrame(rows)


def reproduce_sim_jobs(out_dir: Path, message_bytes: int = 1 << 20, count: int = 20,
                       seed: int = 0) -> str:
    """The exchanges as jobs on node subsets of the Desmos torus (the paper's Fig. 6 runs 2-32
    nodes a scheduler chose): BFS and SSSP tables made for each job; a Markdown section."""
    rows = []
    for job, (size, placement, nodes) in enumerate(job_placements(count=count, seed=seed)):
        for name, collective, interleave in JOB_EXCHANGES:
            for gen in ("bfs", "sssp"):
                r = simulate_exchange(gen, collective, interleave, message_bytes, nodes=nodes)
                rows.append({"size": size, "job": job, "placement": placement,
                             "nodes": " ".join(map(str, nodes)), "exchange": name,
                             "generator": gen, "completion_time_us": r["completion_time_us"],
                             "packets": r["packets"]})
        note(f"  job {job}: {size} nodes ({placement})")
    df = pd.DataFrame(rows)
    df.to_csv(out_dir / "angara_sim_jobs.csv", index=False)
    summary = job_summary(df)
    summary.to_csv(out_dir / "angara_sim_jobs_summary.csv", index=False)
    lines = ["## Jobs on node subsets", "",
             f"Per job size, Table 2's contiguous job (ids 0..k-1) and {count} random ones "
             f"(seed {seed}; distinct node ids, ranks in id order); BFS and SSSP tables "
             f"generated for each job's nodes, as the scheduler plugin does. Equal: within "
             f"{100 * EQUAL_WITHIN:.1f} %. Every run in `angara_sim_jobs.csv`.", "",
             "| exchange | job nodes | jobs | SSSP sooner / equal / later | mean improvement "
             "| up to | contiguous job |", "|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        lines.append(f"| {r.exchange} | {r.size} | {r.jobs} | {r.sooner} / {r.equal} / "
                     f"{r.later} | {r.mean_percent:+.1f}% | {r.max_percent:+.1f}% | "
                     f"{r.contiguous_percent:+.1f}% |")
    return "\n".join(lines) + "\n"


def reproduce_sim(out_dir: Path, message_bytes: int = 1 << 20,
                  generators=("bfs", "sssp", "genetic"), jobs: int = 20) -> str:
    """Simulate §5.2's exchanges with each generator's table on the whole torus, then as jobs
    on node subsets (:func:`reproduce_sim_jobs`, ``jobs`` random ones per size); a Markdown
    report."""
    rows = []
    t0 = time.time()
    for name, collective, interleave, case in EXCHANGES:
        for gen in generators:
            r = simulate_exchange(gen, collective, interleave, message_bytes)
            rows.append({"exchange": name, "generator": gen, **r})
            note(f"  {name:26s} {gen:8s} {r['completion_time_us']:10.1f} us")
    df = pd.DataFrame(rows)
    base = df[df.generator == "bfs"].set_index("exchange")["completion_time_us"]
    df["improvement_vs_bfs_percent"] = [
        100.0 * (base[e] - t) / base[e] for e, t in zip(df.exchange, df.completion_time_us)]
    df.to_csv(out_dir / "angara_sim.csv", index=False)
    paper = paper_table("angara_patterns_desmos")
    lines = ["# Angara §5.2 patterns, simulated on 4x2x2x2 (32 nodes)", "",
             f"1 MiB messages (here {message_bytes} B) in 4 KiB packets, Table 1 links, one "
             "bubble VC per direction; completion time of one exchange. Improvement = "
             "(T_BFS − T) / T_BFS. Paper: measured on the Desmos cluster (Fig. 6).", "",
             "| exchange | BFS (µs) | SSSP (µs) | Genetic (µs) | SSSP vs BFS | Genetic vs BFS "
             "| paper |", "|---|---|---|---|---|---|---|"]
    for name, collective, interleave, case in EXCHANGES:
        sub = df[df.exchange == name].set_index("generator")
        p = paper[paper.case == case]
        ptxt = "; ".join(f"{a}: {v}%" for a, v in zip(p.algorithm, p.improvement_percent)
                         if pd.notna(v)) or "—"
        cells = [f"{sub.loc[g, 'completion_time_us']:.1f}" if g in sub.index else "—"
                 for g in ("bfs", "sssp", "genetic")]
        imp = [f"{sub.loc[g, 'improvement_vs_bfs_percent']:+.1f}%" if g in sub.index else "—"
               for g in ("sssp", "genetic")]
        lines.append(f"| {name} | {' | '.join(cells)} | {' | '.join(imp)} | {ptxt} |")
    lines += ["", reproduce_sim_jobs(out_dir, message_bytes, count=jobs),
              f"Wall time {time.time() - t0:.0f} s."]
    text = "\n".join(lines) + "\n"
    (out_dir / "angara_sim.md").write_text(text)
    return text
