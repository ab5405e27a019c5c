"""The torus routing literature (issue 47): Valiant (VAL), Randomized Local Balance (RLB) and
its threshold variant (RLBth), beside DOR and two-phase ROMM -- their exact loads against hand
computation and the RLB paper's published ratios -- and the adaptive GOAL and CQR; both
engines' records, and runs past saturation that finish."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icsim.configs import bundled
from icsim.model.config import Config, load_config
from icsim.model.topology import Torus
from icsim.routing.oblivious import Oblivious
from icsim.routing.boxes import box_table
from icsim.routing.registry import ROUTING
from icsim.simulator.build import from_dict
from icsim.simulator.simulation import run
from icsim.traffic.patterns import make_pattern
from tests.golden.cases import pinned

NEW = [("val", {}), ("val", {"tie": "plus"}), ("rlb", {}), ("rlbth", {}),
       ("romm", {"tie": "random"}), ("goal", {}), ("cqr", {}), ("o1turn", {})]
#: the oblivious ones on dateline VCs instead of the bubble rule
DATELINE = [("dor", {"tie": "random", "deadlock": "dateline"}),
            ("romm", {"tie": "random", "deadlock": "dateline"}),
            ("val", {"deadlock": "dateline"}), ("rlb", {"deadlock": "dateline"}),
            ("rlbth", {"deadlock": "dateline"}), ("o1turn", {"deadlock": "dateline"})]


def exact(name: str, dims, **settings) -> Oblivious:
    topo = Torus(tuple(dims))
    cls = ROUTING.get(name)
    return Oblivious(topo, cls(topo, Config(topology={"dims": list(dims)}),
                               cls.Settings(**settings)))


def throughput(o: Oblivious, pattern: str, **params) -> float:
    return o.throughput(o.loads(make_pattern(pattern, o.topology, seed=0, **params).rates()))


# ------------------------------------------------------------------ hand-computed values
def test_valiant_is_half_of_capacity_on_every_traffic():
    """Each leg of VAL is uniform traffic, which balanced minimal routing carries at 1: two
    legs, 1/2, whatever the pattern -- its worst case too; on an odd ring no tie arises."""
    for dims in [(8, 8), (5, 5)]:
        val = exact("val", dims)
        for pattern in ("neighbor", "tornado", "transpose"):
            assert throughput(val, pattern) == pytest.approx(0.5)
        assert val.worst_case().throughput == pytest.approx(0.5)


def test_rlb_balances_tornado_on_an_8_ring_over_both_directions():
    """Tornado on an 8-node ring (i -> i + 3): RLB goes + (3 hops) with probability 5/8 and -
    (5 hops) with 3/8, so every + channel carries 3 x 5/8 and every - channel 5 x 3/8 =
    15/8 of a node's rate: 8/15 of capacity (the uniform load of a ring channel is k/8 = 1),
    where minimal routing's 3 on the + channels gives 1/3."""
    rlb, dor = exact("rlb", (8,)), exact("dor", (8,))
    loads = rlb.loads(make_pattern("tornado", rlb.topology, seed=0).rates())
    plus = loads.reshape(8, rlb.P)[:, 0]
    minus = loads.reshape(8, rlb.P)[:, 1]
    assert plus == pytest.approx([15 / 8] * 8) and minus == pytest.approx([15 / 8] * 8)
    assert throughput(rlb, "tornado") == pytest.approx(8 / 15)
    assert throughput(dor, "tornado") == pytest.approx(1 / 3)


def test_rlbs_directions_are_drawn_in_proportion_to_the_other_ways_length():
    """Per dimension of an 8-ring at minimal distance Δ, the minimal way has weight (8 - Δ)/8
    and the long way Δ/8, each spread uniformly over its positions."""
    box = box_table((8,), balanced=True)
    for delta in range(1, 5):
        a, b = box.ptr[0, delta], box.ptr[0, delta + 1]
        weights = [box.cum[a]] + [box.cum[i] - box.cum[i - 1] for i in range(a + 1, b)]
        assert len(weights) == (delta + 1) + (8 - delta + 1)
        assert box.step[a:a + delta + 1].tolist() == list(range(delta + 1))     # + side
        assert box.step[a + delta + 1:b].tolist() == [-j for j in range(9 - delta)]
        assert sum(weights[:delta + 1]) / box.cum[b - 1] == pytest.approx((8 - delta) / 8)
        assert len(set(weights[:delta + 1])) == len(set(weights[delta + 1:])) == 1


