"""HyperX networks (Ahn, Binkert, Davis, McLaren, Schreiber, SC 2009): Hamming graphs of routers.

A HyperX of shape ``S = (S_0, ..., S_{L-1})`` has a router per coordinate vector ``(x_0, ...,
x_{L-1})``, ``0 <= x_d < S_d``; the ids run with the first dimension fastest, ``id = x_0 + S_0*x_1
+ S_0*S_1*x_2 + ...``.  In every dimension each *line* (the routers differing only in that
coordinate) is a complete graph, each pair joined by ``K`` parallel links (trunking).  With
``K = 1`` this is the flattened butterfly (Kim, Dally, Abts, ISCA 2007).  Every router has ``p``
terminals; terminal ``t`` sits on router ``t // p``.

Ports
-----
Dimension ``d`` owns ``(S_d - 1) * K`` consecutive ports starting at ``sum_{e<d} (S_e - 1) K``.
Inside that block the other routers of the line come in ascending coordinate order (a router
skips its own), each ``K`` times: the port to coordinate ``c`` over trunk ``t`` (``0 <= t <
K``) is ``start_d + (c if c < x_d else c - 1) * K + t``; its reverse is the port of the same
trunk back.  No port is absent.  All channels are of the class ``"link"``.

Capability ``lines`` (:mod:`icsim.model.topology.base`): :meth:`HyperX.coords`,
:attr:`~HyperX.dims`, :meth:`~HyperX.port_to`, :meth:`~HyperX.differing_dims`, and
:meth:`~HyperX.node`, :meth:`~HyperX.port_info`, :attr:`~HyperX.coord_array`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from icsim.model.topology.base import WiredTopology, checked_int


@dataclass(frozen=True)
class HyperX(WiredTopology):
    """A HyperX of shape ``S``, ``K`` parallel links per connected pair, ``p`` terminals per
    router (module docstring for ids and ports).

    Parameters
    ----------
    S : sequence of int
        Routers per dimension, each >= 2 (at least one dimension).
    p : int
        Terminals per router (>= 1).
    K : int
        Parallel links between two routers of a line (>= 1; 1 = a flattened butterfly).

    ``max_channel_load_factor`` is 1: γ = 1 is one packet per link cycle per terminal, the
    terminal injection bandwidth; the engines normalise γ by it.

    Examples
    --------
    >>> x = HyperX((4, 4), p=2, K=2)
    >>> x.num_nodes, x.num_terminals, x.num_ports, x.describe()
    (16, 32, 12, 'hyperx 4x4 K=2 p=2')
    >>> x.coords(6), x.node((2, 1)), x.differing_dims(0, 6), x.distance(0, 6)
    ((2, 1), 6, (0, 1), 2)
    >>> x.port_to(6, 1, 3, trunk=1), x.neighbor(6, 11), x.port_name(11)
    (11, 14, 'd1n2t1')
    >>> HyperX((4, 1))
    Traceback (most recent call last):
    ...
    ValueError: S: every dimension needs at least 2 routers, got [4, 1]
    """

    S: tuple[int, ...]
    p: int = 1
    K: int = 1

    name = "hyperx"

    def __post_init__(self) -> None:
        try:
            shape = list(self.S)
        except TypeError:
            raise ValueError(f"S: the shape must be a sequence of sizes, got {self.S!r}") \
                from None
        if not shape:
            raise ValueError("S: a HyperX needs at least one dimension, got []")
        if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in shape):
            raise ValueError(f"S: every dimension size must be an integer, got {shape}")
        if any(s < 2 for s in shape):
            raise ValueError(f"S: every dimension needs at least 2 routers, got "
                             f"{[int(s) for s in shape]}")
        object.__setattr__(self, "S", tuple(int(s) for s in shape))
        object.__setattr__(self, "p", checked_int("p", self.p, "terminals per router"))
        object.__setattr__(self, "K", checked_int("K", self.K, "the links per router pair"))

    # ------------------------------------------------------------------ sizes
    @property
    def terminals_per_router(self) -> int:
        """``p``."""
        return self.p

    @property
    def dims(self) -> tuple[int, ...]:
        """The shape ``S``."""
        return self.S

    @property
    def n(self) -> int:
        """Number of dimensions ``L``."""
        return len(self.S)

    @cached_property
    def num_nodes(self) -> int:
        """Routers: ``prod S``."""
        return int(np.prod(self.S, dtype=np.int64))

    @cached_property
    def num_ports(self) -> int:
        """``sum_d (S_d - 1) * K``."""
        return sum(s - 1 for s in self.S) * self.K

    @cached_property
    def port_starts(self) -> tuple[int, ...]:
        """The first port of each dimension's block."""
        out, at = [], 0
        for s in self.S:
            out.append(at)
            at += (s - 1) * self.K
        return tuple(out)

    @cached_property
    def strides(self) -> tuple[int, ...]:
        """``id = sum_d x_d * strides[d]``."""
        out, m = [], 1
        for s in self.S:
            out.append(m)
            m *= s
        return tuple(out)

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({"lines"})

    # ------------------------------------------------------------------ coordinates
    @cached_property
    def coord_array(self) -> np.ndarray:
        """``[router, d]``: coordinate ``x_d``, shape (N, L) int64, read-only."""
        ids = np.arange(self.num_nodes, dtype=np.int64)
        out = np.stack([(ids // m) % s for s, m in zip(self.S, self.strides)], axis=1)
        out.setflags(write=False)
        return out

    def coords(self, router: int) -> tuple[int, ...]:
        return tuple(int(x) for x in self.coord_array[router])

    def node(self, coords: Sequence[int]) -> int:
        """The router with these coordinates."""
        return sum(int(x) * m for x, m in zip(coords, self.strides))

    def differing_dims(self, a: int, b: int) -> tuple[int, ...]:
        """The dimensions in which routers a and b differ, ascending (their distance is how
        many)."""
        return tuple(int(d) for d in np.flatnonzero(self.coord_array[a] != self.coord_array[b]))

    def port_to(self, router: int, dim: int, coord: int, trunk: int = 0) -> int:
        """The port of ``router`` leading, over ``trunk``, to the router of its line in
        ``dim`` with coordinate ``coord``."""
        x = int(self.coord_array[router, dim])
        if coord == x or not 0 <= coord < self.S[dim] or not 0 <= trunk < self.K:
            raise ValueError(f"router {self.where(router)} has no port to coordinate {coord} "
                             f"of dimension {dim} over trunk {trunk}")
        return self.port_starts[dim] + (coord if coord < x else coord - 1) * self.K + trunk

    def port_info(self, router: int, port: int) -> tuple[int, int, int]:
        """``(dim, coord, trunk)`` of a port of ``router`` (the inverse of :meth:`port_to`)."""
        dim = int(np.searchsorted(self.port_starts, port, side="right")) - 1
        q, trunk = divmod(port - self.port_starts[dim], self.K)
        x = int(self.coord_array[router, dim])
        return dim, (q if q < x else q + 1), trunk

    # ------------------------------------------------------------------ the wiring
    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, reverse ports), each (N, num_ports) int64."""
        K, c = self.K, self.coord_array
        ids = np.arange(self.num_nodes, dtype=np.int64)
        nbr = np.empty((self.num_nodes, self.num_ports), dtype=np.int64)
        rev = np.empty_like(nbr)
        for dim, (s, m, start) in enumerate(zip(self.S, self.strides, self.port_starts)):
            x = c[:, dim]
            for q in range(s - 1):
                other = np.where(q < x, q, q + 1)
                back = np.where(x < other, x, x - 1)
                for t in range(K):
                    nbr[:, start + q * K + t] = ids + (other - x) * m
                    rev[:, start + q * K + t] = start + back * K + t
        nbr.setflags(write=False)
        rev.setflags(write=False)
        return nbr, rev


    def port_name(self, port: int) -> str:
        """``d<dim>n<q>``: the port to the ``q``-th other router of the line in dimension
        ``dim`` (the one with coordinate ``q``, or ``q + 1`` past the router's own), then
        ``t<trunk>`` when ``K > 1``."""
        dim = int(np.searchsorted(self.port_starts, port, side="right")) - 1
        q, trunk = divmod(port - self.port_starts[dim], self.K)
        return f"d{dim}n{q}" + (f"t{trunk}" if self.K > 1 else "")

    # ------------------------------------------------------------------ distances
    def distances_between(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Hops of every pair: the number of differing coordinates (vectorised)."""
        c = self.coord_array
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        return (c[src] != c[dst]).sum(axis=1).astype(np.int64)

    def distance(self, a: int, b: int) -> int:
        """Minimal hops: the number of dimensions in which a and b differ."""
        return int((self.coord_array[a] != self.coord_array[b]).sum())

    def hop_distances(self, src: int) -> np.ndarray:
        return (self.coord_array != self.coord_array[src]).sum(axis=1).astype(np.int64)

    # ------------------------------------------------------------------ labels
    @property
    def max_channel_load_factor(self) -> float:
        """1: γ = 1 is one packet per link cycle per terminal, the terminal injection
        bandwidth; the engines normalise γ by it."""
        return 1.0

    def describe(self) -> str:
        return f"hyperx {'x'.join(map(str, self.S))} K={self.K} p={self.p}"

    def where(self, node: int) -> str:
        return f"{node} {self.coords(node)}"

    def to_json(self) -> dict:
        """The topology's parameters (a table file's ``topology`` object)."""
        return {"kind": "hyperx", "S": list(self.S), "p": self.p, "K": self.K}
