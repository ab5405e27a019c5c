"""Every measured latency in a byte or two: the statistics a record gives are the ones NumPy
gives over all of them, bit for bit, however they arrive in chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.simulator import latencies as L

latency_lists = st.lists(st.integers(0, 10**12), min_size=1, max_size=2000)


def stored(values, cuts):
    store = L.Latencies()
    for part in np.split(np.array(values, dtype=np.int64), sorted(cuts)):
        store.add(part)
    return store


@given(values=latency_lists, cuts=st.lists(st.integers(0, 2000), max_size=6),
       piece=st.sampled_from([256, 1024, 1 << 16]), data=st.data())
@settings(max_examples=200, deadline=None)
def test_the_store_answers_as_numpy_does_over_all_the_latencies(values, cuts, piece, data):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(L, "PIECE", piece)
        store = stored(values, [c for c in cuts if c <= len(values)])
    lat = np.array(values, dtype=np.int64)
    assert len(store) == len(lat)
    q = data.draw(st.lists(st.floats(0, 100), min_size=1, max_size=4))
    assert store.percentiles(tuple(q)) == np.percentile(lat / 1000.0, q).tolist()
    k = data.draw(st.integers(0, len(lat) - 1))
    assert store.order_statistic(k) == np.sort(lat)[k] and store.max() == lat.max()
    assert np.array_equal(store.values(), np.sort(lat))
    edges = L.LATENCY_BIN_EDGES_NS
    want = np.histogram(np.clip(lat / 1000.0, edges[0], edges[-1]), bins=edges)[0]
    assert store.histogram()["counts"] == want.tolist()


def test_a_run_like_spread_takes_a_little_over_a_byte_a_latency():
    """Fifteen million latencies between 2 and 60 µs (a long run's): 1.2 bytes each."""
    rng = np.random.default_rng(1)
    store = L.Latencies()
    for _ in range(15):
        store.add(rng.integers(2_000_000, 60_000_000, L.CHUNK))
    assert len(store) == 15 * L.CHUNK and store.nbytes < 1.3 * len(store)


def test_an_order_statistic_outside_the_store_is_refused():
    store = stored([5, 1, 3], [])
    with pytest.raises(IndexError):
        store.order_statistic(3)
