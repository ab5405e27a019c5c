"""The compiled engine's event loop: the model of :mod:`icsim.simulator.engines.simpy` restated in
numba over flat arrays (:mod:`.layout`), rule for rule and in the same order, so that both
engines give the same results bit for bit where the model is deterministic (and, drawing from
the same tie-break stream, where it is not).

Read it beside the SimPy engine: the functions carry the same names (``select`` with
``free_for``, ``forward``/``tx_end``/``ready``, ``try_inject``, ``eject``, ``decide_credit``;
``receive``/``ack``/``send_from_nic``/``decide_acknak``; ``may_send``, ``next_tick``,
``nic_ack``; ``sink``), in modules of the same concerns (calendar, fabric, admission, credit,
ack/nak, NIC).

:func:`run` works on raw views of the arrays (:mod:`.rawarray`): not reference-counted, and
an integer index is never read as counted from the end, so that an id read from an array
indexes another without a sign test.  A negative id means "none" here and is tested first.


A port waiting for room downstream is a bit in the wait words of each queue q it waits on
(``qs[q, Q_WAIT:]``), bit i for the router's i-th upstream port (``ups[node, i]``: the port
entering it by its input i; the NIC last), where the SimPy engine keeps lists; a packet's age
``(birth * N + src) << 32 | seq`` is the pair (``P_HI``, ``P_LO``).  The loop returns to Python
at batch boundaries to report progress or to grow a pool (``ST_*``) and resumes where it
stopped.

What runs per event or per decision phase is inlined into :func:`run` by LLVM
(``forceinline=True``, LLVM's ``alwaysinline``): a call passes every array as its eight-word
descriptor and counts a reference to each, which for the thirty arrays a decision phase took
when this was measured cost as much as the phase's work (inlining ``decide_credit`` made the
8x8x8 OFR case 1.7x as fast).
Numba's own inlining (``inline="always"``) ran as fast (measured) but copies the callee's
IR at every call site and level, which made the first compile take 3-10 minutes; left to LLVM
it takes about one.  A callee compiled for a ``forceinline`` function inherits the flag, so the
functions that stay calls (the rare or long paths: ``heap_pop``, ``sort_heads``, the plan
decisions, ...) say ``forceinline=False``.  The per-VC numbers live at the end of ``prm``
(:func:`vc_info`) and the ACK/NAK rings at the end of ``arr``, which keeps the argument lists
short.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from icsim.simulator.engines.compiled.acknak import ack, decide_acknak
from icsim.simulator.engines.compiled.app import app_event, post_message
from icsim.simulator.engines.compiled.calendar import advance_slot, at, ev_free, slot_emptied
from icsim.simulator.engines.compiled.credit import decide_credit, ready, tx_end
from icsim.simulator.engines.compiled.fabric import mark_dirty
from icsim.simulator.engines.compiled.layout import (C_ACTIONS, C_ARR_N, C_CUR_SLOT, C_DEAD_SINCE,
                                                     C_DIL_OVER_N, C_FAULT, C_LAT_N,
                                                     C_DIRTY_N, C_END, C_EV_FREE_N, C_EXPECTED,
                                                     C_IN_NETWORK, C_IN_SOURCES, C_LAST_CONSUME,
                                                     C_LEFT_OFF, C_MEASURED, C_MEAS_DELIV, C_NOOP,
                                                     C_NOW, C_NSAMPLES, C_PK_FREE_N, C_PROGRESS_PS,
                                                     C_SEQ, C_SNAP_SAMPLES, C_STOPPED, C_STOP_RULE,
                                                     C_STOP_SEQ, C_WHEEL_N, C_WIN_DELIV, C_YIELD,
                                                     EV_ACK, EV_APP_START, EV_ARRIVAL,
                                                     EV_CHAN_FREE, EV_NIC_ACK, EV_NIC_TX_END,
                                                     EV_NIC_WAKE, EV_POST, EV_PROGRESS, EV_READY,
                                                     EV_SAMPLE, EV_STOP, EV_TX_END, EV_WATCHDOG,
                                                     EV_WINDOW_CLOSED, E_A, E_B, E_KIND, E_NEXT,
                                                     E_SEQ, E_TIME, F_GAMMA1_NS, F_GROWTH_LIMIT,
                                                     F_WINDOW_NS, K_ACKNAK, K_CYC, K_EV_RESERVE,
                                                     K_NP, K_OPEN, K_PK_RESERVE, K_PREFETCH,
                                                     K_PROGRESS, K_REC_RESERVE,
                                                     K_SAW, K_STOP_SATURATED, K_T, K_WATCHDOG,
                                                     K_WMASK, NO_EVENT, N_ACCEPTED, N_NIC_WAKE,
                                                     N_OUTSTANDING, N_SNAP_ACCEPTED, Q_OCC,
                                                     Q_OCC_SUM, Q_PACKETS, Q_SNAP_PACKETS,
                                                     ST_DEADLOCK, ST_DONE, ST_FAULT, ST_GROW,
                                                     ST_PROGRESS,
                                                     S_HEAD, S_HINT, S_TAIL, S_TAIL_T, T_BUSY,
                                                     T_LINK_BUSY, T_SNAP_BUSY, T_WAKE_AT, W_DST,
                                                     W_MEASURED, W_PACKETS, W_SRC, W_TIME,
                                                     YIELD_PROGRESS, YIELD_WATCHDOG, N_SRC_SEQ,
                                                     T_INJECTED)
from icsim.simulator.engines.compiled.nic import finish, nic_ack
from icsim.simulator.engines.compiled.prefetching import prefetch_event
from icsim.simulator.engines.compiled.rawarray import raw
from icsim.simulator.engines.compiled.rules import window_rule
from icsim.simulator.engines.compiled.traffic import post_open


# ============================================================================= the loop
@njit(cache=True, forceinline=True)
def post(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, wl, i):
    """Post every message created at the time of message i; schedule the next time."""
    t = wl[i, W_TIME]
    n = wl.shape[0]
    while i < n and wl[i, W_TIME] == t:
        post_message(ctr, prm, pk, pt, nd, dl, wl[i, W_SRC], wl[i, W_DST], wl[i, W_PACKETS], t,
                     wl[i, W_MEASURED])
        i += 1
    if i < n:
        at(ctr, prm, ev, wheel, heap, wl[i, W_TIME], EV_POST, i, 0)


@njit(cache=True, forceinline=False)
def sample(ctr, qs, pt, nd, smp, which):
    """``which`` -1: a window sample (time, packets at NICs, each node's backlog: packets
    created there less those its router accepted; queue occupancies summed); 0 and 1: the
    statistics at the start and the end of the window."""
    if which < 0:
        i = ctr[C_NSAMPLES]
        smp[i, 0] = ctr[C_NOW]
        smp[i, 1] = ctr[C_IN_SOURCES]
        np0 = pt.shape[0] - nd.shape[0]
        smp[i, 2:] = nd[:, N_SRC_SEQ] - pt[np0:, T_INJECTED]
        ctr[C_NSAMPLES] = i + 1
        qs[:, Q_OCC_SUM] += qs[:, Q_OCC]
    elif which == 0:
        qs[:, Q_SNAP_PACKETS] = qs[:, Q_PACKETS]
        pt[:, T_SNAP_BUSY] = busy_so_far(ctr, pt)
        nd[:, N_SNAP_ACCEPTED] = nd[:, N_ACCEPTED]
    else:
        qs[:, Q_SNAP_PACKETS] = qs[:, Q_PACKETS] - qs[:, Q_SNAP_PACKETS]
        pt[:, T_SNAP_BUSY] = busy_so_far(ctr, pt) - pt[:, T_SNAP_BUSY]
        nd[:, N_SNAP_ACCEPTED] = nd[:, N_ACCEPTED] - nd[:, N_SNAP_ACCEPTED]
        ctr[C_SNAP_SAMPLES] = ctr[C_NSAMPLES]


@njit(cache=True)
def busy_so_far(ctr, pt):
    """Each channel's busy time up to now (SimPy ``_busy_so_far``): serialisation summed as
    transmissions started, less what of the one under way lies after now.  ``T_BUSY`` holds
    when a credit channel's transmission ends (an ack/nak channel's ``T_FREE_AT``, the same
    column); 0, 1 (a NIC or ejection channel) or a past time leave nothing to take off."""
    return pt[:, T_LINK_BUSY] - np.maximum(pt[:, T_BUSY] - ctr[C_NOW], 0)


@njit(cache=True, forceinline=True)
def pending(ctr):
    """Whether the slot's edge has a decision phase: a port was marked or a packet arrived."""
    return ctr[C_DIRTY_N] > 0 or ctr[C_ARR_N] > 0 or ctr[C_LEFT_OFF] > 0


