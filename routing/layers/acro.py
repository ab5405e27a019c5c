"""ACRO: Assignment of Channels in Reverse Order (Kawano et al., Algorithm 1).

For every destination ``n`` the routes towards ``n`` give a channel dependency graph ``T_n``
whose edges run from a channel (the *child*) to the channel a packet to ``n`` takes next (the
*parent*); for a destination-based table it is a forest rooted at the channels entering ``n``.
Layers are built one after the other, starting at the destinations: in each layer every channel
receives an order, smallest first, always the unordered channel ``c`` with the smallest fitness
``F(c) = sum_n f(n, c)``, where ``f(n, c)`` is 0 when ``c`` has no parent left in ``T_n`` and the
weight ``w(n, c)`` otherwise::

    w(n, c) = 1                                     if c has no child in T_n
              sum over children c' of |N| * w(n, c')  otherwise

(``|N|`` = the topology's node count; ``w`` grows like ``|N| ** depth``, so it is kept in Python
integers, which never overflow.)  When ``c`` is ordered and has no parent left in ``T_n``, packets
to ``n`` use ``c`` in the current layer (``m(n, c)`` becomes true) and the edges from ``c``'s
children to ``c`` are removed.  A new layer follows until every used ``(n, c)`` is placed.

With the label ``(layer, order)`` of the place of ``(n, c)``, every route uses strictly decreasing
labels (Theorem 2), so the layers are deadlock-free and a packet's layer never rises.

Choices the paper leaves open
-----------------------------
* Ties in ``F`` go to the lowest channel id (channels numbered in ``topology.channels()`` order).
* A table that is not destination-based is accepted when each ``T_n`` is still acyclic: ``T_n``
  is then a DAG, and a channel has "no parent" once all its parents are placed.
"""

from __future__ import annotations

import heapq

from icsim.routing.layers import Channel, IndexedRoutes, LayerAssignment, register
from icsim.routing.table import RoutingTable


@register("acro")
def acro(table: RoutingTable) -> LayerAssignment:
    """Assign virtual layers to ``table``'s routes with ACRO.

    Parameters
    ----------
    table : RoutingTable
        Any deterministic table whose routes towards each destination have acyclic
        dependencies (every destination-based, loop-free table does).

    Returns
    -------
    LayerAssignment
        With ``orders`` (each layer's channel order, ``Idx(i, c)`` in the paper) and ``vc``
        (the layer of every used (destination, channel)).

    Raises
    ------
    ValueError
        When the routes towards some destination depend on each other cyclically.

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> from icsim.routing.layers.minimal import minimal_table
    >>> table = minimal_table(Graph.from_edges(5, [(i, (i + 1) % 5) for i in range(5)]))
    >>> a = acro(table)
    >>> a.num_layers, a.layers[(0, 2)], a.layers[(3, 0)]
    (2, (1, 0), (0, 0))
    """
    idx = IndexedRoutes.of(table)
    num_channels = len(idx.channels)
    base = table.topology.num_nodes

    # One vertex k per used (destination, channel), keyed dst * |C| + channel.
    key_of: dict[int, int] = {}
    chan: list[int] = []
    dest: list[int] = []
    parents: list[set[int]] = []
    children: list[list[int]] = []
    path_keys: list[list[int]] = []
    for (_, t), path in zip(idx.pairs, idx.paths):
        keys, prev = [], -1
        for c in path:
            k = key_of.get(t * num_channels + c)
            if k is None:
                k = key_of[t * num_channels + c] = len(chan)
                chan.append(c)
                dest.append(t)
                parents.append(set())
                children.append([])
            if prev >= 0 and k not in parents[prev]:
                parents[prev].add(k)
                children[k].append(prev)
            keys.append(k)
            prev = k
        path_keys.append(keys)

    weight = _weights(children, parents, base, idx, dest, chan)
    npar = [len(p) for p in parents]
    fitness = [0] * num_channels
    for k, w in enumerate(weight):
        if npar[k]:
            fitness[chan[k]] += w
    pending: list[list[int]] = [[] for _ in range(num_channels)]
    for k, c in enumerate(chan):
        pending[c].append(k)

    layer_of = [-1] * len(chan)
    orders: dict[int, dict[Channel, int]] = {}
    unplaced, layer = len(chan), 0
    while unplaced or layer == 0:
        heap = [(f, c) for c, f in enumerate(fitness)]
        heapq.heapify(heap)
        unordered = [True] * num_channels
        order: dict[Channel, int] = {}
        while heap:
            f, c = heapq.heappop(heap)
            if not unordered[c] or f != fitness[c]:
                continue                       # superseded by a smaller F pushed later
            unordered[c] = False
            order[idx.channels[c]] = len(order)
            still = []
            for k in pending[c]:
                if npar[k]:
                    still.append(k)
                    continue
                # m(n, c) <- True: packets to n use c in this layer; free c's children
                layer_of[k] = layer
                unplaced -= 1
                for ch in children[k]:
                    npar[ch] -= 1
                    if npar[ch] == 0:
                        cc = chan[ch]
                        fitness[cc] -= weight[ch]
                        if unordered[cc]:
                            heapq.heappush(heap, (fitness[cc], cc))
            pending[c] = still
        orders[layer] = order
        layer += 1

    hop_layers = [[layer_of[k] for k in keys] for keys in path_keys]
    vc = {(dest[k], idx.channels[chan[k]]): layer_of[k] for k in range(len(chan))}
    return LayerAssignment("acro", layer, idx.hop_layers(hop_layers), orders, vc)


def _weights(children, parents, base, idx, dest, chan) -> list[int]:
    """``w(n, c)`` for every vertex, leaves first (Kahn's order on the child counts)."""
    weight = [0] * len(children)
    waiting = [len(ch) for ch in children]
    ready = [k for k, n in enumerate(waiting) if n == 0]
    done = 0
    while ready:
        k = ready.pop()
        done += 1
        w = weight[k] or 1
        weight[k] = w
        for p in parents[k]:
            weight[p] += base * w
            waiting[p] -= 1
            if waiting[p] == 0:
                ready.append(p)
    if done < len(children):
        k = next(k for k, n in enumerate(waiting) if n)
        u, port = idx.channels[chan[k]]
        raise ValueError(f"routes towards node {dest[k]} depend on each other cyclically "
                         f"(through channel {u}:p{port}); ACRO needs acyclic dependencies per "
                         f"destination")
    return weight
