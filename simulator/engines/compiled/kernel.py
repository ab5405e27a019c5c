"""The compiled engine's event loop: the model of :mod:`icsim.simulator.engines.simpy` restated in
numba over flat arrays, rule for rule and in the same order, so that both engines give the same
results bit for bit where the model is deterministic (and, drawing from the same tie-break
stream, where it is not).

Read it beside the SimPy engine: the functions carry the same names (``select`` with
``free_for``, ``forward``/``tx_end``/``ready``, ``try_inject``, ``eject``, ``decide_credit``;
``receive``/``ack``/``chan_free``/``send_from_nic``/``decide_acknak``; ``may_send``,
``next_tick``, ``nic_ack``; the sink).  What differs is only how state is held:

* packets live in a pool of parallel arrays (``p_*``, indexed by a slot id, recycled);
* a router queue is a ring buffer of ``capacity`` slots; a NIC source queue a linked list;
* the calendar is a timing wheel of clock-cycle slots, each an ordered list of events by
  (time, insertion sequence) — the SimPy engine's batches in the same order — with a binary heap
  for events beyond the wheel;
* a port waiting for room downstream is a bit in a per-port mask over the downstream router's
  queues (waking a queue tests its router's upstream ports), where the SimPy engine keeps lists;
* a packet's age ``(birth * N + src) << 32 | seq`` is the pair ``(age_hi, age_lo)``.

Scalars live in ``E.ctr`` (indices below).  The loop returns to Python at batch boundaries to
report progress or to grow a pool (status codes below) and resumes where it stopped.
"""

from __future__ import annotations

import numpy as np
from numba import njit


# ----------------------------------------------------------------------------- event kinds
EV_NOOP, EV_POST, EV_TX_END, EV_READY, EV_NIC_TX_END, EV_NIC_WAKE, EV_NIC_ACK = 0, 1, 2, 3, 4, 5, 6
EV_ARRIVAL, EV_ACK, EV_CHAN_FREE, EV_SAMPLE, EV_SNAP0, EV_SNAP1 = 7, 8, 9, 10, 11, 12
EV_WINDOW_CLOSED, EV_STOP, EV_WATCHDOG, EV_PROGRESS = 13, 14, 15, 16

# ----------------------------------------------------------------------------- status codes
ST_DONE, ST_PROGRESS, ST_GROW, ST_DEADLOCK = 0, 1, 2, 3

# ----------------------------------------------------------------------------- routing kinds
R_DOR, R_ABR, R_POR, R_OFR, R_TABLE = 0, 1, 2, 3, 4

# ----------------------------------------------------------------------------- ctr indices
(C_NOW, C_SEQ, C_IN_NETWORK, C_IN_SOURCES, C_PROGRESS_PS, C_LINK_HOPS, C_RETRANS, C_ACTIONS,
 C_DELIVERED, C_MEAS_DELIV, C_WIN_DELIV, C_GENERATED, C_MEASURED, C_EXPECTED, C_LAST_CONSUME,
 C_STOP_AT, C_STOPPED, C_STOP_SEQ, C_CUR_SLOT, C_LAST_BATCH, C_WHEEL_N, C_HEAP_N, C_EV_FREE,
 C_EV_FREE_N, C_PK_FREE, C_PK_FREE_N, C_DIRTY_N, C_ARR_N, C_NSAMPLES, C_YIELD, C_END,
 C_DEAD_SINCE, C_SLOT_BATCH, C_NEXT_POST, C_NCTR) = range(35)

NO_EVENT = -1


# ============================================================================= calendar
@njit(cache=True, inline="always")
def slot_of(t, cyc):
    """The clock cycle whose edge ends the interval (edge - cycle, edge] holding t."""
    return (t + cyc - 1) // cyc


@njit(cache=True)
def ev_before(E, e1, e2):
    """(time, seq) order of two events."""
    t1 = E.ev_time[e1]
    t2 = E.ev_time[e2]
    return t1 < t2 or (t1 == t2 and E.ev_seq[e1] < E.ev_seq[e2])


@njit(cache=True)
def wheel_insert(E, e):
    """Put event e in its slot's list, keeping (time, seq) order (most go at the tail)."""
    pos = slot_of(E.ev_time[e], E.cyc) & E.wmask
    tail = E.slot_tail[pos]
    E.ev_next[e] = NO_EVENT
    if tail == NO_EVENT:
        E.slot_head[pos] = e
        E.slot_tail[pos] = e
    elif not ev_before(E, e, tail):
        E.ev_next[tail] = e
        E.slot_tail[pos] = e
    else:
        prev = NO_EVENT
        cur = E.slot_head[pos]
        while cur != NO_EVENT and not ev_before(E, e, cur):
            prev = cur
            cur = E.ev_next[cur]
        E.ev_next[e] = cur
        if prev == NO_EVENT:
            E.slot_head[pos] = e
        else:
            E.ev_next[prev] = e
    E.ctr[C_WHEEL_N] += 1


@njit(cache=True)
def heap_push(E, e):
    h = E.heap
    i = E.ctr[C_HEAP_N]
    E.ctr[C_HEAP_N] = i + 1
    h[i] = e
    while i > 0:
        parent = (i - 1) >> 1
        if ev_before(E, h[i], h[parent]):
            h[i], h[parent] = h[parent], h[i]
            i = parent
        else:
            break


@njit(cache=True)
def heap_pop(E):
    h = E.heap
    top = h[0]
    n = E.ctr[C_HEAP_N] - 1
    E.ctr[C_HEAP_N] = n
    if n > 0:
        h[0] = h[n]
        i = 0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            best = left
            right = left + 1
            if right < n and ev_before(E, h[right], h[left]):
                best = right
            if ev_before(E, h[best], h[i]):
                h[i], h[best] = h[best], h[i]
                i = best
            else:
                break
    return top


