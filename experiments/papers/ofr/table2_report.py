"""The OutFlank Tables 2 and 3 from a reproduction's sweeps: rows, Markdown, the report.

A function of the runs, the configs and the code only (:mod:`.table2` runs the sweeps and
decides what to write): ``table2.csv`` and ``table3.csv`` rows beside the paper's numbers, the
Markdown tables, and ``report.md`` with the provenance of the runs it shows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from icsim.experiments.papers.published import paper_table
from icsim.experiments.pipeline.execution import format_duration
from icsim.experiments.pipeline.outputs import Outputs
from icsim.experiments.pipeline.sweep import SweepOutcome

GRID_START, GRID_STEP, QUICK_STEP = 0.10, 0.05, 0.10
TABLE3_LOAD = 0.10
TABLE3_COLUMNS = {"ofr_oidn": ("ofr", "derouted.outflank"),
                  "ofr_widn": ("ofr", "derouted.wraparound"),
                  "ofr_total": ("ofr", "derouted.total"),
                  "por_total": ("por", "derouted.total")}


def paper_table2() -> pd.DataFrame:
    """The paper's Table 2 (γ* per pattern, algorithm and k)."""
    return paper_table("ofr_table2_saturation")


def paper_table3() -> pd.DataFrame:
    """The paper's Table 3 (derouted shares on the 16x16x16 torus)."""
    return paper_table("ofr_table3_derouted")


def number(x: Any) -> float | None:
    """A cell as a number, ``None`` when it is empty, NaN or not a number."""
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _diff(a: Any, b: Any) -> float | None:
    a, b = number(a), number(b)
    return None if a is None or b is None else round(a - b, 4)


def table2_rows(outcome: SweepOutcome, profile: str, k: int, comparable: bool) -> list[dict]:
    paper = paper_table2().set_index(["pattern", "algorithm", "k"])["gamma_star"]
    rows = []
    for co in outcome.curves:
        pattern, algorithm = co.curve.params["pattern"], co.curve.params["algorithm"]
        p = paper.get((pattern, algorithm, k))
        p = None if p is None else float(p)
        dims = co.curve.data["topology"]["dims"]
        r = co.result
        rows.append({
            "pattern": pattern, "algorithm": algorithm, "profile": profile, "k": k,
            "gamma_star": r.gamma_star, "paper_gamma_star": p,
            "diff": _diff(r.gamma_star, p) if comparable else None,
            "torus": "x".join(map(str, dims)), "mode": co.mode,
            "gamma_star_refined": r.gamma_star_refined, "complete": r.complete,
            "first_saturated": r.first_saturated,
            "first_saturated_reason": r.first_saturated_reason, "points": len(co.rows)})
    return rows


def table3_rows(outcome: SweepOutcome, profile: str, k: int, comparable: bool) -> list[dict]:
    paper = paper_table3().set_index("pattern")
    at = {}
    for co in outcome.curves:
        for r in co.rows:
            if abs(float(r["offered_load"]) - TABLE3_LOAD) < 1e-9:
                at[(co.curve.params["pattern"], co.curve.params["algorithm"])] = r
    patterns = list(dict.fromkeys(co.curve.params["pattern"] for co in outcome.curves))
    rows = []
    for pattern in patterns:
        row: dict[str, Any] = {"pattern": pattern, "profile": profile, "k": k,
                               "load": TABLE3_LOAD}
        for col, (algorithm, field) in TABLE3_COLUMNS.items():
            r = at.get((pattern, algorithm))
            row[col] = number(r.get(field)) if r is not None else None
        for col in TABLE3_COLUMNS:
            pv = float(paper.loc[pattern, col]) if pattern in paper.index else None
            row[f"paper_{col}"] = pv
            row[f"diff_{col}"] = _diff(row[col], pv) if comparable and k == 16 else None
        rows.append(row)
    return rows


def _fmt(x: Any) -> str:
    v = number(x)
    return "–" if v is None else f"{v:.2f}"


def _signed(x: Any) -> str:
    v = number(x)
    return "–" if v is None else f"{v:+.2f}"


