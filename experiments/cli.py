"""The ``icsim`` command line.

    icsim run CONFIG.yaml [--set key.path=value ...] [--json]
    icsim bench [--json] [--quick]

Each subcommand lives in its own function; config errors stop before anything is simulated with
one line naming the key path (exit status 2); a detected deadlock exits with status 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from simulator.config import ConfigError, load_config
from simulator.network import DeadlockError

COMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {}


def command(fn: Callable[[argparse._SubParsersAction], None]):
    """Register a function that adds one subcommand to the parser."""
    COMMANDS[fn.__name__.removeprefix("add_")] = fn
    return fn


def _print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=None, sort_keys=False, default=str)
    sys.stdout.write("\n")


# ---------------------------------------------------------------------------------- run
@command
def add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one simulation from a YAML config")
    p.add_argument("config", help="YAML config file")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, parsed as YAML (repeatable), "
                        "e.g. --set traffic.load=0.4 --set topology.dims=[8,8]")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from simulator.simulation import run

    cfg = load_config(args.config, args.overrides)
    result = run(cfg)
    if args.json:
        _print_json(result)
    else:
        print(format_result(result))
    return 0


def format_result(r: dict[str, Any]) -> str:
    """A short human-readable summary of a run result."""
    cfg = r["config"]
    topo = cfg["topology"]
    shape = "x".join(map(str, topo.get("dims") or [])) or topo["kind"]
    lines = [
        f"{shape} {cfg['routing']['algorithm']} {cfg['traffic']['pattern']} "
        f"load {r['offered_load']:.3f} ({r['mode']} mode, seed {r['seed']})",
        f"  accepted load   {r['accepted_load']:.4f}"
        + ("   SATURATED (" + str(r['saturation_reason']) + ")" if r["saturated"] else ""),
    ]
    if r.get("latency_ns") is not None:
        lines += [
            f"  latency         mean {r['latency_ns']:.1f} ns, p50 {r['latency_p50_ns']:.1f}, "
            f"p99 {r['latency_p99_ns']:.1f} (network {r['network_latency_ns']:.1f})",
            f"  hops            {r['hops']:.3f} (dilation {r['dilation']:.3f})",
        ]
        d = r["derouted"]
        if d.get("total"):
            lines.append("  derouted        " + ", ".join(f"{k} {v:.3f}" for k, v in d.items()))
    lines.append(f"  packets         {r['packets_delivered']}/{r['packets_measured']} measured "
                 f"delivered")
    lines.append(f"  simulated       {r['sim_time_ns'] / 1000:.1f} us in {r['wall_s']:.2f} s "
                 f"({r['packet_hops'] / max(r['wall_s'], 1e-9):,.0f} packet-hops/s)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- bench
@command
def add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure simulation speed on fixed cases")
    p.add_argument("--json", action="store_true", help="print a JSON list of case results")
    p.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from experiments.bench import run_bench

    rows = run_bench(quick=args.quick, progress=None if args.json else print)
    if args.json:
        _print_json(rows)
    return 0


# ---------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icsim", description="Cycle-level discrete-event simulator of interconnection "
                                  "networks (SimPy).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS.values():
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"icsim: config error: {exc}", file=sys.stderr)
        return 2
    except DeadlockError as exc:
        print(f"icsim: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("icsim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
