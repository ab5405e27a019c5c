"""Virtual-layer experiments: one assignment, and the ACRO paper's Fig. 5/6 reproduction.

Both are plain functions; the command line only wires arguments to them.

* :func:`layers_main` -- one topology, one table, one assigner: layers, verification, run time.
* :func:`reproduce_acro` -- connected random regular topologies over sizes, degrees and seeds,
  one minimal path per pair (destination-based table, seeded random tie-break), every assigner,
  verification of every assignment; a CSV of every run, a summary beside the paper's numbers
  (``experiments/papers/paper_data/acro_summary.csv``), layer and run-time plots.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from icsim.experiments.pipeline.execution import read_appended, run_appending
from icsim.experiments.pipeline.outputs import file_to_write
from icsim.model.limits import check_table_fits
from icsim.model.topology import Graph
from icsim.routing.layers import LayerAssignment, get_assigner
from icsim.routing.layers.minimal import minimal_table
from icsim.routing.layers.verify import verify_assignment
from icsim.routing.table import RoutingTable

REFERENCE_CSV = Path(__file__).resolve().parents[1] / "paper_data" / "acro_summary.csv"
TOPOLOGIES = ("random_regular", "edges")
RUN_COLUMNS = ["nodes", "degree", "seed", "assigner", "layers", "verified", "time_s", "verify_s",
               "channels", "diameter"]


def _assign_and_verify(table: RoutingTable, assigner: str) -> tuple[dict, LayerAssignment]:
    fn = get_assigner(assigner)
    gc.collect()                        # keep earlier garbage out of the timed call
    t0 = time.perf_counter()
    assignment = fn(table)
    t1 = time.perf_counter()
    check = verify_assignment(table, assignment)
    t2 = time.perf_counter()
    return {"layers": assignment.num_layers, "verified": check.ok, "time_s": t1 - t0,
            "verify_s": t2 - t1, "problems": check.problems}, assignment


def layers_main(topology: str = "random_regular", nodes: int = 64, degree: int = 4, seed: int = 0,
                assigner: str = "acro", edges_file: str | None = None, *,
                tie_break: str = "random", table_file: str | None = None,
                paths_file: str | None = None, out: str | Path | None = None) -> dict:
    """Assign virtual layers to one minimal table and verify them.

    Parameters
    ----------
    topology : {"random_regular", "edges"}
        A connected random ``degree``-regular graph on ``nodes`` nodes drawn with ``seed``, or the
        edge list in ``edges_file`` (implied when ``edges_file`` is given).
    nodes, degree, seed : int
        Size, degree and seed of the random regular graph; ``seed`` also seeds the table's
        random tie-break.
    assigner : str
        A registered layer assigner: ``"acro"``, ``"lash"`` or ``"lash_tor"``.
    edges_file : str, optional
        Edge list (``u v`` per line) read with :meth:`Graph.from_file`.
    tie_break : {"random", "lowest_port"}
        Which minimal path the destination-based table takes (see :mod:`icsim.routing.layers.minimal`).
    table_file : str, optional
        Use this routing-table file (:meth:`RoutingTable.load`) instead of building a table;
        its topology replaces the one above.
    paths_file : str, optional
        Use these routes instead of building a table: a text file of node paths, one route a
        line (:meth:`RoutingTable.from_paths`), on the graph of ``edges_file``.
    out : path, optional
        Write the table with its layers here (a table file with a layer per hop, which
        ``icsim tables --check`` checks and ``routing.table.file`` simulates with a virtual
        channel per layer); only a verified assignment is written.

    Returns
    -------
    dict
        ``layers``, ``verified``, ``time_s`` (the assigner alone), ``verify_s``, ``nodes``,
        ``degree`` (largest), ``channels``, ``topology``, ``assigner``, ``problems`` (empty when
        verified) and ``out`` when a file was written.

    Examples
    --------
    >>> r = layers_main(nodes=16, degree=3, seed=2, assigner="lash")
    >>> r["verified"], r["layers"] >= 1, r["channels"]
    (True, True, 48)
    """
    if out is not None:                 # a bad path says so now, not after the assignment
        out = file_to_write(out)
    if table_file is not None or paths_file is not None:
        if paths_file is None:
            table = RoutingTable.load(table_file)
        elif edges_file is None or table_file is not None:
            raise ValueError("routes as node paths (paths_file; on the command line --paths "
                             "FILE) go with the graph they run on (edges_file, --edges FILE), "
                             "and not with a table file")
        else:
            table = RoutingTable.from_paths(Graph.from_file(edges_file), paths_file)
        topo = table.topology
        dims = topo.dims if "coordinates" in topo.capabilities else ()
        check_table_fits(len(table.nodes), dims, layers=True)
    else:
        if edges_file is not None:
            topo = Graph.from_file(edges_file)
            check_table_fits(topo.num_nodes, layers=True)
        elif topology == "random_regular":
            check_table_fits(nodes, layers=True)        # before the graph and its table
            topo = Graph.random_regular(nodes, degree, seed)
        elif topology == "edges":
            raise ValueError("topology 'edges' needs an edge-list file (edges_file; on the "
                             "command line --edges FILE)")
        else:
            raise ValueError(f"unknown topology {topology!r}; valid: {', '.join(TOPOLOGIES)}")
        table = minimal_table(topo, tie_break=tie_break, seed=seed)
    result, assignment = _assign_and_verify(table, assigner)
    if out is not None and result["verified"]:
        assignment.attach(table).save(out)
        result["out"] = str(out)
    return {"topology": topo.describe(), "nodes": topo.num_nodes, "degree": topo.num_ports,
            "channels": topo.num_channels, "assigner": assigner, **result}


# ---------------------------------------------------------------------------- reproduction
def _one_topology(task: tuple[int, int, int, tuple[str, ...]]) -> list[dict]:
    """Every assigner on the (nodes, degree, seed) point; one row per assigner."""
    nodes, degree, seed, assigners = task
    graph = Graph.random_regular(nodes, degree, seed)
    table = minimal_table(graph, tie_break="random", seed=seed)
    diameter = max(len(r) for r in table.routes.values())
    rows = []
    for name in assigners:
        out, _ = _assign_and_verify(table, name)
        rows.append({"nodes": nodes, "degree": degree, "seed": seed, "assigner": name,
                     "layers": out["layers"], "verified": out["verified"],
                     "time_s": out["time_s"], "verify_s": out["verify_s"],
                     "channels": graph.num_channels, "diameter": diameter})
    return rows


def _run_all(runs_csv: Path, tasks: list, workers: int) -> int:
    """Run the tasks not yet in ``runs_csv``, appending each finished point (restartable);
    return how many points ran."""
    done = set()
    old = read_appended(runs_csv)
    if not old.empty:
        done = set(zip(old.nodes, old.degree, old.seed, old.assigner))
    todo = [(n, d, s, rest) for n, d, s, names in tasks
            if (rest := tuple(a for a in names if (n, d, s, a) not in done))]
    return run_appending(todo, _one_topology, runs_csv, RUN_COLUMNS, workers,
                         reused=len(tasks) - len(todo), label="acro-layers")


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (nodes, degree, assigner): seeds, avg/min/max layers, spread, mean run time.

    Examples
    --------
    >>> runs = pd.DataFrame({"nodes": [8, 8], "degree": [3, 3], "seed": [1, 2],
    ...                      "assigner": ["acro", "acro"], "layers": [2, 3],
    ...                      "verified": [True, True], "time_s": [0.1, 0.3]})
    >>> summarize(runs)[["avg", "min", "max", "spread"]].values.tolist()
    [[2.5, 2.0, 3.0, 1.0]]
    """
    g = runs.groupby(["nodes", "degree", "assigner"])
    out = g.agg(seeds=("seed", "nunique"), avg=("layers", "mean"), min=("layers", "min"),
                max=("layers", "max"), verified=("verified", "all"),
                time_s=("time_s", "mean")).reset_index()
    out[["min", "max"]] = out[["min", "max"]].astype(float)
    out["spread"] = out["max"] - out["min"]
    return out


