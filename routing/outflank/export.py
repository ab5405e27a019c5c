"""Every plan of a planner as flat arrays (:class:`IdnPlans`, :class:`OrthantPlans`), made once
per process, for the compiled engine's profit decision (``ofr_option_plans`` and
``por_option_plans`` in :mod:`icsim.routing.algorithms.adaptive` make options of them).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple, Sequence

import numpy as np

from icsim.model.notes import Kept
from icsim.routing.outflank.candidates import OUTFLANK, WRAPAROUND, orthant_select

KIND_CODES = {None: 0, OUTFLANK: 1, WRAPAROUND: 2}


PROFIT_CODES = {"paper": 0, "reference": 1}


class IdnPlans(NamedTuple):
    """Every OFR plan of one planner as flat arrays (:meth:`OutflankPlanner.export`).

    Made into the compiled engine's profit options (``ofr_option_plans``), which
    reads them as :meth:`OutflankPlanner.choose_idn` reads its plan objects; every array is
    copied from those objects.  ``P`` plans, ``n`` dimensions; "CSR" means the entries of
    row ``r`` are ``[ptr[r], ptr[r + 1])``.  Candidate, member and row indices ``j`` are
    local to their plan, as in Python.

    Keys: ``dims``, ``strides`` (int64, n) and ``coords`` (int32, N x n) are the torus';
    ``code`` (int32, n x kmax x kmax, -1 past ``k_i``) numbers the distinct per-dimension
    codes (the offset ``(b - a) mod k``; with the reference candidates also the "half"
    relative to ``a``), ``radix`` (int64, n) makes ``key = sum_i code[i, s_i, t_i] *
    radix[i]`` number the plans ``0 .. P-1``.

    Port sets: the interned port tuples, ``portset_ports`` (int8) CSR by ``portset_ptr``.

    Per plan (P): ``d`` (minimal distance), ``min_portset``/``min_n`` (``min_terms``, the
    minimal ports with ``both_on_tie``), ``min_code_portset``/``min_code_n``
    (``min_code_terms``, + at a tie), ``n_oidn``, ``widn_order`` (the first row of the
    WIDN order); CSR pointers (P + 1) ``cand_ptr``, ``group_ptr``, ``order_ptr``.  A plan's
    rows are its OIDN order, ``[order_ptr[p], widn_order[p])``, then its WIDN order,
    ``[widn_order[p], order_ptr[p + 1])``.

    Candidates (``cands``): ``cand_rel`` (int16/int32, C x n) the IDN's displacement from
    ``s`` (``(q_i - s_i) mod k_i``), ``cand_kind`` (int8, :data:`KIND_CODES`), OIDNs first.

    Paper groups (``paper_groups`` rows ``(ports, n, ratio, members)``, best ratio first):
    ``group_portset``, ``group_n`` (int8), ``group_ratio`` (float64), ``members`` (int16, the
    candidates of the group, ascending) CSR by ``member_ptr``.

    Reference orders (``ref_oidn_order`` then ``ref_widn_order`` rows ``(j, ports, n,
    divisor, D, bounded)``): ``row_j`` (int16; a WIDN's ``j`` counts from the first WIDN),
    ``row_portset``, ``row_n`` (int8), ``row_div`` (int8), ``row_dil`` (float64),
    ``row_bounded`` (bool).
    """

    dims: np.ndarray
    strides: np.ndarray
    coords: np.ndarray
    code: np.ndarray
    radix: np.ndarray
    portset_ptr: np.ndarray
    portset_ports: np.ndarray
    d: np.ndarray
    min_portset: np.ndarray
    min_n: np.ndarray
    min_code_portset: np.ndarray
    min_code_n: np.ndarray
    group_ptr: np.ndarray
    group_portset: np.ndarray
    group_n: np.ndarray
    group_ratio: np.ndarray
    member_ptr: np.ndarray
    members: np.ndarray
    row_j: np.ndarray
    row_portset: np.ndarray
    row_n: np.ndarray
    row_div: np.ndarray
    row_dil: np.ndarray
    row_bounded: np.ndarray
    cand_ptr: np.ndarray
    cand_rel: np.ndarray
    cand_kind: np.ndarray
    n_oidn: np.ndarray
    order_ptr: np.ndarray
    widn_order: np.ndarray

    @property
    def nbytes(self) -> int:
        """Memory of all the arrays."""
        return sum(a.nbytes for a in self)


class OrthantPlans(NamedTuple):
    """Every POR plan of one planner as flat arrays (:meth:`OrthantPlanner.export`).

    Keys, port sets, per-plan ``d`` and min terms, paper groups (members are orthant indices)
    and reference rows (``ref_order``, ``row_div = n``) as in :class:`IdnPlans`.  Per plan
    the CSR pointers ``orthant_ptr`` and ``order_ptr`` (P + 1).  Orthants (``orthants``, in
    index order): ``signs`` and ``code_signs`` (int8, O x n), ``sel`` and ``code_sel``
    (int64, :func:`orthant_select` of the signs: the mask ``PickOrthant.inject`` stores; the
    two agree, as a zero-offset dimension has sign 0 in one and +1 in the other),
    ``derouted`` and ``code_derouted`` (bool).
    """

    dims: np.ndarray
    strides: np.ndarray
    coords: np.ndarray
    code: np.ndarray
    radix: np.ndarray
    portset_ptr: np.ndarray
    portset_ports: np.ndarray
    d: np.ndarray
    min_portset: np.ndarray
    min_n: np.ndarray
    min_code_portset: np.ndarray
    min_code_n: np.ndarray
    group_ptr: np.ndarray
    group_portset: np.ndarray
    group_n: np.ndarray
    group_ratio: np.ndarray
    member_ptr: np.ndarray
    members: np.ndarray
    row_j: np.ndarray
    row_portset: np.ndarray
    row_n: np.ndarray
    row_div: np.ndarray
    row_dil: np.ndarray
    row_bounded: np.ndarray
    orthant_ptr: np.ndarray
    signs: np.ndarray
    code_signs: np.ndarray
    sel: np.ndarray
    code_sel: np.ndarray
    derouted: np.ndarray
    code_derouted: np.ndarray
    order_ptr: np.ndarray

    @property
    def nbytes(self) -> int:
        """Memory of all the arrays."""
        return sum(a.nbytes for a in self)


_PTR = np.int32


_DTYPES = {
    "portset_ptr": _PTR, "portset_ports": np.int8, "d": np.int32,
    "min_portset": np.int32, "min_n": np.int8, "min_code_portset": np.int32,
    "min_code_n": np.int8, "group_ptr": _PTR, "group_portset": np.int32, "group_n": np.int8,
    "group_ratio": np.float64, "member_ptr": _PTR, "members": np.int16, "row_j": np.int16,
    "row_portset": np.int32, "row_n": np.int8, "row_div": np.int8, "row_dil": np.float64,
    "row_bounded": np.bool_, "cand_ptr": _PTR, "cand_kind": np.int8, "n_oidn": np.int16,
    "widn_order": _PTR, "orthant_ptr": _PTR,
    "signs": np.int8, "code_signs": np.int8, "sel": np.int64, "code_sel": np.int64,
    "derouted": np.bool_, "code_derouted": np.bool_, "order_ptr": _PTR,
}


class _Flat:
    """An export's tables, filled plan by plan in key order.  Paper groups and reference rows
    are kept as the plans hold them (interned tuples) and turned into columns at the end;
    port tuples become port sets (numbered in order of first use)."""

    def __init__(self, planner, ptrs: Sequence[str]):
        self.planner = planner
        self.code, self.radix, self.plans = planner._export_plans()
        self.cols: defaultdict[str, list] = defaultdict(
            list, {p: [0] for p in ("group_ptr", *ptrs)})
        self.groups: list[tuple] = []
        self.rows: list[tuple] = []
        self._portsets: dict[tuple[int, ...], int] = {}

    def portset(self, ports: tuple[int, ...]) -> int:
        return self._portsets.setdefault(ports, len(self._portsets))

    def common(self, plan) -> None:
        """``d``, the min terms and the paper groups of one plan."""
        cols = self.cols
        cols["d"].append(plan.d)
        for name, (ports, n) in (("min", plan.min_terms), ("min_code", plan.min_code_terms)):
            cols[f"{name}_portset"].append(self.portset(ports))
            cols[f"{name}_n"].append(n)
        self.groups.extend(plan.paper_groups)
        cols["group_ptr"].append(len(self.groups))

    def arrays(self, cls, **extra):
        topo, cols = self.planner.topo, self.cols
        out = dict(dims=np.array(topo.dims, np.int64), strides=np.array(topo.strides, np.int64),
                   coords=topo.coord_array.astype(np.int32), code=self.code, radix=self.radix)
        out.update(extra)
        ports, cols["group_n"], cols["group_ratio"], members = _columns(self.groups, 4)
        cols["group_portset"] = [self.portset(p) for p in ports]
        cols["members"] = [j for m in members for j in m]
        cols["member_ptr"] = _offsets(members)
        (cols["row_j"], ports, cols["row_n"], cols["row_div"], cols["row_dil"],
         cols["row_bounded"]) = _columns(self.rows, 6)
        cols["row_portset"] = [self.portset(p) for p in ports]
        portsets = list(self._portsets)          # in id order (dicts keep insertion order)
        cols["portset_ports"] = [p for ps in portsets for p in ps]
        cols["portset_ptr"] = _offsets(portsets)
        for name in cls._fields:
            if name not in out:
                out[name] = np.array(cols[name], _DTYPES[name])
        return cls(**out)


def _columns(rows: list[tuple], width: int) -> list:
    return list(zip(*rows)) if rows else [()] * width


def _offsets(rows) -> np.ndarray:
    """CSR pointers of a list of sequences."""
    out = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=out[1:])
    return out


def _rel_dtype(topo):
    return np.int16 if max(topo.dims) <= np.iinfo(np.int16).max else np.int32


#: the last exports made in this process, by what defines them (:func:`_export_once`)
_EXPORTS = Kept(4)


def _export_once(key: tuple, make) -> NamedTuple:
    """A planner's export, made once per process for every planner of the same topology and
    parameters (``key``): each run of a sweep builds its own routing, and flattening the
    16x16x16 reference-variant OFR plans (29,791 of them, 15 MB) takes about 8 s.  The last
    four are kept; the engines only read them."""
    return _EXPORTS.get(key, make)


def _export_idn(planner) -> IdnPlans:
    flat = _Flat(planner, ("cand_ptr", "order_ptr"))
    cols, rows, rel = flat.cols, flat.rows, []
    for plan in flat.plans:
        flat.common(plan)
        for r, kind in plan.cands:
            rel.append(r)
            cols["cand_kind"].append(KIND_CODES[kind])
        cols["cand_ptr"].append(len(rel))
        cols["n_oidn"].append(plan.n_oidn)
        rows.extend(plan.ref_oidn_order)
        cols["widn_order"].append(len(rows))
        rows.extend(plan.ref_widn_order)
        cols["order_ptr"].append(len(rows))
    n = planner.topo.n
    return flat.arrays(IdnPlans, cand_rel=np.array(rel, _rel_dtype(planner.topo)).reshape(-1, n))


def _export_orthants(planner) -> OrthantPlans:
    flat = _Flat(planner, ("orthant_ptr", "order_ptr"))
    cols, rows, signs, code_signs = flat.cols, flat.rows, [], []
    for plan in flat.plans:
        flat.common(plan)
        for o in plan.orthants:
            signs.append(o.signs)
            code_signs.append(o.code_signs)
            cols["sel"].append(orthant_select(o.signs))
            cols["code_sel"].append(orthant_select(o.code_signs))
            cols["derouted"].append(o.derouted)
            cols["code_derouted"].append(o.code_derouted)
        cols["orthant_ptr"].append(len(signs))
        rows.extend(plan.ref_order)
        cols["order_ptr"].append(len(rows))
    n = planner.topo.n
    return flat.arrays(OrthantPlans, signs=np.array(signs, np.int8).reshape(-1, n),
                       code_signs=np.array(code_signs, np.int8).reshape(-1, n))
