"""Dragonfly, fat tree and HyperX with their routing, in both engines: identical results,
exact zero-load latency along the published routes, deadlock freedom checked at build time,
and the analytic facts the papers rest on (MIN's ceiling under group shift, D-mod-k's
contention-free shifts)."""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest

from icsim.model.config import ConfigError, config_from_dict
from icsim.model.packet import Packet
from icsim.routing.program import Program
from icsim.simulator.build import build
from icsim.simulator.simulation import run
from tests.golden.cases import pinned
from tests.test_concentration import deliver
from tests.test_model import zero_load_ns

DRAGONFLY = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}          # 9 groups, 72 terminals
FAT_TREE = {"kind": "fat_tree", "k": 4, "n": 2}                     # 16 terminals
HYPERX = {"kind": "hyperx", "dims": [3, 3], "p": 2, "trunking": 2}  # 18 terminals

CASES = [(DRAGONFLY, alg, pat) for alg in ("dfly_min", "dfly_val", "ugal_l", "ugal_g", "par")
         for pat in ("uniform", "group_shift")]
CASES += [(FAT_TREE, alg, pat) for alg in ("dmodk", "updown_adaptive")
          for pat in ("uniform", "permutation")]
CASES += [(HYPERX, alg, pat) for alg in ("hx_dor", "hx_adaptive", "hx_dal", "vlb", "ugal")
          for pat in ("uniform", "permutation")]
CASES += [(HYPERX, "hx_dal", "line_shift")]
IDS = [f"{t['kind']}-{a}-{p}" for t, a, p in CASES]


def config(topology, algorithm, pattern="uniform", load=0.4, **sections):
    data = {"seed": 3, "topology": topology, "routing": {"algorithm": algorithm},
            "traffic": {"pattern": pattern, "load": load, "message_packets": 2},
            "run": {"warmup_us": 3, "measure_us": 12, "drain_us": 30}}
    data.update(sections)
    return config_from_dict(data)


@pytest.mark.parametrize("topology,algorithm,pattern", CASES, ids=IDS)
@pytest.mark.parametrize("load", [0.4, 1.5])
def test_both_engines_give_identical_results(topology, algorithm, pattern, load):
    cfg = config(topology, algorithm, pattern, load)
    a, b = run(cfg, engine="simpy"), run(cfg, engine="compiled")
    assert pinned(a) == pinned(b)
    assert a["topology"] == build(cfg).topology.describe()


@pytest.mark.parametrize("topology,algorithm,pattern", CASES, ids=IDS)
def test_every_packet_is_delivered_past_saturation(topology, algorithm, pattern):
    cfg = config(topology, algorithm, pattern, 1.5,
                 run={"mode": "finite", "messages_per_node": 10})
    res = run(cfg, engine="compiled")
    assert res["packets_delivered"] == res["packets_generated"] > 0
    assert not res["saturated"] or res["saturation_reason"] != "deadlock"


def route_hops(cfg, src, dst):
    """Router hops of the minimal route between two terminals, from the topology."""
    topo = build(cfg).topology
    return topo.distance(topo.terminal_router(src), topo.terminal_router(dst))


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
@pytest.mark.parametrize("topology,algorithm", [(DRAGONFLY, "dfly_min"), (DRAGONFLY, "par"),
                                                (FAT_TREE, "dmodk"),
                                                (FAT_TREE, "updown_adaptive"),
                                                (HYPERX, "hx_dor"), (HYPERX, "hx_adaptive"),
                                                (HYPERX, "hx_dal")])
