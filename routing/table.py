"""Deterministic routing tables: the value, its file format and its structural validation.

A :class:`RoutingTable` maps each (source, destination) pair of a node set to a *source route*:
the sequence of output ports the packet takes, port numbers as the topology defines them
(``2*dim + s`` on a torus, neighbour index on a graph).  Destination-based tables (next hop per
(node, destination)) are expanded to source routes with :meth:`RoutingTable.from_next_hop`.
Optionally each hop carries a virtual layer (``layers``), as assigned by ACRO/LASH/LASH-TOR.

File format (``icsim-routing-table``, version 1), JSON::

    {
      "format": "icsim-routing-table",
      "version": 1,
      "topology": {"kind": "torus", "dims": [4, 2, 2, 2], "wrap": [true, false, false, false],
                   "failed_links": [[0, 2]], "failed_nodes": [7]},   # failures optional
      "nodes": [0, 1, ...],               # the node set the table covers
      "meta": {"generator": "sssp", "seed": 1},
      "routes": [[src, dst, [port, ...]], ...],
      "layers": [[src, dst, [layer, ...]], ...]      # optional, one layer per hop
    }

A graph topology is written ``{"kind": "graph", "nodes": N, "edges": [[u, v], ...]}``.
Routes from a node to itself are the empty list and may be omitted.

Routes made elsewhere come in as node paths (:meth:`RoutingTable.from_paths`): a text file
with one route per line, the nodes it visits from its source to its destination (``0 4 5 9``;
``#`` starts a comment), on a topology given beside it; ``icsim layers --edges FILE --paths
FILE --out T`` turns one into a table file with virtual layers.

What a file must hold (anything else is a :class:`TableError` naming the file and the entry,
e.g. ``t.json: routes[12]: route 0->1: hop 1 returns to node 0 ...``):

* a JSON object of at most 64 MiB, UTF-8; ids and ports are JSON integers;
* a topology of at most 2^16 nodes and 16 dimensions (a graph: see ``Graph``'s limits);
* ``nodes``: distinct node ids of the topology, at least two (absent: every node);
* one entry per ordered pair of ``nodes`` (a second entry for a pair is an error, not an
  override); no entry for a node outside ``nodes``; a self-route, if present, empty;
* every route a *simple path* from its source to its destination over links that exist: no
  node twice, so a route that loops (``[x+, x-, x+]`` for a neighbour) is refused;
* layers, if present, one per hop, each in ``[0, 64)``.
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from icsim.model.errors import Picklable
from icsim.model.input_files import InputFileError, read_lines, read_text
from icsim.model.topology import Graph, GraphError, Torus

Pair = tuple[int, int]

#: the largest table file read: a full table of about 1,400 nodes (a full 8x8x8 torus table is
#: 8 MB); loading takes about 25 times a file's size in memory, 1.6 GB at the limit
MAX_TABLE_BYTES = 64 << 20
#: most nodes and dimensions a table file's topology may have (a table routes every pair of its
#: nodes: 4 billion routes for a whole torus at the node limit, so no real table comes near it)
MAX_TOPOLOGY_NODES, MAX_DIMS = 1 << 16, 16
#: virtual layers a table may use (each is a virtual channel on every port)
MAX_LAYERS = 64


class TableError(Picklable, ValueError):
    """A routing table (or table file) that is malformed; the message names the first bad entry."""


@dataclass
class RoutingTable:
    """Source routes over ``topology`` for every ordered pair of ``nodes``.

    Parameters
    ----------
    topology : Torus or Graph topology
    routes : mapping (src, dst) -> tuple of ports
    nodes : sequence of int, optional
        The node set (a job's nodes); default every node of the topology.
    layers : mapping (src, dst) -> tuple of int, optional
        Virtual layer of each hop.
    meta : dict
        Free-form provenance (generator, seed, time).
    """

    topology: Any
    routes: dict[Pair, tuple[int, ...]]
    nodes: tuple[int, ...] = ()
    layers: dict[Pair, tuple[int, ...]] | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.nodes:
            self.nodes = tuple(range(self.topology.num_nodes))
        self.nodes = tuple(int(v) for v in self.nodes)

    # ------------------------------------------------------------------ derived views
    def route(self, src: int, dst: int) -> tuple[int, ...]:
        if src == dst:
            return ()
        return self.routes[(src, dst)]

    def node_path(self, src: int, dst: int) -> list[int]:
        """Nodes visited from src to dst, both included."""
        path = [src]
        for port in self.route(src, dst):
            path.append(self.topology.neighbor(path[-1], port))
        return path

    def channel_path(self, src: int, dst: int) -> list[tuple[int, int]]:
        """Channels ``(node, port)`` crossed from src to dst, in order."""
        out, u = [], src
        for port in self.route(src, dst):
            out.append((u, port))
            u = self.topology.neighbor(u, port)
        return out

    def pairs(self) -> list[Pair]:
        return [(s, t) for s in self.nodes for t in self.nodes if s != t]

    # ------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Raise :class:`TableError` at the first route that is missing, leaves the topology,
        visits a node twice or does not end at its destination, or that belongs to no pair of
        the table's nodes."""
        members = set(self.nodes)
        if len(members) != len(self.nodes):
            raise TableError("nodes: a node is listed twice")
        for (s, t), route in self.routes.items():
            problem = self._entry_problem(s, t, members)
            if problem:
                raise TableError(f"route {s}->{t}: {problem}")
        self._check_pairs()

    def _entry_problem(self, s: int, t: int, members: set[int]) -> str | None:
        """What is wrong with the route stored for (s, t) on its own, None if nothing."""
        if s not in members or t not in members:
            return f"node {s if s not in members else t} is not one of the table's nodes"
        route = self.routes[(s, t)]
        if s == t:
            return (f"a route from a node to itself must be empty, got {len(route)} hops"
                    if route else None)
        neighbor, num_ports = self.topology.neighbor, self.topology.num_ports
        u, seen = s, {s}
        for i, port in enumerate(route):
            v = neighbor(u, port) if 0 <= port < num_ports else -1
            if v < 0:
                return f"hop {i} takes port {port}, which does not exist at node {u}"
            if v in seen:
                return (f"hop {i} returns to node {v}, a loop (a route must be a simple path, "
                        f"no node twice)")
            seen.add(v)
            u = v
        if u != t:
            return f"ends at node {u}, not at {t}"
        return None

    def _check_pairs(self) -> None:
        """Every pair of the table's nodes has a route, and one layer per hop if layered."""
        for s, t in ((s, t) for s in self.nodes for t in self.nodes if s != t):   # lazily
            if (s, t) not in self.routes:
                raise TableError(f"route {s}->{t}: missing")
            if self.layers is not None:
                lay = self.layers.get((s, t))
                if lay is None or len(lay) != len(self.routes[(s, t)]):
                    raise TableError(f"route {s}->{t}: needs one layer per hop")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_next_hop(cls, topology: Any, next_port: Mapping[tuple[int, int], int],
                      nodes: Sequence[int] | None = None) -> "RoutingTable":
        """Expand a destination-based table ``next_port[(node, dst)] -> port`` into source
        routes.  Raises :class:`TableError` on a loop or a missing entry."""
        nodes = tuple(nodes) if nodes else tuple(range(topology.num_nodes))
        routes: dict[Pair, tuple[int, ...]] = {}
        limit = topology.num_nodes
        for s in nodes:
            for t in nodes:
                if s == t:
                    continue
                u, ports = s, []
                while u != t:
                    if (u, t) not in next_port:
                        raise TableError(f"next-hop table: no entry for node {u} towards {t}")
                    p = next_port[(u, t)]
                    ports.append(p)
                    u = topology.neighbor(u, p)
                    if u < 0 or len(ports) > limit:
                        raise TableError(f"next-hop table: route {s}->{t} loops or leaves the "
                                         f"topology")
                routes[(s, t)] = tuple(ports)
        return cls(topology, routes, nodes)

    # ------------------------------------------------------------------ files
    def to_json(self) -> dict:
        doc = {
            "format": "icsim-routing-table",
            "version": 1,
            "topology": self.topology.to_json(),
            "nodes": list(self.nodes),
            "meta": self.meta,
            "routes": [[s, t, list(r)] for (s, t), r in sorted(self.routes.items())],
        }
        if self.layers is not None:
            doc["layers"] = [[s, t, list(v)] for (s, t), v in sorted(self.layers.items())]
        return doc

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def from_json(cls, doc: Any, where: str = "table") -> "RoutingTable":
        """The table a parsed file holds; :class:`TableError` ``"<where>: <entry>: <reason>"``
        at the first thing that is not as the module docstring says."""
        try:
            return cls._from_json(doc)
        except TableError as exc:
            raise TableError(f"{where}: {exc}") from None

    @classmethod
    def _from_json(cls, doc: Any) -> "RoutingTable":
        if not isinstance(doc, dict):
            raise TableError(f"not an icsim-routing-table file (a JSON {_kind(doc)}, not an "
                             f"object)")
        if doc.get("format") != "icsim-routing-table":
            raise TableError(f"not an icsim-routing-table file (format field is "
                             f"{_cut(doc.get('format'))})")
        version = doc.get("version")
        if not _is_int(version) or version != 1:
            raise TableError(f"unsupported version {_cut(version)} (expected 1)")
        topo = topology_from_json(doc.get("topology"))
        nodes = _node_set(doc.get("nodes"), topo.num_nodes)
        routes, first = _entries(doc, "routes", topo.num_nodes)
        layers = None
        if doc.get("layers") is not None:
            layers, at = _entries(doc, "layers", topo.num_nodes)
            for (s, t), i in at.items():
                if (s, t) not in routes and s != t:
                    raise TableError(f"layers[{i}]: layers for {s}->{t}, which has no route")
                if any(not 0 <= x < MAX_LAYERS for x in layers[(s, t)]):
                    raise TableError(f"layers[{i}]: layers of {s}->{t} must lie in "
                                     f"[0, {MAX_LAYERS})")
        meta = doc.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise TableError(f"meta must be an object, not a {_kind(meta)}")
        table = cls(topo, routes, nodes, layers, dict(meta or {}))
        members = set(table.nodes)
        for (s, t), i in first.items():
            problem = table._entry_problem(s, t, members)
            if problem:
                raise TableError(f"routes[{i}]: route {s}->{t}: {problem}")
        table._check_pairs()
        return table

    @classmethod
    def from_paths(cls, topology: Any, path: str | Path) -> "RoutingTable":
        """Routes given as node paths in a text file, one per line: the nodes a route visits
        from its source to its destination (``0 4 5 9``), ``#`` starting a comment.  The
        table's nodes are the routes' ends, and every ordered pair of them needs a route, a
        simple path over links of ``topology``.  The file is read line by line, at most
        :data:`MAX_TABLE_BYTES`; :class:`TableError` names the file and the line of the first
        problem (``paths.txt:12: nodes 3 and 7 are not neighbours``)."""
        port_to = {(u, v): p for u, row in enumerate(topology.neighbor_table)
                   for p, v in enumerate(row) if v >= 0}
        n = topology.num_nodes
        routes: dict[Pair, tuple[int, ...]] = {}
        size = 0
        try:
            for lineno, text in read_lines(path):
                size += len(text.encode())
                at = f"{path}:{lineno}"
                if size > MAX_TABLE_BYTES:
                    raise TableError(f"{at}: the file passes {MAX_TABLE_BYTES >> 20} MiB, the "
                                     f"limit of a table")
                words = text.split("#", 1)[0].split()
                if not words:
                    continue
                try:
                    nodes = [int(w) for w in words]
                except ValueError:
                    raise TableError(f"{at}: node ids must be integers, got "
                                     f"{_cut(' '.join(words))}") from None
                if len(nodes) < 2:
                    raise TableError(f"{at}: a route names at least two nodes, its source and "
                                     f"its destination")
                if not all(0 <= v < n for v in nodes):
                    v = next(v for v in nodes if not 0 <= v < n)
                    raise TableError(f"{at}: node {v} is not in the topology (0..{n - 1})")
                s, t = nodes[0], nodes[-1]
                if (s, t) in routes:
                    raise TableError(f"{at}: a second route {s}->{t}")
                if len(set(nodes)) < len(nodes):
                    v = next(v for i, v in enumerate(nodes) if v in nodes[:i])
                    raise TableError(f"{at}: route {s}->{t} visits node {v} twice (a route "
                                     f"must be a simple path)")
                ports = []
                for u, v in zip(nodes, nodes[1:]):
                    if (u, v) not in port_to:
                        raise TableError(f"{at}: route {s}->{t}: nodes {u} and {v} are not "
                                         f"neighbours")
                    ports.append(port_to[(u, v)])
                routes[(s, t)] = tuple(ports)
        except InputFileError as exc:
            raise TableError(str(exc)) from None
        if not routes:
            raise TableError(f"{path}: no routes (one per line: the nodes from source to "
                             f"destination)")
        ends = sorted({v for pair in routes for v in pair})
        table = cls(topology, routes, tuple(ends), None, {"paths": Path(path).name})
        try:
            table._check_pairs()
        except TableError as exc:
            raise TableError(f"{path}: {exc}; every ordered pair of the routes' ends needs "
                             f"one") from None
        return table

    @classmethod
    def load(cls, path: str | Path) -> "RoutingTable":
        """Read a table file; :class:`TableError` naming the file (and the entry or line) for
        anything that is not a valid table: the module docstring lists what is checked."""
        try:
            text = read_text(path, max_bytes=MAX_TABLE_BYTES)
        except InputFileError as exc:
            raise TableError(str(exc)) from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TableError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}, column "
                             f"{exc.colno})") from None
        except RecursionError:
            raise TableError(f"{path}: not a table file (JSON nested too deeply)") from None
        except ValueError as exc:                  # e.g. an integer of more than 4300 digits
            raise TableError(f"{path}: not valid JSON ({exc})") from None
        return cls.from_json(doc, where=str(path))


