"""The routing interface every algorithm implements, and the registry that names them.

A routing algorithm answers one question (SuperSim's "candidates, then selection"): *given this
packet at this router, which (output port, VC) queues may it take, in what preference?*  The
router takes the first group of candidates with an admissible member, applies admission (free
slots, the bubble rule, injection thresholds) and selection (most free slots, ties by the seeded
generator or in order).  It reads the *roles* of the VCs an algorithm declares (:class:`VC`),
never their names, and never which algorithm runs.

An algorithm says how it routes as a program (:meth:`Routing.program`,
:mod:`icsim.routing.program`): tables it builds before the run, which both engines read with
the same rules, so that it runs on the compiled engine too and gives the same records on both.
One that needs Python at every hop overrides :meth:`Routing.candidates` (and the optional
:meth:`Routing.inject`, :meth:`Routing.admitted`) instead; the SimPy engine alone runs it.

A new algorithm is one module.  It registers itself with :data:`ROUTING` (built-in algorithms
live in :mod:`icsim.routing.algorithms`, found by a package scan; a file is loaded by the
config's ``routing.plugins``; a plug-in package declares an entry point in the group
``icsim.routing``), declares its VCs, the topology capabilities it ``requires``, its
``deroute_kinds``, and optionally its own config section ``routing.<name>`` as a pydantic model
(:attr:`Routing.Settings`)::

    import numpy as np
    from icsim.routing.program import OFFSET, Phase, Program
    from icsim.routing.registry import ADAPTIVE, ROUTING, VC, Routing

    @ROUTING.register("west_first")
    class WestFirst(Routing):
        requires = frozenset({"coordinates", "offsets"})
        vcs = (VC("adaptive", ADAPTIVE),)

        def program(self):
            dx, dy = self.topology.relative_offsets().T
            east_north_south = ((dx > 0) * 1 | (dy > 0) * 4 | (dy < 0) * 8)
            ports = np.where(dx < 0, 2, east_north_south)     # west (x-, port 1) first
            return Program((Phase(OFFSET, ports=ports, adaptive_vc=0),))
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from icsim.model.notes import Kept
from icsim.model.registry import RegistrationError, Registry, described, load_file
from icsim.model.topology.base import CAPABILITIES
from icsim.routing.deadlock import cycle_in_edges
from icsim.routing.dependencies import dependency_edges
from icsim.routing.interpreter import Interpreter
from icsim.routing.program import Program, check_ports

if TYPE_CHECKING:
    from icsim.model.config import Config
    from icsim.model.packet import Packet

#: the VC roles the router knows
ADAPTIVE, ESCAPE, LAYER = "adaptive", "escape", "layer"

def admit(name: str, obj: Any) -> None:
    """Refuse (:class:`~icsim.model.registry.RegistrationError`) a routing algorithm that is
    not a :class:`Routing` subclass with class attributes of the right types, as it
    registers: a plug-in's mistake is one line naming its file, not a traceback later."""
    who = f"routing algorithm {name!r}"

    def wrong(message: str) -> RegistrationError:
        return RegistrationError(f"{who}: {message}")

    if not (isinstance(obj, type) and issubclass(obj, Routing)):
        raise wrong(f"registered {described(obj)}; register a subclass of "
                    f"icsim.routing.registry.Routing")
    requires = obj.requires
    if (not isinstance(requires, (frozenset, set))
            or not all(isinstance(c, str) for c in requires)):
        raise wrong(f"requires is {described(requires)}, not a set of capabilities "
                    f"(frozenset({{'offsets'}}); known: {', '.join(sorted(CAPABILITIES))})")
    unknown = sorted(set(requires) - set(CAPABILITIES))
    if unknown:
        raise wrong(f"requires {unknown[0]!r}, which no topology provides (known: "
                    f"{', '.join(sorted(CAPABILITIES))})")
    try:
        check_vcs(obj.vcs)
    except ValueError as exc:
        raise wrong(str(exc)) from None
    kinds = obj.deroute_kinds
    if not isinstance(kinds, tuple) or not all(isinstance(k, str) for k in kinds):
        raise wrong(f"deroute_kinds is {described(kinds)}, not a tuple of names")
    if not (isinstance(obj.Settings, type) and issubclass(obj.Settings, BaseModel)):
        raise wrong(f"Settings is {described(obj.Settings)}, not a pydantic model")
    if obj.acyclic not in (None, "all", "escape"):
        raise wrong(f"acyclic is {obj.acyclic!r}, not None, 'all' or 'escape'")
    for flag in ("has_inject", "has_admit", "shared"):
        if not isinstance(getattr(obj, flag), bool):
            raise wrong(f"{flag} is {described(getattr(obj, flag))}, not True or False")
    if obj.program is Routing.program and obj.candidates is Routing.candidates:
        raise wrong("gives neither program() (tables both engines read) nor candidates() "
                    "(Python at every hop)")


