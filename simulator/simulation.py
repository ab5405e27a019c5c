"""One simulation run: build everything from a config, run it, summarise it.

>>> from icsim.simulator.config import config_from_dict
>>> cfg = config_from_dict({"topology": {"kind": "torus", "dims": [4, 4]},
...                         "traffic": {"load": 0.2, "message_packets": 4},
...                         "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 50}})
>>> r = Simulation(cfg).run()
>>> r["saturated"], abs(r["accepted_load"] - 0.2) < 0.05
(False, True)

Window mode (SPEC §7)
---------------------
Messages created in [warm-up, warm-up + measure) are measured.  The run continues (traffic
keeps flowing) until every measured packet is consumed, or the drain time is over.  The
*accepted load* is the number of packets consumed inside the window per node per window
length, in γ units.  A load is **saturated** when (a) some measured packet is still undelivered
at the end of the drain, or (b) accepted/offered < 0.95, or (c) the NIC source queues grow
through the window: their mean backlog over the last quarter of the window exceeds that over the
first quarter by more than max(1, M/4) packets per node.  ``saturation_reason`` says which.

Finite mode (the OutFlank reference method)
-------------------------------------------
Each node creates ``run.messages_per_node`` messages; every packet is measured and the run ends
when the last one is consumed (``completion_time_ns``).  The accepted load is then
packets / node / completion time in γ units.  A single finite run reports ``saturated`` only if
it could not finish within ``run.max_time_us``; the saturation *point* in finite mode is decided
across a sweep (mean latency at most 1.2 × that at γ = 0.10, see ``experiments``).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
import simpy

from icsim.routing.registry import algorithms
from icsim.simulator.build import build_topology
from icsim.simulator.config import Config
from icsim.simulator.network import Network, RandomStream, ps
from icsim.simulator.stats import Collector
from icsim.traffic.load import gamma1_packet_period_ns

VERSION = "0.1.0"


def seed_streams(seed: int, n_nodes: int) -> dict[str, Any]:
    """Independent random streams for each component, all from the one master seed."""
    root = np.random.SeedSequence(seed)
    routing_ss, traffic_ss = root.spawn(2)
    return {
        "routing": np.random.Generator(np.random.PCG64(routing_ss)),
        "nodes": [np.random.Generator(np.random.PCG64(s)) for s in traffic_ss.spawn(n_nodes)],
    }


class Simulation:
    """Everything one run needs, built from a validated :class:`Config` (nothing started)."""

    def __init__(self, config: Config):
        from icsim.traffic.patterns import make_pattern
        from icsim.traffic.workloads import OpenLoop, Scheduled, collective_messages, trace_messages

        self.config = config
        self.topology = build_topology(config.topology)
        self.env = simpy.Environment()
        streams = seed_streams(config.seed, self.topology.num_nodes)
        algo = algorithms()[config.routing.algorithm]
        self.routing = algo(self.topology, config, eject_port=self.topology.num_ports)
        rc, tc = config.run, config.traffic
        # collectives and traces run to completion like finite runs
        self.finite = rc.mode == "finite" or tc.workload != "open"
        if self.finite:
            self.window = None
        else:
            w0 = ps(rc.warmup_us * 1000)
            self.window = (w0, w0 + ps(rc.measure_us * 1000))
        self.collector = Collector(self.window, self.topology.distance,
                                   self.topology.num_nodes)
        self.gamma1_period_ns = gamma1_packet_period_ns(
            self.topology, config.packet.size_bytes, config.link.bandwidth_gbps)
        self.net = Network(self.env, self.topology, self.routing, config,
                           RandomStream(streams["routing"]), self.collector,
                           nic_tick_ps=self.gamma1_period_ns * 1000.0
                           / config.nic.injection_rate_factor)
        size = config.packet.size_bytes
        if tc.workload == "collective":
            self.workload = Scheduled(self.net, collective_messages(
                tc.collective, self.topology, tc.message_bytes, size, config.seed,
                tc.pattern_params(tc.collective), tc.interleave, tc.nodes))
        elif tc.workload == "trace":
            self.workload = Scheduled(self.net, trace_messages(
                tc.trace, self.topology.num_nodes, size))
        else:
            pattern = make_pattern(tc.pattern, self.topology, seed=config.seed,
                                   **tc.pattern_params())
            self.workload = OpenLoop(self.net, config, pattern, streams["nodes"], self.window,
                                     rc.messages_per_node if self.finite else None)
        self._samples: list[tuple[int, int]] = []
        self._util0: list[int] | None = None
        self._util1: list[int] | None = None

    # ------------------------------------------------------------------ running
    def run(self) -> dict[str, Any]:
        cfg = self.config
        env, net, col = self.env, self.net, self.collector
        done = env.event()
        stop_at: list[int] = []

        def finish(t: int) -> None:
            if not stop_at:
                stop_at.append(t)
                net.at(max(t, env.now), lambda a, b: done.succeed() if not done.triggered else None)

        col.on_measured_done = finish
        if self.finite:
            horizon = ps(cfg.run.max_time_us * 1000) if cfg.run.max_time_us else None
        else:
            w0, w1 = self.window
            horizon = w1 + ps(cfg.run.drain_us * 1000)
            step = max(1, (w1 - w0) // 20)
            for i in range(21):
                net.at(w0 + i * step, self._sample)
            net.at(w0, self._snapshot_util, 0)
            net.at(w1, self._snapshot_util, 1)
            net.at(w1, self._window_closed, finish)
        if horizon is not None:
            net.at(horizon, lambda a, b: done.succeed() if not done.triggered else None)
        if self.finite:
            if cfg.traffic.workload == "open":
                col.expected_measured = (cfg.run.messages_per_node * cfg.traffic.message_packets
                                         * self.topology.num_nodes if cfg.traffic.load > 0 else 0)
            else:
                col.expected_measured = self.workload.measured_packets
        self.workload.start()
        net.start_watchdog(ps(cfg.run.watchdog_us * 1000))

        gc_was = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        t0 = time.perf_counter()
        try:
            if self.finite and col.expected_measured == 0:
                pass
            else:
                env.run(until=done)
        finally:
            wall = time.perf_counter() - t0
            gc.unfreeze()
            if gc_was:
                gc.enable()
        end = stop_at[0] if stop_at else env.now
        return self._result(end, wall)

    def _sample(self, a: Any = None, b: Any = None) -> None:
        self._samples.append((self.env.now, self.net.in_sources))

    def _snapshot_util(self, which: int, _: Any = None) -> None:
        snap = list(self.net.link_busy_ps)
        if which == 0:
            self._util0 = snap
        else:
            self._util1 = snap

    def _window_closed(self, finish, _: Any = None) -> None:
        col = self.collector
        col.expected_measured = self.workload.measured_packets
        if col.measured_delivered == col.expected_measured:
            finish(max(col.last_consume, self.env.now))

    # ------------------------------------------------------------------ summary
    def _result(self, end: int, wall: float) -> dict[str, Any]:
        cfg, col, net, wl = self.config, self.collector, self.net, self.workload
        N = self.topology.num_nodes
        t1 = self.gamma1_period_ns
        res: dict[str, Any] = {
            "offered_load": cfg.traffic.load,
            "mode": cfg.run.mode,
        }
        summary = col.summary()
        unfinished = col.measured_delivered < (col.expected_measured if col.expected_measured >= 0
                                               else wl.measured_packets)
        if self.finite:
            span = col.last_consume
            res["accepted_load"] = (col.delivered / N) / (span / 1000.0) * t1 if span else 0.0
            res["offered_measured_load"] = cfg.traffic.load
            res["completion_time_ns"] = col.last_consume / 1000.0
            if cfg.traffic.workload != "open":
                res["finish_time_ns"] = [t / 1000.0 for t in col.finish]
            reason = "unfinished" if unfinished else None
        else:
            w0, w1 = self.window
            wl_ns = (w1 - w0) / 1000.0
            res["accepted_load"] = col.window_delivered / N / wl_ns * t1
            res["offered_measured_load"] = wl.measured_packets / N / wl_ns * t1
            reason = self._saturation_reason(unfinished, res["accepted_load"])
        res.update(summary)
        res["packets_measured"] = wl.measured_packets if not self.finite else col.expected_measured
        res["packets_delivered"] = col.measured_delivered
        res["packets_generated"] = wl.generated_packets
        res["saturated"] = reason is not None
        res["saturation_reason"] = reason
        res["source_queue_mean"] = (float(np.mean([s for _, s in self._samples])) / N
                                    if self._samples else None)
        res.update(self._utilisation())
        res["retransmissions"] = net.retransmissions
        res["packet_hops"] = net.link_hops
        res["sim_time_ns"] = end / 1000.0
        res["wall_s"] = wall
        res["events"] = net.actions
        res["seed"] = cfg.seed
        res["version"] = VERSION
        res["config"] = cfg.to_dict()
        return res

    def _saturation_reason(self, unfinished: bool, accepted: float) -> str | None:
        cfg = self.config
        if unfinished:
            return "unfinished"
        if cfg.traffic.load > 0 and accepted / cfg.traffic.load < 0.95:
            return "throughput"
        s = [v for _, v in self._samples]
        if len(s) >= 8:
            q = len(s) // 4
            growth = (np.mean(s[-q:]) - np.mean(s[:q])) / self.topology.num_nodes
            if growth > max(1.0, cfg.traffic.message_packets / 4):
                return "growing_queues"
        return None

    def _utilisation(self) -> dict[str, Any]:
        if self._util0 is None or self._util1 is None:
            return {"channel_utilisation_mean": None, "channel_utilisation_max": None}
        w0, w1 = self.window
        span = w1 - w0
        net = self.net
        vals = []
        for node in range(net.N):
            for port in range(net.EJ):
                if net.nbr[node][port] >= 0:
                    pid = node * net.P + port
                    vals.append((self._util1[pid] - self._util0[pid]) / span)
        return {"channel_utilisation_mean": float(np.mean(vals)) if vals else None,
                "channel_utilisation_max": float(np.max(vals)) if vals else None}


def run(config: Config) -> dict[str, Any]:
    """Build and run one simulation; the result dict of SPEC §9."""
    return Simulation(config).run()
