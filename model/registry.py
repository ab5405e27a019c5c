"""One way to name extensions: a :class:`Registry` per kind (routing algorithms, traffic patterns,
table generators, layer assigners, reproductions, command-line commands).

An extension registers itself where it is defined, with a decorator::

    ROUTING = Registry("routing algorithm", packages=("icsim.routing.algorithms",),
                       entry_points="icsim.routing")

    @ROUTING.register("west_first")
    class WestFirst(Routing): ...

A registry finds its members without a central list: on first use it imports every module of
its ``packages`` (a package scan) and loads the installed plug-ins that declare an entry point in
its group (``[project.entry-points."icsim.routing"]`` in a plug-in's ``pyproject.toml``, the
value ``module:object``; importing the module registers it).  Members may also be registered
lazily, by ``"module:attribute"``, so that a slow or broken module is imported only when its
name is used (the reproductions do this).  An unknown name is an error that suggests the
nearest valid name and lists them all (:func:`did_you_mean`).

Examples
--------
>>> shapes = Registry("shape")
>>> @shapes.register("square", "box")
... def square(a):
...     return a * a
>>> shapes.get("box")(3), shapes.names()
(9, ['square'])
>>> shapes.get("circle")
Traceback (most recent call last):
...
icsim.model.registry.UnknownNameError: unknown shape 'circle' (valid: box, square)
>>> shapes.get("sqare")
Traceback (most recent call last):
...
icsim.model.registry.UnknownNameError: unknown shape 'sqare' (did you mean 'square'? valid: box, square)
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import pkgutil
import sys
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

T = TypeVar("T")


class UnknownNameError(ValueError):
    """A name no member of the registry answers to; the message lists the valid names."""


class RegistrationError(ValueError):
    """A member a registry refuses (a function where a class is wanted, a class attribute of
    the wrong type): the message names the member and what is wrong."""


def did_you_mean(name: Any, valid: Iterable[str], prefix: str = "") -> str:
    """``"did you mean 'x'?"`` naming the valid name nearest to a mistyped ``name`` (``prefix``
    before it, e.g. the section of a key), or ``""`` when none is near.

    >>> did_you_mean("algoritm", ["algorithm", "ofr"], "routing.")
    "did you mean 'routing.algorithm'?"
    >>> did_you_mean("xyz", ["algorithm"]), did_you_mean(3, ["algorithm"])
    ('', '')
    """
    if not isinstance(name, str):
        return ""
    valid = list(valid)
    near = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    if not near:                              # a different case: 'DOR', 'Uniform'
        near = [v for v in valid if v.lower() == name.lower()][:1]
    return f"did you mean '{prefix}{near[0]}'?" if near else ""


def described(value: Any) -> str:
    """How a message names a value of the wrong type, with the value when it is a short
    number or string.

    >>> described(0.5), described("offsets"), described(len), described(list(range(30)))
    ('a float (0.5)', "a str ('offsets')", 'a builtin_function_or_method', 'a list')
    """
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    shown = repr(value)
    simple = isinstance(value, (bool, int, float, complex, str, bytes)) or (
        type(value).__module__ == "numpy" and not hasattr(value, "__len__"))
    return f"{article} {name}" + (f" ({shown})" if simple and len(shown) <= 40 else "")


def unknown_name(kind: str, name: Any, valid: Iterable[str]) -> str:
    """The message for an unknown name: ``unknown routing algorithm 'abd' (did you mean 'abr'?
    valid: abr, dor, ...)``."""
    valid = sorted(valid)
    hint = did_you_mean(name, valid)
    return f"unknown {kind} {name!r} ({hint + ' ' if hint else ''}valid: {', '.join(valid)})"


_FILES: dict[str, ModuleType] = {}
#: every registry made: what :func:`forget_files` clears of the files' members
_REGISTRIES: list["Registry"] = []


def load_file(path: str, *registries: "Registry") -> ModuleType:
    """Import a Python file that registers members of ``registries`` (a plug-in in one file:
    ``routing.plugins``, ``traffic.plugins``), once per process; ValueError naming the file when
    it cannot be read, fails on import or exits there.  The registries' own members are
    loaded first, so that a name the file registers again is named as its clash.

    >>> load_file("no_such_plugin.py")
    Traceback (most recent call last):
    ...
    ValueError: no_such_plugin.py: no such file (looked for from the working directory)
    """
    real = os.path.realpath(path)
    module = _FILES.get(real)
    if module is not None:
        return module
    if not os.path.isfile(real):
        raise ValueError(f"{path}: no such file (looked for from the working directory)")
    for registry in registries:
        registry.load()
    name = f"icsim_plugin_{len(_FILES)}_{Path(real).stem}"
    spec = importlib.util.spec_from_file_location(name, real)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:   # a plug-in's own error, whatever it is, names it
        del sys.modules[name]
        what = (f"exits on import (SystemExit {exc.code!r})" if isinstance(exc, SystemExit)
                else str(exc) if isinstance(exc, RegistrationError)
                else f"{type(exc).__name__}: {exc}")
        raise ValueError(f"{path}: {what}") from None
    _FILES[real] = module
    return module


def forget_files() -> None:
    """Forget every plug-in file :func:`load_file` imported and what it registered (tests: no
    test sees another's plug-ins; registries are per process)."""
    for registry in _REGISTRIES:
        registry._forget(lambda obj: getattr(obj, "__module__", "").startswith("icsim_plugin_"))
    for module in _FILES.values():
        sys.modules.pop(module.__name__, None)
    _FILES.clear()


class Registry(Generic[T]):
    """Named members of one extension kind.

    Parameters
    ----------
    kind : str
        What a member is, for messages ("routing algorithm").
    packages : tuple of str
        Packages whose every module is imported before the first lookup (their members
        register themselves at import).
    entry_points : str, optional
        Entry-point group of installed plug-ins.
    admit : callable, optional
        ``admit(name, obj)`` checks a member as it registers (a routing algorithm is a
        subclass of ``Routing`` with attributes of the right types) and raises
        :class:`RegistrationError` naming what is wrong.
    """

    def __init__(self, kind: str, *, packages: tuple[str, ...] = (),
                 entry_points: str | None = None,
                 admit: Callable[[str, Any], None] | None = None):
        self.kind = kind
        self._packages = packages
        self._group = entry_points
        self._admit = admit
        self._members: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._lazy: dict[str, str] = {}
        self.help: dict[str, str] = {}
        self._loaded = False
        _REGISTRIES.append(self)

    def _forget(self, which: Callable[[Any], bool]) -> None:
        """Drop the members ``which`` picks, with their aliases and help."""
        for name, obj in list(self._members.items()):
            if which(obj):
                del self._members[name]
                self.help.pop(name, None)
        for alias, name in list(self._aliases.items()):
            if name not in self._members:
                del self._aliases[alias]

    # ------------------------------------------------------------------ registering
    def register(self, name: str, *aliases: str, help: str = "") -> Callable[[T], T]:
        """Decorator: register the decorated object as ``name`` (and ``aliases``).  A class
        gets ``name`` as its ``name`` attribute."""

        if not isinstance(name, str) or not all(isinstance(a, str) for a in aliases):
            raise RegistrationError(f"a {self.kind} registers under a name: "
                                    f"@register(\"name\"), not @register")

        def deco(obj: T) -> T:
            self.add(name, obj, aliases=aliases, help=help)
            if isinstance(obj, type):
                obj.name = name
            return obj

        return deco

    def add(self, name: str, obj: T, *, aliases: tuple[str, ...] = (), help: str = "") -> None:
        if self._admit is not None:
            self._admit(name, obj)
        for key in (name, *aliases):
            if key in self._members or key in self._aliases or key in self._lazy:
                raise ValueError(f"{self.kind} {key!r} is registered twice")
        self._members[name] = obj
        for a in aliases:
            self._aliases[a] = name
        if help:
            self.help[name] = help

    def add_lazy(self, name: str, target: str, help: str = "") -> None:
        """Register ``"module:attribute"`` (or ``"module"``) under ``name``; imported on first
        :meth:`get`."""
        if name in self._members or name in self._lazy:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._lazy[name] = target
        if help:
            self.help[name] = help

    # ------------------------------------------------------------------ looking up
    def load(self) -> None:
        """Import the registry's packages and plug-ins (once)."""
        if self._loaded:
            return
        self._loaded = True             # (a module that looks a name up while it loads)
        try:
            for pkg_name in self._packages:
                pkg = importlib.import_module(pkg_name)
                for info in pkgutil.iter_modules(pkg.__path__, pkg_name + "."):
                    importlib.import_module(info.name)
            if self._group:
                for ep in entry_points(group=self._group):
                    ep.load()
        except BaseException:
            # a module that fails to import fails every lookup, not only the first: a
            # half-loaded registry would call the members it missed unknown names
            self._loaded = False
            raise

    def names(self, aliases: bool = False) -> list[str]:
        """Every registered name (with ``aliases``, the aliases too), sorted."""
        self.load()
        return sorted({*self._members, *self._lazy, *(self._aliases if aliases else ())})

    def get(self, name: str) -> T:
        """The member called ``name``; :class:`UnknownNameError` listing the valid names."""
        self.load()
        if isinstance(name, str):
            name = self._aliases.get(name, name)
            if name in self._members:
                return self._members[name]
            if name in self._lazy:
                module, _, attr = self._lazy[name].partition(":")
                mod = importlib.import_module(module)
                return getattr(mod, attr) if attr else mod
        raise UnknownNameError(unknown_name(self.kind, name, self.names(aliases=True)))

    __getitem__ = get

    def canonical(self, name: str) -> str:
        """The registered name an alias stands for (the name itself otherwise)."""
        self.load()
        return self._aliases.get(name, name)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._members or name in self._aliases or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def items(self, aliases: bool = False) -> list[tuple[str, Any]]:
        return [(n, self.get(n)) for n in self.names(aliases)]

    def values(self) -> list[Any]:
        return [self.get(n) for n in self.names()]
