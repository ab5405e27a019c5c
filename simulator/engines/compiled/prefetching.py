"""Rows asked for ahead of use (``speed.prefetch``): what an event, a decision phase's heads and
the candidates of their packets will read, in stages of ``PF_STEP`` (only on networks larger
than the cache: ``K_PREFETCH``).
"""

from __future__ import annotations

from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from icsim.simulator.engines.compiled.fabric import (ctrl_row, ctrl_tail, keeps_nak_vc, port_of,
                                                     q_at, reverse)
from icsim.simulator.engines.compiled.layout import (E_A, E_B, E_KIND, EV_ACK, EV_ARRIVAL,
                                                     EV_CHAN_FREE, EV_NIC_ACK, EV_NIC_TX_END,
                                                     EV_NIC_WAKE, EV_READY, EV_TX_END, H_HI, H_PID,
                                                     H_PKT, H_VC, K_NP, K_NPORTS, K_P1, K_V, N_NCOL,
                                                     N_SRCH, P_ENTER, P_NEXT, P_SRC, Q_LEN, T_CHEAD,
                                                     T_CLEN, T_DOWN)
from icsim.simulator.engines.compiled.routing import peek_candidates
from icsim.simulator.engines.compiled.speed import divide, prefetch, prefetch_cell


# ============================================================================= prefetching
# On a network whose state outgrows the cache (``K_PREFETCH``, set by the engine), the rows an
# event or a decision will read are asked for ahead (``prefetch``): the loop's misses, one
# after the other on a chain of dependent loads, then overlap.  Nothing here changes the
# model's state (``candidates`` only reads it).
@njit(cache=True, forceinline=True)
def prefetch_event(prm, ev, pk, qs, pt, nd, e):
    """The rows event e will touch, asked for while the one before it runs."""
    kind = ev[e, E_KIND]
    a = ev[e, E_A]
    b = ev[e, E_B]
    if kind == EV_READY:
        prefetch(pk, a)
        prefetch(qs, b)
        prefetch(pt, divide(prm, b, K_V))
    elif kind == EV_TX_END:
        prefetch(pt, a)
        prefetch(qs, b)
    elif kind == EV_ARRIVAL:
        prefetch(pk, a)
        if b >= 0:
            prefetch(pt, divide(prm, b, K_V))
    elif kind == EV_ACK:
        prefetch(qs, a)
        if b >= 0 or keeps_nak_vc(prm):         # the port's row (``ack``)
            prefetch(pt, divide(prm, a, K_V))
        if b >= 0:                              # a NAK: the packet goes back into its queue
            prefetch(pk, b)
    elif kind == EV_CHAN_FREE:
        prefetch(pt, a)
    elif kind == EV_NIC_ACK or kind == EV_NIC_TX_END or kind == EV_NIC_WAKE:
        prefetch(pt, prm[K_NP] + a)
        prefetch_node(nd, a)


@njit(cache=True, forceinline=True)
def prefetch_node(nd, node):
    """A node's row (``N_NCOL`` int64, not line-aligned: two lines at most)."""
    prefetch_cell(nd, node, 0)
    prefetch_cell(nd, node, N_NCOL - 1)


@njit(cache=True, forceinline=True)
def prefetch_queues(prm, qs, pid):
    """The rows of router port pid's VC queues (a cache line each)."""
    V = prm[K_V]
    for q in range(pid * V, pid * V + V):
        prefetch(qs, q)


@njit(cache=True, forceinline=True)
def prefetch_head_packets(prm, pk, qs, pid):
    """The rows of the head packets of router port pid's queues (its queue rows read)."""
    V = prm[K_V]
    for q in range(pid * V, pid * V + V):
        if qs[q, Q_LEN]:
            prefetch(pk, q_at(prm, qs, q, 0))


@njit(cache=True, forceinline=True)
def prefetch_ports(prm, pk, qs, dl, n):
    """The queue rows of the first n dirty ports, then the rows of their head packets."""
    NP = prm[K_NP]
    for i in range(n):
        if dl[i] < NP:
            prefetch_queues(prm, qs, dl[i])
    for i in range(n):
        if dl[i] < NP:
            prefetch_head_packets(prm, pk, qs, dl[i])


