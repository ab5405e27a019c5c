"""Arguments of the command line and the Python API that ended in a traceback, runaway memory or
a wrong reading (issue 48, "Limits still open"): each is now one line naming the argument, exit
status 2 on the command line, before anything is built.  (A named pipe as a file:
``test_hostile_files.py``; a killed sweep's workers: ``test_sweep_parallel.py``.)"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import icsim
from icsim.configs import bundled
from icsim.experiments.cli import main
from icsim.experiments.pipeline.arguments import MAX_SWEEP_RUNS, check_loads
from icsim.model.config import ConfigError, load_config

QUICKSTART = str(bundled("quickstart.yaml"))
#: a run of a fraction of a second
TINY = ["--set", "topology.dims=[4,4]", "--set", "run.warmup_us=2", "--set", "run.measure_us=5",
        "--set", "run.drain_us=20"]


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


# ---------------------------------------------------------------------------------- --loads nan
@pytest.mark.parametrize("loads", ["nan", "0.1,nan", "inf", "0.1:nan:0.1", "-inf:1:0.5", "snan",
                                   "1e400"])
def test_a_load_that_is_not_a_finite_number_is_the_loads_error(capsys, loads):
    assert main(["sweep", QUICKSTART, f"--loads={loads}", "--no-plots"]) == 2
    assert one_line(capsys).startswith("icsim sweep: --loads: loads must be finite numbers, got ")


def test_a_load_that_rounds_to_zero_is_not_a_load(capsys):
    assert main(["sweep", QUICKSTART, "--loads", "1e-400", "--no-plots"]) == 2
    assert one_line(capsys) == "icsim sweep: --loads: loads must be positive, got '1e-400'"


@pytest.mark.parametrize("loads, error, message", [
    ("nan", ValueError, "loads: loads must be finite numbers, got 'nan' in 'nan'"),
    ([float("nan")], ValueError, "loads: every load is a finite number above 0, got nan"),
    ([0.1, math.inf], ValueError, "loads: every load is a finite number above 0, got inf"),
    ([], ValueError, "loads: no loads given; give a grid ('0.1:0.5:0.1'), a load or a list of "
                     "loads"),                                          # an IndexError before
    ([0.1, "0.2"], TypeError, "loads: every load is a number, got '0.2' (str)"),
    ([True], TypeError, "loads: every load is a number, got True (bool)"),
    ({"a": 0.1}, TypeError, "loads: a grid ('0.1:0.5:0.1'), a load or a list of loads, got "
                            "{'a': 0.1} (dict)"),
])
def test_the_apis_loads_are_checked_at_the_door(loads, error, message):
    with pytest.raises(error) as err:
        icsim.sweep("quickstart", loads)
    assert str(err.value) == message


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-3, 3)
                | st.booleans() | st.text(max_size=3) | st.none(), max_size=5))
@settings(max_examples=200, deadline=None)
def test_any_list_of_loads_is_a_grid_of_finite_positive_floats_or_one_clear_error(loads):
    try:
        grid = check_loads(loads)
    except (TypeError, ValueError) as err:
        assert str(err).startswith("loads: ") and "\n" not in str(err)
    else:
        assert grid == sorted(set(grid)) and grid
        assert all(type(x) is float and math.isfinite(x) and x > 0 for x in grid)


# ---------------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("seeds, error, message", [
    ("3", TypeError, "seeds: a whole number (1 or more), got '3' (str)"),   # '<' of str and int
    (True, TypeError, "seeds: a whole number (1 or more), got True (bool)"),   # taken as 1
    (2.0, TypeError, "seeds: a whole number (1 or more), got 2.0 (float)"),
    (0, ValueError, "seeds: at least 1, got 0"),
    (10 ** 9, ValueError, f"seeds: 1 load x 1,000,000,000 seeds make 1,000,000,000 runs, more "
                          f"than the limit of {MAX_SWEEP_RUNS:,} runs of one sweep"),
])
def test_the_apis_seeds_are_a_whole_number_within_the_limit(seeds, error, message):
    with pytest.raises(error) as err:
        icsim.sweep("quickstart", [0.1], seeds=seeds)
    assert str(err.value) == message


def test_the_apis_workers_are_a_whole_number():
    with pytest.raises(TypeError, match=r"^workers: a whole number \(1 or more\), got '2'"):
        icsim.sweep("quickstart", [0.1], workers="2")


def test_a_billion_seeds_are_refused_before_a_curve_is_made(capsys, monkeypatch):
    """``--seeds 1000000000`` made a billion curves (past 6 GB) before running anything."""
    def made(*args, **kw):
        raise AssertionError("the curves were made")
    monkeypatch.setattr("icsim.experiments.cli.make_curves", made)
    assert main(["sweep", QUICKSTART, "--seeds", "1000000000", "--no-plots"]) == 2
    assert one_line(capsys) == (
        f"icsim sweep: --seeds: 20 loads x 1,000,000,000 seeds make 20,000,000,000 runs, more "
        f"than the limit of {MAX_SWEEP_RUNS:,} runs of one sweep")


def test_a_vary_product_beyond_the_limit_names_vary(capsys):
    values = ",".join(map(str, range(400)))
    assert main(["sweep", QUICKSTART, "--vary", f"seed={values}", "--vary",
                 f"packet.size_bytes={','.join(str(v + 1) for v in range(400))}",
                 "--loads", "0.1", "--no-plots"]) == 2
    assert one_line(capsys).startswith("icsim sweep: --vary: 1 load x 160,000 combinations of "
                                       "varied values make 160,000 runs")


def _limited(limit_bytes: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    return limit


@pytest.mark.parametrize("args", [
    ["sweep", QUICKSTART, "--seeds", "1000000000", "--no-plots"],
    ["tables", "--dims", "1000", "1000", "1000"],
    ["tables", "--dims", "1000", "1000", "1000", "--nodes", "8"],
])
def test_what_ran_away_past_6_gb_is_refused_within_1_gb(args, tmp_path):
    """In a process that may not take more than 1 GB, a runaway would end in a MemoryError
    (exit 1, a traceback); these end with the one line and exit 2."""
    p = subprocess.run([sys.executable, "-m", "icsim", *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120,
                       preexec_fn=_limited(1 << 30))
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr[-2000:]
    assert "more than the limit" in p.stderr or "GB available" in p.stderr


def test_a_table_of_a_few_nodes_on_a_torus_too_big_for_its_routing_graph_is_refused(capsys):
    assert main(["tables", "--dims", "1000", "1000", "1000", "--nodes", "8"]) == 2
    assert one_line(capsys).startswith("icsim tables: a table of 8 nodes on a torus of "
                                       "1,000,000,000 nodes needs about 27,000")


# ---------------------------------------------------------------------------------- overrides
@pytest.mark.parametrize("overrides, error, message", [
    ({5: 0.3}, TypeError, "overrides: keys are dotted config keys such as 'traffic.load', got 5 "
                          "(int)"),                   # 'int' object is not subscriptable
    ({"traffic..load": 0.3}, ValueError, "overrides: 'traffic..load' is not a dotted config key "
                                         "such as 'traffic.load'"),
])
def test_the_apis_override_keys_are_dotted_config_keys(overrides, error, message):
    with pytest.raises(error) as err:
        icsim.run("quickstart", overrides)
    assert str(err.value) == message


# ---------------------------------------------------------------------------------- YAML 1.2
@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_load_in_exponent_notation_is_a_number(capsys, engine):
    """``--set traffic.load=5e-1`` was refused: PyYAML reads YAML 1.1, where 5e-1 is text."""
    assert main(["run", QUICKSTART, "--json", "--engine", engine, *TINY,
                 "--set", "traffic.load=5e-1"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["offered_load"] == 0.5 and r["config"]["traffic"]["load"] == 0.5
    assert r["engine"] == engine and r["packets_delivered"] > 0


@pytest.mark.parametrize("text, value", [("5e-1", 0.5), ("1.0e3", 1000.0), ("2E+2", 200.0),
                                         ("-3e-2", -0.03), (".5e1", 5.0), ("5", 5),
                                         ("0.25", 0.25), ("5e", "5e"), ("e5", "e5")])
def test_config_files_and_overrides_read_numbers_as_yaml_1_2_does(tmp_path, text, value):
    path = tmp_path / "c.yaml"
    path.write_text(f"topology: {{dims: [4]}}\ntraffic: {{pattern: {text}}}\n")
    from icsim.model.config import parse_override, read_config_file
    assert read_config_file(path)["traffic"]["pattern"] == value
    assert parse_override(f"traffic.pattern={text}") == (["traffic", "pattern"], value)


def test_an_exponent_in_a_config_file_is_a_load():
    cfg = load_config(QUICKSTART, ["traffic.load=2.5e-1", "run.measure_us=1e2"])
    assert cfg.traffic.load == 0.25 and cfg.run.measure_us == 100.0
    with pytest.raises(ConfigError, match="packet.size_bytes"):        # still no float bytes
        load_config(QUICKSTART, ["packet.size_bytes=5e2"])


# ---------------------------------------------------------------- issue 57's lesser items
@pytest.mark.parametrize("config, override, line", [
    ("families/dragonfly_1056.yaml", "topology.dims=[4,4]",
     "icsim: config error: topology.dims: not a key of a dragonfly topology (it belongs to "
     "torus and hyperx; a dragonfly takes a, arrangement, g, h, p)"),
    ("families/hyperx.yaml", "topology.wrap=[false,false]",
     "icsim: config error: topology.wrap: not a key of a hyperx topology (it belongs to torus; "
     "a hyperx takes dims, p, trunking)"),
])
def test_a_key_of_another_topology_kind_is_refused_naming_it(capsys, config, override, line):
    """docs/config.md says each kind takes only its own keys; a dragonfly's dims and a
    HyperX's wrap were silently ignored."""
    assert main(["run", str(bundled(config)), "--set", override]) == 2
    assert one_line(capsys) == line


