"""The Angara experiment functions: one table end to end, table-file checks, the Table 2 and
random-tori reproductions on small settings."""

import json

import pandas as pd
import pytest

from icsim.experiments.papers.angara.analysis import (check_main, parse_nodes, reproduce_table2,
                                                      tables_main)
from icsim.experiments.papers.angara.tori import reproduce_tori, tori_population
from icsim.model.topology import Torus
from icsim.routing.table import TableError
from icsim.routing.tables.check import AngaraRuleError, DeadlockError

KEYS = {"max_load", "min_load", "sigma4", "max_d", "deadlock_free", "time_s", "nodes",
        "channels", "perfect_load"}


def test_tables_main_generates_analyses_and_writes_a_file_check_main_accepts(tmp_path, capsys):
    out = tmp_path / "t.json"
    r = tables_main("4x2x2x2", "bfs", nodes="0-7", out=out, as_json=True)
    assert KEYS <= set(r) and r["nodes"] == 8 and r["deadlock_free"] and r["max_d"] == 3
    assert json.loads(capsys.readouterr().out)["max_load"] == r["max_load"]
    c = check_main(out)
    assert c["ok"] and c["max_load"] == r["max_load"] and c["generator"] == "bfs"


def test_check_main_names_the_first_bad_route(tmp_path):
    tables_main((4, 4), "sssp", out=tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    doc["routes"] = [[s, t, ([2, 2, 0] if (s, t) == (0, 9) else r)] for s, t, r in doc["routes"]]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(AngaraRuleError, match=r"bad.json: route 0->9: hop 2") as err:
        check_main(tmp_path / "bad.json")
    assert err.value.pair == (0, 9) and err.value.hop == 2
    doc["routes"] = [[s, t, ([1] if (s, t) == (0, 9) else r)] for s, t, r in doc["routes"]]
    (tmp_path / "broken.json").write_text(json.dumps(doc))
    with pytest.raises(TableError, match=r"route 0->9: ends at node 3, not at 9"):
        check_main(tmp_path / "broken.json")


def test_check_main_reports_a_deadlock_with_its_cycle(tmp_path):
    tables_main((3, 3), "sssp", out=tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    stair = {(1, 5): [2, 0], (5, 6): [2, 0], (6, 1): [2, 0]}     # y+ x+ around the torus
    doc["routes"] = [[s, t, stair.get((s, t), r)] for s, t, r in doc["routes"]]
    (tmp_path / "cyc.json").write_text(json.dumps(doc))
    with pytest.raises(DeadlockError, match="channel dependency cycle") as err:
        check_main(tmp_path / "cyc.json")
    assert len(err.value.cycle) == 6


def test_parse_nodes_reads_counts_ranges_and_lists():
    t = Torus((4, 2, 2, 2))
    assert parse_nodes(4, t) == (0, 1, 2, 3)
    assert parse_nodes("0-2,7", t) == (0, 1, 2, 7)
    assert parse_nodes([5, 3], t) == (5, 3) and parse_nodes(None, t) is None
    with pytest.raises(ValueError, match="1..32"):
        parse_nodes(40, t)


def test_reproduce_table2_writes_markdown_and_csv_beside_the_papers_numbers(tmp_path):
    md = reproduce_table2(tmp_path, genetic_opts={"max_generations": 3}, node_counts=(2, 4, 32))
    df = pd.read_csv(tmp_path / "angara_table2.csv")
    assert len(df) == 9 and df.deadlock_free.all()
    sssp32 = df[(df.algorithm == "sssp") & (df.nodes == 32)].iloc[0]
    assert (sssp32.max_load, sssp32.paper_max_load, sssp32.min_load) == (28, 28, 8)
    assert sssp32.paper_sigma4 == pytest.approx(6.298) and sssp32.max_d == 5
    four = df[df.nodes == 4]
    assert set(four[four.algorithm != "bfs"].max_load) == {2}
    assert "| sssp | 32 | 28 (28) | 8 (8) |" in md
    assert (tmp_path / "angara_table2.md").read_text().count("\n| ") == 10


def test_tori_population_has_the_papers_counts_and_is_seeded():
    a, b = tori_population(0), tori_population(0)
    assert a == b and {n: len(v) for n, v in a.items()} == {2: 49, 3: 339, 4: 1173}
    assert all(2 <= k <= 8 for v in a.values() for d in v for k in d)
    assert len(set(a[4])) == 1173 and sorted(a[2]) == sorted(
        (x, y) for x in range(2, 9) for y in range(2, 9))


def test_reproduce_tori_on_a_small_sample(tmp_path):
    md = reproduce_tori(tmp_path, sample=6, max_nodes=30, genetic_max_nodes=12,
                        genetic_opts={"max_generations": 3}, timing_repeats=0)
    systems = pd.read_csv(tmp_path / "angara_tori_systems.csv")
    summary = pd.read_csv(tmp_path / "angara_tori_summary.csv")
    assert len(systems) == 6 and set(systems.n) == {2, 3, 4}     # shared out among 2D, 3D, 4D
    assert (systems.nodes <= 30).all()
    assert systems.unique_pairs_share.between(0, 1).all()
    assert list(summary.dims) == [2, 3, 4] and "improvement, less group" in md


@pytest.mark.slow
def test_reproduce_tori_run_again_reuses_the_systems_it_has(tmp_path, monkeypatch):
    import icsim.experiments.papers.angara.tori as angara
    args = dict(sample=6, max_nodes=30, genetic_max_nodes=12,
                genetic_opts={"max_generations": 3}, timing_repeats=0)
    reproduce_tori(tmp_path, **args)
    first = pd.read_csv(tmp_path / "angara_tori_systems.csv")
    # interrupted after two systems: the rest must be run, the two reused
    first.iloc[:2].to_csv(tmp_path / "angara_tori_systems.csv", index=False)
    ran = []
    real = angara.tori_system
    monkeypatch.setattr(angara, "tori_system", lambda *a: ran.append(a[0]) or real(*a))
    reproduce_tori(tmp_path, **args)
    again = pd.read_csv(tmp_path / "angara_tori_systems.csv")
    assert len(ran) == 4 and "x".join(map(str, ran[0])) == first.dims[2]
    assert sorted(again.dims) == sorted(first.dims)
    cols = ["dims", "bfs_max_load", "sssp_max_load", "unique_pairs_share", "genetic_max_load"]
    key = lambda d: d[cols].sort_values("dims").reset_index(drop=True)
    pd.testing.assert_frame_equal(key(again), key(first))
    # asking for Genetic on larger systems reruns exactly those lacking it
    ran.clear()
    reproduce_tori(tmp_path, **{**args, "genetic_max_nodes": 30})
    assert len(ran) == int((first.nodes > 12).sum())
    final = pd.read_csv(tmp_path / "angara_tori_systems.csv")
    assert len(final) == 6 and final.genetic_max_load.notna().all()


def test_job_summary_counts_jobs_where_sssp_finishes_sooner_equal_or_later():
    from icsim.experiments.papers.angara.simulation import job_summary
    times = {0: (100.0, 50.0), 1: (100.0, 100.2), 2: (100.0, 110.0), 3: (200.0, 150.0)}
    df = pd.DataFrame([{"exchange": "tornado", "size": 8, "job": j,
                        "placement": "contiguous" if j == 0 else "random",
                        "generator": g, "completion_time_us": t}
                       for j, pair in times.items() for g, t in zip(("bfs", "sssp"), pair)])
    s = job_summary(df).iloc[0]
    assert (s.jobs, s.sooner, s.equal, s.later) == (4, 2, 1, 1)
    assert s.max_percent == pytest.approx(50.0) and s.contiguous_percent == pytest.approx(50.0)
    assert s.mean_percent == pytest.approx((50 - 0.2 - 10 + 25) / 4)


def test_job_placements_are_seeded_distinct_subsets_after_the_contiguous_job():
    from icsim.experiments.papers.angara.simulation import job_placements
    jobs = job_placements((8, 16), count=5, seed=3)
    assert jobs == job_placements((8, 16), count=5, seed=3)
    assert [(k, how) for k, how, _ in jobs] == [(8, "contiguous")] + [(8, "random")] * 5 + \
        [(16, "contiguous")] + [(16, "random")] * 5
    for k, _, nodes in jobs:
        assert len(set(nodes)) == k and nodes == sorted(nodes) and 0 <= min(nodes) < max(nodes) < 32
