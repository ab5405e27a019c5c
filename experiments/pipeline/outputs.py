"""Writing a command's output files without destroying committed results.

Every derived file a sweep or a reproduction writes (summaries, tables, reports, figures) goes
through one :class:`Outputs` object, which applies three rules:

* **same content, no write**: a file whose new content equals what is on disk is not touched
  (its modification time and the git working tree stay clean);
* **committed files are kept**: a file tracked by git whose content would change is left as it
  is, unless the command was given ``--force``; the command then says which files it kept and
  how to overwrite them;
* anything else is written atomically (a temporary file, then a rename).

"Equal" can be relaxed per file with a ``same(old, new)`` function, for files that carry a
line about the invocation (a date, a wall time) that should not count as a change.

Figures are rendered deterministically (:func:`render_figure`): SVG ids come from a fixed
``svg.hashsalt`` and no date or software version is embedded, so redrawing the same data gives
byte-identical PNG and SVG files.

The append-only ``results.csv`` of a sweep is not a derived file and does not go through here:
appending finished runs never loses anything.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

#: fixed salt for the ids matplotlib writes into SVG files (clip paths, markers)
SVG_HASHSALT = "icsim"
PNG_DPI = 130

WRITTEN, UNCHANGED, KEPT = "written", "unchanged", "kept"


def is_committed(path: str | Path) -> bool:
    """Whether ``path`` is tracked by git (in the index of the repository holding it)."""
    p = Path(path).resolve()
    try:
        done = subprocess.run(["git", "-C", str(p.parent), "ls-files", "--error-unmatch",
                               "--", p.name], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def file_to_write(out: str | Path) -> Path:
    """``out`` as the path of a file to be written later, its folder made now: a bad path
    (a folder, a folder that cannot be made or written in) raises ``ValueError`` at once,
    before the work whose result it would hold."""
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"out: {out} is a directory; give the file's name")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"out: cannot make the folder {out.parent} ({exc.strerror})") from None
    if not os.access(out.parent, os.W_OK):
        raise ValueError(f"out: cannot write in {out.parent}")
    return out


@contextmanager
def named(path: str | Path) -> Iterator[None]:
    """An OSError of writing ``path`` that names no file (a full disk's "No space left on
    device" comes from a write, not an open) raised again naming it, so that the one line
    the command line prints says which file."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with named(path), open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)            # no half-written file left behind
        raise


@dataclass
class Outputs:
    """The derived files of one command, written by the rules in the module docstring.

    Parameters
    ----------
    force : bool
        Overwrite committed files whose content changes (``--force``).

    Attributes
    ----------
    status : dict
        Path -> ``"written"``, ``"unchanged"`` or ``"kept"``, in the order the files came.
    """

    force: bool = False
    status: dict[Path, str] = field(default_factory=dict)

    def write(self, path: str | Path, content: str | bytes,
              same: Callable[[str, str], bool] | None = None) -> str:
        """Write ``content`` to ``path`` unless it is the same or a committed file would change.

        ``same(old_text, new_text)``: also count the file as unchanged when this is true (for
        text files with invocation lines); returns the status.
        """
        path = Path(path)
        data = content.encode("utf-8") if isinstance(content, str) else content
        status = WRITTEN
        if path.exists():
            old = path.read_bytes()
            if old == data or (same is not None and isinstance(content, str)
                               and same(old.decode("utf-8", errors="replace"), content)):
                status = UNCHANGED
            elif not self.force and is_committed(path):
                status = KEPT
        if status == WRITTEN:
            _atomic_write(path, data)
        self.status[path] = status
        return status

    def figure(self, fig, path: str | Path) -> str:
        """Render a matplotlib Figure to ``path`` (format from the suffix) and :meth:`write` it."""
        path = Path(path)
        return self.write(path, render_figure(fig, path.suffix.lstrip(".")))

    def paths(self, *statuses: str) -> list[Path]:
        """The files with one of these statuses (all if none given)."""
        return [p for p, s in self.status.items() if not statuses or s in statuses]

    @property
    def kept(self) -> list[Path]:
        return self.paths(KEPT)

    def lines(self) -> list[str]:
        """What happened to each file, one line each, for the terminal."""
        out = []
        for p, s in self.status.items():
            if s == WRITTEN:
                out.append(f"wrote {p}")
            elif s == UNCHANGED:
                out.append(f"unchanged {p}")
            else:
                out.append(f"kept {p} (committed; the new content differs: --force to "
                           f"overwrite)")
        return out


def render_figure(fig, fmt: str, dpi: int = PNG_DPI) -> bytes:
    """A Figure as the bytes of a ``png``/``svg``/``pdf`` file, the same for the same drawing:
    no date, no software version, SVG ids from a fixed salt."""
    import matplotlib

    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "ModDate": None, "Creator": None,
                        "Producer": None}}.get(fmt)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_HASHSALT}):
        fig.savefig(buf, format=fmt, dpi=dpi if fmt == "png" else None, metadata=metadata)
    return buf.getvalue()


