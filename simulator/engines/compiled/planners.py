"""OFR's and POR's injection-time decisions over the planners' exported arrays (placeholder:
routes minimally until the planners' arrays are wired in)."""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def choose_idn(pli, plf, prm, used, rng, s, t):
    return -1, 0


@njit(cache=True)
def choose_orthant(pli, plf, prm, used, rng, s, t):
    return -1, False
