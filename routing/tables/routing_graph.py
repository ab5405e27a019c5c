"""The Angara routing graph (Mukosey, Semenov & Tretiakov, §3.1) as integer arrays.

A route of the Angara router is an optional *first step* (FS) in a positive direction, a
*direction-bit list* (directions in the order +X +Y +Z +K -X -Y -Z -K, never both signs of one
dimension) and an optional *last step* (LS) in a negative direction.  The routing graph turns
"is this port sequence a legal route" into "is this a path from ``begin(u)`` to ``end(v)``": each
node has the vertices

=====================  ==========================================================
local index            vertex
=====================  ==========================================================
``0``                  begin (injection)
``1 .. n``             FS_j: a first positive step in dimension j was just taken
``n+1 .. n+3^n-1``     dirbit_S: the direction-bit list so far uses the signs S
``n+3^n .. 2n+3^n-1``  LS_j: a last negative step in dimension j was just taken
``2n+3^n``             end (ejection)
=====================  ==========================================================

that is ``3^n + 2n + 1`` vertices per node (paper §3.1).  S is a vector in {0, +, -}^n, coded
``sum(s_j * 3**j)`` with s = 0 (unused), 1 (+), 2 (-).  Vertex ids are node-major:
``vertex = node * vertices_per_node + local``.  Ports are the topology's (``2*dim + s``, s = 0
for +); the direction order in ports is ``(0, 2, 4, ..., 1, 3, 5, ...)``.

Edges (rules 1-4 of §3.1, each edge labelled with the port it crosses, -1 for the edge into
``end``):

1. begin -> FS_j (positive port of j), begin -> dirbit_{D} (any port), begin -> end;
2. FS_l -> dirbit_{D} for every direction D after +l in the order, FS_l -> end;
3. dirbit_S -> dirbit_{S+D} for D not before the last direction of S (D equal to it continues
   along the ring), dirbit_S -> LS_D for a negative D after the last direction of S, and
   dirbit_S -> end;
4. LS_j -> end.

One interpretation is fixed here.  Rule 3 offers the LS step only where the direction-bit step
``S+D`` is forbidden (S already uses the opposite sign of D's dimension); where both exist they
lead to the same neighbour by the same port, and the paper's count "at most 2n edges" per
dirbit vertex holds only with this reading.  The deadlock-free augmentation (§3.2, see
:mod:`icsim.routing.tables.augment`) adds channel-specific edges FS_i -> dirbit_{D_j} and
dirbit_S (last direction D_i) -> LS_j for turns D_i -> D_j against the order.

Every legal route is a path (Theorem 1).  The :meth:`RoutingGraph.minimal` subgraph drops the
edges that only ever serve non-minimal routes or duplicate another path of the same route
(order-keeping FS -> dirbit and FS -> end, order-keeping dirbit -> LS): in it every *minimal*
route is exactly one path, so shortest-path counts are route counts.

Examples
--------
>>> from icsim.model.topology import Torus
>>> g = build_routing_graph(Torus((4, 4)))
>>> g.vertices_per_node, g.num_vertices
(14, 224)
>>> g.accepts(0, [0, 2])          # x+ then y+ from node 0 ends at node 5
5
>>> g.accepts(0, [2, 0]) is None  # y+ then x+ breaks the direction order
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from icsim.model.topology import Torus

# ----------------------------------------------------------------------------- edge kinds
BEGIN_DIRBIT, BEGIN_FS, BEGIN_END = 0, 1, 2
FS_DIRBIT, FS_END = 3, 4
DIRBIT_DIRBIT, DIRBIT_LS, DIRBIT_END = 5, 6, 7
LS_END = 8
AUG_FS, AUG_LS = 9, 10
EDGE_KINDS = ("begin-dirbit", "begin-fs", "begin-end", "fs-dirbit", "fs-end", "dirbit-dirbit",
              "dirbit-ls", "dirbit-end", "ls-end", "aug-fs", "aug-ls")
#: kinds absent from the minimal subgraph: they only serve non-minimal routes or give a second
#: path for a route that already has one (see the module docstring)
NON_MINIMAL_KINDS = (FS_DIRBIT, FS_END, DIRBIT_LS)


# ----------------------------------------------------------------------------- directions
def direction_order(n: int) -> tuple[int, ...]:
    """Ports in the Angara direction order +X +Y +Z +K -X -Y -Z -K.

    >>> direction_order(4)
    (0, 2, 4, 6, 1, 3, 5, 7)
    """
    return tuple(2 * j for j in range(n)) + tuple(2 * j + 1 for j in range(n))


def direction_rank(n: int) -> np.ndarray:
    """``rank[port]``: position of the port's direction in :func:`direction_order`."""
    rank = np.empty(2 * n, dtype=np.int64)
    rank[list(direction_order(n))] = np.arange(2 * n)
    return rank


