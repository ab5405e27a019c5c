"""Where sweep points run: in-process, a local process pool, or a dask.distributed cluster.

All three executors share one small interface (:class:`Executor`): ``submit`` a task,
``wait`` until at least one finishes, take its ``result``, ``close``.  The sweep coordinator
(:func:`icsim.experiments.pipeline.sweep.run_sweep`) keeps at most ``slots`` tasks in flight and decides what
to run next from the results, so the executors know nothing about saturation searches.

* :class:`SerialExecutor` (``--workers 1``) runs each task in the calling process when it is
  waited for; simplest to debug, and what tests use to inject fake run functions.
* :class:`LocalPoolExecutor` (default, ``--workers N``, N defaults to ``os.cpu_count()``) is a
  ``concurrent.futures`` process pool.  Workers are started by the ``forkserver`` method where
  available (safe even if the coordinator has threads, e.g. a dask client) and preload the
  simulator.
* :class:`DaskExecutor` (``--scheduler ADDRESS``) submits to a dask.distributed scheduler.
  ``dask`` is imported only here, when asked for, so the base install works without it
  (``pip install icsim[dask]``).

The task that runs on a worker is :func:`execute_point`: it rebuilds and validates the config,
runs it, and turns any exception into an error record instead of raising, so a failing run is
recorded as saturated with its error text (docs/model.md §7).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TextIO

from icsim.model.registry import did_you_mean

if TYPE_CHECKING:
    import multiprocessing

    from tqdm import tqdm

    from icsim.model.config import Config

# the simulator, its config schema, tqdm and the process pool are imported where a run, a bar
# or a pool needs them: the command line's parsers take their options from here (icsim --help
# imports this module)

REPO_ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------------- worker side
def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def execute_point(config: dict[str, Any], run_fn: Callable | None = None) -> dict[str, Any]:
    """Run one simulation on a worker; never raises for a failing run.

    Parameters
    ----------
    config : dict
        A resolved config (``Config.to_dict()``); validated again here.
    run_fn : callable, optional
        ``run_fn(Config) -> result dict``; defaults to :func:`icsim.simulator.simulation.run`.
        Must be importable by name on the worker (a module-level function).

    Returns
    -------
    dict
        ``result`` (the run's result dict, or ``None``), ``error`` (``"Type: message"`` or
        ``None``), ``started_at``/``finished_at`` (UTC ISO), ``elapsed_s`` (build + run wall
        time) and ``host``.
    """
    from icsim.model.config import config_from_dict
    from icsim.simulator.simulation import run as simulate

    started, t0 = _now(), time.perf_counter()
    result, error = None, None
    try:
        cfg = config_from_dict(config)
        result = (run_fn or simulate)(cfg)
    except Exception as exc:  # any failure of a run is data: the point is saturated
        error = f"{type(exc).__name__}: {exc}"
    return {"result": result, "error": error, "started_at": started, "finished_at": _now(),
            "elapsed_s": time.perf_counter() - t0, "host": socket.gethostname()}


def compile_first(configs: Iterable[Config]) -> bool:
    """Compile the compiled engine in this process when numba's cache lacks it and any of
    ``configs`` will run on it (:func:`~icsim.simulator.simulation.runs_compiled`), before
    the workers of a pool start: each of them would otherwise compile it (a minute or two each,
    sharing the cores), and a small run alone would take the SimPy engine meanwhile.  Announced
    on stderr; nothing happens when the cache holds it.  Returns whether it compiled."""
    from icsim.simulator.engines.compiled.building import compile_now
    from icsim.simulator.engines.compiled.cache import clear_stale_cache, kernel_cached
    from icsim.simulator.simulation import runs_compiled

    clear_stale_cache()
    if kernel_cached() or not any(runs_compiled(c) for c in configs):
        return False
    return compile_now()


# ---------------------------------------------------------------------------------- executors
class Executor:
    """What the sweep coordinator needs from an execution backend."""

    #: how many tasks the coordinator keeps in flight
    slots: int = 1
    name: str = "?"
    #: whether its tasks run on this machine, with this numba cache (:func:`compile_first`)
    local: bool = True

    def submit(self, fn: Callable, *args: Any) -> Any:
        """Start ``fn(*args)``; return a handle."""
        raise NotImplementedError

    def wait(self, handles: list[Any]) -> list[Any]:
        """Block until at least one of ``handles`` is finished; return the finished ones."""
        raise NotImplementedError

    def result(self, handle: Any) -> Any:
        """The value of a finished task (re-raises what the task raised)."""
        raise NotImplementedError

    def close(self, abort: bool = False) -> None:
        """Release the backend; with ``abort``, stop unfinished tasks as far as possible."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(abort=exc_type is not None)


