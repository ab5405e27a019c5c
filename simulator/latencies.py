"""Every measured packet's latency, in a byte or two each: exact statistics in bounded memory.

A run's record gives the mean, the maximum, the median and the 99th percentile of its measured
packets' latencies, exactly (NumPy's ``percentile`` of all of them), and their histogram.  A
long run measures tens of millions of packets; eight bytes each would make memory grow with
the run's length.  :class:`Latencies` holds them in sorted chunks (the engines hand over a chunk
as it fills, :data:`CHUNK` latencies): a chunk is kept as its first value and the differences
between consecutive values, one byte each (a difference of 255 ps or more as 255, the
difference itself in a list of its own), with every 256th value in full so that any run of 256
decodes alone.  Sorted latencies of a run lie close together — a million of them spread over
tens of microseconds differ by tens of picoseconds — so a latency takes a little over a byte.

What it answers: :meth:`Latencies.order_statistic` (the k-th smallest, found by a binary search
on the value that decodes one block of 256 per chunk per step), :meth:`Latencies.percentiles`
(``numpy.percentile``'s linear interpolation between two order statistics, bit for bit),
:meth:`Latencies.histogram` (made per chunk as it is added), :meth:`Latencies.values` (all of
them, sorted: ``Result.latencies``).

>>> store = Latencies()
>>> rng = np.random.default_rng(1)
>>> lat = rng.integers(1000, 90_000, 5000)
>>> store.add(lat[:3000]); store.add(lat[3000:])
>>> len(store), store.percentiles() == np.percentile(lat / 1000.0, [50, 99]).tolist()
(5000, True)
>>> bool((store.values() == np.sort(lat)).all())
True
"""

from __future__ import annotations

import numpy as np

#: fixed log-spaced latency bins: 10 ns ... 1 s, 20 per decade (values outside are clamped)
LATENCY_BIN_EDGES_NS = 10.0 ** np.arange(1.0, 9.0 + 1e-9, 0.05)
#: latencies an engine holds before it hands them over (8 MB of int64)
CHUNK = 1 << 20
#: values of a chunk between two kept in full (one block decodes alone)
BLOCK = 256
#: values encoded at a time (what adding a chunk holds beside it: a few of these)
PIECE = 1 << 16
#: a one-byte difference of this or more stands for one kept in full
ESCAPE = 255


def histogram_counts(latency_ns: np.ndarray) -> np.ndarray:
    """Counts of sorted ``latency_ns`` in :data:`LATENCY_BIN_EDGES_NS`'s bins (values below
    the first edge or above the last counted in the first or last bin): ``numpy.histogram``'s
    counts, read off the sorted values as it reads them (each bin closed on the left, the last
    on both sides)."""
    edges = LATENCY_BIN_EDGES_NS
    x = np.clip(latency_ns, edges[0], edges[-1])
    at = np.concatenate((x.searchsorted(edges[:-1], "left"), x.searchsorted(edges[-1:], "right")))
    return np.diff(at)


def lerp_percentiles(below: np.ndarray, above: np.ndarray, n: int,
                     q: np.ndarray) -> np.ndarray:
    """``numpy.percentile(x, q)`` (linear method) of n values x from the order statistics it
    reads: ``below[i]`` and ``above[i]`` at ranks :func:`percentile_ranks` give q[i]'s value,
    the same arithmetic as NumPy's (``_lerp``), so the same bits."""
    quantiles = np.true_divide(np.asarray(q, dtype=np.float64), 100)
    virtual = (n - 1) * quantiles
    gamma = virtual - np.floor(virtual)
    gamma[virtual >= n - 1] = 0.0                    # past the last value: the last value
    diff = above - below
    out = below + diff * gamma
    return np.where(gamma >= 0.5, above - diff * (1 - gamma), out)


