"""Named paper reproductions: ``icsim reproduce NAME`` and ``icsim.reproduce(NAME, **options)``.

A reproduction is a module (or ``module:object``) with two functions::

    def add_arguments(parser: argparse.ArgumentParser) -> None: ...   # its options
    def reproduce(*, k: int = 8, ..., command: str | None = None) -> Reproduction: ...

The keyword arguments of ``reproduce`` are the parser's destinations (``--report-only`` is
``report_only``, ``--set`` is ``overrides``) with the same defaults, annotated with their
Python types; ``command`` (optional) receives how it was invoked, for its report.  The command
line is a thin adapter (:func:`cmd_reproduce`): it parses the options, calls ``reproduce``,
prints the summary and the files, and exits with the status.  From Python, :func:`call` (the
API's ``icsim.reproduce``) checks every keyword argument before the call: its name, its type
against the annotation, and its value with the option's own command-line check (so
``workers=0`` is refused as ``--workers 0`` is), raising a one-line
:class:`~icsim.model.config.ConfigError` naming the argument.  A plug-in registered with the
older interface, ``run(args) -> exit status`` instead of ``reproduce``, runs from the command
line only.

Registering one is one line here (the module is imported only when its name is used, so a
broken or slow-to-import reproduction never affects the others)::

    register("ofr-table3", "icsim.experiments.papers.ofr.table3",
             "OutFlank Table 3: derouted shares of OFR and POR at γ = 0.10")

``icsim reproduce`` lists the registered names; ``icsim reproduce NAME --help`` shows the
reproduction's own options.  :func:`add_common_arguments` gives every reproduction the same
``--out``, ``--quick``, ``--workers`` and ``--scheduler`` options.
"""

from __future__ import annotations

import argparse
import collections.abc
import inspect
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from icsim.experiments.pipeline.execution import add_execution_arguments
from icsim.experiments.pipeline.figure_style import add_style_argument, style_of, using_style
from icsim.experiments.pipeline.outputs import KEPT, UNCHANGED, WRITTEN
from icsim.model.registry import Registry

# the errors a reproduction may raise are imported where one runs (a reproduction imports their
# modules anyway): icsim --help and the list of reproductions import this module

#: reproductions by name, each registered lazily as ``"module:object"``
REPRODUCTIONS: Registry = Registry("reproduction", entry_points="icsim.reproductions")
#: what a reproduction did with a file it names (besides writing it, leaving it unchanged or
#: keeping a committed one): it only read it
READ = "read"


#: each reproduction's committed folder under ``experiments/results/`` (in a clone)
RESULTS: dict[str, str] = {}
#: what each one costs, measured on an idle 2-core machine (the listing's last column)
COSTS: dict[str, str] = {}
#: where the committed results are: beside the sources in a clone (an installed wheel has none)
RESULTS_ROOT = Path(__file__).resolve().parents[1] / "results"


def register(name: str, module: str, help: str, results: str | None = None,
             cost: str | None = None) -> None:
    """Make ``icsim reproduce NAME`` and ``icsim.reproduce(NAME)`` run ``module.reproduce``
    (``module`` imported lazily); ``results`` is its committed folder under
    ``experiments/results/``, ``cost`` what a run costs (shown in the list)."""
    REPRODUCTIONS.add_lazy(name, module, help=help)
    if results:
        RESULTS[name] = results
    if cost:
        COSTS[name] = cost


register("ofr-table2", "icsim.experiments.papers.ofr.table2",
         "OutFlank Tables 2 and 3: gamma* and derouted shares of ABR/POR/OFR on 8^3 or 16^3 tori",
         cost=("--k 8 --profile both --search bisect: about 30 CPU-minutes (recorded); --report-"
               "only on the committed runs: 10 s; --k 16 --guess paper: about 35 minutes on two "
               "cores (recorded)"))
register("ofr-table3", "icsim.experiments.papers.ofr.table3",
         "OutFlank Table 3: derouted shares of OFR (outflank/wraparound) and POR at γ = 0.10",
         cost=("about 3 minutes (166 s CPU)"))
