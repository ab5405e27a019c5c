"""Plug-ins that cannot lie (issue 57), before the run: a routing program whose tables leave a
packet nowhere to go or name a port without a link, a field of the wrong type, a plug-in file
that registers the wrong thing or a pattern whose rule or destinations are not node ids -- each
refused in one line naming the file or the entry, exit status 2, before anything is built.
(What the engines enforce during the run: tests/test_guard.py.)"""

from __future__ import annotations

import io
import textwrap
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from icsim.experiments.cli import main
from icsim.model.config import ConfigError, config_from_dict
from icsim.model.topology import Torus
from icsim.routing.program import OFFSET, PAIR, Phase, Program
from icsim.simulator.build import build
from icsim.simulator.simulation import run

PROGRAM = '''
import numpy as np
from icsim.routing.algorithms.dor import dor_mask
from icsim.routing.program import OFFSET, Option, Phase, Program, Uniform
from icsim.routing.registry import ADAPTIVE, ESCAPE, ROUTING, VC, Routing


@ROUTING.register("{name}")
class Plugin(Routing):
    requires = frozenset({{"coordinates", "offsets"}})
    vcs = (VC("escape", ESCAPE, bubble=True),)

    def program(self):
        off = self.topology.relative_offsets()
        dor = dor_mask(self.topology)
        {body}
'''

CLASS = '''
from icsim.routing.registry import ADAPTIVE, ESCAPE, ROUTING, VC, Routing


{body}
'''


def write(tmp_path, name: str, template: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(template).replace("{body}", body).replace("{name}", name)
                    .replace("{{", "{").replace("}}", "}"))
    return str(path)


def icsim(*argv: str) -> tuple[int, list[str]]:
    """``icsim ARGV`` in-process: exit status and stderr lines."""
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = main(list(argv))
    return code, err.getvalue().splitlines()


def refused(path: str, name: str, *sets: str, key: str = "routing") -> str:
    """``icsim run`` on a 4x4 torus with the plug-in: exit 2, one line; that line."""
    more = [a for s in sets for a in ("--set", s)]
    plugin = ([f"--set", f"routing.plugins=[{path}]", "--set", f"routing.algorithm={name}"]
              if key == "routing" else
              ["--set", f"traffic.plugins=[{path}]", "--set", f"traffic.pattern={name}"])
    code, err = icsim("run", "quickstart", "--set", "topology.dims=[4,4]", *plugin, *more)
    assert code == 2 and len(err) == 1, (code, err)
    return err[0]


def cfg(path: str, name: str, dims=(4, 4), wrap=None) -> dict:
    return {"topology": {"dims": list(dims), **({"wrap": list(wrap)} if wrap else {})},
            "routing": {"algorithm": name, "plugins": [path]},
            "traffic": {"load": 0.2, "message_packets": 2},
            "run": {"warmup_us": 2, "measure_us": 10, "drain_us": 100}}


# ================================================================ programs checked at build
@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_a_program_with_an_empty_mask_for_a_nonzero_offset_is_refused_at_build(tmp_path,
                                                                                 engine):
    """Dimension order with nothing where y is 2 hops away (the k/2 tie of a 4-ring): refused
    before the run, naming the phase, the offset and its entry (the run-time guard used to
    catch the first packet that needed it, mid-run)."""
    path = write(tmp_path, "holes", PROGRAM, "return Program((Phase(OFFSET, ports=np.where("
                 "off[:, 1] == 2, 0, dor), escape_vc=0),))")
    with pytest.raises(ConfigError, match=r"^routing.algorithm: holes's program: phase 0: "
                                          r"offset \(\+1, \+2\) \(ports\[17\]\) gives no "
                                          r"candidate \(no port in its mask, no escape\)"):
        run(config_from_dict(cfg(path, "holes")), engine=engine)
    line = refused(path, "holes")
    assert line.startswith("icsim: config error: routing.algorithm: holes's program: phase 0: "
                           "offset (+1, +2)")


