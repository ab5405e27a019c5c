"""The state of the network in the SimPy engine: queues, occupancy, channels, NIC source queues.

Routers are output-queued: a packet waits in the queue of the port it will leave by, one queue
per (port, VC) of ``capacity`` slots, plus an ejection queue (ids: :mod:`icsim.simulator.spec`).
``occ[q]`` counts the slots of queue ``q`` that are reserved or hold a packet; ``queues[q]``
holds the packets that are visible there, oldest first.  A port whose head packet could not
move is registered in ``waiting[q]`` of every queue it waits for and is marked *dirty* again
when one of them frees a slot; the decision phase only looks at dirty ports.

The flow controls (:mod:`.credit`, :mod:`.acknak`) and the NIC (:mod:`.nic`) act on this state;
:meth:`Fabric.check_invariants` checks its accounting between events (tests).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from icsim.model.packet import Packet
from icsim.simulator.spec import NetworkSpec


class Fabric:
    """Every list the model's functions share, built from a :class:`NetworkSpec`.

    Attributes (per id, see :mod:`icsim.simulator.spec`)
    -----------------------------------------------------
    occ, queues, waiting : per queue id
    busy : per port id (NICs last)
    link_busy_ps, link_packets : per port id / per queue id, serialisation time and packets
        granted on the channel (statistics)
    srcq, next_avail, src_seq, nic_wake, outstanding, nic_free_at : per terminal (the NICs)
    router_of : per terminal, its router
    dirty : the port ids the next decision phase looks at
    """

    def __init__(self, spec: NetworkSpec):
        self.spec = spec
        self.N = N = spec.num_nodes
        self.T = T = spec.num_terminals
        self.c = c = spec.concentration
        self.EJ = spec.num_ports
        self.P = P = spec.ports_per_router
        self.V = V = spec.num_vcs
        self.NP = N * P
        self.cap = spec.capacity
        self.nbr = [tuple(row) + (-1,) * c for row in spec.neighbor.tolist()]
        # per terminal: its router
        self.router_of = [t // c for t in range(T)]
        # per port id: its node, its port number, the node its channel leads to
        self.node_of = [pid // P for pid in range(N * P)]
        self.port_of = [pid % P for pid in range(N * P)]
        self.down = [self.nbr[pid // P][pid % P] for pid in range(N * P)]
        self.occ = [0] * (N * P * V)
        self.queues = [deque() for _ in range(N * P * V)]
        self.port_queues = [tuple(self.queues[pid * V:(pid + 1) * V]) for pid in range(N * P)]
        self.busy = [False] * (N * P + T)
        self.waiting: list[list[int] | None] = [None] * (N * P * V)
        self.dirty: set[int] = set()
        # per terminal (its NIC)
        self.srcq = [deque() for _ in range(T)]      # NIC source queues (unbounded)
        self.nic_wake = [-1] * T                      # pending NIC wake-up time
        self.next_avail = [0] * T                     # NIC availability pacing
        self.src_seq = [0] * T                        # packets created per source
        self.injected = [0] * T                       # packets its router accepted, per source
        self.outstanding = [0] * T                    # NIC packets not yet acknowledged
        self.nic_free_at = [0] * T                    # stop-and-wait: when the last ACK came back
        self.progress_ps = 0          # last time any packet moved
        self.in_network = 0           # packets accepted from NICs and not yet ejected
        self.in_sources = 0           # packets waiting at NICs
        self.link_hops = 0            # router-to-router channel traversals
        self.retransmissions = 0
        self.link_busy_ps = [0] * (N * P)
        self.link_packets = [0] * (N * P * V)
        self.adaptive_vc = spec.adaptive_vc

    # ------------------------------------------------------------------ traffic entry
    def post_message(self, src: int, dst: int, packets: int, birth: int, first_pid: int,
                     measured: bool, avail_period: int) -> None:
        """Create a message's packets at the NIC of terminal ``src`` to terminal ``dst`` (at
        time ``birth`` = now).

        Packets become available to the NIC one per ``avail_period`` ps (0: all at once), after
        the previous message's packets."""
        # oldest first: message creation time, then source, then creation order at the source
        base = (birth * self.T + src) << 32
        c = self.c
        rs, rd = src // c, dst // c
        eport = self.EJ + dst % c
        seq = self.src_seq[src]
        self.src_seq[src] = seq + packets
        start = max(birth, self.next_avail[src])
        q = self.srcq[src]
        for i in range(packets):
            p = Packet(first_pid + i, rs, rd, birth, base | (seq + i), measured, src, dst,
                       eport)
            p.avail = start + i * avail_period
            q.append(p)
        self.next_avail[src] = start + packets * avail_period
        self.in_sources += packets
        self.dirty.add(self.NP + src)

    # ------------------------------------------------------------------ views
    def local_adaptive_used(self, node: int) -> list[int | None]:
        """Used slots of the adaptive queue of each direction port of ``node`` (what
        injection-time routing decisions look at)."""
        occ, V, base, a = self.occ, self.V, node * self.P, self.adaptive_vc
        row = self.nbr[node]
        return [occ[(base + port) * V + a] if row[port] >= 0 else None
                for port in range(self.EJ)]

    def queue_label(self, q: int) -> str:
        pid, vc = divmod(q, self.V)
        node, port = divmod(pid, self.P)
        topo = self.spec.topology
        if port < self.EJ:
            pname = topo.port_name(port)
        else:
            pname = "eject" if self.c == 1 else f"eject{port - self.EJ}"
        return f"node {topo.where(node)} port {pname} vc {self.spec.vcs[vc].name}"

    def blocked_queues(self) -> list[str]:
        """Every non-empty queue with its occupancy and head packet."""
        out = []
        describe = self.spec.routing.describe
        for q, dq in enumerate(self.queues):
            if dq:
                head = dq[0]
                extra = describe(head)
                out.append(f"{self.queue_label(q)}: {len(dq)}/{self.cap} packets, head "
                           f"{head.tsrc}->{head.tdst}{' ' + extra if extra else ''}")
        return out

    def check_invariants(self, generated: int, delivered: int, in_flight: list[Any]) -> None:
        """Assert the model's accounting (for tests; call between SimPy steps).

        Every generated, undelivered packet is in exactly one place — a NIC source queue, a
        router queue, or ``in_flight`` (pending actions, arrivals, NAKs) — no queue holds more
        than its capacity, and ``generated == delivered + at NICs + in network``.
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
        for t, dq in enumerate(self.srcq):
            for p in dq:
                place(p, f"at NIC {t}")
        for where, p in in_flight:
            place(p, where)
        missing = generated - delivered - len(seen)
        if missing:
            raise AssertionError(f"{missing} packets unaccounted for (generated {generated}, "
                                 f"delivered {delivered}, found {len(seen)})")
        if generated != delivered + self.in_sources + self.in_network:
            raise AssertionError(f"generated {generated} != delivered {delivered} + at NICs "
                                 f"{self.in_sources} + in network {self.in_network}")
