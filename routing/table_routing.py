"""Table routing: packets follow deterministic source routes from a :class:`RoutingTable`.

* Without virtual layers (Angara tables): one VC per direction under the bubble rule.
* With virtual layers (``routing.layers: acro | lash | lash_tor``, or layers stored in the table
  file): one VC per layer, each hop on the layer the assignment prescribes (a packet's layer only
  goes down along its path); no bubble rule is needed, the layers are deadlock-free.

The table comes from ``routing.table`` (a file in the ``icsim-routing-table`` format) or is
generated at build time by ``routing.generator`` (Angara BFS/SSSP/Genetic on tori; ``minimal``:
one shortest path per pair on any topology, destination-based, chosen among the shortest with
the run's seed).
"""

from __future__ import annotations

from typing import Any

from icsim.routing.registry import Groups, Routing, register
from icsim.routing.table import RoutingTable, TableError


def build_table(topology: Any, config: Any) -> RoutingTable:
    """The routing table a config asks for (file or generator), with layers if requested; with
    ``traffic.nodes`` a generator makes it for the job's nodes only."""
    rc = config.routing
    job = config.traffic.nodes
    if rc.table:
        table = RoutingTable.load(rc.table)
        if (table.topology.kind != topology.kind or table.topology.num_nodes != topology.num_nodes
                or list(table.topology.neighbor_table) != list(topology.neighbor_table)):
            raise TableError(f"{rc.table}: the table was made for {table.topology.describe()}, "
                             f"not for {topology.describe()}")
    elif rc.generator:
        table = generate_table(rc.generator, topology, config.seed, job)
    else:
        raise TableError("table routing needs routing.table (a file) or routing.generator")
    if rc.layers:
        table = assign_layers(rc.layers, table)
    problem = coverage_problem(table, topology, job)
    if problem:
        raise TableError(f"the table {problem}")
    return table


def coverage_problem(table: RoutingTable, topology: Any, job: list[int] | None) -> str | None:
    """What is missing when the table lacks routes for nodes of the run (the job's, or every
    node), as the end of a sentence about the table; None when it covers them all."""
    missing = sorted(set(range(topology.num_nodes) if job is None else job) - set(table.nodes))
    if not missing:
        return None
    return (f"has no routes for node(s) {missing[:8]}; the run needs routes between all "
            f"{'nodes' if job is None else 'of traffic.nodes'}")


def generate_table(name: str, topology: Any, seed: int,
                   nodes: list[int] | None = None) -> RoutingTable:
    """Generator ``name``'s table for ``nodes`` (a job's nodes, as Angara's scheduler plugin
    makes one per job; default every node)."""
    if name == "minimal":
        from icsim.routing.layers.minimal import minimal_table

        # one shortest path per pair (every pair), chosen with the run's seed among the shortest
        return minimal_table(topology, tie_break="random", seed=seed)
    from icsim.routing.tables.generators import generate

    return generate(name, topology, nodes, seed=seed)


def table_generators() -> list[str]:
    """Names accepted by ``routing.generator``."""
    from icsim.routing.tables.generators import available

    return ["minimal", *available()]


def layer_assigners() -> list[str]:
    """Names accepted by ``routing.layers``."""
    from icsim.routing.layers import assigner_names

    return list(assigner_names())


def assign_layers(name: str, table: RoutingTable) -> RoutingTable:
    """``table`` with the virtual layer of every hop, as assigner ``name`` prescribes."""
    from icsim.routing.layers import get_assigner

    return get_assigner(name)(table).attach(table)


@register("table")
class TableRouting(Routing):
    """Source routing along a table; see the module docstring."""

    has_inject = True
    has_admit = True

    def __init__(self, topology: Any, config: Any, eject_port: int, table: RoutingTable | None = None):
        super().__init__(topology, config, eject_port)
        self.table = table if table is not None else build_table(topology, config)
        layered = self.table.layers is not None
        if layered:
            n = 1 + max((max(v) for v in self.table.layers.values() if v), default=0)
            self.vcs = tuple(f"layer{i}" for i in range(n))
            self.bubble_vcs = frozenset()
        else:
            self.vcs = ("table",)
            self.bubble_vcs = frozenset({0})
        # candidate groups interned per (port, vc)
        self._groups = {(p, vc): (((p, vc),),) for p in range(topology.num_ports)
                        for vc in range(len(self.vcs))}

    @classmethod
    def check_config(cls, topology: Any, config: Any) -> None:
        """Cheap checks before the run: the file loads and fits, the names exist.  (Generating
        a table can take a while; it happens once, when the simulation is built.)"""
        from icsim.simulator.config import ConfigError

        rc = config.routing
        if rc.table:
            try:
                table = RoutingTable.load(rc.table)
            except TableError as exc:
                raise ConfigError("routing.table", str(exc)) from None
            if list(table.topology.neighbor_table) != list(topology.neighbor_table):
                raise ConfigError("routing.table", f"{rc.table} was made for "
                                  f"{table.topology.describe()}, not {topology.describe()}")
            problem = coverage_problem(table, topology, config.traffic.nodes)
            if problem:
                raise ConfigError("routing.table", f"{rc.table} {problem}")
        elif rc.generator:
            names = table_generators()
            if rc.generator not in names:
                raise ConfigError("routing.generator", f"unknown generator {rc.generator!r} "
                                  f"(valid: {', '.join(sorted(names))})")
            if rc.generator != "minimal" and topology.kind != "torus":
                raise ConfigError("routing.generator", f"{rc.generator} builds Angara tables on "
                                  f"tori; on {topology.describe()} use 'minimal'")
        else:
            raise ConfigError("routing.table", "table routing needs routing.table (a file) or "
                              "routing.generator")
        if rc.layers:
            names = layer_assigners()
            if rc.layers not in names:
                raise ConfigError("routing.layers", f"unknown layer assigner {rc.layers!r} "
                                  f"(valid: {', '.join(sorted(names))})")

    def inject(self, node: int, packet, used, rand) -> None:
        packet.route = self.table.route(packet.src, packet.dst)
        if self.table.layers is not None:
            packet.layers = self.table.layers.get((packet.src, packet.dst), ())
        packet.ridx = 0

    def candidates(self, node: int, packet) -> Groups:
        i = packet.ridx
        route = packet.route
        if i >= len(route):
            return self.eject_groups
        return self._groups[(route[i], packet.layers[i] if packet.layers is not None else 0)]

    def admitted(self, node: int, packet, port: int, vc: int) -> None:
        if port != self.eject:
            packet.ridx += 1
