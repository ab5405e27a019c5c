"""The routing interface every algorithm implements, and the registry that names them.

A routing algorithm answers one question (SuperSim's "candidates, then selection"): *given this
packet about to enter this router, which (output port, VC) queues may it take, in what
preference?*  It returns groups of candidates; the router takes the first group with an
admissible member, applies admission (free slots, the bubble rule, injection thresholds) and
selection (most free slots, ties by the seeded generator or in order).  Decisions taken once at
injection (POR's orthant, OFR's intermediate destination) go in the optional :meth:`inject`
hook.  The router knows nothing else about the algorithm: it reads the *roles* of the VCs an
algorithm declares (:class:`VC`), never their names.

A new algorithm is one module.  It registers itself with :data:`ROUTING` (built-in algorithms
live in :mod:`icsim.routing.algorithms`, found by a package scan; a plug-in package declares an
entry point in the group ``icsim.routing``), declares its VCs, keeps its per-packet state in the
packet's ``state`` slot (the algorithm owns it), and declares its own config section
``routing.<name>`` as a pydantic model (:attr:`Routing.Settings`)::

    from pydantic import BaseModel
    from icsim.routing.registry import ADAPTIVE, ESCAPE, VC, ROUTING, Routing

    @ROUTING.register("west_first")
    class WestFirst(Routing):
        vcs = (VC("escape", ESCAPE, bubble=True),)

        class Settings(BaseModel):          # routing.west_first: {...}
            model_config = {"extra": "forbid", "frozen": True}

        def candidates(self, node, packet):
            if node == packet.dst:
                return self.eject_groups
            return (((port, 0),),)          # one preference group of (port, VC index)

Every method is a function of (topology, packet state, local queue occupancy) only, so that a
compiled engine can restate the same logic over arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

from pydantic import BaseModel, ConfigDict

from icsim.model.registry import Registry

if TYPE_CHECKING:
    from icsim.model.config import Config
    from icsim.model.packet import Packet

#: the VC roles the router knows
ADAPTIVE, ESCAPE, LAYER = "adaptive", "escape", "layer"

ROUTING: Registry[type["Routing"]] = Registry("routing algorithm",
                                              packages=("icsim.routing.algorithms",),
                                              entry_points="icsim.routing")
register = ROUTING.register


def algorithms() -> dict[str, type["Routing"]]:
    """Every registered algorithm by name."""
    return dict(ROUTING.items())


Candidate = tuple[int, int]            # (output port, VC index)
Groups = tuple[tuple[Candidate, ...], ...]


@dataclass(frozen=True)
class VC:
    """A virtual-channel class of every port.

    Attributes
    ----------
    name : str
        For reports ("adaptive", "escape1", "layer2").
    role : {"adaptive", "escape", "layer"}
        Adaptive VCs are what injection-time decisions look at (their occupancy is handed to
        :meth:`Routing.inject`); escape and layer VCs carry deterministic routes.
    bubble : bool
        Rings of this VC are kept deadlock-free by the bubble rule: entering a queue from
        anywhere but the same port and VC upstream needs two free slots.
    priority : int
        Rank under ``router.arbitration: escape_priority`` (lower goes first).
    """

    name: str
    role: str
    bubble: bool = False
    priority: int = 0


class NoSettings(BaseModel):
    """The config section of an algorithm without settings: it must be empty."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Routing:
    """Base class of routing algorithms.

    Class attributes
    ----------------
    vcs : tuple of VC
        The VC classes of every port, by index.
    Settings : pydantic model
        The algorithm's config section ``routing.<name>`` (extra keys forbidden).
    legacy : dict
        Flat ``routing.<key>`` names of older configs that mean ``routing.<name>.<key>``
        (applied by the config schema's migration; listed here for the documentation).
    has_inject : bool
        Whether :meth:`inject` must be called when a packet is offered by its NIC.
    has_admit : bool
        Whether :meth:`admitted` must be called when a packet is accepted into a queue.
    """

    name: ClassVar[str] = "?"
    vcs: tuple[VC, ...] = (VC("escape", ESCAPE, bubble=True),)
    Settings: ClassVar[type[BaseModel]] = NoSettings
    has_inject: ClassVar[bool] = False
    has_admit: ClassVar[bool] = False

    def __init__(self, topology: Any, config: "Config", settings: BaseModel | None = None):
        self.topology = topology
        self.config = config
        self.settings = settings if settings is not None else self.Settings()
        self.eject = topology.num_ports
        self.eject_groups: Groups = (((self.eject, 0),),)

    @classmethod
    def check_config(cls, topology: Any, config: "Config", settings: BaseModel) -> None:
        """Raise ValueError (or ConfigError naming a key) if the algorithm cannot run here."""

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

    def describe(self, packet: "Packet") -> str:
        """The packet's routing state, for reports (e.g. OFR's intermediate destination)."""
        return ""

    def compiled(self) -> dict | None:
        """The algorithm as arrays for the compiled engine (its ``kind`` and the tables that
        kind reads), or None when it has no compiled form (it then runs on the SimPy engine)."""
        return None
