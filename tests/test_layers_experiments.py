"""The layer experiments run end to end on small inputs and say what they found."""

from dataclasses import replace

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import icsim
from icsim.experiments.cli import main
from icsim.experiments.papers.acro.layers import (bench_assigners, layers_main, read_reference,
                                                  reproduce_acro)
from icsim.experiments.papers.angara.analysis import check_main
from icsim.model.config import config_from_dict
from icsim.model.topology import Graph
from icsim.routing.layers.minimal import minimal_table
from icsim.routing.table import RoutingTable, TableError
from icsim.routing.tables.check import DeadlockError


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


# ------------------------------------------------------------------ a layered table as a file
@settings(max_examples=12, deadline=None)
@given(nodes=st.integers(6, 24), degree=st.integers(3, 5), seed=st.integers(0, 10_000),
       assigner=st.sampled_from(["acro", "lash", "lash_tor"]))
def test_a_table_written_with_its_layers_passes_the_file_check(tmp_path_factory, nodes, degree,
                                                               seed, assigner):
    if nodes * degree % 2:
        nodes += 1                                      # a regular graph needs n * d even
    out = tmp_path_factory.mktemp("layers") / "t.json"
    r = layers_main(nodes=nodes, degree=degree, seed=seed, assigner=assigner, out=str(out))
    assert r["verified"] and r["out"] == str(out)
    table = RoutingTable.load(out)
    assert max(max(v) for v in table.layers.values() if v) + 1 == r["layers"]
    c = check_main(out)
    assert (c["ok"], c["rules"], c["layers"], c["deadlock_free"]) == \
        (True, "layers", r["layers"], True)
    # a minimal table's total load is the sum of the graph's distances: the perfect load
    assert c["total_load"] == round(c["perfect_load"] * c["channels"])


def test_the_file_check_names_a_rising_layer_and_a_cycle_in_a_layer(tmp_path):
    graph = Graph.random_regular(16, 3, seed=2)
    table = minimal_table(graph, seed=2)
    # a rising layer on one route
    pair = next(p for p, r in table.routes.items() if len(r) >= 2)
    rising = {p: (0,) * len(r) for p, r in table.routes.items()}
    rising[pair] = (0, 1) + (1,) * (len(table.routes[pair]) - 2)
    replace(table, layers=rising).save(tmp_path / "rise.json")
    with pytest.raises(TableError, match=rf"rise.json: route {pair[0]}->{pair[1]}: layer "
                                         rf"rises from 0 to 1 at hop 1"):
        check_main(tmp_path / "rise.json")
    # one layer for every hop: this graph's minimal routes close a cycle in it
    flat = {p: (0,) * len(r) for p, r in table.routes.items()}
    replace(table, layers=flat).save(tmp_path / "flat.json")
    with pytest.raises(DeadlockError, match="flat.json: layer 0: dependency cycle") as err:
        check_main(tmp_path / "flat.json")
    assert len(err.value.cycle) >= 3
    # the same routes without layers: one virtual channel, the same cycle
    table.save(tmp_path / "bare.json")
    with pytest.raises(DeadlockError, match="bare.json: channel dependency cycle"):
        check_main(tmp_path / "bare.json")


def test_a_table_without_layers_on_a_tree_is_deadlock_free_on_one_channel(tmp_path):
    path = Graph.from_edges(5, [(0, 1), (1, 2), (2, 3), (1, 4)])     # no cycle to close
    minimal_table(path).save(tmp_path / "tree.json")
    c = check_main(tmp_path / "tree.json")
    assert (c["rules"], c["layers"], c["max_d"], c["max_load"]) == ("layers", 1, 3, 6)


