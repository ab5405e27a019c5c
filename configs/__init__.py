"""The configs bundled with icsim (package data: ``icsim.configs``).

>>> bundled("quickstart.yaml").name
'quickstart.yaml'
>>> config_path("ofr/clean/k8") == bundled("ofr", "clean", "k8.yaml")
True
>>> sorted(p.name for p in bundled("ofr", "reference").iterdir() if p.suffix == ".yaml")
['k16.yaml', 'k8.yaml']
>>> dict(listing())["quickstart"]
'The quick start: a 4x4x4 torus with dimension-order routing under uniform traffic.'

A bundled config names the files it reads (``traffic.trace``, ``topology.file``,
``routing.table.file``) by their path from the folder that holds the bundle, as from the root
of a clone (``configs/examples/trace.csv``); :func:`bundle_files` makes them absolute, so the
config runs from any folder and from an installed wheel alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


def listing() -> list[tuple[str, str]]:
    """Every bundled config as ``(name, description)``: the name ``icsim run`` takes
    (``examples/mesh_dor``) and the first sentence of the comment that opens the file."""
    out = []
    for path in sorted(HERE.rglob("*.yaml")):
        name = path.relative_to(HERE).with_suffix("").as_posix()
        out.append((name, describe(path.read_text(encoding="utf-8"))))
    return out


def describe(text: str) -> str:
    """The first sentence of the comment lines that open a YAML file ("" if none).

    >>> describe("# A ring of 8 nodes. Uses DOR.\\n#   icsim run ring\\nseed: 1\\n")
    'A ring of 8 nodes.'
    """
    words = []
    for line in text.splitlines():
        if not line.startswith("#") or line.startswith("#   "):     # the examples after it
            break
        words.append(line.lstrip("#").strip())
    comment = " ".join(w for w in words if w)
    first = re.match(r"(.+?[.!?])(\s|$)", comment)
    return first.group(1) if first else comment


#: the keys of a config that name a file: a bundled config's paths are taken from the bundle
FILE_KEYS = (("traffic", "trace"), ("topology", "file"), ("routing", "table", "file"),
             ("routing", "table"))


def bundle_files(path: str | Path, data: dict[str, Any]) -> dict[str, Any]:
    """``data``, read from the config file ``path``, with the relative file paths it names made
    absolute from the folder that holds the bundle, if ``path`` is a bundled config (module
    docstring); ``data`` itself otherwise (a user's config names files from the working
    directory)."""
    try:
        Path(path).resolve().relative_to(HERE)
    except (ValueError, OSError):
        return data
    for keys in FILE_KEYS:
        section = data
        for key in keys[:-1]:
            section = section.get(key) if isinstance(section, dict) else None
        value = section.get(keys[-1]) if isinstance(section, dict) else None
        if isinstance(value, str) and value and not Path(value).is_absolute():
            section[keys[-1]] = str(HERE.parent / value)
    return data
