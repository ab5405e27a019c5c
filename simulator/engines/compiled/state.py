"""The compiled engine's state: one mutable record (a numba StructRef) of named arrays and
numbers, passed by reference to every kernel function.

:data:`FIELDS` lists them: first the parameters of the run (the spec's numbers and tables, set
once), then the routing algorithm's and the workload's arrays, then the state the run mutates.
:func:`new_state` builds the record from a mapping of those names; every array stays shared with
the Python side (the engine reads results straight from its own references).
"""

from __future__ import annotations

from typing import Any

from numba import njit, typeof
from numba.core import types
from numba.experimental import structref


@structref.register
class EngineStateType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class EngineState(structref.StructRefProxy):
    """The Python handle of the record (fields are read through the engine's own arrays)."""


structref.define_boxing(EngineStateType, EngineState)

#: parameters (the spec), routing and workload arrays, then the mutable state
PARAMS = (
    "N", "P1", "nports", "V", "NP", "cap", "inj_min", "ordered", "escape_first", "cut",
    "acknak", "stop_and_wait", "cyc", "delay", "ser", "lat", "ser_nic", "lat_nic", "ser_ack",
    "ser_ack_nic", "nic_tick", "watchdog", "has_window", "w0", "w1", "progress_every", "wsize",
    "wmask", "npv_node", "wwords", "adaptive_vc", "ctrl_cap", "ev_reserve", "pk_reserve",
    "down", "rev", "upstream", "bubble", "vc_order", "vc_rank",
)
ROUTING = (
    "route_kind", "codes", "base", "dor_ports", "masks", "even", "route_off", "route_len",
    "route_ports", "route_layers", "layered",
)
WORKLOAD = (
    "w_time", "w_src", "w_dst", "w_packets", "w_measured", "w_avail",
)
STATE = (
    "ctr", "p_src", "p_dst", "p_birth", "p_age_hi", "p_age_lo", "p_meas", "p_der", "p_rs",
    "p_ri", "p_hops", "p_avail", "p_enter", "p_ready", "p_qid", "p_from_port", "p_from_vc",
    "p_retries", "p_next", "ev_time", "ev_seq", "ev_kind", "ev_a", "ev_b", "ev_next",
    "slot_head", "slot_tail", "heap", "occ", "qbuf", "qhead", "qlen", "busy", "waitmask",
    "dirty_flag", "dirty_list", "first_pos", "srch", "srct", "next_avail", "src_seq",
    "nic_wake", "outstanding", "nic_free_at", "arr_p", "arr_src", "ctrl_src", "ctrl_nak",
    "ctrl_head", "ctrl_len", "free_at", "nak_vc", "wake_at", "link_busy", "link_packets",
    "finish", "accepted", "samples_t", "samples_v", "occ_sum", "snap_busy", "snap_packets",
    "snap_accepted", "snap_occ", "snap_nsamples", "r_lat", "r_net", "r_hops", "r_src", "r_dst",
    "r_der", "h_hi", "h_lo", "h_pid", "h_vc", "h_pkt", "c_port", "c_vc", "g_end", "used",
)
FIELDS = PARAMS + ROUTING + WORKLOAD + STATE


def new_state(values: dict[str, Any]) -> EngineState:
    """The record holding ``values`` (every name of :data:`FIELDS`)."""
    missing = [f for f in FIELDS if f not in values]
    if missing:
        raise KeyError(f"engine state lacks {missing}")
    typ = EngineStateType([(f, typeof(values[f])) for f in FIELDS])
    return _build(typ, *(values[f] for f in FIELDS))