@njit(cache=True)
def at(E, t, kind, a, b):
    """Schedule an action at time t ps (>= now), after every action scheduled before it."""
    e = E.ctr[C_EV_FREE]
    E.ctr[C_EV_FREE] = E.ev_next[e]
    E.ctr[C_EV_FREE_N] -= 1
    E.ev_time[e] = t
    E.ev_seq[e] = E.ctr[C_SEQ]
    E.ctr[C_SEQ] += 1
    E.ev_kind[e] = kind
    E.ev_a[e] = a
    E.ev_b[e] = b
    if slot_of(t, E.cyc) < E.ctr[C_CUR_SLOT] + E.wsize:
        wheel_insert(E, e)
    else:
        heap_push(E, e)


@njit(cache=True, inline="always")
def at_edge(E, t, kind, a, b, delay):
    """``at`` the first clock edge at or after t, plus ``delay`` (the SimPy calendar's
    ``at_edge``)."""
    r = t % E.cyc
    if r:
        t += E.cyc - r
    at(E, t + delay, kind, a, b)


@njit(cache=True)
def ev_free(E, e):
    E.ev_next[e] = E.ctr[C_EV_FREE]
    E.ctr[C_EV_FREE] = e
    E.ctr[C_EV_FREE_N] += 1


@njit(cache=True)
def advance_slot(E):
    """Move to the next slot holding an event (pulling heap events into the wheel as it
    comes into range).  False when no event is left anywhere."""
    while True:
        if E.ctr[C_WHEEL_N] == 0:
            if E.ctr[C_HEAP_N] == 0:
                return False
            nxt = slot_of(E.ev_time[E.heap[0]], E.cyc)
            if nxt <= E.ctr[C_CUR_SLOT]:
                nxt = E.ctr[C_CUR_SLOT] + 1
            E.ctr[C_CUR_SLOT] = nxt
        else:
            E.ctr[C_CUR_SLOT] += 1
        E.ctr[C_SLOT_BATCH] = 0
        limit = E.ctr[C_CUR_SLOT] + E.wsize
        while E.ctr[C_HEAP_N] > 0 and slot_of(E.ev_time[E.heap[0]], E.cyc) < limit:
            wheel_insert(E, heap_pop(E))
        if E.slot_head[E.ctr[C_CUR_SLOT] & E.wmask] != NO_EVENT:
            return True


# ============================================================================= packets
@njit(cache=True)
def packet_new(E, src, dst, birth, age_lo, measured, avail):
    p = E.ctr[C_PK_FREE]
    E.ctr[C_PK_FREE] = E.p_next[p]
    E.ctr[C_PK_FREE_N] -= 1
    E.p_src[p] = src
    E.p_dst[p] = dst
    E.p_birth[p] = birth
    E.p_age_hi[p] = birth * E.N + src
    E.p_age_lo[p] = age_lo
    E.p_meas[p] = measured
    E.p_der[p] = 0
    E.p_rs[p] = -1
    E.p_ri[p] = 0
    E.p_hops[p] = 0
    E.p_avail[p] = avail
    E.p_enter[p] = -1
    E.p_ready[p] = 0
    E.p_qid[p] = -1
    E.p_from_port[p] = -1
    E.p_from_vc[p] = -1
    E.p_retries[p] = 0
    E.p_next[p] = -1
    return p


@njit(cache=True)
def packet_free(E, p):
    E.p_next[p] = E.ctr[C_PK_FREE]
    E.ctr[C_PK_FREE] = p
    E.ctr[C_PK_FREE_N] += 1


@njit(cache=True, inline="always")
def older(E, p1, p2):
    """Whether packet p1 is older than p2 (the SimPy engine's ``p1.age < p2.age``)."""
    h1 = E.p_age_hi[p1]
    h2 = E.p_age_hi[p2]
    return h1 < h2 or (h1 == h2 and E.p_age_lo[p1] < E.p_age_lo[p2])


# ============================================================================= queues
@njit(cache=True, inline="always")
def q_at(E, q, i):
    return E.qbuf[q * E.cap + (E.qhead[q] + i) % E.cap]


@njit(cache=True)
def q_set(E, q, i, p):
    E.qbuf[q * E.cap + (E.qhead[q] + i) % E.cap] = p


@njit(cache=True)
def q_pop(E, q):
    p = E.qbuf[q * E.cap + E.qhead[q]]
    E.qhead[q] = (E.qhead[q] + 1) % E.cap
    E.qlen[q] -= 1
    return p


@njit(cache=True)
def q_insert(E, q, i, p):
    """Insert p before position i (shifting the later ones back)."""
    n = E.qlen[q]
    j = n
    while j > i:
        q_set(E, q, j, q_at(E, q, j - 1))
        j -= 1
    q_set(E, q, i, p)
    E.qlen[q] = n + 1


@njit(cache=True)
def q_append_ready(E, q, p):
    """``ready``'s canonical order: among packets becoming ready together, oldest first."""
    n = E.qlen[q]
    i = n
    now = E.p_ready[p]
    while i > 0:
        last = q_at(E, q, i - 1)
        if E.p_ready[last] == now and older(E, p, last):
            i -= 1
        else:
            break
    q_insert(E, q, i, p)


@njit(cache=True)
def q_insert_by_order(E, q, p):
    """A NAKed packet goes back to its old place: before the first with a later
    (ready, age)."""
    n = E.qlen[q]
    r = E.p_ready[p]
    for i in range(n):
        o = q_at(E, q, i)
        ro = E.p_ready[o]
        if ro > r or (ro == r and older(E, p, o)):
            q_insert(E, q, i, p)
            return
    q_insert(E, q, n, p)