def test_layers_out_writes_a_table_that_checks_and_simulates_on_both_engines(tmp_path, capsys):
    out = tmp_path / "g_lash.json"
    assert main(["layers", "--nodes", "16", "--degree", "3", "--seed", "2", "--assigner",
                 "lash", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert main(["tables", "--check", str(out)]) == 0
    assert "16 nodes, 2 virtual layers" in capsys.readouterr().out
    cfg = {"topology": {"kind": "random_regular", "nodes": 16, "degree": 3, "seed": 2},
           "routing": {"algorithm": "table", "table": {"file": str(out)}},
           "traffic": {"load": 0.3, "message_packets": 4},
           "run": {"warmup_us": 2, "measure_us": 10, "drain_us": 40}}
    a, b = (icsim.run(cfg, engine=e) for e in ("compiled", "simpy"))
    assert a["engine"] == "compiled" and a["packets_delivered"] == a["packets_measured"] > 100
    assert (a["latency_ns"], a["packet_hops"], a["events"]) == \
        (b["latency_ns"], b["packet_hops"], b["events"])
    # a folder as --out is refused before anything is assigned
    assert main(["layers", "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_layers_too_large_for_the_memory_are_refused_before_the_graph_is_built(monkeypatch):
    from icsim.model import limits

    monkeypatch.setattr(limits, "available_bytes", lambda: 1e9)
    built = []
    monkeypatch.setattr(Graph, "random_regular", lambda *a: built.append(a))
    # 1,024 nodes: about 1.5 GB while ACRO works (1.52 GB measured), more than 90 % of 1 GB
    with pytest.raises(ValueError, match=r"a table of 1,024 nodes holds 1,047,552 routes, "
                                         r"about 1.5 GB while virtual layers are assigned"):
        layers_main(nodes=1024, degree=6)
    assert built == []
    # a run with layers counts them too: its estimate grows by the table's share once more
    cfg = {"topology": {"kind": "random_regular", "nodes": 1024, "degree": 6, "seed": 1},
           "routing": {"algorithm": "table", "table": {"generator": "minimal"}}}
    bare = limits.estimate_bytes(config_from_dict(cfg))
    cfg["routing"]["table"]["layers"] = "acro"
    assert limits.estimate_bytes(config_from_dict(cfg)) - bare == \
        pytest.approx(limits.table_bytes(1024))


# ------------------------------------------------------------------ routes made elsewhere
def write_graph(graph, path):
    path.write_text("".join(f"{u} {v}\n" for u, v in graph.edges))
    return str(path)


def test_routes_given_as_node_paths_come_back_from_the_layered_table(tmp_path):
    graph = Graph.random_regular(12, 3, seed=4)
    table = minimal_table(graph, seed=4)
    lines = ["# routes of a minimal table, one per line", ""]
    lines += [" ".join(map(str, table.node_path(s, t))) + "   # a comment"
              for s, t in table.pairs()]
    (tmp_path / "paths.txt").write_text("\n".join(lines) + "\n")
    r = layers_main(edges_file=write_graph(graph, tmp_path / "g.txt"), assigner="lash",
                    paths_file=str(tmp_path / "paths.txt"), out=str(tmp_path / "t.json"))
    assert r["verified"] and r["layers"] >= 1
    layered = RoutingTable.load(tmp_path / "t.json")
    assert {p: layered.node_path(*p) for p in layered.pairs()} == \
        {p: table.node_path(*p) for p in table.pairs()}
    assert check_main(tmp_path / "t.json")["layers"] == r["layers"]


@pytest.mark.parametrize("text, message", [
    ("0 1\n1 x 0\n", "paths.txt:2: node ids must be integers, got '1 x 0'"),
    ("0 1\n\n1\n", "paths.txt:3: a route names at least two nodes"),
    ("0 1\n1 0\n0 4\n", "paths.txt:3: node 4 is not in the topology (0..3)"),
    ("0 1\n0 1\n", "paths.txt:2: a second route 0->1"),
    ("0 1 2 1\n", "paths.txt:1: route 0->1 visits node 1 twice"),
    ("0 2\n", "paths.txt:1: route 0->2: nodes 0 and 2 are not neighbours"),
    ("0 1\n", "paths.txt: route 1->0: missing; every ordered pair of the routes' ends needs"),
    ("# nothing\n\n", "paths.txt: no routes"),
])
def test_a_bad_paths_file_names_its_line(tmp_path, text, message):
    (tmp_path / "paths.txt").write_text(text)
    ring = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    with pytest.raises(TableError) as err:
        RoutingTable.from_paths(ring, tmp_path / "paths.txt")
    assert str(err.value).startswith(f"{tmp_path / 'paths.txt'}"[:-len("paths.txt")] + message)


def test_a_table_from_icsim_layers_runs_with_the_default_seed_and_a_wrong_seed_is_named(
        tmp_path, capsys):
    """`icsim layers` and the config draw the same random graph by default; a table drawn
    with another seed is refused naming the seed, not as "made for X, not X"."""
    out = tmp_path / "g.json"
    assert main(["layers", "--nodes", "16", "--degree", "3", "--out", str(out)]) == 0
    run = ["run", "quickstart", "--set", "topology.kind=random_regular",
           "--set", "topology.nodes=16", "--set", "topology.degree=3",
           "--set", "routing.algorithm=table", "--set", f"routing.table.file={out}",
           "--set", "run.warmup_us=2", "--set", "run.measure_us=5", "--set", "run.drain_us=50",
           "--set", "traffic.load=0.1"]
    capsys.readouterr()
    assert main(run) == 0
    assert "graph of 16 nodes" in capsys.readouterr().out.splitlines()[0]
    assert main(run + ["--set", "topology.seed=5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "other links" in err and "topology.seed" in err
