"""The SimPy engine: the readable reference implementation of the model.

Each concern has its module: :mod:`.calendar` (actions at exact times, decisions on clock
edges), :mod:`.fabric` (queues, occupancy, channels, NIC queues), :mod:`.admission` (the bubble
rule and selection, one function for both flow controls), :mod:`.credit` and :mod:`.acknak`
(the two flow controls), :mod:`.nic` (the NIC handshakes) and :mod:`.watchdog` (deadlocks).
:class:`SimpyEngine` wires them for one run and drives the workload, the measurement window and
the stop conditions.
"""

from __future__ import annotations

import gc
import heapq
import time
from typing import Any, Callable

import numpy as np
import simpy

from icsim.simulator.engines.simpy.acknak import AckNakFlow
from icsim.simulator.engines.simpy.admission import make_select
from icsim.simulator.engines.simpy.app import AppRunner
from icsim.simulator.engines.simpy.calendar import Calendar
from icsim.simulator.engines.simpy.credit import CreditFlow
from icsim.simulator.engines.simpy.fabric import Fabric
from icsim.simulator.engines.simpy.nic import Nic
from icsim.simulator.engines.simpy.watchdog import Watchdog
from icsim.simulator.results import LATENCY, in_sources, latency_rule, window_rule
from icsim.simulator.spec import NetworkSpec
from icsim.simulator.stats import Collector, Tally
from icsim.traffic.workloads import Workload


class RandomStream:
    """Uniform floats in [0, 1) from a numpy Generator, drawn in blocks of 8192 (one draw per
    call is the hot-path cost; a Python list index is cheap).  A compiled engine draws the same
    blocks, so both see the same numbers."""

    __slots__ = ("_gen", "_buf", "_i")
    BLOCK = 8192

    def __init__(self, gen: np.random.Generator):
        self._gen = gen
        self._buf: list[float] = []
        self._i = 0

    def __call__(self) -> float:
        i = self._i
        if i >= len(self._buf):
            self._buf = self._gen.random(self.BLOCK).tolist()
            i = 0
        self._i = i + 1
        return self._buf[i]


