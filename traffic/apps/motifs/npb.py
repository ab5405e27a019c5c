"""Communication skeletons of the NAS Parallel Benchmarks (NPB 3.x, MPI versions): the motifs
``npb_ft``, ``npb_is``, ``npb_cg``, ``npb_mg`` and ``npb_lu``.

Each writes, per iteration, the messages the MPI code sends, sized from the class's problem
and the rank count P (8-byte doubles, 16-byte double complex, 4-byte integer keys); the
computation between them is one compute phase per iteration and rank (``compute_us``, a
:class:`~icsim.traffic.apps.motifs.Compute` to be calibrated: default 0).  Parameters:
``cls`` (S, W, A, B, C, D), ``iterations`` (default the class's count; any positive number),
``compute_us``.  Set-up, warm-up and verification phases are left out.  A rank count the
benchmark does not run on is an AppError naming ``ranks``.

Problem sizes (NPB 3.x ``setparams`` and the sources):

===== ================== ====== ======= ====== ======= ====== ====== ======= ======
class FT grid            FT its MG grid MG its CG na   nonzer CG its LU grid LU its
===== ================== ====== ======= ====== ======= ====== ====== ======= ======
S     64 x 64 x 64       6      32³     4      1400    7      15     12³     50
W     128 x 128 x 32     6      128³    4      7000    8      15     33³     300
A     256 x 256 x 128    6      256³    4      14000   11     15     64³     250
B     512 x 256 x 256    20     256³    20     75000   13     75     102³    250
C     512 x 512 x 512    20     512³    20     150000  15     75     162³    250
D     2048 x 1024 x 1024 25     1024³   50     1500000 21     100    408³    300
===== ================== ====== ======= ====== ======= ====== ====== ======= ======

IS: 2^16, 2^20, 2^23, 2^25, 2^27, 2^31 keys (S..D), 2^9 buckets for S and 2^10 otherwise,
10 iterations.

FT (``ft.f``; P a power of two). Per iteration ``evolve``, the inverse FFT, ``checksum``. With
P <= N3 (the 1-D layout) the FFT's one transpose (``transpose_x_yz``) is an MPI_Alltoall over
all ranks of N1·N2·N3·16/P² bytes per pair (each rank holds N1·N2·N3/P values and sends each
other rank a 1/P of them), by MPICH's choice for the size (pairwise above 32 KiB). With P > N3
(the 2-D layout, np1 = N3, np2 = P/N3, rank = i·np2 + j) two transposes, within the np1 ranks
sharing j and then the np2 ranks sharing i, N1·N2·N3·16/(P·m) bytes per pair in a communicator
of m. ``checksum``: an MPI_Reduce of one double complex (16 bytes) to rank 0. Class C on 128
ranks: 512³·16/128² = 131,072 bytes per pair.

IS (``is.c``; P a power of two, at most 1024 -- 128 for class S -- and at least 4 for class D,
whose 2^29 keys per ``MIN_PROCS`` = 4 make 2^31). Per iteration an MPI_Allreduce of the bucket
sizes (NUM_BUCKETS + 5 test keys, 4-byte integers: 4116 bytes, 2068 for S), an MPI_Alltoall of
the send counts (4 bytes per pair) and an MPI_Alltoallv of the keys: each rank holds keys/P
keys and sends them to every rank (itself included), here as a multinomial draw with equal odds
per destination -- keys spread evenly with a seeded jitter, drawn once before the first
iteration (IS ranks the same keys every iteration bar two), 4 bytes a key. The allreduce and
alltoall algorithms are MPICH's choices for their sizes
(:func:`~icsim.traffic.apps.motifs.collectives.mpich_allreduce`, ``mpich_alltoall``); the
alltoallv posts every message at once in blocks of 32 (MPICH's; ``key_exchange: pairwise``
makes it MPICH's pairwise exchange instead, the same messages one partner a step;
``chunk_bytes: B`` cuts the scattered exchange's messages into B-byte pieces posted round robin
over the peers, so that the NIC interleaves them as concurrent sends do). Class C on 128 ranks: 2^20
keys a rank, about 2^13 keys = 32 KiB per pair.

CG (``cg.f``; P a power of two).  npcols = 2^ceil(log2 P / 2), nprows = P / npcols (npcols =
nprows or 2·nprows), rank = row·npcols + col; a row holds row_size = na/nprows (the first
na mod nprows rows one more) of the vector.  Per outer iteration ``conj_grad`` runs 25
(``cgitmax``) inner iterations, each: the matrix-vector product's row reduction, log2 npcols
exchanges with the ranks ``col ^ 1, col ^ 2, ...`` of the row (send and receive, then wait),
then the exchange with the transpose rank ``exch_proc``, then two dot products, each log2
npcols exchanges of one double with ``col ^ npcols/2, ..., col ^ 1``.  The reduction's messages
are ``send_len`` doubles: row_size when npcols = nprows; when npcols = 2·nprows each rank of a
pair keeps half, send_len = ceil(row_size/2) (even ranks) or floor(row_size/2) (odd), the
first exchange sending the other half (row_size - send_len); the transpose sends send_len --
so na/npcols doubles in both cases.  Before the loop one dot product (rho), after it the
residual (one more product, reduction, transpose and dot), and in the main loop the two norms
(one exchange sequence of 2 doubles).  Class C on 128 ranks (8 x 16): row_size 18,750,
send_len 9,375 doubles = 75,000 bytes, 4 reduction steps.

MG (``mg.f``; P a power of two).  The process grid takes log2 P bits as x: floor(log2 P / 3),
y: floor of half the rest, z: the rest (px <= py <= pz; rank = (z·py + y)·px + x).  The grid
of level k is 2^k per side (k = lt = log2 N finest).  ``comm3``, the halo of one level, is
three exchanges, one per axis in x, y, z order, each with both neighbours (periodic) of
``give3``'s buffer: m2·m3, (m1+2)·m3 and (m1+2)·(m2+2) doubles for a local interior of
m1 x m2 x m3 (ghost layers of the axes already exchanged included).  Per iteration ``mg3P``
(``rprj3`` into each coarser level, ``psinv`` at the coarsest, then ``interp``, ``resid`` and
``psinv`` at each finer one) and ``resid``: halos at levels lt-1, ..., kmin, kmin, then
kmin+1, kmin+1, ..., lt, lt, and lt.  Levels coarser than kmin = log2 max(px, py, pz), where
NPB leaves ranks idle and regathers with ``comm3_ex``, are not modelled.  After the last
iteration ``norm2u3``: two MPI_Allreduce of one double.  Class C on 128 ranks (4 x 4 x 8):
finest interior 128 x 128 x 64, faces 65,536, 66,560 and 135,200 bytes.

LU (``lu.f``, SSOR; any P: NPB 3.4 allows any grid).  A 2-D grid xdim x ydim (default
MPI_Dims_create's, xdim >= ydim, as NPB picks for powers of two; ``grid: [xdim, ydim]``), rank =
col·xdim + row, the local block nx x ny x nz with nx = N/xdim, ny = N/ydim (first remainders
one more; NPB requires nx, ny >= 4).  Per iteration the lower sweep (``blts``, k = 2..nz-1): for
each plane receive from north (row-1) and west (col-1), compute, send south and east -- 5
doubles per boundary point: 5·ny to the row neighbour, 5·nx to the column neighbour
(``exchange_1``); the upper sweep (``buts``) in reverse, from south and east to north and west;
then ``rhs``'s ``exchange_3``: 2 ghost layers of 5 doubles, 10·ny·nz to both row neighbours,
then 10·nx·nz to both column neighbours.  ``k_block`` planes (default 1, as NPB) go in one
message.  The iteration's compute time is spread evenly over the sweeps' 2(nz-2)/k_block steps.
After the last iteration ``l2norm``: an MPI_Allreduce of 5 doubles.  Class C on 128 ranks
(16 x 8): nx = 10 or 11, ny = 20 or 21; wavefront messages 800/840 and 400/440 bytes, 160 planes
each way; exchange_3 259,200/272,160 and 129,600/142,560 bytes.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from icsim.traffic.apps.motifs import MOTIFS, Compute
from icsim.traffic.apps.motifs.collectives import (Message, allreduce, alltoall, alltoallv,
                                                    check_choice, check_count, exchange, iterate,
                                                    mpich_allreduce, mpich_alltoall, reduce,
                                                    split)
from icsim.traffic.apps.motifs.fft import transpose_bytes
from icsim.traffic.apps.motifs.halo import Cart, process_grid
from icsim.traffic.apps.motifs.sweep import extent, sweep_block
from icsim.traffic.apps.ops import AppError, Builder

__all__ = ["CG", "FT", "IS", "LU", "MG", "npb_cg", "npb_ft", "npb_is", "npb_lu", "npb_mg"]

DOUBLE, COMPLEX, KEY = 8, 16, 4

#: class -> ((N1, N2, N3), iterations)
FT = {"S": ((64, 64, 64), 6), "W": ((128, 128, 32), 6), "A": ((256, 256, 128), 6),
      "B": ((512, 256, 256), 20), "C": ((512, 512, 512), 20), "D": ((2048, 1024, 1024), 25)}
#: class -> (N, iterations)
MG = {"S": (32, 4), "W": (128, 4), "A": (256, 4), "B": (256, 20), "C": (512, 20),
      "D": (1024, 50)}
#: class -> (na, nonzer, outer iterations)
CG = {"S": (1400, 7, 15), "W": (7000, 8, 15), "A": (14000, 11, 15), "B": (75000, 13, 75),
      "C": (150000, 15, 75), "D": (1500000, 21, 100)}
#: class -> (N, itmax)
LU = {"S": (12, 50), "W": (33, 300), "A": (64, 250), "B": (102, 250), "C": (162, 250),
      "D": (408, 300)}
#: class -> (log2 keys, log2 buckets); 10 iterations
IS = {"S": (16, 9), "W": (20, 10), "A": (23, 10), "B": (25, 10), "C": (27, 10), "D": (31, 10)}
IS_ITERATIONS = 10
CG_INNER = 25                                      # cgitmax


def _row(table: dict[str, Any], cls: Any, kernel: str) -> Any:
    key = cls.upper() if isinstance(cls, str) else cls
    if key not in table:
        raise AppError(f"cls: NPB {kernel} has no class {cls!r} (valid: {', '.join(table)})")
    return table[key]


def _power_of_two(p: int, kernel: str) -> int:
    if p & (p - 1):
        raise AppError(f"ranks: NPB {kernel} runs on a power of two of ranks, the job has {p}")
    return p.bit_length() - 1


def _run(b: Builder, rng: np.random.Generator, iterations: Any, default: int, compute_us: Any,
         body: Callable[[int, bool], None]) -> None:
    """:func:`iterate` over the class's ``default`` count unless ``iterations`` is given;
    ``body(it, last)`` knows the run's last iteration."""
    count = check_count("iterations", default if iterations is None else iterations)
    iterate(b, rng, count, compute_us, lambda it: body(it, it == count - 1))


