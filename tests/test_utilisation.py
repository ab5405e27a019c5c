"""A channel's utilisation is the fraction of the measurement window it was busy: never above
1, on every topology family, under either flow control, on both engines alike.

A transmission is counted whole when it starts; the window takes off what of the one under
way at its edges lies outside it (``busy_until`` in the SimPy engine, ``busy_so_far`` in the
compiled one).  Before that, a packet starting just before the window closed counted whole,
and ``icsim run configs/quickstart.yaml --set traffic.pattern=transpose`` printed a busiest
channel "1.001" busy.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from icsim.model.config import ConfigError, config_from_dict
from icsim.simulator.simulation import run

#: one small network of every family, each with a routing it runs
FAMILIES = {
    "torus": ({"kind": "torus", "dims": [4, 4]}, {"algorithm": "dor"}),
    "mesh": ({"kind": "torus", "dims": [4, 3], "wrap": [False, False]}, {"algorithm": "dor"}),
    "dragonfly": ({"kind": "dragonfly", "p": 2, "a": 3, "h": 1}, {"algorithm": "ugal_l"}),
    "fat_tree": ({"kind": "fat_tree", "k": 2, "n": 3}, {"algorithm": "dmodk"}),
    "hyperx": ({"kind": "hyperx", "dims": [3, 3], "p": 2}, {"algorithm": "hx_adaptive"}),
    "graph": ({"kind": "random_regular", "nodes": 10, "degree": 3, "seed": 1},
              {"algorithm": "table", "table": {"generator": "minimal", "layers": "acro"}}),
}


def config(family: str, load: float, measure_us: float, seed: int, flow: str = "credit",
           switching: str = "store_and_forward"):
    topology, routing = FAMILIES[family]
    return config_from_dict({
        "seed": seed, "topology": topology, "routing": routing,
        "router": {"flow_control": flow, "switching": switching},
        "traffic": {"pattern": "uniform", "load": load, "message_packets": 4},
        "run": {"warmup_us": 2, "measure_us": measure_us, "drain_us": 20}})


def utilisation(result) -> list[float]:
    return [result["channel_utilisation_max"]] + [
        u["max"] for u in (result.get("channel_utilisation_by_class") or {}).values()]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_saturated_channel_is_busy_at_most_the_whole_window(family):
    """Far past saturation the busiest channel is busy all the window, and a window of a few
    packets makes a packet straddling its edge count: the utilisation is then 1, not more."""
    result = run(config(family, 3.0, 3.3, 1), engine="compiled")
    top = utilisation(result)
    assert max(top) <= 1.0 and top[0] >= 0.9, (family, top)
    table = result.channels
    assert table["utilisation"].max() <= 1.0 and table["utilisation"].min() >= 0.0


def test_the_quick_start_under_transpose_reaches_exactly_one():
    """The busiest channel of the quick start under transpose is busy all the window: 1.000."""
    quick = config_from_dict({"topology": {"dims": [4, 4, 4]},
                              "traffic": {"pattern": "transpose", "load": 0.3,
                                          "message_packets": 16},
                              "run": {"warmup_us": 20, "measure_us": 100, "drain_us": 200}})
    assert run(quick, engine="compiled")["channel_utilisation_max"] == 1.0


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family=st.sampled_from(sorted(FAMILIES)), load=st.floats(0.2, 3.0),
       measure_us=st.floats(0.5, 8.0), seed=st.integers(1, 50),
       flow=st.sampled_from(["credit", "ack_nak"]),
       cut=st.booleans())
def test_utilisation_never_passes_one_and_both_engines_agree(family, load, measure_us, seed,
                                                           flow, cut):
    switching = "virtual_cut_through" if cut else "store_and_forward"
    if flow == "ack_nak" and family not in ("torus", "mesh"):
        flow = "credit"                   # the reference profile's protocol: tori
    cfg = config(family, load, measure_us, seed, flow, switching)
    try:
        compiled = run(cfg, engine="compiled")
    except ConfigError as exc:
        # a window so short, at so low a load, that no message falls in it is refused (its
        # start is the settling time when that exceeds the 2 µs warm-up): not a case here
        assume("no message is created inside the measurement window" not in str(exc))
        raise
    simpy = run(cfg, engine="simpy")
    assert max(utilisation(compiled)) <= 1.0
    for key in ("channel_utilisation_mean", "channel_utilisation_max"):
        assert compiled[key] == simpy[key], key
    assert compiled.channels["utilisation"].tolist() == simpy.channels["utilisation"].tolist()
