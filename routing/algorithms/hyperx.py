"""Routing on a HyperX (Ahn, Binkert, Davis, McLaren and Schreiber, SC 2009): dimension order
(DOR), minimal adaptive and DAL, the last two over a DOR escape.

Each dimension is a line of fully connected routers, so a minimal route takes one hop in each
dimension where source and destination differ.  DOR takes them in dimension order, over trunk
``t mod K`` of the ``K`` parallel links (spread by destination router).  Minimal adaptive
offers every link (every trunk) of every dimension still to be corrected, on an adaptive VC,
and the DOR hop on an escape VC (Duato's condition).

DAL (dimensionally adaptive, load balanced; Ahn et al.'s own routing) adds the deroutes: in a
dimension still to be corrected, a packet may go to any other router of the line, once per
dimension, and then must correct that dimension minimally.  A packet has not derouted in
dimension d exactly when its router still has its source's coordinate there (every hop in d
either corrects d or is d's one deroute), so the state lives in the tables: the deroute ports
are a second adaptive group, ANDed with the ports of the dimensions where router and source
agree (:class:`~icsim.routing.program.Phase`'s ``detour`` and ``detour_from``, rule 6).  The
choice between minimal and deroute: a packet deroutes when no minimal adaptive queue admits it
(they are full), and takes the DOR escape only when no deroute queue does either.  Where the
paper weighs a deroute's queue against the minimal one's, icsim's rule is the plainer
"minimal unless full": at low load every packet is minimal (zero-load latency is minimal
routing's), and under an adversarial pattern the minimal queues fill and the deroutes share
the load.  A packet takes at most 2 hops per dimension, so at most 2n in all (no livelock).

Deadlock freedom: DOR's channel-dependency graph is acyclic (dimensions in order, one hop
each); minimal adaptive and DAL rest on their escape channels being so, with the escape hop
offered at every router (Duato's condition for virtual cut-through; the build checks it:
:attr:`~icsim.routing.registry.Routing.acyclic`).  Ahn et al.'s DAL is made deadlock free the
same way, by a dimension-order escape VC.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from icsim.routing.program import PAIR, Phase, Program
from icsim.routing.registry import ADAPTIVE, ESCAPE, VC, Routing, register


class LineRoutes:
    """Per (router, target) pair, ``r * N + t``: the DOR port, the DOR mask, the mask of every
    minimal port (0 at ``t`` itself) and of every port of the dimensions where ``r`` and ``t``
    differ (``unaligned``; ``aligned`` is its complement among the router's ports: where the
    two agree)."""

    def __init__(self, hx):
        N, K = hx.num_nodes, hx.K
        xs = hx.coord_array
        self.port = np.zeros(N * N, dtype=np.int64)
        self.minimal = np.zeros(N * N, dtype=np.int64)
        self.unaligned = np.zeros(N * N, dtype=np.int64)
        t = np.arange(N)
        step = max(1, ROWS_AT_ONCE // N)
        for lo in range(0, N, step):                   # a block of routers r at a time
            r = np.arange(lo, min(lo + step, N))
            at = slice(lo * N, (lo + len(r)) * N)
            first = np.full((len(r), N), -1, dtype=np.int64)
            minimal = np.zeros((len(r), N), dtype=np.int64)
            unaligned = np.zeros((len(r), N), dtype=np.int64)
            for d in reversed(range(hx.n)):            # the first differing dimension wins
                x, y = xs[r, d][:, None], xs[None, :, d]
                differs = y != x
                base = hx.port_starts[d] + np.where(y < x, y, y - 1) * K
                first = np.where(differs, base + t % K, first)
                minimal |= np.where(differs, np.left_shift((1 << K) - 1, base), 0)
                line = _int64(((1 << (hx.dims[d] - 1) * K) - 1) << hx.port_starts[d])
                unaligned |= np.where(differs, line, 0)
            self.port[at] = np.maximum(first, 0).ravel()
            self.minimal[at] = minimal.ravel()
            self.unaligned[at] = unaligned.ravel()
        self.dor = np.where(self.minimal != 0, np.left_shift(1, self.port), 0)
        every = (1 << hx.num_ports) - 1 if hx.num_ports < 64 else -1
        self.aligned = ~self.unaligned & every


#: (router, target) pairs :class:`LineRoutes` works on at once (bounds its temporaries)
ROWS_AT_ONCE = 1 << 20


def _int64(mask: int) -> int:
    """A port mask of up to 64 bits as the int64 of the same bits."""
    return mask - (1 << 64) if mask >= 1 << 63 else mask


class _Lines(Routing):
    requires = frozenset({"lines"})
    shared = True

    @cached_property
    def routes(self) -> LineRoutes:
        return self.tables_of(LineRoutes)


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


@register("hx_dal")
class HyperXDAL(_Lines):
    """DAL on a HyperX over a DOR escape VC (module docstring): minimal ports first, then
    one deroute per dimension still to be corrected, then the escape."""

    vcs = (VC("adaptive", ADAPTIVE), VC("escape", ESCAPE, priority=-1))
    acyclic = "escape"
    deroute_kinds = ("deroute",)

    def program(self) -> Program:
        r = self.routes
        return Program((Phase(PAIR, ports=r.minimal, adaptive_vc=0, escape=r.port,
                              escape_vc=1, detour=r.unaligned & ~r.minimal,
                              detour_from=r.aligned, detour_kind="deroute"),))
