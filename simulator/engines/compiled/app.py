"""The closed loop in the kernel: the SimPy engine's :class:`~icsim.simulator.engines.simpy.app.
AppRunner` over the arrays ``oa``/``osucc``/``ost``/``ofifo`` (:mod:`.layout`), in the same
order (its module docstring): ready operations post their messages, done ones are taken first
in, first out, and each makes its dependants ready in the order written."""

from __future__ import annotations

from numba import njit

from icsim.simulator.engines.compiled.calendar import at
from icsim.simulator.engines.compiled.fabric import mark_dirty, packet_new, srcq_append
from icsim.simulator.engines.compiled.layout import (C_GENERATED, C_IN_SOURCES, C_MEASURED,
                                                     C_NOW, C_OPS_LEFT, C_WAIT_BIRTH,
                                                     EV_APP_DONE, K_AVAIL, K_NP, N_NEXT_AVAIL,
                                                     N_SRC_SEQ, OA_DST, OA_DUR, OA_KIND,
                                                     OA_MATCH, OA_PACKETS, OA_SRC, OA_SUCC0,
                                                     OA_SUCC1, OS_ARRIVED, OS_DEPS, OS_DONE,
                                                     OS_PENDING, OS_READY, P_LEFT)
from icsim.simulator.engines.compiled.nic import finish

SEND, RECV, COMPUTE = 0, 1, 2                 # ``traffic.apps.ops``


@njit(cache=True, forceinline=True)
def post_message(ctr, prm, pk, pt, nd, dl, src, dst, k, t, measured):
    """A message of k packets from terminal ``src`` to ``dst``, created at t: one row for its
    packets in the NIC queue (``srcq_popleft`` splits it), packet j available from start + j
    * ``K_AVAIL`` (the SimPy ``Fabric.post_message``)."""
    seq = nd[src, N_SRC_SEQ]
    nd[src, N_SRC_SEQ] = seq + k
    start = t if t > nd[src, N_NEXT_AVAIL] else nd[src, N_NEXT_AVAIL]
    if k > 0:
        p = packet_new(ctr, prm, pk, src, dst, t, seq, measured, start)
        pk[p, P_LEFT] = k
        srcq_append(pk, nd, src, p)
    nd[src, N_NEXT_AVAIL] = start + k * prm[K_AVAIL]
    ctr[C_IN_SOURCES] += k
    mark_dirty(ctr, prm, pt, dl, prm[K_NP] + src)
    ctr[C_GENERATED] += k
    if measured:
        ctr[C_MEASURED] += k
        ctr[C_WAIT_BIRTH] += k * t


@njit(cache=True, forceinline=False)
def op_ready(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, ost, ofifo, i, tail):
    """Operation i is ready now (``AppRunner._ready``); the new tail of the done queue."""
    now = ctr[C_NOW]
    ost[i, OS_READY] = now
    kind = oa[i, OA_KIND]
    if kind == SEND:
        post_message(ctr, prm, pk, pt, nd, dl, oa[i, OA_SRC], oa[i, OA_DST],
                     oa[i, OA_PACKETS], now, i + 1)
    elif kind == RECV:
        if ost[i, OS_PENDING]:
            return tail
    elif kind == COMPUTE and oa[i, OA_DUR] > 0:
        at(ctr, prm, ev, wheel, heap, now + oa[i, OA_DUR], EV_APP_DONE, i, 0)
        return tail
    ofifo[tail] = i
    return tail + 1


@njit(cache=True, forceinline=False)
def drain(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, osucc, ost, ofifo, tail):
    """Take the done operations first in, first out (``AppRunner._drain``); finish the run
    when none is left."""
    now = ctr[C_NOW]
    head = 0
    while head < tail:
        i = ofifo[head]
        head += 1
        ost[i, OS_DONE] = now
        ctr[C_OPS_LEFT] -= 1
        for j in range(oa[i, OA_SUCC0], oa[i, OA_SUCC1]):
            s = osucc[j]
            ost[s, OS_DEPS] -= 1
            if ost[s, OS_DEPS] == 0:
                tail = op_ready(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, ost, ofifo, s,
                                tail)
    if ctr[C_OPS_LEFT] == 0:
        finish(ctr, prm, ev, wheel, heap, now)


@njit(cache=True, forceinline=False)
def app_event(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, osucc, ost, ofifo, kind, a):
    """``EV_APP_START`` (every operation without dependencies is ready, in order),
    ``EV_APP_ARRIVED`` (send a's message arrived: the sink counted its packets) or
    ``EV_APP_DONE`` (computation a done)."""
    tail = 0
    if kind == 0:
        for i in range(oa.shape[0]):
            if ost[i, OS_DEPS] == 0:
                tail = op_ready(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, ost, ofifo, i,
                                tail)
    elif kind == 1:
        r = oa[a, OA_MATCH]
        ost[r, OS_PENDING] = 0
        ost[r, OS_ARRIVED] = ctr[C_NOW]
        if ost[r, OS_DEPS] != 0:
            return
        ofifo[0] = r
        tail = 1
    else:
        ofifo[0] = a
        tail = 1
    drain(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, osucc, ost, ofifo, tail)
