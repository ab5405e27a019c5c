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
from hypothesis import given
from hypothesis import strategies as st

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
    assert main(["reproduce", "ofr-table2", "--search", "climb", "--guess", "paper",
                 "--configs", str(configs), "--out", str(tmp_path / "o")]) == 2
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
    args = vars(parser.parse_args(["--k", "16", "--profile", "both", "--search", "bisect",
                                   "--guess", "paper", "--stop-when-saturated", "--workers",
                                   "2"]))
    drawn = ofr_table.resolve(args, Path("o"), report_only=False)
    assert ofr_table.redraw_command(drawn) == (
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
        for fig in ("latency.png", "latency.svg", "accepted.png"):
            assert (out / profile / fig).stat().st_size > 0
        assert not (out / profile / "derouted.png").exists()   # DOR cannot deroute

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
    assert "; 0 new, " in printed and "wrote" not in printed
    assert f"unchanged {out / 'provenance.json'}" in printed
    assert all(p.read_bytes() == data for p, data in before.items())

    # --report-only takes every option from the folder: the same tables, nothing written
    assert main(["reproduce", "ofr-table2", "--report-only", "--out", str(out), "--configs",
                 str(configs), "--workers", "1"]) == 0
    assert "wrote" not in capsys.readouterr().out
    assert all(p.read_bytes() == data for p, data in before.items())

    # --report-only with another algorithm: refused, or with --force nothing runs and its
    # curves are incomplete
    assert main([*args[:6], "dor,abr", *args[7:], "--report-only"]) == 2
    assert "--algorithms: the runs in" in capsys.readouterr().err
    assert main([*args[:6], "dor,abr", *args[7:], "--report-only", "--force"]) == 0
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


def _committed_copy(tmp_path: Path) -> tuple[Path, list[str]]:
    """The committed k = 8 folder (without figures) in a git repository of its own: a copy whose
    files are committed, and the git command."""
    repo = tmp_path / "repo"
    out = repo / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "committed results"], check=True)
    return out, git


def _edit_cell(path: Path, curve: str, load: float, column: str, value: str) -> None:
    """Change one cell of a results.csv, every other byte as it was."""
    import csv

    header, *rows = list(csv.reader(path.open()))
    for r in rows:
        if r[header.index("curve")] == curve and float(r[header.index("offered_load")]) == load:
            r[header.index(column)] = value
    csv.writer(path.open("w"), lineterminator="\n").writerows([header, *rows])


def test_committed_results_are_not_overwritten_without_force(tmp_path, capsys):
    """A redraw whose content differs from the committed files (here a first saturated run's
    latency, so its verdict's reason) keeps them and says so; --force writes."""
    out, _ = _committed_copy(tmp_path)
    _edit_cell(out / "reference" / "results.csv", "butterfly abr", 0.35, "latency_ns",
               "31000.5")
    committed = (out / "table2.csv").read_bytes()

    assert main([*REPORT_ONLY, "--no-plots", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert (out / "table2.csv").read_bytes() == committed
    assert f"kept {out / 'table2.csv'} (committed" in captured.out
    assert f"kept {out / 'report.md'} (committed" in captured.out
    assert "run again with --force" in captured.err

    assert main([*REPORT_ONLY, "--no-plots", "--force", "--out", str(out)]) == 0
    t2 = pd.read_csv(out / "table2.csv").set_index(["pattern", "algorithm", "profile"])
    assert t2.loc[("butterfly", "abr", "reference"), "first_saturated_reason"] == \
        "latency 31000 ns > 1.2 x 25018 ns at γ=0.10"
    assert f"wrote {out / 'provenance.json'}" in capsys.readouterr().out


# the commands, on a copy of the committed folder: what --report-only draws comes from
# the folder's provenance.json, and a report is never replaced by a less complete one
def test_report_only_takes_what_to_draw_from_the_folders_provenance(tmp_path, capsys):
    """`--k 8 --profile both --report-only` without `--search bisect` drew the bisected runs as
    a climbing search (uniform POR 0.10 "incomplete", the clean profile empty) and rewrote the
    report; now it draws them as they were run, every file unchanged."""
    out = tmp_path / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out)
    before = _files(out)
    for options in (["--k", "8", "--profile", "both"], []):
        assert main(["reproduce", "ofr-table2", *options, "--report-only", "--no-plots",
                     "--workers", "1", "--out", str(out)]) == 0
        printed = capsys.readouterr().out
        assert _files(out) == before
        assert "(incomplete)" not in printed and "wrote" not in printed
        assert "| uniform | por | 0.70 | 0.70 | +0.00 | 0.70 | +0.00 |" in printed


@pytest.mark.parametrize("options, refused", [
    (["--k", "16"], "--k: the runs in {out} are of --k 8 (its provenance.json); leave --k out "
                    "to draw them, or give --force to draw them as 16"),
    (["--search", "climb"], "--search: the runs in {out} are of --search bisect"),
    (["--profile", "reference"], "--profile: the runs in {out} are of --profile both"),
])
def test_report_only_refuses_options_that_contradict_the_folder(tmp_path, capsys, options,
                                                                refused):
    """`--k 16 --report-only` on the k = 8 folder rewrote table2.csv, report.md, gamma_star.csv
    and provenance.json as an empty k = 16 report: now one line, nothing written."""
    out = tmp_path / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out)
    before = _files(out)
    assert main(["reproduce", "ofr-table2", *options, "--report-only", "--out", str(out)]) == 2
    [err] = capsys.readouterr().err.splitlines()
    assert err.startswith("icsim: config error: " + refused.format(out=out)), err
    assert _files(out) == before


