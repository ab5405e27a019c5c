"""`icsim reproduce`: the registry, and the OutFlank Table 2/3 reproduction run end to end on
small tori with DOR (the adaptive algorithms are a parameter)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from icsim.experiments.cli import main
from icsim.experiments.papers import reproduce
from icsim.experiments.papers.ofr import table2 as ofr_table
from icsim.experiments.papers.ofr import table2_report
from icsim.model.config import ConfigError


@pytest.fixture
def configs(tmp_path):
    """Stand-ins for configs/ofr/<profile>/k8.yaml: a window-mode clean profile and a finite
    reference profile (with uniform's include_self, as the reference simulator had)."""
    root = tmp_path / "configs"
    (root / "clean").mkdir(parents=True)
    (root / "reference").mkdir()
    (root / "clean" / "k8.yaml").write_text(yaml.safe_dump({
        "seed": 1, "topology": {"kind": "torus", "dims": [8, 8, 8]},
        "traffic": {"pattern": "uniform", "message_packets": 96},
        "run": {"mode": "window", "warmup_us": 50, "measure_us": 200, "drain_us": 500}}))
    (root / "reference" / "k8.yaml").write_text(yaml.safe_dump({
        "seed": 1, "topology": {"kind": "torus", "dims": [8, 8, 8]},
        "traffic": {"pattern": "uniform", "message_packets": 96, "phase": "aligned",
                    "params": {"uniform": {"include_self": True}}},
        "run": {"mode": "finite", "messages_per_node": 32}}))
    return root


def test_registering_a_reproduction_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(reproduce.REPRODUCTIONS, "_lazy", dict(reproduce.REPRODUCTIONS._lazy))
    reproduce.register("demo-table", "icsim.experiments.nosuch_module", "a demo")
    assert "demo-table" in reproduce.REPRODUCTIONS
    with pytest.raises(ValueError, match="twice"):
        reproduce.register("demo-table", "x", "y")
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    assert "ofr-table2" in out and re.search(r"demo-table +a demo", out)


def test_an_unknown_reproduction_lists_the_registered_ones(capsys):
    assert main(["reproduce", "ofr-table9"]) == 2
    assert "ofr-table2" in capsys.readouterr().err


def test_the_shipped_paper_tables_cover_every_curve_the_reproduction_runs():
    t2 = ofr_table.paper_table2()
    have = set(zip(t2.pattern, t2.algorithm, t2.k))
    need = {(p, a, k) for p in ofr_table.PATTERNS for a in ("abr", "por", "ofr") for k in (8, 16)}
    assert need <= have
    assert set(table2_report.paper_table3().pattern) == set(ofr_table.PATTERNS)


def test_the_curves_use_the_reference_simulators_tori_and_load_ranges(configs):
    data = yaml.safe_load((configs / "reference" / "k8.yaml").read_text())
    curves = ofr_table.build_curves(data, k=8, patterns=list(ofr_table.PATTERNS),
                                    algorithms=["dor"], overrides=[], quick=False)
    by = {c.params["pattern"]: c for c in curves}
    assert by["transpose"].data["topology"]["dims"] == [8, 8, 16]
    assert by["uniform"].data["topology"]["dims"] == [8, 8, 8]
    assert by["uniform"].data["traffic"]["params"] == {"uniform": {"include_self": True}}
    assert by["butterfly"].config(0.1).traffic.pattern_params() == {}   # uniform's stay out
    assert by["butterfly"].grid[0] == 0.1 and by["butterfly"].grid[-1] == 1.0
    assert len(by["butterfly"].grid) == 19 and len(by["transpose"].grid) == 15
    assert len(by["transpose3d"].grid) == 11 and by["bitreverse"].grid[-1] == 0.8
    assert by["transpose"].config(0.1).run.messages_per_node == 32     # validates on 8x8x16
    curves16 = ofr_table.build_curves(data, k=16, patterns=["transpose"], algorithms=["dor"],
                                      overrides=[], quick=False)
    assert curves16[0].data["topology"]["dims"] == [16, 16, 16]


def test_a_paper_guess_starts_each_curve_at_its_published_gamma_star(configs, tmp_path, capsys):
    data = yaml.safe_load((configs / "reference" / "k8.yaml").read_text())
    paper = ofr_table.paper_table2().set_index(["pattern", "algorithm", "k"])["gamma_star"]
    for k in (8, 16):
        curves = ofr_table.build_curves(data, k=k, patterns=list(ofr_table.PATTERNS),
                                        algorithms=["abr", "ofr", "dor"], overrides=[],
                                        quick=False, guess="paper")
        for c in curves:
            key = (c.params["pattern"], c.params["algorithm"], k)
            assert c.guess == (paper[key] if key in paper.index else None)
    assert {c.guess for c in curves if c.params["algorithm"] == "dor"} == {None}
    assert main(["reproduce", "ofr-table2", "--guess", "paper", "--configs", str(configs),
                 "--out", str(tmp_path / "o")]) == 2
    assert "--guess: starts a bisecting search: add --search bisect" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_stop_when_saturated_goes_to_both_profiles(configs):
    for profile in ("clean", "reference"):
        data = yaml.safe_load((configs / profile / "k8.yaml").read_text())
        curves = ofr_table.build_curves(data, k=8, patterns=["uniform"], algorithms=["abr"],
                                        overrides=[], quick=False, stop_when_saturated=True)
        assert curves[0].config(0.5).run.stop_when_saturated is True


def test_the_redraw_command_keeps_the_guess_and_the_early_stop():
    import argparse

    parser = argparse.ArgumentParser()
    ofr_table.add_arguments(parser)
    args = parser.parse_args(["--k", "16", "--profile", "both", "--search", "bisect", "--guess",
                              "paper", "--stop-when-saturated", "--workers", "2"])
    assert ofr_table.redraw_command(args, Path("o")) == (
        "icsim reproduce ofr-table2 --k 16 --profile both --search bisect --guess paper "
        "--stop-when-saturated --report-only --out DIR")


def test_per_curve_keys_cannot_be_overridden_with_set(configs, capsys):
    rc = main(["reproduce", "ofr-table2", "--quick", "--configs", str(configs),
               "--set", "routing.algorithm=dor", "--out", str(configs / "x")])
    assert rc == 2
    assert "routing.algorithm: set per curve by the reproduction; use --algorithms" \
        in capsys.readouterr().err


def test_a_missing_profile_config_is_a_config_error(tmp_path, capsys):
    assert main(["reproduce", "ofr-table2", "--configs", str(tmp_path), "--k", "16",
                 "--out", str(tmp_path / "o")]) == 2
    assert "no reference profile config for k=16" in capsys.readouterr().err


@pytest.mark.slow
def test_ofr_table2_quick_runs_end_to_end_with_dor(configs, tmp_path, capsys):
    out = tmp_path / "repro"
    args = ["reproduce", "ofr-table2", "--quick", "--profile", "both", "--algorithms", "dor",
            "--patterns", "uniform,transpose", "--configs", str(configs), "--out", str(out),
            "--workers", "1", "--set", "run.messages_per_node=2", "--set", "run.measure_us=20",
            "--set", "run.warmup_us=5", "--set", "run.drain_us=30",
            "--set", "traffic.message_packets=8", "--set", "topology.dims=[4,4]"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "| uniform | dor |" in printed

    t2 = pd.read_csv(out / "table2.csv")
    assert list(t2.columns[:7]) == ["pattern", "algorithm", "profile", "k", "gamma_star",
                                    "paper_gamma_star", "diff"]
    assert len(t2) == 4 and set(t2["profile"]) == {"clean", "reference"}
    assert set(t2["mode"]) == {"window", "finite"} and set(t2["torus"]) == {"4x4"}
    assert t2["diff"].isna().all()                    # quick runs are not compared
    assert t2["complete"].all()
    for profile in ("clean", "reference"):
        summary = pd.read_csv(out / profile / "gamma_star.csv")
        merged = t2[t2["profile"] == profile].merge(summary, on=["pattern", "algorithm"])
        assert (merged["gamma_star_x"].fillna(-1) == merged["gamma_star_y"].fillna(-1)).all()
        for fig in ("latency.png", "latency.svg", "accepted.png", "derouted.png"):
            assert (out / profile / fig).stat().st_size > 0

    t3 = pd.read_csv(out / "table3.csv")
    assert {"pattern", "ofr_oidn", "ofr_widn", "ofr_total", "por_total",
            "paper_ofr_total"} <= set(t3.columns)
    assert t3.set_index("pattern")["paper_por_total"].to_dict() == {"uniform": 0.13,
                                                                    "transpose": 0.10}
    report = (out / "report.md").read_text()
    for text in ("Table 2", "Table 3", "Quick mode", "at commit", "provenance.json",
                 "reference/k8.yaml", "clean/latency.png", "finite mode: sustained when",
                 "redraw these tables and figures from the runs: `icsim reproduce ofr-table2 "
                 "--k 8 --profile both --quick --algorithms dor --patterns uniform,transpose "
                 "--set run.messages_per_node=2"):
        assert text in report, text

    prov = json.loads((out / "provenance.json").read_text())
    assert prov["command"].startswith("icsim reproduce ofr-table2 --quick")
    assert all(v["ran"] > 0 for v in prov["runs"].values())

    # a second run reuses everything and changes nothing: every file is left as it was,
    # provenance.json too (it names the invocation that last changed the outputs)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "; 0 runs, " in printed and "wrote" not in printed
    assert f"unchanged {out / 'provenance.json'}" in printed
    assert all(p.read_bytes() == data for p, data in before.items())

    # --report-only with another algorithm: nothing runs, its curves are incomplete
    assert main([*args[:6], "dor,abr", *args[7:], "--report-only"]) == 0
    prov = json.loads((out / "provenance.json").read_text())
    assert all(v["ran"] == 0 for v in prov["runs"].values()) and prov["report_only"]
    t2 = pd.read_csv(out / "table2.csv").set_index("algorithm")
    assert not t2.loc["abr", "complete"].any() and t2.loc["dor", "complete"].all()
    assert t2.loc["abr", "gamma_star"].isna().all()


def test_config_errors_stop_before_any_run(configs, tmp_path, capsys):
    rc = main(["reproduce", "ofr-table2", "--quick", "--configs", str(configs),
               "--algorithms", "dor,nosuch", "--out", str(tmp_path / "o"), "--workers", "1"])
    assert rc == 2
    assert "unknown algorithm 'nosuch'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_rejects_unknown_patterns(configs, capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "ofr-table2", "--patterns", "uniform,nosuch"])
    assert "unknown nosuch" in capsys.readouterr().err


def test_build_curves_rejects_reserved_keys():
    with pytest.raises(ConfigError, match="--patterns"):
        ofr_table.build_curves({}, k=8, patterns=["uniform"], algorithms=["dor"],
                               overrides=["traffic.pattern=uniform"], quick=True)


def test_comparison_notes_count_the_matches_check_the_orderings_and_explain_each_difference():
    rows = [("butterfly", "abr", 0.30, 0.30, True, None, ""),
            ("butterfly", "por", 0.55, 0.55, True, None, ""),
            ("butterfly", "ofr", 0.55, 0.60, True, 0.60, "latency 24517 ns > 1.2 x 20047 ns"),
            ("uniform", "abr", 0.55, 0.55, True, None, ""),
            ("uniform", "por", 0.50, 0.70, True, 0.55, "latency 9 ns > 1.2 x 5 ns"),
            ("uniform", "ofr", 0.45, 0.70, False, None, "")]       # unfinished: left out
    t2 = pd.DataFrame([{"pattern": p, "algorithm": a, "profile": "reference", "k": 8,
                        "gamma_star": g, "paper_gamma_star": pg, "diff": round(g - pg, 4),
                        "complete": c, "first_saturated": fs, "first_saturated_reason": why}
                       for p, a, g, pg, c, fs, why in rows])
    notes = table2_report.comparison_notes(t2)
    assert notes[0] == ("* **reference**: 4 of 5 finished entries within ±0.05 of the paper "
                        "(3 equal); POR ≥ ABR on 1 of 2 patterns; OFR ≥ ABR on 1 of 1 patterns")
    assert notes[1:] == [
        "* butterfly ofr (reference): 0.55 vs the paper's 0.60 (-0.05); first saturated load "
        "0.60: latency 24517 ns > 1.2 x 20047 ns",
        "* uniform por (reference): 0.50 vs the paper's 0.70 (-0.20); first saturated load "
        "0.55: latency 9 ns > 1.2 x 5 ns"]


# ---------------------------------------------------------------------------------- committed
COMMITTED_K8 = Path(__file__).resolve().parents[1] / "experiments" / "results" / "ofr_k8"
REPORT_ONLY = ["reproduce", "ofr-table2", "--k", "8", "--profile", "both", "--search", "bisect",
               "--report-only", "--workers", "1"]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


def test_report_only_gives_back_the_committed_k8_tables_and_report(tmp_path, capsys):
    """The documented redraw of the committed k = 8 results (here without figures, which the
    slow test below adds): every table, summary, the report and provenance.json byte for
    byte as committed, none of them rewritten."""
    out = tmp_path / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out)
    before = _files(out)
    assert main([*REPORT_ONLY, "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert _files(out) == before
    for name in ("table2.csv", "table3.csv", "report.md", "provenance.json",
                 "clean/gamma_star.csv", "reference/verdicts.csv"):
        assert f"unchanged {out / name}" in printed, name
    assert "wrote" not in printed and "(incomplete)" not in printed
    assert "| butterfly | abr | 0.30 | 0.65 | +0.35 | 0.30 | +0.00 |" in printed


@pytest.mark.slow
def test_report_only_redraws_the_committed_k8_figures_byte_for_byte(tmp_path, capsys):
    out = tmp_path / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out)
    before = _files(out)
    assert main([*REPORT_ONLY, "--out", str(out)]) == 0
    assert _files(out) == before
    assert "unchanged " + str(out / "reference" / "latency.svg") in capsys.readouterr().out


def test_committed_results_are_not_overwritten_without_force(tmp_path, capsys):
    """Runs missing from a committed results folder (as when config hashes changed) make the
    tables incomplete: the redraw keeps the committed tables and says so; --force writes."""
    repo = tmp_path / "repo"
    out = repo / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "committed results"], check=True)
    results = out / "reference" / "results.csv"
    df = pd.read_csv(results)
    df[~((df["curve"] == "butterfly abr") & (df["offered_load"] > 0.3))].to_csv(results,
                                                                                  index=False)
    committed = (out / "table2.csv").read_bytes()

    assert main([*REPORT_ONLY, "--no-plots", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert (out / "table2.csv").read_bytes() == committed
    assert f"kept {out / 'table2.csv'} (committed" in captured.out
    assert f"kept {out / 'report.md'} (committed" in captured.out
    assert "run again with --force" in captured.err

    assert main([*REPORT_ONLY, "--no-plots", "--force", "--out", str(out)]) == 0
    t2 = pd.read_csv(out / "table2.csv").set_index(["pattern", "algorithm", "profile"])
    assert not t2.loc[("butterfly", "abr", "reference"), "complete"]
    assert "0.30 (incomplete)" in (out / "report.md").read_text()
    assert f"wrote {out / 'provenance.json'}" in capsys.readouterr().out


def test_reproductions_say_where_they_wrote(tmp_path, capsys, monkeypatch):
    from icsim.experiments.papers.angara import cli

    def fake_table2(out_dir, seed=0):
        (out_dir / "angara_table2.csv").write_text("generator,nodes\n")
        (out_dir / "angara_table2.md").write_text("# table\n")
        return "| the table |"

    (tmp_path / "old.txt").write_text("from an earlier run\n")
    os.utime(tmp_path / "old.txt", (1_000_000, 1_000_000))
    monkeypatch.setattr(cli, "reproduce_table2", fake_table2)
    assert main(["reproduce", "angara-table2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [f"wrote {tmp_path / 'angara_table2.csv'}",
                                    f"wrote {tmp_path / 'angara_table2.md'}"]


# every reproduction's numbers and lists: a bad one is the option's own error (exit 2) before
# any work, not a traceback, a report of nothing or a silent reading (--workers 0 meant every
# core, -1 one)
BAD_ARGUMENTS = [
    ("acro-layers", "--workers", "0"), ("acro-layers", "--seeds", "-1"),
    ("acro-layers", "--sizes", "64,"), ("acro-layers", "--sizes", "99999"),
    ("acro-layers", "--degrees", "5:3"), ("angara-table2", "--seed", "-1"),
    ("angara-tori", "--sample", "0"), ("angara-tori", "--workers", "0"),
    ("angara-sim", "--jobs", "0"), ("angara-optimum", "--time-limit", "0"),
    ("angara-bounds", "--refine-time", "-1"), ("angara-bounds", "--workers", "-1"),
    ("angara-bounds", "--max-nodes", "0"), ("angara-traffic", "--time-limit", "-1"),
    ("angara-faults", "--draws", "0"), ("angara-faults", "--refine-time", "0"),
    ("angara-faults", "--dims", "0"), ("angara-faults", "--dims", "4xabc"),
    ("ofr-table3", "--load", "-1"), ("ofr-table3", "--messages", "0"),
    ("ofr-table3", "--workers", "0"), ("ofr-table3", "--patterns", "uniform,abc"),
    ("ofr-table2", "--refine", "-1"),
]


@pytest.mark.parametrize("name, option, value", BAD_ARGUMENTS)
def test_a_bad_number_for_a_reproduction_is_the_options_error(name, option, value, tmp_path,
                                                               capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", name, option, value, "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"icsim reproduce {name}: error: argument {option}: "), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [
    (["acro-layers", "--sizes", "5", "--degrees", "3"], "no regular graph of 5 nodes and "
                                                        "degree 3"),
    (["angara-bounds", "--systems", "0", "0", "0"], "no system to run"),
    (["ofr-table3", "--load", "2000"], "config error: traffic.load"),
])
def test_a_reproduction_that_would_run_nothing_or_a_bad_config_says_so_first(args, message,
                                                                            tmp_path, capsys):
    assert main(["reproduce", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and message in err[0], err


def test_ofr_table3_resumes_past_a_cut_record_and_names_a_damaged_one(tmp_path, capsys):
    """runs.jsonl: a last record cut short by a kill is dropped (it was a JSONDecodeError
    traceback, so the reproduction could not resume); another bad line is named."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text('garbage\n{"profile": "cle')
    assert main(["reproduce", "ofr-table3", "--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"{runs}: dropped its last line, cut short by an interrupted write; its " \
                     f"task runs again"
    assert err[1] == f"icsim: {runs}:1: not a run's JSON record; remove the line to run it again"
    assert runs.read_text() == "garbage\n"
