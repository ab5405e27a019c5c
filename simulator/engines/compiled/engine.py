"""The compiled engine: the same model as the SimPy engine, in numba, over the spec's arrays.

:class:`CompiledEngine` lays the :class:`~icsim.simulator.spec.NetworkSpec`, the routing
algorithm's program (:mod:`icsim.routing.program`, laid out by :mod:`.routing`) and the
:class:`~icsim.traffic.workloads.Workload` out as the named-column arrays of :mod:`.layout`, runs :func:`.loop.run` (which returns to
Python every so often to report progress and to grow the packet and event pools), and hands
back the same :class:`~icsim.simulator.stats.Tally` the SimPy engine fills.  Both draw
tie-breaks from the same stream — the kernel steps NumPy's PCG64 state exactly as NumPy does —
so the same config and seed give the same packets, decisions and results.

:func:`supports` says whether a spec can run here: any routing algorithm that gives a program
(every built-in one does); one that routes in Python at every hop runs on the SimPy engine.
"""

from __future__ import annotations

import time
from typing import Callable

import numba
import numpy as np

import icsim.simulator.engines.compiled.layout as kl
from icsim.model.units import PS_PER_NS
from icsim.simulator.engines import DeadlockError
from icsim.simulator.engines.compiled.cache import announce_compilation
from icsim.simulator.engines.compiled.calendar import at
from icsim.simulator.engines.compiled.layout import RECORDS, q_buf_col, q_ncol, wait_words
from icsim.simulator.engines.compiled.loop import run as loop_run
from icsim.simulator.engines.compiled.pcg import rng_state
from icsim.simulator.engines.compiled.routing import lay_out
from icsim.simulator.engines.compiled.routing import supports as supports_program
from icsim.simulator.engines.compiled.speed import inverse
from icsim.simulator.engines.compiled.traffic import rule_table
from icsim.simulator.engines.compiled.traffic import start as traffic_start
from icsim.simulator.engines.deadlock import (EMPTY, HeadHistory, count_stuck, cycle_at_end,
                                              deadlock_at_end, deadlock_cycle, deadlock_in_cycle,
                                              stuck_ports)
from icsim.simulator.engines.guard import FAULTS, fault, hop_limit
from icsim.simulator.latencies import CHUNK, Latencies
from icsim.simulator.measure import pair_counts
from icsim.simulator.spec import NetworkSpec
from icsim.simulator.stats import Tally
from icsim.traffic.apps.ops import COMPUTE, RECV, SEND
from icsim.traffic.workloads import Workload


def supports(spec: NetworkSpec, workload: Workload | None = None) -> str | None:
    """None when the compiled engine can run ``spec`` (and ``workload``); otherwise why not
    (one line)."""
    if workload is not None and workload.open is not None:
        if workload.open.rule is None:
            return (f"traffic pattern {workload.open.pattern.name!r} makes its destinations in "
                    f"Python only (it has destination() but no rule(): docs/model.md §6)")
    why = supports_program(spec.routing.form)
    if why:
        return f"routing algorithm {spec.routing.name!r}: {why}"
    if (spec.flow_control == "ack_nak" and spec.arbitration == "oldest_first"
            and spec.num_vcs > kl.MAX_ROUND_VCS):
        return (f"{spec.num_vcs} VCs: oldest-first arbitration under ack/nak keeps a bit per "
                f"VC, {kl.MAX_ROUND_VCS} at most")
    return None


#: the kernel asks for rows ahead of use (``layout.K_PREFETCH``) when the rows of the ports,
#: queues and nodes (:func:`state_bytes`) exceed this.  On a network that fits in cache it
#: only adds work (8x8x8, 1.3 MB: 2-7 % slower with it, three alternated pairs, and 11 % once
#: the ack/nak decision phase prefetched in stages); on a larger one it overlaps misses that
#: otherwise come one after the other (16x16x16, 10 MB: a whole reference-profile run about
#: 1.2x as fast, the credit bench case 1.18x)
PREFETCH_ABOVE_BYTES = 4 << 20


#: the most slots of the timing wheel (``calendar.at``): 4,096 clock cycles, 3.3 µs at 0.8 ns,
#: eight times the longest hop of the papers' parameters (506 cycles).  The wheel covers the
#: longest hop up to that; an event further ahead waits in the heap until its slot comes into
#: range, so that a slow link, a long pipeline or a slow clock-to-link ratio costs time, not
#: memory (a slot has at least two chunks of 32 event rows: 4 MB per 1,024 slots)
MAX_WHEEL_SLOTS = 1 << 12


def wheel_slots(longest_ps: int, cycle_ps: int) -> int:
    """Slots of the timing wheel: a power of two of at least 64 clock cycles covering the
    longest hop, but at most :data:`MAX_WHEEL_SLOTS`."""
    return min(1 << max(6, int(np.ceil(np.log2(longest_ps / cycle_ps + 4)))), MAX_WHEEL_SLOTS)


