"""Reading the files a user hands icsim (configs, routing tables, traces, edge lists) defensively.

Whatever a path names — nothing, a directory, a file we may not read, bytes that are not UTF-8,
anything but a regular file (a named pipe, which would block until something writes to it; a
device such as ``/dev/zero``, which never ends) — the readers here raise
:class:`InputFileError`, one line naming the file and, where there is one, the line:
``<file>:<line>: <reason>``.  Each file
format converts it to its own error type (``ConfigError``, ``TableError``, ``TraceError``,
``GraphError``), so a caller catches one exception per format and the command line turns every
one of them into a line on stderr and exit status 2.

Text is UTF-8; a leading byte-order mark is dropped.  Reads are bounded: a whole file by
``max_bytes``, a line-by-line file by the length of one line, so a wrong path (a 4 GB binary) fails
after reading at most that much instead of filling memory.

>>> import os, tempfile
>>> fd, name = tempfile.mkstemp()
>>> _ = os.write(fd, "a\\nb\\n".encode() + b"caf\\xe9\\n"); os.close(fd)
>>> list(read_lines(name))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
icsim.model.input_files.InputFileError: ...:3: byte 0xe9 at column 4 is not UTF-8 text
>>> read_text(os.path.dirname(name), max_bytes=1 << 20)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
icsim.model.input_files.InputFileError: ...: is a directory, not a file
>>> os.remove(name)
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Iterator

from icsim.model.errors import Picklable

#: the longest line a line-by-line format (trace, edge list) may have
MAX_LINE_BYTES = 1 << 20


class InputFileError(Picklable, ValueError):
    """A file that cannot be read as the text it should be.  ``str(err)`` is
    ``<file>:<line>: <reason>`` (``<file>: <reason>`` about the whole file); the parts are kept
    as ``path``, ``line`` (1-based, or None) and ``reason``."""

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path, self.reason, self.line = path, reason, line
        super().__init__(f"{self.where}: {reason}")

    @property
    def where(self) -> str:
        """``<file>:<line>``, or ``<file>`` when the error is about the whole file."""
        return f"{self.path}:{self.line}" if self.line else self.path


def read_text(path: str | os.PathLike[str], *, max_bytes: int) -> str:
    """The whole file as text; :class:`InputFileError` if it is not a readable UTF-8 file of at
    most ``max_bytes`` bytes."""
    name = _name(path)
    with _open(name) as fh:
        data = _guard(name, lambda: fh.read(max_bytes + 1))
    if len(data) > max_bytes:
        raise InputFileError(name, f"larger than {_size(max_bytes)}; not a file of this kind")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(name, _not_utf8(data[exc.start], column), line) from None


def read_lines(path: str | os.PathLike[str], *,
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of the file, line ends kept, numbered from 1;
    :class:`InputFileError` (with the line) at a line that is not UTF-8 or is longer than
    ``max_line_bytes``."""
    name = _name(path)
    with _open(name) as fh:
        lineno = 0
        while True:
            raw = _guard(name, lambda: fh.readline(max_line_bytes + 1))
            if not raw:
                return
            lineno += 1
            if len(raw) > max_line_bytes:
                raise InputFileError(name, f"line longer than {_size(max_line_bytes)}; not a "
                                     f"file of this kind", lineno)
            try:
                text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputFileError(name, _not_utf8(raw[exc.start], exc.start + 1),
                                     lineno) from None
            yield lineno, text


def _name(path: str | os.PathLike[str]) -> str:
    try:
        return os.fspath(path)
    except TypeError:
        raise InputFileError(repr(path), "not a file name") from None


def _open(name: str):
    """The file ``name`` open for reading in binary; :class:`InputFileError` unless it is a
    regular file."""
    if "\0" in name:
        raise InputFileError(repr(name), "not a file name (it holds a NUL character)")
    try:
        fh = open(name, "rb", opener=_open_without_waiting)
    except OSError as exc:
        reason = _os_reason(exc)
        if exc.errno == errno.ENOENT and not os.path.isabs(name):
            reason += f" (a relative path is taken from the working directory, {os.getcwd()})"
        raise InputFileError(name, reason) from None
    kind = _not_regular(os.fstat(fh.fileno()).st_mode)
    if kind:
        fh.close()
        raise InputFileError(name, f"is {kind}, not a regular file")
    os.set_blocking(fh.fileno(), True)
    return fh


def _open_without_waiting(path: str, flags: int) -> int:
    # a named pipe opened for reading waits for a writer, forever if none comes: open it
    # without waiting, so that it can be refused
    return os.open(path, flags | os.O_NONBLOCK)


def _not_regular(mode: int) -> str:
    """What a file of this mode is, if it is not a regular file ("" if it is)."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a directory" if stat.S_ISDIR(mode) else "not a file"


def _guard(name: str, read):
    try:
        return read()
    except OSError as exc:
        raise InputFileError(name, _os_reason(exc)) from None


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.EISDIR:
        return "is a directory, not a file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return f"cannot be read ({exc.strerror or exc})"


def _not_utf8(byte: int, column: int) -> str:
    return f"byte 0x{byte:02x} at column {column} is not UTF-8 text"


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"
