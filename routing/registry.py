"""The routing interface every algorithm implements, and the registry that names them.

A routing algorithm answers one question (SuperSim's "candidates, then selection"): *given this
packet about to enter this router, which (output port, VC) queues may it take, in what
preference?*  It returns groups of candidates; the router takes the first group with an
admissible member, applies admission (free slots, the bubble rule, injection thresholds) and
selection (most free slots, ties by the seeded generator or in order).  Decisions taken once at
injection (POR's orthant, OFR's intermediate destination) go in the optional :meth:`inject`
hook.  The router knows nothing else about the algorithm.

Every method is a function of (topology, packet state, local queue occupancy) only, so that a
compiled engine can call the same logic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Sequence

if TYPE_CHECKING:
    from icsim.simulator.config import Config
    from icsim.simulator.packet import Packet

ALGORITHMS: dict[str, type["Routing"]] = {}
_MODULES = ("icsim.routing.dor", "icsim.routing.adaptive", "icsim.routing.table_routing")


def algorithms() -> dict[str, type["Routing"]]:
    """The registry, with every algorithm module imported (their decorators fill it)."""
    import importlib

    for mod in _MODULES:
        importlib.import_module(mod)
    return ALGORITHMS

Candidate = tuple[int, int]            # (output port, VC index)
Groups = tuple[tuple[Candidate, ...], ...]


def register(name: str):
    """Class decorator: make a routing algorithm selectable as ``routing.algorithm: name``."""

    def deco(cls: type[Routing]) -> type[Routing]:
        if name in ALGORITHMS:
            raise ValueError(f"routing algorithm {name!r} registered twice")
        cls.name = name
        ALGORITHMS[name] = cls
        return cls

    return deco


class Routing:
    """Base class of routing algorithms.

    Class attributes
    ----------------
    vcs : tuple of str
        Names of the VC classes per port, by index (``("escape",)``, ``("adaptive", "escape")``).
    bubble_vcs : frozenset of int
        VC indices whose rings are kept deadlock-free by the bubble rule: entering such a
        queue from anywhere but the same port and VC upstream needs two free slots.
    has_inject : bool
        Whether :meth:`inject` must be called when a packet is offered by its NIC.
    has_admit : bool
        Whether :meth:`admitted` must be called when a packet is accepted into a queue.
    """

    name: ClassVar[str] = "?"
    vcs: tuple[str, ...] = ("escape",)
    bubble_vcs: frozenset[int] = frozenset({0})
    has_inject: ClassVar[bool] = False
    has_admit: ClassVar[bool] = False

    def __init__(self, topology: Any, config: "Config", eject_port: int):
        self.topology = topology
        self.config = config
        self.eject = eject_port
        self.eject_groups: Groups = (((eject_port, 0),),)

    @classmethod
    def check_config(cls, topology: Any, config: "Config") -> None:
        """Raise ValueError if the algorithm cannot run on this topology/config."""

    def inject(self, node: int, packet: "Packet", used: Sequence[int | None],
               rand) -> None:
        """Injection-time decision for a packet offered by the NIC of ``node``.

        ``used[port]`` is the number of used slots of the local adaptive queue of ``port``
        (None for an absent port); ``rand()`` draws a uniform float from the run's tie-break
        stream.  Called again on every attempt until the packet is accepted.
        """

    def candidates(self, node: int, packet: "Packet") -> Groups:
        """Candidate (port, VC) queues at ``node`` for ``packet``, in preference groups."""
        raise NotImplementedError

    def admitted(self, node: int, packet: "Packet", port: int, vc: int) -> None:
        """The packet has been accepted into queue (port, vc) of ``node``."""

    def describe_vc(self, vc: int) -> str:
        return self.vcs[vc]
