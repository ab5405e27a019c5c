"""A routing algorithm's compiled form: data that both engines interpret (SPEC §11).

An algorithm describes how it routes as a :class:`Program` (:meth:`Routing.program`): tables it
builds in Python, before the run, and a few rules that say how to read them.  The SimPy engine
reads the program with :class:`~icsim.routing.interpreter.Interpreter`; the compiled engine
reads the same tables with the same rules in numba, and never knows which algorithm made them
(its channel-dependency graph: :func:`icsim.routing.dependencies.dependency_edges`).  An algorithm whose rules cannot
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
5. the candidates come in two groups (three with a detour, rule 6), tried in order: every
   port of the mask on ``adaptive_vc`` (the admissible queue with most free slots wins, ties
   by the run's stream), then one escape queue on ``escape_vc``: port ``escape[k]``, or the lowest port of the mask
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
6. a phase with a ``detour`` table has a second adaptive group between the two: the ports of
   ``detour[k]`` that are not in the first group, on ``adaptive_vc``, ANDed with
   ``detour_from[router * N + s]`` for the packet's source router ``s`` when the phase has
   that table -- the ports by which a packet from ``s`` may still leave its minimal way here.
   The group is tried only when no queue of the first admits the packet: a detour is taken
   when the minimal queues are full (DAL on a HyperX: at most one deroute per dimension, in
   the dimensions where the router still has ``s``'s coordinate).  A packet admitted to a
   detour queue counts as derouted under the phase's ``detour_kind`` (unless it already
   counts under a kind).  Pair keys only.

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
  phase's :class:`Reroute` makes the choice again (PAR).  Taken again at every attempt, or
  with ``once`` at the first only, as a draw;
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

from icsim.model.registry import described
from icsim.routing.boxes import BoxTable, box_table

OFFSET, PAIR, ROUTE = "offset", "pair", "route"
KEYS = (OFFSET, PAIR, ROUTE)
#: the most ports a router may have for a program: masks are 64-bit integers (port 63 is the
#: sign bit of an int64 mask: the interpreter reads masks as unsigned)
MAX_PORTS = 64


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
    detour : ndarray of int64, optional
        A second adaptive group's ports by key (rule 6).
    detour_from : ndarray of int64, optional
        The ports a detour may take, by router and source router, ``router * N + s``
        (rule 6); None: every port of ``detour[k]``.
    detour_kind : str, optional
        How a packet that takes a detour counts as derouted (one of the algorithm's
        ``deroute_kinds``).
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
    detour: np.ndarray | None = None
    detour_from: np.ndarray | None = None
    detour_kind: str | None = None


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
    network: UGAL-G's global queues).  Read again at every attempt, as the queues change;
    with ``once``, read (and the target drawn) at the first attempt only, and the packet waits
    for the queue it chose (BookSim2's ``ugal_dragonflynew``, where the route is computed once
    when the packet reaches the head of the source router's input buffer).  A
    :class:`Reroute` reads the queues at every attempt either way."""

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
    once: bool = False
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
              relative_size: int | None, deroute_kinds: Sequence[str],
              topology: Any = None) -> None:
        """Raise ValueError naming the first problem: a field of the wrong type (a float mask,
        a VC that is not a whole number, a table that is not an integer array), a key the
        topology cannot serve, a table of the wrong length, a port or VC out of range, a
        phase number that does not exist, a deroute kind the algorithm does not declare.

        With the ``topology``, every entry a packet can reach is checked against it too
        (:meth:`_check_reach`): an entry where a packet must move has a candidate (a port of
        its mask or an escape), and every port an entry names has a link at every router
        where the entry can be read."""
        self.check_types()
        check_ports(num_ports)
        for i, ph in enumerate(self.phases):
            self._check_phase(i, ph, num_nodes, num_ports, num_vcs, relative_size)
            if ph.detour_kind is not None:
                self._check_option(Option(phase=i, kind=ph.detour_kind), deroute_kinds,
                                   f"phase {i}: its detour")
            if ph.reroute is not None:
                self._check_option(ph.reroute.valiant, deroute_kinds, f"phase {i}: its reroute")
                if not isinstance(self.decision, Ugal):
                    raise ValueError(f"phase {i}: a reroute applies the program's UGAL rule; "
                                     f"the program's decision is not UGAL")
        if self.decision is not None:
            self._check_decision(num_nodes, deroute_kinds)
        if topology is not None:
            targets = self._targets(topology)
            for i, ph in enumerate(self.phases):
                if ph.key != ROUTE:
                    self._check_reach(i, ph, topology, targets)

    def check_types(self) -> None:
        """ValueError naming the first field of the program of the wrong type (what
        :meth:`check` checks first, and what must hold before the program is read at all)."""
        if not isinstance(self.phases, (tuple, list)) or not self.phases:
            raise ValueError(f"a program needs a tuple of at least one Phase, not "
                             f"{described(self.phases)}")
        for i, ph in enumerate(self.phases):
            if not isinstance(ph, Phase):
                raise ValueError(f"phase {i} is {described(ph)}, not a Phase")
        if self.decision is not None and not isinstance(self.decision, Decision):
            raise ValueError(f"its decision is {described(self.decision)}, not a Decision (or "
                             f"None)")
        for i, ph in enumerate(self.phases):
            self._check_types(i, ph)

    @staticmethod
    def _check_types(i: int, ph: Phase) -> None:
        """ValueError naming a field of ``ph`` of the wrong type."""
        where = f"phase {i}"
        if not isinstance(ph.key, str):
            raise ValueError(f"{where}: key is {described(ph.key)}, not one of {', '.join(KEYS)}")
        for name in ("next", "adaptive_vc", "escape_vc", "dateline_vc"):
            value = getattr(ph, name)
            if value is not None and not _whole(value):
                raise ValueError(f"{where}: {name} is {described(value)}, not a whole number (or "
                                 f"None)")
        if not isinstance(ph.filtered, (bool, np.bool_)):
            raise ValueError(f"{where}: filtered is {described(ph.filtered)}, not True or False")
        for name in ("ports", "escape", "escape_vcs", "terminal_escape", "detour",
                     "detour_from"):
            table = getattr(ph, name)
            if table is None:
                continue
            if (not isinstance(table, np.ndarray) or table.ndim != 1
                    or not np.issubdtype(table.dtype, np.integer)):
                got = (f"an array of {table.dtype} of {table.ndim} dimension(s)"
                       if isinstance(table, np.ndarray) else described(table))
                raise ValueError(f"{where}: {name} is {got}, not a one-dimensional NumPy "
                                 f"array of integers")
        if ph.key == ROUTE and ph.routes is not None and not isinstance(ph.routes, Routes):
            raise ValueError(f"{where}: routes is {described(ph.routes)}, not a Routes")
        if ph.reroute is not None and not isinstance(ph.reroute, Reroute):
            raise ValueError(f"{where}: reroute is {described(ph.reroute)}, not a Reroute")
        if ph.detour_kind is not None and not isinstance(ph.detour_kind, str):
            raise ValueError(f"{where}: detour_kind is {described(ph.detour_kind)}, not a name")

    def _targets(self, topology: Any) -> np.ndarray | None:
        """The routers a packet may head for (a pair-keyed entry is read only toward one):
        the routers with terminals and the targets the decision may draw; None: every router."""
        d = self.decision
        n = topology.num_nodes
        if topology.num_terminals == n * topology.terminals_per_router and \
                len(np.unique(topology.terminal_routers)) == n:
            return None
        if isinstance(d, (RandomTarget, RandomInBox, Profit)):
            return None
        parts = [np.unique(topology.terminal_routers)]
        if isinstance(d, (TableTarget, Ugal)):
            parts.append(np.unique(np.asarray(d.targets)))
        if isinstance(d, Ugal) and d.minimal_via is not None:
            via = np.asarray(d.minimal_via)
            parts.append(np.unique(via[via >= 0]))
        return np.unique(np.concatenate(parts))

    def _check_reach(self, i: int, ph: Phase, topology: Any,
                     targets: np.ndarray | None) -> None:
        """ValueError naming the first entry of a table phase that a packet can read where
        it has no candidate (no port in its mask, no escape), or that names a port without a
        link at a router where the entry is read.

        An ``"offset"`` entry is read at every router with a target that far away: on a ring
        every port has a link; on a line (a mesh dimension) the + port has a link wherever
        the offset in its dimension is positive and is missing at the line's end where it is
        zero or negative (the - port alike); a dimension of one node has none.  A ``"pair"``
        entry ``router * N + t`` is read at that router toward a target ``t``: its ports must
        be the router's present ones."""
        esc_vc = ph.escape_vc
        if esc_vc is None and ph.adaptive_vc is None:
            raise ValueError(f"phase {i}: neither adaptive_vc nor escape_vc: it gives no "
                             f"candidate anywhere")
        if ph.key == OFFSET:
            allowed, reached, label = _offset_reach(topology)
            entries = [(0, len(ph.ports), allowed, reached)]
        else:
            entries = _pair_blocks(topology, targets)
            label = None
        for lo, hi, allowed, reached in entries:     # the keys lo .. hi - 1
            mask = np.asarray(ph.ports[lo:hi], dtype=np.int64)
            named = mask.copy()
            escape = None
            if ph.escape is not None:
                escape = np.asarray(ph.escape[lo:hi], dtype=np.int64)
                named |= np.where(escape >= 0, np.left_shift(1, np.maximum(escape, 0)), 0)
            if ph.detour is not None:
                named |= np.asarray(ph.detour[lo:hi], dtype=np.int64)
            has = np.zeros(hi - lo, dtype=bool)
            if ph.adaptive_vc is not None:
                has |= mask != 0
            if esc_vc is not None:
                has |= (mask != 0) if escape is None else (
                    (escape >= 0) | ((escape == -1) & (ph.terminal_escape is not None)))
            bad = np.flatnonzero(reached & ~has)
            if len(bad):
                k = lo + int(bad[0])
                raise ValueError(f"phase {i}: {_entry(topology, ph.key, k, label)} gives no "
                                 f"candidate (no port in its mask"
                                 f"{', no escape' if esc_vc is not None else ''}): a packet "
                                 f"there would have nowhere to go")
            stray = named & ~allowed
            bad = np.flatnonzero(reached & (stray != 0))
            if len(bad):
                j = int(bad[0])
                k, port = lo + j, _lowest_port(int(stray[j]))
                why = (_line_reason(topology, port) if ph.key == OFFSET else "there")
                raise ValueError(f"phase {i}: {_entry(topology, ph.key, k, label)} names port "
                                 f"{topology.port_name(port)}, which has no link {why}")
        if ph.terminal_escape is not None and ph.escape is not None:
            present = _present_ports(topology)
            table = np.asarray(ph.terminal_escape, dtype=np.int64).reshape(
                topology.num_nodes, -1)
            alive = np.ones(topology.num_nodes, dtype=bool)
            alive[list(topology.failed_nodes)] = False
            stray = (np.left_shift(1, table) & ~present[:, None]) != 0
            bad = np.argwhere(stray & alive[:, None])
            if len(bad):
                r, j = (int(x) for x in bad[0])
                raise ValueError(f"phase {i}: terminal_escape[{r * table.shape[1] + j}] "
                                 f"(router {topology.where(r)}, terminal {j}) names port "
                                 f"{topology.port_name(int(table[r, j]))}, which has no link "
                                 f"there")

    def _check_phase(self, i: int, ph: Phase, num_nodes: int, num_ports: int, num_vcs: int,
                     relative_size: int | None) -> None:
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
            return
        size = relative_size if ph.key == OFFSET else num_nodes * num_nodes
        if size is None:
            raise ValueError(f"{where}: the topology has no coordinate offsets for an "
                             f"'offset' key")
        if ph.ports is None:
            raise ValueError(f"{where}: no ports table")
        for name in ("ports", "escape", "escape_vcs", "detour"):
            table = getattr(ph, name)
            if table is not None and len(table) != size:
                raise ValueError(f"{where}: {name} has {len(table)} entries, its key has "
                                 f"{size}")
        for name in ("ports", "detour", "detour_from"):
            table = getattr(ph, name)
            beyond = (np.asarray(table, dtype=np.int64) >> num_ports
                      if num_ports < 64 and table is not None else np.zeros(1, np.int64))
            bad = np.nonzero(beyond != 0)[0]
            if len(bad):
                raise ValueError(f"{where}: {name}[{int(bad[0])}] names a port beyond "
                                 f"{num_ports - 1}")
        if ph.detour is not None and (ph.adaptive_vc is None or ph.key != PAIR):
            raise ValueError(f"{where}: a detour group rides on the adaptive VC of a pair-keyed "
                             f"phase; the phase has no adaptive VC or another key")
        if ph.detour_from is not None and (ph.detour is None or
                                           len(ph.detour_from) != num_nodes * num_nodes):
            raise ValueError(f"{where}: detour_from needs a detour table and "
                             f"{num_nodes * num_nodes} entries (router x source router), "
                             f"not {len(ph.detour_from)}")
        low = -1 if ph.terminal_escape is not None else 0
        _in_range(ph.escape, low, num_ports, f"{where}: escape", "a port")
        if ph.terminal_escape is not None:
            if len(ph.terminal_escape) % num_nodes or ph.escape is None:
                raise ValueError(f"{where}: terminal_escape needs an escape table and a row of "
                                 f"ports per router ({len(ph.terminal_escape)} entries for "
                                 f"{num_nodes} routers)")
            _in_range(ph.terminal_escape, 0, num_ports, f"{where}: terminal_escape", "a port")
        if ph.escape_vcs is not None:
            if ph.escape_vc is None or ph.dateline_vc is not None:
                raise ValueError(f"{where}: escape_vcs needs an escape VC and no dateline")
            _in_range(ph.escape_vcs, 0, num_vcs, f"{where}: escape_vcs",
                      f"a VC (0..{num_vcs - 1})")

    def _check_option(self, opt: Option, deroute_kinds: Sequence[str], who: str) -> None:
        if not isinstance(opt, Option):
            raise ValueError(f"{who} is {described(opt)}, not an Option")
        for name in ("phase", "sel"):
            if not _whole(getattr(opt, name)):
                raise ValueError(f"{who}: {name} is {described(getattr(opt, name))}, not a whole "
                                 f"number")
        if opt.kind is not None and not isinstance(opt.kind, str):
            raise ValueError(f"{who}: kind is {described(opt.kind)}, not a name (or None)")
        if not 0 <= opt.phase < len(self.phases):
            raise ValueError(f"{who} starts in phase {opt.phase}, which does not exist")
        if opt.kind is not None and opt.kind not in deroute_kinds:
            raise ValueError(f"{who} counts as derouted {opt.kind!r}, which the algorithm "
                             f"does not declare in deroute_kinds "
                             f"({', '.join(deroute_kinds) or 'none'})")

    def _check_decision(self, num_nodes: int, deroute_kinds: Sequence[str]) -> None:
        d = self.decision
        if isinstance(d, (TableTarget, Ugal)):
            targets = np.asarray(d.targets)
            if targets.ndim != 2 or targets.shape[0] != num_nodes or targets.shape[1] < 1:
                raise ValueError(f"a decision's targets table has shape {targets.shape}, not "
                                 f"({num_nodes}, m >= 1)")
            bad = np.nonzero((targets < 0) | (targets >= num_nodes))
            if len(bad[0]):
                raise ValueError(f"a decision's targets[{int(bad[0][0])}, {int(bad[1][0])}] is "
                                 f"not a router")
        if isinstance(d, Ugal):
            if not isinstance(d.once, (bool, np.bool_)):
                raise ValueError(f"UGAL's once is {described(d.once)}, not True or False")
            tables = [("hops", d.hops), ("first", d.first[0]), ("first", d.first[1])]
            if d.minimal_via is not None:
                tables.append(("minimal_via", d.minimal_via))
            if d.probe is not None:
                tables += [("probe", d.probe[0]), ("probe", d.probe[1])]
            for name, table in tables:
                if len(table) != num_nodes * num_nodes:
                    raise ValueError(f"UGAL's {name} table has {len(table)} entries, not "
                                     f"{num_nodes * num_nodes}")
        options = d.options()
        if not isinstance(options, tuple) or not options:
            raise ValueError(f"a decision's options are {described(options)}, not a tuple of at "
                             f"least one Option")
        for opt in options:
            self._check_option(opt, deroute_kinds, "a decision's option")

    @property
    def has_routes(self) -> bool:
        return any(ph.key == ROUTE for ph in self.phases)

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


