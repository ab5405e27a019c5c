"""Credit flow control, as the SimPy engine's :mod:`~icsim.simulator.engines.simpy.credit`:
``forward``/``tx_end``/``ready``, ``eject``, ``try_inject`` and a decision phase
(``decide_credit``), with the canonical orders of the heads (``sort_heads``,
``escape_priority``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from icsim.simulator.engines.compiled.admission import select
from icsim.simulator.engines.compiled.calendar import at, at_edge
from icsim.simulator.engines.compiled.fabric import (mark_dirty, packet_free, port_of,
                                                     q_append_ready, q_at, q_pop, srcq_popleft,
                                                     vc_info, wake)
from icsim.simulator.engines.compiled.layout import (C_DIRTY_N, C_FAULT, C_FAULT_AT,
                                                     C_FAULT_PKT, C_FAULT_PORT, C_IN_NETWORK,
                                                     C_IN_SOURCES, K_HOP_LIMIT, K_P1, P_DST,
                                                     C_LINK_HOPS, C_NOW, C_PROGRESS_PS, EV_NIC_ACK,
                                                     EV_NIC_TX_END, EV_READY, EV_TX_END, H_HI, H_LO,
                                                     H_PID, H_PKT, H_VC, K_CUT, K_DELAY,
                                                     K_CLASSED, K_ESCAPE_FIRST, K_INJ_MIN, K_LAT,
                                                     K_LAT_NIC, T_LAT, T_SER,
                                                     K_NP, K_NPORTS, K_PREFETCH, K_SAW, K_SER,
                                                     K_SER_ACK_NIC, K_SER_NIC, K_V, N_OUTSTANDING,
                                                     N_SRCH, P_ENTER, P_FPORT, P_FVC, P_HI, P_HOPS,
                                                     P_SRC,
                                                     P_LO, P_READY, Q_LEN, Q_OCC, Q_PACKETS,
                                                     RADIX_FROM, T_BUSY, T_DIRTY, T_DOWN, T_FIRST,
                                                     T_IN, T_LINK_BUSY, V_RANK, T_INJECTED)
from icsim.simulator.engines.compiled.nic import may_send, sink
from icsim.simulator.engines.compiled.prefetching import prefetch_heads, prefetch_ports
from icsim.simulator.engines.compiled.routing import admitted, candidates, inject_route
from icsim.simulator.engines.compiled.speed import divide


# ============================================================================= the guard
@njit(cache=True, forceinline=False)
def breach(ctr, code, p, router, port):
    """Record the run's first breach of the guard (``simulator.engines.guard.FAULTS``): the
    loop returns ``ST_FAULT`` at the end of its step."""
    if ctr[C_FAULT] == 0:
        ctr[C_FAULT] = code
        ctr[C_FAULT_PKT] = p
        ctr[C_FAULT_AT] = router
        ctr[C_FAULT_PORT] = port


@njit(cache=True, forceinline=True)
def routable(ctr, prm, p, router, port1):
    """The candidates name a port (an empty program entry names none: port 64)."""
    if port1 < 0 or port1 >= prm[K_P1]:
        breach(ctr, 4, p, router, -1)
        return False
    return True


@njit(cache=True, forceinline=True)
def queued(ctr, prm, pk, pt, p, q2):
    """p may enter queue q2: its port has a link, or it is an ejection port of the packet's
    destination router (SimPy ``CreditFlow.queued``)."""
    pid2 = divide(prm, q2, K_V)
    if pt[pid2, T_DOWN] >= 0:
        return True
    node = divide(prm, pid2, K_P1)
    port = pid2 - node * prm[K_P1]
    if port < prm[K_NPORTS]:
        breach(ctr, 2, p, node, port)
    elif pk[p, P_DST] != node:
        breach(ctr, 1, p, node, port)
    else:
        return True
    return False


@njit(cache=True, forceinline=True)
def hopped(ctr, prm, pk, p, router):
    """p crossed one more channel, into ``router``: past the hop limit, a livelock."""
    hops = pk[p, P_HOPS] + 1
    pk[p, P_HOPS] = hops
    if hops > prm[K_HOP_LIMIT]:
        breach(ctr, 3, p, router, -1)


# ============================================================================= credit
@njit(cache=True, forceinline=True)
def forward(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl, codes, ph,
            rtab, route, rhops, rng, rec, ost, pid, vc, p):
    """Try to move the head p of queue (pid, vc) across its channel (SimPy ``forward``)."""
    port = port_of(prm, pid)
    if port >= prm[K_NPORTS]:
        eject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, rec, ost, pid, p)
        return True
    v = pt[pid, T_DOWN]
    mask, vc_all, detour, port1, vc1 = candidates(prm, pk, qs, rng, codes, ph, rtab, route,
                                                  rhops, v, p)
    if not routable(ctr, prm, p, v, port1):
        return False
    q2 = select(prm, qs, rng, mask, vc_all, detour, port1, vc1, v, port, vc, 1, pt[pid, T_IN])
    if q2 < 0 or not queued(ctr, prm, pk, pt, p, q2):
        return False
    now = ctr[C_NOW]
    src_q = pid * prm[K_V] + vc
    q_pop(prm, qs, src_q)
    qs[q2, Q_OCC] += 1
    ctr[C_PROGRESS_PS] = now
    ctr[C_LINK_HOPS] += 1
    if prm[K_CLASSED]:                    # the channel's link class
        ser = pt[pid, T_SER]
        lat = pt[pid, T_LAT]
    else:
        ser = prm[K_SER]
        lat = prm[K_LAT]
    t_end = now + ser
    pt[pid, T_BUSY] = t_end               # busy until then (the window's share: loop.sample)
    pt[pid, T_LINK_BUSY] += ser
    qs[src_q, Q_PACKETS] += 1
    at(ctr, prm, ev, wheel, heap, t_end, EV_TX_END, pid, src_q)
    hopped(ctr, prm, pk, p, v)
    pk[p, P_FPORT] = port
    pk[p, P_FVC] = vc
    admitted(prm, pk, ph, rtab, p, q2)
    at_edge(ctr, prm, ev, wheel, heap, (now if prm[K_CUT] else t_end) + lat, EV_READY,
            p, q2, prm[K_DELAY])
    return True


@njit(cache=True, forceinline=True)
def tx_end(ctr, prm, qs, pt, dl, ups, pid, src_q):
    """End of serialisation: the channel and the upstream slot are free again."""
    pt[pid, T_BUSY] = 0
    qs[src_q, Q_OCC] -= 1
    mark_dirty(ctr, prm, pt, dl, pid)
    wake(ctr, prm, qs, pt, dl, ups, src_q)


@njit(cache=True, forceinline=True)
def ready(ctr, prm, pk, qs, pt, dl, p, q2):
    """The packet is visible in queue q2."""
    pk[p, P_READY] = ctr[C_NOW]
    q_append_ready(prm, pk, qs, q2, p)
    mark_dirty(ctr, prm, pt, dl, divide(prm, q2, K_V))


@njit(cache=True, forceinline=True)
def eject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, rec, ost, pid, p):
    """The head of an ejection queue crosses the ejection link to the sink."""
    now = ctr[C_NOW]
    src_q = pid * prm[K_V]
    q_pop(prm, qs, src_q)
    pt[pid, T_BUSY] = 1
    ctr[C_PROGRESS_PS] = now
    ctr[C_IN_NETWORK] -= 1
    t_end = now + prm[K_SER_NIC]
    at(ctr, prm, ev, wheel, heap, t_end, EV_TX_END, pid, src_q)
    sink(ctr, prm, fprm, ev, wheel, heap, pk, nd, rec, ost, p, t_end + prm[K_LAT_NIC])
    packet_free(ctr, pk, p)


@njit(cache=True, forceinline=True)
def try_inject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, codes, ph,
               rtab, route, rhops, used, dec, rng, node, p):
    """The NIC of terminal ``node`` offers its head packet to its router (SimPy
    ``try_inject``)."""
    now = ctr[C_NOW]
    if not may_send(ctr, prm, fprm, ev, wheel, heap, pk, nd, node, p, now):
        return False
    router = pk[p, P_SRC]
    inject_route(prm, fprm, pk, qs, pt, rtab, used, dec, rng, router, p)
    mask, vc_all, detour, port1, vc1 = candidates(prm, pk, qs, rng, codes, ph, rtab, route,
                                                  rhops, router, p)
    if not routable(ctr, prm, p, router, port1):
        return False
    nic = prm[K_NP] + node
    q2 = select(prm, qs, rng, mask, vc_all, detour, port1, vc1, router, -1, -1,
                prm[K_INJ_MIN], pt[nic, T_IN])    # the NIC's input
    if q2 < 0 or not queued(ctr, prm, pk, pt, p, q2):
        return False
    srcq_popleft(ctr, prm, pk, nd, node)
    ctr[C_IN_SOURCES] -= 1
    ctr[C_IN_NETWORK] += 1
    qs[q2, Q_OCC] += 1
    pt[nic, T_BUSY] = 1
    pt[nic, T_INJECTED] += 1
    ctr[C_PROGRESS_PS] = now
    t_end = now + prm[K_SER_NIC]
    at(ctr, prm, ev, wheel, heap, t_end, EV_NIC_TX_END, node, 0)
    enter = t_end + prm[K_LAT_NIC]
    pk[p, P_ENTER] = enter
    pk[p, P_FPORT] = -1
    pk[p, P_FVC] = -1
    if prm[K_SAW]:
        # the router acknowledges on arrival, over the reverse internal link
        nd[node, N_OUTSTANDING] += 1
        at(ctr, prm, ev, wheel, heap, enter + prm[K_SER_ACK_NIC] + prm[K_LAT_NIC], EV_NIC_ACK,
           node, -1)
    admitted(prm, pk, ph, rtab, p, q2)
    at_edge(ctr, prm, ev, wheel, heap, (now if prm[K_CUT] else t_end) + prm[K_LAT_NIC],
            EV_READY, p, q2, prm[K_DELAY])
    return True


@njit(cache=True, forceinline=True)
def bits_for(x):
    """The bits an integer 0 <= x needs."""
    b = 0
    while (x >> b) > 0:
        b += 1
    return b


@njit(cache=True, forceinline=True)
def sort_keyed(key, order, n, nbits):
    """``order[:n]`` = the row indices packed in the low bits of ``key[:n]`` (keys of nbits
    bits) in the keys' order.  The index makes every key distinct, so one unstable sort gives
    the stable order: a quicksort, or for many keys a radix sort, a byte per pass."""
    if n >= RADIX_FROM:
        tmp = np.empty(n, np.int64)
        count = np.empty(256, np.int64)
        src, dst = key, tmp
        for shift in range(0, nbits, 8):
            count[:] = 0
            for i in range(n):
                count[(src[i] >> shift) & 255] += 1
            total = 0
            for d in range(256):
                c = count[d]
                count[d] = total
                total += c
            for i in range(n):
                d = (src[i] >> shift) & 255
                dst[count[d]] = src[i]
                count[d] += 1
            src, dst = dst, src
        key = src
    else:
        key.sort()
    mask = (np.int64(1) << bits_for(n - 1)) - 1
    for j in range(n):
        order[j] = key[j] & mask


@njit(cache=True, forceinline=False)
def sort_heads(hd, order, n):
    """``order[:n]`` = the first n heads oldest first (age = the pair (hi, lo), distinct for
    distinct packets).  An insertion sort for the few heads of a usual phase; for many, one
    sort by hi (relative to the phase's least, the row index packed below it), then each run
    of equal hi (packets of one message) by lo; a stable double argsort when hi spans too
    many bits for that."""
    if n <= 48:
        for i in range(n):
            j = i
            while j > 0:
                a = order[j - 1]
                if hd[a, H_HI] > hd[i, H_HI] or (hd[a, H_HI] == hd[i, H_HI]
                                                   and hd[a, H_LO] > hd[i, H_LO]):
                    order[j] = a
                    j -= 1
                else:
                    break
            order[j] = i
        return
    lo = hd[0, H_HI]
    hi = lo
    for i in range(1, n):
        h = hd[i, H_HI]
        if h < lo:
            lo = h
        elif h > hi:
            hi = h
    bn = bits_for(n - 1)
    if bits_for(hi - lo) + bn > 62:
        o1 = np.argsort(hd[:n, H_LO], kind="mergesort")
        o2 = np.argsort(hd[:n, H_HI][o1], kind="mergesort")
        order[:n] = o1[o2]
        return
    key = np.empty(n, np.int64)
    for i in range(n):
        key[i] = ((hd[i, H_HI] - lo) << bn) | i
    sort_keyed(key, order, n, bits_for(hi - lo) + bn)
    j = 0
    while j < n:                             # runs of equal hi, by lo (insertion sort)
        h = hd[order[j], H_HI]
        k = j + 1
        while k < n and hd[order[k], H_HI] == h:
            i = order[k]
            m = k
            while m > j and hd[order[m - 1], H_LO] > hd[i, H_LO]:
                order[m] = order[m - 1]
                m -= 1
            order[m] = i
            k += 1
        j = k


@njit(cache=True, forceinline=False)
def escape_priority(prm, pt, hd, order, n):
    """Within a port, its VCs in priority order (escape first), ports in the order of their
    oldest head (the SimPy ``escape_priority``)."""
    key = np.empty(n, np.int64)
    V = prm[K_V]
    bn = bits_for(n - 1)
    top = 0
    for j in range(n):
        i = order[j]
        pid = hd[i, H_PID]
        if pt[pid, T_FIRST] < 0:
            pt[pid, T_FIRST] = j                # the port's oldest head
        vc = hd[i, H_VC]
        rank = pt[pid, T_FIRST] * (V + 2) + (0 if vc < 0 else vc_info(prm, vc, V_RANK) + 1)
        key[j] = (rank << bn) | j
        top = max(top, rank)
    for j in range(n):
        pt[hd[order[j], H_PID], T_FIRST] = -1
    old = order[:n].copy()
    sort_keyed(key, order, n, bits_for(top) + bn)
    for j in range(n):
        order[j] = old[order[j]]


@njit(cache=True, forceinline=True)
def decide_credit(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl,
                  codes, ph, rtab, route, rhops, used, dec, rng, rec, ost, hd,
                  order):
    """The decision phase of credit flow control: the heads of the dirty ports whose channel
    is idle, oldest first, each forwarded (or injected) if the downstream admits it."""
    n = 0
    NP = prm[K_NP]
    V = prm[K_V]
    if prm[K_PREFETCH]:
        prefetch_ports(prm, pk, qs, dl, ctr[C_DIRTY_N])
    for i in range(ctr[C_DIRTY_N]):
        pid = dl[i]
        pt[pid, T_DIRTY] = 0
        if pt[pid, T_BUSY]:
            continue
        if pid >= NP:
            h = nd[pid - NP, N_SRCH]
            if h >= 0:
                hd[n, H_HI] = pk[h, P_HI]
                hd[n, H_LO] = pk[h, P_LO]
                hd[n, H_PID] = pid
                hd[n, H_VC] = -1
                hd[n, H_PKT] = h
                n += 1
            continue
        base = pid * V
        for vc in range(V):
            q = base + vc
            if qs[q, Q_LEN]:
                h = q_at(prm, qs, q, 0)
                hd[n, H_HI] = pk[h, P_HI]
                hd[n, H_LO] = pk[h, P_LO]
                hd[n, H_PID] = pid
                hd[n, H_VC] = vc
                hd[n, H_PKT] = h
                n += 1
    ctr[C_DIRTY_N] = 0
    if n == 0:
        return
    if prm[K_PREFETCH]:
        prefetch_heads(prm, pk, qs, pt, codes, ph, rtab, route, rhops, hd, n)
    sort_heads(hd, order, n)
    if n > 1 and prm[K_ESCAPE_FIRST]:
        escape_priority(prm, pt, hd, order, n)
    for j in range(n):
        i = order[j]
        pid = hd[i, H_PID]
        if pt[pid, T_BUSY]:
            continue
        if hd[i, H_VC] < 0:
            try_inject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, codes,
                       ph, rtab, route, rhops, used, dec, rng, pid - NP,
                       hd[i, H_PKT])
        else:
            forward(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl, codes,
                    ph, rtab, route, rhops, rng, rec, ost, pid, hd[i, H_VC],
                    hd[i, H_PKT])
