"""Output files: unchanged content is not rewritten, committed files are kept unless forced,
figures render to the same bytes every time."""

from __future__ import annotations

import os
import subprocess

import pytest

from icsim.experiments.pipeline.confidence import mean_ci, t_quantile
from icsim.experiments.pipeline.outputs import KEPT, UNCHANGED, WRITTEN, Outputs, is_committed


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c",
                    "user.name=t", *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "table.csv").write_text("a,b\n1,2\n")
    git(tmp_path, "add", "table.csv")
    git(tmp_path, "commit", "-qm", "results")
    return tmp_path


def test_a_file_with_the_same_content_is_not_touched(tmp_path):
    path = tmp_path / "t.csv"
    out = Outputs()
    assert out.write(path, "x\n") == WRITTEN
    os.utime(path, (1_000_000, 1_000_000))
    assert out.write(path, "x\n") == UNCHANGED
    assert path.stat().st_mtime == 1_000_000
    assert out.write(path, "y\n") == WRITTEN and path.read_text() == "y\n"   # not committed
    assert out.lines() == [f"wrote {path}"]


def test_a_committed_file_is_kept_unless_forced(repo):
    path = repo / "table.csv"
    assert is_committed(path) and not is_committed(repo / "other.csv")
    out = Outputs()
    assert out.write(path, "a,b\n1,3\n") == KEPT
    assert path.read_text() == "a,b\n1,2\n"
    assert out.kept == [path] and "--force" in out.lines()[0]
    assert out.write(repo / "other.csv", "new\n") == WRITTEN        # untracked: written
    assert Outputs(force=True).write(path, "a,b\n1,3\n") == WRITTEN
    assert path.read_text() == "a,b\n1,3\n"


def test_same_can_ignore_invocation_lines(repo):
    path = repo / "table.csv"
    same = lambda old, new: old.splitlines()[0] == new.splitlines()[0]   # noqa: E731
    assert Outputs().write(path, "a,b\nwritten at noon\n", same=same) == UNCHANGED
    assert path.read_text() == "a,b\n1,2\n"


def test_student_t_quantiles_and_intervals():
    assert t_quantile(1) == pytest.approx(12.706204736, rel=1e-9)
    assert t_quantile(4) == pytest.approx(2.776445105, rel=1e-9)
    assert t_quantile(30) == pytest.approx(2.042272456, rel=1e-9)
    assert t_quantile(1000) == pytest.approx(1.962339, rel=1e-6)
    assert t_quantile(9, 0.99) == pytest.approx(3.249836, rel=1e-6)
    mean, half, n = mean_ci([1.0, 2.0, None, float("nan"), 3.0, 4.0])
    assert (mean, n) == (2.5, 4) and half == pytest.approx(3.182446 * 1.290994 / 2, rel=1e-6)
    assert mean_ci([5.0])[:2] == (5.0, pytest.approx(float("nan"), nan_ok=True))
    assert mean_ci([])[2] == 0
    with pytest.raises(ValueError):
        t_quantile(0)
