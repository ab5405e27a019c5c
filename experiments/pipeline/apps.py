"""Closed-loop applications beyond one run: a job's slowdown against the same job alone on
the network, and the figures of a run's jobs -- a per-rank timeline (small jobs), the
distribution of iteration times, and slowdowns across routing choices.

>>> from icsim.model.config import config_from_dict
>>> cfg = config_from_dict({"topology": {"dims": [4, 4]}, "traffic": {"workload": "app",
...     "jobs": [{"motif": "pingpong", "placement": "list", "nodes": [0, 5],
...               "params": {"iterations": 2}}]}})
>>> [round(s["slowdown"], 3) for s in slowdowns(cfg)[1]]
[1.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from icsim.model.config import Config, config_from_dict
from icsim.simulator.simulation import run

if TYPE_CHECKING:
    import pandas as pd

#: the kinds a timeline draws, and their colours
TIMELINE = {"compute": "#4c72b0", "recv": "#dd8452", "send": "#55a868"}


def alone(config: Config, index: int) -> Config:
    """``config`` with job ``index`` alone on the network: the same job, the same stream
    (its ``seed`` fixed to what it had among the others)."""
    data = config.to_dict()
    jobs = data["traffic"]["jobs"]
    job = dict(jobs[index])
    if job.get("seed") is None:
        job["seed"] = config.seed + index
    data["traffic"]["jobs"] = [job]
    return config_from_dict(data)


def slowdowns(config: Config, engine: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """The run of ``config`` and, per job, its completion time there and alone (one more run
    per job) and the ratio: ``(result, [{name, shared_ns, alone_ns, slowdown}, ...])``."""
    shared = run(config, engine=engine)
    out = []
    for i, job in enumerate(shared["jobs"]):
        solo = run(alone(config, i), engine=engine)["jobs"][0]
        out.append({"name": job["name"], "shared_ns": job["completion_ns"],
                    "alone_ns": solo["completion_ns"],
                    "slowdown": job["completion_ns"] / solo["completion_ns"]})
    return shared, out


def job_lines(r: dict[str, Any]) -> list[str]:
    """A closed-loop run's jobs and message classes, as ``icsim run`` prints them (docs/model.md
    §9); none for other runs."""
    out = []
    for i, j in enumerate(r.get("jobs") or ()):
        line = (f"  job {i} {j['name']:<12} {j['ranks']} ranks on {j['terminals']} terminals: "
                f"done at {j['completion_ns'] / 1000:,.3f} us")
        if j["iterations"]:
            n = j["iterations"]
            line += (f", {n} iteration{'s' if n != 1 else ''} of "
                     f"{j['iteration_mean_ns'] / 1000:,.3f} ± {j['iteration_std_ns'] / 1000:,.3f}"
                     f" us")
        line += (f", waiting on the network {100 * j['wait_share_mean']:.1f} % (max "
                 f"{100 * j['wait_share_max']:.1f} %)")
        if "slowdown" in j:
            line += (f"; alone {j['alone_ns'] / 1000:,.3f} us, slowdown "
                     f"{j['slowdown']:.3f}")
        out.append(line)
    for name, m in (r.get("messages") or {}).items():
        out.append(f"  messages {name:>7} {m['count']:,} took mean {m['mean_ns']:,.1f} ns, "
                   f"p99 {m['p99_ns']:,.1f}")
    return out


def timeline_figure(ops: pd.DataFrame, job: int = 0, max_ranks: int = 64) -> Any:
    """A Gantt chart of one job's ranks (at most ``max_ranks``): computations, and the time
    each receive waited for its message (ready to done), one row per rank; iteration ends as
    ticks."""
    import matplotlib.pyplot as plt

    mine = ops[ops.job == job]
    ranks = sorted(mine["rank"].unique())[:max_ranks]
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.28 * len(ranks)))
    for row, r in enumerate(ranks):
        of = mine[mine["rank"] == r]
        for kind in ("compute", "recv"):
            part = of[(of.kind == kind) & (of.done_ns > of.ready_ns)]
            spans = list(zip(part.ready_ns / 1000.0, (part.done_ns - part.ready_ns) / 1000.0))
            ax.broken_barh(spans, (row - 0.4, 0.8), color=TIMELINE[kind],
                           label=("waiting on a message" if kind == "recv" else kind)
                           if row == 0 else None)
        marks = of[(of.kind == "wait") & (of.iteration >= 0)]
        ax.plot(marks.done_ns / 1000.0, np.full(len(marks), row), "|", color="black",
                markersize=9, label="iteration end" if row == 0 else None)
    ax.set_yticks(range(len(ranks)), [str(r) for r in ranks])
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("rank")
    ax.invert_yaxis()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(1, len(ranks))),
              ncol=4, frameon=False)
    ax.set_title(f"job {job}: per-rank timeline")
    fig.tight_layout()
    return fig


def iteration_figure(results: Sequence[tuple[str, dict]], job: int = 0) -> Any:
    """Box plots of a job's iteration times, one per labelled run (``(label, result)``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * len(results), 4))
    data = [np.asarray(r["jobs"][job]["iteration_ns"]) / 1000.0 for _, r in results]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(results) + 1), [label for label, _ in results])
    ax.set_ylabel("iteration time (µs)")
    ax.set_title(f"{results[0][1]['jobs'][job]['name']}: iteration times")
    fig.tight_layout()
    return fig


def slowdown_figure(table: pd.DataFrame, title: str = "") -> Any:
    """Grouped bars: a slowdown per job (``job``) and routing (``routing``), from a table
    with those columns and ``slowdown``; 1 is the job alone."""
    import matplotlib.pyplot as plt

    pivot = table.pivot(index="routing", columns="job", values="slowdown").reindex(
        list(dict.fromkeys(table["routing"])))              # the table's order
    fig, ax = plt.subplots(figsize=(2 + 1.2 * len(pivot), 4))
    width = 0.8 / len(pivot.columns)
    x = np.arange(len(pivot))
    for i, job in enumerate(pivot.columns):
        bars = ax.bar(x + (i - (len(pivot.columns) - 1) / 2) * width, pivot[job], width,
                      label=job)
        ax.bar_label(bars, fmt="%.2f", fontsize=8)
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xticks(x, [str(r).upper() for r in pivot.index])
    ax.set_ylabel("slowdown (shared / alone)")
    ax.set_title(title)
    ax.set_ylim(0, 1.25 * float(np.nanmax(pivot.to_numpy())))
    ax.legend(frameon=False, loc="upper left", ncol=len(pivot.columns))
    fig.tight_layout()
    return fig
