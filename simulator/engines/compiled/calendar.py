"""The calendar: the SimPy engine's batches of actions in (time, insertion) order, as a timing
wheel of per-cycle event lists (``wheel``, chunks of the event pool ``ev``) and a heap for the
events beyond it (``heap``); ``at`` and ``at_edge`` schedule, ``advance_slot`` moves on.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from numba.cpython.unsafe.numbers import trailing_zeros

from icsim.simulator.engines.compiled.layout import (C_CHUNK_FREE, C_CUR_SLOT, C_EV_FREE,
                                                     C_EV_FREE_N, C_HEAP_N, C_NOOP, C_SEQ,
                                                     C_WHEEL_N, E_A, E_B, E_CHAIN, E_KIND, E_NEXT,
                                                     E_SEQ, E_TIME, K_CHUNK, K_CHUNKS_END, K_CYC,
                                                     K_WMASK, K_WSIZE, NO_EVENT, S_BITS, S_CHUNK,
                                                     S_HEAD, S_HINT, S_HINT_T, S_TAIL, S_TAIL_T,
                                                     S_USED)
from icsim.simulator.engines.compiled.speed import divide


# ============================================================================= calendar
@njit(cache=True, forceinline=True)
def slot_of(prm, t):
    """The clock cycle whose edge ends the interval (edge - cycle, edge] holding t."""
    return divide(prm, t + prm[K_CYC] - 1, K_CYC)


@njit(cache=True, forceinline=True)
def ev_before(ev, e1, e2):
    """(time, seq) order of two events."""
    t1 = ev[e1, E_TIME]
    t2 = ev[e2, E_TIME]
    return t1 < t2 or (t1 == t2 and ev[e1, E_SEQ] < ev[e2, E_SEQ])


@njit(cache=True, forceinline=True)
def wheel_insert(ctr, prm, ev, wheel, e, slot):
    """Put event e in its slot's list, keeping (time, seq) order.  e's seq is higher than any in
    its slot (a slot takes the heap's events, in order, when it comes into the wheel's range,
    before any other), so e goes after every event of its slot whose time is not later: most
    go at the tail.  One that goes before the tail is searched for from the slot's last such
    insertion (its hint) when that one goes before e, else from the head: many events at one
    time before a later tail (every NIC polling at the same tick) would otherwise each walk the
    whole list.  The times kept beside tail and hint spare reading their events' rows.  The
    caller gives e's slot (``slot_of``)."""
    t = ev[e, E_TIME]
    pos = slot & prm[K_WMASK]
    tail = wheel[pos, S_TAIL]
    ev[e, E_NEXT] = NO_EVENT
    if tail == NO_EVENT:
        wheel[pos, S_HEAD] = e
        wheel[pos, S_TAIL] = e
        wheel[pos, S_TAIL_T] = t
        wheel[pos >> 6, S_BITS] |= np.int64(1) << (pos & 63)      # the slot holds events
    elif wheel[pos, S_TAIL_T] <= t:
        ev[tail, E_NEXT] = e
        wheel[pos, S_TAIL] = e
        wheel[pos, S_TAIL_T] = t
    else:
        prev = wheel[pos, S_HINT]
        if prev != NO_EVENT and wheel[pos, S_HINT_T] > t:
            prev = NO_EVENT
        cur = wheel[pos, S_HEAD] if prev == NO_EVENT else ev[prev, E_NEXT]
        while cur != NO_EVENT and ev[cur, E_TIME] <= t:
            prev = cur
            cur = ev[cur, E_NEXT]
        ev[e, E_NEXT] = cur
        if prev == NO_EVENT:
            wheel[pos, S_HEAD] = e
        else:
            ev[prev, E_NEXT] = e
        wheel[pos, S_HINT] = e
        wheel[pos, S_HINT_T] = t
    ctr[C_WHEEL_N] += 1


@njit(cache=True, forceinline=True)
def heap_push(ctr, ev, heap, e):
    i = ctr[C_HEAP_N]
    ctr[C_HEAP_N] = i + 1
    heap[i] = e
    while i > 0:
        parent = (i - 1) >> 1
        if ev_before(ev, heap[i], heap[parent]):
            heap[i], heap[parent] = heap[parent], heap[i]
            i = parent
        else:
            break


@njit(cache=True, forceinline=False)
def heap_pop(ctr, ev, heap):
    top = heap[0]
    n = ctr[C_HEAP_N] - 1
    ctr[C_HEAP_N] = n
    if n > 0:
        heap[0] = heap[n]
        i = 0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            best = left
            right = left + 1
            if right < n and ev_before(ev, heap[right], heap[left]):
                best = right
            if ev_before(ev, heap[best], heap[i]):
                heap[i], heap[best] = heap[best], heap[i]
                i = best
            else:
                break
    return top


