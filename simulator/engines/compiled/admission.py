"""Admission and selection, as the SimPy engine's :mod:`~icsim.simulator.engines.simpy.admission`:
``free_for`` is the admission rule (free slots, the bubble rule, injection thresholds),
``select`` tries a packet's candidate groups in order and picks the admissible queue with most
free slots (ties by the seeded stream, or the first with ``tie_break: ordered``).
"""

from __future__ import annotations

from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from icsim.simulator.engines.compiled.fabric import vc_info, wait_on
from icsim.simulator.engines.compiled.layout import (K_CAP, K_NPORTS, K_ORDERED, K_P1, K_V, Q_OCC,
                                                     V_BUBBLE)
from icsim.simulator.engines.compiled.pcg import random


# ============================================================================= admission
@njit(cache=True, forceinline=True)
def free_for(prm, qs, q, port, vc, from_port, from_vc, need_min):
    """Free slots of queue q if it admits the packet, else -1 (the bubble rule)."""
    free = prm[K_CAP] - qs[q, Q_OCC]
    if port >= prm[K_NPORTS]:
        return free if free >= 1 else -1         # ejection: no bubble, no threshold
    need = 2 if vc_info(prm, vc, V_BUBBLE) and (port != from_port or vc != from_vc) else 1
    if need < need_min:
        need = need_min
    return free if free >= need else -1


@njit(cache=True, forceinline=True)
def select(prm, qs, rng, mask, vc_all, detour, port1, vc1, node, from_port, from_vc, need_min,
           wait_input):
    """Admission and selection over the candidate groups (the SimPy ``select``), as
    ``candidates`` gives them; when nothing admits, the port asking waits on every candidate
    queue — ``wait_input`` is its input at ``node`` (-1: it does not wait)."""
    V = prm[K_V]
    base = node * prm[K_P1]
    if vc_all < 0:
        # one candidate queue (DOR, table routing, ejection): nothing to choose
        q = (base + port1) * V + vc1
        if free_for(prm, qs, q, port1, vc1, from_port, from_vc, need_min) >= 0:
            return q
        if wait_input >= 0:
            wait_on(prm, qs, q, wait_input)
        return -1
    # group 1: the mask's ports, in port order; then the detour's (rule 6)
    best = best_of(prm, qs, rng, mask, vc_all, base, from_port, from_vc, need_min)
    if best >= 0:
        return best
    if detour:
        best = best_of(prm, qs, rng, detour, vc_all, base, from_port, from_vc, need_min)
        if best >= 0:
            return best
    # the escape group: one queue
    q = (base + port1) * V + vc1
    if vc1 >= 0 and free_for(prm, qs, q, port1, vc1, from_port, from_vc, need_min) >= 0:
        return q
    if wait_input >= 0:
        rest = mask
        while rest:
            wait_on(prm, qs, (base + trailing_zeros(rest)) * V + vc_all, wait_input)
            rest &= rest - 1
        rest = detour
        while rest:
            wait_on(prm, qs, (base + trailing_zeros(rest)) * V + vc_all, wait_input)
            rest &= rest - 1
        if vc1 >= 0:
            wait_on(prm, qs, q, wait_input)
    return -1


@njit(cache=True, forceinline=True)
def best_of(prm, qs, rng, mask, vc, base, from_port, from_vc, need_min):
    """The admissible queue on ``vc`` of the ports of ``mask`` with most free slots (ties by
    the stream, or the first with ``tie_break: ordered``), -1 for none."""
    V = prm[K_V]
    best = -1
    best_free = 0
    ties = 0
    ordered = prm[K_ORDERED]
    rest = mask
    while rest:
        port = trailing_zeros(rest)
        rest &= rest - 1
        q = (base + port) * V + vc
        free = free_for(prm, qs, q, port, vc, from_port, from_vc, need_min)
        if free < 0:
            continue
        if free > best_free:
            best = q
            best_free = free
            ties = 1
        elif free == best_free and not ordered:
            ties += 1
            if random(rng) * ties < 1.0:              # uniform among the tied, one draw each
                best = q
    return best
