"""Decisions at injection in numba: the profit rule over a program's options (``dec``).

The rules are written once, in Python: a :class:`~icsim.routing.program.Profit` decision
carries its plans as :class:`~icsim.routing.program.OptionPlans` (made by the algorithm from
its planner) and the same decision in Python for the SimPy engine (``Profit.choose``: the
planner's).  This module restates what a decision computes from the plans at run time -- the
profits of the OutFlank paper's eqs. (15)-(16) and of its simulator's code, their comparisons
and the tie draw -- under the planners' names, statement for statement:

======================  =============================================
here                    the Python planners (``routing/``)
======================  =============================================
``plan_key``            ``_Planner._key`` (the cache key of ``(s, t)``)
``min_used``            ``_min_used`` (u*)
``best_paper``          ``_best_paper`` (eqs. 15-17)
``paper_choice``        ``_paper_choice``
``reference_pi0``       ``_reference_pi0`` (reference §5.2)
``best_reference``      ``_best_reference`` (reference §5.2, §5.6)
``choose_reference``    ``OutflankPlanner._choose_reference`` (two stages) and
                        ``OrthantPlanner.choose_orthant`` (one)
``choose_profit``       ``choose_idn`` / ``choose_orthant``
======================  =============================================

Both give the same answer bit for bit: the same float64 operations in the same order on the
same values (integer sums of used slots, ``u_star * n / total`` as an integer product divided
as floats -- what Python's exact ``int / int`` gives for integers below 2**53 --, ``1.0 +
eta * ratio``, strict ``>`` comparisons), and the paper profit's ties drawn as the SimPy
engine draws them (``_Draws.integers``): ``int(gen.random() * n)``, one draw, only when
``n > 1`` winners tie.  ``gen`` is the run's ``numpy.random.Generator``; numba draws exactly
what NumPy's ``Generator.random`` draws from the same state, and advances that state.  One
difference of form: the paper winners are a bitmask (bit ``j``: option ``j``) rather than
a sorted list; the set is the same and "ascending" is bit order (:data:`MAX_CANDIDATES`).

The decisions take the plans as a :class:`PlansRecord` (:func:`record`: the arrays under the
same names as raw views, passed by reference); they read only attributes, so the NamedTuple
itself works too.  A decision allocates nothing and takes 0.1-0.3 us.  Two things keep it
there, both about numba's reference counts: a NamedTuple of ~30 arrays handed to a compiled
function costs an increment and a decrement per array per call (0.6 us per decision measured,
against 0.2 us with the record), and arrays read into local variables or handed to an inlined
helper inside a branch keep numba's pruning pass from removing their counts; so the functions
read ``x.field[i]`` where they use it.  The helpers are inlined into :func:`choose_profit`
(numba IR inlining), which also keeps the compile time down.

Codes: the profit variant is :data:`PAPER` or :data:`REFERENCE`.  Nothing is validated here
(``used`` has one entry per port, ``eta >= 0``): the config and the build check that before a
run.

Examples
--------
On an 8x8 torus with the x+ queue full and every other queue idle, OFR takes the wraparound
IDN on the far arc and POR the - orthant (as the Python planners do):

>>> import numpy as np
>>> from icsim.model.config import Config
>>> from icsim.model.topology import Torus
>>> from icsim.routing.registry import ROUTING
>>> topo = Torus((8, 8))
>>> def plans(name):
...     routing = ROUTING.get(name)(topo, Config(topology={"dims": [8, 8]}))
...     return record(routing.form.decision.plans)
>>> ofr, por = plans("ofr"), plans("por")
>>> s, t, used = topo.node((1, 1)), topo.node((4, 1)), np.array([8, 0, 0, 0])
>>> gen = np.random.default_rng(0)
>>> o = choose_profit(ofr, s, t, used, 8, 2.0, PAPER, 1, gen)
>>> topo.coords(option_target(ofr, s, o)), int(ofr.plans.opt_kind[o])   # 2: wraparound
((6, 1), 2)
>>> o = choose_profit(por, s, t, used, 8, 1.0, PAPER, 1, gen)
>>> bin(por.plans.opt_sel[o]), bool(por.plans.opt_kind[o])   # ports x- (1) and y+ (2)
('0b110', True)
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof
from numba.core import types
from numba.experimental import structref

from icsim.routing.program import OptionPlans
from icsim.simulator.engines.compiled.pcg import uniform
from icsim.simulator.engines.compiled.rawarray import RawArray, raw

#: the profit variants (``Profit.variant``)
VARIANTS = ("paper", "reference")
PAPER, REFERENCE = 0, 1
MAX_CANDIDATES = 64
"""Candidates (OFR) or orthants (POR) a plan may have: the paper profit's winners are a
64-bit mask.  OFR plans stay below it up to 5-D tori, POR plans up to 6-D; on wider tori the
engine declines the config (``supports``), and ``auto`` runs it on SimPy."""


def check_plans(x: OptionPlans) -> None:
    """Refuse plans the compiled decision cannot take (before a run).

    Parameters
    ----------
    x : OptionPlans

    Raises
    ------
    ValueError
        When a plan has more than :data:`MAX_CANDIDATES` options.

    Examples
    --------
    >>> from icsim.model.config import Config
    >>> from icsim.model.topology import Torus
    >>> from icsim.routing.registry import ROUTING
    >>> ofr = ROUTING.get("ofr")(Torus((3,) * 6), Config(topology={"dims": [3] * 6}))
    >>> check_plans(ofr.form.decision.plans)
    Traceback (most recent call last):
    ...
    ValueError: the compiled profit decision takes at most 64 options per plan; ... has 73
    """
    most = int(np.diff(x.opt_ptr).max(initial=0))
    if most > MAX_CANDIDATES:
        raise ValueError(f"the compiled profit decision takes at most {MAX_CANDIDATES} "
                         f"options per plan; a plan of this torus has {most}")


# ----------------------------------------------------------------------------- the record
_PTR = np.int32
#: the dtype of every field of the record
DTYPES = {
    "dims": np.int64, "strides": np.int64, "coords": np.int32, "code": np.int32,
    "radix": np.int64, "portset_ptr": _PTR, "portset_ports": np.int8, "d": np.int32,
    "min_portset": np.int32, "min_n": np.int8, "min_code_portset": np.int32,
    "min_code_n": np.int8, "group_ptr": _PTR, "group_portset": np.int32, "group_n": np.int8,
    "group_ratio": np.float64, "member_ptr": _PTR, "members": np.int16, "order_ptr": _PTR,
    "order_split": _PTR, "row_j": np.int32, "row_portset": np.int32, "row_n": np.int8,
    "row_div": np.int8, "row_dil": np.float64, "row_bounded": np.bool_, "opt_ptr": _PTR,
    "opt_target": np.bool_, "opt_rel": np.int32, "opt_phase": np.int8, "opt_sel": np.int64,
    "opt_kind": np.int8, "box_ptr": _PTR, "box_step": np.int32, "box_sel": np.int64,
    "box_cum": np.int64,
}
@structref.register
class PlansRecordType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class PlansRecord(structref.StructRefProxy):
    """The plans as numba holds them (:func:`record`): the arrays of an
    :class:`~icsim.routing.program.OptionPlans` under the same names, as raw views
    (:class:`~icsim.simulator.engines.compiled.rawarray.RawArray`: not reference-counted, no
    index from the end), passed by reference.  The views do not keep the arrays alive; the
    record's ``plans`` attribute does."""


