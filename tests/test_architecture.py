"""The architecture holds: the schema imports nothing, every docstring example runs, and a
routing algorithm plugs in from one file of another package."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from icsim.model.config import ConfigError
from icsim.routing.registry import ROUTING
from icsim.simulator.build import from_dict
from icsim.simulator.simulation import run

SUBPACKAGES = ("model", "simulator", "routing", "traffic", "experiments", "configs")


def all_modules() -> list[str]:
    """Every module of icsim (its subpackages live in the repository's top-level folders)."""
    names = ["icsim"]
    for sub in SUBPACKAGES:
        pkg = importlib.import_module(f"icsim.{sub}")
        names.append(pkg.__name__)
        names += [info.name for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
    return sorted(names)


#: modules whose examples take a second or more: in the full suite only
SLOW_DOCTESTS = {"icsim.experiments.papers.acro.layers", "icsim.experiments.papers.angara.bounds",
                 "icsim.simulator.engines.compiled.decide",
                 "icsim.experiments.papers.angara.faults"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_DOCTESTS
                                  else n for n in all_modules()])
def test_every_docstring_example_runs(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)                      # examples that write files write here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


FLOORS = ("model", ("routing", "traffic"), "simulator", "experiments")


def test_every_folder_imports_only_the_floors_below_it():
    """model, then routing and traffic, then simulator, then experiments, then the API: no
    module imports a floor above its own (inside a function or not), and no module of one
    folder is imported by its bare folder name."""
    import ast

    rank = {}
    for i, floor in enumerate(FLOORS):
        for name in (floor if isinstance(floor, tuple) else (floor,)):
            rank[name] = i
    root = Path(__file__).resolve().parent.parent
    wrong = []
    for folder in rank:
        for path in sorted((root / folder).rglob("*.py")):
            if "results" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                        [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                        and node.module else [])
                for mod in mods:
                    parts = mod.split(".")
                    if parts[0] in rank:
                        wrong.append(f"{path.relative_to(root)}: import {mod} (a bare name)")
                    elif parts[0] == "icsim" and len(parts) > 1 and parts[1] in rank \
                            and rank[parts[1]] > rank[folder]:
                        wrong.append(f"{path.relative_to(root)}: {mod} is above {folder}/")
                    elif parts[0] == "icsim" and (len(parts) == 1 or parts[1] == "api"):
                        wrong.append(f"{path.relative_to(root)}: {mod} is the API, the roof")
    assert wrong == []


def _module_imports() -> dict[str, set[str]]:
    """Every module of the source folders -> the icsim modules it imports, at the top or inside
    a function (``from icsim.x import y`` counts as importing ``icsim.x`` and, if it is one,
    the module ``icsim.x.y``)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    files = {}
    for folder in (*SUBPACKAGES[:-1], "icsim"):
        for path in sorted((root / folder).rglob("*.py")):
            if "results" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join(parts if parts[0] == "icsim" else ["icsim", *parts])] = path
    imports = {}
    for name, path in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        imports[name] = {m for m in found if m in files and m != name}
    return imports


def test_no_module_imports_itself_through_others():
    """No cycle of modules, counting the imports inside functions (pipeline/plots and
    pipeline/sweep imported each other, one of them from inside a function)."""
    imports = _module_imports()
    cycles = []
    state: dict[str, int] = {}                  # 1: on the current path, 2: done

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        for other in sorted(imports[name]):
            if state.get(other) == 1:
                cycles.append(" -> ".join(path[path.index(other):] + [name, other]))
            elif other not in state:
                walk(other, path + [name])
        state[name] = 2

    for name in sorted(imports):
        if name not in state:
            walk(name, [])
    assert cycles == []


def test_the_pipeline_imports_no_papers_module():
    """The general machinery (sweeps, figures, the benchmark) stands below the reproductions of
    the papers: ``icsim bench`` imported the Angara reproduction for its table timing."""
    wrong = [f"{name} imports {m}" for name, found in _module_imports().items()
             if name.startswith("icsim.experiments.pipeline")
             for m in found if m.startswith("icsim.experiments.papers")]
    assert wrong == []


def test_the_source_folders_doctest_from_the_repository_root_as_one_module_each(tmp_path):
    """``python -m pytest --doctest-modules model simulator routing traffic experiments`` from
    the repository root collects every module once, under one name (the root conftest answers
    the bare folder names with the installed modules; a file loaded twice fails the session)."""

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "pytest", "--doctest-modules", "--collect-only",
                          "-q", "-p", "no:cacheprovider", "model", "simulator", "routing",
                          "traffic", "experiments"], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "registered twice" not in out.stdout + out.stderr
    import simulator.build                       # a bare name, as pytest imports a file
    from icsim.simulator import build
    assert simulator.build is build


def test_the_examples_cover_the_packages():
    examples = sum(len(t.examples) for n in all_modules()
                   for t in doctest.DocTestFinder().find(importlib.import_module(n)))
    assert examples > 150


def test_the_config_schema_imports_no_routing_traffic_or_engine_module():
    code = textwrap.dedent("""
        import sys
        import icsim.model.config
        print(sorted(m for m in sys.modules if m.startswith(("icsim.routing", "icsim.traffic",
              "icsim.simulator.engines", "icsim.simulator.build", "icsim.experiments"))))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: the libraries a command that neither simulates, analyses nor draws must not load (each costs
#: a tenth of a second to half a second at start; numba's machine code more)
HEAVY = ("numba", "pandas", "matplotlib", "scipy", "networkx", "dask", "tqdm")


def _heavy_after(code: str) -> list[str]:
    """The :data:`HEAVY` libraries (and icsim's model and simulator) a fresh process holds
    after ``code``."""
    check = textwrap.dedent(f"""
        import contextlib, io, sys
        {textwrap.indent(textwrap.dedent(code), "        ").strip()}
        print(sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r} or m in (
              "icsim.model.config", "icsim.model.topology", "icsim.simulator.build",
              "icsim.simulator.results", "icsim.simulator.engines.compiled")))
    """)
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         check=True)
    return eval(out.stdout.strip().splitlines()[-1])


def test_the_commands_that_only_answer_load_no_model_and_no_heavy_library():
    """``icsim --help``, ``icsim configs``, the list of reproductions and every command's own
    ``--help`` answer at once: they import neither the model nor numba, pandas, matplotlib,
    scipy, networkx, dask or tqdm (issue 55: 1.5 s and 225 MB for ``icsim --help`` when the
    command line imported everything)."""
    assert _heavy_after("import icsim.experiments.cli") == []
    assert _heavy_after("""
        from icsim.experiments.cli import COMMANDS, main
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["configs"]) == 0
            assert main(["reproduce"]) == 0
            for argv in (["--help"], *([name, "--help"] for name in COMMANDS)):
                with contextlib.suppress(SystemExit):
                    main(argv)
    """) == []
    assert _heavy_after("import icsim; icsim.__all__") == []


def test_a_run_loads_only_what_its_engine_needs():
    """The SimPy engine, the record and the saturation rules need no numba (the compiled
    engine compiles the rules' very code: simulator/engines/compiled/rules.py); the Python
    API's run needs no pandas until a table is asked for."""
    loaded = _heavy_after("""
        import icsim
        icsim.run("quickstart", {"topology.dims": [3, 3], "run.measure_us": 2,
                                 "run.warmup_us": 1, "run.drain_us": 20}, engine="simpy")
    """)
    assert not {"numba", "pandas", "matplotlib", "scipy"} & {m.split(".")[0] for m in loaded}


def test_every_error_with_a_constructor_of_its_own_crosses_a_process_pool_whole():
    """An error class whose __init__ takes more than the message must be Picklable, or a worker
    that raises it breaks the pool (BrokenProcessPool) instead of reporting its line; and the
    errors come back with their class, message and fields."""
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    from icsim.model.errors import Picklable

    for name in all_modules():
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if (isinstance(cls, type) and issubclass(cls, BaseException)
                    and cls.__module__ == name and "__init__" in vars(cls)):
                assert issubclass(cls, Picklable), f"{name}.{cls.__name__}"

    from icsim.model.input_files import InputFileError
    from icsim.routing.tables.check import AngaraRuleError
    from icsim.traffic.trace import TraceError

    errors = [ConfigError("traffic.load", "must be >= 0"), InputFileError("t.csv", "bad", 3),
              TraceError("t.csv", 4, "bad time"), AngaraRuleError("shape", (1, 2), 3)]
    for err in errors:
        back = pickle.loads(pickle.dumps(err))
        assert (type(back), str(back), vars(back)) == (type(err), str(err), vars(err))
    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(ConfigError, match="^traffic.load: must be >= 0$") as caught:
            pool.submit(_raise, errors[0]).result()
    assert caught.value.path == "traffic.load"


def _raise(err: BaseException) -> None:
    raise err


PLUGINS = Path(__file__).resolve().parent / "plugins"


@pytest.fixture
def toy_plugin(tmp_path, monkeypatch):
    """A package outside icsim that declares a routing algorithm by an entry point."""
    pkg = tmp_path / "icsim_toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "west_first.py").write_text((PLUGINS / "west_first.py").read_text())
    info = tmp_path / "icsim_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: icsim-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[icsim.routing]\nwest_first = icsim_toy.west_first\n")
    ROUTING.load()                                   # the built-in ones, before the copy
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(ROUTING, "_members", dict(ROUTING._members))
    monkeypatch.setattr(ROUTING, "_loaded", False)     # look for plug-ins again
    yield
    sys.modules.pop("icsim_toy.west_first", None)
    sys.modules.pop("icsim_toy", None)


