"""Adaptive routing on tori: ABR, POR and OFR (the OutFlank paper, §2–§3; SPEC §5).

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

from typing import Any

from routing.dor import require_torus
from routing.registry import Groups, Routing, register


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
    >>> from simulator.topology import Torus
    >>> from simulator.packet import Packet
    >>> from simulator.config import Config
    >>> abr = AdaptiveBubble(Torus((4, 4)), Config(), eject_port=4)
    >>> abr.candidates(0, Packet(0, src=0, dst=5, birth=0, age=0, msg=0, measured=False))
    (((0, 0), (2, 0)), ((0, 1),))
    """

    vcs = ("adaptive", "escape")
    bubble_vcs = frozenset({1})

    def __init__(self, topology: Any, config: Any, eject_port: int):
        super().__init__(topology, config, eject_port)
        both = config.router.tie_break != "ordered"
        self._rows = topology.minimal_mask_rows(both_on_tie=both)
        self._groups = mask_groups(topology.num_ports, escape_vc=1)

    @classmethod
    def check_config(cls, topology: Any, config: Any) -> None:
        require_torus(topology, cls.name)

    def candidates(self, node: int, packet) -> Groups:
        mask = self._rows[node][packet.dst]
        if not mask:
            return self.eject_groups
        return self._groups[mask]
