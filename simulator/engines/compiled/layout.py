"""The compiled engine's state, laid out: what every array of a run holds, by named column.

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

The builder (:mod:`.engine`) makes these arrays and hands them to :func:`.loop.run` in five
named records, the same for every run (:class:`Numbers`, :class:`Calendar`, :class:`Fabric`,
:class:`Routes`, :class:`Records`); the functions the loop calls take the arrays one by one.
Every module of the engine names the columns it reads from here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

# ----------------------------------------------------------------------------- event kinds
EV_NOOP, EV_POST, EV_TX_END, EV_READY, EV_NIC_TX_END, EV_NIC_WAKE, EV_NIC_ACK = 0, 1, 2, 3, 4, 5, 6


EV_ARRIVAL, EV_ACK, EV_CHAN_FREE, EV_SAMPLE = 7, 8, 9, 10


EV_WINDOW_CLOSED, EV_STOP, EV_WATCHDOG, EV_PROGRESS = 13, 14, 15, 16


# the closed loop (``app``): its start, the message of send ``a`` arrived (its last packet
# consumed), computation ``a`` done
EV_APP_START, EV_APP_ARRIVED, EV_APP_DONE = 17, 18, 19


# ----------------------------------------------------------------------------- status codes
ST_DONE, ST_PROGRESS, ST_GROW, ST_DEADLOCK, ST_FAULT = 0, 1, 2, 3, 4


# why the loop yielded with ST_PROGRESS (bits of C_YIELD)
YIELD_PROGRESS, YIELD_WATCHDOG = 1, 2


# ----------------------------------------------------------------------------- routing programs
# a phase's key (``routing.program``: offset, pair, route) and a decision's rule
KEY_OFFSET, KEY_PAIR, KEY_ROUTE = 0, 1, 2


D_NONE, D_UNIFORM, D_RANDOM_TARGET, D_PROFIT, D_RANDOM_IN_BOX, D_QUEUE_QUADRANT = 0, 1, 2, 3, 4, 5


D_TABLE_TARGET, D_UGAL = 6, 7


# a phase's row of ``ph``: its key, where its ports and escape tables start in ``rtab`` (-1:
# no escape table, the lowest port of the mask), the VCs of its two groups (-1: none), the
# phase after its target, whether the packet's ``sel`` filters its ports, its dateline VC (-1:
# none), where the torus's (stride, k) pairs start in ``rtab`` (for the dateline test) and
# where its escape VC table starts (-1: none, every escape hop on PH_VC) and its table of escape
# ports by destination terminal (-1: none); where a packet entering it at a target is rerouted
# (``program.Reroute``), the phase, port filter and deroute code of Valiant's way (-1: none);
# where its detour table and its detour table by source router start (-1: none; rule 6) and
# the deroute code of a packet that takes a detour
(PH_KEY, PH_PORTS, PH_ESCAPE, PH_VC_ALL, PH_VC, PH_NEXT, PH_FILTERED, PH_DATELINE, PH_DIMS,
 PH_ESC_VCS, PH_TERM, PH_REROUTE, PH_REROUTE_SEL, PH_REROUTE_KIND, PH_DETOUR, PH_DETOUR_FROM,
 PH_DETOUR_KIND, PH_NCOL) = range(18)


# ----------------------------------------------------------------------------- ctr
(C_NOW, C_SEQ, C_IN_NETWORK, C_IN_SOURCES, C_PROGRESS_PS, C_LINK_HOPS, C_RETRANS, C_ACTIONS,
 C_DELIVERED, C_MEAS_DELIV, C_WIN_DELIV, C_GENERATED, C_MEASURED, C_EXPECTED, C_LAST_CONSUME,
 C_STOP_AT, C_STOPPED, C_STOP_SEQ, C_CUR_SLOT, C_WHEEL_N, C_HEAP_N, C_EV_FREE,
 C_EV_FREE_N, C_PK_FREE, C_PK_FREE_N, C_DIRTY_N, C_ARR_N, C_NSAMPLES, C_YIELD, C_END,
 C_DEAD_SINCE, C_NOOP, C_SNAP_SAMPLES, C_STOP_RULE, C_LAT_SUM, C_WAIT_BIRTH, C_CHUNK_FREE,
 C_LEFT_OFF, C_OPS_LEFT, C_DUE_N, C_NET_SUM, C_WAIT_MAX, C_STARVED, C_LAT_N, C_LAT_TOTAL,
 C_HOPS_SUM, C_DIL_OVER_N, C_FAULT, C_FAULT_PKT, C_FAULT_AT, C_FAULT_PORT,
 C_NCTR) = range(52)


# ----------------------------------------------------------------------------- prm
# K_T and K_CONC: terminals, and terminals per router; K_TARGETS .. K_UG_THRESHOLD: where a
# table-target or UGAL decision's tables start in ``rtab`` (the (N, m) targets, m =
# K_TARGETS_M; UGAL's hops, first ports and probes, -1: none) and its numbers; K_UG_ONCE 1:
# UGAL decides once per packet (``Ugal.once``)
(K_N, K_P1, K_P1_INV, K_NPORTS, K_V, K_V_INV, K_NP, K_CAP, K_INJ_MIN, K_ORDERED,
 K_ESCAPE_FIRST, K_CUT, K_ACKNAK, K_SAW, K_CYC, K_CYC_INV, K_DELAY, K_SER, K_LAT, K_SER_NIC,
 K_LAT_NIC, K_SER_ACK, K_SER_ACK_NIC, K_WATCHDOG, K_HAS_WINDOW, K_W0, K_W1, K_PROGRESS, K_WSIZE,
 K_WMASK, K_NPV_NODE, K_NPV_NODE_INV, K_WWORDS, K_ADAPTIVE_VC, K_CTRL_CAP, K_EV_RESERVE,
 K_PK_RESERVE, K_DECISION, K_BASE, K_ROUTES, K_MIN_OPT, K_AVAIL, K_VARIANT, K_MDD, K_CTRL0, K_CHUNK,
 K_CHUNKS_END, K_STOP_SATURATED, K_PREFETCH, K_QBUF, K_T, K_CONC, K_TARGETS, K_TARGETS_M,
 K_UG_HOPS, K_UG_FIRST_MIN, K_UG_FIRST_VAL, K_UG_PROBE_MIN, K_UG_PROBE_VAL, K_UG_PROBE_VC,
 K_UG_THRESHOLD, K_CLASSED, K_UG_VIA, K_UG_VIA_PHASE, K_UG_ONCE, K_APP, K_REC_RESERVE, K_OPEN, K_G_M,
 K_G_LIMIT, K_G_HORIZON, K_G_EXP, K_G_ALIGNED, K_G_RULE, K_G_SIZE, K_G_OFFSET, K_G_SKIP,
 K_G_NHOT, K_STARVE, K_DIL_H, K_DIL_D, K_HOP_LIMIT, K_NPRM) = range(83)


# a divisor K_X is followed by K_X_INV, its multiplier ceil(2**63 / prm[K_X]) (``divide``)
# after the K_NPRM numbers: V rows of V_NCOL per-VC numbers (``vc_info``)
(F_NIC_TICK, F_ETA, F_WINDOW_NS, F_GAMMA1_NS, F_GROWTH_LIMIT, F_LATENCY_LIMIT, F_INTERVAL,
 F_FRACTION, F_NPRM) = range(9)


# ----------------------------------------------------------------------------- columns
# a packet's row: what a hop reads or writes (one cache line: the pool is allocated 64-byte
# aligned), then what its NIC queue and the sink read (the second line), then its time of
# entering the network, its port filter (read only in a filtered phase), whether a random
# decision has drawn for it (read only at injection), its source and destination terminals and
# the destination terminal's ejection port (``P_SRC``/``P_DST`` are routers: what routing
# reads) and the registers a reroute at its target gives it (``P_PEND``, taken when admitted
# there); 24 columns, so that every row starts a cache line
(P_HI, P_LO, P_DST, P_RS, P_READY, P_HOPS, P_FPORT, P_FVC, P_RI, P_AVAIL, P_NEXT, P_LEFT, P_SRC,
 P_BIRTH, P_MEAS, P_DER, P_ENTER, P_SEL, P_DRAWN, P_TSRC, P_TDST, P_EJECT, P_PEND) = range(23)


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
# T_BUSY (credit: when the network channel's transmission under way ends, 0 when idle; NIC and
# ejection channels: 1 while busy) is, for an ack/nak network channel, T_FREE_AT (the time it
# is free): either way the time a transmission ends, which the window's busy time needs; T_FIRST (credit: the port's
# oldest head in ``escape_priority``, -1 between phases) is, with ack/nak, T_WAKE_AT (the time
# of the port's scheduled wake-up, -1: none).  The second line: the VC of the port's last NAK
# and a bit for each VC rejected in its current round (``keeps_nak_vc``), the window's
# snapshot, and where link classes differ (``K_CLASSED``) its channel's serialisation,
# propagation and ACK serialisation (else ``K_SER``, ``K_LAT``, ``K_SER_ACK``).
(T_BUSY, T_DIRTY, T_DOWN, T_CHEAD, T_IN, T_LINK_BUSY, T_FIRST, T_CLEN, T_NAK_VC,
 T_SNAP_BUSY, T_NAK_MASK, T_SER, T_LAT, T_SER_ACK) = range(14)


#: a NIC's row (``K_NP + node``): the packets its router has accepted from it so far, so that
#: ``N_SRC_SEQ`` less this is the node's source backlog (``loop.sample``)
T_INJECTED = 14


#: the most VCs oldest-first arbitration under ack/nak keeps a round for (``T_NAK_MASK``'s bits)
MAX_ROUND_VCS = 62


T_FREE_AT = T_BUSY


T_WAKE_AT = T_FIRST


T_NCOL = 16


# a terminal's row: its NIC's source queue, pacing and handshake state, statistics, and of its
# measured packets delivered: those it sent (``N_M_SENT``, their latencies summed in
# ``N_M_LAT``) and received (``N_M_RECV``)
(N_SRCH, N_SRCT, N_NEXT_AVAIL, N_SRC_SEQ, N_NIC_WAKE, N_OUTSTANDING, N_NIC_FREE_AT, N_FINISH,
 N_ACCEPTED, N_SNAP_ACCEPTED, N_M_SENT, N_M_RECV, N_M_LAT, N_NCOL) = range(14)


H_HI, H_LO, H_PID, H_VC, H_PKT, H_NCOL = range(6)


W_TIME, W_SRC, W_DST, W_PACKETS, W_MEASURED, W_NCOL = range(6)


# open-loop traffic (``K_OPEN``; :mod:`.traffic`): a node's next message (``gn``): its time (-1:
# none), destination and number, and the node's first message's time (its phase); the prm
# numbers: packets a message, messages a node (finite; -1: no limit), the horizon (-1: none),
# exponential gaps, aligned phases, the pattern's rule (``traffic.rules``: its kind, size,
# offset, skip-self flag and hot nodes), and fprm's gap (ps) and hotspot fraction.  K_STARVE: a
# measured packet that waited at its NIC longer than this (the window; -1: no window) counts
# as starved (``C_STARVED``).  K_DIL_H and K_DIL_D: the (hops, distance) counts of the
# measured packets (``mdil``) are kept for hops below K_DIL_H and distances below K_DIL_D (the
# rest one by one in ``mdov``).  K_HOP_LIMIT: the most channels a packet may cross (the
# guard, ``simulator.engines.guard``: a breach sets C_FAULT, its packet, router and port)
G_TIME, G_DST, G_INDEX, G_FIRST, G_NCOL = range(5)


# a closed-loop operation (``oa``, fixed): its kind (``traffic.apps.ops``), its rank's terminal,
# a send's destination terminal and packets, a computation's time, a send's receive, where its
# dependants start and end in ``osucc``; its state (``ost``): dependencies left, what it still
# waits for (a send: packets to be consumed; a receive: 1 until its message arrived), and when
# it was ready, done and (a receive) its message arrived (-1: not yet)
(OA_KIND, OA_SRC, OA_DST, OA_PACKETS, OA_DUR, OA_MATCH, OA_SUCC0, OA_SUCC1,
 OA_NCOL) = range(9)
OS_DEPS, OS_PENDING, OS_READY, OS_DONE, OS_ARRIVED, OS_NCOL = range(6)


V_BUBBLE, V_ORDER, V_RANK, V_NCOL = range(4)


# a timing-wheel slot: its list's head and tail, the tail's time, the search hint and its time,
# its last chunk of the event pool and the rows of it taken (``at``); in row w, ``S_BITS`` is
# the occupancy word of slots 64 w .. 64 w + 63 (bit set: the slot's list is not empty), which
# ``advance_slot`` reads to step over empty slots at once
S_HEAD, S_TAIL, S_TAIL_T, S_HINT, S_HINT_T, S_CHUNK, S_USED, S_BITS = range(8)


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


# ----------------------------------------------------------------------------- the records
class Numbers(NamedTuple):
    """The run's changing numbers (``ctr``), the spec's (``prm``: ``K_*``, then the per-VC
    rows; ``fprm``: ``F_*``) and the tie-break stream's PCG64 state (``rng``)."""

    ctr: np.ndarray
    prm: np.ndarray
    fprm: np.ndarray
    rng: np.ndarray


