"""Building numba's cache of the compiled engine before the run that needs it: in this process
(:func:`compile_now`, what a sweep does before it starts its workers, so that they load the
machine code instead of each compiling it), or in a detached process in the background
(:func:`build_in_background`, while ``run.engine: auto`` answers a small first run on the SimPy
engine: :func:`icsim.simulator.simulation.make_engine`).

One build at a time: the process that starts a background build creates the marker
:data:`.cache.BUILDING_MARKER` in numba's cache folder (exclusively: of two starting at once one
starts it) and writes the builder's process id into it; the builder removes it when it ends.
Should the builder be killed, the next look at the marker removes it
(:func:`.cache.running_build`: its process is gone, or it is older than
:data:`.cache.STALE_AFTER_S`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from icsim.model.config import config_from_dict
from icsim.simulator.build import build
from icsim.simulator.engines.compiled.cache import (BUILDING_MARKER, announce_compilation,
                                                    cache_folder, clear_stale_cache,
                                                    kernel_cached, running_build)
from icsim.simulator.engines.compiled.engine import CompiledEngine

#: the smallest run there is: a 3x3 torus without traffic for 0.3 µs.  Every config gives the
#: loop the same argument types (the records' arrays), so its machine code serves them all; it
#: also compiles the calendar's ``at``, which the engine calls from Python before the loop
TINY_RUN = {"topology": {"kind": "torus", "dims": [3, 3]}, "traffic": {"load": 0.0},
            "run": {"warmup_us": 0.1, "measure_us": 0.1, "drain_us": 0.1,
                    "engine": "compiled"}}


def compile_kernel() -> None:
    """Compile the loop into numba's cache (or load it from there), by one tiny run."""
    model = build(config_from_dict(TINY_RUN))
    CompiledEngine(model.spec, model.workload, model.routing_stream).run()


def compile_now() -> bool:
    """Make sure numba's cache holds the compiled engine, compiling it in this process when it
    does not (announced on stderr, or waiting for a build running in the background).
    Returns whether it had to."""
    clear_stale_cache()
    if kernel_cached():
        return False
    announce_compilation()
    compile_kernel()
    return True


def build_in_background() -> str:
    """Start building numba's cache of the compiled engine in a process of its own, which
    neither waits for this one nor ends with it (a session of its own, so that Ctrl-C here
    does not reach it either); it ends by itself when the cache is written.

    Returns
    -------
    str
        ``"started"``; ``"running"`` when a build runs already (none is started); ``""`` when
        none can be (numba's cache folder cannot be written, or no process started): the run
        then compiles the engine itself.
    """
    folder = cache_folder()
    if folder is None:
        return ""
    if running_build() is not None:
        return "running"
    marker = folder / BUILDING_MARKER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return "running"
    except OSError:
        return ""
    code = ("from icsim.simulator.engines.compiled.building import build_cache; "
            f"build_cache({str(marker)!r})")
    try:
        # in the cache folder, not holding on to the caller's
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=folder,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        os.close(fd)
        marker.unlink(missing_ok=True)
        return ""
    os.write(fd, str(proc.pid).encode())
    os.close(fd)
    return "started"


def build_cache(marker: str) -> None:
    """The background build's work (:func:`build_in_background`): compile the engine into
    numba's cache at a low priority, then remove ``marker`` (should the build be killed, the
    next look at the marker removes it: :func:`.cache.running_build`)."""
    try:
        Path(marker).write_text(str(os.getpid()))     # so that it never waits for itself
        os.nice(10)                  # the run that started it goes on meanwhile, on SimPy
        clear_stale_cache()
        compile_kernel()
    finally:
        Path(marker).unlink(missing_ok=True)
