"""The NIC: when a packet waiting at a source may be offered to its router.

``nic.handshake: none`` — packets become available one per ``avail_period`` (the workload's NIC
pacing) and leave whenever the injection link is free.  ``stop_and_wait`` (the OutFlank
reference simulator) — the NIC polls on ticks of ``nic_tick_ps`` from t = 0 and keeps one packet
outstanding until the router's acknowledgement is back.  A NIC that may not send yet schedules
its own wake-up (one per waiting period).
"""

from __future__ import annotations

from typing import Any

from icsim.model.packet import Packet


class Nic:
    """The NICs of every node (state in the fabric)."""

    def __init__(self, fab: Any, cal: Any):
        self.fab = fab
        self.cal = cal
        spec = fab.spec
        self.stop_and_wait = spec.handshake == "stop_and_wait"
        self.tick = spec.nic_tick_ps
        if self.stop_and_wait and self.tick <= 0:
            raise ValueError("a stop-and-wait NIC needs its polling tick")

    def may_send(self, node: int, p: Packet, now: int) -> bool:
        """Availability and handshake rules; schedules a wake-up if not yet."""
        fab = self.fab
        if self.stop_and_wait:
            if fab.outstanding[node]:
                return False            # the acknowledgement will wake the NIC
            t_ok = self.next_tick(max(p.avail, fab.nic_free_at[node]))
        else:
            t_ok = p.avail
        if t_ok > now:
            if fab.nic_wake[node] != t_ok:
                fab.nic_wake[node] = t_ok
                self.cal.at(t_ok, self.wake, node)
            return False
        return True

    def next_tick(self, t: int) -> int:
        """The first polling tick at or after ``t`` (ticks at k * nic_tick from 0)."""
        tick = self.tick
        k = int(t // tick)
        while int(round(k * tick)) < t:
            k += 1
        return int(round(k * tick))

    def wake(self, node: int, _: Any = None) -> None:
        self.fab.nic_wake[node] = -1
        self.fab.dirty.add(self.fab.NP + node)

    def tx_end(self, node: int, _: Any = None) -> None:
        """The injection link is free again."""
        fab = self.fab
        fab.busy[fab.NP + node] = False
        if not (self.stop_and_wait and fab.outstanding[node]):
            fab.dirty.add(fab.NP + node)      # a stop-and-wait NIC waits for its ACK

    def ack(self, node: int, nak: Packet | None = None) -> None:
        """The router's ACK (``nak`` None) or NAK (the packet comes back) reaches the NIC."""
        fab, cal = self.fab, self.cal
        now = cal.now
        fab.outstanding[node] -= 1
        fab.nic_free_at[node] = now
        if nak is not None:
            insert_by_order(fab.srcq[node], nak, key=_age_key)
        if self.stop_and_wait and fab.srcq[node]:
            # the next send is on the next polling tick: wake the NIC then, not now
            t = self.next_tick(max(now, fab.srcq[node][0].avail))
            if t > now:
                if fab.nic_wake[node] != t:
                    fab.nic_wake[node] = t
                    cal.at(t, self.wake, node)
                return
        fab.dirty.add(fab.NP + node)


def _queue_key(p: Packet) -> tuple:
    return (p.ready, p.age)


def _age_key(p: Packet) -> int:
    return p.age


def insert_by_order(q, p: Packet, key=_queue_key) -> None:
    """Put a returned (NAKed) packet back at its original position."""
    k = key(p)
    for i, other in enumerate(q):
        if key(other) > k:
            q.insert(i, p)
            return
    q.append(p)