def test_overriding_the_kind_drops_the_keys_of_the_kind_it_replaces():
    """The quickstart's torus dims do not stand in the way of --set topology.kind=..."""
    cfg = load_config(QUICKSTART, ["topology.kind=random_regular", "topology.nodes=16",
                                   "topology.degree=3"])
    assert cfg.topology.kind == "random_regular" and cfg.topology.dims is None
    cfg = load_config(QUICKSTART, ["topology.kind=hyperx"])            # both take dims
    assert cfg.topology.dims == (4, 4, 4)


@pytest.mark.parametrize("vary, line", [
    ({"traffic.load": [0.1, 0.2]}, "vary: vary the load with loads"),    # ran one row
    ({"routing.algorithm": []}, "routing.algorithm: no values to vary over"),
    ({3: ["dor"]}, "vary: keys are dotted config keys such as 'routing.algorithm', got 3"),
])
def test_the_apis_vary_is_checked_before_anything_is_written(tmp_path, vary, line):
    with pytest.raises(ConfigError) as caught:
        icsim.sweep(QUICKSTART, "0.1", vary=vary, out=tmp_path / "out")
    assert str(caught.value) == line
    assert not (tmp_path / "out").exists()             # empty files were written first


def test_numpy_numbers_are_whole_numbers_and_numbers_to_the_api():
    import numpy as np

    r = icsim.run(QUICKSTART, {"topology.dims": np.array([4, 4]), "seed": np.int32(3),
                               "traffic.message_packets": np.int64(2),
                               "traffic.load": np.float32(0.25), "run.measure_us": 5})
    assert r["config"]["topology"]["dims"] == [4, 4] and r["config"]["seed"] == 3