structref.define_boxing(PlansRecordType, PlansRecord)


def record(x: OptionPlans, profit: bool = True) -> PlansRecord:
    """The plans as a record for the compiled decisions (the arrays are shared, as raw views:
    the decisions index them without numba's test for an index from the end, 34 of 1,361
    instructions a packet-hop on 8x8x8 OFR credit), checked by :func:`check_plans`.

    Parameters
    ----------
    x : OptionPlans

    Returns
    -------
    PlansRecord

    Raises
    ------
    ValueError
        When a plan of a ``profit`` decision has more than :data:`MAX_CANDIDATES` options (a
        box's rows, drawn by index, have no such bound).
    """
    if profit:
        check_plans(x)
    # one record type for every program (a new type would compile the kernel again)
    x = OptionPlans(*(np.ascontiguousarray(a, dtype=DTYPES[name])
                      for name, a in zip(x._fields, x)))
    typ = PlansRecordType([(name, RawArray(typeof(a).dtype, a.ndim))
                           for name, a in zip(x._fields, x)])
    r = _record(typ, x)
    r.plans = x                      # what the views look into lives as long as the record
    return r


@njit(cache=True)
def _record(typ, x):
    r = structref.new(typ)
    r.dims = raw(x.dims)
    r.strides = raw(x.strides)
    r.coords = raw(x.coords)
    r.code = raw(x.code)
    r.radix = raw(x.radix)
    r.portset_ptr = raw(x.portset_ptr)
    r.portset_ports = raw(x.portset_ports)
    r.d = raw(x.d)
    r.min_portset = raw(x.min_portset)
    r.min_n = raw(x.min_n)
    r.min_code_portset = raw(x.min_code_portset)
    r.min_code_n = raw(x.min_code_n)
    r.group_ptr = raw(x.group_ptr)
    r.group_portset = raw(x.group_portset)
    r.group_n = raw(x.group_n)
    r.group_ratio = raw(x.group_ratio)
    r.member_ptr = raw(x.member_ptr)
    r.members = raw(x.members)
    r.order_ptr = raw(x.order_ptr)
    r.order_split = raw(x.order_split)
    r.row_j = raw(x.row_j)
    r.row_portset = raw(x.row_portset)
    r.row_n = raw(x.row_n)
    r.row_div = raw(x.row_div)
    r.row_dil = raw(x.row_dil)
    r.row_bounded = raw(x.row_bounded)
    r.opt_ptr = raw(x.opt_ptr)
    r.opt_target = raw(x.opt_target)
    r.opt_rel = raw(x.opt_rel)
    r.opt_phase = raw(x.opt_phase)
    r.opt_sel = raw(x.opt_sel)
    r.opt_kind = raw(x.opt_kind)
    r.box_ptr = raw(x.box_ptr)
    r.box_step = raw(x.box_step)
    r.box_sel = raw(x.box_sel)
    r.box_cum = raw(x.box_cum)
    return r