@njit(cache=True)
def run(numbers, calendar, fabric, routes, records, traffic):
    """Run until the stop, a deadlock, or a reason to return to Python (an ``ST_*`` code).

    Batches: the actions at one time scheduled before the batch began, in order; then, at a
    clock edge, the decision phase if something waits for it; a batch that leaves work at a
    time between edges gets its decision at the next edge (the SimPy calendar's rules).  There
    SimPy schedules a no-op action unless an action is already due at that edge
    (``Calendar._run_batch``); ``C_NOOP`` stands for it, so that ``C_ACTIONS`` counts it as the
    SimPy engine's ``events`` does, alone or in the edge's batch.  The arrays come in the five
    records of :mod:`.layout` (``RECORDS``), unpacked here once per call."""
    ctr, prm, fprm, rng = numbers
    ev, wheel, heap = calendar
    pk, qs, pt, nd, dl, ups, arr, hd, order = fabric
    codes, ph, rtab, route, rhops, used, dec = routes
    mlat, mder, mdil, mdov, dist_a, dist_b, dist, smp, oa, osucc, ost, ofifo = records
    wl, gn, gs, due, gt = traffic
    ctr, prm, fprm, ev, wheel, heap = raw(ctr), raw(prm), raw(fprm), raw(ev), raw(wheel), raw(heap)
    pk, qs, pt, nd, dl = raw(pk), raw(qs), raw(pt), raw(nd), raw(dl)
    ups, codes, ph, rtab = raw(ups), raw(codes), raw(ph), raw(rtab)
    route, rhops, used = raw(route), raw(rhops), raw(used)
    rng, hd, order = raw(rng), raw(hd), raw(order)
    rec = (raw(mlat), raw(mder), raw(mdil), raw(mdov), raw(dist_a), raw(dist_b),
           raw(dist))                                                  # ``layout.Records``
    arr, smp, wl = raw(arr), raw(smp), raw(wl)
    oa, osucc, ost, ofifo = raw(oa), raw(osucc), raw(ost), raw(ofifo)
    gn, gs, due, gt = raw(gn), raw(gs), raw(due), raw(gt)
    cyc = prm[K_CYC]
    wmask = prm[K_WMASK]
    acknak = prm[K_ACKNAK]
    prefetching = prm[K_PREFETCH]
    while True:
        if (ctr[C_EV_FREE_N] < prm[K_EV_RESERVE] or ctr[C_PK_FREE_N] < prm[K_PK_RESERVE]
                or mlat.shape[0] - ctr[C_LAT_N] < prm[K_REC_RESERVE]
                or mdov.shape[0] - ctr[C_DIL_OVER_N] < prm[K_REC_RESERVE]):
            return ST_GROW
        pos = ctr[C_CUR_SLOT] & wmask
        decide_now = False
        if wheel[pos, S_HEAD] == NO_EVENT:
            # the slot is exhausted: the no-op batch at its edge, if a batch left work for it
            if ctr[C_NOOP]:
                ctr[C_NOOP] = 0
                ctr[C_NOW] = ctr[C_CUR_SLOT] * cyc
                ctr[C_ACTIONS] += 1
                decide_now = pending(ctr)
            elif not advance_slot(ctr, prm, ev, wheel, heap):
                ctr[C_END] = ctr[C_NOW]
                return ST_DONE
            else:
                continue
        else:
            # one batch
            e = wheel[pos, S_HEAD]
            t = ev[e, E_TIME]
            ctr[C_NOW] = t
            if ctr[C_NOOP] and t == ctr[C_CUR_SLOT] * cyc:
                ctr[C_NOOP] = 0                        # the no-op is this batch's first action
                ctr[C_ACTIONS] += 1
            marker = ctr[C_SEQ]
            while e != NO_EVENT and ev[e, E_TIME] == t and ev[e, E_SEQ] < marker:
                nxt = ev[e, E_NEXT]
                wheel[pos, S_HEAD] = nxt
                if nxt == NO_EVENT:
                    wheel[pos, S_TAIL] = NO_EVENT
                    slot_emptied(wheel, pos)
                if wheel[pos, S_HINT] == e:
                    wheel[pos, S_HINT] = NO_EVENT           # the hint leaves the list
                ctr[C_WHEEL_N] -= 1
                ctr[C_ACTIONS] += 1
                kind = ev[e, E_KIND]
                a = ev[e, E_A]
                b = ev[e, E_B]
                ev_free(ctr, prm, ev, e)
                if prefetching and nxt != NO_EVENT:
                    prefetch_event(prm, ev, pk, qs, pt, nd, nxt)
                if kind == EV_READY:
                    ready(ctr, prm, pk, qs, pt, dl, a, b)
                elif kind == EV_TX_END:
                    tx_end(ctr, prm, qs, pt, dl, ups, a, b)
                elif kind == EV_ARRIVAL:
                    i = ctr[C_ARR_N]
                    arr[i, 0] = a
                    arr[i, 1] = b
                    ctr[C_ARR_N] = i + 1
                elif kind == EV_ACK:
                    ack(ctr, prm, pk, qs, pt, dl, ups, a, b)
                elif kind == EV_CHAN_FREE:
                    pt[a, T_WAKE_AT] = -1
                    mark_dirty(ctr, prm, pt, dl, a)
                elif kind == EV_NIC_TX_END:
                    pt[prm[K_NP] + a, T_BUSY] = 0
                    if not (prm[K_SAW] and nd[a, N_OUTSTANDING]):
                        mark_dirty(ctr, prm, pt, dl, prm[K_NP] + a)   # stop-and-wait waits its ACK
                elif kind == EV_NIC_WAKE:
                    nd[a, N_NIC_WAKE] = -1
                    mark_dirty(ctr, prm, pt, dl, prm[K_NP] + a)
                elif kind == EV_NIC_ACK:
                    nic_ack(ctr, prm, fprm, ev, wheel, heap, pk, pt, nd, dl, a, b)
                elif kind == EV_POST:
                    if prm[K_OPEN]:
                        post_open(ctr, prm, fprm, ev, wheel, heap, pk, pt, nd, dl, gn, gs, gt,
                                  due)
                    else:
                        post(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, wl, a)
                elif kind >= EV_APP_START:
                    app_event(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, oa, osucc, ost, ofifo,
                              kind - EV_APP_START, a)
                elif kind == EV_SAMPLE:
                    sample(ctr, qs, pt, nd, smp, a)
                elif kind == EV_WINDOW_CLOSED:
                    ctr[C_EXPECTED] = ctr[C_MEASURED]
                    if ctr[C_MEAS_DELIV] == ctr[C_EXPECTED]:
                        lc = ctr[C_LAST_CONSUME]
                        finish(ctr, prm, ev, wheel, heap, lc if lc > t else t)
                    elif prm[K_STOP_SATURATED]:
                        rule = window_rule(ctr[C_WIN_DELIV], ctr[C_MEASURED],
                                           smp[:ctr[C_NSAMPLES], 1], prm[K_T],
                                           fprm[F_WINDOW_NS], fprm[F_GAMMA1_NS],
                                           fprm[F_GROWTH_LIMIT])
                        if rule:
                            ctr[C_STOP_RULE] = rule
                            finish(ctr, prm, ev, wheel, heap, t)
                elif kind == EV_STOP:
                    if ctr[C_STOPPED] == 0:
                        ctr[C_STOPPED] = 1
                        ctr[C_STOP_SEQ] = ctr[C_SEQ]
                elif kind == EV_WATCHDOG:
                    if ctr[C_IN_NETWORK] > 0 and t - ctr[C_PROGRESS_PS] >= prm[K_WATCHDOG]:
                        ctr[C_DEAD_SINCE] = ctr[C_PROGRESS_PS]
                        return ST_DEADLOCK
                    at(ctr, prm, ev, wheel, heap, t + prm[K_WATCHDOG], EV_WATCHDOG, 0, 0)
                    ctr[C_YIELD] |= YIELD_WATCHDOG         # Python looks for stuck cycles
                elif kind == EV_PROGRESS:
                    ctr[C_YIELD] |= YIELD_PROGRESS
                    at(ctr, prm, ev, wheel, heap, t + prm[K_PROGRESS], EV_PROGRESS, 0, 0)
                e = wheel[pos, S_HEAD]
            # the events of the slot's list are of that slot: t is on its edge or before it
            edge_t = ctr[C_CUR_SLOT] * cyc
            if t == edge_t:
                decide_now = pending(ctr)
            elif not ctr[C_NOOP] and pending(ctr) and not (
                    wheel[pos, S_HEAD] != NO_EVENT and wheel[pos, S_TAIL_T] == edge_t):
                ctr[C_NOOP] = 1                        # SimPy's no-op batch at the edge
        if decide_now:
            if acknak:
                decide_acknak(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl,
                              ups, codes, ph, rtab, route, rhops, used,
                              dec, rng, rec, ost, hd, order, arr)
            else:
                decide_credit(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl,
                              codes, ph, rtab, route, rhops, used, dec, rng, rec, ost, hd,
                              order)
            ctr[C_LEFT_OFF] = 0       # a mark left off while deciding was this phase's too
        if ctr[C_STOPPED]:
            # SimPy processes the events already scheduled before its stop event — the one
            # batch that existed at the stop time — then nothing more
            t = ctr[C_NOW]
            pos = ctr[C_CUR_SLOT] & wmask
            e = wheel[pos, S_HEAD]
            older_exists = False
            while e != NO_EVENT and ev[e, E_TIME] == t:
                if ev[e, E_SEQ] < ctr[C_STOP_SEQ]:
                    older_exists = True
                    break
                e = ev[e, E_NEXT]
            if older_exists and ctr[C_STOPPED] == 1:
                ctr[C_STOPPED] = 2                     # run that batch, then stop
                continue
            ctr[C_END] = t
            return ST_DONE
        if ctr[C_FAULT]:
            return ST_FAULT                            # the guard's breach (Python raises)
        if ctr[C_YIELD]:
            return ST_PROGRESS                         # Python clears C_YIELD
