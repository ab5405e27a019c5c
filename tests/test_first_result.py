"""The first result (issue 48): on a machine whose numba cache lacks the compiled engine, ``auto``
answers a small run on the SimPy engine at once while the compiled engine builds in the
background, and says so; a large run compiles, saying so first; a sweep compiles once before its
workers start; a Python sweep shows a progress bar on a terminal; no lock file outlives a sweep,
however it ends."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import icsim
from icsim.experiments.pipeline.curves import make_curves
from icsim.experiments.pipeline.execution import ProgressBar
from icsim.experiments.pipeline.results_file import ResultsFile, SweepError
from icsim.experiments.pipeline.sweep import run_sweep
from icsim.model.config import config_from_dict, read_config_file
from icsim.simulator import simulation
from icsim.simulator.build import build
from icsim.simulator.engines.compiled import building, cache

QUICKSTART = str(Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml")
SMALL_SWEEP = ["--set", "topology.dims=[4,4]", "--set", "traffic.message_packets=4",
               "--set", "run.warmup_us=5", "--set", "run.measure_us=20",
               "--set", "run.drain_us=40"]
SAYS_SIMPY = "icsim: the compiled engine is not built in this installation yet: this small " \
             "run takes the SimPy engine"
SAYS_COMPILING = "icsim: compiling the compiled engine"
#: a background build takes one to three minutes on the shared two-core machine
BUILD_WAIT_S = 1200


def icsim_cli(*args: str, cache_dir: Path, **popen) -> subprocess.CompletedProcess:
    """``icsim ARGS`` in a fresh process whose numba cache is ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-m", "icsim", *args], env=env, capture_output=True,
                          text=True, timeout=BUILD_WAIT_S, **popen)


def markers(cache_dir: Path) -> list[Path]:
    return list(cache_dir.rglob(cache.BUILDING_MARKER))


def wait_for_background_build(cache_dir: Path) -> None:
    deadline = time.monotonic() + BUILD_WAIT_S
    while markers(cache_dir):
        assert time.monotonic() < deadline, "the background build did not end"
        time.sleep(1.0)


def config(**sets):
    data = read_config_file(QUICKSTART)
    for dotted, value in sets.items():
        section, key = dotted.split("__")
        data[section][key] = value
    return config_from_dict(data)


# ---------------------------------------------------------------------------------- auto, cold
@pytest.mark.slow
def test_a_small_first_run_takes_simpy_while_the_compiled_engine_builds_in_the_background(
        tmp_path):
    first = icsim_cli("run", QUICKSTART, "--json", cache_dir=tmp_path)
    assert first.returncode == 0, first.stderr
    record = json.loads(first.stdout)
    assert record["engine"] == "simpy"
    assert first.stderr.count(SAYS_SIMPY) == 1, first.stderr
    assert "is being built in the background (about a minute) for the next runs" in first.stderr
    assert SAYS_COMPILING not in first.stderr
    # the build goes on after the run that started it has ended, and then ends by itself
    wait_for_background_build(tmp_path)
    assert any(tmp_path.rglob("loop.run-*.nbi"))
    again = icsim_cli("run", QUICKSTART, "--json", cache_dir=tmp_path)
    assert again.returncode == 0, again.stderr
    # nothing said but, on a machine slow enough to take 10 s, the batch progress lines
    said = [line for line in again.stderr.splitlines() if not line.startswith("[run] ")]
    assert said == [], again.stderr
    second = json.loads(again.stdout)
    assert second["engine"] == "compiled"
    # the same result whichever engine ran it
    differ = {k for k in record if record[k] != second[k]}
    assert differ <= {"engine", "wall_s"}, differ
    assert markers(tmp_path) == []


def test_a_small_run_on_auto_takes_simpy_while_the_cache_lacks_the_compiled_engine(
        monkeypatch, capsys):
    started = []
    monkeypatch.setattr(cache, "kernel_cached", lambda: False)
    monkeypatch.setattr(building, "build_in_background", lambda: started.append(1) or "started")
    monkeypatch.setattr(simulation, "_SAID", set())
    model = build(config())
    assert simulation.workload_packet_hops(model) <= simulation.SMALL_RUN_PACKET_HOPS
    assert simulation.make_engine(model).name == "simpy"
    assert simulation.make_engine(model).name == "simpy"
    assert started == [1, 1]
    err = capsys.readouterr().err
    assert err.count(SAYS_SIMPY) == 1                               # said once a process
    # a second one while the first builds: none started, and it says so
    monkeypatch.setattr(simulation, "_SAID", set())
    monkeypatch.setattr(building, "build_in_background", lambda: "running")
    assert simulation.make_engine(model).name == "simpy"
    assert "being built in the background already" in capsys.readouterr().err
    # where no background build can start (numba's cache cannot be written): compiled
    monkeypatch.setattr(building, "build_in_background", lambda: "")
    monkeypatch.setattr(cache, "_ANNOUNCED", True)
    assert simulation.make_engine(model).name == "compiled"
    # an engine named is the engine run
    assert simulation.make_engine(model, "compiled").name == "compiled"


