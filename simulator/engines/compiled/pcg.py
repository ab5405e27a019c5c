"""NumPy's PCG64 (XSL-RR 128/64) stepped in numba: the compiled engine's tie-break stream.

``rng = [state_hi, state_lo, inc_hi, inc_lo]`` (uint64) is a generator's state
(:func:`rng_state`); :func:`random` returns exactly what ``Generator.random()`` returns from that
state and advances it, so the compiled engine draws the numbers the SimPy engine draws from the
same seeded stream.  :func:`uniform` draws from either form (a state array, or a NumPy Generator
as numba passes it).

>>> import numpy as np
>>> g = np.random.default_rng(7)
>>> rng = rng_state(g)
>>> [random(rng) for _ in range(3)] == g.random(3).tolist()
True
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

_M32 = np.uint64(0xFFFFFFFF)
_MULT_HI = np.uint64(2549297995355413924)
_MULT_LO = np.uint64(4865540595714422341)
_S11, _S32, _S58, _S63, _S64 = (np.uint64(11), np.uint64(32), np.uint64(58), np.uint64(63),
                                np.uint64(64))
_ONE, _ZERO = np.uint64(1), np.uint64(0)


def rng_state(gen: np.random.Generator) -> np.ndarray:
    """A PCG64 generator's state as ``[state_hi, state_lo, inc_hi, inc_lo]``."""
    st = gen.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise ValueError(f"the compiled engine draws from PCG64, not {st['bit_generator']}")
    s, inc = st["state"]["state"], st["state"]["inc"]
    mask = (1 << 64) - 1
    return np.array([s >> 64, s & mask, inc >> 64, inc & mask], dtype=np.uint64)


@njit(cache=True, inline="always")
def _mulhi64(a, b):
    """The high 64 bits of the 128-bit product a * b."""
    a_lo = a & _M32
    a_hi = a >> _S32
    b_lo = b & _M32
    b_hi = b >> _S32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    mid = (p0 >> _S32) + (p1 & _M32) + (p2 & _M32)
    return a_hi * b_hi + (p1 >> _S32) + (p2 >> _S32) + (mid >> _S32)


@njit(cache=True, forceinline=False)
def random(rng):
    """The next uniform double of the stream (state = state * mult + inc mod 2^128; output the
    XSL-RR rotation of its two halves; a double from its top 53 bits)."""
    hi = rng[0]
    lo = rng[1]
    nlo = lo * _MULT_LO
    nhi = _mulhi64(lo, _MULT_LO) + hi * _MULT_LO + lo * _MULT_HI
    lo2 = nlo + rng[3]
    hi2 = nhi + rng[2] + (_ONE if lo2 < nlo else _ZERO)
    rng[0] = hi2
    rng[1] = lo2
    x = hi2 ^ lo2
    r = hi2 >> _S58
    out = (x >> r) | (x << ((_S64 - r) & _S63))
    return np.float64(out >> _S11) * (1.0 / 9007199254740992.0)


def uniform(src):
    """A uniform double from ``src``: a PCG64 state array, or a NumPy Generator."""
    raise NotImplementedError("uniform is for compiled code")


@overload(uniform, jit_options={"cache": True})
def _uniform(src):
    if isinstance(src, types.Array):
        return lambda src: random(src)
    return lambda src: src.random()
