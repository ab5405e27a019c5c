"""Valiant's routing and UGAL written once, over any topology's minimal routing.

The minimal routing is the topology's own shortest paths: at router ``r`` for target ``t``, the
lowest-numbered port whose neighbour is one hop nearer ``t`` (:class:`ShortestPaths`; on a
HyperX that is dimension order, on a fat tree up*/down* through the lowest up ports, on a
dragonfly a shortest path of the graph).  On it:

* ``vlb`` (Valiant load balancing) -- a random intermediate router (uniform over the
  routers, one draw), minimally to it on VC 0, then minimally to the destination on VC 1
  (Valiant and Brebner, 1981);
* ``ugal`` -- UGAL-L (Singh, 2005): at the source, the minimal route or Valiant's through a
  drawn router, whichever has the smaller source queue x hops; the minimal route on VC 0.

Deadlock freedom rests on each phase's minimal routing being acyclic on its own VC, and on the
phases' order: the build checks the channel-dependency graph and refuses a topology whose
shortest paths close a cycle.  On a torus (or mesh) the shortest paths are dimension order,
whose rings would close one: there every phase takes a dateline pair of VCs (Dally and
Seitz; :meth:`~icsim.routing.program.Program.with_datelines`), four VCs in all.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from icsim.routing.program import PAIR, Option, Phase, Program, TableTarget, Ugal
from icsim.routing.registry import ESCAPE, VC, Routing, register

#: the most routers these algorithms take (their tables hold a row per pair of routers)
MAX_ROUTERS = 1 << 13


class ShortestPaths:
    """Per (router, target) pair, ``r * N + t``: the lowest port one hop nearer the target
    (``port``; 0 at the target itself), its one-port ``mask`` and the hop count ``hops``."""

    def __init__(self, topology):
        n = topology.num_nodes
        if n > MAX_ROUTERS:
            raise ValueError(f"{n:,} routers: at most {MAX_ROUTERS:,} (tables of a row per "
                             f"pair of routers)")
        dist = np.asarray(topology.distances, dtype=np.int32)
        if (dist < 0).any():
            raise ValueError("the topology is not connected")
        nbr = topology.neighbor_array
        port = np.full((n, n), -1, dtype=np.int64)
        for p in range(topology.num_ports - 1, -1, -1):         # the lowest port wins
            v = nbr[:, p]
            ok = v >= 0
            nearer = np.zeros((n, n), dtype=bool)
            nearer[ok] = dist[v[ok]] == dist[ok] - 1
            port[nearer] = p
        np.fill_diagonal(port, 0)
        self.port = port.ravel()
        self.hops = dist.ravel().astype(np.int64)
        mask = np.left_shift(1, self.port)
        mask[np.arange(n) * (n + 1)] = 0
        self.mask = mask
        self.n = n

    def phase(self, vc: int, next_phase: int | None = None) -> Phase:
        return Phase(PAIR, ports=self.mask, escape=self.port, escape_vc=vc, next=next_phase)

    @cached_property
    def every_router(self) -> np.ndarray:
        """Valiant's targets: every router, from every source (N x N)."""
        return np.tile(np.arange(self.n, dtype=np.int64), (self.n, 1))

    @cached_property
    def other_routers(self) -> np.ndarray:
        """UGAL's Valiant targets: every router but the source (N x N - 1)."""
        n = self.n
        every = np.arange(n - 1, dtype=np.int64)
        return every[None, :] + (every[None, :] >= np.arange(n)[:, None])


class _Generic(Routing):
    acyclic = "all"
    shared = True
    vcs = (VC("phase0", ESCAPE), VC("phase1", ESCAPE))
    deroute_kinds = ("valiant",)

    @property
    def datelines(self) -> bool:
        """On a torus or mesh (coordinates), each phase on a dateline pair of VCs: the
        shortest paths there are dimension order, whose rings need the dateline."""
        return "coordinates" in self.topology.capabilities

    @cached_property
    def paths(self) -> ShortestPaths:
        return self.tables_of(ShortestPaths)


@register("vlb")
class ValiantAny(_Generic):
    """Valiant over the topology's shortest paths (module docstring): a random router, then
    the destination, each phase on its own VC."""

    def program(self) -> Program:
        s = self.paths
        return Program((s.phase(0, next_phase=1), s.phase(1)),
                       TableTarget(Option(phase=0, kind="valiant"), s.every_router))


class GenericUgalSettings(BaseModel):
    """``routing.ugal``: ``threshold`` -- packet-hops in the minimal route's favour."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    threshold: int = Field(0, ge=0, le=1 << 20, strict=True)


@register("ugal")
class UgalAny(_Generic):
    """UGAL-L over the topology's shortest paths (module docstring): the minimal route on
    VC 0, or Valiant's (VC 0 to the drawn router, VC 1 on), by source queue x hops."""

    Settings = GenericUgalSettings

    def program(self) -> Program:
        s = self.paths
        return Program((s.phase(0, next_phase=1), s.phase(1), s.phase(0)), Ugal(
            minimal=Option(phase=2), valiant=Option(phase=0, kind="valiant"),
            targets=s.other_routers, hops=s.hops, first=(s.port, s.port),
            threshold=self.settings.threshold))
