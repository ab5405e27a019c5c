"""Hostile input files (issue 18): every file a user names — config, routing table, trace, edge
list, a sweep's results for ``icsim plot`` — either loads or is refused with one line naming the
file (and the entry or line), and through the command line with exit status 2 and that one line,
never a traceback.

The named tests are the file cases of the issue's probe, one each; the property tests feed the
readers and the command line generated files (mutated good files, random YAML/JSON, random
bytes)."""

from __future__ import annotations

import copy
import csv
import doctest
import errno
import io
import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import icsim.model.input_files as input_files_module
from icsim.experiments.cli import main
from icsim.experiments.papers.angara.analysis import check_main
from icsim.model.config import Config, ConfigError, load_config
from icsim.model.limits import node_count
from icsim.model.topology import MAX_GRAPH_NODES, Graph, GraphError, Torus
from icsim.routing.table import RoutingTable, TableError
from icsim.traffic.trace import MAX_PACKETS, MAX_TIME_NS, TraceError, read_trace

DIMS = (4, 2)
TRACE_HEAD = "time_ns,src,dst,bytes\n"


def dor_doc() -> dict:
    """A good table file on the 4x2 torus, passing every check of ``icsim tables --check``:
    dimension order in the Angara direction order (positive moves, then negative ones)."""
    topo = Torus(DIMS)
    routes = {}
    for s in range(topo.num_nodes):
        for t in range(topo.num_nodes):
            if s != t:
                off = topo.offsets(s, t)
                routes[(s, t)] = tuple([2 * d for d, o in enumerate(off) for _ in range(max(o, 0))]
                                       + [2 * d + 1 for d, o in enumerate(off)
                                          for _ in range(max(-o, 0))])
    return RoutingTable(topo, routes).to_json()


GOOD_TABLE = dor_doc()
GOOD_ROUTES = RoutingTable.from_json(GOOD_TABLE).routes


def cli(*argv: str) -> tuple[int, list[str], str]:
    """Run ``icsim ARGV`` in-process, the simulation itself replaced by a stub (these tests are
    about reading inputs): exit status, stderr lines, stdout."""
    err, out = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("icsim.simulator.engines.simpy.SimpyEngine.run", _no_simulation)
        mp.setattr("icsim.simulator.engines.compiled.CompiledEngine.run", _no_simulation)
        with redirect_stderr(err), redirect_stdout(out):
            code = main(list(argv))
    return code, err.getvalue().splitlines(), out.getvalue()


def _no_simulation(engine):
    raise AssertionError("the input was accepted and a simulation started")


def refused(*argv: str) -> str:
    """``icsim ARGV`` must exit 2 with exactly one line on stderr; that line."""
    code, err, _ = cli(*argv)
    assert code == 2 and len(err) == 1, (code, err)
    return err[0]


def write(path: Path, content: str | bytes) -> str:
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def table_file(tmp_path: Path, mutate, name: str = "t.json") -> str:
    doc = mutate(copy.deepcopy(GOOD_TABLE))
    return write(tmp_path / name, json.dumps(doc))


def with_route(src: int, dst: int, ports: list[int]):
    def mutate(doc):
        next(e for e in doc["routes"] if e[:2] == [src, dst])[2] = ports
        return doc
    return mutate


def table_config(tmp_path: Path, table: str) -> str:
    return write(tmp_path / "table.yaml", yaml.safe_dump({
        "topology": {"kind": "torus", "dims": list(DIMS)},
        "routing": {"algorithm": "table", "table": {"file": table}}}))


def trace_config(tmp_path: Path, trace: str, packet_bytes: int = 512) -> str:
    return write(tmp_path / "trace.yaml", yaml.safe_dump({
        "topology": {"kind": "torus", "dims": list(DIMS)}, "packet": {"size_bytes": packet_bytes},
        "traffic": {"workload": "trace", "trace": trace}, "run": {"mode": "finite"}}))


def graph_config(tmp_path: Path, edges: str) -> str:
    return write(tmp_path / "graph.yaml", yaml.safe_dump({
        "topology": {"kind": "graph", "file": edges},
        "routing": {"algorithm": "table", "table": {"generator": "minimal"}}}))


# ================================================================ the cases, by name
# --- B: tracebacks
def test_a_directory_as_the_config_is_one_line(tmp_path):
    assert refused("run", str(tmp_path)) == f"icsim: config error: {tmp_path}: is a directory, " \
                                            f"not a file"


def test_a_directory_as_routing_table_is_one_line_naming_the_key(tmp_path):
    line = refused("run", table_config(tmp_path, str(tmp_path)))
    assert line == (f"icsim: config error: routing.table.file: {tmp_path}: is a directory, not "
                    f"a file")
    assert refused("tables", "--check", str(tmp_path)) == (f"icsim tables: {tmp_path}: is a "
                                                            f"directory, not a file")


def test_a_directory_as_traffic_trace_is_one_line_naming_the_key(tmp_path):
    line = refused("run", trace_config(tmp_path, str(tmp_path)))
    assert line == f"icsim: config error: traffic.trace: {tmp_path}: is a directory, not a file"


def test_a_directory_as_topology_file_is_one_line_naming_the_key(tmp_path):
    line = refused("run", graph_config(tmp_path, str(tmp_path)))
    assert line == f"icsim: config error: topology.file: {tmp_path}: is a directory, not a file"


