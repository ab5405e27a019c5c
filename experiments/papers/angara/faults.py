"""Beyond the Angara paper, 4: tables around failed links and nodes.

For a torus (4x2x2x2, 8x8x8) and each fault case -- ``k`` random failed links (k = 1, 2, 4, 8)
or ``k`` failed nodes (1, 2) -- seeded draws of the failed set; per draw:

* whether the failures leave the nodes in service connected at all;
* whether plain DOR still works (no dimension-order route crosses a failure: what the simulator's
  ``dor`` needs, which therefore refuses faulty tori);
* whether a deadlock-free single-VC Angara table exists, three ways: direction-order routes only
  (the §3.1 graph without first/last steps), the generators' graph (the deadlock-free
  augmentation, :func:`~icsim.routing.tables.faults.fault_tolerant_routing_graph`: BFS, SSSP,
  refined and optimal all choose among its routes, so they succeed or fail together), and every
  Angara route with any first/last step (deadlock-free or not: what the route shape alone
  allows);
* for a share of the draws (``load_draws``): the max load and ``σ(4)`` of the BFS, SSSP and
  refined tables, and how many virtual channels ACRO needs for a shortest-path table of the
  same faulty network (one minimal path per pair, random ties, then ACRO's layers);
* on 4x2x2x2, the simulated completion time of an alltoall (interleaved) on the nodes in service
  against the number of failed links, with the SSSP, refined and BFS tables on one VC and the
  shortest-path table on ACRO's layers (:func:`simulate_faults`, a figure).

``icsim reproduce angara-faults --dims 4x2x2x2`` (or ``8x8x8``) writes
``angara_faults_<dims>_sets.csv``, ``..._summary.csv``, ``..._sim.csv``, ``..._sim.png`` and
``angara_faults_<dims>.md``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from time import perf_counter
from typing import Sequence

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.execution import read_appended, run_appending
from icsim.model.config import config_from_dict
from icsim.model.topology import Torus
from icsim.routing.layers import get_assigner
from icsim.routing.layers.minimal import minimal_table
from icsim.routing.tables.augment import angara_routing_graph
from icsim.routing.tables.check import check_table
from icsim.routing.tables.faults import (fault_tolerant_routing_graph, random_failed_links,
                                         random_failed_nodes, reachable_ends, routability)
from icsim.routing.tables.generators import generate
from icsim.routing.tables.metrics import table_metrics
from icsim.routing.tables.routing_graph import build_routing_graph
from icsim.simulator.simulation import run

LINK_COUNTS = (1, 2, 4, 8)
NODE_COUNTS = (1, 2)


# ----------------------------------------------------------------------------- draws
def fault_draw(dims: Sequence[int], kind: str, k: int, i: int, seed: int = 0
               ) -> tuple[list[tuple[int, int]], list[int]]:
    """Fault set number ``i`` of ``k`` failed links (``kind='links'``) or nodes, drawn from
    ``numpy.random.default_rng([seed, kind, k, i])``: a set does not depend on how many are
    drawn.

    >>> fault_draw((4, 4), "links", 1, 0), fault_draw((4, 4), "nodes", 2, 0)
    (([(14, 0)], []), ([], [8, 14]))
    """
    healthy = Torus(tuple(dims))
    rng = np.random.default_rng([seed, 0 if kind == "links" else 1, k, i])
    if kind == "links":
        return random_failed_links(healthy, k, rng), []
    return [], random_failed_nodes(healthy, k, rng)


def fault_draws(dims: Sequence[int], kind: str, k: int, draws: int, seed: int = 0
                ) -> list[tuple[list[tuple[int, int]], list[int]]]:
    """The first ``draws`` fault sets of :func:`fault_draw`; single failed nodes are
    enumerated instead when ``draws`` reaches the node count."""
    n = Torus(tuple(dims)).num_nodes
    if kind == "nodes" and k == 1 and draws >= n:
        return [([], [v]) for v in range(n)]
    return [fault_draw(dims, kind, k, i, seed) for i in range(draws)]


def dor_blocked(topology: Torus) -> int:
    """Ordered pairs of nodes in service whose dimension-order route (the ``dor`` algorithm's:
    dimensions in order, minimal direction, + on a tie) crosses a failure; all pairs at once."""
    nodes = np.asarray(topology.alive_nodes, dtype=np.int64)
    src, dst = np.repeat(nodes, len(nodes)), np.tile(nodes, len(nodes))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    table = np.frombuffer(topology.dor_port_table, dtype=np.uint8).astype(np.int64)
    codes = np.asarray(topology.relative_codes, dtype=np.int64)
    nbr = topology.neighbor_array
    cur = src.copy()
    blocked = np.zeros(len(src), dtype=bool)
    while True:
        live = (cur != dst) & ~blocked
        if not live.any():
            return int(blocked.sum())
        port = table[codes[dst[live]] - codes[cur[live]] + topology.relative_base]
        nxt = nbr[cur[live], port]
        idx = np.flatnonzero(live)
        blocked[idx[nxt < 0]] = True
        cur[idx[nxt >= 0]] = nxt[nxt >= 0]


# ----------------------------------------------------------------------------- one fault set
def fault_case(dims: Sequence[int], links, nodes, *, loads: bool = False, seed: int = 0,
               refine_time_s: float = 5.0, check: str = "all") -> dict:
    """Routability (and, with ``loads``, the tables' loads and ACRO's VCs) of one fault set.

    ``check``: which tables go through the checker (``'all'`` or ``'refined'``).

    >>> r = fault_case((4, 2, 2, 2), [(0, 0)], [], loads=True, refine_time_s=0.5)
    >>> r["deadlock_free_ok"], r["dor_ok"], r["sssp_max_load"] >= r["refined_max_load"]
    (True, False, True)
    """
    healthy = Torus(tuple(dims))
    topo = Torus(healthy.dims, healthy.wrap, failed_links=links, failed_nodes=nodes)
    alive = np.asarray(topo.alive_nodes)
    hop = topo.hop_distances(int(alive[0]))
    row = {"dims": "x".join(map(str, dims)), "kind": "links" if links else "nodes",
           "k": len(links) or len(nodes), "failed_links": json.dumps([list(x) for x in links]),
           "failed_nodes": json.dumps(list(nodes)), "alive": len(alive),
           "pairs": len(alive) * (len(alive) - 1),
           "connected": bool((hop[alive] >= 0).all())}
    row["dor_blocked_pairs"] = dor_blocked(topo)
    row["dor_ok"] = row["dor_blocked_pairs"] == 0
    t0 = perf_counter()
    for name, graph in (("no_fsls", build_routing_graph(topo)),
                        ("any_turn", angara_routing_graph(topo))):
        ok = reachable_ends(graph, alive)
        np.fill_diagonal(ok, True)
        row[f"{name}_unroutable"] = int((~ok).sum())
        row[f"{name}_ok"] = row[f"{name}_unroutable"] == 0
    graph = fault_tolerant_routing_graph(topo)
    rep = routability(graph, explain=row["connected"] and len(alive) <= 64)
    row["deadlock_free_unroutable"] = len(rep.unroutable)
    row["deadlock_free_ok"] = rep.ok
    counts = rep.counts()
    for reason in ("disconnected", "no-angara-route", "refused-turns"):
        row[f"unroutable_{reason.replace('-', '_')}"] = counts.get(reason, 0)
    row["turns"] = len(graph.turns)
    row["routability_s"] = perf_counter() - t0
    if not loads:
        return row
    row["load_draw"] = True
    if rep.ok:
        tables = {"bfs": generate("bfs", topo, seed=seed, graph=graph)}
        tables["sssp"] = generate("sssp", topo, seed=seed, graph=graph)
        tables["refined"] = generate("refined", topo, seed=seed, graph=graph,
                                     start=tables["sssp"], time_limit_s=refine_time_s)
        for name, table in tables.items():
            m = table_metrics(table)
            row[f"{name}_max_load"] = m.max_load
            row[f"{name}_sigma4"] = m.sigma4
            row[f"{name}_time_s"] = table.meta["time_s"]
            if check == "all" or name == check:
                row[f"{name}_checked_ok"] = check_table(table).ok
        row["perfect_load"] = table_metrics(tables["sssp"]).perfect_load
    if row["connected"]:
        t1 = perf_counter()
        sp = minimal_table(topo, tie_break="random", seed=seed)
        row["acro_vcs"] = get_assigner("acro")(sp).num_layers
        row["shortest_path_max_load"] = table_metrics(sp).max_load
        row["acro_time_s"] = perf_counter() - t1
    return row


def _job(args) -> list[dict]:
    dims, links, nodes, loads, seed, refine_time_s, check, case, draw = args
    row = fault_case(dims, links, nodes, loads=loads, seed=seed, refine_time_s=refine_time_s,
                     check=check)
    row.update(case=case, draw=draw, seed=seed)
    return [row]


COLUMNS = ["dims", "case", "kind", "k", "draw", "seed", "failed_links", "failed_nodes", "alive",
           "pairs", "connected", "dor_blocked_pairs", "dor_ok", "no_fsls_unroutable", "no_fsls_ok",
           "deadlock_free_unroutable", "deadlock_free_ok", "any_turn_unroutable", "any_turn_ok",
           "unroutable_disconnected", "unroutable_no_angara_route",
           "unroutable_refused_turns", "turns", "routability_s", "load_draw",
           "bfs_max_load", "bfs_sigma4", "bfs_time_s", "bfs_checked_ok",
           "sssp_max_load", "sssp_sigma4", "sssp_time_s", "sssp_checked_ok",
           "refined_max_load", "refined_sigma4", "refined_time_s", "refined_checked_ok",
           "perfect_load", "acro_vcs", "shortest_path_max_load", "acro_time_s"]


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (kind, k), d in df.groupby(["kind", "k"], sort=False):
        ld = d[d.load_draw.fillna(False).astype(bool)]
        ok = ld[ld.deadlock_free_ok]
        row = {"case": f"{k} failed {kind if k > 1 else kind[:-1]}", "kind": kind, "k": int(k),
               "sets": len(d), "connected_share": d.connected.mean(),
               "dor_share": d.dor_ok.mean(), "no_fsls_share": d.no_fsls_ok.mean(),
               "deadlock_free_share": d.deadlock_free_ok.mean(),
               "any_turn_share": d.any_turn_ok.mean(),
               "unroutable_pairs_mean": d.deadlock_free_unroutable.mean(),
               "sets_disconnected": int((d.unroutable_disconnected > 0).sum()),
               "sets_no_angara_route": int((d.unroutable_no_angara_route > 0).sum()),
               "sets_refused_turns": int((d.unroutable_refused_turns > 0).sum()),
               "load_sets": len(ok)}
        for name in ("bfs", "sssp", "refined"):
            if len(ok) and f"{name}_max_load" in ok:
                row[f"{name}_max_load_mean"] = ok[f"{name}_max_load"].mean()
                row[f"{name}_sigma4_mean"] = ok[f"{name}_sigma4"].mean()
                checked = ok[f"{name}_checked_ok"].dropna() if f"{name}_checked_ok" in ok \
                    else pd.Series(dtype=bool)
                row[f"{name}_checked"] = f"{int(checked.sum())}/{len(checked)}"
        if len(ok):
            row["perfect_load_mean"] = ok.perfect_load.mean()
        acro = ld.acro_vcs.dropna() if "acro_vcs" in ld else pd.Series(dtype=float)
        if len(acro):
            row.update(acro_vcs_mean=acro.mean(), acro_vcs_min=int(acro.min()),
                       acro_vcs_max=int(acro.max()), acro_sets=len(acro),
                       shortest_path_max_load_mean=ld.shortest_path_max_load.mean())
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- simulation
SIM_TABLES = ("sssp", "refined", "bfs", "shortest path + ACRO")


def simulate_alltoall(topo: Torus, table_name: str, message_bytes: int, seed: int = 1,
                      refine_time_s: float = 5.0) -> dict:
    """Completion time of an interleaved alltoall on the nodes in service of ``topo``, with
    the named table (one VC under the bubble rule) or the shortest-path table on ACRO's
    virtual layers (``'shortest path + ACRO'``)."""
    topology = {"kind": "torus", "dims": list(topo.dims),
                "failed_links": sorted([u, topo.port_name(p)] for u, p in topo.failed_links
                                       if p % 2 == 0),
                "failed_nodes": sorted(topo.failed_nodes)}
    if table_name == "shortest path + ACRO":
        table_cfg = {"generator": "minimal", "layers": "acro"}
        tmp = None
    else:
        opts = {"time_limit_s": refine_time_s} if table_name == "refined" else {}
        table = generate(table_name, topo, seed=seed, **opts)
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        tmp.close()
        table.save(tmp.name)
        table_cfg = {"file": tmp.name}
    try:
        cfg = config_from_dict({
            "seed": seed, "topology": topology, "packet": {"size_bytes": 4096},
            "routing": {"algorithm": "table", "table": table_cfg},
            "traffic": {"workload": "collective", "collective": "alltoall", "interleave": True,
                        "message_bytes": message_bytes}})
        r = run(cfg)
    finally:
        if tmp is not None:
            Path(tmp.name).unlink(missing_ok=True)
    return {"completion_time_us": r["completion_time_ns"] / 1000.0,
            "packets": r["packets_delivered"], "wall_s": r["wall_s"]}


def simulate_faults(dims: Sequence[int], link_counts: Sequence[int] = (0,) + LINK_COUNTS,
                    draws: int = 5, message_bytes: int = 256 << 10, seed: int = 0,
                    tables: Sequence[str] = SIM_TABLES) -> pd.DataFrame:
    """Alltoall completion time against the number of failed links: per ``k`` the first
    ``draws`` seeded fault sets that leave a deadlock-free single-VC table (k = 0: the healthy
    torus once), every table of ``tables`` on each."""
    rows = []
    for k in link_counts:
        sets = [([], [])] if k == 0 else []
        i = 0
        while k and len(sets) < draws and i < 50 * draws:
            links, _ = fault_draw(dims, "links", k, i, seed)
            i += 1
            topo = Torus(tuple(dims), failed_links=links)
            if routability(fault_tolerant_routing_graph(topo), explain=False).ok:
                sets.append((links, []))
        for d, (links, _) in enumerate(sets):
            topo = Torus(tuple(dims), failed_links=links)
            for name in tables:
                r = simulate_alltoall(topo, name, message_bytes, seed=1)
                rows.append({"k": k, "set": d, "failed_links": json.dumps(
                    [list(x) for x in links]), "table": name, **r})
                print(f"  k={k} set {d} {name:22s} {r['completion_time_us']:9.1f} us",
                      flush=True)
    return pd.DataFrame(rows)


def plot_sim(df: pd.DataFrame, path: Path, dims: str, message_bytes: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    markers = {"sssp": "o", "refined": "s", "bfs": "^", "shortest path + ACRO": "D"}
    labels = {"sssp": "SSSP (1 VC)", "refined": "refined SSSP (1 VC)", "bfs": "BFS (1 VC)",
              "shortest path + ACRO": "shortest paths + ACRO layers"}
    ks = sorted(df.k.unique())
    for i, (name, g) in enumerate(df.groupby("table", sort=False)):
        stats = g.groupby("k").completion_time_us.agg(["mean", "min", "max"]).reindex(ks)
        x = np.arange(len(ks)) + (i - 1.5) * 0.06
        ax.errorbar(x, stats["mean"], yerr=[stats["mean"] - stats["min"],
                                            stats["max"] - stats["mean"]],
                    marker=markers.get(name, "o"), capsize=3, label=labels.get(name, name))
    ax.set_xticks(np.arange(len(ks)), [str(k) for k in ks])
    ax.set_xlabel("failed links (random; mean, min–max over the fault sets)")
    ax.set_ylabel("alltoall completion time (µs)")
    ax.set_title(f"{dims}: alltoall ({message_bytes >> 10} KiB messages) on the nodes in service")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------------------- the command
def reproduce_faults(out_dir: str | Path, dims: Sequence[int] = (4, 2, 2, 2), draws: int = 100,
                     node_draws: int | None = None, load_draws: int | None = None,
                     link_counts: Sequence[int] = LINK_COUNTS,
                     node_counts: Sequence[int] = NODE_COUNTS, seed: int = 0,
                     refine_time_s: float = 5.0, check: str = "all", sim_draws: int = 0,
                     sim_message_bytes: int = 256 << 10, workers: int = 1,
                     command: str = "icsim reproduce angara-faults") -> str:
    """Fault study on one torus; see the module docstring.

    ``draws`` fault sets per link count, ``node_draws`` (default ``draws``) per node count
    (single nodes enumerated when that covers them all), tables and ACRO on the first
    ``load_draws`` of each (default all), ``sim_draws`` routable sets per link count simulated.
    Finished fault sets in the CSV are reused.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = "x".join(map(str, dims))
    sets_csv = out_dir / f"angara_faults_{name}_sets.csv"
    node_draws = draws if node_draws is None else node_draws
    load_draws = max(draws, node_draws) if load_draws is None else load_draws
    jobs = []
    for kind, counts, n in (("links", link_counts, draws), ("nodes", node_counts, node_draws)):
        for k in counts:
            for i, (links, nodes) in enumerate(fault_draws(dims, kind, k, n, seed)):
                jobs.append((tuple(dims), links, nodes, i < load_draws, seed, refine_time_s,
                             check, f"{kind}{k}", i))

    done = set()
    old = read_appended(sets_csv)
    if not old.empty:
        done = {(r.case, int(r.draw), int(r.seed), bool(r.load_draw) if pd.notna(r.load_draw)
                 else False) for r in old.itertuples()}
    todo = [j for j in jobs if (j[7], j[8], seed, j[3]) not in done]
    t0 = perf_counter()
    run_appending(todo, _job, sets_csv, COLUMNS, workers, reused=len(jobs) - len(todo),
                  label=f"angara-faults {name}")
    wall = perf_counter() - t0
    df = pd.read_csv(sets_csv)
    want = {(j[7], j[8]) for j in jobs}
    df = df[[(r.case, int(r.draw)) in want and int(r.seed) == seed for r in df.itertuples()]]
    df = df.drop_duplicates(["case", "draw"], keep="last")
    summary = summarise(df)
    summary.to_csv(out_dir / f"angara_faults_{name}_summary.csv", index=False)
    sim = None
    if sim_draws:
        t1 = perf_counter()
        sim = simulate_faults(dims, (0,) + tuple(link_counts), sim_draws, sim_message_bytes,
                              seed)
        sim.to_csv(out_dir / f"angara_faults_{name}_sim.csv", index=False)
        plot_sim(sim, out_dir / f"angara_faults_{name}_sim.png", name, sim_message_bytes)
        wall += perf_counter() - t1
    md = _markdown(summary, df, name, draws, node_draws, load_draws, seed, refine_time_s,
                   sim, sim_message_bytes, wall, command)
    (out_dir / f"angara_faults_{name}.md").write_text(md)
    return md


