"""Open-loop traffic made as it falls due: the SimPy engine's posting of
:class:`~icsim.traffic.workloads.Source` messages (``SimpyEngine._post_open``), in numba.

Each node keeps its next message in ``gn`` (``G_*``) and its own PCG64 stream in a row of
``gs``; ``due`` is a binary heap of the nodes by (next message's time, node).  :func:`start`
gives every node its phase and first message; :func:`post_open`, the ``EV_POST`` action, posts
every message due at its time in node order, each node making its next (:func:`advance`), and
schedules the next ``EV_POST`` — one action per instant at which messages are created, as a
schedule sorted by (time, source) gives them.  A message's destination is the pattern's
:class:`~icsim.traffic.rules.Rule` (:func:`destination`: table, rotate, block or hotspot, with
the draws the pattern's Python makes), so every packet, draw and record is the SimPy engine's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from icsim.simulator.engines.compiled.app import post_message
from icsim.simulator.engines.compiled.calendar import at
from icsim.simulator.engines.compiled.layout import (C_DUE_N, EV_POST, F_FRACTION, F_INTERVAL,
                                                     G_DST, G_FIRST, G_INDEX, G_TIME, K_G_ALIGNED,
                                                     K_G_EXP, K_G_HORIZON, K_G_LIMIT, K_G_M,
                                                     K_G_NHOT, K_G_OFFSET, K_G_RULE, K_G_SIZE,
                                                     K_G_SKIP, K_HAS_WINDOW, K_T, K_W0, K_W1)
from icsim.simulator.engines.compiled.pcg import exponential_at, random_at

# the rule kinds (``traffic.rules.KINDS``)
TABLE, ROTATE, BLOCK, HOTSPOT = 0, 1, 2, 3


def rule_table(rule) -> np.ndarray:
    """``gt`` for a :class:`~icsim.traffic.rules.Rule`: a table rule's rows, each led by its
    period; a block rule's bases; the hot nodes (one column)."""
    if rule.kind == "table":
        table = np.hstack([rule.period[:, None], rule.table])
    elif rule.kind == "hotspot":
        table = rule.hot.reshape(-1, 1)
    else:
        table = rule.table
    return np.ascontiguousarray(table, dtype=np.int64)


@njit(cache=True, forceinline=False)
def destination(prm, fprm, gs, gt, src, index):
    """Message ``index`` of ``src`` goes where (``Rule.destination``): ``gt`` holds a table
    rule's period and row (``[period, d0, d1, ...]``), a block rule's base, the hot nodes."""
    rule = prm[K_G_RULE]
    if rule == TABLE:
        return gt[src, 1 + index % gt[src, 0]]
    if rule == ROTATE:
        return (src + prm[K_G_OFFSET] + index % prm[K_G_SIZE]) % prm[K_T]
    u = random_at(gs, src)
    if rule == BLOCK:
        d = np.int64(u * prm[K_G_SIZE])
        if prm[K_G_SKIP] and d >= src:
            d += 1
        return gt[src, 0] + d
    f = fprm[F_FRACTION]
    if u < f:
        h = prm[K_G_NHOT]
        i = np.int64(u / f * h)
        return gt[i if i < h else h - 1, 0]
    others = prm[K_T] - 1
    d = np.int64((u - f) / (1.0 - f) * others)
    if d >= others:
        d = others - 1
    return d + (1 if d >= src else 0)


@njit(cache=True, forceinline=False)
def make(prm, fprm, gn, gs, gt, node, t):
    """Message ``G_INDEX`` of ``node`` is due at t, unless past the horizon
    (``Source._make``)."""
    horizon = prm[K_G_HORIZON]
    if horizon >= 0 and t > horizon:
        gn[node, G_TIME] = -1
        return
    gn[node, G_TIME] = t
    gn[node, G_DST] = destination(prm, fprm, gs, gt, node, gn[node, G_INDEX])


