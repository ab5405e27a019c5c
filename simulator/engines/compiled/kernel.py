"""The compiled engine's event loop: the model of :mod:`icsim.simulator.engines.simpy` restated in
numba over flat arrays, rule for rule and in the same order, so that both engines give the same
results bit for bit where the model is deterministic (and, drawing from the same tie-break
stream, where it is not).

Read it beside the SimPy engine: the functions carry the same names (``select`` with
``free_for``, ``forward``/``tx_end``/``ready``, ``try_inject``, ``eject``, ``decide_credit``;
``receive``/``ack``/``send_from_nic``/``decide_acknak``; ``may_send``, ``next_tick``,
``nic_ack``; ``sink``).  What differs is how state is held — as a few named-column arrays, passed
explicitly (numba passes arrays by reference at no cost; records or tuples of arrays cost tens of
nanoseconds per call in reference counting):

=========  ================================================================================
``ctr``    the run's changing numbers (``C_*``: now, sequence, counters)
``prm``    the spec's numbers (``K_*``: sizes, times in ps, flags)
``pk``     the packet pool, one row per packet slot (``P_*`` columns); slots are recycled
``ev``     the event pool (``E_*``); ``wheel`` the timing wheel's per-cycle lists (``S_*``),
           ``heap`` the events beyond it — together the SimPy engine's batches, in the same
           (time, insertion) order
``qs``     per queue (``Q_*``): occupancy, ring-buffer head and length, statistics, wait bits
           and the ring buffer itself (``capacity`` packet rows, from column ``K_QBUF``)
``pt``     per port id (``T_*``), NICs last: channel busy, dirty, ack/nak state, statistics
``nd``     per node (``N_*``): the NIC's source queue (a linked list through ``P_NEXT``, a
           row per message until its packets leave: ``P_LEFT``), pacing and handshake state,
           statistics
``rng``    the tie-break stream: NumPy's PCG64 state, stepped here exactly as NumPy steps it
=========  ================================================================================

:func:`run` works on raw views of these arrays (:mod:`.rawarray`): not reference-counted, and
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
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from icsim.simulator.engines.compiled.pcg import random
from icsim.simulator.engines.compiled.decide import choose_profit, option_target
from icsim.simulator.engines.compiled.rawarray import raw
from icsim.simulator.results import LATENCY, latency_rule, window_rule

# ----------------------------------------------------------------------------- event kinds
EV_NOOP, EV_POST, EV_TX_END, EV_READY, EV_NIC_TX_END, EV_NIC_WAKE, EV_NIC_ACK = 0, 1, 2, 3, 4, 5, 6
EV_ARRIVAL, EV_ACK, EV_CHAN_FREE, EV_SAMPLE = 7, 8, 9, 10
EV_WINDOW_CLOSED, EV_STOP, EV_WATCHDOG, EV_PROGRESS = 13, 14, 15, 16

# ----------------------------------------------------------------------------- status codes
ST_DONE, ST_PROGRESS, ST_GROW, ST_DEADLOCK = 0, 1, 2, 3
# why the loop yielded with ST_PROGRESS (bits of C_YIELD)
YIELD_PROGRESS, YIELD_WATCHDOG = 1, 2

# ----------------------------------------------------------------------------- routing programs
# a phase's key (``routing.program``: offset, pair, route) and a decision's rule
KEY_OFFSET, KEY_PAIR, KEY_ROUTE = 0, 1, 2
D_NONE, D_UNIFORM, D_RANDOM_TARGET, D_PROFIT = 0, 1, 2, 3
# a phase's row of ``ph``: its key, where its ports and escape tables start in ``rtab`` (-1:
# no escape table, the lowest port of the mask), the VCs of its two groups (-1: none), the
# phase after its target, whether the packet's ``sel`` filters its ports
PH_KEY, PH_PORTS, PH_ESCAPE, PH_VC_ALL, PH_VC, PH_NEXT, PH_FILTERED, PH_NCOL = range(8)

# ----------------------------------------------------------------------------- ctr
(C_NOW, C_SEQ, C_IN_NETWORK, C_IN_SOURCES, C_PROGRESS_PS, C_LINK_HOPS, C_RETRANS, C_ACTIONS,
 C_DELIVERED, C_MEAS_DELIV, C_WIN_DELIV, C_GENERATED, C_MEASURED, C_EXPECTED, C_LAST_CONSUME,
 C_STOP_AT, C_STOPPED, C_STOP_SEQ, C_CUR_SLOT, C_WHEEL_N, C_HEAP_N, C_EV_FREE,
 C_EV_FREE_N, C_PK_FREE, C_PK_FREE_N, C_DIRTY_N, C_ARR_N, C_NSAMPLES, C_YIELD, C_END,
 C_DEAD_SINCE, C_NOOP, C_SNAP_SAMPLES, C_STOP_RULE, C_LAT_SUM, C_WAIT_BIRTH, C_CHUNK_FREE,
 C_LEFT_OFF, C_NCTR) = range(39)

# ----------------------------------------------------------------------------- prm
(K_N, K_P1, K_P1_INV, K_NPORTS, K_V, K_V_INV, K_NP, K_CAP, K_INJ_MIN, K_ORDERED,
 K_ESCAPE_FIRST, K_CUT, K_ACKNAK, K_SAW, K_CYC, K_CYC_INV, K_DELAY, K_SER, K_LAT, K_SER_NIC,
 K_LAT_NIC, K_SER_ACK, K_SER_ACK_NIC, K_WATCHDOG, K_HAS_WINDOW, K_W0, K_W1, K_PROGRESS, K_WSIZE,
 K_WMASK, K_NPV_NODE, K_NPV_NODE_INV, K_WWORDS, K_ADAPTIVE_VC, K_CTRL_CAP, K_EV_RESERVE,
 K_PK_RESERVE, K_DECISION, K_BASE, K_ROUTES, K_MIN_OPT, K_AVAIL, K_VARIANT, K_MDD, K_CTRL0, K_CHUNK,
 K_CHUNKS_END, K_STOP_SATURATED, K_PREFETCH, K_QBUF, K_NPRM) = range(51)
# a divisor K_X is followed by K_X_INV, its multiplier ceil(2**63 / prm[K_X]) (``divide``)
# after the K_NPRM numbers: V rows of V_NCOL per-VC numbers (``vc_info``)
F_NIC_TICK, F_ETA, F_WINDOW_NS, F_GAMMA1_NS, F_GROWTH_LIMIT, F_LATENCY_LIMIT, F_NPRM = range(7)

# ----------------------------------------------------------------------------- columns
# a packet's row: what a hop reads or writes (one cache line: the pool is allocated 64-byte
# aligned), then what its NIC queue and the sink read (the second line), then its time of
# entering the network and its port filter (read only in a filtered phase); 24 columns, so
# that every row starts a cache line
(P_HI, P_LO, P_DST, P_RS, P_READY, P_HOPS, P_FPORT, P_FVC, P_RI, P_AVAIL, P_NEXT, P_LEFT, P_SRC,
 P_BIRTH, P_MEAS, P_DER, P_ENTER, P_SEL) = range(18)
P_NCOL = 24
# the rows of the event pool, the timing wheel, the queues and the ports are padded to whole
# cache lines and allocated 64-byte aligned (``aligned_zeros``): an event, a slot or a queue
# (with the default 8 packets of room) is one line, a port's per-hop columns the first line of
# its two
E_TIME, E_SEQ, E_KIND, E_A, E_B, E_NEXT, E_CHAIN = range(7)
E_NCOL = 8
# a queue's row (int32): its numbers, its wait bits (``Q_WAIT`` on: a word per 32 inputs of its
# router) and its ring buffer of packet rows (``K_QBUF`` on), padded to 64 bytes (``q_ncol``):
# the queue a hop pops from or appends to is one cache line, where the ring buffer in an array
# of its own made it two (8x8x8 OFR credit 1.04x, an eighth of 16x16x16 reference 1.03x,
# 16x16x16 OFR credit 0.99x: docs/performance.md)
Q_OCC, Q_HEAD, Q_LEN, Q_PACKETS, Q_OCC_SUM, Q_SNAP_PACKETS, Q_READY_LO, Q_WAIT = range(8)
# a port's row: T_DOWN is its link's downstream router and T_IN the input by which the link
# enters it (a NIC's: its router's NIC input), where a port that waits for room there sets its
# wait bit; the link's reverse port is that router's port T_IN (``reverse``).  Every column a hop
# reads is on the row's first cache line, under either flow control, because two columns mean
# one thing under credit and another under ack/nak (each flow control reads only its own):
# T_BUSY (credit; with ack/nak, NIC and ejection channels: 1 while the channel is busy) is, for
# an ack/nak network channel, T_FREE_AT (the time it is free); T_FIRST (credit: the port's
# oldest head in ``escape_priority``, -1 between phases) is, with ack/nak, T_WAKE_AT (the time
# of the port's scheduled wake-up, -1: none).  The second line: the VC of the port's last NAK
# and a bit for each VC rejected in its current round (``keeps_nak_vc``), and the window's
# snapshot.
(T_BUSY, T_DIRTY, T_DOWN, T_CHEAD, T_IN, T_LINK_BUSY, T_FIRST, T_CLEN, T_NAK_VC,
 T_SNAP_BUSY, T_NAK_MASK) = range(11)
#: the most VCs oldest-first arbitration under ack/nak keeps a round for (``T_NAK_MASK``'s bits)
MAX_ROUND_VCS = 62
T_FREE_AT = T_BUSY
T_WAKE_AT = T_FIRST
T_NCOL = 16
(N_SRCH, N_SRCT, N_NEXT_AVAIL, N_SRC_SEQ, N_NIC_WAKE, N_OUTSTANDING, N_NIC_FREE_AT, N_FINISH,
 N_ACCEPTED, N_SNAP_ACCEPTED, N_NCOL) = range(11)
R_LAT, R_NET, R_HOPS, R_SRC, R_DST, R_DER, R_NCOL = range(7)
H_HI, H_LO, H_PID, H_VC, H_PKT, H_NCOL = range(6)
W_TIME, W_SRC, W_DST, W_PACKETS, W_MEASURED, W_NCOL = range(6)
V_BUBBLE, V_ORDER, V_RANK, V_NCOL = range(4)
# a timing-wheel slot: its list's head and tail, the tail's time, the search hint and its time,
# its last chunk of the event pool and the rows of it taken (``at``)
S_HEAD, S_TAIL, S_TAIL_T, S_HINT, S_HINT_T, S_CHUNK, S_USED = range(7)
S_NCOL = 8

NO_EVENT = -1
# keys a radix sort orders (``sort_keyed``); fewer, a quicksort
RADIX_FROM = 512


def wait_words(num_inputs):
    """Wait words of a queue's row (``K_WWORDS``): a bit per input of its router, 32 to a
    word (``wait_on``)."""
    return (num_inputs + 31) // 32


def q_buf_col(num_inputs):
    """The column of a queue's row where its ring buffer starts (``K_QBUF``): after the
    ``Q_*`` numbers and its wait words."""
    return Q_WAIT + wait_words(num_inputs)


def q_ncol(num_inputs, capacity):
    """Columns of a queue's row: the ``Q_*`` numbers, its wait words and its ring buffer
    (``capacity`` packet rows, from column ``K_QBUF``), rounded up to 16 (a 64-byte cache
    line)."""
    return (q_buf_col(num_inputs) + capacity + 15) // 16 * 16


# ============================================================================= prefetching
def _prefetch(context, builder, aty, ary, idx):
    """Emit ``llvm.prefetch`` (read, keep in all cache levels) of the element ``idx`` of the
    array value ``ary`` of numba type ``aty``."""
    ptr = cgutils.get_item_pointer(context, builder, aty, context.make_array(aty)(context, builder,
                                                                                  ary), idx)
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = builder.module.declare_intrinsic(         # named for the pointer type (p0 or p0i8)
        "llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])


@intrinsic
def prefetch(typingctx, a, i):
    """Ask the CPU to bring row i of array ``a`` into cache (``llvm.prefetch``, x86
    ``prefetcht0``), without waiting for it."""
    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        zero = context.get_constant(types.intp, 0)
        _prefetch(context, builder, aty, args[0], [args[1]] + [zero] * (aty.ndim - 1))
        return context.get_dummy_value()
    return types.void(a, types.intp), codegen


@intrinsic
def prefetch_cell(typingctx, a, i, j):
    """:func:`prefetch` for the line that holds ``a[i, j]`` (a row of several lines)."""
    def codegen(context, builder, signature, args):
        _prefetch(context, builder, signature.args[0], args[0], [args[1], args[2]])
        return context.get_dummy_value()
    return types.void(a, types.intp, types.intp), codegen


@njit(cache=True, forceinline=True)
def vc_info(prm, vc, col):
    """A VC's ``V_*`` number (bubble rule, escape-priority order and rank), kept after the
    ``K_*`` numbers."""
    return prm[K_NPRM + vc * V_NCOL + col]


# ============================================================================= division
def inverse(d: int) -> int:
    """The multiplier :func:`divide` uses for the divisor d, as ``prm`` keeps it after d:
    ``ceil(2**63 / d)``, an unsigned 64-bit number stored as the int64 of its bits."""
    m = -(-(1 << 63) // d)
    return m - (1 << 64) if m >= 1 << 63 else m


@intrinsic
def mul_shr63(typingctx, x, m):
    """``(x * m) >> 63`` for x >= 0 and m read as unsigned, the product in 128 bits (x86: one
    ``mul`` and a shift)."""
    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(p, ir.Constant(i128, 63)), ir.IntType(64))
    return types.int64(types.int64, types.int64), codegen


@njit(cache=True, forceinline=True)
def divide(prm, x, k):
    """``x // prm[k]`` for ``x >= 0`` by a multiplication: ``prm[k + 1]`` holds
    ``M = ceil(2**63 / d)`` (:func:`inverse`), and ``(x * M) >> 63`` is ``x // d`` whenever
    ``x * d < 2**63`` (with ``e = M * d - 2**63 < d``, ``x * M / 2**63 = x / d + x * e /
    (d * 2**63)``, and the second term is below ``1 / d``).  The loop divides on every event
    (a time in ps by the cycle, a port or queue id by the ports or VCs per router), and a
    64-bit integer division takes 40-90 cycles on Intel cores before Ice Lake; the product
    takes a few.  Past that range (a time of 2**63 / d ps), it divides."""
    d = prm[k]
    if mul_shr63(x, d):
        return x // d
    return mul_shr63(x, prm[k + 1])


@njit(cache=True, forceinline=True)
def port_of(prm, pid):
    """The port (0 .. K_NPORTS; K_NPORTS is the ejection port) of port id ``pid``."""
    return pid - divide(prm, pid, K_P1) * prm[K_P1]


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
            ctr[C_CUR_SLOT] += 1
        ctr[C_NOOP] = 0
        limit = ctr[C_CUR_SLOT] + prm[K_WSIZE]
        while ctr[C_HEAP_N] > 0:
            slot = slot_of(prm, ev[heap[0], E_TIME])
            if slot >= limit:
                break
            wheel_insert(ctr, prm, ev, wheel, heap_pop(ctr, ev, heap), slot)
        if wheel[ctr[C_CUR_SLOT] & prm[K_WMASK], S_HEAD] != NO_EVENT:
            return True


# ============================================================================= packets
@njit(cache=True, forceinline=True)
def packet_new(ctr, prm, pk, src, dst, birth, age_lo, measured, avail):
    p = ctr[C_PK_FREE]
    ctr[C_PK_FREE] = pk[p, P_NEXT]
    ctr[C_PK_FREE_N] -= 1
    pk[p, P_SRC] = src
    pk[p, P_DST] = dst
    pk[p, P_BIRTH] = birth
    pk[p, P_HI] = birth * prm[K_N] + src
    pk[p, P_LO] = age_lo
    pk[p, P_MEAS] = measured
    pk[p, P_DER] = 0
    pk[p, P_RS] = -256                # registers(-1, 0): no target, phase 0
    pk[p, P_SEL] = -1
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
        nxt_p = packet_new(ctr, prm, pk, pk[p, P_SRC], pk[p, P_DST], pk[p, P_BIRTH],
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
    for i in range(prm[K_P1]):               # the ports leading into the router, and its NIC
        if (qs[q, Q_WAIT + (i >> 5)] >> (i & 31)) & 1:
            mark_dirty(ctr, prm, pt, dl, ups[node, i])
    for w in range(words):
        qs[q, Q_WAIT + w] = 0


# ============================================================================= routing
# The routing program (``icsim.routing.program``): its phases are rows of ``ph`` (``PH_*``),
# its tables slices of ``rtab``, its source routes ``route``/``rhops``, its decision's options
# the record ``dec`` (``decide``).  A packet's registers: ``P_RS`` holds its target and phase,
# ``target * 256 + phase`` (target -1: none, so ``P_RS < 0``), ``P_SEL`` its port filter and
# ``P_RI`` its place on a source route.  A candidate set is four numbers, where the SimPy
# engine has tuples of groups: ``(mask, vc_all, port, vc)`` — every port of ``mask`` on
# ``vc_all`` (none when ``vc_all < 0``), then the one queue ``(port, vc)`` (none when
# ``vc < 0``).
@njit(cache=True, forceinline=True)
def registers(target, phase):
    """``P_RS`` of a packet heading for ``target`` (-1: its destination) in ``phase``."""
    return target * 256 + phase


@njit(cache=True, forceinline=True)
def candidates(prm, pk, codes, ph, rtab, route, rhops, node, p):
    """The program's candidates for packet p at ``node`` (``Interpreter.candidates``, rules
    1-5 of ``icsim.routing.program``): ``(mask, vc_all, port, vc)`` (above)."""
    rs = pk[p, P_RS]
    f = rs & 255
    t = rs >> 8
    if t == node:                     # its target reached: the next phase, to its destination
        f = ph[f, PH_NEXT]
        t = -1
    key = ph[f, PH_KEY]
    if key == KEY_ROUTE:
        pair = pk[p, P_SRC] * prm[K_N] + pk[p, P_DST]
        i = pk[p, P_RI]
        if i >= route[pair, 1]:
            return 0, -1, prm[K_NPORTS], 0
        h = route[pair, 0] + i
        return 0, -1, rhops[h, 0], rhops[h, 1]
    if t < 0:
        t = pk[p, P_DST]
    if t == node:
        return 0, -1, prm[K_NPORTS], 0
    if key == KEY_OFFSET:
        k = codes[t] - codes[node] + prm[K_BASE]
    else:
        k = node * prm[K_N] + t
    mask = rtab[ph[f, PH_PORTS] + k]
    if ph[f, PH_FILTERED]:
        mask &= pk[p, P_SEL]
    esc = ph[f, PH_ESCAPE]
    port = rtab[esc + k] if esc >= 0 else trailing_zeros(mask)
    return mask, ph[f, PH_VC_ALL], port, ph[f, PH_VC]


@njit(cache=True, forceinline=True)
def admitted(prm, pk, ph, p, q2):
    """``Interpreter.admitted``: a packet admitted at its target goes on in the next phase to
    its destination; in a route phase it moves along its route."""
    rs = pk[p, P_RS]
    if rs >= 0 and (rs >> 8) == divide(prm, q2, K_NPV_NODE):
        rs = registers(-1, ph[rs & 255, PH_NEXT])
        pk[p, P_RS] = rs
    if prm[K_ROUTES] and ph[rs & 255, PH_KEY] == KEY_ROUTE:
        if port_of(prm, divide(prm, q2, K_V)) != prm[K_NPORTS]:
            pk[p, P_RI] += 1


# ============================================================================= admission
@njit(cache=True, forceinline=True)
def free_for(prm, qs, q, port, vc, from_port, from_vc, need_min):
    """Free slots of queue q if it admits the packet, else -1 (the bubble rule)."""
    free = prm[K_CAP] - qs[q, Q_OCC]
    if port == prm[K_NPORTS]:
        return free if free >= 1 else -1         # ejection: no bubble, no threshold
    need = 2 if vc_info(prm, vc, V_BUBBLE) and (port != from_port or vc != from_vc) else 1
    if need < need_min:
        need = need_min
    return free if free >= need else -1


@njit(cache=True, forceinline=True)
def select(prm, qs, rng, mask, vc_all, port1, vc1, node, from_port, from_vc, need_min,
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
    # group 1: the mask's ports, in port order
    best = -1
    best_free = 0
    ties = 0
    ordered = prm[K_ORDERED]
    rest = mask
    while rest:
        port = trailing_zeros(rest)
        rest &= rest - 1
        q = (base + port) * V + vc_all
        free = free_for(prm, qs, q, port, vc_all, from_port, from_vc, need_min)
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
    if best >= 0:
        return best
    # group 2: one queue
    q = (base + port1) * V + vc1
    if vc1 >= 0 and free_for(prm, qs, q, port1, vc1, from_port, from_vc, need_min) >= 0:
        return q
    if wait_input >= 0:
        rest = mask
        while rest:
            wait_on(prm, qs, (base + trailing_zeros(rest)) * V + vc_all, wait_input)
            rest &= rest - 1
        if vc1 >= 0:
            wait_on(prm, qs, q, wait_input)
    return -1


@njit(cache=True, forceinline=True)
def local_adaptive_used(prm, qs, pt, used, node):
    """Used slots of the adaptive queue of each direction port of ``node`` (-1: absent)."""
    base = node * prm[K_P1]
    V = prm[K_V]
    a = prm[K_ADAPTIVE_VC]
    for port in range(prm[K_NPORTS]):
        if pt[base + port, T_DOWN] >= 0:
            used[port] = qs[(base + port) * V + a, Q_OCC]
        else:
            used[port] = -1


@njit(cache=True, forceinline=True)
def inject_route(prm, fprm, pk, qs, pt, used, dec, rng, node, p):
    """The program's decision at injection (``Interpreter.inject``): an option of ``dec``
    (its phase, port filter and deroute kind) and perhaps a target."""
    rule = prm[K_DECISION]
    if rule == D_NONE:
        return
    target = -1
    if rule == D_PROFIT:
        local_adaptive_used(prm, qs, pt, used, node)
        o = choose_profit(dec, node, pk[p, P_DST], used, prm[K_CAP], fprm[F_ETA],
                          prm[K_VARIANT], prm[K_MDD], rng)
        if o < 0:
            o = prm[K_MIN_OPT]
        elif dec.opt_target[o]:
            target = option_target(dec, node, o)
    elif rule == D_UNIFORM:
        n = prm[K_MIN_OPT] + 1                        # the options, rows 0 .. n - 1
        o = int(random(rng) * n) if n > 1 else 0
    else:                                             # D_RANDOM_TARGET
        target = int(random(rng) * prm[K_N])
        o = 0
    pk[p, P_RS] = registers(target, np.int64(dec.opt_phase[o]))
    pk[p, P_SEL] = dec.opt_sel[o]
    pk[p, P_DER] = dec.opt_kind[o]


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
    mask, vc_all, port1, vc1 = candidates(prm, pk, codes, ph, rtab, route, rhops, node, p)
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
        if hd[i, H_VC] >= 0 and port_of(prm, pid) != prm[K_NPORTS]:
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
        if port == prm[K_NPORTS]:
            if qs[pid * prm[K_V], Q_LEN]:
                p = q_at(prm, qs, pid * prm[K_V], 0)
                prefetch_cell(pk, p, P_SRC)
                prefetch_cell(pk, p, P_ENTER)
                prefetch_node(nd, divide(prm, pid - port, K_P1))
        elif pt[pid, T_CLEN]:
            prefetch(arr, ctrl_row(prm, pid, pt[pid, T_CHEAD]))


# ============================================================================= sink
@njit(cache=True, forceinline=True)
def finish(ctr, prm, ev, wheel, heap, t):
    """All measured packets are consumed (or the window says so): stop at t."""
    if ctr[C_STOP_AT] < 0:
        ctr[C_STOP_AT] = t
        now = ctr[C_NOW]
        at(ctr, prm, ev, wheel, heap, t if t > now else now, EV_STOP, 0, 0)


@njit(cache=True, forceinline=True)
def sink(ctr, prm, fprm, ev, wheel, heap, pk, nd, rec, p, t):
    """The collector: a packet is consumed at t (``simulator.stats.Collector``); with a latency
    limit (``F_LATENCY_LIMIT`` > 0, finite mode) the SimPy engine's ``latency_check``."""
    ctr[C_DELIVERED] += 1
    if t > ctr[C_LAST_CONSUME]:
        ctr[C_LAST_CONSUME] = t
    dst = pk[p, P_DST]
    if t > nd[dst, N_FINISH]:
        nd[dst, N_FINISH] = t
    if prm[K_HAS_WINDOW] and prm[K_W0] <= t < prm[K_W1]:
        ctr[C_WIN_DELIV] += 1
        nd[dst, N_ACCEPTED] += 1
    if pk[p, P_MEAS]:
        i = ctr[C_MEAS_DELIV]
        ctr[C_MEAS_DELIV] = i + 1
        rec[i, R_LAT] = t - pk[p, P_BIRTH]
        rec[i, R_NET] = t - pk[p, P_ENTER]
        rec[i, R_HOPS] = pk[p, P_HOPS]
        rec[i, R_SRC] = pk[p, P_SRC]
        rec[i, R_DST] = dst
        rec[i, R_DER] = pk[p, P_DER]
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