def markdown_table2(t2: pd.DataFrame, profiles: list[str]) -> str:
    """Table 2 as Markdown: the paper's γ* and each profile's with its difference ("≥0.80":
    sustained up to the top of the pattern's grid, a lower bound; "(incomplete)": the search
    did not finish)."""
    head = "| pattern | algorithm | paper γ* |" + "".join(
        f" {p} γ* | {p} diff |" for p in profiles)
    sep = "|---|---|---:|" + "---:|---:|" * len(profiles)
    lines = [head, sep]
    keys = list(dict.fromkeys(zip(t2["pattern"], t2["algorithm"])))
    for pattern, algorithm in keys:
        sel = t2[(t2["pattern"] == pattern) & (t2["algorithm"] == algorithm)]
        cells = [pattern, algorithm, _fmt(sel["paper_gamma_star"].iloc[0])]
        for p in profiles:
            s = sel[sel["profile"] == p]
            if s.empty:
                cells += ["–", "–"]
                continue
            g = _fmt(s["gamma_star"].iloc[0])
            if not bool(s["complete"].iloc[0]):
                g += " (incomplete)"
            elif number(s["gamma_star"].iloc[0]) is not None \
                    and number(s["first_saturated"].iloc[0]) is None:
                g = "≥" + g                       # sustained to the top of the grid
            cells += [g, _signed(s["diff"].iloc[0])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def comparison_notes(t2: pd.DataFrame, tolerance: float = 0.05) -> list[str]:
    """Markdown bullets: per profile, how many finished entries are within ``tolerance`` of the
    paper and whether its orderings (POR >= ABR, OFR >= ABR per pattern) hold; then every
    finished entry that differs from the paper, with the verdict at its first saturated load."""
    lines = []
    done = t2[t2["complete"].astype(bool) & t2["diff"].notna()]
    for profile, part in done.groupby("profile", sort=False):
        diff = part["diff"].astype(float).abs()
        line = (f"* **{profile}**: {int((diff <= tolerance + 1e-9).sum())} of {len(part)} "
                f"finished entries within ±{tolerance:.2f} of the paper "
                f"({int((diff < 1e-9).sum())} equal)")
        g = part.set_index(["pattern", "algorithm"])["gamma_star"].astype(float)
        for alg in ("por", "ofr"):
            pats = [p for p in dict.fromkeys(part["pattern"])
                    if (p, alg) in g.index and (p, "abr") in g.index]
            if pats:
                held = sum(g[(p, alg)] >= g[(p, "abr")] - 1e-9 for p in pats)
                line += f"; {alg.upper()} ≥ ABR on {held} of {len(pats)} patterns"
        lines.append(line)
    for r in done[done["diff"].astype(float).abs() > 1e-9].to_dict("records"):
        reason = r.get("first_saturated_reason")
        why = (f"first saturated load {_fmt(r['first_saturated'])}: {reason}"
               if isinstance(reason, str) and reason else "no saturated load on the grid")
        lines.append(f"* {r['pattern']} {r['algorithm']} ({r['profile']}): "
                     f"{_fmt(r['gamma_star'])} vs the paper's {_fmt(r['paper_gamma_star'])} "
                     f"({_signed(r['diff'])}); {why}")
    return lines


def markdown_table3(t3: pd.DataFrame, profiles: list[str], k: int) -> str:
    cols = list(TABLE3_COLUMNS)
    head = "| pattern | source |" + "".join(f" {c} |" for c in cols)
    lines = [head, "|---|---|" + "---:|" * len(cols)]
    for pattern in dict.fromkeys(t3["pattern"]):
        sel = t3[t3["pattern"] == pattern]
        first = sel.iloc[0]
        lines.append(f"| {pattern} | paper (k=16) | "
                     + " | ".join(_fmt(first[f"paper_{c}"]) for c in cols) + " |")
        for p in profiles:
            s = sel[sel["profile"] == p]
            if s.empty:
                continue
            r = s.iloc[0]
            lines.append(f"| {pattern} | {p} (k={k}) | "
                         + " | ".join(_fmt(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _commits_text(rows: list[dict[str, Any]]) -> str:
    """Which code made these runs, and when: ``at commit `abc` (61 runs) between ...``."""
    counts: dict[str, int] = {}
    for r in rows:
        c = str(r.get("git_commit") or "unknown")
        counts[c] = counts.get(c, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"`{c[:12]}{'+dirty' if c.endswith('+dirty') else ''}` ({n})"
                      for c, n in ranked[:3])
    if len(ranked) > 3:
        shown += f" and {len(ranked) - 3} more"
    versions = sorted({str(r.get("version")) for r in rows if r.get("version")})
    done = sorted(str(r["finished_at"]) for r in rows if r.get("finished_at"))
    when = f" between {done[0][:16]} and {done[-1][:16]} UTC" if done else ""
    return (f"icsim {', '.join(versions) or '?'} at commit{'s' if len(ranked) > 1 else ''} "
            f"{shown}{when}")


def _config_text(path: Path, digest: str, bundled: bool) -> str:
    """A profile config as the report names it: relative for the bundled configs, so that the
    report does not depend on where icsim is installed."""
    if bundled:
        return f"`configs/ofr/{path.parent.name}/{path.name}` (bundled, values sha256 {digest})"
    return f"`{path}` (values sha256 {digest})"


def write_report(out: Path, t2: pd.DataFrame, t3: pd.DataFrame, sweeps: list,
                 prov: dict[str, Any], comparable: bool, outputs: Outputs | None = None,
                 bundled: bool = False) -> str:
    """Write ``report.md``, the reproduced tables beside the paper's, figures and provenance;
    return its text.

    The report is a function of the runs, the configs and the code only: its provenance
    names the code versions, commits and dates of the runs it shows (from ``results.csv``) and
    the command that redraws it, not the invocation that wrote it (date, wall time, backend,
    runs made and reused: those are in ``provenance.json``).  Redrawing unchanged data
    therefore gives the same file, which is left untouched."""
    lines = [f"# OutFlank Routing, Tables 2 and 3 — reproduction (k = {prov['k']})", ""]
    if prov["quick"]:
        lines += ["**Quick mode**: 4x4x4 tori, 16-packet messages, a coarse 0.10 grid and short "
                  "runs. A smoke test of the machinery; the numbers are *not* comparable with "
                  "the paper's and no differences are computed.", ""]
    elif not comparable:
        lines += ["**topology.dims was overridden**: not the paper's tori, no differences "
                  "computed.", ""]
    lines += [*_provenance_lines(sweeps, prov, bundled), *_table2_lines(t2, prov),
              *_table3_lines(t3, prov), *_failure_lines(sweeps), *_figure_lines(out, sweeps)]
    text = "\n".join(lines) + "\n"
    (outputs or Outputs()).write(out / "report.md", text)
    return text


def _provenance_lines(sweeps: list, prov: dict[str, Any], bundled: bool) -> list[str]:
    """The report's provenance: the redraw command, what ran, each profile's config, rule,
    runs and the code that made them."""
    lines = [
        "## Provenance", "",
        f"* redraw these tables and figures from the runs: `{prov['redraw']}`; the invocation "
        f"that last changed them (date, wall time, command, execution backend, runs made and "
        f"reused) is in `provenance.json`",
        f"* algorithms: {', '.join(prov['algorithms'])}; patterns: {', '.join(prov['patterns'])}",
    ]
    if prov["overrides"]:
        lines.append(f"* overrides: {', '.join('`' + o + '`' for o in prov['overrides'])}")
    for profile, path, digest, outcome in sweeps:
        mode = outcome.curves[0].mode if outcome.curves else "?"
        rule = ("finite mode: sustained when mean latency <= 1.2 x latency at γ = 0.10"
                if mode == "finite" else "window mode: sustained when the run is not saturated")
        compute = sum(number(r.get("wall_s")) or 0.0 for r in outcome.rows)
        made = _commits_text(outcome.rows) if outcome.rows else "no runs yet"
        lines.append(f"* profile **{profile}**: config {_config_text(Path(path), digest, bundled)}"
                     f", {rule}; {len(outcome.rows)} runs in the tables, made "
                     f"with {made}; {format_duration(compute)} of run time in all (the sum of "
                     f"their wall times)")
    return lines


def _search_text(prov: dict[str, Any]) -> str:
    """How the γ* of the tables were searched for, in words."""
    how = ("the grid was bisected between the highest load known sustained and the lowest "
           "known saturated (assumes saturation is monotone in load; loads not run below γ* "
           "are taken as sustained)" if prov.get("search") == "bisect" else
           "a curve stops after two saturated loads in a row")
    if prov.get("guess") == "paper":
        how += (", starting each curve at the paper's γ* and walking outward from it (the "
                "same γ* as from anywhere else, in fewer runs)")
    if prov.get("stop_when_saturated"):
        how += ("; saturated runs stopped early (run.stop_when_saturated): window-mode runs "
                "as their window closed when throughput or source queues already found them "
                "saturated, finite-mode runs once their mean latency was certain to exceed "
                "1.2 × the baseline's")
    return how


def _table2_lines(t2: pd.DataFrame, prov: dict[str, Any]) -> list[str]:
    step = QUICK_STEP if prov["quick"] else GRID_STEP
    lines = ["", f"γ* is the largest load of the grid (0.10 to the pattern's limit, step "
             f"{step:.2f}) such that it and every lower grid load are sustained; "
             f"{_search_text(prov)}.", "",
             "## Table 2 — maximum sustained load γ* (γ0 units)", "",
             markdown_table2(t2, prov["profiles"]), ""]
    for r in t2.to_dict("records"):
        if not r["complete"]:
            lines.append(f"* {r['pattern']} {r['algorithm']} ({r['profile']}): search "
                         f"incomplete; γ* is a lower bound")
    return lines + comparison_notes(t2)


def _table3_lines(t3: pd.DataFrame, prov: dict[str, Any]) -> list[str]:
    profiles = prov["profiles"]
    lines = ["", f"## Table 3 — share of derouted packets at γ = {TABLE3_LOAD:.2f}", "",
             "The paper reports k = 16 only; differences are computed for k = 16 runs only. "
             "Outflank and wraparound IDN shares come from the OFR runs "
             "(`derouted.outflank`, `derouted.wraparound`, `derouted.total`), POR's from "
             "`derouted.total` of the POR runs.", ""]
    missing = [a for a in ("ofr", "por") if a not in prov["algorithms"]]
    if missing:
        lines += [f"{', '.join(a.upper() for a in missing)} not run (--algorithms): "
                  f"{'its' if len(missing) == 1 else 'their'} columns are empty.", ""]
    empty = [p for p in profiles
             if t3[t3["profile"] == p][list(TABLE3_COLUMNS)].isna().all(axis=None)]
    if empty:
        lines += [f"No {' or '.join(empty)} run at γ = {TABLE3_LOAD:.2f} (a bisection starts "
                  f"above it): those rows are empty (`icsim reproduce ofr-table3` measures "
                  f"Table 3 on its own).", ""]
    return lines + [markdown_table3(t3, profiles, prov["k"]), ""]


def _failure_lines(sweeps: list) -> list[str]:
    errors = []
    for profile, _, _, outcome in sweeps:
        for r in outcome.rows:
            if r.get("status") == "error":
                errors.append(f"* {profile} {r['curve']} γ={r['offered_load']}: {r['error']}")
    return ["## Runs that failed (counted as saturated)", "", *errors, ""] if errors else []


def _figure_lines(out: Path, sweeps: list) -> list[str]:
    lines = ["## Figures", ""]
    for profile, _, _, outcome in sweeps:
        for stem, what in (("latency", "latency at sustained loads"),
                           ("accepted", "accepted vs offered load"),
                           ("derouted", "derouted share")):
            if (out / profile / f"{stem}.png").exists():
                lines.append(f"![{profile}: {what}]({profile}/{stem}.png)")
                lines.append("")
    return lines
