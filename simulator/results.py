"""The result record of a run (SPEC §9), made from an engine's :class:`~icsim.simulator.stats.Tally`
the same way whatever the engine.

Window mode (SPEC §7)
---------------------
Messages created in [warm-up, warm-up + measure) are measured.  The run continues (traffic
keeps flowing) until every measured packet is consumed, or the drain time is over.  The
*accepted load* is the number of packets consumed inside the window per node per window
length, in γ units.  A load is **saturated** when (a) some measured packet is still undelivered
at the end of the drain, or (b) accepted/offered < 0.95, or (c) the NIC source queues grow
through the window: their mean backlog over the last quarter of the window exceeds that over the
first quarter by more than max(1, M/4) packets per node.  ``saturation_reason`` says which.

Finite mode (the OutFlank reference method; collectives and traces)
-------------------------------------------------------------------
Every packet is measured and the run ends when the last one is consumed
(``completion_time_ns``).  The accepted load is then packets / node / completion time in γ
units.  A single finite run reports ``saturated`` only if it could not finish within
``run.max_time_us``; the saturation *point* in finite mode is decided across a sweep (mean
latency at most 1.2 × that at γ = 0.10, see :mod:`icsim.experiments.pipeline.saturation`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icsim.simulator.stats import DEROUTE_KINDS, LATENCY_BIN_EDGES_NS, Tally

VERSION_FALLBACK = "0.0.0"


def package_version() -> str:
    """The installed icsim version (what every result records)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("icsim")
    except PackageNotFoundError:
        return VERSION_FALLBACK


def latency_histogram(latency_ns: np.ndarray) -> dict[str, list]:
    """Counts of ``latency_ns`` in the fixed log-spaced bins :data:`LATENCY_BIN_EDGES_NS`
    (values below the first edge or above the last are counted in the first or last bin).

    >>> h = latency_histogram(np.array([5.0, 10.0, 11.0, 1e12]))
    >>> len(h["edges_ns"]) == len(h["counts"]) + 1, h["counts"][0], h["counts"][-1]
    (True, 3, 1)
    """
    edges = LATENCY_BIN_EDGES_NS
    clipped = np.clip(latency_ns, edges[0], edges[-1])
    counts, _ = np.histogram(clipped, bins=edges)
    return {"edges_ns": [float(e) for e in edges], "counts": counts.tolist()}


def packet_summary(tally: Tally, topology: Any) -> dict[str, Any]:
    """Latency, hops, derouting and dilation of the measured packets."""
    n = tally.measured_delivered
    out: dict[str, Any] = {}
    if not n:
        for k in ("latency_ns", "latency_p50_ns", "latency_p99_ns", "latency_max_ns",
                  "network_latency_ns", "hops", "dilation"):
            out[k] = None
        out["derouted"] = {k: 0.0 for k in (*DEROUTE_KINDS, "total")}
        out["latency_histogram"] = latency_histogram(np.zeros(0))
        return out
    a = tally.arrays()
    lat = a["latency"] / 1000.0
    # means as exact integer sums of picoseconds: they do not depend on the order in which
    # packets were consumed (engines may record same-phase consumptions in different orders)
    out["latency_ns"] = int(a["latency"].sum()) / n / 1000.0
    p50, p99 = np.percentile(lat, [50, 99])
    out["latency_p50_ns"] = float(p50)
    out["latency_p99_ns"] = float(p99)
    out["latency_max_ns"] = float(lat.max())
    out["network_latency_ns"] = int(a["net_latency"].sum()) / n / 1000.0
    out["hops"] = int(a["hops"].sum()) / n
    counts = np.bincount(a["deroute"], minlength=len(DEROUTE_KINDS) + 1)
    out["derouted"] = {k: int(counts[i + 1]) / n for i, k in enumerate(DEROUTE_KINDS)}
    out["derouted"]["total"] = int(counts[1:].sum()) / n
    # dilation: hops over the minimal distance, averaged over the measured packets (a packet to
    # itself counts 1); an exactly rounded sum, whatever the order
    d = topology.distances_between(a["src"], a["dst"])
    moved = d > 0
    extra = a["hops"][moved] / d[moved] - 1.0
    out["dilation"] = 1.0 + math.fsum(extra.tolist()) / n
    out["latency_histogram"] = latency_histogram(lat)
    return out