# ============================================================================= credit
@njit(cache=True, forceinline=True)
def forward(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl, codes, ph,
            rtab, route, rhops, rng, rec, pid, vc, p):
    """Try to move the head p of queue (pid, vc) across its channel (SimPy ``forward``)."""
    port = port_of(prm, pid)
    if port == prm[K_NPORTS]:
        eject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, rec, pid, p)
        return True
    v = pt[pid, T_DOWN]
    mask, vc_all, port1, vc1 = candidates(prm, pk, codes, ph, rtab, route, rhops, v, p)
    q2 = select(prm, qs, rng, mask, vc_all, port1, vc1, v, port, vc, 1, pt[pid, T_IN])
    if q2 < 0:
        return False
    now = ctr[C_NOW]
    src_q = pid * prm[K_V] + vc
    q_pop(prm, qs, src_q)
    qs[q2, Q_OCC] += 1
    pt[pid, T_BUSY] = 1
    ctr[C_PROGRESS_PS] = now
    ctr[C_LINK_HOPS] += 1
    ser = prm[K_SER]
    pt[pid, T_LINK_BUSY] += ser
    qs[src_q, Q_PACKETS] += 1
    t_end = now + ser
    at(ctr, prm, ev, wheel, heap, t_end, EV_TX_END, pid, src_q)
    pk[p, P_HOPS] += 1
    pk[p, P_FPORT] = port
    pk[p, P_FVC] = vc
    admitted(prm, pk, ph, p, q2)
    at_edge(ctr, prm, ev, wheel, heap, (now if prm[K_CUT] else t_end) + prm[K_LAT], EV_READY,
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
def eject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, rec, pid, p):
    """The head of an ejection queue crosses the ejection link to the sink."""
    now = ctr[C_NOW]
    src_q = pid * prm[K_V]
    q_pop(prm, qs, src_q)
    pt[pid, T_BUSY] = 1
    ctr[C_PROGRESS_PS] = now
    ctr[C_IN_NETWORK] -= 1
    t_end = now + prm[K_SER_NIC]
    at(ctr, prm, ev, wheel, heap, t_end, EV_TX_END, pid, src_q)
    sink(ctr, prm, fprm, ev, wheel, heap, pk, nd, rec, p, t_end + prm[K_LAT_NIC])
    packet_free(ctr, pk, p)