@njit(cache=True)
def _build(typ, N, P1, nports, V, NP, cap, inj_min, ordered, escape_first, cut, acknak, stop_and_wait, cyc, delay, ser, lat, ser_nic, lat_nic, ser_ack, ser_ack_nic, nic_tick, watchdog, has_window, w0, w1, progress_every, wsize, wmask, npv_node, wwords, adaptive_vc, ctrl_cap, ev_reserve, pk_reserve, down, rev, upstream, bubble, vc_order, vc_rank, route_kind, codes, base, dor_ports, masks, even, route_off, route_len, route_ports, route_layers, layered, w_time, w_src, w_dst, w_packets, w_measured, w_avail, ctr, p_src, p_dst, p_birth, p_age_hi, p_age_lo, p_meas, p_der, p_rs, p_ri, p_hops, p_avail, p_enter, p_ready, p_qid, p_from_port, p_from_vc, p_retries, p_next, ev_time, ev_seq, ev_kind, ev_a, ev_b, ev_next, slot_head, slot_tail, heap, occ, qbuf, qhead, qlen, busy, waitmask, dirty_flag, dirty_list, first_pos, srch, srct, next_avail, src_seq, nic_wake, outstanding, nic_free_at, arr_p, arr_src, ctrl_src, ctrl_nak, ctrl_head, ctrl_len, free_at, nak_vc, wake_at, link_busy, link_packets, finish, accepted, samples_t, samples_v, occ_sum, snap_busy, snap_packets, snap_accepted, snap_occ, snap_nsamples, r_lat, r_net, r_hops, r_src, r_dst, r_der, h_hi, h_lo, h_pid, h_vc, h_pkt, c_port, c_vc, g_end, used):
    s = structref.new(typ)
    s.N = N
    s.P1 = P1
    s.nports = nports
    s.V = V
    s.NP = NP
    s.cap = cap
    s.inj_min = inj_min
    s.ordered = ordered
    s.escape_first = escape_first
    s.cut = cut
    s.acknak = acknak
    s.stop_and_wait = stop_and_wait
    s.cyc = cyc
    s.delay = delay
    s.ser = ser
    s.lat = lat
    s.ser_nic = ser_nic
    s.lat_nic = lat_nic
    s.ser_ack = ser_ack
    s.ser_ack_nic = ser_ack_nic
    s.nic_tick = nic_tick
    s.watchdog = watchdog
    s.has_window = has_window
    s.w0 = w0
    s.w1 = w1
    s.progress_every = progress_every
    s.wsize = wsize
    s.wmask = wmask
    s.npv_node = npv_node
    s.wwords = wwords
    s.adaptive_vc = adaptive_vc
    s.ctrl_cap = ctrl_cap
    s.ev_reserve = ev_reserve
    s.pk_reserve = pk_reserve
    s.down = down
    s.rev = rev
    s.upstream = upstream
    s.bubble = bubble
    s.vc_order = vc_order
    s.vc_rank = vc_rank
    s.route_kind = route_kind
    s.codes = codes
    s.base = base
    s.dor_ports = dor_ports
    s.masks = masks
    s.even = even
    s.route_off = route_off
    s.route_len = route_len
    s.route_ports = route_ports
    s.route_layers = route_layers
    s.layered = layered
    s.w_time = w_time
    s.w_src = w_src
    s.w_dst = w_dst
    s.w_packets = w_packets
    s.w_measured = w_measured
    s.w_avail = w_avail
    s.ctr = ctr
    s.p_src = p_src
    s.p_dst = p_dst
    s.p_birth = p_birth
    s.p_age_hi = p_age_hi
    s.p_age_lo = p_age_lo
    s.p_meas = p_meas
    s.p_der = p_der
    s.p_rs = p_rs
    s.p_ri = p_ri
    s.p_hops = p_hops
    s.p_avail = p_avail
    s.p_enter = p_enter
    s.p_ready = p_ready
    s.p_qid = p_qid
    s.p_from_port = p_from_port
    s.p_from_vc = p_from_vc
    s.p_retries = p_retries
    s.p_next = p_next
    s.ev_time = ev_time
    s.ev_seq = ev_seq
    s.ev_kind = ev_kind
    s.ev_a = ev_a
    s.ev_b = ev_b
    s.ev_next = ev_next
    s.slot_head = slot_head
    s.slot_tail = slot_tail
    s.heap = heap
    s.occ = occ
    s.qbuf = qbuf
    s.qhead = qhead
    s.qlen = qlen
    s.busy = busy
    s.waitmask = waitmask
    s.dirty_flag = dirty_flag
    s.dirty_list = dirty_list
    s.first_pos = first_pos
    s.srch = srch
    s.srct = srct
    s.next_avail = next_avail
    s.src_seq = src_seq
    s.nic_wake = nic_wake
    s.outstanding = outstanding
    s.nic_free_at = nic_free_at
    s.arr_p = arr_p
    s.arr_src = arr_src
    s.ctrl_src = ctrl_src
    s.ctrl_nak = ctrl_nak
    s.ctrl_head = ctrl_head
    s.ctrl_len = ctrl_len
    s.free_at = free_at
    s.nak_vc = nak_vc
    s.wake_at = wake_at
    s.link_busy = link_busy
    s.link_packets = link_packets
    s.finish = finish
    s.accepted = accepted
    s.samples_t = samples_t
    s.samples_v = samples_v
    s.occ_sum = occ_sum
    s.snap_busy = snap_busy
    s.snap_packets = snap_packets
    s.snap_accepted = snap_accepted
    s.snap_occ = snap_occ
    s.snap_nsamples = snap_nsamples
    s.r_lat = r_lat
    s.r_net = r_net
    s.r_hops = r_hops
    s.r_src = r_src
    s.r_dst = r_dst
    s.r_der = r_der
    s.h_hi = h_hi
    s.h_lo = h_lo
    s.h_pid = h_pid
    s.h_vc = h_vc
    s.h_pkt = h_pkt
    s.c_port = c_port
    s.c_vc = c_vc
    s.g_end = g_end
    s.used = used
    return s