def test_a_packet_at_zero_load_takes_the_formula_along_its_route(table1, topology, algorithm,
                                                                 engine):
    cfg = config(topology, algorithm)
    model = build(cfg)
    topo = model.topology
    rng = np.random.default_rng(0)
    pairs = [(0, 1)] + [tuple(rng.choice(topo.num_terminals, 2, replace=False).tolist())
                        for _ in range(8)]
    for src, dst in pairs:
        tally, (t,) = deliver(cfg, [(0, src, dst, 1)], engine)
        ((hops, _),) = tally.pairs
        if algorithm in ("dfly_min", "par"):  # local, global, local (PAR: minimal when idle)
            h = int(model.routing.routes.hops[topo.terminal_router(src) * topo.num_nodes
                                              + topo.terminal_router(dst)])
        else:                                # minimal on a tree and a HyperX
            h = route_hops(cfg, src, dst)
        assert tally.sent[src] == tally.received[dst] == 1 and hops == h
        assert t == pytest.approx(zero_load_ns(table1, h), abs=1e-6)


def hops_of(tally) -> list[int]:
    """The hops of every measured packet, from the (hops, distance) counts."""
    return sorted(h for (h, _), n in tally.pairs.items() for _ in range(n))


def test_dragonfly_minimal_routes_cross_at_most_one_global_link(table1):
    model = build(config(DRAGONFLY, "dfly_min"))
    hops = model.routing.routes.hops
    assert hops.max() == 3
    # the minimal route is as short as the local-global-local count, never shorter than the
    # graph distance
    topo = model.topology
    n = topo.num_nodes
    for r in range(0, n, 5):
        for t in range(0, n, 3):
            assert topo.distance(r, t) <= hops[r * n + t] <= topo.lgl_hops(r, t)


def walk(model, src: int, dst: int, phase: int = 0, target: int = -1) -> list[int]:
    """The routers a packet from router ``src`` to ``dst`` visits, set off in ``phase``
    heading for ``target``: the interpreter's first candidate at every router (a dragonfly
    phase names one port per entry), over the topology's links."""
    it, nbr = model.routing.interpreter, model.topology.neighbor_array
    packet = Packet(0, src, dst, 0, 0, False)
    packet.phase, packet.target = phase, target
    node, path = src, [src]
    for _ in range(12):
        ((port, vc), *_), *_ = it.candidates(node, packet)
        if port == it.eject:
            assert node == dst
            return path
        it.admitted(node, packet, port, vc)
        node = int(nbr[node, port])
        path.append(node)
    raise AssertionError(f"no delivery from {src} to {dst} in 12 hops: {path}")


