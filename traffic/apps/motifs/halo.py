"""Halo exchanges on a Cartesian process grid: the motifs ``halo2d`` and ``halo3d``, and the
process grid the other motifs share (:func:`dims_create`, :func:`process_grid`, :class:`Cart`).

The grid is MPI's: ``MPI_Dims_create``'s most nearly square factorisation of the rank count
(non-increasing dimensions) unless ``grid`` is given, ranks in row-major order (the last
coordinate fastest, as ``MPI_Cart_create`` numbers them).  Per iteration every rank computes,
then posts a send and a receive for each neighbour -- the 2·d face neighbours, and with
``diagonals`` the edges and corners too (8 neighbours in 2-D, 26 in 3-D) -- waits for all of
them, optionally joins an allreduce over all ranks (``allreduce_bytes``, e.g. a residual
norm), and marks the iteration's end.  ``periodic`` (the default) wraps around the grid; a
non-periodic grid sends nothing across its boundary.  A neighbour that is the rank itself (a
periodic dimension of extent 1) is a local copy, not a message.

Message sizes: ``bytes`` per face.  The defaults of the diagonal messages take the face as a
one-element-deep layer of 8-byte values: in 3-D a square of side m = floor(sqrt(bytes / 8))
values, so an edge message is a row of it (``edge_bytes`` = 8·m) and a corner one value
(``corner_bytes`` = 8), never more than ``bytes``; in 2-D a corner is one value (8 bytes).
"""

from __future__ import annotations

import math
from itertools import product
from typing import Any, Iterator, Sequence

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS
from icsim.traffic.apps.motifs.collectives import (ALLREDUCE, allreduce, check_bytes,
                                                    check_choice, check_count, exchange,
                                                    iterate)
from icsim.traffic.apps.ops import AppError, Builder

__all__ = ["Cart", "dims_create", "process_grid", "halo2d", "halo3d"]

#: bytes of one value of a halo layer (a double)
ELEMENT_BYTES = 8