def test_a_report_is_never_replaced_by_a_less_complete_one_without_force(tmp_path, capsys):
    """Without its provenance.json the folder's runs are drawn with the defaults (runs that
    stop once saturated, which these were not made with, so none is used), which leaves every
    curve unfinished: the complete table is kept, nothing written, one line naming an entry it
    would lose; --force replaces it."""
    out = tmp_path / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out)
    (out / "provenance.json").unlink()
    before = _files(out)
    args = ["reproduce", "ofr-table2", "--profile", "both", "--report-only", "--no-plots",
            "--workers", "1", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()[-1]      # after the note on old commits
    assert err.startswith(f"icsim: {out / 'table2.csv'}: holds a more complete table than "
                          f"these runs give (clean butterfly abr (k = 8): a finished γ* there, "
                          f"no γ* from these runs, and "), err
    assert err.endswith("nothing written: check --k, --profile, --search and --out, or give "
                        "--force to replace it")
    assert _files(out) == before
    assert main([*args, "--force"]) == 0
    assert "| butterfly | abr | 0.30 | – (incomplete) |" in (out / "report.md").read_text()


def test_reproductions_are_callable_from_python_with_typed_options(tmp_path):
    """icsim.reproduce: the command line's options as keyword arguments, checked before the
    call (name, type, the option's own check), returning the tables and the report."""
    import icsim

    out = tmp_path / "ofr_k8"
    shutil.copytree(COMMITTED_K8, out)
    before = _files(out)
    made = icsim.reproduce("ofr-table2", k=8, profile="both", report_only=True, no_plots=True,
                           workers=1, out=out)
    assert _files(out) == before and made.status == 0
    assert set(made.files.values()) == {"unchanged"}
    assert made.tables["table2"].to_csv(index=False).encode() == before["table2.csv"]
    assert made.report.encode() == before["report.md"]
    for options, message in [
            ({"k": "8"}, "k: expected 8 or 16 or None, got '8' (str)"),
            ({"k": 12}, "k: expected 8 or 16 or None, got 12 (int)"),
            ({"workers": 0}, "workers: expected a whole number >= 1, got '0'"),
            ({"patterns": ["uniform", "tornado"]},
             "patterns: unknown tornado (choose from butterfly, transpose, transpose3d, "
             "uniform, bitreverse)"),
            ({"report_only": "yes"}, "report_only: expected bool, got 'yes' (str)"),
            ({"kk": 8}, "kk: not an option of ofr-table2 (its options: k, profile, out,")]:
        with pytest.raises(ConfigError, match="^" + re.escape(message)):
            icsim.reproduce("ofr-table2", out=tmp_path / "never", **options)
    assert not (tmp_path / "never").exists()
    with pytest.raises(ValueError, match="unknown reproduction 'ofr-table9'; registered: "):
        icsim.reproduce("ofr-table9")


def test_the_other_reproductions_run_from_python_and_check_their_options(tmp_path):
    import icsim

    made = icsim.reproduce("angara-table2", out=tmp_path / "t2")
    assert made.report.startswith("| algorithm | nodes | max γ (paper) |")
    assert made.report in (tmp_path / "t2" / "angara_table2.md").read_text()
    assert made.lines() == [f"wrote {tmp_path / 't2' / name}"
                            for name in ("angara_table2.csv", "angara_table2.md")]
    for name, options, message in [
            ("angara-faults", {"dims": "4x2x2x2"}, "dims: expected a list of int, got "
                                                   "'4x2x2x2' (str)"),
            ("angara-faults", {"dims": (4, 1)}, "dims: expected sizes of at least 2 joined by "
                                                "x, e.g. 4x2x2x2, got '4,1'"),
            ("angara-faults", {"check": "some"}, "check: expected 'all' or 'refined', got "
                                                 "'some' (str)"),
            ("angara-bounds", {"systems": (1, 2)}, "systems: expected 3 values (int, int, "
                                                   "int), got (1, 2) (tuple)"),
            ("angara-bounds", {"workers": True}, "workers: expected int, got True (bool)"),
            ("acro-layers", {"degrees": range(5, 3)}, "degrees: expected FIRST:LAST with 1 <= "
                                                      "FIRST <= LAST, got '5:2'"),
            ("ofr-table3", {"load": -1.0}, "load: expected a number > 0, got '-1.0'")]:
        with pytest.raises(ConfigError, match="^" + re.escape(message) + "$"):
            icsim.reproduce(name, out=tmp_path / "never", **options)
    assert not (tmp_path / "never").exists()


@given(option=st.sampled_from(["load", "messages", "workers", "k", "patterns"]),
       value=st.one_of(st.integers(-3, 20), st.floats(-2.0, 2.0, allow_nan=False),
                       st.lists(st.sampled_from(["uniform", "butterfly", "tornado", ""]),
                                max_size=3)))
def test_a_python_option_is_refused_exactly_when_the_command_line_refuses_it(option, value):
    """The Python check of an option agrees with the command line's on the same value."""
    import contextlib
    import io

    text = ",".join(value) if isinstance(value, list) else str(value)
    parser = reproduce._parser("ofr-table3", reproduce.REPRODUCTIONS.get("ofr-table3"))
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args([f"--{option}", text])
        cli_ok = True
    except SystemExit:
        cli_ok = False
    try:
        reproduce.check_options("ofr-table3", {option: value})
        python_ok = True
    except ConfigError:
        python_ok = False
    assert python_ok == cli_ok, (option, value)


def test_every_reproduction_takes_its_command_lines_options_as_keyword_arguments():
    """The Python function of each registered reproduction has one keyword argument per
    command-line option, named as its destination, with the same default; ``--style``, which
    every reproduction takes, is the command line's and :func:`reproduce.call`'s own (``style=``
    enters the figure style around the call)."""
    for name in reproduce.REPRODUCTIONS.names():
        entry = reproduce.REPRODUCTIONS.get(name)
        parser = reproduce._parser(name, entry)
        defaults = {a.dest: a.default for a in parser._actions if a.dest != "help"}
        assert defaults.pop("style") is None, name
        options = reproduce.options_of(name)
        assert list(options) == list(defaults) or set(options) == set(defaults), name
        for key, default in defaults.items():
            norm = (lambda v: list(v) if isinstance(v, (list, tuple)) else v)  # noqa: E731
            assert norm(options[key]) == norm(default), (name, key)


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


@pytest.mark.parametrize("algorithm", ["ofr", "por", "abr"])
def test_ofr_table3_counts_each_algorithms_own_deroute_kinds_and_zero_for_the_others(algorithm):
    """A run's record holds only its algorithm's deroute kinds (OFR: outflank and wraparound,
    POR: orthant, ABR: none); Table 3's row has every column, the kinds the algorithm does not
    declare at 0 (the reproduction read them all and failed with KeyError 'orthant')."""
    from icsim.configs import bundled
    from icsim.experiments.papers.ofr import table3

    row = table3._one({"config": str(bundled("quickstart.yaml")), "profile": "clean",
                       "pattern": "uniform", "algorithm": algorithm, "messages": 2,
                       "overrides": [f"routing.algorithm={algorithm}", "topology.dims=[4,4]",
                                     "traffic.load=0.6", "run.measure_us=20"]})
    assert set(row) >= {"outflank", "wraparound", "orthant", "total"}
    others = {"ofr": ("orthant",), "por": ("outflank", "wraparound"),
              "abr": ("outflank", "wraparound", "orthant")}[algorithm]
    assert all(row[k] == 0.0 for k in others)
    assert row["total"] == pytest.approx(row["outflank"] + row["wraparound"] + row["orthant"])


def test_report_only_on_a_folder_without_runs_is_refused_and_writes_nothing(tmp_path, capsys):
    empty = tmp_path / "typo"
    empty.mkdir()
    assert main(["reproduce", "ofr-table2", "--report-only", "--out", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no runs" in err and str(empty) in err
    assert list(empty.iterdir()) == []


def test_a_reproduction_draws_its_figures_for_a_paper_with_style_paper(tmp_path, capsys):
    """``style="paper"`` (``--style paper``) draws a reproduction's figures in the paper style:
    PDF and SVG beside a PNG, the committed simulated runs judged again, nothing run."""
    import icsim
    from icsim.model.config import ConfigError

    committed = Path(__file__).resolve().parents[1] / "experiments" / "results" / "fat_tree"
    shutil.copytree(committed / "sim", tmp_path / "sim",
                    ignore=shutil.ignore_patterns("*.png", "*.svg"))
    made = icsim.reproduce("fat-tree", out=str(tmp_path), style="paper")
    assert {p.name for p in made.files if p.parent.name == "sim" and p.stem == "latency"} == {
        "latency.pdf", "latency.svg", "latency.png"}
    with pytest.raises(ConfigError, match="style: expected one of 'default', 'paper'"):
        icsim.reproduce("fat-tree", out=str(tmp_path), style="poster")
    assert main(["reproduce", "fat-tree", "--out", str(tmp_path / "cli"), "--style",
                 "paper"]) == 0
