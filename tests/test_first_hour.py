"""The first hour (issue 48): an error says what is wrong, where, what was expected and the name
meant; an argument error shows the subcommand's usage; ``icsim configs`` lists the bundled
configs; a bundled config runs from any folder."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from icsim.configs import bundled, listing
from icsim.experiments.cli import main
from icsim.model.config import ConfigError, config_from_dict, read_config_file
from icsim.routing.registry import ROUTING
from icsim.simulator.build import from_dict

QUICKSTART = str(bundled("quickstart.yaml"))


def config_error(capsys, *sets: str) -> str:
    """``icsim run quickstart --set ...`` must exit 2 with one line; its text after
    ``icsim: config error: ``."""
    assert main(["run", QUICKSTART, *[a for s in sets for a in ("--set", s)]]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("icsim: config error: "), err
    return err.removeprefix("icsim: config error: ")


# ---------------------------------------------------------------------------------- did you mean
#: every registered algorithm, as the messages list them (sorted)
ALGORITHMS = ", ".join(sorted(ROUTING.names()))

@pytest.mark.parametrize("sets, message", [
    (["topolgy.dims=[4]"], "topolgy: unknown key (did you mean 'topology'?)"),
    (["topology.dim=[4]"], "topology.dim: unknown key (did you mean 'topology.dims'?)"),
    (["traffic.patern=uniform"], "traffic.patern: unknown key (did you mean 'traffic.pattern'?)"),
    (["run.measure=20"], "run.measure: unknown key (did you mean 'run.measure_us'?)"),
    (["topology.colour=red"], "topology.colour: unknown key; topology takes kind, dims, wrap, "
                              "file, nodes, degree, seed, p, a, h, g, arrangement, k, n, taper, "
                              "trunking, failed_links, failed_nodes"),
    (["routing.algorithm=abd"], "routing.algorithm: unknown algorithm 'abd' (did you mean "
                                "'abr'? valid: " + ALGORITHMS + ")"),
    (["routing.algorithm=DOR"], "routing.algorithm: unknown algorithm 'DOR' (did you mean "
                                "'dor'? valid: " + ALGORITHMS + ")"),
    (["traffic.pattern=unifrom"], "traffic.pattern: unknown traffic pattern 'unifrom' (did you "
                                  "mean 'uniform'? valid: alltoall, "),
    (["routing.ofrr.delta=3"], "routing.ofrr: not a routing algorithm's section (did you mean "
                               "'routing.ofr'? valid: " + ALGORITHMS + ")"),
    (["routing.algorithm=ofr", "routing.ofr.deltaa=3"],
     "routing.ofr.deltaa: unknown key (did you mean 'routing.ofr.delta'?)"),
    (["routing.algorithm=table", "routing.table.generator=ssp"],
     "routing.table.generator: unknown generator 'ssp' (did you mean 'sssp'? valid: bfs, "),
    (["routing.algorithm=table", "routing.table.generator=sssp", "routing.table.layers=lsh"],
     "routing.table.layers: unknown layer assigner 'lsh' (did you mean 'lash'? valid: "),
    (["traffic.workload=collectiv"], "traffic.workload: expected 'open', 'collective', "
                                     "'trace' or 'app', got 'collectiv' (did you mean "
                                     "'collective'?)"),
    (["run.engine=simpi"], "run.engine: expected 'auto', 'simpy' or 'compiled', got 'simpi' "
                           "(did you mean 'simpy'?)"),
    (["traffic.params.hotspt.fraction=0.2"],
     "traffic.params.hotspt: unknown pattern 'hotspt' (did you mean 'hotspot'? valid: "),
])
def test_a_mistyped_key_or_name_is_answered_with_the_name_meant(capsys, sets, message):
    assert config_error(capsys, *sets).startswith(message)


@pytest.mark.parametrize("sets, message", [
    # "must be a section (a mapping) of the algorithm's settings, got 'abr'" before
    (["routing.algoritm=abr"], "routing.algoritm: unknown key (did you mean "
                               "'routing.algorithm'?)"),
    # a flat key of older configs, mistyped: the section key it stands for
    (["routing.delt=3"], "routing.delt: unknown key (did you mean 'routing.ofr.delta'?)"),
    # a name nowhere near a key may be a plug-in algorithm's section given a value
    (["routing.westfirst=3"], "routing.westfirst: must be a section (a mapping) of the "
                              "algorithm's settings, got 3"),
])
def test_a_value_under_routing_is_a_mistyped_key_not_a_section(capsys, sets, message):
    assert config_error(capsys, *sets) == message


# ---------------------------------------------------------------------------------- expected, got
@pytest.mark.parametrize("sets, message", [
    (["topology.dims=5"], "topology.dims: expected a list such as [8, 8, 8], got 5"),
    (["topology.wrap=true"], "topology.wrap: expected a list such as [true, true, false], got "
                             "True"),
    (["topology.dims=[a]"], "topology.dims.0: expected a whole number, got 'a'"),
    (["topology.dims=[0]"], "topology.dims.0: expected a number >= 1, got 0"),
    (["topology.failed_links=[[1,2,3]]"], "topology.failed_links.0: expected at most 2 items, "
                                          "got [1, 2, 3]"),
    (["traffic.load=x"], "traffic.load: expected a number, got 'x'"),
    (["traffic.load=.nan"], "traffic.load: expected a finite number, got nan"),
    (["traffic.message_packets=true"], "traffic.message_packets: expected a whole number, got "
                                       "True"),
    (["traffic=5"], "traffic: expected a section (a mapping of keys to values), got 5"),
    (["router.bubble='yes'"], "router.bubble: expected true or false, got 'yes'"),
    (["traffic.pattern=5"], "traffic.pattern: expected text, got 5"),
    (["run.max_time_us=-1"], "run.max_time_us: expected a number > 0, got -1"),
    (["link.latency_ns=2000000000"], "link.latency_ns: expected a number <= 1e+09, got "
                                     "2000000000"),
])
def test_a_value_of_the_wrong_kind_says_what_was_expected_and_what_was_given(capsys, sets,
                                                                              message):
    """Pydantic's own words ("Input should be a valid tuple") named neither."""
    assert config_error(capsys, *sets) == message


