"""The Python API (``import icsim``): runs, sweeps, the run's tables, and the walkthrough."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import icsim
from icsim.experiments.papers.angara.analysis import check_main

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"topology.dims": [4, 4], "traffic.load": 0.3, "run.measure_us": 20}


def test_a_run_reads_like_its_json_record_and_carries_its_packets_and_channels():
    r = icsim.run("quickstart", SMALL)
    assert isinstance(r, dict) and r.latency_ns == r["latency_ns"]
    assert len(r.latencies) == r.packets_delivered
    assert int(round(r.latencies.sum() * 1000)) == round(r.latency_ns * len(r.latencies) * 1000)
    ch = r.channels
    assert len(ch) == 16 * 4 and set(ch.direction) == {"x+", "x-", "y+", "y-"}
    assert ch.utilisation.max() == pytest.approx(r.channel_utilisation_max)
    assert ch.utilisation.mean() == pytest.approx(r.channel_utilisation_mean)
    assert 0 < ch.packets.sum() <= r.packet_hops
    nodes = r.nodes
    assert nodes.sent.sum() == nodes.received.sum() == r.packets_delivered
    assert nodes.accepted_load.mean() == pytest.approx(r.accepted_load)


def test_both_engines_give_the_same_channel_and_node_tables():
    a = icsim.run("quickstart", SMALL, engine="simpy")
    b = icsim.run("quickstart", SMALL, engine="compiled")
    pd.testing.assert_frame_equal(a.channels, b.channels)
    pd.testing.assert_frame_equal(a.nodes, b.nodes)
    assert np.array_equal(np.sort(a.latencies), np.sort(b.latencies))


def test_finite_runs_have_an_empty_channel_table():
    r = icsim.run("quickstart", {**SMALL, "run.mode": "finite", "run.messages_per_node": 1})
    assert r.mode == "finite" and r.channels.empty and len(r.nodes) == 16


def test_a_sweep_returns_its_rows_and_gamma_star(tmp_path):
    df = icsim.sweep("quickstart", [0.1, 0.3], vary={"routing.algorithm": ["dor", "abr"]},
                     overrides={"topology.dims": [4, 4], "run.measure_us": 20},
                     out=tmp_path / "s")
    assert sorted(set(df.curve)) == ["routing.algorithm=abr", "routing.algorithm=dor"]
    assert set(df.offered_load) == {0.1, 0.3} and len(df) == 4
    assert (tmp_path / "s" / "results.csv").exists() and (tmp_path / "s" / "latency.png").exists()
    assert df.attrs["gamma_star"] == {"routing.algorithm=abr": 0.3, "routing.algorithm=dor": 0.3}
    # both sustained the top of the grid: γ* ≥ 0.3, as the figure and gamma_star.csv say
    assert df.attrs["gamma_star_lower_bound"] == {"routing.algorithm=abr": True,
                                                  "routing.algorithm=dor": True}
    assert pd.read_csv(tmp_path / "s" / "gamma_star.csv")["gamma_star_lower_bound"].all()
    again = icsim.read_results(tmp_path / "s")
    assert len(again) == 4 and list(again.columns) == list(df.columns)
    assert df.attrs["notes"] == []


def test_run_figures_take_results_or_records_and_name_anything_else():
    r = icsim.run("quickstart", SMALL)
    record = json.loads(json.dumps(dict(r), default=str))       # as icsim run --json prints
    for fig in (icsim.latency_distribution_figure(record),
                icsim.latency_distribution_figure({"run": r, "file": record})):
        assert [ax.get_xscale() for ax in fig.axes] == ["log", "log"]
    with pytest.raises(TypeError, match="takes a run's Result .* got int"):
        icsim.channel_heatmap_figure(42)                        # was an AttributeError
    with pytest.raises(TypeError, match="or a dict of them, got a dict of int"):
        icsim.latency_distribution_figure({"x": 42})            # was a TypeError on 'int'


def test_a_sweep_warns_of_a_curve_sustained_above_its_first_saturated_load():
    with pytest.warns(UserWarning, match=r"routing.algorithm=abr is saturated at 0.1 .* yet "
                                         r"sustained at 0.3, 0.5, 0.7 above it"):
        df = icsim.sweep("quickstart", "0.1:0.7:0.2", vary={"routing.algorithm": "dor,abr"},
                         overrides={"topology.dims": [4, 4], "traffic.pattern": "transpose",
                                    "run.measure_us": 40})
    assert len(df.attrs["notes"]) == 1 and df.attrs["gamma_star"]["routing.algorithm=abr"] is None


def test_a_bad_override_names_its_key():
    with pytest.raises(icsim.api.ConfigError, match="traffic.load"):
        icsim.run("quickstart", {"traffic.load": -1})


def test_a_config_or_overrides_of_the_wrong_type_say_what_they_should_be():
    with pytest.raises(TypeError, match=r"overrides: a dict of dotted keys .*, got \['traffic.load=0.3'\] \(list\)"):
        icsim.run("quickstart", ["traffic.load=0.3"])
    with pytest.raises(TypeError, match="config: a YAML path, .* got int"):
        icsim.run(42)


def test_a_sweep_takes_one_load_and_the_command_lines_comma_list_of_values():
    """A string value was iterated letter by letter ("unknown algorithm 'd'") and a single
    load was 'float object is not iterable'."""
    df = icsim.sweep("quickstart", 0.1, vary={"routing.algorithm": "dor,abr"},
                     overrides={"topology.dims": [4, 4], "run.measure_us": 20})
    assert sorted(set(df.curve)) == ["routing.algorithm=abr", "routing.algorithm=dor"]
    assert list(df.offered_load) == [0.1, 0.1]


def test_wrong_sweep_arguments_and_engines_are_refused_before_any_run():
    with pytest.raises(TypeError, match=r"vary: a dict of dotted keys .*, got list"):
        icsim.sweep("quickstart", "0.1", vary=["routing.algorithm=dor"])
    with pytest.raises(ValueError, match="workers: at least 1, got 0"):
        icsim.sweep("quickstart", "0.1", workers=0)        # ran serially before
    with pytest.raises(TypeError, match=r"loads: a grid .* got None \(NoneType\)"):
        icsim.sweep("quickstart", None)
    with pytest.raises(icsim.api.ConfigError, match="run.engine: expected .*, got 'fast'"):
        icsim.run("quickstart", SMALL, engine="fast")      # ran on SimPy before
    with pytest.raises(ValueError, match="results: no offered_load or latency_ns or "
                                         "accepted_load column"):
        icsim.latency_figure([{"load": 0.1}])               # a KeyError before


def test_the_walkthrough_runs_top_to_bottom(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(ROOT / "docs" / "walkthrough.py"), run_name="__main__")
    assert {p.name for p in (tmp_path / "walkthrough_out").glob("*.png")} == {
        "latency.png", "latency_distribution.png", "channels.png"}
    checked = check_main(tmp_path / "walkthrough_out" / "table_acro.json")
    assert (checked["rules"], checked["nodes"], checked["deadlock_free"]) == ("layers", 32, True)


def test_only_the_icsim_name_is_installed(tmp_path):
    code = ("import importlib.util as u, icsim; "
            "print([n for n in ('simulator', 'routing', 'traffic', 'experiments', 'configs') "
            "if u.find_spec(n)])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_engine_argument_is_the_engine_the_memory_check_and_the_record_see(monkeypatch):
    # icsim.run(engine=...) stands for run.engine, as the command line's --engine does: the
    # record says the engine, and the memory check counts that engine's bytes (the SimPy
    # engine's per-node cost is the larger one: a machine between the two refuses it only)
    from icsim.model import limits
    from icsim.model.config import ConfigError, load_config
    from icsim.configs import bundled

    r = icsim.run("quickstart", {"traffic.load": 0.05, "run.measure_us": 2}, engine="simpy")
    assert r["config"]["run"]["engine"] == "simpy" and r["engine"] == "simpy"
    big = {"topology.dims": [64, 64, 64]}
    need = {e: limits.estimate_bytes(load_config(bundled("quickstart.yaml"),
                                                 ["topology.dims=[64,64,64]", f"run.engine={e}"]))
            for e in ("compiled", "simpy")}
    assert need["simpy"] > need["compiled"]
    have = (need["simpy"] + need["compiled"]) / 2 / limits.HEADROOM
    monkeypatch.setattr(limits, "available_bytes", lambda: have)
    with pytest.raises(ConfigError, match="this run needs about"):
        icsim.run("quickstart", big, engine="simpy")