@pytest.mark.parametrize("call, line", [
    (lambda: icsim.run(QUICKSTART, progress="no"), "progress: True or False, got 'no' (str)"),
    (lambda: icsim.sweep(QUICKSTART, "0.1", plots="no"),
     "plots: True or False (or None), got 'no' (str)"),
    (lambda: icsim.sweep(QUICKSTART, "0.1", progress=1),
     "progress: True or False (or None), got 1 (int)"),
    (lambda: icsim.analyze(QUICKSTART, worst_case="no"),
     "worst_case: True or False, got 'no' (str)"),
])
def test_an_api_flag_is_true_or_false_not_text_taken_as_true(call, line):
    with pytest.raises(TypeError) as caught:
        call()
    assert str(caught.value) == line


def test_an_apis_out_that_is_a_file_is_one_line(tmp_path):
    """It raised FileExistsError from deep inside, after the runs."""
    path = tmp_path / "a_file"
    path.write_text("x")
    for out, what in ((path, "is a file"), (path / "below", "is below a file")):
        with pytest.raises(ValueError) as caught:
            icsim.sweep(QUICKSTART, "0.1", out=out)
        assert str(caught.value) == f"out: {out} {what}, not a folder"


def test_an_integer_limit_is_printed_as_an_integer(capsys):
    assert main(["run", QUICKSTART, "--set", "traffic.message_packets=100000000"]) == 2
    assert one_line(capsys) == ("icsim: config error: traffic.message_packets: expected a "
                                "number <= 1,048,576, got 100000000")       # 1.04858e+06


