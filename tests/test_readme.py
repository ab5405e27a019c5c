"""The README's walkthrough works as written: its "Adding a routing algorithm" file, saved
and run with its command, runs on the compiled engine and says what the README says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_the_plugin_walkthrough_runs_from_a_blank_folder_on_the_compiled_engine(tmp_path):
    text = section("Adding a routing algorithm")
    name = re.search(r"Save this as `([\w.]+)`", text).group(1)
    code = re.search(r"Save this as .*?```python\n(.*?)```", text, re.S).group(1)
    command = re.search(r"```sh\n(icsim run .*?)\n```", text, re.S).group(1)
    (tmp_path / name).write_text(code)
    args = shlex.split(command)
    out = subprocess.run([sys.executable, "-m", "icsim", *args[1:]], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "valiant" in lines[0] and "compiled engine" in lines[0]
    assert re.search(r"derouted\s+valiant 1\.000, total 1\.000", out.stdout)
    assert float(re.search(r"dilation (\d+\.\d+)", out.stdout).group(1)) > 2.0
    assert "SATURATED" in out.stdout