def percentile_ranks(n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 0-based ranks ``numpy.percentile`` interpolates between for each of ``q``."""
    virtual = (n - 1) * np.true_divide(np.asarray(q, dtype=np.float64), 100)
    below = np.clip(np.floor(virtual), 0, n - 1).astype(np.int64)
    above = np.clip(below + 1, 0, n - 1)
    return below, above


class Latencies:
    """Latencies in picoseconds, added a chunk at a time, held sorted and compressed (module
    docstring)."""

    def __init__(self) -> None:
        self._chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._counts = np.zeros(len(LATENCY_BIN_EDGES_NS) - 1, dtype=np.int64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return sum(a.nbytes for chunk in self._chunks for a in chunk)

    def add(self, values: np.ndarray) -> None:
        """Take ``values`` (int64 ps, any order; an int64 array is sorted in place), encoded
        :data:`PIECE` at a time, so that what is held beside them stays small."""
        v = values if isinstance(values, np.ndarray) and values.dtype == np.int64 else \
            np.asarray(values, dtype=np.int64)
        n = len(v)
        if not n:
            return
        v.sort()
        small = np.zeros(n - 1, dtype=np.uint8)
        big, escapes = [], np.zeros((n + BLOCK - 1) // BLOCK, dtype=np.int64)
        for i in range(0, n, PIECE):               # a whole number of blocks at a time
            piece = v[i:i + PIECE]
            self._counts += histogram_counts(piece / 1000.0)
            step = np.diff(v[i:i + PIECE + 1])
            small[i:i + len(step)] = np.minimum(step, ESCAPE)
            escaped = step >= ESCAPE
            big.append(step[escaped])
            # escapes in each block of this piece (its differences to the next value)
            per_block = np.add.reduceat(escaped, np.arange(0, len(step), BLOCK)) \
                if len(step) else np.zeros(0, dtype=np.int64)
            escapes[i // BLOCK:i // BLOCK + len(per_block)] = per_block
        # where each block's escaped differences start in ``big``
        big_from = np.concatenate(([0], np.cumsum(escapes)[:-1])).astype(np.int64)
        heads = v[::BLOCK].copy()                    # every block's first value, in full
        self._chunks.append((small, np.concatenate(big), heads, big_from))
        self._n += n

    def _block(self, chunk: int, block: int) -> np.ndarray:
        """The values of one block of a chunk, decoded."""
        small, big, heads, big_from = self._chunks[chunk]
        lo, hi = block * BLOCK, min((block + 1) * BLOCK, len(small) + 1)
        step = small[lo:hi - 1].astype(np.int64)
        escapes = step == ESCAPE
        k = int(big_from[block])
        step[escapes] = big[k:k + int(escapes.sum())]
        return heads[block] + np.concatenate(([0], np.cumsum(step)))

    def _count_at_most(self, value: int) -> int:
        """How many latencies are at most ``value``."""
        total = 0
        for c, (small, _, heads, _) in enumerate(self._chunks):
            block = int(np.searchsorted(heads, value, side="right")) - 1
            if block < 0:
                continue
            total += block * BLOCK + int(np.searchsorted(self._block(c, block), value,
                                                         side="right"))
        return total

    def order_statistic(self, k: int) -> int:
        """The k-th smallest latency (0-based): the least value with more than k at or below
        it, by binary search between the smallest and the largest."""
        if not 0 <= k < self._n:
            raise IndexError(f"order statistic {k} of {self._n} latencies")
        if len(self._chunks) == 1:
            return int(self._block(0, k // BLOCK)[k % BLOCK])
        lo = min(int(heads[0]) for _, _, heads, _ in self._chunks)
        hi = self.max()
        while lo < hi:
            mid = (lo + hi) // 2
            if self._count_at_most(mid) > k:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def max(self) -> int:
        """The largest latency."""
        return max(int(self._block(c, len(heads) - 1)[-1])
                   for c, (_, _, heads, _) in enumerate(self._chunks))

    def percentiles(self, q: tuple[float, ...] = (50.0, 99.0)) -> list[float]:
        """``numpy.percentile`` of the latencies in ns at ``q``, bit for bit."""
        below, above = percentile_ranks(self._n, np.asarray(q))
        value = {int(k): self.order_statistic(int(k)) / 1000.0 for k in {*below, *above}}
        return lerp_percentiles(np.array([value[int(k)] for k in below]),
                                np.array([value[int(k)] for k in above]), self._n,
                                np.asarray(q)).tolist()

    def histogram(self) -> dict[str, list]:
        """Counts in :data:`LATENCY_BIN_EDGES_NS`'s bins (``latency_histogram`` of the
        record)."""
        return {"edges_ns": [float(e) for e in LATENCY_BIN_EDGES_NS],
                "counts": self._counts.tolist()}

    def values(self) -> np.ndarray:
        """Every latency (ps), sorted."""
        if not self._chunks:
            return np.zeros(0, dtype=np.int64)
        parts = [np.concatenate([self._block(c, b) for b in range(len(heads))])
                 for c, (_, _, heads, _) in enumerate(self._chunks)]
        return np.sort(np.concatenate(parts), kind="stable")