register("torus-routing", "icsim.experiments.papers.torus_routing:TORUS_ROUTING",
         "Oblivious torus routing (DOR, ROMM, VAL, RLB, RLBth) on the 8-ary 2- and 3-cube: exact "
         "throughput per traffic and worst case, beside the RLB paper's claims",
         results="torus_routing",
         cost=("exact tables: about 1.5 minutes (70 s CPU); --simulate: about 1.5 hours on two "
               "cores (recorded)"))
register("dragonfly", "icsim.experiments.papers.dragonfly:DRAGONFLY",
         "Dragonfly (1,056 terminals): MIN, VAL, UGAL-L, UGAL-G under uniform and group-shift "
         "traffic, beside the exact bounds and Kim et al. 2008 / Jiang et al. 2009",
         results="dragonfly",
         cost=("the committed runs shown: seconds; --simulate: about 10 minutes on two cores "
               "(240 runs and UGAL-L's 56 longer ones; 144 and the 56 took 7.5 minutes on a "
               "shared machine)"))
register("fat-tree", "icsim.experiments.papers.fat_tree:FAT_TREE",
         "Fat trees: D-mod-k on k-ary 3-trees beside Zahavi's non-blocking shifts (exact), and "
         "D-mod-k vs adaptive up*/down* simulated",
         results="fat_tree",
         cost=("the committed runs shown: seconds; --simulate: about 15 s (10 s CPU)"))
register("hyperx", "icsim.experiments.papers.hyperx:HYPERX",
         "HyperX 8x8 (512 terminals): DOR and minimal adaptive vs Valiant and UGAL, uniform and "
         "line shift, beside the exact bounds and Ahn et al. 2009",
         results="hyperx",
         cost=("the committed runs shown: seconds; --simulate: about 40 s (32 s CPU)"))
register("apps-torus", "icsim.experiments.papers.apps_torus:APPS_TORUS",
         "Applications on 8x8x8: a halo and an alltoall job sharing the torus under DOR, ABR, "
         "POR and OFR, their slowdowns (slabs and scattered placement)",
         results="apps_torus",
         cost=("the committed runs shown: seconds; --simulate: about a minute (55 s CPU)"))
register("acro-layers", "icsim.experiments.papers.acro.cli:ACRO",
         "ACRO Fig. 5/6: virtual layers of ACRO vs LASH vs LASH-TOR on random regular graphs",
         cost=("about 4 CPU-hours (recorded: 2,000 graphs x 3 assigners); --quick: seconds"))
register("angara-table2", "icsim.experiments.papers.angara.cli:TABLE2",
         "Angara Table 2: BFS/SSSP/Genetic table quality on the 4x2x2x2 Desmos torus",
         cost=("seconds (3 s)"))
register("angara-tori", "icsim.experiments.papers.angara.cli:TORI",
         "Angara Sec. 5.1: SSSP vs BFS (vs Genetic) on random 2D/3D/4D tori",
         cost=("the paper's whole population: days (its 4D systems of up to 4,096 nodes); the "
               "committed --max-nodes 768: 47 minutes on two cores (recorded)"))
register("angara-sim", "icsim.experiments.papers.angara.cli:SIM",
         "Angara Sec. 5.2: alltoall and tornado with SSSP vs BFS tables, simulated on 4x2x2x2",
         cost=("about a minute (44 s CPU)"))
register("angara-npb", "icsim.experiments.papers.angara.npb:NPB",
         "Angara Table 3: NPB LU/MG/CG/FT/IS skeletons (class C, 4 ranks per node) with BFS, "
         "Genetic and SSSP tables on 4x2x2x2, closed loop",
         results="angara_npb",
         cost=("the committed runs shown: seconds; --simulate: about 3 minutes (158 s CPU)"))