@njit(cache=True, forceinline=True)
def at(ctr, prm, ev, wheel, heap, t, kind, a, b):
    """Schedule an action at time t ps (>= now), after every action scheduled before it.

    Its row: a wheel slot's events take rows from chunks of ``K_CHUNK`` side by side at the
    start of the pool, a chunk at a time, all given back when the slot is left
    (``advance_slot``), so that a slot's events, read one after the other when its time comes,
    lie side by side however many there are (rows taken from a free list lie anywhere and are
    long out of cache by then: the reference profile's slots hold thousands); a slot's chunks
    are chained through their first rows (``E_CHAIN``), as are the free ones.  Past the
    chunks, and beyond the wheel, the free list."""
    slot = slot_of(prm, t)
    in_wheel = slot < ctr[C_CUR_SLOT] + prm[K_WSIZE]
    e = NO_EVENT
    if in_wheel:
        pos = slot & prm[K_WMASK]
        used = wheel[pos, S_USED]
        if used == prm[K_CHUNK] and ctr[C_CHUNK_FREE] >= 0:
            c = ctr[C_CHUNK_FREE]
            ctr[C_CHUNK_FREE] = ev[c, E_CHAIN]
            ev[c, E_CHAIN] = wheel[pos, S_CHUNK]
            wheel[pos, S_CHUNK] = c
            used = 0
        if used < prm[K_CHUNK]:
            wheel[pos, S_USED] = used + 1
            e = wheel[pos, S_CHUNK] + used
    if e == NO_EVENT:
        e = ctr[C_EV_FREE]
        ctr[C_EV_FREE] = ev[e, E_NEXT]
        ctr[C_EV_FREE_N] -= 1
    ev[e, E_TIME] = t
    ev[e, E_SEQ] = ctr[C_SEQ]
    ctr[C_SEQ] += 1
    ev[e, E_KIND] = kind
    ev[e, E_A] = a
    ev[e, E_B] = b
    if in_wheel:
        wheel_insert(ctr, prm, ev, wheel, e, slot)
    else:
        heap_push(ctr, ev, heap, e)


@njit(cache=True, forceinline=True)
def at_edge(ctr, prm, ev, wheel, heap, t, kind, a, b, delay):
    """``at`` the first clock edge at or after t, plus ``delay`` (the SimPy ``at_edge``)."""
    at(ctr, prm, ev, wheel, heap, slot_of(prm, t) * prm[K_CYC] + delay, kind, a, b)


@njit(cache=True, forceinline=True)
def ev_free(ctr, prm, ev, e):
    """Give back a row of the free list (a slot's chunks come back whole, ``advance_slot``)."""
    if e >= prm[K_CHUNKS_END]:
        ev[e, E_NEXT] = ctr[C_EV_FREE]
        ctr[C_EV_FREE] = e
        ctr[C_EV_FREE_N] += 1


@njit(cache=True, forceinline=True)
def slot_emptied(wheel, pos):
    """The list of slot ``pos`` is empty: its occupancy bit clears."""
    wheel[pos >> 6, S_BITS] &= ~(np.int64(1) << (pos & 63))


@njit(cache=True, forceinline=False)
def next_occupied(prm, wheel, pos):
    """How many slots after ``pos`` the next one holding events lies (cyclically, within the
    wheel; some slot holds events)."""
    size = prm[K_WSIZE]
    words = size >> 6
    start = (pos + 1) & prm[K_WMASK]
    w = start >> 6
    word = wheel[w, S_BITS] >> (start & 63)
    if word != 0:
        return 1 + trailing_zeros(word)
    for i in range(1, words + 1):
        w2 = (w + i) % words
        word = wheel[w2, S_BITS]
        if word != 0:
            at = (w2 << 6) + trailing_zeros(word)
            return 1 + ((at - start) & prm[K_WMASK])
    return 1


@njit(cache=True, forceinline=True)
def advance_slot(ctr, prm, ev, wheel, heap):
    """Move to the next slot holding an event (pulling heap events into the wheel as they come
    into range).  False when no event is left anywhere."""
    while True:
        pos = ctr[C_CUR_SLOT] & prm[K_WMASK]                    # the slot left is empty
        c = wheel[pos, S_CHUNK]
        while c >= 0:
            nxt = ev[c, E_CHAIN]
            ev[c, E_CHAIN] = ctr[C_CHUNK_FREE]
            ctr[C_CHUNK_FREE] = c
            c = nxt
        wheel[pos, S_CHUNK] = NO_EVENT
        wheel[pos, S_USED] = prm[K_CHUNK]
        if ctr[C_WHEEL_N] == 0:
            if ctr[C_HEAP_N] == 0:
                return False
            nxt = slot_of(prm, ev[heap[0], E_TIME])
            if nxt <= ctr[C_CUR_SLOT]:
                nxt = ctr[C_CUR_SLOT] + 1
            ctr[C_CUR_SLOT] = nxt
        else:
            # the next slot holding events, found in the occupancy words: the wheel's events
            # lie within its span, and the heap's beyond it, so none is skipped
            ctr[C_CUR_SLOT] += next_occupied(prm, wheel, pos)
        ctr[C_NOOP] = 0
        limit = ctr[C_CUR_SLOT] + prm[K_WSIZE]
        while ctr[C_HEAP_N] > 0:
            slot = slot_of(prm, ev[heap[0], E_TIME])
            if slot >= limit:
                break
            wheel_insert(ctr, prm, ev, wheel, heap_pop(ctr, ev, heap), slot)
        if wheel[ctr[C_CUR_SLOT] & prm[K_WMASK], S_HEAD] != NO_EVENT:
            return True
