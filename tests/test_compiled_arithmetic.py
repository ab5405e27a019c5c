"""The compiled engine's integer arithmetic: the multiplication that stands in for division
(``kernel.divide``) gives Python's floor division for every time and id a run can hold, and a
time's slot is the clock edge at or after it."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from icsim.simulator.engines.compiled import kernel as kn


def prm_dividing_by(d: int) -> np.ndarray:
    """A ``prm`` whose cycle is d (with its inverse beside it, as the engine builds it)."""
    prm = np.zeros(kn.K_NPRM, np.int64)
    prm[kn.K_CYC] = d
    prm[kn.K_CYC_INV] = kn.inverse(d)
    return prm


@settings(deadline=None)              # the first call compiles
@given(x=st.integers(0, 2**62), d=st.integers(1, 2**24))
@example(x=kn.DIVIDE_EXACT - 1, d=3)
@example(x=kn.DIVIDE_EXACT - 1, d=kn.DIVIDE_EXACT - 1)
@example(x=800 * 2**40, d=800)
@example(x=800 * 2**40 - 1, d=800)
@example(x=kn.DIVIDE_EXACT, d=800)
@example(x=0, d=1)
def test_divide_is_floor_division(x, d):
    assert kn.divide(prm_dividing_by(d), x, kn.K_CYC) == x // d


@settings(deadline=None)
@given(t=st.integers(0, 2**56), cyc=st.integers(1, 10**6))
@example(t=2**32, cyc=800)
@example(t=800 * 2**40, cyc=800)
def test_the_slot_of_a_time_is_the_first_edge_at_or_after_it(t, cyc):
    slot = kn.slot_of(prm_dividing_by(cyc), t)
    assert (slot - 1) * cyc < t <= slot * cyc


@settings(deadline=None)
@given(q=st.integers(0, 2**40), d=st.integers(1, 2**10))
@example(q=385954743282472 // 49, d=49)     # the product alone gives q - 1 here
def test_divide_at_and_just_below_a_multiple(q, d):
    """Where a truncated product alone goes wrong: x a multiple of d, or one below."""
    prm = prm_dividing_by(d)
    assert kn.divide(prm, q * d, kn.K_CYC) == q
    if q:
        assert kn.divide(prm, q * d - 1, kn.K_CYC) == q - 1