register("angara-optimum", "icsim.experiments.papers.angara.cli:OPTIMUM",
         "Beyond Angara: proven optimal tables (MILP) on 4x2x2x2 and its Table 2 subsets",
         cost=("seconds (5 s)"))
register("angara-bounds", "icsim.experiments.papers.angara.cli:BOUNDS",
         "Beyond Angara: LP lower bounds vs SSSP vs refined tables on random 2D/3D/4D tori",
         cost=("about 20 minutes (recorded)"))
register("angara-traffic", "icsim.experiments.papers.angara.cli:TRAFFIC",
         "Beyond Angara: traffic-aware tables for the angara-sim jobs, simulated",
         cost=("about 30 minutes (recorded)"))
register("angara-faults", "icsim.experiments.papers.angara.cli:FAULTS",
         "Beyond Angara: tables around random failed links and nodes (4x2x2x2, 8x8x8)",
         cost=("--dims 4x2x2x2: about 20 minutes; 8x8x8: about 25 (recorded)"))


# ---------------------------------------------------------------------------------- results
def committed(name: str) -> Path | None:
    """The folder of ``experiments/results/`` that holds the committed results of the
    reproduction ``name`` (in a clone of the repository; ``None`` in an installed wheel, or
    for a reproduction without one)."""
    folder = RESULTS.get(name)
    path = RESULTS_ROOT / folder if folder else None
    return path if path is not None and path.is_dir() else None


