"""Ack/nak flow control, as the SimPy engine's :mod:`~icsim.simulator.engines.simpy.acknak`: a
packet is sent when its link is idle, accepted or rejected on arrival (``receive``), and its
slot freed when the ACK returns (``ack``); NICs send by stop-and-wait (``send_from_nic``).
"""

from __future__ import annotations

from numba import njit

from icsim.simulator.engines.compiled.admission import select
from icsim.simulator.engines.compiled.calendar import at
from icsim.simulator.engines.compiled.credit import (eject, hopped, queued, ready, routable,
                                                     sort_heads)
from icsim.simulator.engines.compiled.fabric import (ctrl_row, ctrl_tail, keeps_nak_vc, mark_dirty,
                                                     older, port_of, q_at, q_insert_by_order, q_pop,
                                                     reverse, srcq_popleft, vc_info, wake, wrap)
from icsim.simulator.engines.compiled.layout import (C_ARR_N, C_DIRTY_N, C_IN_NETWORK, C_IN_SOURCES,
                                                     C_LINK_HOPS, C_NOW, C_PROGRESS_PS, C_RETRANS,
                                                     EV_ACK, EV_ARRIVAL, EV_CHAN_FREE, EV_NIC_ACK,
                                                     EV_NIC_TX_END, EV_READY, H_HI, H_LO, H_PID,
                                                     H_PKT, K_CTRL_CAP, K_CUT, K_DELAY,
                                                     K_CLASSED, K_ESCAPE_FIRST, K_INJ_MIN, K_LAT,
                                                     K_LAT_NIC, T_LAT, T_SER, T_SER_ACK,
                                                     K_NP, K_NPORTS, K_PREFETCH, K_SER, K_SER_ACK,
                                                     K_SER_ACK_NIC, K_SER_NIC, K_V, N_OUTSTANDING,
                                                     N_SRCH, P_ENTER, P_FPORT, P_FVC, P_HI, P_HOPS,
                                                     P_SRC,
                                                     P_LO, Q_LEN, Q_OCC, Q_PACKETS, T_BUSY, T_CHEAD,
                                                     T_CLEN, T_DIRTY, T_DOWN, T_FREE_AT,
                                                     T_LINK_BUSY, T_NAK_MASK, T_NAK_VC, T_WAKE_AT,
                                                     V_ORDER, T_INJECTED)
from icsim.simulator.engines.compiled.nic import may_send
from icsim.simulator.engines.compiled.prefetching import (PF_STEP, prefetch_arrival_stage,
                                                          prefetch_port_stage)
from icsim.simulator.engines.compiled.routing import admitted, candidates, inject_route
from icsim.simulator.engines.compiled.speed import divide


# ============================================================================= ack/nak
@njit(cache=True, forceinline=True)
def receive(ctr, prm, ev, wheel, heap, pk, qs, pt, dl, codes, ph, rtab,
            route, rhops, rng, arr, p, src):
    """Accept (ACK) or reject (NAK) an arrived packet with this router's state; ``src`` is the
    upstream queue id, or ``-1 - node`` for the local NIC, whose packet the caller has routed
    (``inject_route``) just before.  (Not here: an inlined function's parameters are counted
    references, and the decision's record, ``dec``, would be counted on every hop.)"""
    now = ctr[C_NOW]
    V = prm[K_V]
    if src >= 0:
        pid_up = divide(prm, src, K_V)
        v = pt[pid_up, T_DOWN]
        mask, vc_all, detour, port1, vc1 = candidates(prm, pk, qs, rng, codes, ph, rtab,
                                                      route, rhops, v, p)
        q2 = -1
        if routable(ctr, prm, p, v, port1):
            q2 = select(prm, qs, rng, mask, vc_all, detour, port1, vc1, v, pk[p, P_FPORT],
                        pk[p, P_FVC], 1, -1)
    else:
        v = pk[p, P_SRC]                  # the router of the NIC of terminal -1 - src
        mask, vc_all, detour, port1, vc1 = candidates(prm, pk, qs, rng, codes, ph, rtab,
                                                      route, rhops, v, p)
        q2 = -1
        if routable(ctr, prm, p, v, port1):
            q2 = select(prm, qs, rng, mask, vc_all, detour, port1, vc1, v, -1, -1,
                        prm[K_INJ_MIN], -1)
    if q2 >= 0 and not queued(ctr, prm, pk, pt, p, q2):
        q2 = -1
    nak = -1
    if q2 >= 0:
        qs[q2, Q_OCC] += 1
        ctr[C_PROGRESS_PS] = now
        if src >= 0:
            hopped(ctr, prm, pk, p, v)
            ctr[C_LINK_HOPS] += 1
        else:
            ctr[C_IN_SOURCES] -= 1
            ctr[C_IN_NETWORK] += 1
            pt[prm[K_NP] - 1 - src, T_INJECTED] += 1
            pk[p, P_ENTER] = now
        admitted(prm, pk, ph, rtab, p, q2)
        if prm[K_DELAY]:
            at(ctr, prm, ev, wheel, heap, now + prm[K_DELAY], EV_READY, p, q2)
        else:
            ready(ctr, prm, pk, qs, pt, dl, p, q2)   # visible at once, this same phase
    else:
        ctr[C_RETRANS] += 1
        nak = p
    if src >= 0:
        # the ACK/NAK waits for the reverse channel, where it goes before any data
        rpid = reverse(prm, pt, pid_up)
        c = ctrl_tail(prm, pt, rpid)
        arr[c, 0] = src
        arr[c, 1] = nak
        pt[rpid, T_CLEN] += 1
        mark_dirty(ctr, prm, pt, dl, rpid)
    else:
        at(ctr, prm, ev, wheel, heap, now + prm[K_SER_ACK_NIC] + prm[K_LAT_NIC], EV_NIC_ACK,
           -1 - src, nak)