# ---------------------------------------------------------------------- FT
def _ft_transposes(p: int, n3: int, n2: int) -> list[list[list[int]]]:
    """The communicators of the inverse FFT's transposes, in order (module docstring)."""
    if p <= n3:
        return [[list(range(p))]]
    np1, np2 = n3, p // n3
    if np2 > n2:
        raise AppError(f"ranks: NPB FT's 2-D layout needs P/N3 <= N2, {p}/{n3} > {n2}")
    return [[[i * np2 + j for i in range(np1)] for j in range(np2)],
            [[i * np2 + j for j in range(np2)] for i in range(np1)]]


@MOTIFS.register("npb_ft", help="NPB FT: 3-D FFT transposes as alltoall")
def npb_ft(b: Builder, rng: np.random.Generator, *, cls: str = "S", iterations: Any = None,
           compute_us: Any = 0) -> None:
    """NPB FT's communication (module docstring)."""
    (n1, n2, n3), niter = _row(FT, cls, "FT")
    p = b.num_ranks
    _power_of_two(p, "FT")
    transposes = _ft_transposes(p, n3, n2)
    everyone = list(range(p))

    def body(it: int, last: bool) -> None:
        for comms in transposes:
            for comm in comms:
                nbytes = transpose_bytes(n1 * n2 * n3, p, len(comm))
                alltoall(b, comm, nbytes, mpich_alltoall(nbytes, len(comm)))
        reduce(b, everyone, COMPLEX, 0)

    _run(b, rng, iterations, niter, compute_us, body)


