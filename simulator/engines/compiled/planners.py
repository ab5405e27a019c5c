"""OFR's and POR's injection-time decisions in numba, over the planners' exported arrays.

The rules are written once, in :mod:`icsim.routing.outflank`: its planners build every plan a
run can need and export them as flat arrays (:meth:`OutflankPlanner.export` gives
:class:`~icsim.routing.outflank.IdnPlans`, :meth:`OrthantPlanner.export` gives
:class:`~icsim.routing.outflank.OrthantPlans`; their docstrings describe the layout).  This
module restates only what a decision computes from a plan at run time -- the profits, their
comparisons and the tie draw -- under the Python names, statement for statement:

======================  =============================================
here                    :mod:`icsim.routing.outflank`
======================  =============================================
``plan_key``            ``_Planner._key`` (the cache key of ``(s, t)``)
``min_used``            ``_min_used`` (u*)
``best_paper``          ``_best_paper`` (eqs. 15-17)
``paper_choice``        ``_paper_choice``
``reference_pi0``       ``_reference_pi0`` (reference §5.2)
``best_reference``      ``_best_reference`` (reference §5.2, §5.6)
``choose_reference``    ``OutflankPlanner._choose_reference``
``choose_idn``          ``OutflankPlanner.choose_idn``
``choose_orthant``      ``OrthantPlanner.choose_orthant``
======================  =============================================

Both give the same answer bit for bit: the same float64 operations in the same order on the
same values (integer sums of used slots, ``u_star * n / total`` as an integer product divided
as floats -- what Python's exact ``int / int`` gives for integers below 2**53 --, ``1.0 +
eta * ratio``, strict ``>`` comparisons), and the paper profit's ties drawn as the SimPy
engine draws them (``_Draws.integers``): ``int(gen.random() * n)``, one draw, only when
``n > 1`` winners tie.  ``gen`` is the run's ``numpy.random.Generator``; numba draws exactly
what NumPy's ``Generator.random`` draws from the same state, and advances that state.  One
difference of form: the paper winners are a bitmask (bit ``j``: candidate ``j``) rather than
a sorted list; the set is the same and "ascending" is bit order (:data:`MAX_CANDIDATES`).

The decisions take the plans as a :class:`PlansRecord` (:func:`record`: the exported arrays
under the same names as raw views, passed by reference); they read only attributes, so the
NamedTuple itself, or the engine's own record holding the same names, works too.  A decision
allocates nothing and takes 0.1-0.3 us.  Two things keep it there, both about numba's reference
counts: a NamedTuple of ~30 arrays handed to a compiled function costs an increment and a
decrement per array per call (0.6 us per decision measured, against 0.2 us with the record),
and arrays read into local variables or handed to an inlined helper inside a branch keep
numba's pruning pass from removing their counts; so the functions read ``x.field[i]`` where
they use it.  The helpers are inlined into :func:`choose_idn` and :func:`choose_orthant` (numba
IR inlining), which also keeps the compile time down.

Codes: the profit variant is :data:`PAPER` or :data:`REFERENCE`; an IDN's kind is
:data:`NONE`, :data:`OUTFLANK` or :data:`WRAPAROUND`.  Nothing is validated here (``used``
has one entry per port, ``eta >= 0``): the config and the build check that before a run.

Examples
--------
On an 8x8 torus with the x+ queue full and every other queue idle, OFR takes the wraparound
IDN on the far arc and POR the - orthant (as the Python planners do):

>>> import numpy as np
>>> from icsim.routing.outflank import OrthantPlanner, OutflankPlanner
>>> from icsim.model.topology import Torus
>>> topo = Torus((8, 8))
>>> ofr, por = record(OutflankPlanner(topo).export()), record(OrthantPlanner(topo).export())
>>> s, t, used = topo.node((1, 1)), topo.node((4, 1)), np.array([8, 0, 0, 0])
>>> gen = np.random.default_rng(0)
>>> idn, kind = choose_idn(ofr, s, t, used, 8, 2.0, PAPER, 1, gen)
>>> topo.coords(idn), kind == WRAPAROUND
((6, 1), True)
>>> sel, derouted = choose_orthant(por, s, t, used, 8, 1.0, PAPER, 1, gen)
>>> bin(sel), derouted                                  # ports x- (1) and y+ (2)
('0b110', True)
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof
from numba.core import types
from numba.experimental import structref

from icsim.routing.outflank import KIND_CODES
from icsim.routing.outflank import OUTFLANK as _OUTFLANK
from icsim.routing.outflank import PROFIT_CODES
from icsim.routing.outflank import WRAPAROUND as _WRAPAROUND
from icsim.routing.outflank import IdnPlans, OrthantPlans
from icsim.simulator.engines.compiled.pcg import uniform
from icsim.simulator.engines.compiled.rawarray import RawArray, raw

PAPER = PROFIT_CODES["paper"]
REFERENCE = PROFIT_CODES["reference"]
NONE = KIND_CODES[None]
OUTFLANK = KIND_CODES[_OUTFLANK]
WRAPAROUND = KIND_CODES[_WRAPAROUND]
MAX_CANDIDATES = 64
"""Candidates (OFR) or orthants (POR) a plan may have: the paper profit's winners are a
64-bit mask.  OFR plans stay below it up to 5-D tori, POR plans up to 6-D; on wider tori the
engine declines the config (``supports``), and ``auto`` runs it on SimPy."""


def check_plans(x) -> None:
    """Refuse exported plans the compiled decision cannot take (before a run).

    Parameters
    ----------
    x : IdnPlans or OrthantPlans

    Raises
    ------
    ValueError
        When a plan has more than :data:`MAX_CANDIDATES` candidates.

    Examples
    --------
    >>> from icsim.routing.outflank import OutflankPlanner
    >>> from icsim.model.topology import Torus
    >>> check_plans(OutflankPlanner(Torus((3,) * 6)).export())
    Traceback (most recent call last):
    ...
    ValueError: the compiled OFR/POR decision takes at most 64 candidates per plan; ... has 73
    """
    ptr = x.cand_ptr if hasattr(x, "cand_ptr") else x.orthant_ptr
    most = int(np.diff(ptr).max(initial=0))
    if most > MAX_CANDIDATES:
        raise ValueError(f"the compiled OFR/POR decision takes at most {MAX_CANDIDATES} "
                         f"candidates per plan; a plan of this torus has {most}")


# ----------------------------------------------------------------------------- the record
@structref.register
class PlansRecordType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class PlansRecord(structref.StructRefProxy):
    """The plans as numba holds them (:func:`record`): the arrays of an
    :class:`~icsim.routing.outflank.IdnPlans` or
    :class:`~icsim.routing.outflank.OrthantPlans` under the same names, as raw views
    (:class:`~icsim.simulator.engines.compiled.rawarray.RawArray`: not reference-counted, no
    index from the end), passed by reference.  The views do not keep the arrays alive; the
    record's ``plans`` attribute does."""


