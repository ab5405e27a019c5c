"""The boxes a :class:`~icsim.routing.program.RandomInBox` decision draws its target from:
per dimension and offset class, rows of a step, a port filter and an integer weight
(:class:`BoxTable`), which both engines draw from and the exact analysis
(:mod:`icsim.routing.oblivious`) takes with their probabilities."""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

import numpy as np


def offset_codes(dims: Sequence[int]) -> np.ndarray:
    """``code[i, s_i, t_i] = (t_i - s_i) mod k_i``: per dimension the offset class of two
    coordinates (n x max k x max k)."""
    kmax = max(dims)
    code = np.zeros((len(dims), kmax, kmax), np.int32)
    for i, k in enumerate(dims):
        s, t = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        code[i, :k, :k] = (t - s) % k
    return code


class BoxTable(NamedTuple):
    """The rows of a :class:`~icsim.routing.program.RandomInBox`, per dimension ``i`` and offset class ``c = code[i,
    s_i, t_i]`` (``(t_i - s_i) mod k_i``) of a source s and destination t: rows ``ptr[i, c]
    .. ptr[i, c + 1]``, each a step of the target's coordinate from the source's (``step``,
    modulo ``k_i``), a port filter ``sel`` (-1: every port) and the cumulative integer weight
    ``cum`` within the class.  A row is drawn as the first whose ``cum`` exceeds
    ``int(u * total)``, ``u`` uniform in [0, 1) and ``total`` the class's last ``cum``."""

    code: np.ndarray
    ptr: np.ndarray
    step: np.ndarray
    sel: np.ndarray
    cum: np.ndarray

    def draw(self, i: int, c: int, rand: Callable[[], float]) -> int:
        """The row of dimension ``i``, class ``c`` (one ``rand()`` when it has more than one
        row): the rule both engines follow."""
        a, b = int(self.ptr[i, c]), int(self.ptr[i, c + 1])
        if b - a == 1:
            return a
        r = int(rand() * int(self.cum[b - 1]))
        return a + int(np.searchsorted(self.cum[a:b], r, side="right"))

    def rows(self, classes: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every combination of one row per dimension for the offset classes ``classes``:
        ``(steps, sel, probability)``, arrays of m x n, m and m (the first dimension's row
        varying slowest).

        >>> steps, sel, prob = box_table((4, 4)).rows([1, 3])        # t - s = (+1, -1)
        >>> steps.tolist(), sel.tolist(), prob.tolist()
        ([[0, 0], [0, -1], [1, 0], [1, -1]], [-1, -1, -1, -1], [0.25, 0.25, 0.25, 0.25])
        """
        parts = []
        for i, c in enumerate(classes):
            a, b = int(self.ptr[i, c]), int(self.ptr[i, c + 1])
            cum = self.cum[a:b].astype(np.int64)
            parts.append((self.step[a:b].astype(np.int64), self.sel[a:b],
                          np.diff(cum, prepend=0) / float(cum[-1])))
        grid = [g.ravel() for g in np.meshgrid(*[np.arange(len(p[0])) for p in parts],
                                               indexing="ij")]
        steps = np.stack([p[0][g] for p, g in zip(parts, grid)], axis=1)
        sel = np.bitwise_and.reduce(np.stack([p[1][g] for p, g in zip(parts, grid)]), axis=0)
        prob = np.prod(np.stack([p[2][g] for p, g in zip(parts, grid)]), axis=0)
        return steps, sel, prob


def box_table(dims: Sequence[int], random_ties: bool = False, balanced: bool = False,
              threshold: int = 0, quadrant: bool = False) -> BoxTable:
    """The :class:`BoxTable` of a :class:`~icsim.routing.program.RandomInBox` on a torus of
    rings ``dims`` (port 2i goes + in dimension i, 2i + 1 goes -); with ``quadrant`` every
    step is 0 and a direction has one row, of its way's whole weight.

    >>> t = box_table((4, 4), random_ties=True)
    >>> a, b = t.ptr[0, 2], t.ptr[0, 3]               # t_0 - s_0 = 2: a tie
    >>> t.step[a:b].tolist(), t.sel[a:b].tolist(), t.cum[a:b].tolist()
    ([0, 0, 1, -1, 2, -2], [-3, -2, -3, -2, -3, -2], [1, 2, 3, 4, 5, 6])
    >>> r = box_table((8,), balanced=True)            # RLB, Δ = 1: + 7/8, - 1/8
    >>> a, b = r.ptr[0, 1], r.ptr[0, 2]
    >>> r.step[a:b].tolist(), np.diff(r.cum[a:b], prepend=0).tolist()
    ([0, 1, 0, -1, -2, -3, -4, -5, -6, -7], [28, 28, 1, 1, 1, 1, 1, 1, 1, 1])
    >>> q = box_table((8,), balanced=True, quadrant=True)     # GOAL: + 7/8, - 1/8
    >>> q.step[q.ptr[0, 1]:q.ptr[0, 2]].tolist(), q.cum[q.ptr[0, 1]:q.ptr[0, 2]].tolist()
    ([0, 0], [7, 8])
    """
    n = len(dims)
    kmax = max(dims)
    code = offset_codes(dims)
    ptr = np.zeros((n, kmax + 1), np.int32)
    step, sel, cum = [], [], []
    for i, k in enumerate(dims):
        plus, minus = ~(1 << (2 * i + 1)), ~(1 << (2 * i))   # the filters keeping + or -
        for c in range(kmax):
            ptr[i, c] = len(step)
            if c >= k:
                continue
            delta = min(c, k - c)
            sign = 1 if c <= k - c else -1                    # + at a tie
            keep = plus if sign > 0 else minus
            if delta == 0:
                rows = [(0, -1, 1)]
            elif balanced and delta >= threshold:
                g = math.gcd((k - delta) * (k - delta + 1), delta * (delta + 1))
                short = (k - delta) * (k - delta + 1) // g
                long = delta * (delta + 1) // g
                other = minus if sign > 0 else plus
                rows = ([(sign * j, keep, short) for j in range(delta + 1)]
                        + [(-sign * j, other, long) for j in range(k - delta + 1)])
            elif balanced:
                rows = [(sign * j, keep, 1) for j in range(delta + 1)]
            elif random_ties and 2 * delta == k:
                rows = [(side * j, plus if side > 0 else minus, 1)
                        for j in range(delta + 1) for side in (1, -1)]
            else:
                rows = [(sign * j, -1, 1) for j in range(delta + 1)]
            if quadrant:                                      # the directions only
                ways: dict[int, int] = {}
                for _, se, w in rows:
                    ways[se] = ways.get(se, 0) + w
                g = math.gcd(*ways.values())
                rows = [(0, se, w // g) for se, w in ways.items()]
            total = 0
            for st, se, w in rows:
                total += w
                step.append(st)
                sel.append(se)
                cum.append(total)
        ptr[i, kmax] = len(step)
    return BoxTable(code, ptr, np.array(step, np.int32), np.array(sel, np.int64),
                    np.array(cum, np.int64))
