"""The compiled engine: the same model as the SimPy engine, in numba, over the spec's arrays.

:class:`CompiledEngine` lays the :class:`~icsim.simulator.spec.NetworkSpec`, the routing
algorithm's arrays (:meth:`Routing.compiled`) and the :class:`~icsim.traffic.workloads.Workload`
out as flat numpy arrays, runs :func:`.kernel.run` (returning to Python every so often to report
progress and to grow the packet and event pools), and hands back the same
:class:`~icsim.simulator.stats.Tally` the SimPy engine fills.  Both draw tie-breaks from the same
stream, a ``numpy.random.Generator`` (numba draws exactly what NumPy draws from it), so the same
config and seed give the same packets, decisions and results.

:func:`supports` says whether a spec can run here: a routing algorithm that provides compiled
arrays (DOR, ABR, POR, OFR, table routing); a plug-in algorithm runs on the SimPy engine.
"""

from __future__ import annotations

import time
from collections import namedtuple
from typing import Any, Callable

import numpy as np

from icsim.simulator.engines import DeadlockError
from icsim.simulator.engines.compiled import kernel as kn
from icsim.simulator.engines.compiled.state import new_state
from icsim.simulator.spec import NetworkSpec
from icsim.simulator.stats import Tally
from icsim.simulator.units import PS_PER_NS
from icsim.traffic.workloads import Workload

Params = namedtuple("Params", [
    "N", "P1", "nports", "V", "NP", "cap", "inj_min", "ordered", "escape_first", "cut",
    "acknak", "stop_and_wait", "cyc", "delay", "ser", "lat", "ser_nic", "lat_nic", "ser_ack",
    "ser_ack_nic", "nic_tick", "watchdog", "has_window", "w0", "w1", "progress_every", "wsize",
    "wmask", "npv_node", "wwords", "adaptive_vc", "ctrl_cap", "ev_reserve", "pk_reserve",
    "down", "rev", "upstream", "bubble", "vc_order", "vc_rank"])

RoutingArrays = namedtuple("RoutingArrays", [
    "kind", "nports", "codes", "base", "dor_ports", "masks", "even", "route_off", "route_len",
    "route_ports", "route_layers", "layered"])

WorkloadArrays = namedtuple("WorkloadArrays", ["time", "src", "dst", "packets", "measured",
                                               "avail"])

PACKET_FIELDS = [("p_src", np.int32), ("p_dst", np.int32), ("p_birth", np.int64),
                 ("p_age_hi", np.int64), ("p_age_lo", np.int64), ("p_meas", np.bool_),
                 ("p_der", np.int8), ("p_rs", np.int64), ("p_ri", np.int32),
                 ("p_hops", np.int32), ("p_avail", np.int64), ("p_enter", np.int64),
                 ("p_ready", np.int64), ("p_qid", np.int64), ("p_from_port", np.int32),
                 ("p_from_vc", np.int32), ("p_retries", np.int32), ("p_next", np.int32)]
EVENT_FIELDS = [("ev_time", np.int64), ("ev_seq", np.int64), ("ev_kind", np.int32),
                ("ev_a", np.int64), ("ev_b", np.int64), ("ev_next", np.int32)]
STATE_FIELDS = ["ctr", *(f for f, _ in PACKET_FIELDS), *(f for f, _ in EVENT_FIELDS),
                "slot_head", "slot_tail", "heap", "occ", "qbuf", "qhead", "qlen", "busy",
                "waitmask", "dirty_flag", "dirty_list", "first_pos", "srch", "srct",
                "next_avail", "src_seq", "nic_wake", "outstanding", "nic_free_at", "arr_p",
                "arr_src", "ctrl_src", "ctrl_nak", "ctrl_head", "ctrl_len", "free_at",
                "nak_vc", "wake_at", "link_busy", "link_packets", "finish", "accepted",
                "samples_t", "samples_v", "occ_sum", "snap_busy", "snap_packets",
                "snap_accepted", "snap_occ", "snap_nsamples", "r_lat", "r_net", "r_hops",
                "r_src", "r_dst", "r_der", "h_hi", "h_lo", "h_pid", "h_vc", "h_pkt", "c_port",
                "c_vc", "g_end", "used"]
State = namedtuple("State", STATE_FIELDS)


