"""Sweeps: load grids, the tidy CSV, resuming after an interruption, and `icsim sweep`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from icsim.experiments.cli import main
from icsim.experiments.pipeline.execution import SerialExecutor
from icsim.experiments.pipeline.saturation import load_key
from icsim.experiments.pipeline.curves import make_curves, parse_loads, parse_vary
from icsim.experiments.pipeline.results_file import ResultsFile, SweepError
from icsim.experiments.pipeline.rows import config_hash, curve_hash, row_problem
from icsim.experiments.pipeline.summaries import format_summary
from icsim.experiments.pipeline.sweep import run_sweep
from icsim.model.config import ConfigError, config_from_dict

QUICKSTART = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"


def small(**sections):
    data = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"message_packets": 4},
            "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}}
    data.update(sections)
    return data


# ---------------------------------------------------------------------------------- a fake run
RAN: list[float] = []
INTERRUPT_AFTER: list[int] = []


def counting_run(cfg):
    """Counts the runs actually executed; raises KeyboardInterrupt (a simulated Ctrl-C) when
    INTERRUPT_AFTER runs have been done.  Saturated above γ = 0.5."""
    if INTERRUPT_AFTER and len(RAN) >= INTERRUPT_AFTER[0]:
        raise KeyboardInterrupt
    load = cfg.traffic.load
    RAN.append(load)
    return {"offered_load": load, "mode": cfg.run.mode, "accepted_load": min(load, 0.5),
            "latency_ns": 1000.0 * (1 + load), "saturated": load > 0.5,
            "saturation_reason": "throughput" if load > 0.5 else None,
            "derouted": {"outflank": 0.0, "wraparound": 0.0, "orthant": 0.0, "total": 0.0},
            "seed": cfg.seed, "version": "test", "wall_s": 0.01, "config": cfg.to_dict()}


class TwoAtOnce(SerialExecutor):
    """The serial executor with two runs in flight (the earlier submitted runs first)."""

    def __init__(self) -> None:
        super().__init__()
        self.slots = 2


@pytest.fixture
def fake():
    RAN.clear()
    INTERRUPT_AFTER.clear()
    yield
    RAN.clear()
    INTERRUPT_AFTER.clear()


# ---------------------------------------------------------------------------------- grids
def test_load_grids_include_their_end_and_are_exact():
    assert parse_loads("0.05:1.0:0.05")[-1] == 1.0 and len(parse_loads("0.05:1.0:0.05")) == 20
    assert parse_loads("0.1:0.3:0.1") == [0.1, 0.2, 0.3]
    assert parse_loads("0.3,0.1") == [0.1, 0.3] and parse_loads("0.25") == [0.25]
    for bad in ("0.5:0.1:0.1", "0.1:0.5:0", "a,b", "0.1:0.5", "0,0.1"):
        with pytest.raises(ValueError, match="--loads"):
            parse_loads(bad)
    with pytest.raises(ValueError, match="'0.1:0.2:1e-9' makes a grid of more than 10,000 loads"):
        parse_loads("0.1:0.2:1e-9")


def test_vary_values_are_yaml_and_lists_work():
    assert parse_vary("routing.algorithm=abr,por,ofr") == ("routing.algorithm",
                                                           ["abr", "por", "ofr"])
    assert parse_vary("topology.dims=[4,4],[8,8]") == ("topology.dims", [[4, 4], [8, 8]])
    assert parse_vary("seed=1,2") == ("seed", [1, 2])
    with pytest.raises(ConfigError, match="--loads"):
        parse_vary("traffic.load=0.1,0.2")


def test_several_vary_options_are_crossed_into_curves():
    curves = make_curves(small(), [0.1], ["traffic.message_packets=8"],
                         [parse_vary("traffic.pattern=uniform,transpose"), parse_vary("seed=1,2")])
    assert [c.label for c in curves] == ["traffic.pattern=uniform seed=1",
                                         "traffic.pattern=uniform seed=2",
                                         "traffic.pattern=transpose seed=1",
                                         "traffic.pattern=transpose seed=2"]
    cfg = curves[3].config(0.3)
    assert (cfg.traffic.pattern, cfg.seed, cfg.traffic.load, cfg.traffic.message_packets) == \
        ("transpose", 2, 0.3, 8)


# ---------------------------------------------------------------------------------- the CSV
def test_config_hash_is_stable_ignores_the_seed_and_sees_everything_else():
    a = config_from_dict(small()).to_dict()
    b = config_from_dict(small(seed=7)).to_dict()
    c = config_from_dict(small(link={"latency_ns": 201})).to_dict()
    assert config_hash(a) == config_hash(json.loads(json.dumps(a)))
    assert config_hash(a) == config_hash(b) and config_hash(a) != config_hash(c)
    d = config_from_dict(small(traffic={"message_packets": 4, "load": 0.9})).to_dict()
    assert config_hash(a) != config_hash(d) and curve_hash(a) == curve_hash(d)
    assert curve_hash(a) != curve_hash(b)


def test_each_run_is_one_tidy_row_with_results_config_and_provenance(tmp_path, fake):
    run_sweep(make_curves(small(), [0.1, 0.2]), tmp_path, run_fn=counting_run, plots=False,
              progress=False)
    df = pd.read_csv(tmp_path / "results.csv")
    assert len(df) == 2
    for col in ("curve", "role", "config_hash", "seed", "curve_hash", "offered_load", "status",
                "error", "saturated", "latency_ns", "accepted_load", "derouted.total",
                "derouted.outflank", "version", "git_commit", "started_at", "finished_at",
                "elapsed_s", "wall_s", "config.routing.algorithm", "config.topology.dims",
                "config.traffic.load", "config.run.mode", "config.seed", "config.traffic.params"):
        assert col in df.columns, col
    assert list(df["config.topology.dims"]) == ["[4, 4]"] * 2
    assert list(df["offered_load"]) == list(df["config.traffic.load"]) == [0.1, 0.2]
    assert set(df["status"]) == {"ok"} and df["error"].isna().all()


def test_a_new_column_widens_the_file_without_losing_rows(tmp_path):
    f = ResultsFile(tmp_path / "results.csv")
    f.append({"config_hash": "a", "seed": 1, "latency_ns": 1.5})
    f.append({"config_hash": "b", "seed": 1, "latency_ns": 2.5, "completion_time_ns": 9.0})
    f.append({"config_hash": "c", "seed": 1})
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert [r["config_hash"] for r in rows] == ["a", "b", "c"]
    assert rows[0]["completion_time_ns"] == "" and rows[1]["completion_time_ns"] == "9.0"
    assert set(ResultsFile(tmp_path / "results.csv").load()) == {("a", "1"), ("b", "1"),
                                                                   ("c", "1")}


# ---------------------------------------------------------------------------------- resumption
def test_an_interrupted_sweep_resumes_without_recomputing_finished_points(tmp_path, fake):
    curves = lambda: make_curves(small(), parse_loads("0.1:0.9:0.1"),  # noqa: E731
                                 vary=[parse_vary("traffic.pattern=uniform,transpose")])
    INTERRUPT_AFTER.append(5)                          # Ctrl-C during the 6th run
    with pytest.raises(KeyboardInterrupt):
        run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    first = list(RAN)
    saved = pd.read_csv(tmp_path / "results.csv")      # a valid CSV with every finished point
    assert len(saved) == len(first) == 5

    RAN.clear()
    INTERRUPT_AFTER.clear()
    out = run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert out.reused == 5 and out.ran == len(RAN)
    assert len(first) + len(RAN) == 2 * 7              # 0.1..0.5 sustained, 0.6, 0.7 stop
    df = pd.read_csv(tmp_path / "results.csv")
    assert len(df) == 14 and not df.duplicated(["config_hash", "seed"]).any()
    assert [c.result.gamma_star for c in out.curves] == [0.5, 0.5]

    RAN.clear()                                        # a third time: nothing left to run
    out = run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert RAN == [] and out.reused == 14


def test_a_truncated_last_line_is_dropped_and_its_point_rerun(tmp_path, fake):
    curves = lambda: make_curves(small(), [0.1, 0.2, 0.3])  # noqa: E731
    run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    path = tmp_path / "results.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])   # killed mid-write
    RAN.clear()
    out = run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert RAN == [0.3] and out.reused == 2
    assert len(pd.read_csv(path)) == 3


@pytest.mark.parametrize("cell", ["", "high", "inf", "-0.1"])
def test_a_row_whose_load_is_not_a_load_is_set_aside_and_its_point_rerun(tmp_path, fake, cell):
    """A hand-edited cell where the load should be: the row is moved to results.rejected.csv
    (not lost) and its point run again, where it used to stop the sweep with a traceback."""
    curves = lambda: make_curves(small(), [0.1, 0.2, 0.3])  # noqa: E731
    run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    path = tmp_path / "results.csv"
    header, *rows = list(csv.reader(path.open()))
    damaged = rows[1][:]
    damaged[header.index("offered_load")] = cell
    rows[1] = damaged
    csv.writer(path.open("w"), lineterminator="\n").writerows([header, *rows])
    RAN.clear()
    out = run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert RAN == [0.2] and out.reused == 2
    assert sorted(pd.read_csv(path)["offered_load"]) == [0.1, 0.2, 0.3]
    assert list(csv.reader((tmp_path / "results.rejected.csv").open()))[2] == damaged


@pytest.mark.parametrize("column, cell, reason", [
    ("latency_ns", "abc", "latency_ns 'abc' is not a number"),
    ("saturated", "maybe", "saturated 'maybe' is neither True nor False"),
    ("seed", "-5", "seed '-5' is not a whole number of at least 0"),
    ("accepted_load", "inf", "accepted_load 'inf' is not a number"),
    ("status", "fine", "status 'fine' is neither ok nor error"),
])
def test_a_well_formed_line_with_a_bad_value_is_set_aside_like_a_damaged_one(
        tmp_path, fake, capsys, column, cell, reason):
    """A value that is not what its column holds, inside a line that matches the header:
    `saturated=maybe` was read as sustained, `latency_ns=abc` judged by text; now the line
    goes to results.rejected.csv, the sweep says why, and the point runs again."""
    curves = lambda: make_curves(small(), [0.1, 0.2, 0.3])  # noqa: E731
    run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    path = tmp_path / "results.csv"
    header, *rows = list(csv.reader(path.open()))
    rows[1][header.index(column)] = cell
    csv.writer(path.open("w"), lineterminator="\n").writerows([header, *rows])
    RAN.clear()
    capsys.readouterr()
    out = run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert RAN == [0.2] and out.reused == 2
    assert list(csv.reader((tmp_path / "results.rejected.csv").open()))[2] == rows[1]
    assert f"dropped 1 damaged line(s) of {path} (line 3: {reason}); their points run again" \
        in capsys.readouterr().err
    (tmp_path / "bad").mkdir()                          # the same check when drawing
    csv.writer((tmp_path / "bad" / "results.csv").open("w"), lineterminator="\n").writerows(
        [header, *rows])
    assert main(["plot", str(tmp_path / "bad")]) == 2
    assert capsys.readouterr().err == f"icsim: {tmp_path / 'bad' / 'results.csv'}: row 2: " \
                                      f"{reason}\n"


def test_every_committed_results_row_reads_as_sound():
    """The committed reproductions' rows all pass the check (none would be set aside)."""
    from icsim.experiments.pipeline.results_file import ResultsFile

    root = Path(__file__).resolve().parents[1] / "experiments" / "results"
    files = sorted(root.rglob("results.csv"))
    assert len(files) >= 5
    for path in files:
        header, *rows = list(csv.reader(path.open()))
        assert [row_problem(dict(zip(header, r))) for r in rows] == [None] * len(rows), path
    assert ResultsFile(files[0]).load()