def shown(path: Path) -> str:
    """A path as the user reads it: from the working directory when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass
class Source:
    """Where a reproduction with ``--simulate`` writes (``out``) and where it reads its
    simulated results from (``runs``: ``out`` itself, or the committed folder).

    Without ``--out`` and ``--simulate``, and with no simulated results of the user's own in
    ``runs/NAME``, a reproduction shows the committed ones: it reads them where they are
    (never writing there) and writes its report and figures in ``runs/NAME``."""

    name: str
    out: Path
    runs: Path
    committed: bool = False

    def missing(self, holds: str) -> str:
        """Why there is nothing simulated to show, naming the folder, and how to make it."""
        where = self.runs / holds
        text = f"no simulated results at {shown(where)}"
        if not self.committed and self.out == Path(f"runs/{self.name}") \
                and RESULTS.get(self.name):
            text += (f", and none committed in this installation (experiments/results/"
                     f"{RESULTS[self.name]}/ is in a clone of the repository)")
        return text + f"; --simulate runs them{cost_text(self.name, ' (', ')')}"

    def note(self, holds: str) -> str:
        """The line the command prints about the simulated results it showed."""
        if not self.committed:
            return ""
        return (f"Simulated results: the committed runs in {shown(self.runs / holds)} (read, "
                f"not changed); what it draws from them is in {shown(self.out)}. To "
                f"simulate them again: icsim reproduce {self.name} --simulate --out DIR"
                f"{cost_text(self.name, ' (', ')')}.")


def cost_text(name: str, before: str = "", after: str = "") -> str:
    """The registered cost of a reproduction (``""`` if none)."""
    cost = COSTS.get(name)
    return f"{before}{cost}{after}" if cost else ""


def simulated_source(name: str, out: str | Path | None, simulate: bool, holds: str) -> Source:
    """Where the reproduction ``name`` reads its simulated results (the file or folder
    ``holds`` under it) and writes its own (:class:`Source`)."""
    folder = Path(out or f"runs/{name}")
    if simulate or out is not None or (folder / holds).exists():
        return Source(name, folder, folder)
    home = committed(name)
    if home is not None and (home / holds).exists():
        return Source(name, folder, home, committed=True)
    return Source(name, folder, folder)


def from_runs(name: str, out: str | Path | None, simulate: bool, run_all: Callable[[], Any],
              draw: Callable[[Any, Path, Any], str]) -> "Reproduction":
    """A reproduction kept as one ``runs.csv`` in ``out`` (default ``runs/NAME``): with
    ``simulate``, ``run_all()`` makes its rows (a DataFrame); then ``draw(runs, out, outputs)``
    writes whatever it draws from them (through ``outputs``) and returns the report, written
    to ``report.md``.  Without ``out`` and ``simulate`` the runs are the committed ones
    (:func:`simulated_source`) unless ``runs/NAME`` holds some."""
    import pandas as pd

    from icsim.experiments.pipeline.outputs import Outputs

    source = simulated_source(name, out, simulate, "runs.csv")
    path = source.runs / "runs.csv"
    if not (simulate or path.exists()):
        raise ValueError(source.missing("runs.csv"))
    source.out.mkdir(parents=True, exist_ok=True)
    if simulate:
        run_all().to_csv(path, index=False, float_format="%.6g")
    outputs = Outputs()
    text = draw(pd.read_csv(path), source.out, outputs)
    Outputs(force=True, status=outputs.status).write(source.out / "report.md", text)
    files = {**({path: READ} if source.committed else {}), **outputs.status}
    note = source.note("runs.csv")
    return Reproduction(name, source.out, text, files,
                        summary=text + (f"\n{note}\n" if note else ""))


@dataclass
class Reproduction:
    """What a reproduction made.

    Attributes
    ----------
    name : str
        The reproduction (``"ofr-table2"``).
    out : Path
        Its output folder.
    report : str
        Its Markdown report, as the report file in ``out`` holds it.
    files : dict
        Each file it wrote or read -> ``"written"``, ``"unchanged"`` (same content, not
        touched), ``"kept"`` (committed, the new content differs: ``force=True`` overwrites) or
        ``"read"``.
    tables : dict
        The reproduced tables as DataFrames, for the reproductions that make them in memory
        (``ofr-table2``: ``table2``, ``table3``; ``ofr-table3``: ``table3``); the others' are
        the CSV files in ``out``.
    summary : str, optional
        What the command line prints before the files (default: the report).
    """

    name: str
    out: Path
    report: str
    files: dict[Path, str] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)
    summary: str | None = None

    @property
    def kept(self) -> list[Path]:
        """Committed files whose new content differs, kept as they were."""
        return [p for p, s in self.files.items() if s == KEPT]

    @property
    def status(self) -> int:
        """The command's exit status: 1 when committed files were kept, else 0."""
        return 1 if self.kept else 0

    def lines(self) -> list[str]:
        """What happened to each file, one line each, as the command prints it."""
        text = {WRITTEN: "wrote {}", UNCHANGED: "unchanged {}", READ: "read {}",
                KEPT: "kept {} (committed; the new content differs: --force to overwrite)"}
        return ([text[s].format(p) for p, s in self.files.items()]
                or [f"nothing new written in {self.out}"])


# ---------------------------------------------------------------------------------- options
def add_common_arguments(parser: argparse.ArgumentParser, default_out: str) -> None:
    """``--out``, ``--quick``, ``--workers``, ``--scheduler`` for a reproduction."""
    parser.add_argument("--out", default=None, metavar="DIR",
                        help=f"output directory (default {default_out}); finished runs there "
                             "are reused when the command is run again")
    parser.add_argument("--quick", action="store_true",
                        help="a reduced version for smoke tests (minutes, not comparable with "
                             "the paper)")
    add_execution_arguments(parser)


def _parser(name: str, entry: Any) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"icsim reproduce {name}",
                                     description=REPRODUCTIONS.help.get(name),
                                     epilog=getattr(entry, "EPILOG", None),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    entry.add_arguments(parser)
    if not any("--style" in a.option_strings for a in parser._actions):
        add_style_argument(parser)           # every reproduction's figures, in any style
    return parser


def options_of(name: str) -> dict[str, Any]:
    """The keyword arguments of a reproduction with their defaults (its command-line options).

    >>> options_of("angara-table2")
    {'out': None, 'seed': 0}
    """
    fn = _entry(name).reproduce
    return {p.name: p.default for p in inspect.signature(fn).parameters.values()
            if p.name != "command"}