def port_positive(port: int) -> bool:
    return port & 1 == 0


def dirbit_signs(code: int, n: int) -> tuple[int, ...]:
    """Per dimension 0 (unused), 1 (+) or 2 (-) of a direction-bit code."""
    return tuple((code // 3 ** j) % 3 for j in range(n))


def dirbit_code(signs: Sequence[int]) -> int:
    return sum(int(s) * 3 ** j for j, s in enumerate(signs))


def dirbit_last_rank(code: int, n: int) -> int:
    """Rank (in the direction order) of the last direction of a direction-bit list."""
    signs = dirbit_signs(code, n)
    neg = [j for j in range(n) if signs[j] == 2]
    if neg:
        return n + max(neg)
    return max(j for j in range(n) if signs[j] == 1)


def _port_sign_digit(port: int) -> int:
    return 1 if port_positive(port) else 2


# ----------------------------------------------------------------------------- the graph
@dataclass(frozen=True, eq=False)
class RoutingGraph:
    """Routing graph of a torus in compressed sparse row form.

    Attributes
    ----------
    topology : Torus
    indptr : int64 array, ``num_vertices + 1``
        Out-edges of vertex v are ``indptr[v]:indptr[v+1]``, in direction order of their port
        (the edge into ``end`` last).
    tail, head : int64 arrays
        Source and target vertex of each edge.
    port : int64 array
        Port the edge crosses at the tail's node; -1 for edges into ``end``.
    kind : int8 array
        One of the ``*_DIRBIT`` ... ``AUG_LS`` constants.
    turns : int64 array of shape (k, 4)
        The channel-dependency edges added by the augmentation, rows
        ``(node, port, next_node, next_port)``; empty for the plain §3.1 graph.
    """

    topology: Torus
    indptr: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    port: np.ndarray
    kind: np.ndarray
    turns: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int64))

    # ------------------------------------------------------------------ layout
    @property
    def n(self) -> int:
        return self.topology.n

    @property
    def vertices_per_node(self) -> int:
        return 3 ** self.n + 2 * self.n + 1

    @property
    def num_vertices(self) -> int:
        return len(self.indptr) - 1

    @property
    def num_edges(self) -> int:
        return len(self.head)

    @property
    def num_channels_dense(self) -> int:
        """Channel ids are ``node * num_ports + port``; this id (one past the last) stands for
        "no channel" (edges into ``end``)."""
        return self.topology.num_nodes * self.topology.num_ports

    def begin(self, node):
        return np.asarray(node) * self.vertices_per_node if not np.isscalar(node) \
            else int(node) * self.vertices_per_node

    def end(self, node):
        off = self.vertices_per_node - 1
        return np.asarray(node) * self.vertices_per_node + off if not np.isscalar(node) \
            else int(node) * self.vertices_per_node + off

    def fs(self, node: int, dim: int) -> int:
        return node * self.vertices_per_node + 1 + dim

    def dirbit(self, node: int, code: int) -> int:
        return node * self.vertices_per_node + self.n + code

    def ls(self, node: int, dim: int) -> int:
        return node * self.vertices_per_node + self.n + 3 ** self.n + dim

    def node_of(self, vertex):
        return vertex // self.vertices_per_node

    @cached_property
    def channel(self) -> np.ndarray:
        """Channel id (``node * num_ports + port``) of each edge; edges into ``end`` get
        :attr:`num_channels_dense`."""
        ch = self.node_of(self.tail) * self.topology.num_ports + self.port
        return np.where(self.port >= 0, ch, self.num_channels_dense)

    def vertex_name(self, v: int) -> str:
        """Human-readable name, e.g. ``'dirbit(x+,y-)@5'``."""
        node, loc = divmod(int(v), self.vertices_per_node)
        n, t = self.n, self.topology
        if loc == 0:
            return f"begin@{node}"
        if loc <= n:
            return f"fs({t.port_name(2 * (loc - 1))})@{node}"
        if loc < n + 3 ** n:
            signs = dirbit_signs(loc - n, n)
            dirs = [t.port_name(p) for p in direction_order(n)
                    if signs[p >> 1] == _port_sign_digit(p)]
            return f"dirbit({','.join(dirs)})@{node}"
        if loc < 2 * n + 3 ** n:
            return f"ls({t.port_name(2 * (loc - n - 3 ** n) + 1)})@{node}"
        return f"end@{node}"

    # ------------------------------------------------------------------ views
    def minimal(self) -> "RoutingGraph":
        """The subgraph in which every minimal route is exactly one begin -> end path.

        Drops the order-keeping FS -> dirbit and FS -> end edges (a route through them is also
        a plain direction-bit route, or goes back along a dimension) and the order-keeping
        dirbit -> LS edges (they exist only where the route already went the other way along
        the LS dimension, so never on a minimal route).
        """
        keep = ~np.isin(self.kind, NON_MINIMAL_KINDS)
        return _from_edges(self.topology, self.tail[keep], self.head[keep], self.port[keep],
                           self.kind[keep], self.turns)

    def out_edges(self, v: int) -> range:
        return range(int(self.indptr[v]), int(self.indptr[v + 1]))

    def accepts(self, src: int, ports: Iterable[int]) -> int | None:
        """Node at which the port sequence ends if it is a begin(src) -> end path, else None."""
        current = {self.begin(src)}
        for p in ports:
            nxt = set()
            for v in current:
                for e in self.out_edges(v):
                    if self.port[e] == p:
                        nxt.add(int(self.head[e]))
            if not nxt:
                return None
            current = nxt
        for v in current:
            for e in self.out_edges(v):
                if self.port[e] < 0:
                    return int(self.node_of(self.head[e]))
        return None


