"""Routing on a dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): minimal (MIN), Valiant's
random intermediate group (VAL), and UGAL's choice between them at the source with local or
global queue information (UGAL-L, UGAL-G; Jiang, Kim and Dally, ISCA 2009).

Routes
------
A minimal route from router ``r`` to router ``t`` of another group crosses one global link:
``r``'s own first global link to ``t``'s group if it has one, else the group's first link to it
(lowest port of the group's global ports, :attr:`~icsim.model.topology.Dragonfly.gateway_table`)
after a local hop to that gateway; then, unless it lands on ``t``, a local hop to ``t``: at
most local, global, local.  Every router of a group uses the same link to a given group, so the
route is the same whichever router of it a packet starts from.  With several links between two
groups (``g < a h + 1``) only the first carries minimal traffic (said here: the papers'
balanced networks have one).

Valiant's route goes minimally to a random other group -- to the router its minimal route
enters that group by (the *entry* router: drawn uniformly over the ``g - 1`` other groups, one
draw) -- and on minimally to the destination.

Deadlock freedom
----------------
VC classes per hop, the papers' discipline: MIN takes VC 0 in the source group and on the
global link, VC 1 in the destination group (local 0 < global 0 < local 1); Valiant's second
phase is one class up (local 0 < global 0 < local 1 < global 1 < local 2).  UGAL runs both on
the same three VCs.  The build checks that the channel-dependency graph of every route is
acyclic (:attr:`~icsim.routing.registry.Routing.acyclic`); no bubble rule.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from icsim.routing.program import PAIR, Option, Phase, Program, Reroute, TableTarget, Ugal
from icsim.routing.registry import ESCAPE, VC, Routing, register

#: VC classes: one per hop class (before, between and after the global links)
HOP_VCS = (VC("hop0", ESCAPE), VC("hop1", ESCAPE), VC("hop2", ESCAPE))


def _local(index: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The local port from the router of index ``index`` in its group to the one of index
    ``other`` (``!=``): the other routers in ascending order."""
    return np.where(other < index, other, other - 1)


