"""The simplest motifs: a ping-pong between two ranks (the latency benchmark every MPI
library ships, e.g. the OSU and Intel MPI benchmarks' PingPong)."""

from __future__ import annotations

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS, Compute
from icsim.traffic.apps.motifs.collectives import check_bytes, check_count
from icsim.traffic.apps.ops import AppError, Builder


@MOTIFS.register("pingpong")
def pingpong(b: Builder, rng: np.random.Generator, *, iterations: int = 10, bytes: int = 512,
             compute_us: float = 0) -> None:
    """Rank 0 sends ``bytes`` to rank 1, which sends them back, ``iterations`` times; each
    round trip an iteration of both (marked when each has done its part).  Ranks beyond 2
    only mark their iterations (a job of more ranks is allowed, its others idle)."""
    if b.num_ranks < 2:
        raise AppError(f"ranks: a ping-pong needs 2 ranks, got {b.num_ranks}")
    count = check_count("iterations", iterations)
    nbytes = check_bytes("bytes", bytes)
    compute = Compute(compute_us)

    def one(it: int) -> None:
        for r in (0, 1):
            if compute.mean:
                b.compute(r, compute.draw(rng))
        b.isend(0, 1, nbytes)
        b.irecv(0, 1, nbytes)
        b.irecv(1, 0, nbytes)
        b.waitall(1)
        b.isend(1, 0, nbytes)
        for r in range(b.num_ranks):
            b.mark(r, it)

    b.repeat(count, one)
