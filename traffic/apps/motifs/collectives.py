"""Collective operations over a sub-communicator, written as MPI implementations run them,
and the thin motifs ``allreduce``, ``alltoall``, ``alltoallv``, ``bcast`` and ``reduce``.

A collective takes ``group``, the job ranks taking part in communicator order (index ``i``
of the group is communicator rank ``i``), and writes its steps into the builder: in a step
every rank taking part posts its sends and receives, then waits for all of them (MPICH's
``MPIC_Sendrecv`` per step).  Algorithms, after Thakur, Rabenseifner and Gropp, "Optimization
of collective communication operations in MPICH", IJHPCA 19(1), 2005:

* allreduce -- ``ring`` (reduce-scatter then allgather around the ring: 2(n-1) steps of one
  chunk, the chunks integers summing to the message), ``recursive_doubling`` (log2 n steps of
  the whole message with partner ``i ^ 2^k``) and ``rabenseifner`` (recursive-halving
  reduce-scatter, recursive-doubling allgather).  For n not a power of two, both of the
  latter fold first: of the first 2r ranks (r = n - 2^floor(log2 n)) the even ones send their
  whole vector to the next odd one and sit out, and get the result from it at the end;
* alltoall -- ``pairwise`` (n-1 steps; step s: with i XOR s when n is a power of two, else send
  to i+s and receive from i-s, mod n, as MPICH's), ``scattered`` (every message posted at once,
  in blocks of 32 peers with a waitall each: MPICH's medium messages and its alltoallv) and
  ``bruck`` (Bruck, Ho, Kipnis, Upfal and Weathersby, "Efficient algorithms for all-to-all
  communications in multiport message-passing systems", IEEE TPDS 8(11), 1997: ceil(log2 n)
  steps, step k sends to i + 2^k the blocks whose index has bit k set);
* bcast and reduce -- binomial trees rooted at ``root`` (MPICH's ``MPIR_Bcast_binomial``,
  ``MPIR_Reduce_binomial``); barrier -- dissemination (1-byte messages, ceil(log2 n) rounds);
  allgather -- the ring (n-1 steps of one rank's block).

:func:`mpich_allreduce` and :func:`mpich_alltoall` pick the algorithm MPICH picks for a
message size (the 2005 paper's thresholds), for the NPB skeletons.

The motifs share :func:`iterate`: per iteration a compute phase (one draw per rank, in rank
order, none for a zero time), the body, then ``mark`` on every rank.
"""

from __future__ import annotations

from functools import partial
from itertools import accumulate
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS, Compute
from icsim.traffic.apps.ops import AppError, Builder
from icsim.traffic.trace import MAX_MESSAGE_BYTES

__all__ = ["ALLREDUCE", "ALLTOALL", "Message", "allgather", "allreduce", "alltoall", "alltoallv",
           "barrier", "bcast", "check_bytes", "check_choice", "check_count", "compute_phase",
           "exchange", "iterate", "mpich_allreduce", "mpich_alltoall", "reduce", "split"]

Message = tuple[int, int, int]                     # (from rank, to rank, bytes)


