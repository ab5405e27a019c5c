"""A routing program laid out for the kernel: its phases as rows of ``ph``, its tables in one
``rtab``, its source routes, and its decision's options in one record (``kernel``'s routing
section reads them; ``icsim.routing.program`` says what they mean).

>>> from icsim.model.config import Config
>>> from icsim.model.topology import Torus
>>> from icsim.routing.registry import ROUTING
>>> ofr = ROUTING.get("ofr")(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
>>> laid = lay_out(ofr.form, ofr.topology, ofr.deroute_kinds)
>>> laid.ph[:, :6].tolist()          # key, ports, escape, vc_all, vc, next: both read rtab at 0
[[0, 0, -1, 0, 1, 1], [0, 0, -1, 0, 2, 1]]
>>> laid.params["K_DECISION"] == D_PROFIT, int(laid.dec.plans.opt_phase[laid.params["K_MIN_OPT"]])
(True, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from icsim.routing.boxes import offset_codes
from icsim.routing.program import (OFFSET, PAIR, ROUTE, OptionPlans, Profit, Program,
                                   QueueQuadrant, RandomInBox, RandomTarget, TableTarget, Ugal,
                                   Uniform, kind_code)
from icsim.simulator.engines.compiled.decide import (VARIANTS, box_draw, check_plans,
                                                     choose_profit, option_target,
                                                     queue_quadrant, record)
from icsim.simulator.engines.compiled.fabric import port_of
from icsim.simulator.engines.compiled.layout import (D_NONE, D_PROFIT, D_QUEUE_QUADRANT,
                                                     D_RANDOM_IN_BOX, D_RANDOM_TARGET,
                                                     D_TABLE_TARGET, D_UGAL, D_UNIFORM, F_ETA,
                                                     KEY_OFFSET, KEY_PAIR, KEY_ROUTE,
                                                     K_ADAPTIVE_VC, K_BASE, K_CAP, K_CONC,
                                                     K_DECISION, K_MDD, K_MIN_OPT, K_N, K_NPORTS,
                                                     K_NPV_NODE, K_P1, K_ROUTES, K_TARGETS,
                                                     K_TARGETS_M, K_UG_FIRST_MIN, K_UG_FIRST_VAL,
                                                     K_UG_HOPS, K_UG_ONCE, K_UG_PROBE_MIN,
                                                     K_UG_PROBE_VAL, K_UG_PROBE_VC,
                                                     K_UG_THRESHOLD, K_UG_VIA,
                                                     K_UG_VIA_PHASE, K_V, K_VARIANT, PH_DATELINE,
                                                     PH_DETOUR, PH_DETOUR_FROM, PH_DETOUR_KIND,
                                                     PH_DIMS, PH_ESCAPE, PH_ESC_VCS, PH_FILTERED,
                                                     PH_KEY, PH_NCOL, PH_NEXT, PH_PORTS,
                                                     PH_REROUTE, PH_REROUTE_KIND, PH_REROUTE_SEL,
                                                     PH_TERM, PH_VC, PH_VC_ALL, P_DER, P_DRAWN,
                                                     P_DST, P_EJECT, P_PEND, P_RI, P_RS, P_SEL,
                                                     P_SRC, Q_OCC, T_DOWN)
from icsim.simulator.engines.compiled.pcg import random
from icsim.simulator.engines.compiled.speed import divide

KEYS = {OFFSET: KEY_OFFSET, PAIR: KEY_PAIR, ROUTE: KEY_ROUTE}
RULES = {None: D_NONE, Uniform: D_UNIFORM, RandomTarget: D_RANDOM_TARGET,
         Profit: D_PROFIT, RandomInBox: D_RANDOM_IN_BOX, QueueQuadrant: D_QUEUE_QUADRANT,
         TableTarget: D_TABLE_TARGET, Ugal: D_UGAL}


@dataclass
class LaidOut:
    """What the kernel takes of a program: ``ph`` (phases x ``PH_NCOL``), ``rtab`` (every
    table, concatenated), ``route``/``rhops`` (source routes), ``dec`` (the decision's
    options and plans, a record), ``codes`` (the topology's relative codes, for offset keys)
    and the ``K_*``/``F_*`` numbers the decision needs (``params``, ``fparams``)."""

    ph: np.ndarray
    rtab: np.ndarray
    route: np.ndarray
    rhops: np.ndarray
    dec: Any
    codes: np.ndarray
    params: dict[str, int]
    fparams: dict[str, float]


def supports(form: Program | None) -> str | None:
    """Why the kernel cannot run ``form`` (None when it can)."""
    if form is None:
        return "it routes in Python at every hop (it gives no program)"
    if isinstance(form.decision, Profit):
        try:
            check_plans(form.decision.plans)
        except ValueError as exc:
            return str(exc)
    return None


def _tables(form: Program, topology: Any, kinds: Sequence[str] = (),
            extra: Sequence[np.ndarray | None] = ()) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """``ph``, ``rtab`` and where the ``extra`` tables (a decision's) start in it (-1 for a
    None); a table shared by several phases (the same array) is laid out once; a program with
    dateline VCs gets the torus's (stride, k) pairs laid out too."""
    ph = np.full((len(form.phases), PH_NCOL), -1, np.int64)
    chunks: list[np.ndarray] = []
    where: dict[int, int] = {}
    size = 0

    def place(table: np.ndarray | None) -> int:
        nonlocal size
        if table is None:
            return -1
        if id(table) not in where:
            where[id(table)] = size
            chunks.append(np.asarray(table, dtype=np.int64).ravel())
            size += chunks[-1].size
        return where[id(table)]

    dims = (np.ravel(np.column_stack([topology.strides, topology.dims]))
            if form.has_datelines else None)
    for i, phase in enumerate(form.phases):
        row = ph[i]
        row[PH_KEY] = KEYS[phase.key]
        row[PH_PORTS] = place(phase.ports)
        row[PH_ESCAPE] = place(phase.escape)
        row[PH_VC_ALL] = -1 if phase.adaptive_vc is None else phase.adaptive_vc
        row[PH_VC] = -1 if phase.escape_vc is None else phase.escape_vc
        row[PH_NEXT] = i if phase.next is None else phase.next
        row[PH_FILTERED] = phase.filtered
        if phase.dateline_vc is not None:
            row[PH_DATELINE] = phase.dateline_vc
            row[PH_DIMS] = place(dims)
        row[PH_ESC_VCS] = place(phase.escape_vcs)
        row[PH_TERM] = place(phase.terminal_escape)
        row[PH_DETOUR] = place(phase.detour)
        row[PH_DETOUR_FROM] = place(phase.detour_from)
        row[PH_DETOUR_KIND] = kind_code(phase.detour_kind, kinds)
        if phase.reroute is not None:
            opt = phase.reroute.valiant
            row[PH_REROUTE], row[PH_REROUTE_SEL] = opt.phase, opt.sel
            row[PH_REROUTE_KIND] = kind_code(opt.kind, kinds)
    starts = [place(table) for table in extra]
    rtab = np.concatenate(chunks) if chunks else np.zeros(1, np.int64)
    return ph, rtab, starts


def _options(plans: OptionPlans | None, options: Sequence, kinds: Sequence[str]) -> OptionPlans:
    """``plans`` with ``options`` appended to its option rows (a program without plans gets a
    placeholder: no plan, just the options)."""
    if plans is None:
        plans = PLACEHOLDER
    extra = len(options)
    n = plans.opt_rel.shape[1]
    return plans._replace(
        opt_target=np.concatenate([plans.opt_target, np.zeros(extra, np.bool_)]),
        opt_rel=np.concatenate([plans.opt_rel, np.zeros((extra, n), plans.opt_rel.dtype)]),
        opt_phase=np.concatenate([plans.opt_phase,
                                  np.array([o.phase for o in options], np.int8)]),
        opt_sel=np.concatenate([plans.opt_sel, np.array([o.sel for o in options], np.int64)]),
        opt_kind=np.concatenate([plans.opt_kind,
                                 np.array([kind_code(o.kind, kinds) for o in options],
                                          np.int8)]))


def _placeholder() -> OptionPlans:
    """Plans of no plan: what a decision without plans (or no decision) hands the kernel."""
    z = np.zeros(1, np.int64)
    return OptionPlans(
        dims=np.ones(1, np.int64), strides=np.ones(1, np.int64),
        coords=np.zeros((1, 1), np.int32), code=np.zeros((1, 1, 1), np.int32),
        radix=np.ones(1, np.int64), portset_ptr=z, portset_ports=np.zeros(1, np.int8),
        d=np.zeros(1, np.int32), min_portset=np.zeros(1, np.int32),
        min_n=np.zeros(1, np.int8), min_code_portset=np.zeros(1, np.int32),
        min_code_n=np.zeros(1, np.int8), group_ptr=np.zeros(2, np.int32),
        group_portset=np.zeros(1, np.int32), group_n=np.zeros(1, np.int8),
        group_ratio=np.zeros(1), member_ptr=np.zeros(2, np.int32),
        members=np.zeros(1, np.int16), order_ptr=np.zeros(2, np.int32),
        order_split=np.zeros(1, np.int32), row_j=np.zeros(1, np.int32),
        row_portset=np.zeros(1, np.int32), row_n=np.zeros(1, np.int8),
        row_div=np.ones(1, np.int8), row_dil=np.ones(1), row_bounded=np.zeros(1, np.bool_),
        opt_ptr=np.zeros(2, np.int32), opt_target=np.zeros(0, np.bool_),
        opt_rel=np.zeros((0, 1), np.int16), opt_phase=np.zeros(0, np.int8),
        opt_sel=np.zeros(0, np.int64), opt_kind=np.zeros(0, np.int8))


PLACEHOLDER = _placeholder()


def lay_out(form: Program, topology: Any, kinds: Sequence[str]) -> LaidOut:
    """``form`` as the kernel reads it (module docstring)."""
    decision = form.decision
    extra: list[np.ndarray | None] = []
    if isinstance(decision, (TableTarget, Ugal)):
        extra.append(decision.targets)
    if isinstance(decision, Ugal):
        probe = decision.probe or (None, None)
        extra += [decision.hops, *decision.first, *probe, decision.minimal_via]
    ph, rtab, starts = _tables(form, topology, kinds, extra)
    params = {"K_DECISION": RULES[type(decision) if decision is not None else None],
              "K_ROUTES": form.has_routes, "K_MIN_OPT": 0, "K_VARIANT": 0, "K_MDD": 1}
    if extra:
        params.update(K_TARGETS=starts[0], K_TARGETS_M=decision.targets.shape[1])
    if isinstance(decision, Ugal):
        params.update(K_UG_HOPS=starts[1], K_UG_FIRST_MIN=starts[2], K_UG_FIRST_VAL=starts[3],
                      K_UG_PROBE_MIN=starts[4], K_UG_PROBE_VAL=starts[5],
                      K_UG_PROBE_VC=decision.probe_vc, K_UG_THRESHOLD=decision.threshold,
                      K_UG_VIA=starts[6], K_UG_VIA_PHASE=decision.minimal_via_phase,
                      K_UG_ONCE=int(decision.once))
    else:
        params["K_UG_VIA"] = -1
    fparams = {"F_ETA": 0.0}
    if isinstance(decision, Profit):
        plans = _options(decision.plans, [decision.minimal], kinds)
        params.update(K_MIN_OPT=len(plans.opt_phase) - 1,
                      K_VARIANT=VARIANTS.index(decision.variant),
                      K_MDD=decision.min_deroute_distance)
        fparams["F_ETA"] = decision.eta
    else:
        options = decision.options() if decision is not None else ()
        plans = _options(None, options, kinds)
        params["K_MIN_OPT"] = max(len(options) - 1, 0)
        if isinstance(decision, RandomInBox):         # the box's rows, drawn per dimension
            box = decision.table(topology.dims)
            plans = plans._replace(
                dims=np.asarray(topology.dims, np.int64),
                strides=np.asarray(topology.strides, np.int64),
                coords=np.asarray(topology.coord_array, np.int32), code=box.code,
                box_ptr=box.ptr, box_step=box.step, box_sel=box.sel, box_cum=box.cum)
        elif isinstance(decision, QueueQuadrant):     # the offsets, per dimension
            plans = plans._replace(
                dims=np.asarray(topology.dims, np.int64),
                coords=np.asarray(topology.coord_array, np.int32),
                code=offset_codes(topology.dims))
    if form.has_routes:
        phase = next(p for p in form.phases if p.key == ROUTE)
        route, rhops = phase.routes.arrays(topology.num_nodes)
    else:
        route, rhops = np.zeros((1, 2), np.int64), np.zeros((1, 2), np.int64)
    uses_offsets = any(p.key == OFFSET for p in form.phases)
    codes = (np.asarray(topology.relative_codes, dtype=np.int64) if uses_offsets
             else np.zeros(1, np.int64))
    if uses_offsets:
        params["K_BASE"] = topology.relative_base
    return LaidOut(ph, rtab, route, rhops, record(plans, isinstance(decision, Profit)), codes,
                   params, fparams)


# ============================================================================= routing
# The routing program (``icsim.routing.program``): its phases are rows of ``ph`` (``PH_*``),
# its tables slices of ``rtab``, its source routes ``route``/``rhops``, its decision's options
# the record ``dec`` (``decide``).  A packet's registers: ``P_RS`` holds its target and phase,
# ``target * 256 + phase`` (target -1: none, so ``P_RS < 0``), ``P_SEL`` its port filter and
# ``P_RI`` its place on a source route.  A candidate set is five numbers, where the SimPy
# engine has tuples of groups: ``(mask, vc_all, detour, port, vc)`` — every port of ``mask``
# on ``vc_all`` (none when ``vc_all < 0``), then every port of ``detour`` on ``vc_all``
# (rule 6; usually 0), then the one queue ``(port, vc)`` (none when ``vc < 0``).
@njit(cache=True, forceinline=True)
def registers(target, phase):
    """``P_RS`` of a packet heading for ``target`` (-1: its destination) in ``phase``."""
    return target * 256 + phase


@njit(cache=True, forceinline=True)
def candidates(prm, pk, qs, rng, codes, ph, rtab, route, rhops, node, p):
    """The program's candidates for packet p at ``node`` (``Interpreter.candidates``, rules
    1-6 of ``icsim.routing.program``): ``(mask, vc_all, detour, port, vc)`` (above)."""
    rs = pk[p, P_RS]
    f = rs & 255
    t = rs >> 8
    if t == node:                     # its target reached: the next phase, to its destination
        f = ph[f, PH_NEXT]
        t = -1
        if ph[f, PH_REROUTE] >= 0:    # UGAL's choice again (taken when admitted here)
            via, o = ugal(prm, rtab, qs, rng, node, pk[p, P_DST])
            if o == 1:
                f = ph[f, PH_REROUTE]
                t = via
            pk[p, P_PEND] = registers(t, f)
    return route_at(prm, pk, codes, ph, rtab, route, rhops, node, p, f, t)


@njit(cache=True, forceinline=True)
def peek_candidates(prm, pk, codes, ph, rtab, route, rhops, node, p):
    """:func:`candidates` without a reroute's choice (what prefetching reads: no draw)."""
    rs = pk[p, P_RS]
    f = rs & 255
    t = rs >> 8
    if t == node:
        f = ph[f, PH_NEXT]
        t = -1
    return route_at(prm, pk, codes, ph, rtab, route, rhops, node, p, f, t)


@njit(cache=True, forceinline=True)
def route_at(prm, pk, codes, ph, rtab, route, rhops, node, p, f, t):
    """Rules 2-6 for packet p at ``node`` in phase ``f``, heading for ``t`` (-1: its
    destination)."""
    key = ph[f, PH_KEY]
    if key == KEY_ROUTE:
        pair = pk[p, P_SRC] * prm[K_N] + pk[p, P_DST]
        i = pk[p, P_RI]
        if i >= route[pair, 1]:
            return 0, -1, 0, pk[p, P_EJECT], 0
        h = route[pair, 0] + i
        return 0, -1, 0, rhops[h, 0], rhops[h, 1]
    if t < 0:
        t = pk[p, P_DST]
    if t == node:
        return 0, -1, 0, pk[p, P_EJECT], 0      # its terminal's ejection port
    if key == KEY_OFFSET:
        k = codes[t] - codes[node] + prm[K_BASE]
    else:
        k = node * prm[K_N] + t
    mask = rtab[ph[f, PH_PORTS] + k]
    if ph[f, PH_FILTERED]:
        mask &= pk[p, P_SEL]
    esc = ph[f, PH_ESCAPE]
    port = rtab[esc + k] if esc >= 0 else trailing_zeros(mask)
    if port < 0:                      # by the destination terminal
        port = rtab[ph[f, PH_TERM] + node * prm[K_CONC] + pk[p, P_EJECT] - prm[K_NPORTS]]
    vc = ph[f, PH_VC] if ph[f, PH_ESC_VCS] < 0 else rtab[ph[f, PH_ESC_VCS] + k]
    if ph[f, PH_DATELINE] >= 0 and port < prm[K_NPORTS]:   # the wraparound still ahead?
        at = ph[f, PH_DIMS] + 2 * (port >> 1)
        x = node // rtab[at] % rtab[at + 1]
        y = t // rtab[at] % rtab[at + 1]
        if (y < x) if (port & 1) == 0 else (y > x):
            vc = ph[f, PH_DATELINE]
    detour = 0
    if ph[f, PH_DETOUR] >= 0:         # rule 6: the ports a packet from its source may detour by
        detour = rtab[ph[f, PH_DETOUR] + k] & ~mask
        if ph[f, PH_DETOUR_FROM] >= 0:
            detour &= rtab[ph[f, PH_DETOUR_FROM] + node * prm[K_N] + pk[p, P_SRC]]
    return mask, ph[f, PH_VC_ALL], detour, port, vc


@njit(cache=True, forceinline=True)
def admitted(prm, pk, ph, rtab, p, q2):
    """``Interpreter.admitted``: a packet admitted at its target goes on in the next phase to
    its destination; in a route phase it moves along its route; one admitted to a detour
    counts as derouted (rule 6)."""
    rs = pk[p, P_RS]
    if ph[rs & 255, PH_DETOUR] >= 0 and pk[p, P_DER] == 0:
        detoured(prm, pk, ph, rtab, p, q2, rs)
    if rs >= 0 and (rs >> 8) == divide(prm, q2, K_NPV_NODE):
        nxt = ph[rs & 255, PH_NEXT]
        if ph[nxt, PH_REROUTE] >= 0:                  # the reroute's choice
            rs = pk[p, P_PEND]
            if rs >= 0:                               # Valiant's way, through a target
                pk[p, P_SEL] = ph[nxt, PH_REROUTE_SEL]
                pk[p, P_DER] = ph[nxt, PH_REROUTE_KIND]
        else:
            rs = registers(-1, nxt)
        pk[p, P_RS] = rs
    if prm[K_ROUTES] and ph[rs & 255, PH_KEY] == KEY_ROUTE:
        if port_of(prm, divide(prm, q2, K_V)) < prm[K_NPORTS]:
            pk[p, P_RI] += 1


@njit(cache=True, forceinline=True)
def detoured(prm, pk, ph, rtab, p, q2, rs):
    """Whether queue q2 is one of a detour group's (rule 6): on the adaptive VC, not the
    ejection, and outside the phase's mask; then the packet counts under the phase's
    ``detour_kind``."""
    node = divide(prm, q2, K_NPV_NODE)
    f = rs & 255
    t = rs >> 8
    if t == node:
        f = ph[f, PH_NEXT]
        t = -1
    if t < 0:
        t = pk[p, P_DST]
    port = port_of(prm, divide(prm, q2, K_V))
    if t == node or port >= prm[K_NPORTS] or q2 % prm[K_V] != ph[f, PH_VC_ALL]:
        return
    mask = rtab[ph[f, PH_PORTS] + node * prm[K_N] + t]
    if ph[f, PH_FILTERED]:
        mask &= pk[p, P_SEL]
    if not (mask >> port) & 1:
        pk[p, P_DER] = ph[f, PH_DETOUR_KIND]


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
def ugal(prm, rtab, qs, rng, node, dst):
    """UGAL's choice at ``node`` (``Interpreter._choose``): ``(target, option)``, option 0
    the minimal route, 1 Valiant's through the target."""
    n = prm[K_N]
    m = prm[K_TARGETS_M]
    via = rtab[prm[K_TARGETS] + node * m + (int(random(rng) * m) if m > 1 else 0)]
    k_min = node * n + dst
    k_via = node * n + via
    hops = prm[K_UG_HOPS]
    h_min = rtab[hops + k_min]
    h_val = rtab[hops + k_via] + rtab[hops + via * n + dst]
    V = prm[K_V]
    if prm[K_UG_PROBE_MIN] < 0:                       # UGAL-L: this router's own queues
        base = node * prm[K_P1]
        a = prm[K_ADAPTIVE_VC]
        q_min = qs[(base + rtab[prm[K_UG_FIRST_MIN] + k_min]) * V + a, Q_OCC]
        q_val = qs[(base + rtab[prm[K_UG_FIRST_VAL] + k_via]) * V + a, Q_OCC]
    else:                                             # UGAL-G: a channel of each route
        vc = prm[K_UG_PROBE_VC]
        q_min = qs[rtab[prm[K_UG_PROBE_MIN] + k_min] * V + vc, Q_OCC]
        q_val = qs[rtab[prm[K_UG_PROBE_VAL] + k_via] * V + vc, Q_OCC]
    if q_min * h_min <= q_val * h_val + prm[K_UG_THRESHOLD]:
        return via, 0
    return via, 1


@njit(cache=True, forceinline=True)
def inject_route(prm, fprm, pk, qs, pt, rtab, used, dec, rng, node, p):
    """The program's decision at injection (``Interpreter.inject``): an option of ``dec``
    (its phase, port filter and deroute kind) and perhaps a target."""
    rule = prm[K_DECISION]
    if rule == D_NONE:
        return
    if (rule != D_PROFIT and rule != D_QUEUE_QUADRANT
            and (rule != D_UGAL or prm[K_UG_ONCE])):  # a draw, or UGAL deciding once: once
        if pk[p, P_DRAWN]:
            return
        pk[p, P_DRAWN] = 1
    target = -1
    sel = -1
    if rule == D_PROFIT:                              # an option row, perhaps with a target
        local_adaptive_used(prm, qs, pt, used, node)
        o = choose_profit(dec, node, pk[p, P_DST], used, prm[K_CAP], fprm[F_ETA],
                          prm[K_VARIANT], prm[K_MDD], rng)
        if o < 0:
            o = prm[K_MIN_OPT]                        # the minimal option: no target
        if dec.opt_target[o]:
            target = option_target(dec, node, o)
    elif rule == D_RANDOM_IN_BOX:                     # a target from the box, its filter
        target, sel = box_draw(dec, node, pk[p, P_DST], rng)
        o = 0
    elif rule == D_QUEUE_QUADRANT:                    # a direction per dimension, by queues
        local_adaptive_used(prm, qs, pt, used, node)
        sel = queue_quadrant(dec, node, pk[p, P_DST], used)
        o = 0
    elif rule == D_UNIFORM:
        n = prm[K_MIN_OPT] + 1                        # the options, rows 0 .. n - 1
        o = int(random(rng) * n) if n > 1 else 0
    elif rule == D_TABLE_TARGET:                      # a target from the source's row
        m = prm[K_TARGETS_M]
        target = rtab[prm[K_TARGETS] + node * m + (int(random(rng) * m) if m > 1 else 0)]
        o = 0
    elif rule == D_UGAL:                              # minimal, or Valiant through a target
        target, o = ugal(prm, rtab, qs, rng, node, pk[p, P_DST])
        if o == 0:                                    # the minimal route's first target
            via = prm[K_UG_VIA]
            target = rtab[via + node * prm[K_N] + pk[p, P_DST]] if via >= 0 else -1
            if target >= 0:
                pk[p, P_RS] = registers(target, prm[K_UG_VIA_PHASE])
                pk[p, P_SEL] = dec.opt_sel[0]
                pk[p, P_DER] = dec.opt_kind[0]
                return
    else:                                             # D_RANDOM_TARGET
        target = int(random(rng) * prm[K_N])
        n = prm[K_MIN_OPT] + 1
        o = int(random(rng) * n) if n > 1 else 0
    pk[p, P_RS] = registers(target, np.int64(dec.opt_phase[o]))
    pk[p, P_SEL] = dec.opt_sel[o] & sel
    pk[p, P_DER] = dec.opt_kind[o]