# ----------------------------------------------------------------------------- the decision
@njit(cache=True, inline="always")
def plan_key(x, s, t):
    """The plan of ``s -> t``: ``sum_i code[i, s_i, t_i] * radix[i]``.

    Parameters
    ----------
    x : PlansRecord
    s, t : int
        Source and destination node ids.

    Returns
    -------
    int
        An index into the per-plan arrays of ``x``.
    """
    cs, ct = x.coords[s], x.coords[t]
    key = 0
    for i in range(cs.shape[0]):
        key += x.code[i, cs[i], ct[i]] * x.radix[i]
    return key


@njit(cache=True, inline="always")
def min_used(used):
    """u*: the least used adaptive queue of the source (a torus of rings has every port,
    so there is no absent one to skip).

    Parameters
    ----------
    used : numpy.ndarray of int64

    Returns
    -------
    int
    """
    u_star = used[0]
    for p in range(1, used.shape[0]):
        if used[p] < u_star:
            u_star = used[p]
    return u_star


@njit(cache=True, inline="always")
def port_total(x, ps, used):
    """Used slots summed over the ports of port set ``ps`` (an exact integer sum).

    Parameters
    ----------
    x : PlansRecord
    ps : int
        A port set id (``*_portset`` entries).
    used : numpy.ndarray of int64
        Used slots of the adaptive queue of each port of the source.

    Returns
    -------
    int
    """
    total = 0
    for i in range(x.portset_ptr[ps], x.portset_ptr[ps + 1]):
        total += used[x.portset_ports[i]]
    return total


@njit(cache=True, inline="always")
def best_paper(x, plan, used, eta):
    """Eqs. (15)-(17): the candidates tied for the best paper profit if it beats pi_0
    strictly, as a bitmask (bit ``j``: candidate ``j``; ascending order is bit order);
    0 when none does.

    Parameters
    ----------
    x : PlansRecord
    plan : int
        The plan (:func:`plan_key`).
    used : numpy.ndarray of int64
        Used slots per port of the source.
    eta : float

    Returns
    -------
    int
        At most :data:`MAX_CANDIDATES` candidates per plan (:func:`check_plans`).
    """
    u_star = min_used(used)
    total = port_total(x, x.min_portset[plan], used)
    # eq. (16); the first term is 1 when u_0 = u* = 0
    best = (1.0 if total == 0 else u_star * x.min_n[plan] / total) + eta
    winners = 0
    for g in range(x.group_ptr[plan], x.group_ptr[plan + 1]):
        # winners: the members of the groups whose profit equals best, which beats pi_0
        # strictly; groups come by decreasing ratio and a profit is at most 1 + eta * ratio
        ratio = x.group_ratio[g]
        if 1.0 + eta * ratio < best:
            break
        total = port_total(x, x.group_portset[g], used)
        # eq. (15): u*/u_q with u_q = total/n (u_q = 0 implies u* = 0)
        pi = (1.0 if total == 0 else u_star * x.group_n[g] / total) + eta * ratio
        if pi > best:
            best = pi
            winners = 0                       # this group alone, as a new best
        elif not (pi == best and winners):
            continue
        for i in range(x.member_ptr[g], x.member_ptr[g + 1]):
            winners |= 1 << x.members[i]
    return winners


