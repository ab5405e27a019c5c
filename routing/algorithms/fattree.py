"""Routing on a fat tree (k-ary n-tree): up*/down* with destination-mod-k up ports (D-mod-k;
Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real life
fat trees", 2010), and up*/down* with the up port chosen by queue occupancy (adaptive).

A packet climbs to a nearest common ancestor of its source and destination leaves, then goes
down the one way there is.  Going up from level ``l``, D-mod-k takes up port ``(d / k^l) mod
k`` for the destination terminal ``d`` (modulo the connected up ports where the top is
tapered): at a leaf the terminal's index on its leaf (read by terminal:
:class:`~icsim.routing.program.Phase`'s ``terminal_escape``), above it digit ``l - 1`` of the
destination leaf's word.  The terminals below a switch each climb to a different ancestor,
which is what makes shift permutations non-blocking.
The adaptive variant offers every connected up port and takes the one with most free slots
(ties by the run's stream), as InfiniBand's adaptive routing does on the way up.

Deadlock freedom: up*/down* -- no route turns from down to up -- so the channel-dependency
graph is acyclic on one VC; the build checks it (:attr:`~icsim.routing.registry.Routing.
acyclic`).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from icsim.routing.program import PAIR, Phase, Program
from icsim.routing.registry import ADAPTIVE, ESCAPE, VC, Routing, register


class TreeRoutes:
    """Per (router, target) pair, ``r * N + t``: the D-mod-k port and the mask of every port a
    packet may take (the connected up ports going up, the one down port going down); 0 where
    ``t`` is the router itself or not a leaf (no packet heads for it)."""

    def __init__(self, tree):
        k, N = tree.k, tree.num_nodes
        nbr = tree.neighbor_array
        per, leaves = tree.switches_per_level, tree.num_leaves
        up_ok = nbr[:, k:] >= 0                                   # (N, k) connected up ports
        n_up = up_ok.sum(axis=1)
        up_mask = (up_ok * (1 << np.arange(k, 2 * k))).sum(axis=1)
        # only leaves are targets: the tables' columns 0 .. leaves - 1, by level of router
        port = np.zeros((N, leaves), dtype=np.int64)
        mask = np.zeros((N, leaves), dtype=np.int64)
        u = np.arange(leaves)                                     # the target leaves' words
        for lv in range(tree.num_levels):
            rows = slice(lv * per, min((lv + 1) * per, N))
            words = np.arange(rows.stop - rows.start)
            # a leaf is below a switch of level lv when their words agree from digit lv on
            below = words[:, None] // k ** lv == u[None, :] // k ** lv
            climbs = (n_up[rows] > 0)[:, None] & ~below
            if lv == 0:                     # by the destination terminal's index
                port[rows] = np.where(climbs, -1, 0)
            else:
                down = (u // k ** (lv - 1)) % k                   # digit lv - 1 of the leaf
                up = k + down[None, :] % np.maximum(n_up[rows], 1)[:, None]
                port[rows] = np.where(climbs, up, np.where(below, down, 0))
                mask[rows] = np.where(below, np.left_shift(1, down), 0)
            mask[rows] = np.where(climbs, up_mask[rows, None], mask[rows])
        mask[np.arange(leaves), np.arange(leaves)] = 0
        port[mask == 0] = 0
        dmodk = np.where(port >= 0, np.left_shift(1, np.maximum(port, 0)), mask)
        dmodk[mask == 0] = 0
        self.port, self.mask, self.dmodk = (_pair_table(t, N) for t in (port, mask, dmodk))
        # a leaf's up port toward destination terminal j of a leaf: D-mod-k's lowest digit
        self.terminal = np.zeros((N, k), dtype=np.int64)
        self.terminal[:tree.num_leaves] = k + np.arange(k)[None, :] % np.maximum(
            n_up[:tree.num_leaves, None], 1)
        self.terminal = self.terminal.ravel()


def _pair_table(leaf_columns: np.ndarray, N: int) -> np.ndarray:
    """A table per (router, target leaf) as one per (router, target), ``r * N + t``: 0 where
    the target is not a leaf."""
    out = np.zeros((N, N), dtype=np.int64)
    out[:, :leaf_columns.shape[1]] = leaf_columns
    return out.ravel()


class _Tree(Routing):
    requires = frozenset({"updown"})
    acyclic = "all"
    shared = True

    @cached_property
    def routes(self) -> TreeRoutes:
        return self.tables_of(TreeRoutes)


@register("dmodk")
class DestinationModK(_Tree):
    """Up*/down* with the D-mod-k up port (module docstring), one VC."""

    vcs = (VC("updown", ESCAPE),)

    def program(self) -> Program:
        r = self.routes
        return Program((Phase(PAIR, ports=r.dmodk, escape=r.port, escape_vc=0,
                              terminal_escape=r.terminal),))


@register("updown_adaptive")
class UpDownAdaptive(_Tree):
    """Up*/down* with the up port chosen by free slots (module docstring), one VC."""

    vcs = (VC("updown", ADAPTIVE),)

    def program(self) -> Program:
        return Program((Phase(PAIR, ports=self.routes.mask, adaptive_vc=0),))
