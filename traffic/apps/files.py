"""Motif files: an application's operations with their dependencies, one per line.

Format
------
A CSV file (UTF-8; ``#`` comments and blank lines skipped anywhere) whose first other line is
a header naming the columns ``id``, ``rank`` and ``op``, and as needed ``peer``, ``bytes``,
``time_us``, ``iteration`` and ``depends_on``, in any order, each once.  Each further line is
one operation (:mod:`icsim.traffic.apps.ops`), of at most as many cells as the header has
columns (missing cells at the end are empty):

* ``id`` -- the operation's name, unique in the file (any text without ``;``);
* ``rank`` -- an integer >= 0 (the application has as many ranks as the largest + 1);
* ``op`` -- ``send``, ``recv``, ``compute`` or ``wait``;
* ``peer``, ``bytes`` -- the other rank and the message size of a send or receive;
* ``time_us`` -- a computation's time (a finite number >= 0);
* ``iteration`` -- a wait that ends that iteration of its rank (optional);
* ``depends_on`` -- ids of earlier operations of the same rank, separated by ``;`` (empty:
  none).

Every problem is an :class:`~icsim.model.input_files.InputFileError` ``<file>:<line>: <what>``:
a missing column, an unknown op, an id used twice or not defined before its use, a dependency
on another rank's operation; and the whole application is checked when built (a receive
without its send, a dependency cycle through messages: the rank that would hang, named).

Example
-------
::

    id,rank,op,peer,bytes,time_us,depends_on
    a,0,send,1,4096,,
    b,1,recv,0,4096,,
    c,1,compute,,,2.5,b
    d,1,send,0,64,,c
    e,0,recv,1,64,,a
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass

from icsim.model.input_files import InputFileError, read_lines
from icsim.traffic.apps.ops import (COMPUTE, KINDS, MAX_OPS, SEND, AppError, Builder, Counter,
                                   Ops)

REQUIRED = ("id", "rank", "op")
OPTIONAL = ("peer", "bytes", "time_us", "iteration", "depends_on")
#: the most ranks a motif file may name
MAX_RANKS = 1 << 20


def read_motif_file(path: str | os.PathLike[str]) -> Ops:
    """The checked operations of a motif file (module docstring)."""
    return motif_file_ops(read_motif_rows(path))


@dataclass(frozen=True)
class MotifRows:
    """A motif file's lines, read and checked one by one (:func:`read_motif_rows`), not yet
    built into operations (:func:`motif_file_ops`)."""

    name: str
    rows: list

    @property
    def num_ranks(self) -> int:
        return max(r[1]["rank"] for r in self.rows) + 1

    def size(self, packet_bytes: int) -> Counter:
        """Its messages, packets of ``packet_bytes``, operations and compute time per rank
        (:class:`~icsim.traffic.apps.ops.Counter`), counted from the rows; an AppError past
        a limit."""
        count = Counter(self.num_ranks, packet_bytes)
        sends = [r["bytes"] for _, r in self.rows if r["op"] == SEND]
        count.messages, count.ops = len(sends), len(self.rows)
        count.packets = sum(max(1, -(-b // packet_bytes)) for b in sends)
        for _, r in self.rows:
            if r["op"] == COMPUTE:
                count.busy[r["rank"]] += r["time_ps"]
        count.check()
        return count


def read_motif_rows(path: str | os.PathLike[str]) -> MotifRows:
    """A motif file's lines, each checked (module docstring); InputFileError naming the file
    and the line."""
    name = os.fspath(path)
    rows = _rows(name)
    if not rows:
        raise InputFileError(name, "no operations (a header and at least one line)")
    return MotifRows(name, rows)


def motif_file_ops(lines: MotifRows) -> Ops:
    """The checked operations of a motif file's lines (module docstring)."""
    name, rows = lines.name, lines.rows
    ranks = lines.num_ranks
    b = Builder(ranks)
    ids: dict[str, int] = {}
    rank_of: dict[str, int] = {}
    for line, row in rows:
        try:
            deps = [ids[d] for d in row["deps"]]
        except KeyError as exc:
            raise InputFileError(name, f"depends_on: {exc.args[0]!r} is not the id of an "
                                 f"earlier operation", line) from None
        if row["id"] in ids:
            raise InputFileError(name, f"id {row['id']!r} is used twice", line)
        other = next((d for d in row["deps"] if rank_of[d] != row["rank"]), None)
        if other is not None:
            raise InputFileError(name, f"depends_on: {other!r} is an operation of rank "
                                 f"{rank_of[other]}; a rank waits only on its own operations "
                                 f"(and a receive on its message)", line)
        rank_of[row["id"]] = row["rank"]
        try:
            ids[row["id"]] = b.op(row["op"], row["rank"], row["peer"], row["bytes"],
                                  row["time_ps"], deps, row["iteration"])
        except AppError as exc:
            raise InputFileError(name, _plain(str(exc)), line) from None
    try:
        return b.build()
    except AppError as exc:
        by_index = {v: k for k, v in ids.items()}
        raise InputFileError(name, _named(str(exc), by_index)) from None


