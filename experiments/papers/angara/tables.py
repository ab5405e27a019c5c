"""``icsim tables``: generate, analyse and export an Angara routing table, or check a table
file.  The command line's front end (the work is :func:`~.analysis.tables_main` and
:func:`~.analysis.check_main`), kept apart from the reproductions of :mod:`.cli` so that
building its parser (``icsim --help``) imports none of them."""

from __future__ import annotations

import argparse
import json
import sys

from icsim.experiments.pipeline.execution import natural_int, positive_int, positive_number


def add_tables_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tables", help="generate, analyse and export Angara routing tables, or check one",
        description="Generate an Angara deterministic routing table (BFS, SSSP, Genetic, the "
                    "annealing-refined SSSP or the MILP optimum, on the Angara routing graph), "
                    "report its quality and deadlock freedom, optionally write it; or check an "
                    "existing table file (an Angara table, or one with virtual layers from icsim "
                    "layers --out).  With failed links or nodes the table routes around "
                    "them, or the command lists the pairs no deadlock-free single-VC table can "
                    "route and why.",
        epilog="examples:\n  icsim tables --dims 4 2 2 2 --generator sssp --json\n"
               "  icsim tables --dims 4 2 2 2 --generator optimal --time-limit 60 --bound\n"
               "  icsim tables --dims 4 2 2 2 --generator refined --max-moves 200000\n"
               "  icsim tables --dims 4 2 2 2 --failed-links 0-1,5:y- --failed-nodes 12\n"
               "  icsim tables --dims 4 2 2 2 --nodes 0-7 --generator optimal --traffic tornado "
               "--traffic-params '{\"over\": \"index\"}'\n"
               "  icsim tables --dims 4 2 2 2 --generator bfs --nodes 0-15 --out bfs16.json\n"
               "  icsim tables --check bfs16.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dims", nargs="+", type=int, metavar="K", help="torus sizes, e.g. 4 2 2 2")
    p.add_argument("--generator", default="sssp",
                   help="bfs, sssp, genetic, refined or optimal (default sssp)")
    p.add_argument("--nodes", default=None,
                   help="node subset: a count (the first N ids), ids and ranges '0-7,12'")
    p.add_argument("--seed", type=natural_int, default=0)
    p.add_argument("--failed-links", default=None, metavar="LINKS",
                   help="links out of service: 'U-V' (two neighbours) or 'U:PORT' (e.g. 5:y-), "
                        "comma-separated")
    p.add_argument("--failed-nodes", default=None, metavar="IDS",
                   help="nodes out of service, ids and ranges")
    p.add_argument("--time-limit", type=positive_number, default=None, metavar="S",
                   help="time limit in seconds (optimal: per MILP stage; refined: the search)")
    p.add_argument("--max-moves", type=positive_int, default=None, metavar="N",
                   help="refined: proposals of the search (default 50 per pair with a choice)")
    p.add_argument("--traffic", default=None, metavar="KIND",
                   help="refined/optimal: weigh pairs by a collective on the nodes (alltoall, "
                        "neighbor, tornado or another permutation pattern, ranks in node "
                        "order) or a trace ('trace:FILE')")
    p.add_argument("--traffic-params", default=None, metavar="JSON",
                   help="the collective's pattern parameters, e.g. '{\"over\": \"index\"}'")
    p.add_argument("--bound", action="store_true",
                   help="also report the LP lower bound on the edge-forwarding index")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", default=None, metavar="FILE", help="write the table file here")
    p.add_argument("--check", default=None, metavar="FILE",
                   help="check a table file: its structure and deadlock freedom (the Angara "
                        "rules and the bubble rule for one VC on a torus; every layer acyclic "
                        "for a table with virtual layers, or on a graph)")
    p.set_defaults(func=cmd_tables)


def _traffic_params(text: str) -> dict:
    """``--traffic-params``: a JSON object of the pattern's parameters."""
    try:
        params = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--traffic-params: not JSON ({exc})") from None
    if not isinstance(params, dict):
        raise ValueError(f"--traffic-params: expected a JSON object such as "
                         f"'{{\"over\": \"index\"}}', got {text!r}")
    return params


def cmd_tables(args: argparse.Namespace) -> int:
    from icsim.experiments.papers.angara.analysis import check_main, tables_main
    from icsim.routing.table import TableError
    from icsim.routing.tables.faults import UnroutableError

    try:
        if args.check:
            result = check_main(args.check)
            if args.json:
                print(json.dumps(result))
            else:
                n = result["layers"]
                layers = "" if result["rules"] == "angara" else \
                    f", {n} virtual layer{'s' if n > 1 else ''}"
                print(f"{args.check}: ok — {result['nodes']} nodes{layers}, max load "
                      f"{result['max_load']}, sigma4 {result['sigma4']:.3f}, max D "
                      f"{result['max_d']}, deadlock-free")
            return 0
        if not args.dims:
            print("icsim tables: give --dims (or --check FILE)", file=sys.stderr)
            return 2
        opts = {}
        if args.time_limit is not None:
            opts["time_limit_s"] = args.time_limit
        if args.max_moves is not None:
            opts["max_moves"] = args.max_moves
        params = _traffic_params(args.traffic_params) if args.traffic_params else None
        tables_main(args.dims, args.generator, nodes=args.nodes, seed=args.seed, out=args.out,
                    as_json=args.json, failed_links=args.failed_links,
                    failed_nodes=args.failed_nodes, traffic=args.traffic,
                    traffic_params=params, bound=args.bound, **opts)
        return 0
    except UnroutableError as exc:
        if args.json:
            print(json.dumps({"routable": False, "unroutable": [
                {"src": u.src, "dst": u.dst, "reason": u.reason, "route": list(u.route),
                 "turns": [list(t) for t in u.turns]} for u in exc.report.unroutable],
                "counts": exc.report.counts(), "pairs": exc.report.pairs}))
        print(f"icsim tables: {exc}", file=sys.stderr)
        return 2
    except (TableError, ValueError, KeyError) as exc:
        print(f"icsim tables: {exc}", file=sys.stderr)
        return 2