def test_a_latin1_byte_in_a_config_names_file_and_line(tmp_path):
    path = write(tmp_path / "c.yaml", b"topology: {kind: torus, dims: [4, 4]}\n# caf\xe9\n")
    assert refused("run", path) == (f"icsim: config error: {path}:2: byte 0xe9 at column 6 is "
                                    f"not UTF-8 text")


def test_a_latin1_byte_in_a_trace_names_file_and_line(tmp_path):
    trace = write(tmp_path / "t.csv", (TRACE_HEAD + "0,1,2,512\n").encode() + b"# caf\xe9\n")
    assert refused("run", trace_config(tmp_path, trace)) == (
        f"icsim: config error: traffic.trace: {trace}:3: byte 0xe9 at column 6 is not UTF-8 text")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_table_file_that_is_a_json_list_is_one_line(tmp_path, command):
    table = table_file(tmp_path, lambda doc: [1, 2, 3])
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: not an icsim-routing-table file (a JSON list, not an object)")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_table_file_whose_routes_are_a_number_is_one_line(tmp_path, command):
    table = table_file(tmp_path, lambda doc: {**doc, "routes": 5})
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: routes must be a list of [src, dst, [ports...]], not a "
                         f"number")


def test_an_edge_list_naming_node_1000000000_is_refused_before_any_allocation(tmp_path):
    edges = write(tmp_path / "e.txt", "0 1\n1 1000000000\n")
    assert refused("run", graph_config(tmp_path, edges)) == (
        f"icsim: config error: topology.file: {edges}:2: node id 1000000000 is not in "
        f"0..{MAX_GRAPH_NODES - 1} (a graph topology has at most {MAX_GRAPH_NODES} nodes)")


# --- C: accepted when it should not be
@pytest.mark.parametrize("content", ["", "# only a comment\n\n# and another\n"])
def test_an_empty_or_comment_only_config_is_refused(tmp_path, content):
    path = write(tmp_path / "c.yaml", content)
    assert refused("run", path) == (f"icsim: config error: {path}: the config file holds no "
                                    f"settings (it is empty or only comments); a config needs "
                                    f"at least a topology section")


def test_dev_null_as_the_config_is_refused():
    assert refused("run", "/dev/null") == ("icsim: config error: /dev/null: is a device, not a "
                                           "regular file")


@contextmanager
def within(seconds: float):
    """Fail (TimeoutError) instead of hanging if the block takes longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"still waiting after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("role", ["config", "routing.table.file", "traffic.trace",
                                  "topology.file", "tables --check", "plot"])
def test_a_named_pipe_is_refused_at_once_not_waited_on(tmp_path, role):
    """A FIFO given as a file blocked forever in ``open`` (nothing ever writes to it); the one
    reader of user files refuses whatever is not a regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    argv = {"config": ["run", str(fifo)],
            "routing.table.file": ["run", table_config(tmp_path, str(fifo))],
            "traffic.trace": ["run", trace_config(tmp_path, str(fifo))],
            "topology.file": ["run", graph_config(tmp_path, str(fifo))],
            "tables --check": ["tables", "--check", str(fifo)],
            "plot": ["plot", str(fifo)]}[role]
    with within(20):
        line = refused(*argv)
    assert line.endswith(f"{fifo}: is a named pipe (FIFO), not a regular file"), line
    assert role in line or role in ("config", "tables --check", "plot")


@pytest.mark.parametrize("command", ["run", "check"])
@pytest.mark.parametrize("ports,hop,node", [([0, 1, 0], 1, 0),          # x+ x- x+ for 0 -> 1
                                            ([0, 0, 0, 0, 0], 3, 0)])   # twice round the ring
def test_a_looping_route_is_named_a_loop(tmp_path, command, ports, hop, node):
    table = table_file(tmp_path, with_route(0, 1, ports))
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: routes[0]: route 0->1: hop {hop} returns to node {node}, a "
                         f"loop (a route must be a simple path, no node twice)")
    assert "direction-bit" not in line and "deadlock-free" not in line


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_second_entry_for_a_pair_is_an_error_not_an_override(tmp_path, command):
    table = table_file(tmp_path, lambda doc: {**doc, "routes": doc["routes"] + [[0, 1, [1, 1, 1]]]})
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: routes[56]: a second entry for 0->1 (the first is "
                         f"routes[0]); one entry per pair")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_route_to_a_node_outside_the_topology_is_refused(tmp_path, command):
    table = table_file(tmp_path, lambda doc: {**doc, "routes": doc["routes"] + [[0, 99, [0]]]})
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: routes[56]: node 99 is outside the 8-node topology")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_non_empty_self_route_is_refused(tmp_path, command):
    table = table_file(tmp_path, lambda doc: {**doc, "routes": doc["routes"] + [[3, 3, [0, 1]]]})
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: routes[56]: route 3->3: a route from a node to itself must "
                         f"be empty, got 2 hops")


@pytest.mark.parametrize("command", ["run", "check"])
def test_dims_given_as_a_string_is_refused(tmp_path, command):
    table = table_file(tmp_path, lambda doc: {**doc, "topology": {"kind": "torus", "dims": "42"}})
    line = refused(*(["run", table_config(tmp_path, table)] if command == "run"
                     else ["tables", "--check", table]))
    assert line.endswith(f"{table}: topology.dims must be a list of sizes >= 1, got '42'")