@njit(cache=True)
def srcq_append(E, node, p):
    E.p_next[p] = -1
    tail = E.srct[node]
    if tail < 0:
        E.srch[node] = p
    else:
        E.p_next[tail] = p
    E.srct[node] = p


@njit(cache=True)
def srcq_popleft(E, node):
    p = E.srch[node]
    nxt = E.p_next[p]
    E.srch[node] = nxt
    if nxt < 0:
        E.srct[node] = -1
    E.p_next[p] = -1
    return p


@njit(cache=True)
def srcq_insert_by_age(E, node, p):
    """A NAKed packet goes back into the NIC queue in age order."""
    prev = -1
    cur = E.srch[node]
    while cur >= 0 and not older(E, p, cur):
        prev = cur
        cur = E.p_next[cur]
    E.p_next[p] = cur
    if prev < 0:
        E.srch[node] = p
    else:
        E.p_next[prev] = p
    if cur < 0:
        E.srct[node] = p


@njit(cache=True, inline="always")
def mark_dirty(E, pid):
    if not E.dirty_flag[pid]:
        E.dirty_flag[pid] = True
        E.dirty_list[E.ctr[C_DIRTY_N]] = pid
        E.ctr[C_DIRTY_N] += 1


# ============================================================================= waiting
@njit(cache=True)
def wait_on(E, q, blocker):
    """Port ``blocker`` waits for room in queue q of its downstream router."""
    local = q % E.npv_node
    E.waitmask[blocker * E.wwords + (local >> 6)] |= np.int64(1) << (local & 63)


@njit(cache=True)
def wake(E, q):
    """Queue q has room: every port waiting on it is marked dirty (and stops waiting on it)."""
    node = q // E.npv_node
    local = q % E.npv_node
    word = local >> 6
    bit = np.int64(1) << (local & 63)
    for i in range(E.P1):                 # the ports leading into the router, and its NIC
        u = E.upstream[node * E.P1 + i]
        if u >= 0:
            w = u * E.wwords + word
            if E.waitmask[w] & bit:
                E.waitmask[w] &= ~bit
                mark_dirty(E, u)


# ============================================================================= routing
@njit(cache=True)
def relative(E, a, b):
    return E.codes[b] - E.codes[a] + E.base


@njit(cache=True)
def mask_groups(E, mask, escape_vc):
    """Group 1: the adaptive queues of the allowed ports (port order); group 2: the escape
    queue of the lowest allowed port (``routing.algorithms.adaptive.mask_groups``)."""
    n = 0
    first = -1
    for port in range(E.nports):
        if (mask >> port) & 1:
            E.c_port[n] = port
            E.c_vc[n] = 0
            n += 1
            if first < 0:
                first = port
    E.g_end[0] = n
    E.c_port[n] = first
    E.c_vc[n] = escape_vc
    E.g_end[1] = n + 1
    return 2


@njit(cache=True)
def one_candidate(E, port, vc):
    E.c_port[0] = port
    E.c_vc[0] = vc
    E.g_end[0] = 1
    return 1


@njit(cache=True)
def candidates(E, node, p):
    """The routing algorithm's candidate groups for packet p at ``node``, into the scratch
    arrays ``c_port``/``c_vc`` (group g ends at ``g_end[g]``); returns the group count."""
    eject = E.nports
    kind = E.route_kind
    dst = E.p_dst[p]
    if kind == R_DOR:
        port = E.dor_ports[relative(E, node, dst)]
        if port == 255:
            return one_candidate(E, eject, 0)
        return one_candidate(E, port, 0)
    if kind == R_TABLE:
        i = E.p_ri[p]
        start = E.p_rs[p]
        if i >= E.route_len[start]:
            return one_candidate(E, eject, 0)
        off = E.route_off[start] + i
        return one_candidate(E, E.route_ports[off], E.route_layers[off] if E.layered else 0)
    if kind == R_OFR:
        idn = E.p_rs[p]
        if idn >= 0 and idn != node:
            return mask_groups(E, E.masks[relative(E, node, idn)], 1)
        mask = E.masks[relative(E, node, dst)]
        if mask == 0:
            return one_candidate(E, eject, 0)
        return mask_groups(E, mask, 2)
    mask = E.masks[relative(E, node, dst)]
    if mask == 0:
        return one_candidate(E, eject, 0)
    if kind == R_POR:
        sel = E.p_rs[p]
        if sel >= 0:
            differ = (mask | (mask >> 1)) & E.even       # dimensions still to travel
            return mask_groups(E, (differ | (differ << 1)) & sel, 1)
    return mask_groups(E, mask, 1)


@njit(cache=True)
def local_adaptive_used(E, node):
    """Used slots of the adaptive queue of each direction port of ``node`` (-1: absent)."""
    base = node * E.P1
    for port in range(E.nports):
        if E.down[base + port] >= 0:
            E.used[port] = E.occ[(base + port) * E.V + E.adaptive_vc]
        else:
            E.used[port] = -1


@njit(cache=True)
def inject_route(E, node, p, gen):
    """The routing algorithm's injection-time decision (``Routing.inject``)."""
    kind = E.route_kind
    if kind == R_TABLE:
        E.p_rs[p] = E.p_src[p] * E.N + E.p_dst[p]
        E.p_ri[p] = 0
    elif kind == R_OFR or kind == R_POR:
        local_adaptive_used(E, node)
        choose_injection(E, node, p, gen)