def _from_edges(topology, tail, head, port, kind, turns) -> RoutingGraph:
    n = topology.n
    nv = topology.num_nodes * (3 ** n + 2 * n + 1)
    rank = np.append(direction_rank(n), 2 * n)          # index -1 -> the end edge, sorted last
    order = np.lexsort((kind, rank[port], tail))
    tail, head, port, kind = tail[order], head[order], port[order], kind[order]
    indptr = np.zeros(nv + 1, dtype=np.int64)
    np.cumsum(np.bincount(tail, minlength=nv), out=indptr[1:])
    return RoutingGraph(topology, indptr, tail, head, port, kind.astype(np.int8),
                        np.asarray(turns, dtype=np.int64).reshape(-1, 4))


def local_rules(n: int) -> list[tuple[int, int, int, int]]:
    """The node-independent edges of rules 1-4 as ``(local_from, port, local_to, kind)``;
    ``port`` is -1 and ``local_to`` the end vertex for edges into ``end``."""
    fs = lambda j: 1 + j                                  # noqa: E731
    db = lambda code: n + code                            # noqa: E731
    ls = lambda j: n + 3 ** n + j                         # noqa: E731
    end = 2 * n + 3 ** n
    rank = direction_rank(n)
    rules = []
    for p in range(2 * n):                                               # rule 1
        rules.append((0, p, db(_port_sign_digit(p) * 3 ** (p >> 1)), BEGIN_DIRBIT))
        if port_positive(p):
            rules.append((0, p, fs(p >> 1), BEGIN_FS))
    rules.append((0, -1, end, BEGIN_END))
    for j in range(n):                                                   # rule 2
        for p in range(2 * n):
            if rank[p] > j:
                rules.append((fs(j), p, db(_port_sign_digit(p) * 3 ** (p >> 1)), FS_DIRBIT))
        rules.append((fs(j), -1, end, FS_END))
    for code in range(1, 3 ** n):                                        # rule 3
        signs = dirbit_signs(code, n)
        last = dirbit_last_rank(code, n)
        for p in range(2 * n):
            if rank[p] < last:
                continue
            d = p >> 1
            if rank[p] == last:
                rules.append((db(code), p, db(code), DIRBIT_DIRBIT))
            elif signs[d] == 0:
                new = code + _port_sign_digit(p) * 3 ** d
                rules.append((db(code), p, db(new), DIRBIT_DIRBIT))
            elif not port_positive(p):
                rules.append((db(code), p, ls(d), DIRBIT_LS))
        rules.append((db(code), -1, end, DIRBIT_END))
    for j in range(n):                                                   # rule 4
        rules.append((ls(j), -1, end, LS_END))
    return rules


