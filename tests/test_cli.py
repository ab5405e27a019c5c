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


def test_bench_json_reports_speed_per_case(capsys):
    assert main(["bench", "--json", "--quick"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["case"] for r in rows} >= {"torus8x8x8-dor-uniform-0.3", "torus4x4x4-dor-uniform-0.8"}
    for r in rows:
        assert r["engine"] == "simpy" and r["packet_hops"] > 0
        assert r["packet_hops_per_s"] == pytest.approx(r["packet_hops"] / r["wall_s"])


def test_bench_tables_times_sssp_and_bfs_on_the_papers_timing_tori(capsys):
    assert main(["bench", "--tables", "--json", "--quick"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["generator"], r["nodes"]) for r in rows] == [("sssp", 90), ("bfs", 90),
                                                             ("sssp", 150), ("bfs", 150)]
    for r in rows:
        assert 0 < r["graph_s"] < r["wall_s"]
        assert r["routes_per_s"] == pytest.approx(r["nodes"] * (r["nodes"] - 1) / r["wall_s"])
