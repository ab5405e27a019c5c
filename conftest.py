"""pytest from the repository root: a source folder's module has one identity, its ``icsim`` one.

The repository's top-level folders are the packages of ``icsim`` (``setup.py`` installs
``simulator/`` as ``icsim.simulator``, and so on).  pytest, when it imports a file by its path
(``python -m pytest --doctest-modules simulator routing traffic experiments``), would name it
after the folder (``simulator.build``) and load a second copy beside the installed
``icsim.simulator.build``, with registries of its own ("routing algorithm 'dor' is registered
twice").  The finder below answers such a bare name with the installed module itself, so the
two names are one module object; at the end of every session :func:`pytest_sessionfinish`
checks that no file was loaded as two modules.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys

import pytest

#: the repository's source folders: ``icsim.<folder>``
FOLDERS = ("model", "simulator", "routing", "traffic", "experiments", "configs")


class InstalledModule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A bare ``<folder>.<module>`` name stands for the installed ``icsim.<folder>.<module>``."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in FOLDERS:
            return None
        module = importlib.import_module(f"icsim.{name}")
        spec = importlib.machinery.ModuleSpec(name, self, origin=module.__file__,
                                              is_package=hasattr(module, "__path__"))
        spec.has_location = True
        return spec

    specs: dict[str, importlib.machinery.ModuleSpec] = {}

    def create_module(self, spec):
        module = importlib.import_module(f"icsim.{spec.name}")
        self.specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.specs[module.__name__]   # importlib gave it the bare name's spec


sys.meta_path.insert(0, InstalledModule())


def pytest_sessionfinish(session, exitstatus):
    """One module, one name: no file of the repository may have been loaded as two module
    objects (a bare folder name beside ``icsim.<folder>``, or a test helper under two names)."""
    root = os.path.dirname(os.path.realpath(__file__)) + os.sep
    by_file: dict[str, dict[int, str]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and os.path.realpath(path).startswith(root) and ".venv" not in path:
            by_file.setdefault(os.path.realpath(path), {})[id(module)] = name
    twice = {path: sorted(names.values()) for path, names in by_file.items() if len(names) > 1}
    if twice:
        lines = [f"  {path}: {', '.join(names)}" for path, names in sorted(twice.items())]
        print("\nfiles loaded as two modules:\n" + "\n".join(lines), file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config):
    """The compiled engine built once, before any test and before pytest-xdist starts its
    workers (each would otherwise compile it at once, on every core)."""
    if not hasattr(config, "workerinput"):          # the main process, not an xdist worker
        from icsim.simulator.engines.compiled.building import compile_now

        compile_now()
