"""Quality of a routing table (docs/model.md §8; Angara paper §1.1 and Table 2).

* channel load ``γ_c``: number of source-destination routes through channel ``c``, a channel
  being ``(node, port)``;
* edge-forwarding index ``max γ_c`` and least load ``min γ_c``;
* perfect load ``γ_perfect = Σ γ_c / |C|`` *with minimal routes*, i.e. the sum of the torus
  (or graph) distances of all ordered pairs divided by ``|C|``;
* deviation ``σ(k, R) = (mean_c |γ_perfect - γ_c|^k)^(1/k)``, reported with ``k = 4``;
* ``max D``: the longest route in hops.

Which channels are ``C``.  On the whole torus, every channel.  For a node subset (a job's nodes
on a larger torus) ``C`` is every channel whose two ends are both in the subset, plus any other
channel that some route uses; ``min γ_c`` and ``σ`` run over the same set.  This is what the
paper's Table 2 implies: on 2 nodes it reports ``min γ_c = 1`` and ``σ = 0`` (only the two
channels between the nodes count), and on the contiguous subsets of the Desmos torus minimal
routes never leave the subset, so the two parts coincide.

Examples
--------
>>> from icsim.model.topology import Torus
>>> from icsim.routing.table import RoutingTable
>>> t = Torus((3,))                       # a 3-ring routed clockwise only (not minimal)
>>> routes = {(s, d): (0,) * ((d - s) % 3) for s in range(3) for d in range(3) if s != d}
>>> m = table_metrics(RoutingTable(t, routes))
>>> m.max_load, m.min_load, m.perfect_load, m.channels, m.max_d
(3, 0, 1.0, 6, 2)
>>> round(m.sigma4, 3)
1.707
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from icsim.routing.table import RoutingTable


@dataclass(frozen=True)
class TableMetrics:
    """Summary of a table's channel loads; see the module docstring for the definitions."""

    nodes: int
    channels: int
    max_load: int
    min_load: int
    perfect_load: float
    sigma4: float
    max_d: int
    total_load: int

    def as_dict(self) -> dict:
        return asdict(self)


def channel_loads(table: RoutingTable) -> np.ndarray:
    """``γ`` over dense channel ids ``node * num_ports + port`` (absent channels stay 0)."""
    topo = table.topology
    P = topo.num_ports
    nbr = topo.neighbor_table
    nodes = set(table.nodes)
    # counted in place (a list of every hop's channel took 0.35 GB for 10x10x10, 1 M routes)
    counts = [0] * (topo.num_nodes * P)
    for (s, t), ports in table.routes.items():
        if s == t or s not in nodes or t not in nodes:
            continue
        u = s
        for p in ports:
            counts[u * P + p] += 1
            u = nbr[u][p]
    return np.array(counts, dtype=np.int64)


def counted_channels(topology, nodes: Sequence[int], loads: np.ndarray) -> np.ndarray:
    """Boolean mask over dense channel ids: the channels that form ``C`` (both ends in
    ``nodes``, or carrying load)."""
    P = topology.num_ports
    nbr = np.asarray(topology.neighbor_table, dtype=np.int64).reshape(-1, P)
    inside = np.zeros(topology.num_nodes + 1, dtype=bool)
    inside[np.asarray(nodes, dtype=np.int64)] = True
    mask = inside[:-1, None] & (nbr >= 0) & inside[nbr]
    return mask.ravel() | (loads > 0)


def minimal_total_load(topology, nodes: Sequence[int]) -> int:
    """``Σ γ_c`` of any minimal table: the sum of distances over ordered pairs of ``nodes``
    (on a torus with failures, hop distances over the links in service; on a graph, its
    hop distances)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if "offsets" not in topology.capabilities:          # hops over the links in service
        return int(sum(int(topology.hop_distances(int(s))[nodes].sum()) for s in nodes))
    coords = np.asarray([topology.coords(int(v)) for v in nodes], dtype=np.int64)
    total = 0
    for d, k in enumerate(topology.dims):
        diff = np.abs(coords[:, None, d] - coords[None, :, d])
        if topology.is_ring(d):
            diff = np.minimum(diff, k - diff)
        total += int(diff.sum())
    return total


def deviation(loads: np.ndarray, perfect: float, k: int = 4) -> float:
    """``σ(k, R) = (mean |perfect - γ_c|^k)^(1/k)`` over the given loads."""
    if len(loads) == 0:
        return 0.0
    return float(np.mean(np.abs(perfect - loads.astype(float)) ** k) ** (1.0 / k))


def metrics_from_loads(topology, nodes: Sequence[int], loads: np.ndarray, max_d: int,
                       k: int = 4) -> TableMetrics:
    """:class:`TableMetrics` from dense channel loads (what generators already hold)."""
    mask = counted_channels(topology, nodes, loads)
    counted = loads[mask]
    C = int(mask.sum())
    perfect = minimal_total_load(topology, nodes) / C if C else 0.0
    return TableMetrics(
        nodes=len(nodes), channels=C,
        max_load=int(counted.max()) if C else 0, min_load=int(counted.min()) if C else 0,
        perfect_load=float(perfect), sigma4=deviation(counted, perfect, k),
        max_d=int(max_d), total_load=int(loads.sum()))


def table_metrics(table: RoutingTable, k: int = 4) -> TableMetrics:
    """Channel-load metrics of a routing table on a torus.

    Parameters
    ----------
    table : RoutingTable
        Routes between the table's nodes (a subset of the torus or all of it).
    k : int
        Exponent of the deviation metric; the paper reports ``k = 4`` (field ``sigma4``).

    Returns
    -------
    TableMetrics
    """
    loads = channel_loads(table)
    nodes = set(table.nodes)
    max_d = max((len(r) for (s, t), r in table.routes.items() if s in nodes and t in nodes),
                default=0)
    return metrics_from_loads(table.topology, table.nodes, loads, max_d, k)
