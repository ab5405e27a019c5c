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

import inspect
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from icsim.model.config import ConfigError
from icsim.model.notes import gc_paused
from icsim.model.registry import unknown_name
from icsim.routing.layers import assigner_names, get_assigner
from icsim.routing.program import ROUTE, Phase, Program, Routes
from icsim.routing.registry import ESCAPE, LAYER, VC, Routing, register
from icsim.routing.table import RoutingTable, TableError
from icsim.routing.tables.generators import available, generate, get_generator
from icsim.routing.tables.traffic import workload_traffic


class TableSettings(BaseModel):
    """``routing.table``: where the table comes from and how its hops get virtual layers.

    ``file`` (a table in the ``icsim-routing-table`` format) or ``generator`` (``bfs``, ``sssp``,
    ``genetic``, ``refined``, ``optimal`` Angara tables on tori; ``minimal`` on any topology),
    with ``options`` passed to the generator as keyword arguments (e.g. ``time_limit_s``,
    ``max_moves``; ``traffic: workload`` makes a ``refined`` or ``optimal`` table for the run's
    own traffic section); ``layers`` names a virtual-layer assigner (``acro``, ``lash``,
    ``lash_tor``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    file: str | None = None
    generator: str | None = None
    layers: str | None = None
    options: dict[str, Any] = {}


@gc_paused()
def build_table(topology: Any, config: Any, settings: TableSettings) -> RoutingTable:
    """The routing table a config asks for (file or generator), with layers if requested; with
    ``traffic.nodes`` a generator makes it for the job's nodes only."""
    job = config.traffic.nodes
    if settings.file:
        table = RoutingTable.load(settings.file)
        if not table.topology.same_network(topology):
            raise TableError(f"{settings.file}: the table was made for "
                             f"{table.topology.describe()}, not for {topology.describe()}")
    elif settings.generator:
        options = dict(settings.options)
        if options.get("traffic") == "workload":     # a table made for the run's own traffic
            options["traffic"] = workload_traffic(topology, config.traffic, config.seed)
        table = generate_table(settings.generator, topology, config.seed, job, **options)
    else:
        raise TableError("table routing needs routing.table.file or routing.table.generator")
    if settings.layers:
        table = assign_layers(settings.layers, table)
    problem = coverage_problem(table, topology, job)
    if problem:
        raise TableError(f"the table {problem}")
    return table


def coverage_problem(table: RoutingTable, topology: Any, job: list[int] | None) -> str | None:
    """What is missing when the table lacks routes for nodes of the run (the job's, or every
    node in service), as the end of a sentence about the table; None when it covers them
    all."""
    alive = topology.alive_nodes
    missing = sorted(set(alive if job is None else job) - set(table.nodes))
    if not missing:
        return None
    return (f"has no routes for node(s) {missing[:8]}; the run needs routes between all "
            f"{'nodes' if job is None else 'of traffic.nodes'}")


def generate_table(name: str, topology: Any, seed: int, nodes: list[int] | None = None,
                   **options: Any) -> RoutingTable:
    """Generator ``name``'s table for ``nodes`` (a job's nodes, as Angara's scheduler plugin
    makes one per job; default every node)."""
    return generate(name, topology, nodes, seed=seed, **options)