@pytest.mark.parametrize("command", ["run", "analyze"])
@pytest.mark.parametrize("entry, shown", [("²", "'²'"),            # a digit to isdigit()
                                          ("9" * 5000, "'999999999999999999999...'")])
def test_a_permutation_file_entry_that_is_no_ascii_number_names_file_and_line(tmp_path,
                                                                              command, entry,
                                                                              shown):
    """A Unicode digit passes ``isdigit()`` and fails ``int()``; 5,000 digits pass Python's
    limit of int(): each one line naming the file and line (tracebacks in both commands)."""
    perm = write(tmp_path / "perm.txt", f"1\n{entry}\n3\n0\n")
    line = refused(command, "quickstart", "--set", "topology.dims=[4]", "--set",
                   "traffic.pattern=permutation", "--set",
                   f"traffic.params.permutation.file={perm}")
    assert line == (f"icsim: config error: traffic.params.permutation.file: permutation: "
                    f"{perm}:2: {shown} is not a node id in [0, 4)")


# --- A: runaway memory or hangs
def test_a_trace_row_at_1e18_ns_is_refused_with_the_limit(tmp_path):
    trace = write(tmp_path / "t.csv", TRACE_HEAD + "0,1,2,512\n1e18,2,1,512\n")
    assert refused("run", trace_config(tmp_path, trace)) == (
        f"icsim: config error: traffic.trace: {trace}:3: time_ns 1e+18 is later than the limit "
        f"of 1e+11 ns (100 s of simulated time)")


def test_a_trace_message_of_1e12_bytes_is_refused_with_the_limit(tmp_path):
    trace = write(tmp_path / "t.csv", TRACE_HEAD + "0,1,2,1000000000000\n")
    assert refused("run", trace_config(tmp_path, trace)) == (
        f"icsim: config error: traffic.trace: {trace}:2: bytes 1000000000000 is more than the "
        f"limit of 1073741824 (1 GiB) per message")


def test_a_trace_is_bounded_in_packets_given_the_packet_size(tmp_path):
    # ten 1 GiB messages are within the per-message limit but, in 512-byte packets, 21 million
    trace = write(tmp_path / "t.csv", TRACE_HEAD + "0,1,2,1073741824\n" * 10)
    line = refused("run", trace_config(tmp_path, trace))
    assert line == (f"icsim: config error: traffic.trace: {trace}:6: the messages up to here take "
                    f"10,485,760 packets of 512 bytes, more than the limit of {MAX_PACKETS:,} "
                    f"packets in a trace")
    assert len(read_trace(trace, 8)) == 10                # without a packet size: per message


def test_random_regular_with_ten_million_nodes_is_refused_at_once(tmp_path, monkeypatch):
    """Refused before networkx draws the graph (which would take minutes and gigabytes)."""
    def drawn(*args, **kw):
        raise AssertionError("the graph was drawn")
    monkeypatch.setattr("networkx.random_regular_graph", drawn)
    path = write(tmp_path / "rr.yaml", "topology: {kind: random_regular, nodes: 10000000, "
                                       "degree: 4}\nrouting: {algorithm: table, table: "
                                       "{generator: minimal}}\n")
    assert refused("run", path) == (f"icsim: config error: topology.nodes: 10000000 nodes: a "
                                    f"graph topology has 1 to {MAX_GRAPH_NODES} nodes")


def test_a_workload_beyond_what_memory_holds_is_one_line_naming_the_traffic():
    """A million-Gbps link makes γ = 0.3 three million messages per node of a 4x4x4 torus in
    its 320 µs.  Traffic made as the run goes holds no schedule of them, but a byte or two of
    each measured packet (once a record of 120 bytes): with a 100 ms window some 10^12,
    refused before anything is built as a config error naming the traffic (a schedule of them
    was once a traceback, then the message limit)."""
    from icsim.configs import bundled
    line = refused("run", str(bundled("quickstart.yaml")), "--set",
                   "link.bandwidth_gbps=1000000", "--set", "run.measure_us=100000")
    assert line.startswith("icsim: config error: traffic: this run needs about ")
    assert "packets measured" in line


# --- D: graph-file errors give the file's line, and always the file
@pytest.mark.parametrize("text,line,reason", [
    ("# a comment\n0 1\n\n2 2\n1 2\n", 4, "(2, 2) is a self-loop"),
    ("0 1\n1 2\n# c\n1 0\n", 4, "(1, 0) appears twice"),
    ("0 1\n1 2 3\n", 2, "expected 'u v', got '1 2 3'"),
    ("0 1\n1 two\n", 2, "node ids must be integers, got '1 two'"),
    ("0 1\n-1 0\n", 2, f"node id -1 is not in 0..{MAX_GRAPH_NODES - 1}"),
])
def test_an_edge_list_error_names_the_file_and_its_line(tmp_path, text, line, reason):
    edges = write(tmp_path / "e.txt", text)
    with pytest.raises(GraphError) as err:
        Graph.from_file(edges)
    assert str(err.value).startswith(f"{edges}:{line}: {reason}")
    assert refused("run", graph_config(tmp_path, edges)).startswith(
        f"icsim: config error: topology.file: {edges}:{line}: {reason}")


def test_an_edge_list_error_about_the_whole_graph_names_the_file(tmp_path):
    edges = write(tmp_path / "e.txt", "0 1\n2 3\n")
    with pytest.raises(GraphError, match=rf"^{edges}: the graph is not connected \(node 2 cannot "
                                         rf"be reached from node 0\)$"):
        Graph.from_file(edges)
    with pytest.raises(GraphError, match=rf"^{tmp_path / 'none.txt'}: no such file$"):
        Graph.from_file(tmp_path / "none.txt")


