"""Long steps before a run: a line on stderr, and no cyclic garbage collection meanwhile.

Building OFR's plans for a wide torus, a BFS table for 4,096 nodes or LASH's layers for a
million routes takes minutes before anything is simulated, and nothing else is printed
meanwhile: without a word it looks like a hang.  Such a step counts its work through a
:class:`Note`, which stays quiet unless the step passes :data:`NOTE_AFTER_S`, and then says
once how far it is and about how long the rest will take.

A table of N nodes is N(N - 1) route tuples, none of them in a reference cycle; while they are
made, Python's cyclic collector walks every one of them again and again, so that the collector
took most of the time of a large table (:func:`gc_paused`).

>>> note = Note("building something", total=4)
>>> for done in range(1, 5):
...     note(done)                  # quick: nothing said
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from time import perf_counter
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")

#: a step still working after this many seconds says so, once (OFR's plans of the 16x16x16
#: torus with the reference candidate sets take about 8 s, and stay quiet)
NOTE_AFTER_S = 10.0


class Note:
    """Call with the count done so far; says once on stderr, past :data:`NOTE_AFTER_S`,
    ``icsim: <what>: <done> of <total> in <s> s, about <s> s more``."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total = what, total
        self.t0 = perf_counter()
        self.said = False

    def __call__(self, done: int) -> None:
        if self.said or done <= 0:
            return
        elapsed = perf_counter() - self.t0
        if elapsed > NOTE_AFTER_S:
            self.said = True
            rest = elapsed * max(self.total - done, 0) / done
            print(f"icsim: {self.what}: {done:,} of {self.total:,} in {elapsed:.0f} s, "
                  f"about {rest:.0f} s more", file=sys.stderr, flush=True)


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
