"""Applications bounded before they are built (issue 57): a motif's parameters checked by type
and range, and every job's size -- messages, packets, operations, computation -- counted from
the parameters (or a motif file's lines) and held to a trace's limits before anything is
built: one line naming the job, exit status 2, in seconds (a halo of 10^9 iterations was
refused after 106 s and 2.9 GB; an alltoall on 16,384 ranks after 288 s; a pingpong of
1e15 bytes tried to allocate 171 TiB)."""

from __future__ import annotations

import io
import re
import time
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.experiments.cli import main
from icsim.traffic.apps.motifs import MOTIFS, motif_ops, motif_size
from icsim.traffic.apps.ops import COMPUTE, SEND, AppError, MAX_MESSAGES, MAX_OPS, MAX_PACKETS
from icsim.traffic.apps.files import read_motif_rows


def refused(tmp_path, jobs: list, dims=(4, 4)) -> tuple[str, float]:
    """``icsim run`` of an app config: exit 2 with one line; the line and the seconds taken."""
    cfg = tmp_path / "app.yaml"
    cfg.write_text(yaml.safe_dump({"topology": {"dims": list(dims)},
                                   "traffic": {"workload": "app", "jobs": jobs}}))
    err = io.StringIO()
    start = time.perf_counter()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = main(["run", str(cfg)])
    lines = err.getvalue().splitlines()
    assert code == 2 and len(lines) == 1, (code, lines)
    return lines[0], time.perf_counter() - start


@pytest.mark.parametrize("params, line", [
    ({"bytes": 1e15}, "traffic.jobs.0.params.bytes: bytes: an integer >= 0, got "
                      "1000000000000000.0"),
    ({"bytes": 1e20}, "traffic.jobs.0.params.bytes: bytes: an integer >= 0, got 1e+20"),
    ({"bytes": 10 ** 15}, "traffic.jobs.0.params.bytes: bytes: at most 1,073,741,824 bytes "
                          "(1 GiB) a message, got 1,000,000,000,000,000"),
    ({"compute_us": 1e13}, "traffic.jobs.0.params.compute_us: compute_us: mean_us must be a "
                           "number of µs from 0 to 1e+06 (1 s), got 10000000000000.0"),
    ({"compute_us": {"mean_us": "x"}}, "traffic.jobs.0.params.compute_us: compute_us: mean_us "
                                       "must be a number of µs from 0 to 1e+06 (1 s), got 'x'"),
    ({"compute_us": {"mean_us": 1, "sd_us": -1, "dist": "normal"}},
     "traffic.jobs.0.params.compute_us: compute_us: sd_us must be a number of µs"),
    ({"iterations": 1e9}, "traffic.jobs.0.params.iterations: iterations: an integer >= 1"),
])
def test_a_motif_parameter_of_the_wrong_type_or_range_is_one_line_naming_it(tmp_path, params,
                                                                          line):
    got, _ = refused(tmp_path, [{"motif": "pingpong", "params": params}])
    assert got.startswith("icsim: config error: " + line), got


def test_ragged_alltoallv_sizes_are_one_line_naming_them(tmp_path):
    got, _ = refused(tmp_path, [{"motif": "alltoallv", "ranks": 2, "placement": "list",
                                 "nodes": [0, 1], "params": {"sizes": [[0, 1], [1]]}}])
    assert got == ("icsim: config error: traffic.jobs.0.params.sizes: sizes: an 2x2 matrix of "
                   "byte counts from 0 to 1,073,741,824 (1 GiB)")


@pytest.mark.parametrize("job, dims, line", [
    # 10^9 iterations of a 16-rank halo: 64 messages an iteration
    ({"motif": "halo2d", "params": {"iterations": 1_000_000_000}}, (4, 4),
     "traffic.jobs.0: at least 64,000,000,000 messages, more than the limit of 10,000,000 "
     "messages of an application (as of a trace)"),
    # one alltoall over 16,384 ranks: 16,384 x 16,383 messages
    ({"motif": "alltoall", "ranks": 16384, "ranks_per_node": 4}, (16, 16, 16),
     "traffic.jobs.0: at least 268,419,072 messages, more than the limit of 10,000,000"),
    ({"motif": "alltoall", "ranks": 16384, "ranks_per_node": 4,
      "params": {"algorithm": "bruck"}}, (16, 16, 16),
     "traffic.jobs.0: at least 268,435,456 packets of 512 bytes, more than the limit of "
     "10,000,000 packets"),
    # ten minutes of computation a rank
    ({"motif": "halo2d", "params": {"iterations": 1000, "compute_us": 600000}}, (4, 4),
     "traffic.jobs.0: rank 0 computes for 600 s in all, more than the limit of 100 s of "
     "simulated time"),
])
def test_a_job_past_the_limits_is_refused_in_seconds_before_it_is_built(tmp_path, job, dims,
                                                                         line):
    got, seconds = refused(tmp_path, [job], dims)
    assert got.startswith("icsim: config error: " + line), got
    assert seconds < 30                      # generous: a shared machine; ~1 s alone


