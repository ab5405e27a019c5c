"""Ack/nak flow control (the OutFlank reference simulator's).

Whenever a port's channel is idle it sends a head packet without asking; the receiver decides
on arrival, with its own state (:mod:`.admission`, the same rule as credit flow control), whether
to store it and answers with a ``router.ack_bytes`` ACK or NAK on the reverse channel, where
control messages go before data.  The sender's slot stays held until the ACK returns; a NAKed
packet goes back into its queue at its old position and is retransmitted.  NICs use the same
protocol towards their router.

Decision phase: first the packets that arrived since the last edge are received, oldest first;
then every dirty port whose channel is idle sends its ACK/NAK if one waits, else a head packet
(oldest first across its VCs, in rounds that pass over the VCs rejected until every VC with a
head has been, :meth:`AckNakFlow.oldest_unrejected`; or in VC priority order with
``escape_priority``).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

from icsim.model.packet import Packet
from icsim.simulator.engines.guard import fault
from icsim.simulator.engines.simpy.credit import CreditFlow
from icsim.simulator.engines.simpy.nic import insert_by_order


class AckNakFlow(CreditFlow):
    """The ack/nak protocol over a fabric (ejection and visibility as in :class:`CreditFlow`)."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        fab = self.fab
        N, P = fab.N, fab.P
        self.arrivals: list[tuple[Packet, int]] = []       # awaiting a decision
        self.ctrlq: list[deque | None] = [None] * (N * P)  # ACK/NAK waiting per port
        self.rev = self._reverse_ports()
        self.free_at = [0] * (N * P)          # when each router channel is next idle
        self.nak_vc = [-1] * (N * P)          # VC of the port's last rejected packet
        self.nak_mask = [0] * (N * P)         # VCs rejected in the port's current round
        self.wake_at = [-1] * (N * P)         # pending channel wake-up
        self.vc_order = self.fab.spec.vc_order if self.escape_first else None
        self.times = fab.spec.channel_times()       # per port id: its link class's
        self.arrival, self.receive, self.ack, self.chan_free = self._make_protocol()

    def _reverse_ports(self) -> list[int]:
        """For each router port id, the port id of the channel coming back (-1 for none)."""
        fab = self.fab
        P, EJ = fab.P, fab.EJ
        back_port = fab.spec.reverse_port
        rev = [-1] * (fab.N * P)
        for pid in range(fab.N * P):
            u, port = divmod(pid, P)
            v = fab.down[pid]
            if port >= EJ or v < 0:
                continue
            back = int(back_port[u, port])
            if back < 0 or fab.nbr[v][back] != u:
                raise ValueError(f"ack/nak flow control needs a reverse channel for every "
                                 f"channel; node {u} port {port} has none")
            rev[pid] = v * P + back
        return rev

    def _make_protocol(self) -> tuple[Callable, Callable, Callable, Callable]:
        """The protocol's per-hop functions, as closures (see :meth:`_make_hot_path`):

        * ``arrival(p, src)`` — a packet has arrived; it is decided on at the next edge;
        * ``receive(p, src)`` — accept (ACK) or reject (NAK) it with this router's state;
          ``src`` is the upstream queue id, or ``-1 - node`` for the local NIC.  The ACK/NAK
          waits for the reverse channel, where it goes before any data;
        * ``ack(src_q, nak)`` — an ACK (``nak`` None: the sender's slot is free) or a NAK
          (the packet goes back to its old place in its queue) reaches the sender;
        * ``chan_free(pid)`` — a busy channel with more to send is idle again.
        """
        fab, cal, flow = self.fab, self.cal, self
        spec = fab.spec
        at = cal.at
        candidates, inject, has_inject = self.route_candidates, self.route_inject, self.has_inject
        has_admit, admitted = self.has_admit, self.admitted
        select, ready, local_used, rand = (self.select, self.ready, fab.local_adaptive_used,
                                           self.rand)
        occ, queues, waiting, dirty = fab.occ, fab.queues, fab.waiting, fab.dirty
        down, rev, ctrlq, wake_at = fab.down, self.rev, self.ctrlq, self.wake_at
        nak_vc, nak_mask = self.nak_vc, self.nak_mask
        V, inj_min, delay = fab.V, spec.injection_min_free, spec.delay_ps
        nic_ack, ack_nic_time = self.nic.ack, spec.ack_nic_ser_ps + spec.nic_lat_ps
        queued, limit = self.queued, spec.hop_limit

        def arrival(p: Packet, src: int) -> None:
            flow.arrivals.append((p, src))      # the list is swapped each decision phase

        def receive(p: Packet, src: int) -> None:
            now = cal.now
            if src >= 0:
                pid_up = src // V
                v = down[pid_up]
                q2 = select(v, candidates(v, p), p.from_port, p.from_vc, 1, -1)
            else:
                v = p.src                       # from the NIC of terminal -1 - src
                if has_inject:
                    inject(v, p, local_used(v), rand)
                q2 = select(v, candidates(v, p), -1, -1, inj_min, -1)
            if q2 >= 0:
                if down[q2 // V] < 0:         # an ejection port, or a port with no link
                    queued(p, q2)
                occ[q2] += 1
                fab.progress_ps = now
                p.qid = q2
                if src >= 0:
                    p.hops += 1
                    if p.hops > limit:
                        raise fault(spec, "hop_limit", p.tsrc, p.tdst, v, p.hops)
                    fab.link_hops += 1
                else:
                    fab.in_sources -= 1
                    fab.in_network += 1
                    fab.injected[p.tsrc] += 1
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
                fab.retransmissions += 1
                nak = p
            if src >= 0:
                rpid = rev[pid_up]
                cq = ctrlq[rpid]
                if cq is None:
                    cq = ctrlq[rpid] = deque()
                cq.append((src, nak))
                dirty.add(rpid)
            else:
                at(now + ack_nic_time, nic_ack, -1 - src, nak)

        def ack(src_q: int, nak: Packet | None) -> None:
            pid = src_q // V
            vc = src_q - pid * V
            if nak is None:
                if nak_vc[pid] == vc:
                    nak_vc[pid] = -1
                    nak_mask[pid] = 0
                else:
                    nak_mask[pid] &= ~(1 << vc)
                occ[src_q] -= 1
                w = waiting[src_q]
                if w is not None:
                    dirty.update(w)
                    waiting[src_q] = None
                return
            insert_by_order(queues[src_q], nak)
            nak_vc[pid] = vc
            nak_mask[pid] |= 1 << vc
            dirty.add(pid)

        def chan_free(pid: int, _: Any = None) -> None:
            wake_at[pid] = -1
            dirty.add(pid)

        return arrival, receive, ack, chan_free

    # ------------------------------------------------------------------ decision phase
    def pending(self) -> bool:
        return bool(self.fab.dirty or self.arrivals)

    def decide(self) -> None:
        arrivals = self.arrivals
        if arrivals:
            if len(arrivals) > 1:
                arrivals.sort(key=_arrival_key)
            self.arrivals = []
            receive = self.receive
            for p, src in arrivals:
                receive(p, src)
        fab = self.fab
        dirty = fab.dirty
        if not dirty:
            return
        spec = fab.spec
        # hot loop: everything it touches is a local
        busy, free_at, wake_at = fab.busy, self.free_at, self.wake_at
        port_of, ctrlq, port_queues = fab.port_of, self.ctrlq, fab.port_queues
        at, chan_free, arrival, ack = self.cal.at, self.chan_free, self.arrival, self.ack
        link_busy, link_packets = fab.link_busy_ps, fab.link_packets
        V, NP, EJ = fab.V, fab.NP, fab.EJ
        ser_of, lat_of, ack_of = self.times
        cut = spec.cut_through
        vc_order = self.vc_order
        now = self.cal.now
        ports = list(dirty)    # sends of one phase are independent: order does not matter
        dirty.clear()
        for pid in ports:
            if pid >= NP:
                q = fab.srcq[pid - NP]
                if q and not busy[pid]:
                    self.send_from_nic(pid - NP, q[0])
                continue
            port = port_of[pid]
            pq = port_queues[pid]
            if port >= EJ:
                if pq[0] and not busy[pid]:
                    self.eject(pid, pq[0][0])
                continue
            fa = free_at[pid]
            ser, lat, ser_ack = ser_of[pid], lat_of[pid], ack_of[pid]
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
                    best = self.oldest_unrejected(pid, pq)
                if best < 0:
                    continue
                # speculative transmission of the head; its slot stays held until the ACK
                p = pq[best].popleft()
                fa = free_at[pid] = now + ser
                link_busy[pid] += ser
                link_packets[pid * V + best] += 1
                p.from_port = port
                p.from_vc = best
                at((now if cut else fa) + lat, arrival, p, pid * V + best)
            if cq or any(pq):
                wake_at[pid] = fa       # more to send: come back when the channel is idle
                at(fa, chan_free, pid)

    def busy_until(self, pid: int) -> int:
        """When router channel ``pid`` is next idle (its ACK/NAK or packet under way ends)."""
        return self.free_at[pid]

    def oldest_unrejected(self, pid: int, pq: list[deque]) -> int:
        """The VC whose head port ``pid`` sends under oldest-first arbitration (-1: none).

        Oldest head first, but in rounds: a VC whose packet was rejected is passed over while
        another VC that has not been rejected this round has a head (else packets bouncing off
        full queues could keep the escape packets behind them off the channel forever).  Once
        every VC with a head has been rejected, a new round begins with the last one rejected
        still passed over; an ACK of that one ends the round, an ACK of another takes it out
        of the round's rejected.  With two VCs this is "not the VC whose last packet was just
        rejected while another VC has one"; with three or more it also keeps two VCs whose
        packets are rejected in turn from starving the third."""
        mask, nak = self.nak_mask[pid], self.nak_vc[pid]
        best = _oldest_outside(pq, mask)
        if best < 0 and mask and any(pq):
            mask = self.nak_mask[pid] = 1 << nak       # a new round
            best = _oldest_outside(pq, mask)
            if best < 0 and pq[nak]:
                best = nak
        return best

    def send_from_nic(self, node: int, p: Packet) -> None:
        fab, cal, nic = self.fab, self.cal, self.nic
        spec = fab.spec
        now = cal.now
        if not nic.may_send(node, p, now):
            return
        fab.srcq[node].popleft()
        fab.outstanding[node] += 1
        fab.busy[fab.NP + node] = True
        t_end = now + spec.nic_ser_ps
        cal.at(t_end, nic.tx_end, node)
        p.from_port = -1
        p.from_vc = -1
        cal.at(t_end + spec.nic_lat_ps, self.arrival, p, -1 - node)

    def in_flight(self) -> list:
        out = super().in_flight()
        out += [("arriving", p) for p, _ in self.arrivals]
        out += [("in a NAK", ctrl[1]) for cq in self.ctrlq for ctrl in cq or ()]
        return out


def _arrival_key(item: tuple) -> int:
    return item[0].age


def _oldest_outside(pq: list[deque], mask: int) -> int:
    """The VC of the oldest head among ``pq``'s queues whose bit is not in ``mask`` (-1: none)."""
    best = -1
    for vc, q in enumerate(pq):
        if q and not mask >> vc & 1 and (best < 0 or q[0].age < pq[best][0].age):
            best = vc
    return best