def event_chunks(reserve: int, wsize: int) -> tuple[int, int]:
    """The timing wheel slots' chunks of event rows (``calendar.at``): rows per chunk, and how
    many: the event reserve in all, and at least two per slot.  A chunk is 32 rows (2 KB), so
    that a slot holding a few events takes little, and one holding thousands (the reference
    profile's bursts) is read a run of rows at a time."""
    return 32, max(reserve // 32, 2 * wsize)


def state_bytes(a: dict[str, np.ndarray]) -> int:
    """Bytes of the per-port, per-queue and per-node rows of a run's arrays ``a``."""
    return sum(a[name].nbytes for name in ("pt", "qs", "nd"))


def aligned_zeros(rows: int, cols: int, dtype: type = np.int64) -> np.ndarray:
    """A zeroed array whose first row starts on a 64-byte cache line (NumPy aligns to 16
    bytes): the pools' and tables' rows are laid out so that a hop touches one line of each."""
    size = np.dtype(dtype).itemsize
    buf = np.zeros(rows * cols + 64 // size, dtype)
    skip = (-buf.ctypes.data % 64) // size
    return buf[skip:skip + rows * cols].reshape(rows, cols)


def _chain(n: int, start: int = 0) -> np.ndarray:
    """Free-list links over slots [start, start + n): slot i points to i + 1, the last to -1."""
    nxt = np.arange(start + 1, start + n + 1, dtype=np.int64)
    nxt[-1] = -1
    return nxt


class CompiledEngine:
    """One run of the model in the compiled engine (same interface as ``SimpyEngine``)."""

    name = "compiled"

    def __init__(self, spec: NetworkSpec, workload: Workload, gen: np.random.Generator,
                 progress: Callable | None = None, progress_every_ps: int = 0):
        why = supports(spec, workload)
        if why:
            raise ValueError(f"the compiled engine cannot run this config: {why}")
        self.spec, self.workload, self.gen = spec, workload, gen
        self.progress = progress
        announce_compilation()
        self.a: dict[str, np.ndarray] = {}
        self.history = HeadHistory()                 # queue heads at the last watchdog checks
        self._layout(progress_every_ps if progress else 0)

    # ------------------------------------------------------------------ layout
    def _layout(self, progress_every: int) -> None:
        """Every array of the run (:attr:`a`), record by record (:mod:`.layout`)."""
        spec = self.spec
        N, P1, T = spec.num_nodes, spec.ports_per_router, spec.num_terminals
        laid = lay_out(spec.routing.form, spec.topology, spec.routing.deroute_kinds)
        # the timing wheel covers the longest hop (serialisation, propagation, pipeline), up to
        # MAX_WHEEL_SLOTS
        longest = max(spec.longest_link_ps, spec.nic_ser_ps + spec.nic_lat_ps) + spec.delay_ps
        wsize = wheel_slots(longest, spec.cycle_ps)
        self.ev_reserve = 4 * N * P1 + 4 * T + 64
        # free packet rows a batch may take: a row per message posted at one time, a row per
        # NIC for the next packet of its message (fabric.srcq_popleft)
        self.pk_reserve = self._max_messages_at_once() + T + 64
        # free rows of the measured packets' records a batch may fill: a decision phase
        # ejects at most one packet a terminal
        self.rec_reserve = T + 64
        app = self.workload.app
        if app is not None:
            # one instant of the closed loop may post every send and start every computation
            # (at its start, or a cascade of operations done at once)
            kinds = np.bincount(app.ops.kind, minlength=4)
            self.pk_reserve += int(kinds[SEND])
            self.ev_reserve += int(kinds[COMPUTE])
        chunk, chunks = event_chunks(self.ev_reserve, wsize)
        self._measured()
        self._numbers(progress_every, laid, wsize, chunk, chunks)
        self._calendar(wsize, chunk, chunks)
        self._fabric()
        self._routes(laid)
        self._records()
        self.a["prm"][kl.K_PREFETCH] = state_bytes(self.a) > PREFETCH_ABOVE_BYTES

    def _numbers(self, progress_every: int, laid, wsize: int, chunk: int, chunks: int) -> None:
        """``prm`` (the ``K_*`` numbers, then the per-VC rows: ``fabric.vc_info``), ``fprm``,
        ``ctr`` and the tie-break stream's state ``rng``."""
        spec, wl, a = self.spec, self.workload, self.a
        N, nports, V, cap = spec.num_nodes, spec.num_ports, spec.num_vcs, spec.capacity
        P1, T = spec.ports_per_router, spec.num_terminals
        NP, npv_node = N * P1, P1 * V
        w = spec.window or (0, 0)
        traffic_ints, traffic_floats = self._traffic_numbers()
        prm = np.zeros(kl.K_NPRM + V * kl.V_NCOL, np.int64)
        vcs = prm[kl.K_NPRM:].reshape(V, kl.V_NCOL)
        vcs[:, kl.V_BUBBLE] = spec.bubble
        vcs[:, kl.V_ORDER] = spec.vc_order
        vcs[list(spec.vc_order), kl.V_RANK] = np.arange(V)
        for k, v in {kl.K_N: N, kl.K_T: T, kl.K_CONC: spec.concentration, kl.K_P1: P1, kl.K_NPORTS: nports, kl.K_V: V, kl.K_NP: NP,
                     kl.K_CAP: cap, kl.K_INJ_MIN: spec.injection_min_free,
                     kl.K_ORDERED: spec.tie_break == "ordered",
                     kl.K_ESCAPE_FIRST: spec.arbitration == "escape_priority",
                     kl.K_CUT: spec.cut_through, kl.K_ACKNAK: spec.flow_control == "ack_nak",
                     kl.K_SAW: spec.handshake == "stop_and_wait", kl.K_CYC: spec.cycle_ps,
                     kl.K_DELAY: spec.delay_ps, kl.K_SER: spec.link_ser_ps,
                     kl.K_LAT: spec.link_lat_ps, kl.K_SER_NIC: spec.nic_ser_ps,
                     kl.K_LAT_NIC: spec.nic_lat_ps, kl.K_SER_ACK: spec.ack_link_ser_ps,
                     kl.K_SER_ACK_NIC: spec.ack_nic_ser_ps, kl.K_WATCHDOG: spec.watchdog_ps,
                     kl.K_HAS_WINDOW: spec.window is not None, kl.K_W0: w[0], kl.K_W1: w[1],
                     kl.K_PROGRESS: progress_every, kl.K_WSIZE: wsize, kl.K_WMASK: wsize - 1,
                     kl.K_NPV_NODE: npv_node, kl.K_WWORDS: wait_words(P1),
                     kl.K_QBUF: q_buf_col(P1),
                     kl.K_ADAPTIVE_VC: spec.adaptive_vc, kl.K_CTRL_CAP: V * cap + 2,
                     kl.K_CTRL0: NP + T, kl.K_CHUNK: chunk, kl.K_CHUNKS_END: chunks * chunk,
                     kl.K_EV_RESERVE: self.ev_reserve, kl.K_PK_RESERVE: self.pk_reserve,
                     kl.K_AVAIL: wl.avail_period_ps,
                     kl.K_CYC_INV: inverse(spec.cycle_ps), kl.K_V_INV: inverse(V),
                     kl.K_P1_INV: inverse(P1), kl.K_NPV_NODE_INV: inverse(npv_node),
                     kl.K_STOP_SATURATED: spec.stop_when_saturated,
                     kl.K_CLASSED: spec.port_times is not None,
                     kl.K_APP: wl.app is not None, kl.K_REC_RESERVE: self.rec_reserve,
                     kl.K_STARVE: w[1] - w[0] if spec.window is not None else -1,
                     kl.K_DIL_H: self.dil_h, kl.K_DIL_D: self.dil_d,
                     kl.K_HOP_LIMIT: hop_limit(self.dil_d - 1),
                     **traffic_ints}.items():
            prm[k] = int(v)
        for name, v in laid.params.items():      # the routing program's numbers
            prm[getattr(kl, name)] = int(v)
        fprm = np.zeros(kl.F_NPRM, np.float64)
        fprm[kl.F_NIC_TICK] = spec.nic_tick_ps
        for name, v in laid.fparams.items():
            fprm[getattr(kl, name)] = v
        fprm[kl.F_WINDOW_NS] = (w[1] - w[0]) / 1000.0
        fprm[kl.F_GAMMA1_NS] = spec.gamma1_period_ns
        fprm[kl.F_GROWTH_LIMIT] = spec.growth_limit
        fprm[kl.F_LATENCY_LIMIT] = spec.latency_limit_ns or 0.0
        for k, v in traffic_floats.items():
            fprm[k] = v
        ctr = np.zeros(kl.C_NCTR, np.int64)
        ctr[kl.C_STOP_AT] = -1
        ctr[kl.C_EXPECTED] = (-1 if spec.window is not None or wl.app is not None
                              else wl.expected_measured)   # an app ends with its operations
        ctr[kl.C_OPS_LEFT] = wl.app.ops.num_ops if wl.app is not None else 0
        a["prm"], a["fprm"], a["ctr"], a["rng"] = prm, fprm, ctr, rng_state(self.gen)

    def _traffic_numbers(self) -> tuple[dict[int, int], dict[int, float]]:
        """The open-loop traffic's ``K_G*`` and ``F_*`` numbers (``K_OPEN`` 0 for a schedule
        or an application)."""
        traffic = self.workload.open
        if traffic is None:
            return {kl.K_OPEN: 0}, {}
        rule = traffic.rule
        floats = {kl.F_INTERVAL: traffic.interval_ps, kl.F_FRACTION: rule.fraction}
        return {kl.K_OPEN: 1, kl.K_G_M: traffic.message_packets,
                kl.K_G_LIMIT: -1 if traffic.limit is None else traffic.limit,
                kl.K_G_HORIZON: -1 if traffic.horizon is None else traffic.horizon,
                kl.K_G_EXP: traffic.exponential, kl.K_G_ALIGNED: traffic.aligned,
                kl.K_G_RULE: rule.code, kl.K_G_SIZE: rule.size, kl.K_G_OFFSET: rule.offset,
                kl.K_G_SKIP: rule.skip_self, kl.K_G_NHOT: len(rule.hot)}, floats

    def _calendar(self, wsize: int, chunk: int, chunks: int) -> None:
        """The event pool ``ev`` (the slots' chunks, then a free list of the reserve and some:
        it grows), the ``wheel`` and the ``heap``."""
        a, ctr = self.a, self.a["ctr"]
        n_ev = self.ev_reserve + 4096
        rows = chunks * chunk
        ev = aligned_zeros(rows + n_ev, kl.E_NCOL)
        ev[:rows:chunk, kl.E_CHAIN] = _chain(chunks, 0) * chunk
        ev[rows - chunk, kl.E_CHAIN] = -1
        ev[rows:, kl.E_NEXT] = _chain(n_ev, rows)
        ctr[kl.C_CHUNK_FREE] = 0
        ctr[kl.C_EV_FREE] = rows
        ctr[kl.C_EV_FREE_N] = n_ev
        a["ev"], a["heap"] = ev, np.zeros(rows + n_ev, np.int64)
        a["wheel"] = aligned_zeros(wsize, kl.S_NCOL)
        a["wheel"][:] = -1
        a["wheel"][:, kl.S_USED] = chunk             # no chunk yet: as if a full one
        a["wheel"][:, kl.S_BITS] = 0                 # no slot holds events

    def _fabric(self) -> None:
        """Packets, queues, ports (NICs last, one per terminal), terminals (``nd``), the dirty
        list, the ports leading into each router, a phase's arrivals (and the ack/nak rings)
        and heads."""
        spec, a, ctr = self.spec, self.a, self.a["ctr"]
        N, nports, V, cap = spec.num_nodes, spec.num_ports, spec.num_vcs, spec.capacity
        P1, T, c = spec.ports_per_router, spec.num_terminals, spec.concentration
        NP, NPV = N * P1, N * P1 * V
        n_pk = max(4 * self.pk_reserve, 4096)
        pk = aligned_zeros(n_pk, kl.P_NCOL)
        pk[:, kl.P_NEXT] = _chain(n_pk)
        ctr[kl.C_PK_FREE_N] = n_pk
        a["pk"] = pk
        a["qs"] = aligned_zeros(NPV, q_ncol(P1, cap), np.int32)
        pt = aligned_zeros(NP + T, kl.T_NCOL)
        pt[:, kl.T_NAK_VC] = -1
        pt[:, kl.T_FIRST] = -1                    # and T_WAKE_AT, the same column
        pt[:, kl.T_DOWN] = -1
        pt[:, kl.T_IN] = -1
        nbr = spec.neighbor
        present = nbr >= 0
        router = pt[:NP].reshape(N, P1, kl.T_NCOL)
        router[:, :nports, kl.T_DOWN] = nbr
        router[:, :nports, kl.T_IN] = np.where(present, spec.reverse_port, -1)
        terminals = np.arange(T)
        pt[NP:, kl.T_IN] = nports + terminals % c  # a NIC enters its router by its own input
        if spec.port_times is not None:            # link classes: each channel's own times
            router[:, :nports, kl.T_SER] = spec.port_times[..., 0]
            router[:, :nports, kl.T_LAT] = spec.port_times[..., 1]
            router[:, :nports, kl.T_SER_ACK] = spec.port_times[..., 2]
        a["pt"] = pt
        nd = np.zeros((T, kl.N_NCOL), np.int64)
        nd[:, kl.N_SRCH] = -1
        nd[:, kl.N_SRCT] = -1
        nd[:, kl.N_NIC_WAKE] = -1
        a["nd"] = nd
        a["dl"] = np.zeros(NP + T, np.int64)
        # the ports leading into each router (a neighbour's port towards it, at the input its
        # link enters by), then its terminals' NICs
        ups = np.full((N, P1), -1, np.int64)
        rows, ports = np.nonzero(present)
        ups[nbr[rows, ports], spec.reverse_port[rows, ports]] = rows * P1 + ports
        ups[terminals // c, nports + terminals % c] = NP + terminals
        a["ups"] = ups
        # the arrivals of a phase (NP + T rows), then, with ack/nak, each port's ring of waiting
        # ACKs/NAKs (K_CTRL_CAP rows per port, from row K_CTRL0)
        rings = NP * (V * cap + 2) if spec.flow_control == "ack_nak" else 0
        a["arr"] = np.zeros((NP + T + rings, 2), np.int64)
        a["hd"] = np.zeros((NPV + T, kl.H_NCOL), np.int64)
        a["order"] = np.zeros(NPV + T, np.int64)

    def _routes(self, laid) -> None:
        """The routing program as :mod:`.routing` laid it out."""
        a = self.a
        a["codes"], a["ph"], a["rtab"] = laid.codes, laid.ph, laid.rtab
        a["route"], a["rhops"], a["dec"] = laid.route, laid.rhops, laid.dec
        a["used"] = np.zeros(max(1, self.spec.num_ports), np.int64)

    def _records(self) -> None:
        """The source-queue samples, the traffic and an application's operations."""
        a = self.a
        # time, packets at NICs, then each node's backlog (window mode: 21 samples)
        T = self.spec.num_terminals if self.spec.window is not None else 0
        a["smp"] = np.zeros((32, 2 + T), np.int64)
        self._traffic()
        self._app_arrays()

    def _measured(self) -> None:
        """What the measured packets are summarised in (``layout.Records``): a chunk of
        latencies, then the counts of deroute codes, of (hops, distance) pairs and of the pairs
        beyond, and the distance tables; the tally's store of latencies."""
        a, spec = self.a, self.spec
        a["mlat"] = np.zeros(CHUNK + self.rec_reserve, np.int64)
        a["mder"] = np.zeros(len(spec.routing.deroute_kinds) + 1, np.int64)
        first, second, table = spec.topology.distance_tables()
        a["dist_a"], a["dist_b"], a["dist"] = first, second, table
        self.dil_d = int(table.max(initial=0)) + 1
        self.dil_h = max(64, 4 * self.dil_d)
        a["mdil"] = np.zeros(self.dil_h * self.dil_d, np.int64)
        a["mdov"] = np.zeros((4 * self.rec_reserve, 2), np.int64)
        self.latencies = Latencies()
        self.pairs_beyond: list[np.ndarray] = []

    def _hand_over(self) -> None:
        """The latencies and the pairs beyond the counts the kernel holds, handed to Python."""
        a, ctr = self.a, self.a["ctr"]
        self.latencies.add(a["mlat"][:ctr[kl.C_LAT_N]])
        ctr[kl.C_LAT_N] = 0
        n = int(ctr[kl.C_DIL_OVER_N])
        if n:
            self.pairs_beyond.append(a["mdov"][:n].copy())
            ctr[kl.C_DIL_OVER_N] = 0

    def _traffic(self) -> None:
        """The schedule (``wl``) of a collective or trace, or the open-loop traffic's arrays
        (:class:`.layout.Traffic`): each node's next message, its PCG64 stream, the heap of
        nodes by next message and the pattern rule's table; one-row placeholders for what the
        workload does not use."""
        wl, a = self.workload, self.a
        wla = np.zeros((max(1, wl.num_messages), kl.W_NCOL), np.int64)
        wla[:wl.num_messages, kl.W_TIME] = wl.time
        wla[:wl.num_messages, kl.W_SRC] = wl.src
        wla[:wl.num_messages, kl.W_DST] = wl.dst
        wla[:wl.num_messages, kl.W_PACKETS] = wl.packets
        wla[:wl.num_messages, kl.W_MEASURED] = wl.measured
        a["wl"] = wla
        traffic = wl.open
        if traffic is None:
            a["gn"] = np.zeros((1, kl.G_NCOL), np.int64)
            a["gs"] = np.zeros((1, 4), np.uint64)
            a["due"] = np.zeros(1, np.int64)
            a["gt"] = np.zeros((1, 1), np.int64)
            return
        T = traffic.num_nodes
        a["gn"] = np.zeros((T, kl.G_NCOL), np.int64)
        a["gs"] = traffic.states()
        a["due"] = np.zeros(T, np.int64)
        a["gt"] = rule_table(traffic.rule)

    def _app_arrays(self) -> None:
        """A closed-loop workload's operations (``OA_*``), dependants, state (``OS_*``) and
        done queue; one-row placeholders for other workloads."""
        a, app = self.a, self.workload.app
        if app is None:
            a["oa"] = np.zeros((1, kl.OA_NCOL), np.int64)
            a["osucc"] = np.zeros(1, np.int64)
            a["ost"] = np.zeros((1, kl.OS_NCOL), np.int64)
            a["ofifo"] = np.zeros(1, np.int64)
            return
        ops = app.ops
        n = ops.num_ops
        oa = np.zeros((n, kl.OA_NCOL), np.int64)
        oa[:, kl.OA_KIND] = ops.kind
        oa[:, kl.OA_SRC] = app.terminal[ops.rank]
        oa[:, kl.OA_DST] = np.where(ops.peer >= 0, app.terminal[np.maximum(ops.peer, 0)], -1)
        oa[:, kl.OA_PACKETS] = app.packets
        oa[:, kl.OA_DUR] = ops.duration
        oa[:, kl.OA_MATCH] = ops.match
        oa[:, kl.OA_SUCC0] = ops.succ_ptr[:-1]
        oa[:, kl.OA_SUCC1] = ops.succ_ptr[1:]
        ost = np.full((n, kl.OS_NCOL), -1, np.int64)
        ost[:, kl.OS_DEPS] = ops.ndeps
        ost[:, kl.OS_PENDING] = np.where(ops.kind == SEND, app.packets,
                                         (ops.kind == RECV).astype(np.int64))
        a["oa"], a["osucc"], a["ost"] = oa, ops.succ.astype(np.int64), ost
        a["ofifo"] = np.zeros(n, np.int64)

    def records(self) -> tuple:
        """The run's arrays as :func:`.loop.run` takes them: the records of
        :data:`.layout.RECORDS`, filled from :attr:`a` by field name."""
        return tuple(cls(*(self.a[name] for name in cls._fields)) for cls in RECORDS)

    def _max_messages_at_once(self) -> int:
        wl = self.workload
        if wl.open is not None:
            return wl.open.most_at_once()
        if not wl.num_messages:
            return 0
        return int(np.unique(wl.time, return_counts=True)[1].max())

    def _grow(self) -> None:
        """Double whichever pool is short (at a batch boundary: nothing in use is missed)."""
        a = self.a
        ctr = a["ctr"]
        if ctr[kl.C_EV_FREE_N] < self.ev_reserve:
            n = len(a["ev"])
            ev = aligned_zeros(2 * n, kl.E_NCOL)
            ev[:n] = a["ev"]
            ev[n:, kl.E_NEXT] = _chain(n, n)
            ev[-1, kl.E_NEXT] = ctr[kl.C_EV_FREE]
            a["ev"] = ev
            a["heap"] = np.concatenate([a["heap"], np.zeros(n, np.int64)])
            ctr[kl.C_EV_FREE] = n
            ctr[kl.C_EV_FREE_N] += n
        if ctr[kl.C_PK_FREE_N] < self.pk_reserve:
            n = len(a["pk"])
            pk = aligned_zeros(2 * n, kl.P_NCOL)
            pk[:n] = a["pk"]
            pk[n:, kl.P_NEXT] = _chain(n, n)
            pk[-1, kl.P_NEXT] = ctr[kl.C_PK_FREE]
            a["pk"] = pk
            ctr[kl.C_PK_FREE] = n
            ctr[kl.C_PK_FREE_N] += n
        if (len(a["mlat"]) - ctr[kl.C_LAT_N] < self.rec_reserve
                or len(a["mdov"]) - ctr[kl.C_DIL_OVER_N] < self.rec_reserve):
            self._hand_over()

    def _at(self, t: int, kind: int, x: int = 0, y: int = 0) -> None:
        a = self.a
        at(a["ctr"], a["prm"], a["ev"], a["wheel"], a["heap"], t, kind, x, y)

    # ------------------------------------------------------------------ running
    def run(self) -> Tally:
        spec, wl, a = self.spec, self.workload, self.a
        if spec.window is not None:
            w0, w1 = spec.window
            step = max(1, (w1 - w0) // 20)
            for i in range(21):
                self._at(w0 + i * step, kl.EV_SAMPLE, -1)
            self._at(w0, kl.EV_SAMPLE, 0)
            self._at(w1, kl.EV_SAMPLE, 1)
            self._at(w1, kl.EV_WINDOW_CLOSED)
        if spec.stop_ps is not None:
            self._at(spec.stop_ps, kl.EV_STOP)
        if wl.open is not None:
            first = traffic_start(a["ctr"], a["prm"], a["fprm"], a["gn"], a["gs"], a["gt"],
                                  a["due"])
            if first >= 0:
                self._at(int(first), kl.EV_POST, 0)
        elif wl.num_messages:
            self._at(int(wl.time[0]), kl.EV_POST, 0)
        if wl.app is not None:
            self._at(0, kl.EV_APP_START)
        self._at(spec.watchdog_ps, kl.EV_WATCHDOG)
        if a["prm"][kl.K_PROGRESS]:
            self._at(int(a["prm"][kl.K_PROGRESS]), kl.EV_PROGRESS)
        # load (or, the first time on a machine, compile) the kernel outside the timed loop
        records = self.records()
        loop_run.compile(tuple(numba.typeof(r) for r in records))
        t0 = time.perf_counter()
        status = kl.ST_DONE
        if not (spec.window is None and a["ctr"][kl.C_EXPECTED] == 0):
            while True:
                status = loop_run(*records)
                if status == kl.ST_GROW:
                    self._grow()
                    records = self.records()        # the pools grown are new arrays
                elif status == kl.ST_PROGRESS:
                    c = a["ctr"]
                    why, c[kl.C_YIELD] = int(c[kl.C_YIELD]), 0
                    if why & kl.YIELD_WATCHDOG:
                        self.check_cycles()
                    if why & kl.YIELD_PROGRESS:
                        self.progress(int(c[kl.C_NOW]), spec.horizon_ps or 0,
                                      int(c[kl.C_DELIVERED]), int(c[kl.C_EXPECTED]))
                else:
                    c = a["ctr"]
                    if status == kl.ST_DONE and c[kl.C_YIELD] & kl.YIELD_WATCHDOG:
                        c[kl.C_YIELD] = 0
                        self.check_cycles()     # a check at the very end, as SimPy makes it
                    break
        wall = time.perf_counter() - t0
        if status == kl.ST_DEADLOCK:
            raise DeadlockError(self._deadlock_message())
        if status == kl.ST_FAULT:
            c, pk = a["ctr"], a["pk"]
            p = int(c[kl.C_FAULT_PKT])
            raise fault(spec, FAULTS[int(c[kl.C_FAULT])], int(pk[p, kl.P_TSRC]),
                        int(pk[p, kl.P_TDST]), int(c[kl.C_FAULT_AT]), int(pk[p, kl.P_HOPS]),
                        int(c[kl.C_FAULT_PORT]))
        tally = self.tally()
        tally.wall_s = wall
        end = int(a["ctr"][kl.C_NOW])
        heads, busy, V = self.heads(), self.busy(), spec.num_vcs
        if a["ctr"][kl.C_IN_NETWORK]:
            # the wait graph as it is (deadlock.cycle_at_end): the idle ports holding packets
            nports = len(heads) // V
            held = (heads[:, 0] != EMPTY).reshape(nports, V).any(axis=1) & ~busy[:nports]
            cycle = cycle_at_end(heads, busy, V, *self.waits(np.nonzero(held)[0]))
            if cycle:
                raise deadlock_at_end(spec, cycle, end)
        tally.stuck_ports = count_stuck(self.history.since(end, spec.watchdog_ps), heads, busy,
                                        V)
        return tally

    # ------------------------------------------------------------------ partial deadlocks
    def head_packets(self, queues: int | np.ndarray) -> np.ndarray | np.integer:
        """The packet rows at the heads of ``queues`` (an id or an array of ids of non-empty
        queues), read from their ring buffers (``fabric.q_at``)."""
        qs = self.a["qs"]
        return qs[queues, self.a["prm"][kl.K_QBUF] + qs[queues, kl.Q_HEAD]]

    def heads(self) -> np.ndarray:
        """One row per queue: its head packet (age, hops), ``EMPTY`` when empty."""
        a = self.a
        qs, pk = a["qs"], a["pk"]
        rows = np.full((len(qs), 3), EMPTY, dtype=np.int64)
        full = np.nonzero(qs[:, kl.Q_LEN])[0]
        slot = self.head_packets(full)
        rows[full, 0] = pk[slot, kl.P_HI]
        rows[full, 1] = pk[slot, kl.P_LO]
        rows[full, 2] = pk[slot, kl.P_HOPS]
        return rows

    def check_cycles(self) -> None:
        """The SimPy engine's ``Watchdog.check_cycles`` over the kernel's arrays."""
        a, spec = self.a, self.spec
        c = a["ctr"]
        heads = self.heads()
        busy = self.busy()
        since, previous = self.history.last
        stuck = stuck_ports(previous, heads, busy, spec.num_vcs)
        now = int(c[kl.C_NOW])
        if stuck.any():
            ports, queues = self.waits(np.nonzero(stuck)[0])
            cycle = deadlock_cycle(stuck, ports, queues, spec.num_vcs)
            if cycle:
                raise deadlock_in_cycle(spec, cycle, int(stuck.sum()), since, now)
        self.history.add(now, heads)

    def busy(self) -> np.ndarray:
        """Per port id: its channel is busy (``T_BUSY``).  An ack/nak network channel's column
        holds the time it is free (``T_FREE_AT``) instead, and such a channel never counts as
        busy here (the credit flag is never set for it)."""
        spec = self.spec
        busy = self.a["pt"][:, kl.T_BUSY] != 0
        if spec.flow_control == "ack_nak":
            P1 = spec.ports_per_router
            NP = spec.num_nodes * P1
            busy[:NP] &= np.arange(NP) % P1 >= spec.num_ports
        return busy

    def waits(self, ports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(port id, queue id) pairs: the queues each of ``ports`` waits for room in, read
        from the wait bits of its downstream router's queues (the bit of the input it enters
        by)."""
        a, spec = self.a, self.spec
        P1 = spec.ports_per_router
        npv = P1 * spec.num_vcs
        NP = spec.num_nodes * P1
        pt = a["pt"]
        ports = ports[(ports >= NP) | (pt[ports, kl.T_DOWN] >= 0)]
        down = np.where(ports >= NP, (ports - NP) // spec.concentration,   # a NIC: its router
                        pt[ports, kl.T_DOWN])
        slot = pt[ports, kl.T_IN]
        queues = down[:, None] * npv + np.arange(npv)[None, :]
        bits = (a["qs"][queues, kl.Q_WAIT + (slot >> 5)[:, None]] >> (slot & 31)[:, None]) & 1
        row, local = np.nonzero(bits)
        return ports[row], queues[row, local]

    def tally(self) -> Tally:
        """The run so far as the engine-neutral :class:`Tally`."""
        a, spec = self.a, self.spec
        c = a["ctr"]
        n = int(c[kl.C_MEAS_DELIV])
        self._hand_over()
        tl = Tally(spec.num_terminals, list(spec.routing.deroute_kinds))
        tl.latencies, tl.latency_sum = self.latencies, int(c[kl.C_LAT_TOTAL])
        tl.hops_sum, tl.deroutes = int(c[kl.C_HOPS_SUM]), a["mder"].tolist()
        beyond = np.concatenate(self.pairs_beyond) if self.pairs_beyond else None
        tl.pairs = pair_counts(a["mdil"], self.dil_d, beyond)
        nd = a["nd"]
        tl.sent, tl.received = nd[:, kl.N_M_SENT].tolist(), nd[:, kl.N_M_RECV].tolist()
        tl.latency_by_src = nd[:, kl.N_M_LAT].tolist()
        tl.net_latency_sum = int(c[kl.C_NET_SUM])
        tl.wait_max = int(c[kl.C_WAIT_MAX])
        tl.starved = int(c[kl.C_STARVED]) if spec.window is not None else None
        tl.delivered = int(c[kl.C_DELIVERED])
        tl.measured_delivered = n
        tl.window_delivered = int(c[kl.C_WIN_DELIV])
        tl.generated = int(c[kl.C_GENERATED])
        tl.measured = int(c[kl.C_MEASURED])
        tl.expected_measured = int(c[kl.C_EXPECTED])
        tl.last_consume = int(c[kl.C_LAST_CONSUME])
        tl.finish = a["nd"][:, kl.N_FINISH].tolist()
        ns = int(c[kl.C_NSAMPLES])
        tl.samples = list(zip(a["smp"][:ns, 0].tolist(), a["smp"][:ns, 1].tolist()))
        tl.source_samples = a["smp"][:ns, 2:].copy()
        tl.link_hops = int(c[kl.C_LINK_HOPS])
        tl.retransmissions = int(c[kl.C_RETRANS])
        tl.events = int(c[kl.C_ACTIONS])
        tl.end_ps = int(c[kl.C_STOP_AT]) if c[kl.C_STOP_AT] >= 0 else int(c[kl.C_NOW])
        tl.stopped_by_rule = int(c[kl.C_STOP_RULE])
        if self.workload.app is not None:
            tl.expected_measured = self.workload.expected_measured
            ost = a["ost"]
            tl.op_times = {"ready": ost[:, kl.OS_READY].copy(),
                           "done": ost[:, kl.OS_DONE].copy(),
                           "arrived": ost[:, kl.OS_ARRIVED].copy()}
        if spec.window is not None and c[kl.C_SNAP_SAMPLES]:
            NP = len(a["pt"]) - spec.num_terminals
            tl.busy_ps = a["pt"][:NP, kl.T_SNAP_BUSY].tolist()
            tl.packets = a["qs"][:, kl.Q_SNAP_PACKETS].tolist()
            # (no sample is taken after the window's end: the sums are the window's)
            tl.occupancy = (a["qs"][:, kl.Q_OCC_SUM] / max(1, int(c[kl.C_SNAP_SAMPLES]))).tolist()
            # consumptions inside the window (counted as they happen: see the SimPy engine)
            tl.accepted = a["nd"][:, kl.N_ACCEPTED].tolist()
        return tl

    def check_invariants(self) -> None:
        """Assert the model's accounting (for tests): every queue holds at most its
        occupancy, which is at most its capacity; the NIC queues hold the packets counted at
        the NICs; and ``generated == delivered + at NICs + in network``."""
        a, spec = self.a, self.spec
        c, qs, nd, pk = a["ctr"], a["qs"], a["nd"], a["pk"]
        length, occ = qs[:, kl.Q_LEN], qs[:, kl.Q_OCC]
        bad = np.nonzero((length < 0) | (length > occ) | (occ > spec.capacity))[0]
        if len(bad):
            q = int(bad[0])
            raise AssertionError(f"queue {q}: occupancy {int(occ[q])}, {int(length[q])} "
                                 f"visible, capacity {spec.capacity}")
        at_nics = 0
        for node in range(spec.num_terminals):
            p = int(nd[node, kl.N_SRCH])
            while p >= 0:
                at_nics += int(pk[p, kl.P_LEFT])    # a row may stand for several packets
                p = int(pk[p, kl.P_NEXT])
        # (with ack/nak, a packet sent by its NIC counts there until its router accepts it)
        if at_nics > c[kl.C_IN_SOURCES] or (not spec.flow_control == "ack_nak"
                                            and at_nics != c[kl.C_IN_SOURCES]):
            raise AssertionError(f"{at_nics} packets in NIC queues, {int(c[kl.C_IN_SOURCES])} "
                                 f"counted")
        gen, dlv = int(c[kl.C_GENERATED]), int(c[kl.C_DELIVERED])
        if gen != dlv + c[kl.C_IN_SOURCES] + c[kl.C_IN_NETWORK]:
            raise AssertionError(f"generated {gen} != delivered {dlv} + at NICs "
                                 f"{int(c[kl.C_IN_SOURCES])} + in network "
                                 f"{int(c[kl.C_IN_NETWORK])}")

    def _deadlock_message(self) -> str:
        a, spec = self.a, self.spec
        topo = spec.topology
        P1, V, cap = spec.ports_per_router, spec.num_vcs, spec.capacity
        c = a["ctr"]
        now, since = int(c[kl.C_NOW]), int(c[kl.C_DEAD_SINCE])
        qs, pk = a["qs"], a["pk"]
        blocked = []
        for q in np.nonzero(qs[:, kl.Q_LEN])[0].tolist():
            pid, vc = divmod(q, V)
            node, port = divmod(pid, P1)
            pname = (topo.port_name(port) if port < spec.num_ports else "eject"
                     if spec.concentration == 1 else f"eject{port - spec.num_ports}")
            head = int(self.head_packets(q))
            blocked.append(f"node {topo.where(node)} port {pname} vc {spec.vcs[vc].name}: "
                           f"{int(qs[q, kl.Q_LEN])}/{cap} packets, head "
                           f"{int(pk[head, kl.P_TSRC])}->{int(pk[head, kl.P_TDST])}")
        shown = "; ".join(blocked[:12])
        more = f" (+{len(blocked) - 12} more)" if len(blocked) > 12 else ""
        return (f"deadlock: {int(c[kl.C_IN_NETWORK])} packets in the network and none has "
                f"moved for {(now - since) / PS_PER_NS:.0f} ns (since t = "
                f"{since / PS_PER_NS:.0f} ns); blocked queues: {shown}{more}")
