"""The fabric: packets (``pk`` rows, recycled), the queues' ring buffers and occupancy (``qs``),
the NICs' source queues (``nd``), the ports that wait for room and the dirty list (``pt``,
``dl``), and the ports' ack/nak control rings (the end of ``arr``) — the SimPy engine's
:mod:`~icsim.simulator.engines.simpy.fabric`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from icsim.simulator.engines.compiled.layout import (C_CUR_SLOT, C_DIRTY_N, C_LEFT_OFF, C_PK_FREE,
                                                     C_PK_FREE_N, K_ACKNAK, K_AVAIL, K_CAP, K_CTRL0,
                                                     K_CONC, K_CTRL_CAP, K_CYC, K_ESCAPE_FIRST,
                                                     K_NPORTS, K_NPRM, K_T, P_EJECT, P_TDST,
                                                     P_TSRC,
                                                     K_NPV_NODE, K_P1, K_QBUF, K_WWORDS, N_SRCH,
                                                     N_SRCT, P_AVAIL, P_BIRTH, P_DER, P_DRAWN,
                                                     P_DST, P_ENTER, P_FPORT, P_FVC, P_HI, P_HOPS,
                                                     P_LEFT, P_LO, P_MEAS, P_NEXT, P_READY, P_RI,
                                                     P_RS, P_SEL, P_SRC, Q_HEAD, Q_LEN, Q_READY_LO,
                                                     Q_WAIT, T_CHEAD, T_CLEN, T_DIRTY, T_DOWN, T_IN,
                                                     T_WAKE_AT, V_NCOL)
from icsim.simulator.engines.compiled.speed import divide


@njit(cache=True, forceinline=True)
def vc_info(prm, vc, col):
    """A VC's ``V_*`` number (bubble rule, escape-priority order and rank), kept after the
    ``K_*`` numbers."""
    return prm[K_NPRM + vc * V_NCOL + col]


@njit(cache=True, forceinline=True)
def port_of(prm, pid):
    """The port of port id ``pid`` (from K_NPORTS on: the ejection ports of the router's
    terminals)."""
    return pid - divide(prm, pid, K_P1) * prm[K_P1]


# ============================================================================= packets
@njit(cache=True, forceinline=True)
def packet_new(ctr, prm, pk, src, dst, birth, age_lo, measured, avail):
    """A packet from terminal ``src`` to terminal ``dst``: its routers (what routing reads),
    its terminals and its ejection port."""
    p = ctr[C_PK_FREE]
    ctr[C_PK_FREE] = pk[p, P_NEXT]
    ctr[C_PK_FREE_N] -= 1
    c = prm[K_CONC]
    if c == 1:
        pk[p, P_SRC] = src
        pk[p, P_DST] = dst
        pk[p, P_EJECT] = prm[K_NPORTS]
    else:
        pk[p, P_SRC] = src // c
        pk[p, P_DST] = dst // c
        pk[p, P_EJECT] = prm[K_NPORTS] + dst % c
    pk[p, P_TSRC] = src
    pk[p, P_TDST] = dst
    pk[p, P_BIRTH] = birth
    pk[p, P_HI] = birth * prm[K_T] + src
    pk[p, P_LO] = age_lo
    pk[p, P_MEAS] = measured
    pk[p, P_DER] = 0
    pk[p, P_RS] = -256                # registers(-1, 0): no target, phase 0
    pk[p, P_SEL] = -1
    pk[p, P_DRAWN] = 0
    pk[p, P_RI] = 0
    pk[p, P_HOPS] = 0
    pk[p, P_AVAIL] = avail
    pk[p, P_ENTER] = -1
    pk[p, P_READY] = 0
    pk[p, P_FPORT] = -1
    pk[p, P_FVC] = -1
    pk[p, P_NEXT] = -1
    pk[p, P_LEFT] = 1
    return p


@njit(cache=True, forceinline=True)
def packet_free(ctr, pk, p):
    pk[p, P_NEXT] = ctr[C_PK_FREE]
    ctr[C_PK_FREE] = p
    ctr[C_PK_FREE_N] += 1


@njit(cache=True, forceinline=True)
def older(pk, p1, p2):
    """Whether packet p1 is older than p2 (the SimPy engine's ``p1.age < p2.age``)."""
    h1 = pk[p1, P_HI]
    h2 = pk[p2, P_HI]
    return h1 < h2 or (h1 == h2 and pk[p1, P_LO] < pk[p2, P_LO])


# ============================================================================= queues
@njit(cache=True, forceinline=True)
def wrap(x, cap):
    """``x % cap`` for 0 <= x < 2 * cap (a ring buffer's index), without a division."""
    return x - cap if x >= cap else x


@njit(cache=True, forceinline=True)
def q_at(prm, qs, q, i):
    return qs[q, prm[K_QBUF] + wrap(qs[q, Q_HEAD] + i, prm[K_CAP])]


@njit(cache=True, forceinline=True)
def q_pop(prm, qs, q):
    h = qs[q, Q_HEAD]
    p = qs[q, prm[K_QBUF] + h]
    qs[q, Q_HEAD] = wrap(h + 1, prm[K_CAP])
    qs[q, Q_LEN] -= 1
    return p


@njit(cache=True, forceinline=True)
def q_insert(prm, qs, q, i, p):
    """Insert p before position i (shifting the later ones back)."""
    cap = prm[K_CAP]
    base = prm[K_QBUF]
    h = qs[q, Q_HEAD]
    j = qs[q, Q_LEN]
    while j > i:
        qs[q, base + wrap(h + j, cap)] = qs[q, base + wrap(h + j - 1, cap)]
        j -= 1
    qs[q, base + wrap(h + i, cap)] = p
    qs[q, Q_LEN] += 1


@njit(cache=True, forceinline=True)
def low32(t):
    """The low 32 bits of t as the signed number an int32 column stores."""
    return ((t + 0x80000000) & 0xFFFFFFFF) - 0x80000000


@njit(cache=True, forceinline=True)
def q_append_ready(prm, pk, qs, q, p):
    """``ready``'s canonical order: among packets becoming ready together, oldest first.  The
    queue keeps the low bits of its last such time (``Q_READY_LO``): where they differ from
    now, no packet in it became ready now, and its last packet's row need not be read."""
    i = qs[q, Q_LEN]
    now = pk[p, P_READY]
    lo = low32(now)
    if qs[q, Q_READY_LO] == lo:
        while i > 0:
            last = q_at(prm, qs, q, i - 1)
            if pk[last, P_READY] == now and older(pk, p, last):
                i -= 1
            else:
                break
    qs[q, Q_READY_LO] = lo
    q_insert(prm, qs, q, i, p)


@njit(cache=True, forceinline=False)
def q_insert_by_order(prm, pk, qs, q, p):
    """A NAKed packet goes back to its old place: before the first with a later
    (ready, age)."""
    n = qs[q, Q_LEN]
    r = pk[p, P_READY]
    for i in range(n):
        o = q_at(prm, qs, q, i)
        ro = pk[o, P_READY]
        if ro > r or (ro == r and older(pk, p, o)):
            q_insert(prm, qs, q, i, p)
            return
    q_insert(prm, qs, q, n, p)


@njit(cache=True, forceinline=True)
def srcq_append(pk, nd, node, p):
    pk[p, P_NEXT] = -1
    tail = nd[node, N_SRCT]
    if tail < 0:
        nd[node, N_SRCH] = p
    else:
        pk[tail, P_NEXT] = p
    nd[node, N_SRCT] = p


@njit(cache=True, forceinline=True)
def srcq_popleft(ctr, prm, pk, nd, node):
    """Take the head packet off the NIC queue.  A row of the queue stands for ``P_LEFT``
    packets, itself and the next ones of its message (``post``): the next one gets its own row
    now, at the head, so that a NIC queue costs a row per message, not per packet."""
    p = nd[node, N_SRCH]
    nxt = pk[p, P_NEXT]
    left = pk[p, P_LEFT]
    if left > 1:
        nxt_p = packet_new(ctr, prm, pk, pk[p, P_TSRC], pk[p, P_TDST], pk[p, P_BIRTH],
                           pk[p, P_LO] + 1, pk[p, P_MEAS], pk[p, P_AVAIL] + prm[K_AVAIL])
        pk[nxt_p, P_LEFT] = left - 1
        pk[nxt_p, P_NEXT] = nxt
        pk[p, P_LEFT] = 1
        if nxt < 0:
            nd[node, N_SRCT] = nxt_p
        nxt = nxt_p
    nd[node, N_SRCH] = nxt
    if nxt < 0:
        nd[node, N_SRCT] = -1
    pk[p, P_NEXT] = -1
    return p


@njit(cache=True, forceinline=False)
def srcq_insert_by_age(pk, nd, node, p):
    """A NAKed packet goes back into the NIC queue in age order (a row standing for several
    packets stands for its first one's age and the next ones': p, once split from such a row,
    is older than all the rest)."""
    prev = -1
    cur = nd[node, N_SRCH]
    while cur >= 0 and not older(pk, p, cur):
        prev = cur
        cur = pk[cur, P_NEXT]
    pk[p, P_NEXT] = cur
    if prev < 0:
        nd[node, N_SRCH] = p
    else:
        pk[prev, P_NEXT] = p
    if cur < 0:
        nd[node, N_SRCT] = p


@njit(cache=True, forceinline=True)
def mark_dirty(ctr, prm, pt, dl, pid):
    """Put port pid on the dirty list: the decision phase at this slot's edge looks at it
    (once, however often it is marked; the list keeps the order of first marks).

    With ack/nak, a channel busy past the edge whose wake-up is already scheduled
    (``EV_CHAN_FREE`` at ``T_WAKE_AT``, set to ``T_FREE_AT``) is left off: its look would
    do nothing, and the wake-up marks it.  ``C_LEFT_OFF`` keeps the phase due (the phase
    counts as an action and moves the clock to the edge, as in the SimPy engine).  Only
    ports whose look would surely do nothing: the phase takes its ports in the list's order,
    which marking a port later could change.  (The credit phase's busy ports are as idle,
    but leaving them off gained nothing measurable.)"""
    if pt[pid, T_DIRTY]:
        return
    if prm[K_ACKNAK] and pt[pid, T_WAKE_AT] > ctr[C_CUR_SLOT] * prm[K_CYC]:
        ctr[C_LEFT_OFF] = 1
        return
    pt[pid, T_DIRTY] = 1
    dl[ctr[C_DIRTY_N]] = pid
    ctr[C_DIRTY_N] += 1


# ============================================================================= waiting
@njit(cache=True, forceinline=True)
def wait_on(prm, qs, q, slot):
    """The upstream port entering q's router by its input ``slot`` waits for room in q."""
    qs[q, Q_WAIT + (slot >> 5)] |= np.int64(1) << (slot & 31)


@njit(cache=True, forceinline=True)
def wake(ctr, prm, qs, pt, dl, ups, q):
    """Queue q has room: every port waiting on it is marked dirty (and stops waiting on it),
    in input order.  Bits in the queue's own row, where nobody waits as a rule."""
    words = prm[K_WWORDS]
    anyone = False
    for w in range(words):
        if qs[q, Q_WAIT + w]:
            anyone = True
    if not anyone:
        return
    node = divide(prm, q, K_NPV_NODE)
    for i in range(prm[K_P1]):               # the ports leading into the router, its NICs
        if (qs[q, Q_WAIT + (i >> 5)] >> (i & 31)) & 1:
            mark_dirty(ctr, prm, pt, dl, ups[node, i])
    for w in range(words):
        qs[q, Q_WAIT + w] = 0


# ============================================================================= control rings
@njit(cache=True, forceinline=True)
def reverse(prm, pt, pid):
    """The port that carries port pid's link back (where its ACKs/NAKs wait): the downstream
    router's port by which the link enters it."""
    return pt[pid, T_DOWN] * prm[K_P1] + pt[pid, T_IN]


@njit(cache=True, forceinline=True)
def ctrl_row(prm, pid, i):
    """The row of ``arr`` holding entry i of port pid's ring of waiting ACKs/NAKs."""
    return prm[K_CTRL0] + pid * prm[K_CTRL_CAP] + i


@njit(cache=True, forceinline=True)
def ctrl_tail(prm, pt, pid):
    """The row the next ACK/NAK queued at port pid goes to."""
    return ctrl_row(prm, pid, wrap(pt[pid, T_CHEAD] + pt[pid, T_CLEN], prm[K_CTRL_CAP]))


@njit(cache=True, forceinline=True)
def keeps_nak_vc(prm):
    """Whether ports keep the VC of their last NAK and their round's rejected VCs
    (``T_NAK_VC``, ``T_NAK_MASK``): only for the oldest-first arbitration, which reads them
    (``oldest_unrejected``; escape priority does not), so that under escape priority an ACK
    need not read its port's row (``ack``, ``prefetch_event``)."""
    return not prm[K_ESCAPE_FIRST]
