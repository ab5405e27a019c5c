"""What the engines enforce whatever the routing (docs/model.md §4.4): a routing algorithm —
a plug-in's above all — may not make a packet leave anywhere but at its destination, cross a
port that has no link, go round for ever, or have nowhere to go.

* A packet is queued only at a port with a link, or at its destination's ejection port.
* A packet crosses at most :func:`hop_limit` channels: four times the network's diameter, and
  16 more (the derouting algorithms stay within twice the diameter and a few hops; a packet
  past the limit is going round, a livelock).
* A packet always has a candidate queue: a program's empty entry where the packet must move,
  or a Python router's empty answer, is an error, not a packet waiting for ever.
* A Python router's candidates (SimPy engine) are checked as they come: groups of (port, VC)
  pairs of whole numbers in range, at least one.

A breach stops the run with one line naming the algorithm, the packet (its source and
destination terminals) and the router: :class:`RoutingError` (exit status 2: the routing is
wrong) or, past the hop limit, :class:`LivelockError` (exit status 3, as a deadlock).  Both
engines check the same things at the same moments, so they stop alike (the compiled engine sets
a fault code and its loop returns ``ST_FAULT``, :data:`FAULTS`).
"""

from __future__ import annotations

from typing import Any, Callable

from icsim.simulator.engines import DeadlockError

#: the compiled engine's fault codes (``C_FAULT``), in this order
FAULTS = ("", "ejected", "no_link", "hop_limit", "no_candidate")


class RoutingError(ValueError):
    """A routing algorithm did what the model forbids (module docstring)."""


class LivelockError(DeadlockError):
    """A packet crossed more channels than any route needs: it goes round for ever."""


def hop_limit(diameter: int) -> int:
    """The most channels a packet may cross (module docstring)."""
    return 4 * max(int(diameter), 1) + 16


def fault(spec: Any, code: str, tsrc: int, tdst: int, router: int, hops: int,
          port: int = -1) -> Exception:
    """The error of a breach by a packet from terminal ``tsrc`` to ``tdst`` at ``router``."""
    topo = spec.topology
    name = spec.routing.name
    packet = f"packet {tsrc}->{tdst} (destination router {topo.where(topo.terminal_router(tdst))})"
    where = f"router {topo.where(router)}"
    if code == "ejected":
        return RoutingError(f"routing {name!r} ejected {packet} at {where}: a packet leaves the "
                            f"network only at its destination")
    if code == "no_link":
        return RoutingError(f"routing {name!r} sent {packet} at {where} to port "
                            f"{topo.port_name(port)}, which has no link")
    if code == "no_candidate":
        return RoutingError(f"routing {name!r} gave {packet} at {where} no candidate queue "
                            f"(not even the ejection port)")
    return LivelockError(f"livelock: {packet} crossed {hops} channels (more than "
                         f"{spec.hop_limit}, four times the diameter and 16) and is at "
                         f"{where}: routing {name!r} sends it round")


def nonempty_candidates(spec: Any, candidates: Callable) -> Callable:
    """A program's ``candidates(node, packet)`` (its interpreter's), an empty answer an error
    (module docstring)."""
    def checked(node: int, p: Any) -> Any:
        groups = candidates(node, p)
        if not groups:
            raise fault(spec, "no_candidate", p.tsrc, p.tdst, node, p.hops)
        return groups
    return checked


def checked_candidates(spec: Any, candidates: Callable) -> Callable:
    """A Python router's ``candidates(node, packet)``, its answer checked (module docstring):
    :class:`RoutingError` naming the algorithm, the router and what it gave."""
    name = spec.routing.name
    P, V, EJ = spec.ports_per_router, spec.num_vcs, spec.num_ports
    topo = spec.topology

    def bad(node: int, p: Any, what: str) -> RoutingError:
        return RoutingError(f"routing {name!r}: candidates() at router {topo.where(node)} for "
                            f"packet {p.tsrc}->{p.tdst} gave {what}")

    def checked(node: int, p: Any) -> Any:
        groups = candidates(node, p)
        try:
            pairs = [pair for group in groups for pair in group]
        except TypeError:
            raise bad(node, p, f"{groups!r}: groups of (port, VC) pairs") from None
        if not pairs:
            raise bad(node, p, "no candidate (not even the ejection port)")
        for pair in pairs:
            try:
                port, vc = pair
            except (TypeError, ValueError):
                raise bad(node, p, f"{pair!r}, not a (port, VC) pair") from None
            if type(port) is not int or type(vc) is not int:
                raise bad(node, p, f"({port!r}, {vc!r}): ports and VCs are whole numbers")
            if not 0 <= port < P:
                raise bad(node, p, f"port {port} (ports 0..{EJ - 1}, ejection {EJ})")
            if not 0 <= vc < V:
                raise bad(node, p, f"VC {vc} (the algorithm declares {V})")
        return groups

    return checked