def build_routing_graph(topology: Torus, turns: np.ndarray | None = None) -> RoutingGraph:
    """Build the routing graph of ``topology`` (§3.1), plus the edges that the extra
    channel-dependency ``turns`` allow (§3.2).

    Parameters
    ----------
    topology : Torus
        Any number of dimensions and sizes; absent ports (size-1 and size-2 dimensions, mesh
        edges) simply have no edges.
    turns : array of shape (k, 4), optional
        Rows ``(node, port, next_node, next_port)``: dependencies from channel
        ``(node, port)`` to ``(next_node, next_port)`` against the direction order that may be
        used, both ports positive (a first step) or both negative (a last step).  Normally the
        output of :func:`routing.tables.augment.augmenting_turns`.

    Returns
    -------
    RoutingGraph

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> g = build_routing_graph(Torus((5, 5, 5)))
    >>> g.num_vertices == 125 * (27 + 6 + 1)
    True
    """
    topology.require({"coordinates"}, "the Angara routing graph")
    n = topology.n
    V = 3 ** n + 2 * n + 1
    N = topology.num_nodes
    nbr = np.asarray(topology.neighbor_table, dtype=np.int64).reshape(N, 2 * n)
    nodes = np.arange(N, dtype=np.int64)
    rules = local_rules(n)
    tails, heads, ports, kinds = [], [], [], []
    for p in range(2 * n):
        rs = np.array([(a, b, k) for a, q, b, k in rules if q == p], dtype=np.int64)
        have = nodes[nbr[:, p] >= 0]
        if not len(rs) or not len(have):
            continue
        tails.append((have[:, None] * V + rs[None, :, 0]).ravel())
        heads.append((nbr[have, p][:, None] * V + rs[None, :, 1]).ravel())
        ports.append(np.full(len(have) * len(rs), p, dtype=np.int64))
        kinds.append(np.tile(rs[:, 2], len(have)))
    end_rules = np.array([(a, k) for a, q, b, k in rules if q < 0], dtype=np.int64)
    tails.append((nodes[:, None] * V + end_rules[None, :, 0]).ravel())
    heads.append(np.repeat(nodes * V + V - 1, len(end_rules)))
    ports.append(np.full(N * len(end_rules), -1, dtype=np.int64))
    kinds.append(np.tile(end_rules[:, 1], N))

    turns = np.zeros((0, 4), dtype=np.int64) if turns is None else \
        np.asarray(turns, dtype=np.int64).reshape(-1, 4)
    if len(turns):
        t, a = _turn_edges(topology, turns)
        for lst, arr in zip((tails, heads, ports, kinds), (t, a[0], a[1], a[2])):
            lst.append(arr)
    return _from_edges(topology, np.concatenate(tails), np.concatenate(heads),
                       np.concatenate(ports), np.concatenate(kinds), turns)