class _Deferred:
    """A task of the serial executor: run when first waited for."""

    __slots__ = ("fn", "args", "done", "value")

    def __init__(self, fn: Callable, args: tuple) -> None:
        self.fn, self.args, self.done, self.value = fn, args, False, None


class SerialExecutor(Executor):
    """Runs each task in this process, when :meth:`wait` is called (one at a time)."""

    name = "serial"

    def __init__(self) -> None:
        self.slots = 1

    def submit(self, fn: Callable, *args: Any) -> _Deferred:
        return _Deferred(fn, args)

    def wait(self, handles: list[_Deferred]) -> list[_Deferred]:
        done = [h for h in handles if h.done]
        if done:
            return done
        h = handles[0]
        h.value = h.fn(*h.args)
        h.done = True
        return [h]

    def result(self, handle: _Deferred) -> Any:
        return handle.value


def _preload_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["icsim.simulator.simulation",
                                      "icsim.experiments.pipeline.execution"])
        return ctx
    return multiprocessing.get_context("spawn")


def end_with(parent: int) -> None:
    """Make this process end when the process ``parent`` ends (a pool worker's initializer).

    A pool's workers wait for tasks on a pipe that the dead never close: had the coordinator
    been killed (``kill -9``, the out-of-memory killer, a batch system's time limit), its
    workers, and with them the forkserver and the resource tracker, which live as long as any
    worker does, stayed alive and kept their memory (about 590 MB for a two-worker sweep).  A
    thread waits for ``parent`` to end (on a pidfd, else by polling) and ends the worker at
    once: nothing it was computing is lost, since a finished point is written by the
    coordinator the moment it returns, and an unfinished one runs again on resumption."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the coordinator's to handle
    try:
        handle = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(1)                               # ended already
    except (AttributeError, OSError):             # no pidfd here: poll
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])       # readable once the process has ended
        else:
            while _alive(parent):
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="icsim-end-with-parent", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalPoolExecutor(Executor):
    """A local process pool of ``workers`` processes, which end with this process however it
    ends (:func:`end_with`)."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        import concurrent.futures as cf

        self.slots = max(1, workers or os.cpu_count() or 1)
        ctx = _preload_context()
        if ctx.get_start_method() == "forkserver":
            # the forkserver (and the workers it forks) start with Ctrl-C ignored: a Ctrl-C
            # while it imports would print its traceback; the coordinator stops the workers
            from multiprocessing import forkserver
            try:
                previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            except ValueError:                    # not the main thread: as it is
                previous = None
            try:
                forkserver.ensure_running()
            finally:
                if previous is not None:
                    signal.signal(signal.SIGINT, previous)
        self._pool = cf.ProcessPoolExecutor(max_workers=self.slots, mp_context=ctx,
                                            initializer=end_with, initargs=(os.getpid(),))

    def submit(self, fn: Callable, *args: Any) -> Any:
        return self._pool.submit(fn, *args)

    def wait(self, handles: list[Any]) -> list[Any]:
        import concurrent.futures as cf

        done, _ = cf.wait(handles, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any) -> Any:
        return handle.result()

    def close(self, abort: bool = False) -> None:
        if abort:
            # Runs can take hours: on Ctrl-C do not wait for them.  Every finished point is
            # already in the CSV, so killing the workers loses nothing.
            processes = list(getattr(self._pool, "_processes", {}).values())
            self._pool.shutdown(wait=False, cancel_futures=True)
            for p in processes:
                if p.is_alive():
                    p.terminate()
            for p in processes:
                p.join(timeout=5)
        else:
            self._pool.shutdown(wait=True)


class ExecutorError(RuntimeError):
    """An execution backend that cannot start (``--scheduler`` names no usable scheduler); the
    command line prints its one line and exits with status 2."""


