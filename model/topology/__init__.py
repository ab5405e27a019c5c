"""Network topologies as values: the interface every one implements (:mod:`.base`), k-ary n-cubes
(:mod:`.torus`), arbitrary graphs (:mod:`.graph`), dragonflies (:mod:`.dragonfly`), k-ary n-tree
fat trees (:mod:`.fattree`) and HyperX networks (:mod:`.hyperx`).

A topology answers every structural question the model, the routing algorithms and the traffic
patterns ask — how many routers, which ports a router has, which router a port leads to, the
distance, what failed — and, through named capabilities, the questions only some topologies
can answer (coordinates, minimal offsets, rings).  Nobody else redoes modular arithmetic, and
nobody asks a topology what it is.
"""

from icsim.model.topology.base import (ABSENT, CAPABILITIES, NO_PORT, CapabilityError,
                                       Topology)
from icsim.model.topology.dragonfly import ARRANGEMENTS, Dragonfly
from icsim.model.topology.fattree import FatTree
from icsim.model.topology.graph import MAX_GRAPH_EDGES, MAX_GRAPH_NODES, Graph, GraphError
from icsim.model.topology.hyperx import HyperX
from icsim.model.topology.torus import (Torus, dimension_load_factor, is_ring,
                                        torus_load_factor)

__all__ = ["ABSENT", "CAPABILITIES", "NO_PORT", "CapabilityError", "Topology", "Graph",
           "GraphError", "MAX_GRAPH_EDGES", "MAX_GRAPH_NODES", "Torus", "dimension_load_factor",
           "is_ring", "torus_load_factor", "ARRANGEMENTS", "Dragonfly", "FatTree", "HyperX"]
