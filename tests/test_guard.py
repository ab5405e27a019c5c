"""Plug-ins that cannot lie: whatever the routing, a packet leaves the network only at its
destination, crosses only ports with a link, never goes round for ever, and always has
somewhere to go; a breach stops the run with one line naming the routing, the packet and the
router, on both engines alike (``simulator/engines/guard.py``)."""

from __future__ import annotations

import textwrap

import pytest

from icsim.experiments.cli import main
from icsim.model.config import config_from_dict
from icsim.simulator.engines.guard import LivelockError, RoutingError, hop_limit
from icsim.simulator.simulation import run

PYTHON_ROUTER = '''
from icsim.routing.registry import ESCAPE, ROUTING, VC, Routing


@ROUTING.register("{name}")
class Bad(Routing):
    vcs = (VC("escape", ESCAPE, bubble=True),)

    def candidates(self, node, packet):
        {body}
'''

PROGRAM = '''
import numpy as np
from icsim.routing.program import OFFSET, Phase, Program
from icsim.routing.registry import ESCAPE, ROUTING, VC, Routing


@ROUTING.register("{name}")
class Bad(Routing):
    requires = frozenset({{"coordinates", "offsets"}})
    vcs = (VC("escape", ESCAPE, bubble=True),)

    def program(self):
        off = self.topology.relative_offsets()
        {body}
        return Program((Phase(OFFSET, ports=ports, escape_vc=0),))
'''


def plugin(tmp_path, template: str, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(template.format(name=name, body=body)))
    return str(path)


def config(path: str, name: str, dims=(4, 4), wrap=None, mode="window") -> dict:
    topology = {"dims": list(dims), **({"wrap": list(wrap)} if wrap else {})}
    return {"topology": topology,
            "routing": {"algorithm": name, "plugins": [path]},
            "traffic": {"load": 0.2, "message_packets": 2},
            "run": {"mode": mode, "messages_per_node": 4, "warmup_us": 2, "measure_us": 20,
                    "drain_us": 200}}


@pytest.mark.parametrize("body, match", [
    ("return self.eject_groups",
     r"routing 'liar' ejected packet \d+->\d+ \(destination router \d+ \(\d+, \d+\)\) at "
     r"router \d+ \(\d+, \d+\): a packet leaves the network only at its destination"),
    ("return ()", r"candidates\(\) at router .* gave no candidate"),
    ("return (((99, 0),),)", r"gave port 99 \(ports 0\.\.3, ejection 4\)"),
    ("return (((0, 7),),)", r"gave VC 7 \(the algorithm declares 1\)"),
    ("return None", r"gave None: groups of \(port, VC\) pairs"),
    ("return ((('x+', 0),),)", r"gave \('x\+', 0\): ports and VCs are whole numbers"),
])
@pytest.mark.parametrize("mode", ["window", "finite"])
def test_a_python_router_that_lies_is_stopped_in_one_line_naming_it(tmp_path, body, match,
                                                                    mode):
    path = plugin(tmp_path, PYTHON_ROUTER, "liar", body)
    with pytest.raises(RoutingError, match=match):
        run(config_from_dict(config(path, "liar", mode=mode)))


@pytest.mark.parametrize("mode", ["window", "finite"])
def test_a_router_that_never_ejects_is_a_livelock_past_the_hop_limit(tmp_path, mode):
    """Always x+ on a 4x4 torus: a packet to another row goes round its ring for ever; past
    4 x the diameter (4) + 16 = 32 hops the run stops, in both modes (a finite run used to
    hang, a window run ended "unfinished ... slow")."""
    path = plugin(tmp_path, PYTHON_ROUTER, "round", "return (((0, 0),),)")
    with pytest.raises(LivelockError, match=r"livelock: packet \d+->\d+ .* crossed 33 "
                                            r"channels \(more than 32, .*routing 'round'"):
        run(config_from_dict(config(path, "round", mode=mode)))
    assert hop_limit(4) == 32


