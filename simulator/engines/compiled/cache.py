"""numba's cache of the compiled engine's machine code: whether it holds the loop
(:func:`kernel_cached`), saying so when the first run must compile it
(:func:`announce_compilation`), dropping it when any module of the engine changed
(:func:`clear_stale_cache`), and the marker of a build of it running in the background
(:func:`running_build`, :func:`wait_for_build`; the build itself: :mod:`.building`)."""

from __future__ import annotations

import hashlib
import os
import sys
import time
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
    """A hash of the source of every module the loop's machine code is made of: the engine's
    (all but the builder, this module, the cache's builder and the package's ``__init__``) and
    :mod:`icsim.simulator.results`, whose saturation rules :mod:`.rules` compiles."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in [*sorted(here.glob("*.py")), here.parents[1] / "results.py"]:
        if path.name in ("engine.py", "cache.py", "building.py", "__init__.py"):
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


#: the file in numba's cache folder that says a build of the kernel runs in the background
#: (:mod:`.building`); it holds the builder's process id and goes when the build ends
BUILDING_MARKER = "icsim-engine-building"

#: a marker older than this is stale, whatever its process: a build takes about a minute (two
#: on a busy two-core machine), so one this old was killed, or its process id is another's now
STALE_AFTER_S = 600.0


def cache_folder() -> Path | None:
    """The folder where numba caches the kernel (None should numba's internals move)."""
    try:
        return Path(loop_run._cache._cache_path)
    except AttributeError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_build() -> float | None:
    """Seconds since the build of the kernel now running in the background began, or None
    when none runs (or this process is that build).  A marker left by a build that was killed
    (its process gone, or older than :data:`STALE_AFTER_S`) is removed here, so that it never
    holds up a run or a later build."""
    folder = cache_folder()
    if folder is None:
        return None
    marker = folder / BUILDING_MARKER
    try:
        age = time.time() - marker.stat().st_mtime
        text = marker.read_text().strip()
    except OSError:                           # no marker (or one being removed)
        return None
    # an empty marker is one whose starter has not yet written the builder's id into it
    if age > STALE_AFTER_S or (text.isdigit() and not _alive(int(text))):
        marker.unlink(missing_ok=True)
        return None
    if text == str(os.getpid()):              # the builder itself: not a build to wait for
        return None
    return max(0.0, age)


def wait_for_build(poll_s: float = 0.5) -> None:
    """Return when no build of the kernel runs in the background (at most
    :data:`STALE_AFTER_S`)."""
    while running_build() is not None:
        time.sleep(poll_s)


def announce_compilation() -> None:
    """Say on stderr, once per process, that the machine code is being compiled when numba's
    cache has none for the kernel yet (the first use on a machine: about a minute, nothing
    else would be printed meanwhile).  When a build of it runs in the background (started by
    an earlier small run, :mod:`.building`), wait for that build instead, and say so."""
    global _ANNOUNCED
    if _ANNOUNCED:
        return
    _ANNOUNCED = True
    clear_stale_cache()
    if kernel_cached():
        return
    began = running_build()
    if began is not None:
        print(f"icsim: waiting for the compiled engine, being built in the background (for "
              f"{began:.0f} s now; about a minute in all)", file=sys.stderr, flush=True)
        wait_for_build()
        if kernel_cached():
            return
    print("icsim: compiling the compiled engine (first use in this installation, about a "
          "minute; cached for every later run)", file=sys.stderr, flush=True)
