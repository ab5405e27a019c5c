"""Statistics of a run: what the sink sees, summarised into the result schema (SPEC §7, §9)."""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from icsim.simulator.packet import Packet

DEROUTE_KINDS = ("outflank", "wraparound", "orthant")


class Collector:
    """The sink's bookkeeping.  Call it as ``collector(packet, consume_time_ps)``.

    Parameters
    ----------
    window : (start_ps, end_ps) or None
        Consumptions inside it count towards the accepted load (window mode).
    distance : callable
        ``distance(src, dst)`` in hops, for path dilation of derouted packets.
    """

    def __init__(self, window: tuple[int, int] | None, distance, num_nodes: int):
        self.window = window
        self.distance = distance
        self.latency = array("q")          # ps, measured packets
        self.net_latency = array("q")
        self.hops = 0
        self.delivered = 0                 # every packet consumed
        self.measured_delivered = 0
        self.window_delivered = 0          # consumed inside the window (throughput)
        self.derouted = dict.fromkeys(DEROUTE_KINDS, 0)
        self.dilation_extra = 0.0          # sum over derouted measured packets of (dilation - 1)
        self.last_consume = 0
        self.finish = [0] * num_nodes      # per node: its last packet received
        self.on_measured_done = None       # callback(time) when all measured are consumed
        self.expected_measured = -1        # set once generation of measured packets is over

    def __call__(self, p: Packet, t: int) -> None:
        self.delivered += 1
        if t > self.last_consume:
            self.last_consume = t
        if t > self.finish[p.dst]:
            self.finish[p.dst] = t
        w = self.window
        if w is not None and w[0] <= t < w[1]:
            self.window_delivered += 1
        if not p.measured:
            return
        self.measured_delivered += 1
        self.latency.append(t - p.birth)
        self.net_latency.append(t - p.enter)
        self.hops += p.hops
        if p.kind is not None:
            self.derouted[p.kind] += 1
            d = self.distance(p.src, p.dst)
            if d:
                self.dilation_extra += p.hops / d - 1.0
        if self.measured_delivered == self.expected_measured and self.on_measured_done:
            self.on_measured_done(self.last_consume)

    def summary(self) -> dict[str, Any]:
        n = self.measured_delivered
        out: dict[str, Any] = {}
        if n:
            lat = np.frombuffer(self.latency, dtype=np.int64) / 1000.0
            net = np.frombuffer(self.net_latency, dtype=np.int64) / 1000.0
            out["latency_ns"] = float(lat.mean())
            p50, p99 = np.percentile(lat, [50, 99])
            out["latency_p50_ns"] = float(p50)
            out["latency_p99_ns"] = float(p99)
            out["latency_max_ns"] = float(lat.max())
            out["network_latency_ns"] = float(net.mean())
            out["hops"] = self.hops / n
            total = sum(self.derouted.values())
            out["derouted"] = {k: v / n for k, v in self.derouted.items()}
            out["derouted"]["total"] = total / n
            out["dilation"] = 1.0 + self.dilation_extra / n
        else:
            for k in ("latency_ns", "latency_p50_ns", "latency_p99_ns", "latency_max_ns",
                      "network_latency_ns", "hops", "dilation"):
                out[k] = None
            out["derouted"] = {k: 0.0 for k in (*DEROUTE_KINDS, "total")}
        return out