@njit(cache=True, forceinline=True)
def oldest_outside(prm, pk, qs, base, mask):
    """The VC of the oldest head among the port's queues (from queue ``base``) whose bit is
    not in ``mask``; -1 for none (SimPy ``_oldest_outside``)."""
    best = -1
    for vc in range(prm[K_V]):
        if qs[base + vc, Q_LEN] and not (mask >> vc) & 1:
            if best < 0 or older(pk, q_at(prm, qs, base + vc, 0), q_at(prm, qs, base + best, 0)):
                best = vc
    return best


@njit(cache=True, forceinline=True)
def oldest_unrejected(prm, pk, qs, pt, pid, base):
    """The VC whose head port ``pid`` sends under oldest-first arbitration, in rounds: the
    oldest head of a VC not rejected this round, else a new round that passes over only the
    last VC rejected (SimPy ``AckNakFlow.oldest_unrejected``)."""
    mask = pt[pid, T_NAK_MASK]
    best = oldest_outside(prm, pk, qs, base, mask)
    if best < 0 and mask:
        for vc in range(prm[K_V]):
            if qs[base + vc, Q_LEN]:
                nk = pt[pid, T_NAK_VC]
                pt[pid, T_NAK_MASK] = 1 << nk                  # a new round
                best = oldest_outside(prm, pk, qs, base, 1 << nk)
                if best < 0 and qs[base + nk, Q_LEN]:
                    best = nk
                break
    return best


@njit(cache=True, forceinline=True)
def ack(ctr, prm, pk, qs, pt, dl, ups, src_q, nak):
    """An ACK (nak < 0: the sender's slot is free) or a NAK (the packet goes back to its old
    place in its queue) reaches the sender."""
    V = prm[K_V]
    pid = divide(prm, src_q, K_V)
    vc = src_q - pid * V
    if nak < 0:
        if keeps_nak_vc(prm):
            if pt[pid, T_NAK_VC] == vc:
                pt[pid, T_NAK_VC] = -1                         # the round ends
                pt[pid, T_NAK_MASK] = 0
            else:
                pt[pid, T_NAK_MASK] &= ~(1 << vc)
        qs[src_q, Q_OCC] -= 1
        wake(ctr, prm, qs, pt, dl, ups, src_q)
        return
    q_insert_by_order(prm, pk, qs, src_q, nak)
    if keeps_nak_vc(prm):
        pt[pid, T_NAK_VC] = vc
        pt[pid, T_NAK_MASK] |= 1 << vc
    mark_dirty(ctr, prm, pt, dl, pid)


@njit(cache=True, forceinline=True)
def send_from_nic(ctr, prm, fprm, ev, wheel, heap, pk, pt, nd, node, p):
    now = ctr[C_NOW]
    if not may_send(ctr, prm, fprm, ev, wheel, heap, pk, nd, node, p, now):
        return
    srcq_popleft(ctr, prm, pk, nd, node)
    nd[node, N_OUTSTANDING] += 1
    pt[prm[K_NP] + node, T_BUSY] = 1
    t_end = now + prm[K_SER_NIC]
    at(ctr, prm, ev, wheel, heap, t_end, EV_NIC_TX_END, node, 0)
    pk[p, P_FPORT] = -1
    pk[p, P_FVC] = -1
    at(ctr, prm, ev, wheel, heap, t_end + prm[K_LAT_NIC], EV_ARRIVAL, p, -1 - node)


