"""The command line: `icsim run`, errors that name the key path, `icsim bench`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icsim.experiments.cli import main

QUICKSTART = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"
REQUIRED = ("offered_load", "accepted_load", "latency_ns", "latency_p99_ns", "network_latency_ns",
            "hops", "packets_measured", "packets_delivered", "saturated", "derouted",
            "sim_time_ns", "wall_s", "events", "seed", "config")


def test_run_json_has_every_field_of_the_spec(capsys):
    assert main(["run", str(QUICKSTART), "--json", "--set", "run.measure_us=20",
                 "--set", "run.warmup_us=5"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in REQUIRED:
        assert key in out, key
    assert out["config"]["run"]["measure_us"] == 20
    assert out["config"]["topology"]["dims"] == [4, 4, 4]


@pytest.mark.parametrize("table, says", [
    ({"generator": "sssp", "layers": "lash"},
     "torus 4x4 table (sssp, lash layers) uniform load 0.200"),
    ({"generator": "bfs"}, "torus 4x4 table (bfs) uniform load 0.200"),
])
def test_run_says_where_a_table_comes_from_and_its_layers(capsys, table, says):
    sets = [f"routing.table.{key}={value}" for key, value in table.items()]
    assert main(["run", str(QUICKSTART), "--set", "topology.dims=[4,4]", "--set",
                 "routing.algorithm=table", "--set", "traffic.load=0.2", "--set",
                 "run.measure_us=10", *[a for s in sets for a in ("--set", s)]]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(says + " (window mode")


@pytest.mark.parametrize("override,path", [
    ("traffic.colour=red", "traffic.colour"),
    ("routing.algorithm=dorr", "routing.algorithm"),
    ("link.bandwidth_gbps=-20", "link.bandwidth_gbps"),
    ("topology.dims=[4,0,4]", "topology.dims.1"),
    ("traffic.pattern=transpose", "traffic.pattern"),          # 64 nodes is square: ok below
])
def test_a_bad_config_exits_non_zero_with_one_line_naming_the_key(capsys, override, path):
    extra = ["--set", "topology.dims=[4,2,4]"] if path == "traffic.pattern" else []
    rc = main(["run", str(QUICKSTART), "--set", override, *extra])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1
    assert err.startswith(f"icsim: config error: {path}:")


def test_an_unknown_algorithm_lists_the_valid_ones(capsys):
    assert main(["run", str(QUICKSTART), "--set", "routing.algorithm=ofx"]) == 2
    err = capsys.readouterr().err
    assert "unknown algorithm 'ofx'" in err and "valid: " in err and "dor" in err


def test_bench_runs_both_engines_on_the_same_work_and_gives_their_ratio(capsys):
    case = "8x8x8-dor-uniform-0.3"
    assert main(["bench", "--json", "--quick", "--case", case]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["case"] == "warm-start" and rows[0]["wall_s"] > 0
    by = {r["engine"]: r for r in rows if r["case"] == case}
    assert set(by) == {"simpy", "compiled", "compiled/simpy"}
    simpy, compiled = by["simpy"], by["compiled"]
    assert simpy["packet_hops"] == compiled["packet_hops"] > 0     # the same packets, both
    assert simpy["sim_time_ns"] == compiled["sim_time_ns"]
    for r in (simpy, compiled):
        assert r["packet_hops_per_s"] == pytest.approx(r["packet_hops"] / r["wall_s"])
    assert by["compiled/simpy"]["ratio"] == pytest.approx(
        compiled["packet_hops_per_s"] / simpy["packet_hops_per_s"])


def test_bench_repeat_reports_the_median_of_runs_doing_the_same_work(capsys):
    case = "8x8x8-dor-uniform-0.3"
    assert main(["bench", "--json", "--quick", "--case", case, "--engine", "compiled",
                 "--repeat", "3"]) == 0
    (row,) = [r for r in json.loads(capsys.readouterr().out) if r["case"] == case]
    walls = row["wall_s_runs"]
    assert len(walls) == 3 and row["wall_s"] == sorted(walls)[1]
    assert row["packet_hops_per_s"] == pytest.approx(row["packet_hops"] / sorted(walls)[1])
    assert main(["bench", "--case", case, "--engine", "compiled", "--quick", "--repeat", "3"]) == 0
    assert "(median of 3: " in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--repeat", "0"])
    assert exit_.value.code == 2


def test_bench_whole_times_a_whole_process_part_by_part_and_a_pairs_margin(capsys,
                                                                          monkeypatch):
    """``--whole`` runs each case as a process of its own: its parts (start, set-up, loop,
    summary) add up to the process's time, its packet-hops are the run's, and a short and a
    long window give the marginal speed and the memory ratio."""
    from icsim.experiments.pipeline import bench
    from icsim.simulator.simulation import run

    case = ("tiny", "quickstart.yaml", ["topology.dims=[4,4]", "traffic.message_packets=1"],
            (2.0, 20.0, 10.0), 60.0)
    monkeypatch.setattr(bench, "WHOLE_CASES", [case])
    assert main(["bench", "--whole", "--json"]) == 0
    short, long, margin = json.loads(capsys.readouterr().out)
    want = run(bench.case_config("quickstart.yaml", case[2], case[3]), engine="compiled")
    assert short["packet_hops"] == want["packet_hops"] > 0
    assert long["packet_hops"] > 2 * short["packet_hops"]
    for r in (short, long):
        parts = r["start_s"] + r["setup_s"] + r["run_s"] + r["summary_s"]
        assert r["start_s"] > 0 and parts == pytest.approx(r["whole_s"])
        assert 0 < r["loop_s"] <= r["run_s"] and r["peak_rss_mb"] > 50
    more = long["whole_s"] - short["whole_s"]       # (at this size, within the machine's noise)
    assert margin["engine"] == "marginal" and margin["packet_hops_per_s"] == (pytest.approx(
        (long["packet_hops"] - short["packet_hops"]) / more) if more > 0 else None)
    assert margin["memory_ratio"] == pytest.approx(long["peak_rss_mb"] / short["peak_rss_mb"])


def test_engine_option_picks_the_engine_and_leaves_the_run_identity_alone(capsys):
    from icsim.simulator.build import identity

    outs = {}
    for engine in ("simpy", "compiled"):
        assert main(["run", str(QUICKSTART), "--json", "--engine", engine,
                     "--set", "topology.dims=[4,4]", "--set", "run.measure_us=10"]) == 0
        outs[engine] = json.loads(capsys.readouterr().out)
    assert outs["simpy"]["engine"] == "simpy" and outs["compiled"]["engine"] == "compiled"
    assert outs["simpy"]["latency_ns"] == outs["compiled"]["latency_ns"]
    cfg = outs["simpy"]["config"]
    assert identity({**cfg, "run": {**cfg["run"], "engine": "compiled"}}) == identity(cfg)


def test_run_progress_reports_simulated_time_and_an_eta(capsys):
    assert main(["run", str(QUICKSTART), "--progress", "--engine", "simpy",
                 "--set", "topology.dims=[4,4]", "--set", "run.measure_us=10"]) == 0
    err = capsys.readouterr().err
    assert "[run] simulated " in err and " us, " in err and "packets delivered" in err


@pytest.mark.slow
def test_bench_tables_times_sssp_and_bfs_on_the_papers_timing_tori(capsys):
    assert main(["bench", "--tables", "--json", "--quick"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["generator"], r["nodes"]) for r in rows] == [("sssp", 90), ("bfs", 90),
                                                             ("sssp", 150), ("bfs", 150)]
    for r in rows:
        assert 0 < r["graph_s"] < r["wall_s"]
        assert r["routes_per_s"] == pytest.approx(r["nodes"] * (r["nodes"] - 1) / r["wall_s"])


@pytest.mark.parametrize("args, option", [
    (["tables", "--dims", "4", "2", "--generator", "refined", "--time-limit", "-1"],
     "--time-limit"),                                    # annealed forever
    (["tables", "--dims", "4", "2", "--seed", "-1"], "--seed"),
    (["tables", "--dims", "4", "2", "--generator", "refined", "--max-moves", "0"],
     "--max-moves"),
    (["layers", "--seed", "-1"], "--seed"),               # a line that named no option
    (["sweep", str(QUICKSTART), "--stop-after", "0"], "--stop-after"),     # a traceback
    (["sweep", str(QUICKSTART), "--refine", "-1"], "--refine"),            # taken as 0
])
def test_a_bad_number_for_tables_layers_or_sweep_is_the_options_error(args, option, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        f"icsim {args[0]}: error: argument {option}: ")


@pytest.mark.parametrize("args, message", [
    (["--nodes", "0-999999999999"], "nodes: '0-999999999999': node 999999999999 is outside "
                                    "the 32-node torus"),              # was a MemoryError
    (["--failed-nodes", "3-99999999999"], "failed nodes: '3-99999999999': node 99999999999 "
                                          "is outside"),
    (["--generator", "refined", "--traffic", "tornado", "--traffic-params", "[1]"],
     "--traffic-params: expected a JSON object"),                     # was a TypeError
    (["--out", "{tmp}"], "out: {tmp} is a directory"),   # was an error after the generation
    (["--dims", "100000"], "a table of 100,000 nodes holds 9,999,900,000 routes, about"),
])
def test_icsim_tables_refuses_what_it_cannot_do_before_generating(args, message, tmp_path,
                                                                   capsys):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    dims = [] if "--dims" in args else ["--dims", "4", "2", "2", "2"]
    assert main(["tables", *dims, *args]) == 2
    out = capsys.readouterr()
    assert out.err.splitlines() == [out.err.strip()] and not out.out
    assert out.err.startswith("icsim tables: " + message.replace("{tmp}", str(tmp_path)))


def test_an_output_folder_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    """--out naming a file: a FileExistsError or NotADirectoryError traceback before."""
    blocker = tmp_path / "afile"
    blocker.write_text("")
    results = tmp_path / "runs"
    results.mkdir()
    (results / "results.csv").write_text("offered_load,latency_ns,accepted_load\n0.1,5,0.1\n")
    for args, where in ((["sweep", str(QUICKSTART), "--loads", "0.1", "--out", str(blocker)],
                         f"{blocker}: is a file, not a folder"),
                        (["plot", str(results), "--out", str(blocker / "figs")],
                         f"{blocker / 'figs'}: is below a file, not a folder")):
        assert main(args) == 2
        assert capsys.readouterr().err.splitlines() == [f"icsim: {where}"]


def test_run_and_sweep_take_a_bundled_configs_name_from_any_folder(tmp_path, monkeypatch,
                                                                    capsys):
    """As the Python API does (icsim.configs.config_path); the command line took only paths."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "examples/mesh_dor", "--json", "--set", "run.measure_us=5"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["topology"]["dims"] == [8, 8]
    assert main(["sweep", "quickstart", "--loads", "0.1", "--no-plots", "--quiet",
                 "--set", "run.measure_us=5"]) == 0
    assert (tmp_path / "runs" / "quickstart" / "results.csv").exists()
    assert main(["run", "nosuch"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"icsim: config error: nosuch: no such config file (from the working directory, "
        f"{tmp_path}), and no bundled config of that name")


def test_icsim_reproduce_without_a_name_lists_the_reproductions(capsys):
    from icsim.experiments.papers.reproduce import REPRODUCTIONS
    assert main(["reproduce"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in REPRODUCTIONS) and "ofr-table2" in out
