"""Dragonflies: groups of fully connected routers, the groups joined by global links.

A dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) has ``g`` groups of ``a`` routers.  Inside a
group every router is linked to the ``a - 1`` others (*local* links); each router also has ``h``
*global* links to routers of other groups, and ``p`` terminals.  Router ``r`` is router
``r % a`` of group ``r // a``; terminal ``t`` sits on router ``t // p`` (local index ``t % p``).

Ports
-----
``0 .. a-2`` are local: port ``q`` of a router with index ``i`` in its group leads to the
group's router ``q`` if ``q < i`` else ``q + 1`` (the other routers in ascending order).
``a-1 .. a-2+h`` are global: global port ``j`` of router index ``i`` is the group's global port
``x = i*h + j`` (``0 <= x < a*h``); the *arrangement* says where it leads (:class:`Dragonfly`).

Capability ``groups`` (:mod:`icsim.model.topology.base`): :meth:`Dragonfly.group_of`,
:attr:`~Dragonfly.num_groups`, :attr:`~Dragonfly.routers_per_group`,
:meth:`~Dragonfly.local_port`, :meth:`~Dragonfly.global_ports_to`, :meth:`~Dragonfly.gateways`
and the table behind it, :attr:`~Dragonfly.gateway_table`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from icsim.model.topology.base import ABSENT, WiredTopology, checked_int

#: the global-link arrangements :class:`Dragonfly` knows
ARRANGEMENTS = ("absolute", "relative", "circulant")


@dataclass(frozen=True)
class Dragonfly(WiredTopology):
    """A dragonfly of ``g`` groups of ``a`` fully connected routers, ``h`` global links and
    ``p`` terminals per router (module docstring for ids and ports).

    Parameters
    ----------
    p : int
        Terminals per router (>= 1).
    a : int
        Routers per group (>= 1).
    h : int
        Global links per router (>= 1).
    g : int, optional
        Groups, ``2 .. a*h+1``; ``None`` (the default) means ``a*h + 1``, the largest dragonfly
        of these routers, with exactly one global link between every two groups.  ``a*h*g``
        must be even (every global port is one end of a link).
    arrangement : str
        Which global port goes to which group.  Global port ``x`` of group ``i`` (``x = i_r*h
        + j``: router index ``i_r``, its global port ``j``), with ``g = a*h + 1``:

        ``"absolute"`` (the default; Kim et al. ISCA 2008, BookSim2's dragonfly)
            to group ``x`` if ``x < i`` else ``x + 1``: the other groups in ascending order.
        ``"relative"``
            to group ``(i + x + 1) mod g``.
        ``"circulant"``
            the circulant arrangement of Camarero, Vallejo and Beivide, "Topological
            characterization of Hamming and dragonfly networks and its implications on
            routing", ACM TACO 11(4), 2014 (named "circulant-based" by Hastings et al.,
            "Comparing global link arrangements for dragonfly networks", IEEE Cluster 2015):
            the groups are the vertices of a circulant graph, port ``2m`` going to group
            ``i + m + 1`` and port ``2m + 1`` to group ``i - m - 1`` (mod g), so the two ends of
            a link are ports ``2m`` and ``2m + 1``; when ``a*h`` is odd the last port goes to the
            opposite group ``i + g/2``.

        With fewer groups (``g < a*h + 1``) the ``a*h`` global ports of a group are spread over
        the ``g - 1`` other groups as evenly as possible: in rounds of ``g - 1`` ports the rule
        above is applied to ``x mod (g - 1)`` (every other group once per round), and the ``r =
        a*h mod (g - 1)`` ports left over go to the groups at offsets ``±1 .. ±(r // 2)`` (and
        ``g/2`` when ``r`` is odd) — ascending by group (absolute), by offset (relative), or
        ``+1, -1, +2, -2, ...`` (circulant).  Every pair of groups thus has ``(a*h) // (g-1)``
        or one more links.  The ``k``-th port of group ``i`` (ascending) going to group ``j``
        and the ``k``-th port of ``j`` going to ``i`` are the two ends of one link.

    ``max_channel_load_factor`` is 1: γ = 1 is one packet per link cycle per terminal, the
    terminal injection bandwidth (the dragonfly papers' normalisation); the engines normalise γ
    by it.

    Examples
    --------
    >>> d = Dragonfly(p=2, a=4, h=2)
    >>> d.num_groups, d.num_nodes, d.num_terminals, d.num_ports
    (9, 36, 72, 5)
    >>> d.describe()
    'dragonfly p=2 a=4 h=2 g=9 (absolute)'
    >>> [d.neighbor(0, q) for q in range(5)]        # local to 1, 2, 3; global to groups 1, 2
    [1, 2, 3, 4, 8]
    >>> d.link_class(0, 2), d.link_class(0, 3), d.port_name(3)
    ('local', 'global', 'g0')
    >>> d.gateways(0, 5).tolist()                    # group 0's link to group 5: router 2, port 3
    [[2, 3]]
    >>> d.distance(0, 3), d.distance(0, 4), d.distance(1, 35)
    (1, 1, 3)
    >>> Dragonfly(p=4, a=8, h=4, g=40)
    Traceback (most recent call last):
    ...
    ValueError: g: at most a*h+1 = 33 groups for a=8, h=4, got 40
    """

    p: int
    a: int
    h: int
    g: int | None = None
    arrangement: str = "absolute"

    name = "dragonfly"

    def __post_init__(self) -> None:
        p = checked_int("p", self.p, "terminals per router")
        a = checked_int("a", self.a, "routers per group")
        h = checked_int("h", self.h, "global links per router")
        most = a * h + 1
        if self.g is None:
            g = most
        else:
            if isinstance(self.g, bool) or not isinstance(self.g, (int, np.integer)):
                raise ValueError(f"g: the number of groups must be an integer, got {self.g!r}")
            g = int(self.g)
        if g < 2:
            raise ValueError(f"g: a dragonfly has at least 2 groups, got {g}")
        if g > most:
            raise ValueError(f"g: at most a*h+1 = {most} groups for a={a}, h={h}, got {g}")
        if a * h * g % 2:
            raise ValueError(f"g: a*h*g = {a * h * g} global ports is odd, so they cannot pair "
                             f"into links (a={a}, h={h}, g={g}); make one of them even")
        if self.arrangement not in ARRANGEMENTS:
            raise ValueError(f"arrangement: unknown arrangement {self.arrangement!r} (known: "
                             f"{', '.join(ARRANGEMENTS)})")
        for field_name, value in (("p", p), ("a", a), ("h", h), ("g", g)):
            object.__setattr__(self, field_name, value)

    @classmethod
    def balanced(cls, h: int, arrangement: str = "absolute") -> "Dragonfly":
        """Kim et al.'s balanced dragonfly: ``a = 2p = 2h`` and the most groups, ``a*h + 1``.

        >>> Dragonfly.balanced(4).describe()
        'dragonfly p=4 a=8 h=4 g=33 (absolute)'
        """
        h = checked_int("h", h, "global links per router")
        return cls(p=h, a=2 * h, h=h, arrangement=arrangement)

    # ------------------------------------------------------------------ sizes
    @property
    def terminals_per_router(self) -> int:
        """``p``."""
        return self.p

    @property
    def num_nodes(self) -> int:
        """Routers: ``a * g``."""
        return self.a * self.g

    @property
    def num_ports(self) -> int:
        """``a - 1`` local then ``h`` global ports."""
        return self.a - 1 + self.h

    @property
    def num_groups(self) -> int:
        return self.g

    @property
    def routers_per_group(self) -> int:
        return self.a

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({"groups"})

    # ------------------------------------------------------------------ the wiring
    @cached_property
    def _global_targets(self) -> np.ndarray:
        """``[i, x]``: the group global port ``x`` of group ``i`` leads to, shape (g, a*h)."""
        g, ports = self.g, self.a * self.h
        m = g - 1
        full, rest = divmod(ports, m)
        groups = np.arange(g)[:, None]
        s = np.arange(m)[None, :]
        if self.arrangement == "absolute":
            round_ = np.where(s < groups, s, s + 1)
        elif self.arrangement == "relative":
            round_ = (groups + 1 + s) % g
        else:
            step = s // 2 + 1
            round_ = (groups + np.where(s % 2 == 0, step, -step)) % g
        out = np.empty((g, ports), dtype=np.int64)
        out[:, :full * m] = np.tile(round_, (1, full))
        if rest:                   # symmetric offsets ±1 .. ±rest//2 (+ g/2), so links pair
            half = rest // 2
            offsets = [o for d in range(1, half + 1) for o in (d, g - d)]
            if rest % 2:
                offsets.append(g // 2)       # rest odd means g even (a*h*g is even)
            if self.arrangement == "relative":
                offsets.sort()
            extra = (groups + np.asarray(offsets)[None, :]) % g
            if self.arrangement == "absolute":
                extra = np.sort(extra, axis=1)
            out[:, full * m:] = extra
        return out

    @cached_property
    def gateway_table(self) -> np.ndarray:
        """``[i, j, k]``: ``(router, port)`` of the ``k``-th link (ascending port) from group
        ``i`` to group ``j``; ``(-1, -1)`` beyond their :attr:`gateway_counts` (and for
        ``i == j``).  Shape ``(g, g, most links between two groups, 2)``, read-only: what a
        routing picks a gateway from."""
        g, a, h = self.g, self.a, self.h
        counts = self.gateway_counts
        table = np.full((g, g, max(1, int(counts.max())), 2), -1, dtype=np.int64)
        i, x, j, k = self._global_ports
        table[i, j, k, 0] = i * a + x // h
        table[i, j, k, 1] = a - 1 + x % h
        table.setflags(write=False)
        return table

    @cached_property
    def _global_ports(self) -> tuple[np.ndarray, ...]:
        """Every global port of every group as ``(i, x, j, k)``: port ``x`` of group ``i``
        is the ``k``-th (ascending) of those leading to group ``j``."""
        g, ports = self.g, self.a * self.h
        i = np.repeat(np.arange(g), ports)
        x = np.tile(np.arange(ports), g)
        j = self._global_targets.ravel()
        order = np.argsort(i * g + j, kind="stable")      # by (i, j), ascending x within
        key = (i * g + j)[order]
        k = np.empty_like(order)
        k[order] = np.arange(len(order)) - np.searchsorted(key, key)
        return i, x, j, k

    @cached_property
    def gateway_counts(self) -> np.ndarray:
        """``[i, j]``: how many global links join groups i and j (0 on the diagonal); shape
        (g, g), symmetric, read-only."""
        g = self.g
        counts = np.zeros((g, g), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(g), self.a * self.h),
                           self._global_targets.ravel()), 1)
        counts.setflags(write=False)
        return counts

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, reverse ports), each (N, num_ports) int64."""
        a, h, n = self.a, self.h, self.num_nodes
        nbr = np.full((n, self.num_ports), ABSENT, dtype=np.int64)
        rev = np.full((n, self.num_ports), -1, dtype=np.int64)
        routers = np.arange(n)
        base, idx = (routers // a) * a, routers % a
        for q in range(a - 1):                    # local: to index q, or q + 1 past oneself
            other = np.where(q < idx, q, q + 1)
            nbr[:, q] = base + other
            rev[:, q] = np.where(idx < other, idx, idx - 1)
        i, x, j, k = self._global_ports            # port x of group i: the k-th to group j
        u, port = i * a + x // h, a - 1 + x % h
        nbr[u, port], rev[u, port] = self.gateway_table[j, i, k].T     # its k-th back
        nbr.setflags(write=False)
        rev.setflags(write=False)
        return nbr, rev


    def link_class(self, node: int, port: int) -> str:
        """``"local"`` (ports ``0 .. a-2``) or ``"global"``."""
        return "local" if port < self.a - 1 else "global"

    def port_name(self, port: int) -> str:
        """``l<q>`` for local port q, ``g<j>`` for global port ``a - 1 + j``."""
        return f"l{port}" if port < self.a - 1 else f"g{port - self.a + 1}"

    # ------------------------------------------------------------------ groups capability
    def group_of(self, router: int) -> int:
        """The group of ``router``: ``router // a``."""
        return router // self.a

    def local_index(self, router: int) -> int:
        """The index of ``router`` in its group: ``router % a``."""
        return router % self.a

    def router(self, group: int, index: int) -> int:
        """The router with this index in this group: ``group * a + index``."""
        return group * self.a + index

    def local_port(self, router: int, other: int) -> int:
        """The local port of ``router`` leading to ``other``, a router of the same group.

        >>> Dragonfly(p=1, a=4, h=1, g=4).local_port(5, 7)     # index 1 to index 3
        2
        """
        a = self.a
        if router // a != other // a or router == other:
            raise ValueError(f"routers {router} and {other} are not two routers of one group")
        i, o = router % a, other % a
        return o if o < i else o - 1

    def global_ports_to(self, router: int, group: int) -> tuple[int, ...]:
        """The global ports of ``router`` whose links lead to ``group`` (maybe none)."""
        a = self.a
        nbr = self._arrays[0][router, a - 1:]
        return tuple(int(a - 1 + j) for j in np.flatnonzero(nbr // a == group))

    def gateways(self, group: int, other: int) -> np.ndarray:
        """The ``(router, port)`` pairs of ``group`` whose global links lead to group
        ``other``, ascending by port: shape (links, 2) (a view of :attr:`gateway_table`)."""
        return self.gateway_table[group, other, :self.gateway_counts[group, other]]

    # ------------------------------------------------------------------ distances
    @cached_property
    def distances(self) -> np.ndarray:
        """Exact hops between every two routers, ``[a, b]``, int8, read-only: 0; 1 when
        adjacent (the same group, or a global link); 2 when the two have a common neighbour
        (a gateway of either, or a router of a third group linked to both); else 3 (every
        two groups are joined, so local, global, local always arrives).  Made once, a block
        of routers at a time: each router's neighbours' neighbours."""
        n, nbr = self.num_nodes, self._arrays[0]
        out = np.full((n, n), 3, dtype=np.int8)
        step = max(1, (1 << 22) // (self.num_ports ** 2 + 1))
        for lo in range(0, n, step):
            rows = np.arange(lo, min(lo + step, n))
            two = nbr[np.maximum(nbr[rows], 0)].reshape(len(rows), -1)
            two = np.where(np.repeat(nbr[rows] >= 0, self.num_ports, axis=1), two, -1)
            at = np.repeat(rows, two.shape[1])
            keep = two.ravel() >= 0
            out[at[keep], two.ravel()[keep]] = 2
        rows = np.repeat(np.arange(n), self.num_ports)
        keep = nbr.ravel() >= 0
        out[rows[keep], nbr.ravel()[keep]] = 1
        out[np.arange(n), np.arange(n)] = 0
        out.setflags(write=False)
        return out

    def distances_between(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Exact hops of every pair ``src[i] -> dst[i]``: lookups in :attr:`distances`."""
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        return self.distances[src, dst].astype(np.int64)

    def distance(self, a: int, b: int) -> int:
        """Minimal hops from router a to router b (at most 3)."""
        return int(self.distances_between(np.array([a]), np.array([b]))[0])

    def hop_distances(self, src: int) -> np.ndarray:
        return self.distances[src].astype(np.int64)

    def lgl_hops(self, a: int, b: int) -> int:
        """Hops of the shortest route crossing at most one global link (local, global, local:
        the minimal routing of Kim et al.): 0, 1 within a group, else ``min`` over the links
        between the two groups of ``[a is not the gateway] + 1 + [b is not the landing]``.
        :meth:`distance` may be shorter (two global hops through a third group).

        >>> d = Dragonfly(p=1, a=4, h=2)
        >>> d.lgl_hops(1, 35), d.distance(1, 35)
        (3, 3)
        """
        ga, gb = a // self.a, b // self.a
        if a == b:
            return 0
        if ga == gb:
            return 1
        best = 3
        nbr = self._arrays[0]
        for u, port in self.gateways(ga, gb).tolist():
            v = int(nbr[u, port])
            best = min(best, (u != a) + 1 + (v != b))
        return best

    # ------------------------------------------------------------------ labels
    @property
    def max_channel_load_factor(self) -> float:
        """1: γ = 1 is one packet per link cycle per terminal, the terminal injection
        bandwidth (the dragonfly papers' normalisation); the engines normalise γ by it."""
        return 1.0

    def describe(self) -> str:
        return f"dragonfly p={self.p} a={self.a} h={self.h} g={self.g} ({self.arrangement})"

    def where(self, node: int) -> str:
        """``"<id> (group i, router j)"``."""
        return f"{node} (group {node // self.a}, router {node % self.a})"

    def to_json(self) -> dict:
        """The topology's parameters (a table file's ``topology`` object)."""
        return {"kind": "dragonfly", "p": self.p, "a": self.a, "h": self.h, "g": self.g,
                "arrangement": self.arrangement}