@njit(cache=True, inline="always")
def paper_choice(x, plan, used, eta, gen):
    """Index of the best candidate under eqs. (15)-(16), or -1 when none beats the minimal
    route; ties are drawn from ``gen`` as ``_Draws.integers`` draws them (the SimPy engine
    always passes its stream, so the Python "first wins without a stream" has no twin here).

    Parameters
    ----------
    x : PlansRecord
    plan : int
    used : numpy.ndarray of int64
    eta : float
    gen : numpy.random.Generator
        The run's tie-break stream; one ``random()`` draw per tie of two or more.

    Returns
    -------
    int
    """
    winners = best_paper(x, plan, used, eta)
    if winners == 0:
        return -1
    n = 0
    rest = winners
    while rest:
        rest &= rest - 1
        n += 1
    pick = int(uniform(gen) * n) if n > 1 else 0
    # the pick-th smallest winner: drop the pick lowest bits, then take the lowest
    for _ in range(pick):
        winners &= winners - 1
    j = 0
    while not (winners >> j) & 1:
        j += 1
    return j


@njit(cache=True, inline="always")
def reference_pi0(x, plan, used, u_star, capacity, eta):
    """The minimal route's reference profit (§5.2) over the coded minimal ports (+ at a tie).

    Parameters
    ----------
    x : PlansRecord
    plan : int
    used : numpy.ndarray of int64
    u_star : int
        The least used adaptive queue of the source.
    capacity : int
        Slots per queue.
    eta : float

    Returns
    -------
    float
    """
    total = port_total(x, x.min_code_portset[plan], used)
    n_min = x.min_code_n[plan]
    f = (n_min * capacity - total) / n_min
    if f == 0:
        return 0.0
    return (1.0 if u_star == 0 else u_star / (capacity - f)) + eta


@njit(cache=True, inline="always")
def best_reference(x, r0, r1, used, u_star, capacity, eta, top):
    """§5.2 profits, §5.6 selection over the search-order rows ``[r0, r1)``: ``(profit, j)``
    of the first candidate (smallest ``j``) with the highest profit above ``top``, or
    ``(top, -1)``.

    Parameters
    ----------
    x : PlansRecord
    r0, r1 : int
        A plan's rows (``order_ptr``; OFR: its OIDN or its WIDN rows, ``widn_order``).
    used : numpy.ndarray of int64
    u_star : int
    capacity : int
    eta : float
    top : float
        The profit to beat (pi_0, or the best OIDN's for the WIDNs).

    Returns
    -------
    (float, int)
    """
    top_j = -1
    for r in range(r0, r1):
        # (top, top_j) is the best profit above the starting top among the rows before r
        # (smallest j on a tie); the bounded rows come last, by increasing dilation
        dil = x.row_dil[r]
        if x.row_bounded[r] and 1.0 + eta / dil < top:
            break                             # and so are all the later ones
        total = port_total(x, x.row_portset[r], used)
        n = x.row_n[r]
        if total == n * capacity:
            continue                          # f = 0: profit 0
        if u_star == 0:
            pr = 1.0 + eta / dil
        else:
            # the coded "average": free slots / second-leg dimensions (orthants: n)
            f = (n * capacity - total) / x.row_div[r]
            pr = np.inf if f == capacity else u_star / (capacity - f) + eta / dil
        j = np.int64(x.row_j[r])
        if pr > top or (pr == top and top_j >= 0 and j < top_j):
            top = pr
            top_j = j
    return top, top_j


