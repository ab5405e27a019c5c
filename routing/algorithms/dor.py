"""Dimension-order routing (DOR): the baseline, and the escape network of the adaptive routers."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import ConfigDict

from icsim.model.topology import NO_PORT
from icsim.routing.program import OFFSET, Option, Phase, Program, Uniform
from icsim.routing.registry import ESCAPE, VC, EscapeSettings, Routing, register


class DorSettings(EscapeSettings):
    """``routing.dor``: ``tie`` -- at an exact k/2 tie on an even ring, go ``plus`` (the
    OutFlank paper's DOR, the default) or draw the direction per packet at injection,
    ``random``: half each, the balanced DOR of Dally and Towles's throughput analyses (one
    draw of the run's stream per packet)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tie: Literal["plus", "random"] = "plus"


def dor_mask(topology, reverse: bool = False) -> np.ndarray:
    """Dimension order as a port bitmask by coordinate offset, + at an exact k/2 tie
    (:attr:`~icsim.model.topology.Torus.dor_port_table`; 0 where the offset is zero); with
    ``reverse`` the last dimension first (O1TURN's YX).

    >>> from icsim.model.topology import Torus
    >>> t = Torus((4, 4))
    >>> t.relative_offsets()[9].tolist()                           # an offset of (+1, +1)
    [1, 1]
    >>> int(dor_mask(t)[9]), int(dor_mask(t, reverse=True)[9])     # x+ (port 0), y+ (port 2)
    (1, 4)
    """
    if not reverse:
        port = np.frombuffer(topology.dor_port_table, dtype=np.uint8).astype(np.int64)
        here = port == NO_PORT
        return np.where(here, 0, np.left_shift(1, np.where(here, 0, port)))
    off = np.asarray(topology.relative_offsets(), dtype=np.int64)
    mask = np.zeros(len(off), dtype=np.int64)
    for d in range(off.shape[1]):                     # the last non-zero dimension wins
        step = off[:, d]
        mask = np.where(step > 0, 1 << (2 * d), np.where(step < 0, 1 << (2 * d + 1), mask))
    return mask


def dor_masks(topology) -> tuple[np.ndarray, np.ndarray]:
    """``(plus, minus)``: :func:`dor_mask`, and the same with - at an exact k/2 tie of an
    even ring."""
    plus = dor_mask(topology)
    port = np.frombuffer(topology.dor_port_table, dtype=np.uint8).astype(np.int64)
    here = port == NO_PORT
    off = np.asarray(topology.relative_offsets(), dtype=np.int64)
    dim = np.where(here, 0, port // 2)
    tie = np.zeros(len(port), dtype=bool)
    for d, k in enumerate(topology.dims):
        if topology.is_ring(d) and k % 2 == 0:
            tie |= (dim == d) & (off[:, d] == k // 2) & ~here
    return plus, np.where(tie, np.left_shift(plus, 1), plus)        # port 2d -> 2d + 1


@register("dor")
class DimensionOrder(Routing):
    """First dimension with a non-zero offset, in its minimal direction (+ at an exact k/2 tie,
    or with ``tie: random`` a direction drawn per packet), on one escape VC per direction under
    the bubble rule.

    Its program is one phase: by the coordinate offset to the destination, the one port of
    :attr:`~icsim.model.topology.Torus.dor_port_table`, on the escape VC.  With ``tie:
    random``, a second phase whose ties go -, and a :class:`~icsim.routing.program.Uniform`
    decision between the two at injection.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> from icsim.model.packet import Packet
    >>> from icsim.model.config import Config
    >>> dor = DimensionOrder(Torus((4, 4)), Config(topology={"dims": [4, 4]}))
    >>> p = Packet(0, src=0, dst=6, birth=0, age=0, measured=False)
    >>> dor.candidates(0, p), dor.candidates(2, p), dor.candidates(6, p)
    ((((0, 0),),), (((2, 0),),), (((4, 0),),))
    """

    vcs = (VC("escape", ESCAPE, bubble=True),)
    requires = frozenset({"offsets"})
    Settings = DorSettings

    def program(self) -> Program:
        if self.settings.tie == "plus":
            return Program((Phase(OFFSET, ports=dor_mask(self.topology), escape_vc=0),))
        plus, minus = dor_masks(self.topology)
        return Program((Phase(OFFSET, ports=plus, escape_vc=0),
                        Phase(OFFSET, ports=minus, escape_vc=0)),
                       Uniform((Option(phase=0), Option(phase=1))))
