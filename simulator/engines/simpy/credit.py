"""Credit flow control (the clean profile's, and docs/model.md §4's).

A packet leaves a queue only when the downstream router has reserved room for it: at grant time
the routing function is evaluated *for the downstream router* with its current occupancy
(:mod:`.admission`), the slot there is reserved, the packet crosses the channel (serialisation,
then propagation) and becomes visible in the reserved queue on the next clock edge (plus the
routing pipeline).  The upstream slot is freed at the end of serialisation.  Nothing is dropped.

Decision phase: the head packets of all dirty ports whose channel is idle are tried oldest first
(message creation time, source, sequence); a port's channel goes to the first of its heads the
downstream admits.  ``router.arbitration: escape_priority`` instead tries a port's VCs in their
declared priority order (escape VCs first), oldest first inside a queue.
"""

from __future__ import annotations

from typing import Any, Callable

from icsim.model.packet import Packet
from icsim.simulator.engines.guard import checked_candidates, fault, nonempty_candidates
from icsim.simulator.engines.simpy.nic import Nic


class CreditFlow:
    """The credit protocol's decision phase and per-hop actions over a fabric.

    Parameters
    ----------
    fab : Fabric
    cal : Calendar
    nic : Nic
    select : callable
        :func:`.admission.make_select`'s function.
    rand : callable
        The run's tie-break stream (injection-time routing decisions draw from it).
    sink : callable
        ``sink(packet, consume_time_ps)`` for every packet consumed.
    """

    def __init__(self, fab: Any, cal: Any, nic: Nic, select: Callable, rand: Callable,
                 sink: Callable[[Packet, int], None]):
        self.fab, self.cal, self.nic = fab, cal, nic
        self.select, self.rand, self.sink = select, rand, sink
        spec = fab.spec
        self.routing = spec.routing
        # the routing algorithm as the engine calls it: its program's interpreter, or its own
        # methods (Routing.hooks)
        (self.route_candidates, self.route_inject, self.route_admitted, self.has_inject,
         self.has_admit) = spec.routing.hooks()
        if spec.routing.form is not None:    # UGAL reads queues and draws (program.Ugal)
            spec.routing.interpreter.bind_queues(fab.occ, fab.V, fab.P, fab.adaptive_vc, rand)
            self.route_candidates = nonempty_candidates(spec, self.route_candidates)
        else:                                # a Python router's answers are checked (guard)
            self.route_candidates = checked_candidates(spec, self.route_candidates)
        if fab.c > 1:
            self.route_candidates = terminal_ejection(self.route_candidates, fab.EJ)
        self.escape_first = spec.arbitration == "escape_priority"
        self.rank = {vc: i for i, vc in enumerate(spec.vc_order)}
        self.forward, self.tx_end, self.ready = self._make_hot_path()

    def _make_hot_path(self) -> tuple[Callable, Callable, Callable]:
        """The three things every packet hop does, as closures over the fabric's lists (they
        run millions of times; cell variables are cheaper than attribute lookups):

        * ``forward(pid, vc, p)`` — try to move the head ``p`` of queue (pid, vc) across its
          channel: a slot downstream is selected and reserved, the channel is busy for the
          serialisation time, and the packet becomes visible downstream after the propagation
          time (store-and-forward: after its tail; cut-through: after its header), on the next
          clock edge plus the pipeline delay;
        * ``tx_end(pid, src_q)`` — end of serialisation: the channel and the upstream slot are
          free again, and ports waiting for room in that queue are woken;
        * ``ready(p, q2)`` — the packet is visible in queue ``q2``.
        """
        fab, cal = self.fab, self.cal
        spec = fab.spec
        at, at_edge = cal.at, cal.at_edge
        port_of, down, queues, occ, busy = fab.port_of, fab.down, fab.queues, fab.occ, fab.busy
        waiting, dirty, link_busy, link_packets = (fab.waiting, fab.dirty, fab.link_busy_ps,
                                                   fab.link_packets)
        candidates, select, eject = self.route_candidates, self.select, self.eject
        has_admit, admitted = self.has_admit, self.admitted
        EJ, V = fab.EJ, fab.V
        ser_of, lat_of, _ = spec.channel_times()        # per port id: its link class's
        delay = spec.delay_ps
        cut = spec.cut_through
        queued, limit = self.queued, spec.hop_limit

        def forward(pid: int, vc: int, p: Packet) -> bool:
            port = port_of[pid]
            if port >= EJ:
                eject(pid, p)
                return True
            v = down[pid]
            q2 = select(v, candidates(v, p), port, vc, 1, pid)
            if q2 < 0:
                return False
            if down[q2 // V] < 0:                 # an ejection port, or a port with no link
                queued(p, q2)
            now = cal.now
            ser, lat = ser_of[pid], lat_of[pid]
            src_q = pid * V + vc
            queues[src_q].popleft()
            occ[q2] += 1
            t_end = now + ser
            busy[pid] = t_end              # busy until then (the window's share: busy_until)
            fab.progress_ps = now
            fab.link_hops += 1
            link_busy[pid] += ser
            link_packets[src_q] += 1
            at(t_end, tx_end, pid, src_q)
            p.hops += 1
            if p.hops > limit:
                raise fault(spec, "hop_limit", p.tsrc, p.tdst, v, p.hops)
            p.from_port = port
            p.from_vc = vc
            p.qid = q2
            if has_admit:
                admitted(p, q2)
            at_edge((now if cut else t_end) + lat, ready, p, q2, delay)
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
            now = p.ready = cal.now
            q = queues[q2]
            # canonical order among packets becoming ready together: oldest first
            if q and q[-1].ready == now and q[-1].age > p.age:
                q.append(p)
                bubble_back(q)
            else:
                q.append(p)
            dirty.add(q2 // V)

        return forward, tx_end, ready

    # ------------------------------------------------------------------ decision phase
    def busy_until(self, pid: int) -> int:
        """When router channel ``pid``'s transmission under way ends (ps; 0 or a past time:
        idle).  A transmission's serialisation is counted whole when it starts; the
        measurement window takes off what of it lies past the window's edge."""
        return int(self.fab.busy[pid])

    def pending(self) -> bool:
        return bool(self.fab.dirty)

    def decide(self) -> None:
        fab = self.fab
        dirty, busy, queues, srcq = fab.dirty, fab.busy, fab.queues, fab.srcq
        V, NP = fab.V, fab.NP
        heads = []
        for pid in dirty:
            if busy[pid]:
                continue
            if pid >= NP:
                q = srcq[pid - NP]
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
                heads = self.escape_priority(heads)
        elif not heads:
            return
        forward = self.forward
        for _, pid, vc, p in heads:
            if busy[pid]:
                continue
            if vc < 0:
                self.try_inject(pid - NP, p)
            else:
                forward(pid, vc, p)

    def escape_priority(self, heads: list) -> list:
        """Reorder so that within a port the VCs are tried in priority order (escape first)."""
        rank = self.rank
        first_seen: dict[int, int] = {}
        for i, h in enumerate(heads):
            first_seen.setdefault(h[1], i)
        return sorted(heads, key=lambda h: (first_seen[h[1]], rank.get(h[2], -1)))

    # ------------------------------------------------------------------ injection, ejection
    def try_inject(self, node: int, p: Packet) -> bool:
        """The NIC of terminal ``node`` offers its head packet to its router."""
        fab, cal, nic = self.fab, self.cal, self.nic
        spec = fab.spec
        now = cal.now
        if not nic.may_send(node, p, now):
            return False
        router = p.src
        if self.has_inject:
            self.route_inject(router, p, fab.local_adaptive_used(router), self.rand)
        q2 = self.select(router, self.route_candidates(router, p), -1, -1,
                         spec.injection_min_free, fab.NP + node)
        if q2 < 0:
            return False
        if fab.down[q2 // fab.V] < 0:
            self.queued(p, q2)
        fab.srcq[node].popleft()
        fab.in_sources -= 1
        fab.injected[node] += 1
        fab.in_network += 1
        fab.occ[q2] += 1
        fab.busy[fab.NP + node] = True
        fab.progress_ps = now
        t_end = now + spec.nic_ser_ps
        cal.at(t_end, nic.tx_end, node)
        p.enter = t_end + spec.nic_lat_ps
        p.from_port = -1
        p.from_vc = -1
        if nic.stop_and_wait:
            # the router acknowledges on arrival, over the reverse internal link
            fab.outstanding[node] += 1
            cal.at(p.enter + spec.ack_nic_ser_ps + spec.nic_lat_ps, nic.ack, node)
        p.qid = q2
        if self.has_admit:
            self.admitted(p, q2)
        cal.at_edge((now if spec.cut_through else t_end) + spec.nic_lat_ps, self.ready, p, q2,
                    spec.delay_ps)
        return True

    def queued(self, p: Packet, q2: int) -> None:
        """``p`` is to enter queue ``q2``, of a port with no link: an ejection port, at the
        packet's destination router only (:mod:`icsim.simulator.engines.guard`)."""
        fab = self.fab
        node, port = divmod(q2 // fab.V, fab.P)
        if port < fab.EJ:
            raise fault(fab.spec, "no_link", p.tsrc, p.tdst, node, p.hops, port)
        if node != p.dst:
            raise fault(fab.spec, "ejected", p.tsrc, p.tdst, node, p.hops)

    def admitted(self, p: Packet, q2: int) -> None:
        fab = self.fab
        pid2, vc2 = divmod(q2, fab.V)
        node, port = divmod(pid2, fab.P)
        self.route_admitted(node, p, port, vc2)

    def eject(self, pid: int, p: Packet) -> None:
        """The head of an ejection queue crosses the ejection link to the sink."""
        fab, cal = self.fab, self.cal
        spec = fab.spec
        now = cal.now
        src_q = pid * fab.V
        fab.queues[src_q].popleft()
        fab.busy[pid] = True
        fab.progress_ps = now
        fab.in_network -= 1
        t_end = now + spec.nic_ser_ps
        cal.at(t_end, self.tx_end, pid, src_q)
        self.sink(p, t_end + spec.nic_lat_ps)

    def in_flight(self) -> list:
        """Packets in pending actions (for invariant checks)."""
        return [(f"in action {getattr(fn, '__name__', fn)} at {t}", x)
                for t, fn, a, b in self.cal.pending_actions() for x in (a, b)]


def terminal_ejection(candidates: Callable, eject: int) -> Callable:
    """``candidates`` on routers of several terminals: where the routing answers "eject" (port
    ``eject``), the destination terminal's own ejection port (``Packet.eport``)."""
    def with_terminals(node: int, p: Packet):
        groups = candidates(node, p)
        if groups[0][0][0] == eject and p.eport != eject:
            return (((p.eport, 0),),)
        return groups

    return with_terminals


def bubble_back(q) -> None:
    """Move the last element of q left past same-time younger packets."""
    p = q.pop()
    stash = []
    while q and q[-1].ready == p.ready and q[-1].age > p.age:
        stash.append(q.pop())
    q.append(p)
    while stash:
        q.append(stash.pop())