def test_an_empty_entry_rescued_by_an_escape_table_is_accepted():
    """An entry with an empty mask but an escape port is a candidate: only an entry with
    neither is refused."""
    t = Torus((4, 4))
    dor = np.frombuffer(t.dor_port_table, dtype=np.uint8).astype(np.int64)
    escape = np.where(dor == 255, 0, dor)
    ports = np.zeros(t.relative_size, dtype=np.int64)
    Program((Phase(OFFSET, ports=ports, escape=escape, escape_vc=0),)).check(
        16, 4, 1, t.relative_size, (), topology=t)
    with pytest.raises(ValueError, match=r"phase 0: offset \(\+1, \+1\) \(ports\[9\]\) gives "
                                         r"no candidate \(no port in its mask\)"):
        Program((Phase(OFFSET, ports=ports, adaptive_vc=0),)).check(
            16, 4, 1, t.relative_size, (), topology=t)


@pytest.mark.parametrize("body, match", [
    # x+ where x must move at all: on a mesh the entry with x offset < 0 is read at the east
    # edge, where x+ has no link
    ("return Program((Phase(OFFSET, ports=np.where(off[:, 0] != 0, 1, dor), escape_vc=0),))",
     r"phase 0: offset \(-3, -3\) \(ports\[9\]\) names port x\+, which has no link at the end "
     r"of line x where that offset arises \(a mesh dimension: x\+ only for a positive "
     r"offset\)"),
    # x+ alongside y where x offset is 0: read at the east edge too
    ("return Program((Phase(OFFSET, ports=np.where(off[:, 0] == 0, dor | 1, dor), "
     "adaptive_vc=0),))",
     r"phase 0: offset \(0, -3\) .* names port x\+, which has no link"),
])
def test_a_program_naming_a_port_without_a_link_on_a_mesh_is_refused_at_build(tmp_path, body,
                                                                               match):
    path = write(tmp_path, "edge", PROGRAM, body)
    with pytest.raises(ConfigError, match=r"^routing.algorithm: edge's program: " + match):
        build(config_from_dict(cfg(path, "edge", wrap=(False, False))))
    # the same tables on a torus: every port of a ring has a link
    build(config_from_dict(cfg(path, "edge")))


def test_a_port_of_a_dimension_of_one_node_is_refused():
    t = Torus((4, 1))
    ports = np.full(t.relative_size, 1 | 4, dtype=np.int64)        # x+ and y+ (no y at all)
    with pytest.raises(ValueError, match=r"names port y\+, which has no link \(dimension y "
                                         r"has one node\)"):
        Program((Phase(OFFSET, ports=ports, adaptive_vc=0),)).check(
            4, 4, 1, t.relative_size, (), topology=t)


def test_a_pair_table_naming_an_absent_port_or_leaving_a_pair_empty_is_refused():
    t = Torus((3, 3), (False, False))
    n = t.num_nodes
    r, dst = np.divmod(np.arange(n * n), n)
    present = (t.neighbor_array >= 0) @ (1 << np.arange(4))
    ports = present[r].astype(np.int64)
    Program((Phase(PAIR, ports=ports, adaptive_vc=0),)).check(n, 4, 1, None, (), topology=t)
    bad = ports.copy()
    bad[2 * n + 5] |= 1                                      # router 2 is on the east edge
    with pytest.raises(ValueError, match=r"phase 0: router 2 \(2, 0\) toward 5 \(2, 1\) "
                                         r"\(ports\[23\]\) names port x\+, which has no link "
                                         r"there"):
        Program((Phase(PAIR, ports=bad, adaptive_vc=0),)).check(n, 4, 1, None, (), topology=t)
    bad = ports.copy()
    bad[4 * n + 0] = 0
    with pytest.raises(ValueError, match=r"router 4 \(1, 1\) toward 0 \(0, 0\) \(ports\[36\]\) "
                                         r"gives no candidate"):
        Program((Phase(PAIR, ports=bad, adaptive_vc=0),)).check(n, 4, 1, None, (), topology=t)
    bad[4 * n + 4] = 0                                       # at its target: never read
    bad[4 * n + 0] = ports[4 * n + 0]
    Program((Phase(PAIR, ports=bad, adaptive_vc=0),)).check(n, 4, 1, None, (), topology=t)


