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
    at γ = 10 (1.8 M packets waiting) peaked at 782 MB on SimPy, at γ = 100 (19.8 M) at 811 MB
    on the compiled engine (measured December, ``/usr/bin/time -f %M``); the estimate says so
    for each engine, the excess most of SimPy's; at γ <= 1 it adds nothing."""
    from icsim.model.config import load_config
    from icsim.model.limits import PER_PACKET_BYTES, estimate_bytes, excess_packets

    def cfg(load, engine="auto"):
        return load_config(QUICKSTART, [f"traffic.load={load}", f"run.engine={engine}"])
    assert excess_packets(cfg(1.0), 64) == excess_packets(cfg(0.3), 64) == 0
    assert estimate_bytes(cfg(1.0)) < 0.3e9
    assert 0.75 * 811e6 < estimate_bytes(cfg(100)) < 1.25 * 811e6
    assert 0.75 * 782e6 < estimate_bytes(cfg(10, "simpy")) < 1.25 * 782e6
    assert excess_packets(cfg(10), 64) * PER_PACKET_BYTES["simpy"] > \
        0.8 * estimate_bytes(cfg(10, "simpy"))


def test_an_overload_too_big_for_this_machine_is_refused_naming_the_traffic(capsys):
    assert main(["run", QUICKSTART, "--set", "traffic.load=1000",
                 "--set", "run.measure_us=100000"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("icsim: config error: traffic: this run needs about ")
    assert "packets measured" in err and "waiting at their sources" in err


def test_every_measured_packet_counts_for_its_record():
    """A window mode run keeps a byte or two per measured packet (its latency,
    ``simulator/latencies.py``): the quickstart config with a 100 ms window (18.7 M measured
    packets) peaked at 249 MB on the compiled engine, 39 MB above a 10 µs window (measured
    December; it was 2.33 GB when every packet had a record)."""
    from icsim.model.config import load_config
    from icsim.model.limits import estimate_bytes, measured_packets
    from icsim.simulator.build import build

    cfg = load_config(QUICKSTART, ["run.measure_us=1000", "run.drain_us=50"])
    wl = build(cfg).workload.open.schedule()
    got = int(wl.packets[wl.measured].sum())
    assert got <= measured_packets(cfg, 64) < 1.1 * got
    long = load_config(QUICKSTART, ["run.measure_us=100000", "run.drain_us=50"])
    assert 0.75 * 249e6 < estimate_bytes(long) < 1.25 * 249e6


#: peak resident memory (bytes) of runs, measured on this code in December with
#: ``/usr/bin/time -f %M icsim run CONFIG --engine ENGINE --set ...`` (a machine shared with
#: other jobs: memory, not time): the set-up of the families' largest tables at γ = 0.0001,
#: tori of 65,536 to 98,304 routers, a collective, a trace and an application
PEAKS = [
    ("families/dragonfly_1056.yaml", ["topology.p=8", "topology.a=16", "topology.h=8"],
     "compiled", 914e6),
    ("families/fat_tree.yaml", ["topology.k=32"], "compiled", 1.00e9),
    ("families/dragonfly_1056.yaml", ["topology.p=1", "topology.a=16", "topology.h=8",
                                      "routing.algorithm=par"], "compiled", 1.165e9),
    ("families/hyperx.yaml", ["topology.dims=[16,16,16]", "topology.p=1",
                              "routing.algorithm=hx_dal"], "compiled", 1.925e9),
    ("families/hyperx.yaml", ["topology.dims=[16,16,16]", "topology.p=1",
                              "routing.algorithm=vlb"], "compiled", 1.63e9),
    ("quickstart.yaml", ["topology.dims=[32,32,32]", "run.measure_us=20", "run.drain_us=100"],
     "compiled", 508e6),
    ("quickstart.yaml", ["topology.dims=[32,32,32]", "run.measure_us=20", "run.drain_us=100",
                         "routing.algorithm=ofr"], "compiled", 650e6),
    ("quickstart.yaml", ["topology.dims=[32,32,32]", "run.measure_us=2", "run.drain_us=5",
                         "routing.algorithm=ofr"], "simpy", 906e6),
    ("quickstart.yaml", ["topology.dims=[256,256]", "run.measure_us=20", "run.drain_us=100"],
     "compiled", 675e6),
    ("quickstart.yaml", ["topology.dims=[16,16,16,12,2]", "run.measure_us=20",
                         "run.drain_us=100"], "compiled", 1.563e9),
    ("quickstart.yaml", ["topology.dims=[8,8,8]", "traffic.workload=collective",
                         "traffic.collective=alltoall", "traffic.message_bytes=512"],
     "compiled", 437e6)]


@pytest.mark.parametrize("config,sets,engine,peak", PEAKS)
def test_an_estimate_is_within_a_quarter_of_the_measured_peak(config, sets, engine, peak):
    """What is built is what is counted: routing tables of a row per pair of routers (before,
    the 16,512-terminal dragonfly and the 3-tree were estimated at 0.33 and 10.5 GB), queues
    per port and VC on either engine, a collective's schedule (its 16.8 M-message alltoall
    on 16x16x16 peaked at 14.7 GB, estimated at 4.9 GB before), and no schedule for an open
    loop (made as the run goes)."""
    from icsim.model.config import load_config
    from icsim.model.limits import estimate_bytes

    cfg = load_config(str(bundled(config)), sets + ["traffic.load=0.0001", f"run.engine={engine}"])
    assert 0.75 * peak < estimate_bytes(cfg) < 1.25 * peak


def test_a_trace_and_an_application_are_counted_once_known(tmp_path):
    """A trace of 10^6 messages peaked at 480 MB (compiled and SimPy alike), halo3d of 6.45 M
    operations at 3.59 GB compiled: the estimate, given what was read or counted, says so;
    and the build checks it (a machine of less memory refuses them before they are built)."""
    from icsim.model import limits
    from icsim.model.config import ConfigError, load_config
    from icsim.simulator.build import build

    trace = load_config(QUICKSTART, ["topology.dims=[8,8,8]", "traffic.workload=trace",
                                     "run.mode=finite"])
    for engine in ("compiled", "simpy"):
        cfg = trace.model_copy(update={"run": trace.run.model_copy(update={"engine": engine})})
        assert 0.75 * 480e6 < limits.estimate_bytes(cfg, known=10 ** 6) < 1.25 * 480e6
    app = load_config(str(bundled("apps/halo3d_512.yaml")))
    assert 0.75 * 3.59e9 < limits.estimate_bytes(app, known=6_451_200) < 1.25 * 3.59e9

    path = tmp_path / "t.csv"
    path.write_text("time_ns,src,dst,bytes\n" + "0,1,2,512\n" * 20_000)
    small = load_config(QUICKSTART, ["traffic.workload=trace", f"traffic.trace={path}",
                                     "run.mode=finite"])
    with pytest.MonkeyPatch.context() as mp:       # a machine of 300 MB
        mp.setattr(limits, "available_bytes", lambda: 300e6)
        mp.setattr(limits, "PER_TRACE_MESSAGE_BYTES", {"compiled": 20_000, "simpy": 20_000})
        with pytest.raises(ConfigError, match=r"^traffic: this run needs about 0.\d+ GB "
                                              r"\(20,000 messages of a trace\)"):
            build(small)                          # 0.21 GB until the trace is read
        with pytest.raises(ConfigError, match=r"^traffic: this run needs about .* GB \(6,451,200 "
                                              r"operations of an application\)"):
            build(load_config(str(bundled("apps/halo3d_512.yaml")),
                              ["traffic.jobs=[{motif: halo3d, params: {iterations: 300, "
                               "bytes: 512, compute_us: 1, allreduce_bytes: 8}}]"]))


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