def unknown_options(generator: str, options: dict) -> list[str]:
    """The keys of ``options`` that generator ``generator`` does not accept as keyword
    arguments (``graph`` and ``seed`` are set by the run, not the config)."""
    params = inspect.signature(get_generator(generator)).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()) \
            and generator != "minimal":
        return []
    accepted = {n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    accepted -= {"graph", "seed"}
    return sorted(set(options) - accepted)


def table_generators() -> list[str]:
    """Names accepted by ``routing.table.generator``."""
    return available()


def layer_assigners() -> list[str]:
    """Names accepted by ``routing.layers``."""
    return list(assigner_names())


def assign_layers(name: str, table: RoutingTable) -> RoutingTable:
    """``table`` with the virtual layer of every hop, as assigner ``name`` prescribes."""
    return get_assigner(name)(table).attach(table)


class TableRoutes(Routes):
    """A :class:`RoutingTable`'s source routes for a ``"route"`` phase: each hop's port, and
    its virtual layer (VC) when the table has layers (VC 0 otherwise)."""

    def __init__(self, table: RoutingTable, num_ports: int):
        self.table = table
        self._routes = table.routes
        self._layers = table.layers
        self._unlayered = tuple((p, 0) for p in range(num_ports))

    def hop(self, src: int, dst: int, i: int) -> tuple[int, int] | None:
        route = self._routes.get((src, dst)) if src != dst else ()
        if route is None:
            route = self.table.route(src, dst)
        if i >= len(route):
            return None
        if self._layers is None:
            return self._unlayered[route[i]]
        return route[i], self._layers[(src, dst)][i]

    def arrays(self, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """Every route in CSR form: pair ``src * N + dst`` -> (first row, length) into the
        (port, layer) rows."""
        n = num_nodes
        route = np.zeros((n * n, 2), np.int64)
        ports: list[int] = []
        layers: list[int] = []
        tl = self._layers
        for (s, d), r in self._routes.items():
            route[s * n + d] = (len(ports), len(r))
            ports.extend(r)
            if tl is not None:
                layers.extend(tl.get((s, d), ()))
        hops = np.zeros((max(1, len(ports)), 2), np.int64)
        hops[:len(ports), 0] = ports
        if tl is not None:
            hops[:len(layers), 1] = layers
        return route, hops


@register("table")
class TableRouting(Routing):
    """Source routing along a table; see the module docstring.  Its program is one ``"route"``
    phase over the table's routes (:class:`TableRoutes`)."""

    Settings = TableSettings

    def __init__(self, topology: Any, config: Any, settings: Any = None,
                 table: RoutingTable | None = None):
        super().__init__(topology, config, settings)
        self.table = table if table is not None else build_table(topology, config, self.settings)
        if self.table.layers is not None:
            n = 1 + max((max(v) for v in self.table.layers.values() if v), default=0)
            # a packet's layer only goes down; no bubble is needed, the layers are acyclic
            self.vcs = tuple(VC(f"layer{i}", LAYER, priority=i) for i in range(n))
        else:
            self.vcs = (VC("table", ESCAPE, bubble=True),)

    @classmethod
    def check_config(cls, topology: Any, config: Any, settings: TableSettings) -> None:
        """Cheap checks before the run: the file loads and fits, the names exist.  (Generating
        a table can take a while; it happens once, when the simulation is built.)"""
        if settings.file:
            try:
                table = RoutingTable.load(settings.file)
            except TableError as exc:
                raise ConfigError("routing.table.file", str(exc)) from None
            if not table.topology.same_network(topology):
                made, given = table.topology.describe(), topology.describe()
                raise ConfigError("routing.table.file", (
                    f"{settings.file} was made for {made}, not {given}" if made != given else
                    f"{settings.file} was made for another {made}: same size, other links "
                    f"(a random graph drawn with another seed? topology.seed must be the "
                    f"seed the table was made with, e.g. icsim layers --seed)"))
            problem = coverage_problem(table, topology, config.traffic.nodes)
            if problem:
                raise ConfigError("routing.table.file", f"{settings.file} {problem}")
        elif settings.generator:
            names = table_generators()
            if settings.generator not in names:
                raise ConfigError("routing.table.generator",
                                  unknown_name("generator", settings.generator, names))
            if settings.generator != "minimal" and "coordinates" not in topology.capabilities:
                raise ConfigError("routing.table.generator", f"{settings.generator} builds "
                                  f"Angara tables on tori; on {topology.describe()} use 'minimal'")
            unknown = unknown_options(settings.generator, settings.options)
            if unknown:
                raise ConfigError("routing.table.options", f"{settings.generator} takes no "
                                  f"option(s) {', '.join(unknown)}")
        else:
            raise ConfigError("routing.table", "table routing needs routing.table.file or "
                              "routing.table.generator")
        if settings.layers:
            names = layer_assigners()
            if settings.layers not in names:
                raise ConfigError("routing.table.layers",
                                  unknown_name("layer assigner", settings.layers, names))

    def program(self) -> Program:
        return Program((Phase(ROUTE, routes=TableRoutes(self.table, self.topology.num_ports)),))