# ================================================================ the readers, case by case
@pytest.mark.parametrize("content,message", [
    ("[1, 2]\n", "a config is a mapping of sections (topology:, traffic:, ...), not a list"),
    ("5\n", "a config is a mapping of sections (topology:, traffic:, ...), not a number"),
    ("a: &a [*a]\n", "not a config: nested more than 32 levels deep (or a YAML alias that "
                     "refers to itself)"),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"             # a "billion laughs": 10^5 values
     + "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcd", "bcde")),
     "not a config: more than 100,000 values (counting every use of a YAML alias)"),
    ("a: " + "[" * 5000 + "\n", "not a config: nested too deeply"),
    ("seed: " + "1" * 5000 + "\n", "not a config: Exceeds the limit (4300 digits) for integer "
                                   "string conversion"),
])
def test_a_config_that_is_not_a_mapping_of_sections_is_refused(tmp_path, content, message):
    path = write(tmp_path / "c.yaml", content)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: {message}")


def test_a_yaml_syntax_error_names_its_line_on_one_line(tmp_path):
    path = write(tmp_path / "c.yaml", "seed: 1\ntopology: {kind: torus, dims: [4, 4]\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}:3: not valid YAML: ")
    assert "\n" not in str(err.value)
    path = write(tmp_path / "c.yaml", "seed: 1\x01\n")
    with pytest.raises(ConfigError, match=r"c\.yaml:1: not valid YAML: character U\+0001 is not "
                                          r"allowed"):
        load_config(path)


@pytest.mark.parametrize("content,line,key", [
    ("seed: 1\ntopology: {kind: torus, dims: [4, 4]}\nseed: 2\n", 3,
     "'seed' appears twice in one section (first on line 1)"),
    ("topology:\n  kind: torus\n  dims: [4, 4]\ntraffic: {load: 0.1}\ntraffic: {load: 0.9}\n", 5,
     "'traffic' appears twice in one section (first on line 4)"),
])
def test_a_key_given_twice_is_an_error_not_an_override(tmp_path, content, line, key):
    path = write(tmp_path / "c.yaml", content)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}:{line}: not valid YAML: key {key}"


def test_a_key_with_a_line_break_is_refused_on_one_line(tmp_path):
    path = write(tmp_path / "c.yaml", '"topology\\nx": 1\n')   # a line break in the key
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: not a config: key 'topology\\nx' is not a name"


def test_an_endless_device_is_refused_before_any_read():
    with pytest.raises(ConfigError, match="^/dev/zero: is a device, not a regular file$"):
        load_config("/dev/zero")
    with pytest.raises(TraceError, match="^/dev/zero: is a device, not a regular file$"):
        read_trace("/dev/zero", 8)
    with pytest.raises(GraphError, match="^/dev/zero: is a device, not a regular file$"):
        Graph.from_file("/dev/zero")
    with pytest.raises(TableError, match="^/dev/zero: is a device, not a regular file$"):
        RoutingTable.load("/dev/zero")


def test_a_file_larger_than_its_kind_is_read_no_further_than_the_limit(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as fh:                  # 65 MiB of zeros, sparse: no disk taken
        fh.truncate(65 << 20)
    with pytest.raises(ConfigError, match=f"^{big}: larger than 1 MiB; not a file of this kind"):
        load_config(big)
    with pytest.raises(TraceError, match=f"^{big}:1: line longer than 1 MiB"):
        read_trace(big, 8)
    with pytest.raises(GraphError, match=f"^{big}:1: line longer than 1 MiB"):
        Graph.from_file(big)
    with pytest.raises(TableError, match=f"^{big}: larger than 64 MiB"):
        RoutingTable.load(big)


def test_a_file_name_with_a_nul_character_is_refused():
    with pytest.raises(TableError, match="not a file name"):
        RoutingTable.load("t\0.json")


def test_an_unreadable_file_is_one_line(tmp_path, monkeypatch):
    path = write(tmp_path / "c.yaml", "seed: 1\n")

    def denied(name, mode, **how):               # what open() does without read permission
        raise PermissionError(errno.EACCES, "Permission denied", name)

    monkeypatch.setattr(input_files_module, "open", denied, raising=False)
    with pytest.raises(ConfigError, match=rf"^{path}: permission denied$"):
        load_config(path)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: {**d, "version": True}, "unsupported version True (expected 1)"),
    (lambda d: {**d, "topology": []}, "topology must be an object, not a list"),
    (lambda d: {**d, "topology": {"kind": "torus", "dims": [4, 2.5]}},
     "topology.dims must be a list of sizes >= 1, got [4, 2.5]"),
    (lambda d: {**d, "topology": {"kind": "torus", "dims": [4, 2], "wrap": [1, 0]}},
     "topology.wrap must be a list of 2 true/false, got [1, 0]"),
    (lambda d: {**d, "topology": {"kind": "torus", "dims": [1000, 1000]}},
     "topology.dims [1000, 1000]: more than 65,536 nodes, the limit of a table file's topology"),
    (lambda d: {**d, "topology": {"kind": "torus", "dims": [1] * 17}},
     "topology.dims: 17 dimensions, more than the limit of 16"),
    (lambda d: {**d, "topology": {"kind": "graph", "nodes": 10 ** 9, "edges": [[0, 1]]}},
     f"topology: 1000000000 nodes: a graph topology has 1 to {MAX_GRAPH_NODES} nodes"),
    (lambda d: {**d, "nodes": [0, 1, 1]}, "nodes[2]: node 1 is listed twice"),
    (lambda d: {**d, "nodes": [0, 8]}, "nodes[1]: node 8 is outside the 8-node topology"),
    (lambda d: {**d, "nodes": [3]}, "nodes: a table needs at least 2 nodes, got 1"),
    (lambda d: {**d, "nodes": [0, 1]}, "routes[1]: route 0->2: node 2 is not one of the table's "
                                       "nodes"),
    (lambda d: {**d, "routes": d["routes"][1:]}, "route 0->1: missing"),
    (lambda d: {**d, "routes": [[0, 1, [0.0]]] + d["routes"][1:]},
     "routes[0] is not [src, dst, [ports...]] with integers: [0, 1, [0.0]]"),
    (lambda d: {**d, "routes": [[0, 1, [-1]]] + d["routes"][1:]},
     "routes[0]: ports of 0->1 must be >= 0"),
    (with_route(0, 1, [2]), "routes[0]: route 0->1: ends at node 4, not at 1"),
    (lambda d: {**d, "layers": [[s, t, [99] * len(r)] for s, t, r in d["routes"]]},
     "layers[0]: layers of 0->1 must lie in [0, 64)"),
    (lambda d: {**d, "meta": "x"}, "meta must be an object, not a string"),
])
def test_a_malformed_table_file_names_the_entry(tmp_path, mutate, message):
    table = table_file(tmp_path, mutate)
    with pytest.raises(TableError) as err:
        RoutingTable.load(table)
    assert str(err.value) == f"{table}: {message}"