# ---------------------------------------------------------------------- checks and plumbing
def check_count(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an integer >= ``minimum``, else an AppError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise AppError(f"{name}: an integer >= {minimum}, got {value!r}")
    return int(value)


def check_bytes(name: str, value: Any) -> int:
    """A message size: an integer number of bytes, 0 to 1 GiB (a trace's limit per message,
    :data:`~icsim.traffic.trace.MAX_MESSAGE_BYTES`)."""
    nbytes = check_count(name, value, minimum=0)
    if nbytes > MAX_MESSAGE_BYTES:
        raise AppError(f"{name}: at most {MAX_MESSAGE_BYTES:,} bytes (1 GiB) a message, got "
                       f"{nbytes:,}")
    return nbytes


def check_choice(name: str, value: Any, valid: Iterable[str]) -> str:
    valid = tuple(valid)
    if value not in valid:
        raise AppError(f"{name}: {value!r} is not one of {', '.join(valid)}")
    return value


def split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` integers summing to it, the first ``total % parts`` one larger."""
    q, r = divmod(total, parts)
    return [q + (i < r) for i in range(parts)]


def exchange(b: Builder, messages: Iterable[Message]) -> None:
    """One step: every message posted, then a waitall on each rank taking part
    (:meth:`~icsim.traffic.apps.ops.Builder.exchange`)."""
    b.exchange(messages)


def compute_phase(b: Builder, rng: np.random.Generator, spec: Compute,
                  ranks: Iterable[int]) -> None:
    """A compute phase on ``ranks``: one draw per rank, in the order given; nothing at all for
    a time that is zero by construction (mean and sd both 0)."""
    if spec.mean == 0 and spec.sd == 0:
        return
    for r in ranks:
        b.compute(r, spec.draw(rng))


def iterate(b: Builder, rng: np.random.Generator, iterations: Any, compute_us: Any,
            body: Callable[[int], None]) -> None:
    """``iterations`` times: a compute phase on every rank, ``body(it)``, ``mark`` on every
    rank (the iteration's end)."""
    spec = Compute(compute_us)
    count = check_count("iterations", iterations)
    ranks = range(b.num_ranks)

    def one(it: int) -> None:
        compute_phase(b, rng, spec, ranks)
        body(it)
        for r in ranks:
            b.mark(r, it)

    b.repeat(count, one)


def _check_group(b: Builder, group: Sequence[int]) -> list[int]:
    group = [int(r) for r in group]
    if len(set(group)) != len(group) or any(not 0 <= r < b.num_ranks for r in group):
        raise AppError(f"group: distinct ranks of the job (0..{b.num_ranks - 1}), got {group}")
    return group


def _check_root(root: Any, n: int) -> int:
    root = check_count("root", root, minimum=0)
    if root >= n:
        raise AppError(f"root: {root} is not a rank of the communicator (0..{n - 1})")
    return root


# ---------------------------------------------------------------------- allreduce
def _ring_allreduce(b: Builder, group: list[int], nbytes: int) -> None:
    n = len(group)
    chunk = split(nbytes, n)
    for s in range(2 * (n - 1)):
        # step s passes chunk i - s on, in both phases: the reduce-scatter leaves chunk i + 1
        # reduced at rank i, which is the allgather's step n - 1 chunk (i - (n - 1) = i + 1)
        exchange(b, [(group[i], group[(i + 1) % n], chunk[(i - s) % n]) for i in range(n)])


def _folded(core: Callable[[Builder, list[int], int], None], b: Builder, group: list[int],
            nbytes: int) -> None:
    """The power-of-two ``core`` on 2^floor(log2 n) ranks after MPICH's fold (module
    docstring)."""
    rem = len(group) - (1 << (len(group).bit_length() - 1))
    exchange(b, [(group[2 * i], group[2 * i + 1], nbytes) for i in range(rem)])
    core(b, [group[2 * i + 1] for i in range(rem)] + group[2 * rem:], nbytes)
    exchange(b, [(group[2 * i + 1], group[2 * i], nbytes) for i in range(rem)])


def _masks(p: int) -> list[int]:
    """1, 2, 4, ... below the largest power of two <= p."""
    return [1 << k for k in range(p.bit_length() - 1)]


def _doubling(b: Builder, core: list[int], nbytes: int) -> None:
    for mask in _masks(len(core)):
        exchange(b, [(core[i], core[i ^ mask], nbytes) for i in range(len(core))])


def _halving_doubling(b: Builder, core: list[int], nbytes: int) -> None:
    """Rabenseifner: the vector in p chunks; halving keeps the lower half at the lower rank."""
    p = len(core)
    edge = [0, *accumulate(split(nbytes, p))]      # bytes of chunks [lo, hi): edge[hi]-edge[lo]
    lo, hi = [0] * p, [p] * p
    for mask in _masks(p):                          # reduce-scatter by recursive halving
        mid = [(lo[i] + hi[i]) // 2 for i in range(p)]
        lower = [i < (i ^ mask) for i in range(p)]
        exchange(b, [(core[i], core[i ^ mask],
                      edge[hi[i]] - edge[mid[i]] if lower[i] else edge[mid[i]] - edge[lo[i]])
                     for i in range(p)])
        lo = [lo[i] if lower[i] else mid[i] for i in range(p)]
        hi = [mid[i] if lower[i] else hi[i] for i in range(p)]
    for mask in reversed(_masks(p)):                # allgather by recursive doubling
        exchange(b, [(core[i], core[i ^ mask], edge[hi[i]] - edge[lo[i]]) for i in range(p)])
        lo, hi = ([min(lo[i], lo[i ^ mask]) for i in range(p)],
                  [max(hi[i], hi[i ^ mask]) for i in range(p)])


_ALLREDUCE: dict[str, Callable[[Builder, list[int], int], None]] = {
    "ring": _ring_allreduce,
    "recursive_doubling": partial(_folded, _doubling),
    "rabenseifner": partial(_folded, _halving_doubling),
}
ALLREDUCE = tuple(_ALLREDUCE)


def allreduce(b: Builder, group: Sequence[int], nbytes: int,
              algorithm: str = "recursive_doubling") -> None:
    """MPI_Allreduce of ``nbytes`` over ``group`` by ``algorithm`` (module docstring)."""
    run = _ALLREDUCE[check_choice("algorithm", algorithm, ALLREDUCE)]
    group = _check_group(b, group)
    if len(group) > 1:
        n, core = len(group), 1 << (len(group).bit_length() - 1)
        steps = {"ring": 2 * (n - 1) * n, "recursive_doubling": core * (core.bit_length() - 1),
                 "rabenseifner": 2 * core * (core.bit_length() - 1)}[algorithm]
        b.ahead(steps, 0)                      # at least a packet each
        run(b, group, check_bytes("bytes", nbytes))


def mpich_allreduce(nbytes: int) -> str:
    """MPICH's choice (Thakur et al. 2005): recursive doubling up to 2 KiB, Rabenseifner above."""
    return "recursive_doubling" if nbytes <= 2048 else "rabenseifner"


# ---------------------------------------------------------------------- all-to-all
def _pairwise(b: Builder, group: list[int], size: Callable[[int, int], int]) -> None:
    """n - 1 steps; step s pairs rank i with i XOR s when n is a power of two (each step a
    set of swaps), else sends to i + s and receives from i - s (MPICH's pairwise exchange)."""
    n = len(group)
    xor = n & (n - 1) == 0
    for s in range(1, n):
        peer = [(i ^ s) if xor else (i + s) % n for i in range(n)]
        exchange(b, [(group[i], group[peer[i]], size(i, peer[i])) for i in range(n)])


def _scattered(b: Builder, group: list[int], size: Callable[[int, int], int],
               block: int = 32, chunk: int = 0) -> None:
    """Every message posted at once, in blocks of ``block`` peers (MPICH's throttle,
    MPIR_CVAR_ALLTOALL_THROTTLE = 32), a waitall per block: block k of rank i receives from
    i + j and sends to i - j for j in [32 k, 32 k + 32) (MPICH's medium-message alltoall and
    its alltoallv).  With ``chunk`` > 0 each message goes as pieces of ``chunk`` bytes (the
    last one the rest; a message of 0 bytes one piece), a rank posting the first piece of
    every message of its block, then the second, ...: its NIC sends them round robin over
    its peers, as concurrent sends progressing side by side do."""
    n = len(group)
    for lo in range(0, n, block):
        js = range(lo, min(n, lo + block))
        if chunk <= 0:
            exchange(b, [(group[i], group[(i - j) % n], size(i, (i - j) % n))
                         for i in range(n) for j in js])
            continue
        pieces = []
        for i in range(n):
            sizes = {j: size(i, (i - j) % n) for j in js}
            for k in range(max(1, -(-max(sizes.values()) // chunk))):
                pieces += [(group[i], group[(i - j) % n], min(chunk, sizes[j] - k * chunk))
                           for j in js if k == 0 or k * chunk < sizes[j]]
        exchange(b, pieces)


def _bruck(b: Builder, group: list[int], size: Callable[[int, int], int]) -> None:
    n, k = len(group), 1
    while k < n:
        blocks = sum(1 for j in range(n) if j & k)
        exchange(b, [(group[i], group[(i + k) % n], blocks * size(i, (i + k) % n))
                     for i in range(n)])
        k <<= 1


_ALLTOALL = {"pairwise": _pairwise, "bruck": _bruck, "scattered": _scattered}
ALLTOALL = tuple(_ALLTOALL)


def alltoall(b: Builder, group: Sequence[int], nbytes_per_pair: int,
             algorithm: str = "pairwise") -> None:
    """MPI_Alltoall of ``nbytes_per_pair`` from every rank to every other."""
    run = _ALLTOALL[check_choice("algorithm", algorithm, ALLTOALL)]
    nbytes = check_bytes("bytes", nbytes_per_pair)
    group = _check_group(b, group)
    if algorithm != "bruck":
        b.ahead(len(group) * (len(group) - 1), nbytes)
    run(b, group, lambda i, j: nbytes)


def alltoallv(b: Builder, group: Sequence[int], sizes: Any,
              algorithm: str = "scattered", chunk_bytes: int = 0) -> None:
    """MPI_Alltoallv: ``sizes[i][j]`` bytes from group rank i to group rank j, every message
    posted at once in blocks (``scattered``, MPICH's algorithm; with ``chunk_bytes`` > 0 in
    pieces round robin over the peers, :func:`_scattered`) or by pairwise exchange (a
    zero-byte message is still sent, as MPICH does)."""
    check_choice("algorithm", algorithm, ("scattered", "pairwise"))
    chunk = check_count("chunk_bytes", chunk_bytes, minimum=0)
    if chunk and algorithm != "scattered":
        raise AppError("chunk_bytes: pieces round robin are for the scattered algorithm only")
    group = _check_group(b, group)
    n = len(group)
    try:
        matrix = np.asarray(sizes)
    except (ValueError, TypeError):             # ragged rows
        matrix = np.zeros(0)
    if (matrix.shape != (n, n) or not np.issubdtype(matrix.dtype, np.integer)
            or (matrix < 0).any() or (matrix > MAX_MESSAGE_BYTES).any()):
        raise AppError(f"sizes: an {n}x{n} matrix of byte counts from 0 to "
                       f"{MAX_MESSAGE_BYTES:,} (1 GiB)")
    if chunk:
        _scattered(b, group, lambda i, j: int(matrix[i, j]), chunk=chunk)
    else:
        _ALLTOALL[algorithm](b, group, lambda i, j: int(matrix[i, j]))


def mpich_alltoall(nbytes_per_pair: int, n: int) -> str:
    """MPICH's choice (Thakur et al. 2005; MPICH 3.3's ``MPIR_Alltoall_intra_auto``): Bruck
    for short messages (<= 256 bytes) on 8 or more ranks, every message at once (in blocks of
    32) up to 32 KiB, else pairwise exchange."""
    if nbytes_per_pair <= 256 and n >= 8:
        return "bruck"
    return "scattered" if nbytes_per_pair <= 32768 else "pairwise"


# ---------------------------------------------------------------------- trees and rings
def _binomial(rel: int, n: int) -> tuple[int | None, list[int]]:
    """A rank's parent and children (relative ranks) in the binomial tree rooted at 0, the
    children nearest first (the order a reduce receives them)."""
    low = rel & -rel if rel else 1 << n.bit_length()       # the lowest set bit
    children = [rel + m for m in _masks(low) if rel + m < n]
    return (rel - low if rel else None), children


def _tree(b: Builder, group: Sequence[int], nbytes: int,
          root: int) -> Iterator[tuple[int, int | None, list[int]]]:
    """The ranks in order relative to ``root``, each with its tree parent and children."""
    group, nbytes = _check_group(b, group), check_bytes("bytes", nbytes)
    root = _check_root(root, len(group))
    order = group[root:] + group[:root]
    for rel, me in enumerate(order):
        parent, children = _binomial(rel, len(order))
        yield me, (None if parent is None else order[parent]), [order[c] for c in children]


def bcast(b: Builder, group: Sequence[int], nbytes: int, root: int = 0) -> None:
    """MPI_Bcast by a binomial tree: receive from the parent, then send to the children,
    farthest first."""
    for me, parent, children in _tree(b, group, nbytes, root):
        if parent is not None:
            b.irecv(me, parent, nbytes)
            b.waitall(me)
        for c in reversed(children):
            b.isend(me, c, nbytes)
        if children:
            b.waitall(me)


def reduce(b: Builder, group: Sequence[int], nbytes: int, root: int = 0) -> None:
    """MPI_Reduce by a binomial tree: receive and combine each child's vector in turn
    (nearest first), then send to the parent."""
    for me, parent, children in _tree(b, group, nbytes, root):
        for c in children:
            b.irecv(me, c, nbytes)
            b.waitall(me)
        if parent is not None:
            b.isend(me, parent, nbytes)
            b.waitall(me)


def barrier(b: Builder, group: Sequence[int]) -> None:
    """MPI_Barrier by dissemination: round k, 1 byte to i + 2^k, from i - 2^k."""
    group = _check_group(b, group)
    n, k = len(group), 1
    while k < n:
        exchange(b, [(group[i], group[(i + k) % n], 1) for i in range(n)])
        k <<= 1


def allgather(b: Builder, group: Sequence[int], nbytes_per_rank: int) -> None:
    """MPI_Allgather by the ring: n-1 steps, each passing one rank's block to the right."""
    group, nbytes = _check_group(b, group), check_bytes("bytes", nbytes_per_rank)
    n = len(group)
    for _ in range(n - 1):
        exchange(b, [(group[i], group[(i + 1) % n], nbytes) for i in range(n)])


# ---------------------------------------------------------------------- the motifs
def _everyone(b: Builder) -> list[int]:
    return list(range(b.num_ranks))


@MOTIFS.register("allreduce", help="MPI_Allreduce (ring, recursive_doubling, rabenseifner)")
def allreduce_motif(b: Builder, rng: np.random.Generator, *, iterations: int = 1,
                    bytes: int = 8, algorithm: str = "recursive_doubling",
                    compute_us: Any = 0) -> None:
    """Per iteration: compute, an allreduce of ``bytes`` over all ranks, mark."""
    check_choice("algorithm", algorithm, ALLREDUCE)
    iterate(b, rng, iterations, compute_us,
            lambda it: allreduce(b, _everyone(b), bytes, algorithm))


@MOTIFS.register("alltoall", help="MPI_Alltoall (pairwise, bruck)")
def alltoall_motif(b: Builder, rng: np.random.Generator, *, iterations: int = 1,
                   bytes: int = 1024, algorithm: str = "pairwise", compute_us: Any = 0) -> None:
    """Per iteration: compute, an alltoall of ``bytes`` per pair, mark."""
    check_choice("algorithm", algorithm, ALLTOALL)
    iterate(b, rng, iterations, compute_us,
            lambda it: alltoall(b, _everyone(b), bytes, algorithm))


@MOTIFS.register("alltoallv", help="MPI_Alltoallv, pairwise, given or jittered sizes")
def alltoallv_motif(b: Builder, rng: np.random.Generator, *, iterations: int = 1,
                    bytes: int = 1024, jitter: float = 0.0, sizes: Any = None,
                    algorithm: str = "scattered", compute_us: Any = 0) -> None:
    """Per iteration: compute, an alltoallv, mark.  The sizes are ``sizes`` (an n x n
    matrix) or else drawn once, before the first iteration, uniform in ``bytes`` x
    (1 ± ``jitter``) per pair (row by row)."""
    check_choice("algorithm", algorithm, ("scattered", "pairwise"))
    if sizes is None:
        mean = check_bytes("bytes", bytes)
        if not 0 <= jitter <= 1:
            raise AppError(f"jitter: a fraction in [0, 1], got {jitter!r}")
        lo, hi = int(mean * (1 - jitter)), int(mean * (1 + jitter))
        b.ahead(b.num_ranks * (b.num_ranks - 1), lo)          # before an n x n draw
        sizes = rng.integers(lo, hi + 1, size=(b.num_ranks, b.num_ranks))
    iterate(b, rng, iterations, compute_us,
            lambda it: alltoallv(b, _everyone(b), sizes, algorithm))


@MOTIFS.register("bcast", help="MPI_Bcast, binomial tree")
def bcast_motif(b: Builder, rng: np.random.Generator, *, iterations: int = 1,
                bytes: int = 1024, root: int = 0, compute_us: Any = 0) -> None:
    """Per iteration: compute, a binomial broadcast of ``bytes`` from ``root``, mark."""
    _check_root(root, b.num_ranks)
    iterate(b, rng, iterations, compute_us, lambda it: bcast(b, _everyone(b), bytes, root))


@MOTIFS.register("reduce", help="MPI_Reduce, binomial tree")
def reduce_motif(b: Builder, rng: np.random.Generator, *, iterations: int = 1,
                 bytes: int = 1024, root: int = 0, compute_us: Any = 0) -> None:
    """Per iteration: compute, a binomial reduce of ``bytes`` to ``root``, mark."""
    _check_root(root, b.num_ranks)
    iterate(b, rng, iterations, compute_us, lambda it: reduce(b, _everyone(b), bytes, root))
