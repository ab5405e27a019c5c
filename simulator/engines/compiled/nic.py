"""The NIC and the sink: stop-and-wait pacing (``next_tick``, ``may_send``, ``nic_ack``) and
consumption (``sink``, ``finish``), as the SimPy engine's
:mod:`~icsim.simulator.engines.simpy.nic` and the stats collector.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from icsim.simulator.engines.compiled.calendar import at
from icsim.simulator.engines.compiled.fabric import mark_dirty, srcq_insert_by_age
from icsim.simulator.engines.compiled.layout import (C_DELIVERED, C_EXPECTED, C_LAST_CONSUME,
                                                     C_DIL_OVER_N, C_HOPS_SUM, C_LAT_N,
                                                     C_LAT_SUM, C_LAT_TOTAL, C_MEASURED,
                                                     C_MEAS_DELIV, C_NET_SUM, C_NOW, C_STARVED,
                                                     C_STOP_AT,
                                                     C_STOP_RULE, C_WAIT_BIRTH, C_WAIT_MAX,
                                                     C_WIN_DELIV, EV_APP_ARRIVED, EV_NIC_WAKE,
                                                     EV_STOP, F_LATENCY_LIMIT, F_NIC_TICK, K_APP,
                                                     K_DIL_D, K_DIL_H, K_HAS_WINDOW, K_NP,
                                                     K_SAW, K_STARVE, K_W0, K_W1,
                                                     N_ACCEPTED, N_FINISH, N_M_LAT, N_M_RECV,
                                                     N_M_SENT, N_NIC_FREE_AT,
                                                     N_NIC_WAKE, N_OUTSTANDING, N_SRCH, OS_PENDING,
                                                     P_AVAIL, P_BIRTH, P_DER, P_ENTER, P_HOPS,
                                                     P_DST, P_MEAS, P_SRC, P_TDST, P_TSRC)
from icsim.simulator.engines.compiled.rules import latency_rule
from icsim.simulator.results import LATENCY


# ============================================================================= sink
@njit(cache=True, forceinline=True)
def finish(ctr, prm, ev, wheel, heap, t):
    """All measured packets are consumed (or the window says so): stop at t."""
    if ctr[C_STOP_AT] < 0:
        ctr[C_STOP_AT] = t
        now = ctr[C_NOW]
        at(ctr, prm, ev, wheel, heap, t if t > now else now, EV_STOP, 0, 0)


@njit(cache=True, forceinline=True)
def sink(ctr, prm, fprm, ev, wheel, heap, pk, nd, rec, ost, p, t):
    """The collector: a packet is consumed at t (``simulator.stats.Collector``), a measured one
    counted in ``rec`` (``layout.Records``: its latency kept, its hops, distance, deroute code,
    source and destination counted; ``simulator.measure.Measured.add``); with a latency limit
    (``F_LATENCY_LIMIT`` > 0, finite mode) the SimPy engine's ``latency_check``."""
    ctr[C_DELIVERED] += 1
    if t > ctr[C_LAST_CONSUME]:
        ctr[C_LAST_CONSUME] = t
    dst = pk[p, P_TDST]                  # per terminal
    if t > nd[dst, N_FINISH]:
        nd[dst, N_FINISH] = t
    if prm[K_HAS_WINDOW] and prm[K_W0] <= t < prm[K_W1]:
        ctr[C_WIN_DELIV] += 1
        nd[dst, N_ACCEPTED] += 1
    if pk[p, P_MEAS]:
        i = ctr[C_MEAS_DELIV]
        ctr[C_MEAS_DELIV] = i + 1
        mlat, mder, mdil, mdov, dist_a, dist_b, dist = rec
        lat = t - pk[p, P_BIRTH]
        mlat[ctr[C_LAT_N]] = lat
        ctr[C_LAT_N] += 1
        ctr[C_LAT_TOTAL] += lat
        hops = pk[p, P_HOPS]
        ctr[C_HOPS_SUM] += hops
        mder[pk[p, P_DER]] += 1
        src = pk[p, P_TSRC]
        nd[src, N_M_SENT] += 1
        nd[src, N_M_LAT] += lat
        nd[dst, N_M_RECV] += 1
        d = dist[dist_a[pk[p, P_SRC]] + dist_b[pk[p, P_DST]]]
        if hops < prm[K_DIL_H] and d < prm[K_DIL_D]:
            mdil[hops * prm[K_DIL_D] + d] += 1
        else:
            j = ctr[C_DIL_OVER_N]
            mdov[j, 0] = hops
            mdov[j, 1] = d
            ctr[C_DIL_OVER_N] = j + 1
        ctr[C_NET_SUM] += t - pk[p, P_ENTER]
        wait = pk[p, P_ENTER] - pk[p, P_BIRTH]
        if wait > ctr[C_WAIT_MAX]:
            ctr[C_WAIT_MAX] = wait
        if wait > prm[K_STARVE] >= 0:
            ctr[C_STARVED] += 1
        if i + 1 == ctr[C_EXPECTED]:
            finish(ctr, prm, ev, wheel, heap, ctr[C_LAST_CONSUME])
        if fprm[F_LATENCY_LIMIT] > 0:
            birth = pk[p, P_BIRTH]
            ctr[C_LAT_SUM] += t - birth
            ctr[C_WAIT_BIRTH] -= birth
            if ctr[C_STOP_AT] < 0 and latency_rule(
                    ctr[C_LAT_SUM], ctr[C_MEASURED] - ctr[C_MEAS_DELIV], ctr[C_WAIT_BIRTH],
                    ctr[C_NOW], ctr[C_EXPECTED], fprm[F_LATENCY_LIMIT]):
                ctr[C_STOP_RULE] = LATENCY
                finish(ctr, prm, ev, wheel, heap, ctr[C_NOW])
        if prm[K_APP]:                   # the closed loop: a packet of send P_MEAS - 1
            op = pk[p, P_MEAS] - 1
            ost[op, OS_PENDING] -= 1
            if ost[op, OS_PENDING] == 0:  # its message's last: it arrives at t
                at(ctr, prm, ev, wheel, heap, t, EV_APP_ARRIVED, op, 0)


