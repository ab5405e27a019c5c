"""The compiled engine's profit decision picks, for OFR's and POR's plans, exactly what the
Python planners pick.

:mod:`icsim.simulator.engines.compiled.decide` restates the profits over the options the
algorithms make of their planners' exports (``ofr_option_plans``, ``por_option_plans``); for the
same source, destination, queue occupancy and settings it returns what
``OutflankPlanner.choose_idn`` / ``OrthantPlanner.choose_orthant`` return (as the interpreter
stores it in the packet's registers), and with the paper profit a run of decisions draws the
same ties from the same stream, the same number of times.  Tori from 3x3x3 to 8x8x8, mixed sizes, 1-D to 4-D rings (and a 6-D one
for the widest plan).
"""

from __future__ import annotations

import gc
import time
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icsim.model.packet import Packet
from icsim.model.topology import Torus
from icsim.routing.algorithms.adaptive import _Draws, ofr_option_plans, por_option_plans
from icsim.routing.outflank import KIND_CODES, OrthantPlanner, OutflankPlanner, orthant_select
from icsim.simulator.build import build
from icsim.simulator.engines.compiled import decide as cp

PROFIT_CODES = {"paper": cp.PAPER, "reference": cp.REFERENCE}
from icsim.simulator.engines.simpy import RandomStream
from tests.conftest import small_config

TORI = [(7,), (3, 3), (5, 6), (8, 8), (3, 3, 3), (4, 4, 4), (4, 5, 3), (8, 8, 8), (3, 4, 3, 5)]
ETAS = [0.0, 0.25, 1.0 / 3.0, 1.0, 1.5, 2.0, 3.0, 7.75]


@lru_cache(maxsize=None)
def torus(dims):
    return Torus(dims)


@lru_cache(maxsize=None)
def ofr(dims, variant, both_on_tie):
    """A planner and its export as the compiled decision takes it."""
    planner = OutflankPlanner(torus(dims), delta=2, variant=variant, both_on_tie=both_on_tie)
    return planner, cp.record(ofr_option_plans(planner.export()))


@lru_cache(maxsize=None)
def por(dims, both_on_tie, profit="paper"):
    """A planner and its export's options as the compiled decision takes them (the options
    carry the paper's or the reference code's derouted flags)."""
    planner = OrthantPlanner(torus(dims), both_on_tie=both_on_tie)
    return planner, cp.record(por_option_plans(planner.export(), profit))


class Counted:
    """The SimPy engine's tie-break stream (:class:`RandomStream`), counting its draws."""

    def __init__(self, seed):
        self.stream = RandomStream(np.random.default_rng(seed))
        self.draws = 0

    def __call__(self):
        self.draws += 1
        return self.stream()


def consumed(gen, seed, at_most=100_000):
    """How many ``random()`` draws ``gen`` has made since ``default_rng(seed)``."""
    ref = np.random.default_rng(seed)
    for k in range(at_most + 1):
        if ref.bit_generator.state == gen.bit_generator.state:
            return k
        ref.random()
    raise AssertionError(f"more than {at_most} draws")


