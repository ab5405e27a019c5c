"""`icsim analyze` on every family: each routing's exact bound (an oblivious routing's channel
loads, an adaptive one's capacity) against an independent derivation (by hand, or counted
here without icsim's routes) and the published numbers (issue 56)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from icsim.experiments.analyze import analyze
from icsim.experiments.cli import main
from icsim.model.config import ConfigError

FT, HX, DF = ("configs/families/fat_tree.yaml", "configs/families/hyperx.yaml",
              "configs/families/dragonfly_1056.yaml")


def dmodk_max_flows(k: int, n: int, mapping: np.ndarray) -> int:
    """The most flows on one channel of a k-ary n-tree under D-mod-k, counted from the routing's
    definition alone (Zahavi 2010): a switch of level m is named by (the terminals' subtree
    above it, s // k^(m+1), and the m lowest digits of the destination it was reached for);
    a packet s -> d climbs to the lowest level L where s and d share a subtree, taking up port
    digit m of d at level m, then goes down the one way there is."""
    flows: Counter = Counter()
    for s, d in enumerate(int(x) for x in mapping):
        if s // k == d // k:
            continue                                   # its own leaf: no channel
        top = next(m for m in range(1, n) if s // k ** (m + 1) == d // k ** (m + 1))
        for m in range(top):                           # up from level m to m + 1
            flows[("up", m, s // k ** (m + 1), d % k ** (m + 1))] += 1
        for m in range(top, 0, -1):                    # down from level m to m - 1
            flows[("down", m, d // k ** m, d % k ** m)] += 1
    return max(flows.values())


def test_dmodk_on_the_fat_tree_permutation_carries_three_flows_on_one_channel():
    """The issue's case: the 4-ary 3-tree's seeded permutation (seed 1), one channel with 3
    flows, so no γ above 1/3 (the committed γ* 0.35 is above it)."""
    from icsim.model.config import load_config
    from icsim.configs import config_path
    from icsim.simulator.build import prepare

    over = ["traffic.pattern=permutation"]
    r = analyze(FT, over)
    mapping = prepare(load_config(config_path(FT), over)).pattern.mapping()
    mapping = np.asarray(mapping).reshape(-1)
    assert dmodk_max_flows(4, 3, mapping) == 3
    assert r["max_load"] == pytest.approx(3.0)
    assert r["throughput"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_dmodk_loads_equal_an_independent_count_on_the_8_ary_tree(seed):
    from icsim.model.config import load_config
    from icsim.configs import config_path
    from icsim.simulator.build import prepare

    over = ["traffic.pattern=permutation", "topology.k=8", f"seed={seed}"]
    mapping = np.asarray(prepare(load_config(config_path(FT), over)).pattern.mapping())
    assert analyze(FT, over)["max_load"] == pytest.approx(dmodk_max_flows(8, 3, mapping))


def test_dmodk_shift_is_non_blocking():
    """Zahavi 2010: D-mod-k routes every shift permutation with one flow per channel."""
    r = analyze(FT, ["traffic.pattern=tornado", "traffic.params.tornado.over=index"])
    assert r["max_load"] == pytest.approx(1.0)


def test_hyperx_bounds_by_hand():
    """8x8 HyperX, 8 terminals per router, uniform over the 511 other terminals: DOR loads a
    dimension-0 link with 8 x 64 / 511 (the 64 terminals of the column it leads to), so 511/512;
    the line shift puts 8 terminals' traffic on one link: 1/8; Valiant's two minimal legs: 1/2
    (Ahn et al., SC 2009: load balancing holds half the bandwidth on adversarial traffic)."""
    assert analyze(HX, [])["throughput"] == pytest.approx(511 / 512)
    assert analyze(HX, ["traffic.pattern=line_shift"])["throughput"] == pytest.approx(1 / 8)
    for pattern in ("uniform", "line_shift"):
        r = analyze(HX, ["routing.algorithm=vlb", f"traffic.pattern={pattern}"])
        assert r["throughput"] == pytest.approx(0.5)


def test_hyperx_minimal_adaptive_capacity_is_511_over_512():
    """Any routing spends at least the minimal hops; DOR's minimal routes already load every
    channel alike under uniform traffic, so no routing passes 511/512 (the issue's 0.998,
    beside the committed "≥ 1.00"); minimal adaptive on the line shift has one path: 1/8."""
    r = analyze(HX, ["routing.algorithm=hx_adaptive"], capacity=True)
    assert r["bound"] == "capacity of its paths"
    assert r["throughput"] == pytest.approx(511 / 512)
    r = analyze(HX, ["routing.algorithm=hx_adaptive", "traffic.pattern=line_shift"],
                capacity=True)
    assert r["throughput"] == pytest.approx(1 / 8)


def test_dragonfly_bounds_by_hand_and_as_published():
    """The balanced 1,056-terminal dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): under
    the group shift MIN sends a group's a p = 32 terminals over its one global link to the next
    group, 1/32; Valiant's crosses two global links per packet, 1/2 -- the paper's "VAL: 50 %
    of capacity on the worst case"."""
    assert analyze(DF, ["routing.algorithm=dfly_min", "traffic.pattern=group_shift"]
                   )["throughput"] == pytest.approx(1 / 32)
    assert analyze(DF, ["routing.algorithm=dfly_val", "traffic.pattern=group_shift"]
                   )["throughput"] == pytest.approx(0.5)