def _turn_edges(topology: Torus, turns: np.ndarray):
    """Routing-graph edges enabled by channel-dependency turns (§3.2, last paragraph)."""
    n = topology.n
    V = 3 ** n + 2 * n + 1
    rank = direction_rank(n)
    nbr = np.asarray(topology.neighbor_table, dtype=np.int64)
    codes_by_last: dict[int, list[int]] = {}
    for code in range(1, 3 ** n):
        codes_by_last.setdefault(dirbit_last_rank(code, n), []).append(code)
    tails, heads, ports, kinds = [], [], [], []
    for u, p, w, q in turns.tolist():
        if nbr[u, p] != w or nbr[w, q] < 0 or rank[q] >= rank[p] \
                or port_positive(p) != port_positive(q):
            raise ValueError(f"turn {(u, p, w, q)} is not a same-sign turn against the "
                             f"direction order between existing channels")
        x = nbr[w, q]
        if port_positive(p):          # first step p, then the list starts with q
            tails.append(w * V + 1 + (p >> 1))
            heads.append(x * V + n + 3 ** (q >> 1))
            ports.append(q)
            kinds.append(AUG_FS)
        else:                         # the list ends with p, then the last step q
            for code in codes_by_last[int(rank[p])]:
                tails.append(w * V + n + code)
                heads.append(x * V + n + 3 ** n + (q >> 1))
                ports.append(q)
                kinds.append(AUG_LS)
    as_arr = lambda x: np.asarray(x, dtype=np.int64)      # noqa: E731
    return as_arr(tails), (as_arr(heads), as_arr(ports), as_arr(kinds))


