"""The measured packets of a run, summarised as they are consumed, the same in both engines.

A run's record needs of its measured packets their latencies' mean, extremes, median, 99th
percentile and histogram, their mean hops, network latency and dilation, their derouting and,
per terminal, what it sent and received.  None of that needs the packets themselves: as each
is consumed, an engine keeps its latency (:class:`~icsim.simulator.latencies.Latencies`, a byte
or two each), adds to sums and counts the pair (hops, minimal distance) it made, so that memory
does not grow with the run's length but for those bytes, and every figure is the one all the
packets would give (the dilation's sum exactly rounded, as ``math.fsum`` of each packet's
``hops / d - 1``).

The minimal distance between routers a and b is ``table[first[a] + second[b]]``
(:func:`distance_tables`): on a torus or mesh with nothing failed a table by the coordinates'
difference (the routing programs' relative index), elsewhere the topology's table of router
pairs.

>>> from icsim.model.topology import Torus
>>> first, second, table = distance_tables(Torus((4, 4)))
>>> int(table[first[0] + second[5]]), int(table[first[0] + second[10]]), len(table)
(2, 4, 64)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np


def distance_tables(topology: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, second, table)``: router a to router b is ``table[first[a] + second[b]]``
    hops at least (int64, int64, int32).  Tori and meshes with nothing failed (the ``offsets``
    capability): by the coordinates' difference, ``prod 2 k_d`` entries; any other topology:
    its table of router pairs (``topology.distances``, N^2 entries, made once)."""
    if "offsets" in topology.capabilities:
        codes = np.asarray(topology.relative_codes, dtype=np.int64)
        table = np.abs(topology.relative_offsets()).sum(axis=1)
        return topology.relative_base - codes, codes, table.astype(np.int32)
    n = topology.num_nodes
    if hasattr(topology, "distances"):
        table = np.asarray(topology.distances, dtype=np.int32).ravel()
    else:
        every = np.arange(n, dtype=np.int64)
        table = topology.distances_between(np.repeat(every, n), np.tile(every, n))
        table = table.astype(np.int32)
    every = np.arange(n, dtype=np.int64)
    return every * n, every, table


def dilation(pairs: dict[tuple[int, int], int], n: int) -> float:
    """Hops over the minimal distance, averaged over ``n`` packets, from the count of each
    (hops, distance) pair they made (a packet to itself counts 1): ``1 + sum(hops / d - 1) /
    n``, each packet's term as a float, the sum exactly rounded whatever the order (as
    ``math.fsum`` of them)."""
    total = sum((Fraction(float(np.float64(h) / np.float64(d) - 1.0)) * c
                 for (h, d), c in pairs.items() if d > 0), Fraction(0))
    return 1.0 + float(total) / n


def pair_counts(counts: np.ndarray, width: int, extra: np.ndarray | None = None
                ) -> dict[tuple[int, int], int]:
    """The (hops, distance) counts of an engine's array (``counts[h * width + d]``) and its
    pairs beyond it (``extra``: rows of (hops, distance)) as a dict."""
    out: dict[tuple[int, int], int] = {}
    for key in np.nonzero(counts)[0].tolist():
        pair = divmod(key, width)
        out[pair] = int(counts[key])
    if extra is not None and len(extra):
        keys, many = np.unique(extra, axis=0, return_counts=True)
        for (h, d), c in zip(keys.tolist(), many.tolist()):
            out[(h, d)] = out.get((h, d), 0) + c
    return out
