"""What a closed-loop run says about its jobs (the ``jobs`` and ``messages`` of a result
record; :mod:`icsim.traffic.apps`), read from the operations' times:

* per job: its completion time (its last operation done; every job starts at 0), its
  iterations' times (iteration i ends when the last of its ranks has done its mark of i; the
  first starts at 0), and the share of time its ranks waited on the network (per rank, the
  time some receive of it was ready but its message had not arrived, over the rank's own
  completion time; the mean and the largest over the ranks);
* per message-size class: how long messages took, from their send to the arrival of their
  last packet (classes by size: up to 256 B, 4 KiB, 64 KiB, 1 MiB, and above).

A job's slowdown (against the same job alone on the network) takes a second run:
:func:`icsim.experiments.pipeline.apps.slowdowns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icsim.traffic.apps.ops import KINDS, RECV, SEND, WAIT

#: message-size classes: upper bounds in bytes (the last class has none)
SIZE_CLASSES = (256, 4096, 65536, 1 << 20)


def size_class(nbytes: int) -> str:
    """``"<=256B"``, ``"<=4KiB"``, ``"<=64KiB"``, ``"<=1MiB"`` or ``">1MiB"``."""
    names = ("<=256B", "<=4KiB", "<=64KiB", "<=1MiB")
    for bound, name in zip(SIZE_CLASSES, names):
        if nbytes <= bound:
            return name
    return ">1MiB"


def _union_ns(starts: np.ndarray, ends: np.ndarray) -> float:
    """The length of the union of intervals [start, end), in ns."""
    if not len(starts):
        return 0.0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    gap = np.concatenate([[True], s[1:] > reach[:-1]])
    group = np.cumsum(gap) - 1
    first = s[gap]
    last = np.zeros(group[-1] + 1, dtype=np.int64)
    np.maximum.at(last, group, e)
    return float((last - first).sum()) / 1000.0


def job_summaries(app: Any, times: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """One summary per job (module docstring); a job with operations not done has
    ``finished`` False and its completion the last it did."""
    ops, done, ready = app.ops, times["done"], times["ready"]
    rank_job = app.job
    out = []
    for j, name in enumerate(app.names):
        lo, hi = int(app.first_op[j]), int(app.first_op[j + 1])
        d, r = done[lo:hi], ready[lo:hi]
        kind, rank = ops.kind[lo:hi], ops.rank[lo:hi]
        ranks = np.unique(rank)
        finished = bool((d >= 0).all())
        summary: dict[str, Any] = {
            "name": name, "ranks": int(len(np.nonzero(rank_job == j)[0])),
            "terminals": int(len(np.unique(app.terminal[rank_job == j]))),
            "finished": finished, "completion_ns": float(d.max()) / 1000.0,
        }
        summary.update(_iterations(ops.iteration[lo:hi], kind, rank, d))
        summary.update(_waiting(kind, rank, r, d, ranks))
        out.append(summary)
    return out


def _iterations(iteration: np.ndarray, kind: np.ndarray, rank: np.ndarray,
                done: np.ndarray) -> dict[str, Any]:
    marks = (kind == WAIT) & (iteration >= 0) & (done >= 0)
    if not marks.any():
        return {"iterations": 0, "iteration_ns": [], "iteration_mean_ns": None,
                "iteration_std_ns": None}
    its = iteration[marks]
    n = int(its.max()) + 1
    ends = np.full(n, -1, dtype=np.int64)
    np.maximum.at(ends, its, done[marks])
    ends = ends[ends >= 0]
    per = np.diff(np.concatenate([[0], np.maximum.accumulate(ends)])) / 1000.0
    return {"iterations": int(len(per)), "iteration_ns": per.tolist(),
            "iteration_mean_ns": float(per.mean()),
            "iteration_std_ns": float(per.std(ddof=1)) if len(per) > 1 else 0.0}


def _waiting(kind: np.ndarray, rank: np.ndarray, ready: np.ndarray, done: np.ndarray,
             ranks: np.ndarray) -> dict[str, Any]:
    shares = []
    recv = (kind == RECV) & (ready >= 0)
    for r in ranks.tolist():
        mine = rank == r
        end = done[mine].max()
        w = recv & mine
        stop = np.where(done[w] >= 0, done[w], end)
        waited = _union_ns(ready[w], np.maximum(stop, ready[w]))
        shares.append(waited / (end / 1000.0) if end > 0 else 0.0)
    a = np.asarray(shares)
    return {"wait_share_mean": float(a.mean()) if len(a) else 0.0,
            "wait_share_max": float(a.max()) if len(a) else 0.0}


def op_table(app: Any, times: dict[str, np.ndarray]) -> Any:
    """One row per operation: its job, rank, terminal, kind, peer, bytes, iteration and its
    times (ns; NaN: never) -- what a per-rank timeline draws."""
    import pandas as pd

    ops = app.ops

    def ns(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, a / 1000.0, np.nan)

    return pd.DataFrame({
        "job": app.job[ops.rank], "rank": ops.rank, "terminal": app.terminal[ops.rank],
        "kind": np.asarray(KINDS)[ops.kind], "peer": ops.peer, "bytes": ops.nbytes,
        "iteration": ops.iteration, "ready_ns": ns(times["ready"]),
        "done_ns": ns(times["done"]), "arrived_ns": ns(times["arrived"])})


def message_summary(app: Any, times: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Per size class: message count, mean and 99th-percentile time from send to arrival
    (ns), over the messages that arrived."""
    ops = app.ops
    sends = np.nonzero(ops.kind == SEND)[0]
    arrived = times["arrived"][ops.match[sends]]
    sent = times["done"][sends]
    ok = (arrived >= 0) & (sent >= 0)
    took = (arrived[ok] - sent[ok]) / 1000.0
    classes = np.array([size_class(int(b)) for b in ops.nbytes[sends[ok]]])
    out = {}
    for name in ("<=256B", "<=4KiB", "<=64KiB", "<=1MiB", ">1MiB"):
        t = took[classes == name]
        if len(t):
            out[name] = {"count": int(len(t)), "mean_ns": float(t.mean()),
                         "p99_ns": float(np.percentile(t, 99))}
    return out
