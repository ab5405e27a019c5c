"""Pipelined wavefront sweeps: the motif ``sweep3d`` and the block step it shares with the
NPB LU skeleton (:func:`sweep_block`).

``sweep3d`` is the KBA (Koch, Baker and Alcouffe 1992) discrete-ordinates transport sweep of
the ASCI Sweep3D benchmark: an nx x ny x nz grid over a px x py process grid (z is not
decomposed; each rank holds an it x jt x nz column, it = nx/px, jt = ny/py, the first
remainders one larger).  For each of the 8 octants -- the 4 corners of the process grid the
sweep starts from, each with the two z directions -- and each of ``angle_blocks`` blocks of
the octant's ``angles`` and ``k_blocks`` blocks of the nz planes, every rank receives the
block's inflow from its upstream x and y neighbours, computes (``compute_us`` per block),
and sends the outflow downstream.  The faces are those of Sweep3D: to the x neighbour
jt · mk · mmi doubles, to the y neighbour it · mk · mmi (mk planes and mmi angles in the
block).  The grid is not periodic: a corner rank starts each octant.  Per iteration all 8
octants, then ``mark``.

Compute draws are taken per block in the order iteration, octant, angle block, k block, rank.
"""

from __future__ import annotations

from itertools import product
from typing import Any, Sequence

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS, Compute
from icsim.traffic.apps.motifs.collectives import check_count, split
from icsim.traffic.apps.motifs.halo import Cart, process_grid
from icsim.traffic.apps.ops import AppError, Builder

__all__ = ["extent", "sweep_block", "sweep3d"]

#: the octants' directions over the process grid (x, y), each swept twice (z up, z down)
CORNERS = ((1, 1), (-1, 1), (1, -1), (-1, -1))


def extent(n: int, parts: int, index: int) -> int:
    """Points of an n-point axis held by part ``index`` of ``parts`` (the first n % parts
    parts one more)."""
    return n // parts + (index < n % parts)


def sweep_block(b: Builder, cart: Cart, direction: Sequence[int],
                nbytes: Sequence[Sequence[int]], busy_ps: Sequence[int]) -> None:
    """One block of a wavefront over a 2-D non-periodic ``cart`` travelling ``direction``
    (+1/-1 per axis): every rank receives from its upstream neighbour along each axis, computes
    ``busy_ps[rank]`` (blocking: it waits for the receives), then sends downstream.
    ``nbytes[axis][rank]`` is the size of a message across ``axis`` at ``rank`` (the same at
    both ends: they share the other coordinate)."""
    unit = [tuple(d if a == axis else 0 for a in range(2)) for axis, d in enumerate(direction)]
    for r in range(cart.size):
        for axis, step in enumerate(unit):
            up = cart.neighbour(r, [-s for s in step])
            if up is not None:
                b.irecv(r, up, nbytes[axis][r])
        b.compute(r, busy_ps[r])
        for axis, step in enumerate(unit):
            down = cart.neighbour(r, step)
            if down is not None:
                b.isend(r, down, nbytes[axis][r])


def _blocks(name: str, value: Any, total: int, of: str) -> int:
    count = check_count(name, value)
    if count > total:
        raise AppError(f"{name}: {count} blocks of {total} {of}")
    return count


@MOTIFS.register("sweep3d", help="KBA wavefront transport sweep (Sweep3D)")
def sweep3d(b: Builder, rng: np.random.Generator, *, iterations: int = 1, grid: Any = None,
            nx: int = 64, ny: int = 64, nz: int = 64, angles: int = 6, angle_blocks: int = 2,
            k_blocks: int = 8, compute_us: Any = 0) -> None:
    """The KBA sweep of the module docstring."""
    cart = Cart(process_grid(b.num_ranks, grid, 2), periodic=False)
    px, py = cart.dims
    nx, ny, nz = (check_count(name, v) for name, v in (("nx", nx), ("ny", ny), ("nz", nz)))
    angles = check_count("angles", angles)
    if nx < px or ny < py:
        raise AppError(f"grid: {px} x {py} ranks over a {nx} x {ny} plane leaves ranks "
                       f"without points")
    mk = split(nz, _blocks("k_blocks", k_blocks, nz, "nz"))
    mmi = split(angles, _blocks("angle_blocks", angle_blocks, angles, "angles"))
    it = [extent(nx, px, cart.coords(r)[0]) for r in range(cart.size)]
    jt = [extent(ny, py, cart.coords(r)[1]) for r in range(cart.size)]
    spec = Compute(compute_us)

    def one(n: int) -> None:
        for corner, _z, a, k in product(CORNERS, (1, -1), mmi, mk):
            face = ([8 * j * k * a for j in jt], [8 * i * k * a for i in it])
            sweep_block(b, cart, corner, face, [spec.draw(rng) for _ in range(cart.size)])
        for r in range(cart.size):
            b.mark(r, n)

    b.repeat(check_count("iterations", iterations), one)
