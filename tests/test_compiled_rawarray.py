"""The compiled engine's raw array views (``engines.compiled.rawarray``): integer indices read
and write the element NumPy's would (for indices >= 0, the only ones the loop uses), slices
and other indices are NumPy's own, and the view shares the array's memory."""

import os
import subprocess
import sys
import textwrap

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from icsim.simulator.engines.compiled.rawarray import RawArray, raw


@njit(cache=True)
def _read_write_2d(a, i, j, v):
    r = raw(a)
    before = r[i, j]
    r[i, j] = v
    r[i, j] += 1
    return before, r[i, j]


@njit(cache=True)
def _read_write_1d(a, i, v):
    r = raw(a)
    before = r[i]
    r[i] = v
    return before, r[i]


@njit(cache=True)
def _slices(a, n):
    r = raw(a)
    r[:, 0] = 7                     # a column, through NumPy's setitem
    return r[1:n, 1].sum(), r[0].sum(), r.shape[0], r.shape[1]


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 9), st.integers(1, 9), st.data(),
       st.sampled_from([np.int64, np.int32, np.float64]))
def test_integer_indices_reach_numpys_element(rows, cols, data, dtype):
    a = np.arange(rows * cols, dtype=dtype).reshape(rows, cols)
    expect = a.copy()
    i = data.draw(st.integers(0, rows - 1))
    j = data.draw(st.integers(0, cols - 1))
    before, after = _read_write_2d(a, i, j, 40)
    expect[i, j] = 41
    assert before == i * cols + j and after == 41
    assert (a == expect).all()
    flat = a.reshape(-1)
    k = data.draw(st.integers(0, rows * cols - 1))
    before, after = _read_write_1d(flat, k, -3)
    assert before == expect.reshape(-1)[k] and after == -3 and a.reshape(-1)[k] == -3


def test_slices_and_rows_follow_numpy():
    a = np.arange(12, dtype=np.int64).reshape(4, 3)
    assert _slices(a, 3) == (4 + 7, 7 + 1 + 2, 4, 3)
    assert (a[:, 0] == 7).all()


def test_the_view_is_a_raw_array_type():
    @njit
    def first(a):
        r = raw(a)
        return r[0, 0]
    first(np.zeros((2, 2)))
    types = first.overloads[first.signatures[0]].type_annotation.typemap
    assert isinstance(types["r"], RawArray) and str(types["r"]) == "raw(float64, 2d)"


def test_with_bounds_checking_an_index_from_the_end_is_an_error(tmp_path):
    """Under ``NUMBA_BOUNDSCHECK=1`` a view refuses an index below zero (and past the end)
    where NumPy would count from the end: how a run shows that the loop never makes one."""
    code = textwrap.dedent("""
        import numpy as np
        from numba import njit
        from icsim.simulator.engines.compiled.rawarray import raw

        @njit
        def at(a, i, j):
            return raw(a)[i, j]

        a = np.arange(6).reshape(2, 3)
        print(at(a, 1, 2))
        for i, j in ((1, -1), (2, 0)):
            try:
                at(a, i, j)
                print("read")
            except IndexError:
                print("refused")
    """)
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["5", "refused", "refused"]