def _entry(name: str) -> Any:
    if not isinstance(name, str) or name not in REPRODUCTIONS:
        raise ValueError(f"unknown reproduction {name!r}; registered: "
                         f"{', '.join(REPRODUCTIONS.names())}")
    return REPRODUCTIONS.get(name)


def _expected(hint: Any) -> str:
    """A type annotation in words: ``int``, ``8 or 16``, ``a list of str or None``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_expected(a) for a in args)
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if hint is type(None):
        return "None"
    if origin in (tuple, list, collections.abc.Sequence):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return f"{len(args)} values ({', '.join(_expected(a) for a in args)})"
        return f"a list of {_expected(args[0])}" if args else "a list"
    if origin in (dict, collections.abc.Mapping):
        return "a dict"
    return getattr(hint, "__name__", str(hint))


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the annotated type (a bool is not a number, text not a list)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint in (int, float):
        return isinstance(value, (int, float) if hint is float else int) \
            and not isinstance(value, bool)
    if origin in (tuple, list, collections.abc.Sequence):
        if not isinstance(value, (tuple, list)):
            return False
        if origin is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(map(_fits, value, args))
        return not args or all(_fits(v, args[0]) for v in value)
    if origin in (dict, collections.abc.Mapping):
        return isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
    return isinstance(value, hint)


def _text(value: Any) -> str:
    """A Python value as its command-line text: ``(64, 256)`` is ``64,256``, ``range(3, 13)``
    is ``3:12``."""
    if isinstance(value, range):
        return f"{value.start}:{value.stop - 1}"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def _checked(name: str, action: argparse.Action | None, value: Any) -> Any:
    """``value`` as the option's own command-line check reads it (its choices and its
    ``type``); a value it refuses is a ConfigError naming the argument."""
    from icsim.model.config import ConfigError

    if action is None or value is None:
        return value
    if action.choices is not None and value not in action.choices:
        raise ConfigError(name, f"expected one of {', '.join(map(repr, action.choices))}, got "
                                f"{value!r}")
    parse = action.type
    if parse is None or parse in (str, int, float) or isinstance(value, bool):
        return value
    try:
        if isinstance(action.nargs, int):
            return type(value)(parse(_text(v)) for v in value)
        return parse(_text(value))
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        raise ConfigError(name, str(exc)) from None


def call(name: str, /, **options: Any) -> Reproduction:
    """Run the reproduction ``name`` with keyword arguments mirroring its command-line options
    (:func:`options_of`; module docstring); return what it made.

    Raises
    ------
    ValueError
        ``name`` is not a registered reproduction.
    ConfigError
        An argument it does not take, of the wrong type or with a value its option refuses
        (one line naming it), or a config it reads that is wrong.
    """
    fn = _function(name)
    style = options.pop("style", None) if "style" not in inspect.signature(fn).parameters \
        else None
    if style is not None:
        try:
            style_of(style)
        except ValueError as exc:
            from icsim.model.config import ConfigError

            raise ConfigError("style", str(exc).removeprefix("style: ")) from None
    checked = check_options(name, options)
    shown = ", ".join([repr(name), *(f"{k}={v!r}" for k, v in options.items())])
    if "command" in inspect.signature(fn).parameters:
        checked["command"] = f"icsim.reproduce({shown})"
    with using_style(style):
        return fn(**checked)


def _function(name: str) -> Callable[..., Reproduction]:
    fn = getattr(_entry(name), "reproduce", None)
    if fn is None:
        raise ValueError(f"reproduction {name!r} has no Python function (a command-line "
                         f"plug-in: icsim reproduce {name})")
    return fn


def check_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a reproduction, checked (their names, their types against the
    annotations, their values by their options' own command-line checks) and read as the
    command line reads them; a ConfigError naming the first wrong one.

    >>> check_options("acro-layers", {"sizes": (64, 128), "degrees": range(3, 6)})
    {'sizes': (64, 128), 'degrees': range(3, 6)}
    >>> check_options("acro-layers", {"seeds": 0})
    Traceback (most recent call last):
    ...
    icsim.model.config.ConfigError: seeds: expected a whole number >= 1, got '0'
    """
    from icsim.model.config import ConfigError

    fn = _function(name)
    hints = typing.get_type_hints(fn)
    params = [p for p in inspect.signature(fn).parameters if p != "command"]
    actions = {a.dest: a for a in _parser(name, _entry(name))._actions}
    checked = {}
    for key, value in options.items():
        if key not in params:
            raise ConfigError(key, f"not an option of {name} (its options: "
                                   f"{', '.join(params)})")
        if not _fits(value, hints[key]):
            raise ConfigError(key, f"expected {_expected(hints[key])}, got {value!r} "
                                   f"({type(value).__name__})")
        checked[key] = _checked(key, actions.get(key), value)
    return checked