@njit(cache=True, forceinline=True)
def prefetch_candidates(prm, pk, qs, codes, ph, rtab, route, rhops, node, p):
    """The rows of the queues packet p may be routed to at ``node``."""
    mask, vc_all, _, port1, vc1 = peek_candidates(prm, pk, codes, ph, rtab, route, rhops, node,
                                                  p)
    base = node * prm[K_P1]
    V = prm[K_V]
    if vc_all >= 0:
        rest = mask
        while rest:
            prefetch(qs, (base + trailing_zeros(rest)) * V + vc_all)
            rest &= rest - 1
    if vc1 >= 0:
        prefetch(qs, (base + port1) * V + vc1)


@njit(cache=True, forceinline=True)
def prefetch_heads(prm, pk, qs, pt, codes, ph, rtab, route, rhops, hd, n):
    """What forwarding the n heads of a credit decision phase will read: the queues each may
    go to downstream (NIC heads are routed when injected, ejection heads need none)."""
    for i in range(n):
        pid = hd[i, H_PID]
        if hd[i, H_VC] >= 0 and port_of(prm, pid) < prm[K_NPORTS]:
            prefetch_candidates(prm, pk, qs, codes, ph, rtab, route, rhops,
                                pt[pid, T_DOWN], hd[i, H_PKT])


# A decision phase of the reference profile holds thousands of arrivals and dirty ports on
# 16x16x16 (about 2,500 and 1,400).  Their rows are asked for in stages a few items ahead of
# the one being decided, each stage reading what the one before brought: far enough ahead to
# overlap the misses, near enough that the rows are still in cache when their item comes.
PF_STEP = 4


@njit(cache=True, forceinline=True)
def prefetch_arrival_stage(prm, pk, qs, pt, codes, ph, rtab, route, rhops, arr,
                           hd, j, na):
    """For the arrivals of an ack/nak phase, in their order in ``hd``: 3 steps ahead, the
    packet's row and its upstream port's; 2 ahead, the queues it may go to and the reverse
    port; 1 ahead, the control ring entry its ACK/NAK will take."""
    k = j + 3 * PF_STEP
    if 0 <= k < na:
        prefetch(pk, hd[k, H_PID])
        if hd[k, H_PKT] >= 0:
            prefetch(pt, divide(prm, hd[k, H_PKT], K_V))
    k = j + 2 * PF_STEP
    if 0 <= k < na and hd[k, H_PKT] >= 0:
        pid_up = divide(prm, hd[k, H_PKT], K_V)
        prefetch(pt, reverse(prm, pt, pid_up))
        prefetch_candidates(prm, pk, qs, codes, ph, rtab, route, rhops,
                            pt[pid_up, T_DOWN], hd[k, H_PID])
    k = j + PF_STEP
    if 0 <= k < na and hd[k, H_PKT] >= 0:
        prefetch(arr, ctrl_tail(prm, pt, reverse(prm, pt, divide(prm, hd[k, H_PKT], K_V))))


@njit(cache=True, forceinline=True)
def prefetch_port_stage(prm, pk, qs, pt, nd, arr, hd, i, n):
    """For the dirty ports of an ack/nak phase (``hd[:, H_HI]``): 3 steps ahead, the port's
    row and its queue rows, ring buffers included (a NIC's: its node's row); 2 ahead, a NIC's
    head message's row; 1 ahead, the head packets and the control ring entry it would send
    (an ejection port's: the whole head packet and its node's row, for the sink)."""
    NP = prm[K_NP]
    k = i + 3 * PF_STEP
    if 0 <= k < n:
        pid = hd[k, H_HI]
        prefetch(pt, pid)
        if pid < NP:
            prefetch_queues(prm, qs, pid)
        else:
            prefetch_node(nd, pid - NP)
    k = i + 2 * PF_STEP
    if 0 <= k < n:
        pid = hd[k, H_HI]
        if pid >= NP:
            p = nd[pid - NP, N_SRCH]
            if p >= 0:
                prefetch_cell(pk, p, 0)
                prefetch_cell(pk, p, P_NEXT)
    k = i + PF_STEP
    if 0 <= k < n and hd[k, H_HI] < NP:
        pid = hd[k, H_HI]
        prefetch_head_packets(prm, pk, qs, pid)
        port = port_of(prm, pid)
        if port >= prm[K_NPORTS]:
            if qs[pid * prm[K_V], Q_LEN]:
                p = q_at(prm, qs, pid * prm[K_V], 0)
                prefetch_cell(pk, p, P_SRC)
                prefetch_cell(pk, p, P_ENTER)
                prefetch_node(nd, divide(prm, pid - port, K_P1))
        elif pt[pid, T_CLEN]:
            prefetch(arr, ctrl_row(prm, pid, pt[pid, T_CHEAD]))