def test_a_python_route_through_a_port_without_a_link_is_named(tmp_path):
    """On a 4x4 mesh, x+ at the east edge has no link."""
    path = plugin(tmp_path, PYTHON_ROUTER, "edge",
                  "return (((0, 0),),) if node % 4 < 3 or packet.dst == node "
                  "else (((0, 0),),)")
    with pytest.raises(RoutingError, match=r"routing 'edge' sent packet .* at router "
                                           r"\d+ \(3, \d\) to port x\+, which has no link"):
        run(config_from_dict(config(path, "edge", wrap=(False, False))))


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_program_that_goes_round_is_a_livelock_on_both_engines(tmp_path, engine):
    """A program whose every offset says x+ (port 0): packets to another row circle their
    ring; both engines stop at the same hop, naming it."""
    path = plugin(tmp_path, PROGRAM, "circle",
                  "ports = np.where((off == 0).all(axis=1), 0, 1)")
    with pytest.raises(LivelockError, match=r"crossed 33 channels .* routing 'circle'"):
        run(config_from_dict(config(path, "circle")), engine=engine)


FILTERED = '''
import numpy as np
from icsim.routing.program import OFFSET, Option, Phase, Program, Uniform
from icsim.routing.registry import ESCAPE, ROUTING, VC, Routing
from icsim.routing.algorithms.dor import dor_mask


@ROUTING.register("{name}")
class Bad(Routing):
    requires = frozenset({{"coordinates", "offsets"}})
    vcs = (VC("escape", ESCAPE, bubble=True),)

    def program(self):
        return Program((Phase(OFFSET, ports=dor_mask(self.topology), escape_vc=0,
                              filtered=True),), Uniform((Option(sel=~1),)))
'''


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_program_whose_filter_leaves_no_port_is_stopped_on_both_engines(tmp_path, engine):
    """A packet's port filter that takes away the one port of its entry (dimension order
    with x+ filtered out): the tables pass the build's check (every entry has a port), the
    packet that needs x+ has none at run time (the compiled engine once read port 64 of an
    empty entry and crashed); both engines name the packet that had nowhere to go.  An entry
    that is empty in the table itself is refused before the run (tests/test_hostile_plugins.py)."""
    path = plugin(tmp_path, FILTERED, "holes", "")
    with pytest.raises(RoutingError, match=r"routing 'holes' gave packet .* no candidate"):
        run(config_from_dict(config(path, "holes")), engine=engine)


def test_the_command_line_exits_2_on_a_routing_error_and_3_on_a_livelock(tmp_path, capsys):
    liar = plugin(tmp_path, PYTHON_ROUTER, "liar2", "return self.eject_groups")
    rounds = plugin(tmp_path, PYTHON_ROUTER, "round2", "return (((0, 0),),)")
    for path, name, code, start in ((liar, "liar2", 2, "icsim: routing error: routing "),
                                    (rounds, "round2", 3, "icsim: livelock: ")):
        argv = ["run", "quickstart", "--set", "topology.dims=[4,4]",
                "--set", f"routing.plugins=[{path}]", "--set", f"routing.algorithm={name}"]
        assert main(argv) == code
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(start), err


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_finite_run_ends_by_its_time_limit_however_long_it_would_take(engine, monkeypatch):
    """Finite mode without ``run.max_time_us`` stops at a bound derived from the offered work
    (``build.finite_time_limit``): far beyond a run's own end, and, where a run does not reach
    its end by it (here the bound cut to 5 µs of a 20 µs run), the record says unfinished by
    it."""
    from icsim.simulator import build as building

    cfg = config_from_dict({"topology": {"dims": [4, 4]}, "routing": {"algorithm": "dor"},
                            "traffic": {"load": 0.9, "message_packets": 8},
                            "run": {"mode": "finite", "messages_per_node": 8}})
    r = run(cfg, engine=engine)
    model = building.build(cfg)
    assert not r["saturated"] and model.spec.time_limit_ps > 100 * r["sim_time_ns"] * 1000
    monkeypatch.setattr(building, "finite_time_limit", lambda spec, workload: 5_000_000)
    cut = run(cfg, engine=engine)
    assert cut["saturated"] and cut["sim_time_ns"] == 5_000.0 < r["sim_time_ns"]
    reason = cut["saturation_reason"]
    assert reason.startswith("unfinished: ") and reason.endswith(
        "packets undelivered by the time limit (5 µs: run.max_time_us unset)")
