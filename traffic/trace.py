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

Anything else is a :class:`TraceError` whose message is ``<file>:<line>: <what is wrong>``
(``<file>: <what is wrong>`` when the file itself cannot be read: missing, a directory, not
readable).  A file with a header but no messages is an error too, and so is a byte that is not
UTF-8 or a line longer than 1 MiB (reported at its line).

Limits
------
A trace is replayed packet by packet and every message's packets exist from the moment it is
posted, so a trace is bounded up front, where a wrong number would otherwise become an endless
run or a memory blow-up:

* ``time_ns`` at most :data:`MAX_TIME_NS` = 1e11 (100 s of simulated time; the run's watchdog
  wakes every ``run.watchdog_us`` through idle gaps, 2 million times per 100 s at 50 µs);
* ``bytes`` at most :data:`MAX_MESSAGE_BYTES` = 2^30 (1 GiB per message);
* at most :data:`MAX_PACKETS` = 10^7 messages, and, when the packet size is known
  (``packet_bytes``, as in a run), at most 10^7 packets in all (each message takes
  ``ceil(bytes / packet_bytes)`` packets): about 2.5 GB of packets if all were posted at once,
  hours of simulation.

A trace over a limit is refused with the limit in the message; split it or scale it down.

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

from icsim.model.errors import Picklable
from icsim.model.input_files import InputFileError, read_lines

__all__ = ["COLUMNS", "MAX_MESSAGE_BYTES", "MAX_PACKETS", "MAX_TIME_NS", "TraceError",
           "TraceRecord", "read_trace", "write_trace"]

COLUMNS = ("time_ns", "src", "dst", "bytes")
#: latest creation time a trace may hold: 100 s of simulated time
MAX_TIME_NS = 1e11
#: largest message a trace may hold: 1 GiB
MAX_MESSAGE_BYTES = 1 << 30
#: most messages a trace may hold, and most packets when the packet size is known
MAX_PACKETS = 10_000_000


@dataclass(frozen=True)
class TraceRecord:
    """One message of a trace: created at ``time_ns`` by ``src`` for ``dst``, ``bytes`` long."""

    time_ns: float
    src: int
    dst: int
    bytes: int


class TraceError(Picklable, ValueError):
    """A trace file is malformed.  ``str(err)`` is ``<file>:<line>: <reason>``; the parts are
    also kept as ``path``, ``line`` (1-based, physical line in the file; None when the file
    itself cannot be read, and then ``str(err)`` is ``<file>: <reason>``) and ``reason``."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}" if line else f"{path}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


def read_trace(path: str | os.PathLike[str], num_nodes: int,
               packet_bytes: int | None = None) -> list[TraceRecord]:
    """Read and validate a trace file.

    Parameters
    ----------
    path : str or path-like
    num_nodes : int
        Node ids must lie in ``[0, num_nodes)``.
    packet_bytes : int, optional
        The run's packet size: bounds the trace's total packet count (module docstring).

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
    try:
        name = os.fspath(path)
        return _read(name, num_nodes, packet_bytes)
    except InputFileError as exc:
        raise TraceError(exc.path, exc.line, exc.reason) from None


def _read(name: str, num_nodes: int, packet_bytes: int | None) -> list[TraceRecord]:
    records: list[TraceRecord] = []
    lines = _Lines(read_lines(name))
    rows = csv.reader(lines, skipinitialspace=True)
    try:
        header = next(rows, None)
        if header is None:
            raise TraceError(name, lines.lineno, "no header line (expected "
                             f"{','.join(COLUMNS)})")
        header = [h.strip() for h in header]
        where = _locate_columns(name, lines.lineno, header)
        width = len(header)
        last_time = 0.0
        packets = 0
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
            if size > MAX_MESSAGE_BYTES:
                raise TraceError(name, line, f"bytes {size} is more than the limit of "
                                 f"{MAX_MESSAGE_BYTES} (1 GiB) per message")
            if len(records) == MAX_PACKETS:
                raise TraceError(name, line, f"more than {MAX_PACKETS:,} messages, the limit "
                                 f"of a trace")
            if packet_bytes:
                packets += -(-size // packet_bytes)
                if packets > MAX_PACKETS:
                    raise TraceError(name, line, f"the messages up to here take {packets:,} "
                                     f"packets of {packet_bytes} bytes, more than the limit "
                                     f"of {MAX_PACKETS:,} packets in a trace")
            records.append(TraceRecord(t, src, dst, size))
            last_time = t
    except csv.Error as exc:
        raise TraceError(name, lines.lineno, f"not CSV ({exc})") from None
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

    def __init__(self, numbered: Iterable[tuple[int, str]]) -> None:
        self._numbered = numbered
        self.lineno = 0

    def __iter__(self) -> Iterator[str]:
        for self.lineno, text in self._numbered:
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
        raise TraceError(path, line, f"time_ns {_show(text)} is not a number") from None
    if not math.isfinite(t):
        raise TraceError(path, line, f"time_ns {_show(text)} is not a finite number")
    if t < 0:
        raise TraceError(path, line, f"time_ns {_fmt(t)} is negative")
    if t > MAX_TIME_NS:
        raise TraceError(path, line, f"time_ns {_fmt(t)} is later than the limit of "
                         f"{MAX_TIME_NS:.0e} ns (100 s of simulated time)")
    return t


def _show(text: str) -> str:
    """A field as quoted in a message: stripped, and cut short if long."""
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _fmt(t: float) -> str:
    """A time as written in a file: exact (shortest round-trip form), no needless ``.0``."""
    return str(int(t)) if t.is_integer() and abs(t) < 1e16 else repr(t)


def _parse_int(path: str, line: int, column: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TraceError(path, line, f"{column} {_show(text)} is not an integer") from None


def _parse_node(path: str, line: int, column: str, text: str, num_nodes: int) -> int:
    v = _parse_int(path, line, column, text)
    if not 0 <= v < num_nodes:
        raise TraceError(path, line, f"{column} {v} is not a node id in [0, {num_nodes})")
    return v