# ---------------------------------------------------------------------------------- command line
def _listing() -> str:
    """One entry per reproduction: its name and what it reproduces, then what it costs."""
    names = REPRODUCTIONS.names()
    width = max((len(n) for n in names), default=0)
    lines = []
    for n in names:
        lines.append(f"  {n:{width}s}  {REPRODUCTIONS.help.get(n, '')}")
        if n in COSTS:
            lines.append(f"  {'':{width}s}  cost: {COSTS[n]}")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``icsim reproduce`` to the command line."""
    p = sub.add_parser(
        "reproduce", help="reproduce a paper's table or figure (icsim reproduce NAME --help)",
        description="Run a named reproduction of a paper's table or figure and write its "
                    "results, a report beside the paper's numbers, and figures.",
        epilog="reproductions:\n" + _listing()
               + "\n\nexample:\n  icsim reproduce ofr-table2 --k 8 --profile reference",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME", nargs="?", default=None,
                   help="which reproduction (listed below; without it, the list)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its options (NAME --help)")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Parse a reproduction's options, run it, print its summary and its files."""
    if args.name is None:
        print("reproductions (icsim reproduce NAME --help for one's options; costs measured on "
              "an idle 2-core machine):\n" + _listing())
        return 0
    if args.name not in REPRODUCTIONS:
        print(f"icsim reproduce: unknown reproduction {args.name!r}; registered:\n{_listing()}",
              file=sys.stderr)
        return 2
    from icsim.experiments.pipeline.results_file import SweepError
    from icsim.model.config import ConfigError
    from icsim.model.input_files import InputFileError
    from icsim.model.topology import GraphError
    from icsim.routing.table import TableError
    from icsim.traffic.trace import TraceError

    entry = REPRODUCTIONS.get(args.name)
    options = _parser(args.name, entry).parse_args(args.args)
    command = " ".join(["icsim", "reproduce", args.name, *args.args])
    fn: Callable[..., Reproduction] | None = getattr(entry, "reproduce", None)
    if fn is None:                            # a plug-in of the older interface
        options.command_line = command
        return entry.run(options)
    params = inspect.signature(fn).parameters
    kwargs = {k: v for k, v in vars(options).items() if k in params}
    if "command" in params:
        kwargs["command"] = command
    prefix = f"icsim reproduce {args.name}"
    try:
        with using_style(getattr(options, "style", None) if "style" not in params else None):
            made = fn(**kwargs)
    except SweepError as exc:                 # another run holds the folder; the backend died
        print(f"{prefix}: {exc}", file=sys.stderr)
        return 1
    except (ConfigError, InputFileError, TableError, TraceError, GraphError):
        raise                                 # the command line's own one line (a config, a file)
    except ValueError as exc:                 # the options choose nothing to run
        print(f"{prefix}: {exc}", file=sys.stderr)
        return 2
    print(made.summary if made.summary is not None else made.report)
    for line in made.lines():
        print(line)
    if made.kept:
        print(f"{prefix}: kept {len(made.kept)} committed file(s) whose new content differs "
              f"(listed above); run again with --force to overwrite them", file=sys.stderr)
    return made.status