def topology_from_json(doc: Any, where: str = "") -> Any:
    """The topology a table file's ``topology`` object describes; :class:`TableError` (starting
    ``<where>: `` when given) if it is malformed or over the limits."""
    try:
        return _topology(doc)
    except TableError as exc:
        raise TableError(f"{where}: {exc}" if where else str(exc)) from None


def _topology(doc: Any) -> Any:
    if not isinstance(doc, dict):
        raise TableError(f"topology must be an object, not a {_kind(doc)}")
    kind = doc.get("kind")
    if kind == "torus":
        dims = doc.get("dims")
        if not _int_list(dims) or not dims or any(k < 1 for k in dims):
            raise TableError(f"topology.dims must be a list of sizes >= 1, got {_cut(dims)}")
        if len(dims) > MAX_DIMS:
            raise TableError(f"topology.dims: {len(dims)} dimensions, more than the limit of "
                             f"{MAX_DIMS}")
        size = 1
        for k in dims:
            size *= k
            if size > MAX_TOPOLOGY_NODES:
                raise TableError(f"topology.dims {_cut(dims)}: more than {MAX_TOPOLOGY_NODES:,} "
                                 f"nodes, the limit of a table file's topology")
        wrap = doc.get("wrap")
        if wrap is not None and (not isinstance(wrap, list) or len(wrap) != len(dims)
                                 or not all(isinstance(w, bool) for w in wrap)):
            raise TableError(f"topology.wrap must be a list of {len(dims)} true/false, got "
                             f"{_cut(wrap)}")
        links, dead = doc.get("failed_links") or [], doc.get("failed_nodes") or []
        if not isinstance(links, list) or not all(
                isinstance(x, list) and len(x) == 2 and _int_list(x) for x in links):
            raise TableError(f"topology.failed_links must be a list of [node, port] integer "
                             f"pairs, got {_cut(links)}")
        if not _int_list(dead):
            raise TableError(f"topology.failed_nodes must be a list of node ids, got "
                             f"{_cut(dead)}")
        try:
            return Torus(tuple(dims), tuple(wrap or ()),
                         failed_links=[tuple(x) for x in links], failed_nodes=tuple(dead))
        except ValueError as exc:
            raise TableError(f"topology: {exc}") from None
    if kind == "graph":
        n, edges = doc.get("nodes"), doc.get("edges")
        if not _is_int(n):
            raise TableError(f"topology.nodes must be an integer, got {_cut(n)}")
        if not isinstance(edges, list) or not all(
                isinstance(e, list) and len(e) == 2 and _int_list(e) for e in edges):
            raise TableError("topology.edges must be a list of [u, v] integer pairs")
        try:
            return Graph.from_edges(n, [tuple(e) for e in edges])
        except GraphError as exc:
            raise TableError(f"topology: {exc}") from None
    raise TableError(f"topology.kind must be 'torus' or 'graph', got {_cut(kind)}")


