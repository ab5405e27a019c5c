"""The configs bundled with icsim (package data: ``icsim.configs``).

>>> bundled("quickstart.yaml").name
'quickstart.yaml'
>>> config_path("ofr/clean/k8") == bundled("ofr", "clean", "k8.yaml")
True
>>> sorted(p.name for p in bundled("ofr", "reference").iterdir() if p.suffix == ".yaml")
['k16.yaml', 'k8.yaml']
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def bundled(*parts: str) -> Path:
    """The path of a bundled config file or folder (``bundled("ofr", "reference", "k8.yaml")``),
    wherever icsim is installed."""
    return HERE.joinpath(*parts)


def config_path(name: str | Path) -> Path:
    """A config file: ``name`` itself when it exists, else the bundled config of that name
    (``"quickstart"``, ``"ofr/clean/k16"``; ``.yaml`` may be left off).  The command line's
    ``icsim run``/``sweep`` and the Python API find configs alike."""
    from icsim.model.config import ConfigError

    p = Path(name)
    if p.exists():
        return p
    for candidate in (bundled(str(name)), bundled(f"{name}.yaml")):
        if candidate.is_file():
            return candidate
    where = "" if p.is_absolute() else f" (from the working directory, {Path.cwd()})"
    raise ConfigError(str(name), f"no such config file{where}, and no bundled config of that "
                                 f"name")
