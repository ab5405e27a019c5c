"""Exact channel loads of oblivious routing (``icsim.routing.oblivious``, ``icsim analyze``):
the published throughputs of dimension-order routing on the 8-ary 2-cube, Valiant's
permutation-blindness, the worst-case permutation against random ones, and the loads against
what both engines count packet by packet."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.experiments.cli import main
from icsim.model.config import Config
from icsim.model.topology import Torus
from icsim.routing.oblivious import NotOblivious, Oblivious
from icsim.routing.registry import ROUTING, load_plugin
from icsim.routing.table import RoutingTable
from icsim.routing.tables.generators import generate
from icsim.routing.tables.metrics import table_metrics
from icsim.simulator.build import from_dict
from icsim.simulator.simulation import run
from icsim.traffic.patterns import make_pattern
from tests.conftest import channel_crossings
from tests.golden.cases import pinned

PLUGINS = Path(__file__).resolve().parent / "plugins"


def routing(name: str, dims, **routing_section):
    topo = Torus(tuple(dims))
    cfg = Config(topology={"dims": list(dims)}, routing={"algorithm": name, **routing_section})
    return topo, ROUTING.get(name)(topo, cfg)


def exact(name: str, dims):
    topo, r = routing(name, dims)
    return Oblivious(topo, r)


def throughput(o: Oblivious, pattern: str, **params) -> float:
    return o.throughput(o.loads(make_pattern(pattern, o.topology, seed=0, **params).rates()))


def permutation_rates(mapping) -> np.ndarray:
    n = len(mapping)
    out = np.zeros((n, n))
    out[np.arange(n), mapping] = 1.0
    return out


# ------------------------------------------------------------------ published values
def test_dor_on_the_8_ary_2_cube_gives_the_published_throughputs():
    """Singh, Dally, Towles and Gupta (SPAA 2002) and Towles and Dally (IEEE CAL 2002), DOR on
    the 8-ary 2-cube in fractions of capacity: NN 4, BC 0.5, TP 0.25, TOR 0.33, worst case
    0.25 (0.25 x 1.25 = RLB's worst case, "25 % more than DOR")."""
    dor = exact("dor", (8, 8))
    assert throughput(dor, "neighbor") == pytest.approx(4.0)
    assert throughput(dor, "bitcomplement") == pytest.approx(0.5)
    assert throughput(dor, "transpose") == pytest.approx(0.25)
    assert throughput(dor, "tornado") == pytest.approx(1 / 3)
    assert dor.worst_case().throughput == pytest.approx(0.25)


def test_uniform_traffic_pays_for_dors_plus_at_a_tie():
    """icsim's DOR goes + at a k/2 tie: on an 8-ring the + channels carry offsets 1..4, 10/8
    per unit against the balanced 8/8, so uniform traffic over all N nodes reaches 0.8 (the
    published 1.0 splits ties evenly); over the N - 1 others 0.8 x 63/64."""
    dor = exact("dor", (8, 8))
    assert throughput(dor, "uniform", include_self=True) == pytest.approx(0.8)
    assert throughput(dor, "uniform") == pytest.approx(0.8 * 63 / 64)
    assert throughput(exact("dor", (4, 4, 4)), "uniform", include_self=True) == \
        pytest.approx(2 / 3)


def test_dor_with_ties_drawn_at_random_reaches_the_published_uniform_throughput():
    """``routing.dor.tie: random`` halves a tie's packets between + and -: uniform traffic
    reaches the published 1.0; tornado, NN and BC have no ties and keep their values."""
    topo = Torus((8, 8))
    cls = ROUTING.get("dor")
    dor = Oblivious(topo, cls(topo, Config(topology={"dims": [8, 8]}),
                              cls.Settings(tie="random")))
    assert throughput(dor, "uniform", include_self=True) == pytest.approx(1.0)
    assert throughput(dor, "tornado") == pytest.approx(1 / 3)
    assert throughput(dor, "neighbor") == pytest.approx(4.0)
    assert throughput(dor, "bitcomplement") == pytest.approx(0.5)


@pytest.mark.parametrize("dims", [(4, 4), (4, 3, 2)])
@pytest.mark.parametrize("load", [0.3, 1.2])
def test_dor_with_random_ties_gives_identical_records_on_both_engines(dims, load):
    cfg = {"topology": {"kind": "torus", "dims": list(dims)},
           "routing": {"algorithm": "dor", "dor": {"tie": "random"}},
           "traffic": {"load": load, "message_packets": 4},
           "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 60}}
    simpy = pinned(run(from_dict(cfg), engine="simpy"))
    compiled = pinned(run(from_dict(cfg), engine="compiled"))
    assert simpy == compiled and simpy["packets_delivered"] > 0
    plus = pinned(run(from_dict({**cfg, "routing": {"algorithm": "dor"}}), engine="compiled"))
    assert plus != simpy                       # the draw changes the run: ties go both ways


def test_valiant_loads_every_permutation_alike_at_half_of_dors_uniform():
    """Valiant's random intermediate makes every permutation the same load (its worst case is
    its average); over DOR legs with + at a tie, that is half DOR's uniform 0.8."""
    load_plugin(str(PLUGINS / "valiant.py"))
    val = exact("valiant", (8, 8))
    for pattern in ("tornado", "transpose", "neighbor", "bitcomplement"):
        assert throughput(val, pattern) == pytest.approx(0.4)
    assert val.worst_case().throughput == pytest.approx(0.4)


def test_romm_with_random_ties_has_the_published_worst_case():
    """Two-phase ROMM on the 8-ary 2-cube: RLB's worst case is 25 % above DOR's (0.25, above)
    and 50 % above two-phase ROMM's (Singh et al., SPAA 2002): ROMM's is 0.3125 / 1.5 =
    0.2083, which ROMM with ties drawn per packet gives exactly; uniform 1.0, bit complement
    0.4, tornado 1/3 and NN 4 as minimal routing must."""
    topo = Torus((8, 8))
    cls = ROUTING.get("romm")
    romm = Oblivious(topo, cls(topo, Config(topology={"dims": [8, 8]}),
                               cls.Settings(tie="random")))
    assert romm.worst_case().throughput == pytest.approx(0.3125 / 1.5)
    assert throughput(romm, "uniform", include_self=True) == pytest.approx(1.0)
    assert throughput(romm, "bitcomplement") == pytest.approx(0.4)
    assert throughput(romm, "tornado") == pytest.approx(1 / 3)
    assert throughput(romm, "neighbor") == pytest.approx(4.0)


def _romm_by_enumeration(k: int, random_ties: bool) -> dict:
    """An independent ROMM on a k x k torus, by listing every path: ``{(s, d): {(node, port):
    expected crossings}}`` (tie sides per dimension, half each; DOR legs, x first)."""
    import itertools

    def path(s, t, sign):
        (x, y), (tx, ty), out = (s % k, s // k), (t % k, t // k), []
        for dim, (c, tc) in enumerate(((x, tx), (y, ty))):
            d = (tc - c) % k
            d = d - k if d > k // 2 else d
            d = -d if d == k // 2 and sign[dim] < 0 else d
            for _ in range(abs(d)):
                out.append((x + k * y, 2 * dim + (d < 0)))
                if dim == 0:
                    x = (x + (1 if d > 0 else -1)) % k
                else:
                    y = (y + (1 if d > 0 else -1)) % k
        return out

    table = {}
    for s, d in itertools.product(range(k * k), repeat=2):
        delta = [((d % k - s % k) % k), ((d // k - s // k) % k)]
        delta = [x - k if x > k // 2 else x for x in delta]
        tied = [abs(x) == k // 2 and random_ties for x in delta]
        sides = list(itertools.product(*[(1, -1) if t else (1,) for t in tied]))
        use: dict = {}
        for side in sides:
            signed = [x * c if t else x for x, t, c in zip(delta, tied, side)]
            box = [((s % k + (i if signed[0] >= 0 else -i)) % k)
                   + k * ((s // k + (j if signed[1] >= 0 else -j)) % k)
                   for i in range(abs(signed[0]) + 1) for j in range(abs(signed[1]) + 1)]
            for mid in box:
                for c in path(s, mid, side) + path(mid, d, side):
                    use[c] = use.get(c, 0.0) + 1 / len(sides) / len(box)
        table[(s, d)] = use
    return table


@pytest.mark.parametrize("tie", ["plus", "random"])
def test_romm_loads_equal_an_enumeration_of_its_paths(tie):
    """Every channel's expected load under a random permutation: the analysis (node 0's
    paths, translated) against listing every pair's boxes and paths on a 6x6 torus."""
    k = 6
    topo = Torus((k, k))
    cls = ROUTING.get("romm")
    romm = Oblivious(topo, cls(topo, Config(topology={"dims": [k, k]}), cls.Settings(tie=tie)))
    listed = _romm_by_enumeration(k, tie == "random")
    mapping = np.random.default_rng(7).permutation(k * k)
    expected = np.zeros(k * k * romm.P)
    for s, d in enumerate(mapping):
        for (u, p), w in listed[(s, int(d))].items():
            expected[u * romm.P + p] += w
    assert np.allclose(romm.loads(permutation_rates(mapping)), expected)


@pytest.mark.parametrize("tie", ["plus", "random"])
@pytest.mark.parametrize("dims", [(4, 4), (6, 3, 4)])
@pytest.mark.parametrize("load", [0.3, 1.2])
def test_romm_gives_identical_minimal_records_on_both_engines(tie, dims, load):
    cfg = {"topology": {"kind": "torus", "dims": list(dims)},
           "routing": {"algorithm": "romm", "romm": {"tie": tie}},
           "traffic": {"load": load, "message_packets": 4},
           "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 60}}
    simpy = pinned(run(from_dict(cfg), engine="simpy"))
    assert simpy == pinned(run(from_dict(cfg), engine="compiled"))
    assert simpy["dilation"] == 1.0 and simpy["packets_delivered"] > 0


# ------------------------------------------------------------------ the worst case
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dims=st.sampled_from([(4, 4), (5, 3), (3, 3, 3)]))
def test_no_permutation_loads_a_channel_more_than_the_worst_case(seed, dims):
    dor = exact("dor", dims)
    wc = dor.worst_case()
    mapping = np.random.default_rng(seed).permutation(dor.N)
    assert dor.loads(permutation_rates(mapping)).max() <= wc.load + 1e-9
    # and the worst case's own permutation puts exactly that load on its channel
    loads = dor.loads(permutation_rates(wc.mapping))
    node, port = wc.channel
    assert loads[node * dor.P + port] == pytest.approx(wc.load) == loads.max()


@pytest.mark.parametrize("name, dims", [("dor", (8,)), ("romm", (6,)), ("val", (8,)),
                                        ("rlb", (8,)), ("rlbth", (7,)), ("dor", (2, 4)),
                                        ("val", (2, 3))])
def test_the_worst_case_is_the_heaviest_of_every_permutation(name, dims):
    """Brute force over all N! permutations (N <= 8): the loads are linear in the traffic, so
    each pair's channel loads (one analysis of a one-pair matrix each) summed along a
    permutation give its loads; the heaviest channel of the heaviest permutation is what the
    matchings found, and their permutation is one that reaches it."""
    from itertools import permutations

    o = exact(name, dims)
    N = o.N
    unit = np.zeros((N, N, N * o.P))
    for s in range(N):
        for d in range(N):
            rates = np.zeros((N, N))
            rates[s, d] = 1.0
            unit[s, d] = o.loads(rates)
    every = np.array(list(permutations(range(N))))
    heaviest = unit[np.arange(N), every].sum(axis=1).max()
    wc = o.worst_case()
    assert wc.load == pytest.approx(heaviest)
    assert unit[np.arange(N), wc.mapping].sum(axis=0).max() == pytest.approx(heaviest)


def test_a_table_walked_pair_by_pair_gives_the_tables_own_channel_loads(tmp_path):
    """SSSP's table on a 4x4x2 torus is not the same from every node: every pair is walked;
    under all-to-all, (N - 1) x the expected loads are the routes per channel."""
    topo = Torus((4, 4, 2))
    table = generate("sssp", topo)
    o = Oblivious(topo, _table_routing(topo, table, tmp_path))
    assert not o.symmetric
    loads = o.loads(make_pattern("alltoall", topo, seed=0).rates()) * (o.N - 1)
    assert np.allclose(loads.max(), table_metrics(table).max_load)
    assert np.isclose(loads.sum(), sum(len(r) for r in table.routes.values()))


def _table_routing(topo, table: RoutingTable, folder: Path):
    """Table routing of ``table``, built as a run builds it (from its file)."""
    path = folder / "t.json"
    table.save(path)
    cfg = Config(topology={"dims": list(topo.dims)},
                 routing={"algorithm": "table", "table": {"file": str(path)}})
    cls = ROUTING.get("table")
    return cls(topo, cfg, cls.Settings.model_validate({"file": str(path)}))


# ------------------------------------------------------------------ against the engines
@pytest.mark.parametrize("engine", ["simpy", "compiled"])
@pytest.mark.parametrize("algorithm", ["dor", "table"])
def test_the_engines_count_on_each_channel_what_the_analysis_expects(tmp_path, engine,
                                                                     algorithm):
    """Each node sends one packet to its image under DOR's worst-case permutation of a 4x4x4
    torus (a table routing the same way): both engines' per-channel counters equal the
    expected loads exactly."""
    dims = (4, 4, 4)
    wc = exact("dor", dims).worst_case()
    routing_section = {"algorithm": algorithm}
    if algorithm == "table":
        routing_section["table"] = {"generator": "sssp"}
    config = from_dict({"topology": {"kind": "torus", "dims": list(dims)},
                        "routing": routing_section})
    topo = Torus(dims)
    if algorithm == "table":
        o = Oblivious(topo, _table_routing(topo, generate("sssp", topo), tmp_path))
    else:
        o = exact("dor", dims)
    loads = o.loads(permutation_rates(wc.mapping))
    pairs = [(s, int(d)) for s, d in enumerate(wc.mapping) if s != d]
    counted = channel_crossings(config, pairs, engine)
    expected = {(u, p): int(round(loads[u * o.P + p])) for (u, p) in counted}
    assert counted == expected and max(counted.values()) > 1


# ------------------------------------------------------------------ the command line
def test_icsim_analyze_prints_the_bound_and_writes_a_worst_case_the_run_takes(tmp_path, capsys):
    assert main(["analyze", "quickstart", "--set", "topology.dims=[8,8]",
                 "--set", "traffic.pattern=tornado"]) == 0
    out = capsys.readouterr().out
    assert "γ = 0.333333" in out and "x+" in out
    wc = tmp_path / "wc.txt"
    assert main(["analyze", "quickstart", "--worst-case", "--out", str(wc), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["worst_case"]["throughput"] == pytest.approx(0.0625)
    mapping = [int(x) for x in wc.read_text().split("\n") if x and not x.startswith("#")]
    assert sorted(mapping) == list(range(64))
    run = ["run", "quickstart", "--set", "traffic.pattern=permutation",
           "--set", f"traffic.params.permutation.file={wc}", "--set", "run.warmup_us=2",
           "--set", "run.measure_us=5", "--set", "run.drain_us=50", "--set", "traffic.load=0.02",
           "--json"]
    assert main(run) == 0
    assert json.loads(capsys.readouterr().out)["packets_delivered"] > 0


@pytest.mark.parametrize("args, says", [
    (["--set", "routing.algorithm=abr"], "routing.algorithm: abr is adaptive"),
    (["--set", "routing.algorithm=ofr"], "routing.algorithm: ofr chooses its route"),
    (["--out", "x.txt"], "--out: writes the worst-case permutation: add --worst-case"),
    (["--set", "traffic.workload=collective"], "traffic.workload"),
])
def test_what_has_no_exact_loads_is_one_line_and_status_2(args, says, capsys, tmp_path,
                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["analyze", "quickstart", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


@pytest.mark.parametrize("text, says", [
    ("1\n0\n", "2 destinations for 64 nodes"),
    ("\n".join(["0"] * 64), "node 0 is the destination of 64 sources"),
    ("\n".join(map(str, range(63))) + "\n99\n", "'99' is not a node id"),
    ("x\n", "'x' is not a node id"),
])
def test_a_bad_permutation_file_is_one_line_naming_it(tmp_path, capsys, text, says):
    bad = tmp_path / "perm.txt"
    bad.write_text(text)
    assert main(["run", "quickstart", "--set", "traffic.pattern=permutation",
                 "--set", f"traffic.params.permutation.file={bad}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and "traffic.params.permutation.file" in err


def test_the_python_api_gives_the_same_report():
    import icsim
    r = icsim.analyze("quickstart", {"topology.dims": [8, 8], "traffic.pattern": "tornado"},
                      worst_case=True)
    assert r["throughput"] == pytest.approx(1 / 3)
    assert r["worst_case"]["throughput"] == pytest.approx(0.25)
    assert r["busiest"][0]["port"] == "x+" and r["same_from_every_node"]


def test_an_adaptive_program_is_refused_by_the_analysis_itself():
    topo, abr = routing("abr", (4, 4))
    with pytest.raises(NotOblivious, match="abr is adaptive"):
        Oblivious(topo, abr)


def test_every_patterns_traffic_matrix_is_what_its_messages_do():
    """``Pattern.rates()``: rows sum to 1, and each source's messages (2,016 of them, a whole
    number of every index cycle here) land where the row says, in its shares."""
    from icsim.traffic.patterns import PATTERNS

    from icsim.model.topology import Dragonfly, HyperX

    rng = np.random.default_rng(1)
    draws = 2016                                   # 63 x 32: alltoall, butterfly, neighbor
    # the group shift is a dragonfly's (72 terminals, 8 to a group), the line shift a HyperX's
    # (64 terminals, 4 to a router); the rest, a torus's
    family = {"group_shift": Dragonfly(2, 4, 2), "line_shift": HyperX((4, 4), 4)}
    for name in PATTERNS.names():
        topo = family.get(name, Torus((4, 4, 4)))
        pattern = make_pattern(name, topo, seed=3)
        rates = pattern.rates()
        assert np.allclose(rates.sum(axis=1), 1.0), name
        for src in (0, 21, 63):
            seen = np.bincount([pattern.destination(src, i, rng) for i in range(draws)],
                               minlength=topo.num_terminals) / draws
            assert set(np.flatnonzero(seen)) <= set(np.flatnonzero(rates[src])), name
            assert np.abs(seen - rates[src]).max() < 0.05, name


def test_the_torus_routing_reproduction_redraws_the_committed_table(tmp_path):
    """``icsim reproduce torus-routing`` (exact, seconds): every claim agrees, and a fresh run
    gives the committed table's deterministic columns (RP with fewer permutations differs)."""
    import pandas as pd

    import icsim

    made = icsim.reproduce("torus-routing", out=str(tmp_path), perms=3)
    assert "differs" not in made.report and made.report.count("| agrees") == 35
    committed = pd.read_csv(Path(__file__).resolve().parents[1] / "experiments" / "results"
                            / "torus_routing" / "torus_routing.csv")
    fresh = made.tables["torus_routing"]
    columns = ["NN", "UR", "BC", "TP", "TOR", "WC"]
    assert list(fresh.algorithm) == list(committed.algorithm)
    assert np.allclose(fresh[columns].to_numpy(), committed[columns].to_numpy(), rtol=1e-5)