@njit(cache=True)
def choose_injection(E, node, p, gen):
    """OFR's intermediate destination or POR's orthant (the planners' arrays).

    Not wired yet (OFR's and POR's ``compiled()`` return None, so :func:`supports` refuses
    them): routes minimally.  :func:`.planners.choose_idn` / :func:`.planners.choose_orthant`
    take the planners' exported plans and the settings (capacity, eta, profit code,
    min_deroute_distance) besides ``E.used`` and ``gen``.
    """
    if E.route_kind == R_OFR:
        idn, der = -1, 0
        E.p_rs[p] = idn
        E.p_der[p] = der
    else:
        sel, der = -1, False
        E.p_rs[p] = sel
        E.p_der[p] = 3 if der else 0     # DEROUTE_CODE["orthant"]


@njit(cache=True)
def admitted(E, p, q2):
    """``Routing.admitted``: OFR leaves its IDN behind, table routing moves along its route."""
    kind = E.route_kind
    if kind == R_OFR:
        node = q2 // E.npv_node
        if E.p_rs[p] == node:
            E.p_rs[p] = -1               # IDN reached: on to the final destination
    elif kind == R_TABLE:
        port = (q2 // E.V) % E.P1
        if port != E.nports:
            E.p_ri[p] += 1


# ============================================================================= admission
@njit(cache=True, inline="always")
def free_for(E, q, port, vc, from_port, from_vc, need_min):
    """Free slots of queue q if it admits the packet, else -1 (the bubble rule)."""
    free = E.cap - E.occ[q]
    if port == E.nports:
        return free if free >= 1 else -1         # ejection: no bubble, no threshold
    need = 2 if E.bubble[vc] and (port != from_port or vc != from_vc) else 1
    if need < need_min:
        need = need_min
    return free if free >= need else -1


@njit(cache=True)
def select(E, ngroups, node, from_port, from_vc, need_min, blocker, gen):
    """Admission and selection over the candidate scratch (the SimPy ``select``)."""
    base = node * E.P1
    if ngroups == 1 and E.g_end[0] == 1:
        port = E.c_port[0]
        vc = E.c_vc[0]
        q = (base + port) * E.V + vc
        if free_for(E, q, port, vc, from_port, from_vc, need_min) >= 0:
            return q
        if blocker >= 0:
            wait_on(E, q, blocker)
        return -1
    start = 0
    for g in range(ngroups):
        best = -1
        best_free = 0
        ties = 0
        for i in range(start, E.g_end[g]):
            port = E.c_port[i]
            vc = E.c_vc[i]
            q = (base + port) * E.V + vc
            free = free_for(E, q, port, vc, from_port, from_vc, need_min)
            if free < 0:
                continue
            if free > best_free:
                best = q
                best_free = free
                ties = 1
            elif free == best_free and not E.ordered:
                ties += 1
                if gen.random() * ties < 1.0:          # uniform among the tied, one draw each
                    best = q
        if best >= 0:
            return best
        start = E.g_end[g]
    if blocker >= 0:
        for i in range(E.g_end[ngroups - 1]):
            wait_on(E, (base + E.c_port[i]) * E.V + E.c_vc[i], blocker)
    return -1


# ============================================================================= sink
@njit(cache=True)
def finish(E, t):
    """All measured packets are consumed (or the window says so): stop at t."""
    if E.ctr[C_STOP_AT] < 0:
        E.ctr[C_STOP_AT] = t
        now = E.ctr[C_NOW]
        at(E, t if t > now else now, EV_STOP, 0, 0)


@njit(cache=True)
def sink(E, p, t):
    """The collector: a packet is consumed at t (``simulator.stats.Collector``)."""
    c = E.ctr
    c[C_DELIVERED] += 1
    if t > c[C_LAST_CONSUME]:
        c[C_LAST_CONSUME] = t
    dst = E.p_dst[p]
    if t > E.finish[dst]:
        E.finish[dst] = t
    if E.has_window and E.w0 <= t < E.w1:
        c[C_WIN_DELIV] += 1
        E.accepted[dst] += 1
    if E.p_meas[p]:
        i = c[C_MEAS_DELIV]
        c[C_MEAS_DELIV] = i + 1
        E.r_lat[i] = t - E.p_birth[p]
        E.r_net[i] = t - E.p_enter[p]
        E.r_hops[i] = E.p_hops[p]
        E.r_src[i] = E.p_src[p]
        E.r_dst[i] = dst
        E.r_der[i] = E.p_der[p]
        if i + 1 == c[C_EXPECTED]:
            finish(E, c[C_LAST_CONSUME])


# ============================================================================= NIC
@njit(cache=True)
def next_tick(E, t):
    """The first polling tick at or after t (ticks at k * nic_tick from 0)."""
    tick = E.nic_tick
    k = np.int64(t // tick)
    while np.int64(np.round(k * tick)) < t:
        k += 1
    return np.int64(np.round(k * tick))


@njit(cache=True)
def may_send(E, node, p, now):
    """Availability and handshake rules of the NIC; schedules a wake-up if not yet."""
    if E.stop_and_wait:
        if E.outstanding[node]:
            return False
        a = E.p_avail[p]
        f = E.nic_free_at[node]
        t_ok = next_tick(E, a if a > f else f)
    else:
        t_ok = E.p_avail[p]
    if t_ok > now:
        if E.nic_wake[node] != t_ok:
            E.nic_wake[node] = t_ok
            at(E, t_ok, EV_NIC_WAKE, node, 0)
        return False
    return True


@njit(cache=True)
def nic_tx_end(E, node):
    E.busy[E.NP + node] = False
    if not (E.stop_and_wait and E.outstanding[node]):
        mark_dirty(E, E.NP + node)


@njit(cache=True)
def nic_ack(E, node, nak):
    now = E.ctr[C_NOW]
    E.outstanding[node] -= 1
    E.nic_free_at[node] = now
    if nak >= 0:
        srcq_insert_by_age(E, node, nak)
    if E.stop_and_wait and E.srch[node] >= 0:
        a = E.p_avail[E.srch[node]]
        t = next_tick(E, now if now > a else a)
        if t > now:
            if E.nic_wake[node] != t:
                E.nic_wake[node] = t
                at(E, t, EV_NIC_WAKE, node, 0)
            return
    mark_dirty(E, E.NP + node)


# ============================================================================= credit
@njit(cache=True)
def forward(E, pid, vc, p, gen):
    """Try to move the head p of queue (pid, vc) across its channel (SimPy ``forward``)."""
    port = pid % E.P1
    if port == E.nports:
        eject(E, pid, p)
        return True
    v = E.down[pid]
    ng = candidates(E, v, p)
    q2 = select(E, ng, v, port, vc, 1, pid, gen)
    if q2 < 0:
        return False
    now = E.ctr[C_NOW]
    src_q = pid * E.V + vc
    q_pop(E, src_q)
    E.occ[q2] += 1
    E.busy[pid] = True
    E.ctr[C_PROGRESS_PS] = now
    E.ctr[C_LINK_HOPS] += 1
    E.link_busy[pid] += E.ser
    E.link_packets[src_q] += 1
    t_end = now + E.ser
    at(E, t_end, EV_TX_END, pid, src_q)
    E.p_hops[p] += 1
    E.p_from_port[p] = port
    E.p_from_vc[p] = vc
    E.p_qid[p] = q2
    admitted(E, p, q2)
    at_edge(E, (now if E.cut else t_end) + E.lat, EV_READY, p, q2, E.delay)
    return True


@njit(cache=True)
def tx_end(E, pid, src_q):
    E.busy[pid] = False
    E.occ[src_q] -= 1
    mark_dirty(E, pid)
    wake(E, src_q)


@njit(cache=True)
def ready(E, p, q2):
    now = E.ctr[C_NOW]
    E.p_ready[p] = now
    q_append_ready(E, q2, p)
    mark_dirty(E, q2 // E.V)


@njit(cache=True)
def eject(E, pid, p):
    """The head of an ejection queue crosses the ejection link to the sink."""
    now = E.ctr[C_NOW]
    src_q = pid * E.V
    q_pop(E, src_q)
    E.busy[pid] = True
    E.ctr[C_PROGRESS_PS] = now
    E.ctr[C_IN_NETWORK] -= 1
    t_end = now + E.ser_nic
    at(E, t_end, EV_TX_END, pid, src_q)
    sink(E, p, t_end + E.lat_nic)
    packet_free(E, p)


@njit(cache=True)
def try_inject(E, node, p, gen):
    now = E.ctr[C_NOW]
    if not may_send(E, node, p, now):
        return False
    inject_route(E, node, p, gen)
    ng = candidates(E, node, p)
    q2 = select(E, ng, node, -1, -1, E.inj_min, E.NP + node, gen)
    if q2 < 0:
        return False
    srcq_popleft(E, node)
    E.ctr[C_IN_SOURCES] -= 1
    E.ctr[C_IN_NETWORK] += 1
    E.occ[q2] += 1
    E.busy[E.NP + node] = True
    E.ctr[C_PROGRESS_PS] = now
    t_end = now + E.ser_nic
    at(E, t_end, EV_NIC_TX_END, node, 0)
    E.p_enter[p] = t_end + E.lat_nic
    E.p_from_port[p] = -1
    E.p_from_vc[p] = -1
    if E.stop_and_wait:
        # the router acknowledges on arrival, over the reverse internal link
        E.outstanding[node] += 1
        at(E, E.p_enter[p] + E.ser_ack_nic + E.lat_nic, EV_NIC_ACK, node, -1)
    E.p_qid[p] = q2
    admitted(E, p, q2)
    at_edge(E, (now if E.cut else t_end) + E.lat_nic, EV_READY, p, q2, E.delay)
    return True


@njit(cache=True)
def sort_heads(E, n):
    """Order the first n heads oldest first (age is the pair (hi, lo)): a stable sort by lo,
    then a stable sort by hi."""
    lo = E.h_lo[:n]
    o1 = np.argsort(lo, kind="mergesort")
    hi = E.h_hi[:n][o1]
    o2 = np.argsort(hi, kind="mergesort")
    return o1[o2]


@njit(cache=True)
def decide_credit(E, gen):
    n = 0
    nd = E.ctr[C_DIRTY_N]
    for i in range(nd):
        pid = E.dirty_list[i]
        E.dirty_flag[pid] = False
        if E.busy[pid]:
            continue
        if pid >= E.NP:
            h = E.srch[pid - E.NP]
            if h >= 0:
                E.h_hi[n] = E.p_age_hi[h]
                E.h_lo[n] = E.p_age_lo[h]
                E.h_pid[n] = pid
                E.h_vc[n] = -1
                E.h_pkt[n] = h
                n += 1
            continue
        base = pid * E.V
        for vc in range(E.V):
            q = base + vc
            if E.qlen[q]:
                h = q_at(E, q, 0)
                E.h_hi[n] = E.p_age_hi[h]
                E.h_lo[n] = E.p_age_lo[h]
                E.h_pid[n] = pid
                E.h_vc[n] = vc
                E.h_pkt[n] = h
                n += 1
    E.ctr[C_DIRTY_N] = 0
    if n == 0:
        return
    if n > 1:
        order = sort_heads(E, n)
        if E.escape_first:
            order = escape_priority(E, order)
    else:
        order = np.zeros(1, np.int64)
    for j in range(n):
        i = order[j]
        pid = E.h_pid[i]
        if E.busy[pid]:
            continue
        if E.h_vc[i] < 0:
            try_inject(E, pid - E.NP, E.h_pkt[i], gen)
        else:
            forward(E, pid, E.h_vc[i], E.h_pkt[i], gen)


@njit(cache=True)
def escape_priority(E, order):
    """Within a port, its VCs in priority order (escape first), ports in the order of their
    oldest head (the SimPy ``escape_priority``)."""
    n = len(order)
    key = np.empty(n, np.int64)
    for j in range(n):
        i = order[j]
        pid = E.h_pid[i]
        if E.first_pos[pid] < 0:
            E.first_pos[pid] = j                 # the port's oldest head
        vc = E.h_vc[i]
        key[j] = E.first_pos[pid] * (E.V + 2) + (0 if vc < 0 else E.vc_rank[vc] + 1)
    for j in range(n):
        E.first_pos[E.h_pid[order[j]]] = -1
    o = np.argsort(key, kind="mergesort")
    return order[o]


# ============================================================================= ack/nak
@njit(cache=True)
def arrival(E, p, src):
    i = E.ctr[C_ARR_N]
    E.arr_p[i] = p
    E.arr_src[i] = src
    E.ctr[C_ARR_N] = i + 1


@njit(cache=True)
def ctrl_push(E, pid, src_q, nak):
    i = (E.ctrl_head[pid] + E.ctrl_len[pid]) % E.ctrl_cap
    E.ctrl_src[pid * E.ctrl_cap + i] = src_q
    E.ctrl_nak[pid * E.ctrl_cap + i] = nak
    E.ctrl_len[pid] += 1


@njit(cache=True)
def receive(E, p, src, gen):
    """Accept (ACK) or reject (NAK) an arrived packet with this router's state."""
    now = E.ctr[C_NOW]
    if src >= 0:
        pid_up = src // E.V
        v = E.down[pid_up]
        ng = candidates(E, v, p)
        q2 = select(E, ng, v, E.p_from_port[p], E.p_from_vc[p], 1, -1, gen)
    else:
        v = -1 - src
        inject_route(E, v, p, gen)
        ng = candidates(E, v, p)
        q2 = select(E, ng, v, -1, -1, E.inj_min, -1, gen)
    nak = -1
    if q2 >= 0:
        E.occ[q2] += 1
        E.ctr[C_PROGRESS_PS] = now
        E.p_qid[p] = q2
        if src >= 0:
            E.p_hops[p] += 1
            E.ctr[C_LINK_HOPS] += 1
        else:
            E.ctr[C_IN_SOURCES] -= 1
            E.ctr[C_IN_NETWORK] += 1
            E.p_enter[p] = now
        admitted(E, p, q2)
        if E.delay:
            at(E, now + E.delay, EV_READY, p, q2)
        else:
            ready(E, p, q2)          # visible at once: sent in this same decision phase
    else:
        E.p_retries[p] += 1
        E.ctr[C_RETRANS] += 1
        nak = p
    if src >= 0:
        rpid = E.rev[src // E.V]
        ctrl_push(E, rpid, src, nak)
        mark_dirty(E, rpid)
    else:
        at(E, now + E.ser_ack_nic + E.lat_nic, EV_NIC_ACK, v, nak)


@njit(cache=True)
def ack(E, src_q, nak):
    pid = src_q // E.V
    vc = src_q - pid * E.V
    if nak < 0:
        if E.nak_vc[pid] == vc:
            E.nak_vc[pid] = -1
        E.occ[src_q] -= 1
        wake(E, src_q)
        return
    q_insert_by_order(E, src_q, nak)
    E.nak_vc[pid] = vc
    mark_dirty(E, pid)


@njit(cache=True)
def send_from_nic(E, node, p):
    now = E.ctr[C_NOW]
    if not may_send(E, node, p, now):
        return
    srcq_popleft(E, node)
    E.outstanding[node] += 1
    E.busy[E.NP + node] = True
    t_end = now + E.ser_nic
    at(E, t_end, EV_NIC_TX_END, node, 0)
    E.p_from_port[p] = -1
    E.p_from_vc[p] = -1
    at(E, t_end + E.lat_nic, EV_ARRIVAL, p, -1 - node)


@njit(cache=True)
def decide_acknak(E, gen):
    na = E.ctr[C_ARR_N]
    if na:
        if na > 1:
            for i in range(na):
                p = E.arr_p[i]
                E.h_hi[i] = E.p_age_hi[p]
                E.h_lo[i] = E.p_age_lo[p]
            order = sort_heads(E, na)
        else:
            order = np.zeros(1, np.int64)
        ps = E.arr_p[:na][order].copy()
        srcs = E.arr_src[:na][order].copy()
        E.ctr[C_ARR_N] = 0
        for j in range(na):
            receive(E, ps[j], srcs[j], gen)
    nd = E.ctr[C_DIRTY_N]
    if nd == 0:
        return
    now = E.ctr[C_NOW]
    ports = E.dirty_list[:nd].copy()
    for i in range(nd):
        E.dirty_flag[ports[i]] = False
    E.ctr[C_DIRTY_N] = 0
    for i in range(nd):
        pid = ports[i]
        if pid >= E.NP:
            node = pid - E.NP
            if E.srch[node] >= 0 and not E.busy[pid]:
                send_from_nic(E, node, E.srch[node])
            continue
        port = pid % E.P1
        base = pid * E.V
        if port == E.nports:
            if E.qlen[base] and not E.busy[pid]:
                eject(E, pid, q_at(E, base, 0))
            continue
        fa = E.free_at[pid]
        if fa > now:
            # busy: come back when the channel is idle (one wake-up per busy period)
            if E.wake_at[pid] != fa:
                E.wake_at[pid] = fa
                at(E, fa, EV_CHAN_FREE, pid, 0)
            continue
        has_ctrl = E.ctrl_len[pid] > 0
        if has_ctrl:
            # an ACK/NAK goes before any data
            j = E.ctrl_head[pid]
            src_q = E.ctrl_src[pid * E.ctrl_cap + j]
            nak = E.ctrl_nak[pid * E.ctrl_cap + j]
            E.ctrl_head[pid] = (j + 1) % E.ctrl_cap
            E.ctrl_len[pid] -= 1
            fa = now + E.ser_ack
            E.free_at[pid] = fa
            E.link_busy[pid] += E.ser_ack
            at(E, fa + E.lat, EV_ACK, src_q, nak)
        else:
            best = -1
            if E.escape_first:
                for r in range(E.V):
                    vc = E.vc_order[r]
                    if E.qlen[base + vc]:
                        best = vc
                        break
            else:
                # oldest head first, but not the VC whose last packet was just rejected while
                # another VC has one
                nk = E.nak_vc[pid]
                for vc in range(E.V):
                    if E.qlen[base + vc] and vc != nk:
                        if best < 0 or older(E, q_at(E, base + vc, 0),
                                             q_at(E, base + best, 0)):
                            best = vc
                if best < 0 and nk >= 0 and E.qlen[base + nk]:
                    best = nk
            if best < 0:
                continue
            # speculative transmission of the head; its slot stays held until the ACK
            p = q_pop(E, base + best)
            fa = now + E.ser
            E.free_at[pid] = fa
            E.link_busy[pid] += E.ser
            E.link_packets[base + best] += 1
            E.p_from_port[p] = port
            E.p_from_vc[p] = best
            at(E, (now if E.cut else fa) + E.lat, EV_ARRIVAL, p, base + best)
        more = E.ctrl_len[pid] > 0
        if not more:
            for vc in range(E.V):
                if E.qlen[base + vc]:
                    more = True
                    break
        if more:
            E.wake_at[pid] = fa       # more to send: come back when the channel is idle
            at(E, fa, EV_CHAN_FREE, pid, 0)


# ============================================================================= the loop
@njit(cache=True)
def post(E, i):
    """Post every message created at the time of message i; schedule the next time."""
    times = E.w_time
    t = times[i]
    n = len(times)
    while i < n and times[i] == t:
        src = E.w_src[i]
        k = E.w_packets[i]
        measured = E.w_measured[i]
        seq = E.src_seq[src]
        E.src_seq[src] = seq + k
        start = t if t > E.next_avail[src] else E.next_avail[src]
        for j in range(k):
            p = packet_new(E, src, E.w_dst[i], t, seq + j, measured, start + j * E.w_avail)
            srcq_append(E, src, p)
        E.next_avail[src] = start + k * E.w_avail
        E.ctr[C_IN_SOURCES] += k
        mark_dirty(E, E.NP + src)
        E.ctr[C_GENERATED] += k
        if measured:
            E.ctr[C_MEASURED] += k
        i += 1
    if i < n:
        at(E, times[i], EV_POST, i, 0)


@njit(cache=True)
def sample(E):
    i = E.ctr[C_NSAMPLES]
    E.samples_t[i] = E.ctr[C_NOW]
    E.samples_v[i] = E.ctr[C_IN_SOURCES]
    E.ctr[C_NSAMPLES] = i + 1
    for q in range(len(E.occ)):
        E.occ_sum[q] += E.occ[q]


@njit(cache=True)
def snapshot(E, which):
    if which == 0:
        E.snap_busy[:] = E.link_busy
        E.snap_packets[:] = E.link_packets
        E.snap_accepted[:] = E.accepted
    else:
        E.snap_busy[:] = E.link_busy - E.snap_busy
        E.snap_packets[:] = E.link_packets - E.snap_packets
        E.snap_accepted[:] = E.accepted - E.snap_accepted
        E.snap_occ[:] = E.occ_sum
        E.snap_nsamples[0] = E.ctr[C_NSAMPLES]


@njit(cache=True)
def apply(E, e, gen):
    """Apply one action (the SimPy engine's ``fn(a, b)``); False on a deadlock."""
    kind = E.ev_kind[e]
    a = E.ev_a[e]
    b = E.ev_b[e]
    if kind == EV_READY:
        ready(E, a, b)
    elif kind == EV_TX_END:
        tx_end(E, a, b)
    elif kind == EV_ARRIVAL:
        arrival(E, a, b)
    elif kind == EV_ACK:
        ack(E, a, b)
    elif kind == EV_CHAN_FREE:
        E.wake_at[a] = -1
        mark_dirty(E, a)
    elif kind == EV_NIC_TX_END:
        nic_tx_end(E, a)
    elif kind == EV_NIC_WAKE:
        E.nic_wake[a] = -1
        mark_dirty(E, E.NP + a)
    elif kind == EV_NIC_ACK:
        nic_ack(E, a, b)
    elif kind == EV_POST:
        post(E, a)
    elif kind == EV_SAMPLE:
        sample(E)
    elif kind == EV_SNAP0:
        snapshot(E, 0)
    elif kind == EV_SNAP1:
        snapshot(E, 1)
    elif kind == EV_WINDOW_CLOSED:
        E.ctr[C_EXPECTED] = E.ctr[C_MEASURED]
        if E.ctr[C_MEAS_DELIV] == E.ctr[C_EXPECTED]:
            lc = E.ctr[C_LAST_CONSUME]
            now = E.ctr[C_NOW]
            finish(E, lc if lc > now else now)
    elif kind == EV_STOP:
        if E.ctr[C_STOPPED] == 0:
            E.ctr[C_STOPPED] = 1
            E.ctr[C_STOP_SEQ] = E.ctr[C_SEQ]
    elif kind == EV_WATCHDOG:
        now = E.ctr[C_NOW]
        if E.ctr[C_IN_NETWORK] > 0 and now - E.ctr[C_PROGRESS_PS] >= E.watchdog:
            E.ctr[C_DEAD_SINCE] = E.ctr[C_PROGRESS_PS]
            return False
        at(E, now + E.watchdog, EV_WATCHDOG, 0, 0)
    elif kind == EV_PROGRESS:
        E.ctr[C_YIELD] = 1
        at(E, E.ctr[C_NOW] + E.progress_every, EV_PROGRESS, 0, 0)
    return True


@njit(cache=True)
def pending(E):
    return E.ctr[C_DIRTY_N] > 0 or E.ctr[C_ARR_N] > 0


@njit(cache=True)
def decide(E, gen):
    if E.acknak:
        decide_acknak(E, gen)
    else:
        decide_credit(E, gen)


@njit(cache=True)
def run_batch(E, gen):
    """Apply the batch at the head of the current slot: every action at its time scheduled
    before the batch began, in order; then the decision phase if the time is a clock edge.
    False on a deadlock."""
    pos = E.ctr[C_CUR_SLOT] & E.wmask
    e = E.slot_head[pos]
    t = E.ev_time[e]
    E.ctr[C_NOW] = t
    marker = E.ctr[C_SEQ]
    while e != NO_EVENT and E.ev_time[e] == t and E.ev_seq[e] < marker:
        E.slot_head[pos] = E.ev_next[e]
        if E.slot_head[pos] == NO_EVENT:
            E.slot_tail[pos] = NO_EVENT
        E.ctr[C_WHEEL_N] -= 1
        E.ctr[C_ACTIONS] += 1
        ok = apply(E, e, gen)
        ev_free(E, e)
        if not ok:
            return False
        e = E.slot_head[pos]
    E.ctr[C_LAST_BATCH] = t
    E.ctr[C_SLOT_BATCH] = 1
    if t % E.cyc == 0 and pending(E):
        decide(E, gen)
    return True


@njit(cache=True)
def run(E, gen):
    """Run until the stop, a deadlock, or a reason to return to Python (status code)."""
    while True:
        if E.ctr[C_EV_FREE_N] < E.ev_reserve or E.ctr[C_PK_FREE_N] < E.pk_reserve:
            return ST_GROW
        pos = E.ctr[C_CUR_SLOT] & E.wmask
        if E.slot_head[pos] == NO_EVENT:
            # the slot is exhausted: a decision waits for its edge if a batch left work
            edge_t = E.ctr[C_CUR_SLOT] * E.cyc
            if E.ctr[C_SLOT_BATCH] and E.ctr[C_LAST_BATCH] != edge_t and pending(E):
                E.ctr[C_NOW] = edge_t
                E.ctr[C_LAST_BATCH] = edge_t
                E.ctr[C_ACTIONS] += 1
                decide(E, gen)
                continue
            if not advance_slot(E):
                E.ctr[C_END] = E.ctr[C_NOW]
                return ST_DONE
            continue
        if not run_batch(E, gen):
            return ST_DEADLOCK
        if E.ctr[C_STOPPED]:
            # the batch that already existed at the stop time runs too (SimPy processes the
            # events scheduled before its stop event), then nothing more
            t = E.ctr[C_NOW]
            e = E.slot_head[pos]
            if e != NO_EVENT and E.ev_time[e] == t:
                older_exists = False
                while e != NO_EVENT and E.ev_time[e] == t:
                    if E.ev_seq[e] < E.ctr[C_STOP_SEQ]:
                        older_exists = True
                        break
                    e = E.ev_next[e]
                if older_exists:
                    if not run_batch(E, gen):
                        return ST_DEADLOCK
            E.ctr[C_END] = t
            return ST_DONE
        if E.ctr[C_YIELD]:
            E.ctr[C_YIELD] = 0
            return ST_PROGRESS


@njit(cache=True)
def set_pools(E, ev_time, ev_seq, ev_kind, ev_a, ev_b, ev_next, heap, p_src, p_dst, p_birth,
              p_age_hi, p_age_lo, p_meas, p_der, p_rs, p_ri, p_hops, p_avail, p_enter, p_ready,
              p_qid, p_from_port, p_from_vc, p_retries, p_next):
    """Swap in grown event and packet pools (the engine grows them between batches)."""
    E.ev_time, E.ev_seq, E.ev_kind, E.ev_a, E.ev_b, E.ev_next = ev_time, ev_seq, ev_kind, ev_a, \
        ev_b, ev_next
    E.heap = heap
    E.p_src, E.p_dst, E.p_birth, E.p_age_hi, E.p_age_lo = p_src, p_dst, p_birth, p_age_hi, \
        p_age_lo
    E.p_meas, E.p_der, E.p_rs, E.p_ri, E.p_hops = p_meas, p_der, p_rs, p_ri, p_hops
    E.p_avail, E.p_enter, E.p_ready, E.p_qid = p_avail, p_enter, p_ready, p_qid
    E.p_from_port, E.p_from_vc, E.p_retries, E.p_next = p_from_port, p_from_vc, p_retries, p_next