def test_a_table_file_that_is_not_json_names_line_and_column(tmp_path):
    table = write(tmp_path / "t.json", '{"format": "icsim-routing-table",\n "version": 1,,\n}')
    with pytest.raises(TableError, match=rf"^{table}:2: not valid JSON \(Expecting property name "
                                         rf"enclosed in double quotes, column 15\)$"):
        RoutingTable.load(table)


def test_tables_check_still_passes_a_good_table(tmp_path):
    table = table_file(tmp_path, lambda doc: doc)
    code, err, out = cli("tables", "--check", table)
    assert code == 0 and not err and "deadlock-free" in out


def test_the_docstring_examples_run():
    result = doctest.testmod(input_files_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.slow
def test_the_real_command_line_prints_one_line_and_exits_2(tmp_path):
    table = table_file(tmp_path, with_route(0, 1, [0, 1, 0]))
    for args in (["run", str(tmp_path)], ["tables", "--check", table]):
        p = subprocess.run([sys.executable, "-m", "icsim", *args], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
        assert "Traceback" not in p.stderr


# ================================================================ generated files
FUZZ = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

# small numbers only: a generated file is hostile in shape, not in size (sizes have their own
# named tests above), so nothing here can build a large network
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 9) | st.floats(allow_nan=True)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=10)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def one_line_naming(err: Exception, path: str) -> None:
    text = str(err)
    assert "\n" not in text and text.startswith(path), text


@st.composite
def table_texts(draw) -> tuple[str, bytes]:
    """A table file: the good one written differently ("good": it must load), the good one
    with a few entries or fields replaced, random JSON, or bytes; (how, content)."""
    how = draw(st.sampled_from(["good", "mutated", "mutated", "mutated", "json", "bytes"]))
    if how == "bytes":
        return how, draw(st.binary(max_size=200))
    if how == "json":
        return how, json.dumps(draw(json_values)).encode()
    doc = copy.deepcopy(GOOD_TABLE)
    if how == "good":                    # the same table written differently: must load
        doc["routes"] = draw(st.permutations(doc["routes"]))
        doc["routes"] += [[v, v, []] for v in draw(st.lists(st.integers(0, 7), unique=True))]
        doc["nodes"] = draw(st.permutations(range(8)))
        doc["meta"] = draw(st.dictionaries(st.text(max_size=4), json_values, max_size=2))
        return how, json.dumps(doc).encode()
    for _ in range(draw(st.integers(1, 3))):
        routes = doc.get("routes") if isinstance(doc.get("routes"), list) else []
        change = draw(st.sampled_from(["ports", "entry", "append", "field", "topology",
                                       "layers"]))
        i = draw(st.integers(0, len(routes) - 1)) if routes else None
        if change == "ports" and i is not None and isinstance(routes[i], list) \
                and len(routes[i]) == 3:
            routes[i][2] = draw(st.lists(st.integers(-1, 4), max_size=6))
        elif change == "entry" and i is not None:
            routes[i] = draw(json_values)
        elif change == "append" and "routes" in doc and routes is doc["routes"]:
            routes.append([draw(st.integers(-1, 9)), draw(st.integers(-1, 9)),
                           draw(st.lists(st.integers(-1, 4), max_size=5))])
        elif change == "layers":          # a layer per hop: checked as virtual layers
            cycle = draw(st.lists(st.integers(0, 2), min_size=1, max_size=6))
            doc["layers"] = [[e[0], e[1], [cycle[(i + k) % len(cycle)]
                                           for k in range(len(e[2]))]]
                             for i, e in enumerate(routes) if isinstance(e, list)
                             and len(e) == 3 and isinstance(e[2], list)]
        elif change == "topology" and isinstance(doc.get("topology"), dict):
            doc["topology"][draw(st.sampled_from(["kind", "dims", "wrap", "nodes", "edges"]))] = \
                draw(json_values)
        else:
            doc[draw(st.sampled_from(["format", "version", "topology", "nodes", "routes",
                                      "layers", "meta"]))] = draw(json_values)
    return how, json.dumps(doc).encode()


