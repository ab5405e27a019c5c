"""Long steps before a run: a line on stderr, made once per process, and no cyclic garbage
collection meanwhile.

Building OFR's plans for a wide torus, a BFS table for 4,096 nodes or LASH's layers for a
million routes takes minutes before anything is simulated, and nothing else is printed
meanwhile: without a word it looks like a hang.  Such a step counts its work through a
:class:`Note`, which stays quiet unless the step passes :data:`NOTE_AFTER_S`, and then says
once how far it is and about how long the rest will take.  Setting up a run (its network,
routing tables and traffic) counts its steps through a note of its own, which speaks sooner,
past :data:`SETUP_NOTE_AFTER_S`, and only to a terminal.

What such a step makes from a key alone (a network's route tables, a routing program with its
deadlock check, OFR's plans) is kept by a :class:`Kept`, so that the runs of a sweep worker
that share it make it once.

A table of N nodes is N(N - 1) route tuples, none of them in a reference cycle; while they are
made, Python's cyclic collector walks every one of them again and again, so that the collector
took most of the time of a large table (:func:`gc_paused`).

>>> note = Note("building something", total=4)
>>> for done in range(1, 5):
...     note(done)                  # quick: nothing said
"""

from __future__ import annotations

import gc
import math
import sys
import threading
from contextlib import contextmanager
from time import perf_counter
from typing import Any, Callable, Hashable, Iterable, Iterator, TypeVar

import numpy as np

T = TypeVar("T")

#: a step still working after this many seconds says so, once (OFR's plans of the 16x16x16
#: torus with the reference candidate sets take about 8 s, and stay quiet)
NOTE_AFTER_S = 10.0
#: setting up a run says how far it is once it has taken this long (on a terminal)
SETUP_NOTE_AFTER_S = 2.0


class Note:
    """Call with the count done so far (and the step now under way, if it has a name); says
    once on stderr, past ``after_s`` (default :data:`NOTE_AFTER_S`), ``icsim: <what>: <done>
    of <total> in <s> s, about <s> s more`` (without the estimate when ``estimate`` is false:
    steps of unequal length), then the step under way.  ``terminal_only``: only when stderr
    is a terminal (a progress line for people, not for logs).  ``timer``: says it when the
    time passes even in the middle of a long step (a timer thread), until :meth:`close`; as
    a context manager it closes itself.  ``doing``: the step under way at first."""

    def __init__(self, what: str, total: int, after_s: float | None = None,
                 terminal_only: bool = False, estimate: bool = True,
                 timer: bool = False, doing: str = "") -> None:
        self.what, self.total = what, total
        self.after_s, self.estimate = after_s, estimate
        self.done, self.doing = 0, doing
        self.t0 = perf_counter()
        self.said = terminal_only and not _terminal(sys.stderr)
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if timer and not self.said:
            self._timer = threading.Timer(max(self._after(), 0.0), self._when_due)
            self._timer.daemon = True
            self._timer.start()

    def _after(self) -> float:
        return NOTE_AFTER_S if self.after_s is None else self.after_s

    def __call__(self, done: int, doing: str = "") -> None:
        self.done, self.doing = done, doing
        if self.said or done <= 0:
            return
        elapsed = perf_counter() - self.t0
        if elapsed > self._after():
            self._say(elapsed)

    def _when_due(self) -> None:
        if not self.said:
            self._say(perf_counter() - self.t0)

    def _say(self, elapsed: float) -> None:
        with self._lock:
            if self.said:
                return
            self.said = True
        line = f"icsim: {self.what}: {self.done:,} of {self.total:,} in {elapsed:.0f} s"
        if self.estimate and self.done > 0:
            line += f", about {elapsed * max(self.total - self.done, 0) / self.done:.0f} s more"
        print(line + (f" ({self.doing})" if self.doing else ""), file=sys.stderr, flush=True)

    def close(self) -> None:
        """Nothing more to say (the step is over)."""
        with self._lock:
            self.said = True
        if self._timer is not None:
            self._timer.cancel()

    def __enter__(self) -> "Note":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def noted(items: Iterable[T], total: int, what: str) -> Iterator[T]:
    """``items`` (``total`` of them), counted through a :class:`Note`."""
    note = Note(what, total)
    for done, item in enumerate(items, 1):
        yield item
        note(done)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (as it was after): for steps that make millions of
    objects and no reference cycles.  A BFS table of 13x13x13 (4.8 M routes) took 64.5 s with
    the collector on and 19.2 s with it off (the same table; two processes side by side)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Kept:
    """What a long step made in this process, by what defines it (``key``): each run of a
    sweep builds its own model, and a step whose result depends on its key alone is made
    once for all the runs of a worker that share the key.  The most recently used are kept:
    at most ``kept``, and the older ones dropped while the arrays of all together pass
    ``max_bytes`` (the newest stays whatever its size).  Whoever gets one only reads it.

    >>> kept = Kept(2)
    >>> a = kept.get(("x", 1), lambda: [1])
    >>> kept.get(("x", 1), lambda: [2]) is a, kept.get(("x", 2), lambda: [1]) is a
    (True, False)
    """

    def __init__(self, kept: int, max_bytes: float = math.inf) -> None:
        self.kept, self.max_bytes = kept, max_bytes
        self._items: dict[Hashable, tuple[Any, int]] = {}

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The thing made for ``key``, made by ``make()`` if not kept."""
        item = self._items.pop(key, None)
        if item is None:
            made = make()
            item = (made, array_bytes(made))
        self._items[key] = item                      # the most recently used last
        while len(self._items) > 1 and (
                len(self._items) > self.kept
                or sum(size for _, size in self._items.values()) > self.max_bytes):
            del self._items[next(iter(self._items))]
        return item[0]

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def array_bytes(obj: Any, seen: set[int] | None = None, depth: int = 4) -> int:
    """The bytes of the numpy arrays ``obj`` holds (in its attributes, tuples, lists and
    dicts, ``depth`` levels down), each array once."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth < 0:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        base = obj.base
        return array_bytes(base, seen, depth) if isinstance(base, np.ndarray) else obj.nbytes
    if isinstance(obj, (tuple, list)):
        parts = obj
    elif isinstance(obj, dict):
        parts = obj.values()
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        parts = vars(obj).values()
    else:
        return 0
    return sum(array_bytes(p, seen, depth - 1) for p in parts)
