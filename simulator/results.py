"""The result record of a run (docs/model.md §9), made from an engine's
:class:`~icsim.simulator.stats.Tally` the same way whatever the engine.

Window mode (docs/model.md §7)
------------------------------
Messages created in [warm-up, warm-up + measure) are measured; the warm-up and the drain are
``run.warmup_us`` and ``run.drain_us``, or the settling time when it is longer
(:func:`~icsim.simulator.build.settling_time`; :func:`steady_state` says which, and whether
the window was too short to judge).  The run continues (traffic
keeps flowing) until every measured packet is consumed, or the drain time is over.  The
*accepted load* is the number of packets consumed inside the window per node per window
length, in γ units.  A load is **saturated** when (a) some measured packet is still undelivered
at the end of the drain, or (b) accepted / offered < 0.95 where *offered* is the load the
generators created in the window (``offered_measured_load``; the nominal γ differs from it with
Poisson arrivals and short windows), or (c) the NIC source queues grow
through the window: their mean backlog over the last quarter of the window exceeds that over the
first quarter by more than max(1, M/4) packets per node, or (d) some sources' own backlogs
grew through the window, by more than that limit and significantly (:func:`growing_sources`:
every flow watched, so that one overloaded channel does not hide in the average).
``saturation_reason`` names the rule and the numbers it compared; (d) names the sources and
the channels busy through the window.

Rules (b), (c) and (d) are decided when the window closes: nothing the drain does changes
them.  With ``run.stop_when_saturated`` the engines evaluate (b) and (c) then
(:func:`window_rule`) and, when one fires, stop the run there instead of draining it (a large
part of a saturated run's cost): the record is saturated by the same rule, its
``saturation_reason`` says the run stopped, and its latency statistics cover only the measured
packets delivered by the window's end.  A sustained load's record is unchanged by the option.

Finite mode (the OutFlank reference method; collectives and traces)
-------------------------------------------------------------------
Every packet is measured and the run ends when the last one is consumed
(``completion_time_ns``).  The accepted load is then packets / node / completion time in γ
units.  A single finite run reports ``saturated`` only if it could not finish within
``run.max_time_us``; the saturation *point* in finite mode is decided across a sweep (mean
latency at most 1.2 × that at γ = 0.10, see :mod:`icsim.experiments.pipeline.saturation`).

With ``run.latency_limit_ns`` (a sweep sets it to 1.2 × the baseline's latency under
``run.stop_when_saturated``) the engines stop a finite run as soon as its mean latency is
certain to exceed the limit (:func:`latency_rule`): every packet delivered has its latency,
every packet created and not yet delivered has waited ``now - birth`` already and will wait
longer, every packet not yet created will take at least 0.  The bound only grows, so the run
is saturated by the sweep's rule exactly when it would have been had it run to the end; its
record is saturated, with a reason that says so, and covers the packets delivered by then.  A
run the rule does not stop is unchanged by the option.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from icsim.simulator.app_results import job_summaries, message_summary, op_table
from icsim.simulator.latencies import LATENCY_BIN_EDGES_NS, histogram_counts
from icsim.simulator.measure import dilation
from icsim.simulator.stats import Tally
from icsim.traffic.apps.ops import KINDS, RECV
from icsim.traffic.load import packets_per_link_time

VERSION_FALLBACK = "0.0.0"
#: window mode: sustained needs accepted >= this x the measured offered load
THROUGHPUT_RATIO = 0.95
#: :func:`window_rule`'s verdicts
SUSTAINED, THROUGHPUT, GROWING_QUEUES = 0, 1, 2
#: window mode's per-source rule: the false discovery rate of its test (:func:`growing_sources`)
SOURCE_FDR = 0.01
#: window mode: a channel busy at least this fraction of the window is named full
FULL_CHANNEL = 0.99
#: the rule that stopped a finite run (:func:`latency_rule`; ``Tally.stopped_by_rule``)
LATENCY = 3
STOPPED_TEXT = "; the run stopped as the window closed (run.stop_when_saturated)"


def growth_limit(message_packets: int) -> float:
    """Window mode: source queues may grow by this many packets per node through the window
    (max(1, M/4) for M-packet messages) before the load counts as saturated."""
    return max(1.0, message_packets / 4)


def window_rule(window_delivered, measured, in_sources, num_nodes, window_ns, gamma1_ns,
                limit):
    """Window mode's rules (b) and (c) (module docstring) on the window's counts: packets
    consumed inside it, measured packets created in it, the packets at the NICs at each sample
    (``in_sources``).  :data:`THROUGHPUT` when accepted < 0.95 x offered,
    :data:`GROWING_QUEUES` when the source queues grew by more than ``limit`` per node,
    :data:`SUSTAINED` otherwise.  One function for both engines, which call it as the window
    closes (``run.stop_when_saturated``; the compiled one its code compiled,
    :mod:`~icsim.simulator.engines.compiled.rules`), and for :func:`saturation_reason`."""
    accepted = window_delivered / num_nodes / window_ns * gamma1_ns
    offered = measured / num_nodes / window_ns * gamma1_ns
    if offered > 0 and accepted / offered < THROUGHPUT_RATIO:
        return THROUGHPUT
    if queue_growth(in_sources, num_nodes) > limit:
        return GROWING_QUEUES
    return SUSTAINED


def queue_growth(in_sources, num_nodes):
    """How much the NIC backlog grew through the window, in packets per node: its mean over the
    last quarter of the samples minus that over the first (0.0 with fewer than 8 samples)."""
    n = len(in_sources)
    if n < 8:
        return 0.0
    q = n // 4
    return (np.mean(in_sources[n - q:]) - np.mean(in_sources[:q])) / num_nodes


def source_trends(samples) -> tuple[np.ndarray, np.ndarray]:
    """Each node's backlog trend through the window, from its samples (``samples``: samples x
    nodes): the least-squares line's rise over the window (packets) and its t statistic, the
    slope over its standard error, the error widened for the residuals' lag-1 autocorrelation
    r (by sqrt((1 + r) / (1 - r)), r clipped to [0, 0.9]: the effective number of samples of
    an AR(1) series).  A node whose backlog never varies has t 0; one that rises on a straight
    line, t infinite.

    >>> b = np.array([[k, 5, 2 + k % 2] for k in range(8)])   # a line, flat, zig-zag
    >>> rise, t = source_trends(b)
    >>> [round(float(x), 2) for x in rise], t.tolist()[:2], round(float(t[2]), 2)
    ([7.0, 0.0, 0.33], [inf, 0.0], 0.55)
    """
    b = np.asarray(samples, dtype=np.float64)
    n = b.shape[0]
    k = np.arange(n) - (n - 1) / 2
    sxx = float(k @ k)
    centred = b - b.mean(axis=0)
    slope = k @ centred / sxx
    res = centred - np.outer(k, slope)
    ss = (res * res).sum(axis=0)
    varies = ss > 0
    r1 = np.clip(np.divide((res[1:] * res[:-1]).sum(axis=0), ss, out=np.zeros_like(ss),
                           where=varies), 0.0, 0.9)
    se = np.sqrt(ss / (n - 2) / sxx * (1 + r1) / (1 - r1))
    t = np.divide(slope, se, out=np.where(slope > 0, np.inf, 0.0), where=varies)
    return slope * (n - 1), t


def student_sf(t, df: int) -> np.ndarray:
    """P(T > t) for Student's t with ``df`` (a whole number >= 1) degrees of freedom, by the
    closed forms of Abramowitz and Stegun 26.7.3 and 26.7.4 (no scipy: a run loads none).

    >>> [round(float(p), 6) for p in student_sf(np.array([0.0, 1.0, 2.093024, np.inf]), 19)]
    [0.5, 0.164938, 0.025, 0.0]
    """
    t = np.asarray(t, dtype=np.float64)
    theta = np.arctan(np.abs(t) / np.sqrt(df))
    c2 = np.cos(theta) ** 2
    term = np.ones_like(theta)
    total = np.ones_like(theta)
    if df % 2:                    # odd: (2/pi)(theta + sin cos (1 + 2/3 c^2 + 2.4/3.5 c^4 ..))
        for k in range(1, (df - 1) // 2):
            term = term * c2 * (2 * k) / (2 * k + 1)
            total = total + term
        inside = (2 / np.pi) * (theta + (np.sin(theta) * np.cos(theta) * total if df > 1
                                         else 0.0))
    else:                         # even: sin (1 + 1/2 c^2 + 1.3/2.4 c^4 ..)
        for k in range(1, df // 2):
            term = term * c2 * (2 * k - 1) / (2 * k)
            total = total + term
        inside = np.sin(theta) * total
    tail = (1.0 - inside) / 2
    return np.where(t >= 0, tail, 1.0 - tail)


def student_isf(p: float, df: int) -> float:
    """The t with ``student_sf(t, df) == p`` (0 < p < 0.5), by bisection."""
    lo, hi = 0.0, 1.0
    while student_sf(np.array(hi), df) > p:
        lo, hi = hi, hi * 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if student_sf(np.array(mid), df) > p else (lo, mid)
    return hi


def growing_sources(samples, limit: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Window mode's per-source rule (docs/model.md §7): the nodes whose NIC backlog grew
    through the window, by more than ``limit`` packets (the line's rise) and significantly, by
    a one-sided t test of the trend (:func:`source_trends`; n - 2 degrees of freedom) over all
    the nodes at a false discovery rate of :data:`SOURCE_FDR` (Benjamini and Hochberg; on a
    network with no growing source, the chance that any is called growing).  Returns the nodes
    (most significant first), their rises and t statistics, and the t the last one passed
    (inf when none did); nothing with fewer than 8 samples."""
    b = np.asarray(samples)
    n, T = b.shape if b.ndim == 2 else (0, 0)
    none = np.zeros(0, dtype=np.int64)
    if n < 8 or T == 0:
        return none, np.zeros(0), np.zeros(0), np.inf
    rise, t = source_trends(b)
    cand = np.nonzero(rise > limit)[0]
    if not len(cand):
        return none, np.zeros(0), np.zeros(0), np.inf
    order = cand[np.argsort(-t[cand], kind="stable")]
    p = student_sf(t[order], n - 2)
    ok = np.nonzero(p <= SOURCE_FDR * np.arange(1, len(order) + 1) / T)[0]
    if not len(ok):
        return none, np.zeros(0), np.zeros(0), np.inf
    m = int(ok[-1]) + 1
    chosen = order[:m]
    return chosen, rise[chosen], t[chosen], student_isf(SOURCE_FDR * m / T, n - 2)