def used_vectors(ports, capacity, minimal):
    """Occupancies of the source's adaptive queues: idle, random, two levels (ties), full,
    zeros mixed with full, and the ``minimal`` ports busier than the rest, with or without an
    idle queue (derouting; the reference profit needs every queue in use)."""
    def row(values):
        return st.lists(values, min_size=ports, max_size=ports)

    def busier(light):
        return st.tuples(*(busy if p in minimal else light for p in range(ports))).map(list)
    level = st.integers(0, capacity)
    busy = st.integers(capacity // 2, capacity)
    return st.one_of(
        st.just([0] * ports),
        row(level),
        st.tuples(level, level).flatmap(lambda ab: row(st.sampled_from(ab))),
        st.just([capacity] * ports),
        row(st.sampled_from([0, capacity])),
        busier(st.integers(0, capacity // 2)),
        busier(st.integers(1, max(1, capacity // 2))),
    )


@st.composite
def decisions(draw):
    dims = draw(st.sampled_from(TORI))
    topo = torus(dims)
    s = draw(st.integers(0, topo.num_nodes - 1))
    t = draw(st.one_of(st.integers(0, topo.num_nodes - 1), st.just(s)))
    capacity = draw(st.sampled_from([1, 2, 3, 8]))
    minimal = topo.minimal_ports(s, t)
    return dict(dims=dims, s=s, t=t, capacity=capacity,
                used=draw(used_vectors(topo.num_ports, capacity, minimal)),
                eta=draw(st.sampled_from(ETAS)),
                profit=draw(st.sampled_from(["paper", "reference"])),
                min_deroute_distance=draw(st.sampled_from([1, 2])),
                both_on_tie=draw(st.booleans()), seed=draw(st.integers(0, 2**32 - 1)))


def python_idn(planner, s, t, used, rand, capacity, eta, profit, min_deroute_distance):
    idn, kind = planner.choose_idn(s, t, used, capacity=capacity, eta=eta, profit=profit,
                                   min_deroute_distance=min_deroute_distance, rng=_Draws(rand))
    return (-1 if idn is None else idn), KIND_CODES[kind]


def compiled_idn(x, s, t, used, gen, capacity, eta, profit, min_deroute_distance):
    o = cp.choose_profit(x, s, t, np.array(used, np.int64), capacity, eta,
                         PROFIT_CODES[profit], min_deroute_distance, gen)
    plans = getattr(x, "plans", x)          # a record's arrays, or the plans themselves
    return (-1, 0) if o < 0 else (cp.option_target(x, s, o), int(plans.opt_kind[o]))


def python_orthant(planner, s, t, used, rand, capacity, eta, profit, min_deroute_distance):
    """``choose_orthant`` and the port bitmask ``PickOrthant.inject`` makes of its signs."""
    signs, derouted = planner.choose_orthant(s, t, used, capacity=capacity, eta=eta,
                                             profit=profit, rng=_Draws(rand),
                                             min_deroute_distance=min_deroute_distance)
    return (-1 if signs is None else orthant_select(signs)), derouted


def compiled_orthant(x, s, t, used, gen, capacity, eta, profit, min_deroute_distance):
    o = cp.choose_profit(x, s, t, np.array(used, np.int64), capacity, eta,
                         PROFIT_CODES[profit], min_deroute_distance, gen)
    plans = getattr(x, "plans", x)
    return (-1, False) if o < 0 else (int(plans.opt_sel[o]), bool(plans.opt_kind[o]))


def settings_of(case):
    return {k: case[k] for k in ("capacity", "eta", "profit", "min_deroute_distance")}


@pytest.mark.slow
# ------------------------------------------------------------------------------- one decision
@given(decisions(), st.sampled_from(["paper", "reference"]))
@settings(max_examples=300, deadline=None)
def test_ofr_picks_the_same_idn_as_the_python_planner(case, candidates):
    planner, x = ofr(case["dims"], candidates, case["both_on_tie"])
    rand, gen = Counted(case["seed"]), np.random.default_rng(case["seed"])
    args = (case["s"], case["t"], case["used"])
    want = python_idn(planner, *args, rand, **settings_of(case))
    got = compiled_idn(x, *args, gen, **settings_of(case))
    assert got == want
    assert consumed(gen, case["seed"]) == rand.draws


@pytest.mark.slow
@given(decisions())
@settings(max_examples=300, deadline=None)
def test_por_picks_the_same_orthant_as_the_python_planner(case):
    planner, x = por(case["dims"], case["both_on_tie"], case["profit"])
    rand, gen = Counted(case["seed"]), np.random.default_rng(case["seed"])
    args = (case["s"], case["t"], case["used"])
    want = python_orthant(planner, *args, rand, **settings_of(case))
    got = compiled_orthant(x, *args, gen, **settings_of(case))
    assert got == want
    assert consumed(gen, case["seed"]) == rand.draws


def test_an_exact_tie_between_idns_is_drawn_the_same_way():
    # 8x8, t three hops away in x and y, both minimal queues full: two OIDNs and one WIDN
    # leave through x- and y- with the same dilation, so the same profit
    topo = torus((8, 8))
    planner, x = ofr((8, 8), "paper", True)
    s, t, used = topo.node((1, 1)), topo.node((4, 4)), [8, 0, 8, 0]
    picks = set()
    for seed in range(12):
        rand, gen = Counted(seed), np.random.default_rng(seed)
        want = python_idn(planner, s, t, used, rand, 8, 2.0, "paper", 1)
        assert compiled_idn(x, s, t, used, gen, 8, 2.0, "paper", 1) == want
        assert rand.draws == consumed(gen, seed) == 1
        picks.add(want)
    assert len(picks) > 1


# ------------------------------------------------------------------------------- a run of them
@st.composite
def runs(draw):
    dims = draw(st.sampled_from(TORI))
    return dict(dims=dims, eta=draw(st.sampled_from(ETAS)), both_on_tie=draw(st.booleans()),
                candidates=draw(st.sampled_from(["paper", "reference"])),
                min_deroute_distance=draw(st.sampled_from([1, 2])),
                capacity=draw(st.sampled_from([1, 2, 8])), seed=draw(st.integers(0, 2**32 - 1)))


def decision_inputs(topo, capacity, seed, count):
    """``count`` (s, t, used) draws, with full, idle and level queues mixed (ties are common)."""
    rng = np.random.default_rng(seed + 1)
    P = topo.num_ports
    for _ in range(count):
        s, t = (int(v) for v in rng.integers(topo.num_nodes, size=2))
        kind = rng.integers(4)
        if kind == 0:
            used = rng.integers(0, capacity + 1, P)
        elif kind == 1:
            used = rng.choice([0, capacity], P)
        elif kind == 2:
            used = rng.choice(rng.integers(0, capacity + 1, 2), P)
        else:
            used = np.full(P, capacity)
        yield s, t, [int(u) for u in used]


@pytest.mark.slow
@given(runs(), st.sampled_from(["ofr", "por"]))
@settings(max_examples=25, deadline=None)
def test_a_run_of_paper_decisions_draws_the_same_ties_from_the_same_stream(run, algorithm):
    topo = torus(run["dims"])
    kw = dict(capacity=run["capacity"], eta=run["eta"], profit="paper",
              min_deroute_distance=run["min_deroute_distance"])
    if algorithm == "ofr":
        planner, x = ofr(run["dims"], run["candidates"], run["both_on_tie"])
        py, nb = python_idn, compiled_idn
    else:
        planner, x = por(run["dims"], run["both_on_tie"])
        py, nb = python_orthant, compiled_orthant
    rand, gen = Counted(run["seed"]), np.random.default_rng(run["seed"])
    for s, t, used in decision_inputs(topo, run["capacity"], run["seed"], 150):
        assert nb(x, s, t, used, gen, **kw) == py(planner, s, t, used, rand, **kw)
    assert consumed(gen, run["seed"]) == rand.draws
    assert gen.random() == rand()                       # and the streams go on together


# ------------------------------------------------------------------------------- as inject sees it
@pytest.mark.parametrize("tie_break", ["random", "ordered"])
@pytest.mark.parametrize("algorithm, profit, candidates", [
    ("ofr", "paper", "paper"), ("ofr", "reference", "reference"), ("ofr", "paper", "reference"),
    ("por", "paper", None), ("por", "reference", None)])
def test_inject_stores_what_the_compiled_decision_returns(algorithm, profit, candidates,
                                                          tie_break):
    section = {"profit": profit, "eta": 1.5, "min_deroute_distance": 2}
    if candidates:
        section["candidates"] = candidates
    cfg = small_config((4, 6, 4), routing={"algorithm": algorithm, algorithm: section},
                       router={"tie_break": tie_break, "queue_packets": 3})
    routing = build(cfg).spec.routing
    assert routing._planner.both_on_tie == (tie_break != "ordered")
    x = cp.record(routing.form.decision.plans)
    topo = routing._planner.topo
    rand, gen = Counted(7), np.random.default_rng(7)
    for i, (s, t, used) in enumerate(decision_inputs(topo, 3, 7, 300)):
        packet = Packet(i, src=s, dst=t, birth=0, age=i, measured=False)
        routing.interpreter.inject(s, packet, used, rand)
        args = (x, s, t, used, gen, 3, 1.5, profit, 2)
        if algorithm == "ofr":
            assert compiled_idn(*args) == (packet.target, packet.deroute)
            assert packet.phase == (0 if packet.target >= 0 else 1)
        else:
            sel = packet.sel if packet.phase == 1 else -1
            assert compiled_orthant(*args) == (sel, packet.deroute == 1)
    assert consumed(gen, 7) == rand.draws


# ------------------------------------------------------------------------------- the export
@pytest.mark.parametrize("dims", [(5, 6), (4, 5, 3)])
@pytest.mark.parametrize("make", [
    lambda topo: OutflankPlanner(topo, variant="paper"),
    lambda topo: OutflankPlanner(topo, variant="reference", both_on_tie=False),
    lambda topo: OrthantPlanner(topo)], ids=["ofr-paper", "ofr-reference", "por"])
def test_every_pair_finds_its_own_plan_in_the_export(dims, make):
    topo = torus(dims)
    planner = make(topo)
    x = planner.export()
    assert len(x.d) == int(np.prod([len(np.unique(c[c >= 0])) for c in x.code]))
    r = cp.record(ofr_option_plans(x) if isinstance(planner, OutflankPlanner)
                  else por_option_plans(x, "paper"))
    for s in range(topo.num_nodes):
        for t in range(topo.num_nodes):
            plan, key = planner._plan(s, t), cp.plan_key(r, s, t)
            assert x.d[key] == plan.d
            if isinstance(planner, OutflankPlanner):
                rows = x.cand_rel[x.cand_ptr[key]:x.cand_ptr[key + 1]]
                assert [tuple(r) for r in rows.tolist()] == [rel for rel, _ in plan.cands]
            else:
                rows = x.signs[x.orthant_ptr[key]:x.orthant_ptr[key + 1]]
                assert [tuple(r) for r in rows.tolist()] == [o.signs for o in plan.orthants]


def test_the_orthant_masks_are_those_inject_makes_of_either_sign_vector():
    x = OrthantPlanner(torus((4, 5, 3))).export()
    assert [orthant_select(sg) for sg in x.signs.tolist()] == x.sel.tolist()
    assert [orthant_select(sg) for sg in x.code_signs.tolist()] == x.code_sel.tolist()
    assert (x.sel == x.code_sel).all()


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    lambda topo: OutflankPlanner(topo, variant="paper"),
    lambda topo: OutflankPlanner(topo, variant="reference"),
    lambda topo: OrthantPlanner(topo)], ids=["ofr-paper", "ofr-reference", "por"])
def test_the_16x16x16_export_takes_seconds_and_megabytes(make):
    topo = Torus((16, 16, 16))
    start = time.process_time()
    x = make(topo).export()
    assert time.process_time() - start < 30
    assert x.nbytes < 30e6


@pytest.mark.slow
def test_a_6d_plan_of_64_orthants_fits_the_winners_bitmask():
    dims = (3,) * 6
    topo = torus(dims)
    planner, x = por(dims, True, "paper")
    # every + queue full, every - queue idle: the all-minus orthant, the 64th, wins
    s, t, used = 0, topo.node((1,) * 6), [3, 0] * 6
    want = python_orthant(planner, s, t, used, Counted(0), 3, 1.0, "paper", 1)
    assert want == (orthant_select((-1,) * 6), True)
    assert compiled_orthant(x, s, t, used, np.random.default_rng(0), 3, 1.0, "paper", 1) == want
    rand, gen = Counted(5), np.random.default_rng(5)
    for s, t, used in decision_inputs(topo, 3, 5, 200):
        assert (compiled_orthant(x, s, t, used, gen, 3, 1.0, "paper", 1)
                == python_orthant(planner, s, t, used, rand, 3, 1.0, "paper", 1))
    assert consumed(gen, 5) == rand.draws


@pytest.mark.slow
def test_plans_with_more_candidates_than_the_bitmask_holds_are_refused():
    x = ofr_option_plans(OutflankPlanner(torus((3,) * 6)).export())
    with pytest.raises(ValueError, match="at most 64 options per plan; .* has 73"):
        cp.record(x)


def test_a_torus_too_wide_for_the_compiled_decision_runs_on_simpy():
    """A 6-D OFR torus (plans of up to 73 candidates) is a valid config the compiled engine
    declines: auto takes SimPy, asking for the compiled engine is a config error."""
    from icsim.model.config import ConfigError
    from icsim.simulator.simulation import make_engine

    model = build(small_config((3,) * 6, routing={"algorithm": "ofr"}))
    assert make_engine(model, "auto").name == "simpy"
    with pytest.raises(ConfigError, match="run.engine: .* at most 64 options per plan; a "
                                          "plan of this torus has 73"):
        make_engine(model, "compiled")


@pytest.mark.slow
def test_the_export_itself_decides_as_its_record_does():
    planner = OutflankPlanner(torus((4, 5, 3)), variant="reference")
    x = ofr_option_plans(planner.export())
    r = cp.record(x)
    topo = planner.topo
    for profit in ("paper", "reference"):
        gen_x, gen_r = np.random.default_rng(3), np.random.default_rng(3)
        for s, t, used in decision_inputs(topo, 8, 3, 200):
            assert (compiled_idn(x, s, t, used, gen_x, 8, 2.0, profit, 1)
                    == compiled_idn(r, s, t, used, gen_r, 8, 2.0, profit, 1))


def test_a_record_keeps_alive_the_arrays_its_raw_views_read():
    """The record's views are not reference-counted: the record itself holds the arrays, so
    decisions stay right after every other reference to them is gone and their memory would
    otherwise be reused."""
    planner = OutflankPlanner(torus((4, 5, 3)), variant="reference")
    x = ofr_option_plans(planner.export())
    r = cp.record(type(x)(*(a.copy() for a in x)))        # arrays only the record refers to
    gc.collect()
    reuse = [np.full(a.shape, -7, a.dtype) for a in x for _ in range(4)]  # the freed memory
    for profit in ("paper", "reference"):
        gen_x, gen_r = np.random.default_rng(5), np.random.default_rng(5)
        for s, t, used in decision_inputs(planner.topo, 8, 3, 200):
            assert (compiled_idn(r, s, t, used, gen_r, 8, 2.0, profit, 1)
                    == compiled_idn(x, s, t, used, gen_x, 8, 2.0, profit, 1))
    del reuse                                              # held until the decisions are made


def test_exports_are_made_once_per_process_for_alike_planners():
    """Every run of a sweep builds its own planner; alike planners (same topology and
    parameters) share one export, different ones do not."""
    t = Torus((5, 4))
    a = OutflankPlanner(t, variant="reference").export()
    assert OutflankPlanner(Torus((5, 4)), variant="reference").export() is a
    assert OutflankPlanner(t, variant="paper").export() is not a
    assert OutflankPlanner(t, variant="reference", delta=1).export() is not a
    assert OrthantPlanner(t).export() is OrthantPlanner(Torus((5, 4))).export()
    assert OrthantPlanner(t, both_on_tie=False).export() is not OrthantPlanner(t).export()
