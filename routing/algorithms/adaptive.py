"""Adaptive routing on tori: ABR, POR and OFR (the OutFlank paper, §2–§3; docs/model.md §5).

All three are minimal-adaptive routers over a bubble escape network (the Adaptive Bubble Router):
at each router a packet may take the adaptive queue of any of its allowed directions (the router
picks the one with most free slots), and falls back to the dimension-order escape queue under
the bubble rule; an escape packet may return to adaptive queues at the next router.  They differ
in *which directions are allowed*:

* ABR — every minimal direction towards the destination;
* POR — at injection the source picks an orthant (a sign per dimension, possibly the long way
  round); the packet then moves only in those directions, escape in dimension order along them;
* OFR — at injection the source may pick an intermediate destination (IDN); the packet is routed
  ABR-style to the IDN on adaptive + ``escape1`` queues, then to the destination on adaptive +
  ``escape2`` queues.  Entering ``escape2`` at the IDN counts as an injection (two free slots).

Candidate groups depend only on the bitmask of allowed ports, so they are precomputed per mask:
group 1 = the adaptive queues of the allowed ports, group 2 = the escape queue of the lowest
allowed port (dimension order; + before − at a k/2 tie).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from icsim.routing.algorithms.dor import require_torus
from icsim.routing.outflank import PROFIT_CODES, OrthantPlanner, OutflankPlanner, orthant_select
from icsim.routing.registry import ADAPTIVE, ESCAPE, VC, Groups, Routing, register


class PorSettings(BaseModel):
    """``routing.por``: the orthant profit (eq. 15-16) and when derouting is allowed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    eta: float = Field(1.0, ge=0, allow_inf_nan=False)
    profit: Literal["paper", "reference"] = "paper"
    min_deroute_distance: int = Field(1, ge=1)