# ---------------------------------------------------------------------------------- commands
def add_output_arguments(p: argparse.ArgumentParser) -> None:
    """``--force``, ``--progress`` and ``--quiet``: how a command writes and reports."""
    p.add_argument("--force", action="store_true",
                   help="overwrite output files tracked by git whose content changes (without "
                        "it they are kept and listed)")
    add_progress_arguments(p)


def add_progress_arguments(p: argparse.ArgumentParser) -> None:
    """``--progress`` and ``--quiet``."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true",
                       help="progress lines even when stderr is not a terminal (batch logs)")
    group.add_argument("--quiet", action="store_true",
                       help="no progress line (by default shown on a terminal only)")


def progress_option(args: argparse.Namespace) -> bool | None:
    """``--quiet``: off; ``--progress``: on; neither: on a terminal only."""
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", False):
        return True
    return None


def report_outputs(outputs: Outputs, command: str) -> int:
    """Say where every output file went; exit status 1 if committed files were kept."""
    for line in outputs.lines():
        print(line)
    if outputs.kept:
        print(f"{command}: kept {len(outputs.kept)} committed file(s) whose new content "
              f"differs (listed above); run again with --force to overwrite them",
              file=sys.stderr)
        return 1
    return 0


def file_times(directory: str | Path) -> dict[Path, tuple[int, str]]:
    """Every file under ``directory`` with its modification time (ns) and a digest of its
    content: what :func:`written_since` compares against."""
    root = Path(directory)
    if not root.exists():
        return {}
    return {p: (p.stat().st_mtime_ns, _digest(p)) for p in root.rglob("*")
            if p.is_file() and not p.name.endswith(".lock")}


def _digest(path: Path) -> str:
    import hashlib

    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def written_since(directory: str | Path, since: dict[Path, tuple[int, str]]) -> list[Path]:
    """The files under ``directory`` that are new or whose content changed since the
    :func:`file_times` snapshot ``since``, for commands that write through their own code to
    say where they wrote (a file written again with the same content is not one: "wrote" only
    for what changed).  A snapshot, not a clock time: file times come from the kernel's coarse
    clock and can lag ``time.time()`` by milliseconds."""
    out = []
    for p, (mtime, digest) in file_times(directory).items():
        old = since.get(p)
        if old is None or (old[0] != mtime and old[1] != digest):
            out.append(p)
    return sorted(out)


def report_written(directory: str | Path, since: dict[Path, int]) -> None:
    """Print ``wrote PATH`` for every file :func:`written_since` found."""
    files = written_since(directory, since)
    for path in files:
        print(f"wrote {path}")
    if not files:
        print(f"nothing new written in {directory}")


def note(message: str) -> None:
    """A progress note on stderr, on a terminal only (the convention of every icsim command:
    quiet when piped)."""
    if sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)
