"""k-ary n-cubes: tori and meshes of any dimension and mixed sizes.

Ports
-----
On a torus of ``n`` dimensions a router has ``2n`` direction ports, numbered as in the OutFlank
reference simulator: ``port = 2*dim + s`` with ``s = 0`` for the positive and ``s = 1`` for the
negative direction (``0 = x+, 1 = x-, 2 = y+, ...``).  A port that leads nowhere (a size-1
dimension, the edge of a mesh, the unused direction of a size-2 dimension) is *absent*:
``neighbor(node, port) == -1``.

A torus provides the ``coordinates`` capability (:mod:`icsim.model.topology.base`), ``offsets``
when nothing has failed, and ``rings`` when every dimension is a ring of at least 3 nodes.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from icsim.model.topology.base import ABSENT, NO_PORT, Topology


def _port(dim: int, sign: int) -> int:
    return 2 * dim + (0 if sign > 0 else 1)


def is_ring(k: int, wrap: bool) -> bool:
    """Whether a dimension of ``k`` nodes closes into a ring: it wraps and has at least 3."""
    return wrap and k >= 3


def dimension_load_factor(k: int, wrap: bool = True) -> float:
    """Uniform-traffic load on the busiest channel of a dimension of ``k`` nodes per unit of
    per-node injection under minimal routing (docs/model.md §6): k/8 on an even ring,
    (k^2-1)/(8k) on an odd ring, k/4 on a line (so 1/2 for a size-2 dimension), 0 for a size-1
    dimension.

    >>> dimension_load_factor(8), dimension_load_factor(3), dimension_load_factor(2)
    (1.0, 0.3333333333333333, 0.5)
    """
    if k == 1:
        return 0.0
    if not is_ring(k, wrap):
        return k / 4
    return k / 8 if k % 2 == 0 else (k * k - 1) / (8 * k)


def torus_load_factor(dims: Sequence[int], wrap: Sequence[bool] | None = None) -> float:
    """``max_i c_i`` of a torus of ``dims`` (every dimension a ring unless ``wrap`` says
    otherwise): what γ = 1 is normalised by, known before the torus is built.  Zero only for a
    single node.

    >>> torus_load_factor((16, 16, 16)), torus_load_factor((3, 2), (True, False))
    (2.0, 0.5)
    """
    wrap = wrap or (True,) * len(dims)
    return max(dimension_load_factor(k, w) for k, w in zip(dims, wrap))


@dataclass(frozen=True)
class Torus(Topology):
    """A k-ary n-cube of any n and mixed sizes; each dimension a ring or a line (mesh).

    Node ids run with the first dimension fastest: ``id = x0 + k0*x1 + k0*k1*x2 + ...``.
    A dimension of size 2 is always a mesh link (one channel each way between its two nodes,
    as on the Angara machines); a size-1 dimension has no links.  Memory is O(N * ports):
    coordinates and neighbours per node, minimal ports by coordinate difference
    (:meth:`relative`), nothing per pair of nodes.

    Parameters
    ----------
    dims : sequence of int
        Size of each dimension, every one >= 1.
    wrap : sequence of bool, optional
        Per dimension, whether it wraps around (a ring) or is a line (mesh).  Default all True.
    failed_links : iterable of (node, port), optional
        Links out of service.  A link is both channels between two neighbours: naming either
        direction fails both.  Their ports are absent (:meth:`neighbor` gives ``ABSENT``).
    failed_nodes : iterable of int, optional
        Nodes out of service: every link of theirs fails, and they neither send nor receive
        (:attr:`alive_nodes` leaves them out).

    The coordinate questions (:meth:`offsets`, :meth:`distance`, :meth:`minimal_ports`, the
    relative-offset tables) describe the healthy torus; on a torus with failures the hop
    distances over the links that work are :meth:`hop_distances`.

    Examples
    --------
    >>> t = Torus((4, 4))
    >>> t.coords(5), t.node((1, 1)), t.distance(0, 10)
    ((1, 1), 5, 4)
    >>> [t.neighbor(0, p) for p in range(4)]   # x+, x-, y+, y-
    [1, 3, 4, 12]
    >>> f = Torus((4, 4), failed_links=[(0, 0)], failed_nodes=[10])
    >>> [f.neighbor(0, p) for p in range(4)], f.neighbor(1, 1), f.neighbor(9, 0)
    ([-1, 3, 4, 12], -1, -1)
    >>> f.num_channels, len(f.alive_nodes), int(f.hop_distances(0)[1])
    (54, 15, 3)
    """

    dims: tuple[int, ...]
    wrap: tuple[bool, ...] = field(default=())
    failed_links: frozenset[tuple[int, int]] = field(default=frozenset())
    failed_nodes: frozenset[int] = field(default=frozenset())

    def __post_init__(self) -> None:
        dims = tuple(int(k) for k in self.dims)
        if not dims or any(k < 1 for k in dims):
            raise ValueError(f"every dimension size must be >= 1, got {list(self.dims)}")
        wrap = tuple(bool(w) for w in self.wrap) if self.wrap else (True,) * len(dims)
        if len(wrap) != len(dims):
            raise ValueError(f"wrap has {len(wrap)} entries for {len(dims)} dimensions")
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "wrap", wrap)
        n_nodes = int(np.prod(dims, dtype=np.int64))
        dead = frozenset(int(v) for v in self.failed_nodes)
        for v in sorted(dead):
            if not 0 <= v < n_nodes:
                raise ValueError(f"failed node {v} is not a node id (0..{n_nodes - 1})")
        object.__setattr__(self, "failed_nodes", dead)
        links = set()
        for item in self.failed_links:
            u, port = (int(x) for x in item)
            if not 0 <= u < n_nodes or not 0 <= port < 2 * len(dims):
                raise ValueError(f"failed link ({u}, {port}): no node {u} or port {port}")
            v = self._healthy_neighbor(u, port)
            if v == ABSENT:
                raise ValueError(f"failed link ({u}, {self.port_name(port)}): node {u} has no "
                                 f"link there")
            links.add((u, port))
            links.add((v, port ^ 1))          # the reverse channel of the same link
        object.__setattr__(self, "failed_links", frozenset(links))

    # ------------------------------------------------------------------ sizes and ids
    @property
    def n(self) -> int:
        """Number of dimensions (size-1 dimensions included)."""
        return len(self.dims)

    @cached_property
    def num_nodes(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64))

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
    def coord_array(self) -> np.ndarray:
        """Coordinates of every node, shape (N, n)."""
        ids = np.arange(self.num_nodes, dtype=np.int64)
        return np.stack([(ids // s) % k for s, k in zip(self.strides, self.dims)], axis=1)

    @cached_property
    def _coords(self) -> tuple[tuple[int, ...], ...]:
        return tuple(map(tuple, self.coord_array.tolist()))

    def coords(self, node: int) -> tuple[int, ...]:
        return self._coords[node]

    def node(self, coords: Sequence[int]) -> int:
        return sum((int(c) % k) * s for c, k, s in zip(coords, self.dims, self.strides))

    def is_ring(self, dim: int) -> bool:
        """True when dimension ``dim`` closes into a ring (wraps and has at least 3 nodes)."""
        return is_ring(self.dims[dim], self.wrap[dim])

    # ------------------------------------------------------------------ failures
    def _healthy_neighbor(self, node: int, port: int) -> int:
        dim, k = port >> 1, self.dims[port >> 1]
        c = (node // self.strides[dim]) % k
        x = c + (1 if port & 1 == 0 else -1)
        if k == 1 or (not self.is_ring(dim) and not 0 <= x < k):
            return ABSENT
        return node + ((x % k) - c) * self.strides[dim]

    # ------------------------------------------------------------------ links
    @cached_property
    def neighbor_array(self) -> np.ndarray:
        """``neighbor_array[node, port]``: the node a port leads to, ``ABSENT`` (-1) where it
        leads nowhere (no link, or a failed one); int64, shape (N, 2n)."""
        c = self.coord_array
        ids = np.arange(self.num_nodes, dtype=np.int64)
        out = np.full((self.num_nodes, self.num_ports), ABSENT, dtype=np.int64)
        for dim, k in enumerate(self.dims):
            if k == 1:
                continue
            for s, sign in enumerate((1, -1)):
                x = c[:, dim] + sign
                ok = (np.ones_like(x, dtype=bool) if self.is_ring(dim)
                      else (x >= 0) & (x < k))
                out[:, 2 * dim + s] = np.where(ok, ids + ((x % k) - c[:, dim])
                                               * self.strides[dim], ABSENT)
        for u, port in self.failed_links:
            out[u, port] = ABSENT
        if self.failed_nodes:
            dead = sorted(self.failed_nodes)
            out[dead, :] = ABSENT
            out[np.isin(out, dead)] = ABSENT
        out.setflags(write=False)
        return out

    @cached_property
    def _neighbors(self) -> tuple[tuple[int, ...], ...]:
        return tuple(map(tuple, self.neighbor_array.tolist()))

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

    def port_number(self, name: str) -> int:
        """The port a name such as ``"x+"``, ``"w-"`` or ``"d15+"`` stands for (:meth:`port_name`).

        >>> Torus((4, 4, 4)).port_number("z-")
        5
        """
        names = {self.port_name(p): p for p in range(self.num_ports)}
        if name not in names:
            raise ValueError(f"no port {name!r} on a {self.n}-dimensional torus "
                             f"(ports {', '.join(names)})")
        return names[name]

    def link_port(self, u: int, v: int) -> int:
        """The port of u whose link (in a healthy torus) leads to its neighbour v."""
        for port in range(self.num_ports):
            if self._healthy_neighbor(u, port) == v:
                return port
        raise ValueError(f"nodes {u} and {v} are not neighbours")

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

    def distance_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, second, table)`` (:meth:`Topology.distance_tables`) by the coordinates'
        difference: ``table`` by relative index (``prod 2 k_d`` entries), ``first`` and
        ``second`` the nodes' relative codes (failed links are not looked at, as
        :meth:`distances_between`).

        >>> first, second, table = Torus((4, 4)).distance_tables()
        >>> int(table[first[0] + second[5]]), int(table[first[0] + second[10]]), len(table)
        (2, 4, 64)
        """
        codes = np.asarray(self.relative_codes, dtype=np.int64)
        table = np.abs(self.relative_offsets()).sum(axis=1)
        return self.relative_base - codes, codes, table.astype(np.int16)

    def distances_between(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """:meth:`distance` of every pair ``src[i] -> dst[i]`` (vectorised).

        >>> Torus((4, 4)).distances_between(np.array([0, 0]), np.array([10, 3])).tolist()
        [4, 1]
        """
        c = self.coord_array
        out = np.zeros(len(src), dtype=np.int64)
        for dim, k in enumerate(self.dims):
            d = np.abs(c[dst, dim] - c[src, dim])
            if self.is_ring(dim):
                d = np.minimum(d, k - d)
            out += d
        return out

    def reverse_ports(self) -> np.ndarray:
        """``[node, port]``: the port of the neighbour whose channel leads back (-1 where the
        port leads nowhere).  On a torus the reverse of + is − in the same dimension."""
        nbr = self.neighbor_array
        back = np.broadcast_to(np.arange(self.num_ports) ^ 1, nbr.shape)
        return np.where(nbr >= 0, back, -1)

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

    # ------------------------------------------------------------------ relative-offset tables
    # A torus is translation-invariant: the minimal ports from a to b depend only on the
    # coordinate differences c_b - c_a.  Each difference lies in (-k_d, k_d), so
    # ``relative(a, b) = code[b] - code[a] + base`` with ``code = sum_d c_d * M_d`` and
    # ``M_d = prod_{e < d} 2 k_e`` indexes a table of ``prod_d 2 k_d = 2^n N`` entries: memory
    # O(N), one subtraction and one index per lookup (no N x N matrix).
    @cached_property
    def _relative_radix(self) -> tuple[int, ...]:
        radix, m = [], 1
        for k in self.dims:
            radix.append(m)
            m *= 2 * k
        return tuple(radix)

    @cached_property
    def relative_codes(self) -> tuple[int, ...]:
        """Per node, ``sum_d c_d * M_d`` (see :meth:`relative`)."""
        c = self.coord_array
        return tuple(int(x) for x in c @ np.asarray(self._relative_radix, dtype=np.int64))

    @cached_property
    def relative_base(self) -> int:
        return sum(k * m for k, m in zip(self.dims, self._relative_radix))

    @cached_property
    def relative_size(self) -> int:
        """Length of the relative-offset tables: ``prod_d 2 k_d``."""
        return int(np.prod([2 * k for k in self.dims], dtype=np.int64))

    def relative(self, a: int, b: int) -> int:
        """Index of the coordinate difference b - a in the relative-offset tables.

        >>> t = Torus((4, 4))
        >>> t.relative(0, 5) == t.relative(10, 15), t.relative(0, 5) == t.relative(0, 6)
        (True, False)
        """
        codes = self.relative_codes
        return codes[b] - codes[a] + self.relative_base

    def relative_offsets(self) -> np.ndarray:
        """The signed minimal offset per dimension of every relative index (what an
        ``"offset"`` table of a routing program is indexed by): shape ``(relative_size, n)``,
        ties reported +k/2; read-only, made once.

        >>> t = Torus((4, 4))
        >>> t.relative_offsets()[t.relative(0, 7)].tolist()      # 7 = (3, 1): x-1, y+1
        [-1, 1]
        """
        cached = self.__dict__.get("_offsets_by_relative")
        if cached is None:
            cached = self._relative_offsets()
            cached.setflags(write=False)
            object.__setattr__(self, "_offsets_by_relative", cached)
        return cached

    def _relative_offsets(self) -> np.ndarray:
        """Signed minimal offset per dimension for every relative index: (relative_size, n)."""
        out = np.zeros((self.relative_size, self.n), dtype=np.int32)
        idx = np.arange(self.relative_size, dtype=np.int64)
        for dim, (k, m) in enumerate(zip(self.dims, self._relative_radix)):
            diff = (idx // m) % (2 * k) - k              # c_b - c_a, in (-k, k) where reachable
            if self.is_ring(dim):
                d = diff % k
                d = np.where(d > k // 2, d - k, d)
            else:
                d = diff
            out[:, dim] = d
        return out

    @cached_property
    def dor_port_table(self) -> bytes:
        """``dor_port_table[relative(a, b)]`` = :meth:`dor_port` (a, b); :data:`NO_PORT` when
        a == b.

        >>> t = Torus((4, 4))
        >>> ports = [t.dor_port_table[t.relative(0, b)] for b in (0, 1, 4, 5, 3)]
        >>> ports == [NO_PORT, 0, 2, 0, 1]
        True
        """
        off = self._relative_offsets()
        nz = off != 0
        first = np.where(nz.any(axis=1), nz.argmax(axis=1), -1)
        sign = off[np.arange(len(off)), np.maximum(first, 0)]
        port = np.where(first < 0, NO_PORT, 2 * first + (sign < 0))
        return bytes(port.astype(np.uint8))

    def minimal_mask_table(self, both_on_tie: bool):
        """``table[relative(a, b)]`` = bitmask of :meth:`minimal_ports` (a, b) (bit p for port
        p): ``bytes`` up to 8 ports, else an ``array('Q')``."""
        key = "_mask_table_tie" if both_on_tie else "_mask_table"
        cached = self.__dict__.get(key)
        if cached is not None:
            return cached
        off = self._relative_offsets().astype(np.int64)
        mask = np.zeros(len(off), dtype=np.int64)
        for dim in range(self.n):
            d = off[:, dim]
            mask |= np.where(d > 0, 1 << (2 * dim), 0)
            mask |= np.where(d < 0, 1 << (2 * dim + 1), 0)
            if both_on_tie and self.is_ring(dim) and self.dims[dim] % 2 == 0:
                mask |= np.where(d == self.dims[dim] // 2, 1 << (2 * dim + 1), 0)
        if self.num_ports <= 8:
            table = bytes(mask.astype(np.uint8))
        else:
            table = array("Q", mask.tolist())
        object.__setattr__(self, key, table)
        return table

    # ------------------------------------------------------------------ load normalisation
    def channel_load_factor(self, dim: int) -> float:
        """Uniform-traffic load on the busiest channel of ``dim`` per unit of per-node injection
        (:func:`dimension_load_factor`)."""
        return dimension_load_factor(self.dims[dim], self.wrap[dim])

    @cached_property
    def max_channel_load_factor(self) -> float:
        """``max_i c_i``: what γ = 1 is normalised by.  Zero only for a single node."""
        return torus_load_factor(self.dims, self.wrap)

    def describe(self) -> str:
        """``torus 8x8x8``; ``mesh 4x4`` when no dimension wraps; ``torus 4x4 (mesh in dims
        [1])`` when some do not; then the failures.

        >>> Torus((4, 4), (False, False)).describe(), Torus((4, 2, 2, 2)).describe()
        ('mesh 4x4', 'torus 4x2x2x2')
        """
        shape = "x".join(str(k) for k in self.dims)
        lines = [d for d in range(self.n) if self.dims[d] > 2 and not self.wrap[d]]
        if lines and not any(self.is_ring(d) for d in range(self.n)):
            out = f"mesh {shape}"
        else:
            out = f"torus {shape}" + (f" (mesh in dims {lines})" if lines else "")
        if self.has_failures:
            links = len(self.failed_links) // 2
            out += (f" with {links} failed link{'s' * (links != 1)} and "
                    f"{len(self.failed_nodes)} failed node{'s' * (len(self.failed_nodes) != 1)}")
        return out

    @property
    def name(self) -> str:
        """``mesh`` when no dimension wraps, else ``torus`` (for labels)."""
        return self.describe().split(" ", 1)[0]

    # ------------------------------------------------------------------ capabilities
    @cached_property
    def capabilities(self) -> frozenset[str]:
        caps = {"coordinates"}
        if not self.has_failures:
            caps.add("offsets")
        if all(self.is_ring(d) for d in range(self.n)):
            caps.add("rings")
        return frozenset(caps)

    def lacks(self, capability: str) -> str:
        if capability == "offsets" and self.has_failures:
            return "has failed parts (table routing's generators route around them)"
        if capability == "rings":
            lines = [d for d in range(self.n) if not self.is_ring(d)]
            if lines:
                return (f"has dimension{'s' * (len(lines) > 1)} "
                        f"{', '.join(map(str, lines))} as a line")
        return super().lacks(capability)

    def where(self, node: int) -> str:
        return f"{node} {self.coords(node)}"

    def to_json(self) -> dict:
        """The topology as a table file stores it (``icsim-routing-table``)."""
        doc = {"kind": "torus", "dims": list(self.dims), "wrap": list(self.wrap)}
        if self.failed_links:        # each link once, by its positive channel
            doc["failed_links"] = sorted([u, p] for u, p in self.failed_links if p % 2 == 0)
        if self.failed_nodes:
            doc["failed_nodes"] = sorted(self.failed_nodes)
        return doc
