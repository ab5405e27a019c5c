"""Check any routing table on a torus against the Angara route shape and for deadlocks.

Route shape (paper §2.1): an optional first step in a positive direction, then a
direction-bit list -- directions in the order +X +Y +Z +K -X -Y -Z -K, a direction may repeat
(the packet runs along a ring), never both signs of one dimension -- then an optional last step
in a negative direction.  The first and last steps may break the order and the direction-bit
rule; whether that is safe is the deadlock check's business.

Deadlock: the channel dependency graph of all routes, built by
:func:`icsim.routing.deadlock.dependency_graph` with the bubble rule's exemption (a dependency
between consecutive channels of one ring in one direction cannot close a deadlock), must be
acyclic; and, with those same-ring dependencies put back, every cycle must stay on one ring in
one direction (:func:`cross_ring_cycle`: the bubble keeps a ring moving, not the packets that
wait in it to turn out of it).  Otherwise a cycle is returned as evidence, with for each of its
dependencies a pair whose route makes it.

Examples
--------
>>> from icsim.model.topology import Torus
>>> from icsim.routing.table import RoutingTable
>>> t = Torus((4, 4))
>>> route_violation(t, [2, 0, 0])                 # y+ then x+: a first step, fine
>>> route_violation(t, [0, 3, 2])                 # y- then y+: both signs of y
(2, 'y+ after y-: uses both signs of dimension 1 (direction-bit rule), and a positive step can break the rules only as the first step')
>>> ring = {(s, d): (0,) * ((d - s) % 4) for s in range(4) for d in range(4) if s != d}
>>> report = check_table(RoutingTable(Torus((4,)), ring))
>>> report.shape_violation is None, report.deadlock_free
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from icsim.routing.deadlock import dependency_graph, find_cycle
from icsim.routing.table import RoutingTable, TableError
from icsim.routing.tables.routing_graph import direction_rank, port_positive


class AngaraRuleError(TableError):
    """A route breaks the Angara route shape; ``pair`` and ``hop`` name the first one."""

    def __init__(self, message: str, pair: tuple[int, int], hop: int):
        super().__init__(message)
        self.pair, self.hop = pair, hop


class DeadlockError(TableError):
    """The table's channel dependency graph has a cycle (``cycle``, channels ``(node, port)``)."""

    def __init__(self, message: str, cycle: list):
        super().__init__(message)
        self.cycle = cycle


@dataclass(frozen=True)
class ShapeViolation:
    src: int
    dst: int
    hop: int
    port: int
    reason: str

    def __str__(self) -> str:
        return f"route {self.src}->{self.dst}: hop {self.hop} {self.reason}"


@dataclass
class CheckReport:
    """What :func:`check_table` found.

    ``shape_violation`` is the first route (pairs in sorted order) that breaks the route shape;
    ``cycle`` a cycle of the dependency graph (channels ``(node, port)``) and ``cycle_pairs`` for
    each of its dependencies one pair whose route makes it.
    """

    shape_violation: ShapeViolation | None
    deadlock_free: bool
    cycle: list | None = None
    cycle_pairs: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.shape_violation is None and self.deadlock_free

    def describe_cycle(self, topology) -> str:
        if not self.cycle:
            return ""
        return " -> ".join(f"({u}, {topology.port_name(p)})" for u, p in self.cycle)


def route_violation(topology, ports: Sequence[int]) -> tuple[int, str] | None:
    """First hop at which ``ports`` stops being a prefix of an Angara route, with the reason;
    None for a legal route.

    The route is read left to right keeping every way to parse it so far: not started, just
    after a first step, inside the direction list (its last direction and the signs used), or
    after a last step (nothing may follow).
    """
    n = topology.n
    rank = direction_rank(n)
    name = topology.port_name
    states = {("start",)}
    for i, p in enumerate(ports):
        p = int(p)
        d, sign = p >> 1, (1 if port_positive(p) else 2)
        nxt = set()
        for st in states:
            if st[0] in ("start", "fs"):
                signs = [0] * n
                signs[d] = sign
                nxt.add(("list", int(rank[p]), tuple(signs)))
                if st[0] == "start" and sign == 1:
                    nxt.add(("fs",))
            elif st[0] == "list":
                last, signs = st[1], st[2]
                if rank[p] == last:
                    nxt.add(st)
                elif rank[p] > last and signs[d] == 0:
                    new = list(signs)
                    new[d] = sign
                    nxt.add(("list", int(rank[p]), tuple(new)))
            if st[0] in ("fs", "list") and sign == 2:
                nxt.add(("ls",))
        if not nxt:
            lists = [st for st in states if st[0] == "list"]
            if not lists:
                return i, f"{name(p)} follows the last negative step {name(int(ports[i - 1]))}"
            last, signs = lists[0][1], lists[0][2]
            why = ("uses both signs of dimension %d (direction-bit rule)" % d
                   if signs[d] not in (0, sign) else "goes against the direction order")
            return i, (f"{name(p)} after {name(_port_of_rank(last, n))}: {why}, and a positive "
                       f"step can break the rules only as the first step")
        states = nxt
    return None


def _port_of_rank(r: int, n: int) -> int:
    return 2 * r if r < n else 2 * (r - n) + 1


