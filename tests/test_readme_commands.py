"""Every command the README lists runs as written from the root of a clone.

The quick ones (a few seconds each) are run, in the README's order, from a folder laid out as
a clone's root (its ``configs/`` and the committed ``experiments/results/ofr_k8`` the redraw
reads; everything a command writes lands there, not in the repository); the others (minutes
to hours) have their options parsed, each reproduction's by its own parser, without running.
A command the README gains must be put in one of the two lists below: the test names it.
The quick start's record is compared with the README's copy of it, digit for digit.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from icsim.experiments.cli import build_parser, main, parse
from icsim.experiments.papers.reproduce import REPRODUCTIONS, _parser

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

#: run by the test, in this order (the README's): each takes seconds
QUICK = (
    "icsim run configs/quickstart.yaml",
    "icsim run configs/quickstart.yaml --set traffic.load=0.25 --set topology.dims=[8,8] --json",
    "icsim sweep configs/quickstart.yaml --vary routing.algorithm=dor,abr --loads "
    "0.1:0.8:0.05 --out runs/dor_vs_abr",
    "icsim sweep configs/quickstart.yaml --seeds 3 --out runs/seeds",
    "icsim plot runs/dor_vs_abr",
    "icsim reproduce",
    "icsim reproduce ofr-table2 --report-only --out experiments/results/ofr_k8",
    "icsim reproduce angara-table2",
    "icsim run families/dragonfly_1056 --set routing.algorithm=ugal_g --set "
    "traffic.pattern=group_shift --set traffic.load=0.4",
    "icsim reproduce dragonfly",
    "icsim reproduce fat-tree",
    "icsim reproduce hyperx",
    "icsim run apps/halo3d_512",
    "icsim run apps/two_jobs --alone",
    "icsim reproduce angara-npb",
    "icsim reproduce apps-torus",
    "icsim tables --dims 4 2 2 2 --generator sssp --json",
    "icsim layers --nodes 64 --degree 4 --seed 1 --assigner acro --out runs/g64.json",
    "icsim tables --check runs/g64.json",
    "icsim run quickstart --set topology.kind=random_regular --set topology.nodes=64 --set "
    "topology.degree=4 --set topology.seed=1 --set routing.algorithm=table --set "
    "routing.table.file=runs/g64.json",
    "icsim analyze quickstart --worst-case --out runs/wc.txt",
    "icsim configs",
)

#: minutes to hours each: their options are parsed, nothing runs
PARSED = (
    "icsim run configs/ofr/clean/k16.yaml",
    "icsim run configs/ofr/clean/k16.yaml --engine simpy",
    "icsim reproduce ofr-table2 --k 8 --profile both",
    "icsim reproduce ofr-table2 --k 16 --profile both --workers 2",
    "icsim reproduce ofr-table2 --k 16 --profile both --guess paper",
    "icsim reproduce ofr-table3",
    "icsim reproduce torus-routing",
    "icsim reproduce torus-routing --simulate",
    "icsim run families/fat_tree --set topology.k=32 --set traffic.load=0.3",
    "icsim bench",
    "icsim bench --repeat 5 --engine compiled",
    "icsim bench --tables",
    # the plug-in walkthrough's command: tests/test_readme.py runs it with its file
    "icsim run quickstart --set routing.plugins=[valiant.py] --set routing.algorithm=valiant",
)


def readme_commands() -> list[str]:
    """Every ``icsim`` command of the README's shell blocks, continuation lines joined,
    comments and shell quoting removed (``&&`` chains split)."""
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words and words[0] == "icsim":
                    out.append(" ".join(words))
    return out


def argv(command: str) -> list[str]:
    return command.split()[1:]


def test_every_readme_command_is_run_or_parsed_here():
    listed = readme_commands()
    unknown = [c for c in listed if c not in QUICK + PARSED]
    assert not unknown, f"README commands this test neither runs nor parses: {unknown}"
    assert len(listed) > 30
    assert set(QUICK + PARSED) <= set(listed), set(QUICK + PARSED) - set(listed)


@pytest.mark.parametrize("command", PARSED)
def test_the_long_readme_commands_parse(command):
    args = parse(build_parser(), argv(command))
    if args.command == "reproduce" and args.name:
        _parser(args.name, REPRODUCTIONS.get(args.name)).parse_args(args.args)


@pytest.fixture
def clone_root(tmp_path, monkeypatch):
    """A folder laid out as a clone's root, as the commands read it, the working directory."""
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    committed = Path("experiments") / "results" / "ofr_k8"
    shutil.copytree(REPO / committed, tmp_path / committed)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def quick_start_record() -> list[str]:
    """The README's copy of the quick start's record."""
    text = README.read_text(encoding="utf-8")
    return re.search(r"It prints one run's record:\s*```text\n(.*?)```", text,
                     re.S).group(1).splitlines()


def test_the_quick_readme_commands_run_from_the_clone_root(clone_root, capsys):
    for command in QUICK:
        status = main(argv(command))
        out = capsys.readouterr().out
        assert status == 0, (command, out)
        if command == QUICK[0]:
            printed = out.splitlines()
            readme = quick_start_record()
            # the README shows a fresh install's first run, on SimPy; the record is the same
            assert printed[0].replace("compiled engine", "simpy engine") == readme[0]
            assert printed[1:-1] == readme[1:-1], command
        if command == "icsim reproduce":
            # every reproduction listed with what it costs
            assert out.count("cost: ") == len(REPRODUCTIONS.names()), out
        if command.startswith("icsim reproduce ") and command.split()[2] in (
                "dragonfly", "fat-tree", "hyperx", "angara-npb", "apps-torus"):
            # shows the committed simulated results without --out, and how to simulate again
            assert "Simulated results: the committed runs in" in out, command
            assert "--simulate --out DIR" in out, command
    assert (clone_root / "runs" / "dor_vs_abr" / "latency.png").exists()
    assert (clone_root / "runs" / "hyperx" / "sim" / "latency.png").exists()


def test_a_reproduction_without_its_runs_names_the_folder_and_how_to_make_them(
        tmp_path, capsys):
    assert main(["reproduce", "angara-npb", "--out", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'none' / 'runs.csv'}" in err and "--simulate runs them" in err
    assert not (tmp_path / "none").exists()


def format_example(title: str) -> str:
    """The example file under a heading of docs/config.md's "File formats"."""
    text = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    section = text[text.index(f"### {title}"):]
    return re.search(r"```text\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize("title, sets", [
    ("Permutation", ["topology.dims=[4]", "traffic.pattern=permutation",
                     "traffic.params.permutation.file=example", "traffic.load=0.1"]),
    ("Trace", ["traffic.workload=trace", "traffic.trace=example"]),
    ("Motif", ["traffic.workload=app", "traffic.jobs=[{file: example, placement: linear}]"]),
])
def test_the_file_formats_examples_of_docs_config_run(title, sets, tmp_path, monkeypatch,
                                                        capsys):
    monkeypatch.chdir(tmp_path)
    Path("example").write_text(format_example(title), encoding="utf-8")
    args = ["run", "quickstart"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert re.search(r"verdict\s+(sustained|finished)", out), out
