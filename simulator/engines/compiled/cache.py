"""numba's cache of the compiled engine's machine code: whether it holds the loop
(:func:`kernel_cached`), saying so when the first run must compile it
(:func:`announce_compilation`), and dropping it when any module of the engine changed
(:func:`clear_stale_cache`)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from icsim.simulator.engines.compiled.loop import run as loop_run

_ANNOUNCED = False


def kernel_cached() -> bool:
    """Whether numba's cache holds machine code for this source of the kernel (else the first
    run in a process compiles it): numba's own index of :func:`.loop.run`, which it ignores
    once the source changed; should numba's internals move, any index file of it."""
    try:
        return bool(loop_run._cache._cache_file._load_index())
    except Exception:
        places = [Path(__file__).parent / "__pycache__", Path.home() / ".cache" / "numba"]
        if os.environ.get("NUMBA_CACHE_DIR"):
            places = [Path(os.environ["NUMBA_CACHE_DIR"])]
        return any(any(place.rglob("loop.run-*.nbi")) for place in places if place.is_dir())


def sources_fingerprint() -> str:
    """A hash of the source of every module of the engine that the loop's machine code is made
    of (all but the builder, this module and the package's ``__init__``)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name in ("engine.py", "cache.py", "__init__.py"):
            continue
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def clear_stale_cache() -> None:
    """Drop numba's cached machine code of the engine when any of its modules changed.

    numba checks a cached function against its own source file only, and the loop inlines the
    functions of every other module of the engine: an edit there (or an upgrade that changes
    only them, or a module renamed, whose name the cache index holds) would otherwise run stale
    machine code, or fail to load it.  The fingerprint of all the sources is kept beside the
    cache; when it differs, the engine's cache files go.  Nothing happens where the cache
    cannot be written (numba then compiles in memory)."""
    try:
        where = Path(loop_run._cache._cache_path)
    except AttributeError:               # should numba's internals move: its own checks only
        return
    stamp = where / "icsim-engine-sources"
    want = sources_fingerprint()
    try:
        if stamp.read_text() == want:
            return
    except OSError:
        pass
    try:
        for path in where.glob("*.nb[ic]"):
            path.unlink(missing_ok=True)
        stamp.write_text(want)
    except OSError:
        return


def announce_compilation() -> None:
    """Say on stderr, once per process, that the machine code is being compiled when numba's
    cache has none for the kernel yet (the first use on a machine: about a minute, nothing
    else would be printed meanwhile)."""
    global _ANNOUNCED
    if _ANNOUNCED:
        return
    _ANNOUNCED = True
    clear_stale_cache()
    if not kernel_cached():
        print("icsim: compiling the compiled engine (first use on this machine, about a "
              "minute; cached for every later run)", file=sys.stderr, flush=True)