def test_no_config_error_speaks_pydantic():
    for data in ({"topology": {"dims": 5}}, {"topology": {"dims": [4], "wrap": "x"}},
                 {"topology": {"dims": [4]}, "nic": {"handshake": 3}},
                 {"topology": {"dims": [4]}, "run": []}, {"topology": None}, {}):
        with pytest.raises(ConfigError) as err:
            config_from_dict(data)
        assert "Input should" not in str(err.value) and "valid tuple" not in str(err.value)


# ---------------------------------------------------------------------------------- patterns
@pytest.mark.parametrize("sets, message", [
    (["traffic.pattern=hotspot", "traffic.params.hotspot.fractio=0.2"],
     "traffic.params.hotspot.fractio: hotspot: unknown parameter(s) fractio; did you mean "
     "'fraction'? valid: fraction, nodes"),
    (["traffic.pattern=hotspot", "traffic.params.hotspot.fraction=2"],
     "traffic.params.hotspot.fraction: hotspot: fraction must be a number in [0, 1], got 2"),
    (["traffic.pattern=hotspot", "traffic.params.hotspot.nodes=[99]"],
     "traffic.params.hotspot.nodes: hotspot: hotspot node 99 is not a node id in [0, 64)"),
    (["traffic.params.uniform.include_self=3"],
     "traffic.params.uniform.include_self: uniform: include_self must be true or false, got 3"),
    (["traffic.workload=collective", "traffic.collective=tornado",
      "traffic.params.tornado.over=ranks"],
     "traffic.params.tornado.over: tornado: over must be 'coordinates' or 'index', got 'ranks'"),
    # a precondition of the pattern, not a parameter: the pattern's key
    (["traffic.pattern=transpose", "topology.dims=[4,2]"],
     "traffic.pattern: transpose: 4x2 has 8 nodes, not a perfect square"),
])
def test_an_error_about_a_patterns_parameter_names_its_key(capsys, sets, message):
    assert config_error(capsys, *sets) == message


def test_a_pattern_error_crosses_a_process_boundary_with_its_parameter():
    import pickle

    from icsim.traffic.patterns import PatternError
    err = pickle.loads(pickle.dumps(PatternError("hotspot: fraction ...", "fraction")))
    assert (type(err), str(err), err.param) == (PatternError, "hotspot: fraction ...", "fraction")


