"""A pattern's destinations as data: the rule a compiled engine evaluates without Python.

A pattern (:mod:`icsim.traffic.patterns`) answers *the index-th message of node ``src`` goes
where?* in Python (:meth:`~icsim.traffic.patterns.Pattern.destination`).  Most patterns' answers
take one of four forms, which :meth:`~icsim.traffic.patterns.Pattern.rule` gives as a
:class:`Rule` (plain arrays and numbers), so that an engine can make destinations as messages
fall due without calling Python (the compiled engine's :mod:`.traffic` evaluates the same four
forms):

=========  ======================================================================  =====
kind       message ``i`` of source ``s`` goes to                                     draws
=========  ======================================================================  =====
table      ``table[s, i mod period[s]]`` (fixed mappings: one column; butterfly:     none
           a column per address bit; neighbour: the present neighbours in turn)
rotate     ``(s + offset + i mod period) mod N`` (all-to-all)                         none
block      ``base[s] + floor(u * size)``; with ``skip_self`` a result at or above      one
           ``s`` moves up by one (uniform without self; group and line shifts)
hotspot    below ``fraction`` one of ``hot`` (``floor(u / fraction * H)``), else       one
           uniform over the other ``N - 1`` nodes (``floor((u - f) / (1 - f) (N-1))``)
=========  ======================================================================  =====

``u`` is one ``random()`` of the source's own stream, as ``destination`` draws it, so that a
rule gives exactly the pattern's answers, draw for draw (:meth:`Rule.destination` is the rule
in Python, for the tests that hold the two together).  A pattern without a rule (a plug-in that
gives only ``destination``) runs on the SimPy engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: the rule kinds, in the order of their codes in the compiled engine (``G_RULE``)
KINDS = ("table", "rotate", "block", "hotspot")


def _whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _none() -> np.ndarray:
    return np.zeros((1, 1), dtype=np.int64)


@dataclass(frozen=True)
class Rule:
    """One pattern's destinations (module docstring).

    Attributes
    ----------
    kind : {"table", "rotate", "block", "hotspot"}
    num_nodes : int
        N, the sources and destinations.
    table : ndarray of int64, shape (N, W)
        ``table`` rules: the destinations of each source, one period (``period[s]`` columns
        used); ``block`` rules: ``base`` in its first column.
    period : ndarray of int64, shape (N,)
        ``table`` rules: how many of a source's columns it cycles through.
    size, offset : int
        ``block``: how many consecutive nodes from ``base[s]``; ``rotate``: the cycle's length
        (``size``) and first step (``offset``).
    skip_self : bool
        ``block``: draw among ``size`` nodes, skipping ``s`` (uniform without self).
    fraction : float
        ``hotspot``: the share of messages sent to a hot node.
    hot : ndarray of int64
        ``hotspot``: the hot nodes.
    """

    kind: str
    num_nodes: int
    table: np.ndarray = field(default_factory=_none)
    period: np.ndarray = field(default_factory=lambda: np.ones(1, dtype=np.int64))
    size: int = 0
    offset: int = 0
    skip_self: bool = False
    fraction: float = 0.0
    hot: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a destination rule is one of {', '.join(KINDS)}, not "
                             f"{self.kind!r}")

    def check(self, num_nodes: int) -> None:
        """ValueError naming the first field that would make a destination outside
        ``0 .. num_nodes - 1`` (or that an engine cannot read): what a plug-in pattern's
        :meth:`~icsim.traffic.patterns.Pattern.rule` is held to before the run.

        >>> Rule.of_table([1, 2, 3]).check(3)
        Traceback (most recent call last):
        ...
        ValueError: table[2, 0] = 3 is not a node id in [0, 3)
        """
        n = num_nodes
        if not _whole(self.num_nodes) or self.num_nodes != n:
            raise ValueError(f"num_nodes is {self.num_nodes!r}, not the {n} terminals")
        for name in ("table", "period", "hot"):
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"{name} is {type(a).__name__}"
                                 f"{' of ' + str(a.dtype) if isinstance(a, np.ndarray) else ''}"
                                 f", not a NumPy array of integers")
        for name in ("size", "offset"):
            if not _whole(getattr(self, name)):
                raise ValueError(f"{name} is {getattr(self, name)!r}, not a whole number")
        if self.kind in ("table", "block") and (self.table.ndim != 2 or len(self.table) != n
                                                or self.table.shape[1] < 1):
            raise ValueError(f"table has shape {self.table.shape}, not ({n}, W >= 1)")
        if self.kind == "table":
            period = self.period
            width = self.table.shape[1]
            if period.shape != (n,) or ((period < 1) | (period > width)).any():
                raise ValueError(f"period must be {n} numbers in 1 .. {width} (the "
                                 f"table's columns)")
            used = np.arange(width)[None, :] < period[:, None]
            bad = np.argwhere(used & ((self.table < 0) | (self.table >= n)))
            if len(bad):
                s, i = (int(x) for x in bad[0])
                raise ValueError(f"table[{s}, {i}] = {int(self.table[s, i])} is not a "
                                 f"node id in [0, {n})")
        elif self.kind == "rotate":
            if not 1 <= self.size <= n:
                raise ValueError(f"size (the cycle's length) is {self.size}, not in "
                                 f"1 .. {n}")
        elif self.kind == "block":
            if not isinstance(self.skip_self, (bool, np.bool_)):
                raise ValueError(f"skip_self is {self.skip_self!r}, not True or False")
            base = self.table[:, 0]
            last = base + self.size - 1 + int(bool(self.skip_self))
            bad = np.flatnonzero((base < 0) | (last >= n))
            if self.size < 1 or len(bad):
                s = int(bad[0]) if len(bad) else 0
                raise ValueError(f"source {s}'s block of {self.size} nodes from "
                                 f"{int(base[s])} is not within [0, {n})")
        else:
            f = self.fraction
            if not isinstance(f, (int, float, np.floating, np.integer)) or not 0 <= f <= 1:
                raise ValueError(f"fraction is {f!r}, not a number in [0, 1]")
            hot = self.hot
            if hot.ndim != 1 or not len(hot) or ((hot < 0) | (hot >= n)).any():
                raise ValueError(f"hot nodes must be node ids in [0, {n}), at least one")

    @property
    def code(self) -> int:
        """The kind's number in the compiled engine."""
        return KINDS.index(self.kind)

    @property
    def draws(self) -> bool:
        """Whether a destination takes a draw of the source's stream."""
        return self.kind in ("block", "hotspot")

    @classmethod
    def of_table(cls, table: np.ndarray, period: np.ndarray | None = None) -> "Rule":
        """A ``table`` rule: ``table`` is (N,) for a fixed mapping, else (N, W)."""
        t = np.asarray(table, dtype=np.int64)
        t = t.reshape(len(t), -1)
        p = (np.full(len(t), t.shape[1], dtype=np.int64) if period is None
             else np.asarray(period, dtype=np.int64))
        return cls("table", len(t), table=np.ascontiguousarray(t), period=p)

    @classmethod
    def of_block(cls, base: np.ndarray | int, size: int, num_nodes: int,
                 skip_self: bool = False) -> "Rule":
        """A ``block`` rule: ``base`` per source (or one for all), ``size`` nodes."""
        b = np.broadcast_to(np.asarray(base, dtype=np.int64), (num_nodes,))
        return cls("block", num_nodes, table=np.ascontiguousarray(b.reshape(num_nodes, 1)),
                   size=int(size), skip_self=bool(skip_self))

    def destination(self, src: int, index: int, rng: Any) -> int:
        """The rule in Python: message ``index`` of ``src``, drawing from ``rng`` as the
        pattern does."""
        if self.kind == "table":
            return int(self.table[src, index % int(self.period[src])])
        if self.kind == "rotate":
            return (src + self.offset + index % self.size) % self.num_nodes
        u = rng.random()
        if self.kind == "block":
            d = int(u * self.size)
            if self.skip_self and d >= src:
                d += 1
            return int(self.table[src, 0]) + d
        f, h = self.fraction, len(self.hot)
        if u < f:
            i = int(u / f * h)
            return int(self.hot[i if i < h else h - 1])
        others = self.num_nodes - 1
        d = int((u - f) / (1.0 - f) * others)
        if d >= others:
            d = others - 1
        return d + (d >= src)