# ---------------------------------------------------------------------- IS
@MOTIFS.register("npb_is", help="NPB IS: bucket allreduce, count alltoall, key alltoallv")
def npb_is(b: Builder, rng: np.random.Generator, *, cls: str = "S", iterations: Any = None,
           compute_us: Any = 0, key_exchange: str = "scattered", chunk_bytes: int = 0) -> None:
    """NPB IS's communication (module docstring); ``key_exchange``: the alltoallv's algorithm,
    ``scattered`` (MPICH's) or ``pairwise``; ``chunk_bytes`` > 0: the scattered exchange's
    messages in pieces of that size, round robin over the peers
    (:func:`~icsim.traffic.apps.motifs.collectives.alltoallv`)."""
    log_keys, log_buckets = _row(IS, cls, "IS")
    check_choice("key_exchange", key_exchange, ("scattered", "pairwise"))
    p = b.num_ranks
    _power_of_two(p, "IS")
    low, high = (4 if log_keys == 31 else 1), (128 if log_keys == 16 else 1024)
    if not low <= p <= high:
        raise AppError(f"ranks: NPB IS class {cls} runs on {low} to {high} ranks, the job "
                       f"has {p}")
    keys = rng.multinomial((1 << log_keys) // p, np.full(p, 1 / p), size=p)
    everyone = list(range(p))
    buckets = ((1 << log_buckets) + 5) * KEY

    def body(it: int, last: bool) -> None:
        allreduce(b, everyone, buckets, mpich_allreduce(buckets))
        alltoall(b, everyone, KEY, mpich_alltoall(KEY, p))
        alltoallv(b, everyone, keys * KEY, key_exchange, chunk_bytes)

    _run(b, rng, iterations, IS_ITERATIONS, compute_us, body)


# ---------------------------------------------------------------------- CG
def _cg_schedule(na: int, p: int) -> tuple[list[list[Message]],
                                            Callable[[int], list[list[Message]]]]:
    """CG's matrix-vector steps (the row reduction, then the transpose) and its dot product of
    a given size (module docstring)."""
    log = p.bit_length() - 1
    npcols = 1 << ((log + 1) // 2)
    nprows = p // npcols
    if nprows > na:
        raise AppError(f"ranks: NPB CG with na = {na} runs on at most {na} process rows")
    masks = [1 << k for k in range(npcols.bit_length() - 1)]
    square = nprows == npcols
    row_size = [extent(na, nprows, me // npcols) for me in range(p)]
    send_len = [row_size[me] if square else (row_size[me] + 1 - me % 2) // 2 for me in range(p)]

    def partner(me: int, mask: int) -> int:
        return me // npcols * npcols + (me % npcols ^ mask)

    reduction = [[(me, partner(me, mask), DOUBLE * (row_size[me] - send_len[me]
                                                    if mask == 1 and not square
                                                    else send_len[me]))
                  for me in range(p)] for mask in masks]
    transpose = [(me, _exch_proc(me, nprows, npcols), DOUBLE * send_len[me])
                 for me in range(p)] if masks else []

    def dot(nbytes: int) -> list[list[Message]]:
        return [[(me, partner(me, mask), nbytes) for me in range(p)] for mask in reversed(masks)]

    return reduction + [transpose], dot


def _exch_proc(me: int, nprows: int, npcols: int) -> int:
    """``cg.f``'s transpose partner."""
    if npcols == nprows:
        return me % nprows * nprows + me // nprows
    return 2 * (me // 2 % nprows * nprows + me // 2 // nprows) + me % 2


@MOTIFS.register("npb_cg", help="NPB CG: row reductions and transpose exchanges")
def npb_cg(b: Builder, rng: np.random.Generator, *, cls: str = "S", iterations: Any = None,
           compute_us: Any = 0) -> None:
    """NPB CG's communication (module docstring)."""
    na, _nonzer, niter = _row(CG, cls, "CG")
    _power_of_two(b.num_ranks, "CG")
    matvec, dot = _cg_schedule(na, b.num_ranks)
    one, two = dot(DOUBLE), dot(2 * DOUBLE)

    def steps(*parts: list[list[Message]]) -> None:
        for part in parts:
            for step in part:
                exchange(b, step)

    def body(it: int, last: bool) -> None:
        steps(one)                                     # rho = r.r
        for _ in range(CG_INNER):
            steps(matvec, one, one)                    # q = A.p; p.q; r.r
        steps(matvec, one, two)                        # ||x - A.z||; then x.z and z.z

    _run(b, rng, iterations, niter, compute_us, body)


# ---------------------------------------------------------------------- MG
def _mg_grid(p: int) -> Cart:
    """NPB MG's process grid (module docstring), as a Cart over (z, y, x)."""
    log = p.bit_length() - 1
    dx = log // 3
    dy = (log - dx) // 2
    return Cart((1 << (log - dx - dy), 1 << dy, 1 << dx))


def _comm3(b: Builder, cart: Cart, side: int) -> None:
    """One level's halo: per axis x, y, z both neighbours, give3's buffer sizes."""
    pz, py, px = cart.dims
    m1, m2, m3 = side // px, side // py, side // pz
    faces = {2: m2 * m3, 1: (m1 + 2) * m3, 0: (m1 + 2) * (m2 + 2)}     # cart axis -> doubles
    for axis in (2, 1, 0):
        exchange(b, [(r, cart.neighbour(r, [d if a == axis else 0 for a in range(3)]),
                      DOUBLE * faces[axis]) for r in range(cart.size) for d in (1, -1)])


def _mg_levels(lt: int, kmin: int) -> list[int]:
    """The levels of one iteration's halos: rprj3 down, psinv at the bottom, resid and psinv
    back up, the main loop's resid."""
    down = list(range(lt - 1, kmin - 1, -1))
    up = [k for k in range(kmin + 1, lt + 1) for _ in (0, 1)]
    return down + [kmin] + up + [lt]


@MOTIFS.register("npb_mg", help="NPB MG: V-cycle halo exchanges")
def npb_mg(b: Builder, rng: np.random.Generator, *, cls: str = "S", iterations: Any = None,
           compute_us: Any = 0) -> None:
    """NPB MG's communication (module docstring)."""
    n, nit = _row(MG, cls, "MG")
    _power_of_two(b.num_ranks, "MG")
    cart = _mg_grid(b.num_ranks)
    if max(cart.dims) > n:
        raise AppError(f"ranks: NPB MG class {cls} ({n}³) on a "
                       f"{' x '.join(map(str, reversed(cart.dims)))} grid leaves ranks empty")
    levels = _mg_levels(n.bit_length() - 1, max(cart.dims).bit_length() - 1)
    everyone = list(range(b.num_ranks))

    def body(it: int, last: bool) -> None:
        for k in levels:
            _comm3(b, cart, 1 << k)
        if last:
            for _ in range(2):                     # norm2u3: max, then sum
                allreduce(b, everyone, DOUBLE, mpich_allreduce(DOUBLE))

    _run(b, rng, iterations, nit, compute_us, body)


# ---------------------------------------------------------------------- LU
@MOTIFS.register("npb_lu", help="NPB LU: SSOR wavefronts and exchange_3 halos")
def npb_lu(b: Builder, rng: np.random.Generator, *, cls: str = "S", iterations: Any = None,
           grid: Any = None, k_block: int = 1, compute_us: Any = 0) -> None:
    """NPB LU's communication (module docstring)."""
    n, itmax = _row(LU, cls, "LU")
    xdim, ydim = process_grid(b.num_ranks, grid, 2)
    cart = Cart((ydim, xdim), periodic=False)              # (col, row): rank = col·xdim + row
    nx = [extent(n, xdim, cart.coords(r)[1]) for r in range(cart.size)]
    ny = [extent(n, ydim, cart.coords(r)[0]) for r in range(cart.size)]
    if min(nx + ny) < 4:
        raise AppError(f"ranks: NPB LU class {cls} ({n}³) on {xdim} x {ydim} ranks leaves "
                       f"fewer than 4 points a side (NPB's smallest subdomain)")
    kb = check_count("k_block", k_block)
    planes = [min(kb, n - 2 - s) for s in range(0, n - 2, kb)]
    spec = Compute(compute_us)
    everyone = list(range(cart.size))

    def body(it: int, last: bool) -> None:
        share = [split(spec.draw(rng), 2 * len(planes)) for _ in everyone]
        sweeps = [((1, 1), k) for k in planes] + [((-1, -1), k) for k in reversed(planes)]
        for s, (direction, k) in enumerate(sweeps):
            faces = ([5 * DOUBLE * k * x for x in nx], [5 * DOUBLE * k * y for y in ny])
            sweep_block(b, cart, direction, faces, [share[r][s] for r in everyone])
        for axis, width in ((1, ny), (0, nx)):         # exchange_3: rows, then columns
            exchange(b, [(r, nb, 10 * DOUBLE * width[r] * n) for r in everyone
                         for d in (1, -1)
                         if (nb := cart.neighbour(r, [d if a == axis else 0 for a in (0, 1)]))
                         is not None])
        if last:
            allreduce(b, everyone, 5 * DOUBLE, mpich_allreduce(5 * DOUBLE))

    _run(b, rng, iterations, itmax, 0, body)