def supports(spec: NetworkSpec) -> str | None:
    """None when the compiled engine can run ``spec``; otherwise why not (one line)."""
    if getattr(spec.routing, "compiled", None) is None:
        return f"routing algorithm {spec.routing.name!r} has no compiled form"
    if spec.routing.compiled() is None:
        return f"routing algorithm {spec.routing.name!r} has no compiled form here"
    return None


def _chain(n: int, start: int = 0) -> np.ndarray:
    """A free list over slots [start, start + n): slot i points to i + 1, the last to -1."""
    nxt = np.arange(start + 1, start + n + 1, dtype=np.int32)
    nxt[-1] = -1
    return nxt


class CompiledEngine:
    """One run of the model in the compiled engine (same interface as ``SimpyEngine``)."""

    name = "compiled"

    def __init__(self, spec: NetworkSpec, workload: Workload, gen: np.random.Generator,
                 progress: Callable | None = None, progress_every_ps: int = 0):
        why = supports(spec)
        if why:
            raise ValueError(f"the compiled engine cannot run this config: {why}")
        self.spec, self.workload, self.gen = spec, workload, gen
        self.progress = progress
        self.K = self._params(progress_every_ps if progress else 0)
        self.R = self._routing_arrays()
        self.WL = WorkloadArrays(workload.time.astype(np.int64), workload.src.astype(np.int64),
                                 workload.dst.astype(np.int64),
                                 workload.packets.astype(np.int64),
                                 workload.measured.astype(np.bool_),
                                 int(workload.avail_period_ps))
        self.S = self._state()
        self.E = self._record()

    def _record(self) -> Any:
        """The kernel's one record: parameters, routing, workload and state by name."""
        values = dict(self.K._asdict())
        values.update({("route_kind" if k == "kind" else k): v
                       for k, v in self.R._asdict().items() if k != "nports"})
        values.update({f"w_{k}": v for k, v in self.WL._asdict().items()})
        values.update(self.S._asdict())
        return new_state(values)

    # ------------------------------------------------------------------ layout
    def _params(self, progress_every: int) -> Params:
        spec = self.spec
        N, nports = spec.num_nodes, spec.num_ports
        P1, V = nports + 1, spec.num_vcs
        NP = N * P1
        nbr = spec.neighbor
        down = np.full(NP, -1, np.int64)
        down.reshape(N, P1)[:, :nports] = nbr
        rev = np.full(NP, -1, np.int64)
        present = nbr >= 0
        r = rev.reshape(N, P1)
        r[:, :nports][present] = (nbr * P1 + spec.reverse_port)[present]
        # the ports leading into each router (a neighbour's port towards it), then its NIC
        upstream = np.full((N, P1), -1, np.int64)
        rows, ports = np.nonzero(present)
        upstream[nbr[rows, ports], spec.reverse_port[rows, ports]] = rows * P1 + ports
        upstream[:, nports] = NP + np.arange(N)
        horizon = max(spec.link_ser_ps + spec.link_lat_ps, spec.nic_ser_ps + spec.nic_lat_ps,
                      spec.ack_link_ser_ps + spec.link_lat_ps) + spec.delay_ps
        wsize = 1 << max(6, int(np.ceil(np.log2(horizon / spec.cycle_ps + 4))))
        npv_node = P1 * V
        order = spec.vc_order
        rank = np.empty(V, np.int64)
        rank[list(order)] = np.arange(V)
        w = spec.window or (0, 0)
        return Params(
            N=N, P1=P1, nports=nports, V=V, NP=NP, cap=spec.capacity,
            inj_min=spec.injection_min_free, ordered=spec.tie_break == "ordered",
            escape_first=spec.arbitration == "escape_priority", cut=spec.cut_through,
            acknak=spec.flow_control == "ack_nak", stop_and_wait=spec.handshake == "stop_and_wait",
            cyc=spec.cycle_ps, delay=spec.delay_ps, ser=spec.link_ser_ps, lat=spec.link_lat_ps,
            ser_nic=spec.nic_ser_ps, lat_nic=spec.nic_lat_ps, ser_ack=spec.ack_link_ser_ps,
            ser_ack_nic=spec.ack_nic_ser_ps, nic_tick=float(spec.nic_tick_ps),
            watchdog=spec.watchdog_ps, has_window=spec.window is not None, w0=w[0], w1=w[1],
            progress_every=progress_every, wsize=wsize, wmask=wsize - 1, npv_node=npv_node,
            wwords=(npv_node + 63) // 64, adaptive_vc=spec.adaptive_vc,
            ctrl_cap=V * spec.capacity + 2,
            ev_reserve=4 * NP + 4 * N + 64,
            pk_reserve=max(1, self._max_packets_at_once()),
            down=down, rev=rev, upstream=upstream.ravel(),
            bubble=np.array(spec.bubble, dtype=np.bool_),
            vc_order=np.array(order, dtype=np.int64), vc_rank=rank)

    def _max_packets_at_once(self) -> int:
        wl = self.workload
        if not wl.num_messages:
            return 0
        _, inv = np.unique(wl.time, return_inverse=True)
        return int(np.bincount(inv, weights=wl.packets).max())

    def _routing_arrays(self) -> RoutingArrays:
        spec = self.spec
        arr = spec.routing.compiled()
        topo = spec.topology
        e64 = np.zeros(0, np.int64)
        codes = np.asarray(getattr(topo, "relative_codes", ()), dtype=np.int64)
        def arr64(name: str) -> np.ndarray:
            return np.array(arr.get(name, e64), dtype=np.int64)

        return RoutingArrays(
            kind=int(arr["kind"]), nports=spec.num_ports, codes=codes if len(codes) else e64,
            base=int(getattr(topo, "relative_base", 0)),
            dor_ports=np.array(arr.get("dor_ports", np.zeros(0, np.uint8)), dtype=np.uint8),
            masks=arr64("masks"), even=int(sum(1 << (2 * d) for d in range(topo.n))
                                            if hasattr(topo, "n") else 0),
            route_off=arr64("route_off"), route_len=arr64("route_len"),
            route_ports=arr64("route_ports"), route_layers=arr64("route_layers"),
            layered=bool(arr.get("layered", False)))

    def _state(self) -> State:
        K, spec, wl = self.K, self.spec, self.workload
        N, NP, V, cap = K.N, K.NP, K.V, K.cap
        NPV = NP * V
        n_ev = max(2 * K.ev_reserve, 1024)
        n_pk = max(4 * K.pk_reserve, 4096)
        measured = int(wl.packets[wl.measured].sum())
        ctr = np.zeros(kn.C_NCTR, np.int64)
        ctr[kn.C_STOP_AT] = -1
        ctr[kn.C_EXPECTED] = -1 if spec.window is not None else wl.expected_measured
        ctr[kn.C_EV_FREE], ctr[kn.C_EV_FREE_N] = 0, n_ev
        ctr[kn.C_PK_FREE], ctr[kn.C_PK_FREE_N] = 0, n_pk
        arrays: dict[str, Any] = {"ctr": ctr}
        for f, dt in PACKET_FIELDS:
            arrays[f] = np.zeros(n_pk, dt)
        arrays["p_next"] = _chain(n_pk)
        for f, dt in EVENT_FIELDS:
            arrays[f] = np.zeros(n_ev, dt)
        arrays["ev_next"] = _chain(n_ev)
        i32 = np.int32
        arrays.update(
            slot_head=np.full(K.wsize, -1, i32), slot_tail=np.full(K.wsize, -1, i32),
            heap=np.zeros(n_ev, i32), occ=np.zeros(NPV, np.int32),
            qbuf=np.zeros(NPV * cap, i32), qhead=np.zeros(NPV, i32), qlen=np.zeros(NPV, i32),
            busy=np.zeros(NP + N, np.bool_),
            waitmask=np.zeros((NP + N) * K.wwords, np.int64),
            dirty_flag=np.zeros(NP + N, np.bool_), dirty_list=np.zeros(NP + N, i32),
            first_pos=np.full(NP + N, -1, np.int64),
            srch=np.full(N, -1, i32), srct=np.full(N, -1, i32),
            next_avail=np.zeros(N, np.int64), src_seq=np.zeros(N, np.int64),
            nic_wake=np.full(N, -1, np.int64), outstanding=np.zeros(N, np.int64),
            nic_free_at=np.zeros(N, np.int64),
            arr_p=np.zeros(NP + N, i32), arr_src=np.zeros(NP + N, np.int64),
            ctrl_src=np.zeros(NP * K.ctrl_cap if K.acknak else 1, np.int64),
            ctrl_nak=np.zeros(NP * K.ctrl_cap if K.acknak else 1, i32),
            ctrl_head=np.zeros(NP, i32), ctrl_len=np.zeros(NP, i32),
            free_at=np.zeros(NP, np.int64), nak_vc=np.full(NP, -1, i32),
            wake_at=np.full(NP, -1, np.int64),
            link_busy=np.zeros(NP, np.int64), link_packets=np.zeros(NPV, np.int64),
            finish=np.zeros(N, np.int64), accepted=np.zeros(N, np.int64),
            samples_t=np.zeros(32, np.int64), samples_v=np.zeros(32, np.int64),
            occ_sum=np.zeros(NPV, np.int64), snap_busy=np.zeros(NP, np.int64),
            snap_packets=np.zeros(NPV, np.int64), snap_accepted=np.zeros(N, np.int64),
            snap_occ=np.zeros(NPV, np.int64), snap_nsamples=np.zeros(1, np.int64),
            r_lat=np.zeros(measured, np.int64), r_net=np.zeros(measured, np.int64),
            r_hops=np.zeros(measured, i32), r_src=np.zeros(measured, i32),
            r_dst=np.zeros(measured, i32), r_der=np.zeros(measured, np.int8),
            h_hi=np.zeros(NPV + N, np.int64), h_lo=np.zeros(NPV + N, np.int64),
            h_pid=np.zeros(NPV + N, np.int64), h_vc=np.zeros(NPV + N, np.int64),
            h_pkt=np.zeros(NPV + N, np.int64),
            c_port=np.zeros(4 * K.nports + 8, np.int64), c_vc=np.zeros(4 * K.nports + 8, np.int64),
            g_end=np.zeros(8, np.int64), used=np.zeros(max(1, K.nports), np.int64))
        return State(**arrays)

    def _grow(self) -> None:
        """Double whichever pool is short (at a batch boundary, so nothing is in use that the
        copy could miss)."""
        S, K = self.S, self.K
        ctr = S.ctr
        updates: dict[str, np.ndarray] = {}
        if ctr[kn.C_EV_FREE_N] < K.ev_reserve:
            n = len(S.ev_time)
            for f, _ in EVENT_FIELDS:
                updates[f] = np.concatenate([getattr(S, f), np.zeros(n, getattr(S, f).dtype)])
            updates["ev_next"][n:] = _chain(n, n)
            updates["ev_next"][-1] = ctr[kn.C_EV_FREE]
            ctr[kn.C_EV_FREE] = n
            ctr[kn.C_EV_FREE_N] += n
            updates["heap"] = np.concatenate([S.heap, np.zeros(n, S.heap.dtype)])
        if ctr[kn.C_PK_FREE_N] < K.pk_reserve:
            n = len(S.p_src)
            for f, _ in PACKET_FIELDS:
                updates[f] = np.concatenate([getattr(S, f), np.zeros(n, getattr(S, f).dtype)])
            updates["p_next"][n:] = _chain(n, n)
            updates["p_next"][-1] = ctr[kn.C_PK_FREE]
            ctr[kn.C_PK_FREE] = n
            ctr[kn.C_PK_FREE_N] += n
        self.S = S._replace(**updates)
        kn.set_pools(self.E, self.S.ev_time, self.S.ev_seq, self.S.ev_kind, self.S.ev_a,
                     self.S.ev_b, self.S.ev_next, self.S.heap, *(getattr(self.S, f)
                                                                 for f, _ in PACKET_FIELDS))

    # ------------------------------------------------------------------ running
    def run(self) -> Tally:
        spec, K, S, E = self.spec, self.K, self.S, self.E
        wl = self.workload
        at = kn.at
        if spec.window is not None:
            w0, w1 = spec.window
            step = max(1, (w1 - w0) // 20)
            for i in range(21):
                at(E, w0 + i * step, kn.EV_SAMPLE, 0, 0)
            at(E, w0, kn.EV_SNAP0, 0, 0)
            at(E, w1, kn.EV_SNAP1, 0, 0)
            at(E, w1, kn.EV_WINDOW_CLOSED, 0, 0)
        if spec.horizon_ps is not None:
            at(E, spec.horizon_ps, kn.EV_STOP, 0, 0)
        if wl.num_messages:
            at(E, int(wl.time[0]), kn.EV_POST, 0, 0)
        at(E, spec.watchdog_ps, kn.EV_WATCHDOG, 0, 0)
        if K.progress_every:
            at(E, K.progress_every, kn.EV_PROGRESS, 0, 0)
        t0 = time.perf_counter()
        status = kn.ST_DONE
        if not (spec.window is None and S.ctr[kn.C_EXPECTED] == 0):
            while True:
                status = kn.run(E, self.gen)
                if status == kn.ST_GROW:
                    self._grow()
                elif status == kn.ST_PROGRESS:
                    self.progress(int(self.S.ctr[kn.C_NOW]), spec.horizon_ps or 0, self.tally())
                else:
                    break
        wall = time.perf_counter() - t0
        if status == kn.ST_DEADLOCK:
            raise DeadlockError(self._deadlock_message())
        tally = self.tally()
        tally.wall_s = wall
        return tally

    def tally(self) -> Tally:
        """The run so far as the engine-neutral :class:`Tally`."""
        S, spec = self.S, self.spec
        c = S.ctr
        n = int(c[kn.C_MEAS_DELIV])
        tl = Tally(spec.num_nodes)
        tl.latency, tl.net_latency = S.r_lat[:n], S.r_net[:n]
        tl.hops, tl.src, tl.dst, tl.deroute = S.r_hops[:n], S.r_src[:n], S.r_dst[:n], S.r_der[:n]
        tl.delivered = int(c[kn.C_DELIVERED])
        tl.measured_delivered = n
        tl.window_delivered = int(c[kn.C_WIN_DELIV])
        tl.generated = int(c[kn.C_GENERATED])
        tl.measured = int(c[kn.C_MEASURED])
        tl.expected_measured = int(c[kn.C_EXPECTED])
        tl.last_consume = int(c[kn.C_LAST_CONSUME])
        tl.finish = S.finish.tolist()
        ns = int(c[kn.C_NSAMPLES])
        tl.samples = list(zip(S.samples_t[:ns].tolist(), S.samples_v[:ns].tolist()))
        tl.link_hops = int(c[kn.C_LINK_HOPS])
        tl.retransmissions = int(c[kn.C_RETRANS])
        tl.events = int(c[kn.C_ACTIONS])
        tl.end_ps = int(c[kn.C_STOP_AT]) if c[kn.C_STOP_AT] >= 0 else int(c[kn.C_NOW])
        if spec.window is not None and S.snap_nsamples[0]:
            tl.busy_ps = S.snap_busy.tolist()
            tl.packets = S.snap_packets.tolist()
            tl.occupancy = (S.snap_occ / max(1, int(S.snap_nsamples[0]))).tolist()
            tl.accepted = S.snap_accepted.tolist()
        return tl

    def _deadlock_message(self) -> str:
        S, K, spec = self.S, self.K, self.spec
        topo = spec.topology
        now, since = int(S.ctr[kn.C_NOW]), int(S.ctr[kn.C_DEAD_SINCE])
        blocked = []
        for q in np.nonzero(S.qlen)[0].tolist():
            pid, vc = divmod(q, K.V)
            node, port = divmod(pid, K.P1)
            where = f" {topo.coords(node)}" if hasattr(topo, "coords") else ""
            pname = "eject" if port == K.nports else topo.port_name(port)
            head = int(S.qbuf[q * K.cap + S.qhead[q]])
            blocked.append(f"node {node}{where} port {pname} vc {spec.vcs[vc].name}: "
                           f"{int(S.qlen[q])}/{K.cap} packets, head "
                           f"{int(S.p_src[head])}->{int(S.p_dst[head])}")
        shown = "; ".join(blocked[:12])
        more = f" (+{len(blocked) - 12} more)" if len(blocked) > 12 else ""
        return (f"deadlock: {int(S.ctr[kn.C_IN_NETWORK])} packets in the network and none has "
                f"moved for {(now - since) / PS_PER_NS:.0f} ns (since t = "
                f"{since / PS_PER_NS:.0f} ns); blocked queues: {shown}{more}")