structref.define_boxing(PlansRecordType, PlansRecord)


def record(x: IdnPlans | OrthantPlans) -> PlansRecord:
    """The exported plans as a record for the compiled decisions (the arrays are shared, as
    raw views: the decisions index them without numba's test for an index from the end, 34 of
    1,361 instructions a packet-hop on 8x8x8 OFR credit), checked by :func:`check_plans`.

    Parameters
    ----------
    x : IdnPlans or OrthantPlans

    Returns
    -------
    PlansRecord

    Raises
    ------
    ValueError
        When a plan has more than :data:`MAX_CANDIDATES` candidates.
    """
    check_plans(x)
    x = type(x)(*(np.ascontiguousarray(a) for a in x))
    typ = PlansRecordType([(name, RawArray(typeof(a).dtype, a.ndim))
                           for name, a in zip(x._fields, x)])
    r = (_idn_record if isinstance(x, IdnPlans) else _orthant_record)(typ, x)
    r.plans = x                      # what the views look into lives as long as the record
    return r


@njit(cache=True, inline="always")
def _set_common(r, x):
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
    r.row_j = raw(x.row_j)
    r.row_portset = raw(x.row_portset)
    r.row_n = raw(x.row_n)
    r.row_div = raw(x.row_div)
    r.row_dil = raw(x.row_dil)
    r.row_bounded = raw(x.row_bounded)


@njit(cache=True)
def _idn_record(typ, x):
    r = structref.new(typ)
    _set_common(r, x)
    r.cand_ptr = raw(x.cand_ptr)
    r.cand_rel = raw(x.cand_rel)
    r.cand_kind = raw(x.cand_kind)
    r.n_oidn = raw(x.n_oidn)
    r.order_ptr = raw(x.order_ptr)
    r.widn_order = raw(x.widn_order)
    return r


@njit(cache=True)
def _orthant_record(typ, x):
    r = structref.new(typ)
    _set_common(r, x)
    r.orthant_ptr = raw(x.orthant_ptr)
    r.signs = raw(x.signs)
    r.code_signs = raw(x.code_signs)
    r.sel = raw(x.sel)
    r.code_sel = raw(x.code_sel)
    r.derouted = raw(x.derouted)
    r.code_derouted = raw(x.code_derouted)
    r.order_ptr = raw(x.order_ptr)
    return r