def test_a_full_disk_names_the_file_and_a_cut_line_is_moved_to_the_rejected_file(
        tmp_path, monkeypatch, capsys):
    """A write that fails for want of space (ENOSPC names no file) is one line naming the
    file; the line it cut short is set aside in results.rejected.csv on the next sweep, as
    docs/commands.md says (it was dropped), and its point runs again."""
    import errno
    import os

    out = tmp_path / "sweep"
    argv = ["sweep", QUICKSTART, "--loads", "0.1,0.2", "--no-plots", "--out", str(out), *TINY]
    real = os.fsync
    writes = []

    def full(fd):                            # the second row's write reaches a full disk
        writes.append(fd)
        if len(writes) == 2:
            os.ftruncate(fd, os.fstat(fd).st_size - 7)      # the line's end never made it
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(os, "fsync", full)
    assert main(argv) == 2
    assert one_line(capsys) == f"icsim: {out / 'results.csv'}: No space left on device"
    monkeypatch.setattr(os, "fsync", real)
    cut = (out / "results.csv").read_text().splitlines()[-1]
    assert main(argv) == 0
    rejected = (out / "results.rejected.csv").read_text().splitlines()
    assert rejected[0].startswith("# damaged lines of results.csv (cut short") and \
        rejected[-1] == cut
    assert len((out / "results.csv").read_text().splitlines()) == 3   # header and two rows


@pytest.mark.parametrize("argv, delays", [
    (["run", "quickstart"], (0.1, 0.4, 1.0)),
    (["sweep", "quickstart", "--loads", "0.1,0.2", "--workers", "2", "--no-plots"],
     (0.1, 0.6, 1.2))])
def test_ctrl_c_in_the_first_seconds_is_one_line(tmp_path, argv, delays):
    """Ctrl-C as a terminal sends it (to the whole process group) while icsim starts, imports,
    builds or starts its workers and their forkserver: "icsim: interrupted" (or the sweep's
    line saying where its points are), exit status 130 -- no KeyboardInterrupt traceback from
    the command or a worker (a SemLock traceback from a pool's start)."""
    import os
    import signal
    import time
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for delay in delays:
        out = ["--out", str(tmp_path / f"sweep{delay}")] if argv[0] == "sweep" else []
        proc = subprocess.Popen([sys.executable, "-m", "icsim.experiments.cli", *argv, *out],
                                cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                 signal.SIG_DFL))
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        lines = err.strip().splitlines()
        if proc.returncode == 0:             # finished before the Ctrl-C: nothing to say
            continue
        assert proc.returncode == 130 and len(lines) == 1, (delay, proc.returncode, err)
        assert "interrupted" in lines[0] and "Traceback" not in err
