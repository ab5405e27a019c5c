"""Routing on a HyperX (Ahn, Binkert, Davis, McLaren and Schreiber, SC 2009): dimension order
(DOR) and minimal adaptive over a DOR escape.

Each dimension is a line of fully connected routers, so a minimal route takes one hop in each
dimension where source and destination differ.  DOR takes them in dimension order, over trunk
``t mod K`` of the ``K`` parallel links (spread by destination router).  Minimal adaptive
offers every link (every trunk) of every dimension still to be corrected, on an adaptive VC,
and the DOR hop on an escape VC (Duato's condition).

Deadlock freedom: DOR's channel-dependency graph is acyclic (dimensions in order, one hop
each); minimal adaptive rests on its escape channels being so (the build checks both:
:attr:`~icsim.routing.registry.Routing.acyclic`).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from icsim.routing.program import PAIR, Phase, Program
from icsim.routing.registry import ADAPTIVE, ESCAPE, VC, Routing, register


class LineRoutes:
    """Per (router, target) pair, ``r * N + t``: the DOR port, the DOR mask and the mask of
    every minimal port (0 at ``t`` itself)."""

    def __init__(self, hx):
        N, K = hx.num_nodes, hx.K
        xs = hx.coord_array
        self.port = np.zeros(N * N, dtype=np.int64)
        self.minimal = np.zeros(N * N, dtype=np.int64)
        t = np.arange(N)
        for r in range(N):
            row = r * N + t
            first = np.full(N, -1, dtype=np.int64)
            for d in reversed(range(hx.n)):             # the first differing dimension wins
                x, y = xs[r, d], xs[:, d]
                differs = y != x
                base = hx.port_starts[d] + np.where(y < x, y, y - 1) * K
                first = np.where(differs, base + t % K, first)
                trunks = ((1 << K) - 1) << np.where(differs, base, 0)
                self.minimal[row] |= np.where(differs, trunks, 0)
            self.port[row] = np.maximum(first, 0)
        self.dor = np.where(self.minimal != 0, np.left_shift(1, self.port), 0)


class _Lines(Routing):
    requires = frozenset({"lines"})

    @cached_property
    def routes(self) -> LineRoutes:
        return LineRoutes(self.topology)


@register("hx_dor")
class HyperXDimensionOrder(_Lines):
    """DOR on a HyperX (module docstring), one VC."""

    vcs = (VC("escape", ESCAPE),)
    acyclic = "all"

    def program(self) -> Program:
        r = self.routes
        return Program((Phase(PAIR, ports=r.dor, escape=r.port, escape_vc=0),))


@register("hx_adaptive")
class HyperXMinimalAdaptive(_Lines):
    """Minimal adaptive on a HyperX over a DOR escape VC (module docstring)."""

    vcs = (VC("adaptive", ADAPTIVE), VC("escape", ESCAPE, priority=-1))
    acyclic = "escape"

    def program(self) -> Program:
        r = self.routes
        return Program((Phase(PAIR, ports=r.minimal, adaptive_vc=0, escape=r.port,
                              escape_vc=1),))