class SimpyEngine:
    """One run of the model on SimPy: build with a spec and a workload, then :meth:`run`.

    Parameters
    ----------
    spec : NetworkSpec
    workload : Workload
    rand : callable
        The routing tie-break stream (:class:`RandomStream`).
    progress : callable, optional
        ``progress(now_ps, end_ps, delivered, expected)``, called every ``progress_every_ps`` of
        simulated time: the simulated time, the run's end (0 when it has none: finite mode), the
        packets delivered so far and, in finite mode, how many must be (else -1); the compiled
        engine calls it the same way.
    """

    name = "simpy"

    def __init__(self, spec: NetworkSpec, workload: Workload, rand: Callable[[], float],
                 progress: Callable | None = None, progress_every_ps: int = 0):
        self.spec = spec
        self.workload = workload
        self.env = simpy.Environment()
        self.fab = Fabric(spec)
        self.tally = Tally(spec.num_terminals, list(spec.routing.deroute_kinds))
        self.collector = Collector(self.tally, spec.window, spec.topology.distance_tables())
        flow_cls = AckNakFlow if spec.flow_control == "ack_nak" else CreditFlow
        self.flow: CreditFlow = None  # type: ignore[assignment]
        self.cal = Calendar(self.env, spec.cycle_ps, lambda: self.flow.pending(),
                            lambda: self.flow.decide())
        self.nic = Nic(self.fab, self.cal)
        self.flow = flow_cls(self.fab, self.cal, self.nic, make_select(self.fab, rand), rand,
                             self.collector)
        self.cal._pending, self.cal._decide = self.flow.pending, self.flow.decide
        self.watchdog = Watchdog(self.fab, self.cal, spec.watchdog_ps)
        self.progress = progress
        self.progress_every = progress_every_ps
        self._next_pid = 0
        self._sources: list = []
        self._due: list[tuple[int, int]] = []
        self._util0: list[int] | None = None
        self._packets0: list[int] | None = None
        self._occ_sum: np.ndarray | None = None
        self._backlogs: list[list[int]] = []          # each node's backlog at each sample
        # run.latency_limit_ns: the latencies delivered, the creation times of the measured
        # packets not yet delivered (``latency_rule``)
        self._latency_sum = 0
        self._waiting_birth = 0

    # ------------------------------------------------------------------ the workload
    def start_workload(self) -> None:
        """Schedule the first message time (each posting schedules the next).  Open-loop
        traffic is made as it falls due: every node's next message (its
        :class:`~icsim.traffic.workloads.Source`) waits in a heap by (time, node)."""
        wl = self.workload
        if wl.open is not None:
            self._sources = wl.open.sources()
            self._due = [(s.t, s.node) for s in self._sources if s.t >= 0]
            heapq.heapify(self._due)
            if self._due:
                self.cal.at(self._due[0][0], self._post_open)
        elif wl.num_messages:
            self.cal.at(int(wl.time[0]), self._post, 0)

    def _start_app(self, finish: Callable[[int], None]) -> AppRunner:
        """The closed loop (:mod:`.app`): messages posted as sends are done, each packet's
        consumption an action at its time; the run ends when every operation is done."""
        fab, tl, cal = self.fab, self.tally, self.cal

        def post(src: int, dst: int, k: int, t: int, op: int) -> None:
            fab.post_message(src, dst, k, t, self._next_pid, op + 1, 0)
            self._next_pid += k
            tl.generated += k
            tl.measured += k

        runner = AppRunner(self.workload.app, cal, post, finish)
        self.collector.on_measured = lambda p, t: runner.consumed(p.measured - 1, t)
        tl.expected_measured = -1           # the operations say when the run is done
        cal.at(0, runner.start)
        return runner

    def _post(self, i: int, _: Any = None) -> None:
        """Post every message of the schedule created at the time of message i."""
        wl = self.workload
        times = wl.time
        t = int(times[i])
        n = len(times)
        while i < n and times[i] == t:
            self._post_message(int(wl.src[i]), int(wl.dst[i]), int(wl.packets[i]), t,
                               bool(wl.measured[i]))
            i += 1
        if i < n:
            self.cal.at(int(times[i]), self._post, i)

    def _post_open(self, a: Any = None, b: Any = None) -> None:
        """Post every open-loop message due now, in node order; each node makes its next."""
        due, sources, traffic = self._due, self._sources, self.workload.open
        t = due[0][0]
        k, measured = traffic.message_packets, traffic.measured(t)
        while due and due[0][0] == t:
            src = sources[due[0][1]]
            self._post_message(src.node, src.dst, k, t, measured)
            if src.advance() >= 0:
                heapq.heapreplace(due, (src.t, src.node))
            else:
                heapq.heappop(due)
        if due:
            self.cal.at(due[0][0], self._post_open)

    def _post_message(self, src: int, dst: int, k: int, t: int, measured: bool) -> None:
        self.fab.post_message(src, dst, k, t, self._next_pid, measured,
                              self.workload.avail_period_ps)
        self._next_pid += k
        tl = self.tally
        tl.generated += k
        if measured:
            tl.measured += k
            self._waiting_birth += k * t

    # ------------------------------------------------------------------ running
    def run(self) -> Tally:
        spec, cal, tally = self.spec, self.cal, self.tally
        done = cal.stop_event()
        stop_at: list[int] = []

        def stop(a: Any = None, b: Any = None) -> None:
            if not done.triggered:
                done.succeed()

        def finish(t: int) -> None:
            if not stop_at:
                stop_at.append(t)
                cal.at(max(t, cal.now), stop)

        self.collector.on_measured_done = finish
        if spec.latency_limit_ns is not None:
            def latency_check(p: Any, t: int) -> None:
                tl = self.tally
                self._latency_sum += t - p.birth
                self._waiting_birth -= p.birth
                if not stop_at and latency_rule(
                        self._latency_sum, tl.measured - tl.measured_delivered,
                        self._waiting_birth, cal.now, tl.expected_measured,
                        spec.latency_limit_ns):
                    tl.stopped_by_rule = LATENCY
                    finish(cal.now)

            self.collector.on_measured = latency_check
        horizon = spec.stop_ps
        if not spec.finite:
            w0, w1 = spec.window
            step = max(1, (w1 - w0) // 20)
            for i in range(21):
                cal.at(w0 + i * step, self._sample)
            cal.at(w0, self._snapshot, 0)
            cal.at(w1, self._snapshot, 1)
            cal.at(w1, self._window_closed, finish)
        if horizon is not None:
            cal.at(horizon, stop)
        runner = None
        if self.workload.app is not None:
            runner = self._start_app(finish)
        elif spec.finite:
            tally.expected_measured = self.workload.expected_measured
        self.start_workload()
        self.watchdog.start()
        if self.progress is not None and self.progress_every > 0:
            cal.at(self.progress_every, self._report)
        gc_was = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        t0 = time.perf_counter()
        try:
            if not (spec.finite and tally.expected_measured == 0 and runner is None):
                cal.run(until=done)
        finally:
            tally.wall_s = time.perf_counter() - t0
            gc.unfreeze()
            if gc_was:
                gc.enable()
        self.collector.flush()
        tally.end_ps = stop_at[0] if stop_at else self.env.now
        if runner is not None:
            tally.expected_measured = self.workload.expected_measured
            tally.op_times = runner.times()
        tally.source_samples = np.array(self._backlogs, dtype=np.int64).reshape(
            len(self._backlogs), spec.num_terminals if self._backlogs else 0)
        tally.stuck_ports = self.watchdog.stuck_at_end()
        tally.events = cal.actions
        tally.link_hops = self.fab.link_hops
        tally.retransmissions = self.fab.retransmissions
        return tally

    def _report(self, a: Any = None, b: Any = None) -> None:
        tally = self.tally
        self.progress(self.cal.now, self.spec.horizon_ps or 0, tally.delivered,
                      tally.expected_measured)
        self.cal.at(self.cal.now + self.progress_every, self._report)

    def _sample(self, a: Any = None, b: Any = None) -> None:
        fab = self.fab
        self.tally.samples.append((self.cal.now, fab.in_sources))
        self._backlogs.append([a - b for a, b in zip(fab.src_seq, fab.injected)])
        occ = np.asarray(fab.occ, dtype=np.int64)
        self._occ_sum = occ if self._occ_sum is None else self._occ_sum + occ

    def _busy_so_far(self) -> list[int]:
        """Each router channel's busy time up to now: its serialisation times summed as they
        started, less what of the transmission under way lies after now (so that the window's
        busy time never counts a packet straddling its edge whole, and never exceeds it)."""
        now, until = self.cal.now, self.flow.busy_until
        return [b - max(0, until(pid) - now) for pid, b in enumerate(self.fab.link_busy_ps)]

    def _snapshot(self, which: int, _: Any = None) -> None:
        fab, tl = self.fab, self.tally
        if which == 0:
            self._util0 = self._busy_so_far()
            self._packets0 = list(fab.link_packets)
            return
        tl.busy_ps = [b - a for a, b in zip(self._util0, self._busy_so_far())]
        tl.packets = [b - a for a, b in zip(self._packets0, fab.link_packets)]
        tl.occupancy = (self._occ_sum / max(1, len(tl.samples))).tolist()
        # the collector counts only consumptions inside the window; one booked before it
        # opens may complete inside it, so no difference of snapshots here
        tl.accepted = list(self.collector.accepted)

    def _window_closed(self, finish: Callable, _: Any = None) -> None:
        tl, spec = self.tally, self.spec
        tl.expected_measured = tl.measured
        if tl.measured_delivered == tl.expected_measured:
            finish(max(tl.last_consume, self.cal.now))
        elif spec.stop_when_saturated:
            w0, w1 = spec.window
            rule = window_rule(tl.window_delivered, tl.measured, in_sources(tl), tl.num_nodes,
                               (w1 - w0) / 1000.0, spec.gamma1_period_ns, spec.growth_limit)
            if rule:
                tl.stopped_by_rule = rule
                finish(self.cal.now)

    # ------------------------------------------------------------------ for tests
    def check_invariants(self) -> None:
        """Assert the model's accounting between SimPy steps (see :meth:`Fabric.check_invariants`)."""
        self.fab.check_invariants(self.tally.generated, self.tally.delivered,
                                  self.flow.in_flight())
