"""Command-line front ends for virtual-layer assignment (the ACRO paper).

* ``icsim layers`` — assign layers to one minimal table and verify them;
* ``icsim reproduce acro-layers`` — the paper's Fig. 5/6 experiment (|N| in {64, 256}, degree
  3 to 12, 100 seeds each by default) plus the assigners' run-time comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from icsim.experiments.papers.reproduce import Reproduction
from icsim.experiments.pipeline.execution import natural_int, positive_int
from icsim.experiments.pipeline.outputs import file_times, written_since

# the layers, the tables and the topologies are imported where they are used: icsim --help
# imports this module for the parser of icsim layers


def add_layers_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "layers", help="make a minimal routing table deadlock-free with virtual layers",
        description="Build one minimal destination-based table (a shortest path per pair) on a "
                    "random regular graph or an edge list, or take a table file or routes "
                    "given as node paths, assign virtual layers with ACRO, LASH or LASH-TOR, "
                    "verify every layer acyclic, and optionally write the layered table.",
        epilog="examples:\n  icsim layers --topology random_regular --nodes 64 --degree 4 "
               "--seed 1 --assigner acro --json\n"
               "  icsim layers --table t.json --assigner lash --out t_lash.json\n"
               "  icsim layers --edges graph.txt --paths routes.txt --out t_acro.json\n"
               "  icsim tables --check t_lash.json      # the written table, checked again",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topology", default="random_regular", choices=("random_regular", "edges"))
    p.add_argument("--nodes", type=int, default=64)
    p.add_argument("--degree", type=int, default=4)
    p.add_argument("--seed", type=natural_int, default=0,
                   help="the random regular graph's seed, as the config's topology.seed "
                        "(default 0: a table made without it runs with the default config)")
    p.add_argument("--assigner", default="acro",
                   help="acro, lash, lash_tor or lash_tor_conventional (default acro)")
    p.add_argument("--edges", default=None, metavar="FILE", help="edge-list file ('u v' lines)")
    p.add_argument("--table", default=None, metavar="FILE", help="use this routing-table file")
    p.add_argument("--paths", default=None, metavar="FILE",
                   help="use these routes, made elsewhere: a text file of node paths, one "
                        "route a line ('0 4 5 9': from 0 through 4 and 5 to 9), on the graph "
                        "of --edges")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the table with its layers (a layer per hop) here, if verified; "
                        "routing.table.file simulates it with a virtual channel per layer")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_layers)


def cmd_layers(args: argparse.Namespace) -> int:
    from icsim.experiments.papers.acro.layers import layers_main
    from icsim.routing.table import TableError

    try:
        r = layers_main(args.topology, args.nodes, args.degree, args.seed, args.assigner,
                        args.edges, table_file=args.table, paths_file=args.paths,
                        out=args.out)
    except (TableError, ValueError, OSError) as exc:
        print(f"icsim layers: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(r))
    else:
        print(f"{r['assigner']} on {r['topology']}: {r['layers']} "
              f"layer{'s' if r['layers'] != 1 else ''}, verified "
              f"{r['verified']}, {r['time_s']:.3f} s")
        for problem in r.get("problems") or []:
            print(f"  {problem}")
        if "out" in r:
            print(f"  wrote {r['out']}")
        elif args.out:
            print(f"  {args.out} not written: the layers failed verification")
    return 0 if r["verified"] else 1


def _sizes(text: str) -> tuple[int, ...]:
    """``--sizes``: node counts, comma-separated, each within a graph topology's limit."""
    from icsim.model.topology import MAX_GRAPH_NODES

    try:
        sizes = tuple(int(t) for t in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or not all(2 <= n <= MAX_GRAPH_NODES for n in sizes):
        raise argparse.ArgumentTypeError(f"expected node counts from 2 to {MAX_GRAPH_NODES}, "
                                         f"comma-separated, got {text!r}")
    return sizes


def _degrees(text: str) -> range:
    """``--degrees``: ``first:last`` (or one degree), 1 <= first <= last."""
    lo, _, hi = text.partition(":")
    try:
        first, last = int(lo), int(hi or lo)
    except ValueError:
        first = last = 0
    if not 1 <= first <= last:
        raise argparse.ArgumentTypeError(f"expected FIRST:LAST with 1 <= FIRST <= LAST, got "
                                         f"{text!r}")
    return range(first, last + 1)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory (default runs/acro-layers); finished runs there "
                             "are reused")
    parser.add_argument("--seeds", type=positive_int, default=100, help="seeds per (|N|, degree)")
    parser.add_argument("--sizes", type=_sizes, default=(64, 256), metavar="N[,N]",
                        help="node counts |N| (default 64,256)")
    parser.add_argument("--degrees", type=_degrees, default=range(3, 13), metavar="FIRST:LAST",
                        help="first:last degree, inclusive (default 3:12)")
    parser.add_argument("--workers", type=positive_int, default=1)
    parser.add_argument("--no-bench", action="store_true",
                        help="skip the run-time comparison (|N| = 64, 128, 256)")
    parser.add_argument("--quick", action="store_true", help="3 seeds, |N| = 64, degrees 3-6")


def layers(*, out: str | Path | None = None, seeds: int = 100, sizes: tuple[int, ...] = (64, 256),
           degrees: range = range(3, 13), workers: int = 1, no_bench: bool = False,
           quick: bool = False) -> Reproduction:
    """The ACRO paper's Fig. 5/6 experiment (:func:`~.layers.reproduce_acro`) and, unless
    ``no_bench`` or ``quick``, the assigners' run times; a ValueError when no (|N|, degree) has
    a regular graph.  ``icsim.reproduce("acro-layers", ...)``; the command line calls it too."""
    from icsim.experiments.papers.acro.layers import bench_assigners, reproduce_acro

    out = Path(out or "runs/acro-layers")
    if quick:
        sizes, degrees, seeds = (64,), range(3, 7), 3
    since = file_times(out)
    report = reproduce_acro(out, sizes=sizes, degrees=degrees, seeds=seeds, workers=workers)
    summary = report
    if not no_bench and not quick:
        summary += "\n" + bench_assigners(
            out / "bench", sizes=(64, 128, 256), degree=6, seeds=1,
            assigners=("acro", "lash", "lash_tor", "lash_tor_conventional"))
    return Reproduction("acro-layers", out, report,
                        {p: "written" for p in written_since(out, since)}, summary=summary)


ACRO = SimpleNamespace(add_arguments=_arguments, reproduce=layers, EPILOG=__doc__)