def assert_sound(table: RoutingTable) -> None:
    """What a loaded table promises: a simple path for every pair of its nodes."""
    for s, t in table.pairs():
        path = table.node_path(s, t)
        assert path[0] == s and path[-1] == t and len(set(path)) == len(path)


@given(case=table_texts())
@FUZZ
def test_a_generated_table_file_loads_soundly_or_is_a_table_error(scratch, case):
    how, content = case
    path = write(scratch / "t.json", content)
    try:
        table = RoutingTable.load(path)
    except TableError as err:
        event("refused")
        assert how != "good", err            # a good table written differently must load
        one_line_naming(err, path)
    else:
        event("loaded")
        assert_sound(table)
        if how == "good":                    # the same routes (and the empty self-routes)
            assert {pair: r for pair, r in table.routes.items() if pair[0] != pair[1]} \
                == GOOD_ROUTES


@given(case=table_texts())
@settings(FUZZ, max_examples=50)
def test_tables_check_on_a_generated_file_exits_0_or_2_with_one_line(scratch, case):
    how, content = case
    path = write(scratch / "t.json", content)
    code, err, out = cli("tables", "--check", path)
    event(f"exit {code}")
    assert code == 0 or how != "good", err
    if code == 0:
        assert not err and "deadlock-free" in out
        assert_sound(RoutingTable.load(path))
    else:
        assert code == 2 and len(err) == 1 and path in err[0], (code, err)


@given(case=table_texts())
@settings(FUZZ, max_examples=30)
def test_layers_on_a_generated_table_file_writes_a_checked_table_or_exits_2(scratch, case):
    how, content = case
    path = write(scratch / "t.json", content)
    out = scratch / "layered.json"
    out.unlink(missing_ok=True)
    code, err, text = cli("layers", "--table", path, "--out", str(out))
    event(f"exit {code}")
    assert code == 0 or how != "good", err
    if code == 0:                       # what it wrote passes the file check
        assert not err and f"wrote {out}" in text
        assert check_main(out)["rules"] == "layers"
    else:
        assert code == 2 and len(err) == 1 and path in err[0] and not out.exists(), (code, err)


#: the minimal routes of a 6-ring, as node paths: a good paths file for ``icsim layers``
RING_PATHS = ["{} {}".format(s, " ".join(str((s + k * d) % 6) for k in range(1, steps + 1)))
              for s in range(6) for d, steps in ((1, 1), (1, 2), (1, 3), (-1, 1), (-1, 2))]


