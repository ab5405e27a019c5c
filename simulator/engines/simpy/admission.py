"""Admission and selection: which downstream queue a packet may take, and which it takes.

One function serves both flow controls (credit: when a channel is granted; ack/nak: when a packet
arrives).  The routing algorithm gives preference groups of (port, VC) candidates
(:meth:`icsim.routing.registry.Routing.candidates`); the groups are tried in order; within a
group every *admissible* queue competes and the one with most free slots wins (ties: the seeded
stream, or the first with ``router.tie_break: ordered``).

Admission (the bubble rule): a queue of a bubble VC admits a packet that *enters the ring* —
injected, turning, changing direction, coming from another VC — only with at least two free
slots; a packet continuing on the same port and VC needs one.  Other queues need one free slot;
a packet from the NIC needs ``router.injection_min_free`` in any queue but the ejection queue.
"""

from __future__ import annotations

from typing import Any, Callable


def make_select(fab: Any, rand: Callable[[], float]) -> Callable[..., int]:
    """``select(node, groups, from_port, from_vc, need_min, blocker) -> queue id or -1``.

    When nothing is admissible, port ``blocker`` (if >= 0) is registered as waiting on every
    candidate queue.  A closure over the fabric's lists: it runs once per attempt to move a
    packet, and cell variables are cheaper than attribute lookups.
    """
    occ, waiting = fab.occ, fab.waiting
    bubble = fab.spec.bubble
    cap, V, P, EJ = fab.cap, fab.V, fab.P, fab.EJ
    ordered = fab.spec.tie_break == "ordered"

    def free_for(q: int, port: int, vc: int, from_port: int, from_vc: int,
                 need_min: int) -> int:
        """Free slots of queue ``q`` if it admits the packet, else -1 (the admission rule)."""
        free = cap - occ[q]
        if port >= EJ:
            return free if free >= 1 else -1         # ejection: no bubble, no threshold
        # bubble: entering a ring needs two free slots, continuing on it one
        need = 2 if bubble[vc] and (port != from_port or vc != from_vc) else 1
        if need < need_min:
            need = need_min
        return free if free >= need else -1

    def wait_on(q: int, blocker: int) -> None:
        w = waiting[q]
        if w is None:
            waiting[q] = [blocker]
        else:
            w.append(blocker)

    def select(node: int, groups, from_port: int, from_vc: int, need_min: int,
               blocker: int) -> int:
        base = node * P
        if len(groups) == 1 and len(groups[0]) == 1:
            # one candidate queue (DOR, table routing, ejection): nothing to choose
            port, vc = groups[0][0]
            q = (base + port) * V + vc
            if free_for(q, port, vc, from_port, from_vc, need_min) >= 0:
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
                free = free_for(q, port, vc, from_port, from_vc, need_min)
                if free < 0:
                    continue
                if free > best_free:
                    best, best_free, ties = q, free, 1
                elif free == best_free and not ordered:
                    ties += 1
                    if rand() * ties < 1.0:           # uniform among the tied, one draw each
                        best = q
            if best >= 0:
                return best
        if blocker >= 0:
            for group in groups:
                for port, vc in group:
                    wait_on((base + port) * V + vc, blocker)
        return -1

    return select
