"""The ``icsim`` command line.

    icsim run CONFIG.yaml [--set key.path=value ...] [--json]
    icsim sweep CONFIG.yaml [--loads 0.05:1.0:0.05] [--vary key=V1,V2] [--workers N]
                [--scheduler ADDRESS] [--out DIR]
    icsim plot RESULTS [--out DIR]
    icsim reproduce NAME [options]          # e.g. ofr-table2 --k 8
    icsim bench [--json] [--quick]
    icsim configs                           # the bundled configs, one line each

Each subcommand lives in its own function; config errors stop before anything is simulated with
one line naming the key path (exit status 2); a detected deadlock exits with status 3.  An
argument the subcommand does not know, or a mistyped name, is that subcommand's error, with its
usage and the nearest valid name.
"""

from __future__ import annotations

import sys

# Only what the parsers need is imported here: each command imports the model, the simulator,
# pandas or matplotlib when it runs, so that icsim --help, icsim configs and the list of
# reproductions answer at once (tests/test_architecture.py holds the list kept out)
try:
    import argparse
    import dataclasses
    import json
    import math
    import os
    import re
    from pathlib import Path
    from typing import Any, Callable, NoReturn

    from icsim.configs import bundled, config_path, listing
    from icsim.experiments.papers.acro.cli import add_layers_parser
    from icsim.experiments.papers.angara.tables import add_tables_parser
    from icsim.experiments.papers.reproduce import add_parser
    from icsim.experiments.pipeline.arguments import check_sweep_size
    from icsim.experiments.pipeline.bench import (CASES, ENGINES, EXTRA_CASES, WHOLE_CASES,
                                                  run_bench, run_table_bench, run_whole)
    from icsim.experiments.pipeline.curves import (DEFAULT_LOADS, make_curves, parse_loads,
                                                   parse_vary)
    from icsim.experiments.pipeline.execution import (ExecutorError, RunProgress,
                                                      add_engine_argument,
                                                      add_execution_arguments, engine_overrides,
                                                      make_executor, natural_int, positive_int)
    from icsim.experiments.pipeline.figure_style import add_style_argument, using_style
    from icsim.experiments.pipeline.outputs import (Outputs, add_output_arguments,
                                                    add_progress_arguments, progress_option,
                                                    report_outputs)
    from icsim.experiments.pipeline.saturation import SEARCHES
    from icsim.model.registry import Registry, did_you_mean
    from icsim.simulator.engines import DeadlockError
except KeyboardInterrupt:                    # Ctrl-C while icsim starts: the line it gives later
    print("icsim: interrupted", file=sys.stderr)
    sys.exit(130)

#: a config error (exit status 2), by where it is defined (:func:`loaded`)
CONFIG_ERROR = "icsim.model.config:ConfigError"
#: errors in a file a user named (each one line naming the file): exit status 2, as a config error
FILE_ERRORS = ("icsim.model.input_files:InputFileError", "icsim.routing.table:TableError",
               "icsim.traffic.trace:TraceError", "icsim.model.topology.graph:GraphError")
#: a routing algorithm that did what the model forbids during a run (a plug-in's bug): exit 2
ROUTING_ERROR = "icsim.simulator.engines.guard:RoutingError"


def loaded(*names: str) -> tuple[type[BaseException], ...]:
    """The error classes ``"module:Class"`` whose modules are imported (:func:`main`'s
    ``except`` clauses ask when an error reaches them).  A command raises only errors of
    modules it imported, and importing the others to test for them would cost ``icsim configs``
    the config schema, networkx and scipy."""
    return tuple(getattr(sys.modules[module], name) for module, _, name in
                 (n.partition(":") for n in names) if module in sys.modules)

#: the subcommands: each a function that adds its parser (in the order they are defined)
COMMANDS: Registry[Callable[[argparse._SubParsersAction], None]] = Registry("command")


def command(fn: Callable[[argparse._SubParsersAction], None]):
    """Register a function that adds one subcommand to the parser."""
    COMMANDS.add(fn.__name__.removeprefix("add_"), fn)
    return fn


