"""The configs bundled with icsim (package data: ``icsim.configs``).

>>> bundled("quickstart.yaml").name
'quickstart.yaml'
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
