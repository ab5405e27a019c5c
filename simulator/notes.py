"""A line on stderr when a step before a run takes long.

Building OFR's plans for a wide torus, a BFS table for 4,096 nodes or LASH's layers for a
million routes takes minutes before anything is simulated, and nothing else is printed
meanwhile: without a word it looks like a hang.  Such a step counts its work through a
:class:`Note`, which stays quiet unless the step passes :data:`NOTE_AFTER_S`, and then says
once how far it is and about how long the rest will take.

>>> note = Note("building something", total=4)
>>> for done in range(1, 5):
...     note(done)                  # quick: nothing said
"""

from __future__ import annotations

import sys
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