@njit(cache=True, forceinline=True)
def try_inject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, codes, ph,
               rtab, route, rhops, used, dec, rng, node, p):
    """A NIC offers its head packet to its router (SimPy ``try_inject``)."""
    now = ctr[C_NOW]
    if not may_send(ctr, prm, fprm, ev, wheel, heap, pk, nd, node, p, now):
        return False
    inject_route(prm, fprm, pk, qs, pt, used, dec, rng, node, p)
    mask, vc_all, port1, vc1 = candidates(prm, pk, codes, ph, rtab, route, rhops, node, p)
    nic = prm[K_NP] + node
    q2 = select(prm, qs, rng, mask, vc_all, port1, vc1, node, -1, -1, prm[K_INJ_MIN],
                prm[K_NPORTS])                    # the NIC's input
    if q2 < 0:
        return False
    srcq_popleft(ctr, prm, pk, nd, node)
    ctr[C_IN_SOURCES] -= 1
    ctr[C_IN_NETWORK] += 1
    qs[q2, Q_OCC] += 1
    pt[nic, T_BUSY] = 1
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
    admitted(prm, pk, ph, p, q2)
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
                  codes, ph, rtab, route, rhops, used, dec, rng, rec, hd,
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
                    ph, rtab, route, rhops, rng, rec, pid, hd[i, H_VC],
                    hd[i, H_PKT])


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
        mask, vc_all, port1, vc1 = candidates(prm, pk, codes, ph, rtab, route, rhops, v, p)
        q2 = select(prm, qs, rng, mask, vc_all, port1, vc1, v, pk[p, P_FPORT],
                    pk[p, P_FVC], 1, -1)
    else:
        v = -1 - src
        mask, vc_all, port1, vc1 = candidates(prm, pk, codes, ph, rtab, route, rhops, v, p)
        q2 = select(prm, qs, rng, mask, vc_all, port1, vc1, v, -1, -1, prm[K_INJ_MIN], -1)
    nak = -1
    if q2 >= 0:
        qs[q2, Q_OCC] += 1
        ctr[C_PROGRESS_PS] = now
        if src >= 0:
            pk[p, P_HOPS] += 1
            ctr[C_LINK_HOPS] += 1
        else:
            ctr[C_IN_SOURCES] -= 1
            ctr[C_IN_NETWORK] += 1
            pk[p, P_ENTER] = now
        admitted(prm, pk, ph, p, q2)
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
        at(ctr, prm, ev, wheel, heap, now + prm[K_SER_ACK_NIC] + prm[K_LAT_NIC], EV_NIC_ACK, v,
           nak)


