"""Deadlocks that do not stop the whole network: a cycle of stuck channels is reported at once
(exit status 3, the cycle named) while other traffic flows; slow networks are not deadlocks."""

from __future__ import annotations

import re

import pytest

from icsim.experiments.cli import main
from icsim.model.config import config_from_dict
from icsim.simulator.engines import DeadlockError
from icsim.simulator.simulation import run

ENGINES = ["simpy", "compiled"]


def write_trace(path, rows):
    path.write_text("time_ns,src,dst,bytes\n" + "".join(f"{t},{s},{d},{b}\n"
                                                         for t, s, d, b in rows))
    return path


def one_ring_deadlocks(tmp_path):
    """4x4 torus, one VC, no bubble rule: at t = 0 the four nodes of the ring y = 0 each send
    a burst two hops x+ (which fills that ring's x+ queues in a cycle), while nodes of the
    other rows exchange packets along y every microsecond until t = 300 us."""
    rows = [(0, x, (x + 2) % 4, 40 * 512) for x in range(4)]
    for t in range(0, 300_000, 1000):
        for x in range(4):
            rows.append((t, 4 + x, 12 + x, 512))      # (x, 1) -> (x, 3)
            rows.append((t, 12 + x, 4 + x, 512))
    trace = write_trace(tmp_path / "trace.csv", rows)
    return {"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "dor"},
            "router": {"bubble": False, "queue_packets": 4},
            "traffic": {"workload": "trace", "trace": str(trace)},
            "run": {"watchdog_us": 10, "max_time_us": 2000}}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_deadlocked_ring_is_caught_while_the_other_rings_deliver(tmp_path, engine):
    cfg = config_from_dict(one_ring_deadlocks(tmp_path))
    with pytest.raises(DeadlockError) as err:
        run(cfg, engine=engine)
    text = str(err.value)
    assert "a cycle of 4 channels" in text
    # the cycle is the x+ ring of row 0, named port by port
    assert all(f"node {x} ({x}, 0) x+" in text for x in range(4))
    now_ns = float(re.search(r"now (\d+) ns", text).group(1))
    assert now_ns < 100_000                  # long before the other traffic ends at 300 us


def test_the_command_line_exits_3_naming_the_cycle(tmp_path, capsys):
    import yaml

    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(one_ring_deadlocks(tmp_path)))
    assert main(["run", str(path)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "deadlock: a cycle of 4 channels" in err[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_slow_network_is_not_a_deadlock(engine):
    # links so slow that one packet takes longer than the watchdog period to cross, at a load
    # far beyond saturation: queues are full and heads stay put between checks, but every
    # stuck port waits on a channel that is busy transmitting, so nothing is called dead.
    # A 512-byte packet at 0.01 Gb/s takes 512 x 8 / 0.01 = 409,600 ns to send, so the
    # watchdog period is at least two of those (never less than twice the longest hop), 819.2
    # us, not the 200 us asked; the run must last several periods for the partial check to
    # compare heads with those of a period before at all
    serialisation_ns = 512 * 8 / 0.01
    period_ns = 2 * serialisation_ns
    cfg = config_from_dict({
        "topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "dor"},
        "packet": {"size_bytes": 512},
        "link": {"bandwidth_gbps": 0.01}, "traffic": {"load": 2.0, "message_packets": 4},
        "run": {"warmup_us": 100, "measure_us": 400, "drain_us": 3000, "watchdog_us": 200}})
    r = run(cfg, engine=engine)
    assert r["sim_time_ns"] >= 4 * period_ns            # the watchdog looked three times or more
    assert r["saturated"] and r["saturation_reason"].startswith("unfinished")
    # it found ports stuck for a period, and called them slow, not dead
    assert re.search(r"; [1-9]\d* router ports stuck for a watchdog period or more, in no "
                     r"deadlocked cycle", r["saturation_reason"])


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unfinished_run_says_whether_ports_were_stuck(engine):
    cfg = config_from_dict({
        "topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "dor"},
        "traffic": {"load": 1.5, "message_packets": 8},
        "run": {"warmup_us": 5, "measure_us": 40, "drain_us": 5}})
    r = run(cfg, engine=engine)
    assert r["saturation_reason"].startswith("unfinished: ")
    assert ("no port stuck" in r["saturation_reason"]
            or "router ports stuck for a watchdog period or more" in r["saturation_reason"])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dims, seed, watchdog_us, channels", [
    ([8], 1, 1_000_000, 8),      # the watchdog never looked: the run ended first
    ([4, 4], 3, None, 4)])       # a 4-channel cycle stuck since about 135 us, never checked
def test_a_deadlock_standing_at_the_end_of_a_run_is_reported_never_called_slow(
        engine, dims, seed, watchdog_us, channels):
    """Without the bubble rule, 2-packet queues and 16-packet messages at γ = 1 deadlock a
    ring; the run ends before a watchdog check finds it.  The wait graph as it stands at the
    end holds the cycle: a deadlock (exit 3 on the command line), not "no port stuck"."""
    run_section = {"warmup_us": 10, "measure_us": 50, "drain_us": 100}
    if watchdog_us is not None:
        run_section["watchdog_us"] = watchdog_us
    cfg = config_from_dict({
        "seed": seed, "topology": {"kind": "torus", "dims": dims},
        "router": {"bubble": False, "queue_packets": 2},
        "traffic": {"load": 1.0, "message_packets": 16}, "run": run_section})
    with pytest.raises(DeadlockError, match=rf"^deadlock: at the end of the run \(t = 160000 "
                                            rf"ns\) a cycle of {channels} channels holds "
                                            rf"packets and waits only on itself: node "):
        run(cfg, engine=engine)


def test_the_end_of_run_deadlock_is_exit_status_3_on_the_command_line(capsys):
    code = main(["run", "quickstart", "--set", "topology.dims=[8]", "--set",
                 "router.bubble=false", "--set", "router.queue_packets=2", "--set",
                 "traffic.load=1.0", "--set", "traffic.message_packets=16", "--set",
                 "run.warmup_us=10", "--set", "run.measure_us=50", "--set", "run.drain_us=100",
                 "--set", "run.watchdog_us=1000000"])
    assert code == 3
    assert "a cycle of 8 channels" in capsys.readouterr().err
