"""A routing algorithm's compiled form: data that both engines interpret (SPEC §11).

An algorithm describes how it routes as a :class:`Program` (:meth:`Routing.program`): tables it
builds in Python, before the run, and a few rules that say how to read them.  The SimPy engine
reads the program with :class:`Interpreter`; the compiled engine reads the same tables with the
same rules in numba, and never knows which algorithm made them.  An algorithm whose rules cannot
be written this way (it needs Python at every hop) overrides :meth:`Routing.candidates` instead
and runs on the SimPy engine only.

Registers
---------
Every packet carries four routing registers: ``phase`` (which phase's tables route it; 0 when
the packet is made), ``target`` (an intermediate destination, -1 for none: the packet heads for
its destination), ``sel`` (a port filter, -1: every port) and ``ri`` (its place on a source
route).  A decision at injection sets them; the hops read them.

Phases
------
A :class:`Phase` says how candidates are found at a router, for a packet heading for ``t`` (its
target, or its destination when it has none):

1. a packet whose target is this router has reached it: it enters the phase's ``next`` phase
   and heads for its destination (``target = -1``); where that phase has a ``reroute``
   (:class:`Reroute`), UGAL's choice is made again here -- go on, or take Valiant's way through
   a drawn target (progressive adaptive routing) -- and the packet's registers take the
   outcome when it is admitted here;
2. ``key = "route"``: the candidate is hop ``ri`` of the packet's source route
   (:class:`Routes`: a port and a VC); past the route's end, the ejection port;
3. at ``t`` itself, the ejection port (VC 0);
4. otherwise the phase's tables are read at ``k``: ``"offset"``, the coordinate difference
   ``t - router`` (``topology.relative``: tables of O(N) entries, the same at every router of a
   torus), or ``"pair"``, ``router * N + t`` (N^2 entries, any topology).  ``ports[k]`` is a
   bitmask of candidate ports (bit p: port p), ANDed with ``sel`` when the phase is
   ``filtered``;
5. the candidates come in two groups, tried in order: every port of the mask on
   ``adaptive_vc`` (the admissible queue with most free slots wins, ties by the run's stream),
   then one escape queue on ``escape_vc``: port ``escape[k]``, or the lowest port of the mask
   when the phase has no escape table.  A group whose VC is None is left out.  A phase with a
   ``dateline_vc`` (a torus: port 2d goes + in dimension d, 2d + 1 goes -) puts its escape hop
   on that VC instead while the hop's way to ``t`` in the port's dimension still crosses the
   ring's wraparound link (going +: ``t``'s coordinate below the router's; going -: above):
   Dally and Seitz's dateline, the second VC of a ring that breaks its cycle
   (:meth:`Program.with_datelines`).  A phase with an ``escape_vcs`` table puts its escape
   hop on VC ``escape_vcs[k]`` instead (a VC per hop class: a dragonfly's hops before and
   after the global link, up and down a tree).  Where ``escape[k]`` is -1 the escape port is
   read by the destination *terminal* instead: ``terminal_escape[router * c + j]`` for the
   packet's destination terminal ``j`` of its router (``c`` terminals per router; a fat
   tree's destination-mod-k up port at the leaves).

A packet admitted to a queue that is not ejection in a ``"route"`` phase moves ``ri`` on.

Decisions
---------
An optional :class:`Decision` is taken at injection.  One that reads the source's queues
(:class:`Profit`, :class:`QueueQuadrant`) is taken again at every attempt until the router
accepts the packet (the occupancy it looks at changes); a random one draws once per packet (a
redraw at every attempt would let a packet that found its queue full try another way: load
-adaptive, where ROMM, VAL, RLB and GOAL are oblivious; it sustained 0.39 on RLB's worst-case
permutation, whose exact bound is 0.311).  It chooses an :class:`Option` — the
phase to start in, a port filter and how the packet counts as derouted (one of the
algorithm's ``deroute_kinds``) — and possibly a target:

* :class:`Uniform` — one of a fixed list of options, drawn uniformly (one draw from the run's
  stream when there are more than one);
* :class:`RandomTarget` — a target drawn uniformly over the nodes (one draw), then its option
  (or one of its options, a second draw);
* :class:`TableTarget` — a target drawn uniformly from the source router's row of a table the
  algorithm builds (one draw; Valiant's random intermediate group on a dragonfly);
* :class:`Ugal` — the minimal option, or the option through a target drawn as
  :class:`TableTarget`'s, whichever has the smaller congestion times hops (UGAL: the source's
  queue of each route's first hop, or with global information the queue of a channel each
  route crosses); its minimal option may head for a first target (``minimal_via``), where a
  phase's :class:`Reroute` makes the choice again (PAR);
* :class:`RandomInBox` — a target drawn coordinate by coordinate from a box of source and
  destination (the minimal box, or RLB's: a direction per dimension first; one draw per
  dimension, from :func:`box_table`), then its option;
* :class:`QueueQuadrant` — per dimension the direction whose adaptive queue at the source,
  times its hops, is the smaller (Channel Queue Routing), as a port filter;
* :class:`Profit` — the profit of the OutFlank paper's eqs. (15)-(16) (or its reference
  variant) over per-plan options keyed by the coordinate offsets of source and destination
  (:class:`OptionPlans`), scored from the occupancy of the source's adaptive queues; the
  ``minimal`` option when none beats the minimal route.

Every table is checked when the program is built (:meth:`Program.check`): a problem is a
``ValueError`` naming the phase, the table and the entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar, NamedTuple, Sequence

import numpy as np

from icsim.routing.boxes import BoxTable, box_table

OFFSET, PAIR, ROUTE = "offset", "pair", "route"
KEYS = (OFFSET, PAIR, ROUTE)
#: the most ports a router may have for a program: masks are 64-bit integers (port 63 is the
#: sign bit of an int64 mask: the interpreter reads masks as unsigned)
MAX_PORTS = 64
#: a mask's 64 bits as a Python int
_BITS = (1 << 64) - 1


@dataclass(frozen=True)
class Phase:
    """One phase of a program (module docstring).

    Attributes
    ----------
    key : {"offset", "pair", "route"}
    ports : ndarray of int64, optional
        Candidate-port bitmask by key (not for ``"route"``).
    adaptive_vc, escape_vc : int or None
        VCs of the two candidate groups (None: no such group).
    escape : ndarray of int64, optional
        The escape port by key; None: the lowest port of the mask.
    next : int or None
        The phase entered at the target (None: this one).
    filtered : bool
        Whether ``ports[k]`` is ANDed with the packet's ``sel``.
    routes : Routes, optional
        The source routes of a ``"route"`` phase.
    dateline_vc : int or None
        The escape VC of a hop that still has its ring's wraparound link ahead (module
        docstring, rule 5); None: every escape hop on ``escape_vc``.
    escape_vcs : ndarray of int64, optional
        The escape hop's VC by key (rule 5), in place of ``escape_vc`` (which must be set: the
        phase has an escape group).
    terminal_escape : ndarray of int64, optional
        The escape port by router and destination terminal index, ``router * c + j``, where
        ``escape[k]`` is -1 (rule 5).
    reroute : Reroute, optional
        The choice made again where a packet enters this phase at a target (rule 1).
    """

    key: str
    ports: np.ndarray | None = None
    adaptive_vc: int | None = None
    escape_vc: int | None = None
    escape: np.ndarray | None = None
    next: int | None = None
    filtered: bool = False
    routes: Any = None
    dateline_vc: int | None = None
    escape_vcs: np.ndarray | None = None
    terminal_escape: np.ndarray | None = None
    reroute: "Reroute | None" = None


@dataclass(frozen=True)
class Option:
    """What a decision sets: the phase the packet starts in, its port filter (-1: every
    port), and the deroute kind it counts under (None: not derouted)."""

    phase: int = 0
    sel: int = -1
    kind: str | None = None


class Routes:
    """Source routes for a ``"route"`` phase.

    Subclasses give :meth:`hop` (what the SimPy engine reads) and :meth:`arrays` (what the
    compiled engine reads): the same routes.
    """

    def hop(self, src: int, dst: int, i: int) -> tuple[int, int] | None:
        """Hop ``i`` of the route ``src -> dst`` as ``(port, vc)``; None past its end."""
        raise NotImplementedError

    def arrays(self, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """``(route, hops)``: ``route[src * N + dst] = (first hop row, hop count)`` and
        ``hops[row] = (port, vc)``, both int64."""
        raise NotImplementedError


class Decision:
    """A decision at injection (module docstring)."""

    #: how the compiled engine names the rule (it never names an algorithm)
    rule: ClassVar[str] = "none"

    def options(self) -> tuple[Option, ...]:
        """Every option this decision can give (their kinds must be declared)."""
        return ()


@dataclass(frozen=True)
class Uniform(Decision):
    """One of ``options``, drawn uniformly."""

    choices: tuple[Option, ...]
    rule: ClassVar[str] = "uniform"

    def options(self) -> tuple[Option, ...]:
        return self.choices


@dataclass(frozen=True)
class RandomTarget(Decision):
    """A target drawn uniformly over the nodes (one draw), then ``option`` -- or, with
    ``alternatives``, one of ``(option, *alternatives)`` drawn uniformly (a second draw)."""

    option: Option
    alternatives: tuple[Option, ...] = ()
    rule: ClassVar[str] = "random_target"

    def options(self) -> tuple[Option, ...]:
        return (self.option, *self.alternatives)


@dataclass(frozen=True)
class TableTarget(Decision):
    """A target drawn uniformly from ``targets[source router]`` (one draw), then ``option``.
    ``targets`` is an (N, m) int64 table of routers, m >= 1."""

    option: Option
    targets: np.ndarray = field(repr=False, compare=False)
    rule: ClassVar[str] = "table_target"

    def options(self) -> tuple[Option, ...]:
        return (self.option,)


@dataclass(frozen=True)
class Ugal(Decision):
    """Universal globally adaptive load-balanced routing's choice at the source (Singh's
    UGAL; the dragonfly papers' UGAL-L and UGAL-G): a Valiant target drawn as
    :class:`TableTarget`'s (one draw at every attempt), then ``minimal`` (no target) when

        q(minimal) * H(source, destination) <= q(Valiant) * H(source, target, destination)
                                               + threshold

    else ``valiant`` with the target.  ``hops[s * N + t]`` is the hop count of the route s -> t
    (N^2 entries); ``first[phase][s * N + t]`` the port a route's phase leaves s by
    (``minimal.phase`` to the destination, ``valiant.phase`` to the target).  ``q`` is the
    occupancy of the source's queue of that port on the VC of the source's decisions
    (``local``; UGAL-L), or with ``probe`` tables the occupancy of the queue of port id
    ``probe[phase][s * N + t]`` on VC ``probe_vc`` (a channel of the route anywhere in the
    network: UGAL-G's global queues).  Read again at every attempt, as the queues change."""

    minimal: Option
    valiant: Option
    targets: np.ndarray = field(repr=False, compare=False)
    hops: np.ndarray = field(repr=False, compare=False)
    first: tuple = field(repr=False, compare=False)
    threshold: int = 0
    probe: tuple | None = field(default=None, repr=False, compare=False)
    probe_vc: int = 0
    #: the minimal route's first target (N^2, -1: none), and the phase it starts in when it
    #: has one (else ``minimal.phase``): PAR's hop to the group's gateway, where a
    #: :class:`Reroute` makes the choice again
    minimal_via: np.ndarray | None = field(default=None, repr=False, compare=False)
    minimal_via_phase: int = 0
    rule: ClassVar[str] = "ugal"

    def options(self) -> tuple[Option, ...]:
        return (self.minimal, self.valiant)


@dataclass(frozen=True)
class Reroute:
    """UGAL's choice made again at a phase boundary (progressive adaptive routing, Jiang, Kim
    and Dally 2009): where a packet enters the phase that carries this, at its target, the
    program's :class:`Ugal` rule is applied at that router -- with the same tables, the router
    in the source's place -- between going on in this phase to the destination and
    ``valiant``, Valiant's way through a freshly drawn target.  The program's decision must
    be a :class:`Ugal`."""

    valiant: Option


@dataclass(frozen=True)
class RandomInBox(Decision):
    """A target drawn from a box of source and destination, coordinate by coordinate, then
    ``option``.  Per dimension, with Δ the minimal distance between the two coordinates:

    * minimal (the default; two-phase ROMM): the coordinate is uniform over the Δ + 1 on the
      minimal way (so the target is uniform over the minimal box).  At an exact k/2 tie the
      way is +, or with ``random_ties`` a side drawn with the coordinate, and the packet's
      port filter ``sel`` then forbids the other side's port of that dimension (the phases
      must be ``filtered`` and carry both ports at a tie);
    * ``balanced`` (RLB): the direction first -- the minimal one with probability
      (k - Δ) / k, the other with Δ / k -- then the coordinate uniform over the k - Δ + 1 or
      Δ + 1 on that way, and ``sel`` forbids the other direction's port of the dimension
      (the phases must be ``filtered`` and carry both ports of a dimension to travel).  Where
      Δ < ``threshold`` the direction is the minimal one (RLBth);
    * ``quadrant``: the direction only (as ``balanced``, or minimal); the target is the source
      itself, so the packet heads for its destination from its first router, on the option's
      phase's ``next``, within the drawn quadrant (GOAL).

    The rows are listed once per dimension and offset class (:func:`box_table`); both engines
    draw each dimension's row from ``cum`` (one draw of the run's stream per dimension that
    has more than one row).  Needs a torus whose every dimension is a ring."""

    option: Option
    random_ties: bool = False
    balanced: bool = False
    threshold: int = 0
    quadrant: bool = False
    rule: ClassVar[str] = "random_in_box"

    def options(self) -> tuple[Option, ...]:
        return (self.option,)

    def table(self, dims: Sequence[int]) -> BoxTable:
        """This decision's :func:`box_table` on the torus of rings ``dims``."""
        return box_table(dims, self.random_ties, self.balanced, self.threshold, self.quadrant)


@dataclass(frozen=True)
class QueueQuadrant(Decision):
    """Per dimension with a non-zero offset, the direction whose adaptive queue at the source,
    times the hops that way, is the smaller -- ``used[minimal] * Δ <= used[other] * (k - Δ)``
    keeps the minimal one (+ at an exact k/2 tie) -- and the other's port filtered out
    (``sel``); then ``option`` (its phase must be ``filtered``).  Channel Queue Routing's
    choice: the source's channel queues stand for the congestion each way.  No draw; read
    again at every attempt, as the queues change.  Needs a torus of rings."""

    option: Option
    rule: ClassVar[str] = "queue_quadrant"

    def options(self) -> tuple[Option, ...]:
        return (self.option,)


class OptionPlans(NamedTuple):
    """A profit decision's per-plan options as flat arrays (read by the compiled engine).

    A plan is keyed like the OutFlank planners' (:mod:`icsim.routing.outflank`): ``key =
    sum_i code[i, s_i, t_i] * radix[i]`` over the torus ``dims``/``strides``/``coords``.  Per
    plan: ``d`` (the minimal distance), the minimal route's port sets for the two profits
    (``min_portset``/``min_n``, ``min_code_portset``/``min_code_n``), the paper profit's groups
    (``group_ptr`` CSR of ``group_portset``/``group_n``/``group_ratio`` and their ``members``,
    CSR by ``member_ptr``), the reference profit's search rows (``order_ptr`` CSR of ``row_j``,
    ``row_portset``, ``row_n``, ``row_div``, ``row_dil``, ``row_bounded``; rows before
    ``order_split[plan]`` are the first stage, the rest must beat the first stage's best
    strictly), and its options (``opt_ptr`` CSR).  Port sets are ``portset_ports`` CSR by
    ``portset_ptr``.  ``row_j`` and ``members`` index a plan's options.

    An option row: ``opt_target`` (whether it sets a target: the source plus ``opt_rel``, per
    dimension modulo ``dims``), ``opt_phase``, ``opt_sel``, ``opt_kind`` (0: not derouted, else
    1 + the index of its kind among the algorithm's ``deroute_kinds``).

    A :class:`RandomInBox` decision's rows ride along as ``box_ptr``, ``box_step``,
    ``box_sel`` and ``box_cum`` (:class:`BoxTable`'s ``ptr``, ``step``, ``sel``, ``cum``;
    its ``code`` is ``code``); other decisions leave the one-row placeholders.
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
    order_ptr: np.ndarray
    order_split: np.ndarray
    row_j: np.ndarray
    row_portset: np.ndarray
    row_n: np.ndarray
    row_div: np.ndarray
    row_dil: np.ndarray
    row_bounded: np.ndarray
    opt_ptr: np.ndarray
    opt_target: np.ndarray
    opt_rel: np.ndarray
    opt_phase: np.ndarray
    opt_sel: np.ndarray
    opt_kind: np.ndarray
    box_ptr: np.ndarray = np.zeros((1, 2), np.int32)
    box_step: np.ndarray = np.zeros(1, np.int32)
    box_sel: np.ndarray = np.full(1, -1, np.int64)
    box_cum: np.ndarray = np.ones(1, np.int64)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self)


@dataclass(frozen=True)
class Profit(Decision):
    """The OutFlank profit over per-plan options (module docstring).

    ``choose(node, dst, used, rand) -> (option, target)`` is the same decision in Python (the
    algorithm's own planner, for the SimPy engine); the engines' agreement tests hold the two
    together.  ``kinds`` are the option kinds the plans' ``opt_kind`` codes stand for.
    """

    plans: OptionPlans
    eta: float
    variant: str
    min_deroute_distance: int
    minimal: Option
    kinds: tuple[str, ...]
    choose: Callable[..., tuple[Option, int]] = field(repr=False, compare=False)
    rule: ClassVar[str] = "profit"

    def options(self) -> tuple[Option, ...]:
        return (self.minimal, *(Option(kind=k) for k in self.kinds))


@dataclass(frozen=True)
class Program:
    """An algorithm's compiled form: its phases and an optional decision at injection."""

    phases: tuple[Phase, ...]
    decision: Decision | None = None

    def check(self, num_nodes: int, num_ports: int, num_vcs: int,
              relative_size: int | None, deroute_kinds: Sequence[str]) -> None:
        """Raise ValueError naming the first problem: a key the topology cannot serve, a table
        of the wrong length, a port or VC out of range, a phase number that does not exist,
        a deroute kind the algorithm does not declare."""
        if not self.phases:
            raise ValueError("a program needs at least one phase")
        if num_ports > MAX_PORTS:
            raise ValueError(f"routers of {num_ports} ports: a program's port masks hold at "
                             f"most {MAX_PORTS}")
        for i, ph in enumerate(self.phases):
            where = f"phase {i}"
            if ph.key not in KEYS:
                raise ValueError(f"{where}: key {ph.key!r} is not one of {', '.join(KEYS)}")
            if ph.next is not None and not 0 <= ph.next < len(self.phases):
                raise ValueError(f"{where}: next phase {ph.next} does not exist")
            for name in ("adaptive_vc", "escape_vc", "dateline_vc"):
                vc = getattr(ph, name)
                if vc is not None and not 0 <= vc < num_vcs:
                    raise ValueError(f"{where}: {name} {vc} is not a VC (0..{num_vcs - 1})")
            if ph.dateline_vc is not None and (ph.escape_vc is None or ph.key == ROUTE):
                raise ValueError(f"{where}: a dateline VC needs an escape VC and a table key")
            if ph.key == ROUTE:
                if ph.routes is None:
                    raise ValueError(f"{where}: a route phase needs its routes")
                continue
            size = relative_size if ph.key == OFFSET else num_nodes * num_nodes
            if size is None:
                raise ValueError(f"{where}: the topology has no coordinate offsets for an "
                                 f"'offset' key")
            for name in ("ports", "escape"):
                table = getattr(ph, name)
                if table is None:
                    if name == "ports":
                        raise ValueError(f"{where}: no ports table")
                    continue
                if len(table) != size:
                    raise ValueError(f"{where}: {name} has {len(table)} entries, its key has "
                                     f"{size}")
            beyond = (np.asarray(ph.ports, dtype=np.int64) >> num_ports if num_ports < 64
                      else np.zeros(1, np.int64))
            bad = np.nonzero(beyond != 0)[0]
            if len(bad):
                raise ValueError(f"{where}: ports[{int(bad[0])}] names a port beyond "
                                 f"{num_ports - 1}")
            if ph.escape is not None:
                esc = np.asarray(ph.escape, dtype=np.int64)
                low = -1 if ph.terminal_escape is not None else 0
                bad = np.nonzero((esc < low) | (esc >= num_ports))[0]
                if len(bad):
                    raise ValueError(f"{where}: escape[{int(bad[0])}] = {int(esc[bad[0]])} is "
                                     f"not a port")
            if ph.terminal_escape is not None:
                term = np.asarray(ph.terminal_escape, dtype=np.int64)
                if len(term) % num_nodes or ph.escape is None:
                    raise ValueError(f"{where}: terminal_escape needs an escape table and a "
                                     f"row of ports per router ({len(term)} entries for "
                                     f"{num_nodes} routers)")
                bad = np.nonzero((term < 0) | (term >= num_ports))[0]
                if len(bad):
                    raise ValueError(f"{where}: terminal_escape[{int(bad[0])}] = "
                                     f"{int(term[bad[0]])} is not a port")
            if ph.escape_vcs is not None:
                if ph.escape_vc is None or ph.dateline_vc is not None:
                    raise ValueError(f"{where}: escape_vcs needs an escape VC and no dateline")
                vcs = np.asarray(ph.escape_vcs, dtype=np.int64)
                if len(vcs) != size:
                    raise ValueError(f"{where}: escape_vcs has {len(vcs)} entries, its key has "
                                     f"{size}")
                bad = np.nonzero((vcs < 0) | (vcs >= num_vcs))[0]
                if len(bad):
                    raise ValueError(f"{where}: escape_vcs[{int(bad[0])}] = {int(vcs[bad[0]])} "
                                     f"is not a VC (0..{num_vcs - 1})")
        if isinstance(self.decision, (TableTarget, Ugal)):
            targets = np.asarray(self.decision.targets)
            if targets.ndim != 2 or targets.shape[0] != num_nodes or targets.shape[1] < 1:
                raise ValueError(f"a decision's targets table has shape {targets.shape}, not "
                                 f"({num_nodes}, m >= 1)")
            bad = np.nonzero((targets < 0) | (targets >= num_nodes))
            if len(bad[0]):
                raise ValueError(f"a decision's targets[{int(bad[0][0])}, {int(bad[1][0])}] is "
                                 f"not a router")
        for i, ph in enumerate(self.phases):
            if ph.reroute is None:
                continue
            if not isinstance(self.decision, Ugal):
                raise ValueError(f"phase {i}: a reroute applies the program's UGAL rule; the "
                                 f"program's decision is not UGAL")
            opt = ph.reroute.valiant
            if not 0 <= opt.phase < len(self.phases):
                raise ValueError(f"phase {i}: its reroute starts in phase {opt.phase}, which "
                                 f"does not exist")
            if opt.kind is not None and opt.kind not in deroute_kinds:
                raise ValueError(f"phase {i}: its reroute counts as derouted {opt.kind!r}, "
                                 f"which the algorithm does not declare")
        if isinstance(self.decision, Ugal):
            d = self.decision
            tables = [("hops", d.hops), ("first", d.first[0]), ("first", d.first[1])]
            if d.minimal_via is not None:
                tables.append(("minimal_via", d.minimal_via))
            if d.probe is not None:
                tables += [("probe", d.probe[0]), ("probe", d.probe[1])]
            for name, table in tables:
                if len(table) != num_nodes * num_nodes:
                    raise ValueError(f"UGAL's {name} table has {len(table)} entries, not "
                                     f"{num_nodes * num_nodes}")
        if self.decision is not None:
            for opt in self.decision.options():
                if not 0 <= opt.phase < len(self.phases):
                    raise ValueError(f"a decision's option starts in phase {opt.phase}, which "
                                     f"does not exist")
                if opt.kind is not None and opt.kind not in deroute_kinds:
                    raise ValueError(f"a decision's option counts as derouted {opt.kind!r}, "
                                     f"which the algorithm does not declare in deroute_kinds "
                                     f"({', '.join(deroute_kinds) or 'none'})")

    @property
    def has_routes(self) -> bool:
        return any(ph.key == ROUTE for ph in self.phases)

    def _out_masks(self, ph: Phase, n: int, num_vcs: int, escape_only: bool,
                   topology: Any = None) -> np.ndarray:
        """Per state ``router * n + t`` and VC, the bitmask of the ports a packet heading
        for ``t`` may leave ``router`` by on that VC in phase ``ph`` (0 at ``t`` itself; a
        dateline phase's hop on its dateline VC while the wraparound is ahead, rule 5)."""
        out = np.zeros((n * n, num_vcs), dtype=np.int64)
        ports = np.asarray(ph.ports, dtype=np.int64)
        if ph.escape_vc is not None:
            if ph.escape is not None:
                e = np.asarray(ph.escape, np.int64)
                # by terminal (-1): any port of the mask may be the one
                esc = np.where(ports == 0, 0, np.where(e >= 0, np.left_shift(1, np.maximum(e, 0)),
                                                       ports))
            else:
                esc = ports & -ports
            vcs = (np.full(n * n, ph.escape_vc, np.int64) if ph.escape_vcs is None
                   else np.asarray(ph.escape_vcs, np.int64))
            if ph.dateline_vc is not None:         # ports 2d (+) and 2d + 1 (-) of a torus
                port = np.log2(np.maximum(esc, 1)).astype(np.int64)
                coords = np.asarray(topology.coord_array)
                r, t = np.divmod(np.arange(n * n), n)
                x, y = coords[r, port >> 1], coords[t, port >> 1]
                ahead = np.where(port & 1 == 0, y < x, y > x) & (esc != 0)
                vcs = np.where(ahead, ph.dateline_vc, vcs)
            np.bitwise_or.at(out, (np.arange(n * n), vcs), esc)
        if ph.adaptive_vc is not None and not escape_only:
            out[:, ph.adaptive_vc] |= ports
        out[np.arange(n) * (n + 1)] = 0
        return out

    def dependency_edges(self, topology: Any, num_vcs: int,
                         escape_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The channel-dependency graph of every path the program can give, as edge arrays
        over channel ids ``(router * num_ports + port) * num_vcs + vc``: a channel a packet
        heading for ``t`` holds, to every channel it may ask for next at the router the first
        leads to (in the same phase; at its target, the next phase's first channel to any
        destination).  Every state (router, t) counts, whether or not a source reaches it (a
        superset of the real graph: acyclic here means acyclic there).  ``escape_only``: the
        escape channels alone (Duato's condition for adaptive routing over an escape network).
        Pair-keyed phases only (tables by router and target, any topology)."""
        n, nports = topology.num_nodes, topology.num_ports
        if any(ph.key != PAIR for ph in self.phases):
            raise ValueError("the dependency check reads pair-keyed phases only")
        nbr = topology.neighbor_array
        outs = [self._out_masks(ph, n, num_vcs, escape_only, topology) for ph in self.phases]
        src, dst = [], []
        t_of = np.tile(np.arange(n), n)
        r_of = np.repeat(np.arange(n), n)
        for f, ph in enumerate(self.phases):
            out = outs[f]
            nxt = f if ph.next is None else ph.next
            # at its target a packet goes on in the next phase to any destination (or, where
            # that phase reroutes, in the reroute's phase to any target)
            entering = None
            if ph.next is not None:
                entering = np.bitwise_or.reduce(outs[nxt].reshape(n, n, num_vcs), axis=1)
                again = self.phases[nxt].reroute
                if again is not None:
                    entering |= np.bitwise_or.reduce(
                        outs[again.valiant.phase].reshape(n, n, num_vcs), axis=1)
            for w in range(num_vcs):
                col = out[:, w]
                for b in range(nports):
                    held = np.nonzero((col >> b) & 1)[0]
                    if not held.size:
                        continue
                    r, t = r_of[held], t_of[held]
                    v = nbr[r, b]
                    onward = v != t
                    acc = np.zeros((n, num_vcs), dtype=np.int64)   # by holding router
                    np.bitwise_or.at(acc, r[onward], out[v[onward] * n + t[onward]])
                    if entering is not None and not onward.all():
                        np.bitwise_or.at(acc, r[~onward], entering[v[~onward]])
                    rows = np.nonzero(acc.any(axis=1))[0]
                    for w2 in range(num_vcs):
                        for b2 in range(nports):
                            hit = rows[((acc[rows, w2] >> b2) & 1) == 1]
                            if hit.size:
                                src.append((hit * nports + b) * num_vcs + w)
                                dst.append((nbr[hit, b] * nports + b2) * num_vcs + w2)
        if not src:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(src), np.concatenate(dst)

    @property
    def has_datelines(self) -> bool:
        return any(ph.dateline_vc is not None for ph in self.phases)

    def with_datelines(self) -> "Program":
        """The same routes on dateline VCs instead of the bubble rule: escape VC ``v`` becomes
        the pair ``2v`` (no wraparound ahead) and ``2v + 1`` (the dateline VC), so each phase
        keeps a VC set of its own (:func:`icsim.routing.registry.dateline_vcs` names them).
        Only for programs that route on escape VCs alone: an adaptive VC's deadlock freedom
        rests on its escape, which keeps the bubble."""
        if any(ph.adaptive_vc is not None for ph in self.phases):
            raise ValueError("dateline VCs replace the bubble rule of escape-only programs; "
                             "this one has adaptive VCs")
        if self.has_routes or self.has_datelines:
            raise ValueError("dateline VCs need table phases on one VC each")
        return Program(tuple(replace(ph, escape_vc=2 * ph.escape_vc,
                                     dateline_vc=2 * ph.escape_vc + 1)
                             for ph in self.phases), self.decision)


def kind_code(kind: str | None, kinds: Sequence[str]) -> int:
    """How a deroute kind is counted: 0 for None, else 1 + its index in ``kinds``."""
    return 0 if kind is None else 1 + list(kinds).index(kind)


class Interpreter:
    """A program read in Python: ``candidates``, ``inject`` and ``admitted`` as the SimPy
    engine calls them (:class:`~icsim.routing.registry.Routing`), the rules of the module
    docstring.  The compiled engine reads the same program (``engines/compiled``).

    Candidate groups are interned per (phase, mask, escape port): a packet-hop looks up a
    table, ANDs a filter and picks an interned tuple.
    """

    def __init__(self, program: Program, topology: Any, deroute_kinds: Sequence[str]):
        self.program = program
        self._topology = topology
        self.num_nodes = topology.num_nodes
        self.eject = topology.num_ports
        self.eject_groups = (((self.eject, 0),),)
        self._codes_of = {k: kind_code(k, deroute_kinds) for k in (None, *deroute_kinds)}
        caps = topology.capabilities
        self._codes = topology.relative_codes if "offsets" in caps else None
        self._base = topology.relative_base if "offsets" in caps else 0
        self._next = [i if ph.next is None else ph.next for i, ph in enumerate(program.phases)]
        self._find = [self._finder(i, ph) for i, ph in enumerate(program.phases)]
        self.has_inject = program.decision is not None
        self._reroute = [ph.reroute for ph in program.phases]
        self.has_admit = program.has_routes or any(r is not None for r in self._reroute)
        self._decide = self._decision(program.decision) if self.has_inject else None
        self._once = not isinstance(program.decision, (Profit, QueueQuadrant, Ugal))
        self.queues: Sequence[int] = ()
        self.num_vcs = self.ports_per_router = 1
        self.adaptive_vc = 0
        self.rand: Callable[[], float] = lambda: 0.0

    # ------------------------------------------------------------------ hops
    def _finder(self, index: int, ph: Phase) -> Callable:
        """``find(node, packet, t) -> groups`` for a phase whose packet heads for t."""
        if ph.key == ROUTE:
            hop, interned, eject = ph.routes.hop, {}, self.eject_groups

            def route(node, packet, t):
                h = hop(packet.src, packet.dst, packet.ri)
                if h is None:
                    return eject
                g = interned.get(h)
                if g is None:
                    g = interned[h] = ((h,),)
                return g
            return route
        ports = ph.ports.tolist() if len(ph.ports) <= 1 << 22 else ph.ports
        escape = (None if ph.escape is None else
                  ph.escape.tolist() if len(ph.escape) <= 1 << 22 else ph.escape)
        adaptive, esc_vc, filtered = ph.adaptive_vc, ph.escape_vc, ph.filtered
        esc_vcs = (None if ph.escape_vcs is None else
                   ph.escape_vcs.tolist() if len(ph.escape_vcs) <= 1 << 22 else ph.escape_vcs)
        by_terminal = None if ph.terminal_escape is None else ph.terminal_escape.tolist()
        conc, eject = self._topology.terminals_per_router, self.eject
        groups: dict[tuple[int, int, int], tuple] = {}

        def make(mask: int, esc: int, esc_vc: int | None) -> tuple:
            out = []
            if adaptive is not None:
                rest, group = mask, []
                while rest:
                    low = rest & -rest
                    group.append((low.bit_length() - 1, adaptive))
                    rest ^= low
                out.append(tuple(group))
            if esc_vc is not None:
                out.append(((esc, esc_vc),))
            return tuple(out)

        codes, base, n = self._codes, self._base, self.num_nodes
        offset = ph.key == OFFSET
        dateline = ph.dateline_vc
        coords = self._topology.coord_array.tolist() if dateline is not None else None

        def table(node, packet, t):
            k = codes[t] - codes[node] + base if offset else node * n + t
            mask = int(ports[k]) & _BITS
            if filtered:
                mask &= packet.sel
            esc = int(escape[k]) if escape is not None else (mask & -mask).bit_length() - 1
            if esc < 0 and by_terminal is not None:   # by the destination terminal
                esc = by_terminal[node * conc + max(packet.eport - eject, 0)]
            vc = esc_vc if esc_vcs is None else int(esc_vcs[k])
            if dateline is not None and esc >= 0:
                x, y = coords[node][esc >> 1], coords[t][esc >> 1]
                if (y < x) if esc & 1 == 0 else (y > x):
                    vc = dateline
            g = groups.get((mask, esc, vc))
            if g is None:
                g = groups[(mask, esc, vc)] = make(mask, esc, vc)
            return g
        return table

    def candidates(self, node: int, packet) -> tuple:
        target = packet.target
        phase = packet.phase
        if target == node:                    # the intermediate target reached: next phase
            phase = self._next[phase]
            again = self._reroute[phase]
            if again is None:
                packet.phase = phase
                packet.target = target = -1
            else:                             # UGAL's choice again, taken when admitted here
                via, minimal = self._choose(node, packet.dst)
                if minimal:
                    packet.pending = (phase, -1, packet.sel, packet.deroute)
                    target = -1
                else:
                    opt = again.valiant
                    phase, target = opt.phase, via
                    packet.pending = (phase, via, opt.sel, self._codes_of[opt.kind])
        t = packet.dst if target < 0 else target
        find = self._find[phase]
        if t == node and self.program.phases[phase].key != ROUTE:
            return self.eject_groups
        return find(node, packet, t)

    def admitted(self, node: int, packet, port: int, vc: int) -> None:
        pending = packet.pending
        if pending is not None and packet.target == node:
            packet.phase, packet.target, packet.sel, packet.deroute = pending
            packet.pending = None
        if port != self.eject and self.program.phases[packet.phase].key == ROUTE:
            packet.ri += 1

    # ------------------------------------------------------------------ injection
    def _apply(self, packet, option: Option, target: int) -> None:
        packet.phase = option.phase
        packet.sel = option.sel
        packet.target = target
        packet.deroute = self._codes_of[option.kind]

    def _decision(self, decision: Decision) -> Callable:
        apply, n = self._apply, self.num_nodes
        if isinstance(decision, Uniform):
            choices = decision.choices

            def uniform(node, packet, used, rand):
                j = int(rand() * len(choices)) if len(choices) > 1 else 0
                apply(packet, choices[j], -1)
            return uniform
        if isinstance(decision, RandomTarget):
            choices = decision.options()

            def random_target(node, packet, used, rand):
                target = int(rand() * n)
                j = int(rand() * len(choices)) if len(choices) > 1 else 0
                apply(packet, choices[j], target)
            return random_target
        if isinstance(decision, TableTarget):
            option, targets = decision.option, decision.targets
            m = targets.shape[1]

            def table_target(node, packet, used, rand):
                apply(packet, option, int(targets[node, int(rand() * m) if m > 1 else 0]))
            return table_target
        if isinstance(decision, Ugal):
            return self._ugal(decision)
        if isinstance(decision, RandomInBox):
            option, topo = decision.option, self._topology
            box = decision.table(topo.dims)
            coords, dims, strides = topo.coord_array, list(topo.dims), list(topo.strides)
            code, step, sel = box.code, box.step.tolist(), box.sel.tolist()

            def random_in_box(node, packet, used, rand):
                cs, ct = coords[node], coords[packet.dst]
                target, mask = 0, -1
                for i, k in enumerate(dims):
                    row = box.draw(i, int(code[i, cs[i], ct[i]]), rand)
                    target += (int(cs[i]) + step[row]) % k * strides[i]
                    mask &= sel[row]
                apply(packet, option, target)
                packet.sel = option.sel & mask
            return random_in_box
        if isinstance(decision, QueueQuadrant):
            option, topo = decision.option, self._topology
            coords, dims = topo.coord_array, list(topo.dims)

            def queue_quadrant(node, packet, used, rand):
                cs, ct = coords[node], coords[packet.dst]
                mask = -1
                for i, k in enumerate(dims):
                    c = (int(ct[i]) - int(cs[i])) % k
                    if c == 0:
                        continue
                    low, d = (2 * i, c) if 2 * c <= k else (2 * i + 1, k - c)
                    keep = used[low] * d <= used[low ^ 1] * (k - d)
                    mask &= ~(1 << (low ^ 1 if keep else low))
                apply(packet, option, -1)
                packet.sel = option.sel & mask
            return queue_quadrant
        if isinstance(decision, Profit):
            choose = decision.choose

            def profit(node, packet, used, rand):
                option, target = choose(node, packet.dst, used, rand)
                apply(packet, option, target)
            return profit
        raise ValueError(f"no interpreter for the decision {type(decision).__name__}")

    def _ugal(self, d: Ugal) -> Callable:
        apply, n = self._apply, self.num_nodes
        via_table = d.minimal_via

        def ugal(node, packet, used, rand):
            via, minimal = self._choose(node, packet.dst)
            if minimal:
                first = -1 if via_table is None else int(via_table[node * n + packet.dst])
                apply(packet, d.minimal if first < 0 else
                      replace(d.minimal, phase=d.minimal_via_phase), first)
            else:
                apply(packet, d.valiant, via)
        return ugal

    def _choose(self, node: int, dst: int) -> tuple[int, bool]:
        """The program's UGAL rule at ``node`` for ``dst``: ``(Valiant's target drawn,
        whether the minimal route wins)``; one draw of the run's stream where there is more
        than one target."""
        d, n = self.program.decision, self.num_nodes
        m = d.targets.shape[1]
        via = int(d.targets[node, int(self.rand() * m) if m > 1 else 0])
        k_min, k_via = node * n + dst, node * n + via
        h_min = int(d.hops[k_min])
        h_val = int(d.hops[k_via]) + int(d.hops[via * n + dst])
        occ, V = self.queues, self.num_vcs
        if d.probe is None:                       # UGAL-L: this router's own queues
            base = node * self.ports_per_router
            a = self.adaptive_vc
            q_min = occ[(base + int(d.first[0][k_min])) * V + a]
            q_val = occ[(base + int(d.first[1][k_via])) * V + a]
        else:                                     # UGAL-G: a channel of each route
            q_min = occ[int(d.probe[0][k_min]) * V + d.probe_vc]
            q_val = occ[int(d.probe[1][k_via]) * V + d.probe_vc]
        return via, q_min * h_min <= q_val * h_val + d.threshold

    def bind_queues(self, occupancy: Sequence[int], num_vcs: int, ports_per_router: int,
                    adaptive_vc: int, rand: Callable[[], float]) -> None:
        """The engine's queue occupancies by queue id, its ids' shape and the run's stream:
        what :class:`Ugal` reads (a router's queues, or any channel's) and draws from, at
        injection and where a :class:`Reroute` makes the choice again."""
        self.queues, self.num_vcs = occupancy, num_vcs
        self.ports_per_router, self.adaptive_vc, self.rand = ports_per_router, adaptive_vc, rand

    def inject(self, node: int, packet, used, rand) -> None:
        if self._once:                        # a draw: once per packet
            if packet.drawn:
                return
            packet.drawn = True
        self._decide(node, packet, used, rand)

    def describe(self, packet) -> str:
        if packet.target >= 0:
            return f"phase {packet.phase}, via {packet.target}"
        return f"phase {packet.phase}" if len(self.program.phases) > 1 else ""
