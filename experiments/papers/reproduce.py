"""``icsim reproduce NAME``: a registry of named paper reproductions.

A reproduction is a module (or ``module:object``) with two functions::

    def add_arguments(parser: argparse.ArgumentParser) -> None: ...
    def run(args: argparse.Namespace) -> int: ...           # exit status

Registering one is one line here (the module is imported only when its name is used, so a
broken or slow-to-import reproduction never affects the others)::

    register("ofr-table3", "icsim.experiments.papers.ofr.table3",
         "OutFlank Table 3: derouted shares of OFR (outflank/wraparound) and POR at γ = 0.10")
register("acro-layers", "icsim.experiments.papers.acro.cli:ACRO",
         "ACRO Fig. 5/6: virtual layers of ACRO vs LASH vs LASH-TOR on random regular graphs")
register("angara-table2", "icsim.experiments.papers.angara.cli:TABLE2", "Angara routing-table quality")

``icsim reproduce`` lists the registered names; ``icsim reproduce NAME --help`` shows the
reproduction's own options.  :func:`add_common_arguments` gives every reproduction the same
``--out``, ``--quick``, ``--workers`` and ``--scheduler`` options.
"""

from __future__ import annotations

import argparse
import sys

from icsim.experiments.pipeline.execution import add_execution_arguments
from icsim.model.registry import Registry

#: reproductions by name, each registered lazily as ``"module:object"``
REPRODUCTIONS: Registry = Registry("reproduction", entry_points="icsim.reproductions")


def register(name: str, module: str, help: str) -> None:
    """Make ``icsim reproduce NAME`` run ``module.run(args)`` (``module`` imported lazily)."""
    REPRODUCTIONS.add_lazy(name, module, help=help)


register("ofr-table2", "icsim.experiments.papers.ofr.table2",
         "OutFlank Tables 2 and 3: gamma* and derouted shares of ABR/POR/OFR on 8^3 or 16^3 tori")
register("ofr-table3", "icsim.experiments.papers.ofr.table3",
         "OutFlank Table 3: derouted shares of OFR (outflank/wraparound) and POR at γ = 0.10")
register("acro-layers", "icsim.experiments.papers.acro.cli:ACRO",
         "ACRO Fig. 5/6: virtual layers of ACRO vs LASH vs LASH-TOR on random regular graphs")
register("angara-table2", "icsim.experiments.papers.angara.cli:TABLE2",
         "Angara Table 2: BFS/SSSP/Genetic table quality on the 4x2x2x2 Desmos torus")
register("angara-tori", "icsim.experiments.papers.angara.cli:TORI",
         "Angara Sec. 5.1: SSSP vs BFS (vs Genetic) on random 2D/3D/4D tori")
register("angara-sim", "icsim.experiments.papers.angara.cli:SIM",
         "Angara Sec. 5.2: alltoall and tornado with SSSP vs BFS tables, simulated on 4x2x2x2")
register("angara-optimum", "icsim.experiments.papers.angara.cli:OPTIMUM",
         "Beyond Angara: proven optimal tables (MILP) on 4x2x2x2 and its Table 2 subsets")
register("angara-bounds", "icsim.experiments.papers.angara.cli:BOUNDS",
         "Beyond Angara: LP lower bounds vs SSSP vs refined tables on random 2D/3D/4D tori")
register("angara-traffic", "icsim.experiments.papers.angara.cli:TRAFFIC",
         "Beyond Angara: traffic-aware tables for the angara-sim jobs, simulated")
register("angara-faults", "icsim.experiments.papers.angara.cli:FAULTS",
         "Beyond Angara: tables around random failed links and nodes (4x2x2x2, 8x8x8)")


def add_common_arguments(parser: argparse.ArgumentParser, default_out: str) -> None:
    """``--out``, ``--quick``, ``--workers``, ``--scheduler`` for a reproduction."""
    parser.add_argument("--out", default=None, metavar="DIR",
                        help=f"output directory (default {default_out}); finished runs there "
                             "are reused when the command is run again")
    parser.add_argument("--quick", action="store_true",
                        help="a reduced version for smoke tests (minutes, not comparable with "
                             "the paper)")
    add_execution_arguments(parser)


def _listing() -> str:
    names = REPRODUCTIONS.names()
    width = max((len(n) for n in names), default=0)
    return "\n".join(f"  {n:{width}s}  {REPRODUCTIONS.help.get(n, '')}" for n in names)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``icsim reproduce`` to the command line."""
    p = sub.add_parser(
        "reproduce", help="reproduce a paper's table or figure (icsim reproduce NAME --help)",
        description="Run a named reproduction of a paper's table or figure and write its "
                    "results, a report beside the paper's numbers, and figures.",
        epilog="reproductions:\n" + _listing()
               + "\n\nexample:\n  icsim reproduce ofr-table2 --k 8 --profile reference",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME", help="which reproduction (listed below)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its options (NAME --help)")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    if args.name not in REPRODUCTIONS:
        print(f"icsim reproduce: unknown reproduction {args.name!r}; registered:\n{_listing()}",
              file=sys.stderr)
        return 2
    module = REPRODUCTIONS.get(args.name)
    parser = argparse.ArgumentParser(prog=f"icsim reproduce {args.name}",
                                     description=REPRODUCTIONS.help.get(args.name),
                                     epilog=getattr(module, "EPILOG", None),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    sub_args = parser.parse_args(args.args)
    sub_args.command_line = " ".join(["icsim", "reproduce", args.name, *args.args])
    return module.run(sub_args)
