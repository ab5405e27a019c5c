"""A routing algorithm written in one file, outside the package, runs on both engines with the
same records: the three plug-ins of ``tests/plugins`` (a random dimension order per packet, a
Valiant router with a deroute kind of its own, west-first on a mesh), loaded by
``routing.plugins``, and nothing else edited.  A pairing an algorithm cannot serve is refused
before the run; an algorithm that routes in Python runs on the SimPy engine only, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from icsim.model.config import ConfigError, config_from_dict
from icsim.simulator.build import build, from_dict
from icsim.simulator.simulation import Simulation, make_engine, run
from tests.golden.cases import pinned

PLUGINS = Path(__file__).resolve().parent / "plugins"


def config(plugin: str, dims=(4, 4), wrap=None, load=0.4, **routing) -> dict:
    topology = {"kind": "torus", "dims": list(dims)}
    if wrap is not None:
        topology["wrap"] = list(wrap)
    return {"topology": topology,
            "routing": {"algorithm": plugin, "plugins": [str(PLUGINS / f"{plugin}.py")],
                        **routing},
            "traffic": {"pattern": "uniform", "load": load, "message_packets": 4},
            "run": {"warmup_us": 5, "measure_us": 30, "drain_us": 200}}


def both(cfg: dict) -> tuple[dict, dict]:
    return (pinned(run(config_from_dict(cfg), engine="simpy")),
            pinned(run(config_from_dict(cfg), engine="compiled")))


@pytest.mark.parametrize("plugin, dims, wrap", [
    ("random_order", (4, 4), None), ("random_order", (3, 4, 3), None),
    ("valiant", (4, 4), None), ("valiant", (5, 3), None),
    ("west_first", (4, 4), (False, False)), ("west_first", (5, 3), (False, False))])
@pytest.mark.parametrize("load", [0.3, 1.2])
def test_a_plugin_in_one_file_runs_on_both_engines_with_identical_records(plugin, dims, wrap,
                                                                           load):
    simpy, compiled = both(config(plugin, dims, wrap, load))
    assert simpy == compiled
    assert simpy["packets_delivered"] == simpy["packets_measured"] > 0   # no deadlock


def test_auto_runs_a_program_on_the_compiled_engine():
    sim = Simulation(config_from_dict(config("valiant")))
    assert sim.engine.name == "compiled"


def test_random_order_routes_minimally_in_every_order_it_draws():
    r = run(config_from_dict(config("random_order", (4, 3, 5))))
    assert r["dilation"] == 1.0 and r["derouted"] == {"total": 0.0}
    model = build(config_from_dict(config("random_order", (4, 3, 5))))
    assert len(model.routing.vcs) == 6                      # 3! orders, a VC each


def test_valiants_packets_all_count_as_derouted_under_its_own_word():
    r = run(config_from_dict(config("valiant", (8, 8), load=0.2)))
    assert r["derouted"] == {"valiant": 1.0, "total": 1.0}
    # through a uniformly drawn node: twice the minimal path on average, less the pairs
    # whose intermediate lies on a minimal path
    assert 1.5 < r["dilation"] < 2.5


def test_west_first_is_minimal_on_a_mesh_and_refused_on_a_torus():
    r = run(config_from_dict(config("west_first", (4, 4), (False, False), load=0.3)))
    assert r["dilation"] == 1.0 and not r["saturated"]
    with pytest.raises(ConfigError, match=r"^routing.algorithm: west_first routes on a 2D mesh, "
                                          r"not on torus 4x4$"):
        from_dict(config("west_first", (4, 4)))


def test_an_algorithm_paired_with_a_topology_it_cannot_serve_is_refused_in_one_line():
    cfg = config("valiant")
    cfg["topology"] = {"kind": "random_regular", "nodes": 16, "degree": 3, "seed": 1}
    with pytest.raises(ConfigError) as caught:
        from_dict(cfg)
    assert str(caught.value) == (
        "routing.algorithm: routing algorithm 'valiant' needs minimal routes by coordinate "
        "differences (a torus or mesh with nothing failed) (offsets); graph of 16 nodes, "
        "24 links, degree [3] does not")
    with pytest.raises(ConfigError, match=r"routing algorithm 'ofr' needs every dimension a "
                                          r"ring of at least 3 nodes \(rings\); mesh 4x4 has "
                                          r"dimensions 0, 1 as a line"):
        from_dict({"topology": {"dims": [4, 4], "wrap": [False, False]},
                   "routing": {"algorithm": "ofr"}})


def test_a_plugin_file_that_is_missing_or_broken_is_one_line_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"^routing.plugins.0: nowhere.py: no such file"):
        from_dict({**config("valiant"), "routing": {"algorithm": "valiant",
                                                    "plugins": ["nowhere.py"]}})
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy as np\nraise RuntimeError('half written')\n")
    with pytest.raises(ConfigError, match=rf"^routing.plugins.0: {broken}: RuntimeError: "
                                          rf"half written$"):
        from_dict({**config("valiant"), "routing": {"algorithm": "valiant",
                                                    "plugins": [str(broken)]}})


def test_a_program_that_names_an_undeclared_deroute_kind_is_refused_before_the_run(tmp_path):
    source = (PLUGINS / "valiant.py").read_text()
    bad = tmp_path / "careless.py"
    bad.write_text(source.replace('ROUTING.register("valiant")', 'ROUTING.register("careless")')
                   .replace('deroute_kinds = ("valiant",)', 'deroute_kinds = ()'))
    cfg = {**config("valiant"), "routing": {"algorithm": "careless", "plugins": [str(bad)]}}
    with pytest.raises(ConfigError, match=r"routing.algorithm: careless's program: a decision's "
                                          r"option counts as derouted 'valiant', which the "
                                          r"algorithm does not declare in deroute_kinds"):
        build(config_from_dict(cfg))


PYTHON_ROUTING = '''
from icsim.routing.registry import ESCAPE, ROUTING, VC, Routing


@ROUTING.register("python_dor")
class PythonDor(Routing):
    """Dimension order in Python at every hop, with a deroute kind it never declared."""
    requires = frozenset({"offsets"})
    vcs = (VC("escape", ESCAPE, bubble=True),)

    def candidates(self, node, packet):
        port = self.topology.dor_port(node, packet.dst)
        if port < 0:
            return self.eject_groups
        packet.deroute = "hand_made"
        return (((port, 0),),)
'''


def test_an_algorithm_routing_in_python_runs_on_simpy_and_says_why(tmp_path, capsys):
    (tmp_path / "python_dor.py").write_text(PYTHON_ROUTING)
    cfg = {**config("valiant"), "routing": {"algorithm": "python_dor",
                                            "plugins": [str(tmp_path / "python_dor.py")]}}
    model = build(config_from_dict(cfg))
    assert make_engine(model, "auto").name == "simpy"
    assert capsys.readouterr().err == (
        "icsim: running on the SimPy engine, about 40 times slower than the compiled one: "
        "routing algorithm 'python_dor': it routes in Python at every hop (it gives no "
        "program)\n")
    with pytest.raises(ConfigError, match=r"run.engine: the compiled engine cannot run this "
                                          r"config: routing algorithm 'python_dor': it routes "
                                          r"in Python at every hop"):
        make_engine(model, "compiled")
    r = run(config_from_dict(cfg))
    assert r["derouted"]["hand_made"] == 1.0          # a kind it did not declare is counted


def test_a_package_module_that_fails_to_import_fails_every_lookup(tmp_path, monkeypatch):
    """A registry whose package scan hits a module that raises says so at every lookup; it
    does not go on with the members it loaded and call the rest unknown names (a sweep's
    worker once reported 'unknown algorithm dor' for the rest of its life)."""
    import importlib

    from icsim.model.registry import Registry

    pkg = tmp_path / "scanned_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a_good.py").write_text("from scanned_registry import R\nR.register('good')(1)\n")
    (pkg / "b_bad.py").write_text("raise RuntimeError('half written')\n")
    (pkg / "c_later.py").write_text("from scanned_registry import R\nR.register('later')(3)\n")
    (tmp_path / "scanned_registry.py").write_text(
        "from icsim.model.registry import Registry\n"
        "R = Registry('thing', packages=('scanned_pkg',))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    scanned = importlib.import_module("scanned_registry")     # the file written above

    for _ in range(2):
        with pytest.raises(RuntimeError, match="half written"):
            scanned.R.get("later")
    assert isinstance(scanned.R, Registry)


def pattern_config(pattern: str, **traffic) -> dict:
    return {"topology": {"kind": "torus", "dims": [4, 4]},
            "traffic": {"pattern": pattern, "plugins": [str(PLUGINS / "patterns.py")],
                        "load": 0.3, "message_packets": 2, "arrivals": "exponential",
                        **traffic},
            "run": {"warmup_us": 5, "measure_us": 30, "drain_us": 100}}


def test_a_pattern_plugin_with_a_rule_runs_compiled_with_the_simpy_record():
    """``pairs`` gives a mapping, hence a table rule: the compiled engine makes its messages,
    and every packet goes to its pair (1 hop on a 4x4 torus)."""
    cfg = pattern_config("pairs")
    assert Simulation(config_from_dict(cfg)).engine.name == "compiled"
    simpy, compiled = both(cfg)
    assert simpy == compiled
    assert simpy["hops"] == 1.0 and simpy["packets_delivered"] == simpy["packets_measured"] > 0


def test_a_pattern_plugin_without_a_rule_runs_on_simpy_and_says_why(capsys):
    cfg = pattern_config("far_random", params={"far_random": {"span": 0.25}})
    model = build(config_from_dict(cfg))
    capsys.readouterr()
    assert make_engine(model, "auto").name == "simpy"
    assert capsys.readouterr().err == (
        "icsim: running on the SimPy engine, about 40 times slower than the compiled one: "
        "traffic pattern 'far_random' makes its destinations in Python only (it has "
        "destination() but no rule(): docs/model.md §6)\n")
    with pytest.raises(ConfigError, match=r"^run.engine: the compiled engine cannot run this "
                                          r"config: traffic pattern 'far_random'"):
        make_engine(model, "compiled")
    r = run(config_from_dict(cfg))
    # every destination among the 4 nodes after the source: 1 to 4 index steps on a 4x4 torus
    assert r["packets_delivered"] == r["packets_measured"] > 0 and 1.0 <= r["hops"] <= 2.5


def test_a_pattern_plugin_file_that_is_missing_broken_or_exits_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^traffic.plugins.0: nowhere.py: no such file"):
        from_dict({**pattern_config("pairs"), "traffic": {"plugins": ["nowhere.py"]}})
    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(ConfigError, match=rf"^traffic.plugins.0: {exits}: exits on import "
                                          rf"\(SystemExit 0\)$"):
        from_dict({**pattern_config("pairs"), "traffic": {"plugins": [str(exits)]}})