class MinimalRoutes:
    """The minimal routes of a dragonfly as tables over (router, target) pairs, ``r * N + t``
    (module docstring): the port, the hop count, the entry router into each group, and the
    channel each route crosses between groups (UGAL-G's probe)."""

    def __init__(self, topology):
        df = self.topology = topology
        a, n = df.routers_per_group, df.num_nodes
        g = df.num_groups
        self.n = n
        nbr = df.neighbor_array
        rows = np.arange(n)
        group, index = rows // a, rows % a
        own = np.full((n, g), -1, dtype=np.int64)             # a router's own first link
        for port in range(df.num_ports - 1, a - 2, -1):       # global ports, lowest wins
            v = nbr[:, port]
            ok = v >= 0
            own[np.nonzero(ok)[0], v[ok] // a] = port
        # per router and target group (n, g): a route to another group starts on the
        # router's own first link to it, else on a local hop to the group's first gateway
        first = df.gateway_table[group, :, 0, :]              # (n, g, 2)
        gw, gw_port = first[..., 0], first[..., 1]            # -1 for the own group
        mine = own >= 0
        port = np.where(mine, own, _local(index[:, None], np.where(gw >= 0, gw, rows[:, None])
                                          % a))
        lands = np.where(mine, nbr[rows[:, None], np.maximum(own, 0)],
                         nbr[np.maximum(gw, 0), np.maximum(gw_port, 0)])
        P = df.num_ports + df.terminals_per_router           # port ids as the engines count
        probe = np.where(mine, rows[:, None] * P + np.maximum(own, 0), gw * P + gw_port)
        via = np.where(mine, -1, gw)
        # the same per (router, target): each group's a targets alike, but in the own group
        # (a local hop) and the target a route lands on (one hop less)
        inside = _local(index[:, None], np.arange(a)[None, :])          # (n, a)
        self.same = (group[:, None] == group[None, :]).ravel()
        self.port = self._by_target(port, inside, a)
        self.port[rows * (n + 1)] = 0
        self.via = self._by_target(via, -1, a)
        self.is_global = self.port >= a - 1
        hops = (np.where(mine, 1, 2)[:, :, None]
                + (lands[:, :, None] != rows.reshape(1, g, a))).reshape(n, n)
        hops.reshape(n, g, a)[rows, group] = 1
        hops = hops.ravel()
        hops[rows * (n + 1)] = 0
        self.hops = hops
        self.probe = self._by_target(probe, rows[:, None] * P + inside, a)
        self.probe[rows * (n + 1)] = rows * P
        # the router the route enters each other group by (g - 1 columns per router)
        others = np.array([[j for j in range(g) if j != i] for i in range(g)], dtype=np.int64)
        self.entry = lands[rows[:, None], others[group]]
        self._hop_vcs: dict[tuple[int, int, int], np.ndarray] = {}

    @staticmethod
    def _by_target(per_group: np.ndarray, own_group, a: int) -> np.ndarray:
        """A per (router, target group) table (n, g) as per (router, target), ``r * N + t``,
        with ``own_group`` (per router and index, or one value) for the router's own group."""
        n, g = per_group.shape
        out = np.repeat(per_group.astype(np.int64), a, axis=1)
        out.reshape(n, g, a)[np.arange(n), np.arange(n) // a] = own_group
        return out.ravel()

    @cached_property
    def mask(self) -> np.ndarray:
        """The port as a one-port mask (0 at the diagonal)."""
        out = np.left_shift(1, self.port)
        out[np.arange(self.n) * (self.n + 1)] = 0
        return out

    def phase(self, vc_before: int, vc_after: int, next_phase: int | None = None,
              reachable_same_group: bool = True, vc_global: int | None = None,
              reached: np.ndarray | None = None, reroute=None) -> Phase:
        """A phase along these routes: VC ``vc_before`` in the source group (and on the
        global link, unless ``vc_global`` gives it its own), ``vc_after`` in the target's
        group.  ``reachable_same_group`` False: a phase whose targets are in other groups
        (Valiant's first), whose same-group states no packet reaches -- their masks are left
        empty so that the dependency check does not count them; ``reached`` (a boolean per
        state) leaves only those."""
        mask = self.mask
        if reached is not None or not reachable_same_group:
            keep = np.ones(len(mask), dtype=bool) if reached is None else reached
            if not reachable_same_group:
                keep = keep & ~self.same
            mask = np.where(keep, mask, 0)
        glob = vc_before if vc_global is None else vc_global
        return Phase(PAIR, ports=mask, escape=self.port, escape_vc=vc_before,
                     escape_vcs=self.hop_vcs(vc_before, glob, vc_after), next=next_phase,
                     reroute=reroute)

    def hop_vcs(self, local_before: int, global_: int, local_after: int) -> np.ndarray:
        """Per (router, target): the VC of a route's hop by its class -- local in the source
        group, global, local in the target's group -- made once for each three."""
        key = (local_before, global_, local_after)
        if key not in self._hop_vcs:
            self._hop_vcs[key] = np.array(key, dtype=np.int64)[self.hop_class]
        return self._hop_vcs[key]

    @cached_property
    def hop_class(self) -> np.ndarray:
        """Per (router, target): the class of the route's first hop, 0 local in the source
        group, 1 global, 2 local in the target's group (int8)."""
        return np.where(self.same, 2, self.is_global.astype(np.int8)).astype(np.int8)


class _Dragonfly(Routing):
    requires = frozenset({"groups"})
    acyclic = "all"
    shared = True

    @cached_property
    def routes(self) -> MinimalRoutes:
        return self.tables_of(MinimalRoutes)

    def valiant_phases(self) -> tuple[Phase, Phase]:
        """Valiant's two phases: to the entry router of the drawn group on VC 0 (phase 0), then
        on to the destination one class up (phase 1)."""
        routes = self.routes
        return (routes.phase(0, 0, next_phase=1, reachable_same_group=False),
                routes.phase(1, 2))


@register("dfly_min")
class DragonflyMinimal(_Dragonfly):
    """MIN: the minimal route (at most local, global, local; module docstring) on VC 0 up to
    and across the global link, VC 1 after it."""

    vcs = HOP_VCS[:2]

    def program(self) -> Program:
        return Program((self.routes.phase(0, 1),))


@register("dfly_val")
class DragonflyValiant(_Dragonfly):
    """VAL: minimally to the entry router of a random other group (one draw), then minimally
    to the destination (module docstring); VCs 0, 1, 2 by hop class."""

    vcs = HOP_VCS
    deroute_kinds = ("valiant",)

    def program(self) -> Program:
        return Program(self.valiant_phases(),
                       TableTarget(Option(phase=0, kind="valiant"), self.routes.entry))


class UgalSettings(BaseModel):
    """``routing.ugal_l`` / ``routing.ugal_g`` / ``routing.par``: how UGAL chooses at the
    source (Kim et al. 2008, §4; BookSim2's ``ugal_dragonflynew``).

    * ``threshold`` -- the bias: the minimal route is taken while its weighted queue is at
      most Valiant's plus this many packets (0: the papers' plain comparison; a positive
      value favours the minimal route; BookSim2's dragonfly uses 30 flits);
    * ``weights`` -- what each route's queue is multiplied by: ``"hops"``, its hop count
      (source to destination; source to the Valiant target and on); ``"one_two"``, 1 for the
      minimal route and 2 for Valiant's, whatever their lengths (BookSim2's ``q_min <= 2
      q_nonmin + bias``);
    * ``decide`` -- ``"once"`` (the default): the Valiant target drawn and the queues read at
      the packet's first injection attempt only, and the packet waits for the queue it chose,
      as a router computes a packet's route once, when it reaches the head of its input
      buffer (Kim et al. 2008; Jiang et al. 2009; BookSim2's ``ugal_dragonflynew``);
      ``"every_attempt"`` (icsim's rule before December 2026): drawn and read again at every
      attempt until the router takes the packet, so a packet whose chosen queue is full goes
      the other way as soon as that one has room -- an adaptivity at injection no router of
      the papers has, which hides the head-of-line blocking that makes UGAL-L's throughput
      fall past saturation (docs/model.md §5.1).  PAR's second choice at the gateway is read
      at every attempt either way.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    threshold: int = Field(0, ge=0, le=1 << 20, strict=True)
    weights: Literal["hops", "one_two"] = "hops"
    decide: Literal["once", "every_attempt"] = "once"


class _Ugal(_Dragonfly):
    vcs = HOP_VCS
    deroute_kinds = ("valiant",)
    Settings = UgalSettings
    global_queues = False

    def decision(self, **rest) -> Ugal:
        """The program's UGAL rule as the settings say (:class:`UgalSettings`), with
        ``rest`` (its options and PAR's first target)."""
        routes, s = self.routes, self.settings
        hops = routes.hops if s.weights == "hops" else np.ones_like(routes.hops)
        return Ugal(targets=routes.entry, hops=hops, first=(routes.port, routes.port),
                    threshold=s.threshold, once=s.decide == "once", **rest)

    def program(self) -> Program:
        routes = self.routes
        phases = (*self.valiant_phases(), routes.phase(0, 1))
        probe = (routes.probe, routes.probe) if self.global_queues else None
        return Program(phases, self.decision(
            minimal=Option(phase=2), valiant=Option(phase=0, kind="valiant"),
            probe=probe, probe_vc=0))


@register("par")
class ProgressiveAdaptive(_Ugal):
    """PAR (Jiang, Kim and Dally, ISCA 2009): UGAL-L at the source; a packet that takes the
    minimal route by a local hop to its group's gateway has the choice made again there, with
    the gateway's queues, and may still take Valiant's way (counted ``progressive``).  VC
    classes, in order: local 0 (the hop to the gateway), local 1 (a diverted packet's hop to
    its new gateway), global 0, local 2, global 1, local 3 -- four VCs, checked acyclic."""

    vcs = (*HOP_VCS, VC("hop3", ESCAPE))
    deroute_kinds = ("valiant", "progressive")

    def program(self) -> Program:
        r = self.routes
        no_local_in_source = r.same | r.is_global          # at a gateway: global, or home
        phases = (
            r.phase(0, 0, next_phase=1, reachable_same_group=False),        # 0: VAL, to entry
            r.phase(2, 3, vc_global=1),                                      # 1: VAL, onwards
            r.phase(0, 0, next_phase=3, reached=r.same),                     # 2: to the gateway
            r.phase(0, 2, reached=no_local_in_source,                        # 3: MIN onwards
                    reroute=Reroute(Option(phase=4, kind="progressive"))),
            r.phase(1, 1, next_phase=1, reachable_same_group=False, vc_global=0))  # 4: diverted
        return Program(phases, self.decision(
            minimal=Option(phase=3), valiant=Option(phase=0, kind="valiant"),
            minimal_via=r.via, minimal_via_phase=2))


@register("ugal_l")
class UgalLocal(_Ugal):
    """UGAL-L: at injection, the minimal route or Valiant's through a random other group
    (one draw), whichever has the smaller queue x hops at the source: the occupancy of the
    source's VC-0 queue of each route's first port (Kim et al. 2008, §4); decided once, at the
    packet's first attempt, by default (:class:`UgalSettings`: ``decide``, ``weights`` and the
    bias ``threshold`` give BookSim2's q_min <= 2 q_nonmin + 30 and icsim's earlier rule)."""


@register("ugal_g")
class UgalGlobal(_Ugal):
    """UGAL-G: as UGAL-L, but the queue compared is that of each route's global channel
    (VC 0 at its gateway router), wherever it is: the ideal global information of Kim et al.
    2008 and Jiang et al. 2009 (a packet within its own group compares its first hop)."""

    global_queues = True