def global_links(path: list[int], a: int) -> int:
    """Links of ``path`` between two groups (routers are numbered group by group)."""
    return sum(u // a != v // a for u, v in zip(path, path[1:]))


@pytest.mark.parametrize("topology", [DRAGONFLY, {"kind": "dragonfly", "p": 1, "a": 4, "h": 2,
                                                  "g": 5}], ids=["one-link", "two-links"])
def test_every_minimal_route_crosses_at_most_one_global_link_and_valiant_two(topology):
    """Every route walked hop by hop through the program, every (source, destination) pair
    and every Valiant target of the source: MIN crosses exactly one link between groups when
    the two are in different groups (none otherwise) in the hops its table says; Valiant's
    crosses at most two."""
    model = build(config(topology, "dfly_val"))
    topo, routes = model.topology, model.routing.routes
    n, a = topo.num_nodes, topo.routers_per_group
    minimal = build(config(topology, "dfly_min"))
    for s in range(n):
        for d in range(n):
            path = walk(minimal, s, d)
            assert global_links(path, a) == (s // a != d // a)
            assert len(path) - 1 == routes.hops[s * n + d] <= 3
            for via in routes.entry[s]:
                assert global_links(walk(model, s, d, 0, int(via)), a) <= 2


def test_minimal_routing_under_group_shift_stops_at_one_link_per_group():
    # every terminal of a group sends to the next group: the one global link between them
    # carries a p terminals' traffic, so MIN accepts at most 1 / (a p) = 1/8
    res = run(config(DRAGONFLY, "dfly_min", "group_shift", 0.5), engine="compiled")
    assert res["saturated"]
    assert res["accepted_load"] == pytest.approx(1 / 8, rel=0.03)
    val = run(config(DRAGONFLY, "ugal_g", "group_shift", 0.3), engine="compiled")
    assert not val["saturated"] and val["derouted"]["valiant"] > 0.5


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_dmodk_routes_a_shift_permutation_without_contention(table1, engine):
    # every terminal of a 4-ary 2-tree sends one packet to the terminal 4 on (the next leaf)
    # at once: destination-mod-k gives each its own up and down channels, so every packet
    # arrives at zero-load latency (up to the top and down: 2 hops)
    cfg = config(FAT_TREE, "dmodk")
    tally, times = deliver(cfg, [(0, s, (s + 4) % 16, 1) for s in range(16)], engine)
    assert hops_of(tally) == [2] * 16
    assert times == pytest.approx([zero_load_ns(table1, 2)] * 16, abs=1e-6)


def test_a_routing_whose_dependencies_close_a_cycle_is_refused_at_build():
    model = build(config(DRAGONFLY, "dfly_min"))
    routing = model.routing
    one_vc = Program((routing.routes.phase(0, 0),))         # every hop on one VC
    with pytest.raises(ValueError, match="channel-dependency graph has a cycle"):
        routing.check_dependencies(one_vc)
    routing.check_dependencies(routing.form)                # the published discipline


@pytest.mark.parametrize("topology,algorithm,needs", [
    ({"kind": "torus", "dims": [4, 4]}, "dfly_min", "groups"),
    (DRAGONFLY, "dmodk", "updown"), (FAT_TREE, "hx_dor", "lines"),
    (HYPERX, "ofr", "offsets")])
def test_an_algorithm_on_a_topology_it_cannot_route_is_refused(topology, algorithm, needs):
    with pytest.raises(ConfigError, match=needs):
        build(config(topology, algorithm))


def test_valiant_and_ugal_refuse_shortest_paths_that_close_a_cycle():
    # a ring of 8 routers as a graph (no coordinates, so no dateline): its shortest paths
    # close the ring on one VC, and the build's dependency check names the cycle
    ring = {"kind": "random_regular", "nodes": 8, "degree": 2, "seed": 0}
    with pytest.raises(ConfigError, match="channel-dependency graph has a cycle of 8 "):
        build(config(ring, "ugal"))


@pytest.mark.parametrize("algorithm", ["vlb", "ugal"])
def test_valiant_and_ugal_run_on_a_torus_on_dateline_vcs(algorithm):
    # on a torus the shortest paths are dimension order: each phase on a dateline pair
    cfg = config({"kind": "torus", "dims": [4, 4]}, algorithm, load=0.2)
    model = build(cfg)
    assert [vc.name for vc in model.routing.vcs] == ["phase0", "phase0_dateline", "phase1",
                                                     "phase1_dateline"]
    assert pinned(run(cfg, engine="simpy")) == pinned(run(cfg, engine="compiled"))


def test_group_shift_needs_groups_and_line_shift_lines():
    with pytest.raises(ConfigError, match="group_shift: needs a topology of groups"):
        build(config(FAT_TREE, "dmodk", "group_shift"))
    with pytest.raises(ConfigError, match="line_shift: needs a topology of lines"):
        build(config(DRAGONFLY, "dfly_min", "line_shift"))


@pytest.mark.parametrize("topology,key", [
    ({"kind": "dragonfly", "p": 4, "a": 8, "h": 4, "g": 40}, "topology.g"),
    ({"kind": "dragonfly", "p": 1, "a": 3, "h": 1, "g": 3}, "topology.g"),
    ({"kind": "fat_tree", "k": 4, "n": 3, "taper": 3}, "topology.taper"),
    ({"kind": "hyperx", "dims": [4, 1]}, "topology.dims"),
    ({"kind": "torus", "dims": [4, 4], "a": 2}, "topology.a"),
    ({"kind": "dragonfly", "p": 4, "a": 8}, "topology.h"),
    ({"kind": "dragonfly", "p": 4, "a": 200, "h": 40}, "topology")])
def test_an_impossible_topology_is_one_line_naming_its_key(topology, key):
    with pytest.raises(ConfigError) as err:
        build(config(topology, "dfly_min"))
    assert err.value.path == key
    assert "\n" not in str(err.value)


def test_the_balanced_dragonfly_of_the_papers():
    cfg = config({"kind": "dragonfly", "p": 4, "a": 8, "h": 4}, "ugal_l")
    model = build(cfg)
    topo = model.topology
    assert (topo.num_terminals, topo.num_nodes, topo.num_groups) == (1056, 264, 33)
    spec = dataclasses.replace(model.spec)
    assert spec.ports_per_router == 7 + 4 + 4      # local, global, a terminal each


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
@pytest.mark.parametrize("flow", ["credit", "ack_nak"])
def test_zero_load_latency_is_exact_per_link_class(table1, flow, engine):
    # global links 40 Gb/s and 1 µs, local links 48 ns: a local hop takes 204.8 + 48 ns, a
    # global one 102.4 + 1000 ns, the NICs 2 x (64 + 80) ns
    cfg = config(DRAGONFLY, "dfly_min", router={"flow_control": flow},
                 link={"classes": {"global": {"latency_ns": 1000.0, "bandwidth_gbps": 40.0},
                                   "local": {"latency_ns": 48.0}}})
    tally, times = deliver(cfg, [(0, 0, 71, 1), (0, 4, 6, 1)], engine)
    assert hops_of(tally) == [1, 3]             # 4 -> 6 one local hop; 0 -> 71 local, global, local
    assert times == [pytest.approx(288 + 252.8, abs=1e-6),
                     pytest.approx(288 + 2 * 252.8 + 1102.4, abs=1e-6)]


def test_channel_utilisation_is_reported_per_link_class():
    res = run(config(DRAGONFLY, "dfly_min", "group_shift", 0.3), engine="compiled")
    by_class = res["channel_utilisation_by_class"]
    assert set(by_class) == {"local", "global"}
    # group shift under MIN: each group's one link to the next group runs flat out
    assert by_class["global"]["max"] == pytest.approx(1.0, abs=0.02)
    assert by_class["global"]["mean"] == pytest.approx(1 / 8, rel=0.05)   # 1 link of 8


def test_a_link_class_the_topology_lacks_is_named():
    with pytest.raises(ConfigError, match="link.classes.optical: .* no link class 'optical'"):
        build(config(DRAGONFLY, "dfly_min", link={"classes": {"optical": {"latency_ns": 5.0}}}))


def test_the_dragonfly_reproduction_redraws_the_committed_tables(tmp_path):
    """``icsim reproduce dragonfly`` without ``--simulate`` judges the committed sweeps again
    (no run): the same γ* tables (the main one and UGAL-L's queues) and report, every claim
    agreeing, and the exact bounds."""
    import shutil

    import icsim
    from tests.golden.cases import REPO

    committed = REPO / "experiments" / "results" / "dragonfly"
    shutil.copytree(committed / "sim", tmp_path / "sim")
    shutil.copytree(committed / "queues", tmp_path / "queues")
    for name in ("booksim.csv", "booksim_ugal.csv"):
        if (committed / name).exists():
            shutil.copy(committed / name, tmp_path)
    rep = icsim.reproduce("dragonfly", out=tmp_path)
    for name in ("simulated.csv", "queues.csv"):
        assert (tmp_path / name).read_text() == (committed / name).read_text()
    assert rep.report == (committed / "report.md").read_text()
    assert "| differs" not in rep.report and rep.report.count("| agrees") == 11
    exact = {(r["algorithm"], r["column"]): r["throughput"] for r in
             __import__("csv").DictReader(open(tmp_path / "exact.csv"))}
    assert float(exact[("MIN", "WC")]) == pytest.approx(1 / 32)      # one link per group
    assert float(exact[("VAL", "WC")]) == pytest.approx(0.5)         # two global hops each


def test_par_diverts_at_the_gateway_under_group_shift():
    # the group shift loads each group's one link to the next group: PAR's packets that set
    # off minimally find their gateway's global queue full and take Valiant's way there
    res = run(config(DRAGONFLY, "par", "group_shift", 0.3), engine="compiled")
    assert not res["saturated"]
    assert res["derouted"]["progressive"] > 0.05
    assert res["derouted"]["valiant"] + res["derouted"]["progressive"] > 0.5


def test_dmodk_routes_every_shift_of_a_tree_without_sharing_a_channel():
    """Zahavi (2010), exactly: on the 8-ary 3-tree (512 terminals), every one of the 511 shift
    permutations puts at most one packet on each channel under icsim's D-mod-k routes; a
    random permutation does not (static routing's price)."""
    from icsim.experiments.papers.fat_tree import channel_loads
    from icsim.model.topology import FatTree
    from icsim.routing.algorithms.fattree import TreeRoutes

    tree = FatTree(8, 3)
    routes = TreeRoutes(tree)
    every = np.arange(512)
    assert max(channel_loads(tree, routes, (every + j) % 512)[0] for j in range(1, 512)) == 1
    busiest, ebb = channel_loads(tree, routes, np.random.default_rng(0).permutation(512))
    assert busiest > 1 and 0.4 < ebb < 0.8


def test_the_fat_tree_reproduction_redraws_the_committed_tables(tmp_path):
    import shutil

    import icsim
    from tests.golden.cases import REPO

    committed = REPO / "experiments" / "results" / "fat_tree"
    shutil.copytree(committed / "sim", tmp_path / "sim")
    rep = icsim.reproduce("fat-tree", out=tmp_path)
    assert rep.report == (committed / "report.md").read_text()
    assert (tmp_path / "simulated.csv").read_text() == (committed / "simulated.csv").read_text()


def test_the_channel_heatmap_of_a_dragonfly_and_of_a_fat_tree():
    """A dragonfly's global channels as a group-pair matrix (the group shift lights the
    diagonal above the main one), a fat tree's per level, up and down."""
    import icsim

    res = icsim.run("families/dragonfly_1056",
                    {"routing.algorithm": "dfly_min", "traffic.pattern": "group_shift",
                     "traffic.load": 0.02, "run.warmup_us": 5, "run.measure_us": 20,
                     "run.drain_us": 20})
    ch = res.channels
    assert {"to", "link_class", "group", "to_group"} <= set(ch.columns)
    glob = ch[ch.link_class == "global"].groupby(["group", "to_group"]).utilisation.max()
    hot = glob[glob > 0.3]
    assert len(hot) == 33 and all((j - i) % 33 == 1 for i, j in hot.index)
    fig = icsim.channel_heatmap_figure(res)
    assert any(a.get_gid() == "heatmap:global" for ax in fig.axes for a in ax.get_images())
    tree = icsim.run("families/fat_tree", {"traffic.load": 0.3, "run.warmup_us": 5,
                                           "run.measure_us": 20, "run.drain_us": 20})
    ch = tree.channels
    assert set(ch.level) == {0, 1, 2}
    assert set(ch[ch.level == 0].link_class) == {"up"} and set(ch[ch.level == 2].link_class) \
        == {"down"}                                      # leaves go up, the top only down
    fig = icsim.channel_heatmap_figure(tree)
    gids = {a.get_gid() for ax in fig.axes for a in ax.get_images()}
    assert {"heatmap:up", "heatmap:down"} <= gids


HYPERX_4X4 = {"kind": "hyperx", "dims": [4, 4], "p": 4, "trunking": 1}


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_dal_deroutes_at_most_once_per_dimension_and_never_in_an_aligned_one(engine):
    """A burst along the line shift of a 4x4 HyperX: every terminal sends 12 packets to the
    next router of its row at once.  The minimal queue fills, so DAL deroutes -- within the
    row only (the column is aligned), once: every packet takes 1 hop or 2, some take 2."""
    cfg = config(HYPERX_4X4, "hx_dal", "line_shift")
    topo = build(cfg).topology
    x = topo.coord_array[:, 0]
    nxt = np.arange(16) + (x + 1) % 4 - x
    msgs = [(0, t, int(nxt[t // 4]) * 4 + t % 4, 12) for t in range(64)]
    tally, _ = deliver(cfg, msgs, engine)
    hops = hops_of(tally)
    assert len(hops) == 64 * 12
    assert set(hops) == {1, 2}
    assert sum(h == 2 for h in hops) > 64


def test_dal_holds_the_line_shift_where_minimal_routing_stops_at_one_link():
    """Line shift on a 4x4 HyperX of 4 terminals per router: minimal routing puts a router's
    4 terminals on one link, at most 1/4; DAL's deroutes along the row lift it to S / 2p =
    1/2 (the exact bound of ``icsim reproduce hyperx``), so 0.4 is sustained."""
    ada = run(config(HYPERX_4X4, "hx_adaptive", "line_shift", 0.4), engine="compiled")
    dal = run(config(HYPERX_4X4, "hx_dal", "line_shift", 0.4), engine="compiled")
    assert ada["saturated"] and ada["accepted_load"] == pytest.approx(0.25, rel=0.05)
    assert not dal["saturated"] and 1 < dal["hops"] <= 2


def test_dal_at_low_load_is_minimal():
    res = run(config(HYPERX_4X4, "hx_dal", "uniform", 0.1), engine="compiled")
    ref = run(config(HYPERX_4X4, "hx_adaptive", "uniform", 0.1), engine="compiled")
    assert res["hops"] == ref["hops"]


def test_the_hyperx_reproduction_redraws_the_committed_tables(tmp_path):
    import shutil

    import icsim
    from tests.golden.cases import REPO

    committed = REPO / "experiments" / "results" / "hyperx"
    shutil.copytree(committed / "sim", tmp_path / "sim")
    rep = icsim.reproduce("hyperx", out=tmp_path)
    assert rep.report == (committed / "report.md").read_text()
    assert "| differs" not in rep.report and rep.report.count("| agrees") == 11


@pytest.mark.parametrize("topology", [DRAGONFLY, FAT_TREE, HYPERX],
                         ids=["dragonfly", "fat_tree", "hyperx"])
@pytest.mark.parametrize("layers", ["acro", "lash"])
def test_table_routing_with_virtual_layers_runs_on_every_family(topology, layers):
    """One shortest path per pair of routers (the ``minimal`` generator), made deadlock-free
    by ACRO or LASH layers: both engines identical, every packet delivered past saturation."""
    cfg = config(topology, "table", "uniform", 1.5,
                 routing={"algorithm": "table", "generator": "minimal", "layers": layers},
                 run={"mode": "finite", "messages_per_node": 5})
    a, b = run(cfg, engine="simpy"), run(cfg, engine="compiled")
    assert pinned(a) == pinned(b)
    assert a["packets_delivered"] == a["packets_generated"] > 0


def test_a_program_whose_new_tables_are_wrong_is_refused_naming_the_entry():
    """The checks of the program form's per-entry VCs, terminal escape ports and reroute."""
    from icsim.routing.program import PAIR, Option, Phase, Reroute

    n, ports = 4, np.full(16, 1, dtype=np.int64)
    escape = np.zeros(16, dtype=np.int64)

    def check(*phases, decision=None):
        Program(phases, decision).check(n, 3, 2, None, ("valiant",))

    with pytest.raises(ValueError, match=r"phase 0: escape_vcs\[5\] = 7 is not a VC \(0..1\)"):
        check(Phase(PAIR, ports=ports, escape=escape, escape_vc=0,
                    escape_vcs=np.where(np.arange(16) == 5, 7, 0)))
    with pytest.raises(ValueError, match=r"phase 0: terminal_escape\[2\] = 9 is not a port"):
        check(Phase(PAIR, ports=ports, escape=np.full(16, -1), escape_vc=0,
                    terminal_escape=np.array([0, 1, 9, 0, 0, 0, 0, 0])))
    with pytest.raises(ValueError, match=r"phase 0: escape\[0\] = -1 is not a port"):
        check(Phase(PAIR, ports=ports, escape=np.full(16, -1), escape_vc=0))
    with pytest.raises(ValueError, match="phase 0: a detour group rides on the adaptive VC"):
        check(Phase(PAIR, ports=ports, escape=escape, escape_vc=0, detour=ports))
    with pytest.raises(ValueError, match=r"phase 0: detour\[3\] names a port beyond 2"):
        check(Phase(PAIR, ports=ports, adaptive_vc=0, detour=np.where(np.arange(16) == 3, 8,
                                                                      0)))
    with pytest.raises(ValueError, match="phase 0: detour_from needs a detour table and 16 "):
        check(Phase(PAIR, ports=ports, adaptive_vc=0, detour=ports, detour_from=ports[:4]))
    with pytest.raises(ValueError, match="a reroute applies the program's UGAL rule"):
        check(Phase(PAIR, ports=ports, escape=escape, escape_vc=0,
                    reroute=Reroute(Option(phase=0, kind="valiant"))))


TWO_LINKS = {"kind": "dragonfly", "p": 1, "a": 4, "h": 2, "g": 5}   # 2 links per group pair


def test_a_dragonfly_of_five_groups_has_two_global_links_between_every_two():
    """Counted by hand: 4 routers x 2 global ports = 8 per group, spread over the 4 other
    groups, 2 links to each; 5 x 8 / 2 = 20 global links; each group a K4 of 6 local links.
    Counted here on the links as networkx sees them (a multigraph: parallel links stay two)."""
    topo = build(config(TWO_LINKS, "dfly_min")).topology
    a = 4
    graph = nx.MultiGraph()
    nbr = topo.neighbor_array
    for u in range(topo.num_nodes):
        for port in range(topo.num_ports):
            v = int(nbr[u, port])
            if u < v:
                graph.add_edge(u, v)
    between: dict[tuple[int, int], int] = {}
    for u, v in graph.edges():
        if u // a != v // a:
            key = (min(u // a, v // a), max(u // a, v // a))
            between[key] = between.get(key, 0) + 1
    assert topo.num_groups == 5 and topo.num_nodes == 20
    assert between == {(i, j): 2 for i in range(5) for j in range(i + 1, 5)}
    assert graph.number_of_edges() == 20 + 5 * 6
    for grp in range(5):
        members = range(grp * a, grp * a + a)
        assert nx.Graph(graph.subgraph(members)).number_of_edges() == 6
    assert nx.diameter(nx.Graph(graph)) == 3


@pytest.mark.parametrize("algorithm", ["dfly_min", "dfly_val", "ugal_l", "ugal_g", "par"])
@pytest.mark.parametrize("pattern", ["uniform", "group_shift"])
def test_two_links_between_groups_both_engines_identical_and_every_packet_delivered(
        algorithm, pattern):
    cfg = config(TWO_LINKS, algorithm, pattern, 1.5)
    a, b = run(cfg, engine="simpy"), run(cfg, engine="compiled")
    assert pinned(a) == pinned(b)
    done = run(config(TWO_LINKS, algorithm, pattern, 1.5,
                      run={"mode": "finite", "messages_per_node": 10}), engine="compiled")
    assert done["packets_delivered"] == done["packets_generated"] > 0


UGAL_RULES = [{"decide": "every_attempt"}, {"weights": "one_two", "threshold": 3},
              {"decide": "every_attempt", "weights": "one_two"}]


@pytest.mark.parametrize("algorithm", ["ugal_l", "ugal_g", "par"])
@pytest.mark.parametrize("rule", UGAL_RULES, ids=["every-attempt", "one-two", "both"])
@pytest.mark.parametrize("pattern,load", [("uniform", 1.5), ("group_shift", 0.4),
                                          ("group_shift", 1.5)])
def test_every_ugal_rule_gives_identical_results_in_both_engines(algorithm, rule, pattern, load):
    cfg = config(DRAGONFLY, algorithm, pattern, load,
                 routing={"algorithm": algorithm, algorithm: rule})
    a, b = run(cfg, engine="simpy"), run(cfg, engine="compiled")
    assert pinned(a) == pinned(b)


def ugal_at_the_source(decide: str, weights: str = "hops"):
    """A UGAL-L interpreter bound to queues all empty, and what it is asked: router 0 to a
    destination 3 hops away, with a drawn Valiant target whose route leaves router 0 by
    another port than the minimal one (the draw forced to it): ``(model, interpreter,
    occupancy, V, destination, target)``."""
    model = build(config(DRAGONFLY, "ugal_l", routing={
        "algorithm": "ugal_l", "ugal_l": {"decide": decide, "weights": weights}}))
    topo, routes = model.topology, model.routing.routes
    it = model.routing.interpreter
    V, P = len(model.routing.vcs), topo.num_ports + topo.terminals_per_router
    occupancy = [0] * (topo.num_nodes * P * V)
    targets = routes.entry[0]
    dst, j = next((d, j) for d in range(topo.num_nodes) if routes.hops[d] == 3
                  for j, via in enumerate(targets) if routes.port[via] != routes.port[d])
    it.bind_queues(occupancy, V, P, 0, lambda: (j + 0.5) / len(targets))
    return model, it, occupancy, V, dst, int(targets[j])


@pytest.mark.parametrize("decide", ["once", "every_attempt"])
def test_ugal_decided_once_keeps_its_choice_when_the_queues_change(decide):
    """Empty queues: the minimal route.  Then the source's queue of the minimal route's first
    port fills: decided at every attempt, the packet's next attempt goes Valiant's way;
    decided once, it keeps the minimal route and waits for that queue.  (Mutation tried:
    ``Interpreter._once`` without its UGAL ``once`` term fails the ``once`` case.)"""
    model, it, occupancy, V, dst, via = ugal_at_the_source(decide)
    packet = Packet(0, 0, dst, 0, 0, False)
    it.inject(0, packet, None, None)
    assert packet.target == -1 and packet.deroute == 0             # minimal
    occupancy[int(model.routing.routes.port[dst]) * V] = 8
    it.inject(0, packet, None, None)
    if decide == "once":
        assert packet.target == -1 and packet.deroute == 0
    else:
        assert packet.target == via and packet.deroute == 1         # valiant


@pytest.mark.parametrize("weights,minimal", [("hops", False), ("one_two", True)])
def test_ugal_weights_one_two_compare_the_queues_as_booksim2_does(weights, minimal):
    """The minimal route's queue at 2, Valiant's at 1: by hops (3 against Valiant's fewer
    than 6) 2 x 3 > 1 x h_val, Valiant wins; by BookSim2's 1 and 2, 2 x 1 <= 1 x 2, the
    minimal route wins."""
    model, it, occupancy, V, dst, via = ugal_at_the_source("once", weights)
    routes, n = model.routing.routes, model.topology.num_nodes
    assert routes.hops[via] + routes.hops[via * n + dst] < 6
    occupancy[int(routes.port[dst]) * V], occupancy[int(routes.port[via]) * V] = 2, 1
    assert it._choose(0, dst) == (via, minimal)
