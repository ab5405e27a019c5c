"""The exact MILP (``generator: optimal``) and the LP bound: optima known by hand on tiny
systems, the proven optimum of the Desmos torus, bounds that never exceed what a table
achieves."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.topology import Torus
from icsim.routing.tables.augment import deadlock_free_routing_graph
from icsim.routing.tables.check import check_table
from icsim.routing.tables.generators import generate
from icsim.routing.tables.metrics import channel_loads, table_metrics
from icsim.routing.tables.optimal import load_lower_bound, optimal
from icsim.routing.tables.traffic import collective_traffic


def _minimal_and_deadlock_free(table):
    for (s, t), ports in table.routes.items():
        assert len(ports) == table.topology.distance(s, t)
    assert check_table(table).ok


def test_four_node_ring_optimum_is_the_perfect_load_two():
    # 12 pairs, total distance 16 over 8 channels: perfect load 2, reached by sending two of
    # the four half-ring pairs each way
    table = optimal(Torus((4,)))
    loads = channel_loads(table).reshape(4, 2)
    assert loads.tolist() == [[2, 2]] * 4
    assert table.meta["status"] == "optimal" and table.meta["load_bound"] == 2
    half = [table.route(s, (s + 2) % 4)[0] for s in range(4)]
    assert sorted(half) == [0, 0, 1, 1]
    _minimal_and_deadlock_free(table)


def test_2x2x2_optimum_is_seven_by_hand():
    # Every Angara route takes its positive steps before its negative ones, so a pair climbs
    # to max(s, t) (bitwise) first.  Node 7 = (1,1,1) sends 7 routes and is passed by the 12
    # pairs with s | t == 7 (s, t != 7): 19 routes leave it over its 3 channels, max >= 7.
    table = optimal(Torus((2, 2, 2)))
    loads = channel_loads(table).reshape(8, 6)
    assert loads[7].sum() == 19
    assert table_metrics(table).max_load == 7
    assert table.meta["status"] == "optimal" and table.meta["load_bound"] == 7
    assert load_lower_bound(Torus((2, 2, 2))).bound == 7           # LP 6.33, rounded up
    # stage 2 at max 7: the least sigma4 (proved, gap 0)
    assert table.meta["sigma_status"] == "optimal" and table.meta["sigma_gap"] == 0
    assert table_metrics(table).sigma4 == pytest.approx(table.meta["sigma4"])
    _minimal_and_deadlock_free(table)


@pytest.mark.slow
def test_desmos_optimum_26_and_sigma4_below_the_papers_tables():
    # paper Table 2, 32 nodes: SSSP 28 / 6.298, Genetic 27 / 6.274, perfect load 16
    table = optimal(Torus((4, 2, 2, 2)), time_limit_s=120)
    m = table_metrics(table)
    assert (m.max_load, m.min_load, m.max_d) == (26, 9, 5)
    assert table.meta["status"] == "optimal" and table.meta["load_bound"] == 26
    assert table.meta["sigma_status"] == "optimal"
    assert m.sigma4 == pytest.approx(6.18438, abs=1e-4) and m.sigma4 < 6.274
    assert load_lower_bound(Torus((4, 2, 2, 2))).lp == pytest.approx(76 / 3)
    _minimal_and_deadlock_free(table)


def test_a_job_on_desmos_16_nodes():
    table = optimal(Torus((4, 2, 2, 2)), nodes=range(16))
    m = table_metrics(table)
    assert (m.max_load, m.channels) == (10, 64) and m.sigma4 == pytest.approx(1.68179, abs=1e-4)


@pytest.mark.slow
@given(st.lists(st.integers(2, 5), min_size=1, max_size=3))
@settings(max_examples=8, deadline=None)
def test_lp_bound_never_exceeds_the_optimum_and_symmetry_changes_nothing(dims):
    topo = Torus(tuple(dims))
    opt = optimal(topo, sigma=False)
    bound = load_lower_bound(topo, routes="deadlock-free")
    assert bound.bound <= table_metrics(opt).max_load == opt.meta["max_load"]
    assert opt.meta["load_bound"] == opt.meta["max_load"]          # proved optimal
    if bound.symmetric:
        plain = load_lower_bound(topo, routes="deadlock-free", symmetric=False)
        assert plain.lp == pytest.approx(bound.lp)
    # every Angara route: a bound for any minimal Angara table, so below the deadlock-free one
    assert load_lower_bound(topo).lp <= bound.lp + 1e-9


def test_traffic_aware_optimum_balances_the_jobs_traffic():
    topo = Torus((4, 2, 2, 2))
    job = [0, 3, 5, 6, 9, 12, 17, 30]
    tm = collective_traffic("tornado", topo, nodes=job, params={"over": "index"})
    table = optimal(topo, nodes=job, traffic=tm)
    w = {p: 1 for p in tm}
    loads = np.zeros(topo.num_nodes * topo.num_ports)
    for (s, t) in w:
        for u, p in table.channel_path(s, t):
            loads[u * topo.num_ports + p] += 1
    assert loads.max() == table.meta["max_load"] == table.meta["load_bound"] == 1
    sssp = generate("sssp", topo, job)
    loads_sssp = np.zeros_like(loads)
    for (s, t) in w:
        for u, p in sssp.channel_path(s, t):
            loads_sssp[u * topo.num_ports + p] += 1
    assert loads_sssp.max() >= loads.max()
    assert check_table(table).ok


def test_stopped_early_it_reports_the_bound_and_gap():
    """A node budget (not wall time) stops the MILP at the root of 4x4x4 with no incumbent;
    the refined fallback's table is one above the LP bound, and the gap says so."""
    table = optimal(Torus((4, 4, 4)), time_limit_s=600, sigma=False, node_limit=0)
    meta = table.meta
    assert meta["status"] == meta["milp_status"] == "node_limit"
    assert meta["load_bound"] == 32 < meta["max_load"] == table_metrics(table).max_load == 33
    assert math.isclose(meta["load_gap"], (meta["max_load"] - meta["load_bound"])
                        / meta["max_load"])
    assert check_table(table).ok


def test_without_an_incumbent_it_returns_the_refined_table_and_the_lp_bound():
    table = optimal(Torus((6, 5, 5)), time_limit_s=600, sigma=False, node_limit=0)
    meta = table.meta
    assert meta["milp_status"] == "node_limit" and meta["fallback"] == "refined"
    assert meta["load_bound"] == 113 <= meta["max_load"] == table_metrics(table).max_load
    assert check_table(table).ok


def test_a_node_budget_gives_the_same_table_on_every_call():
    a, b = (optimal(Torus((4, 4, 2)), time_limit_s=600, node_limit=1) for _ in range(2))
    assert a.routes == b.routes and a.meta["sigma4"] == b.meta["sigma4"]
