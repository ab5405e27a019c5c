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

from icsim.simulator.network import ps
from icsim.traffic.load import gamma1_packet_period_ns


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


class Scheduled:
    """Messages posted at given times, run to completion: collectives and trace replay.

    Every packet is measured; the result is the completion time (last consumption) and each
    node's finish time (its last packet received).  A message's packets are handed to the NIC
    at once (an application posting a buffer), so they leave at the injection link's rate.

    Parameters
    ----------
    net : simulator.network.Network
    messages : list of (time_ps, src, dst, packets)
        In posting order; times non-decreasing.
    """

    def __init__(self, net: Any, messages: list[tuple[int, int, int, int]]):
        self.net = net
        self.messages = messages
        self.limit = None
        self.window = None
        self.next_pid = 0
        self.generated_packets = 0
        self.measured_packets = sum(m[3] for m in messages)
        self.interval_ps = 0.0

    @property
    def all_generated(self) -> bool:
        return self.generated_packets == self.measured_packets

    def start(self) -> None:
        by_time: dict[int, list[int]] = {}
        for i, m in enumerate(self.messages):
            by_time.setdefault(m[0], []).append(i)
        for t, idx in by_time.items():
            self.net.at(t, self._post, idx)

    def _post(self, idx: list[int], _: Any = None) -> None:
        now = self.net.env._now
        for i in idx:
            _, src, dst, packets = self.messages[i]
            self.net.post_message(src, dst, packets, now, self.next_pid, i, True, 0)
            self.next_pid += packets
            self.generated_packets += packets


def packets_for(size_bytes: int, packet_bytes: int) -> int:
    """Packets needed to carry ``size_bytes`` (the last one padded to a full packet)."""
    return max(1, -(-size_bytes // packet_bytes))


class JobRanks:
    """The ranks of a job placed on a node subset, as a traffic pattern sees them: ``num_nodes``
    ranks numbered ``0 ..``, without coordinates (so only index patterns apply)."""

    kind = "ranks"

    def __init__(self, num_nodes: int):
        self.num_nodes = num_nodes

    def describe(self) -> str:
        return f"a job of {self.num_nodes} ranks"


def collective_messages(kind: str, topology: Any, message_bytes: int, packet_bytes: int,
                        seed: int, params: dict | None = None, interleave: bool = False,
                        nodes: Sequence[int] | None = None) -> list[tuple[int, int, int, int]]:
    """Messages of one collective exchange, all posted at t = 0 in step order.

    With ``interleave`` a node's messages are handed to its NIC packet by packet, round robin
    over its destinations (as concurrent non-blocking sends or several DMA engines do), instead
    of one message after the other.

    * ``alltoall`` — every node sends one message to every other node, step i (1..N-1) to
      (s + i) mod N (the ``alltoall`` pattern);
    * ``neighbor`` — every node sends one message to each neighbour, in port order;
    * the name of any permutation pattern (``transpose``, ``tornado``, ``bitreverse``, ...) —
      every node sends one message to its destination under the pattern (nodes mapped to
      themselves send nothing); ``params`` are the pattern's parameters.

    ``nodes`` places the exchange on a job's nodes (rank r on ``nodes[r]``, an MPI job on the
    nodes its scheduler gave it): patterns then work on the N ranks (:class:`JobRanks`; the
    coordinate patterns do not apply) and ``neighbor`` means the torus neighbours inside the job.

    Examples
    --------
    >>> from icsim.simulator.topology import Torus
    >>> msgs = collective_messages("tornado", Torus((4, 2)), 512, 512, 0,
    ...                            {"over": "index"}, nodes=[0, 1, 2, 4, 6])
    >>> [(s, d) for _, s, d, _ in msgs]       # ranks r -> r + 2 of 5, on the job's nodes
    [(0, 2), (1, 4), (2, 6), (4, 0), (6, 1)]
    """
    from icsim.traffic.patterns import PatternError, make_pattern

    job = list(range(topology.num_nodes)) if nodes is None else [int(v) for v in nodes]
    n = len(job)
    packets = packets_for(message_bytes, packet_bytes)
    if kind == "neighbor":
        make_pattern(kind, topology, seed=seed, **(params or {}))   # a torus, no parameters
        rank = {v: r for r, v in enumerate(job)}
        dests = [[rank[v] for v in topology.neighbor_table[s] if v in rank] for s in job]
    else:
        pat = make_pattern(kind, topology if nodes is None else JobRanks(n), seed=seed,
                           **(params or {}))
        if kind == "alltoall":
            dests = [[pat.destination(r, i, None) for i in range(n - 1)] for r in range(n)]
        elif pat.permutation:
            dests = [[d] if (d := pat.destination(r, 0, None)) != r else [] for r in range(n)]
        else:
            raise PatternError(f"{kind}: not an exchange (use alltoall, neighbor or a "
                               f"permutation pattern)")
    most = max(map(len, dests), default=0)
    out = []
    if interleave:
        for i in range(packets * most):
            step = i % most
            for r in range(n):
                if step < len(dests[r]) and i < packets * len(dests[r]):
                    out.append((0, job[r], job[dests[r][step]], 1))
        return out
    for step in range(most):
        for r in range(n):
            if step < len(dests[r]):
                out.append((0, job[r], job[dests[r][step]], packets))
    return out


def trace_messages(path: str, num_nodes: int, packet_bytes: int) -> list[tuple[int, int, int, int]]:
    """Messages of a trace file (see :mod:`traffic.trace`), as recorded."""
    from icsim.traffic.trace import read_trace

    return [(ps(r.time_ns), r.src, r.dst, packets_for(r.bytes, packet_bytes))
            for r in read_trace(path, num_nodes)]
