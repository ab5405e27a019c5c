"""Trace files: a good trace reads back as written; every defect is reported as file:line."""

import doctest

import pytest
from hypothesis import given, settings, strategies as st

from icsim.traffic import trace as trace_module
from icsim.traffic.trace import (MAX_MESSAGE_BYTES, MAX_TIME_NS, TraceError, TraceRecord,
                                 read_trace, write_trace)

NODES = 16


def write(tmp_path, text, name="trace.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@st.composite
def traces(draw):
    times = sorted(draw(st.lists(st.floats(0, MAX_TIME_NS, allow_nan=False, allow_infinity=False),
                                 min_size=1, max_size=40)))
    if len(times) > 2 and draw(st.booleans()):
        times[1] = times[0]                                        # equal times are fine
    node = st.integers(0, NODES - 1)
    return [TraceRecord(t, draw(node), draw(node), draw(st.integers(1, MAX_MESSAGE_BYTES)))
            for t in times]


@given(records=traces())
@settings(max_examples=60, deadline=None, derandomize=True)
def test_a_written_trace_reads_back_equal(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("roundtrip") / "t.csv"
    write_trace(path, records)
    assert read_trace(path, NODES) == records


def test_comments_blank_lines_extra_and_reordered_columns_are_accepted(tmp_path):
    path = write(tmp_path, "\ufeff# produced by hand\n"
                           "\n"
                           "bytes, dst ,src,time_ns,tag\n"
                           "512, 3, 0, 0, \"a, quoted, tag\"\n"
                           "   # a comment in the middle\n"
                           "\n"
                           "4096,0,15,1.5e3,\n"
                           "64,7,7,1500,self\n")
    assert read_trace(str(path), NODES) == [
        TraceRecord(0.0, 0, 3, 512),
        TraceRecord(1500.0, 15, 0, 4096),
        TraceRecord(1500.0, 7, 7, 64),
    ]
    assert all(type(r.src) is int and type(r.time_ns) is float for r in read_trace(path, NODES))


HEADER = "time_ns,src,dst,bytes\n"


@pytest.mark.parametrize("text,line,reason", [
    ("", 1, "no header line (expected time_ns,src,dst,bytes)"),
    ("# only a comment\n\n", 2, "no header line"),
    (HEADER, 1, "the trace has no messages"),
    (HEADER + "# nothing\n", 2, "the trace has no messages"),
    ("# c\ntime_ns,src,bytes\n0,1,2\n", 2, "header lacks column(s) dst"),
    ("t,s,d,b\n", 1, "header lacks column(s) time_ns, src, dst, bytes"),
    ("time_ns,src,dst,bytes,src\n", 1, "header repeats column(s) src"),
    (HEADER + "0,1,2\n", 2, "3 fields, the header has 4"),
    (HEADER + "0,1,2,3,4\n", 2, "5 fields, the header has 4"),
    (HEADER + "0,1,2,8\nsoon,1,2,8\n", 3, "time_ns 'soon' is not a number"),
    (HEADER + "nan,1,2,8\n", 2, "time_ns 'nan' is not a finite number"),
    (HEADER + "inf,1,2,8\n", 2, "time_ns 'inf' is not a finite number"),
    (HEADER + "-1,1,2,8\n", 2, "time_ns -1 is negative"),
    (HEADER + "1234567.25,1,2,8\n1234567.125,1,2,8\n", 3,
     "time_ns 1234567.125 goes back in time (previous message at 1234567.25)"),
    (HEADER + "0,one,2,8\n", 2, "src 'one' is not an integer"),
    (HEADER + "0,1,2.5,8\n", 2, "dst '2.5' is not an integer"),
    (HEADER + "0,1,2,\n", 2, "bytes '' is not an integer"),
    (HEADER + "0,16,2,8\n", 2, "src 16 is not a node id in [0, 16)"),
    (HEADER + "0,1,-1,8\n", 2, "dst -1 is not a node id in [0, 16)"),
    (HEADER + "0,1,2,0\n", 2, "bytes must be > 0, got 0"),
    (HEADER + "0,1,2,-512\n", 2, "bytes must be > 0, got -512"),
    (HEADER + "10,1,2,8\n# c\n\n10,2,1,8\n9.5,1,2,8\n", 6,
     "time_ns 9.5 goes back in time (previous message at 10); times must not decrease"),
])
def test_a_defect_is_reported_with_file_and_line(tmp_path, text, line, reason):
    path = write(tmp_path, text)
    with pytest.raises(TraceError) as err:
        read_trace(path, NODES)
    assert str(err.value).startswith(f"{path}:{line}: {reason}")
    assert (err.value.path, err.value.line) == (str(path), line)
    assert isinstance(err.value, ValueError)


def test_line_numbers_count_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "# 1\n\n# 3\n" + HEADER + "0,1,2,8\n\n# 7\n1,1,2,0\n")
    with pytest.raises(TraceError, match=r"trace\.csv:8: bytes must be > 0"):
        read_trace(path, NODES)


def test_a_missing_file_is_a_trace_error_naming_it(tmp_path):
    with pytest.raises(TraceError) as err:
        read_trace(tmp_path / "absent.csv", NODES)
    assert str(err.value) == f"{tmp_path / 'absent.csv'}: no such file"
    assert err.value.line is None


def test_the_docstring_examples_run():
    result = doctest.testmod(trace_module)
    assert result.attempted > 0 and result.failed == 0