# ----------------------------------------------------------------------------- the decision
@njit(cache=True, inline="always")
def plan_key(x, s, t):
    """The plan of ``s -> t``: ``sum_i code[i, s_i, t_i] * radix[i]``.

    Parameters
    ----------
    x : PlansRecord
        Of either planner's export (or the export itself).
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
        Of either planner's export (or the export itself).
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
        Of either planner's export (or the export itself).
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
        Of either planner's export (or the export itself).
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
    """OFR's reference selection (§5.6): the best OIDN above pi_0, unless a WIDN beats it
    strictly; -1 to route minimally.

    Parameters
    ----------
    x : PlansRecord
        Of :meth:`OutflankPlanner.export`.
    plan : int
    used : numpy.ndarray of int64
    capacity : int
    eta : float

    Returns
    -------
    int
        A candidate index of the plan (WIDNs after the ``n_oidn`` OIDNs), or -1.
    """
    u_star = min_used(used)
    pi0 = reference_pi0(x, plan, used, u_star, capacity, eta)
    if u_star == 0 and pi0 > 0:
        return -1      # §5.2: every first term is 1 and D >= 1: nothing beats 1 + eta
    # best OIDN above pi_0; a WIDN must beat it strictly (the OIDN wins an exact tie)
    p_o, j_o = best_reference(x, x.order_ptr[plan], x.widn_order[plan], used, u_star,
                              capacity, eta, pi0)
    _, j_w = best_reference(x, x.widn_order[plan], x.order_ptr[plan + 1], used, u_star,
                            capacity, eta, p_o)
    if j_w >= 0:
        return x.n_oidn[plan] + j_w
    return j_o


@njit(cache=True, forceinline=False)
def choose_idn(x, s, t, used, capacity, eta, profit, min_deroute_distance, gen):
    """OFR at injection, as :meth:`OutflankPlanner.choose_idn`.

    Parameters
    ----------
    x : PlansRecord
        :func:`record` of :meth:`OutflankPlanner.export` of the run's planner.
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
    (int, int)
        ``(idn, kind)``: the IDN's node id and :data:`OUTFLANK` or :data:`WRAPAROUND`, or
        ``(-1, NONE)`` to route minimally.
    """
    plan = plan_key(x, s, t)
    d = x.d[plan]
    if d < min_deroute_distance or d == 0:
        return -1, NONE
    if profit == PAPER:
        j = paper_choice(x, plan, used, eta, gen)
    elif profit == REFERENCE:
        j = choose_reference(x, plan, used, capacity, eta)
    else:
        raise ValueError("unknown profit code")
    if j < 0:
        return -1, NONE
    c = x.cand_ptr[plan] + j
    cs = x.coords[s]
    idn = 0
    for i in range(cs.shape[0]):
        idn += (cs[i] + x.cand_rel[c, i]) % x.dims[i] * x.strides[i]
    return idn, np.int64(x.cand_kind[c])


@njit(cache=True, forceinline=False)
def choose_orthant(x, s, t, used, capacity, eta, profit, min_deroute_distance, gen):
    """POR at injection, as :meth:`OrthantPlanner.choose_orthant` followed by the port
    bitmask :meth:`PickOrthant.inject` stores.

    Parameters
    ----------
    x : PlansRecord
        :func:`record` of :meth:`OrthantPlanner.export` of the run's planner.
    s, t : int
    used : numpy.ndarray of int64
    capacity : int
    eta : float
    profit : int
        :data:`PAPER` or :data:`REFERENCE`.
    min_deroute_distance : int
    gen : numpy.random.Generator
        The tie-break stream (paper profit only).

    Returns
    -------
    (int, bool)
        ``(sel, derouted)``: the orthant's port bitmask (``orthant_select`` of its signs) and
        whether the packet counts as derouted, or ``(-1, False)`` to route minimally.
    """
    plan = plan_key(x, s, t)
    d = x.d[plan]
    if d < min_deroute_distance or d == 0:
        return -1, False
    if profit == PAPER:
        j = paper_choice(x, plan, used, eta, gen)
        if j < 0:
            return -1, False
        o = x.orthant_ptr[plan] + j
        return x.sel[o], x.derouted[o]
    if profit == REFERENCE:
        u_star = min_used(used)
        pi0 = reference_pi0(x, plan, used, u_star, capacity, eta)
        if u_star == 0 and pi0 > 0:
            return -1, False     # §5.2: nothing beats 1 + eta while a queue is idle
        _, j = best_reference(x, x.order_ptr[plan], x.order_ptr[plan + 1], used, u_star,
                              capacity, eta, pi0)
        if j < 0:
            return -1, False
        o = x.orthant_ptr[plan] + j
        return x.code_sel[o], x.code_derouted[o]
    raise ValueError("unknown profit code")
