"""A sweep's ``results.csv``: append-only, one complete line per finished run, repaired on read.

Each row is written with one ``write`` of one line, flushed and fsynced, so an interrupted
sweep (Ctrl-C, a killed job, a full disk) leaves every finished point in a valid CSV and at most
a truncated last line.  That line, or a line that does not match the header, or whose values
are damaged (:func:`~icsim.experiments.pipeline.rows.row_problem`: ``offered_load=abc``,
``latency_ns=abc``, ``saturated=maybe``, ``seed=-5``), is moved to ``results.rejected.csv``; its
point runs again.  If a later row brings a column the file does not have yet, the file is
rewritten once (to a temporary file, then renamed) with the wider header.  A lock file
(``results.csv.lock``, there only while a sweep runs) keeps a second sweep from writing the
same file.
"""

from __future__ import annotations

import csv
import io
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from icsim.experiments.pipeline.execution import cut_partial_line
from icsim.experiments.pipeline.outputs import named
from icsim.experiments.pipeline.rows import column_order, row_key, row_problem

RESULTS_NAME = "results.csv"


class SweepError(RuntimeError):
    """A sweep cannot go on (another sweep holds its file, the execution backend failed);
    every finished point is saved."""


def cell_text(value: Any) -> str:
    """A value as the text of one CSV cell (``None`` and NaN empty)."""
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return ""
    # one physical line per row, so that a truncated last line is the only possible damage
    return str(value).replace("\r", " ").replace("\n", " | ")


def parse_cell(text: str) -> Any:
    """A CSV cell back as a Python value: empty -> None, True/False, int, float, or text."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class ResultsFile:
    """The append-only CSV of a sweep, one complete line per finished run.

    Parameters
    ----------
    path : Path
        ``OUT/results.csv``; created with its directory on the first row.

    Attributes
    ----------
    dropped : int
        Lines set aside when the file was read (a truncated last line, or damaged lines).
    first_problem : str or None
        What was wrong with the first damaged line set aside (its line number and the reason).

    Notes
    -----
    Damage is repaired when the file is read (module docstring); the points of the lines set
    aside are run again.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.header: list[str] | None = None
        self.dropped = 0
        self.first_problem: str | None = None

    @property
    def rejected_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".rejected.csv")

    def _read_raw(self) -> tuple[list[str] | None, list[dict[str, str]], list[str]]:
        """Header, rows as text, and damaged lines; a truncated last line is cut off the file
        on disk and counted among the damaged lines (moved to the rejected file)."""
        if not self.path.exists():
            return None, [], []
        data = self.path.read_bytes()
        cut = []
        if data and not data.endswith(b"\n"):
            cut = [data[data.rfind(b"\n") + 1:].decode("utf-8", errors="replace")]
            cut_partial_line(self.path, say=False)      # counted in the sweep's own line
            data = data[:data.rfind(b"\n") + 1]
        lines = data.decode("utf-8", errors="replace").splitlines()
        if not lines:
            if cut:                                     # not even a whole header: set aside
                self._quarantine(None, cut)
            return None, [], []
        header = next(csv.reader([lines[0]]))
        if cut:
            self.first_problem = (f"line {len(lines) + 1}: cut short (an interrupted "
                                  f"write)")
        rows, bad = [], list(cut)
        for number, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            cells = next(csv.reader([line]), [])
            problem = (f"{len(cells)} fields for a header of {len(header)}"
                       if len(cells) != len(header) else row_problem(dict(zip(header, cells))))
            if problem is not None:
                bad.append(line)
                self.first_problem = self.first_problem or f"line {number}: {problem}"
                continue
            rows.append(dict(zip(header, cells)))
        return header, rows, bad

    def _quarantine(self, header: list[str] | None, bad: list[str]) -> None:
        new = not self.rejected_path.exists()
        with named(self.rejected_path), open(self.rejected_path, "a", encoding="utf-8") as f:
            if new:
                f.write("# damaged lines of results.csv (cut short, fields not matching its "
                        "header, or values that are not what their column holds):\n")
                if header is not None:
                    f.write(",".join(header) + "\n")
            f.writelines(line + "\n" for line in bad)
        self.dropped += len(bad)

    def load(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Every sound row, keyed by (config_hash, seed), values parsed to Python types."""
        header, rows, bad = self._read_raw()
        self.header = header
        if bad:
            self._quarantine(header, bad)
            self._write(header, rows)
        out = {}
        for r in rows:
            parsed = {k: parse_cell(v) for k, v in r.items()}
            out[row_key(parsed)] = parsed
        return out

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row durably (one line, flushed and fsynced)."""
        if self.header is None and self.path.exists():
            self.load()
        if self.header is None or not set(row) <= set(self.header):
            header, rows, bad = self._read_raw()
            if bad:
                self._quarantine(header, bad)
            self._write(column_order(set(row) | set(header or ())), rows)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([cell_text(row.get(c))
                                                       for c in self.header])
        with named(self.path), open(self.path, "a", encoding="utf-8") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())

    def _write(self, header: list[str], rows: list[dict[str, str]]) -> None:
        """Replace the file atomically (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with named(self.path), open(tmp, "w", encoding="utf-8", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(header)
                for r in rows:
                    w.writerow([r.get(c, "") for c in header])
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, self.path)
        self.header = header

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold ``results.csv.lock`` so that two sweeps never write one file; the file goes
        when the sweep ends, by an error or Ctrl-C too.  The hold is the kernel's (``flock``),
        which ends with the process however it ends: a file left by a sweep killed outright
        holds nobody up, and the next sweep to hold it removes it.  A ``results.csv.tmp`` found
        once held is what a killed rewrite (:meth:`_write`) left: removed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl                         # POSIX only: elsewhere no protection
        except ImportError:
            yield
            return
        while True:
            f = open(self.lock_path, "a")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                raise SweepError(f"{self.path} is being written by another sweep "
                                 f"(it holds {self.lock_path})") from None
            # the sweep that held it may have removed it between our open and our flock (and
            # a third may hold a new one): only the file at the path counts
            try:
                if os.stat(self.lock_path).st_ino == os.fstat(f.fileno()).st_ino:
                    break
            except FileNotFoundError:
                pass
            f.close()
        try:
            self.path.with_name(self.path.name + ".tmp").unlink(missing_ok=True)
            yield
        finally:
            self.lock_path.unlink(missing_ok=True)       # removed while held, then let go
            f.close()