def _pct(x) -> str:
    return "–" if pd.isna(x) else f"{100 * x:.0f} %"


def _num(x, fmt="{:.1f}") -> str:
    return "–" if x is None or pd.isna(x) else fmt.format(x)


def _markdown(summary, df, name, draws, node_draws, load_draws, seed, refine_time_s, sim,
              sim_bytes, wall, command) -> str:
    lines = [
        f"# Angara tables around failed links and nodes: {name}", "",
        f"Made by `{command}`; fault sets drawn with seed {seed} ({draws} per link count, "
        f"{node_draws} per node count — single nodes enumerated where that covers them all); "
        f"tables, loads and ACRO on the first {load_draws} sets of each case; refined: "
        f"{refine_time_s:g} s from SSSP.  Wall time of the last invocation {wall:.0f} s.", "",
        "Share of fault sets for which a deadlock-free single-VC table exists: *DOR* — no "
        "dimension-order route crosses a failure (the simulator's `dor`); *no FS/LS* — "
        "direction-order Angara routes only; *BFS / SSSP / refined* — the deadlock-free routing "
        "graph with first/last steps (Theorem 2 augmentation, refused turns of unroutable pairs "
        "offered first); all three choose among its routes, so they succeed together; *any "
        "FS/LS* — every Angara route, deadlock-free or not (what the route shape allows).  "
        "Why pairs fail (sets with at least one such pair): disconnected / no Angara-shaped "
        "route / a needed first-last step refused by Theorem 2.", "",
        "| case | sets | connected | DOR | no FS/LS | BFS / SSSP / refined | any FS/LS "
        "| unroutable pairs (mean) | sets: disconnected / no Angara route / refused turn |",
        "|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        lines.append(
            f"| {r.case} | {r.sets} | {_pct(r.connected_share)} | {_pct(r.dor_share)} "
            f"| {_pct(r.no_fsls_share)} | {_pct(r.deadlock_free_share)} "
            f"| {_pct(r.any_turn_share)} | {r.unroutable_pairs_mean:.1f} "
            f"| {r.sets_disconnected} / {r.sets_no_angara_route} / {r.sets_refused_turns} |")
    lines += ["", "Max channel load (and σ4) of the tables, mean over the routable sets among "
                  "the load draws; every table checked deadlock-free where the column says so "
                  "(checked ok / checked).  ACRO: virtual channels it needs for a shortest-path "
                  "table (one minimal path over the links in service per pair, random ties) of "
                  "the same faulty network, over the connected load draws.", "",
              "| case | sets | perfect load | BFS max (σ4) | SSSP max (σ4) | refined max (σ4) "
              "| checked ok (BFS, SSSP, refined) | ACRO VCs mean (min–max) "
              "| shortest-path table max |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        get = lambda c: getattr(r, c, None)                             # noqa: E731
        cell = lambda a: (f"{_num(get(f'{a}_max_load_mean'))} "          # noqa: E731
                          f"({_num(get(f'{a}_sigma4_mean'), '{:.2f}')})")
        checked = ", ".join(str(get(f"{a}_checked")) for a in ("bfs", "sssp", "refined")
                            if isinstance(get(f"{a}_checked"), str))
        acro = (f"{r.acro_vcs_mean:.2f} ({r.acro_vcs_min}–{r.acro_vcs_max})"
                if pd.notna(get("acro_vcs_mean")) else "–")
        lines.append(f"| {r.case} | {r.load_sets} | {_num(get('perfect_load_mean'))} "
                     f"| {cell('bfs')} | {cell('sssp')} | {cell('refined')} | {checked or '–'} "
                     f"| {acro} | {_num(get('shortest_path_max_load_mean'))} |")
    if sim is not None and len(sim):
        lines += ["", f"Simulated alltoall (interleaved, {sim_bytes >> 10} KiB messages, 4 KiB "
                      f"packets, Table 1 links) on the nodes in service, completion time in µs, "
                      f"mean (min–max) over the routable fault sets "
                      f"(`angara_faults_{name}_sim.csv`, figure `angara_faults_{name}_sim.png`):",
                  "", "| failed links | sets | " + " | ".join(SIM_TABLES) + " |",
                  "|---|---|" + "---|" * len(SIM_TABLES)]
        for k, g in sim.groupby("k"):
            cells = []
            for t in SIM_TABLES:
                s = g[g.table == t].completion_time_us
                cells.append(f"{s.mean():.0f} ({s.min():.0f}–{s.max():.0f})" if len(s) else "–")
            lines.append(f"| {k} | {g['set'].nunique()} | " + " | ".join(cells) + " |")
    lines += ["", f"Every fault set, in `angara_faults_{name}_sets.csv`."]
    return "\n".join(lines) + "\n"
