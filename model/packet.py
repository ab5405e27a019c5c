"""The packet: the only object that travels through the SimPy engine."""

from __future__ import annotations


class Packet:
    """One packet and everything the model and the statistics track about it.

    Times are integer picoseconds (the engine's clock).  ``age`` is a unique integer ordering
    packets oldest-first: message creation time, then source node, then creation order at the
    source.  ``src`` and ``dst`` are the source and destination *routers* (what routing sees);
    ``tsrc`` and ``tdst`` the terminals (what traffic and statistics count; the same ids on a
    topology of one terminal per router), ``eport`` the destination terminal's ejection port.
    ``phase``, ``target``, ``sel`` and ``ri`` are the routing registers a routing
    program reads and a decision at injection sets (:mod:`icsim.routing.program`); ``state``
    belongs to an algorithm that routes in Python instead.  ``deroute`` is how the packet was
    derouted: 0 when it was not, else 1 + the index of its kind among the algorithm's
    ``deroute_kinds`` (an algorithm routing in Python may set the kind's name instead).
    """

    __slots__ = (
        "pid", "src", "dst", "tsrc", "tdst", "eport", "birth", "age", "measured", "phase", "target", "sel", "ri",
        "state", "deroute", "drawn", "pending",
        "hops", "avail", "enter", "ready", "qid", "from_port", "from_vc", "retries",
    )

    def __init__(self, pid: int, src: int, dst: int, birth: int, age: int, measured: bool,
                 tsrc: int | None = None, tdst: int | None = None, eport: int = -1):
        self.pid = pid
        self.src = src
        self.dst = dst
        self.tsrc = src if tsrc is None else tsrc
        self.tdst = dst if tdst is None else tdst
        self.eport = eport           # -1: the router's (only) ejection port
        self.birth = birth           # message generation time
        self.age = age
        self.measured = measured
        self.phase = 0               # routing registers (icsim.routing.program)
        self.target = -1
        self.sel = -1
        self.ri = 0
        self.state = None            # an algorithm's own per-packet state (Python routing)
        self.deroute = 0             # how derouted (0: not derouted)
        self.drawn = False           # whether a random decision has drawn for it
        self.pending = None          # registers a reroute at its target gives it (admitted)
        self.hops = 0                # router-to-router links crossed
        self.avail = birth           # when the NIC may send it
        self.enter = -1              # when it entered its source router
        self.ready = 0               # when it became visible in its current queue
        self.qid = -1                # queue it is in or has reserved
        self.from_port = -1          # port and VC of the queue it left upstream (-1: the NIC)
        self.from_vc = -1
        self.retries = 0             # rejected transmissions (ack/nak flow control)

    def __repr__(self) -> str:
        return f"Packet(pid={self.pid}, {self.src}->{self.dst}, hops={self.hops})"
