"""LASH-TOR: routes split into sub-paths that move down through ordered virtual layers.

As the ACRO paper evaluates it (§IV-A2, after Skeie et al., ICPADS 2004): routes are taken one
by one in the table's pair order; a route may change layer at intermediate switches, only ever
to a lower-numbered layer, and each sub-path's dependencies must keep its layer's dependency
graph acyclic.  The transition dependencies between layers need no check: every route descends,
so they cannot close a cycle.  No up*/down* escape layer is used, as in the paper's evaluation.

The rule, exactly
-----------------
For a route ``c_0 .. c_{k-1}``, in layer 0, then 1, 2, ... the longest *suffix* of what is still
unassigned that fits the layer is placed there (possibly nothing).  When every existing layer
has been tried and a prefix is left, a new layer on top takes it (a new layer takes any simple
path whole).  So the destination end of a route sits in the lowest layers, and the packet's
layer never rises along the route.

Taking the longest fitting part layer by layer finds a split whenever one exists with the
existing layers (any part of a fitting sub-path fits too), so a new layer is opened only when it
is necessary for this route.
"""

from __future__ import annotations

from icsim.model.notes import noted
from icsim.routing.layers import IndexedRoutes, LayerAssignment, register
from icsim.routing.layers.lash import CHECKS, IncrementalCDG, _orders
from icsim.routing.table import RoutingTable


@register("lash_tor")
def lash_tor(table: RoutingTable, check: str = "incremental") -> LayerAssignment:
    """Assign virtual layers to the hops of ``table``'s routes with LASH-TOR.

    Parameters
    ----------
    table : RoutingTable
    check : {"incremental", "conventional"}
        How a sub-path is checked against a layer: against a maintained topological order
        (Pearce-Kelly, usually no search) or with a full reachability search each time, the
        implementation the ACRO paper's complexity comparison assumes.  Same layers either way.

    Returns
    -------
    LayerAssignment
        Layers never rise along a route; ``orders`` is each layer's topological order as
        Theorem-1 labels.

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> from icsim.routing.layers.minimal import minimal_table
    >>> table = minimal_table(Graph.from_edges(5, [(i, (i + 1) % 5) for i in range(5)]))
    >>> a = lash_tor(table)
    >>> a.num_layers, a.layers[(4, 1)]
    (2, (1, 0))
    """
    if check not in CHECKS:
        raise ValueError(f"unknown check {check!r}; valid: {', '.join(CHECKS)}")
    layer_graph = CHECKS[check]
    idx = IndexedRoutes.of(table)
    cdgs: list[IncrementalCDG] = []
    hop_layers = []
    for path in noted(idx.paths, len(idx.paths), "LASH-TOR layers, route by route"):
        hops = [0] * len(path)
        end = len(path)
        for i, g in enumerate(cdgs):
            if end == 0:
                break
            start = g.longest_fitting_suffix(path, end)
            if start < end:
                g.add_chain(path[start:end])
                hops[start:end] = [i] * (end - start)
                end = start
        while end:                      # a new empty layer always takes at least one hop
            g = layer_graph(len(idx.channels))
            start = g.longest_fitting_suffix(path, end)
            g.add_chain(path[start:end])
            cdgs.append(g)
            hops[start:end] = [len(cdgs) - 1] * (end - start)
            end = start
        hop_layers.append(hops)
    return LayerAssignment("lash_tor", max(1, len(cdgs)), idx.hop_layers(hop_layers),
                           _orders(cdgs, idx.channels))


@register("lash_tor_conventional")
def lash_tor_conventional(table: RoutingTable) -> LayerAssignment:
    """LASH-TOR with the conventional full search per check: the same layers as
    :func:`lash_tor`, at the cost the ACRO paper's comparison assumes."""
    return lash_tor(table, check="conventional")