@njit(cache=True, forceinline=True)
def decide_acknak(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl,
                  ups, codes, ph, rtab, route, rhops, used, dec, rng, rec,
                  ost, hd, order, arr):
    """The decision phase of ack/nak flow control: first the packets that arrived since the
    last edge are received, oldest first; then every dirty port whose channel is idle sends
    its ACK/NAK if one waits, else a head packet."""
    na = ctr[C_ARR_N]
    if na:
        for i in range(na):
            p = arr[i, 0]
            hd[i, H_HI] = pk[p, P_HI]
            hd[i, H_LO] = pk[p, P_LO]
        sort_heads(hd, order, na)
        for j in range(na):                  # the arrivals in that order (hd's spare columns)
            hd[j, H_PID] = arr[order[j], 0]
            hd[j, H_PKT] = arr[order[j], 1]
        ctr[C_ARR_N] = 0
        prefetching = prm[K_PREFETCH]
        if prefetching:
            for j in range(-3 * PF_STEP, 0):
                prefetch_arrival_stage(prm, pk, qs, pt, codes, ph, rtab, route, rhops,
                                       arr, hd, j, na)
        for j in range(na):
            if prefetching:
                prefetch_arrival_stage(prm, pk, qs, pt, codes, ph, rtab, route, rhops,
                                       arr, hd, j, na)
            p = hd[j, H_PID]
            src = hd[j, H_PKT]
            if src < 0:                      # from the NIC: the injection-time decision first
                inject_route(prm, fprm, pk, qs, pt, rtab, used, dec, rng, pk[p, P_SRC], p)
            receive(ctr, prm, ev, wheel, heap, pk, qs, pt, dl, codes, ph,
                    rtab, route, rhops, rng, arr, p, src)
    nd_ = ctr[C_DIRTY_N]
    if nd_ == 0:
        return
    now = ctr[C_NOW]
    for i in range(nd_):                     # the dirty ports (hd's first column, now free)
        hd[i, H_HI] = dl[i]
        pt[dl[i], T_DIRTY] = 0
    ctr[C_DIRTY_N] = 0
    NP = prm[K_NP]
    V = prm[K_V]
    cc = prm[K_CTRL_CAP]
    prefetching = prm[K_PREFETCH]
    if prefetching:
        for i in range(-3 * PF_STEP, 0):
            prefetch_port_stage(prm, pk, qs, pt, nd, arr, hd, i, nd_)
    for i in range(nd_):
        if prefetching:
            prefetch_port_stage(prm, pk, qs, pt, nd, arr, hd, i, nd_)
        pid = hd[i, H_HI]
        if pid >= NP:
            node = pid - NP
            if nd[node, N_SRCH] >= 0 and not pt[pid, T_BUSY]:
                send_from_nic(ctr, prm, fprm, ev, wheel, heap, pk, pt, nd, node,
                              nd[node, N_SRCH])
            continue
        port = port_of(prm, pid)
        base = pid * V
        if port >= prm[K_NPORTS]:
            if qs[base, Q_LEN] and not pt[pid, T_BUSY]:
                eject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, rec, ost, pid,
                      q_at(prm, qs, base, 0))
            continue
        fa = pt[pid, T_FREE_AT]
        if fa > now:
            # busy: come back when the channel is idle (one wake-up per busy period)
            if pt[pid, T_WAKE_AT] != fa:
                pt[pid, T_WAKE_AT] = fa
                at(ctr, prm, ev, wheel, heap, fa, EV_CHAN_FREE, pid, 0)
            continue
        if pt[pid, T_CLEN] > 0:
            # an ACK/NAK goes before any data
            j = pt[pid, T_CHEAD]
            c = ctrl_row(prm, pid, j)
            src_q = arr[c, 0]
            nak = arr[c, 1]
            pt[pid, T_CHEAD] = wrap(j + 1, cc)
            pt[pid, T_CLEN] -= 1
            ser_ack = pt[pid, T_SER_ACK] if prm[K_CLASSED] else prm[K_SER_ACK]
            lat = pt[pid, T_LAT] if prm[K_CLASSED] else prm[K_LAT]
            fa = now + ser_ack
            pt[pid, T_FREE_AT] = fa
            pt[pid, T_LINK_BUSY] += ser_ack
            at(ctr, prm, ev, wheel, heap, fa + lat, EV_ACK, src_q, nak)
        else:
            best = -1
            if prm[K_ESCAPE_FIRST]:
                for r in range(V):
                    vc = vc_info(prm, r, V_ORDER)
                    if qs[base + vc, Q_LEN]:
                        best = vc
                        break
            else:
                best = oldest_unrejected(prm, pk, qs, pt, pid, base)
            if best < 0:
                continue
            # speculative transmission of the head; its slot stays held until the ACK
            p = q_pop(prm, qs, base + best)
            ser = pt[pid, T_SER] if prm[K_CLASSED] else prm[K_SER]
            lat = pt[pid, T_LAT] if prm[K_CLASSED] else prm[K_LAT]
            fa = now + ser
            pt[pid, T_FREE_AT] = fa
            pt[pid, T_LINK_BUSY] += ser
            qs[base + best, Q_PACKETS] += 1
            pk[p, P_FPORT] = port
            pk[p, P_FVC] = best
            at(ctr, prm, ev, wheel, heap, (now if prm[K_CUT] else fa) + lat, EV_ARRIVAL,
               p, base + best)
        more = pt[pid, T_CLEN] > 0
        if not more:
            for vc in range(V):
                if qs[base + vc, Q_LEN]:
                    more = True
                    break
        if more:
            pt[pid, T_WAKE_AT] = fa     # more to send: come back when the channel is idle
            at(ctr, prm, ev, wheel, heap, fa, EV_CHAN_FREE, pid, 0)
