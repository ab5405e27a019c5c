"""ABR, POR and OFR in the simulator: deadlock freedom under overload, derouting bookkeeping,
escape-subnetwork discipline."""

from __future__ import annotations

from pathlib import Path

import pytest

from icsim.model.config import load_config
from icsim.simulator.simulation import Simulation, run
from tests.golden.cases import pinned

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "ofr"
PATTERNS = ["uniform", "butterfly", "transpose", "transpose3d", "bitreverse", "bitcomplement",
            "shuffle", "bitrotation", "tornado", "neighbor", "permutation", "hotspot", "alltoall"]


def overload(profile, algorithm, pattern, flow=None, **extra):
    over = [f"routing.algorithm={algorithm}", f"traffic.pattern={pattern}",
            "traffic.load=1.2", "topology.dims=[4,4,4]", "traffic.message_packets=8",
            "run.watchdog_us=20"]
    if profile == "reference":
        over += ["run.messages_per_node=10"]
    else:
        over += ["run.warmup_us=5", "run.measure_us=40", "run.drain_us=10"]
    if flow:
        over.append(f"router.flow_control={flow}")
    over += [f"{k}={v}" for k, v in extra.items()]
    return load_config(CONFIGS / profile / "k8.yaml", over)


FLOWS = [("clean", "credit"), ("clean", "ack_nak"), ("reference", "ack_nak"),
         ("reference", "credit")]
#: the contributors' loop (-m "not slow") keeps one pattern per profile; the suite runs all
FAST = {("clean", "credit", "abr", "transpose"), ("reference", "ack_nak", "abr", "butterfly"),
        ("reference", "ack_nak", "ofr", "butterfly")}
OVERLOAD = [pytest.param(profile, flow, algorithm, pattern,
                         marks=[] if (profile, flow, algorithm, pattern) in FAST
                         else [pytest.mark.slow],
                         id=f"{profile}-{flow}-{algorithm}-{pattern}")
            for profile, flow in FLOWS for algorithm in ("abr", "por", "ofr")
            for pattern in PATTERNS]


@pytest.mark.parametrize("profile,flow,algorithm,pattern", OVERLOAD)
def test_no_deadlock_at_overload_and_every_packet_accounted_for(profile, flow, algorithm,
                                                                pattern):
    sim = Simulation(overload(profile, algorithm, pattern, flow), engine="compiled")
    r = sim.run()                                   # the watchdog would raise DeadlockError
    assert r["packets_delivered"] > 0
    sim.engine.check_invariants()
    if profile == "reference":                      # finite: everything was delivered
        assert r["packets_delivered"] == r["packets_measured"] == 64 * 10 * 8
    if pattern in ("uniform", "transpose"):
        # the SimPy engine runs the same overload to the same result, its accounting intact
        slow = Simulation(overload(profile, algorithm, pattern, flow), engine="simpy")
        r2 = slow.run()
        slow.engine.check_invariants()
        assert pinned(r2) == pinned(r)


@pytest.mark.parametrize("profile", ["clean", "reference"])
def test_derouting_is_recorded_per_packet_and_only_by_the_derouting_algorithms(profile):
    # the coded profit (reference) deroutes as soon as the minimal queues fill up (with the
    # paper's eq. 15 and η = 2 few IDNs are short enough to win, see the next test).  An odd
    # torus has no k/2 ties, where the reference counts an equal-length detour as derouted.
    res = {a: run(overload(profile, a, "transpose", **{"topology.dims": "[7,7]",
                                                        "traffic.load": 0.8,
                                                        "routing.profit": "reference"}))
           for a in ("abr", "por", "ofr")}
    assert res["abr"]["derouted"] == {"total": 0.0} and res["abr"]["dilation"] == 1.0
    por, ofr = res["por"]["derouted"], res["ofr"]["derouted"]   # each algorithm's own words
    assert set(por) == {"orthant", "total"} and por["orthant"] > 0
    assert set(ofr) == {"outflank", "wraparound", "total"}
    assert ofr["outflank"] + ofr["wraparound"] > 0
    assert ofr["total"] == pytest.approx(ofr["outflank"] + ofr["wraparound"])
    # derouted packets travel further than ABR's minimal routes
    assert res["ofr"]["hops"] > res["abr"]["hops"] and res["por"]["hops"] > res["abr"]["hops"]
    assert res["ofr"]["dilation"] > 1.0 and res["por"]["dilation"] > 1.0


def test_with_the_papers_profit_ofr_deroutes_only_where_an_idn_is_short_enough():
    # eq. 15-16, η = 2: π0 = u*/u0 + 2 >= 2 while an IDN scores at most 1 + 2/D, so only IDNs
    # with dilation D < 2 can win: never for 8x8 butterfly (collinear, d <= 4), sometimes for
    # long uniform routes on 16x16
    def ofr(dims, pattern):
        return run(overload("clean", "ofr", pattern, **{"topology.dims": dims,
                                                        "traffic.load": 0.7}))
    assert ofr("[8,8]", "butterfly")["derouted"]["total"] == 0
    r = ofr("[16,16]", "uniform")
    assert r["derouted"]["total"] > 0 and 1.0 < r["dilation"] < 2.0