# ============================================================================= NIC
@njit(cache=True, forceinline=False)
def next_tick(tick, t):
    """The first polling tick at or after t (ticks at k * tick from 0)."""
    k = np.int64(t // tick)
    while np.int64(np.round(k * tick)) < t:
        k += 1
    return np.int64(np.round(k * tick))


@njit(cache=True, forceinline=True)
def may_send(ctr, prm, fprm, ev, wheel, heap, pk, nd, node, p, now):
    """Availability and handshake rules of the NIC; schedules a wake-up if not yet."""
    if prm[K_SAW]:
        if nd[node, N_OUTSTANDING]:
            return False            # the acknowledgement will wake the NIC
        a = pk[p, P_AVAIL]
        f = nd[node, N_NIC_FREE_AT]
        t_ok = next_tick(fprm[F_NIC_TICK], a if a > f else f)
    else:
        t_ok = pk[p, P_AVAIL]
    if t_ok > now:
        if nd[node, N_NIC_WAKE] != t_ok:
            nd[node, N_NIC_WAKE] = t_ok
            at(ctr, prm, ev, wheel, heap, t_ok, EV_NIC_WAKE, node, 0)
        return False
    return True


@njit(cache=True, forceinline=True)
def nic_ack(ctr, prm, fprm, ev, wheel, heap, pk, pt, nd, dl, node, nak):
    """The router's ACK (nak < 0) or NAK (the packet comes back) reaches the NIC."""
    now = ctr[C_NOW]
    nd[node, N_OUTSTANDING] -= 1
    nd[node, N_NIC_FREE_AT] = now
    if nak >= 0:
        srcq_insert_by_age(pk, nd, node, nak)
    if prm[K_SAW] and nd[node, N_SRCH] >= 0:
        # the next send is on the next polling tick: wake the NIC then, not now
        a = pk[nd[node, N_SRCH], P_AVAIL]
        t = next_tick(fprm[F_NIC_TICK], now if now > a else a)
        if t > now:
            if nd[node, N_NIC_WAKE] != t:
                nd[node, N_NIC_WAKE] = t
                at(ctr, prm, ev, wheel, heap, t, EV_NIC_WAKE, node, 0)
            return
    mark_dirty(ctr, prm, pt, dl, prm[K_NP] + node)
