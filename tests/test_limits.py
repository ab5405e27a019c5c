"""The numbers of a config are checked for what the model can represent: the issue's cases
A-D that are config values (file cases: ``test_hostile_files.py``), each one line naming the
key, exit status 2, before anything is built."""

from __future__ import annotations

import pytest

from icsim.configs import bundled
from icsim.experiments.cli import main

QUICKSTART = str(bundled("quickstart.yaml"))

CASES = [
    # A: runaway memory or hangs
    ("traffic.load=.inf", "traffic.load"),
    ("link.bandwidth_gbps=.inf", "link.bandwidth_gbps"),
    ("traffic.message_bytes=1000000000000", "traffic.message_bytes"),
    ("packet.size_bytes=true", "packet.size_bytes"),
    ("topology.dims=[1000000,1000000]", "topology"),
    (f"topology.dims={[2] * 40}", "topology"),
    ("topology.dims=[1000000000000]", "topology"),
    ("topology.dims=[64,64,64,64]", "topology"),
    # B: tracebacks
    ("link.latency_ns=.inf", "link.latency_ns"),
    ("router.cycle_ns=.inf", "router.cycle_ns"),
    ("run.measure_us=.inf", "run.measure_us"),
    ("run.drain_us=.inf", "run.drain_us"),
    ("router.cycle_ns=1.0e-6", "router.cycle_ns"),
    ("run.measure_us=1.0e-9", "run.measure_us"),
    # C: accepted when it should not be
    ("packet.size_bytes=1000000000000000000000000000000", "packet.size_bytes"),
    ("nic.injection_rate_factor=.inf", "nic.injection_rate_factor"),
    # D: misleading
    ("nic.bandwidth_gbps=1.0e-300", "nic.bandwidth_gbps"),
    ("seed=-1", "seed"),
]


@pytest.mark.parametrize("override,key", CASES)
def test_a_value_the_model_cannot_represent_is_one_line_naming_its_key(capsys, override, key):
    assert main(["run", QUICKSTART, "--set", override]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"icsim: config error: {key}"), err


def test_a_torus_too_big_for_this_machine_is_refused_with_the_estimate(capsys):
    assert main(["run", QUICKSTART, "--set", "topology.dims=[1000,1000,100]"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("icsim: config error: topology: this run needs about ") and "GB" in err


def test_a_tiny_watchdog_period_is_bounded_below_by_two_hops(capsys):
    assert main(["run", QUICKSTART, "--json", "--set", "run.watchdog_us=1.0e-9",
                 "--set", "topology.dims=[4,4]", "--set", "run.measure_us=10"]) == 0


def test_an_overload_counts_the_packets_piling_up_at_their_sources():
    """Offered above γ = 1, an open loop's excess waits at its sources: the quickstart config
    at γ = 100 (20 M packets) peaked at 6.0 GB on SimPy, and the estimate now says so; at
    γ <= 1 it adds nothing."""
    from icsim.model.config import load_config
    from icsim.model.limits import PER_PACKET_BYTES, estimate_bytes, excess_packets

    def cfg(load):
        return load_config(QUICKSTART, [f"traffic.load={load}"])
    assert excess_packets(cfg(1.0), 64) == excess_packets(cfg(0.3), 64) == 0
    assert estimate_bytes(cfg(1.0)) < 0.3e9
    assert 6.0e9 < estimate_bytes(cfg(100)) < 7.5e9
    assert excess_packets(cfg(100), 64) * PER_PACKET_BYTES > 0.8 * estimate_bytes(cfg(100))


def test_an_overload_too_big_for_this_machine_is_refused_naming_the_traffic(capsys):
    assert main(["run", QUICKSTART, "--set", "traffic.load=1000",
                 "--set", "run.measure_us=100000"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("icsim: config error: traffic: this run needs about ")
    assert "packets measured" in err and "waiting at their sources" in err


def test_every_measured_packet_counts_for_its_record():
    """A window mode run keeps a record per measured packet (about 110 bytes with the result's
    arrays): the quickstart config with a 100 ms window (18.7 M measured packets) peaked at
    2.33 GB on the compiled engine, where the estimate once said 0.34 GB."""
    from icsim.model.config import load_config
    from icsim.model.limits import estimate_bytes, measured_packets
    from icsim.simulator.build import build

    cfg = load_config(QUICKSTART, ["run.measure_us=1000", "run.drain_us=50"])
    wl = build(cfg).workload.open.schedule()
    got = int(wl.packets[wl.measured].sum())
    assert got <= measured_packets(cfg, 64) < 1.1 * got
    long = load_config(QUICKSTART, ["run.measure_us=100000", "run.drain_us=50"])
    assert 2.33e9 < estimate_bytes(long) < 3e9


@pytest.mark.parametrize("config,sets,peak", [
    # the set-up's peak resident memory (traffic.load 0.0001), measured: /usr/bin/time -f %M
    ("families/dragonfly_1056.yaml", ["topology.p=8", "topology.a=16", "topology.h=8"], 0.88e9),
    ("families/fat_tree.yaml", ["topology.k=32"], 0.84e9),
    ("families/dragonfly_1056.yaml", ["topology.p=1", "topology.a=16", "topology.h=8",
                                      "routing.algorithm=par"], 1.10e9),
    ("families/hyperx.yaml", ["topology.dims=[16,16,16]", "topology.p=1",
                              "routing.algorithm=hx_dal"], 1.68e9)])
def test_a_family_s_estimate_counts_its_tables_of_router_pairs(config, sets, peak):
    """Routing tables of a row per pair of routers dominate a large family's memory: the
    estimate counts them (before, the 16,512-terminal dragonfly and the 3-tree were estimated
    at 0.33 and 10.5 GB)."""
    from icsim.model.config import load_config
    from icsim.model.limits import estimate_bytes

    cfg = load_config(str(bundled(config)), sets + ["traffic.load=0.0001"])
    assert 0.75 * peak < estimate_bytes(cfg) < 1.25 * peak


@pytest.mark.parametrize("override", [
    ["--set", "topology.p=1", "--set", "topology.a=64", "--set", "topology.h=64",
     "--set", "topology.g=128"],
    ["--set", "topology.trunking=5"]])
def test_routers_of_more_ports_than_a_mask_holds_are_refused_before_their_tables(
        capsys, override):
    """Issue 57's dragonfly (127 ports) took 112 s and 8.3 GB to be refused; a HyperX of 70
    ports raised an OverflowError."""
    path = "families/dragonfly_1056.yaml" if len(override) > 2 else "families/hyperx.yaml"
    assert main(["run", str(bundled(path)), *override]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("icsim: config error: routing.algorithm: ") and \
        "a program's port masks hold at most 64" in err