# ----------------------------------------------------------------------------- searches
def expand_edges(indptr: np.ndarray, front: np.ndarray) -> np.ndarray:
    """Ids of all out-edges of the vertices in ``front``, vertex by vertex in front order."""
    starts = indptr[front]
    counts = indptr[front + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return shift + np.arange(total, dtype=np.int64)


def walk_back(parent_edge: np.ndarray, tail: np.ndarray, start: np.ndarray, stop: int
              ) -> np.ndarray:
    """The edges of a search tree's paths from ``stop`` (the root) to every ``start`` vertex,
    all walked back together: an int array of one row per start vertex in root-to-leaf order,
    shorter paths padded with -1 at the front.  ``parent_edge[v]`` is the tree edge into ``v``
    and ``tail[e]`` the vertex it leaves.

    >>> # tree edges 0: 0 -> 1, 1: 1 -> 2, 2: 0 -> 3
    >>> walk_back(np.array([-1, 0, 1, 2]), np.array([0, 1, 0]), np.array([2, 3, 1]), 0).tolist()
    [[0, 1], [-1, 2], [-1, 0]]
    """
    v = np.asarray(start, dtype=np.int64)
    steps = []
    while (live := v != stop).any():
        e = np.where(live, parent_edge[v], -1)
        steps.append(e)
        v = np.where(live, tail[e], stop)
    if not steps:
        return np.zeros((len(v), 0), dtype=np.int64)
    return np.stack(steps[::-1], axis=1)


@dataclass(frozen=True, eq=False)
class SourceDag:
    """The minimal paths from ``begin(src)`` to the ``end`` vertices of ``targets``.

    The shortest-path DAG of a breadth-first search, pruned to the vertices that lie on a
    shortest path to some target.  Vertices are renumbered ``0 .. len(vertices)-1`` (begin is
    0); edges are grouped by the level of their head (``level_ptr``) and, inside a level,
    sorted by head and then by the discovery order of their tail in a first-in first-out
    breadth-first search (out-edges in direction order), with ``seg_start``/``seg_head``
    marking the runs of one head.

    Attributes
    ----------
    count : int64 array over targets
        Number of shortest begin -> end paths; on :meth:`RoutingGraph.minimal` this is the
        number of minimal Angara routes.
    hops : int array over targets
        Length of those routes (the torus distance).
    """

    src: int
    targets: np.ndarray
    count: np.ndarray
    hops: np.ndarray
    end_local: np.ndarray
    vertices: np.ndarray
    e_tail: np.ndarray
    e_head: np.ndarray
    e_chan: np.ndarray
    e_port: np.ndarray
    level_ptr: np.ndarray
    seg_start: tuple
    seg_head: tuple

    def paths(self, parent_edge: np.ndarray, which: Sequence[int]
              ) -> list[tuple[tuple[int, ...], list[int]]]:
        """Follow ``parent_edge`` back from the ends of targets number ``which``: for each, the
        ports of the route and its channel ids.

        Many targets walk back together as arrays (one step of every walk per numpy
        operation); a few, one at a time over Python lists, which costs less than numpy's
        per-call overhead."""
        if len(which) >= 16:
            return self._paths_together(parent_edge, which)
        out = []
        e_tail, e_port, e_chan, end_local = self._lists
        parent = parent_edge.item                       # a Python int, without a numpy scalar
        for i in which:
            v = end_local[i]
            ports, chans = [], []
            while v:
                e = parent(v)
                p = e_port[e]
                if p >= 0:
                    ports.append(p)
                    chans.append(e_chan[e])
                v = e_tail[e]
            ports.reverse()
            chans.reverse()
            out.append((tuple(ports), chans))
        return out

    def _paths_together(self, parent_edge: np.ndarray, which: Sequence[int]
                        ) -> list[tuple[tuple[int, ...], list[int]]]:
        which = np.asarray(which, dtype=np.int64)
        # a route of k hops is the k columns before the last (the edge into end, no link)
        edges = walk_back(parent_edge, self.e_tail, self.end_local[which], 0)
        last = edges.shape[1] - 1
        ports, chans = self.e_port[edges].tolist(), self.e_chan[edges].tolist()
        return [(tuple(p[last - k:last]), c[last - k:last])
                for p, c, k in zip(ports, chans, self.hops[which].tolist())]

    @cached_property
    def levels(self) -> list[tuple[np.ndarray, ...]]:
        """Per level: the edges' tails, channels and ids, and the runs of one head
        (``seg_start``, ``seg_head``), sliced once for :func:`dag_shortest_paths`."""
        ptr = self.level_ptr.tolist()
        return [(self.e_tail[a:b], self.e_chan[a:b], np.arange(a, b, dtype=np.int64),
                 self.seg_start[lv], self.seg_head[lv])
                for lv, (a, b) in enumerate(zip(ptr[:-1], ptr[1:]))]

    @cached_property
    def _lists(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """The edge arrays and ``end_local`` as Python lists (fast to index one at a time)."""
        return (self.e_tail.tolist(), self.e_port.tolist(), self.e_chan.tolist(),
                self.end_local.tolist())

    def unique_parent(self) -> np.ndarray:
        """Some in-edge of each vertex (the first); along a target with ``count == 1`` this is
        its only route."""
        par = np.zeros(len(self.vertices), dtype=np.int64)
        heads, first = np.unique(self.e_head, return_index=True)
        par[heads] = first
        return par

    def enumerate_routes(self, i: int, limit: int | None = None) -> list[tuple[int, ...]]:
        """All routes (port tuples) to target number ``i``, in a fixed order."""
        ins: dict[int, list[int]] = {}
        for e, h in enumerate(self.e_head.tolist()):
            ins.setdefault(h, []).append(e)
        out: list[tuple[int, ...]] = []

        def walk(v: int, suffix: list[int]) -> None:
            if limit is not None and len(out) >= limit:
                return
            if v == 0:
                out.append(tuple(reversed(suffix)))
                return
            for e in ins.get(v, ()):
                p = int(self.e_port[e])
                if p >= 0:
                    suffix.append(p)
                walk(int(self.e_tail[e]), suffix)
                if p >= 0:
                    suffix.pop()

        walk(int(self.end_local[i]), [])
        return out


def source_dag(graph: RoutingGraph, src: int, targets: Sequence[int]) -> SourceDag:
    """Breadth-first search from ``begin(src)``: the minimal-path DAG to the targets' ends,
    with path counts (the first stage of Algorithm 3).

    Parameters
    ----------
    graph : RoutingGraph
        Usually ``graph.minimal()``, so that path counts are route counts.
    src : int
    targets : sequence of int
        Destination nodes, ``src`` excluded.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> g = build_routing_graph(Torus((4, 4))).minimal()
    >>> dag = source_dag(g, 0, [2, 5, 10])
    >>> dag.count.tolist(), dag.hops.tolist()     # x offset 2 is half the ring: two routes
    ([2, 1, 4], [2, 2, 4])
    """
    targets = np.asarray(targets, dtype=np.int64)
    V = graph.num_vertices
    level = np.full(V, -1, dtype=np.int64)
    count = np.zeros(V, dtype=np.int64)
    b = graph.begin(src)
    ends = graph.end(targets)
    level[b] = 0
    count[b] = 1
    rank = np.zeros(V, dtype=np.int64)        # discovery order of a queue-ordered BFS
    front = np.array([b], dtype=np.int64)
    by_level: list[np.ndarray] = []
    todo = len(targets)
    lv, seen = 0, 1
    while front.size and todo > 0:
        e = expand_edges(graph.indptr, front)
        e = e[level[graph.head[e]] < 0]
        if not e.size:
            break
        h = graph.head[e]
        lv += 1
        level[h] = lv
        np.add.at(count, h, count[graph.tail[e]])
        by_level.append(e)
        _, first = np.unique(h, return_index=True)
        front = h[np.sort(first)]
        rank[front] = np.arange(seen, seen + len(front))
        seen += len(front)
        todo -= int(np.count_nonzero(level[ends] == lv))
    if (level[ends] < 0).any():
        raise ValueError(f"no route from node {src} to node(s) "
                         f"{targets[level[ends] < 0].tolist()}")
    useful = np.zeros(V, dtype=bool)
    useful[ends] = True
    kept = []
    for e in reversed(by_level):
        e = e[useful[graph.head[e]]]
        useful[graph.tail[e]] = True
        kept.append(e)
    kept.reverse()
    verts = np.flatnonzero(useful)                    # sorted; begin(src) is the smallest
    verts = np.concatenate(([b], verts[verts != b]))
    local = np.full(V, -1, dtype=np.int64)
    local[verts] = np.arange(len(verts))
    e_all, ptr, seg_start, seg_head = [], [0], [], []
    for e in kept:
        h = local[graph.head[e]]
        order = np.lexsort((rank[graph.tail[e]], h))
        e, h = e[order], h[order]
        first = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
        seg_start.append(first)
        seg_head.append(h[first])
        e_all.append(e)
        ptr.append(ptr[-1] + len(e))
    e_all = np.concatenate(e_all) if e_all else np.zeros(0, dtype=np.int64)
    return SourceDag(
        src=int(src), targets=targets, count=count[ends], hops=level[ends] - 1,
        end_local=local[ends], vertices=verts,
        e_tail=local[graph.tail[e_all]], e_head=local[graph.head[e_all]],
        e_chan=graph.channel[e_all], e_port=graph.port[e_all],
        level_ptr=np.asarray(ptr, dtype=np.int64), seg_start=tuple(seg_start),
        seg_head=tuple(seg_head))


def dag_shortest_paths(dag: SourceDag, weights: np.ndarray, max_level: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 4 (BFS with relaxation) on a source DAG: distance of every DAG vertex and the
    in-edge it was last relaxed through.

    ``weights[channel]`` is the edge weight (the last entry, "no channel", must be 0).  All
    paths to one vertex of the DAG have the same number of hops, so relaxing level by level
    settles each level for good, exactly as the paper's |N|^2 initial weight argues.  Among
    equally light in-edges the one whose tail was discovered first wins, as with the paper's
    strict ``<`` over a first-in first-out queue.
    """
    nv = len(dag.vertices)
    m = max(len(dag.e_head), 1)
    dist = np.zeros(nv, dtype=np.int64)
    parent = np.zeros(nv, dtype=np.int64)
    levels = dag.levels if max_level is None else dag.levels[:max_level]
    for tails, chans, edge_ids, seg_start, heads in levels:
        # the lightest in-edge of every head, ties to the lowest edge id: one reduction
        key = np.minimum.reduceat((dist[tails] + weights[chans]) * m + edge_ids, seg_start)
        dist[heads], parent[heads] = np.divmod(key, m)
    return dist, parent
