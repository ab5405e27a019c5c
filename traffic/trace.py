"""Message traces: a CSV list of timed messages to replay instead of a synthetic pattern.

Format
------
A CSV file (UTF-8, an optional byte-order mark is ignored) whose first non-comment line is a
header naming at least the columns ``time_ns``, ``src``, ``dst`` and ``bytes``, in any order;
other columns are ignored.  Lines whose first non-blank character is ``#`` are comments and
blank lines are skipped, anywhere in the file.  Each further line is one message:

* ``time_ns`` — creation time in nanoseconds: a finite number >= 0; times never decrease
  down the file (equal times are allowed and keep their file order);
* ``src``, ``dst`` — node ids, integers in ``[0, num_nodes)``; ``src == dst`` is allowed (a
  local message, as self-addressed messages are elsewhere in icsim);
* ``bytes`` — message size, an integer > 0.

Anything else is a :class:`TraceError` whose message is ``<file>:<line>: <what is wrong>``.
A file with a header but no messages is an error too.

Example
-------
::

    # two messages
    time_ns,src,dst,bytes,comment
    0,0,5,4096,first
    12.5,3,0,512,
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from typing import Iterable, Iterator

__all__ = ["COLUMNS", "TraceError", "TraceRecord", "read_trace", "write_trace"]

COLUMNS = ("time_ns", "src", "dst", "bytes")


@dataclass(frozen=True)
class TraceRecord:
    """One message of a trace: created at ``time_ns`` by ``src`` for ``dst``, ``bytes`` long."""

    time_ns: float
    src: int
    dst: int
    bytes: int


class TraceError(ValueError):
    """A trace file is malformed.  ``str(err)`` is ``<file>:<line>: <reason>``; the parts are
    also kept as ``path``, ``line`` (1-based, physical line in the file) and ``reason``."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


def read_trace(path: str | os.PathLike[str], num_nodes: int) -> list[TraceRecord]:
    """Read and validate a trace file.

    Parameters
    ----------
    path : str or path-like
    num_nodes : int
        Node ids must lie in ``[0, num_nodes)``.

    Returns
    -------
    list of TraceRecord
        In file order (which is time order).

    Raises
    ------
    TraceError
        Missing or duplicated header columns, a row with too few or too many fields, a value
        that is not a number of the right kind, a node id out of range, ``bytes <= 0``, a
        negative or non-finite time, a time earlier than the previous message's, or no
        messages at all.
    OSError
        The file cannot be opened.

    Examples
    --------
    >>> import os, tempfile
    >>> fd, name = tempfile.mkstemp(suffix=".csv")
    >>> with os.fdopen(fd, "w") as fh:
    ...     _ = fh.write("# demo\\ntime_ns,src,dst,bytes\\n0,0,3,512\\n10.5,2,1,1024\\n")
    >>> read_trace(name, num_nodes=4)   # doctest: +NORMALIZE_WHITESPACE
    [TraceRecord(time_ns=0.0, src=0, dst=3, bytes=512),
     TraceRecord(time_ns=10.5, src=2, dst=1, bytes=1024)]
    >>> read_trace(name, num_nodes=3)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    icsim.traffic.trace.TraceError: ...csv:3: dst 3 is not a node id in [0, 3)
    >>> os.remove(name)
    """
    name = os.fspath(path)
    records: list[TraceRecord] = []
    with open(name, newline="", encoding="utf-8-sig") as fh:
        lines = _Lines(fh)
        rows = csv.reader(lines, skipinitialspace=True)
        header = next(rows, None)
        if header is None:
            raise TraceError(name, lines.lineno, "no header line (expected "
                             f"{','.join(COLUMNS)})")
        header = [h.strip() for h in header]
        where = _locate_columns(name, lines.lineno, header)
        width = len(header)
        last_time = 0.0
        for row in rows:
            line = lines.lineno
            if len(row) != width:
                raise TraceError(name, line, f"{len(row)} fields, the header has {width}")
            t = _parse_time(name, line, row[where["time_ns"]])
            if t < last_time:
                raise TraceError(name, line, f"time_ns {_fmt(t)} goes back in time (previous "
                                 f"message at {_fmt(last_time)}); times must not decrease")
            src = _parse_node(name, line, "src", row[where["src"]], num_nodes)
            dst = _parse_node(name, line, "dst", row[where["dst"]], num_nodes)
            size = _parse_int(name, line, "bytes", row[where["bytes"]])
            if size <= 0:
                raise TraceError(name, line, f"bytes must be > 0, got {size}")
            records.append(TraceRecord(t, src, dst, size))
            last_time = t
        if not records:
            raise TraceError(name, lines.lineno, "the trace has no messages")
    return records


def write_trace(path: str | os.PathLike[str], records: Iterable[TraceRecord]) -> None:
    """Write records in the format :func:`read_trace` reads (times written exactly, so a
    trace read back is equal to the one written)."""
    with open(os.fspath(path), "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(COLUMNS)
        for r in records:
            out.writerow((repr(float(r.time_ns)), r.src, r.dst, r.bytes))


class _Lines:
    """Iterate over the data lines of a file (comments and blank lines dropped) while keeping
    the physical number of the last line handed out, for error messages."""

    def __init__(self, fh: Iterable[str]) -> None:
        self._fh = fh
        self.lineno = 0

    def __iter__(self) -> Iterator[str]:
        for self.lineno, text in enumerate(self._fh, 1):
            stripped = text.strip()
            if stripped and not stripped.startswith("#"):
                yield text
        # past the end: report errors about the whole file at its last line, at least line 1
        self.lineno = max(self.lineno, 1)


def _locate_columns(path: str, line: int, header: list[str]) -> dict[str, int]:
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise TraceError(path, line, f"header lacks column(s) {', '.join(missing)} "
                         f"(found {','.join(header)}; need {','.join(COLUMNS)})")
    repeated = sorted({c for c in COLUMNS if header.count(c) > 1})
    if repeated:
        raise TraceError(path, line, f"header repeats column(s) {', '.join(repeated)}")
    return {c: header.index(c) for c in COLUMNS}


def _parse_time(path: str, line: int, text: str) -> float:
    try:
        t = float(text)
    except ValueError:
        raise TraceError(path, line, f"time_ns {text.strip()!r} is not a number") from None
    if not math.isfinite(t):
        raise TraceError(path, line, f"time_ns {text.strip()!r} is not a finite number")
    if t < 0:
        raise TraceError(path, line, f"time_ns {_fmt(t)} is negative")
    return t


def _fmt(t: float) -> str:
    """A time as written in a file: exact (shortest round-trip form), no needless ``.0``."""
    return str(int(t)) if t.is_integer() and abs(t) < 1e16 else repr(t)


def _parse_int(path: str, line: int, column: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TraceError(path, line, f"{column} {text.strip()!r} is not an integer") from None


def _parse_node(path: str, line: int, column: str, text: str, num_nodes: int) -> int:
    v = _parse_int(path, line, column, text)
    if not 0 <= v < num_nodes:
        raise TraceError(path, line, f"{column} {v} is not a node id in [0, {num_nodes})")
    return v
