"""The measured packets of a run, summarised as they are consumed, the same in both engines.

A run's record needs of its measured packets their latencies' mean, extremes, median, 99th
percentile and histogram, their mean hops, network latency and dilation, their derouting and,
per terminal, what it sent and received.  None of that needs the packets themselves: as each
is consumed, an engine keeps its latency (:class:`~icsim.simulator.latencies.Latencies`, a byte
or two each), adds to sums and counts the pair (hops, minimal distance) it made, so that memory
does not grow with the run's length but for those bytes, and every figure is the one all the
packets would give (the dilation's sum exactly rounded, as ``math.fsum`` of each packet's
``hops / d - 1``).

The minimal distance between routers a and b is ``table[first[a] + second[b]]``, as the
topology gives it (``topology.distance_tables()``: on a torus or mesh a table by the
coordinates' difference, the routing programs' relative index; elsewhere its table of router
pairs).

>>> dilation({(2, 2): 3, (4, 2): 1, (0, 0): 1}, 5)      # three minimal, one twice as long
1.2
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np


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
