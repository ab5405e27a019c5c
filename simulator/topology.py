"""Network topologies as values.

A topology answers every structural question the model, the routing algorithms and the traffic
patterns ask: how many nodes, which output ports a node has, which node a port leads to, the
minimal offset between two nodes and the distance.  Nobody else redoes modular arithmetic.

Ports
-----
On a torus of ``n`` dimensions a router has ``2n`` direction ports, numbered as in the OutFlank
reference simulator: ``port = 2*dim + s`` with ``s = 0`` for the positive and ``s = 1`` for the
negative direction (``0 = x+, 1 = x-, 2 = y+, ...``).  A port that leads nowhere (a size-1
dimension, the edge of a mesh, the unused direction of a size-2 dimension) is *absent*:
``neighbor(node, port) == -1``.  On a graph topology port ``i`` of a node is the link to its
``i``-th neighbour (neighbours in ascending id order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import product
from typing import Iterator, Sequence

import numpy as np

ABSENT = -1


def _port(dim: int, sign: int) -> int:
    return 2 * dim + (0 if sign > 0 else 1)


@dataclass(frozen=True)
class Torus:
    """A k-ary n-cube of any n and mixed sizes; each dimension a ring or a line (mesh).

    Node ids run with the first dimension fastest: ``id = x0 + k0*x1 + k0*k1*x2 + ...``.
    A dimension of size 2 is always a mesh link (one channel each way between its two nodes,
    as on the Angara machines); a size-1 dimension has no links.

    Parameters
    ----------
    dims : sequence of int
        Size of each dimension, every one >= 1.
    wrap : sequence of bool, optional
        Per dimension, whether it wraps around (a ring) or is a line (mesh).  Default all True.

    Examples
    --------
    >>> t = Torus((4, 4))
    >>> t.coords(5), t.node((1, 1)), t.distance(0, 10)
    ((1, 1), 5, 4)
    >>> [t.neighbor(0, p) for p in range(4)]   # x+, x-, y+, y-
    [1, 3, 4, 12]
    """

    dims: tuple[int, ...]
    wrap: tuple[bool, ...] = field(default=())

    kind = "torus"

    def __post_init__(self) -> None:
        dims = tuple(int(k) for k in self.dims)
        if not dims or any(k < 1 for k in dims):
            raise ValueError(f"every dimension size must be >= 1, got {list(self.dims)}")
        wrap = tuple(bool(w) for w in self.wrap) if self.wrap else (True,) * len(dims)
        if len(wrap) != len(dims):
            raise ValueError(f"wrap has {len(wrap)} entries for {len(dims)} dimensions")
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "wrap", wrap)

    # ------------------------------------------------------------------ sizes and ids
    @property
    def n(self) -> int:
        """Number of dimensions (size-1 dimensions included)."""
        return len(self.dims)

    @cached_property
    def num_nodes(self) -> int:
        return int(np.prod(self.dims))

    @property
    def num_ports(self) -> int:
        """Direction ports per router (absent ones included): ``2n``."""
        return 2 * self.n

    @cached_property
    def strides(self) -> tuple[int, ...]:
        s, out = 1, []
        for k in self.dims:
            out.append(s)
            s *= k
        return tuple(out)

    @cached_property
    def _coords(self) -> tuple[tuple[int, ...], ...]:
        ranges = [range(k) for k in reversed(self.dims)]
        return tuple(tuple(reversed(c)) for c in product(*ranges))

    def coords(self, node: int) -> tuple[int, ...]:
        return self._coords[node]

    def node(self, coords: Sequence[int]) -> int:
        return sum((int(c) % k) * s for c, k, s in zip(coords, self.dims, self.strides))

    def is_ring(self, dim: int) -> bool:
        """True when dimension ``dim`` closes into a ring (wraps and has at least 3 nodes)."""
        return self.wrap[dim] and self.dims[dim] >= 3

    # ------------------------------------------------------------------ links
    @cached_property
    def _neighbors(self) -> tuple[tuple[int, ...], ...]:
        table = []
        for node in range(self.num_nodes):
            c = self._coords[node]
            row = []
            for dim, k in enumerate(self.dims):
                for sign in (1, -1):
                    x = c[dim] + sign
                    if k == 1 or (not self.is_ring(dim) and not 0 <= x < k):
                        row.append(ABSENT)
                    else:
                        row.append(node + ((x % k) - c[dim]) * self.strides[dim])
            table.append(tuple(row))
        return tuple(table)

    def neighbor(self, node: int, port: int) -> int:
        """Node reached from ``node`` through ``port``, or ``ABSENT`` (-1)."""
        return self._neighbors[node][port]

    @property
    def neighbor_table(self) -> tuple[tuple[int, ...], ...]:
        """``neighbor_table[node][port]``, the whole of :meth:`neighbor` as a table."""
        return self._neighbors

    def port_dim(self, port: int) -> int:
        return port >> 1

    def port_sign(self, port: int) -> int:
        return 1 if port & 1 == 0 else -1

    def port_name(self, port: int) -> str:
        axis = "xyzwuvabcdefgh"[port >> 1] if self.n <= 14 else f"d{port >> 1}"
        return f"{axis}{'+' if port & 1 == 0 else '-'}"

    def channels(self) -> Iterator[tuple[int, int, int]]:
        """Every unidirectional router-to-router channel as ``(node, port, neighbour)``."""
        for node, row in enumerate(self._neighbors):
            for port, v in enumerate(row):
                if v != ABSENT:
                    yield node, port, v

    @cached_property
    def num_channels(self) -> int:
        return sum(1 for _ in self.channels())

    # ------------------------------------------------------------------ offsets and distances
    @cached_property
    def offset_table(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """``offset_table[dim][a][b]``: the signed minimal offset from coordinate a to b.

        Positive means the + direction.  On an even ring an offset of exactly k/2 is reported
        as +k/2 (both directions are minimal; see :meth:`is_tie`).
        """
        out = []
        for dim, k in enumerate(self.dims):
            ring = self.is_ring(dim)
            rows = []
            for a in range(k):
                row = []
                for b in range(k):
                    d = b - a
                    if ring:
                        d %= k
                        if d > k // 2:
                            d -= k
                    row.append(d)
                rows.append(tuple(row))
            out.append(tuple(rows))
        return tuple(out)

    def is_tie(self, dim: int, offset: int) -> bool:
        """True when ``offset`` in ``dim`` is half an even ring: both directions minimal."""
        k = self.dims[dim]
        return self.is_ring(dim) and k % 2 == 0 and offset == k // 2

    def offsets(self, a: int, b: int) -> tuple[int, ...]:
        """Signed minimal offset per dimension from node a to node b (ties reported +k/2)."""
        ca, cb = self._coords[a], self._coords[b]
        return tuple(t[x][y] for t, x, y in zip(self.offset_table, ca, cb))

    def distance(self, a: int, b: int) -> int:
        """Minimal number of hops from a to b."""
        return sum(abs(d) for d in self.offsets(a, b))

    def ring_distance(self, dim: int, a: int, b: int, sign: int) -> int:
        """Hops from coordinate a to b moving only in direction ``sign`` along ``dim``.

        On a line the far way round does not exist; asking for it raises ``ValueError``.
        """
        k = self.dims[dim]
        d = ((b - a) if sign > 0 else (a - b))
        if self.is_ring(dim):
            return d % k
        if d < 0:
            raise ValueError(f"dimension {dim} is a line: cannot go {'+' if sign > 0 else '-'}"
                             f" from {a} to {b}")
        return d

    def minimal_ports(self, a: int, b: int, *, both_on_tie: bool = True) -> tuple[int, ...]:
        """Output ports of a that lie on some minimal path to b, in port order.

        With ``both_on_tie`` an offset of exactly k/2 on an even ring offers both directions;
        otherwise only the positive one.
        """
        ports = []
        for dim, d in enumerate(self.offsets(a, b)):
            if d > 0:
                ports.append(_port(dim, 1))
                if both_on_tie and self.is_tie(dim, d):
                    ports.append(_port(dim, -1))
            elif d < 0:
                ports.append(_port(dim, -1))
        return tuple(ports)

    def dor_port(self, a: int, b: int) -> int:
        """Dimension-order port from a towards b: first dimension with a non-zero offset, in its
        minimal direction (+ on a k/2 tie).  ``ABSENT`` when a == b."""
        for dim, d in enumerate(self.offsets(a, b)):
            if d:
                return _port(dim, d)
        return ABSENT

    # ------------------------------------------------------------------ routing lookup rows
    def _offset_matrix(self) -> np.ndarray:
        """Signed minimal offsets for every ordered pair: shape (N, N, n), int16."""
        coords = np.array(self._coords, dtype=np.int64).reshape(self.num_nodes, self.n)
        out = np.empty((self.num_nodes, self.num_nodes, self.n), dtype=np.int16)
        for dim in range(self.n):
            table = np.array(self.offset_table[dim], dtype=np.int16)
            c = coords[:, dim]
            out[:, :, dim] = table[c[:, None], c[None, :]]
        return out

    @cached_property
    def dor_rows(self) -> tuple[bytes, ...]:
        """``dor_rows[a][b]`` = :meth:`dor_port` (a, b), 255 when a == b; one ``bytes`` per node."""
        off = self._offset_matrix()
        nz = off != 0
        first = np.where(nz.any(axis=2), nz.argmax(axis=2), -1)
        sign = np.take_along_axis(off, np.maximum(first, 0)[:, :, None], axis=2)[:, :, 0]
        port = np.where(first < 0, 255, 2 * first + (sign < 0))
        return tuple(bytes(row) for row in port.astype(np.uint8))

    def minimal_mask_rows(self, both_on_tie: bool) -> tuple:
        """``rows[a][b]`` = bitmask of :meth:`minimal_ports` (a, b) (bit p for port p)."""
        key = "_mask_rows_tie" if both_on_tie else "_mask_rows"
        cached = self.__dict__.get(key)
        if cached is not None:
            return cached
        off = self._offset_matrix().astype(np.int64)
        mask = np.zeros(off.shape[:2], dtype=np.int64)
        for dim in range(self.n):
            d = off[:, :, dim]
            mask |= np.where(d > 0, 1 << (2 * dim), 0)
            mask |= np.where(d < 0, 1 << (2 * dim + 1), 0)
            if both_on_tie and self.is_ring(dim) and self.dims[dim] % 2 == 0:
                mask |= np.where(d == self.dims[dim] // 2, 1 << (2 * dim + 1), 0)
        if self.num_ports <= 8:
            rows = tuple(bytes(r) for r in mask.astype(np.uint8))
        else:
            from array import array
            rows = tuple(array("Q", r.tolist()) for r in mask)
        object.__setattr__(self, key, rows)
        return rows

    # ------------------------------------------------------------------ load normalisation
    def channel_load_factor(self, dim: int) -> float:
        """Uniform-traffic load on the busiest channel of ``dim`` per unit of per-node injection
        under minimal routing (SPEC §6): k/8 on an even ring, (k^2-1)/(8k) on an odd ring, k/4 on
        a line (so 1/2 for a size-2 dimension), 0 for a size-1 dimension."""
        k = self.dims[dim]
        if k == 1:
            return 0.0
        if not self.is_ring(dim):
            return k / 4
        return k / 8 if k % 2 == 0 else (k * k - 1) / (8 * k)

    @cached_property
    def max_channel_load_factor(self) -> float:
        """``max_i c_i``: what γ = 1 is normalised by.  Zero only for a single node."""
        return max(self.channel_load_factor(d) for d in range(self.n))

    def describe(self) -> str:
        shape = "x".join(str(k) for k in self.dims)
        lines = [d for d in range(self.n) if self.dims[d] > 2 and not self.wrap[d]]
        return f"torus {shape}" + (f" (lines in dims {lines})" if lines else "")


@dataclass(frozen=True)
class Graph:
    """An arbitrary connected graph of routers; every link is a pair of unidirectional channels.

    Port ``i`` of a node leads to its ``i``-th neighbour in ascending id order; ports beyond a
    node's degree are absent.  Used with table routing (Angara-style source routes or
    destination-based tables with virtual layers).

    Parameters
    ----------
    num_nodes : int
    edges : sequence of (u, v)
        Undirected links, no self-loops, no duplicates; the graph must be connected.

    Examples
    --------
    >>> g = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    >>> g.neighbor(0, 0), g.neighbor(0, 1), g.distance(0, 2)
    (1, 3, 2)
    """

    num_nodes: int
    edges: tuple[tuple[int, int], ...]

    kind = "graph"

    @classmethod
    def from_edges(cls, num_nodes: int, edges: Sequence[tuple[int, int]]) -> "Graph":
        norm = set()
        for i, (u, v) in enumerate(edges):
            u, v = int(u), int(v)
            if not (0 <= u < num_nodes and 0 <= v < num_nodes):
                raise ValueError(f"edge {i} ({u}, {v}) names a node outside 0..{num_nodes - 1}")
            if u == v:
                raise ValueError(f"edge {i} ({u}, {v}) is a self-loop")
            e = (min(u, v), max(u, v))
            if e in norm:
                raise ValueError(f"edge {i} ({u}, {v}) appears twice")
            norm.add(e)
        g = cls(int(num_nodes), tuple(sorted(norm)))
        if num_nodes > 1 and (g.distances < 0).any():
            raise ValueError("the graph is not connected")
        return g

    @classmethod
    def from_file(cls, path: str) -> "Graph":
        """Read an edge list: one ``u v`` pair per line, ``#`` starts a comment.  The node count
        is one more than the largest id."""
        edges = []
        with open(path) as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.replace(",", " ").split()
                if len(parts) != 2:
                    raise ValueError(f"{path}:{lineno}: expected 'u v', got {line!r}")
                try:
                    edges.append((int(parts[0]), int(parts[1])))
                except ValueError:
                    raise ValueError(f"{path}:{lineno}: node ids must be integers") from None
        if not edges:
            raise ValueError(f"{path}: no edges")
        return cls.from_edges(1 + max(max(e) for e in edges), edges)

    @classmethod
    def random_regular(cls, nodes: int, degree: int, seed: int) -> "Graph":
        """A connected random ``degree``-regular graph (networkx's generator); the first
        connected draw from seeds ``seed, seed + 1, ...`` (deterministic)."""
        import networkx as nx

        if nodes * degree % 2 or degree >= nodes or degree < 1:
            raise ValueError(f"no {degree}-regular graph on {nodes} nodes")
        for attempt in range(1000):
            g = nx.random_regular_graph(degree, nodes, seed=seed + attempt)
            if nx.is_connected(g):
                return cls.from_edges(nodes, list(g.edges()))
        raise ValueError(f"no connected {degree}-regular graph on {nodes} nodes found")

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

    def port_name(self, port: int) -> str:
        return f"p{port}"

    def channels(self) -> Iterator[tuple[int, int, int]]:
        for node, row in enumerate(self.adjacency):
            for port, v in enumerate(row):
                yield node, port, v

    @cached_property
    def num_channels(self) -> int:
        return 2 * len(self.edges)

    @cached_property
    def distances(self) -> np.ndarray:
        """All-pairs hop distances (BFS), -1 where unreachable."""
        n = self.num_nodes
        dist = np.full((n, n), -1, dtype=np.int32)
        adj = self.adjacency
        for s in range(n):
            row = dist[s]
            row[s] = 0
            frontier, d = [s], 0
            while frontier:
                d += 1
                nxt = []
                for u in frontier:
                    for v in adj[u]:
                        if row[v] < 0:
                            row[v] = d
                            nxt.append(v)
                frontier = nxt
        return dist

    def distance(self, a: int, b: int) -> int:
        return int(self.distances[a, b])

    @cached_property
    def max_channel_load_factor(self) -> float:
        """Busiest channel's load per unit of per-node uniform injection (destinations uniform
        over all nodes) under the minimal destination-based routing that picks, at each node,
        the lowest-numbered port on a shortest path.  What γ = 1 is normalised by."""
        n = self.num_nodes
        if n < 2:
            return 0.0
        dist = self.distances
        load: dict[tuple[int, int], int] = {}
        for s in range(n):
            for t in range(n):
                u = s
                while u != t:
                    v = next(w for w in self.adjacency[u] if dist[w, t] == dist[u, t] - 1)
                    load[(u, v)] = load.get((u, v), 0) + 1
                    u = v
        return max(load.values()) / n

    def describe(self) -> str:
        degs = sorted({len(a) for a in self.adjacency})
        return f"graph of {self.num_nodes} nodes, {len(self.edges)} links, degree {degs}"
