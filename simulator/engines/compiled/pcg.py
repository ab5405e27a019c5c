"""NumPy's PCG64 (XSL-RR 128/64) stepped in numba: the compiled engine's random streams.

``rng = [state_hi, state_lo, inc_hi, inc_lo]`` (uint64) is a generator's state
(:func:`rng_state`); :func:`random` returns exactly what ``Generator.random()`` returns from that
state and advances it, so the compiled engine draws the numbers the SimPy engine draws from the
same seeded stream (the routing tie-breaks).  The nodes' traffic streams are the rows of one
array (``s[i] = [state_hi, state_lo, inc_hi, inc_lo]``): :func:`random_at` and
:func:`exponential_at` draw from row i what ``Generator.random()`` and
``Generator.exponential(scale)`` draw (NumPy's ziggurat, with NumPy's tables as numba carries
them).  :func:`uniform` draws from either form of the tie-break stream (a state array, or a
NumPy Generator as numba passes it).

>>> import numpy as np
>>> g = np.random.default_rng(7)
>>> rng = rng_state(g)
>>> [random(rng) for _ in range(3)] == g.random(3).tolist()
True
>>> g, rows = np.random.default_rng(8), np.zeros((2, 4), np.uint64)
>>> rows[1] = rng_state(g)
>>> [exponential_at(rows, 1, 2.5), random_at(rows, 1)] == [g.exponential(2.5), g.random()]
True
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload
from numba.np.random._constants import fe_double, ke_double, we_double, ziggurat_exp_r

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


@njit(cache=True, inline="always")
def _step(hi, lo, inc_hi, inc_lo):
    """One step of the stream: the new state (state * mult + inc mod 2^128) and the output,
    the XSL-RR rotation of its two halves."""
    nlo = lo * _MULT_LO
    nhi = _mulhi64(lo, _MULT_LO) + hi * _MULT_LO + lo * _MULT_HI
    lo2 = nlo + inc_lo
    hi2 = nhi + inc_hi + (_ONE if lo2 < nlo else _ZERO)
    x = hi2 ^ lo2
    r = hi2 >> _S58
    return hi2, lo2, (x >> r) | (x << ((_S64 - r) & _S63))


@njit(cache=True, inline="always")
def _double(out):
    """A uniform double in [0, 1) from an output's top 53 bits."""
    return np.float64(out >> _S11) * (1.0 / 9007199254740992.0)


@njit(cache=True, forceinline=False)
def random(rng):
    """The next uniform double of the stream ``rng``."""
    hi2, lo2, out = _step(rng[0], rng[1], rng[2], rng[3])
    rng[0] = hi2
    rng[1] = lo2
    return _double(out)


@njit(cache=True, inline="always")
def next_at(s, i):
    """The next 64-bit output of stream row ``i`` of ``s``."""
    hi2, lo2, out = _step(s[i, 0], s[i, 1], s[i, 2], s[i, 3])
    s[i, 0] = hi2
    s[i, 1] = lo2
    return out


@njit(cache=True, forceinline=False)
def random_at(s, i):
    """``Generator.random()`` from stream row ``i`` of ``s``."""
    return _double(next_at(s, i))


_WE, _KE, _FE = we_double, ke_double, fe_double
_S3, _S8, _LOW8 = np.uint64(3), np.uint64(8), np.uint64(0xFF)


@njit(cache=True, forceinline=False)
def exponential_at(s, i, scale):
    """``Generator.exponential(scale)`` from stream row ``i`` of ``s``: NumPy's ziggurat
    (``random_standard_exponential``), draw for draw."""
    while True:
        ri = next_at(s, i) >> _S3
        idx = ri & _LOW8
        ri >>= _S8
        x = np.float64(ri) * _WE[idx]
        if ri < _KE[idx]:
            return scale * x                    # 98.9 % of draws
        if idx == 0:
            return scale * (ziggurat_exp_r - np.log1p(-random_at(s, i)))
        if (_FE[idx - 1] - _FE[idx]) * random_at(s, i) + _FE[idx] < np.exp(-x):
            return scale * x


def uniform(src):
    """A uniform double from ``src``: a PCG64 state array, or a NumPy Generator."""
    raise NotImplementedError("uniform is for compiled code")


@overload(uniform, jit_options={"cache": True})
def _uniform(src):
    if isinstance(src, types.Array):
        return lambda src: random(src)
    return lambda src: src.random()