def _factorings(n: int, k: int, cap: int) -> Iterator[tuple[int, ...]]:
    """Every way to write n as k non-increasing factors, none above ``cap``."""
    if k == 1:
        if n <= cap:
            yield (n,)
        return
    for d in range(min(n, cap), 0, -1):
        if n % d == 0:
            for rest in _factorings(n // d, k - 1, d):
                yield (d, *rest)


def dims_create(n: int, ndims: int) -> tuple[int, ...]:
    """MPI_Dims_create: ``ndims`` factors of ``n``, as close to each other as possible,
    non-increasing.

    >>> dims_create(64, 3), dims_create(12, 2), dims_create(16, 3), dims_create(7, 2)
    ((4, 4, 4), (4, 3), (4, 2, 2), (7, 1))
    """
    return min(_factorings(n, ndims, n), key=lambda d: (d[0] - d[-1], d))


def process_grid(n: int, grid: Any, ndims: int) -> tuple[int, ...]:
    """``grid`` checked against ``n`` ranks, or the :func:`dims_create` grid when None."""
    if grid is None:
        return dims_create(n, ndims)
    if (not isinstance(grid, (list, tuple)) or len(grid) != ndims
            or any(isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1
                   for g in grid)):
        raise AppError(f"grid: {ndims} positive integers, got {grid!r}")
    if math.prod(grid) != n:
        raise AppError(f"grid: {' x '.join(map(str, grid))} = {math.prod(grid)} ranks, but the "
                       f"job has {n}")
    return tuple(int(g) for g in grid)


class Cart:
    """A Cartesian process grid: ranks row-major over ``dims``, neighbours by offset.

    >>> c = Cart((2, 3), periodic=False)
    >>> c.coords(4), c.neighbour(4, (0, 1)), c.neighbour(4, (1, 0))
    ((1, 1), 5, None)
    >>> Cart((2, 3)).neighbour(0, (-1, -1))
    5
    """

    def __init__(self, dims: Sequence[int], periodic: bool = True):
        self.dims = tuple(dims)
        self.periodic = periodic
        self.size = math.prod(self.dims)

    def coords(self, rank: int) -> tuple[int, ...]:
        return tuple(int(c) for c in np.unravel_index(rank, self.dims))

    def rank(self, coords: Sequence[int]) -> int:
        return int(np.ravel_multi_index(tuple(coords), self.dims))

    def neighbours(self, offset: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`neighbour` of every rank at once: the ranks at ``offset`` from each rank
        (int64) and where there is one (bool; off the edge of a non-periodic grid, not).

        >>> Cart((2, 3), periodic=False).neighbours((0, 1))
        (array([1, 2, 2, 4, 5, 5]), array([ True,  True, False,  True,  True, False]))
        """
        dims = np.asarray(self.dims, dtype=np.int64)
        coords = np.stack(np.unravel_index(np.arange(self.size), self.dims), axis=1)
        at = coords + np.asarray(offset, dtype=np.int64)
        if self.periodic:
            at %= dims
            ok = np.ones(self.size, dtype=bool)
        else:
            ok = ((at >= 0) & (at < dims)).all(axis=1)
            at = np.clip(at, 0, dims - 1)
        return np.ravel_multi_index(tuple(at.T), self.dims).astype(np.int64), ok

    def neighbour(self, rank: int, offset: Sequence[int]) -> int | None:
        """The rank at ``offset`` from ``rank`` (wrapped when periodic, None off the edge)."""
        at = [c + o for c, o in zip(self.coords(rank), offset)]
        if self.periodic:
            at = [a % d for a, d in zip(at, self.dims)]
        elif any(not 0 <= a < d for a, d in zip(at, self.dims)):
            return None
        return self.rank(at)


def _offsets(ndims: int, diagonals: bool) -> list[tuple[int, ...]]:
    """Neighbour offsets in a fixed order; faces only unless ``diagonals``."""
    return [o for o in product((-1, 0, 1), repeat=ndims)
            if any(o) and (diagonals or sum(map(abs, o)) == 1)]


def _halo(b: Builder, rng: np.random.Generator, ndims: int, *, iterations: Any, grid: Any,
          bytes: Any, diagonals: bool, periodic: bool, sizes: dict[int, Any],
          allreduce_bytes: Any, allreduce_algorithm: str, compute_us: Any) -> None:
    """The motif of the module docstring; ``sizes`` maps a neighbour's number of non-zero
    offsets (1 face, 2 edge, 3 corner) to its message size."""
    cart = Cart(process_grid(b.num_ranks, grid, ndims), periodic=bool(periodic))
    face = check_bytes("bytes", bytes)
    edge = min(face, ELEMENT_BYTES * math.isqrt(face // ELEMENT_BYTES))
    corner = min(face, ELEMENT_BYTES)
    size = {1: face, 2: edge if ndims == 3 else corner, 3: corner}
    size.update({k: check_bytes(name, v) for k, (name, v) in sizes.items() if v is not None})
    # receivers meet each sender's messages in the sender's offset order (k-th send, k-th
    # recv): rank by rank, each rank's neighbours in offset order
    offsets = _offsets(ndims, bool(diagonals))
    found = [cart.neighbours(o) for o in offsets]
    peer = np.stack([nb for nb, _ in found], axis=1)
    ok = np.stack([there for _, there in found], axis=1)
    nbytes = np.broadcast_to(np.array([size[sum(map(abs, o))] for o in offsets]), ok.shape)
    rank = np.broadcast_to(np.arange(cart.size)[:, None], ok.shape)
    b.ahead(int((ok & (peer != rank)).sum()) * check_count("iterations", iterations),
            int(nbytes.min()))
    messages = list(zip(rank[ok].tolist(), peer[ok].tolist(), nbytes[ok].tolist()))
    check_choice("allreduce_algorithm", allreduce_algorithm, ALLREDUCE)
    reduce_bytes = None if allreduce_bytes is None else check_bytes("allreduce_bytes",
                                                                     allreduce_bytes)
    everyone = list(range(cart.size))

    def body(it: int) -> None:
        exchange(b, messages)
        if reduce_bytes is not None:
            allreduce(b, everyone, reduce_bytes, allreduce_algorithm)

    iterate(b, rng, iterations, compute_us, body)


@MOTIFS.register("halo2d", help="2-D stencil halo exchange on a process grid")
def halo2d(b: Builder, rng: np.random.Generator, *, iterations: int = 1, grid: Any = None,
           bytes: int = 8192, diagonals: bool = False, periodic: bool = True,
           corner_bytes: Any = None, allreduce_bytes: Any = None,
           allreduce_algorithm: str = "recursive_doubling", compute_us: Any = 0) -> None:
    """2-D halo exchange on a px x py grid (module docstring)."""
    _halo(b, rng, 2, iterations=iterations, grid=grid, bytes=bytes, diagonals=diagonals,
          periodic=periodic, sizes={2: ("corner_bytes", corner_bytes)},
          allreduce_bytes=allreduce_bytes, allreduce_algorithm=allreduce_algorithm,
          compute_us=compute_us)


@MOTIFS.register("halo3d", help="3-D stencil halo exchange on a process grid")
def halo3d(b: Builder, rng: np.random.Generator, *, iterations: int = 1, grid: Any = None,
           bytes: int = 32768, diagonals: bool = False, periodic: bool = True,
           edge_bytes: Any = None, corner_bytes: Any = None, allreduce_bytes: Any = None,
           allreduce_algorithm: str = "recursive_doubling", compute_us: Any = 0) -> None:
    """3-D halo exchange on a px x py x pz grid (module docstring)."""
    _halo(b, rng, 3, iterations=iterations, grid=grid, bytes=bytes, diagonals=diagonals,
          periodic=periodic,
          sizes={2: ("edge_bytes", edge_bytes), 3: ("corner_bytes", corner_bytes)},
          allreduce_bytes=allreduce_bytes, allreduce_algorithm=allreduce_algorithm,
          compute_us=compute_us)
