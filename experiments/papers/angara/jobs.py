"""Beyond the Angara paper, 3: traffic-aware tables for the jobs of ``reproduce angara-sim``.

Angara's scheduler plugin writes a routing table per job.  Here each job of
:func:`~icsim.experiments.papers.angara.simulation.job_placements` (8, 16, 24 nodes of the Desmos
torus: the contiguous one and seeded random ones) runs its tornado and its interleaved
alltoall with three tables made for its nodes: BFS, SSSP, and a *traffic-aware* table -- the
exact MILP (``generator: optimal``) with the job's own traffic matrix as weights (the tornado's
permutation pairs; for the alltoall every pair of the job, so it is the job's optimal table).
The exchange is simulated to completion with each (one bubble VC, Table 1 links, 1 MiB
messages in 4 KiB packets, as ``angara-sim``).

``icsim reproduce angara-traffic`` writes ``angara_traffic_jobs.csv`` (every run, with the
job's max channel load under its traffic), ``angara_traffic_summary.csv`` and
``angara_traffic.md``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from time import perf_counter

import pandas as pd

from icsim.experiments.papers.angara.simulation import EQUAL_WITHIN, JOB_EXCHANGES, job_placements
from icsim.experiments.pipeline.execution import read_appended
from icsim.model.config import config_from_dict
from icsim.model.topology import Torus
from icsim.routing.table import RoutingTable
from icsim.routing.tables.augment import deadlock_free_routing_graph
from icsim.routing.tables.generators import generate
from icsim.routing.tables.traffic import collective_traffic
from icsim.simulator.simulation import run

DESMOS = (4, 2, 2, 2)
TABLES = ("bfs", "sssp", "traffic")
PARAMS = {"tornado": {"over": "index"}}


def traffic_max_load(table: RoutingTable, traffic: dict) -> float:
    """Max over channels of the traffic a table puts on them (units of the matrix)."""
    P = table.topology.num_ports
    loads: dict[int, float] = {}
    for (s, t), w in traffic.items():
        for u, p in table.channel_path(s, t):
            loads[u * P + p] = loads.get(u * P + p, 0.0) + w
    return max(loads.values(), default=0.0)


def job_tables(topo: Torus, graph, nodes: list[int], collective: str, seed: int = 0,
               time_limit_s: float = 60.0) -> tuple[dict, dict]:
    """BFS, SSSP and the traffic-aware table of one job and exchange, and its traffic
    (messages per pair)."""
    tm = collective_traffic(collective, topo, nodes, message_bytes=1, params=PARAMS.get(
        collective))
    tables = {"bfs": generate("bfs", topo, nodes, seed=seed, graph=graph),
              "sssp": generate("sssp", topo, nodes, seed=seed, graph=graph),
              "traffic": generate("optimal", topo, nodes, seed=seed, graph=graph, traffic=tm,
                                  time_limit_s=time_limit_s)}
    return tables, tm


def simulate_job(table: RoutingTable, collective: str, interleave: bool, nodes: list[int],
                 message_bytes: int, packet_bytes: int = 4096, seed: int = 1) -> dict:
    """Completion time of one exchange on the job's nodes, routed by ``table`` (a file)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.json"
        table.save(path)
        cfg = config_from_dict({
            "seed": seed, "topology": {"kind": "torus", "dims": list(table.topology.dims)},
            "packet": {"size_bytes": packet_bytes},
            "routing": {"algorithm": "table", "table": {"file": str(path)}},
            "traffic": {"workload": "collective", "collective": collective,
                        "interleave": interleave, "message_bytes": message_bytes,
                        "params": PARAMS, "nodes": list(nodes)}})
        r = run(cfg)
    return {"completion_time_us": r["completion_time_ns"] / 1000.0,
            "packets": r["packets_delivered"]}


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Per exchange and job size: the traffic-aware table against BFS and SSSP."""
    wide = df.pivot_table(index=["exchange", "size", "job", "placement"], columns="table",
                          values="completion_time_us").reset_index()
    load = df.pivot_table(index=["exchange", "size", "job"], columns="table",
                          values="job_max_load").reset_index()
    rows = []
    for (exchange, size), g in wide.groupby(["exchange", "size"], sort=False):
        vs_sssp = 100 * (g.sssp - g.traffic) / g.sssp
        vs_bfs = 100 * (g.bfs - g.traffic) / g.bfs
        lg = load[(load.exchange == exchange) & (load["size"] == size)]
        rows.append({
            "exchange": exchange, "size": int(size), "jobs": len(g),
            "sooner_than_sssp": int((vs_sssp > 100 * EQUAL_WITHIN).sum()),
            "equal_to_sssp": int((vs_sssp.abs() <= 100 * EQUAL_WITHIN).sum()),
            "later_than_sssp": int((vs_sssp < -100 * EQUAL_WITHIN).sum()),
            "vs_sssp_mean_pct": vs_sssp.mean(), "vs_sssp_max_pct": vs_sssp.max(),
            "vs_sssp_min_pct": vs_sssp.min(), "vs_bfs_mean_pct": vs_bfs.mean(),
            "sssp_vs_bfs_mean_pct": (100 * (g.bfs - g.sssp) / g.bfs).mean(),
            "contiguous_vs_sssp_pct": float(vs_sssp[g.placement == "contiguous"].iloc[0]),
            "load_bfs_mean": lg.bfs.mean(), "load_sssp_mean": lg.sssp.mean(),
            "load_traffic_mean": lg.traffic.mean()})
    return pd.DataFrame(rows)


def reproduce_traffic(out_dir: str | Path, message_bytes: int = 1 << 20, count: int = 20,
                      seed: int = 0, time_limit_s: float = 60.0,
                      command: str = "icsim reproduce angara-traffic") -> str:
    """Run every job and exchange with the three tables; write the CSVs and the report.
    Finished runs in ``angara_traffic_jobs.csv`` (same job, exchange, table, message size)
    are reused."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "angara_traffic_jobs.csv"
    old = read_appended(path)
    have = set() if old.empty else {(r.job, r.exchange, r.table, int(r.message_bytes))
                                    for r in old.itertuples()}
    topo = Torus(DESMOS)
    graph = deadlock_free_routing_graph(topo)
    t0 = perf_counter()
    for job, (size, placement, nodes) in enumerate(job_placements(count=count, seed=seed)):
        for name, collective, interleave in JOB_EXCHANGES:
            if all((job, name, t, message_bytes) in have for t in TABLES):
                continue
            tables, tm = job_tables(topo, graph, nodes, collective, seed, time_limit_s)
            rows = []
            for t in TABLES:
                r = simulate_job(tables[t], collective, interleave, nodes, message_bytes)
                rows.append({"size": size, "job": job, "placement": placement,
                             "nodes": " ".join(map(str, nodes)), "exchange": name, "table": t,
                             "message_bytes": message_bytes, **r,
                             "job_max_load": traffic_max_load(tables[t], tm),
                             "table_time_s": tables[t].meta["time_s"],
                             "status": tables[t].meta.get("status")})
            pd.DataFrame(rows).to_csv(path, mode="a", header=not path.exists(), index=False)
        print(f"  job {job}: {size} nodes ({placement}), {perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)
    wall = perf_counter() - t0
    df = pd.read_csv(path)
    df = df[df.message_bytes == message_bytes].drop_duplicates(["job", "exchange", "table"],
                                                               keep="last")
    summary = summarise(df)
    summary.to_csv(out_dir / "angara_traffic_summary.csv", index=False)
    md = _markdown(summary, df, message_bytes, count, seed, wall, command)
    (out_dir / "angara_traffic.md").write_text(md)
    return md


def _markdown(summary, df, message_bytes, count, seed, wall, command) -> str:
    solved = df[df.table == "traffic"].status.value_counts().to_dict()
    lines = [
        "# Traffic-aware tables for the jobs of angara-sim, simulated", "",
        f"Made by `{command}`: per job size (8, 16, 24 nodes of 4x2x2x2) the contiguous job "
        f"and {count} random ones (seed {seed}, as `angara-sim`); each exchange simulated to "
        f"completion ({message_bytes >> 10} KiB messages, 4 KiB packets, Table 1 links, one "
        f"bubble VC) with BFS, SSSP and a traffic-aware table made for the job's nodes.  "
        f"Traffic-aware: the exact MILP with the job's traffic matrix as weights (tornado: its "
        f"permutation pairs; alltoall: every pair of the job); MILP status "
        f"{', '.join(f'{k} {v}' for k, v in solved.items())}.  Change = (T_X − T_aware) / "
        f"T_X; equal within {100 * EQUAL_WITHIN:.1f} %.  Job max load: the largest number "
        f"of the job's messages one channel carries (under its own traffic).  Wall time of "
        f"the last invocation {wall:.0f} s.", "",
        "| exchange | job nodes | jobs | aware vs SSSP: sooner / equal / later "
        "| vs SSSP mean (min, max) | vs BFS mean | SSSP vs BFS mean | contiguous job vs SSSP "
        "| job max load BFS / SSSP / aware |", "|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        lines.append(
            f"| {r.exchange} | {r.size} | {r.jobs} | {r.sooner_than_sssp} / {r.equal_to_sssp} "
            f"/ {r.later_than_sssp} | {r.vs_sssp_mean_pct:+.1f} % ({r.vs_sssp_min_pct:+.1f}, "
            f"{r.vs_sssp_max_pct:+.1f}) | {r.vs_bfs_mean_pct:+.1f} % "
            f"| {r.sssp_vs_bfs_mean_pct:+.1f} % | {r.contiguous_vs_sssp_pct:+.1f} % "
            f"| {r.load_bfs_mean:.2f} / {r.load_sssp_mean:.2f} / {r.load_traffic_mean:.2f} |")
    lines += ["", "Every run in `angara_traffic_jobs.csv`."]
    return "\n".join(lines) + "\n"
