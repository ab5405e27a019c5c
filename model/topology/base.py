"""What every topology answers: the interface the model, routing and traffic ask (SPEC §11).

Code asks a topology a question; it never asks what the topology is.  Every topology answers
the questions of :class:`Topology` (routers and their terminals, ports with their neighbour and
link class, hop distances, failed parts, the load normalisation).  Some questions only some
topologies can answer; those come in named **capabilities**, which a topology lists in
:attr:`Topology.capabilities` and a routing algorithm or traffic pattern lists in its
``requires``:

================  ===========================================================================
``coordinates``   nodes have coordinates in a k-ary n-cube: ``dims``, ``n``, ``wrap``,
                  ``coords``, ``node``, ``coord_array``, ``strides``, ``is_ring``
``offsets``       minimal routes follow coordinate differences everywhere (a torus or mesh
                  with nothing failed): ``offsets``, ``minimal_ports``, ``relative``,
                  ``relative_codes``, ``relative_base``, ``relative_size``,
                  ``relative_offsets``, ``minimal_mask_table``, ``dor_port_table``,
                  ``dor_port``, ``ring_distance``
``rings``         every dimension closes into a ring of at least 3 nodes
================  ===========================================================================

:meth:`Topology.require` refuses a pairing in one line that names what is needed, by whom, and
why this topology lacks it.

Ports
-----
A router has :attr:`~Topology.num_ports` router-to-router ports, numbered from 0; a port that
leads nowhere is *absent*: ``neighbor(node, port) == ABSENT``.  Its terminal's NIC enters it by
an input of its own and leaves it by the ejection port, numbered ``num_ports``.  Every router
has one terminal (node ids are router ids); a topology with several terminals per router, or
routers with none, answers :attr:`~Topology.terminals_per_router` accordingly (the engines
refuse anything but one until they model concentration).

Link classes
------------
Every router-to-router channel belongs to a link class (:meth:`Topology.link_class`); a class
may have its own bandwidth and latency.  Tori and graphs have one class, ``"link"``, which takes
the config's ``link`` section.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property
from typing import ClassVar, Iterable, Iterator

import numpy as np

ABSENT = -1
#: "no port": the value of ``Torus.dor_port_table`` where source and destination coincide
NO_PORT = 255

#: what each capability promises (for messages)
CAPABILITIES = {
    "coordinates": "node coordinates in a k-ary n-cube",
    "offsets": "minimal routes by coordinate differences (a torus or mesh with nothing failed)",
    "rings": "every dimension a ring of at least 3 nodes",
    "groups": "dragonfly groups of routers joined by global links",
    "updown": "a fat tree's levels with up and down ports",
    "lines": "HyperX lines: all-to-all links within each dimension",
}


def checked_int(name: str, value, what: str, least: int = 1) -> int:
    """``value`` as an int of at least ``least``; ``ValueError`` starting with the parameter's
    ``name`` otherwise (how a topology's constructor refuses a parameter)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: {what} must be an integer, got {value!r}")
    if value < least:
        raise ValueError(f"{name}: {what} must be at least {least}, got {value}")
    return int(value)


class CapabilityError(ValueError):
    """A pairing the topology cannot serve: one line naming who needs what and why not."""


class Topology(ABC):
    """A network's structure (module docstring).  :class:`~icsim.model.topology.torus.Torus`
    and :class:`~icsim.model.topology.graph.Graph` implement it.

    Subclasses give :attr:`num_nodes`, :attr:`num_ports`, :attr:`neighbor_table`,
    :meth:`distance`, :meth:`reverse_ports`, :attr:`max_channel_load_factor` and
    :meth:`describe`; the rest has defaults here.
    """

    #: for labels only ("torus", "mesh", "graph"); never a reason to branch
    name: ClassVar[str] = "topology"
    #: terminals (NICs) per router that carries any (module docstring)
    terminals_per_router: int = 1
    failed_links: frozenset[tuple[int, int]] = frozenset()
    failed_nodes: frozenset[int] = frozenset()

    # ------------------------------------------------------------------ what it can answer
    @property
    def capabilities(self) -> frozenset[str]:
        """The capabilities (module docstring) this topology provides."""
        return frozenset()

    def lacks(self, capability: str) -> str:
        """Why this topology does not provide ``capability`` (a phrase), '' when it does."""
        return "" if capability in self.capabilities else "does not"

    def require(self, requires: Iterable[str], who: str) -> None:
        """Raise :class:`CapabilityError` naming ``who``, the first capability of ``requires``
        this topology lacks and why; nothing when it has them all.

        >>> from icsim.model.topology import Graph, Torus
        >>> Torus((4, 4)).require({"offsets", "rings"}, "routing algorithm 'ofr'")
        >>> Torus((4, 4), (True, False)).require({"rings"}, "routing algorithm 'ofr'")
        Traceback (most recent call last):
        ...
        icsim.model.topology.base.CapabilityError: routing algorithm 'ofr' needs every dimension a ring of at least 3 nodes (rings); torus 4x4 (mesh in dims [1]) has dimension 1 as a line
        """
        for cap in sorted(requires):
            if cap not in CAPABILITIES:
                raise ValueError(f"{who} requires {cap!r}, which no topology provides (known: "
                                 f"{', '.join(sorted(CAPABILITIES))})")
            if cap not in self.capabilities:
                raise CapabilityError(f"{who} needs {CAPABILITIES[cap]} ({cap}); "
                                      f"{self.describe()} {self.lacks(cap)}")

    # ------------------------------------------------------------------ sizes
    #: routers (and terminals: one per router); a field or a property of the subclass
    num_nodes: int

    @property
    @abstractmethod
    def num_ports(self) -> int:
        """Router-to-router ports per router (absent ones included)."""

    @property
    def num_terminals(self) -> int:
        """Terminals (NICs): traffic's sources and destinations."""
        return self.num_nodes * self.terminals_per_router

    def terminal_router(self, terminal: int) -> int:
        """The router terminal ``terminal`` is attached to."""
        return terminal // self.terminals_per_router

    @cached_property
    def terminal_routers(self) -> np.ndarray:
        """:meth:`terminal_router` of every terminal, int64, read-only."""
        out = np.arange(self.num_terminals, dtype=np.int64) // self.terminals_per_router
        out.setflags(write=False)
        return out

    # ------------------------------------------------------------------ links
    @property
    @abstractmethod
    def neighbor_table(self) -> tuple[tuple[int, ...], ...]:
        """``neighbor_table[node][port]``: the router a port leads to, :data:`ABSENT` where
        none (no link, or a failed one)."""

    def neighbor(self, node: int, port: int) -> int:
        """Router reached from ``node`` through ``port``, or :data:`ABSENT` (-1)."""
        return self.neighbor_table[node][port]

    @cached_property
    def neighbor_array(self) -> np.ndarray:
        """:attr:`neighbor_table` as an int64 array, shape (N, num_ports)."""
        out = np.asarray(self.neighbor_table, dtype=np.int64).reshape(self.num_nodes, -1)
        out.setflags(write=False)
        return out

    @abstractmethod
    def reverse_ports(self) -> np.ndarray:
        """``[node, port]``: the port of the neighbour whose channel leads back (-1 where the
        port leads nowhere)."""

    def port_name(self, port: int) -> str:
        return f"p{port}"

    def link_class(self, node: int, port: int) -> str:
        """The class of the channel leaving ``node`` by ``port`` (module docstring)."""
        return "link"

    @cached_property
    def port_classes(self) -> tuple[tuple[str, ...], np.ndarray]:
        """``(names, index)``: the link classes of the topology's channels, sorted, and per
        ``[node, port]`` the index of its channel's class in ``names`` (-1 where the port
        leads nowhere)."""
        index = np.full(self.neighbor_array.shape, -1, dtype=np.int64)
        found: dict[str, int] = {}
        for node, port, _ in self.channels():
            name = self.link_class(node, port)
            index[node, port] = found.setdefault(name, len(found))
        names = tuple(sorted(found))
        remap = np.array([names.index(n) for n in found] + [-1], dtype=np.int64)
        index = remap[index]
        index.setflags(write=False)
        return names, index

    def channels(self) -> Iterator[tuple[int, int, int]]:
        """Every unidirectional router-to-router channel as ``(node, port, neighbour)``."""
        for node, row in enumerate(self.neighbor_table):
            for port, v in enumerate(row):
                if v != ABSENT:
                    yield node, port, v

    @cached_property
    def num_channels(self) -> int:
        return int((self.neighbor_array != ABSENT).sum())

    @property
    def label(self) -> str:
        """How a message names the topology in a sentence ("the graph"; ``describe`` gives
        the details)."""
        return f"the {self.name}"

    def where(self, node: int) -> str:
        """How a message names a router: its id, and its coordinates where it has them."""
        return str(node)

    # ------------------------------------------------------------------ distances
    @abstractmethod
    def distance(self, a: int, b: int) -> int:
        """Minimal hops from a to b (over the links in service)."""

    def distances_between(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """:meth:`distance` of every pair ``src[i] -> dst[i]``."""
        return np.array([self.distance(int(s), int(d)) for s, d in zip(src, dst)],
                        dtype=np.int64)

    def terminal_distances(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Router hops between terminals ``src[i]`` and ``dst[i]`` (0 on one router)."""
        routers = self.terminal_routers
        return self.distances_between(routers[np.asarray(src, dtype=np.int64)],
                                      routers[np.asarray(dst, dtype=np.int64)])

    @cached_property
    def distances(self) -> np.ndarray:
        """Hops between every two routers over the links in service, ``[a, b]``, -1 where
        cut off: an integer array of N^2 entries, made once (breadth-first from every router,
        scipy's csgraph; the families by their closed forms)."""
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import shortest_path

        n, nbr = self.num_nodes, self.neighbor_array
        u, port = np.nonzero(nbr >= 0)
        links = csr_matrix((np.ones(len(u)), (u, nbr[u, port])), shape=(n, n))
        dist = shortest_path(links, directed=True, unweighted=True)
        out = np.where(np.isinf(dist), -1, dist).astype(np.int32)
        out.setflags(write=False)
        return out

    def distance_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, second, table)``: router a to router b is ``table[first[a] + second[b]]``
        hops, as :meth:`distances_between` counts them (int64, int64, int16): here the table
        of router pairs (N^2 entries: :attr:`distances`); a torus's by the coordinates'
        difference.  What an engine reads to know a packet's minimal distance."""
        n = self.num_nodes
        every = np.arange(n, dtype=np.int64)
        return every * n, every, np.asarray(self.distances, dtype=np.int16).ravel()

    def hop_distances(self, src: int) -> np.ndarray:
        """Hops from ``src`` to every router over the links in service (BFS), -1 where cut
        off."""
        nbr = self.neighbor_array
        dist = np.full(self.num_nodes, -1, dtype=np.int64)
        dist[src] = 0
        frontier, d = np.array([src]), 0
        while frontier.size:
            d += 1
            nxt = nbr[frontier].ravel()
            nxt = np.unique(nxt[nxt >= 0])
            nxt = nxt[dist[nxt] < 0]
            dist[nxt] = d
            frontier = nxt
        return dist

    # ------------------------------------------------------------------ failures
    @property
    def has_failures(self) -> bool:
        return bool(self.failed_links or self.failed_nodes)

    @cached_property
    def alive_nodes(self) -> tuple[int, ...]:
        """Routers in service (every one unless some failed), ascending."""
        if not self.failed_nodes:
            return tuple(range(self.num_nodes))
        return tuple(v for v in range(self.num_nodes) if v not in self.failed_nodes)

    # ------------------------------------------------------------------ load and labels
    @property
    @abstractmethod
    def max_channel_load_factor(self) -> float:
        """Busiest channel's load per unit of per-node uniform injection under minimal
        routing: what γ = 1 is normalised by (docs/model.md §6)."""

    @abstractmethod
    def describe(self) -> str:
        """One phrase for messages and run lines ("torus 8x8x8", "mesh 4x4")."""

    def same_network(self, other: "Topology") -> bool:
        """Whether ``other`` has the same routers and links (a table of one fits the other)."""
        return (self.num_nodes == other.num_nodes and self.num_ports == other.num_ports
                and self.neighbor_array.shape == other.neighbor_array.shape
                and bool((self.neighbor_array == other.neighbor_array).all()))


class WiredTopology(Topology):
    """A topology whose wiring is built once as two arrays (``_arrays``: the neighbour of
    every port and the reverse port of every channel, each (N, num_ports) int64, read-only,
    :data:`ABSENT` / -1 where a port leads nowhere): the neighbour questions answered from
    them.  Dragonflies, fat trees and HyperX build theirs."""

    @property
    @abstractmethod
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(neighbours, reverse ports)``."""

    @cached_property
    def neighbor_array(self) -> np.ndarray:
        """:attr:`neighbor_table` as a read-only int64 array, shape (N, num_ports)."""
        return self._arrays[0]

    @cached_property
    def neighbor_table(self) -> tuple[tuple[int, ...], ...]:
        return tuple(map(tuple, self._arrays[0].tolist()))

    def neighbor(self, node: int, port: int) -> int:
        return int(self._arrays[0][node, port])

    def reverse_ports(self) -> np.ndarray:
        """``[node, port]``: the port of the neighbour whose channel leads back (-1 where the
        port leads nowhere); a copy."""
        return self._arrays[1].copy()