def _node_set(value: Any, num_nodes: int) -> tuple[int, ...]:
    """A file's ``nodes``: distinct ids of the topology, at least two; () for every node."""
    if value is None or value == []:
        if num_nodes < 2:
            raise TableError(f"a table needs at least 2 nodes; the topology has {num_nodes}")
        return ()
    if not _int_list(value):
        raise TableError(f"nodes must be a list of node ids, got {_cut(value)}")
    seen: set[int] = set()
    for i, v in enumerate(value):
        if not 0 <= v < num_nodes:
            raise TableError(f"nodes[{i}]: node {v} is outside the {num_nodes}-node topology")
        if v in seen:
            raise TableError(f"nodes[{i}]: node {v} is listed twice")
        seen.add(v)
    if len(value) < 2:
        raise TableError(f"nodes: a table needs at least 2 nodes, got {len(value)}")
    return tuple(value)


def _entries(doc: dict, key: str, num_nodes: int) -> tuple[dict[Pair, tuple[int, ...]],
                                                            dict[Pair, int]]:
    """``doc[key]`` (routes or layers) as {(src, dst): values} and {(src, dst): entry index}:
    every entry ``[src, dst, [int, ...]]`` with nodes of the topology, one per pair."""
    what = "ports" if key == "routes" else "layers"
    entries = doc.get(key, [])
    if not isinstance(entries, list):
        raise TableError(f"{key} must be a list of [src, dst, [{what}...]], not a "
                         f"{_kind(entries)}")
    values: dict[Pair, tuple[int, ...]] = {}
    first: dict[Pair, int] = {}
    for i, entry in enumerate(entries):
        if not (isinstance(entry, list) and len(entry) == 3 and _is_int(entry[0])
                and _is_int(entry[1]) and _int_list(entry[2])):
            raise TableError(f"{key}[{i}] is not [src, dst, [{what}...]] with integers: "
                             f"{_cut(entry)}")
        s, t = entry[0], entry[1]
        for v in (s, t):
            if not 0 <= v < num_nodes:
                raise TableError(f"{key}[{i}]: node {v} is outside the {num_nodes}-node "
                                 f"topology")
        if (s, t) in first:
            raise TableError(f"{key}[{i}]: a second entry for {s}->{t} (the first is "
                             f"{key}[{first[(s, t)]}]); one entry per pair")
        if any(x < 0 for x in entry[2]):
            raise TableError(f"{key}[{i}]: {what} of {s}->{t} must be >= 0")
        first[(s, t)] = i
        values[(s, t)] = tuple(entry[2])
    return values, first


def _is_int(value: Any) -> bool:
    """A JSON integer (``true`` is not one)."""
    return type(value) is int


def _int_list(value: Any) -> bool:
    return type(value) is list and all(type(x) is int for x in value)


def _kind(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "list", str: "string", type(None): "null"}.get(
        type(value), type(value).__name__)


def _cut(value: Any) -> str:
    """A value as quoted in a message, cut short if long."""
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 2, 6, 4, 30, 30
    return short.repr(value)
