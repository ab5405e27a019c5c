"""Dragonfly, fat tree (k-ary n-tree) and HyperX topologies: wiring, ports, distances, errors."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import (ABSENT, ARRANGEMENTS, CAPABILITIES, CapabilityError,
                                  Dragonfly, FatTree, HyperX, Topology)

FAST = settings(max_examples=40, deadline=None)


# ---------------------------------------------------------------------- helpers
def check_links(topo: Topology) -> None:
    """Every channel has exactly one channel back (reverse_ports is an involution on the
    present ports), absent ports have no reverse, and the tables agree."""
    nbr = topo.neighbor_array
    rev = topo.reverse_ports()
    assert nbr.shape == rev.shape == (topo.num_nodes, topo.num_ports)
    assert np.array_equal(np.asarray(topo.neighbor_table, dtype=np.int64).reshape(nbr.shape),
                          nbr)
    present = nbr != ABSENT
    assert (rev[~present] == -1).all()
    u, q = np.nonzero(present)
    v, back = nbr[u, q], rev[u, q]
    assert (back >= 0).all() and (back < topo.num_ports).all()
    assert (nbr[v, back] == u).all()               # the reverse channel leads back
    assert (rev[v, back] == q).all()               # ... and its reverse is the channel
    assert (u != v).all()                          # no self-loops
    assert topo.num_channels == len(u)


def nx_distances(topo: Topology) -> np.ndarray:
    g = nx.Graph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((u, v) for u, _, v in topo.channels())
    n = topo.num_nodes
    out = np.full((n, n), -1, dtype=np.int64)
    for s, row in nx.all_pairs_shortest_path_length(g):
        for t, d in row.items():
            out[s, t] = d
    return out


def all_distances(topo: Topology) -> np.ndarray:
    n = topo.num_nodes
    s, t = np.divmod(np.arange(n * n), n)
    return topo.distances_between(s, t).reshape(n, n)


@st.composite
def dragonflies(draw):
    a = draw(st.integers(1, 6))
    h = draw(st.integers(1, 4))
    g = draw(st.integers(2, a * h + 1))
    if a * h * g % 2:
        g = g - 1 if g > 2 else g + 1
    return Dragonfly(p=draw(st.integers(1, 3)), a=a, h=h, g=g,
                     arrangement=draw(st.sampled_from(ARRANGEMENTS)))


# ---------------------------------------------------------------------- dragonfly
@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_dragonfly_1056(arrangement):
    d = Dragonfly(p=4, a=8, h=4, g=33, arrangement=arrangement)
    assert (d.num_nodes, d.num_terminals, d.num_ports, d.num_groups) == (264, 1056, 11, 33)
    assert d == Dragonfly(4, 8, 4, arrangement=arrangement) == Dragonfly.balanced(
        4, arrangement)
    counts = d.gateway_counts
    assert (counts == 1 - np.eye(33, dtype=np.int64)).all()   # one link per group pair
    assert all_distances(d).max() == 3
    check_links(d)
    assert d.describe() == f"dragonfly p=4 a=8 h=4 g=33 ({arrangement})"


def test_dragonfly_published_arrangements():
    """With g = a*h + 1, global port x of group i leads where the literature says."""
    a, h = 4, 2
    g = a * h + 1
    rules = {
        "absolute": lambda i, x: x if x < i else x + 1,
        "relative": lambda i, x: (i + x + 1) % g,
        "circulant": lambda i, x: (i + (x // 2 + 1) * (1 if x % 2 == 0 else -1)) % g,
    }
    for arrangement, rule in rules.items():
        d = Dragonfly(p=1, a=a, h=h, arrangement=arrangement)
        for r in range(d.num_nodes):
            i = d.group_of(r)
            for j in range(h):
                x = d.local_index(r) * h + j
                assert d.group_of(d.neighbor(r, a - 1 + j)) == rule(i, x), (arrangement, r, j)
    # the circulant pairs port 2m with port 2m + 1
    d = Dragonfly(p=1, a=a, h=h, arrangement="circulant")
    rev = d.reverse_ports()
    for r in range(d.num_nodes):
        for j in range(h):
            x = d.local_index(r) * h + j
            back = d.local_index(d.neighbor(r, a - 1 + j)) * h + rev[r, a - 1 + j] - (a - 1)
            assert back == x ^ 1


@FAST
@given(dragonflies())
def test_dragonfly_links_pair_and_spread_evenly(d):
    check_links(d)
    g, a, h = d.num_groups, d.routers_per_group, d.h
    counts = d.gateway_counts
    off = counts[~np.eye(g, dtype=bool)]
    assert (counts == counts.T).all()
    assert (np.diag(counts) == 0).all()
    assert off.min() >= 1                           # every pair of groups joined
    assert off.max() - off.min() <= 1               # as evenly as possible
    assert (counts.sum(axis=1) == a * h).all()
    for i in range(g):
        for j in range(g):
            gw = d.gateways(i, j)
            assert len(gw) == counts[i, j]
            for r, port in gw.tolist():
                assert d.group_of(r) == i and d.link_class(r, port) == "global"
                assert d.group_of(d.neighbor(r, port)) == j
                assert port in d.global_ports_to(r, j)
    for r in range(d.num_nodes):
        for q in range(d.num_ports):
            v = d.neighbor(r, q)
            if q < a - 1:
                assert d.link_class(r, q) == "local" and d.group_of(v) == d.group_of(r)
                assert d.local_port(r, v) == q
            else:
                assert d.link_class(r, q) == "global" and d.group_of(v) != d.group_of(r)
        assert [d.local_index(d.neighbor(r, q)) for q in range(a - 1)] == \
            [i for i in range(a) if i != d.local_index(r)]


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.parametrize("a,h,g", [(4, 2, 9), (4, 2, 5), (3, 3, 6), (2, 3, 4), (5, 1, 4)])
def test_dragonfly_distance_is_networkx(arrangement, a, h, g):
    d = Dragonfly(p=1, a=a, h=h, g=g, arrangement=arrangement)
    dist = all_distances(d)
    assert np.array_equal(dist, nx_distances(d))
    assert np.array_equal(d.hop_distances(3), dist[3])
    assert d.distance(1, d.num_nodes - 1) == dist[1, -1]
    for s in range(d.num_nodes):            # the local-global-local route is never shorter
        for t in range(0, d.num_nodes, 3):
            assert dist[s, t] <= d.lgl_hops(s, t) <= 3


def test_dragonfly_errors():
    cases = {
        "g": [dict(p=4, a=8, h=4, g=40), dict(p=1, a=2, h=2, g=1), dict(p=1, a=3, h=1, g=3),
              dict(p=1, a=2, h=2, g=2.5)],
        "p": [dict(p=0, a=2, h=2), dict(p=True, a=2, h=2)],
        "a": [dict(p=1, a=0, h=2), dict(p=1, a=-3, h=2)],
        "h": [dict(p=1, a=2, h=0), dict(p=1, a=2, h="2")],
        "arrangement": [dict(p=1, a=2, h=2, arrangement="palmtree")],
    }
    for name, kwargs_list in cases.items():
        for kwargs in kwargs_list:
            with pytest.raises(ValueError, match=f"^{name}: "):
                Dragonfly(**kwargs)
    with pytest.raises(ValueError, match=r"^g: at most a\*h\+1 = 33 groups for a=8, h=4, "
                                         r"got 40$"):
        Dragonfly(p=4, a=8, h=4, g=40)
    with pytest.raises(ValueError, match="odd"):
        Dragonfly(p=1, a=3, h=1, g=3)
    d = Dragonfly(p=1, a=3, h=1, g=4)
    with pytest.raises(ValueError):
        d.local_port(0, 3)


# ---------------------------------------------------------------------- fat tree
def test_fattree_4ary_3tree():
    f = FatTree(4, 3)
    assert (f.num_terminals, f.num_nodes, f.num_leaves, f.num_ports) == (64, 48, 16, 8)
    assert f.terminals_per_router == 4
    assert f.describe() == "fat tree 4-ary 3-tree"
    check_links(f)
    classes = [f.link_class(u, q) for u, q, _ in f.channels()]
    assert classes.count("up") == classes.count("down") == 2 * 16 * 4   # levels 0-1, 1-2
    for u, q, v in f.channels():
        up = f.link_class(u, q) == "up"
        assert f.level(v) == f.level(u) + (1 if up else -1)
        assert (q >= 4) == up
    for r in range(f.num_nodes):
        lv = f.level(r)
        assert f.up_ports(r) == (() if lv == 2 else (4, 5, 6, 7))
        assert f.down_ports(r) == (() if lv == 0 else (0, 1, 2, 3))
    # leaf-to-leaf: twice the levels up to the nearest common ancestor
    for x in range(16):
        for y in range(16):
            nca = f.nca_level(x, y)
            assert f.distance(x, y) == 2 * nca
            assert nca == (0 if x == y else 1 if x // 4 == y // 4 else 2)
    assert np.array_equal(all_distances(f), nx_distances(f))


@pytest.mark.parametrize("k,n,taper", [(4, 3, 1), (2, 4, 2), (3, 3, 3), (4, 2, 2)])
def test_fattree_down_routes_reach_every_terminal(k, n, taper):
    """From every top switch, following down_port_toward reaches the terminal's leaf in n-1
    hops; is_ancestor holds exactly on the way; going up from a leaf reaches the top."""
    f = FatTree(k, n, taper)
    top = [r for r in range(f.num_nodes) if f.level(r) == n - 1]
    assert len(top) == k ** (n - 1) // taper
    for t in range(f.num_terminals):
        for r in top:
            assert f.is_ancestor(r, t)
            u = r
            for _ in range(n - 1):
                port = f.down_port_toward(u, t)
                assert port in f.down_ports(u)
                u = f.neighbor(u, port)
            assert u == t // k and f.down_port_toward(u, t) == ABSENT
        leaf = t // k
        assert f.is_ancestor(leaf, t) and not f.is_ancestor((leaf + 1) % f.num_leaves, t)
    leaf = 0
    for _ in range(n - 1):
        leaf = f.neighbor(leaf, f.up_ports(leaf)[-1])
    assert f.level(leaf) == n - 1


@pytest.mark.parametrize("k,n,taper", [(2, 1, 1), (2, 2, 1), (2, 2, 2), (3, 3, 1), (3, 3, 3),
                                       (2, 4, 2), (4, 3, 2), (4, 3, 4)])
def test_fattree_distance_is_networkx(k, n, taper):
    f = FatTree(k, n, taper)
    check_links(f)
    dist = all_distances(f)
    assert np.array_equal(dist, nx_distances(f))
    assert np.array_equal(f.hop_distances(0), dist[0])


def test_fattree_taper():
    f = FatTree(4, 3, taper=2)
    assert (f.num_nodes, f.num_top, f.num_terminals) == (40, 8, 64)
    assert f.describe() == "fat tree 4-ary 3-tree (taper 2)"
    for r in range(f.num_nodes):
        ups = {0: (4, 5, 6, 7), 1: (4, 5), 2: ()}[f.level(r)]
        assert f.up_ports(r) == ups
        assert f.down_ports(r) == (() if f.level(r) == 0 else (0, 1, 2, 3))
    assert max(f.distance(x, y) for x in range(16) for y in range(16)) == 4


def test_fattree_errors():
    with pytest.raises(ValueError, match=r"^k: a fat tree's arity must be at least 2, got 1$"):
        FatTree(1, 3)
    for kwargs, name in [(dict(k=4, n=0), "n"), (dict(k=4, n=3, taper=3), "taper"),
                         (dict(k=4, n=3, taper=0), "taper"), (dict(k=2.0, n=3), "k"),
                         (dict(k=4, n=1, taper=2), "taper")]:
        with pytest.raises(ValueError, match=f"^{name}: "):
            FatTree(**kwargs)


# ---------------------------------------------------------------------- hyperx
def test_hyperx_4x4_k2():
    x = HyperX((4, 4), p=2, K=2)
    assert (x.num_nodes, x.num_terminals, x.num_ports) == (16, 32, 12)
    assert x.describe() == "hyperx 4x4 K=2 p=2"
    check_links(x)
    assert (x.neighbor_array != ABSENT).sum(axis=1).tolist() == [12] * 16
    assert all_distances(x).max() == 2
    # K parallel links to each of the 3 + 3 routers of its two lines
    for r in range(16):
        nbrs = x.neighbor_array[r].tolist()
        assert sorted(set(nbrs)) == sorted(v for v in range(16) if len(x.differing_dims(r, v))
                                           == 1)
        assert all(nbrs.count(v) == 2 for v in set(nbrs))


@FAST
@given(st.lists(st.integers(2, 5), min_size=1, max_size=3), st.integers(1, 3),
       st.integers(1, 3))
def test_hyperx_ports(shape, p, K):
    x = HyperX(tuple(shape), p=p, K=K)
    check_links(x)
    assert x.num_ports == sum(s - 1 for s in shape) * K
    assert x.num_terminals == p * int(np.prod(shape))
    for r in range(x.num_nodes):
        assert x.node(x.coords(r)) == r
        for port in range(x.num_ports):
            dim, coord, trunk = x.port_info(r, port)
            assert x.port_to(r, dim, coord, trunk) == port
            v = x.neighbor(r, port)
            assert x.coords(v)[dim] == coord and x.differing_dims(r, v) == (dim,)
            assert x.link_class(r, port) == "link"
    ports = [x.port_to(0, d, c, t) for d, s in enumerate(shape) for c in range(1, s)
             for t in range(K)]
    assert ports == list(range(x.num_ports))       # ascending coordinate order, trunks inner


@pytest.mark.parametrize("shape,K", [((3, 4, 2), 2), ((5,), 1), ((2, 2, 2, 2), 1)])
def test_hyperx_distance_is_networkx(shape, K):
    x = HyperX(shape, K=K)
    dist = all_distances(x)
    assert np.array_equal(dist, nx_distances(x))
    assert dist.max() == len(shape)
    assert np.array_equal(x.hop_distances(1), dist[1])


def test_hyperx_errors():
    for kwargs, name in [(dict(S=(4, 1)), "S"), (dict(S=()), "S"), (dict(S=4), "S"),
                         (dict(S=(4, 4), p=0), "p"), (dict(S=(4, 4), K=0), "K"),
                         (dict(S=(4, 2.5)), "S")]:
        with pytest.raises(ValueError, match=f"^{name}: "):
            HyperX(**kwargs)
    with pytest.raises(ValueError):
        HyperX((4, 4)).port_to(0, 0, 0)


# ---------------------------------------------------------------------- shared interface
@pytest.mark.parametrize("topo,cap", [(Dragonfly(2, 4, 2), "groups"), (FatTree(2, 3), "updown"),
                                      (HyperX((3, 3)), "lines")])
def test_capabilities_and_labels(topo, cap):
    assert cap in CAPABILITIES and topo.capabilities == {cap}
    topo.require({cap}, "routing algorithm 'x'")
    other = next(c for c in ("groups", "updown", "lines") if c != cap)
    with pytest.raises(CapabilityError, match=f"needs .*{other}"):
        topo.require({other}, "routing algorithm 'x'")
    assert topo.max_channel_load_factor == 1.0
    assert topo.label == f"the {topo.name}"
    assert topo.where(1).startswith("1 ")
    assert topo.to_json()["kind"]
    assert all(isinstance(topo.port_name(q), str) for q in range(topo.num_ports))
    assert len({topo.port_name(q) for q in range(topo.num_ports)}) == topo.num_ports
    assert topo.same_network(type(topo)(**{k: v for k, v in vars(topo).items()
                                           if k in topo.__dataclass_fields__}))