ROUTING: Registry[type["Routing"]] = Registry("routing algorithm",
                                              packages=("icsim.routing.algorithms",),
                                              entry_points="icsim.routing", admit=admit)
register = ROUTING.register


#: the programs of the :attr:`~Routing.shared` algorithms made in this process, by algorithm,
#: topology and settings; and the per-pair tables they read, by kind and topology
#: (:meth:`Routing.tables_of`): the runs of a sweep worker on one network make them once
PROGRAMS = Kept(8, max_bytes=512e6)
TABLES = Kept(4, max_bytes=512e6)


def load_plugin(path: str) -> ModuleType:
    """Import a Python file that registers routing algorithms (``routing.plugins``), once per
    process (:func:`~icsim.model.registry.load_file`); ValueError naming the file when it
    cannot be read or fails on import.

    >>> load_plugin("no_such_plugin.py")
    Traceback (most recent call last):
    ...
    ValueError: no_such_plugin.py: no such file (looked for from the working directory)
    """
    return load_file(path, ROUTING)


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


#: the VC roles, as :class:`VC` takes them
ROLES = (ADAPTIVE, ESCAPE, LAYER)


def check_vcs(vcs: Any) -> None:
    """ValueError naming the first of an algorithm's VCs that is not a :class:`VC` of a
    known role with fields of the right types.

    >>> check_vcs((VC("adaptive", "adaptve"),))
    Traceback (most recent call last):
    ...
    ValueError: VC 0 ('adaptive'): role 'adaptve' is not one of adaptive, escape, layer
    """
    if not isinstance(vcs, (tuple, list)) or not vcs:
        raise ValueError(f"vcs is {described(vcs)}, not a tuple of at least one VC")
    for i, vc in enumerate(vcs):
        if not isinstance(vc, VC):
            raise ValueError(f"VC {i} is {described(vc)}, not a VC(name, role)")
        where = f"VC {i} ({vc.name!r})"
        if not isinstance(vc.name, str):
            raise ValueError(f"VC {i}: its name is {described(vc.name)}, not a string")
        if vc.role not in ROLES:
            raise ValueError(f"{where}: role {vc.role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(vc.bubble, (bool, np.bool_)):
            raise ValueError(f"{where}: bubble is {described(vc.bubble)}, not True or False")
        if not isinstance(vc.priority, (int, np.integer)) or isinstance(vc.priority, bool):
            raise ValueError(f"{where}: priority is {described(vc.priority)}, not a whole "
                             f"number")


def dateline_vcs(vcs: Sequence[VC]) -> tuple[VC, ...]:
    """The VCs of :meth:`~icsim.routing.program.Program.with_datelines`: each escape VC
    becomes two without the bubble, ``name`` (no wraparound ahead) and ``name_dateline`` (the
    ring's wraparound link still ahead), with its priority."""
    return tuple(VC(f"{vc.name}{tail}", vc.role, bubble=False, priority=vc.priority)
                 for vc in vcs for tail in ("", "_dateline"))


class EscapeSettings(BaseModel):
    """The settings every oblivious torus routing shares: ``deadlock`` -- ``bubble`` (the
    default: one escape VC per phase, its rings kept free of deadlock by the bubble rule) or
    ``dateline`` (two VCs per phase and no bubble: a hop takes the second while its ring's
    wraparound link is still ahead, Dally and Seitz's dateline; every phase a VC set of its
    own, as the two-phase algorithms' papers have it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    deadlock: Literal["bubble", "dateline"] = "bubble"


class NoSettings(BaseModel):
    """The config section of an algorithm without settings: it must be empty."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Routing:
    """Base class of routing algorithms.

    An algorithm routes in one of two ways.  It returns a :class:`~icsim.routing.program.
    Program` from :meth:`program` — tables and rules both engines read, the same run on either
    (the built-in algorithms do) — or it overrides :meth:`candidates` (and :meth:`inject`,
    :meth:`admitted`) to route in Python at every hop, which only the SimPy engine can run.

    Class attributes
    ----------------
    vcs : tuple of VC
        The VC classes of every port, by index.
    requires : frozenset of str
        The topology capabilities it needs (``"coordinates"``, ``"offsets"``, ``"rings"``:
        :mod:`icsim.model.topology.base`); the build refuses any other pairing before the run.
    deroute_kinds : tuple of str
        How it may count a packet as derouted (a packet's ``deroute`` is 1 + the index of its
        kind here); results, CSV columns (``derouted.<kind>``) and the derouting figure carry
        these names.
    deroute_styles : dict
        Line style of each kind in the derouting figure (matplotlib's ``"--"``, ``":"``, ...).
    Settings : pydantic model
        The algorithm's config section ``routing.<name>`` (extra keys forbidden).
    legacy : dict
        Flat ``routing.<key>`` names of older configs that mean ``routing.<name>.<key>``
        (applied by the config schema's migration; listed here for the documentation).
    has_inject : bool
        Whether :meth:`inject` must be called when a packet is offered by its NIC.
    has_admit : bool
        Whether :meth:`admitted` must be called when a packet is accepted into a queue.
    acyclic : {None, "all", "escape"}
        Where the algorithm's deadlock freedom rests on an acyclic channel-dependency graph
        (VC classes per hop, phases, up*/down*): ``"all"`` its channels, ``"escape"`` its
        escape channels (adaptive routing over an escape network, Duato's condition).  The
        build checks that graph before the run
        (:func:`~icsim.routing.dependencies.dependency_edges`) and refuses a cycle, naming it.  None: the bubble rule or a
        table check keeps it free (docs/model.md).
    shared : bool
        Whether the program is a function of the topology and the settings alone (never of
        the rest of the config): then the runs of a process share it, made and checked once
        for each (:data:`PROGRAMS`).  The families' algorithms are; an algorithm that reads
        the config (the router's tie rule, the seed) is not.
    """

    name: ClassVar[str] = "?"
    vcs: tuple[VC, ...] = (VC("escape", ESCAPE, bubble=True),)
    Settings: ClassVar[type[BaseModel]] = NoSettings
    requires: ClassVar[frozenset[str]] = frozenset()
    deroute_kinds: ClassVar[tuple[str, ...]] = ()
    deroute_styles: ClassVar[dict[str, str]] = {}
    has_inject: ClassVar[bool] = False
    has_admit: ClassVar[bool] = False
    acyclic: ClassVar[str | None] = None
    shared: ClassVar[bool] = False

    def __init__(self, topology: Any, config: "Config", settings: BaseModel | None = None):
        self.topology = topology
        self.config = config
        self.settings = settings if settings is not None else self.Settings()
        self.eject = topology.num_ports
        self.eject_groups: Groups = (((self.eject, 0),),)
        self._form: Program | None = None
        self._formed = False
        self._interpreter: Interpreter | None = None
        if self.datelines:
            self.vcs = dateline_vcs(type(self).vcs)

    def tables_of(self, kind: Callable[[Any], Any]) -> Any:
        """``kind(topology)`` -- tables that depend on the topology alone (a family's
        minimal routes) -- made once per process for each topology (:data:`TABLES`)."""
        return TABLES.get((kind, self.topology), lambda: kind(self.topology))

    @property
    def datelines(self) -> bool:
        """Whether the algorithm runs on dateline VCs (``deadlock: dateline``,
        :class:`EscapeSettings`) instead of the bubble rule."""
        return getattr(self.settings, "deadlock", "bubble") == "dateline"

    @classmethod
    def check_topology(cls, topology: Any) -> None:
        """Refuse (:class:`~icsim.model.topology.CapabilityError`) a topology that lacks a
        capability the algorithm :attr:`requires`, naming both."""
        topology.require(cls.requires, f"routing algorithm {cls.name!r}")

    @classmethod
    def check_config(cls, topology: Any, config: "Config", settings: BaseModel) -> None:
        """Raise ValueError (or ConfigError naming a key) if the algorithm cannot run here
        (beyond :attr:`requires`, which the build checks first)."""

    # ------------------------------------------------------------------ the compiled form
    def program(self) -> Program | None:
        """The algorithm's compiled form (:mod:`icsim.routing.program`), or None when it
        routes in Python (:meth:`candidates`)."""
        return None

    @property
    def form(self) -> Program | None:
        """:meth:`program`, made once and checked against the topology and the VCs
        (ValueError naming the problem)."""
        if not self._formed:
            if self.shared:
                key = (type(self), self.topology, self.settings.model_dump_json(),
                       self.datelines)
                self._form = PROGRAMS.get(key, self._checked_program)
            else:
                self._form = self._checked_program()
            self._formed = True
        return self._form

    def _checked_program(self) -> Program | None:
        """:meth:`program`, on dateline VCs where the settings say so, checked (a shared
        algorithm's routers' ports before its tables are made)."""
        if self.shared:
            check_ports(self.topology.num_ports)
        form = self.program()
        if form is None:
            return None
        if not isinstance(form, Program):
            raise ValueError(f"program() returned {described(form)}, not a Program (or None: "
                             f"it routes in Python, candidates())")
        form.check_types()
        if self.datelines:
            form = form.with_datelines()
        if form.has_datelines:                  # coordinates, ports 2d (+), 2d + 1
            self.topology.require(frozenset({"coordinates"}), "dateline VCs")
        topo = self.topology
        size = topo.relative_size if "offsets" in topo.capabilities else None
        form.check(topo.num_nodes, topo.num_ports, len(self.vcs), size, self.deroute_kinds,
                   topology=topo)
        if self.acyclic is not None:
            self.check_dependencies(form)
        return form

    def check_dependencies(self, form: Program) -> None:
        """Refuse (ValueError naming a cycle) a program whose channel-dependency graph (of
        its escape channels, with ``acyclic = "escape"``) has a cycle."""
        topo, V = self.topology, len(self.vcs)
        src, dst = dependency_edges(form, topo, V, escape_only=self.acyclic == "escape")
        cycle = cycle_in_edges(topo.num_nodes * topo.num_ports * V, src, dst)
        if cycle:
            def name(c: int) -> str:
                pid, vc = divmod(c, V)
                node, port = divmod(pid, topo.num_ports)
                return f"{topo.where(node)} {topo.port_name(port)} {self.vcs[vc].name}"
            shown = " -> ".join(name(c) for c in cycle[:8]) + (" -> ..." if len(cycle) > 8
                                                               else "")
            raise ValueError(f"its channel-dependency graph has a cycle of {len(cycle)} "
                             f"channels ({shown}): it could deadlock")

    @property
    def interpreter(self) -> Interpreter:
        """The program read in Python (what the SimPy engine runs)."""
        if self._interpreter is None:
            if self.form is None:
                raise TypeError(f"routing algorithm {self.name!r} has no program")
            self._interpreter = Interpreter(self.form, self.topology, self.deroute_kinds)
        return self._interpreter

    def hooks(self) -> tuple[Callable, Callable, Callable, bool, bool]:
        """``(candidates, inject, admitted, has_inject, has_admit)`` as the SimPy engine calls
        them: the program's interpreter, or the algorithm's own methods."""
        if self.form is None:
            return self.candidates, self.inject, self.admitted, self.has_inject, self.has_admit
        it = self.interpreter
        return it.candidates, it.inject, it.admitted, it.has_inject, it.has_admit

    def python_only(self) -> str | None:
        """Why the compiled engine cannot run this algorithm (None when it can)."""
        if self.form is None:
            return (f"routing algorithm {self.name!r} routes in Python at every hop (it "
                    f"gives no program)")
        return None

    def inject(self, node: int, packet: "Packet", used: Sequence[int | None],
               rand) -> None:
        """Injection-time decision for a packet offered by the NIC of ``node``.

        ``used[port]`` is the number of used slots of the local adaptive queue of ``port``
        (None for an absent port); ``rand()`` draws a uniform float from the run's tie-break
        stream.  Called again on every attempt until the packet is accepted.
        """

    def candidates(self, node: int, packet: "Packet") -> Groups:
        """Candidate (port, VC) queues at ``node`` for ``packet``, in preference groups (an
        algorithm with a program answers through its interpreter)."""
        return self.interpreter.candidates(node, packet)

    def admitted(self, node: int, packet: "Packet", port: int, vc: int) -> None:
        """The packet has been accepted into queue (port, vc) of ``node``."""

    def describe(self, packet: "Packet") -> str:
        """The packet's routing state, for reports (e.g. OFR's intermediate destination)."""
        return self.interpreter.describe(packet) if self.form is not None else ""