def mesh(**routing):
    return {"topology": {"kind": "torus", "dims": [4, 4], "wrap": [False, False]},
            "routing": {"algorithm": "west_first", **routing},
            "traffic": {"pattern": "uniform", "load": 0.3, "message_packets": 4},
            "run": {"warmup_us": 5, "measure_us": 30, "drain_us": 60}}


def test_a_routing_algorithm_plugs_in_from_one_file_of_another_package(toy_plugin):
    assert "west_first" in ROUTING.names()
    r = run(from_dict(mesh()))
    assert not r["saturated"]
    assert r["packets_delivered"] == r["packets_measured"] > 0
    assert r["dilation"] == 1.0                      # minimal on the mesh


def test_a_plugged_in_algorithm_gets_its_own_config_section_checked(toy_plugin):
    with pytest.raises(ConfigError, match=r"routing.west_first.turns: unknown key"):
        from_dict(mesh(west_first={"turns": 2}))
    with pytest.raises(ConfigError, match=r"routing.algorithm: west_first routes on a 2D mesh, "
                                          r"not on torus 4x4"):
        from_dict({**mesh(), "topology": {"kind": "torus", "dims": [4, 4]}})


def test_flat_routing_keys_of_older_configs_mean_the_algorithm_sections():
    cfg = from_dict({"topology": {"dims": [4, 4, 4]},
                     "routing": {"algorithm": "ofr", "delta": 3, "profit": "reference",
                                 "ofr_candidates": "reference", "min_deroute_distance": 2}})
    assert cfg.routing.section("ofr") == {"delta": 3, "eta": 2.0, "profit": "reference",
                                          "candidates": "reference", "min_deroute_distance": 2}
    assert cfg.routing.section("por")["profit"] == "reference"
    with pytest.raises(ConfigError, match=r"^routing.ofr.delta: expected a number >= 1, got 0$"):
        from_dict({"topology": {"dims": [4, 4, 4]},
                   "routing": {"algorithm": "abr", "ofr": {"delta": 0}}})
    with pytest.raises(ConfigError, match=r"routing.dragonfly: not a routing algorithm's section"):
        from_dict({"topology": {"dims": [4, 4]}, "routing": {"dragonfly": {}}})