def test_jobs_within_the_limits_alone_are_refused_together(tmp_path):
    """Two jobs of 6·10^6 packets each: each fits, the two do not; the second is named."""
    job = {"motif": "halo2d", "params": {"iterations": 93750, "bytes": 512}}   # 64 msgs each
    got, _ = refused(tmp_path, [job, job])
    assert got == ("icsim: config error: traffic.jobs.1: the jobs up to this one make "
                   "12,000,000 messages, more than the limit of 10,000,000 messages of an "
                   "application (as of a trace)")


def test_a_motif_file_of_huge_messages_is_refused_by_its_packets(tmp_path):
    """200 messages of 1 GiB, each within the per-message limit: 4·10^8 packets of 512
    bytes (the run used to go on without end)."""
    path = tmp_path / "big.csv"
    path.write_text("id,rank,op,peer,bytes\n" + "".join(
        f"s{i},0,send,1,{1 << 30}\nr{i},1,recv,0,{1 << 30}\n" for i in range(200)))
    got, _ = refused(tmp_path, [{"file": str(path)}])
    assert got == ("icsim: config error: traffic.jobs.0: 419,430,400 packets of 512 bytes, "
                   "more than the limit of 10,000,000 packets of an application (as of a "
                   "trace)")


@pytest.mark.parametrize("text, line", [
    ("id,rank,op,rank\na,0,wait,0\n", "1: the header names column 'rank' twice"),
    ("id,rank,op\na,0,wait,extra\n", "2: 4 cells, the header has 3 columns"),
])
def test_a_motif_file_with_a_column_twice_or_extra_cells_is_refused(tmp_path, text, line):
    """As the trace reader refuses them (a second column of a name used to win silently)."""
    path = tmp_path / "m.csv"
    path.write_text(text)
    got, _ = refused(tmp_path, [{"file": str(path)}])
    assert got == f"icsim: config error: traffic.jobs.0.file: {path}:{line}"


MOTIF_PARAMS = {
    "pingpong": {"compute_us": {"mean_us": 2, "dist": "exponential"}},
    "halo2d": {"diagonals": True, "allreduce_bytes": 64, "periodic": False},
    "halo3d": {"compute_us": 1, "bytes": 4000},
    "sweep3d": {"nx": 16, "ny": 16, "nz": 8, "k_blocks": 2},
    "alltoallv": {"jitter": 0.5},
    "allreduce": {"algorithm": "ring", "bytes": 10000},
    "alltoall": {"algorithm": "bruck", "bytes": 700},
    "fft_slab": {"n": 32}, "fft_pencil": {"n": 32},
}


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(MOTIFS.names())), ranks=st.sampled_from([2, 4, 8, 12, 16]),
       iterations=st.integers(1, 5), packet=st.sampled_from([64, 512, 4096]))
def test_a_motifs_size_counted_before_it_is_built_is_what_it_builds(name, ranks, iterations,
                                                                    packet):
    """The count (first and last iterations, the others taken as the first) is exact:
    messages, packets and operations; and a rank's compute time exact for fixed times."""
    params = {**MOTIF_PARAMS.get(name, {}), "iterations": iterations}
    try:
        ops = motif_ops(name, ranks, 7, params)
    except AppError as exc:
        with pytest.raises(AppError, match=re.escape(str(exc))):    # the same refusal
            motif_size(name, ranks, 7, params, packet)
        return
    size = motif_size(name, ranks, 7, params, packet)
    sends = ops.kind == SEND
    assert size.messages == int(sends.sum())
    assert size.packets == int(np.maximum(1, -(-ops.nbytes[sends] // packet)).sum())
    assert size.ops == ops.num_ops
    if name != "pingpong":                          # drawn times: the others are fixed
        compute = ops.kind == COMPUTE
        busy = np.bincount(ops.rank[compute], weights=ops.duration[compute], minlength=ranks)
        assert np.array_equal(size.busy, busy.astype(np.int64))


def test_a_motif_files_size_is_counted_from_its_lines(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("id,rank,op,peer,bytes,time_us,depends_on\n"
                    "a,0,send,1,1025,,\nb,1,recv,0,1025,,\nc,1,compute,,,2.5,b\n"
                    "d,1,send,0,0,,c\ne,0,recv,1,0,,a\n")
    size = read_motif_rows(path).size(512)
    assert (size.messages, size.packets, size.ops) == (2, 3 + 1, 5)
    assert size.busy.tolist() == [0, 2_500_000]


def test_the_limits_are_a_traces():
    from icsim.traffic.trace import MAX_PACKETS as TRACE_PACKETS

    assert MAX_MESSAGES == MAX_PACKETS == TRACE_PACKETS == 10 ** 7 and MAX_OPS == 2 * 10 ** 7