class Calendar(NamedTuple):
    """The event pool (``ev``: ``E_*``), the timing wheel (``wheel``: ``S_*``) and the heap of
    events beyond it (``heap``)."""

    ev: np.ndarray
    wheel: np.ndarray
    heap: np.ndarray


class Fabric(NamedTuple):
    """Packets (``pk``: ``P_*``), queues (``qs``: ``Q_*``), ports (``pt``: ``T_*``), nodes
    (``nd``: ``N_*``), the dirty list (``dl``), each router's upstream ports (``ups``), the
    arrivals of a phase and the ack/nak rings (``arr``), a phase's heads and their order
    (``hd``: ``H_*``, ``order``)."""

    pk: np.ndarray
    qs: np.ndarray
    pt: np.ndarray
    nd: np.ndarray
    dl: np.ndarray
    ups: np.ndarray
    arr: np.ndarray
    hd: np.ndarray
    order: np.ndarray


class Routes(NamedTuple):
    """The routing program (``icsim.routing.program``, laid out by :mod:`.routing`): the
    topology's relative codes (``codes``), the phases (``ph``: ``PH_*``) and their tables
    (``rtab``), the source routes (``route``, ``rhops``), the source's adaptive occupancy a
    decision reads (``used``) and the decision's record (``dec``)."""

    codes: np.ndarray
    ph: np.ndarray
    rtab: np.ndarray
    route: np.ndarray
    rhops: np.ndarray
    used: np.ndarray
    dec: Any


