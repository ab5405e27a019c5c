"""The packet: the only object that travels through the SimPy engine."""

from __future__ import annotations


class Packet:
    """One packet and everything the model and the statistics track about it.

    Times are integer picoseconds (the engine's clock).  ``age`` is a unique integer ordering
    packets oldest-first: message creation time, then source node, then creation order at the
    source.  ``state`` belongs to the routing algorithm (OFR's intermediate destination, POR's
    orthant, table routing's place on the route); ``deroute`` is how the algorithm derouted the
    packet (``"outflank"``, ``"wraparound"``, ``"orthant"``), None when it did not.
    """

    __slots__ = (
        "pid", "src", "dst", "birth", "age", "measured", "state", "deroute",
        "hops", "avail", "enter", "ready", "qid", "from_port", "from_vc", "retries",
    )

    def __init__(self, pid: int, src: int, dst: int, birth: int, age: int, measured: bool):
        self.pid = pid
        self.src = src
        self.dst = dst
        self.birth = birth           # message generation time
        self.age = age
        self.measured = measured
        self.state = None            # the routing algorithm's per-packet state
        self.deroute = None          # how derouted, None: not derouted
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