def mser_truncation(series, flat: float) -> int:
    """MSER (White 1997) on the window's samples of the NIC backlog: the d that minimises the
    squared standard error of the mean of the samples after the d-th, ``sum((x_i - mean)^2) /
    (n - d)^2`` over i >= d, searched over the first half of the window (d <= n // 2, the
    smallest d on a tie: over the whole window a few equal samples at its end would look the
    steadiest of all).  A series whose range is at most ``flat`` (the growth limit) is steady
    as it stands: 0.  Each sample is a window-twentieth apart, already a batch, so no further
    batching (MSER-5 batches by 5 a series sampled every event).

    >>> mser_truncation([9, 7, 5, 3] + [1, 0] * 8, 1.0), mser_truncation([0] * 21, 1.0)
    (4, 0)
    """
    x = np.asarray(series, dtype=np.float64)
    n = len(x)
    if n < 8 or float(x.max() - x.min()) <= flat:
        return 0
    best, arg = np.inf, 0
    for d in range(n // 2 + 1):
        tail = x[d:]
        stat = float(((tail - tail.mean()) ** 2).sum()) / (n - d) ** 2
        if stat < best * (1 - 1e-12):
            best, arg = stat, d
    return arg


def steady_state(spec: Any, tally: Tally) -> dict[str, Any]:
    """Window mode: which warm-up and drain were used and why (``warmup_rule``:
    ``run.warmup_us``, or the settling time when it is longer: :func:`~icsim.simulator.build.
    settling_time`), where MSER puts the end of the transient in the window
    (``window_settled_us``, from its start; :func:`mser_truncation` on the NIC backlog), and
    ``window_too_short``: the window is shorter than the settling time, or its steady part is
    less than half of it (MSER's truncation reaches the search's bound, the window's middle):
    a verdict on such a window may be the transient's, not the load's."""
    if spec.window is None:
        return {k: None for k in ("warmup_us", "drain_us", "warmup_rule", "window_settled_us",
                                  "window_too_short")}
    w0, w1 = spec.window
    settle, how = spec.settling if spec.settling is not None else (0, "")
    out: dict[str, Any] = {
        "warmup_us": w0 / 1e6,
        "drain_us": ((spec.horizon_ps or w1) - w1) / 1e6,
        "warmup_rule": (f"the settling time, {how}" if settle and settle >= w0
                        else "run.warmup_us")}
    s = in_sources(tally)
    d = mser_truncation(s, spec.growth_limit * tally.num_nodes)
    n = len(s)
    out["window_settled_us"] = ((tally.samples[d][0] - w0) / 1e6 if n else None)
    out["window_too_short"] = bool(w1 - w0 < settle or (n >= 8 and d >= n // 2))
    return out


def latency_rule(latency_sum, waiting, waiting_birth_sum, now, expected, limit_ns):
    """Finite mode: whether the run's mean latency is already certain to exceed ``limit_ns``
    (module docstring).  ``latency_sum``: the latencies of the packets delivered (ps);
    ``waiting`` and ``waiting_birth_sum``: how many packets were created and not delivered, and
    the sum of their creation times; ``expected``: every packet the run will measure.  The
    bound ``latency_sum + waiting * now - waiting_birth_sum`` is at most the sum the run ends
    with; the margin lets a run whose mean could round to the limit itself run to its end
    (the sweep then judges it as usual).  Both engines call it after each measured delivery
    (the compiled one its code compiled, :mod:`~icsim.simulator.engines.compiled.rules`), and
    nothing else decides it."""
    if expected <= 0:
        return False
    bound = latency_sum + waiting * now - waiting_birth_sum
    return bound > limit_ns * 1000.0 * expected * (1.0 + 1e-9) + 1.0


def latency_stop_text(spec: Any, tally: Tally) -> str:
    """The saturation reason of a finite run :func:`latency_rule` stopped."""
    return (f"latency: the mean latency was certain to exceed {spec.latency_limit_ns:.6g} ns "
            f"(run.latency_limit_ns) at {tally.end_ps / 1e6:.6g} µs, with "
            f"{tally.expected_measured - tally.measured_delivered} of {tally.expected_measured} "
            f"packets undelivered; the run stopped there")


def in_sources(tally: Tally) -> np.ndarray:
    """The packets at the NICs at each window sample (what :func:`window_rule` reads)."""
    return np.array([v for _, v in tally.samples], dtype=np.int64)


def package_version() -> str:
    """The installed icsim version (what every result records)."""
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
    counts = histogram_counts(np.sort(np.asarray(latency_ns, dtype=np.float64)))
    return {"edges_ns": [float(e) for e in LATENCY_BIN_EDGES_NS], "counts": counts.tolist()}


def packet_summary(tally: Tally, topology: Any) -> dict[str, Any]:
    """Latency, hops, derouting and dilation of the measured packets, from what the engine
    summarised as they were consumed (:mod:`icsim.simulator.measure`): every figure the one the
    packets themselves would give."""
    n = tally.measured_delivered
    out: dict[str, Any] = {}
    if not n:
        for k in ("latency_ns", "latency_p50_ns", "latency_p99_ns", "latency_max_ns",
                  "network_latency_ns", "hops", "dilation"):
            out[k] = None
        out["derouted"] = {k: 0.0 for k in (*tally.deroute_kinds, "total")}
        out["latency_histogram"] = latency_histogram(np.zeros(0))
        return out
    # means as exact integer sums of picoseconds: they do not depend on the order in which
    # packets were consumed (engines may record same-phase consumptions in different orders)
    out["latency_ns"] = tally.latency_sum / n / 1000.0
    p50, p99 = tally.latencies.percentiles((50.0, 99.0))
    out["latency_p50_ns"] = p50
    out["latency_p99_ns"] = p99
    out["latency_max_ns"] = tally.latencies.max() / 1000.0
    out["network_latency_ns"] = tally.net_latency_sum / n / 1000.0
    out["hops"] = tally.hops_sum / n
    kinds, counts = tally.deroute_kinds, tally.deroutes
    out["derouted"] = {k: counts[i + 1] / n for i, k in enumerate(kinds)}
    out["derouted"]["total"] = sum(counts[1:]) / n
    out["dilation"] = dilation(tally.pairs, n)
    out["latency_histogram"] = tally.latencies.histogram()
    return out


def make_result(config: Any, spec: Any, workload: Any, tally: Tally,
                engine: str) -> dict[str, Any]:
    """The result record of a run (every field of docs/model.md §9 and more)."""
    N = spec.num_terminals                      # loads are per terminal
    t1 = spec.gamma1_period_ns
    finite = spec.finite
    res: dict[str, Any] = {
        "offered_load": config.traffic.load,
        # the one unit across families (docs/model.md §6): γ / max_i c_i
        "offered_packets_per_terminal_link_time": (
            config.traffic.load * packets_per_link_time(spec.topology)
            if workload.kind == "open" else None),
        "mode": "finite" if finite else "window",
        "workload": workload.kind,
        "topology": spec.topology.describe(),
    }
    expected = tally.expected_measured if tally.expected_measured >= 0 else tally.measured
    unfinished = tally.measured_delivered < expected and not tally.stopped_by_rule
    if finite:
        span = tally.last_consume
        res["accepted_load"] = (tally.delivered / N) / (span / 1000.0) * t1 if span else 0.0
        res["offered_measured_load"] = config.traffic.load
        res["completion_time_ns"] = tally.last_consume / 1000.0
        if workload.kind != "open":
            res["finish_time_ns"] = [t / 1000.0 for t in tally.finish]
        limit = ("run.max_time_us" if spec.time_limit_ps is None or spec.horizon_ps is not None
                 else f"the time limit ({spec.time_limit_ps / 1e6:.6g} µs: run.max_time_us "
                      f"unset)")
        reason = (f"unfinished: {expected - tally.measured_delivered} of {expected} packets "
                  f"undelivered by {limit}" if unfinished else None)
        if tally.stopped_by_rule == LATENCY:
            reason = latency_stop_text(spec, tally)
        if workload.app is not None:
            reason = app_outcome(res, workload.app, tally)
    else:
        w0, w1 = spec.window
        wl_ns = (w1 - w0) / 1000.0
        res["accepted_load"] = tally.window_delivered / N / wl_ns * t1
        res["offered_measured_load"] = tally.measured / N / wl_ns * t1
        reason = saturation_reason(spec, tally, unfinished, res["accepted_load"],
                                   res["offered_measured_load"])
        if tally.stopped_by_rule:
            reason += STOPPED_TEXT
    res.update(packet_summary(tally, spec.topology))
    res["source_wait_max_ns"] = tally.wait_max / 1000.0 if tally.measured_delivered else None
    res["starved_packets"] = starved_packets(spec, tally)
    res["packets_measured"] = tally.measured if not finite else tally.expected_measured
    res["packets_delivered"] = tally.measured_delivered
    res["packets_generated"] = tally.generated
    res["saturated"] = reason is not None
    res["saturation_reason"] = reason
    res["source_queue_mean"] = (float(np.mean([s for _, s in tally.samples])) / N
                                if tally.samples else None)
    res.update(utilisation(spec, tally))
    res.update(steady_state(spec, tally))
    res["sources_growing"] = (None if finite else
                              int(len(growing_sources(tally.source_samples,
                                                      spec.growth_limit)[0])))
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


def app_outcome(res: dict[str, Any], app: Any, tally: Tally) -> str | None:
    """A closed-loop run's completion (its last operation done), its jobs and message classes
    in ``res`` (:mod:`icsim.simulator.app_results`); why it is unfinished, or None."""
    times = tally.op_times
    res["completion_time_ns"] = tally.end_ps / 1000.0
    res["jobs"] = job_summaries(app, times)
    res["messages"] = message_summary(app, times)
    left = np.nonzero(times["done"] < 0)[0]
    if not len(left):
        return None
    i = int(left[0])
    ops = app.ops
    what = KINDS[int(ops.kind[i])] + (f" from rank {int(ops.peer[i])}"
                                      if ops.kind[i] == RECV else "")
    return (f"unfinished: {len(left)} of {ops.num_ops} operations not done by "
            f"run.max_time_us (the first: rank {int(ops.rank[i])}'s {what}, operation {i})")


def saturation_reason(spec: Any, tally: Tally, unfinished: bool, accepted: float,
                      offered: float) -> str | None:
    """Window mode's verdict (module docstring): None when the load is sustained, else the rule
    that fired and the numbers it compared (``"throughput: accepted 0.181 < 0.95 x offered
    0.191 (measured)"``).  The throughput rule compares the accepted load with the load the
    generators actually offered in the window (``offered``), not the nominal γ: with Poisson
    arrivals or short windows the two differ by more than 5 %."""
    w0, w1 = spec.window
    s, limit = in_sources(tally), spec.growth_limit
    rule = window_rule(tally.window_delivered, tally.measured, s, tally.num_nodes,
                       (w1 - w0) / 1000.0, spec.gamma1_period_ns, limit)
    if unfinished:
        expected = tally.expected_measured if tally.expected_measured >= 0 else tally.measured
        missing = f"{expected - tally.measured_delivered} of {expected} measured packets"
        if offered > 0 and accepted / offered >= THROUGHPUT_RATIO:
            # the network carried the load; a few packets waited, and waited (their source
            # queues may grow): starved (docs/model.md §7.1), told apart from a saturated load,
            # and still not sustained
            return (f"starved: throughput sustained (accepted {accepted:.4g} >= "
                    f"{THROUGHPUT_RATIO} x offered {offered:.4g}), but {missing} undelivered "
                    f"at the end of the drain{starved_text(spec, tally)}"
                    f"{stuck_text(spec, tally)}")
        return (f"unfinished: {missing} undelivered at the end of the drain"
                f"{stuck_text(spec, tally)}")
    if rule == THROUGHPUT:
        return (f"throughput: accepted {accepted:.4g} < {THROUGHPUT_RATIO} x offered "
                f"{offered:.4g} (measured)")
    if rule == GROWING_QUEUES:
        growth = queue_growth(s, tally.num_nodes)
        return (f"growing_queues: source queues grew by {growth:.3g} packets per node "
                f"through the window (> {limit:.3g})")
    nodes, rise, t, crit = growing_sources(tally.source_samples, limit)
    if len(nodes):
        shown = ", ".join(f"{int(i)} (+{r:.3g}, t {x:.3g})"
                          for i, r, x in zip(nodes[:8], rise[:8], t[:8]))
        more = f" and {len(nodes) - 8} more" if len(nodes) > 8 else ""
        return (f"growing_sources: the backlogs of {len(nodes)} of {tally.num_nodes} sources "
                f"grew through the window (by > {limit:.3g} packets, trend t >= {crit:.3g}: "
                f"{SOURCE_FDR:.0%} false discoveries): terminals {shown}{more}"
                f"{full_channels_text(spec, tally)}")
    return None


def full_channels(spec: Any, tally: Tally) -> list[tuple[int, int, float]]:
    """The router-to-router channels busy at least :data:`FULL_CHANNEL` of the window, busiest
    first: (router, port, utilisation)."""
    if tally.busy_ps is None:
        return []
    vals = channel_utilisation(spec, tally)
    node, port = np.nonzero(spec.neighbor >= 0)
    full = np.nonzero(vals >= FULL_CHANNEL)[0]
    full = full[np.argsort(-vals[full], kind="stable")]
    return [(int(node[i]), int(port[i]), float(vals[i])) for i in full]


def full_channels_text(spec: Any, tally: Tally) -> str:
    """``; channels busy >= 99 % of the window: router 0 port p4 (1.000), ...`` (empty when
    none is)."""
    full = full_channels(spec, tally)
    if not full:
        return ""
    topo = spec.topology
    shown = ", ".join(f"router {topo.where(r)} port {topo.port_name(p)} ({u:.3f})"
                      for r, p, u in full[:8])
    more = f" and {len(full) - 8} more" if len(full) > 8 else ""
    return f"; channels busy >= {FULL_CHANNEL:.0%} of the window: {shown}{more}"


def starved_packets(spec: Any, tally: Tally) -> int | None:
    """Measured packets delivered after waiting at their NIC longer than the measurement
    window (None in finite runs: no window to measure a wait by)."""
    return None if spec.window is None else tally.starved


def starved_text(spec: Any, tally: Tally) -> str:
    """``; 850 delivered after waiting over the 200 us window at their NIC, up to 499 us``."""
    n = starved_packets(spec, tally)
    if not n:
        return ""
    w0, w1 = spec.window
    return (f"; {n} delivered after waiting at their NIC longer than the {(w1 - w0) / 1e6:g} "
            f"us window, up to {tally.wait_max / 1e6:.0f} us")


def stuck_text(spec: Any, tally: Tally) -> str:
    """What an unfinished run says about stuck ports (empty when the engine did not look).
    Under credit flow control the engines looked at the wait graph as it was at the end (a
    deadlocked cycle would have been reported as a deadlock); under ack/nak there is none, and
    only the whole-network watchdog applies."""
    if tally.stuck_ports is None:
        return ""
    if spec.flow_control == "ack_nak":
        return (f"; {tally.stuck_ports} router ports stuck for a watchdog period or more (ack/nak "
                f"keeps no wait graph: a partial deadlock is not looked for)")
    if tally.stuck_ports == 0:
        return ("; no port stuck for a watchdog period, and no deadlocked cycle in the wait "
                "graph at the end (packets still moving: slow)")
    return (f"; {tally.stuck_ports} router ports stuck for a watchdog period or more, in no "
            f"deadlocked cycle of the wait graph at the end")


def utilisation(spec: Any, tally: Tally) -> dict[str, Any]:
    """Mean and busiest channel utilisation over the window (None in finite runs); on a
    topology of several link classes, the same per class (``channel_utilisation_by_class``:
    ``{class: {"mean": .., "max": ..}}``, e.g. a dragonfly's local and global links)."""
    if tally.busy_ps is None:
        return {"channel_utilisation_mean": None, "channel_utilisation_max": None}
    vals = channel_utilisation(spec, tally)
    out = {"channel_utilisation_mean": float(np.mean(vals)) if len(vals) else None,
           "channel_utilisation_max": float(np.max(vals)) if len(vals) else None}
    names, index = spec.topology.port_classes
    if len(names) > 1:
        cls = index[spec.neighbor >= 0]
        out["channel_utilisation_by_class"] = {
            name: {"mean": float(np.mean(vals[cls == i])), "max": float(np.max(vals[cls == i]))}
            for i, name in enumerate(names) if (cls == i).any()}
    return out


def channel_utilisation(spec: Any, tally: Tally) -> np.ndarray:
    """Busy fraction of the window of every router-to-router channel, node-major, port order."""
    w0, w1 = spec.window
    P = spec.ports_per_router
    busy = np.asarray(tally.busy_ps, dtype=np.float64).reshape(spec.num_nodes, P)[
        :, :spec.num_ports]
    present = spec.neighbor >= 0
    return busy[present] / (w1 - w0)


def channel_table(spec: Any, tally: Tally) -> Any:
    """One row per router-to-router channel and VC over the measurement window (a pandas
    DataFrame; empty in finite runs, which have no window): ``node``, ``port``, ``direction``
    ("x+"; "p3" on graphs), ``dim`` and ``sign`` (-1 and 0 on graphs), ``vc``, ``vc_name``,
    ``utilisation`` (busy fraction of the window, the channel's, on each of its VC rows),
    ``packets`` (that crossed it on this VC), ``mean_occupancy`` (packets in this VC's queue,
    sampled through the window), ``to`` (the router the channel leads to), ``link_class``, on
    tori the node's coordinates ``c0, c1, ...``, on a dragonfly ``group`` and ``to_group``, on a
    fat tree ``level`` — the table :mod:`icsim.experiments.pipeline.run_figures` draws."""
    import pandas as pd

    columns = ["node", "port", "direction", "dim", "sign", "vc", "vc_name", "utilisation",
               "packets", "mean_occupancy"]
    if tally.busy_ps is None:
        return pd.DataFrame(columns=columns)
    N, P, V = spec.num_nodes, spec.ports_per_router, spec.num_vcs
    topo = spec.topology
    torus = "coordinates" in topo.capabilities
    w0, w1 = spec.window
    node, port = np.nonzero(spec.neighbor >= 0)
    busy = np.asarray(tally.busy_ps, dtype=np.float64)[node * P + port] / (w1 - w0)
    qpackets = np.asarray(tally.packets, dtype=np.int64)
    qocc = np.asarray(tally.occupancy, dtype=np.float64)
    names = [topo.port_name(p) for p in range(spec.num_ports)]
    to = spec.neighbor[node, port]
    class_names, class_index = topo.port_classes
    extra = {"to": to,
             "link_class": np.asarray(class_names, dtype=object)[class_index[node, port]]}
    if "groups" in topo.capabilities:
        a = topo.routers_per_group
        extra.update(group=node // a, to_group=to // a)
    if "updown" in topo.capabilities:
        extra["level"] = node // topo.switches_per_level
    frames = []
    for vc in range(V):
        q = (node * P + port) * V + vc
        f = {"node": node, "port": port, "direction": [names[p] for p in port],
             "dim": port >> 1 if torus else np.full(len(port), -1),
             "sign": np.where(port & 1, -1, 1) if torus else np.zeros(len(port), int),
             "vc": np.full(len(port), vc), "vc_name": spec.vcs[vc].name,
             "utilisation": busy, "packets": qpackets[q], "mean_occupancy": qocc[q], **extra}
        if torus:
            for d in range(topo.n):
                f[f"c{d}"] = topo.coord_array[node, d]
        frames.append(pd.DataFrame(f))
    return (pd.concat(frames).sort_values(["node", "port", "vc"], kind="stable")
            .reset_index(drop=True))


def node_table(spec: Any, tally: Tally) -> Any:
    """One row per node (terminal; a pandas DataFrame): ``sent`` and ``received`` (measured
    packets delivered, by source and by destination), ``latency_ns`` (their mean by source),
    and in window mode ``accepted_load`` (packets it consumed inside the window, in γ units),
    with the coordinates ``c0, c1, ...`` on tori."""
    import pandas as pd

    N = spec.num_terminals
    sent = np.asarray(tally.sent, dtype=np.int64)
    lat_sum = np.asarray(tally.latency_by_src, dtype=np.int64) / 1000.0
    out = {"node": np.arange(N), "sent": sent,
           "received": np.asarray(tally.received, dtype=np.int64),
           "latency_ns": np.divide(lat_sum, sent, out=np.full(N, np.nan), where=sent > 0)}
    if tally.accepted is not None and spec.window is not None:
        w0, w1 = spec.window
        out["accepted_load"] = (np.asarray(tally.accepted, dtype=np.float64)
                                / ((w1 - w0) / 1000.0) * spec.gamma1_period_ns)
    topo = spec.topology
    if "coordinates" in topo.capabilities:
        for d in range(topo.n):
            out[f"c{d}"] = topo.coord_array[:, d]
    return pd.DataFrame(out)


class Result(dict):
    """A run's result record (the JSON's fields, read as ``r["latency_ns"]`` or
    ``r.latency_ns``) with its per-packet and per-channel data:

    ``latencies``
        every measured packet's latency in ns (numpy array, sorted);
    ``channels``
        :func:`channel_table` (one row per channel and VC; empty in finite mode);
    ``nodes``
        :func:`node_table` (one row per node);
    ``ops``
        a closed-loop run's operations (:func:`op_table`; None for other workloads).
    """

    def __init__(self, record: dict[str, Any], spec: Any = None, tally: Tally | None = None,
                 workload: Any = None):
        super().__init__(record)
        self._spec, self._tally, self._workload = spec, tally, workload
        self._channels = self._nodes = None

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def latencies(self) -> np.ndarray:
        return self._tally.latencies.values() / 1000.0

    @property
    def channels(self) -> Any:
        if self._channels is None:
            self._channels = channel_table(self._spec, self._tally)
        return self._channels

    @property
    def nodes(self) -> Any:
        if self._nodes is None:
            self._nodes = node_table(self._spec, self._tally)
        return self._nodes

    @property
    def ops(self) -> Any:
        app = getattr(self._workload, "app", None)
        return None if app is None else op_table(app, self._tally.op_times)

    def __reduce__(self):                    # pickles as the plain record
        return (dict, (dict(self),))
