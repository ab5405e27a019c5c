"""Dimension-order routing (DOR): the baseline, and the escape network of the adaptive routers."""

from __future__ import annotations

import numpy as np

from icsim.model.topology import NO_PORT
from icsim.routing.program import OFFSET, Phase, Program
from icsim.routing.registry import ESCAPE, VC, Routing, register


@register("dor")
class DimensionOrder(Routing):
    """First dimension with a non-zero offset, in its minimal direction (+ at an exact k/2 tie),
    on one escape VC per direction under the bubble rule.

    Its program is one phase: by the coordinate offset to the destination, the one port of
    :attr:`~icsim.model.topology.Torus.dor_port_table`, on the escape VC.

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

    def program(self) -> Program:
        port = np.frombuffer(self.topology.dor_port_table, dtype=np.uint8).astype(np.int64)
        here = port == NO_PORT
        mask = np.where(here, 0, np.left_shift(1, np.where(here, 0, port)))
        return Program((Phase(OFFSET, ports=mask, escape_vc=0),))