class DaskExecutor(Executor):
    """Tasks submitted to a dask.distributed scheduler.

    Parameters
    ----------
    address : str, optional
        Scheduler address (``tcp://host:8786``); a client is created and closed by us.
    client : distributed.Client, optional
        An existing client instead (e.g. on an in-process ``LocalCluster``); not closed by us.
    slots : int, optional
        Tasks kept in flight; default: the cluster's total worker threads.
    """

    name = "dask"
    local = False

    def __init__(self, address: str | None = None, client: Any = None,
                 slots: int | None = None) -> None:
        try:
            import distributed
        except ImportError:
            raise ExecutorError("--scheduler needs dask.distributed: pip install "
                                "'icsim[dask]'") from None
        self._distributed = distributed
        self._own = client is None
        try:
            self.client = client if client is not None else distributed.Client(address)
            threads = sum(self.client.nthreads().values()) or 1
        except Exception as exc:        # a malformed address, nobody there, not a scheduler
            raise ExecutorError(f"--scheduler {address}: no dask scheduler to use there "
                                f"({type(exc).__name__}: {' '.join(str(exc).split())})") \
                from None
        self.slots = max(1, slots or threads)
        self._futures: set[Any] = set()

    def submit(self, fn: Callable, *args: Any) -> Any:
        future = self.client.submit(fn, *args, pure=False)
        self._futures.add(future)
        return future

    def wait(self, handles: list[Any]) -> list[Any]:
        done, _ = self._distributed.wait(handles, return_when="FIRST_COMPLETED")
        return list(done)

    def result(self, handle: Any) -> Any:
        self._futures.discard(handle)
        return handle.result()

    def close(self, abort: bool = False) -> None:
        if abort and self._futures:
            self.client.cancel(list(self._futures))
        self._futures.clear()
        if self._own:
            self.client.close()


def make_executor(workers: int | None = None, scheduler: str | None = None) -> Executor:
    """The executor for ``--workers``/``--scheduler``: dask if a scheduler address is given,
    in-process for one worker, otherwise a local process pool (``os.cpu_count()`` workers)."""
    if scheduler:
        return DaskExecutor(scheduler, slots=workers)
    n = workers or os.cpu_count() or 1
    if n <= 1:
        return SerialExecutor()
    return LocalPoolExecutor(n)


def cut_partial_line(path: Path, say: bool = True) -> bool:
    """Cut a last line without its line end (a write a kill cut short) off the file ``path``,
    which a restartable command appends to a line at a time, so that its task runs again
    instead of counting as done and the next line is not appended onto it; a file left empty
    is removed.  Says so on stderr unless ``say`` is false; returns whether a line was cut."""
    path = Path(path)
    data = path.read_bytes() if path.exists() else b""
    if not data or data.endswith(b"\n"):
        return False
    keep = data.rfind(b"\n") + 1
    with open(path, "r+b") as f:
        f.truncate(keep)
    if keep == 0:
        path.unlink()
    if say:
        print(f"{path}: dropped its last line, cut short by an interrupted write; its task "
              f"runs again", file=sys.stderr)
    return True


def read_appended(path: Path, **read_csv: Any) -> Any:
    """The rows a restartable reproduction has appended to the CSV ``path`` so far (a pandas
    DataFrame; empty if there is no file), after :func:`cut_partial_line`."""
    import pandas as pd

    path = Path(path)
    cut_partial_line(path)
    return pd.read_csv(path, **read_csv) if path.exists() else pd.DataFrame()


def run_appending(tasks: list[Any], fn: Callable[[Any], list[dict[str, Any]]], path: Path,
                  columns: list[str], workers: int | None = 1, reused: int = 0,
                  label: str = "runs", progress: bool | None = None) -> int:
    """Run ``fn(task)`` for every task and append the rows it returns to the CSV ``path`` as
    soon as it finishes (columns in the order of ``columns``), so that an interrupted
    reproduction loses only the tasks in flight and, run again, can skip what the CSV holds.
    ``workers`` as for :func:`make_executor`; progress with an ETA on stderr (``None``: on a
    terminal only).  Returns the number of tasks run.  Read what it wrote with
    :func:`read_appended`."""
    import pandas as pd

    path = Path(path)
    cut_partial_line(path)                    # a line cut short must not take the next row
    progress = Progress(label, enabled=progress)
    progress.reused = reused
    with make_executor(workers) as ex:
        pending = [ex.submit(fn, t) for t in tasks]
        while pending:
            for h in ex.wait(pending):
                pending.remove(h)
                pd.DataFrame(ex.result(h), columns=columns).to_csv(
                    path, mode="a", header=not path.exists(), index=False)
                progress.ran += 1
                progress.update(min(ex.slots, len(pending)),
                                max(0, len(pending) - ex.slots))
    progress.close()
    return len(tasks)