@pytest.mark.parametrize("body, match", [
    ("return Program((Phase(OFFSET, ports=dor.astype(float), escape_vc=0),))",
     r"phase 0: ports is an array of float64 of 1 dimension\(s\), not a one-dimensional NumPy "
     r"array of integers"),
    ("return Program((Phase(OFFSET, ports=dor.tolist(), escape_vc=0),))",
     r"phase 0: ports is a list, not a one-dimensional NumPy array of integers"),
    ("return Program((Phase(OFFSET, ports=dor, escape_vc=0.5),))",
     r"phase 0: escape_vc is a float \(0.5\), not a whole number"),
    ("return Program((Phase(OFFSET, ports=dor, escape_vc=True),))",
     r"phase 0: escape_vc is a bool \(True\), not a whole number"),
    ("return Program((Phase(OFFSET, ports=dor, escape_vc=0, filtered='yes'),))",
     r"phase 0: filtered is a str \('yes'\), not True or False"),
    ("return Program((Phase(OFFSET, ports=dor),))",
     r"phase 0: neither adaptive_vc nor escape_vc: it gives no candidate anywhere"),
    ("return Program([dor])", r"phase 0 is a ndarray, not a Phase"),
    ("return Program((Phase(OFFSET, ports=dor, escape_vc=0),), decision='random')",
     r"its decision is a str \('random'\), not a Decision"),
    ("return Program((Phase(OFFSET, ports=dor, escape_vc=0, filtered=True),), "
     "Uniform((Option(sel=0.5),)))",
     r"a decision's option: sel is a float \(0.5\), not a whole number"),
    ("return {'phases': []}",
     r"program\(\) returned a dict, not a Program \(or None: it routes in Python"),
])
def test_a_program_field_of_the_wrong_type_is_refused_naming_it(tmp_path, body, match):
    path = write(tmp_path, "typed", PROGRAM, body)
    line = refused(path, "typed")
    assert line.startswith("icsim: config error: routing.algorithm: typed's program: ")
    assert __import__("re").search(match, line), line


# ================================================================ plug-in files misused
@pytest.mark.parametrize("body, match", [
    ('@ROUTING.register("{name}")\ndef router(topology):\n    return None\n',
     r"routing algorithm 'bad': registered a function; register a subclass of "
     r"icsim.routing.registry.Routing"),
    ('@ROUTING.register\nclass Bad(Routing):\n    pass\n',
     r"a routing algorithm registers under a name: @register\(\"name\"\), not @register"),
    ('@ROUTING.register("{name}")\nclass Bad(Routing):\n    requires = "offsets"\n'
     '    def candidates(self, node, packet):\n        return self.eject_groups\n',
     r"routing algorithm 'bad': requires is a str \('offsets'\), not a set of capabilities "
     r"\(frozenset\(\{'offsets'\}\); known: coordinates, "),
    ('@ROUTING.register("{name}")\nclass Bad(Routing):\n    requires = frozenset({"offset"})\n'
     '    def candidates(self, node, packet):\n        return self.eject_groups\n',
     r"routing algorithm 'bad': requires 'offset', which no topology provides"),
    ('@ROUTING.register("{name}")\nclass Bad(Routing):\n'
     '    vcs = (VC("escape", "escap", bubble=True),)\n'
     '    def candidates(self, node, packet):\n        return self.eject_groups\n',
     r"routing algorithm 'bad': VC 0 \('escape'\): role 'escap' is not one of adaptive, "
     r"escape, layer"),
    ('@ROUTING.register("{name}")\nclass Bad(Routing):\n    vcs = ("escape",)\n'
     '    def candidates(self, node, packet):\n        return self.eject_groups\n',
     r"routing algorithm 'bad': VC 0 is a str \('escape'\), not a VC\(name, role\)"),
    ('@ROUTING.register("{name}")\nclass Bad(Routing):\n    deroute_kinds = "valiant"\n'
     '    def candidates(self, node, packet):\n        return self.eject_groups\n',
     r"routing algorithm 'bad': deroute_kinds is a str \('valiant'\), not a tuple of names"),
    ('@ROUTING.register("{name}")\nclass Bad(Routing):\n    pass\n',
     r"routing algorithm 'bad': gives neither program\(\) .* nor candidates\(\)"),
])
def test_a_routing_plugin_that_misuses_the_registry_is_one_line_naming_the_file(tmp_path, body,
                                                                                 match):
    path = write(tmp_path, "bad", CLASS, body)
    line = refused(path, "bad")
    assert line.startswith(f"icsim: config error: routing.plugins.0: {path}: "), line
    assert __import__("re").search(match, line), line