def _print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=None, sort_keys=False, default=str)
    sys.stdout.write("\n")


# ---------------------------------------------------------------------------------- run
@command
def add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one simulation from a YAML config")
    p.add_argument("config", help="YAML config file, or a bundled config's name (quickstart, "
                                  "examples/mesh_dor, ofr/clean/k16)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, parsed as YAML (repeatable), "
                        "e.g. --set traffic.load=0.4 --set topology.dims=[8,8]")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--alone", action="store_true",
                   help="app workloads: also run each job alone and give its slowdown "
                        "(one more run per job)")
    add_engine_argument(p)
    add_progress_arguments(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from icsim.model.config import ConfigError, load_config
    from icsim.simulator.simulation import Simulation

    progress = RunProgress(enabled=progress_option(args))
    config = load_config(config_path(args.config), args.overrides)
    if args.alone and config.traffic.workload != "app":
        raise ConfigError("traffic.workload", f"--alone compares the jobs of an app workload "
                          f"with themselves alone; this one is {config.traffic.workload!r}")
    try:
        # "setting up" until the engine's first report: the network, its routing tables,
        # the compiled engine's build where it is not built yet
        with progress.setting_up("building the network and its routing"):
            result = Simulation(config, engine=args.engine,
                                progress=progress if progress.enabled else None).run()
    finally:
        progress.close()
    if args.alone:
        from icsim.experiments.pipeline.apps import alone

        for i, job in enumerate(result["jobs"]):
            solo = Simulation(alone(config, i), engine=args.engine).run()["jobs"][0]
            job["alone_ns"] = solo["completion_ns"]
            job["slowdown"] = job["completion_ns"] / solo["completion_ns"]
    if args.json:
        _print_json(result)
    else:
        print(format_result(result))
    return 0


def _routing_name(routing: dict[str, Any]) -> str:
    """The algorithm, and for table routing where the table comes from and its layers:
    ``table (sssp)``, ``table (t.json, acro layers)``."""
    name = routing["algorithm"]
    table = routing.get("table") if name == "table" else None
    if not isinstance(table, dict):
        return name
    source = table.get("generator") or os.path.basename(str(table.get("file")))
    layers = f", {table['layers']} layers" if table.get("layers") else ""
    return f"{name} ({source}{layers})"


def format_result(r: dict[str, Any]) -> str:
    """A short human-readable summary of a run result: what ran, its verdict and why."""
    from icsim.experiments.pipeline.apps import job_lines

    cfg = r["config"]
    topo = cfg["topology"]
    shape = r.get("topology") or "x".join(map(str, topo.get("dims") or [])) or topo["kind"]
    workload = r.get("workload", "open")
    what = f"{shape} {_routing_name(cfg['routing'])} "
    if workload == "open":
        what += f"{cfg['traffic']['pattern']} load {r['offered_load']:.3f}"
    elif workload == "trace":
        what += f"trace {cfg['traffic'].get('trace')}"
    elif workload == "app":
        what += "app: " + ", ".join(j["name"] for j in r.get("jobs", []))
    else:
        what += (f"{workload} {cfg['traffic']['collective']} of "
                 f"{cfg['traffic']['message_bytes']:,} bytes")
    lines = [f"{what} ({r['mode']} mode, seed {r['seed']}, {r.get('engine', '?')} engine)"]
    if r["saturated"] and r["saturation_reason"].startswith("starved: "):
        verdict = (f"STARVED (not sustained, though the network carried the load: "
                   f"docs/model.md §7.1): {r['saturation_reason'][len('starved: '):]}")
    elif r["saturated"]:
        verdict = f"SATURATED: {r['saturation_reason']}"
    elif r["mode"] == "window":
        verdict = ("sustained (every measured packet delivered, accepted >= 0.95 x offered, "
                   "source queues not growing)")
        if r.get("starved_packets"):
            verdict += (f"; but {r['starved_packets']} packets starved at their NIC for up to "
                        f"{r['source_wait_max_ns'] / 1000:,.0f} us (docs/model.md §7.1)")
    elif workload == "open":
        verdict = ("finished (finite mode: whether this load is sustained is judged across a "
                   "sweep, against the latency at 0.10)")
    elif workload == "app":
        verdict = "finished (every operation of every job done)"
    else:
        verdict = "finished (every packet delivered)"
    if r.get("window_too_short"):
        verdict += (f"; the window is too short to judge (shorter than the network's settling "
                    f"time, or no steady half: warm-up {r['warmup_us']:g} us by "
                    f"{r['warmup_rule']}; docs/model.md §7): the verdict may be the "
                    f"transient's, not the load's")
    lines.append(f"  verdict         {verdict}")
    if r["mode"] == "finite":
        last = "last operation done" if workload == "app" else "last packet consumed"
        lines.append(f"  completion time {r['completion_time_ns'] / 1000:,.3f} us ({last})")
    lines += job_lines(r)
    if r["mode"] == "window":
        lines.append(f"  accepted load   {r['accepted_load']:.4f} (offered "
                     f"{r['offered_measured_load']:.4f}, measured in the window)")
    else:
        lines.append(f"  accepted load   {r['accepted_load']:.4f} (packets per node over the "
                     f"completion time)")
    packets = r.get("offered_packets_per_terminal_link_time")
    if packets is not None and r["offered_load"]:
        link_ns = cfg["packet"]["size_bytes"] * 8 / cfg["link"]["bandwidth_gbps"]
        lines.append(f"  offered         {packets:.3f} packets per terminal per link time "
                     f"(a link time: {link_ns:g} ns; γ = 1 is {packets / r['offered_load']:.3g})")
    if r.get("latency_ns") is not None:
        lines += [
            f"  latency         mean {r['latency_ns']:.1f} ns, p50 {r['latency_p50_ns']:.1f}, "
            f"p99 {r['latency_p99_ns']:.1f} (network {r['network_latency_ns']:.1f})",
            f"  hops            {r['hops']:.3f} (dilation {r['dilation']:.3f})",
        ]
        d = r["derouted"]
        if d.get("total"):
            lines.append("  derouted        " + ", ".join(f"{k} {v:.3f}" for k, v in d.items()))
    if r.get("starved_packets"):
        window = r["config"]["run"]["measure_us"]
        lines.append(f"  starved         {r['starved_packets']} packets waited at their NIC "
                     f"longer than the {window:g} us window, up to "
                     f"{r['source_wait_max_ns'] / 1000:,.0f} us")
    if r.get("channel_utilisation_mean") is not None:
        lines.append(f"  channels        utilisation mean {r['channel_utilisation_mean']:.3f}, "
                     f"max {r['channel_utilisation_max']:.3f}")
        for name, u in (r.get("channel_utilisation_by_class") or {}).items():
            lines.append(f"    {name:13s} utilisation mean {u['mean']:.3f}, max {u['max']:.3f}")
    lines.append(f"  packets         {r['packets_delivered']}/{r['packets_measured']} measured "
                 f"delivered")
    lines.append(f"  simulated       {r['sim_time_ns'] / 1000:.1f} us in {r['wall_s']:.2f} s "
                 f"({r['packet_hops'] / max(r['wall_s'], 1e-9):,.0f} packet-hops/s)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- sweep
SWEEP_EPILOG = """\
what it does:
  For every combination of --vary values (a "curve"), climbs the load grid and stops a curve
  once two loads in a row are saturated; gamma* is the largest grid load such that it and
  every lower grid load are sustained.  Window mode: a load is sustained when the run reports
  saturated=false.  Finite mode (run.mode: finite, the OutFlank paper's method): when its mean
  latency is at most 1.2 x the latency at load 0.10 (always run first, even off the grid).
  A run that raises (e.g. a deadlock) is recorded as saturated with its error text.

outputs (in --out DIR):
  results.csv     one row per run, appended the moment it finishes: identity columns,
                  every result field (nested ones as derouted.total ...), provenance,
                  and the resolved config as config.section.key columns
  gamma_star.csv  one row per curve: gamma*, refined gamma*, first saturated load and why
                  (--seeds N: one row per curve and seed, with gamma*'s mean, sd, min, max)
  verdicts.csv    every run judged sustained or saturated by its curve's rule, with the reason
  load_summary.csv  (--seeds N) per curve and load: seeds run and sustained, mean and 95%
                  Student-t confidence half-width of latency and accepted load
  latency.png/svg, accepted.png/svg, derouted.png/svg  every run drawn (saturated hollow),
                  gamma* and its rule marked, error bars over seeds

  Output files whose content does not change are not rewritten; files tracked by git whose
  content would change are kept unless --force is given (the command says which).

  Interrupt it at any time: rerunning the same command reuses every finished point
  (matched by config hash and seed) and runs only the rest.  Points of other sweeps in the
  same file are kept (and drawn by icsim plot); use one directory per study.

parallelism:
  Curves run side by side; a curve also runs its next grid loads speculatively while
  earlier ones are still running, so one curve keeps N workers busy.  gamma* never depends
  on timing; a few loads above a curve's stop may be run and recorded.

examples:
  icsim sweep configs/quickstart.yaml
  icsim sweep configs/quickstart.yaml --loads 0.1,0.2,0.3 --set topology.dims=[8,8]
  icsim sweep cfg.yaml --vary routing.algorithm=abr,por,ofr --vary traffic.pattern=uniform,transpose
  icsim sweep cfg.yaml --scheduler tcp://head:8786 --out runs/big --refine 3
  icsim sweep cfg.yaml --vary routing.algorithm=dor,ofr --seeds 3
"""


@command
def add_sweep(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="sweep a config over offered load (and other parameters) "
                                     "and find the saturation point gamma*",
                       description="Sweep a config over a load grid, crossed with any --vary "
                                   "parameters; write a tidy CSV, gamma* per curve and plots.",
                       epilog=SWEEP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="YAML config file or a bundled config's name (its "
                                  "traffic.load is replaced by the grid)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value for every run, parsed as YAML (repeatable)")
    p.add_argument("--loads", default=DEFAULT_LOADS, metavar="GRID",
                   help="offered loads: START:STOP:STEP with STOP included, or a comma list "
                        f"(default {DEFAULT_LOADS})")
    p.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="also sweep a config value (repeatable; several --vary are crossed), "
                        "values parsed as YAML: --vary routing.algorithm=abr,por,ofr "
                        "--vary topology.dims=[4,4],[8,8]")
    add_execution_arguments(p)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default runs/<config name>); an existing "
                        "results.csv there is resumed")
    p.add_argument("--full", action="store_true",
                   help="run every grid load (no stopping after two saturated loads)")
    p.add_argument("--refine", type=natural_int, default=0, metavar="STEPS",
                   help="bisect between gamma* and the first saturated grid load for STEPS "
                        "steps (default 0)")
    p.add_argument("--search", choices=SEARCHES, default="climb",
                   help="climb the load grid from the bottom (default) or bisect it (fewer "
                        "runs; assumes saturation is monotone in load)")
    p.add_argument("--guess", type=float, default=None, metavar="LOAD",
                   help="with --search bisect: where gamma* is expected; each curve runs the "
                        "grid load nearest to it first and walks, then gallops, outward (the "
                        "same gamma*, fewer runs when the guess is near)")
    p.add_argument("--stop-after", type=positive_int, default=2, metavar="N",
                   help="stop a curve after N saturated grid loads in a row (default 2)")
    p.add_argument("--seeds", type=positive_int, default=1, metavar="N",
                   help="run every load with N seeds (the config's seed, seed+1, ...): per-load "
                        "mean and 95%% confidence interval in load_summary.csv and as error "
                        "bars, gamma* per seed and its spread in gamma_star.csv (default 1)")
    p.add_argument("--no-plots", action="store_true", help="write the CSVs only")
    add_style_argument(p)
    add_output_arguments(p)
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from icsim.experiments.pipeline.results_file import SweepError
    from icsim.experiments.pipeline.summaries import flip_notes, format_summary
    from icsim.experiments.pipeline.sweep import Sweep, write_files
    from icsim.model.config import read_config_file
    from icsim.simulator.build import load

    try:
        grid = parse_loads(args.loads)
    except ValueError as exc:
        print(f"icsim sweep: {exc}", file=sys.stderr)
        return 2
    if args.guess is not None and (args.search != "bisect" or not math.isfinite(args.guess)):
        print("icsim sweep: --guess: " + ("must be a finite load"
              if args.search == "bisect" else "starts a bisecting search: add --search bisect"),
              file=sys.stderr)
        return 2
    path = config_path(args.config)

    load(path, args.overrides)                   # every error names its key, before any run
    data = read_config_file(path)
    vary = [parse_vary(v) for v in args.vary]
    try:
        check_sweep_size(len(grid), [len(values) for _, values in vary], args.seeds,
                         options=True)
    except ValueError as exc:
        print(f"icsim sweep: {exc}", file=sys.stderr)
        return 2
    curves = make_curves(data, grid, args.overrides + engine_overrides(args), vary,
                         label=path.stem, seeds=args.seeds)
    if args.guess is not None:
        curves = [dataclasses.replace(c, guess=args.guess) for c in curves]
    out = Path(args.out) if args.out else Path("runs") / path.stem
    outputs = Outputs(force=args.force)
    # every curve checked (its config, a load to sweep) before a worker starts
    sweep = Sweep(curves, out, stop_after=args.stop_after, refine=args.refine, full=args.full,
                  search=args.search, progress=progress_option(args))
    try:
        with make_executor(args.workers, args.scheduler) as executor:
            done = sweep.run(executor)
        with using_style(args.style):
            outcome = write_files(done, plots=not args.no_plots, outputs=outputs)
    except SweepError as exc:
        print(f"icsim sweep: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"icsim sweep: interrupted; finished points are in {out / 'results.csv'}, "
              f"run the same command again to resume", file=sys.stderr)
        return 130
    print(format_summary(outcome.curves))
    for line in flip_notes(outcome.curves):
        print(line)
    print(f"{outcome.ran} new, {outcome.reused} reused, {outcome.wall_s:.1f} s wall "
          f"({executor.name}, {executor.slots} slot{'s' if executor.slots > 1 else ''})")
    print(f"{'appended to' if outcome.ran else 'read'} {out / 'results.csv'}")
    return report_outputs(outputs, "icsim sweep")


