"""The motif library writes what the algorithms and the NAS benchmarks send: counts and byte
totals in closed form, one mark per iteration and rank, seeded draws, named errors.  Pure
Python: the operations are built and checked, nothing is simulated."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.traffic.apps.motifs import MOTIFS, Compute, motif_ops
from icsim.traffic.apps.motifs import collectives as coll
from icsim.traffic.apps.motifs.halo import dims_create
from icsim.traffic.apps.ops import COMPUTE, SEND, WAIT, AppError, Builder, Ops

FAST = settings(max_examples=25, deadline=None)


def sends(ops: Ops) -> list[tuple[int, int, int]]:
    """(rank, peer, bytes) of every send, in order."""
    s = ops.kind == SEND
    return list(zip(ops.rank[s].tolist(), ops.peer[s].tolist(), ops.nbytes[s].tolist()))


def per_rank(ops: Ops, what: str = "count") -> list[int]:
    s = ops.kind == SEND
    weights = None if what == "count" else ops.nbytes[s]
    return np.bincount(ops.rank[s], weights=weights, minlength=ops.num_ranks).astype(int).tolist()


def collective(n: int, write) -> Ops:
    b = Builder(n)
    write(b, list(range(n)))
    return b.build()


def assert_marks(ops: Ops, iterations: int) -> None:
    """Every rank ends each iteration exactly once, in order."""
    marks = (ops.kind == WAIT) & (ops.iteration >= 0)
    for r in range(ops.num_ranks):
        assert ops.iteration[marks & (ops.rank == r)].tolist() == list(range(iterations))


def assert_same(a: Ops, b: Ops) -> None:
    for name in ("kind", "rank", "peer", "nbytes", "duration", "iteration", "match", "ndeps",
                 "succ_ptr", "succ"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


# ---------------------------------------------------------------------- every motif builds
#: rank counts each motif runs on (the NPB kernels' own rules)
RANKS = {
    "allreduce": [1, 2, 3, 5, 8, 12], "alltoall": [1, 2, 3, 7, 8], "alltoallv": [1, 2, 5, 8],
    "bcast": [1, 2, 3, 6, 9], "reduce": [1, 2, 3, 6, 9], "halo2d": [1, 2, 6, 9, 16],
    "halo3d": [1, 2, 8, 12, 27], "fft_slab": [1, 2, 6, 16], "fft_pencil": [1, 4, 6, 16],
    "sweep3d": [1, 2, 6, 16], "incast": [1, 2, 7],
    "npb_ft": [1, 2, 8, 32], "npb_is": [1, 2, 8, 32], "npb_cg": [1, 2, 4, 8, 32],
    "npb_mg": [1, 2, 8, 32], "npb_lu": [1, 2, 3, 4, 6, 9],
}


def test_the_library_registers_its_motifs():
    assert set(RANKS) <= set(MOTIFS.names())


@pytest.mark.parametrize("name", MOTIFS.names())
def test_every_motif_builds_with_one_mark_per_iteration_and_no_self_messages(name):
    for n in RANKS.get(name, [2, 3, 8]):          # a motif registered elsewhere: a few counts
        ops = motif_ops(name, n, 7, {"iterations": 2})
        assert_marks(ops, 2)
        assert not ((ops.kind <= 1) & (ops.peer == ops.rank)).any()


@FAST
@given(name=st.sampled_from(["allreduce", "alltoall", "bcast", "reduce", "incast", "halo2d",
                             "halo3d", "sweep3d"]),
       n=st.integers(1, 24), nbytes=st.integers(0, 1 << 20), iterations=st.integers(1, 3))
def test_the_simple_motifs_build_for_any_rank_count_and_size(name, n, nbytes, iterations):
    params = {"iterations": iterations}
    if name not in ("sweep3d",):
        params["bytes"] = nbytes
    ops = motif_ops(name, n, 1, params)
    assert_marks(ops, iterations)


# ---------------------------------------------------------------------- collectives, closed form
@FAST
@given(n=st.integers(2, 33), nbytes=st.integers(0, 1 << 22))
def test_ring_allreduce_sends_2n_minus_2_chunks_summing_to_2_n_minus_1_over_n_of_the_vector(
        n, nbytes):
    ops = collective(n, lambda b, g: coll.allreduce(b, g, nbytes, "ring"))
    assert per_rank(ops) == [2 * (n - 1)] * n
    for total in per_rank(ops, "bytes"):
        assert abs(total - 2 * (n - 1) / n * nbytes) <= 2 * (n - 1)
    assert sum(per_rank(ops, "bytes")) == 2 * (n - 1) * nbytes     # every step moves B


@FAST
@given(k=st.integers(0, 6), nbytes=st.integers(0, 1 << 22))
def test_recursive_doubling_on_2_to_the_k_sends_k_whole_vectors_per_rank(k, nbytes):
    ops = collective(1 << k, lambda b, g: coll.allreduce(b, g, nbytes, "recursive_doubling"))
    assert Counter(sends(ops)) == Counter((r, r ^ (1 << j), nbytes)
                                          for r in range(1 << k) for j in range(k))


@FAST
@given(n=st.integers(2, 40), nbytes=st.integers(1, 1 << 20),
       algorithm=st.sampled_from(["recursive_doubling", "rabenseifner"]))
def test_a_non_power_of_two_folds_its_first_2r_ranks_and_sends_them_the_result(
        n, nbytes, algorithm):
    pof2 = 1 << (n.bit_length() - 1)
    rem, k = n - pof2, pof2.bit_length() - 1
    ops = collective(n, lambda b, g: coll.allreduce(b, g, nbytes, algorithm))
    counts = per_rank(ops)
    messages = sends(ops)
    for i in range(rem):                  # even: its vector out; odd: the result back
        assert counts[2 * i] == 1 and (2 * i, 2 * i + 1, nbytes) in messages
        assert (2 * i + 1, 2 * i, nbytes) in messages
    core = [2 * i + 1 for i in range(rem)] + list(range(2 * rem, n))
    steps = k if algorithm == "recursive_doubling" else 2 * k
    assert [counts[r] - (r < 2 * rem) for r in core] == [steps] * pof2


@FAST
@given(k=st.integers(1, 6), nbytes=st.integers(0, 1 << 22))
def test_rabenseifner_halves_then_doubles_moving_2_p_minus_1_vectors(k, nbytes):
    p = 1 << k
    ops = collective(p, lambda b, g: coll.allreduce(b, g, nbytes, "rabenseifner"))
    assert per_rank(ops) == [2 * k] * p
    assert sum(per_rank(ops, "bytes")) == 2 * (p - 1) * nbytes
    first = [m for m in sends(ops)[:p]]                   # the first halving: half the vector
    assert all(abs(m[2] - nbytes / 2) <= p for m in first)


@FAST
@given(n=st.integers(1, 33), nbytes=st.integers(0, 1 << 16))
def test_pairwise_alltoall_sends_n_minus_1_messages_one_to_each_other_rank(n, nbytes):
    ops = collective(n, lambda b, g: coll.alltoall(b, g, nbytes, "pairwise"))
    assert Counter(sends(ops)) == Counter((i, j, nbytes) for i in range(n) for j in range(n)
                                          if i != j)


@FAST
@given(n=st.integers(2, 40), nbytes=st.integers(1, 1 << 12))
def test_bruck_sends_ceil_log2_n_messages_of_the_blocks_with_bit_k_set(n, nbytes):
    ops = collective(n, lambda b, g: coll.alltoall(b, g, nbytes, "bruck"))
    steps = math.ceil(math.log2(n))
    assert per_rank(ops) == [steps] * n
    blocks = sum(bin(j).count("1") for j in range(n))      # each block once per set bit
    assert per_rank(ops, "bytes") == [blocks * nbytes] * n
    assert {m[1] for m in sends(ops) if m[0] == 0} == {(1 << k) % n for k in range(steps)}


@FAST
@given(n=st.integers(1, 12), seed=st.integers(0, 100))
def test_alltoallv_sends_each_pair_its_own_size(n, seed):
    sizes = np.random.default_rng(seed).integers(0, 5000, size=(n, n))
    ops = collective(n, lambda b, g: coll.alltoallv(b, g, sizes))
    assert Counter(sends(ops)) == Counter((i, j, int(sizes[i, j])) for i in range(n)
                                          for j in range(n) if i != j)


@FAST
@given(n=st.integers(1, 40), root=st.integers(0, 39))
def test_binomial_bcast_and_reduce_use_n_minus_1_messages(n, root):
    root %= n
    down = collective(n, lambda b, g: coll.bcast(b, g, 100, root))
    up = collective(n, lambda b, g: coll.reduce(b, g, 100, root))
    depth = math.ceil(math.log2(n)) if n > 1 else 0
    assert len(sends(down)) == len(sends(up)) == n - 1
    assert Counter(m[1] for m in sends(down)) == Counter(r for r in range(n) if r != root)
    assert Counter(m[0] for m in sends(up)) == Counter(r for r in range(n) if r != root)
    assert per_rank(down)[root] == depth
    assert sorted(m for m in sends(down)) == sorted((b_, a, s) for a, b_, s in sends(up))


@FAST
@given(n=st.integers(2, 40))
def test_dissemination_barrier_and_ring_allgather(n):
    barrier = collective(n, coll.barrier)
    assert per_rank(barrier) == [math.ceil(math.log2(n))] * n
    assert set(barrier.nbytes[barrier.kind == SEND].tolist()) == {1}
    ring = collective(n, lambda b, g: coll.allgather(b, g, 64))
    assert per_rank(ring, "bytes") == [64 * (n - 1)] * n


def test_a_collective_over_a_sub_communicator_touches_only_its_ranks():
    b = Builder(8)
    coll.allreduce(b, [6, 2, 4], 99, "ring")
    coll.alltoall(b, [1, 3, 5, 7], 10, "bruck")
    ops = b.build()
    assert set(ops.rank.tolist()) == {1, 2, 3, 4, 5, 6, 7}
    assert all({a, p} <= {6, 2, 4} or {a, p} <= {1, 3, 5, 7} for a, p, _ in sends(ops))


# ---------------------------------------------------------------------- halo, fft, sweep, incast
@pytest.mark.parametrize("diagonals, per_iteration", [(False, 6), (True, 26)])
def test_periodic_halo3d_on_4x4x4_sends_6_faces_or_26_neighbours(diagonals, per_iteration):
    ops = motif_ops("halo3d", 64, 0, {"iterations": 3, "diagonals": diagonals})
    assert per_rank(ops) == [3 * per_iteration] * 64
    sizes = Counter(ops.nbytes[ops.kind == SEND].tolist())
    face = 32768
    if diagonals:                     # a 64 x 64 face of doubles: edges 64 values, corners 1
        assert sizes == {face: 3 * 6 * 64, 8 * 64: 3 * 12 * 64, 8: 3 * 8 * 64}


def test_non_periodic_halo_sends_nothing_across_the_boundary():
    ops = motif_ops("halo3d", 27, 0, {"periodic": False, "diagonals": True})
    counts = per_rank(ops)
    assert counts[0] == 7 and counts[13] == 26          # a corner rank, the centre rank
    flat = motif_ops("halo2d", 9, 0, {"periodic": False, "grid": [3, 3]})
    assert per_rank(flat) == [2, 3, 2, 3, 4, 3, 2, 3, 2]


def test_halo_takes_the_diagonal_sizes_and_an_allreduce_after_the_exchange():
    ops = motif_ops("halo2d", 16, 0, {"diagonals": True, "bytes": 1000, "corner_bytes": 24,
                                      "allreduce_bytes": 8})
    assert Counter(ops.nbytes[ops.kind == SEND].tolist()) == {1000: 64, 24: 64, 8: 4 * 16}


def test_dims_create_is_the_most_square_factorisation():
    assert dims_create(64, 3) == (4, 4, 4)
    assert dims_create(12, 3) == (3, 2, 2)
    assert dims_create(24, 2) == (6, 4)
    assert dims_create(13, 2) == (13, 1)


def test_fft_slab_and_pencil_transpose_sizes():
    slab = motif_ops("fft_slab", 16, 0, {"n": 64})
    assert set(slab.nbytes[slab.kind == SEND].tolist()) == {64 ** 3 * 16 // 16 ** 2}
    assert per_rank(slab) == [15] * 16
    pencil = motif_ops("fft_pencil", 8, 0, {"n": [32, 32, 64], "grid": [2, 4]})
    points = 32 * 32 * 64
    assert Counter(pencil.nbytes[pencil.kind == SEND].tolist()) == {
        points * 16 // (8 * 4): 8 * 3, points * 16 // (8 * 2): 8 * 1}


def test_sweep3d_crosses_every_internal_link_once_per_block_and_octant():
    px, py, angles, ab, kb = 4, 3, 6, 2, 4
    ops = motif_ops("sweep3d", 12, 0, {"grid": [px, py], "nx": 8, "ny": 9, "nz": 16,
                                        "angles": angles, "angle_blocks": ab, "k_blocks": kb})
    links = (px - 1) * py + px * (py - 1)
    assert len(sends(ops)) == 8 * ab * kb * links
    x_face = 8 * (9 // py) * (16 // kb) * (angles // ab)       # jt · mk · mmi doubles
    y_face = 8 * (8 // px) * (16 // kb) * (angles // ab)
    assert Counter(ops.nbytes[ops.kind == SEND].tolist()) == {
        x_face: 8 * ab * kb * (px - 1) * py, y_face: 8 * ab * kb * px * (py - 1)}
    assert (ops.kind == COMPUTE).sum() == 8 * ab * kb * 12


def test_incast_root_receives_from_everyone_each_iteration():
    ops = motif_ops("incast", 9, 0, {"iterations": 4, "root": 3, "bytes": 5})
    assert Counter(m[1] for m in sends(ops)) == {3: 4 * 8}
    assert per_rank(ops)[3] == 0


# ---------------------------------------------------------------------- NPB
def test_npb_ft_class_c_on_128_ranks_sends_512_cubed_16_over_128_squared_bytes_per_pair():
    ops = motif_ops("npb_ft", 128, 0, {"cls": "C", "iterations": 1})
    assert Counter(ops.nbytes[ops.kind == SEND].tolist()) == {
        512 ** 3 * 16 // 128 ** 2: 128 * 127, 16: 127}        # the transpose, the checksum
    assert 512 ** 3 * 16 // 128 ** 2 == 131072


def test_npb_ft_2d_layout_transposes_within_rows_and_columns():
    ops = motif_ops("npb_ft", 64, 0, {"cls": "W", "iterations": 1})       # nz = 32 < 64
    points = 128 * 128 * 32
    assert Counter(ops.nbytes[ops.kind == SEND].tolist()) == {
        points * 16 // (64 * 32): 64 * 31, points * 16 // (64 * 2): 64 * 1, 16: 63}


def test_npb_default_iterations_are_the_class_counts():
    for name, cls, count in (("npb_ft", "S", 6), ("npb_mg", "S", 4), ("npb_cg", "S", 15),
                             ("npb_is", "S", 10), ("npb_lu", "S", 50)):
        assert_marks(motif_ops(name, 2, 0, {"cls": cls}), count)


def test_npb_cg_class_c_on_128_ranks():
    ops = motif_ops("npb_cg", 128, 0, {"cls": "C", "iterations": 1})
    sizes = Counter(ops.nbytes[ops.kind == SEND].tolist())
    # 8 x 16 grid: na/npcols = 9375 doubles; 26 products x (4 reduction steps + transpose)
    self_transposes = sum(1 for me in range(128) if _cg_exch(me) == me)
    assert sizes[75000] == 26 * (4 * 128 + 128 - self_transposes)
    assert sizes[8] == 52 * 4 * 128 and sizes[16] == 4 * 128


def _cg_exch(me: int) -> int:
    from icsim.traffic.apps.motifs.npb import _exch_proc
    return _exch_proc(me, 8, 16)


def test_npb_cg_square_grid_sends_the_row_segment():
    ops = motif_ops("npb_cg", 16, 0, {"cls": "A", "iterations": 1})     # 4 x 4, na 14000
    assert set(ops.nbytes[ops.kind == SEND].tolist()) == {8, 16, 14000 // 4 * 8}


def test_npb_is_moves_every_key_once_and_draws_its_spread_from_the_seed():
    total = 1 << 20                                                        # class W
    ops = motif_ops("npb_is", 8, 0, {"cls": "W", "iterations": 1})
    keys = [m for m in sends(ops) if m[2] > 4116]
    assert len(keys) == 8 * 7 and sum(m[2] for m in keys) <= 4 * total
    assert all(abs(m[2] / 4 - total / 64) < 0.05 * total / 64 for m in keys)
    buckets = (1024 + 5) * 4                    # over 2 KiB: Rabenseifner, as MPICH picks
    assert sum(m[2] for m in sends(ops) if 16 < m[2] <= buckets) == 2 * 7 * buckets
    assert [m[2] for m in sends(ops)].count(16) == 8 * 3      # counts: Bruck, 4 blocks a step
    again = motif_ops("npb_is", 8, 1, {"cls": "W", "iterations": 1})
    assert not np.array_equal(ops.nbytes, again.nbytes)


def test_npb_is_pairwise_key_exchange_moves_the_same_keys_one_partner_a_step():
    scattered = motif_ops("npb_is", 8, 0, {"cls": "W", "iterations": 1})
    pairwise = motif_ops("npb_is", 8, 0, {"cls": "W", "iterations": 1,
                                          "key_exchange": "pairwise"})
    assert Counter(sends(pairwise)) == Counter(sends(scattered))     # the same messages
    keys = [m for m in sends(pairwise) if m[2] > 4116]
    # pairwise on 8 ranks: step s pairs r with r ^ s, so rank r sends to r ^ 1, ..., r ^ 7
    for r in range(8):
        assert [d for s_, d, _ in keys if s_ == r] == [r ^ s for s in range(1, 8)]
    with pytest.raises(AppError, match="key_exchange"):
        motif_ops("npb_is", 8, 0, {"cls": "W", "iterations": 1, "key_exchange": "bruck"})


@FAST
@given(n=st.integers(2, 40), chunk=st.integers(1, 5000), seed=st.integers(0, 3))
def test_alltoallv_in_pieces_moves_each_pair_its_bytes_round_robin_over_the_peers(n, chunk,
                                                                                  seed):
    sizes = np.random.default_rng(seed).integers(0, 4 * chunk + 2, size=(n, n))  # <= 5 pieces
    whole = collective(n, lambda b, g: coll.alltoallv(b, g, sizes))
    cut = collective(n, lambda b, g: coll.alltoallv(b, g, sizes, chunk_bytes=chunk))
    moved, count = Counter(), Counter()
    for src, dst, nbytes in sends(cut):
        assert 0 <= nbytes <= chunk
        moved[src, dst] += nbytes
        count[src, dst] += 1
    assert moved == Counter({(s, d): b for s, d, b in sends(whole)})
    assert all(c == max(1, -(-int(sizes[s, d]) // chunk)) for (s, d), c in count.items())
    for r in range(n):        # round robin: per block of 32 peers, the pieces' rounds never fall
        rounds, seen = [], Counter()
        for src, dst, _ in sends(cut):
            if src == r:
                rounds.append((((r - dst) % n) // 32, seen[dst]))
                seen[dst] += 1
        assert rounds == sorted(rounds)


def test_alltoallv_pieces_are_for_the_scattered_algorithm_and_npb_is_takes_them():
    with pytest.raises(AppError, match="chunk_bytes"):
        collective(4, lambda b, g: coll.alltoallv(b, g, np.ones((4, 4), int), "pairwise",
                                                  chunk_bytes=8))
    with pytest.raises(AppError, match="chunk_bytes"):
        collective(4, lambda b, g: coll.alltoallv(b, g, np.ones((4, 4), int), chunk_bytes=-1))
    whole = motif_ops("npb_is", 8, 0, {"cls": "W", "iterations": 1})
    cut = motif_ops("npb_is", 8, 0, {"cls": "W", "iterations": 1, "chunk_bytes": 4096})
    assert sum(m[2] for m in sends(cut)) == sum(m[2] for m in sends(whole))
    assert len(sends(cut)) > len(sends(whole))


def test_npb_mg_class_c_on_128_ranks_has_the_give3_faces():
    ops = motif_ops("npb_mg", 128, 0, {"cls": "C", "iterations": 1})
    sizes = set(ops.nbytes[ops.kind == SEND].tolist())
    assert {128 * 64 * 8, 130 * 64 * 8, 130 * 130 * 8} <= sizes        # 4 x 4 x 8 ranks


def test_npb_lu_wavefront_and_exchange_3_sizes():
    ops = motif_ops("npb_lu", 16, 0, {"cls": "A", "iterations": 1})       # 64³ on 4 x 4
    sizes = Counter(ops.nbytes[ops.kind == SEND].tolist())
    links = 2 * 3 * 4                                                      # directed one way
    assert sizes[5 * 16 * 8] == 2 * 62 * links                             # 62 planes each way
    assert sizes[10 * 16 * 64 * 8] == 2 * links                            # both directions
    assert sizes[40] == 4 * 16                                             # l2norm allreduce


def test_npb_lu_spreads_the_iteration_compute_over_the_sweeps():
    ops = motif_ops("npb_lu", 4, 0, {"cls": "S", "iterations": 1, "compute_us": 100})
    busy = ops.duration[(ops.kind == COMPUTE) & (ops.rank == 0)]
    assert len(busy) == 2 * 10 and busy.sum() == 100_000_000


# ---------------------------------------------------------------------- seeds and draws
RANDOM = {"mean_us": 10, "dist": "exponential"}


def test_same_seed_same_operations_different_seed_different_draws():
    for name in ("halo3d", "allreduce", "npb_cg", "sweep3d"):
        params = {"iterations": 2, "compute_us": RANDOM}
        a, b = motif_ops(name, 8, 42, params), motif_ops(name, 8, 42, params)
        assert_same(a, b)
        c = motif_ops(name, 8, 43, params)
        assert not np.array_equal(a.duration, c.duration)


def test_compute_is_drawn_once_per_phase_per_rank_iteration_then_rank():
    ops = motif_ops("alltoall", 5, 9, {"iterations": 3, "compute_us": RANDOM})
    rng = np.random.default_rng(9)
    spec = Compute(RANDOM)
    expected = [spec.draw(rng) for _ in range(3 * 5)]
    c = ops.kind == COMPUTE
    order = np.lexsort((ops.rank[c], np.arange(c.sum())))           # op order is it, rank
    assert ops.duration[c][order].tolist() == expected
    assert ops.rank[c].tolist() == list(range(5)) * 3


def test_no_compute_phase_without_a_compute_time():
    assert not (motif_ops("halo2d", 4, 0, {"iterations": 2}).kind == COMPUTE).any()


# ---------------------------------------------------------------------- bad parameters
@pytest.mark.parametrize("name, ranks, params, word", [
    ("halo3d", 12, {"grid": [2, 2, 2]}, "grid"),
    ("halo2d", 12, {"grid": [3, 5]}, "grid"),
    ("halo2d", 12, {"grid": [12]}, "grid"),
    ("fft_pencil", 8, {"grid": [3, 3]}, "grid"),
    ("sweep3d", 6, {"grid": [4, 2]}, "grid"),
    ("npb_lu", 4, {"cls": "Q"}, "cls"),
    ("npb_ft", 4, {"cls": "E"}, "cls"),
    ("npb_mg", 4, {"cls": 3}, "cls"),
    ("npb_ft", 12, {}, "ranks"),
    ("npb_cg", 6, {}, "ranks"),
    ("npb_mg", 24, {}, "ranks"),
    ("npb_is", 3, {}, "ranks"),
    ("npb_is", 256, {"cls": "S"}, "ranks"),
    ("npb_is", 2, {"cls": "D"}, "ranks"),
    ("npb_lu", 16, {"cls": "S"}, "ranks"),
    ("fft_slab", 32, {"n": 16}, "ranks"),
    ("allreduce", 4, {"algorithm": "tree"}, "algorithm"),
    ("alltoall", 4, {"algorithm": "ring"}, "algorithm"),
    ("halo3d", 8, {"allreduce_bytes": 8, "allreduce_algorithm": "x"}, "allreduce_algorithm"),
    ("allreduce", 4, {"iterations": 0}, "iterations"),
    ("npb_cg", 4, {"iterations": -1}, "iterations"),
    ("bcast", 4, {"root": 4}, "root"),
    ("allreduce", 4, {"bytes": -1}, "bytes"),
    ("halo3d", 8, {"compute_us": {"mean_us": 1, "dist": "zipf"}}, "compute_us"),
    ("sweep3d", 4, {"k_blocks": 100, "nz": 10}, "k_blocks"),
    ("incast", 4, {"bogus": 1}, "bogus"),
])
def test_a_bad_parameter_is_an_app_error_naming_it(name, ranks, params, word):
    with pytest.raises(AppError, match=word):
        motif_ops(name, ranks, 0, params)
