"""Arbitrary graphs of routers, for table routing and virtual-layer studies.

Port ``i`` of a node is the link to its ``i``-th neighbour (neighbours in ascending id order);
ports beyond a node's degree are absent.  A graph provides no capability beyond the base
interface (:mod:`icsim.model.topology.base`): routing on it is by table.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from icsim.model.input_files import InputFileError, read_lines
from icsim.model.topology.base import ABSENT, Topology


#: most routers a graph topology may have: a run on a graph routes by table, N^2 routes
#: (16.7 million at 4096 nodes, a few GB); larger graphs are refused before anything is built
MAX_GRAPH_NODES = 1 << 12
#: most links a graph topology may have (mean degree 128 at the node limit)
MAX_GRAPH_EDGES = 1 << 18


class GraphError(ValueError):
    """A graph that cannot be built: a bad edge, too many nodes or links, not connected.  From
    a file, one line starting ``<file>:<line>:`` (or ``<file>:`` about the whole graph)."""


@dataclass(frozen=True)
class Graph(Topology):
    """An arbitrary connected graph of routers; every link is a pair of unidirectional channels.

    Port ``i`` of a node leads to its ``i``-th neighbour in ascending id order; ports beyond a
    node's degree are absent.  Used with table routing (Angara-style source routes or
    destination-based tables with virtual layers).

    Parameters
    ----------
    num_nodes : int
        At most :data:`MAX_GRAPH_NODES` (4096).
    edges : sequence of (u, v)
        Undirected links, no self-loops, no duplicates, at most :data:`MAX_GRAPH_EDGES`; the
        graph must be connected.

    Examples
    --------
    >>> g = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    >>> g.neighbor(0, 0), g.neighbor(0, 1), g.distance(0, 2)
    (1, 3, 2)
    >>> Graph.from_edges(4, [(0, 1), (1, 2), (2, 0)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    icsim.model.topology.graph.GraphError: the graph is not connected (node 3 cannot be reached ...)
    """

    num_nodes: int
    edges: tuple[tuple[int, int], ...]
    #: terminals per router (``topology.concentration``): terminal t on router t // p
    terminals_per_router: int = 1

    name = "graph"

    @classmethod
    def from_edges(cls, num_nodes: int, edges: Sequence[tuple[int, int]]) -> "Graph":
        """The graph of these links; :class:`GraphError` naming the first bad one (``edge i``,
        counted from 0)."""
        _check_node_count(num_nodes)
        if len(edges) > MAX_GRAPH_EDGES:
            raise GraphError(f"{len(edges):,} links, more than the limit of "
                             f"{MAX_GRAPH_EDGES:,} of a graph topology")
        return cls._build(num_nodes, [_edge(e, f"edge {i}") for i, e in enumerate(edges)],
                          [f"edge {i}" for i in range(len(edges))], "")

    @classmethod
    def from_file(cls, path: str) -> "Graph":
        """Read an edge list: one ``u v`` pair per line (or ``u,v``), ``#`` starts a comment.
        The node count is one more than the largest id.  Errors name the file and its line:
        ``edges.txt:12: (3, 3) is a self-loop``."""
        edges, where = [], []
        try:
            for lineno, text in read_lines(path):
                line = text.split("#", 1)[0].strip()
                if not line:
                    continue
                at = f"{path}:{lineno}"
                parts = line.replace(",", " ").split()
                if len(parts) != 2:
                    raise GraphError(f"{at}: expected 'u v', got {_cut(line)!r}")
                try:
                    u, v = int(parts[0]), int(parts[1])
                except ValueError:
                    raise GraphError(f"{at}: node ids must be integers, got "
                                     f"{_cut(line)!r}") from None
                for w in (u, v):
                    if not 0 <= w < MAX_GRAPH_NODES:
                        raise GraphError(f"{at}: node id {w} is not in 0..{MAX_GRAPH_NODES - 1} "
                                         f"(a graph topology has at most {MAX_GRAPH_NODES} "
                                         f"nodes)")
                if len(edges) == MAX_GRAPH_EDGES:
                    raise GraphError(f"{at}: more than {MAX_GRAPH_EDGES:,} links, the limit of "
                                     f"a graph topology")
                edges.append((u, v))
                where.append(at)
        except InputFileError as exc:
            raise GraphError(str(exc)) from None
        if not edges:
            raise GraphError(f"{path}: no edges")
        return cls._build(1 + max(max(e) for e in edges), edges, where, f"{path}: ")

    @classmethod
    def _build(cls, num_nodes: int, edges: list[tuple[int, int]], where: list[str],
               whole: str) -> "Graph":
        """Check ``edges`` (``where[i]`` names edge i in a message, ``whole`` prefixes one
        about the whole graph) and make the graph."""
        norm = set()
        for at, (u, v) in zip(where, edges):
            if not (0 <= u < num_nodes and 0 <= v < num_nodes):
                raise GraphError(f"{at}: ({u}, {v}) names a node outside 0..{num_nodes - 1}")
            if u == v:
                raise GraphError(f"{at}: ({u}, {v}) is a self-loop")
            e = (min(u, v), max(u, v))
            if e in norm:
                raise GraphError(f"{at}: ({u}, {v}) appears twice")
            norm.add(e)
        g = cls(int(num_nodes), tuple(sorted(norm)))
        unreached = g._unreached()
        if unreached is not None:
            raise GraphError(f"{whole}the graph is not connected (node {unreached} cannot be "
                             f"reached from node 0)")
        return g

    def _unreached(self) -> int | None:
        """The lowest node a search from node 0 does not reach, None if connected."""
        seen = [False] * self.num_nodes
        seen[0] = True
        stack = [0]
        while stack:
            for v in self.adjacency[stack.pop()]:
                if not seen[v]:
                    seen[v] = True
                    stack.append(v)
        return next((v for v, s in enumerate(seen) if not s), None)

    @classmethod
    def random_regular(cls, nodes: int, degree: int, seed: int) -> "Graph":
        """A connected random ``degree``-regular graph (networkx's generator); the first
        connected draw from seeds ``seed, seed + 1, ...`` (deterministic)."""
        import networkx as nx          # the one use of networkx in a topology

        _check_node_count(nodes)
        if nodes * degree % 2 or degree >= nodes or degree < 1:
            raise GraphError(f"no {degree}-regular graph on {nodes} nodes")
        if nodes * degree // 2 > MAX_GRAPH_EDGES:
            raise GraphError(f"a {degree}-regular graph on {nodes} nodes has "
                             f"{nodes * degree // 2:,} links, more than the limit of "
                             f"{MAX_GRAPH_EDGES:,} of a graph topology")
        if degree == 1 and nodes > 2:
            raise GraphError(f"no connected 1-regular graph on {nodes} nodes")
        for attempt in range(1000):
            g = nx.random_regular_graph(degree, nodes, seed=seed + attempt)
            if nx.is_connected(g):
                return cls.from_edges(nodes, list(g.edges()))
        raise GraphError(f"no connected {degree}-regular graph on {nodes} nodes found")

    @cached_property
    def adjacency(self) -> tuple[tuple[int, ...], ...]:
        adj: list[list[int]] = [[] for _ in range(self.num_nodes)]
        for u, v in self.edges:
            adj[u].append(v)
            adj[v].append(u)
        return tuple(tuple(sorted(a)) for a in adj)

    @cached_property
    def num_ports(self) -> int:
        return max((len(a) for a in self.adjacency), default=0)

    @cached_property
    def neighbor_table(self) -> tuple[tuple[int, ...], ...]:
        p = self.num_ports
        return tuple(a + (ABSENT,) * (p - len(a)) for a in self.adjacency)

    def neighbor(self, node: int, port: int) -> int:
        return self.neighbor_table[node][port]

    def port_to(self, u: int, v: int) -> int:
        """The port of u whose link leads to v."""
        try:
            return self.adjacency[u].index(v)
        except ValueError:
            raise ValueError(f"nodes {u} and {v} are not adjacent") from None

    @cached_property
    def num_channels(self) -> int:
        return 2 * len(self.edges)

    def hop_distances(self, src: int) -> np.ndarray:
        return self.distances[src].astype(np.int64)

    def distance(self, a: int, b: int) -> int:
        return int(self.distances[a, b])

    def distances_between(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """:meth:`distance` of every pair ``src[i] -> dst[i]``."""
        return np.asarray(self.distances[src, dst], dtype=np.int64)

    def reverse_ports(self) -> np.ndarray:
        """``[node, port]``: the port of the neighbour whose channel leads back (-1 where none)."""
        out = np.full((self.num_nodes, max(1, self.num_ports)), -1, dtype=np.int64)
        for u, row in enumerate(self.adjacency):
            for port, v in enumerate(row):
                out[u, port] = self.adjacency[v].index(u)
        return out[:, :self.num_ports]

    @cached_property
    def max_channel_load_factor(self) -> float:
        """Busiest channel's load per unit of per-terminal uniform injection (destinations
        uniform over all terminals) under the minimal destination-based routing that picks, at
        each node, the lowest-numbered port on a shortest path: a router's ``p`` terminals
        inject ``p`` times a terminal's load.  What γ = 1 is normalised by."""
        n = self.num_nodes
        if n < 2:
            return 0.0
        dist = self.distances.astype(np.int64)
        nbr = self.neighbor_array
        # the next hop toward every t: the lowest port onto a shortest path
        hop = np.full((n, n), -1, dtype=np.int64)
        for port in range(self.num_ports):
            w = nbr[:, port]
            onto = (w[:, None] >= 0) & (dist[np.maximum(w, 0)] == dist - 1) & (hop < 0)
            hop[onto] = port
        # the routes toward t form a tree; a channel carries the sources of its subtree
        below = np.ones((n, n), dtype=np.int64)               # [u, t]: sources through u
        load = np.zeros((n, max(1, self.num_ports)), dtype=np.int64)
        for d in range(int(dist.max()), 0, -1):               # farthest first
            u, t = np.nonzero(dist == d)
            np.add.at(below, (nbr[u, hop[u, t]], t), below[u, t])
            np.add.at(load, (u, hop[u, t]), below[u, t])
        return int(load.max()) / n * self.terminals_per_router

    def to_json(self) -> dict:
        """The topology as a table file stores it (``icsim-routing-table``)."""
        return {"kind": "graph", "nodes": self.num_nodes, "edges": [list(e) for e in self.edges]}

    def describe(self) -> str:
        degs = sorted({len(a) for a in self.adjacency})
        p = self.terminals_per_router
        each = f", {p} terminals per node" if p > 1 else ""
        return f"graph of {self.num_nodes} nodes, {len(self.edges)} links, degree {degs}{each}"


def _check_node_count(num_nodes: int) -> None:
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, (int, np.integer)):
        raise GraphError(f"the node count must be an integer, got {_cut(repr(num_nodes))}")
    if not 1 <= num_nodes <= MAX_GRAPH_NODES:
        raise GraphError(f"{num_nodes} nodes: a graph topology has 1 to {MAX_GRAPH_NODES} "
                         f"nodes")


def _edge(item, at: str) -> tuple[int, int]:
    """``item`` as a pair of integer node ids; GraphError naming it otherwise."""
    try:
        u, v = item
        if isinstance(u, bool) or isinstance(v, bool):
            raise TypeError
        return operator.index(u), operator.index(v)
    except (TypeError, ValueError):
        raise GraphError(f"{at}: {_cut(repr(item))} is not a pair of integer node ids") from None


def _cut(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."
