"""The network model: routers, queues, channels, NICs and sinks, driven by SimPy.

Time
----
SimPy's clock counts integer **picoseconds** so that clock edges and link times compare exactly
(204.8 ns is not a float multiple of 0.8 ns); configs and results are in ns.  Every state change
is an *action* scheduled at an exact time; all actions due at one time form a *batch* carried by
a single SimPy event.  Routers decide only on clock edges: after a batch is applied, if its time
is an edge, the **decision phase** runs; otherwise one is scheduled at the next edge.  So every
decision sees everything that became ready by its edge, and the outcome never depends on the
order in which same-time events were scheduled.

Queues and ports
----------------
Routers are output-queued: a packet waits in the queue of the port it will leave by, one queue
per (port, VC), each of ``queue_packets`` slots, plus an ejection queue.  A port id is
``node * P + port`` (``P`` = direction ports + 1, the last being ejection); the NIC of ``node``
is port id ``N * P + node``.  A queue id is ``port_id * V + vc``.

Flow control (credit)
---------------------
A packet leaves a queue only when the downstream router has reserved room for it: at grant time
the routing function is evaluated *for the downstream router* with its current occupancy, the
slot there is reserved, the packet crosses the channel (serialisation, then propagation) and
becomes visible in the reserved queue.  The upstream slot is freed at the end of serialisation.
Nothing is ever dropped.

Admission (bubble flow control)
-------------------------------
A queue of a VC in ``routing.bubble_vcs`` admits a packet that *enters the ring* (injected,
turning, changing direction, coming from another VC) only with at least two free slots; a
packet continuing on the same port and VC needs one.  Other queues need one free slot; packets
from the NIC need ``router.injection_min_free`` if set.

Flow control (ack_nak, the OutFlank reference simulator)
--------------------------------------------------------
Whenever a port's channel is idle it sends a head packet without asking; the receiver decides
on arrival, with its own state, whether to store it and answers with a ``router.ack_bytes``
ACK or NAK on the reverse channel, where control messages go before data.  The sender's slot
stays held until the ACK returns; a NAKed packet goes back into its queue at its old position
and is retransmitted.  NICs use the same protocol towards their router.

NIC handshake
-------------
``none``: packets become available one per ``avail_period`` and leave whenever the injection
link is free.  ``stop_and_wait``: the NIC polls on ticks of ``nic_tick_ps`` from t = 0 and keeps
one packet outstanding until the router's acknowledgement is back.

Arbitration
-----------
In each decision phase the head packets of all queues whose channel is idle and whose state
changed are tried oldest first (message generation time, source, sequence); a port's channel
goes to the first of its heads the downstream admits.  ``escape_priority`` instead tries a
port's VCs in a fixed order (escape VCs first), oldest first inside a queue.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

import numpy as np
import simpy
from simpy.core import NORMAL
from simpy.events import Event

from icsim.simulator.packet import Packet

PS_PER_NS = 1000


def ps(ns: float) -> int:
    """Nanoseconds -> integer picoseconds (the engine's clock)."""
    return int(round(ns * PS_PER_NS))


def serialisation_ps(size_bytes: int, bandwidth_gbps: float) -> int:
    """Time to put ``size_bytes`` on a ``bandwidth_gbps`` channel, in ps (Gb/s = bits per ns)."""
    return ps(size_bytes * 8 / bandwidth_gbps)


class _Tick(Event):
    """The SimPy event that carries one batch of actions (already triggered, value = time)."""

    def __init__(self, env: simpy.Environment, t: int, callback: Callable) -> None:
        self.env = env
        self.callbacks = [callback]
        self._ok = True
        self._value = t


class DeadlockError(RuntimeError):
    """Packets are in the network and none has moved for the watchdog time."""


class RandomStream:
    """Uniform floats in [0, 1) from a numpy Generator, drawn in blocks (one draw per call is
    the hot-path cost; a Python list index is cheap)."""

    __slots__ = ("_gen", "_buf", "_i")

    def __init__(self, gen: np.random.Generator, block: int = 8192):
        self._gen = gen
        self._buf: list[float] = []
        self._i = 0

    def __call__(self) -> float:
        i = self._i
        if i >= len(self._buf):
            self._buf = self._gen.random(8192).tolist()
            i = 0
        self._i = i + 1
        return self._buf[i]


class Network:
    """The SimPy model of one network.  Build, call :meth:`start`, post messages, run the env.

    Parameters
    ----------
    env : simpy.Environment
        Its clock counts picoseconds.
    topology : Torus or Graph
    routing : routing.registry.Routing
    config : simulator.config.Config
    rand : callable
        Uniform [0, 1) tie-break stream (:class:`RandomStream`).
    sink : callable
        ``sink(packet, consume_time_ps)`` for every packet consumed.
    """

    def __init__(self, env: simpy.Environment, topology: Any, routing: Any, config: Any,
                 rand: Callable[[], float], sink: Callable[[Packet, int], None],
                 nic_tick_ps: float = 0.0):
        self.env = env
        self.topology = topology
        self.routing = routing
        self.cfg = config
        self.rand = rand
        self.sink = sink
        rc, lc, nc = config.router, config.link, config.nic
        size = config.packet.size_bytes

        self.N = N = topology.num_nodes
        self.EJ = topology.num_ports
        self.P = P = topology.num_ports + 1
        self.V = V = len(routing.vcs)
        self.NP = N * P
        self.cap = rc.queue_packets
        self.nbr = [tuple(row) + (-1,) for row in topology.neighbor_table]
        # per port id: its node, its port number, the node its channel leads to
        self.node_of = [pid // P for pid in range(N * P)]
        self.port_of = [pid % P for pid in range(N * P)]
        self.down = [self.nbr[pid // P][pid % P] for pid in range(N * P)]

        self.occ = [0] * (N * P * V)                 # reserved + present packets per queue
        self.queues = [deque() for _ in range(N * P * V)]
        self.port_queues = [tuple(self.queues[pid * V:(pid + 1) * V]) for pid in range(N * P)]
        self.busy = [False] * (N * P + N)            # channel of each port id (NICs last)
        self.waiting: list[list[int] | None] = [None] * (N * P * V)  # port ids blocked on a queue
        self.srcq = [deque() for _ in range(N)]      # NIC source queues (unbounded)
        self.nic_wake = [-1] * N                      # pending NIC wake-up time
        self.next_avail = [0] * N                     # NIC availability pacing
        self.src_seq = [0] * N                        # packets created per source

        bubble = rc.bubble
        self.bubble = [bubble and vc in routing.bubble_vcs for vc in range(V)]
        self.inj_min = rc.injection_min_free or 1
        self.ordered = rc.tie_break == "ordered"
        self.escape_first = rc.arbitration == "escape_priority"
        if self.escape_first:
            order = sorted(range(V), key=lambda vc: (not routing.vcs[vc].startswith("escape"),
                                                     -vc if routing.vcs[vc] == "escape2" else vc))
            self.vc_order = tuple(order)
        self.cut_through = rc.switching == "virtual_cut_through"

        self.cyc = ps(rc.cycle_ns)
        self.delay = rc.delay_cycles * self.cyc
        self.ser_link = serialisation_ps(size, lc.bandwidth_gbps)
        self.lat_link = ps(lc.latency_ns)
        self.ser_nic = serialisation_ps(size, nc.bandwidth_gbps)
        self.lat_nic = ps(nc.latency_ns)

        self.ack_nak = rc.flow_control == "ack_nak"
        self.stop_and_wait = nc.handshake == "stop_and_wait"
        if self.stop_and_wait and nic_tick_ps <= 0:
            raise ValueError("a stop-and-wait NIC needs its polling tick")
        self.nic_tick = nic_tick_ps
        self.ser_ack_link = serialisation_ps(rc.ack_bytes, lc.bandwidth_gbps)
        self.ser_ack_nic = serialisation_ps(rc.ack_bytes, nc.bandwidth_gbps)
        self.outstanding = [0] * N            # NIC packets sent and not yet acknowledged
        self.nic_free_at = [0] * N            # stop-and-wait: when the last ACK came back
        self.arrivals: list[tuple[Packet, int]] = []      # ack_nak: awaiting a decision
        self.ctrlq: list[deque | None] = [None] * (N * P)  # ack_nak: ACK/NAK waiting per port
        self.rev = self._reverse_ports() if self.ack_nak else []
        self.retransmissions = 0
        self.free_at = [0] * (N * P)          # ack_nak: when each router channel is next idle
        self.nak_vc = [-1] * (N * P)          # ack_nak: VC of the port's last rejected packet
        self.wake_at = [-1] * (N * P)         # ack_nak: pending channel wake-up
        self._decide = self._decide_acknak if self.ack_nak else self._decide_credit

        self.dirty: set[int] = set()
        self._batches: dict[int, list] = {}
        self.at = self._make_at()
        self.progress_ps = 0          # last time any packet moved
        self.in_network = 0           # packets accepted from NICs and not yet ejected
        self.in_sources = 0           # packets waiting at NICs
        self.actions = 0              # model events applied
        self.link_hops = 0            # router-to-router channel traversals
        self.link_busy_ps = [0] * (N * P)  # per port: serialisation time granted
        self._select = self._make_select()
        self._try_forward, self._tx_end, self._ready = self._make_hot_path()
        if self.ack_nak:
            self._arrival, self._receive, self._ack, self._chan_free = self._make_acknak()

    # ================================================================== calendar
    def _make_at(self) -> Callable[..., None]:
        """``at(t, fn, a, b)``: schedule ``fn(a, b)`` at time ``t`` ps (>= now).

        Built as a closure: it runs a few times per packet hop, and cell variables are cheaper
        than attribute lookups.
        """
        batches = self._batches
        env = self.env
        schedule = env.schedule
        run = self._run_batch

        def at(t: int, fn: Callable, a: Any = None, b: Any = None) -> None:
            batch = batches.get(t)
            if batch is None:
                batches[t] = [(fn, a, b)]
                schedule(_Tick(env, t, run), NORMAL, t - env._now)
            else:
                batch.append((fn, a, b))

        return at

    def _make_select(self) -> Callable[..., int]:
        """``select(node, groups, from_port, from_vc, need_min, blocker) -> queue id or -1``:
        admission and selection at ``node``.

        Groups are tried in order; within a group every admissible queue competes and the one
        with most free slots wins (ties: the seeded stream, or the first with ``ordered``).
        Admission: bubble VCs need two free slots to enter (one to continue on the same port
        and VC); a packet from the NIC needs ``need_min`` in any queue but the ejection queue.
        When nothing is admissible, port ``blocker`` (if >= 0) is registered as waiting on every
        candidate queue.  A closure, like the per-hop functions: it runs once per attempt.
        """
        occ, waiting, bubble = self.occ, self.waiting, self.bubble
        cap, V, P, EJ = self.cap, self.V, self.P, self.EJ
        rand, ordered = self.rand, self.ordered

        def select(node: int, groups, from_port: int, from_vc: int, need_min: int,
                   blocker: int) -> int:
            base = node * P
            if len(groups) == 1 and len(groups[0]) == 1:
                # one candidate queue (DOR, table routing, ejection): no selection to make
                port, vc = groups[0][0]
                q = (base + port) * V + vc
                if port == EJ:
                    need = 1                  # ejection: no bubble, no injection threshold
                else:
                    need = 2 if bubble[vc] and (port != from_port or vc != from_vc) else 1
                    if need < need_min:
                        need = need_min
                if cap - occ[q] >= need:
                    return q
                if blocker >= 0:
                    wait_on(q, blocker)
                return -1
            for group in groups:
                best = -1
                best_free = 0
                ties = 0
                for port, vc in group:
                    q = (base + port) * V + vc
                    free = cap - occ[q]
                    # bubble: entering a ring needs two free slots, continuing on it one
                    if port == EJ:
                        need = 1
                    else:
                        need = 2 if bubble[vc] and (port != from_port or vc != from_vc) else 1
                        if need < need_min:
                            need = need_min
                    if free < need:
                        continue
                    if free > best_free:
                        best, best_free, ties = q, free, 1
                    elif free == best_free and not ordered:
                        ties += 1
                        if rand() * ties < 1.0:
                            best = q
                if best >= 0:
                    return best
            if blocker >= 0:
                for group in groups:
                    for port, vc in group:
                        wait_on((base + port) * V + vc, blocker)
            return -1

        def wait_on(q: int, blocker: int) -> None:
            w = waiting[q]
            if w is None:
                waiting[q] = [blocker]
            else:
                w.append(blocker)

        return select

    def _make_hot_path(self) -> tuple[Callable, Callable, Callable]:
        """The three things every packet hop does, as closures over the model's lists (they run
        millions of times; cell variables are cheaper than attribute lookups):

        * ``forward(pid, vc, p)`` — try to move the head ``p`` of queue (pid, vc) across its
          channel: the routing function is evaluated for the downstream router, a slot there is
          reserved, the channel is busy for the serialisation time, and the packet becomes
          visible downstream after the propagation time (store-and-forward: after its tail;
          cut-through: after its header), on the next clock edge plus the pipeline delay;
        * ``tx_end(pid, src_q)`` — end of serialisation: the channel and the upstream slot are
          free again, and ports waiting for room in that queue are woken;
        * ``ready(p, q2)`` — the packet is visible in queue ``q2``.
        """
        net = self
        env = self.env
        at = self.at
        port_of, down, queues, occ, busy = self.port_of, self.down, self.queues, self.occ, self.busy
        waiting, dirty, link_busy = self.waiting, self.dirty, self.link_busy_ps
        candidates, select, eject = self.routing.candidates, self._select, self._eject
        has_admit, admitted = self.routing.has_admit, self._admitted
        EJ, V = self.EJ, self.V
        ser, lat, cyc, delay = self.ser_link, self.lat_link, self.cyc, self.delay
        cut = self.cut_through

        def forward(pid: int, vc: int, p: Packet) -> bool:
            port = port_of[pid]
            if port == EJ:
                eject(pid, p)
                return True
            v = down[pid]
            q2 = select(v, candidates(v, p), port, vc, 1, pid)
            if q2 < 0:
                return False
            now = env._now
            src_q = pid * V + vc
            queues[src_q].popleft()
            occ[q2] += 1
            busy[pid] = True
            net.progress_ps = now
            net.link_hops += 1
            link_busy[pid] += ser
            t_end = now + ser
            at(t_end, tx_end, pid, src_q)
            p.hops += 1
            p.from_port = port
            p.from_vc = vc
            p.qid = q2
            if has_admit:
                admitted(p, q2)
            t = (now if cut else t_end) + lat
            r = t % cyc
            if r:
                t += cyc - r
            at(t + delay, ready, p, q2)
            return True

        def tx_end(pid: int, src_q: int) -> None:
            busy[pid] = False
            occ[src_q] -= 1
            dirty.add(pid)
            w = waiting[src_q]
            if w is not None:
                dirty.update(w)
                waiting[src_q] = None

        def ready(p: Packet, q2: int) -> None:
            now = p.ready = env._now
            q = queues[q2]
            # canonical order among packets becoming ready together: oldest first
            if q and q[-1].ready == now and q[-1].age > p.age:
                q.append(p)
                _bubble_back(q)
            else:
                q.append(p)
            dirty.add(q2 // V)

        return forward, tx_end, ready

    def _run_batch(self, ev: Event) -> None:
        t = ev._value
        batch = self._batches.pop(t)
        self.actions += len(batch)
        for fn, a, b in batch:
            fn(a, b)
        if self.dirty or self.arrivals:
            cyc = self.cyc
            if t % cyc:
                edge = t - t % cyc + cyc
                if edge not in self._batches:
                    self.at(edge, _noop)
            else:
                self._decide()

    def edge(self, t: int) -> int:
        """The first clock edge at or after ``t``."""
        r = t % self.cyc
        return t if r == 0 else t - r + self.cyc

    # ================================================================== traffic entry
    def post_message(self, src: int, dst: int, packets: int, birth: int, first_pid: int,
                     msg: int, measured: bool, avail_period: int) -> list[Packet]:
        """Create a message's packets at the NIC of ``src`` (at time ``birth`` = now).

        Packets become available to the NIC one per ``avail_period`` ps (0: all at once), after
        the previous message's packets.
        """
        # oldest first: message creation time, then source, then creation order at the source
        base = (birth * self.N + src) << 32
        seq = self.src_seq[src]
        self.src_seq[src] = seq + packets
        start = max(birth, self.next_avail[src])
        pkts = []
        q = self.srcq[src]
        for i in range(packets):
            p = Packet(first_pid + i, src, dst, birth, base | (seq + i), msg, measured)
            p.avail = start + i * avail_period
            q.append(p)
            pkts.append(p)
        self.next_avail[src] = start + packets * avail_period
        self.in_sources += packets
        self.dirty.add(self.NP + src)
        return pkts

    # ================================================================== decision phase
    def _decide_credit(self) -> None:
        dirty = self.dirty
        busy = self.busy
        queues = self.queues
        V = self.V
        NP = self.NP
        heads = []
        for pid in dirty:
            if busy[pid]:
                continue
            if pid >= NP:
                q = self.srcq[pid - NP]
                if q:
                    p = q[0]
                    heads.append((p.age, pid, -1, p))
                continue
            base = pid * V
            for vc in range(V):
                q = queues[base + vc]
                if q:
                    p = q[0]
                    heads.append((p.age, pid, vc, p))
        dirty.clear()
        if len(heads) > 1:
            heads.sort()
            if self.escape_first:
                heads = self._escape_priority(heads)
        elif not heads:
            return
        forward = self._try_forward
        for _, pid, vc, p in heads:
            if busy[pid]:
                continue
            if vc < 0:
                self._try_inject(pid - NP, p)
            else:
                forward(pid, vc, p)

    def _escape_priority(self, heads: list) -> list:
        """Reorder so that within a port the VCs are tried in ``vc_order`` (escape first)."""
        rank = {vc: i for i, vc in enumerate(self.vc_order)}
        first_seen: dict[int, int] = {}
        for i, h in enumerate(heads):
            first_seen.setdefault(h[1], i)
        return sorted(heads, key=lambda h: (first_seen[h[1]], rank.get(h[2], -1)))

    def _nic_may_send(self, node: int, p: Packet, now: int) -> bool:
        """Availability and handshake rules of the NIC; schedules a wake-up if not yet."""
        if self.stop_and_wait:
            if self.outstanding[node]:
                return False            # the acknowledgement will wake the NIC
            t_ok = self._next_tick(max(p.avail, self.nic_free_at[node]))
        else:
            t_ok = p.avail
        if t_ok > now:
            if self.nic_wake[node] != t_ok:
                self.nic_wake[node] = t_ok
                self.at(t_ok, self._wake_nic, node)
            return False
        return True

    def _next_tick(self, t: int) -> int:
        """The first NIC polling tick at or after ``t`` (ticks at k * nic_tick from 0)."""
        tick = self.nic_tick
        k = int(t // tick)
        while int(round(k * tick)) < t:
            k += 1
        return int(round(k * tick))

    def _try_inject(self, node: int, p: Packet) -> bool:
        now = self.env._now
        if not self._nic_may_send(node, p, now):
            return False
        routing = self.routing
        if routing.has_inject:
            routing.inject(node, p, self.local_adaptive_used(node), self.rand)
        q2 = self._select(node, routing.candidates(node, p), -1, -1, self.inj_min, self.NP + node)
        if q2 < 0:
            return False
        self.srcq[node].popleft()
        self.in_sources -= 1
        self.in_network += 1
        self.occ[q2] += 1
        self.busy[self.NP + node] = True
        self.progress_ps = now
        t_end = now + self.ser_nic
        self.at(t_end, self._nic_tx_end, node)
        p.enter = t_end + self.lat_nic
        p.from_port = -1
        p.from_vc = -1
        if self.stop_and_wait:
            # the router acknowledges on arrival, over the reverse internal link
            self.outstanding[node] += 1
            self.at(p.enter + self.ser_ack_nic + self.lat_nic, self._nic_ack, node)
        self._arrive(p, q2, now, t_end, self.lat_nic)
        return True

    def _arrive(self, p: Packet, q2: int, start: int, t_end: int, latency: int) -> None:
        """The packet, granted at ``start``, will be visible in queue ``q2`` downstream."""
        p.qid = q2
        if self.routing.has_admit:
            self._admitted(p, q2)
        t = (start if self.cut_through else t_end) + latency
        self.at(self.edge(t) + self.delay, self._ready, p, q2)

    def _admitted(self, p: Packet, q2: int) -> None:
        pid2, vc2 = divmod(q2, self.V)
        node, port = divmod(pid2, self.P)
        self.routing.admitted(node, p, port, vc2)

    def _eject(self, pid: int, p: Packet) -> None:
        now = self.env._now
        src_q = pid * self.V
        self.queues[src_q].popleft()
        self.busy[pid] = True
        self.progress_ps = now
        self.in_network -= 1
        t_end = now + self.ser_nic
        self.at(t_end, self._tx_end, pid, src_q)
        self.sink(p, t_end + self.lat_nic)

    def _make_acknak(self) -> tuple[Callable, Callable, Callable, Callable]:
        """The ack/nak protocol's per-hop functions, as closures (see :meth:`_make_hot_path`):

        * ``arrival(p, src)`` — a packet has arrived; it is decided on at the next edge;
        * ``receive(p, src)`` — accept (ACK) or reject (NAK) it with this router's state;
          ``src`` is the upstream queue id, or ``-1 - node`` for the local NIC.  The ACK/NAK
          waits for the reverse channel, where it goes before any data;
        * ``ack(src_q, nak)`` — an ACK (``nak`` None: the sender's slot is free) or a NAK
          (the packet goes back to its old place in its queue) reaches the sender;
        * ``chan_free(pid)`` — a busy channel with more to send is idle again.
        """
        net = self
        env = self.env
        at = self.at
        routing = self.routing
        candidates, inject, has_inject = routing.candidates, routing.inject, routing.has_inject
        has_admit, admitted = routing.has_admit, self._admitted
        select, ready, local_used, rand = self._select, self._ready, self.local_adaptive_used, \
            self.rand
        occ, queues, waiting, dirty = self.occ, self.queues, self.waiting, self.dirty
        down, rev, ctrlq, nak_vc, wake_at = self.down, self.rev, self.ctrlq, self.nak_vc, \
            self.wake_at
        V, inj_min, delay = self.V, self.inj_min, self.delay
        nic_ack, ack_nic_time = self._nic_ack, self.ser_ack_nic + self.lat_nic

        def arrival(p: Packet, src: int) -> None:
            net.arrivals.append((p, src))      # the list is swapped each decision phase

        def receive(p: Packet, src: int) -> None:
            now = env._now
            if src >= 0:
                pid_up = src // V
                v = down[pid_up]
                q2 = select(v, candidates(v, p), p.from_port, p.from_vc, 1, -1)
            else:
                v = -1 - src
                if has_inject:
                    inject(v, p, local_used(v), rand)
                q2 = select(v, candidates(v, p), -1, -1, inj_min, -1)
            if q2 >= 0:
                occ[q2] += 1
                net.progress_ps = now
                p.qid = q2
                if src >= 0:
                    p.hops += 1
                    net.link_hops += 1
                else:
                    net.in_sources -= 1
                    net.in_network += 1
                    p.enter = now
                if has_admit:
                    admitted(p, q2)
                if delay:
                    at(now + delay, ready, p, q2)
                else:
                    ready(p, q2)          # visible at once: sent in this same decision phase
                nak = None
            else:
                p.retries += 1
                net.retransmissions += 1
                nak = p
            if src >= 0:
                rpid = rev[pid_up]
                cq = ctrlq[rpid]
                if cq is None:
                    cq = ctrlq[rpid] = deque()
                cq.append((src, nak))
                dirty.add(rpid)
            else:
                at(now + ack_nic_time, nic_ack, v, nak)

        def ack(src_q: int, nak: Packet | None) -> None:
            pid = src_q // V
            vc = src_q - pid * V
            if nak is None:
                if nak_vc[pid] == vc:
                    nak_vc[pid] = -1
                occ[src_q] -= 1
                w = waiting[src_q]
                if w is not None:
                    dirty.update(w)
                    waiting[src_q] = None
                return
            _insert_by_order(queues[src_q], nak)
            nak_vc[pid] = vc
            dirty.add(pid)

        def chan_free(pid: int, _: Any = None) -> None:
            wake_at[pid] = -1
            dirty.add(pid)

        return arrival, receive, ack, chan_free

    # ================================================================== ack/nak protocol
    def _reverse_ports(self) -> list[int]:
        """For each router port id, the port id of the channel coming back (-1 for none)."""
        topo, P = self.topology, self.P
        rev = [-1] * (self.N * P)
        for pid in range(self.N * P):
            u, port = divmod(pid, P)
            v = self.down[pid]
            if port == self.EJ or v < 0:
                continue
            back = port ^ 1 if topo.kind == "torus" else topo.port_to(v, u)
            if self.nbr[v][back] != u:
                raise AssertionError(f"no reverse channel for node {u} port {port}")
            rev[pid] = v * P + back
        return rev

    def _decide_acknak(self) -> None:
        arrivals = self.arrivals
        if arrivals:
            if len(arrivals) > 1:
                arrivals.sort(key=_arrival_key)
            self.arrivals = []
            receive = self._receive
            for p, src in arrivals:
                receive(p, src)
        dirty = self.dirty
        if not dirty:
            return
        # hot loop: everything it touches is a local
        busy, free_at, wake_at = self.busy, self.free_at, self.wake_at
        port_of, ctrlq, port_queues = self.port_of, self.ctrlq, self.port_queues
        at, chan_free, arrival, ack = self.at, self._chan_free, self._arrival, self._ack
        link_busy = self.link_busy_ps
        V, NP, EJ = self.V, self.NP, self.EJ
        ser, ser_ack, lat = self.ser_link, self.ser_ack_link, self.lat_link
        cut = self.cut_through
        vc_order = self.vc_order if self.escape_first else None
        now = self.env._now
        ports = list(dirty)    # sends of one phase are independent: order does not matter
        dirty.clear()
        for pid in ports:
            if pid >= NP:
                q = self.srcq[pid - NP]
                if q and not busy[pid]:
                    self._send_from_nic(pid - NP, q[0])
                continue
            port = port_of[pid]
            pq = port_queues[pid]
            if port == EJ:
                if pq[0] and not busy[pid]:
                    self._eject(pid, pq[0][0])
                continue
            fa = free_at[pid]
            if fa > now:
                # busy: come back when the channel is idle (one wake-up per busy period)
                if wake_at[pid] != fa:
                    wake_at[pid] = fa
                    at(fa, chan_free, pid)
                continue
            cq = ctrlq[pid]
            if cq:
                # an ACK/NAK goes before any data
                src_q, nak = cq.popleft()
                fa = free_at[pid] = now + ser_ack
                link_busy[pid] += ser_ack
                at(fa + lat, ack, src_q, nak)
            else:
                best = -1
                if vc_order is not None:
                    for vc in vc_order:
                        if pq[vc]:
                            best = vc
                            break
                else:
                    # oldest head first, but not the VC whose last packet was just rejected
                    # while another VC has one (else an adaptive packet bouncing off a full
                    # queue could keep the escape packets behind it off the channel forever)
                    nak = self.nak_vc[pid]
                    for vc in range(V):
                        q = pq[vc]
                        if q and vc != nak and (best < 0 or q[0].age < pq[best][0].age):
                            best = vc
                    if best < 0 and nak >= 0 and pq[nak]:
                        best = nak
                if best < 0:
                    continue
                # speculative transmission of the head; its slot stays held until the ACK
                p = pq[best].popleft()
                fa = free_at[pid] = now + ser
                link_busy[pid] += ser
                p.from_port = port
                p.from_vc = best
                at((now if cut else fa) + lat, arrival, p, pid * V + best)
            if cq or any(pq):
                wake_at[pid] = fa       # more to send: come back when the channel is idle
                at(fa, chan_free, pid)

    def _send_from_nic(self, node: int, p: Packet) -> None:
        now = self.env._now
        if not self._nic_may_send(node, p, now):
            return
        self.srcq[node].popleft()
        self.outstanding[node] += 1
        self.busy[self.NP + node] = True
        t_end = now + self.ser_nic
        self.at(t_end, self._nic_tx_end, node)
        p.from_port = -1
        p.from_vc = -1
        self.at(t_end + self.lat_nic, self._arrival, p, -1 - node)

    def _nic_ack(self, node: int, nak: Packet | None = None) -> None:
        now = self.env._now
        self.outstanding[node] -= 1
        self.nic_free_at[node] = now
        if nak is not None:
            _insert_by_order(self.srcq[node], nak, key=_age_key)
        if self.stop_and_wait and self.srcq[node]:
            # the next send is on the next polling tick: wake the NIC then, not now
            t = self._next_tick(max(now, self.srcq[node][0].avail))
            if t > now:
                if self.nic_wake[node] != t:
                    self.nic_wake[node] = t
                    self.at(t, self._wake_nic, node)
                return
        self.dirty.add(self.NP + node)

    # ================================================================== actions
    def _nic_tx_end(self, node: int, _: Any = None) -> None:
        self.busy[self.NP + node] = False
        if not (self.stop_and_wait and self.outstanding[node]):
            self.dirty.add(self.NP + node)      # a stop-and-wait NIC waits for its ACK

    def _wake_nic(self, node: int, _: Any = None) -> None:
        self.nic_wake[node] = -1
        self.dirty.add(self.NP + node)

    # ================================================================== views
    def local_adaptive_used(self, node: int) -> list[int | None]:
        """Used slots of the adaptive queue (VC 0) of each direction port of ``node``."""
        occ, V, base = self.occ, self.V, node * self.P
        row = self.nbr[node]
        return [occ[(base + port) * V] if row[port] >= 0 else None for port in range(self.EJ)]

    def queue_label(self, q: int) -> str:
        pid, vc = divmod(q, self.V)
        node, port = divmod(pid, self.P)
        where = self.topology.coords(node) if self.topology.kind == "torus" else node
        pname = "eject" if port == self.EJ else self.topology.port_name(port)
        return f"node {node} {where} port {pname} vc {self.routing.describe_vc(vc)}"

    def blocked_queues(self, limit: int = 12) -> list[str]:
        out = []
        for q, dq in enumerate(self.queues):
            if dq:
                head = dq[0]
                out.append(f"{self.queue_label(q)}: {len(dq)}/{self.cap} packets, head "
                           f"{head.src}->{head.dst} (target {head.target})")
        return out

    def check_invariants(self, generated: int, delivered: int) -> None:
        """Assert the model's accounting (for tests; call between SimPy steps).

        Every generated, undelivered packet is in exactly one place — a NIC source queue, a
        router queue, on a channel (a pending arrival), or travelling back in a NAK — no queue
        holds more than its capacity, and ``generated == delivered + at NICs + in network``.
        """
        seen: dict[int, str] = {}

        def place(p: Any, where: str) -> None:
            if isinstance(p, Packet):
                if p.pid in seen:
                    raise AssertionError(f"packet {p.pid} both {seen[p.pid]} and {where}")
                seen[p.pid] = where

        for q, dq in enumerate(self.queues):
            if not 0 <= len(dq) <= self.occ[q] <= self.cap:
                raise AssertionError(f"{self.queue_label(q)}: occupancy {self.occ[q]}, "
                                     f"{len(dq)} visible, capacity {self.cap}")
            for p in dq:
                place(p, self.queue_label(q))
        for node, dq in enumerate(self.srcq):
            for p in dq:
                place(p, f"at NIC {node}")
        for t, batch in self._batches.items():
            for fn, a, b in batch:
                place(a, f"in action {getattr(fn, '__name__', fn)} at {t}")
                place(b, f"in action {getattr(fn, '__name__', fn)} at {t}")
        for p, _ in self.arrivals:
            place(p, "arriving")
        for cq in self.ctrlq:
            for ctrl in cq or ():
                place(ctrl[1], "in a NAK")
        missing = generated - delivered - len(seen)
        if missing:
            raise AssertionError(f"{missing} packets unaccounted for (generated {generated}, "
                                 f"delivered {delivered}, found {len(seen)})")
        if generated != delivered + self.in_sources + self.in_network:
            raise AssertionError(f"generated {generated} != delivered {delivered} + at NICs "
                                 f"{self.in_sources} + in network {self.in_network}")

    # ================================================================== watchdog
    def start_watchdog(self, period: int) -> None:
        self._watchdog_period = period
        self.at(self.env._now + period, self._watchdog)

    def _watchdog(self, _: Any = None, __: Any = None) -> None:
        now = self.env._now
        if self.in_network > 0 and now - self.progress_ps >= self._watchdog_period:
            blocked = self.blocked_queues()
            shown = "; ".join(blocked[:12])
            more = f" (+{len(blocked) - 12} more)" if len(blocked) > 12 else ""
            raise DeadlockError(
                f"deadlock: {self.in_network} packets in the network and none has moved for "
                f"{(now - self.progress_ps) / PS_PER_NS:.0f} ns (since t = "
                f"{self.progress_ps / PS_PER_NS:.0f} ns); blocked queues: {shown}{more}")
        self.at(now + self._watchdog_period, self._watchdog)


def _noop(a: Any, b: Any) -> None:
    pass


def _arrival_key(item: tuple) -> int:
    return item[0].age


def _queue_key(p: Packet) -> tuple:
    return (p.ready, p.age)


def _age_key(p: Packet) -> int:
    return p.age


def _insert_by_order(q: deque, p: Packet, key=_queue_key) -> None:
    """Put a returned (NAKed) packet back at its original position."""
    k = key(p)
    for i, other in enumerate(q):
        if key(other) > k:
            q.insert(i, p)
            return
    q.append(p)


def _bubble_back(q: deque) -> None:
    """Move the last element of q left past same-time younger packets."""
    p = q.pop()
    stash = []
    while q and q[-1].ready == p.ready and q[-1].age > p.age:
        stash.append(q.pop())
    q.append(p)
    while stash:
        q.append(stash.pop())