class Records(NamedTuple):
    """What the run writes and reads beyond the network.  Of the measured packets, as they
    are consumed (the loop passes these seven as one tuple, ``rec``): their latencies
    (``mlat``, ps; handed to Python a chunk at a time, ``C_LAT_N`` of them waiting), the
    count of each deroute code (``mder``), of each (hops, minimal distance) pair (``mdil``,
    row-major by hops; ``mdov``: the pairs beyond it, one row each, ``C_DIL_OVER_N`` of them),
    and the minimal distance between routers a and b, ``dist[dist_a[a] + dist_b[b]]``
    (``topology.distance_tables()``); their latencies, hops, network latencies
    and waits at the NIC are summed (``C_LAT_TOTAL``, ``C_HOPS_SUM``, ``C_NET_SUM``,
    ``C_WAIT_MAX``, ``C_STARVED``) and counted per terminal (``N_M_*``).  Then the
    source-queue samples (``smp``: time, packets at NICs, then each node's backlog) and a
    closed-loop workload's operations (``oa``: ``OA_*``, their dependants ``osucc``, their
    state ``ost``: ``OS_*``, and the done operations' first-in first-out queue ``ofifo``)."""

    mlat: np.ndarray
    mder: np.ndarray
    mdil: np.ndarray
    mdov: np.ndarray
    dist_a: np.ndarray
    dist_b: np.ndarray
    dist: np.ndarray
    smp: np.ndarray
    oa: np.ndarray
    osucc: np.ndarray
    ost: np.ndarray
    ofifo: np.ndarray


class Traffic(NamedTuple):
    """The messages the NICs are given: a schedule (``wl``: ``W_*``; collectives, traces) or
    open-loop traffic made as it falls due (:mod:`.traffic`): each node's next message
    (``gn``: ``G_*``), its random stream (``gs``: PCG64 states, a row per node), the nodes in
    order of their next message (``due``: a binary heap by (time, node)) and the pattern's
    table (``gt``, :class:`~icsim.traffic.rules.Rule`)."""

    wl: np.ndarray
    gn: np.ndarray
    gs: np.ndarray
    due: np.ndarray
    gt: np.ndarray


#: the records of :func:`.loop.run`, in its order
RECORDS = (Numbers, Calendar, Fabric, Routes, Records, Traffic)
