"""Virtual-layer assignment for deterministic routing tables: ACRO, LASH and LASH-TOR.

``minimal`` builds destination-based minimal tables, ``acro``, ``lash`` and ``lash_tor`` assign
a virtual layer to every hop of every route, ``verify`` checks any assignment from the table and
its layers alone.  Assigners are found by name in a registry filled by :func:`register`.

Layers are numbered so that a packet's layer only goes down (or stays) along its route.  Layer 0
is the one built first; ACRO and LASH-TOR fill it from the destination end of the routes, so a
route that changes layer ends in the lower one.

Examples
--------
>>> from icsim.model.topology import Graph
>>> from icsim.routing.layers.minimal import minimal_table
>>> ring = minimal_table(Graph.from_edges(5, [(i, (i + 1) % 5) for i in range(5)]))
>>> sorted(assigner_names())
['acro', 'lash', 'lash_tor', 'lash_tor_conventional']
>>> get_assigner("acro")(ring).num_layers
2
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from icsim.model.registry import Registry
from icsim.routing.table import Pair, RoutingTable

Channel = tuple[int, int]
"""A channel as ``(node, port)``, the form :meth:`RoutingTable.channel_path` returns."""

#: layer assigners by name; every module of this package registers its own
ASSIGNERS: Registry[Callable[[RoutingTable], "LayerAssignment"]] = Registry(
    "layer assigner", packages=("icsim.routing.layers",), entry_points="icsim.layer_assigners")
register = ASSIGNERS.register


def assigner_names() -> tuple[str, ...]:
    """Names of the registered layer assigners."""
    return tuple(ASSIGNERS.names())


def get_assigner(name: str) -> Callable[[RoutingTable], "LayerAssignment"]:
    """The assigner registered as ``name``; ``ValueError`` listing the valid names otherwise."""
    return ASSIGNERS.get(name)


@dataclass
class LayerAssignment:
    """Virtual layers for every route of a table, as an assigner returns them.

    Attributes
    ----------
    method : str
        Registry name of the assigner.
    num_layers : int
        Layers used (at least 1).
    layers : dict (src, dst) -> tuple of int
        Layer of each hop of the route, never rising along it.
    orders : dict layer -> dict channel -> int, optional
        Position of each channel in each layer such that every route uses the labels
        ``(layer, order)`` in strictly decreasing order (Theorem 1 of the ACRO paper).
    vc : dict (dst, channel) -> int, optional
        ACRO only: the layer a packet to ``dst`` uses on ``channel``.
    """

    method: str
    num_layers: int
    layers: dict[Pair, tuple[int, ...]]
    orders: dict[int, dict[Channel, int]] | None = None
    vc: dict[tuple[int, Channel], int] | None = None

    def attach(self, table: RoutingTable) -> RoutingTable:
        """A copy of ``table`` carrying these layers (and the method in its ``meta``)."""
        meta = dict(table.meta, layers=self.method, num_layers=self.num_layers)
        return replace(table, layers=dict(self.layers), meta=meta)


@dataclass(frozen=True)
class IndexedRoutes:
    """A table's routes with channels numbered ``0 .. len(channels) - 1``.

    ``channels[i]`` is ``(node, port)`` in the topology's :meth:`channels` order and
    ``paths[j]`` the channel ids of ``pairs[j]``'s route.
    """

    channels: tuple[Channel, ...]
    pairs: tuple[Pair, ...]
    paths: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, table: RoutingTable) -> "IndexedRoutes":
        ids = {(u, port): i for i, (u, port, _) in enumerate(table.topology.channels())}
        pairs = tuple(table.pairs())
        paths = tuple(tuple(ids[c] for c in table.channel_path(s, t)) for s, t in pairs)
        return cls(tuple(ids), pairs, paths)

    def hop_layers(self, path_layers) -> dict[Pair, tuple[int, ...]]:
        """Pair each route with its per-hop layers (``path_layers[j]`` for ``pairs[j]``)."""
        return {p: tuple(ls) for p, ls in zip(self.pairs, path_layers)}
