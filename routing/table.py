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
      "topology": {"kind": "torus", "dims": [4, 2, 2, 2], "wrap": [true, false, false, false]},
      "nodes": [0, 1, ...],               # the node set the table covers
      "meta": {"generator": "sssp", "seed": 1},
      "routes": [[src, dst, [port, ...]], ...],
      "layers": [[src, dst, [layer, ...]], ...]      # optional, one layer per hop
    }

A graph topology is written ``{"kind": "graph", "nodes": N, "edges": [[u, v], ...]}``.
Routes from a node to itself are the empty list and may be omitted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

Pair = tuple[int, int]


class TableError(ValueError):
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
        """Raise :class:`TableError` at the first pair whose route is missing, leaves the
        topology or does not end at its destination."""
        topo = self.topology
        for s, t in self.pairs():
            if (s, t) not in self.routes:
                raise TableError(f"route {s}->{t}: missing")
            u = s
            for i, port in enumerate(self.routes[(s, t)]):
                if not 0 <= port < topo.num_ports or topo.neighbor(u, port) < 0:
                    raise TableError(f"route {s}->{t}: hop {i} takes port {port}, which does not "
                                     f"exist at node {u}")
                u = topo.neighbor(u, port)
            if u != t:
                raise TableError(f"route {s}->{t}: ends at node {u}, not at {t}")
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
            "topology": topology_to_json(self.topology),
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
    def from_json(cls, doc: Mapping, where: str = "table") -> "RoutingTable":
        if doc.get("format") != "icsim-routing-table":
            raise TableError(f"{where}: not an icsim-routing-table file (format field is "
                             f"{doc.get('format')!r})")
        if doc.get("version") != 1:
            raise TableError(f"{where}: unsupported version {doc.get('version')!r} (expected 1)")
        topo = topology_from_json(doc.get("topology", {}), where)
        routes, layers = {}, None
        for i, entry in enumerate(doc.get("routes", [])):
            try:
                s, t, ports = int(entry[0]), int(entry[1]), tuple(int(p) for p in entry[2])
            except (TypeError, ValueError, IndexError):
                raise TableError(f"{where}: routes[{i}] is not [src, dst, [ports...]]") from None
            routes[(s, t)] = ports
        if "layers" in doc:
            layers = {}
            for i, entry in enumerate(doc["layers"]):
                try:
                    layers[(int(entry[0]), int(entry[1]))] = tuple(int(x) for x in entry[2])
                except (TypeError, ValueError, IndexError):
                    raise TableError(f"{where}: layers[{i}] is not [src, dst, [layer...]]") from None
        nodes = tuple(doc.get("nodes") or ())
        for v in nodes:
            if not 0 <= int(v) < topo.num_nodes:
                raise TableError(f"{where}: node {v} is outside the {topo.num_nodes}-node topology")
        table = cls(topo, routes, nodes, layers, dict(doc.get("meta") or {}))
        try:
            table.validate()
        except TableError as exc:
            raise TableError(f"{where}: {exc}") from None
        return table

    @classmethod
    def load(cls, path: str | Path) -> "RoutingTable":
        path = Path(path)
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            raise TableError(f"{path}: no such table file") from None
        except json.JSONDecodeError as exc:
            raise TableError(f"{path}: not valid JSON ({exc})") from None
        return cls.from_json(doc, where=str(path))


def topology_to_json(topology: Any) -> dict:
    if topology.kind == "torus":
        return {"kind": "torus", "dims": list(topology.dims), "wrap": list(topology.wrap)}
    return {"kind": "graph", "nodes": topology.num_nodes,
            "edges": [list(e) for e in topology.edges]}


def topology_from_json(doc: Mapping, where: str = "table") -> Any:
    from icsim.simulator.topology import Torus

    kind = doc.get("kind")
    try:
        if kind == "torus":
            return Torus(tuple(doc["dims"]), tuple(doc.get("wrap") or ()))
        if kind == "graph":
            from icsim.simulator.topology import Graph

            return Graph.from_edges(int(doc["nodes"]), [tuple(e) for e in doc["edges"]])
    except (KeyError, TypeError, ValueError) as exc:
        raise TableError(f"{where}: bad topology ({exc})") from None
    raise TableError(f"{where}: topology kind must be 'torus' or 'graph', got {kind!r}")