@pytest.mark.slow
def test_a_killed_sweep_process_leaves_a_valid_csv_and_resumes(tmp_path):
    """A real `icsim sweep` in a subprocess, interrupted with SIGINT after it saved two points,
    then run again: the second run reuses every saved point."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "sweep"
    cmd = [sys.executable, "-m", "icsim.experiments.cli", "sweep", str(QUICKSTART), "--out", str(out),
           "--workers", "1", "--loads", "0.05:0.6:0.05", "--no-plots", "--full",
           "--engine", "simpy",                 # slow enough to be caught mid-sweep
           "--set", "topology.dims=[8,8]", "--set", "traffic.message_packets=4",
           "--set", "run.warmup_us=5", "--set", "run.measure_us=150", "--set", "run.drain_us=80"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    # a shell without job control starts background jobs with SIGINT ignored, and Python keeps
    # it ignored: give the child the default disposition, as a terminal would
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    results = out / "results.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 3:   # header + 2 rows
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err
    saved = pd.read_csv(results)
    assert len(saved) >= 2 and not saved.duplicated(["config_hash", "seed"]).any()

    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    summary = [ln for ln in done.stdout.splitlines() if " reused, " in ln][0]
    assert f"{len(saved)} reused" in summary
    final = pd.read_csv(results)
    assert int(summary.split()[0]) == len(final) - len(saved)


# ---------------------------------------------------------------------------------- errors
def test_a_bad_vary_value_stops_the_sweep_before_any_run(tmp_path, fake):
    curves = make_curves(small(), [0.1], vary=[parse_vary("traffic.pattern=uniform,nosuch")])
    with pytest.raises(ConfigError, match="traffic.pattern"):
        run_sweep(curves, tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert RAN == [] and not (tmp_path / "results.csv").exists()


# ---------------------------------------------------------------------------------- the command
FLIP = ["--loads", "0.1:0.7:0.2", "--vary", "routing.algorithm=dor,abr", "--set",
        "topology.dims=[4,4]", "--set", "traffic.pattern=transpose", "--set", "run.measure_us=40"]


def test_a_sweep_notes_a_curve_sustained_above_its_first_saturated_load(tmp_path, capsys):
    # 40 µs of 16-packet messages on 16 nodes: ABR's accepted/offered at 0.1 is 0.945, noise
    # that puts it under the 0.95 line, while 0.3, 0.5 and 0.7 are sustained
    assert main(["sweep", str(QUICKSTART), "--out", str(tmp_path), *FLIP]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: routing.algorithm=abr is saturated at 0.1 (throughput: accepted 0.0968 < 0.95 x "
        "offered 0.1024 (measured)) yet sustained at 0.3, 0.5, 0.7 above it; γ* counts only the "
        "loads below the first saturated one. A verdict that flips back is more often noise than "
        "the network: a longer window (run.measure_us) or more seeds (--seeds) settle it."]
    # a window of 100 µs settles it: no note, and ABR's γ* is the top of the grid, a lower
    # bound
    assert main(["sweep", str(QUICKSTART), "--out", str(tmp_path / "long"), *FLIP, "--set",
                 "run.measure_us=100"]) == 0
    out = capsys.readouterr().out
    assert "note:" not in out
    # γ*, no exact bound for an adaptive routing, no saturated load
    assert next(line for line in out.splitlines() if "abr" in line).split()[1:5] == \
        ["window", "≥0.7", "-", "none"]
    # DOR's exact bound under transpose on 4x4 (icsim analyze), above its γ*
    dor = next(line for line in out.splitlines() if "dor" in line).split()
    assert dor[3] == "0.25" and float(dor[2]) <= 0.25
    summary = pd.read_csv(tmp_path / "long" / "gamma_star.csv").set_index("curve")
    assert summary["gamma_star_lower_bound"].to_dict() == {"routing.algorithm=dor": False,
                                                           "routing.algorithm=abr": True}
    # with seeds, the note names the seed, and γ*'s mean says which seeds it is over
    assert main(["sweep", str(QUICKSTART), "--out", str(tmp_path / "seeds"), *FLIP[:2],
                 "--vary", "routing.algorithm=abr", *FLIP[4:], "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "note: routing.algorithm=abr (seed 1) is saturated at 0.1" in out
    assert next(line for line in out.splitlines() if line.startswith("routing.")).endswith(
        "1: -, 2: ≥0.7  [mean and range over 1 of 2 seeds; the others have no γ*]")


@pytest.mark.slow
def test_icsim_sweep_writes_the_csv_the_summary_and_the_plots(tmp_path, capsys):
    out = tmp_path / "s"
    args = ["sweep", str(QUICKSTART), "--out", str(out), "--workers", "1",
            "--loads", "0.2:0.8:0.2", "--set", "topology.dims=[4,4]",
            "--set", "traffic.message_packets=4", "--set", "run.warmup_us=5",
            "--set", "run.measure_us=20", "--set", "run.drain_us=40"]
    rc = main([*args, "--progress"])
    assert rc == 0
    captured = capsys.readouterr()
    assert "[sweep]" in captured.err and "ETA" in captured.err
    assert "quickstart" in captured.out and "window" in captured.out
    assert f"wrote {out / 'latency.svg'}" in captured.out
    assert f"appended to {out / 'results.csv'}" in captured.out

    # again: every point reused, no progress line when stderr is not a terminal, and the
    # figures and summaries redrawn byte for byte (so they are left untouched)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    for name in ("gamma_star.csv", "verdicts.csv", "latency.png", "latency.svg",
                 "accepted.svg", "accepted.png"):
        assert f"unchanged {out / name}" in captured.out, name
        assert (out / name).read_bytes() == before[name]
    assert "wrote" not in captured.out
    for name in ("results.csv", "gamma_star.csv", "latency.png", "latency.svg", "accepted.png",
                 "accepted.svg"):
        assert (out / name).stat().st_size > 0, name
    assert not (out / "derouted.png").exists()     # DOR declares no deroute kind: no figure
    summary = pd.read_csv(out / "gamma_star.csv")
    df = pd.read_csv(out / "results.csv").sort_values("offered_load")
    first_bad = df[df["saturated"]]["offered_load"].min()
    assert summary["gamma_star"].iloc[0] == pytest.approx(
        df[df["offered_load"] < first_bad]["offered_load"].max())
    assert summary["first_saturated"].iloc[0] == pytest.approx(first_bad)


def test_icsim_sweep_rejects_a_bad_grid_and_a_bad_config(tmp_path, capsys):
    assert main(["sweep", str(QUICKSTART), "--loads", "1:0:0.1", "--out", str(tmp_path)]) == 2
    assert "--loads" in capsys.readouterr().err
    assert main(["sweep", str(QUICKSTART), "--vary", "routing.algorithm=nosuch",
                 "--out", str(tmp_path), "--workers", "1"]) == 2
    assert "routing.algorithm: unknown algorithm" in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()


def test_icsim_sweep_starts_a_bisection_at_its_guess(tmp_path, capsys):
    args = ["sweep", str(QUICKSTART), "--out", str(tmp_path), "--workers", "1",
            "--loads", "0.2:0.8:0.2", "--set", "topology.dims=[4,4]",
            "--set", "traffic.message_packets=4", "--set", "run.warmup_us=5",
            "--set", "run.measure_us=20", "--set", "run.drain_us=40", "--no-plots"]
    assert main([*args, "--guess", "0.6"]) == 2
    assert "--guess: starts a bisecting search: add --search bisect" in capsys.readouterr().err
    assert main([*args, "--search", "bisect", "--guess", "nan"]) == 2
    assert "--guess: must be a finite load" in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()
    assert main([*args, "--search", "bisect", "--guess", "0.61"]) == 0
    assert pd.read_csv(tmp_path / "results.csv")["offered_load"].iloc[0] == 0.6


def test_loads_round_trip_through_the_csv_exactly(tmp_path, fake):
    run_sweep(make_curves(small(), parse_loads("0.05:0.5:0.05")), tmp_path, run_fn=counting_run,
              full=True, plots=False, progress=False)
    loads = pd.read_csv(tmp_path / "results.csv")["offered_load"].tolist()
    assert sorted(load_key(x) for x in loads) == parse_loads("0.05:0.5:0.05")


def test_a_line_that_does_not_match_the_header_is_set_aside_and_its_point_rerun(tmp_path, fake):
    curves = lambda: make_curves(small(), [0.1, 0.2, 0.3])  # noqa: E731
    run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    path = tmp_path / "results.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + "edited,by,hand\n" + "".join(lines[3:]))
    RAN.clear()
    out = run_sweep(curves(), tmp_path, run_fn=counting_run, plots=False, progress=False)
    assert RAN == [0.2] and out.reused == 2
    assert len(pd.read_csv(path)) == 3                 # readable again
    assert "edited,by,hand" in (tmp_path / "results.rejected.csv").read_text()


def test_two_sweeps_never_write_one_file(tmp_path, fake):
    store = ResultsFile(tmp_path / "results.csv")
    with store.lock():
        with pytest.raises(SweepError, match="another sweep"):
            run_sweep(make_curves(small(), [0.1]), tmp_path, run_fn=counting_run, plots=False,
                      progress=False)
    assert RAN == []


def test_a_failing_backend_stops_the_sweep_keeping_finished_points(tmp_path, fake):
    from icsim.experiments.pipeline.execution import SerialExecutor

    class Dying(SerialExecutor):
        def result(self, handle):
            if len(RAN) >= 2:
                raise RuntimeError("worker process died")
            return super().result(handle)

    with pytest.raises(SweepError, match="worker process died.*run again to resume"):
        run_sweep(make_curves(small(), [0.1, 0.2, 0.3, 0.4]), tmp_path, executor=Dying(),
                  run_fn=counting_run, plots=False, progress=False)
    assert len(pd.read_csv(tmp_path / "results.csv")) == 1


def test_verdicts_show_each_run_judged_by_its_curves_rule(tmp_path, fake):
    data = small(run={"mode": "finite", "messages_per_node": 2})
    run_sweep(make_curves(data, [0.2, 0.3, 0.4, 0.45, 0.6]), tmp_path, run_fn=counting_run,
              plots=False, progress=False)
    v = pd.read_csv(tmp_path / "verdicts.csv").set_index("offered_load")
    assert v.loc[0.1, "role"] == "baseline"            # 0.10 run although not on the grid
    assert list(v["sustained"]) == [True, True, True, False, False]   # 0.6 never run
    assert v.loc[0.4, "reason"] == "latency 1400 ns > 1.2 x 1100 ns at γ=0.10"
    assert pd.read_csv(tmp_path / "gamma_star.csv")["gamma_star"].iloc[0] == 0.3


# ---------------------------------------------------------------------------------- seeds
def seeded_run(cfg):
    """Saturated above 0.3 + 0.1 (seed - 1): γ* 0.3, 0.4, 0.5 for seeds 1, 2, 3."""
    load, seed = cfg.traffic.load, cfg.seed
    RAN.append((load, seed))
    limit = 0.3 + 0.1 * (seed - 1) + 1e-9
    return {"offered_load": load, "mode": cfg.run.mode,
            "accepted_load": min(load, limit) - 0.001 * seed,
            "latency_ns": 1000.0 * (1 + load) + 10 * seed, "saturated": load > limit,
            "saturation_reason": "throughput" if load > limit else None,
            "derouted": {"outflank": 0.0, "wraparound": 0.0, "orthant": 0.0, "total": 0.0},
            "seed": seed, "version": "test", "wall_s": 0.01, "config": cfg.to_dict()}


def test_seeds_make_one_curve_per_seed_from_the_configs_seed():
    curves = make_curves(small(seed=5), [0.1], vary=[parse_vary("routing.algorithm=dor,abr")],
                         seeds=3)
    assert [(c.label, c.seed) for c in curves] == [
        ("routing.algorithm=dor", 5), ("routing.algorithm=dor", 6), ("routing.algorithm=dor", 7),
        ("routing.algorithm=abr", 5), ("routing.algorithm=abr", 6), ("routing.algorithm=abr", 7)]
    assert curves[2].config(0.2).seed == 7
    with pytest.raises(ConfigError, match="--seeds"):
        make_curves(small(), [0.1], vary=[parse_vary("seed=1,2")], seeds=2)


@pytest.mark.parametrize("search", ["climb", "bisect"])
def test_every_load_is_run_with_every_seed_and_gamma_star_is_judged_per_seed(tmp_path, fake,
                                                                             search):
    grid = parse_loads("0.1:0.8:0.1")
    out = run_sweep(make_curves(small(), grid, seeds=3), tmp_path, run_fn=seeded_run,
                    plots=False, progress=False, search=search)
    assert [o.result.gamma_star for o in out.curves] == [0.3, 0.4, 0.5]
    df = pd.read_csv(tmp_path / "results.csv")
    per_load = df.groupby("offered_load")["seed"].apply(lambda s: sorted(s))
    assert all(seeds == [1, 2, 3] for seeds in per_load)          # every load, every seed
    assert not df.duplicated(["config_hash", "seed"]).any()
    if search == "climb":
        assert list(per_load.index) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]   # seed 3 stops

    summary = pd.read_csv(tmp_path / "gamma_star.csv")
    assert list(summary["seed"]) == [1, 2, 3]
    assert list(summary["gamma_star"]) == [0.3, 0.4, 0.5]
    assert list(summary["gamma_star_mean"]) == pytest.approx([0.4] * 3)
    assert list(summary["gamma_star_sd"]) == pytest.approx([0.1] * 3)
    assert (summary["gamma_star_min"] == 0.3).all() and (summary["gamma_star_max"] == 0.5).all()

    loads = pd.read_csv(tmp_path / "load_summary.csv").set_index("offered_load")
    at = loads.loc[0.4]
    assert (at["seeds"], at["sustained_seeds"]) == (3, 2)           # seed 1 saturated there
    assert at["latency_ns_mean"] == pytest.approx(1400 + 20)
    assert at["latency_ns_ci95"] == pytest.approx(4.302653 * 10 / 3 ** 0.5, rel=1e-6)
    assert at["accepted_load_mean"] == pytest.approx((0.3 + 0.4 + 0.4) / 3 - 0.002)


def test_a_multi_seed_sweep_resumes_without_rerunning(tmp_path, fake):
    curves = lambda: make_curves(small(), parse_loads("0.1:0.8:0.1"), seeds=2)  # noqa: E731
    run_sweep(curves(), tmp_path, run_fn=seeded_run, plots=False, progress=False)
    first = len(RAN)
    RAN.clear()
    out = run_sweep(curves(), tmp_path, run_fn=seeded_run, plots=False, progress=False)
    assert RAN == [] and out.reused == first


def test_the_summary_prints_full_curve_names_and_the_spread_over_seeds(tmp_path, fake):
    vary = [parse_vary("routing.algorithm=dor"), parse_vary("traffic.message_packets=4,5"),
            parse_vary("router.queue_packets=8")]
    out = run_sweep(make_curves(small(), [0.1, 0.2, 0.3, 0.4, 0.5], vary=vary), tmp_path,
                    run_fn=counting_run, plots=False, progress=False)
    text = format_summary(out.curves)
    names = ["routing.algorithm=dor traffic.message_packets=4 router.queue_packets=8",
             "routing.algorithm=dor traffic.message_packets=5 router.queue_packets=8"]
    assert len(names[0]) > 40
    for name in names:
        assert any(line.startswith(name + " ") for line in text.splitlines()), text

    out = run_sweep(make_curves(small(), parse_loads("0.1:0.8:0.1"), seeds=3),
                    tmp_path / "seeds", run_fn=seeded_run, plots=False, progress=False)
    [header, line] = format_summary(out.curves).splitlines()
    assert "γ* mean" in header
    assert line.split()[:5] == ["base", "window", "3", "0.40", "0.3–0.5"]
    assert line.endswith("1: 0.3, 2: 0.4, 3: 0.5")


def test_a_gamma_star_at_the_top_of_its_grid_is_reported_as_a_lower_bound(tmp_path, fake):
    """Seeds 2 and 3 sustain every load up to 0.4, the top of the grid: their γ* is a lower
    bound, flagged in gamma_star.csv and printed "≥" (per seed, and so for the mean), as the
    figure's legend says "γ* ≥ 0.40"; a sweep whose curves all saturate on their grid has no
    flag column."""
    out = run_sweep(make_curves(small(), parse_loads("0.1:0.4:0.1"), seeds=3), tmp_path,
                    run_fn=seeded_run, plots=False, progress=False)
    summary = pd.read_csv(tmp_path / "gamma_star.csv")
    assert list(summary["gamma_star"]) == [0.3, 0.4, 0.4]
    assert list(summary["gamma_star_lower_bound"]) == [False, True, True]
    assert list(summary.columns[3:6]) == ["gamma_star", "gamma_star_lower_bound",
                                          "gamma_star_refined"]
    [_, line] = format_summary(out.curves).splitlines()
    assert line.split()[3:5] == ["≥0.37", "0.3–≥0.4"]       # the mean at the grid's precision
    assert line.endswith("1: 0.3, 2: ≥0.4, 3: ≥0.4")

    out = run_sweep(make_curves(small(), [0.2, 0.4, 0.6, 0.8]), tmp_path / "saturating",
                    run_fn=counting_run, plots=False, progress=False)
    assert "gamma_star_lower_bound" not in pd.read_csv(tmp_path / "saturating" /
                                                       "gamma_star.csv")
    # γ* and the first saturated load; no "refined" column without refinement
    [header, line] = format_summary(out.curves).splitlines()
    # and DOR's exact bound under uniform traffic on 4x4 (icsim analyze) beside it
    assert "refined" not in header and line.split()[2:5] == ["0.4", "0.625", "0.6"]


@pytest.mark.parametrize("config, workload, instead", [
    ("examples/angara_alltoall_sssp", "a collective (alltoall, run to completion)",
     "traffic.collective, traffic.message_bytes, traffic.interleave, traffic.nodes or the "
     "routing"),
    ("examples/trace_replay", "a trace replay", "traffic.trace, the topology or the routing"),
])
def test_a_load_sweep_of_a_workload_without_a_load_is_refused(config, workload, instead,
                                                               tmp_path, capsys):
    """`icsim sweep examples/angara_alltoall_sssp --loads 0.1,0.5` ran the same exchange twice
    and reported γ* = 0.5: now one line names what the runs depend on instead, before any run
    (nothing written, no worker started)."""
    out = tmp_path / "out"
    assert main(["sweep", config, "--loads", "0.1,0.5", "--out", str(out)]) == 2
    [err] = capsys.readouterr().err.splitlines()
    assert err.startswith(f"icsim: config error: traffic.workload: {workload} is the same run "
                          f"at every traffic.load: a load sweep would repeat it and has no γ* "
                          f"to find; compare its completion time with icsim run, varying "
                          f"{instead}"), err
    assert not out.exists()


def test_a_sweep_refuses_a_varied_curve_without_a_load_in_python_too(fake, tmp_path):
    import icsim

    vary = [parse_vary("traffic.workload=open,collective")]
    with pytest.raises(ConfigError, match="^traffic.workload: a collective"):
        run_sweep(make_curves(small(), [0.1, 0.2], vary=vary), tmp_path, run_fn=counting_run)
    assert RAN == [] and not (tmp_path / "results.csv").exists()
    with pytest.raises(ConfigError, match="^traffic.workload: a collective"):
        icsim.sweep("examples/angara_alltoall_sssp", "0.1,0.5")


# ---------------------------------------------------------------------------------- schema growth
def test_stored_results_still_match_after_the_schema_gains_a_defaulted_key(tmp_path,
                                                                            monkeypatch):
    """A real small sweep writes results.csv; then the config schema gains a key with a
    default (a subclass of the schema, as a later version of icsim would have): every stored
    point is found again by its key and reused, and γ* is unchanged."""
    from icsim.model import config as config_module

    curves = lambda: make_curves(small(), [0.1, 0.3, 0.5, 0.7],  # noqa: E731
                                 vary=[parse_vary("routing.algorithm=dor,abr")])
    first = run_sweep(curves(), tmp_path, plots=False, progress=False, full=True)
    assert first.ran == 8
    summary = (tmp_path / "gamma_star.csv").read_text()

    class GrownRouter(config_module.RouterConfig):
        credit_delay_cycles: int = 0                       # the new key, with its default

    class GrownConfig(config_module.Config):
        router: GrownRouter = GrownRouter()

    import sys

    schema = config_module.Config
    for module in list(sys.modules.values()):       # every module that names the schema
        if getattr(module, "Config", None) is schema:
            monkeypatch.setattr(module, "Config", GrownConfig)
    grown = curves()[0].config(0.3).to_dict()
    assert grown["router"]["credit_delay_cycles"] == 0   # the new schema is the one in use

    def must_not_run(cfg):
        raise AssertionError(f"ran {cfg.traffic.load} again")

    again = run_sweep(curves(), tmp_path, run_fn=must_not_run, plots=False, progress=False,
                      full=True)
    assert (again.ran, again.reused) == (0, 8)
    assert [o.result.gamma_star for o in again.curves] == \
        [o.result.gamma_star for o in first.curves]
    assert (tmp_path / "gamma_star.csv").read_text() == summary
    rows = pd.read_csv(tmp_path / "results.csv")
    assert len(rows) == 8 and "config.router.credit_delay_cycles" not in rows.columns


# ------------------------------------------------------- finite mode: stopping above the limit
def test_a_finite_sweep_stops_saturated_runs_and_finds_the_same_gamma_star(tmp_path):
    """Under run.stop_when_saturated every run after the γ 0.10 baseline carries the curve's
    limit (1.2 x the baseline's latency) and stops once it is certain to exceed it: γ* and
    every verdict are those of the sweep without the option, the runs it stopped cost fewer
    packet-hops, and a second sweep reuses every run."""
    from icsim.configs import bundled
    from icsim.model.config import load_config

    data = load_config(bundled("ofr", "reference", "k8.yaml"), [
        "topology.dims=[4,4,4]", "traffic.pattern=transpose3d", "routing.algorithm=abr",
        "traffic.message_packets=8", "run.messages_per_node=3", "run.engine=simpy"]).to_dict()
    grid = [0.3, 0.6, 0.9, 1.2]
    plain = run_sweep(make_curves(data, grid), tmp_path / "plain", plots=False, progress=False)
    stop = make_curves(data, grid, overrides=["run.stop_when_saturated=true"])
    early = run_sweep(stop, tmp_path / "early", plots=False, progress=False)
    a, b = plain.curves[0].result, early.curves[0].result
    assert b.gamma_star == a.gamma_star and b.gamma_star is not None and b.first_saturated
    assert {k: v.sustained for k, v in b.verdicts.items()} == \
        {k: v.sustained for k, v in a.verdicts.items()}
    rows = pd.read_csv(tmp_path / "early" / "results.csv").set_index("offered_load")
    full = pd.read_csv(tmp_path / "plain" / "results.csv").set_index("offered_load")
    limit = 1.2 * rows.loc[0.1, "latency_ns"]
    assert pd.isna(rows.loc[0.1, "config.run.latency_limit_ns"])
    assert (rows.drop(index=0.1)["config.run.latency_limit_ns"] == limit).all()
    stopped = rows[rows["saturation_reason"].fillna("").str.startswith("latency: ")]
    assert len(stopped) >= 1 and (full.loc[stopped.index, "latency_ns"] > limit).all()
    assert (stopped["packet_hops"] < full.loc[stopped.index, "packet_hops"]).all()
    assert rows["curve_hash"].nunique() == 1
    again = run_sweep(stop, tmp_path / "early", plots=False, progress=False)
    assert again.ran == 0 and again.curves[0].result.gamma_star == b.gamma_star

    # two runs in flight: the first grid load starts beside the baseline, without a limit;
    # resuming serially reuses it all the same
    side = run_sweep(stop, tmp_path / "side", executor=TwoAtOnce(), plots=False,
                     progress=False)
    limits = pd.read_csv(tmp_path / "side" / "results.csv").set_index("offered_load")[
        "config.run.latency_limit_ns"]
    assert limits[[0.1, 0.3]].isna().all() and (limits.drop(index=[0.1, 0.3]) == limit).all()
    assert side.curves[0].result.gamma_star == a.gamma_star
    resumed = run_sweep(stop, tmp_path / "side", plots=False, progress=False)
    assert resumed.ran == 0 and resumed.curves[0].result.gamma_star == a.gamma_star


# ------------------------------------------------------------------ which curve runs next
def test_every_curves_first_run_starts_before_any_curves_second(tmp_path, fake):
    """Two slots, three bisecting finite-mode curves: the slots go to the least advanced
    curves, so the three baselines (which each curve's later runs wait for) run first, and
    the curves' chains then advance side by side (no curve runs its whole chain alone at the
    end).  The order of the curves' first three runs is the order they were given."""
    order: list[tuple[int, float]] = []

    def run(cfg):
        order.append((cfg.traffic.message_packets, cfg.traffic.load))
        return counting_run(cfg)

    curves = make_curves(small(run={"mode": "finite", "messages_per_node": 2}),
                         parse_loads("0.1:0.8:0.1"),
                         vary=[parse_vary("traffic.message_packets=4,5,6")])
    out = run_sweep(curves, tmp_path, executor=TwoAtOnce(), run_fn=run, search="bisect",
                    plots=False, progress=False)
    assert order[:3] == [(4, 0.1), (5, 0.1), (6, 0.1)]
    runs_before = [sum(1 for m, _ in order[:i] if m == order[i][0]) for i in range(len(order))]
    assert runs_before == sorted(runs_before)           # the curves advance level by level
    assert [o.result.gamma_star for o in out.curves] == [0.3, 0.3, 0.3]   # 1.2 x 1100 ns


def test_a_value_listed_twice_is_one_curve_and_a_key_varied_twice_is_an_error():
    """--vary routing.algorithm=dor,dor made the same curve twice (its rows reused by the
    copy), and two --vary of one key made copies of the last value's curve."""
    curves = make_curves(small(), [0.1], vary=[("routing.algorithm", ["dor", "abr", "dor"])])
    assert [c.label for c in curves] == ["routing.algorithm=dor", "routing.algorithm=abr"]
    with pytest.raises(ConfigError, match="routing.algorithm varied twice"):
        make_curves(small(), [0.1], vary=[("routing.algorithm", ["dor"]),
                                          ("routing.algorithm", ["abr"])])