@njit(cache=True, inline="always")
def choose_reference(x, plan, used, capacity, eta):
    """The reference selection (§5.6): the best first-stage option above pi_0 (OFR: its
    OIDNs; POR: every orthant), unless a second-stage one (OFR: its WIDNs) beats it strictly;
    -1 to route minimally.

    Parameters
    ----------
    x : PlansRecord
    plan : int
    used : numpy.ndarray of int64
    capacity : int
    eta : float

    Returns
    -------
    int
        An option index of the plan, or -1.
    """
    u_star = min_used(used)
    pi0 = reference_pi0(x, plan, used, u_star, capacity, eta)
    if u_star == 0 and pi0 > 0:
        return -1      # §5.2: every first term is 1 and D >= 1: nothing beats 1 + eta
    # best first-stage option above pi_0; a second-stage one must beat it strictly (the first
    # stage wins an exact tie)
    p_o, j_o = best_reference(x, x.order_ptr[plan], x.order_split[plan], used, u_star,
                              capacity, eta, pi0)
    _, j_w = best_reference(x, x.order_split[plan], x.order_ptr[plan + 1], used, u_star,
                            capacity, eta, p_o)
    if j_w >= 0:
        return j_w
    return j_o


@njit(cache=True, forceinline=False)
def choose_profit(x, s, t, used, capacity, eta, profit, min_deroute_distance, gen):
    """A profit decision at injection, as the algorithm's planner takes it
    (``OutflankPlanner.choose_idn``, ``OrthantPlanner.choose_orthant``).

    Parameters
    ----------
    x : PlansRecord
        :func:`record` of the decision's :class:`~icsim.routing.program.OptionPlans`.
    s, t : int
        Source and destination node ids.
    used : numpy.ndarray of int64
        Used slots of the adaptive queue of each port of ``s``.
    capacity : int
        Slots per queue.
    eta : float
    profit : int
        :data:`PAPER` or :data:`REFERENCE`.
    min_deroute_distance : int
        No derouting when ``d(s, t)`` is shorter (or ``s = t``).
    gen : numpy.random.Generator
        The tie-break stream (paper profit only).

    Returns
    -------
    int
        The chosen option's row (``x.opt_*``), or -1 to take the minimal option.
    """
    plan = plan_key(x, s, t)
    d = x.d[plan]
    if d < min_deroute_distance or d == 0:
        return -1
    if profit == PAPER:
        j = paper_choice(x, plan, used, eta, gen)
    elif profit == REFERENCE:
        j = choose_reference(x, plan, used, capacity, eta)
    else:
        raise ValueError("unknown profit code")
    if j < 0:
        return -1
    return x.opt_ptr[plan] + j


@njit(cache=True, forceinline=False)
def box_draw(x, s, t, rng):
    """A :class:`~icsim.routing.program.RandomInBox` draw for ``s -> t``: ``(target,
    sel)``, dimension by dimension as :meth:`~icsim.routing.program.BoxTable.draw` (one draw
    where the class has more than one row: the first row whose ``box_cum`` exceeds
    ``int(u * total)``)."""
    cs, ct = x.coords[s], x.coords[t]
    target = 0
    sel = -1
    for i in range(cs.shape[0]):
        c = x.code[i, cs[i], ct[i]]
        a = x.box_ptr[i, c]
        b = x.box_ptr[i, c + 1]
        if b - a > 1:
            r = int(uniform(rng) * x.box_cum[b - 1])
            hi = b - 1
            while a < hi:
                mid = (a + hi) >> 1
                if x.box_cum[mid] > r:
                    hi = mid
                else:
                    a = mid + 1
        target += (cs[i] + x.box_step[a]) % x.dims[i] * x.strides[i]
        sel &= x.box_sel[a]
    return target, sel


@njit(cache=True, forceinline=False)
def queue_quadrant(x, s, t, used):
    """A :class:`~icsim.routing.program.QueueQuadrant` choice for ``s -> t``: the port filter
    that keeps, per dimension with a non-zero offset, the direction whose adaptive queue times
    its hops is the smaller (the minimal one when equal)."""
    cs, ct = x.coords[s], x.coords[t]
    sel = -1
    for i in range(cs.shape[0]):
        c = x.code[i, cs[i], ct[i]]
        if c == 0:
            continue
        k = x.dims[i]
        if 2 * c <= k:
            low, d = 2 * i, c
        else:
            low, d = 2 * i + 1, k - c
        if used[low] * d <= used[low ^ 1] * (k - d):
            sel &= ~(1 << (low ^ 1))
        else:
            sel &= ~(1 << low)
    return sel


@njit(cache=True, forceinline=False)
def option_target(x, s, o):
    """The target an option sets for a packet from ``s``: ``s`` displaced by ``opt_rel[o]``,
    per dimension modulo ``dims``."""
    cs = x.coords[s]
    target = 0
    for i in range(cs.shape[0]):
        target += (cs[i] + x.opt_rel[o, i]) % x.dims[i] * x.strides[i]
    return target