def test_vcs_made_wrong_by_an_instance_are_refused_at_build(tmp_path):
    """An algorithm that sets its VCs when made (they may depend on the topology) is held
    to the same check at build."""
    path = write(tmp_path, "late", CLASS,
                 '@ROUTING.register("late")\nclass Late(Routing):\n'
                 '    def __init__(self, *args, **kw):\n'
                 '        super().__init__(*args, **kw)\n'
                 '        self.vcs = (VC("escape", ESCAPE, priority=0.5),)\n'
                 '    def candidates(self, node, packet):\n        return self.eject_groups\n')
    assert refused(path, "late") == ("icsim: config error: routing.algorithm: late's VCs: VC 0 "
                                     "('escape'): priority is a float (0.5), not a whole "
                                     "number")


PATTERN = '''
import numpy as np
from icsim.traffic.patterns import Pattern, register
from icsim.traffic.rules import Rule


{body}
'''


@pytest.mark.parametrize("body, match", [
    ('@register("bad")\ndef bad(src, index, rng):\n    return 0\n',
     r"traffic.plugins.0: .*: traffic pattern 'bad': registered a function; register a "
     r"subclass of icsim.traffic.patterns.Pattern"),
    ('@register("bad")\nclass Bad(Pattern):\n    pass\n',
     r"traffic.plugins.0: .*: traffic pattern 'bad': gives no destination\(src, index, rng\)"),
    ('@register("bad")\nclass Bad(Pattern):\n    defaults = ["span"]\n'
     '    def destination(self, src, index, rng):\n        return 0\n',
     r"traffic pattern 'bad': defaults is a list, not a mapping of parameter names"),
    ('@register("bad")\nclass Bad(Pattern):\n'
     '    def destination(self, src, index, rng):\n        return (src + 1) % self.num_nodes\n'
     '    def rule(self):\n        return Rule.of_table(np.arange(self.num_nodes) + 5)\n',
     r"traffic.pattern: bad: rule\(\) gave a table rule: table\[11, 0\] = 16 is not a node "
     r"id in \[0, 16\)"),
    ('@register("bad")\nclass Bad(Pattern):\n'
     '    def destination(self, src, index, rng):\n        return (src + 1) % self.num_nodes\n'
     '    def rule(self):\n        return "table"\n',
     r"traffic.pattern: bad: rule\(\) returned a str \('table'\), not a Rule"),
    ('@register("bad")\nclass Bad(Pattern):\n'
     '    def destination(self, src, index, rng):\n        return 0\n'
     '    def rule(self):\n        return Rule.of_block(10, 8, self.num_nodes)\n',
     r"traffic.pattern: bad: rule\(\) gave a block rule: source 0's block of 8 nodes from 10 "
     r"is not within \[0, 16\)"),
    ('@register("bad")\nclass Bad(Pattern):\n'
     '    def destination(self, src, index, rng):\n        return 99\n',
     r"traffic.pattern: bad: destination\(0, 0\) gave an int \(99\), not a node id in "
     r"\[0, 16\)"),
    ('@register("bad")\nclass Bad(Pattern):\n'
     '    def destination(self, src, index, rng):\n        return "x"\n',
     r"traffic.pattern: bad: destination\(0, 0\) gave a str \('x'\), not a node id"),
])
def test_a_pattern_plugin_that_misuses_the_registry_or_lies_is_one_line(tmp_path, body, match):
    path = write(tmp_path, "bad", PATTERN, body)
    line = refused(path, "bad", key="traffic")
    assert line.startswith("icsim: config error: traffic."), line
    assert __import__("re").search(match, line), line


def test_a_python_pattern_that_lies_mid_run_is_stopped_on_the_message_it_made(tmp_path):
    """A destination that goes wrong only later (message 3 of node 5) stops the run there."""
    path = write(tmp_path, "late", PATTERN,
                 '@register("late")\nclass Late(Pattern):\n'
                 '    def destination(self, src, index, rng):\n'
                 '        return -1 if (src, index) == (5, 3) else (src + 1) % self.num_nodes\n')
    config = {"topology": {"dims": [4, 4]},
              "traffic": {"pattern": "late", "plugins": [path], "load": 0.2,
                          "message_packets": 2},
              "run": {"mode": "finite", "messages_per_node": 6}}
    with pytest.raises(ConfigError, match=r"^traffic.pattern: late: destination\(5, 3\) gave "
                                          r"an int \(-1\), not a node id in \[0, 16\)$"):
        run(config_from_dict(config))
