"""Workloads: what the NICs are asked to send, and when.

* :class:`OpenLoop` — every node creates messages of M packets at offered load γ, with
  deterministic (the papers') or exponential inter-arrival times, each node starting at a random
  phase or all aligned at t = 0; optionally only ``limit`` messages per node (the *finite* runs of
  the OutFlank reference simulator).

Message destinations come from a pattern (:mod:`traffic.patterns`), each node drawing from its
own random stream, so changing the routing algorithm leaves the offered traffic unchanged.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simulator.network import ps
from traffic.load import gamma1_packet_period_ns


class OpenLoop:
    """Open-loop message generation at every node.

    Parameters
    ----------
    net : simulator.network.Network
    config : simulator.config.Config
    pattern : traffic.patterns.Pattern
    streams : sequence of numpy.random.Generator
        One per node.
    window : (start_ps, end_ps) or None
        Messages created inside the window are measured; None: every message is.
    limit : int or None
        Messages per node (finite workload); None: unbounded.
    """

    def __init__(self, net: Any, config: Any, pattern: Any,
                 streams: Sequence[np.random.Generator],
                 window: tuple[int, int] | None, limit: int | None):
        self.net = net
        self.pattern = pattern
        self.streams = streams
        self.window = window
        self.limit = limit
        tc, nc = config.traffic, config.nic
        topo = net.topology
        self.M = tc.message_packets
        t1_ns = gamma1_packet_period_ns(topo, config.packet.size_bytes, config.link.bandwidth_gbps)
        self.gamma1_period_ps = t1_ns * 1000.0
        self.load = tc.load
        self.interval_ps = self.M * self.gamma1_period_ps / tc.load if tc.load > 0 else 0.0
        self.exponential = tc.arrivals == "exponential"
        self.aligned = tc.phase == "aligned"
        # packets become available at injection_rate_factor x the γ = 1 rate; a stop-and-wait
        # NIC instead has the whole message at once and paces itself by polling
        self.avail_period = (0 if nc.handshake == "stop_and_wait"
                             else ps(t1_ns / nc.injection_rate_factor))
        self.count = [0] * net.N
        self.phase = [0] * net.N
        self.next_pid = 0
        self.next_msg = 0
        self.measured_packets = 0
        self.generated_packets = 0
        self.finished_nodes = 0

    @property
    def all_generated(self) -> bool:
        return self.limit is not None and self.finished_nodes == self.net.N

    def start(self) -> None:
        if self.load <= 0:
            self.finished_nodes = self.net.N
            return
        now = self.net.env.now
        for node in range(self.net.N):
            rng = self.streams[node]
            if self.exponential:
                first = now + int(round(rng.exponential(self.interval_ps)))
            elif self.aligned:
                first = now
            else:
                first = now + int(rng.random() * self.interval_ps)
            self.phase[node] = first
            self.net.at(first, self._generate, node)

    def _generate(self, node: int, _: Any = None) -> None:
        net = self.net
        now = net.env._now
        idx = self.count[node]
        rng = self.streams[node]
        dst = self.pattern.destination(node, idx, rng)
        w = self.window
        measured = w is None or w[0] <= now < w[1]
        net.post_message(node, dst, self.M, now, self.next_pid, self.next_msg, measured,
                         self.avail_period)
        self.next_pid += self.M
        self.next_msg += 1
        self.generated_packets += self.M
        if measured:
            self.measured_packets += self.M
        idx += 1
        self.count[node] = idx
        if self.limit is not None and idx >= self.limit:
            self.finished_nodes += 1
            return
        if self.exponential:
            nxt = now + max(1, int(round(rng.exponential(self.interval_ps))))
        else:
            nxt = self.phase[node] + int(round(idx * self.interval_ps))
        net.at(nxt, self._generate, node)
