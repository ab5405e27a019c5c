"""The arguments of a run or a sweep, checked where they come in (the Python API's ``run`` and
``sweep``, the command line's ``icsim sweep``), so that a wrong one is one line naming it, not a
traceback from wherever it is first used.

A wrong kind of value is a ``TypeError``, a wrong value a ``ValueError``; the message starts
with the argument's name and ends with what was given:

>>> check_seeds(True)
Traceback (most recent call last):
...
TypeError: seeds: a whole number (1 or more), got True (bool)
>>> check_loads([])
Traceback (most recent call last):
...
ValueError: loads: no loads given; give a grid ('0.1:0.5:0.1'), a load or a list of loads
>>> check_overrides({5: 0.3})
Traceback (most recent call last):
...
TypeError: overrides: keys are dotted config keys such as 'traffic.load', got 5 (int)
>>> check_sweep_size(20, [2, 3], seeds=10)
>>> check_sweep_size(20, [], seeds=1_000_000_000)
Traceback (most recent call last):
...
ValueError: seeds: 20 loads x 1,000,000,000 seeds make 20,000,000,000 runs, more than the limit of 100,000 runs of one sweep
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sized

import numpy as np

from icsim.experiments.pipeline.curves import parse_loads

#: the most runs (curves x seeds x loads) one sweep may plan; its curves are made before the
#: first run (about 6 KB each) and every finished run's row is kept (more again)
MAX_SWEEP_RUNS = 100_000


def _given(value: Any) -> str:
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{text} ({type(value).__name__})"


def check_flag(name: str, value: Any, optional: bool = False) -> bool | None:
    """``value`` as a flag: True or False (NumPy's too), or None where ``optional``; text such
    as ``"no"`` is refused, not taken as true.

    >>> check_flag("progress", "no")
    Traceback (most recent call last):
    ...
    TypeError: progress: True or False, got 'no' (str)
    """
    if value is None and optional:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: True or False{' (or None)' if optional else ''}, got "
                        f"{_given(value)}")
    return bool(value)


def check_folder(name: str, value: Any) -> Path | None:
    """An output folder (None: none): a path that is a folder or can be made one (not a file,
    nor below one), as the command line's ``--out`` says it.

    >>> check_folder("out", __file__)                     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: out: .../arguments.py is a file, not a folder
    """
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}: a folder's path, got {_given(value)}")
    path = Path(value)
    for above in (path, *path.parents):
        if above.exists():
            if not above.is_dir():
                raise ValueError(f"{name}: {path} "
                                 f"{'is' if above == path else 'is below'} a file, not a "
                                 f"folder")
            break
    return path


def plain(value: Any) -> Any:
    """NumPy's scalars and arrays as Python's own numbers and lists (what a config and a
    reproduction's options take: ``np.int64(4)`` is a whole number), through dicts, lists
    and tuples.

    >>> plain({"dims": [np.int64(4), 4], "load": np.float64(0.5), "x": np.arange(2)})
    {'dims': [4, 4], 'load': 0.5, 'x': [0, 1]}
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


def check_count(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as a whole number of at least ``minimum`` (not a boolean, a float or text)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: a whole number ({minimum} or more), got {_given(value)}")
    if value < minimum:
        raise ValueError(f"{name}: at least {minimum}, got {value}")
    return int(value)


def check_seeds(seeds: Any) -> int:
    """The number of seeds of a sweep: a whole number, at least 1."""
    return check_count("seeds", seeds)


def check_loads(loads: Any) -> list[float]:
    """A sweep's loads: a grid as text (``"0.1:0.5:0.1"``, the command line's ``--loads``), one
    load, or an iterable of loads; each a finite number above 0.  The sorted distinct loads."""
    if isinstance(loads, str):
        try:
            return parse_loads(loads)
        except ValueError as exc:
            raise ValueError("loads: " + str(exc).removeprefix("--loads: ")) from None
    if isinstance(loads, numbers.Real) and not isinstance(loads, bool):
        loads = [loads]
    if isinstance(loads, (bytes, Mapping)) or not isinstance(loads, Iterable):
        raise TypeError(f"loads: a grid ('0.1:0.5:0.1'), a load or a list of loads, got "
                        f"{_given(loads)}")
    grid = []
    for x in loads:
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise TypeError(f"loads: every load is a number, got {_given(x)}")
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"loads: every load is a finite number above 0, got {x!r}")
        grid.append(float(x))
        if len(grid) > MAX_SWEEP_RUNS:
            raise ValueError(f"loads: more than {MAX_SWEEP_RUNS:,} loads")
    if not grid:
        raise ValueError("loads: no loads given; give a grid ('0.1:0.5:0.1'), a load or a list "
                         "of loads")
    return sorted(set(grid))


def check_overrides(overrides: Any) -> dict[str, Any]:
    """Dotted-key overrides (``{"traffic.load": 0.3}``): a mapping whose keys are dotted config
    keys (text with no empty part)."""
    if overrides is None:
        return {}
    if not isinstance(overrides, Mapping):
        raise TypeError(f"overrides: a dict of dotted keys ({{'traffic.load': 0.3}}), got "
                        f"{_given(overrides)}")
    for key in overrides:
        if not isinstance(key, str):
            raise TypeError(f"overrides: keys are dotted config keys such as 'traffic.load', "
                            f"got {_given(key)}")
        if not key or not all(part.strip() for part in key.split(".")):
            raise ValueError(f"overrides: {key!r} is not a dotted config key such as "
                             f"'traffic.load'")
    return dict(overrides)


def vary_sizes(vary: Any) -> list[int]:
    """How many values each ``vary`` entry of the Python API gives (a text value is the command
    line's comma list; an entry without a length counts as one value)."""
    if not isinstance(vary, Mapping):
        return []
    sizes = []
    for values in vary.values():
        if isinstance(values, str):
            sizes.append(values.count(",") + 1)
        elif isinstance(values, Sized):
            sizes.append(len(values))
        else:
            sizes.append(1)
    return sizes


def check_sweep_size(loads: int, vary: Iterable[int] = (), seeds: int = 1, *,
                     options: bool = False) -> None:
    """Refuse a sweep of more than :data:`MAX_SWEEP_RUNS` runs (``loads`` grid loads, ``vary``
    the number of values of each varied key, ``seeds`` per curve) before its curves are made;
    the message names ``seeds`` or ``vary`` when they are what makes the sweep too big, else
    ``loads`` (``--seeds``, ``--vary``, ``--loads`` with ``options``)."""
    curves = math.prod(vary)
    runs = loads * curves * seeds
    if runs <= MAX_SWEEP_RUNS:
        return
    parts = [f"{loads:,} load{'s' if loads != 1 else ''}"]
    if curves > 1:
        parts.append(f"{curves:,} combinations of varied values")
    if seeds > 1:
        parts.append(f"{seeds:,} seeds")
    name = ("seeds" if seeds > 1 and loads * curves <= MAX_SWEEP_RUNS else
            "vary" if curves > 1 and loads * seeds <= MAX_SWEEP_RUNS else "loads")
    raise ValueError(f"{'--' if options else ''}{name}: {' x '.join(parts)} make {runs:,} runs, "
                     f"more than the limit of {MAX_SWEEP_RUNS:,} runs of one sweep")