def _wide(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (nodes, degree), assigners side by side, ACRO's reduction vs LASH in %."""
    w = summary.pivot(index=["nodes", "degree"], columns="assigner",
                      values=["avg", "min", "max", "spread", "verified", "time_s"])
    w.columns = [f"{a}_{stat}" for stat, a in w.columns]
    w = w.reset_index()
    if {"acro_avg", "lash_avg"} <= set(w.columns):
        w["acro_avg_reduction_pct"] = 100 * (w.lash_avg - w.acro_avg) / w.lash_avg
        w["acro_max_reduction_pct"] = 100 * (w.lash_max - w.acro_max) / w.lash_max
    return w


def _fmt_layers(row, a: str) -> str:
    return f"{row[a + '_avg']:.2f} [{row[a + '_min']:.0f}–{row[a + '_max']:.0f}]"


def _markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    def cell(x) -> str:
        return str(x).replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return lines


def _checks(wide: pd.DataFrame, assigners: Sequence[str]) -> list[str]:
    """The paper's claims, point by point: which hold and where one fails."""
    out = []

    def claim(text, bad):
        where = ", ".join(f"({r.nodes},{r.degree})" for r in bad.itertuples())
        out.append(f"- {text}: {'holds at every point' if bad.empty else 'FAILS at ' + where}")

    ver = [c for c in wide.columns if c.endswith("_verified")]
    claim("every assignment verified", wide[~wide[ver].all(axis=1)])
    if "acro" in assigners:
        claim("ACRO max − min over seeds ≤ 1", wide[wide.acro_spread > 1])
    if {"acro", "lash"} <= set(assigners):
        claim("ACRO average layers ≤ LASH average", wide[wide.acro_avg > wide.lash_avg])
        claim("ACRO maximum layers ≤ LASH maximum", wide[wide.acro_max > wide.lash_max])
    if {"acro", "lash_tor"} <= set(assigners):
        claim("ACRO average within one layer of LASH-TOR's",
              wide[(wide.acro_avg - wide.lash_tor_avg).abs() > 1])
    if "lash_tor" in assigners:
        claim("LASH-TOR max − min over seeds ≤ 1", wide[wide.lash_tor_spread > 1])
    return out


def _paper_rows(ref: pd.DataFrame, wide: pd.DataFrame, summary: pd.DataFrame) -> list[list]:
    """The reference CSV's rows, each with the reproduced counterpart."""
    rows = []
    for r in ref.itertuples():
        n = int(r.nodes) if r.nodes.isdigit() else None
        sub = wide if n is None else wide[wide.nodes == n]
        ours = "–"
        m = r.metric
        try:
            if sub.empty:
                ours = "– (size not run)"
            elif m == "lash_vls_max_table1":
                ours = f"{sub.lash_max.max():.0f} (max over degrees)"
            elif m == "lash_tor_vls_table1":
                ours = f"{sub.lash_tor_max.max():.0f} (max over degrees)"
            elif m.startswith("acro_vs_lash_") and m.endswith("_reduction_percent"):
                col = "acro_avg_reduction_pct" if "_avg_" in m else "acro_max_reduction_pct"
                best = sub.loc[sub[col].idxmax()]
                ours = f"{best[col]:.0f} (up to; at d={best.degree:.0f})"
            elif m == "acro_vs_lash_tor":
                d = (sub.acro_avg - sub.lash_tor_avg)
                ours = f"avg difference {d.mean():+.2f}, range {d.min():+.2f} to {d.max():+.2f}"
            elif m == "max_minus_min_vls_acro_and_lash_tor":
                ours = (f"ACRO ≤ {sub.acro_spread.max():.0f}, "
                        f"LASH-TOR ≤ {sub.lash_tor_spread.max():.0f}")
            elif m == "max_minus_min_vls_lash":
                at = sub[sub.degree == 3]
                ours = (f"{at.lash_spread.iloc[0]:.0f} at (|N|,d)=({n},3); max over degrees "
                        f"{sub.lash_spread.max():.0f}" if not at.empty
                        else f"max over degrees {sub.lash_spread.max():.0f}")
            elif m.endswith("_time_complexity"):
                a = m[: -len("_time_complexity")]
                big = summary[(summary.assigner == a) & (summary.nodes == summary.nodes.max())]
                if not big.empty:
                    ours = (f"measured mean {big.time_s.mean():.3f} s at |N|={big.nodes.iloc[0]}"
                            f" (over degrees)")
        except (AttributeError, KeyError, ValueError):
            ours = "– (assigner not run)"
        rows.append([m, r.nodes, r.value, ours, r.note])
    return rows


def read_reference(path: str | Path = REFERENCE_CSV) -> pd.DataFrame:
    r"""The paper's figures as strings, one row per ``metric,nodes,value,note`` line.

    ``pandas.read_csv(path, comment="#")`` stops at the reference file's notes, which hold
    unquoted commas; here each line is split at its first three commas only, so a note keeps
    its commas.

    Examples
    --------
    >>> import io
    >>> ref = read_reference(io.StringIO("# c\nmetric,nodes,value,note\nm,64,2,at (64, 3)\n"))
    >>> ref.note[0]
    'at (64, 3)'
    """
    text = path.read() if hasattr(path, "read") else Path(path).read_text()
    lines = [ln.split(",", 3) for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return pd.DataFrame(lines[1:], columns=lines[0])


def _plot(summary: pd.DataFrame, column: str, ylabel: str, path: Path, log: bool = False) -> None:
    from matplotlib.figure import Figure

    sizes = sorted(summary.nodes.unique())
    fig = Figure(figsize=(5.5 * len(sizes), 4.2), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    labels = {"acro": "ACRO", "lash": "LASH", "lash_tor": "LASH-TOR"}
    names = list(dict.fromkeys(summary.assigner))
    for ax, n in zip(axes, sizes):
        part = summary[summary.nodes == n]
        for i, a in enumerate(names):
            s = part[part.assigner == a].sort_values("degree")
            x = s.degree + (i - (len(names) - 1) / 2) * 0.12
            if column == "avg":
                ax.errorbar(x, s.avg, yerr=[s.avg - s["min"], s["max"] - s.avg], marker="o",
                            capsize=3, label=labels.get(a, a))
            else:
                ax.plot(x, s[column], marker="o", label=labels.get(a, a))
        ax.set_title(f"|N| = {n} switches")
        ax.set_xlabel("degree d (ports per switch)")
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted(part.degree.unique()))
        if log:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
            ax.yaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.savefig(path, dpi=120)


def reproduce_acro(out_dir: str | Path, sizes: Sequence[int] = (64, 256),
                   degrees: Iterable[int] = range(3, 13), seeds: int | Mapping[int, int] = 100,
                   assigners: Sequence[str] = ("acro", "lash", "lash_tor"), workers: int = 1,
                   *, reference_csv: str | Path = REFERENCE_CSV) -> str:
    """Reproduce the ACRO paper's Fig. 5/6: virtual layers of ACRO, LASH and LASH-TOR.

    For each ``|N|`` in ``sizes``, degree ``d`` in ``degrees`` and seed ``1 .. seeds``: a connected
    random ``d``-regular graph (:meth:`Graph.random_regular` with that seed), one minimal path
    per pair (a destination-based table, random tie-break with the same seed), every assigner,
    and verification of every assignment.

    Writes to ``out_dir``: ``acro_runs.csv`` (one row per run, with run times; a restarted call
    reuses the runs already there, so delete it to start afresh), ``acro_summary.csv``,
    ``acro_layers.png`` (layers vs degree, average with min–max bars, one panel per ``|N|``),
    ``acro_time.png`` (mean assigner run time) and ``acro_report.md``.

    Parameters
    ----------
    out_dir : path
    sizes : sequence of int
        Node counts ``|N|``.
    degrees : iterable of int
        Degrees ``d`` (a size/degree with no regular graph is skipped).
    seeds : int or mapping |N| -> int
        Topologies per (``|N|``, ``d``), or per ``|N|``; the paper uses 100.
    assigners : sequence of str
        Registered layer assigners.
    workers : int
        Processes; above 1 the points run in a process pool (run times then share the CPU).
    reference_csv : path
        The paper's figures, read with ``pandas.read_csv(path, comment="#")``.

    Returns
    -------
    str
        The report (markdown), also written to ``acro_report.md``.

    Examples
    --------
    >>> import tempfile
    >>> md = reproduce_acro(tempfile.mkdtemp(), sizes=(16,), degrees=(3,), seeds=2)
    >>> "| 16 | 3 |" in md
    True
    """
    for a in assigners:
        get_assigner(a)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    degrees = list(degrees)
    per_size = {n: seeds[n] if isinstance(seeds, Mapping) else seeds for n in sizes}
    # seed-major, so that a run stopped early has covered every (|N|, d) point evenly
    tasks = [(n, d, s, tuple(assigners)) for s in range(1, max(per_size.values()) + 1)
             for n in sizes if s <= per_size[n] for d in degrees if n * d % 2 == 0 and 0 < d < n]
    if not tasks:
        raise ValueError(f"no regular graph of {', '.join(map(str, sizes))} nodes and degree "
                         f"{', '.join(map(str, degrees))} (a d-regular graph on n nodes needs "
                         f"0 < d < n and n * d even)")
    runs_csv = out / "acro_runs.csv"
    t0 = time.perf_counter()
    ran = _run_all(runs_csv, tasks, workers)
    wall = time.perf_counter() - t0

    runs = pd.read_csv(runs_csv)
    runs = runs[runs.nodes.isin(sizes) & runs.degree.isin(degrees) & runs.assigner.isin(assigners)
                & (runs.seed >= 1) & (runs.seed <= runs.nodes.map(per_size))]
    summary = summarize(runs)
    summary.to_csv(out / "acro_summary.csv", index=False)
    wide = _wide(summary)
    _plot(summary, "avg", "virtual layers (avg, min–max)", out / "acro_layers.png")
    _plot(summary, "time_s", "assigner run time per table [s]", out / "acro_time.png", log=True)

    names = [a for a in ("acro", "lash", "lash_tor") if a in assigners] + \
            [a for a in assigners if a not in ("acro", "lash", "lash_tor")]
    seeds_text = ", ".join(f"{per_size[n]} for |N|={n}" for n in sizes)
    md = [f"# ACRO reproduction: virtual layers (|N| ∈ {list(sizes)}, d ∈ {degrees}; seeds: "
          f"{seeds_text})", "",
          "Layers per assigner as avg [min–max] over seeds; reduction = ACRO vs LASH, "
          "(LASH − ACRO) / LASH.", ""]
    header = ["|N|", "d"] + [f"{a} layers" for a in names]
    has_red = "acro_avg_reduction_pct" in wide.columns
    if has_red:
        header += ["ACRO avg reduction %", "ACRO max reduction %"]
    header += ["all verified"]
    rows = []
    for _, r in wide.iterrows():
        row = [int(r.nodes), int(r.degree)] + [_fmt_layers(r, a) for a in names]
        if has_red:
            row += [f"{r.acro_avg_reduction_pct:.0f}", f"{r.acro_max_reduction_pct:.0f}"]
        row.append("yes" if all(r[f"{a}_verified"] for a in names) else "NO")
        rows.append(row)
    md += _markdown_table(header, rows)
    md += ["", "## Against the paper", ""]
    ref_path = Path(reference_csv)
    if ref_path.exists():
        ref = read_reference(ref_path)
        md += _markdown_table(["metric", "|N|", "paper", "reproduced", "paper's note"],
                              _paper_rows(ref, wide, summary))
    else:
        md.append(f"(reference {ref_path} not found)")
    md += ["", "## Claims", ""] + _checks(wide, names)
    md += ["", "## Run time (assigner alone, mean per table)", ""]
    trows = []
    for n in sorted(summary.nodes.unique()):
        part = summary[summary.nodes == n]
        trows.append([n] + [f"{part[part.assigner == a].time_s.mean():.3f}" for a in names])
    md += _markdown_table(["|N|"] + [f"{a} [s]" for a in names], trows)
    md += ["", f"{len(runs)} runs; this call ran {ran} of the {len(tasks)} topologies (the "
           f"rest were in acro_runs.csv) in {wall:.0f} s with {workers} worker(s). Files: "
           "acro_runs.csv, acro_summary.csv, acro_layers.png, acro_time.png."]
    text = "\n".join(md) + "\n"
    (out / "acro_report.md").write_text(text)
    return text


def bench_assigners(out_dir: str | Path, sizes: Sequence[int] = (64, 128, 256, 512),
                    degree: int = 6, seeds: int = 3,
                    assigners: Sequence[str] = ("acro", "lash", "lash_tor")) -> str:
    """Run time of each assigner against ``|N|``, in this process only, for clean timings.

    Same inputs as :func:`reproduce_acro` (random ``degree``-regular graphs, seeds ``1 ..
    seeds``, one minimal path per pair).  Writes ``bench_runs.csv`` and ``bench_time.png``
    (median run time vs ``|N|``, log-log) and returns a markdown table with the exponent ``k``
    of a least-squares fit ``time ~ |N|**k`` over the sizes.

    Examples
    --------
    >>> import tempfile
    >>> md = bench_assigners(tempfile.mkdtemp(), sizes=(12, 16), degree=3, seeds=1)
    >>> md.splitlines()[-1].startswith("| fitted k")
    True
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for n in sizes for s in range(1, seeds + 1)
            for r in _one_topology((n, degree, s, tuple(assigners)))]
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS)
    runs.to_csv(out / "bench_runs.csv", index=False)
    med = runs.groupby(["nodes", "assigner"]).time_s.median().unstack()[list(assigners)]

    from matplotlib.figure import Figure

    labels = {"acro": "ACRO", "lash": "LASH", "lash_tor": "LASH-TOR"}
    fig = Figure(figsize=(6, 4.2), layout="constrained")
    ax = fig.subplots()
    slopes = {}
    for a in assigners:
        x, y = np.log(med.index.to_numpy(float)), np.log(med[a].to_numpy(float))
        slopes[a] = np.polyfit(x, y, 1)[0] if len(sizes) > 1 and (y > -np.inf).all() else np.nan
        ax.loglog(med.index, med[a], marker="o", label=f"{labels.get(a, a)} (~|N|^{slopes[a]:.1f})")
    ax.set_xlabel("|N| switches")
    ax.set_ylabel("assigner run time per table [s] (median)")
    ax.set_title(f"run time, random {degree}-regular graphs, {seeds} seed(s) per size")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.savefig(out / "bench_time.png", dpi=120)

    rows = [[n] + [f"{med.loc[n, a]:.3f}" for a in assigners] for n in med.index]
    rows.append(["fitted k in time ~ |N|^k"] + [f"{slopes[a]:.2f}" for a in assigners])
    md = _markdown_table(["|N|"] + [f"{a} [s]" for a in assigners], rows)
    text = "\n".join(md) + "\n"
    (out / "bench_report.md").write_text(text)
    return text
