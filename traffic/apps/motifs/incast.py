"""The motif ``incast``: many-to-one.  Per iteration every rank computes, every rank but
``root`` sends ``bytes`` to ``root``, which has posted a receive for each (an MPI_Gather done
by hand, or a parameter server collecting gradients), everyone waits for their messages, then
marks the iteration's end.  The root's link to the network is the bottleneck by construction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS
from icsim.traffic.apps.motifs.collectives import check_bytes, check_count, exchange, iterate
from icsim.traffic.apps.ops import AppError, Builder

__all__ = ["incast"]


@MOTIFS.register("incast", help="every rank sends to one root")
def incast(b: Builder, rng: np.random.Generator, *, iterations: int = 1, bytes: int = 65536,
           root: int = 0, compute_us: Any = 0) -> None:
    """The many-to-one pattern of the module docstring."""
    root = check_count("root", root, minimum=0)
    if root >= b.num_ranks:
        raise AppError(f"root: {root} is not a rank of the job (0..{b.num_ranks - 1})")
    nbytes = check_bytes("bytes", bytes)
    messages = [(r, root, nbytes) for r in range(b.num_ranks) if r != root]
    iterate(b, rng, iterations, compute_us, lambda it: exchange(b, messages))