# ---------------------------------------------------------------------------------- arguments
def usage_error(capsys, *argv: str) -> list[str]:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 2
    return capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("argv, usage, error", [
    (["run", QUICKSTART, "--bogus"], "usage: icsim run ",
     "icsim run: error: unrecognized arguments: --bogus"),
    (["run", QUICKSTART, "--sed", "3"], "usage: icsim run ",
     "icsim run: error: unrecognized arguments: --sed 3; did you mean '--set'?"),
    (["sweep", QUICKSTART, "--sead", "2"], "usage: icsim sweep ",
     "icsim sweep: error: unrecognized arguments: --sead 2; did you mean '--seeds'?"),
    (["tables", "--dims", "4", "2", "--generatr", "sssp"], "usage: icsim tables ",
     "icsim tables: error: unrecognized arguments: --generatr sssp; did you mean "
     "'--generator'?"),
    (["configs", "extra"], "usage: icsim configs ",
     "icsim configs: error: unrecognized arguments: extra"),
    (["run", QUICKSTART, "--engine", "simpi"], "usage: icsim run ",
     "icsim run: error: argument --engine: invalid choice: 'simpi' (choose from 'auto', "
     "'simpy', 'compiled'); did you mean 'simpy'?"),
    (["runn", QUICKSTART], "usage: icsim [-h] COMMAND",
     "icsim: error: argument COMMAND: invalid choice: 'runn' (choose from 'analyze', 'bench', "
     "'configs', 'layers', 'plot', 'reproduce', 'run', 'sweep', 'tables'); did you mean 'run'?"),
])
def test_an_argument_error_shows_the_subcommands_usage(capsys, argv, usage, error):
    """An unknown option of a subcommand was reported with the top parser's usage
    (``usage: icsim [-h] COMMAND ...``), which says nothing about the subcommand's options."""
    err = usage_error(capsys, *argv)
    assert err[0].startswith(usage) and err[-1] == error


def test_a_subcommand_option_that_is_right_still_parses(capsys):
    assert main(["configs"]) == 0
    assert "quickstart" in capsys.readouterr().out


# ---------------------------------------------------------------------------------- icsim configs
def test_icsim_configs_lists_every_bundled_config_with_one_line_each(capsys):
    assert main(["configs"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = sorted(p.relative_to(bundled()).with_suffix("").as_posix()
                   for p in bundled().rglob("*.yaml"))
    listed = [line.split()[0] for line in out[:len(names)]]
    assert listed == names and out[len(names)] == ""
    assert out[-1].startswith("run one from any folder with icsim run NAME")
    assert dict((line.split(None, 1)[0], line.split(None, 1)[1]) for line in out[:len(names)])[
        "examples/trace_replay"] == ("Replay a recorded message trace on a 4x4 torus with "
                                     "adaptive bubble routing.")


def test_every_bundled_config_says_in_one_short_sentence_what_it_runs():
    for name, text in listing():
        assert 20 <= len(text) <= 100 and text.endswith("."), (name, text)


# ---------------------------------------------------------------------------------- bundled files
@pytest.mark.parametrize("engine", ["simpy", "compiled"])
def test_the_trace_replay_example_runs_from_any_folder(tmp_path, monkeypatch, capsys, engine):
    """``icsim run examples/trace_replay`` outside the repository root: "no such file
    configs/examples/trace.csv" before; a bundled config's files are the bundle's."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "examples/trace_replay", "--json", "--engine", engine]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["engine"] == engine and r["workload"] == "trace"
    assert r["packets_delivered"] == r["packets_measured"] > 0
    assert r["config"]["traffic"]["trace"] == str(bundled("examples", "trace.csv"))


def test_the_trace_replay_example_runs_from_any_folder_in_python(tmp_path, monkeypatch):
    import icsim

    monkeypatch.chdir(tmp_path)
    a, b = (icsim.run("examples/trace_replay", engine=e) for e in ("simpy", "compiled"))
    assert a.packets_delivered == b.packets_delivered > 0
    assert a["completion_time_ns"] == b["completion_time_ns"]


def test_a_users_config_still_names_its_files_from_the_working_directory(tmp_path,
                                                                          monkeypatch):
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "t.csv").write_text("time_ns,src,dst,bytes\n0,0,1,512\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("topology: {dims: [4]}\ntraffic: {workload: trace, trace: here/t.csv}\n"
                   "run: {mode: finite}\n")
    monkeypatch.chdir(tmp_path)
    assert read_config_file(cfg)["traffic"]["trace"] == "here/t.csv"
    assert from_dict(read_config_file(cfg)).traffic.trace == "here/t.csv"
    monkeypatch.chdir(tmp_path / "here")
    with pytest.raises(ConfigError, match="traffic.trace: here/t.csv: no such file"):
        from_dict(read_config_file(cfg))


def test_the_trace_replay_example_runs_from_the_installed_command_in_another_folder(tmp_path):
    p = subprocess.run([sys.executable, "-m", "icsim", "run", "examples/trace_replay"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "verdict         finished (every packet delivered)" in p.stdout
