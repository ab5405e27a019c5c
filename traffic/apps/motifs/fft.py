"""Distributed 3-D FFTs: the motifs ``fft_slab`` and ``fft_pencil``.

An N1 x N2 x N3 grid of complex values (16 bytes each: double-precision complex) is spread
evenly over P ranks; a transpose between FFT directions is an all-to-all within a
communicator of m ranks in which each rank sends every other 1/m of its N1·N2·N3·16/P
bytes.

* ``fft_slab`` -- a 1-D (slab) decomposition: per iteration compute, then one transpose over
  all ranks, N1·N2·N3·16/P² bytes per pair (the NPB FT 1-D layout, P <= N3).
* ``fft_pencil`` -- a 2-D (pencil) decomposition on a pr x pc process grid (default
  MPI_Dims_create's): per iteration compute, an all-to-all within each row communicator (the
  pc ranks of a row, N1·N2·N3·16/(P·pc) bytes per pair), then within each column
  communicator (pr ranks, N1·N2·N3·16/(P·pr) per pair), as P3DFFT and 2DECOMP&FFT do.

``n`` is N (a cube) or [N1, N2, N3]; sizes are rounded down to whole bytes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS
from icsim.traffic.apps.motifs.collectives import (ALLTOALL, alltoall, check_choice,
                                                    check_count, iterate)
from icsim.traffic.apps.motifs.halo import Cart, process_grid
from icsim.traffic.apps.ops import AppError, Builder

__all__ = ["COMPLEX_BYTES", "grid_shape", "fft_pencil", "fft_slab"]

COMPLEX_BYTES = 16


def grid_shape(n: Any) -> tuple[int, int, int]:
    """``n`` as (N1, N2, N3): a number for a cube, or three numbers."""
    if isinstance(n, (list, tuple)):
        if len(n) != 3:
            raise AppError(f"n: a number or [N1, N2, N3], got {n!r}")
        return tuple(check_count("n", v) for v in n)              # type: ignore[return-value]
    side = check_count("n", n)
    return side, side, side


def transpose_bytes(points: int, ranks: int, comm: int) -> int:
    """Bytes per pair of a transpose within a communicator of ``comm`` of the ``ranks`` ranks
    holding ``points`` complex values."""
    return points * COMPLEX_BYTES // (ranks * comm)


@MOTIFS.register("fft_slab", help="3-D FFT, slab decomposition: one alltoall per iteration")
def fft_slab(b: Builder, rng: np.random.Generator, *, iterations: int = 1, n: Any = 256,
             algorithm: str = "pairwise", compute_us: Any = 0) -> None:
    """The slab FFT of the module docstring."""
    shape = grid_shape(n)
    p = b.num_ranks
    if p > shape[2]:
        raise AppError(f"ranks: a slab decomposition of {shape[2]} planes allows at most "
                       f"{shape[2]} ranks, the job has {p}")
    check_choice("algorithm", algorithm, ALLTOALL)
    pair = transpose_bytes(math.prod(shape), p, p)
    everyone = list(range(p))
    iterate(b, rng, iterations, compute_us, lambda it: alltoall(b, everyone, pair, algorithm))


@MOTIFS.register("fft_pencil", help="3-D FFT, pencil decomposition: row then column alltoall")
def fft_pencil(b: Builder, rng: np.random.Generator, *, iterations: int = 1, n: Any = 256,
               grid: Any = None, algorithm: str = "pairwise", compute_us: Any = 0) -> None:
    """The pencil FFT of the module docstring."""
    shape = grid_shape(n)
    cart = Cart(process_grid(b.num_ranks, grid, 2))
    pr, pc = cart.dims
    if pr > shape[0] or pc > shape[1]:
        raise AppError(f"grid: {pr} x {pc} ranks over {shape[0]} x {shape[1]} pencils leaves "
                       f"ranks without data")
    check_choice("algorithm", algorithm, ALLTOALL)
    rows = [[cart.rank((i, j)) for j in range(pc)] for i in range(pr)]
    cols = [[cart.rank((i, j)) for i in range(pr)] for j in range(pc)]
    points = math.prod(shape)

    def body(it: int) -> None:
        for comms, m in ((rows, pc), (cols, pr)):
            for comm in comms:
                alltoall(b, comm, transpose_bytes(points, b.num_ranks, m), algorithm)

    iterate(b, rng, iterations, compute_us, body)