@njit(cache=True, forceinline=True)
def keeps_nak_vc(prm):
    """Whether ports keep the VC of their last NAK and their round's rejected VCs
    (``T_NAK_VC``, ``T_NAK_MASK``): only for the oldest-first arbitration, which reads them
    (``oldest_unrejected``; escape priority does not), so that under escape priority an ACK
    need not read its port's row (``ack``, ``prefetch_event``)."""
    return not prm[K_ESCAPE_FIRST]


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
                  hd, order, arr):
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
                inject_route(prm, fprm, pk, qs, pt, used, dec, rng, -1 - src, p)
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
        if port == prm[K_NPORTS]:
            if qs[base, Q_LEN] and not pt[pid, T_BUSY]:
                eject(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, rec, pid,
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
            fa = now + prm[K_SER_ACK]
            pt[pid, T_FREE_AT] = fa
            pt[pid, T_LINK_BUSY] += prm[K_SER_ACK]
            at(ctr, prm, ev, wheel, heap, fa + prm[K_LAT], EV_ACK, src_q, nak)
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
            fa = now + prm[K_SER]
            pt[pid, T_FREE_AT] = fa
            pt[pid, T_LINK_BUSY] += prm[K_SER]
            qs[base + best, Q_PACKETS] += 1
            pk[p, P_FPORT] = port
            pk[p, P_FVC] = best
            at(ctr, prm, ev, wheel, heap, (now if prm[K_CUT] else fa) + prm[K_LAT], EV_ARRIVAL,
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


# ============================================================================= the loop
@njit(cache=True, forceinline=True)
def post(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, wl, i):
    """Post every message created at the time of message i; schedule the next time."""
    t = wl[i, W_TIME]
    n = wl.shape[0]
    avail = prm[K_AVAIL]
    NP = prm[K_NP]
    while i < n and wl[i, W_TIME] == t:
        src = wl[i, W_SRC]
        k = wl[i, W_PACKETS]
        measured = wl[i, W_MEASURED]
        seq = nd[src, N_SRC_SEQ]
        nd[src, N_SRC_SEQ] = seq + k
        start = t if t > nd[src, N_NEXT_AVAIL] else nd[src, N_NEXT_AVAIL]
        # one row for the message's k packets (``srcq_popleft``): packet j is seq + j, its
        # NIC may send it from start + j * avail
        if k > 0:
            p = packet_new(ctr, prm, pk, src, wl[i, W_DST], t, seq, measured, start)
            pk[p, P_LEFT] = k
            srcq_append(pk, nd, src, p)
        nd[src, N_NEXT_AVAIL] = start + k * avail
        ctr[C_IN_SOURCES] += k
        mark_dirty(ctr, prm, pt, dl, NP + src)
        ctr[C_GENERATED] += k
        if measured:
            ctr[C_MEASURED] += k
            ctr[C_WAIT_BIRTH] += k * t
        i += 1
    if i < n:
        at(ctr, prm, ev, wheel, heap, wl[i, W_TIME], EV_POST, i, 0)


@njit(cache=True, forceinline=False)
def sample(ctr, qs, pt, nd, smp, which):
    """``which`` -1: a window sample (time, packets at NICs; queue occupancies summed);
    0 and 1: the statistics at the start and the end of the window."""
    if which < 0:
        i = ctr[C_NSAMPLES]
        smp[i, 0] = ctr[C_NOW]
        smp[i, 1] = ctr[C_IN_SOURCES]
        ctr[C_NSAMPLES] = i + 1
        qs[:, Q_OCC_SUM] += qs[:, Q_OCC]
    elif which == 0:
        qs[:, Q_SNAP_PACKETS] = qs[:, Q_PACKETS]
        pt[:, T_SNAP_BUSY] = pt[:, T_LINK_BUSY]
        nd[:, N_SNAP_ACCEPTED] = nd[:, N_ACCEPTED]
    else:
        qs[:, Q_SNAP_PACKETS] = qs[:, Q_PACKETS] - qs[:, Q_SNAP_PACKETS]
        pt[:, T_SNAP_BUSY] = pt[:, T_LINK_BUSY] - pt[:, T_SNAP_BUSY]
        nd[:, N_SNAP_ACCEPTED] = nd[:, N_ACCEPTED] - nd[:, N_SNAP_ACCEPTED]
        ctr[C_SNAP_SAMPLES] = ctr[C_NSAMPLES]


@njit(cache=True, forceinline=True)
def pending(ctr):
    """Whether the slot's edge has a decision phase: a port was marked or a packet arrived."""
    return ctr[C_DIRTY_N] > 0 or ctr[C_ARR_N] > 0 or ctr[C_LEFT_OFF] > 0


@njit(cache=True)
def run(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl, ups, codes,
        ph, rtab, route, rhops, used, dec, rng, rec, hd, order, arr,
        smp, wl):
    """Run until the stop, a deadlock, or a reason to return to Python (an ``ST_*`` code).

    Batches: the actions at one time scheduled before the batch began, in order; then, at a
    clock edge, the decision phase if something waits for it; a batch that leaves work at a
    time between edges gets its decision at the next edge (the SimPy calendar's rules).  There
    SimPy schedules a no-op action unless an action is already due at that edge
    (``Calendar._run_batch``); ``C_NOOP`` stands for it, so that ``C_ACTIONS`` counts it as the
    SimPy engine's ``events`` does, alone or in the edge's batch."""
    ctr, prm, fprm, ev, wheel, heap = raw(ctr), raw(prm), raw(fprm), raw(ev), raw(wheel), raw(heap)
    pk, qs, pt, nd, dl = raw(pk), raw(qs), raw(pt), raw(nd), raw(dl)
    ups, codes, ph, rtab = raw(ups), raw(codes), raw(ph), raw(rtab)
    route, rhops, used = raw(route), raw(rhops), raw(used)
    rng, rec, hd, order = raw(rng), raw(rec), raw(hd), raw(order)
    arr, smp, wl = raw(arr), raw(smp), raw(wl)
    cyc = prm[K_CYC]
    wmask = prm[K_WMASK]
    acknak = prm[K_ACKNAK]
    prefetching = prm[K_PREFETCH]
    while True:
        if ctr[C_EV_FREE_N] < prm[K_EV_RESERVE] or ctr[C_PK_FREE_N] < prm[K_PK_RESERVE]:
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
                    post(ctr, prm, ev, wheel, heap, pk, pt, nd, dl, wl, a)
                elif kind == EV_SAMPLE:
                    sample(ctr, qs, pt, nd, smp, a)
                elif kind == EV_WINDOW_CLOSED:
                    ctr[C_EXPECTED] = ctr[C_MEASURED]
                    if ctr[C_MEAS_DELIV] == ctr[C_EXPECTED]:
                        lc = ctr[C_LAST_CONSUME]
                        finish(ctr, prm, ev, wheel, heap, lc if lc > t else t)
                    elif prm[K_STOP_SATURATED]:
                        rule = window_rule(ctr[C_WIN_DELIV], ctr[C_MEASURED],
                                           smp[:ctr[C_NSAMPLES], 1], prm[K_N],
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
                              dec, rng, rec, hd, order, arr)
            else:
                decide_credit(ctr, prm, fprm, ev, wheel, heap, pk, qs, pt, nd, dl,
                              codes, ph, rtab, route, rhops, used, dec, rng, rec, hd, order)
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
        if ctr[C_YIELD]:
            return ST_PROGRESS                         # Python clears C_YIELD