def test_a_large_run_on_auto_compiles_and_says_so_before_compiling(monkeypatch, capsys):
    monkeypatch.setattr(cache, "kernel_cached", lambda: False)
    monkeypatch.setattr(building, "build_in_background",
                        lambda: pytest.fail("a large run started a background build"))
    monkeypatch.setattr(cache, "running_build", lambda: None)
    monkeypatch.setattr(cache, "_ANNOUNCED", False)
    model = build(config(run__measure_us=2000))
    assert simulation.workload_packet_hops(model) > simulation.SMALL_RUN_PACKET_HOPS
    engine = simulation.make_engine(model)           # built, not run: nothing compiled yet
    assert engine.name == "compiled"
    assert capsys.readouterr().err.startswith(SAYS_COMPILING)


def test_a_large_run_waits_for_the_background_build_and_says_so(monkeypatch, capsys):
    ran = iter([12.0, 13.0, None])           # seconds since it began, at each look; then done
    building_now = [True]

    def running_build():
        began = next(ran)
        building_now[0] = began is not None
        return began

    monkeypatch.setattr(cache, "kernel_cached", lambda: not building_now[0])

    monkeypatch.setattr(cache, "running_build", running_build)
    monkeypatch.setattr(cache, "_ANNOUNCED", False)
    cache.announce_compilation()
    err = capsys.readouterr().err
    assert "waiting for the compiled engine, being built in the background (for 12 s now" in err
    assert SAYS_COMPILING not in err                 # the build it waited for made the cache


# ---------------------------------------------------------------------------------- the marker
def test_a_build_marker_left_by_a_killed_build_is_removed_and_holds_nothing_up(
        monkeypatch, tmp_path):
    monkeypatch.setattr(cache, "cache_folder", lambda: tmp_path)
    marker = tmp_path / cache.BUILDING_MARKER
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        marker.write_text(str(sleeper.pid))
        assert cache.running_build() is not None and marker.exists()
        assert building.build_in_background() == "running"       # no second build
        old = time.time() - cache.STALE_AFTER_S - 1                # older than any build
        os.utime(marker, (old, old))
        assert cache.running_build() is None and not marker.exists()
        marker.write_text(str(sleeper.pid))
        sleeper.kill()
        sleeper.wait()
        assert cache.running_build() is None and not marker.exists()   # its builder is gone
    finally:
        sleeper.kill()
        sleeper.wait()
    marker.write_text(str(os.getpid()))              # the builder itself waits for nothing
    assert cache.running_build() is None


def test_the_background_builder_removes_its_marker(monkeypatch, tmp_path):
    """What the detached process runs (synchronously here): the cache is the session's, built
    already, so this loads it."""
    marker = tmp_path / cache.BUILDING_MARKER
    marker.write_text("")
    monkeypatch.setattr(os, "nice", lambda n: 0)
    building.build_cache(str(marker))
    assert not marker.exists() and cache.kernel_cached()


# ---------------------------------------------------------------------------------- sweeps
@pytest.mark.slow
def test_a_sweep_compiles_once_before_its_workers_start(tmp_path):
    out = tmp_path / "sweep"
    done = icsim_cli("sweep", QUICKSTART, "--out", str(out), "--workers", "2", "--loads",
                     "0.1,0.2,0.3", "--no-plots", *SMALL_SWEEP, cache_dir=tmp_path / "numba")
    assert done.returncode == 0, done.stderr
    # once, here: before, each worker compiled it (an announcement each); had the workers
    # found the cache empty now, each would run its small points on SimPy
    assert done.stderr.count(SAYS_COMPILING) == 1, done.stderr
    assert SAYS_SIMPY not in done.stderr
    import pandas as pd

    assert set(pd.read_csv(out / "results.csv")["engine"]) == {"compiled"}
    assert markers(tmp_path / "numba") == []


def test_a_sweep_on_the_simpy_engine_compiles_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(cache, "kernel_cached", lambda: False)
    monkeypatch.setattr(building, "compile_now", lambda: pytest.fail("compiled"))
    curves = make_curves(read_config_file(QUICKSTART), [0.1], SMALL_SWEEP[1::2] +
                         ["run.engine=simpy"], [])
    outcome = run_sweep(curves, tmp_path, plots=False, progress=False)
    assert [r["engine"] for r in outcome.rows] == ["simpy"]


def test_a_python_sweep_shows_a_progress_bar_on_a_terminal_only(capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert ProgressBar(stream=Terminal()).enabled
    assert not ProgressBar(stream=io.StringIO()).enabled
    assert not ProgressBar(stream=Terminal(), enabled=False).enabled
    terminal = Terminal()
    bar = ProgressBar(stream=terminal)
    bar.ran, bar.reused = 1, 2
    bar.update(1, 3, "quickstart γ=0.1 ok")
    bar.close()
    assert "sweep" in terminal.getvalue() and "1/5" in terminal.getvalue()
    assert "2 reused, quickstart γ=0.1 ok" in terminal.getvalue()
    # pytest's stderr is not a terminal: no bar by default, one when asked for
    sets = {"topology.dims": [4, 4], "traffic.message_packets": 4, "run.warmup_us": 5,
            "run.measure_us": 20, "run.drain_us": 40}
    icsim.sweep("quickstart", [0.1], overrides=sets)
    assert capsys.readouterr().err == ""
    icsim.sweep("quickstart", [0.1], overrides=sets, progress=True)
    err = capsys.readouterr().err
    assert "sweep: 100%" in err and "1/1" in err


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
