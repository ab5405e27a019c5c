"""What an engine tallies during a run (docs/model.md §7), in the same form whatever the engine.

:class:`Tally` is the engine-neutral record: per measured packet its latency, network latency,
hops, source, destination and how it was derouted (arrays in consumption order), plus counters,
the NIC backlog samples and the channel statistics of the measurement window.
:func:`icsim.simulator.results.make_result` turns a tally into the result record.

:class:`Collector` is the SimPy engine's sink, filling a tally one consumed packet at a time.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

#: fixed log-spaced latency bins: 10 ns ... 1 s, 20 per decade (values outside are clamped)
LATENCY_BIN_EDGES_NS = 10.0 ** np.arange(1.0, 9.0 + 1e-9, 0.05)


@dataclass
class Tally:
    """An engine's raw account of one run (times in ps).

    Per measured, delivered packet (consumption order): ``latency``, ``hops``, ``src``,
    ``dst``, ``deroute`` (0: not derouted, else 1 + the index of its kind in ``deroute_kinds``,
    the routing algorithm's own words); summed over them as they are consumed:
    ``net_latency_sum`` (their network latencies), ``wait_max`` (the longest wait at a NIC:
    latency less network latency) and ``starved`` (how many waited there longer than the
    measurement window; None without a window).  Counters: ``delivered`` (every
    packet consumed), ``measured_delivered``, ``window_delivered`` (consumed inside the window),
    ``generated`` and ``measured`` (packets the workload created so far, and the measured ones),
    ``expected_measured`` (finite runs: what must be delivered), ``last_consume``, ``finish``
    (per node, its last packet received), ``samples`` ((time, packets at NICs) through the
    window), ``link_hops``, ``retransmissions``, ``events``.  Window channel statistics
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
    latency: Any = field(default_factory=lambda: array("q"))
    hops: Any = field(default_factory=lambda: array("i"))
    src: Any = field(default_factory=lambda: array("i"))
    dst: Any = field(default_factory=lambda: array("i"))
    deroute: Any = field(default_factory=lambda: array("b"))
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

    def __post_init__(self) -> None:
        if self.finish is None:
            self.finish = [0] * self.num_nodes

    def arrays(self) -> dict[str, np.ndarray]:
        """The per-packet records as numpy arrays (int64 latencies; int32 hops, sources and
        destinations; int8 deroute codes), without copying the engine's."""
        return {"latency": np.asarray(self.latency, dtype=np.int64),
                "hops": np.asarray(self.hops, dtype=np.int32),
                "src": np.asarray(self.src, dtype=np.int32),
                "dst": np.asarray(self.dst, dtype=np.int32),
                "deroute": np.asarray(self.deroute, dtype=np.int8)}


class Collector:
    """The SimPy engine's sink: ``collector(packet, consume_time_ps)`` for every packet.

    Parameters
    ----------
    tally : Tally
    window : (start_ps, end_ps) or None
        Consumptions inside it count towards the accepted load (window mode).
    """

    def __init__(self, tally: Tally, window: tuple[int, int] | None):
        self.tally = tally
        self.window = window
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
        tl.latency.append(t - p.birth)
        tl.net_latency_sum += t - p.enter
        wait = p.enter - p.birth
        if wait > tl.wait_max:
            tl.wait_max = wait
        if self.starve is not None and wait > self.starve:
            tl.starved += 1
        tl.hops.append(p.hops)
        tl.src.append(p.tsrc)
        tl.dst.append(p.tdst)
        kind = p.deroute
        tl.deroute.append(kind if type(kind) is int else self.code(kind))
        if tl.measured_delivered == tl.expected_measured and self.on_measured_done:
            self.on_measured_done(tl.last_consume)
        if self.on_measured is not None:
            self.on_measured(p, t)
