"""Check a virtual-layer assignment from the table and its per-hop layers alone.

Nothing an assigner kept is trusted: the routes are re-read from the table
(:meth:`RoutingTable.channel_path`), and the dependency graphs are rebuilt and searched by
:mod:`routing.deadlock`.  An assignment passes when

* every route has one layer per hop, and its layer never rises along the route;
* in every layer, the dependencies between consecutive hops of a route that both use that layer
  form an acyclic graph (with the descending transitions this makes the whole virtual-channel
  dependency graph acyclic, so the routing is deadlock-free);
* when channel orders are given, every route uses its labels ``(layer, order)`` in strictly
  decreasing order (Theorem 1 of the ACRO paper: an explicit witness of the above).

A failure names the route, and for a cycle the layer, the channels of the cycle and the routes
whose dependencies close it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from icsim.routing.deadlock import dependency_graph, find_cycle
from icsim.routing.table import Pair, RoutingTable, TableError
from icsim.routing.tables.check import DeadlockError

Channel = tuple[int, int]


class LayerVerificationError(ValueError):
    """A layer assignment that is not deadlock-free, or not well formed."""


@dataclass
class Verification:
    """What :func:`verify_layers` found.

    Attributes
    ----------
    ok : bool
    num_layers : int
        Layers the routes use (highest layer + 1).
    problems : list of str
        One line per problem found (at most ``max_problems`` of each kind).
    cycle, cycle_layer, cycle_routes
        The first dependency cycle found: its channels ``(node, port)``, its layer and, for each
        dependency of the cycle, one route that induces it.
    """

    ok: bool
    num_layers: int
    problems: list[str] = field(default_factory=list)
    cycle: list[Channel] | None = None
    cycle_layer: int | None = None
    cycle_routes: list[Pair] = field(default_factory=list)

    def raise_if_failed(self) -> None:
        """Raise :class:`LayerVerificationError` listing the problems, if there are any."""
        if not self.ok:
            raise LayerVerificationError("; ".join(self.problems))


def _name(topology: Any, channel: Channel) -> str:
    u, port = channel
    return f"{u}->{topology.neighbor(u, port)}"


def verify_layers(table: RoutingTable, layers: Mapping[Pair, tuple[int, ...]] | None = None, *,
                  orders: Mapping[int, Mapping[Channel, int]] | None = None,
                  num_layers: int | None = None, max_problems: int = 10) -> Verification:
    """Check that ``layers`` make ``table``'s routes deadlock-free.

    Parameters
    ----------
    table : RoutingTable
    layers : mapping (src, dst) -> tuple of int, optional
        Layer of each hop; default ``table.layers``.
    orders : mapping layer -> mapping channel -> int, optional
        Channel order within each layer; when given, Theorem 1's labels are checked too.
    num_layers : int, optional
        The layer count an assigner claims; checked against the layers actually used.
    max_problems : int
        Stop listing problems of one kind after this many.

    Returns
    -------
    Verification

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> from icsim.routing.layers.minimal import minimal_table
    >>> ring = minimal_table(Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)]))
    >>> verify_layers(ring, {p: (0,) * len(r) for p, r in ring.routes.items()}).ok
    True
    >>> bad = verify_layers(ring, {p: (0,) + (1,) * (len(r) - 1) for p, r in ring.routes.items()})
    >>> bad.ok, bad.problems[0]
    (False, 'route 0->2: layer rises from 0 to 1 at hop 1 (node 1)')
    """
    topo = table.topology
    if layers is None:
        if table.layers is None:
            raise ValueError("no layers given and the table carries none")
        layers = table.layers
    problems: list[str] = []
    kinds: dict[str, int] = {}

    def problem(kind: str, text: str) -> None:
        kinds[kind] = kinds.get(kind, 0) + 1
        if kinds[kind] <= max_problems:
            problems.append(text)

    segments: dict[int, list[list[Channel]]] = {}
    used = 0
    for s, t in table.pairs():
        path = table.channel_path(s, t)
        lay = layers.get((s, t))
        if lay is None or len(lay) != len(path):
            problem("shape", f"route {s}->{t}: needs {len(path)} layers, one per hop, got "
                             f"{None if lay is None else len(lay)}")
            continue
        if any(int(x) != x or x < 0 for x in lay):
            problem("shape", f"route {s}->{t}: layers must be integers >= 0, got {list(lay)}")
            continue
        for k in range(1, len(lay)):
            if lay[k] > lay[k - 1]:
                problem("rise", f"route {s}->{t}: layer rises from {lay[k - 1]} to {lay[k]} at "
                                f"hop {k} (node {path[k][0]})")
                break
        if orders is not None:
            labels = []
            for k, (c, x) in enumerate(zip(path, lay)):
                o = orders.get(x, {}).get(c)
                if o is None:
                    problem("order", f"route {s}->{t}: hop {k} ({_name(topo, c)}) has no order "
                                     f"in layer {x}")
                    break
                labels.append((x, o))
            else:
                for k in range(1, len(labels)):
                    if labels[k] >= labels[k - 1]:
                        problem("order", f"route {s}->{t}: label (layer, order) "
                                         f"{labels[k - 1]} at hop {k - 1} is not above "
                                         f"{labels[k]} at hop {k} (Theorem 1)")
                        break
        run = 0
        for k in range(1, len(path) + 1):
            if k == len(path) or lay[k] != lay[run]:
                segments.setdefault(lay[run], []).append(path[run:k])
                run = k
        if lay:
            used = max(used, max(lay) + 1)

    result = Verification(ok=True, num_layers=used)
    for layer in sorted(segments):
        cycle = find_cycle(dependency_graph(segments[layer]))
        if cycle is None:
            continue
        routes = _routes_closing(table, layers, layer, cycle)
        names = " -> ".join(_name(topo, c) for c in cycle + cycle[:1])
        via = ", ".join(f"{s}->{t}" for s, t in routes)
        problem("cycle", f"layer {layer}: dependency cycle {names} (closed by routes {via})")
        if result.cycle is None:
            result.cycle, result.cycle_layer, result.cycle_routes = cycle, layer, routes
    if num_layers is not None and num_layers != max(used, 1):
        problem("count", f"the assignment claims {num_layers} layers but its routes use {used}")
    result.problems = problems
    result.ok = not problems
    return result


def _routes_closing(table: RoutingTable, layers, layer: int, cycle: list[Channel]) -> list[Pair]:
    """For each dependency ``a -> b`` of ``cycle``, one route crossing a then b in ``layer``."""
    wanted = {(a, b): None for a, b in zip(cycle, cycle[1:] + cycle[:1])}
    missing = len(wanted)
    for s, t in table.pairs():
        path, lay = table.channel_path(s, t), layers[(s, t)]
        for k in range(1, len(path)):
            dep = (path[k - 1], path[k])
            if lay[k - 1] == lay[k] == layer and dep in wanted and wanted[dep] is None:
                wanted[dep] = (s, t)
                missing -= 1
        if not missing:
            break
    return [p for p in wanted.values() if p is not None]


def verify_assignment(table: RoutingTable, assignment, **kwargs) -> Verification:
    """:func:`verify_layers` with an assigner's layers, orders and claimed layer count.

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> from icsim.routing.layers.minimal import minimal_table
    >>> from icsim.routing.layers.acro import acro
    >>> table = minimal_table(Graph.random_regular(16, 3, seed=2))
    >>> verify_assignment(table, acro(table)).ok
    True
    """
    return verify_layers(table, assignment.layers, orders=assignment.orders,
                         num_layers=assignment.num_layers, **kwargs)


def assert_deadlock_free(table: RoutingTable) -> Verification:
    """Check a table's routes deadlock-free without a bubble rule, raising on the first problem.

    A table whose hops carry layers (``table.layers``) is checked as :func:`verify_layers` does;
    one without layers as a single layer: its one virtual channel's dependency graph must be
    acyclic (what a table on a graph needs, where no ring gives the bubble rule a hold).

    Raises
    ------
    routing.table.TableError
        A route whose layer rises, or without one layer per hop (said first).
    routing.tables.check.DeadlockError
        A dependency cycle: the layer, its channels and the routes that close it.

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> from icsim.routing.layers.minimal import minimal_table
    >>> from icsim.routing.layers.acro import acro
    >>> table = minimal_table(Graph.random_regular(16, 3, seed=2))
    >>> assert_deadlock_free(acro(table).attach(table)).num_layers
    2
    >>> assert_deadlock_free(table)
    Traceback (most recent call last):
    ...
    icsim.routing.tables.check.DeadlockError: channel dependency cycle 0->2 -> ...
    """
    layers = table.layers
    if layers is None:
        layers = {pair: (0,) * len(route) for pair, route in table.routes.items()}
    result = verify_layers(table, layers, max_problems=1)
    cycles = [p for p in result.problems if " dependency cycle " in p]
    if len(cycles) < len(result.problems):             # a route's layers, before any cycle
        raise TableError(next(p for p in result.problems if p not in cycles))
    if cycles:
        text = cycles[0]
        if table.layers is None:                        # one virtual channel: no layer to name
            text = "channel " + text.partition(": ")[2]
        raise DeadlockError(text, result.cycle)
    return result