def test_o1turn_reaches_the_bisection_bound_on_the_mesh_where_dor_has_k_minus_1():
    """On the 8x8 mesh XY routing's worst case puts k - 1 = 7 flows on a y channel at the
    edge (the k sources of a row to the k - 1 nodes above in one column); no routing does
    better than k/2 = 4, the bisection's (k^2/2 packets of a permutation across k channels
    each way); O1TURN, half XY and half YX, has exactly 4 (its paper: near-optimal worst
    case).  Transpose: twice DOR's on the mesh and on the torus."""
    from icsim.simulator.build import build_topology

    for wrap, dor_load, o1_load in [([False, False], 7.0, 4.0), ([True, True], 4.0, 4.0)]:
        cfg = Config(topology={"dims": [8, 8], "wrap": wrap})
        topo = build_topology(cfg.topology)
        dor, o1 = (Oblivious(topo, ROUTING.get(name)(topo, cfg)) for name in ("dor", "o1turn"))
        assert dor.worst_case().load == pytest.approx(dor_load)
        assert o1.worst_case().load == pytest.approx(o1_load)
        assert throughput(o1, "transpose") == pytest.approx(2 * throughput(dor, "transpose"))


def test_o1turn_on_three_dimensions_is_one_line_and_status_2(capsys):
    from icsim.experiments.cli import main
    assert main(["run", "--set", "topology.dims=[4,4,4]", "--set", "routing.algorithm=o1turn",
                 str(bundled("quickstart.yaml"))]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "topology.dims" in err and "2-D" in err


# ------------------------------------------------------------------ the RLB paper (abstract)
def test_rlb_has_the_rlb_papers_ratios_on_the_8_ary_2_cube():
    """Singh, Dally, Towles and Gupta (SPAA 2002), abstract: RLB has 25 % more worst-case
    bandwidth than DOR and 50 % more than two-phase ROMM, 4.6 times VAL's on local traffic,
    and RLBth matches minimal routing on very local traffic for about 4 % of RLB's worst
    case.  Exact values: 0.3109 / 0.25 = 1.244, / 0.2083 = 1.492, 2.286 / 0.5 = 4.57,
    0.2963 / 0.3109 = 0.953."""
    rlb, rlbth = exact("rlb", (8, 8)), exact("rlbth", (8, 8))
    dor, romm = exact("dor", (8, 8)), exact("romm", (8, 8), tie="random")
    val = exact("val", (8, 8))
    wc = rlb.worst_case().throughput
    assert wc / dor.worst_case().throughput == pytest.approx(1.25, abs=0.01)
    assert wc / romm.worst_case().throughput == pytest.approx(1.5, abs=0.01)
    assert throughput(rlb, "neighbor") / throughput(val, "neighbor") == pytest.approx(4.6,
                                                                                      abs=0.05)
    assert throughput(rlbth, "neighbor") == pytest.approx(throughput(dor, "neighbor")) == 4.0
    assert 0.03 <= 1 - rlbth.worst_case().throughput / wc <= 0.05


# ------------------------------------------------------------------ CQR's choice
@pytest.mark.parametrize("used, keeps", [
    ((1, 1), "+"),        # 1 x 3 <= 1 x 5: minimal
    ((2, 1), "-"),        # 2 x 3 > 1 x 5: the long way
    ((5, 3), "+"),        # 5 x 3 <= 3 x 5: minimal on a tie of the products
    ((0, 0), "+")])
def test_cqr_weighs_each_directions_source_queue_by_its_hops(used, keeps):
    """An 8-ring, destination 3 hops +: the interpreter and the compiled decision keep the
    same direction (port 0 is +, port 1 is -)."""
    from icsim.model.packet import Packet
    from icsim.simulator.engines.compiled.decide import queue_quadrant
    from icsim.simulator.engines.compiled.routing import lay_out

    topo = Torus((8,))
    cqr = ROUTING.get("cqr")(topo, Config(topology={"dims": [8]}))
    packet = Packet(0, src=0, dst=3, birth=0, age=0, measured=False)
    cqr.interpreter.inject(0, packet, list(used), lambda: 0.5)
    want = ~(1 << 1) if keeps == "+" else ~(1 << 0)
    assert packet.sel == want and packet.target == -1
    laid = lay_out(cqr.form, topo, cqr.deroute_kinds)
    assert queue_quadrant(laid.dec, 0, 3, np.array(used, np.int64)) == want


@pytest.mark.parametrize("name, says", [("goal", "is adaptive"),
                                         ("cqr", "occupancy of the source's queues")])
def test_the_adaptive_ones_have_no_exact_loads(name, says):
    from icsim.routing.oblivious import NotOblivious
    with pytest.raises(NotOblivious, match=says):
        exact(name, (4, 4))


# ------------------------------------------------------------------ a draw is made once
def test_a_random_decision_draws_once_per_packet_whatever_the_attempts():
    """The engines offer a packet to its router again while its queue is full; ROMM's draw
    must stay (a redraw would pick the free way: load-adaptive)."""
    from icsim.model.packet import Packet

    topo = Torus((8, 8))
    romm = ROUTING.get("romm")(topo, Config(topology={"dims": [8, 8]}))
    packet = Packet(0, src=0, dst=27, birth=0, age=0, measured=False)
    draws = iter([0.0, 0.0, 0.99, 0.99])
    romm.interpreter.inject(0, packet, [0] * 4, lambda: next(draws))
    first = (packet.target, packet.phase, packet.sel)
    romm.interpreter.inject(0, packet, [0] * 4, lambda: next(draws))
    assert (packet.target, packet.phase, packet.sel) == first and next(draws) == 0.99


def test_rlb_saturates_on_its_worst_case_permutation_above_the_exact_bound(tmp_path):
    """RLB's exact worst case on the 8-ary 2-cube is 0.311 of capacity: simulated at 0.35 (the
    clean profile, single-packet messages) its own worst-case permutation is not sustained,
    at 0.25 it is.  With a redraw at every attempt it sustained 0.39."""
    from icsim.experiments.analyze import write_permutation

    rlb = exact("rlb", (8, 8))
    path = tmp_path / "wc.txt"
    write_permutation(path, rlb.worst_case().mapping, "RLB's worst case")

    def at(load: float) -> dict:
        return run(load_config(bundled("ofr", "clean", "k8.yaml"), [
            "topology.dims=[8,8]", "routing.algorithm=rlb", f"traffic.load={load}",
            "traffic.message_packets=1", "traffic.pattern=permutation",
            f"traffic.params.permutation.file={path}", "nic.bandwidth_gbps=160",
            "nic.injection_rate_factor=8", "run.measure_us=200"]), engine="compiled")
    assert not at(0.25)["saturated"] and at(0.35)["saturated"]


# ------------------------------------------------------------------ dateline VCs
def escape_paths(routing) -> list[list[tuple[int, int, int]]]:
    """Every path the program can give a packet, as its (node, port, VC) channels: each pair,
    each option of the decision, each intermediate target (when the decision draws one) and
    each port filter of one direction per dimension (when a phase is filtered) -- a superset of
    what the draws can give, walked with the interpreter the SimPy engine runs."""
    from itertools import product

    from icsim.model.packet import Packet
    from icsim.routing.program import RandomInBox, RandomTarget

    topo, form, it = routing.topology, routing.form, routing.interpreter
    n, N = topo.n, topo.num_nodes
    options = form.decision.options() if form.decision is not None else (None,)
    targets = (range(N) if isinstance(form.decision, (RandomInBox, RandomTarget)) else (-1,))
    sels = ([sum(1 << (2 * d + b) for d, b in enumerate(bits))
             for bits in product((0, 1), repeat=n)]
            if any(ph.filtered for ph in form.phases) else [-1])
    paths = []
    for src, dst, t, option, sel in product(range(N), range(N), targets, options, sels):
        if src == dst:
            continue
        p = Packet(0, src=src, dst=dst, birth=0, age=0, measured=False)
        p.phase, p.target, p.sel = (option.phase if option else 0), t, sel
        node, path = src, []
        while len(path) <= 4 * N:
            groups = it.candidates(node, p)
            if not groups:                # a filter no draw gives with this target: no path
                path = []                 # (no candidate: the engines' guard would stop it)
                break
            port, vc = groups[-1][0]
            if port == topo.num_ports:
                break
            path.append((node, port, vc))
            node = topo.neighbor_table[node][port]
        else:
            raise AssertionError(f"{routing.name}: {src} -> {dst} via {t} does not arrive")
        if path:
            paths.append(path)
    return paths


@pytest.mark.parametrize("name, settings", DATELINE, ids=lambda v: str(v))
def test_dateline_vcs_make_the_channel_dependencies_acyclic(name, settings):
    """On the 4-ary 2-cube (DOR on a 4x4x3 torus too), every path the program can give,
    on its VCs: without the bubble rule's exemption the dependency graph of the default
    (bubble) VCs has a cycle, that of the dateline VCs none (Dally and Seitz)."""
    from icsim.routing.deadlock import dependency_graph, find_cycle

    for dims in [(4, 4)] + ([(4, 4, 3)] if name == "dor" else []):
        topo = Torus(dims)
        cls = ROUTING.get(name)
        cfg = Config(topology={"dims": list(dims)})
        dateline = cls(topo, cfg, cls.Settings(**settings))
        bubble = cls(topo, cfg, cls.Settings(**{**settings, "deadlock": "bubble"}))
        assert len(dateline.vcs) == 2 * len(bubble.vcs)
        assert not any(vc.bubble for vc in dateline.vcs)
        assert find_cycle(dependency_graph(escape_paths(bubble))) is not None
        assert find_cycle(dependency_graph(escape_paths(dateline))) is None


def test_a_hop_takes_the_dateline_vc_while_the_wraparound_is_ahead():
    """DOR on an 8-ring from 6 to 1 (+3: 6 -> 7 -> 0 -> 1): the hops out of 6 and 7 on the
    dateline VC, the one out of 0 on the other; from 1 to 3 no wraparound at all; from 1 to 6
    the - way (1 -> 0 -> 7 -> 6), its wraparound 0 -> 7 the last hop on the dateline VC."""
    from icsim.model.packet import Packet

    topo = Torus((8,))
    cls = ROUTING.get("dor")
    dor = cls(topo, Config(topology={"dims": [8]}), cls.Settings(deadlock="dateline"))
    assert [vc.name for vc in dor.vcs] == ["escape", "escape_dateline"]

    def vcs(src, dst):
        p, node, out = Packet(0, src=src, dst=dst, birth=0, age=0, measured=False), src, []
        while node != dst:
            (port, vc), = dor.interpreter.candidates(node, p)[-1]
            out.append(vc)
            node = topo.neighbor_table[node][port]
        return out
    assert vcs(6, 1) == [1, 1, 0] and vcs(1, 3) == [0, 0] and vcs(1, 6) == [1, 1, 0]


def test_dateline_vcs_are_refused_on_a_topology_without_coordinates():
    """The dateline test reads coordinates (and the torus's ports 2d, 2d + 1): a program that
    asks for it on a graph is refused when it is built, naming what it lacks."""
    from icsim.model.topology import Graph
    from icsim.model.topology.base import CapabilityError
    from icsim.routing.program import PAIR, Phase, Program
    from icsim.routing.registry import ESCAPE, VC, Routing

    class OnDatelines(Routing):
        name = "on_datelines"
        vcs = (VC("a", ESCAPE), VC("b", ESCAPE))

        def program(self):
            return Program((Phase(PAIR, ports=np.ones(16, np.int64), escape_vc=0,
                                  dateline_vc=1),))

    ring = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    with pytest.raises(CapabilityError, match="dateline VCs needs"):
        OnDatelines(ring, Config(topology={"dims": [4]})).form


# ------------------------------------------------------------------ both engines
def config(name: str, settings: dict, dims, load: float, pattern: str = "uniform") -> dict:
    return {"topology": {"kind": "torus", "dims": list(dims)},
            "routing": {"algorithm": name, name: settings} if settings else {"algorithm": name},
            "traffic": {"load": load, "message_packets": 4, "pattern": pattern},
            "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 60}}


@pytest.mark.parametrize("name, settings", NEW + DATELINE, ids=lambda v: str(v))
@pytest.mark.parametrize("dims", [(4, 4), (6, 3, 4)])
@pytest.mark.parametrize("load", [0.3, 1.2])
def test_every_new_algorithm_gives_identical_records_on_both_engines(name, settings, dims,
                                                                      load):
    if name == "o1turn" and len(dims) != 2:
        dims = (6, 3)
    cfg = config(name, settings, dims, load)
    simpy = pinned(run(from_dict(cfg), engine="simpy"))
    assert simpy == pinned(run(from_dict(cfg), engine="compiled"))
    assert simpy["packets_delivered"] > 0
    if name in ("val", "rlb", "goal"):
        assert simpy["dilation"] > 1.0              # they leave the minimal paths


# ------------------------------------------------------------------ past saturation
@pytest.mark.parametrize("name, settings", NEW + DATELINE, ids=lambda v: str(v))
@pytest.mark.parametrize("pattern", ["uniform", "neighbor", "bitcomplement", "transpose",
                                     "tornado"])
def test_at_gamma_1_5_every_packet_is_delivered(name, settings, pattern):
    """The reference profile's finite run (3 messages per node) at γ = 1.5 on the 8-ary
    2-cube: no deadlock (the watchdog and the end-of-run check would raise) and no packet
    left behind."""
    overrides = ["topology.dims=[8,8]", f"traffic.pattern={pattern}",
                 f"routing.algorithm={name}", "traffic.load=1.5", "traffic.message_packets=8",
                 "run.messages_per_node=3",
                 *(f"routing.{name}.{k}={v}" for k, v in settings.items())]
    r = run(load_config(bundled("ofr", "reference", "k8.yaml"), overrides), engine="compiled")
    assert r["packets_delivered"] == r["packets_measured"] == 64 * 3 * 8


# ------------------------------------------------------------------ the simulated side
def test_the_simulated_reproduction_holds_dor_to_its_exact_values_and_redraws(tmp_path,
                                                                              monkeypatch):
    """``icsim reproduce torus-routing --simulate`` on the 4-ary 2-cube with DOR and GOAL
    only: DOR's γ* never above its exact ideal, within a grid step of it on BC and TP (one
    bottleneck, no queueing to spare); a run without ``--simulate`` reads the table back."""
    import icsim
    from icsim.experiments.papers import torus_sim

    monkeypatch.setattr(torus_sim, "SIMULATED", (torus_sim.SIMULATED[0],
                                                 torus_sim.SIMULATED[-2]))
    monkeypatch.setattr(torus_sim, "DATELINE", torus_sim.DATELINE[:1])
    monkeypatch.setattr(torus_sim, "CONFIRM_MEASURE_US", 400)
    made = icsim.reproduce("torus-routing", out=str(tmp_path), k=4, n=[2], perms=2,
                           simulate=True, sim_perms=1, workers=1)
    sim = made.tables["simulated"].set_index(["algorithm", "column"])
    dor = sim.loc["DOR"]
    assert (dor.simulated <= dor.ideal + 1e-9).all()
    # DOR on dateline VCs: the same paths, so the same ideals, on its five traffics
    dateline = sim.loc["DOR, dateline"]
    assert sorted(dateline.index) == sorted(torus_sim.DATELINE_COLUMNS)
    assert (dateline.ideal == dor.ideal[dateline.index]).all()
    assert (dateline.simulated <= dateline.ideal + 1e-9).all()
    assert "dateline VCs against the bubble rule" in made.report
    assert (dor.loc[["BC", "TP"], "simulated"] >= dor.loc[["BC", "TP"], "ideal"] - 0.05).all()
    assert sim.loc[("GOAL", "WC"), "ideal"] != sim.loc[("GOAL", "WC"), "ideal"]   # adaptive
    assert (tmp_path / "sim" / "latency.png").exists()
    # the confirming search ran every curve with its longer window, around the first γ*
    confirm = pd.read_csv(tmp_path / "sim" / "confirm" / "results.csv")
    assert (confirm["config.run.measure_us"] == 400).all()
    fine = torus_sim.STEP / 2 ** torus_sim.REFINE
    assert (sim.simulated <= sim["first"] + 2 * fine + 1e-9).all()
    again = icsim.reproduce("torus-routing", out=str(tmp_path), k=4, n=[2], perms=2)
    assert again.report == made.report


def test_the_simulated_reproduction_runs_a_3_cube_too(tmp_path, monkeypatch):
    """The 4-ary 3-cube with DOR alone: the 3-D transpose for TP, its sweep in ``sim-3``,
    DOR's γ* on BC and its worst case within a grid step under their exact values."""
    import icsim
    from icsim.experiments.papers import torus_sim

    monkeypatch.setattr(torus_sim, "SIMULATED", torus_sim.SIMULATED[:1])
    monkeypatch.setattr(torus_sim, "CONFIRM_MEASURE_US", 400)
    made = icsim.reproduce("torus-routing", out=str(tmp_path), k=4, n=[3], perms=1,
                           simulate=True, sim_perms=1, workers=1)
    assert "## Simulated on the 4-ary 3-cube" in made.report
    dor = made.tables["simulated"].set_index("column")
    assert (dor.simulated <= dor.ideal + 1e-9).all()
    assert (dor.loc[["BC", "WC"], "simulated"] >= dor.loc[["BC", "WC"], "ideal"] - 0.05).all()
    rows = pd.read_csv(tmp_path / "sim-3" / "results.csv")
    assert set(rows["config.traffic.pattern"]) >= {"transpose3d", "permutation"}
