"""What an engine tallies during a run (docs/model.md §7), in the same form whatever the engine.

:class:`Tally` is the engine-neutral record: the measured packets summarised as they were
consumed (:mod:`icsim.simulator.measure`: their latencies kept a byte or two each, sums, counts
per deroute code, per (hops, distance) pair and per terminal), plus counters, the NIC backlog
samples and the channel statistics of the measurement window.
:func:`icsim.simulator.results.make_result` turns a tally into the result record.

:class:`Collector` is the SimPy engine's sink, filling a tally one consumed packet at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from icsim.simulator.latencies import CHUNK, LATENCY_BIN_EDGES_NS, Latencies

__all__ = ["Collector", "LATENCY_BIN_EDGES_NS", "Tally"]


@dataclass
class Tally:
    """An engine's raw account of one run (times in ps).

    Of the measured, delivered packets: ``latencies`` (every one's,
    :class:`~icsim.simulator.latencies.Latencies`), the sums of their ``latency_sum``,
    ``hops_sum`` and ``net_latency_sum`` (network latencies), ``wait_max`` (the longest wait
    at a NIC: latency less network latency), ``starved`` (how many waited there longer than the
    measurement window; None without a window), ``deroutes`` (how many had each deroute code:
    0 not derouted, else 1 + the index of its kind in ``deroute_kinds``, the routing
    algorithm's own words), ``pairs`` (how many made each (hops, minimal distance) pair), and
    per terminal ``sent`` and ``received`` (counts) and ``latency_by_src`` (the latencies of
    those it sent, summed).  Counters: ``delivered`` (every
    packet consumed), ``measured_delivered``, ``window_delivered`` (consumed inside the window),
    ``generated`` and ``measured`` (packets the workload created so far, and the measured ones),
    ``expected_measured`` (finite runs: what must be delivered), ``last_consume``, ``finish``
    (per node, its last packet received), ``samples`` ((time, packets at NICs) through the
    window), ``source_samples`` (each node's NIC backlog at each of those samples: a samples x
nodes array, packets created there less those its router accepted), ``link_hops``,
``retransmissions``, ``events``.  Window channel statistics
    (None in finite runs): ``busy_ps`` (per port id), ``packets`` (per queue id), ``occupancy``
    (per queue id, mean over the samples), ``accepted`` (per node, consumed inside the
    window).  ``stuck_ports``:
    router ports whose queue heads had not moved since the last watchdog check when the run
    ended (:mod:`icsim.simulator.engines.deadlock`).  ``stopped_by_rule``: the window rule
    (:func:`icsim.simulator.results.window_rule`) that stopped the run as its window closed
    (``run.stop_when_saturated``), or :data:`icsim.simulator.results.LATENCY` when the finite
    run's latency limit did (``run.latency_limit_ns``), 0 if none did.  ``op_times``: a
    closed-loop run's per-operation times (``ready``, ``done``, ``arrived``; -1: never), None
    for other workloads.
    """

    num_nodes: int
    deroute_kinds: list = field(default_factory=list)
    latencies: Latencies = field(default_factory=Latencies)
    latency_sum: int = 0
    hops_sum: int = 0
    deroutes: list = field(default_factory=list)
    pairs: dict = field(default_factory=dict)
    sent: Any = None
    received: Any = None
    latency_by_src: Any = None
    net_latency_sum: int = 0
    wait_max: int = 0
    starved: int | None = None
    delivered: int = 0
    measured_delivered: int = 0
    window_delivered: int = 0
    generated: int = 0
    measured: int = 0
    expected_measured: int = -1
    last_consume: int = 0
    finish: Any = None
    samples: list = field(default_factory=list)
    link_hops: int = 0
    retransmissions: int = 0
    events: int = 0
    end_ps: int = 0
    wall_s: float = 0.0
    busy_ps: Any = None
    packets: Any = None
    occupancy: Any = None
    accepted: Any = None
    stuck_ports: int | None = None
    stopped_by_rule: int = 0
    op_times: Any = None
    source_samples: Any = None

    def __post_init__(self) -> None:
        if self.finish is None:
            self.finish = [0] * self.num_nodes
        for name in ("sent", "received", "latency_by_src"):
            if getattr(self, name) is None:
                setattr(self, name, [0] * self.num_nodes)
        if not self.deroutes:
            self.deroutes = [0] * (len(self.deroute_kinds) + 1)


class Collector:
    """The SimPy engine's sink: ``collector(packet, consume_time_ps)`` for every packet.

    Parameters
    ----------
    tally : Tally
    window : (start_ps, end_ps) or None
        Consumptions inside it count towards the accepted load (window mode).
    """

    def __init__(self, tally: Tally, window: tuple[int, int] | None,
                 distances: tuple[np.ndarray, np.ndarray, np.ndarray]):
        self.tally = tally
        self.window = window
        first, second, table = distances
        self._first, self._second, self._table = first.tolist(), second.tolist(), table
        self._latencies: list[int] = []       # handed to tally.latencies a chunk at a time
        self.on_measured_done: Callable[[int], None] | None = None
        self.on_measured: Callable[[Any, int], None] | None = None
        n = tally.num_nodes
        self.accepted = [0] * n             # per destination, consumed inside the window
        # a measured packet that waited at its NIC longer than the window is starved
        self.starve = window[1] - window[0] if window is not None else None
        if window is not None:
            tally.starved = 0

    def code(self, kind: str | None) -> int:
        """The code of a deroute kind an algorithm routing in Python names (a kind it did not
        declare is counted under its own name from then on)."""
        if kind is None:
            return 0
        kinds = self.tally.deroute_kinds
        if kind not in kinds:
            kinds.append(kind)
            self.tally.deroutes.append(0)
        return 1 + kinds.index(kind)

    def __call__(self, p: Any, t: int) -> None:
        tl = self.tally
        tl.delivered += 1
        if t > tl.last_consume:
            tl.last_consume = t
        if t > tl.finish[p.tdst]:
            tl.finish[p.tdst] = t
        w = self.window
        if w is not None and w[0] <= t < w[1]:
            tl.window_delivered += 1
            self.accepted[p.tdst] += 1
        if not p.measured:
            return
        tl.measured_delivered += 1
        lat = t - p.birth
        self._latencies.append(lat)
        if len(self._latencies) == CHUNK:
            self.flush()
        tl.latency_sum += lat
        tl.hops_sum += p.hops
        tl.sent[p.tsrc] += 1
        tl.latency_by_src[p.tsrc] += lat
        tl.received[p.tdst] += 1
        pair = (p.hops, int(self._table[self._first[p.src] + self._second[p.dst]]))
        tl.pairs[pair] = tl.pairs.get(pair, 0) + 1
        tl.net_latency_sum += t - p.enter
        wait = p.enter - p.birth
        if wait > tl.wait_max:
            tl.wait_max = wait
        if self.starve is not None and wait > self.starve:
            tl.starved += 1
        kind = p.deroute
        tl.deroutes[kind if type(kind) is int else self.code(kind)] += 1
        if tl.measured_delivered == tl.expected_measured and self.on_measured_done:
            self.on_measured_done(tl.last_consume)
        if self.on_measured is not None:
            self.on_measured(p, t)

    def flush(self) -> None:
        """Hand the latencies held to the tally's store (a chunk's worth, and at the end)."""
        if self._latencies:
            self.tally.latencies.add(np.array(self._latencies, dtype=np.int64))
            self._latencies = []