def _whole(value: Any) -> bool:
    """Whether ``value`` is a whole number (a NumPy integer too; not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _lowest_port(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _present_ports(topology: Any) -> np.ndarray:
    """Per router, the bitmask of its ports that have a link."""
    has = np.asarray(topology.neighbor_array) >= 0
    bits = np.left_shift(np.int64(1), np.arange(has.shape[1], dtype=np.int64))
    return (has * bits).sum(axis=1).astype(np.int64)


def _offset_reach(topology: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per entry of an ``"offset"`` table: the ports that have a link at every router where
    the entry is read (:meth:`Program._check_reach`), whether any router reads it (a
    coordinate difference every dimension can have, not all zero: at its target a packet
    is ejected), and the entries' signed minimal offsets."""
    size = topology.relative_size
    idx = np.arange(size, dtype=np.int64)
    allowed = np.zeros(size, dtype=np.int64)
    reached = np.ones(size, dtype=bool)
    moves = np.zeros(size, dtype=bool)
    m = 1
    for d, k in enumerate(topology.dims):
        diff = (idx // m) % (2 * k) - k             # c_t - c_router, in (-k, k) if reachable
        m *= 2 * k
        reached &= diff > -k
        moves |= diff != 0
        if k == 1:
            continue
        if topology.is_ring(d):
            allowed |= 3 << (2 * d)
        else:
            allowed |= np.where(diff > 0, 1 << (2 * d), 0) | np.where(diff < 0,
                                                                      2 << (2 * d), 0)
    return allowed, reached & moves, topology.relative_offsets()


def _pair_blocks(topology: Any, targets: np.ndarray | None):
    """Per block of routers, the span ``lo .. hi - 1`` of the ``"pair"`` keys of their rows,
    the ports present at each key's router and whether a packet reads the key (router and
    target alive and distinct, the target one a packet may head for); blocks of about 2^20
    keys (a few MB of arrays at a time, whatever the network)."""
    n = topology.num_nodes
    present = _present_ports(topology)
    alive = np.ones(n, dtype=bool)
    alive[list(topology.failed_nodes)] = False
    heads = alive.copy()
    if targets is not None:
        heads[:] = False
        heads[targets] = True
        heads &= alive
    rows = max(1, (1 << 20) // max(n, 1))
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        r = np.arange(start, stop, dtype=np.int64)
        allowed = np.repeat(present[r], n)
        reached = (alive[r][:, None] & heads[None, :]).ravel()
        reached[(r - start) * n + r] = False          # at its target a packet is ejected
        yield start * n, stop * n, allowed, reached


def _entry(topology: Any, key: str, k: int, offsets: np.ndarray | None) -> str:
    """How a message names entry ``k`` of a table keyed by ``key``."""
    if key == OFFSET:
        off = ", ".join(f"{int(x):+d}" if x else "0" for x in offsets[k])
        return f"offset ({off}) (ports[{k}])"
    n = topology.num_nodes
    r, t = divmod(k, n)
    return f"router {topology.where(r)} toward {topology.where(t)} (ports[{k}])"


def _line_reason(topology: Any, port: int) -> str:
    """Why a port an ``"offset"`` entry names has no link where the entry is read."""
    d = port >> 1
    axis = topology.port_name(port)[:-1]
    if topology.dims[d] == 1:
        return f"(dimension {axis} has one node)"
    side = "positive" if port & 1 == 0 else "negative"
    return (f"at the end of line {axis} where that offset arises (a mesh dimension: "
            f"{topology.port_name(port)} only for a {side} offset)")


def check_ports(num_ports: int) -> None:
    """ValueError for routers of more ports than a program's masks hold."""
    if num_ports > MAX_PORTS:
        raise ValueError(f"routers of {num_ports} ports: a program's port masks hold at most "
                         f"{MAX_PORTS}")


def _in_range(table: np.ndarray | None, low: int, high: int, what: str, must: str) -> None:
    """ValueError naming the first entry of ``table`` outside ``low .. high - 1``."""
    if table is None:
        return
    values = np.asarray(table, dtype=np.int64)
    bad = np.nonzero((values < low) | (values >= high))[0]
    if len(bad):
        raise ValueError(f"{what}[{int(bad[0])}] = {int(values[bad[0]])} is not {must}")


def kind_code(kind: str | None, kinds: Sequence[str]) -> int:
    """How a deroute kind is counted: 0 for None, else 1 + its index in ``kinds``."""
    return 0 if kind is None else 1 + list(kinds).index(kind)
