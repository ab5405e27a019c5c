"""Destination-based minimal routing tables: one shortest path per pair.

For every destination ``t`` each other node ``u`` forwards to one neighbour that is one hop
closer to ``t``; the chosen next hops form a shortest-path (BFS) tree rooted at ``t``, so the
table is loop-free and every route is minimal.  Among the ports of ``u`` on some shortest path
to ``t`` the tie-break picks

* ``"lowest_port"`` -- the lowest-numbered one (on a :class:`~icsim.model.topology.Graph` the
  lowest neighbour id; on a torus the first dimension, + before -);
* ``"random"`` -- one uniformly at random, independently per ``(u, t)``, from a
  ``numpy.random.Generator`` seeded with ``seed`` (the ACRO paper's "one minimal path chosen
  among several").

A table in the file format is read with :meth:`routing.table.RoutingTable.load` instead.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from icsim.routing.table import RoutingTable
from icsim.routing.tables.generators import register as register_generator

TIE_BREAKS = ("lowest_port", "random")


def _distance_matrix(topology: Any) -> np.ndarray:
    """Hops between every two routers over the links in service (-1: cut off)."""
    return np.asarray(topology.distances, dtype=np.int32)


def minimal_next_ports(topology: Any, *, tie_break: str = "lowest_port",
                       seed: int | None = None) -> np.ndarray:
    """Next-hop port of every (node, destination) pair on a minimal path.

    Parameters
    ----------
    topology : Graph or Torus
    tie_break : {"lowest_port", "random"}
    seed : int, optional
        Seed of the random tie-break (required for ``"random"``).

    Returns
    -------
    numpy.ndarray of int, shape (N, N)
        ``out[u, t]`` is the port ``u`` takes towards ``t``; ``-1`` on the diagonal.

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> square = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    >>> minimal_next_ports(square)[0].tolist()      # from 0: to 1 by port 0, to 2 via 1, to 3
    [-1, 0, 0, 1]
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"unknown tie_break {tie_break!r}; valid: {', '.join(TIE_BREAKS)}")
    if tie_break == "random" and seed is None:
        raise ValueError("tie_break='random' needs a seed")
    dist = _distance_matrix(topology)
    nbr = np.asarray(topology.neighbor_table, dtype=np.int64)        # (N, P)
    present = nbr >= 0
    # closer[u, p, t]: port p of u leads one hop closer to t
    closer = (dist[np.where(present, nbr, 0)] == dist[:, None, :] - 1) & present[:, :, None]
    if tie_break == "lowest_port":
        score = closer.astype(np.int8)
    else:
        score = np.where(closer, np.random.default_rng(seed).random(closer.shape), -1.0)
    out = score.argmax(axis=1)
    np.fill_diagonal(out, -1)
    stranded = ~closer.any(axis=1)
    np.fill_diagonal(stranded, False)
    dead = sorted(topology.failed_nodes)
    if dead:                       # failed nodes neither send nor receive
        stranded[dead, :] = False
        stranded[:, dead] = False
    if stranded.any():
        u, t = map(int, np.argwhere(stranded)[0])
        raise ValueError(f"node {u} has no path to node {t}: the topology is not connected")
    return out


def minimal_table(topology: Any, *, tie_break: str = "lowest_port", seed: int | None = None,
                  nodes: Sequence[int] | None = None) -> RoutingTable:
    """A destination-based minimal routing table, expanded to source routes.

    Parameters
    ----------
    topology : Graph or Torus
    tie_break : {"lowest_port", "random"}
        Which shortest-path port a node takes when it has several (see the module notes).
    seed : int, optional
        Seed of the random tie-break.
    nodes : sequence of int, optional
        Node set the table covers (default every node in service: on a torus with failed
        nodes, the others; distances are hops over the links in service).

    Returns
    -------
    RoutingTable
        Built with :meth:`RoutingTable.from_next_hop`; ``meta`` records the generator.

    Examples
    --------
    >>> from icsim.model.topology import Graph
    >>> g = Graph.random_regular(16, 3, seed=1)
    >>> table = minimal_table(g, tie_break="random", seed=7)
    >>> all(len(table.route(s, t)) == g.distance(s, t) for s, t in table.pairs())
    True
    """
    nxt = minimal_next_ports(topology, tie_break=tie_break, seed=seed)
    alive = list(topology.alive_nodes)
    next_port = {(u, t): int(nxt[u, t]) for u in alive for t in alive if u != t}
    table = RoutingTable.from_next_hop(topology, next_port, nodes or alive)
    table.meta = {"generator": "minimal", "tie_break": tie_break, "seed": seed}
    return table


@register_generator("minimal")
def minimal(topology: Any, nodes: Sequence[int] | None = None, *, seed: int = 0,
            **opts: Any) -> RoutingTable:
    """The ``minimal`` table generator: one shortest path per ordered pair of every node (on any
    topology), destination-based, chosen among the shortest with ``seed``.  ``nodes`` (a job's
    nodes) is accepted and ignored: the table covers every pair."""
    if opts:
        raise ValueError(f"the minimal generator takes no options (got {', '.join(opts)})")
    return minimal_table(topology, tie_break="random", seed=seed)