class OfrSettings(BaseModel):
    """``routing.ofr``: Δ, the profit's η, the profit and candidate-set variants (``paper``:
    eq. 1-3, 9-16 as printed; ``reference``: what the paper's simulator coded) and the shortest
    distance at which a packet may be derouted."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    delta: int = Field(2, ge=1)
    eta: float = Field(2.0, ge=0, allow_inf_nan=False)
    profit: Literal["paper", "reference"] = "paper"
    candidates: Literal["paper", "reference"] = "paper"
    min_deroute_distance: int = Field(1, ge=1)


def mask_groups(num_ports: int, escape_vc: int) -> list[Groups | None]:
    """For every port bitmask, the (adaptive group, escape group) candidate tuple."""
    table: list[Groups | None] = [None] * (1 << num_ports)
    for mask in range(1, 1 << num_ports):
        ports = [p for p in range(num_ports) if mask >> p & 1]
        table[mask] = (tuple((p, 0) for p in ports), ((ports[0], escape_vc),))
    return table


@register("abr")
class AdaptiveBubble(Routing):
    """Adaptive Bubble Router (Puente et al.): one adaptive and one escape VC per direction.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.packet import Packet
    >>> from icsim.model.config import Config
    >>> abr = AdaptiveBubble(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
    >>> abr.candidates(0, Packet(0, src=0, dst=5, birth=0, age=0, measured=False))
    (((0, 0), (2, 0)), ((0, 1),))
    """

    vcs = (VC("adaptive", ADAPTIVE, priority=1), VC("escape", ESCAPE, bubble=True, priority=0))

    def __init__(self, topology: Any, config: Any, settings: Any = None):
        super().__init__(topology, config, settings)
        both = config.router.tie_break != "ordered"
        self._masks = topology.minimal_mask_table(both_on_tie=both)
        self._codes = topology.relative_codes
        self._base = topology.relative_base
        self._groups = mask_groups(topology.num_ports, escape_vc=1)

    @classmethod
    def check_config(cls, topology: Any, config: Any, settings: Any) -> None:
        require_torus(topology, cls.name)

    def compiled(self) -> dict | None:
        masks = self._masks
        table = (np.frombuffer(masks, dtype=np.uint8) if isinstance(masks, bytes)
                 else np.frombuffer(masks, dtype=np.uint64))
        return {"kind": 1, "masks": table.astype(np.int64)}

    def candidates(self, node: int, packet) -> Groups:
        codes = self._codes
        mask = self._masks[codes[packet.dst] - codes[node] + self._base]
        if not mask:
            return self.eject_groups
        return self._groups[mask]


class _Draws:
    """``integers(n)`` over the router's uniform tie-break stream (what the planners expect)."""

    __slots__ = ("rand",)

    def __init__(self, rand):
        self.rand = rand

    def integers(self, n: int) -> int:
        return int(self.rand() * n)


def require_rings(topology: Any, algorithm: str) -> None:
    require_torus(topology, algorithm)
    lines = [d for d in range(topology.n) if not topology.is_ring(d)]
    if lines:
        raise ValueError(f"{algorithm} deroutes round rings: every dimension must be a ring of "
                         f"at least 3 nodes (dimensions {lines} of {topology.describe()} are not)")


@register("por")
class PickOrthant(AdaptiveBubble):
    """Pick-Orthant Routing (the GAL/GOAL/CQR family, as in the OutFlank paper): at injection
    the source scores every orthant with the profit of eq. (15)–(16) (η = 1.0 by default) and
    either routes ABR-style (minimal) or pins the packet to one orthant, possibly the long way
    round; adaptive moves and the dimension-order escape then follow the orthant's signs."""

    Settings = PorSettings
    has_inject = True

    def __init__(self, topology: Any, config: Any, settings: Any = None):
        super().__init__(topology, config, settings)
        st = self.settings
        both = config.router.tie_break != "ordered"
        self._planner = OrthantPlanner(topology, both_on_tie=both)
        self._kw = dict(capacity=config.router.queue_packets, eta=st.eta, profit=st.profit,
                        min_deroute_distance=st.min_deroute_distance)
        self._even = sum(1 << (2 * d) for d in range(topology.n))
        self._select: dict[tuple[int, ...], int] = {}

    @classmethod
    def check_config(cls, topology: Any, config: Any, settings: Any) -> None:
        require_rings(topology, cls.name)

    def compiled(self) -> dict | None:
        """ABR's masks and the planner's every plan (:meth:`OrthantPlanner.export`)."""
        st = self.settings
        return {**super().compiled(), "kind": 2, "plans": self._planner.export(),
                "eta": st.eta, "profit": PROFIT_CODES[st.profit],
                "min_deroute_distance": st.min_deroute_distance}

    def inject(self, node: int, packet, used, rand) -> None:
        signs, derouted = self._planner.choose_orthant(node, packet.dst, used,
                                                       rng=_Draws(rand), **self._kw)
        if signs is None:
            packet.state = None
            packet.deroute = None
            return
        sel = self._select.get(signs)
        if sel is None:
            sel = self._select[signs] = orthant_select(signs)
        packet.state = sel
        packet.deroute = "orthant" if derouted else None

    def candidates(self, node: int, packet) -> Groups:
        codes = self._codes
        mask = self._masks[codes[packet.dst] - codes[node] + self._base]
        if not mask:
            return self.eject_groups
        sel = packet.state             # the orthant's ports as a bitmask; None: minimal
        if sel is None:
            return self._groups[mask]
        differ = (mask | mask >> 1) & self._even      # dimensions still to travel
        return self._groups[(differ | differ << 1) & sel]


@register("ofr")
class OutFlank(Routing):
    """OutFlank Routing (Versaci, ICPADS 2013): at injection the source may give the packet one
    intermediate destination (an outflank or a wraparound IDN) when its profit (eq. 15, η = 2.0
    by default) beats the minimal route's; the packet goes ABR-style to the IDN on adaptive +
    ``escape1`` queues, then to the destination on adaptive + ``escape2`` queues.  The switch
    to ``escape2`` at the IDN counts as an injection (bubble rule)."""

    vcs = (VC("adaptive", ADAPTIVE, priority=2), VC("escape1", ESCAPE, bubble=True, priority=1),
           VC("escape2", ESCAPE, bubble=True, priority=0))
    Settings = OfrSettings
    has_inject = True
    has_admit = True

    def __init__(self, topology: Any, config: Any, settings: Any = None):
        super().__init__(topology, config, settings)
        st = self.settings
        both = config.router.tie_break != "ordered"
        self._masks = topology.minimal_mask_table(both_on_tie=both)
        self._codes = topology.relative_codes
        self._base = topology.relative_base
        self._to_idn = mask_groups(topology.num_ports, escape_vc=1)
        self._to_dst = mask_groups(topology.num_ports, escape_vc=2)
        self._planner = OutflankPlanner(topology, delta=st.delta, variant=st.candidates,
                                        both_on_tie=both)
        self._kw = dict(capacity=config.router.queue_packets, eta=st.eta, profit=st.profit,
                        min_deroute_distance=st.min_deroute_distance)

    @classmethod
    def check_config(cls, topology: Any, config: Any, settings: Any) -> None:
        require_rings(topology, cls.name)

    def compiled(self) -> dict | None:
        """The minimal masks and the planner's every plan (:meth:`OutflankPlanner.export`)."""
        st = self.settings
        masks = self._masks
        table = (np.frombuffer(masks, dtype=np.uint8) if isinstance(masks, bytes)
                 else np.frombuffer(masks, dtype=np.uint64))
        return {"kind": 3, "masks": table.astype(np.int64), "plans": self._planner.export(),
                "eta": st.eta, "profit": PROFIT_CODES[st.profit],
                "min_deroute_distance": st.min_deroute_distance}

    def inject(self, node: int, packet, used, rand) -> None:
        idn, kind = self._planner.choose_idn(node, packet.dst, used, rng=_Draws(rand),
                                             **self._kw)
        if idn is None:
            packet.state = -1
            packet.deroute = None
        else:
            packet.state = idn
            packet.deroute = kind

    def candidates(self, node: int, packet) -> Groups:
        idn = packet.state             # the intermediate destination still ahead, -1: none
        codes = self._codes
        if idn >= 0 and idn != node:
            return self._to_idn[self._masks[codes[idn] - codes[node] + self._base]]
        mask = self._masks[codes[packet.dst] - codes[node] + self._base]
        if not mask:
            return self.eject_groups
        return self._to_dst[mask]

    def admitted(self, node: int, packet, port: int, vc: int) -> None:
        if packet.state == node:
            packet.state = -1             # IDN reached: on to the final destination

    def describe(self, packet) -> str:
        return f"via IDN {packet.state}" if packet.state is not None and packet.state >= 0 else ""