def make_result(config: Any, spec: Any, workload: Any, tally: Tally,
                engine: str) -> dict[str, Any]:
    """The result record of a run (every field of SPEC §9 and more)."""
    N = spec.num_nodes
    t1 = spec.gamma1_period_ns
    finite = spec.finite
    res: dict[str, Any] = {
        "offered_load": config.traffic.load,
        "mode": "finite" if finite else "window",
        "workload": workload.kind,
    }
    expected = tally.expected_measured if tally.expected_measured >= 0 else tally.measured
    unfinished = tally.measured_delivered < expected
    if finite:
        span = tally.last_consume
        res["accepted_load"] = (tally.delivered / N) / (span / 1000.0) * t1 if span else 0.0
        res["offered_measured_load"] = config.traffic.load
        res["completion_time_ns"] = tally.last_consume / 1000.0
        if workload.kind != "open":
            res["finish_time_ns"] = [t / 1000.0 for t in tally.finish]
        reason = "unfinished" if unfinished else None
    else:
        w0, w1 = spec.window
        wl_ns = (w1 - w0) / 1000.0
        res["accepted_load"] = tally.window_delivered / N / wl_ns * t1
        res["offered_measured_load"] = tally.measured / N / wl_ns * t1
        reason = saturation_reason(config, tally, unfinished, res["accepted_load"])
    res.update(packet_summary(tally, spec.topology))
    res["packets_measured"] = tally.measured if not finite else tally.expected_measured
    res["packets_delivered"] = tally.measured_delivered
    res["packets_generated"] = tally.generated
    res["saturated"] = reason is not None
    res["saturation_reason"] = reason
    res["source_queue_mean"] = (float(np.mean([s for _, s in tally.samples])) / N
                                if tally.samples else None)
    res.update(utilisation(spec, tally))
    res["retransmissions"] = tally.retransmissions
    res["packet_hops"] = tally.link_hops
    res["sim_time_ns"] = tally.end_ps / 1000.0
    res["wall_s"] = tally.wall_s
    res["events"] = tally.events
    res["engine"] = engine
    res["seed"] = config.seed
    res["version"] = package_version()
    res["config"] = config.to_dict()
    return res


def saturation_reason(config: Any, tally: Tally, unfinished: bool,
                      accepted: float) -> str | None:
    """Window mode's verdict (module docstring): None when the load is sustained."""
    if unfinished:
        return "unfinished"
    load = config.traffic.load
    if load > 0 and accepted / load < 0.95:
        return "throughput"
    s = [v for _, v in tally.samples]
    if len(s) >= 8:
        q = len(s) // 4
        growth = (np.mean(s[-q:]) - np.mean(s[:q])) / tally.num_nodes
        if growth > max(1.0, config.traffic.message_packets / 4):
            return "growing_queues"
    return None


def utilisation(spec: Any, tally: Tally) -> dict[str, Any]:
    """Mean and busiest channel utilisation over the window (None in finite runs)."""
    if tally.busy_ps is None:
        return {"channel_utilisation_mean": None, "channel_utilisation_max": None}
    vals = channel_utilisation(spec, tally)
    return {"channel_utilisation_mean": float(np.mean(vals)) if len(vals) else None,
            "channel_utilisation_max": float(np.max(vals)) if len(vals) else None}


def channel_utilisation(spec: Any, tally: Tally) -> np.ndarray:
    """Busy fraction of the window of every router-to-router channel, node-major, port order."""
    w0, w1 = spec.window
    P = spec.num_ports + 1
    busy = np.asarray(tally.busy_ps, dtype=np.float64).reshape(spec.num_nodes, P)[:, :-1]
    present = spec.neighbor >= 0
    return busy[present] / (w1 - w0)
