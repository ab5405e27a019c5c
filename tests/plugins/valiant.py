"""Valiant's randomised routing on a torus: to a random intermediate node in dimension order on
one VC, then to the destination in dimension order on another (each under the bubble rule).
Every packet counts as derouted, as ``valiant``."""

import numpy as np

from icsim.model.topology import NO_PORT
from icsim.routing.program import OFFSET, Option, Phase, Program, RandomTarget
from icsim.routing.registry import ESCAPE, ROUTING, VC, Routing


@ROUTING.register("valiant")
class Valiant(Routing):
    requires = frozenset({"offsets"})
    vcs = (VC("to_intermediate", ESCAPE, bubble=True), VC("to_destination", ESCAPE, bubble=True))
    deroute_kinds = ("valiant",)
    deroute_styles = {"valiant": "--"}

    def program(self):
        port = np.frombuffer(self.topology.dor_port_table, np.uint8).astype(np.int64)
        dor = np.where(port == NO_PORT, 0, np.left_shift(1, np.minimum(port, 62)))
        return Program((Phase(OFFSET, ports=dor, escape_vc=0, next=1),
                        Phase(OFFSET, ports=dor, escape_vc=1)),
                       RandomTarget(Option(phase=0, kind="valiant")))