# ---------------------------------------------------------------------------------- provenance
def git_commit(path: Path = REPO_ROOT) -> str:
    """The git commit of the code (``+dirty`` if tracked files are modified), or ``""``."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return ""
        status = subprocess.run(["git", "-C", str(path), "status", "--porcelain",
                                 "--untracked-files=no"], capture_output=True, text=True,
                                timeout=10)
        return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return ""


def package_version() -> str:
    from icsim.simulator.results import package_version as version

    return version()


# ---------------------------------------------------------------------------------- progress
def format_duration(seconds: float) -> str:
    """``75`` -> ``"1m15s"``."""
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


class Progress:
    """A one-line progress report with an ETA, on stderr.

    By default (``enabled=None``) it is a live line on a terminal, rewritten in place; when
    stderr is piped or redirected (a batch job's log) a job that has run :data:`BATCH_AFTER_S`
    writes a line then and one every :data:`BATCH_EVERY_S` after (``batch``), so that a long
    job is never silent and a short one says nothing; ``enabled=True`` (``--progress``) writes
    every update, ``False`` (``--quiet``) none.  The ETA is an upper bound: the remaining count
    assumes every curve climbs to the end of its grid.
    """

    #: not on a terminal: the first line once a job has run this long (s), then one this often
    BATCH_AFTER_S = 10.0
    BATCH_EVERY_S = 30.0

    def __init__(self, label: str = "sweep", stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.perf_counter()
        self.ran = 0
        self.reused = 0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.batch = enabled is None and not self._tty
        self.enabled = True if self.batch else (self._tty if enabled is None else bool(enabled))
        self._width = 0
        self._shown_at: float | None = None

    def due(self, elapsed: float) -> bool:
        """Whether a line is due now (always, but in a batch log: :attr:`BATCH_AFTER_S`, then
        every :attr:`BATCH_EVERY_S`)."""
        if not self.batch:
            return True
        if elapsed < self.BATCH_AFTER_S or (
                self._shown_at is not None and elapsed - self._shown_at < self.BATCH_EVERY_S):
            return False
        self._shown_at = elapsed
        return True

    def update(self, running: int, remaining: int, last: str = "") -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        if not self.due(elapsed):
            return
        eta = ""
        if self.ran and remaining + running:
            eta = f", ETA <= {format_duration((remaining + running) * elapsed / self.ran)}"
        line = (f"[{self.label}] {self.ran} new, {self.reused} reused, {running} running, "
                f"<= {remaining} to go; {format_duration(elapsed)} elapsed{eta}"
                + (f" | {last}" if last else ""))
        self._show(line)

    def _show(self, line: str) -> None:
        """Rewrite the line in place on a terminal; one line per update elsewhere."""
        if self._tty:
            pad = max(0, self._width - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._tty and self._width:
            self.stream.write("\n")
            self.stream.flush()


def shown_live(stream: TextIO) -> bool:
    """Whether what is written to ``stream`` is seen as it is written and a line can be
    redrawn: a terminal, or the output of a Jupyter notebook's cell."""
    return bool(getattr(stream, "isatty", lambda: False)()) or \
        type(stream).__module__.startswith("ipykernel")


class ProgressBar(Progress):
    """A sweep's progress as a tqdm bar on stderr (:func:`icsim.sweep`'s): runs made against
    at most how many there will be (the bound shrinks as curves saturate; reused runs are
    counted beside it), the last run's verdict after it.  By default (``enabled=None``) shown
    where stderr is seen live (:func:`shown_live`), none otherwise."""

    def __init__(self, label: str = "sweep", stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        stream = stream if stream is not None else sys.stderr
        super().__init__(label, stream, shown_live(stream) if enabled is None else enabled)
        self._bar: tqdm | None = None

    def update(self, running: int, remaining: int, last: str = "") -> None:
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(desc=self.label, unit="run", file=self.stream, dynamic_ncols=True)
        self._bar.total = self.ran + running + remaining
        self._bar.n = self.ran
        reused = f"{self.reused} reused" if self.reused else ""
        self._bar.set_postfix_str(", ".join(x for x in (reused, last) if x), refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class RunProgress(Progress):
    """Progress of one long simulation on stderr: simulated time against the run's end (window
    mode) or packets delivered against those to deliver (finite mode), the rate of delivery and
    an ETA from the wall time so far.  A callable for the engines' ``progress(now_ps, end_ps,
    delivered, expected)``; a live line on a terminal (at most one per ``every_s``), a line now
    and then in a batch log (:class:`Progress`); :meth:`setting_up` says that the network is
    being built while it is (a big topology's tables, the compiled engine's build).
    """

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None,
                 every_s: float = 0.5) -> None:
        super().__init__("run", stream, enabled)
        self.every_s = every_s
        self._last = -1.0
        self._first: tuple[float, float] | None = None
        self._started = threading.Event()           # the engine's first report: set-up over

    def __call__(self, now_ps: int, end_ps: int, delivered: int, expected: int) -> None:
        if not self.enabled:
            return
        self._started.set()
        elapsed = time.perf_counter() - self.t0
        if end_ps:
            done = now_ps / end_ps
            where = f"simulated {now_ps / 1e6:,.1f} of {end_ps / 1e6:,.1f} us"
        else:
            done = delivered / expected if expected > 0 else 0.0
            where = f"simulated {now_ps / 1e6:,.1f} us"
        if self._first is None:          # the rate is taken from here (model built, code loaded)
            self._first = (elapsed, done, delivered)
        if elapsed - self._last < self.every_s or not self.due(elapsed):
            return
        self._last = elapsed
        line = f"[run] {where}, {delivered:,} packets delivered" + (
            f" of {expected:,}" if expected > 0 and not end_ps else "")
        e0, d0, n0 = self._first
        if elapsed > e0 and delivered > n0:
            line += f" ({(delivered - n0) / (elapsed - e0):,.0f}/s)"
        line += f"; {format_duration(elapsed)} elapsed"
        if d0 < done < 1 and elapsed > e0:
            line += f", ETA {format_duration((elapsed - e0) * (1 - done) / (done - d0))}"
        self._show(line)

    @contextlib.contextmanager
    def setting_up(self, what: str = "building the network") -> Iterator[None]:
        """While the body runs (the network built, the engine loaded or compiled), a line
        saying so: on a terminal after 2 s, every second; in a batch log after
        :attr:`BATCH_AFTER_S`, every :attr:`BATCH_EVERY_S`."""
        if not self.enabled:
            yield
            return
        done = threading.Event()
        first, every = (2.0, 1.0) if self._tty else (self.BATCH_AFTER_S,
                                                     max(0.05, self.BATCH_EVERY_S))

        def beat() -> None:
            if done.wait(first):
                return
            while not (done.is_set() or self._started.is_set()):
                self._show(f"[run] setting up ({what}): "
                           f"{format_duration(time.perf_counter() - self.t0)} so far")
                if done.wait(every):
                    return

        thread = threading.Thread(target=beat, name="icsim-setup-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()


# ------------------------------------------------------------------ command-line argument types
def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number of at least ``minimum`` (a count of workers, seeds,
    draws), so that 0, -1 or ``abc`` is the option's own one-line error, not a traceback from
    wherever the number is first used or a silent reading of it as something else."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, "
                                             f"got {text!r}")
        return value

    return parse


positive_int = whole_number(1)
natural_int = whole_number(0)


def positive_number(text: str) -> float:
    """An argparse ``type``: a finite number above 0 (a time limit in seconds, a load)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def csv_list(choices: tuple[str, ...] | None = None) -> Callable[[str], list[str]]:
    """An argparse ``type``: a comma-separated list, each item one of ``choices`` (any if None)."""
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("empty list")
        if choices is not None:
            bad = [t for t in items if t not in choices]
            if bad:
                near = did_you_mean(bad[0], choices)
                raise argparse.ArgumentTypeError(
                    f"unknown {', '.join(bad)} ({near + ' ' if near else ''}choose from "
                    f"{', '.join(choices)})")
        return items

    return parse


def add_engine_argument(parser: Any) -> None:
    """``--engine``: the simulation engine of every run the command makes (``run.engine``; not
    part of a run's identity, so results of either engine are reused alike)."""
    parser.add_argument("--engine", choices=("auto", "simpy", "compiled"), default=None,
                        help="simulation engine (default: the config's run.engine, auto = the "
                             "compiled engine where it supports the config, SimPy otherwise)")


def engine_overrides(args: Any) -> list[str]:
    """The ``--set`` overrides that ``--engine`` stands for (none without it)."""
    engine = getattr(args, "engine", None)
    return [f"run.engine={engine}"] if engine else []


def add_execution_arguments(parser: Any) -> None:
    """``--workers``, ``--scheduler`` and ``--engine``, shared by ``icsim sweep`` and the
    reproductions."""
    add_engine_argument(parser)
    parser.add_argument("--workers", type=positive_int, default=None, metavar="N",
                        help="parallel local worker processes (default: os.cpu_count(), here "
                             f"{os.cpu_count()}); 1 runs everything in this process. With "
                             "--scheduler: how many runs to keep in flight (default: the "
                             "cluster's worker threads)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run on a dask.distributed scheduler, e.g. tcp://head:8786 "
                             "(needs pip install 'icsim[dask]' here and icsim installed on "
                             "the workers)")