# ---------------------------------------------------------------------------------- plot
@command
def add_plot(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="redraw a sweep's figures from its results.csv",
                       description="Draw latency (sustained runs filled, saturated ones "
                                   "hollow), accepted-load and derouting figures from a "
                                   "results file, without simulating.")
    p.add_argument("results", help="a sweep directory or its results.csv")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where to write the figures (default: beside the CSV)")
    p.add_argument("--format", default=None, metavar="FMT[,FMT]",
                   help="file formats (default png,svg; with --style paper pdf,svg,png)")
    p.add_argument("--force", action="store_true",
                   help="overwrite figures tracked by git whose content changes")
    add_style_argument(p)
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace) -> int:
    # the figures load matplotlib, which no other command needs
    from icsim.experiments.pipeline.lines import read_results
    from icsim.experiments.pipeline.plots import plot_results

    src = Path(args.results)
    if not src.exists() or (src.is_dir() and not (src / "results.csv").exists()):
        print(f"icsim plot: no results file at {src}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    outputs = Outputs(force=args.force)
    df = read_results(src)
    if df.empty:
        print(f"icsim plot: {src} holds no runs yet; nothing to draw", file=sys.stderr)
        return 0
    formats = None if args.format is None else [f for f in args.format.split(",") if f]
    plot_results(df, out, formats=formats, outputs=outputs, style=args.style)
    return report_outputs(outputs, "icsim plot")


# ---------------------------------------------------------------------------------- reproduce
@command
def add_reproduce(sub: argparse._SubParsersAction) -> None:
    add_parser(sub)


# ---------------------------------------------------------------------------------- tables
@command
def add_tables(sub: argparse._SubParsersAction) -> None:
    add_tables_parser(sub)


# ---------------------------------------------------------------------------------- layers
@command
def add_layers(sub: argparse._SubParsersAction) -> None:
    add_layers_parser(sub)


# ---------------------------------------------------------------------------------- bench
@command
def add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure simulation speed of both engines on fixed cases")
    p.add_argument("--json", action="store_true", help="print a JSON list of case results")
    p.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    p.add_argument("--engine", choices=("both", "simpy", "compiled"), default="both",
                   help="which engine(s) to run each case on (default both, with their ratio)")
    p.add_argument("--case", action="append", default=[],
                   choices=[c[0] for c in CASES + EXTRA_CASES + WHOLE_CASES], metavar="NAME",
                   help="run only this case (repeatable; default: "
                        + ", ".join(c[0] for c in CASES) + "; also the torus routing "
                        "literature beside ABR: " + ", ".join(c[0] for c in EXTRA_CASES) + ")")
    p.add_argument("--repeat", type=positive_int, default=1, metavar="N",
                   help="run each case N times on each engine and report the median run "
                        "(default 1; between runs only the machine's noise varies)")
    p.add_argument("--compile", action="store_true",
                   help="also time a cold compile of the compiled engine (a fresh process "
                        "with an empty numba cache; about a minute)")
    p.add_argument("--tables", action="store_true",
                   help="time Angara SSSP/BFS table generation instead (90-node 4D and "
                        "150-node 3D tori)")
    p.add_argument("--whole", action="store_true",
                   help="time whole 'icsim run' processes instead (compiled engine): start, "
                        "set-up, loop and summary, peak memory, and a short and a long "
                        "window's marginal speed (cases: "
                        + ", ".join(c[0] for c in WHOLE_CASES) + ")")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    say = None if args.json else print
    if args.tables:
        rows = run_table_bench(quick=args.quick, progress=say)
    elif args.whole:
        rows = run_whole(cases=args.case or None, repeat=args.repeat, progress=say)
    else:
        engines = ENGINES if args.engine == "both" else (args.engine,)
        rows = run_bench(quick=args.quick, engines=engines, compile=args.compile,
                         cases=args.case or None, repeat=args.repeat, progress=say)
    if args.json:
        _print_json(rows)
    return 0


# ---------------------------------------------------------------------------------- analyze
@command
def add_analyze(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze", help="exact channel loads of an oblivious routing, without simulating",
        description="For the config's topology, routing and traffic pattern: the expected "
                    "load of every channel, the ideal throughput in units of gamma and the "
                    "busiest channels; --worst-case adds the routing's worst-case permutation "
                    "(Towles and Dally 2002). Oblivious routing (DOR, tables, Valiant, D-mod-k, "
                    "...) on every topology (loads per terminal where a router has several); "
                    "an adaptive one is refused, or with --capacity given its capacity bound.",
        epilog="examples:\n  icsim analyze quickstart --set 'topology.dims=[8,8]' "
               "--set traffic.pattern=tornado\n"
               "  icsim analyze quickstart --worst-case --out wc.txt\n"
               "  icsim analyze configs/families/hyperx.yaml --set routing.algorithm=hx_adaptive"
               " --capacity\n"
               "  icsim run quickstart --set traffic.pattern=permutation "
               "--set traffic.params.permutation.file=wc.txt",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="YAML config file, or a bundled config's name")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, parsed as YAML (repeatable)")
    p.add_argument("--worst-case", action="store_true",
                   help="also find the worst-case permutation (a matching per channel)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the worst-case permutation here (with --worst-case)")
    p.add_argument("--capacity", action="store_true",
                   help="a routing that is not oblivious (adaptive): its capacity bound, the "
                        "maximum concurrent flow over the paths its program offers (a minimal "
                        "adaptive routing's) or over every channel (a linear program)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(func=cmd_analyze)


def cmd_analyze(args: argparse.Namespace) -> int:
    from icsim.experiments.analyze import analyze, format_report
    from icsim.model.config import ConfigError

    if args.out and not args.worst_case:
        raise ConfigError("--out", "writes the worst-case permutation: add --worst-case")
    report = analyze(args.config, args.overrides, worst_case=args.worst_case, out=args.out,
                     capacity=args.capacity)
    if args.json:
        _print_json(report)
    else:
        print(format_report(report))
    return 0


# ---------------------------------------------------------------------------------- configs
@command
def add_configs(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("configs", help="list the bundled configs, one line each",
                       description="The configs bundled with icsim: the name icsim run and "
                                   "icsim sweep take from any folder, and what each one runs.")
    p.set_defaults(func=cmd_configs)


def cmd_configs(args: argparse.Namespace) -> int:
    rows = listing()
    width = max(len(name) for name, _ in rows)
    for name, text in rows:
        print(f"{name:{width}s}  {text}")
    print(f"\nrun one from any folder with icsim run NAME (icsim run {rows[-1][0]}); the files "
          f"are in {bundled()}")
    return 0


# ---------------------------------------------------------------------------------- main
class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors about a choice name the nearest valid one
    (``invalid choice: 'runn' (choose from ...); did you mean 'run'?``)."""

    def error(self, message: str) -> NoReturn:
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:
            near = did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
            message += f"; {near}" if near else ""
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="icsim", description="Cycle-level discrete-event simulator of interconnection "
                                  "networks: one model, two engines (SimPy, and compiled "
                                  "with numba).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS.values():
        add(sub)
    return parser


def chosen_parser(parser: argparse.ArgumentParser,
                  args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the subcommand ``args`` chose (``parser`` itself without one)."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name not in (subs[0].choices if subs else {}):
            return parser
        parser = subs[0].choices[name]


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, except that arguments the chosen subcommand does not take
    are that subcommand's error (its usage, and the nearest of its options), not the top
    parser's (``usage: icsim [-h] COMMAND ...``)."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        sub = chosen_parser(parser, args)
        options = [o for a in sub._actions for o in a.option_strings]
        near = next((hint for x in extra if x.startswith("-")
                     for hint in [did_you_mean(x.split("=", 1)[0], options)] if hint), "")
        sub.error(f"unrecognized arguments: {' '.join(extra)}" + (f"; {near}" if near else ""))
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parse(parser, argv)
        return args.func(args)
    except loaded(CONFIG_ERROR) as exc:
        print(f"icsim: config error: {exc}", file=sys.stderr)
        return 2
    except (*loaded(*FILE_ERRORS), ExecutorError) as exc:
        print(f"icsim: {exc}", file=sys.stderr)
        return 2
    except loaded(ROUTING_ERROR) as exc:
        print(f"icsim: routing error: {exc}", file=sys.stderr)
        return 2
    except DeadlockError as exc:
        print(f"icsim: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("icsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:                  # output piped into head, less ... that closed
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:                   # an output path that cannot be made or written
        print(f"icsim: {file_problem(exc)}", file=sys.stderr)
        return 2


def file_problem(exc: OSError) -> str:
    """One line for a file or folder icsim could not make or write (``--out`` naming a file
    where a folder goes, a folder it may not write in ...)."""
    if exc.errno is None and exc.filename is None:      # raised with a message of its own
        return str(exc)
    what = {FileExistsError: "is a file, not a folder",
            NotADirectoryError: "is below a file, not a folder",
            PermissionError: "may not be written here",
            FileNotFoundError: "no such file or folder (or none above it to make it in)"}
    reason = next((text for kind, text in what.items() if isinstance(exc, kind)),
                  exc.strerror or str(exc))
    return f"{exc.filename}: {reason}" if exc.filename else reason


if __name__ == "__main__":
    sys.exit(main())
