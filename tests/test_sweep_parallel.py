"""Parallel execution: a local process pool and dask.distributed give the rows of a serial
sweep, and speculative parallel climbing finds the same γ*."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from icsim.experiments.pipeline.execution import DaskExecutor, LocalPoolExecutor, SerialExecutor, make_executor
from icsim.experiments.pipeline.curves import make_curves, parse_loads, parse_vary
from icsim.experiments.pipeline.rows import WALL_COLUMNS
from icsim.experiments.pipeline.sweep import run_sweep

GRID = parse_loads("0.1:0.9:0.2")


def curves():
    data = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"message_packets": 4},
            "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}}
    return make_curves(data, GRID, vary=[parse_vary("traffic.pattern=uniform,transpose")])


def rows(path):
    df = pd.read_csv(path / "results.csv").drop(columns=list(WALL_COLUMNS))
    return df.sort_values(["config_hash", "seed"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    outcome = run_sweep(curves(), out, executor=SerialExecutor(), full=True, plots=False,
                        progress=False)
    return out, outcome


@pytest.mark.slow
def test_the_local_pool_gives_the_same_rows_as_a_serial_sweep(serial, tmp_path):
    with LocalPoolExecutor(2) as ex:
        run_sweep(curves(), tmp_path, executor=ex, full=True, plots=False, progress=False)
    pd.testing.assert_frame_equal(rows(tmp_path), rows(serial[0]))


@pytest.mark.slow
def test_dask_gives_the_same_rows_as_local_execution(serial, tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        ex = DaskExecutor(client=client)
        assert ex.slots == 2
        run_sweep(curves(), tmp_path, executor=ex, full=True, plots=False, progress=False)
        ex.close()
        assert client.status == "running"              # a client we were given stays open
    assert len(rows(tmp_path)) == 2 * len(GRID)
    pd.testing.assert_frame_equal(rows(tmp_path), rows(serial[0]))


@pytest.mark.slow
def test_speculative_climbing_in_parallel_finds_the_serial_gamma_star(serial, tmp_path):
    with LocalPoolExecutor(2) as ex:
        parallel = run_sweep(curves(), tmp_path, executor=ex, plots=False, progress=False)
    assert [c.result.gamma_star for c in parallel.curves] == \
        [c.result.gamma_star for c in serial[1].curves]
    assert all(c.result.complete for c in parallel.curves)
    assert parallel.ran < 2 * len(GRID)                 # the stop rule saved runs


def test_the_executor_follows_workers_and_scheduler():
    assert isinstance(make_executor(1), SerialExecutor)
    with make_executor(2) as ex:
        assert isinstance(ex, LocalPoolExecutor) and ex.slots == 2


@pytest.mark.slow
def test_icsim_sweep_runs_on_a_dask_scheduler_address(tmp_path, capsys):
    from distributed import LocalCluster

    from icsim.experiments.cli import main

    quickstart = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"
    with LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                      dashboard_address=None) as cluster:
        rc = main(["sweep", str(quickstart), "--scheduler", cluster.scheduler_address,
                   "--out", str(tmp_path), "--loads", "0.1,0.3", "--no-plots", "--quiet",
                   "--set", "topology.dims=[4,4]", "--set", "traffic.message_packets=4",
                   "--set", "run.warmup_us=5", "--set", "run.measure_us=20",
                   "--set", "run.drain_us=40"])
    assert rc == 0
    assert "(dask, 1 slot)" in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "results.csv")) == 2


def test_a_scheduler_address_with_no_scheduler_is_one_line_and_exit_2(tmp_path, capsys):
    """A malformed address (or, after distributed's 30 s, nobody listening) ended in a
    traceback; before any run, and with nothing written."""
    from icsim.experiments.cli import main

    config = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"
    assert main(["sweep", str(config), "--scheduler", "nonsense", "--out",
                 str(tmp_path / "out"), "--loads", "0.1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["icsim: --scheduler nonsense: no dask scheduler to use there (ValueError: "
                   "missing port number in address 'nonsense')"]
    assert not (tmp_path / "out").exists()


def _square(x: int) -> list[dict]:
    return [{"x": x, "y": x * x}]


def test_a_row_cut_short_by_a_kill_is_run_again_not_taken_as_done(tmp_path, capsys):
    """A reproduction's appended CSV whose last line lost its end: the line was read as a
    finished task with empty fields, and the next row was appended onto it."""
    from icsim.experiments.pipeline.execution import read_appended, run_appending

    path = tmp_path / "runs.csv"
    run_appending([1, 2, 3], _square, path, ["x", "y"], workers=1, progress=False)
    text = path.read_text()
    path.write_text(text[:-3])                           # "3,9\n" cut to "3"
    done = read_appended(path)
    assert list(done.x) == [1, 2] and path.read_text() == "x,y\n1,1\n2,4\n"
    assert "dropped its last line" in capsys.readouterr().err
    run_appending([x for x in (1, 2, 3) if x not in set(done.x)], _square, path, ["x", "y"],
                  workers=1, progress=False)
    assert path.read_text() == text
    path.write_text("x,")                                # nothing but a cut header
    assert read_appended(path).empty and not path.exists()


# ------------------------------------------------------------- workers end with their parent
def _processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, state letter), from /proc."""
    import os

    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
            out[int(entry)] = (int(ppid), state)
    return out


def _descendants(pid: int) -> set[int]:
    table, found, frontier = _processes(), set(), {pid}
    while frontier:
        frontier = {p for p, (ppid, _) in table.items() if ppid in frontier} - found
        found |= frontier
    return found


def _living(pids: set[int]) -> set[int]:
    table = _processes()
    return {p for p in pids if p in table and table[p][1] not in "ZX"}   # zombies have ended


def test_killing_a_sweeps_main_process_ends_its_workers_forkserver_and_resource_tracker(
        tmp_path):
    """``kill -9`` of a running ``icsim sweep --workers 2`` used to leave its forkserver, its two
    workers (each in the middle of a run) and its resource tracker alive, about 590 MB; now
    every process it started ends within seconds of it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from icsim.configs import bundled

    cmd = [sys.executable, "-m", "icsim", "sweep", str(bundled("quickstart.yaml")),
           "--out", str(tmp_path), "--workers", "2", "--loads", "0.1,0.2", "--no-plots",
           "--engine", "simpy", "--set", "topology.dims=[8,8]",
           "--set", "run.measure_us=100000"]             # each run far longer than the test
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        started, deadline = set(), time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            started = _descendants(proc.pid)
            # the forkserver and the resource tracker, and the two workers below the former
            if len(started) >= 4:
                break
            time.sleep(0.1)
        assert len(started) >= 4 and proc.poll() is None, started
        time.sleep(1.0)                       # the workers are in their runs
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 20
        while _living(started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _living(started) == set()
    finally:
        for pid in _living(_descendants(proc.pid) | locals().get("started", set())):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
