"""Time and size units shared by the model, routing, traffic and every engine.

Configs and results are in physical units (bytes, Gb/s, ns, µs).  Engines count time in integer
**picoseconds**, so that clock edges and link times compare exactly (204.8 ns is not a float
multiple of 0.8 ns).  A router decides only on edges of its clock; :func:`edge` is the one place
where a time is rounded up to an edge.

>>> ps(204.8), serialisation_ps(512, 20.0), edge(204_801, 800)
(204800, 204800, 205600)
"""

from __future__ import annotations

import math

PS_PER_NS = 1000
#: the largest time an engine represents: about 106 days of simulated time
MAX_PS = 2 ** 63 // 1000


class UnitError(ValueError):
    """A time or rate the model cannot represent (infinite, NaN, or overflowing)."""


def ps(ns: float) -> int:
    """Nanoseconds -> integer picoseconds (the engines' clock)."""
    if not math.isfinite(ns) or abs(ns) * PS_PER_NS > MAX_PS:
        raise UnitError(f"{ns} ns is not a time the model can represent")
    return int(round(ns * PS_PER_NS))


def serialisation_ps(size_bytes: int, bandwidth_gbps: float) -> int:
    """Time to put ``size_bytes`` on a ``bandwidth_gbps`` channel, in ps (Gb/s = bits per ns)."""
    return ps(size_bytes * 8 / bandwidth_gbps)


def edge(t: int, cycle: int) -> int:
    """The first clock edge at or after ``t`` (edges at every multiple of ``cycle`` ps)."""
    r = t % cycle
    return t if r == 0 else t - r + cycle