@njit(cache=True, forceinline=False)
def advance(prm, fprm, gn, gs, gt, node):
    """The node's message was posted: make its next (``Source.advance``)."""
    index = gn[node, G_INDEX] + 1
    gn[node, G_INDEX] = index
    limit = prm[K_G_LIMIT]
    if limit >= 0 and index >= limit:
        gn[node, G_TIME] = -1
        return
    interval = fprm[F_INTERVAL]
    if prm[K_G_EXP]:
        gap = np.int64(np.rint(exponential_at(gs, node, interval)))
        t = gn[node, G_TIME] + (gap if gap > 1 else 1)
    else:
        t = gn[node, G_FIRST] + np.int64(np.rint(index * interval))
    make(prm, fprm, gn, gs, gt, node, t)


@njit(cache=True, inline="always")
def _earlier(gn, a, b):
    """Node a's next message is due before node b's (by time, then node)."""
    ta = gn[a, G_TIME]
    tb = gn[b, G_TIME]
    return ta < tb or (ta == tb and a < b)


@njit(cache=True, forceinline=False)
def sift_down(gn, due, n, i):
    """Restore the heap ``due[:n]`` below position i."""
    node = due[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _earlier(gn, due[c + 1], due[c]):
            c += 1
        if not _earlier(gn, due[c], node):
            break
        due[i] = due[c]
        i = c
    due[i] = node


@njit(cache=True)
def start(ctr, prm, fprm, gn, gs, gt, due):
    """Every node's phase and first message (``Source.__init__``); the heap of those that
    have one.  The time of the first message, -1 when none."""
    n = 0
    interval = fprm[F_INTERVAL]
    for node in range(prm[K_T]):
        if prm[K_G_EXP]:
            first = np.int64(np.rint(exponential_at(gs, node, interval)))
        elif prm[K_G_ALIGNED]:
            first = np.int64(0)
        else:
            first = np.int64(random_at(gs, node) * interval)
        gn[node, G_FIRST] = first
        gn[node, G_INDEX] = 0
        make(prm, fprm, gn, gs, gt, node, first)
        if gn[node, G_TIME] >= 0:
            due[n] = node
            n += 1
    for i in range(n // 2 - 1, -1, -1):
        sift_down(gn, due, n, i)
    ctr[C_DUE_N] = n
    return gn[due[0], G_TIME] if n else -1


@njit(cache=True, forceinline=False)
def take(ctr, prm, fprm, gn, gs, gt, due):
    """The first node of the heap posted its message: it makes its next, and takes its place
    in the heap (or leaves it, with no more)."""
    node = due[0]
    advance(prm, fprm, gn, gs, gt, node)
    n = ctr[C_DUE_N]
    if gn[node, G_TIME] < 0:
        n -= 1
        due[0] = due[n]                 # the last node takes its place
        ctr[C_DUE_N] = n
    if n > 0:
        sift_down(gn, due, n, 0)


@njit(cache=True, forceinline=True)
def post_open(ctr, prm, fprm, ev, wheel, heap, pk, pt, nd, dl, gn, gs, gt, due):
    """Post every message due now, in node order (``SimpyEngine._post_open``); each node makes
    its next; the next ``EV_POST`` at the earliest next message."""
    t = gn[due[0], G_TIME]
    k = prm[K_G_M]
    measured = np.int64(not prm[K_HAS_WINDOW] or prm[K_W0] <= t < prm[K_W1])
    while ctr[C_DUE_N] > 0 and gn[due[0], G_TIME] == t:
        node = due[0]
        post_message(ctr, prm, pk, pt, nd, dl, node, gn[node, G_DST], k, t, measured)
        take(ctr, prm, fprm, gn, gs, gt, due)
    if ctr[C_DUE_N] > 0:
        at(ctr, prm, ev, wheel, heap, gn[due[0], G_TIME], EV_POST, 0, 0)
