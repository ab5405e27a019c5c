"""The families' per-pair tables, built in array code, say what their definitions say: the
channel-dependency graph of a routing program, the hop distances of every topology, and the
tables made once per process (the same object for the same network, another for another)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.config import TopologyConfig, config_from_dict
from icsim.routing.dependencies import dependency_edges, out_masks
from icsim.simulator.build import build_topology, prepare

FAST = settings(max_examples=25, deadline=None)

FAMILY_ALGORITHMS = {
    "dragonfly": ["dfly_min", "dfly_val", "ugal_l", "ugal_g", "par"],
    "fat_tree": ["dmodk", "updown_adaptive"],
    "hyperx": ["hx_dor", "hx_adaptive", "hx_dal"],
    "random_regular": ["vlb", "ugal"],
    "torus": ["vlb", "ugal"],
}


@st.composite
def small_networks(draw):
    """A small topology section of every family (and graphs, tori)."""
    kind = draw(st.sampled_from(sorted(FAMILY_ALGORITHMS)))
    if kind == "dragonfly":
        a, h = draw(st.integers(1, 4)), draw(st.integers(1, 3))
        g = draw(st.integers(2, a * h + 1))
        if a * h * g % 2:
            g = g - 1 if g > 2 else g + 1
        return {"kind": kind, "p": draw(st.integers(1, 2)), "a": a, "h": h, "g": g,
                "arrangement": draw(st.sampled_from(["absolute", "relative", "circulant"]))}
    if kind == "fat_tree":
        k, n = draw(st.integers(2, 4)), draw(st.integers(1, 3))
        taper = draw(st.sampled_from([t for t in range(1, k + 1) if k % t == 0 and n > 1]
                                     or [1]))
        return {"kind": kind, "k": k, "n": n, "taper": taper}
    if kind == "hyperx":
        return {"kind": kind, "dims": draw(st.lists(st.integers(2, 4), min_size=1,
                                                    max_size=3)),
                "p": draw(st.integers(1, 2)), "trunking": draw(st.integers(1, 2))}
    if kind == "torus":
        return {"kind": kind, "dims": draw(st.lists(st.integers(3, 5), min_size=1,
                                                    max_size=2))}
    nodes = draw(st.integers(4, 12))
    return {"kind": kind, "nodes": nodes, "degree": draw(st.sampled_from(
        [d for d in (2, 3, 4) if nodes * d % 2 == 0 and d < nodes])), "seed": draw(st.integers(0, 5))}


def routing_of(topology: dict, algorithm: str):
    prep = prepare(config_from_dict({"topology": topology,
                                     "routing": {"algorithm": algorithm}}))
    return prep.routing_cls(prep.topology, prep.config, prep.settings)


# ------------------------------------------------------------------- channel dependencies
def reference_dependency_edges(program, topology, num_vcs, escape_only):
    """The definition, pair by pair: channel ``(r, b, w)`` a packet heading for ``t`` holds
    (port ``b`` of ``r``'s mask on VC ``w``), to every channel ``(v, b2, w2)`` it may ask for
    at ``v``, the router ``b`` leads to -- in the same phase, or at ``v == t`` in the next
    phase (and its reroute's) to any destination."""
    n, nports = topology.num_nodes, topology.num_ports
    nbr = topology.neighbor_array
    outs = []
    for ph in program.phases:
        masks = out_masks(ph, n, num_vcs, escape_only, topology)
        outs.append(np.array([masks.get(w, np.zeros(n * n, np.int64))
                              for w in range(num_vcs)]))

    def ports(mask):
        return [b for b in range(nports) if (int(mask) >> b) & 1]

    edges = set()
    for f, ph in enumerate(program.phases):
        entering = []
        if ph.next is not None:
            entering.append(outs[ph.next])
            again = program.phases[ph.next].reroute
            if again is not None:
                entering.append(outs[again.valiant.phase])
        for r in range(n):
            for t in range(n):
                for w in range(num_vcs):
                    for b in ports(outs[f][w, r * n + t]):
                        v = int(nbr[r, b])
                        if v < 0:
                            continue
                        held = (r * nports + b) * num_vcs + w
                        rows = ([outs[f][:, v * n + t]] if v != t else
                                [out[:, v * n + d] for out in entering for d in range(n)])
                        for row in rows:
                            for w2 in range(num_vcs):
                                for b2 in ports(row[w2]):
                                    edges.add((held, (v * nports + b2) * num_vcs + w2))
    return edges


@FAST
@given(small_networks(), st.data())
def test_the_dependency_graph_is_its_definition(topology, data):
    algorithm = data.draw(st.sampled_from(FAMILY_ALGORITHMS[topology["kind"]]))
    routing = routing_of(topology, algorithm)
    form = routing.program()
    if routing.datelines:
        form = form.with_datelines()
    topo, num_vcs = routing.topology, len(routing.vcs)
    for escape_only in (False, True):
        src, dst = dependency_edges(form, topo, num_vcs, escape_only)
        got = list(zip(src.tolist(), dst.tolist()))
        assert got == sorted(set(got))                 # each edge once, in order
        assert set(got) == reference_dependency_edges(form, topo, num_vcs, escape_only)


# ------------------------------------------------------------------- the routes' tables
def family(section: dict):
    return build_topology(TopologyConfig(**section))


@FAST
@given(small_networks().filter(lambda t: t["kind"] == "dragonfly"))
def test_dragonfly_minimal_routes_are_their_definition(section):
    from icsim.routing.algorithms.dragonfly import MinimalRoutes

    d = family(section)
    routes, n, a = MinimalRoutes(d), d.num_nodes, d.routers_per_group
    P = d.num_ports + d.terminals_per_router
    for r in range(n):
        for t in range(n):
            k = r * n + t
            if r == t:
                want = (0, 0, -1, r * P)
            elif d.group_of(r) == d.group_of(t):
                port = d.local_port(r, t)
                want = (port, 1, -1, r * P + port)
            else:
                own = d.global_ports_to(r, d.group_of(t))
                if own:                     # its own first link to t's group
                    port, via, lands = own[0], -1, d.neighbor(r, own[0])
                    probe = r * P + port
                else:                       # a local hop to the group's first gateway
                    via, gport = d.gateways(d.group_of(r), d.group_of(t))[0].tolist()
                    port, lands, probe = d.local_port(r, via), d.neighbor(via, gport), \
                        via * P + gport
                want = (port, (1 if own else 2) + (lands != t), via, probe)
                if d.local_index(t) == 0:   # the entry router into t's group
                    others = [j for j in range(d.num_groups) if j != d.group_of(r)]
                    assert routes.entry[r, others.index(d.group_of(t))] == lands
            got = (routes.port[k], routes.hops[k], routes.via[k], routes.probe[k])
            assert tuple(int(x) for x in got) == want, (r, t)
            assert routes.is_global[k] == (want[0] >= a - 1)


@FAST
@given(small_networks().filter(lambda t: t["kind"] == "fat_tree"))
def test_fat_tree_routes_are_their_definition(section):
    from icsim.routing.algorithms.fattree import TreeRoutes

    f = family(section)
    routes, N, k = TreeRoutes(f), f.num_nodes, f.k
    for r in range(N):
        up = f.up_ports(r)
        for t in range(N):
            key = r * N + t
            port, mask = 0, 0
            if t < f.num_leaves and t != r:
                down = f.down_port_toward(r, t * k)
                if down >= 0:
                    port, mask = down, 1 << down
                elif up:                    # climb: D-mod-k's port, or every up port
                    lv = f.level(r)
                    port = -1 if lv == 0 else k + f.digits(t)[lv - 1] % len(up)
                    mask = sum(1 << q for q in up)
            mask = mask - (1 << 64) if mask >= 1 << 63 else mask
            assert (int(routes.port[key]), int(routes.mask[key])) == (port, mask), (r, t)


@FAST
@given(small_networks().filter(lambda t: t["kind"] == "hyperx"))
def test_hyperx_routes_are_their_definition(section):
    from icsim.routing.algorithms.hyperx import LineRoutes

    x = family(section)
    routes, N, K = LineRoutes(x), x.num_nodes, x.K
    for r in range(N):
        for t in range(N):
            dims = x.differing_dims(r, t)
            ports = [x.port_to(r, d, x.coords(t)[d], trunk) for d in dims for trunk in range(K)]
            lines = [p for p in range(x.num_ports) if x.port_info(r, p)[0] in dims]
            dor = x.port_to(r, dims[0], x.coords(t)[dims[0]], t % K) if dims else 0
            assert int(routes.port[r * N + t]) == dor
            assert int(routes.minimal[r * N + t]) == sum(1 << p for p in ports)
            assert int(routes.unaligned[r * N + t]) == sum(1 << p for p in lines)


# ------------------------------------------------------------------- distances
def networkx_distances(topo) -> np.ndarray:
    """Hops between every two routers over the links in service, by networkx (-1: none)."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((u, v) for u, _, v in topo.channels())
    out = np.full((topo.num_nodes, topo.num_nodes), -1, dtype=np.int64)
    for s, row in nx.all_pairs_shortest_path_length(g):
        out[s, list(row)] = list(row.values())
    return out


@FAST
@given(small_networks(), st.data())
def test_distances_are_networkx_shortest_paths(section, data):
    topo = family(section)
    want = networkx_distances(topo)
    n = topo.num_nodes
    s, t = np.divmod(np.arange(n * n), n)
    assert np.array_equal(topo.distances_between(s, t).reshape(n, n), want)
    r = data.draw(st.integers(0, n - 1))
    assert np.array_equal(topo.hop_distances(r), want[r])
    # terminals: the hops between their routers, drawn pairs in any order
    terminals = topo.num_terminals
    pairs = data.draw(st.lists(st.tuples(st.integers(0, terminals - 1),
                                         st.integers(0, terminals - 1)), max_size=50))
    src = np.array([a for a, _ in pairs], dtype=np.int64)
    dst = np.array([b for _, b in pairs], dtype=np.int64)
    routers = topo.terminal_routers
    got = topo.terminal_distances(src, dst)
    assert got.dtype == np.int64 and got.shape == src.shape
    assert np.array_equal(got, want[routers[src], routers[dst]])


def test_a_graph_s_load_factor_counts_the_lowest_port_shortest_paths():
    """A 6-ring with a chord (0-3): route every pair by the lowest port onto a shortest path
    and count the busiest channel, pair by pair."""
    from icsim.model.topology import Graph

    g = Graph.from_edges(6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3)])
    dist, load = g.distances, {}
    for s in range(6):
        for t in range(6):
            u = s
            while u != t:
                v = next(w for w in g.adjacency[u] if dist[w, t] == dist[u, t] - 1)
                load[u, v] = load.get((u, v), 0) + 1
                u = v
    assert g.max_channel_load_factor == max(load.values()) / 6


# ------------------------------------------------------------------- made once per process
def test_kept_gives_the_same_object_for_a_key_and_keeps_the_most_recent():
    from icsim.model.notes import Kept

    kept, made = Kept(2), []

    def make(x):
        made.append(x)
        return np.full(10, x)

    a = kept.get("a", lambda: make(1))
    assert kept.get("a", lambda: make(2)) is a and made == [1]
    b = kept.get("b", lambda: make(3))
    assert b is not a and made == [1, 3]
    kept.get("c", lambda: make(4))                    # the least recently used goes: "a"
    assert kept.get("b", lambda: make(5)) is b and kept.get("a", lambda: make(6)) is not a
    assert made == [1, 3, 4, 6] and len(kept) == 2
    small = Kept(10, max_bytes=100)                   # 80 bytes each: one at a time
    small.get("x", lambda: np.zeros(10))
    small.get("y", lambda: np.zeros(10))
    assert len(small) == 1


def test_topologies_and_programs_are_made_once_per_network():
    from icsim.routing.registry import PROGRAMS
    from tests.test_families import DRAGONFLY, HYPERX, config
    from icsim.simulator.build import build

    PROGRAMS.clear()
    first = build(config(DRAGONFLY, "ugal_l", load=0.2))
    again = build(config(DRAGONFLY, "ugal_l", load=0.6, seed=9))    # another run, same network
    assert again.topology is first.topology
    assert again.routing.form is first.routing.form
    other = build(config(DRAGONFLY, "ugal_l", routing={"algorithm": "ugal_l",
                                                       "ugal_l": {"threshold": 3}}))
    assert other.routing.form is not first.routing.form              # other settings
    assert other.routing.routes is first.routing.routes             # the same routes
    minimal = build(config(DRAGONFLY, "dfly_min"))
    assert minimal.routing.form is not first.routing.form
    assert minimal.routing.routes is first.routing.routes
    bigger = build(config({**DRAGONFLY, "p": 1}, "ugal_l"))
    assert bigger.topology is not first.topology
    assert bigger.routing.form is not first.routing.form
    assert bigger.routing.routes is not first.routing.routes
    assert build(config(HYPERX, "hx_dal")).routing.form is not first.routing.form


@pytest.mark.parametrize("topology,algorithm", [
    ({"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "par"),
    ({"kind": "fat_tree", "k": 4, "n": 2}, "updown_adaptive"),
    ({"kind": "hyperx", "dims": [3, 3], "p": 2, "trunking": 2}, "hx_dal")])
def test_a_run_on_tables_made_before_gives_the_same_record(topology, algorithm):
    from icsim.routing.registry import PROGRAMS, TABLES
    from icsim.simulator.build import TOPOLOGIES
    from icsim.simulator.simulation import run
    from tests.golden.cases import pinned
    from tests.test_families import config

    cfg = config(topology, algorithm, load=0.5)
    for kept in (PROGRAMS, TABLES, TOPOLOGIES):
        kept.clear()
    fresh = pinned(run(cfg, engine="compiled"))
    assert len(PROGRAMS) == len(TABLES) == len(TOPOLOGIES) == 1
    assert pinned(run(cfg, engine="compiled")) == fresh
    assert pinned(run(cfg, engine="simpy")) == fresh
