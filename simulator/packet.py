"""The packet: the only object that travels through the model."""

from __future__ import annotations


class Packet:
    """One packet and everything the model and the statistics track about it.

    Times are integer picoseconds (the engine's clock).  ``age`` is a unique integer ordering
    packets oldest-first: message creation time, then source node, then creation order at the
    source.
    """

    __slots__ = (
        "pid", "src", "dst", "birth", "age", "msg", "measured",
        "target", "idn", "kind", "signs", "route", "layers", "ridx",
        "hops", "avail", "enter", "ready", "qid", "from_port", "from_vc", "retries",
    )

    def __init__(self, pid: int, src: int, dst: int, birth: int, age: int, msg: int,
                 measured: bool):
        self.pid = pid
        self.src = src
        self.dst = dst
        self.birth = birth           # message generation time
        self.age = age
        self.msg = msg               # message id (collectives track per-message completion)
        self.measured = measured
        self.target = dst            # current target: the IDN while heading to one
        self.idn = -1                # OFR intermediate destination, -1 when none
        self.kind = None             # how derouted: "outflank" | "wraparound" | "orthant"
        self.signs = None            # POR orthant: one sign per dimension
        self.route = None            # table routing: ports of the source route
        self.layers = None           # table routing with virtual layers: layer per hop
        self.ridx = 0                # table routing: index of the next hop in the route
        self.hops = 0                # router-to-router links crossed
        self.avail = birth           # when the NIC may send it
        self.enter = -1              # when it entered its source router
        self.ready = 0               # when it became visible in its current queue
        self.qid = -1                # queue it is in or has reserved
        self.from_port = -1          # port and VC of the queue it left upstream (-1: the NIC)
        self.from_vc = -1
        self.retries = 0             # rejected transmissions (ack/nak flow control)

    def __repr__(self) -> str:
        return (f"Packet(pid={self.pid}, {self.src}->{self.dst}, target={self.target}, "
                f"hops={self.hops})")
