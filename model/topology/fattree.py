"""k-ary n-trees: the fat trees (folded Clos networks) of Petrini and Vanneschi (1997).

A k-ary n-tree has ``k**n`` terminals and ``n`` levels of ``k**(n-1)`` switches.  Switch
``<w, l>`` has a level ``l`` (0 = the leaves, ``n - 1`` = the top) and a word ``w = (w_0, ...,
w_{n-2})`` of base-``k`` digits; ``<w, l>`` and ``<w', l+1>`` are linked iff ``w`` and ``w'`` agree
in every digit but digit ``l``.  Switch ids run level by level, leaves first: ``id = l *
k**(n-1) + sum_d w_d * k**d``.  Only the leaves carry terminals, ``k`` each: terminal ``t`` sits
on leaf ``t // k`` (so the terminal-bearing routers are ``0 .. k**(n-1) - 1``).

Ports
-----
Every switch has ``2k`` ports, **down ports first**: port ``i < k`` leads down to ``<w with
digit l-1 = i, l-1>``; port ``k + i`` leads up to ``<w with digit l = i, l+1>``.  A leaf's
down ports are absent (its down side is its terminals), and so are a top switch's up ports.
The channel classes are ``"up"`` and ``"down"`` (:meth:`FatTree.link_class`).

Capability ``updown`` (:mod:`icsim.model.topology.base`): :meth:`FatTree.level`,
:meth:`~FatTree.up_ports`, :meth:`~FatTree.down_ports`, :meth:`~FatTree.down_port_toward`,
:meth:`~FatTree.is_ancestor`, :meth:`~FatTree.nca_level`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from icsim.model.topology.base import ABSENT, WiredTopology, checked_int


@dataclass(frozen=True)
class FatTree(WiredTopology):
    """A k-ary n-tree, optionally tapered at the top (module docstring for ids and ports).

    Parameters
    ----------
    k : int
        Arity (>= 2): terminals per leaf, up and down ports per switch.
    n : int
        Levels of switches (>= 1); ``k**n`` terminals.
    taper : int, optional
        An integer >= 1 dividing ``k`` (default 1: no taper).  A taper ``t`` thins the top
        level: only the top switches whose digit ``n-2`` is below ``k/t`` exist (the top level
        has ``k**(n-1) / t`` switches, ids still contiguous), so every level ``n-2`` switch has
        only its up ports ``k .. k + k/t - 1`` connected (the others absent): ``k`` links down,
        ``k/t`` up, a ``t : 1`` oversubscription of the top links.  Every other level is full,
        and leaf-to-leaf distances do not change.  A 1-level tree (one switch) has no up links:
        only ``taper = 1``.

    ``terminals_per_router`` is ``k`` (the leaves' terminals; upper switches carry none, and
    :attr:`num_terminals` is ``k**n``).  ``max_channel_load_factor`` is 1: γ = 1 is one packet
    per link cycle per terminal, the terminal injection bandwidth (the fat-tree papers'
    normalisation); the engines normalise γ by it.

    Examples
    --------
    >>> f = FatTree(4, 3)
    >>> f.num_terminals, f.num_nodes, f.num_ports, f.describe()
    (64, 48, 8, 'fat tree 4-ary 3-tree')
    >>> [f.neighbor(0, q) for q in range(8)]     # a leaf: no down ports, up to 16..19
    [-1, -1, -1, -1, 16, 17, 18, 19]
    >>> f.level(16), f.up_ports(16), f.down_port_toward(16, 9), f.link_class(16, 5)
    (1, (4, 5, 6, 7), 2, 'up')
    >>> f.distance(0, 1), f.distance(0, 4), f.nca_level(0, 4)
    (2, 4, 2)
    >>> FatTree(4, 3, taper=2).num_nodes                   # 8 top switches instead of 16
    40
    >>> FatTree(1, 3)
    Traceback (most recent call last):
    ...
    ValueError: k: a fat tree's arity must be at least 2, got 1
    """

    k: int
    n: int
    taper: int = 1

    name = "fat tree"

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)):
            raise ValueError(f"k: a fat tree's arity must be an integer, got {self.k!r}")
        if self.k < 2:
            raise ValueError(f"k: a fat tree's arity must be at least 2, got {self.k}")
        k = int(self.k)
        n = checked_int("n", self.n, "a fat tree's number of levels")
        taper = checked_int("taper", self.taper, "the taper")
        if k % taper:
            raise ValueError(f"taper: must divide k = {k}, got {taper}")
        if n == 1 and taper != 1:
            raise ValueError(f"taper: a 1-level fat tree has no up links to thin, got {taper}")
        for field_name, value in (("k", k), ("n", n), ("taper", taper)):
            object.__setattr__(self, field_name, value)

    # ------------------------------------------------------------------ sizes
    @property
    def terminals_per_router(self) -> int:
        """``k``: the terminals of a leaf (upper switches carry none)."""
        return self.k

    @property
    def num_terminals(self) -> int:
        """``k**n``."""
        return self.k ** self.n

    @property
    def switches_per_level(self) -> int:
        """``k**(n-1)`` (the top level has ``k**(n-1) / taper``)."""
        return self.k ** (self.n - 1)

    @property
    def num_top(self) -> int:
        """Switches on the top level: ``k**(n-1) / taper``."""
        return self.switches_per_level // self.taper

    @property
    def num_nodes(self) -> int:
        """Switches: ``(n-1) * k**(n-1) + k**(n-1) / taper``."""
        return (self.n - 1) * self.switches_per_level + self.num_top

    @property
    def num_leaves(self) -> int:
        return self.switches_per_level

    @property
    def num_ports(self) -> int:
        """``2k``: ``k`` down ports then ``k`` up ports."""
        return 2 * self.k

    @property
    def num_levels(self) -> int:
        return self.n

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({"updown"})

    # ------------------------------------------------------------------ ids
    @cached_property
    def _levels(self) -> np.ndarray:
        out = np.arange(self.num_nodes, dtype=np.int64) // self.switches_per_level
        out.setflags(write=False)
        return out

    @cached_property
    def digit_array(self) -> np.ndarray:
        """``[router, d]``: digit ``d`` of the router's word, shape (N, n-1), read-only."""
        w = np.arange(self.num_nodes, dtype=np.int64) % self.switches_per_level
        out = np.stack([(w // self.k ** d) % self.k for d in range(self.n - 1)], axis=1) \
            if self.n > 1 else np.zeros((self.num_nodes, 0), dtype=np.int64)
        out = out.astype(np.int64)
        out.setflags(write=False)
        return out

    def level(self, router: int) -> int:
        """0 for a leaf, ``n - 1`` for a top switch."""
        return router // self.switches_per_level

    def digits(self, router: int) -> tuple[int, ...]:
        """The word ``(w_0, ..., w_{n-2})`` of ``router``."""
        return tuple(int(x) for x in self.digit_array[router])

    def switch(self, level: int, digits) -> int:
        """The id of switch ``<digits, level>``."""
        return level * self.switches_per_level + sum(int(x) * self.k ** d
                                                     for d, x in enumerate(digits))

    def leaf_of(self, terminal: int) -> int:
        """The leaf switch a terminal is attached to: ``terminal // k``."""
        return terminal // self.k

    # ------------------------------------------------------------------ the wiring
    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, reverse ports), each (N, 2k) int64."""
        k, n, per = self.k, self.n, self.switches_per_level
        num = self.num_nodes
        nbr = np.full((num, 2 * k), ABSENT, dtype=np.int64)
        rev = np.full((num, 2 * k), -1, dtype=np.int64)
        ids = np.arange(num, dtype=np.int64)
        lev, w = ids // per, ids % per
        dig = self.digit_array
        for i in range(k):
            # up port k + i of <w, l>: to <w with digit l = i, l + 1>; back by down port w_l
            for lv in range(n - 1):
                rows = np.flatnonzero(lev == lv)
                stride = k ** lv
                target = (lv + 1) * per + w[rows] - dig[rows, lv] * stride + i * stride
                ok = target < num        # the taper removes top switches past num_top
                nbr[rows[ok], k + i] = target[ok]
                rev[rows[ok], k + i] = dig[rows[ok], lv]
            # down port i of <w, l>: to <w with digit l-1 = i, l - 1>; back by up port k + w_{l-1}
            for lv in range(1, n):
                rows = np.flatnonzero(lev == lv)
                stride = k ** (lv - 1)
                target = (lv - 1) * per + w[rows] - dig[rows, lv - 1] * stride + i * stride
                nbr[rows, i] = target
                rev[rows, i] = k + dig[rows, lv - 1]
        nbr.setflags(write=False)
        rev.setflags(write=False)
        return nbr, rev


    def link_class(self, node: int, port: int) -> str:
        """``"down"`` for ports ``0 .. k-1``, ``"up"`` for ``k .. 2k-1``."""
        return "down" if port < self.k else "up"

    def port_name(self, port: int) -> str:
        """``d<i>`` for down port i, ``u<i>`` for up port ``k + i``."""
        return f"d{port}" if port < self.k else f"u{port - self.k}"

    # ------------------------------------------------------------------ updown capability
    def up_ports(self, router: int) -> tuple[int, ...]:
        """The connected up ports of ``router`` (none on the top level)."""
        row = self._arrays[0][router]
        return tuple(int(p) for p in range(self.k, 2 * self.k) if row[p] != ABSENT)

    def down_ports(self, router: int) -> tuple[int, ...]:
        """The connected down ports of ``router`` (none on a leaf)."""
        row = self._arrays[0][router]
        return tuple(int(p) for p in range(self.k) if row[p] != ABSENT)

    def is_ancestor(self, router: int, terminal: int) -> bool:
        """Whether ``terminal`` lies below ``router`` (a leaf: the terminal is its own)."""
        lv = self.level(router)
        leaf = terminal // self.k
        if lv == 0:
            return leaf == router
        return bool((self.digit_array[router, lv:] == self.digit_array[leaf, lv:]).all())

    def down_port_toward(self, router: int, terminal: int) -> int:
        """The down port of ``router`` leading toward ``terminal``: digit ``l-1`` of the
        terminal's leaf; :data:`ABSENT` when the terminal is not below ``router`` or
        ``router`` is a leaf (its own terminals leave by ejection).

        >>> f = FatTree(2, 3)
        >>> [f.down_port_toward(s, 7) for s in (8, 4, 6, 3)]   # top, not above, above, leaf
        [1, -1, 1, -1]
        """
        lv = self.level(router)
        if lv == 0 or not self.is_ancestor(router, terminal):
            return ABSENT
        return int(self.digit_array[terminal // self.k, lv - 1])

    def nca_level(self, leaf_a: int, leaf_b: int) -> int:
        """The level of the nearest common ancestors of two leaves: 0 for the same leaf, else
        one more than the highest digit where their words differ (their distance is twice
        it)."""
        diff = np.flatnonzero(self.digit_array[leaf_a] != self.digit_array[leaf_b])
        return int(diff[-1]) + 1 if diff.size else 0

    # ------------------------------------------------------------------ distances
    def distances_between(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Exact hops of every pair (vectorised, closed form).  Changing digit ``d`` takes a
        link between levels ``d`` and ``d+1``, and each such link may set it to anything, so
        the shortest walk from level ``a`` to level ``b`` covers the levels ``lo .. hi`` (``lo``
        = min of a, b and the lowest differing digit; ``hi`` = max of a, b and one more than the
        highest): ``(hi - lo) + min(|a - lo| + |hi - b|, |hi - a| + |b - lo|)``.  The taper
        changes nothing: every level ``n-2`` switch keeps a link up, and a walk ending on the
        top level ends at an existing switch."""
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        la, lb = self._levels[src], self._levels[dst]
        dig = self.digit_array
        diff = dig[src] != dig[dst]
        m = dig.shape[1]
        if m == 0:                                   # a 1-level tree: one switch
            return np.zeros(len(src), dtype=np.int64)
        any_diff = diff.any(axis=1)
        low = np.where(any_diff, diff.argmax(axis=1), m + 1)
        high = np.where(any_diff, m - diff[:, ::-1].argmax(axis=1), -1)   # highest digit + 1
        lo = np.minimum(np.minimum(la, lb), low)
        hi = np.maximum(np.maximum(la, lb), high)
        return (hi - lo) + np.minimum(np.abs(la - lo) + np.abs(hi - lb),
                                      np.abs(hi - la) + np.abs(lb - lo))

    def terminal_distances(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Router hops between terminals ``src[i]`` and ``dst[i]``: twice the level of their
        leaves' nearest common ancestors (:meth:`nca_level`), which is the number of digits
        ``d`` at which the leaves' words still differ when cut to digits ``d`` and up."""
        a = np.asarray(src, dtype=np.int64).ravel() // self.k       # leaf ids are words
        b = np.asarray(dst, dtype=np.int64).ravel() // self.k
        out = np.zeros(len(a), dtype=np.int64)
        for _ in range(self.n - 1):
            out += 2 * (a != b)
            a, b = a // self.k, b // self.k
        return out

    def distance(self, a: int, b: int) -> int:
        """Minimal hops from switch a to switch b."""
        return int(self.distances_between(np.array([a]), np.array([b]))[0])

    def hop_distances(self, src: int) -> np.ndarray:
        n = self.num_nodes
        return self.distances_between(np.full(n, src), np.arange(n))

    # ------------------------------------------------------------------ labels
    @property
    def max_channel_load_factor(self) -> float:
        """1: γ = 1 is one packet per link cycle per terminal, the terminal injection
        bandwidth (the fat-tree papers' normalisation); the engines normalise γ by it."""
        return 1.0

    def describe(self) -> str:
        """``fat tree 4-ary 3-tree``, then `` (taper 2)`` when tapered."""
        out = f"fat tree {self.k}-ary {self.n}-tree"
        return out + (f" (taper {self.taper})" if self.taper > 1 else "")

    def where(self, node: int) -> str:
        """``"<id> (level l, w0.w1...)"``."""
        word = ".".join(str(x) for x in self.digits(node)) or "-"
        return f"{node} (level {self.level(node)}, {word})"

    def to_json(self) -> dict:
        """The topology's parameters (a table file's ``topology`` object)."""
        return {"kind": "fattree", "k": self.k, "n": self.n, "taper": self.taper}
