"""Adaptive routing on tori: ABR, POR and OFR (the OutFlank paper, §2–§3; docs/model.md §5),
GOAL (POR's orthant drawn as RLB draws it) and CQR (the orthant chosen per dimension by the
source's queues).

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

Each is a routing program (:mod:`icsim.routing.program`) over the torus's relative-offset
tables: group 1 = the adaptive queues of the allowed ports, group 2 = the escape queue of the
lowest allowed port (dimension order; + before − at a k/2 tie).  ABR is one phase; POR a
minimal phase and an orthant phase (the differing dimensions' ports filtered by the orthant's
ports, ``sel``); OFR a phase to the IDN on ``escape1`` and one to the destination on
``escape2``.  POR's and OFR's injection decisions are :class:`~icsim.routing.program.Profit`
decisions over their planners' plans (:mod:`icsim.routing.outflank`).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from icsim.routing.outflank import (IdnPlans, OrthantPlanner, OrthantPlans, OutflankPlanner,
                                   orthant_select)
from icsim.routing.program import (OFFSET, Option, OptionPlans, Phase, Profit, Program,
                                   QueueQuadrant, RandomInBox)
from icsim.routing.registry import ADAPTIVE, ESCAPE, VC, Routing, register


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


def mask_array(topology, both_on_tie: bool) -> np.ndarray:
    """:meth:`~icsim.model.topology.Torus.minimal_mask_table` as int64."""
    masks = topology.minimal_mask_table(both_on_tie=both_on_tie)
    dtype = np.uint8 if isinstance(masks, bytes) else np.uint64
    return np.frombuffer(masks, dtype=dtype).astype(np.int64)


def both_dimension_ports(masks: np.ndarray, n: int) -> np.ndarray:
    """For each mask of minimal ports, both ports of every dimension it moves in (what an
    orthant's ports are filtered from: the dimensions still to travel)."""
    even = sum(1 << (2 * d) for d in range(n))
    differ = (masks | masks >> 1) & even
    return differ | differ << 1


def _common(x) -> dict:
    """The plan arrays an :class:`OptionPlans` shares with a planner's export."""
    return {name: getattr(x, name) for name in OptionPlans._fields if hasattr(x, name)}


def ofr_option_plans(x: IdnPlans) -> OptionPlans:
    """OFR's exported plans as profit options: an option per IDN candidate (a target at the
    candidate's displacement, phase 0, its kind 1 = outflank or 2 = wraparound); the OIDN rows
    are the first stage of the reference search, the WIDN rows the second (their ``row_j``
    made plan-local: a WIDN's counted after the plan's OIDNs)."""
    rows_per_plan = np.diff(x.order_ptr)
    plan_of_row = np.repeat(np.arange(len(x.d)), rows_per_plan)
    widn = np.arange(len(x.row_j)) >= np.repeat(x.widn_order, rows_per_plan)
    row_j = x.row_j.astype(np.int32) + np.where(widn, x.n_oidn[plan_of_row], 0)
    c = len(x.cand_kind)
    return OptionPlans(**{**_common(x), "order_split": x.widn_order, "row_j": row_j,
                          "opt_ptr": x.cand_ptr, "opt_target": np.ones(c, np.bool_),
                          "opt_rel": x.cand_rel, "opt_phase": np.zeros(c, np.int8),
                          "opt_sel": np.full(c, -1, np.int64), "opt_kind": x.cand_kind})


def por_option_plans(x: OrthantPlans, profit: str) -> OptionPlans:
    """POR's exported plans as profit options: an option per orthant (phase 1, its ports as
    ``sel``, kind 1 = orthant when it counts as derouted), by the paper's signs or the
    reference code's, as the profit variant reads them; one stage."""
    paper = profit == "paper"
    o = len(x.sel)
    derouted = x.derouted if paper else x.code_derouted
    return OptionPlans(**{**_common(x), "order_split": x.order_ptr[1:],
                          "opt_ptr": x.orthant_ptr, "opt_target": np.zeros(o, np.bool_),
                          "opt_rel": np.zeros((o, len(x.dims)), np.int16),
                          "opt_phase": np.ones(o, np.int8),
                          "opt_sel": x.sel if paper else x.code_sel,
                          "opt_kind": derouted.astype(np.int8)})


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
    requires = frozenset({"offsets"})

    def masks(self) -> np.ndarray:
        """The minimal ports by coordinate offset (both directions at a k/2 tie unless ties
        are broken in order)."""
        return mask_array(self.topology, both_on_tie=self.config.router.tie_break != "ordered")

    def program(self) -> Program:
        return Program((Phase(OFFSET, ports=self.masks(), adaptive_vc=0, escape_vc=1),))


class _Draws:
    """``integers(n)`` over the router's uniform tie-break stream (what the planners expect)."""

    __slots__ = ("rand",)

    def __init__(self, rand):
        self.rand = rand

    def integers(self, n: int) -> int:
        return int(self.rand() * n)


@register("por")
class PickOrthant(AdaptiveBubble):
    """Pick-Orthant Routing (the GAL/GOAL/CQR family, as in the OutFlank paper): at injection
    the source scores every orthant with the profit of eq. (15)–(16) (η = 1.0 by default) and
    either routes ABR-style (minimal) or pins the packet to one orthant, possibly the long way
    round; adaptive moves and the dimension-order escape then follow the orthant's signs."""

    Settings = PorSettings
    requires = frozenset({"offsets", "rings"})
    deroute_kinds = ("orthant",)
    deroute_styles = {"orthant": "-."}

    def __init__(self, topology: Any, config: Any, settings: Any = None):
        super().__init__(topology, config, settings)
        st = self.settings
        self._planner = OrthantPlanner(topology, both_on_tie=config.router.tie_break != "ordered")
        self._kw = dict(capacity=config.router.queue_packets, eta=st.eta, profit=st.profit,
                        min_deroute_distance=st.min_deroute_distance)
        self._minimal = Option(phase=0)
        self._pinned: dict[tuple[int, bool], Option] = {}

    def program(self) -> Program:
        st, masks = self.settings, self.masks()
        decision = Profit(por_option_plans(self._planner.export(), st.profit), st.eta,
                          st.profit, st.min_deroute_distance, self._minimal, self.deroute_kinds,
                          self._choose)
        return Program((Phase(OFFSET, ports=masks, adaptive_vc=0, escape_vc=1),
                        Phase(OFFSET, ports=both_dimension_ports(masks, self.topology.n),
                              adaptive_vc=0, escape_vc=1, filtered=True)), decision)

    def _choose(self, node: int, dst: int, used, rand) -> tuple[Option, int]:
        signs, derouted = self._planner.choose_orthant(node, dst, used, rng=_Draws(rand),
                                                       **self._kw)
        if signs is None:
            return self._minimal, -1
        key = (orthant_select(signs), derouted)
        option = self._pinned.get(key)
        if option is None:
            option = self._pinned[key] = Option(1, key[0], "orthant" if derouted else None)
        return option, -1


@register("goal")
class Goal(AdaptiveBubble):
    """GOAL, Globally Oblivious Adaptive Locally (Singh, Dally, Gupta and Towles, ISCA 2003):
    at injection a direction is drawn in each dimension as RLB draws it -- the minimal one with
    probability (k - Δ)/k, the other with Δ/k -- (:class:`~icsim.routing.program.RandomInBox`
    with ``quadrant``); the packet then routes ABR-style within that quadrant: the adaptive
    queue of any productive direction (most free slots wins), else the dimension-order escape
    queue along the drawn directions under the bubble rule.  The paper's escape is Duato's
    with *-channels (dateline VCs in the drawn directions); icsim's is POR's bubble escape.
    GOAL is POR with the orthant drawn obliviously instead of scored by the source's queues."""

    requires = frozenset({"offsets", "rings"})

    def program(self) -> Program:
        ports = both_dimension_ports(self.masks(), self.topology.n)
        return Program((Phase(OFFSET, ports=ports, adaptive_vc=0, escape_vc=1, filtered=True),),
                       RandomInBox(Option(phase=0), balanced=True, quadrant=True))


@register("cqr")
class ChannelQueue(AdaptiveBubble):
    """Channel Queue Routing (Singh, Dally, Gupta and Towles, SPAA 2004): at injection, in each
    dimension, the minimal direction unless its adaptive queue at the source times its hops
    exceeds the other direction's (``q_min * Δ <= q_other * (k - Δ)`` keeps the minimal one;
    :class:`~icsim.routing.program.QueueQuadrant`); then ABR-style within that quadrant, as
    GOAL.  Backpressure fills the source's channel queues when the way is congested, so they
    stand for the congestion along it.  The paper's escape is Duato's with *-channels; icsim's
    is POR's bubble escape.  Taken again at every injection attempt, as the queues change."""

    requires = frozenset({"offsets", "rings"})

    def program(self) -> Program:
        ports = both_dimension_ports(self.masks(), self.topology.n)
        return Program((Phase(OFFSET, ports=ports, adaptive_vc=0, escape_vc=1, filtered=True),),
                       QueueQuadrant(Option(phase=0)))


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
    requires = frozenset({"offsets", "rings"})
    deroute_kinds = ("outflank", "wraparound")
    deroute_styles = {"outflank": "--", "wraparound": ":"}

    def __init__(self, topology: Any, config: Any, settings: Any = None):
        super().__init__(topology, config, settings)
        st = self.settings
        self._both = config.router.tie_break != "ordered"
        self._planner = OutflankPlanner(topology, delta=st.delta, variant=st.candidates,
                                        both_on_tie=self._both)
        self._kw = dict(capacity=config.router.queue_packets, eta=st.eta, profit=st.profit,
                        min_deroute_distance=st.min_deroute_distance)
        self._minimal = Option(phase=1)
        self._via = {kind: Option(phase=0, kind=kind) for kind in self.deroute_kinds}

    def program(self) -> Program:
        st = self.settings
        masks = mask_array(self.topology, both_on_tie=self._both)
        decision = Profit(ofr_option_plans(self._planner.export()), st.eta, st.profit,
                          st.min_deroute_distance, self._minimal, self.deroute_kinds,
                          self._choose)
        return Program((Phase(OFFSET, ports=masks, adaptive_vc=0, escape_vc=1, next=1),
                        Phase(OFFSET, ports=masks, adaptive_vc=0, escape_vc=2)), decision)

    def _choose(self, node: int, dst: int, used, rand) -> tuple[Option, int]:
        idn, kind = self._planner.choose_idn(node, dst, used, rng=_Draws(rand), **self._kw)
        if idn is None:
            return self._minimal, -1
        return self._via[kind], idn