def test_family_loads_equal_the_reproductions_own_walks():
    """The reproductions compute MIN/VAL (dragonfly) and DOR/VAL (HyperX) with their own
    router-pair walks (experiments/papers): the same numbers from the routing program."""
    from icsim.experiments.papers import dragonfly, hyperx
    from icsim.model.topology import Dragonfly, HyperX
    from icsim.routing.algorithms.dragonfly import MinimalRoutes
    from icsim.routing.algorithms.generic import ShortestPaths

    routes = MinimalRoutes(Dragonfly(4, 8, 4, arrangement="absolute"))
    for label, name, column, pattern in (("MIN", "dfly_min", "UR", "uniform"),
                                         ("VAL", "dfly_val", "UR", "uniform")):
        mine = analyze(DF, [f"routing.algorithm={name}", f"traffic.pattern={pattern}"])
        theirs = dragonfly.exact_throughput(routes, column, label == "VAL")
        assert min(1.0, mine["throughput"]) == pytest.approx(theirs)
    hx = HyperX((8, 8), p=8)
    paths = ShortestPaths(hx)
    for column, pattern in (("UR", "uniform"), ("shift", "line_shift")):
        mine = analyze(HX, [f"traffic.pattern={pattern}"])["throughput"]
        assert min(1.0, mine) == pytest.approx(hyperx.exact_throughput(hx, paths, column, False))


def test_the_cli_gives_an_adaptive_routing_its_capacity_only_when_asked(capsys):
    assert main(["analyze", FT, "--set", "routing.algorithm=updown_adaptive",
                 "--set", "traffic.pattern=permutation", "--capacity", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["throughput"] == pytest.approx(1.0)       # every terminal's own up link
    assert main(["analyze", FT, "--set", "routing.algorithm=updown_adaptive"]) == 2
    assert "--capacity" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="the worst case is searched over permutations of nodes"):
        analyze(FT, [], worst_case=True)


# ------------------------------------------------------------- the committed γ* held to them
#: committed γ* above their bound: none since the families were re-run under issue 56's rules
#: (the fat tree's D-mod-k RP 0.35 and the HyperX's minimal adaptive UR ≥ 1.00 were, judged by
#: the aggregate over a 60-100 µs window): a γ* newly above its bound fails this test
KNOWN_ABOVE: set[tuple[str, str]] = set()


def cheap_bound(row) -> float:
    """A bound on the γ* of a committed run's config, independent of the simulation: the
    routing's exact loads, its paths' capacity, else counts no routing beats."""
    from icsim.experiments.analyze import analyze_config
    from icsim.experiments.pipeline.rows import config_of_row
    from icsim.model.config import config_from_dict
    from icsim.routing.capacity import (capacity_bound, channel_time_bound,
                                        global_channel_bound, program_masks)
    from icsim.simulator.build import prepare

    config = config_from_dict(config_of_row({k: v for k, v in row.items() if v == v}))
    try:
        return analyze_config(config)["throughput"]
    except ConfigError:
        pass
    prep = prepare(config)
    topo, rates = prep.topology, prep.pattern.rates()
    masks = program_masks(topo, prep.routing_cls(topo, prep.config, prep.settings))
    if masks is not None:
        return capacity_bound(topo, rates, masks)
    out = channel_time_bound(topo, rates)
    if "groups" in topo.capabilities:
        out = min(out, global_channel_bound(topo, rates))
    return out


@pytest.mark.parametrize("family", ["fat_tree", "dragonfly", "hyperx"])
def test_no_committed_family_gamma_star_above_its_bound(family):
    """The families' redraw tests compare only with their own committed output; this holds
    every committed γ* to a bound computed without simulating."""
    from pathlib import Path

    import pandas as pd

    folder = Path(__file__).resolve().parents[1] / "experiments" / "results" / family
    runs = pd.read_csv(folder / "sim" / "results.csv", low_memory=False)
    above = set()
    for r in pd.read_csv(folder / "simulated.csv").itertuples():
        label = f"{r.algorithm} {r.column}"
        bound = cheap_bound(runs[runs.curve == label].iloc[0].to_dict())
        if r.gamma_star > bound + 1e-9:
            above.add((family, label))
    assert above <= KNOWN_ABOVE


def test_the_group_shift_bound_of_any_routing_by_hand():
    """Group shift on the balanced dragonfly: a group's 32 terminals send 32 γ to the next
    group over its one direct global link (at most 1) or two global links; the 33 groups own
    32 global channels each: 33 (64 γ - 1) <= 33 x 32, γ <= 33/64.  PAR's committed 0.50 is
    below it (the issue's doubt about PAR is the window's, not this bound's)."""
    from icsim.configs import config_path
    from icsim.model.config import load_config
    from icsim.routing.capacity import global_channel_bound
    from icsim.simulator.build import prepare

    prep = prepare(load_config(config_path(DF), ["traffic.pattern=group_shift"]))
    assert global_channel_bound(prep.topology, prep.pattern.rates()) == pytest.approx(33 / 64)
