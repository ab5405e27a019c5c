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
>>> laid.params["K_DECISION"] == kn.D_PROFIT, int(laid.dec.plans.opt_phase[laid.params["K_MIN_OPT"]])
(True, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from icsim.routing.program import (OFFSET, PAIR, ROUTE, OptionPlans, Profit, Program,
                                   RandomTarget, Uniform, kind_code)
from icsim.simulator.engines.compiled import kernel as kn
from icsim.simulator.engines.compiled.decide import VARIANTS, check_plans, record

KEYS = {OFFSET: kn.KEY_OFFSET, PAIR: kn.KEY_PAIR, ROUTE: kn.KEY_ROUTE}
RULES = {None: kn.D_NONE, Uniform: kn.D_UNIFORM, RandomTarget: kn.D_RANDOM_TARGET,
         Profit: kn.D_PROFIT}


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


def _tables(form: Program) -> tuple[np.ndarray, np.ndarray]:
    """``ph`` and ``rtab``; a table shared by several phases (the same array) is laid out
    once."""
    ph = np.full((len(form.phases), kn.PH_NCOL), -1, np.int64)
    chunks: list[np.ndarray] = []
    where: dict[int, int] = {}
    size = 0

    def place(table: np.ndarray | None) -> int:
        nonlocal size
        if table is None:
            return -1
        if id(table) not in where:
            where[id(table)] = size
            chunks.append(np.asarray(table, dtype=np.int64))
            size += len(table)
        return where[id(table)]

    for i, phase in enumerate(form.phases):
        row = ph[i]
        row[kn.PH_KEY] = KEYS[phase.key]
        row[kn.PH_PORTS] = place(phase.ports)
        row[kn.PH_ESCAPE] = place(phase.escape)
        row[kn.PH_VC_ALL] = -1 if phase.adaptive_vc is None else phase.adaptive_vc
        row[kn.PH_VC] = -1 if phase.escape_vc is None else phase.escape_vc
        row[kn.PH_NEXT] = i if phase.next is None else phase.next
        row[kn.PH_FILTERED] = phase.filtered
    rtab = np.concatenate(chunks) if chunks else np.zeros(1, np.int64)
    return ph, rtab


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
    ph, rtab = _tables(form)
    decision = form.decision
    params = {"K_DECISION": RULES[type(decision) if decision is not None else None],
              "K_ROUTES": form.has_routes, "K_MIN_OPT": 0, "K_VARIANT": 0, "K_MDD": 1}
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
    return LaidOut(ph, rtab, route, rhops, record(plans), codes, params, fparams)