def _plain(message: str) -> str:
    """An operation's message without its index (the line says which)."""
    return message.split(": ", 1)[1] if message.startswith(("rank ", "operation ")) else message


def _named(message: str, by_index: dict[int, str]) -> str:
    """``operation 12`` as ``operation 'id'``: what the file calls it."""
    out = []
    for word in message.split(" "):
        tail = word.rstrip(",)")
        out.append(word)
        if (len(out) > 1 and out[-2].lstrip("(") == "operation" and tail.isdigit()
                and int(tail) in by_index):
            out[-1] = repr(by_index[int(tail)]) + word[len(tail):]
    return " ".join(out)


def _rows(name: str) -> list[tuple[int, dict]]:
    header: list[str] | None = None
    rows: list[tuple[int, dict]] = []
    for line, text in read_lines(name):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in next(csv.reader([text]))]
        if header is None:
            missing = [c for c in REQUIRED if c not in cells]
            if missing:
                raise InputFileError(name, f"the header has no {missing[0]!r} column (needs "
                                     f"{', '.join(REQUIRED)}; may have {', '.join(OPTIONAL)})",
                                     line)
            twice = next((c for i, c in enumerate(cells) if c in cells[:i]), None)
            if twice is not None:
                raise InputFileError(name, f"the header names column {twice!r} twice", line)
            header = cells
            continue
        if len(cells) > len(header):
            raise InputFileError(name, f"{len(cells)} cells, the header has {len(header)} "
                                 f"columns", line)
        if len(rows) >= MAX_OPS:
            raise InputFileError(name, f"more than {MAX_OPS:,} operations", line)
        rows.append((line, _row(name, line, dict(zip(header, cells)))))
    return rows


def _row(name: str, line: int, cell: dict[str, str]) -> dict:
    def integer(key: str, low: int, high: int, default: int | None = None) -> int:
        text = cell.get(key, "")
        if text == "" and default is not None:
            return default
        try:
            value = int(text)
        except ValueError:
            raise InputFileError(name, f"{key}: {text!r} is not an integer", line) from None
        if not low <= value <= high:
            raise InputFileError(name, f"{key}: {value} is out of range ({low}..{high})", line)
        return value

    op = cell.get("op", "")
    if op not in KINDS:
        raise InputFileError(name, f"op: {op!r} is not one of {', '.join(KINDS)}", line)
    kind = KINDS.index(op)
    ident = cell.get("id", "")
    if not ident or ";" in ident:
        raise InputFileError(name, f"id: {ident!r} is not a name (non-empty, no ';')", line)
    message = op in ("send", "recv")
    time_ps = 0
    if op == "compute":
        text = cell.get("time_us", "")
        try:
            us = float(text)
        except ValueError:
            raise InputFileError(name, f"time_us: {text!r} is not a number", line) from None
        if not math.isfinite(us) or not 0 <= us <= 1e6:
            raise InputFileError(name, f"time_us: {us} is not a time of 0 to 1e6 µs", line)
        time_ps = int(round(us * 1e6))
    deps = [d.strip() for d in cell.get("depends_on", "").split(";") if d.strip()]
    return {"id": ident, "op": kind, "rank": integer("rank", 0, MAX_RANKS - 1),
            "peer": integer("peer", 0, MAX_RANKS - 1) if message else -1,
            "bytes": integer("bytes", 0, 1 << 30) if message else 0, "time_ps": time_ps,
            "iteration": integer("iteration", -1, 1 << 30, -1) if op == "wait" else -1,
            "deps": deps}
