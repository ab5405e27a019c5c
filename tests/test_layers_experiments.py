"""The layer experiments run end to end on small inputs and say what they found."""

import pandas as pd
import pytest

from icsim.experiments.papers.acro.layers import bench_assigners, layers_main, read_reference, reproduce_acro
from icsim.routing.layers.minimal import minimal_table
from icsim.simulator.topology import Graph


def test_layers_main_reports_layers_verification_and_time():
    r = layers_main(nodes=20, degree=4, seed=3, assigner="acro")
    assert r["verified"] and r["layers"] >= 1 and r["time_s"] >= 0
    assert (r["nodes"], r["degree"], r["channels"]) == (20, 4, 80)


def test_layers_main_reads_an_edge_list_and_a_table_file(tmp_path):
    edges = tmp_path / "ring.txt"
    edges.write_text("".join(f"{i} {(i + 1) % 7}\n" for i in range(7)))
    assert layers_main(edges_file=str(edges), assigner="lash_tor")["layers"] == 2
    table = minimal_table(Graph.random_regular(10, 3, seed=1))
    table.save(tmp_path / "t.json")
    assert layers_main(table_file=str(tmp_path / "t.json"), assigner="lash")["verified"]


def test_layers_main_refuses_unknown_names():
    with pytest.raises(ValueError, match="valid: random_regular, edges"):
        layers_main(topology="fat_tree")
    with pytest.raises(ValueError, match="valid: acro, lash, lash_tor"):
        layers_main(nodes=8, degree=3, assigner="updown")


@pytest.mark.slow
def test_reproduction_writes_runs_summary_plots_and_a_report(tmp_path):
    md = reproduce_acro(tmp_path, sizes=(12, 16), degrees=(3, 4), seeds=2)
    runs = pd.read_csv(tmp_path / "acro_runs.csv")
    assert len(runs) == 2 * 2 * 2 * 3 and runs.verified.all()
    for f in ("acro_summary.csv", "acro_layers.png", "acro_time.png", "acro_report.md"):
        assert (tmp_path / f).stat().st_size > 0
    assert "| 16 | 4 |" in md and "## Against the paper" in md
    assert "every assignment verified: holds at every point" in md
    # a second call reuses the finished runs instead of recomputing them
    reproduce_acro(tmp_path, sizes=(12, 16), degrees=(3, 4), seeds=2)
    assert len(pd.read_csv(tmp_path / "acro_runs.csv")) == len(runs)


@pytest.mark.slow
def test_seeds_may_differ_per_size(tmp_path):
    md = reproduce_acro(tmp_path, sizes=(12, 16), degrees=(3,), seeds={12: 1, 16: 2},
                        assigners=("acro",))
    runs = pd.read_csv(tmp_path / "acro_runs.csv")
    assert sorted(zip(runs.nodes, runs.seed)) == [(12, 1), (16, 1), (16, 2)]
    assert "seeds: 1 for |N|=12, 2 for |N|=16" in md


def test_the_reference_figures_are_read_despite_commas_in_notes():
    ref = read_reference()
    assert list(ref.columns) == ["metric", "nodes", "value", "note"]
    row = ref[ref.metric == "max_minus_min_vls_lash"].iloc[0]
    assert (row.nodes, row.value, row.note) == ("64", "2", "observed at (|N|, d) = (64, 3)")


@pytest.mark.slow
def test_the_run_time_benchmark_fits_a_growth_exponent_per_assigner(tmp_path):
    md = bench_assigners(tmp_path, sizes=(12, 16, 20), degree=3, seeds=1)
    assert md.splitlines()[-1].startswith("| fitted k in time ~ \\|N\\|^k |")
    assert (tmp_path / "bench_time.png").stat().st_size > 0
    assert len(pd.read_csv(tmp_path / "bench_runs.csv")) == 3 * 3
