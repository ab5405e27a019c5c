"""No lock file outlives a sweep, however it ends (issue 48, the first hour)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from icsim.experiments.pipeline.curves import make_curves
from icsim.experiments.pipeline.results_file import ResultsFile, SweepError
from icsim.experiments.pipeline.sweep import run_sweep


# ---------------------------------------------------------------------------------- lock files
def sweep_until_killed(out: Path) -> str:
    """A script: a sweep whose run never ends (it says when it has started)."""
    return f"""
import time
from pathlib import Path
from icsim.experiments.pipeline.curves import make_curves
from icsim.experiments.pipeline.sweep import run_sweep

def forever(cfg):
    Path({str(out / 'running')!r}).write_text('')
    time.sleep(600)

curves = make_curves({{"topology": {{"kind": "torus", "dims": [4, 4]}}}}, [0.1], [], [])
run_sweep(curves, {str(out)!r}, run_fn=forever, plots=False, progress=False)
"""


def finished_run(cfg):
    load = cfg.traffic.load
    return {"offered_load": load, "mode": cfg.run.mode, "accepted_load": load,
            "latency_ns": 1000.0, "saturated": False, "saturation_reason": None,
            "derouted": {"outflank": 0.0, "wraparound": 0.0, "orthant": 0.0, "total": 0.0},
            "seed": cfg.seed, "version": "test", "wall_s": 0.01, "config": cfg.to_dict()}


def interrupted_run(cfg):
    raise KeyboardInterrupt


def tiny_curves():
    return make_curves({"topology": {"kind": "torus", "dims": [4, 4]}}, [0.1, 0.2], [], [])


def test_no_lock_file_outlives_a_sweep_killed_outright_and_none_holds_the_next_up(tmp_path):
    out = tmp_path / "sweep"
    proc = subprocess.Popen([sys.executable, "-c", sweep_until_killed(out)])
    try:
        deadline = time.monotonic() + 120
        while not (out / "running").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        assert (out / "results.csv.lock").exists()          # held while it runs
        with pytest.raises(SweepError, match="another sweep"):
            run_sweep(tiny_curves(), out, run_fn=finished_run, plots=False, progress=False)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the kernel let go of it with the process: the next sweep runs, and removes the file
    outcome = run_sweep(tiny_curves(), out, run_fn=finished_run, plots=False, progress=False)
    assert outcome.ran == 2
    assert sorted(p.name for p in out.iterdir()) == ["gamma_star.csv", "results.csv",
                                                      "running", "verdicts.csv"]


def test_no_lock_file_outlives_a_sweep_that_ends_or_is_interrupted(tmp_path):
    run_sweep(tiny_curves(), tmp_path / "ends", run_fn=finished_run, plots=False,
              progress=False)
    assert not list((tmp_path / "ends").glob("*.lock"))
    with pytest.raises(KeyboardInterrupt):
        run_sweep(tiny_curves(), tmp_path / "ctrl-c", run_fn=interrupted_run, plots=False,
                  progress=False)
    assert not list((tmp_path / "ctrl-c").glob("*.lock"))
    # a rewrite cut short by a kill leaves results.csv.tmp: the next sweep removes it
    (tmp_path / "ends" / "results.csv.tmp").write_text("half a header")
    store = ResultsFile(tmp_path / "ends" / "results.csv")
    with store.lock():
        assert not store.path.with_name("results.csv.tmp").exists()
        assert store.lock_path.exists()
    assert sorted(p.name for p in (tmp_path / "ends").iterdir()) == ["gamma_star.csv",
                                                                     "results.csv",
                                                                     "verdicts.csv"]