def bubble_exempt(topology):
    """``exempt(c1, c2)`` for :func:`icsim.routing.deadlock.dependency_graph`: true when ``c2``
    continues ``c1`` along the same ring in the same direction (the bubble rule keeps such
    dependencies from closing a deadlock)."""
    nbr = topology.neighbor_table

    def exempt(c1, c2) -> bool:
        return c1[1] == c2[1] and nbr[c1[0]][c1[1]] == c2[0]

    return exempt


def shape_violations(table: RoutingTable, first_only: bool = True) -> list[ShapeViolation]:
    """Routes that break the Angara shape, pairs in sorted order."""
    out = []
    seen: dict[tuple[int, ...], tuple[int, str] | None] = {}   # a torus's routes repeat
    for s, t in sorted(table.pairs()):
        ports = tuple(table.route(s, t))
        if ports not in seen:
            seen[ports] = route_violation(table.topology, ports)
        bad = seen[ports]
        if bad is not None:
            out.append(ShapeViolation(s, t, bad[0], int(ports[bad[0]]), bad[1]))
            if first_only:
                break
    return out


def check_table(table: RoutingTable) -> CheckReport:
    """Check a routing table on a torus: route shape and deadlock freedom (one virtual
    channel, bubble rule).

    Parameters
    ----------
    table : RoutingTable
        Must be structurally valid (see :meth:`RoutingTable.validate`, which this calls).

    Returns
    -------
    CheckReport

    Raises
    ------
    TableError
        When the table is malformed (missing route, absent port, wrong end node) or not on a
        torus.
    """
    if "coordinates" not in table.topology.capabilities:
        raise TableError("the Angara checks need a table on a torus topology")
    table.validate()
    violations = shape_violations(table)
    pairs = sorted(table.pairs())

    def paths():    # made as read: a list of them took 0.35 GB for 10x10x10 (1 M routes)
        return (table.channel_path(s, t) for s, t in pairs)

    exempt = bubble_exempt(table.topology)
    graph = dependency_graph(paths(), exempt=exempt)
    cycle = find_cycle(graph)
    if cycle is None:
        cycle = _cross_ring_cycle(dependency_graph(paths()), table.topology)
    cycle_pairs = []
    if cycle is not None:
        wanted = {(a, b): None for a, b in zip(cycle, cycle[1:] + cycle[:1])}
        for pair, path in zip(pairs, paths()):
            for a, b in zip(path, path[1:]):
                if (a, b) in wanted and wanted[(a, b)] is None:
                    wanted[(a, b)] = pair
        cycle_pairs = list(wanted.values())
    return CheckReport(violations[0] if violations else None, cycle is None,
                       cycle, cycle_pairs)


def cross_ring_cycle(table: RoutingTable) -> list | None:
    """A channel-dependency cycle that runs along a ring and leaves it by a turn, or None.

    The bubble rule makes a cycle harmless only if it stays on one ring in one direction: the
    free slot it keeps in a ring lets that ring's packets move on, but not packets waiting to
    leave the ring by a turn.  So the dependency graph is built with every dependency,
    same-ring ones included, and a strongly connected component that mixes rings or
    directions yields a cycle (through one of its turns).  :func:`check_table` runs this after
    the search without same-ring dependencies; tables of the deadlock-free routing graph never
    have such a cycle (Theorem 2 keeps ring dependencies in its used direction sets).

    >>> from icsim.model.topology import Torus
    >>> ring = {(s, d): (0,) * ((d - s) % 4) for s in range(4) for d in range(4) if s != d}
    >>> cross_ring_cycle(RoutingTable(Torus((4,)), ring)) is None
    True
    """
    paths = [table.channel_path(s, t) for s, t in table.pairs()]
    return _cross_ring_cycle(dependency_graph(paths), table.topology)


def _ring_of(topology, channel) -> tuple:
    u, port = channel
    dim = port >> 1
    return (port,) + tuple(c for d, c in enumerate(topology.coords(u)) if d != dim)


def _cross_ring_cycle(graph: dict, topology) -> list | None:
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, succ in graph.items() for b in succ)
    for comp in nx.strongly_connected_components(g):
        if len(comp) < 2 or len({_ring_of(topology, c) for c in comp}) == 1:
            continue
        sub = g.subgraph(comp)
        for a, b in sorted(sub.edges):
            if _ring_of(topology, a) != _ring_of(topology, b):       # a turn inside the cycle
                back = nx.shortest_path(sub, b, a)
                return [a] + back[:-1]
    return None


def assert_angara(table: RoutingTable) -> CheckReport:
    """:func:`check_table`, raising :class:`AngaraRuleError` or :class:`DeadlockError` (both
    :class:`TableError`) on the first problem."""
    report = check_table(table)
    v = report.shape_violation
    if v is not None:
        raise AngaraRuleError(f"{v} (not an Angara route: optional first positive step, "
                              f"direction-bit list in direction order, optional last negative "
                              f"step)", (v.src, v.dst), v.hop)
    if not report.deadlock_free:
        steps = ", ".join(f"{a}->{b}" for a, b in report.cycle_pairs)
        raise DeadlockError(f"channel dependency cycle {report.describe_cycle(table.topology)} "
                            f"(made by the routes {steps})", report.cycle)
    return report
