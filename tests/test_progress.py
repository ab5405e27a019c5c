"""Long jobs are never silent in a batch log: a run, its set-up or a sweep that has gone on
for ~10 s writes a progress line to stderr then and every 30 s after, even when stderr is not
a terminal; a short one says nothing."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

from icsim.experiments.cli import main
from icsim.experiments.pipeline.execution import Progress, RunProgress

QUICKSTART = str(Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml")
RUN = ["run", QUICKSTART, "--engine", "simpy", "--set", "topology.dims=[4,4]",
       "--set", "run.measure_us=10"]


def test_a_short_run_says_nothing_when_stderr_is_not_a_terminal(capsys):
    assert main(RUN) == 0
    assert capsys.readouterr().err == ""


def test_a_long_run_writes_a_line_now_and_then_in_a_batch_log(monkeypatch, capsys):
    """Every line: simulated time against the end, packets delivered, their rate, the ETA."""
    monkeypatch.setattr(Progress, "BATCH_AFTER_S", 0.0)        # every run is "long"
    monkeypatch.setattr(Progress, "BATCH_EVERY_S", 0.0)
    monkeypatch.setattr(RunProgress, "__init__", _every_update(RunProgress.__init__))
    assert main(RUN) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines()
             if ln.startswith("[run] simulated")]
    assert len(lines) > 3
    assert all(re.match(r"\[run\] simulated [\d.,]+ of [\d.,]+ us, [\d,]+ packets delivered",
                        ln) for ln in lines), lines
    assert any(re.search(r"\([\d,]+/s\);", ln) for ln in lines), lines
    assert any("ETA" in ln for ln in lines), lines


def _every_update(init):
    def patched(self, stream=None, enabled=None, every_s=0.5):
        init(self, stream, enabled, every_s=0.0)
    return patched


def test_a_long_set_up_says_so_in_a_batch_log_until_the_run_starts(monkeypatch):
    monkeypatch.setattr(Progress, "BATCH_AFTER_S", 0.05)
    monkeypatch.setattr(Progress, "BATCH_EVERY_S", 0.05)
    log = io.StringIO()
    progress = RunProgress(stream=log)
    assert progress.batch and progress.enabled
    with progress.setting_up("building the network"):
        time.sleep(0.4)
        progress(1_000_000, 2_000_000, 10, 0)          # the engine's first report
        said = log.getvalue().count("setting up")
        time.sleep(0.2)
    lines = log.getvalue().splitlines()
    assert said >= 2 and all(re.match(r"\[run\] setting up \(building the network\): \d+s so "
                                      r"far$", ln) for ln in lines[:said])
    assert log.getvalue().count("setting up") == said        # none once the run has started


def test_a_quick_set_up_says_nothing_and_quiet_means_quiet():
    log = io.StringIO()
    progress = RunProgress(stream=log)
    with progress.setting_up():
        time.sleep(0.05)
    assert log.getvalue() == ""
    quiet = RunProgress(stream=log, enabled=False)
    assert not quiet.enabled and not quiet.batch


def test_a_sweep_in_a_batch_log_says_how_far_it_is_after_10_s():
    log = io.StringIO()
    progress = Progress("sweep", stream=log)
    progress.ran, progress.reused = 3, 2
    progress.update(1, 4)                                    # at once: nothing yet
    assert log.getvalue() == ""
    progress.t0 -= 11.0                                      # 11 s later
    progress.update(1, 4)
    progress.update(1, 3)                                    # not 30 s after the last: none
    [line] = log.getvalue().splitlines()
    assert line.startswith("[sweep] 3 new, 2 reused, 1 running, <= 4 to go; 11s elapsed")