@st.composite
def paths_texts(draw) -> bytes:
    """A paths file: the ring's routes with a few lines replaced, dropped or repeated, with
    comments and blank lines, or bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=200))
    lines = list(RING_PATHS)
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        change = draw(st.sampled_from(["nodes", "drop", "repeat", "comment", "junk"]))
        if change == "nodes":
            lines[i] = " ".join(map(str, draw(st.lists(st.integers(-1, 7), max_size=5))))
        elif change == "drop":
            del lines[i]
        elif change == "repeat":
            lines.append(lines[i])
        elif change == "comment":
            lines.insert(i, draw(st.sampled_from(["", "# a comment", "   "])))
        else:
            lines[i] = draw(st.text(max_size=8))
    return "\n".join(lines).encode()


@given(content=paths_texts())
@settings(FUZZ, max_examples=40)
def test_layers_on_generated_paths_writes_a_checked_table_or_exits_2(scratch, content):
    edges = write(scratch / "ring.txt", "".join(f"{v} {(v + 1) % 6}\n" for v in range(6)))
    path = write(scratch / "paths.txt", content)
    out = scratch / "from_paths.json"
    out.unlink(missing_ok=True)
    code, err, text = cli("layers", "--edges", edges, "--paths", path, "--out", str(out))
    event(f"exit {code}")
    if code == 0:
        assert not err and f"wrote {out}" in text and check_main(out)["rules"] == "layers"
    else:
        assert code == 2 and len(err) == 1 and path in err[0] and not out.exists(), (code, err)


trace_fields = st.sampled_from(["0", "1", "7", "8", "-1", "2.5", "1e18", "1e300", "nan", "inf",
                                "", "x", '"3"', "1_0", "99999999999999999999", " 4 ", "0x10"])


@st.composite
def trace_texts(draw) -> bytes:
    """A trace: a good one (good header, good rows among comments and blank lines), or one
    with any header, rows of good and bad fields, junk lines and junk bytes."""
    good = draw(st.booleans())
    header = draw(st.sampled_from([TRACE_HEAD, "# c\n" + TRACE_HEAD, "\ufeff" + TRACE_HEAD]
                                  + ([] if good else ["time_ns,src,dst\n", "",
                                                      "bytes,dst,src,time_ns,x\n"])))
    lines, t = [], 0.0
    for _ in range(draw(st.integers(1 if good else 0, 6))):
        kind = draw(st.sampled_from(["row", "row", "row", "comment", "blank"]
                                    + ([] if good else ["text", "bad row", "bad row"])))
        if kind == "bad row":
            lines.append(",".join(draw(st.lists(trace_fields, min_size=3, max_size=5))))
        elif kind == "row":
            t += draw(st.sampled_from([0, 0.5, 10, 1e6]))
            lines.append(f"{t},{draw(st.integers(0, 7))},{draw(st.integers(0, 7))},"
                         f"{draw(st.integers(1, 5000))}")
        elif kind == "comment":
            lines.append("# " + draw(st.text(max_size=8)).replace("\n", " ").replace("\r", " "))
        elif kind == "blank":
            lines.append("")
        else:
            lines.append(draw(st.text(max_size=12)))
    data = (header + "\n".join(lines) + "\n").encode()
    if not good and draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data


@given(content=trace_texts())
@FUZZ
def test_a_generated_trace_reads_within_the_limits_or_is_a_trace_error(scratch, content):
    path = write(scratch / "t.csv", content)
    try:
        records = read_trace(path, 8, packet_bytes=512)
    except TraceError as err:
        event("refused")
        one_line_naming(err, path)
        assert err.line is None or 1 <= err.line <= max(1, content.count(b"\n") + 1)
    else:
        event("read")
        times = [r.time_ns for r in records]
        assert times == sorted(times) and 0 <= times[0] and times[-1] <= MAX_TIME_NS
        assert all(0 <= r.src < 8 and 0 <= r.dst < 8 and r.bytes > 0 for r in records)


@st.composite
def edge_texts(draw) -> bytes:
    """An edge list: a ring with chords (connected) in any order, with up to three bad, odd or
    junk lines mixed in and perhaps junk bytes at the end."""
    n = draw(st.integers(2, 9))
    pairs = {(u, (u + 1) % n) for u in range(n if n > 2 else 1)}
    pairs |= {(u, v) for u, v in draw(st.sets(st.tuples(st.integers(0, n - 1),
                                                        st.integers(0, n - 1)), max_size=4))
              if u + 1 < v and (u, v) != (0, n - 1)}
    lines = draw(st.permutations([f"{u} {v}" for u, v in sorted(pairs)]))
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["edge", "edge", "comma", "comment", "text"]))
        u, v = draw(st.integers(-1, 9)), draw(st.integers(-1, 9))
        lines.insert(draw(st.integers(0, len(lines))),
                     {"edge": f"{u} {v}", "comma": f"{u},{v}  # c", "comment": "# x",
                      "text": draw(st.text(max_size=8))}[kind])
    data = "\n".join(lines).encode()
    if draw(st.integers(0, 3)) == 0:
        data += draw(st.binary(max_size=4))
    return data


@given(content=edge_texts())
@FUZZ
def test_a_generated_edge_list_builds_a_connected_graph_or_is_a_graph_error(scratch, content):
    path = write(scratch / "e.txt", content)
    try:
        g = Graph.from_file(path)
    except GraphError as err:
        event("refused")
        one_line_naming(err, path)
        line = str(err)[len(path):].split(":")[1]
        assert not line.isdigit() or 1 <= int(line) <= content.count(b"\n") + 1
    else:
        event("built")
        assert (g.distances >= 0).all() and g.num_nodes == 1 + max(map(max, g.edges))


GOOD_CONFIG = {"seed": 1, "topology": {"kind": "torus", "dims": [4, 2]},
               "traffic": {"load": 0.2, "message_packets": 2},
               "run": {"warmup_us": 1, "measure_us": 2, "drain_us": 5}}


@st.composite
def config_texts(draw) -> tuple[str, bytes]:
    """A config: the good one with other values within the schema ("good": it must load), the
    good one with a section or key replaced, random YAML, text or bytes; (how, content)."""
    how = draw(st.sampled_from(["good", "mutated", "mutated", "yaml", "text", "bytes"]))
    if how == "bytes":
        return how, draw(st.binary(max_size=120))
    if how == "text":
        return how, draw(st.text(max_size=80)).encode()
    if how == "yaml":
        return how, yaml.safe_dump(draw(json_values)).encode()
    doc = copy.deepcopy(GOOD_CONFIG)
    if how == "good":                    # within the schema and runnable: must load and start
        doc["seed"] = draw(st.integers(0, 99))
        doc["traffic"]["load"] = draw(st.floats(0.1, 1.0))
        doc["topology"]["dims"] = draw(st.lists(st.integers(2, 4), min_size=1, max_size=3))
        doc["run"]["measure_us"] = 20    # messages of every node in it, even at γ = 0.1
        return how, yaml.safe_dump(doc).encode()
    section = draw(st.sampled_from(sorted(GOOD_CONFIG) + ["routing", "packet"]))
    if draw(st.booleans()) and isinstance(doc.get(section), dict):
        doc[section][draw(st.sampled_from(["kind", "dims", "load", "file", "measure_us",
                                           "trace", "table"]))] = draw(json_values)
    else:
        doc[section] = draw(json_values)
    return how, yaml.safe_dump(doc).encode()


@given(case=config_texts())
@FUZZ
def test_a_generated_config_loads_or_is_a_config_error(scratch, case):
    how, content = case
    path = write(scratch / "c.yaml", content)
    try:
        cfg = load_config(path)
    except ConfigError as err:
        event("refused")
        assert how != "good", err            # a config within the schema must load
        assert "\n" not in str(err)
    else:
        event("loaded")
        assert isinstance(cfg, Config)
        if how == "good":
            assert cfg.to_dict()["topology"]["dims"] == yaml.safe_load(content)["topology"][
                "dims"]


@given(case=config_texts())
@settings(FUZZ, max_examples=50)
def test_icsim_run_on_a_generated_config_exits_2_with_one_line_or_starts(scratch, case):
    how, content = case
    path = write(scratch / "c.yaml", content)
    try:
        code, err, _ = cli("run", path)
    except AssertionError as started:                # accepted: the stub was reached
        event("started")
        assert "simulation started" in str(started)
        # what was built is as small as the generator's numbers: at most 9 ** 4 nodes
        assert node_count(load_config(path), 9 ** 4)[0] <= 9 ** 4
    else:
        event("exit 2")
        assert how != "good", err                    # a config within the schema must start
        assert code == 2 and len(err) == 1 and err[0].startswith("icsim: "), (code, err)


# ================================================================ a sweep's results file
def results_rows() -> list[dict]:
    """Two small curves as a sweep writes them (the columns the figures read, and the config
    columns that tell the curves apart)."""
    return [{"curve": alg, "role": "grid", "config_hash": f"{alg}-{load}", "seed": 1,
             "offered_load": load, "status": "ok", "mode": "window",
             "saturated": load > 0.3, "saturation_reason": "throughput" if load > 0.3 else "",
             "accepted_load": min(load, 0.3), "latency_ns": 1000 * (1 + load),
             "derouted.total": 0.0, "config.routing.algorithm": alg,
             "config.traffic.load": load, "config.seed": 1}
            for alg in ("dor", "abr") for load in (0.1, 0.2, 0.3, 0.4)]


def results_text(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def plot(directory: Path, content: str | bytes) -> tuple[int, list[str]]:
    write(directory / "results.csv", content)
    code, err, _ = cli("plot", str(directory), "--format", "png")
    return code, err


@pytest.mark.parametrize("content, reason", [
    (b"offered_load,latency_ns,accepted_load\n0.1,\xff,0.1\n",
     ":2: byte 0xff at column 5 is not UTF-8 text"),
    ("", ": empty"),
    ("load,latency_ns\n0.1,5\n", ":1: no offered_load or accepted_load column"),
    ("offered_load,latency_ns,accepted_load\n0.1,5,0.1\nhigh,6,0.2\n",
     ": row 2: offered_load 'high' is not a load"),
    ("offered_load,latency_ns,accepted_load\n0.1,5,0.1\n0.2,6,0.2,7\n",
     ": not a CSV table (Error tokenizing data. C error: Expected 3 fields in line 3, saw 4"),
])
def test_icsim_plot_on_a_file_that_is_not_a_sweeps_results_is_one_line(tmp_path, content,
                                                                        reason):
    code, err = plot(tmp_path, content)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"icsim: {tmp_path / 'results.csv'}{reason}"), err


def test_icsim_plot_on_a_results_file_with_no_runs_yet_says_so(tmp_path):
    code, err = plot(tmp_path, results_text(results_rows()).splitlines()[0] + "\n")
    assert code == 0 and err == [f"icsim plot: {tmp_path} holds no runs yet; nothing to draw"]
    assert not list(tmp_path.glob("*.png"))


def test_a_run_without_a_seed_is_drawn_as_a_seed_of_its_own(tmp_path):
    rows = results_rows()
    rows[1]["seed"] = ""                              # the column is read as floats: 1.0
    code, err = plot(tmp_path, results_text(rows))
    assert code == 0 and not err
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["accepted.png", "latency.png"]


@st.composite
def results_texts(draw) -> str:
    """The good results file with cells replaced, rows dropped or a column taken out or
    renamed."""
    rows = [list(map(str, r.values())) for r in results_rows()]
    header = list(results_rows()[0])
    for _ in range(draw(st.integers(1, 4))):
        i, j = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(header) - 1))
        rows[i][j] = draw(st.sampled_from(["", "nan", "inf", "-1", "0", "1e300", "abc", "True",
                                           "[1, 2]", "None", '"', "1e-320"]))
    if draw(st.booleans()):
        del rows[draw(st.integers(0, len(rows) - 1))]
    if draw(st.booleans()):
        j = draw(st.integers(0, len(header) - 1))
        if draw(st.booleans()):
            for r in [header, *rows]:
                del r[j]
        else:
            header[j] = draw(st.sampled_from(["seed", "mode", "saturated", "x", "",
                                              "offered_load", "curve"]))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue()


@given(content=results_texts())
@settings(FUZZ, max_examples=25)
@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")  # 1e300 ns
def test_icsim_plot_on_a_generated_results_file_draws_or_exits_2_with_one_line(scratch,
                                                                              content):
    code, err = plot(scratch, content)
    event(f"exit {code}")
    assert code in (0, 2), (code, err)
    assert code == 0 or len(err) == 1 and err[0].startswith(f"icsim: {scratch}"), err


def test_a_missing_file_named_by_a_relative_path_says_where_it_was_looked_for(tmp_path,
                                                                              monkeypatch):
    """A config's trace path is taken from the working directory, not the config's folder:
    the example trace config run from elsewhere said only 'no such file'."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TraceError, match=rf"^t/absent.csv: no such file \(a relative path is "
                                         rf"taken from the working directory, {tmp_path}\)$"):
        read_trace("t/absent.csv", 8)
