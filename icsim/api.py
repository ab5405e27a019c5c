"""The Python API: what the command line does, as functions (``import icsim``).

>>> import icsim
>>> r = icsim.run("quickstart", {"topology.dims": [4, 4], "run.measure_us": 10})
>>> r["saturated"], r.engine, len(r.latencies) == r.packets_delivered
(False, 'compiled', True)
>>> sorted(r.channels.columns)[:4], len(r.channels) == 16 * 4    # 16 nodes, 4 ports, 1 VC
(['c0', 'c1', 'dim', 'direction'], True)

A config is a YAML path, the name of a bundled config (``"quickstart"``,
``"ofr/reference/k8"``: see :func:`config_path`), a dict, or a
:class:`~icsim.model.config.Config`; ``overrides`` is a dict of dotted keys
(``{"traffic.load": 0.3}``), the ``--set`` of the command line.  Errors are the command line's:
:class:`~icsim.model.config.ConfigError` names the key, file errors name the file and line.
"""

from __future__ import annotations

import copy
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from icsim.configs import config_path
from icsim.experiments.analyze import analyze_config
from icsim.experiments.papers.reproduce import Reproduction
from icsim.experiments.papers.reproduce import call as _reproduce
from icsim.experiments.pipeline.arguments import (check_count, check_flag, check_folder,
                                                  check_loads, check_overrides, check_seeds,
                                                  check_sweep_size, plain, vary_sizes)
from icsim.experiments.pipeline.curves import (check_varied, make_curves, parse_loads,
                                               parse_vary)
from icsim.experiments.pipeline.execution import ProgressBar, RunProgress, make_executor
from icsim.experiments.pipeline.rows import point_key
from icsim.experiments.pipeline.summaries import flip_notes
from icsim.experiments.pipeline.sweep import run_sweep
from icsim.model.config import Config, ConfigError, config_from_dict, read_config_file, set_path
from icsim.simulator.build import from_dict
from icsim.simulator.results import Result
from icsim.simulator.simulation import Simulation

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["run", "sweep", "read_results", "config_path", "latency_figure", "accepted_figure",
           "derouted_figure", "latency_distribution_figure", "channel_heatmap_figure",
           "timeline_figure", "slowdowns", "reproduce", "Reproduction", "ConfigError"]


def __getattr__(name: str) -> Any:
    # pandas loads with the first table read, not with icsim.run
    if name == "read_results":
        from icsim.experiments.pipeline.lines import read_results

        return read_results
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _with_engine(overrides: dict[str, Any], engine: str | None) -> dict[str, Any]:
    """``engine=`` as the command line's ``--engine``: an override of ``run.engine``, so that
    the memory check and the record see the engine that runs."""
    return overrides if engine is None else {**overrides, "run.engine": engine}


def _config_data(config: str | Path | Mapping[str, Any] | Config,
                 overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides: a dict of dotted keys ({{'traffic.load': 0.3}}), got "
                        f"{type(overrides).__name__}")
    if isinstance(config, Config):
        data = config.to_dict()
    elif isinstance(config, Mapping):
        data = dict(config)
    elif isinstance(config, (str, Path)):
        data = read_config_file(config_path(config))
    else:
        raise TypeError(f"config: a YAML path, a bundled config's name, a dict or a Config, "
                        f"got {type(config).__name__}")
    data = plain(copy.deepcopy(data))
    for key, value in (overrides or {}).items():
        set_path(data, key, plain(value))
    return data


def run(config: str | Path | Mapping[str, Any] | Config,
        overrides: Mapping[str, Any] | None = None, *, engine: str | None = None,
        progress: bool = False) -> Result:
    """Run one simulation.

    Parameters
    ----------
    config, overrides
        The config and dotted-key overrides (module docstring).
    engine : {"auto", "simpy", "compiled"}, optional
        Overrides ``run.engine``.
    progress : bool
        Report progress with an ETA on stderr.

    Returns
    -------
    Result
        The result record (a dict, as ``icsim run --json`` prints it) with ``latencies``
        (ns, numpy), ``channels`` and ``nodes`` (pandas DataFrames).
    """
    overrides = _with_engine(check_overrides(overrides), engine)
    progress = check_flag("progress", progress)
    cfg = config_from_dict(_config_data(config, overrides))
    if not progress:
        return Simulation(cfg, engine=engine).run()
    bar = RunProgress(enabled=True)
    try:
        return Simulation(cfg, engine=engine, progress=bar).run()
    finally:
        bar.close()


def sweep(config: str | Path | Mapping[str, Any] | Config, loads: str | Iterable[float],
          vary: Mapping[str, Iterable[Any]] | None = None, seeds: int = 1,
          out: str | Path | None = None, workers: int | None = None, *,
          overrides: Mapping[str, Any] | None = None, search: str = "climb",
          plots: bool | None = None, progress: bool | None = None,
          style: str | None = None) -> pd.DataFrame:
    """Sweep loads (and the product of ``vary``'s values) as ``icsim sweep`` does.

    Parameters
    ----------
    loads : str, float or iterable of float
        ``"0.1:0.5:0.1"`` (stop included) or the loads themselves.
    vary : dict, optional
        ``{"routing.algorithm": ["dor", "ofr"]}``: one curve per combination (a text value is
        the command line's comma list, ``"dor,ofr"``; a value that is not a list is one value).
    seeds : int
        Replications per curve (seeds s .. s + seeds - 1).
    out : path, optional
        Where ``results.csv``, ``gamma_star.csv``, ... and the figures go (an existing sweep
        there is resumed); default a temporary directory, removed afterwards.
    workers : int, optional
        Local worker processes, at least 1 (default 1 here: in this process).
    search : {"climb", "bisect"}
    plots : bool, optional
        Draw the figures into ``out`` (default: when ``out`` is given).
    progress : bool, optional
        A progress bar on stderr (tqdm): runs made, at most how many to go, the last verdict.
        Default: where stderr is a terminal or a notebook's output, none otherwise.
    style : {"default", "paper"}, optional
        How the figures in ``out`` look (``"paper"``: also written as PDF).

    Returns
    -------
    pandas.DataFrame
        The rows of this sweep's runs as ``results.csv`` holds them (:func:`read_results`);
        ``df.attrs["gamma_star"]`` maps each curve to its γ*, and
        ``df.attrs["gamma_star_lower_bound"]`` to whether that γ* is only a lower bound ("γ* ≥":
        every load up to the top of the grid sustained); ``df.attrs["notes"]`` lists the
        curves whose verdicts flip back to sustained above a saturated load (likely noise;
        each also a warning, as the command line prints it).  With several seeds,
        ``df.attrs["gamma_star_ci"]`` maps each curve's label to the mean of its seeds' γ*,
        the half-width of its 95 % Student-t confidence interval and the number of seeds
        that have one (``(0.283, 0.072, 3)``).
    """
    from icsim.experiments.pipeline.confidence import mean_ci
    from icsim.experiments.pipeline.figure_style import style_of, using_style
    from icsim.experiments.pipeline.lines import read_results

    overrides, loads, seeds = check_overrides(overrides), check_loads(loads), check_seeds(seeds)
    plots, progress = check_flag("plots", plots, True), check_flag("progress", progress, True)
    out = check_folder("out", out)
    if workers is not None:
        check_count("workers", workers)
    if vary is not None and not isinstance(vary, Mapping):
        raise TypeError(f"vary: a dict of dotted keys to values ({{'routing.algorithm': "
                        f"['dor', 'ofr']}}), got {type(vary).__name__}")
    # a value that is text is the command line's comma list ("dor,ofr"); one that is not a
    # list is one value
    varied = [parse_vary(f"{k}={v}") if isinstance(k, str) and isinstance(v, str) else
              (k, list(v) if isinstance(v, Iterable) else [v]) for k, v in (vary or {}).items()]
    for key, values in varied:
        check_varied(key, values)
    check_sweep_size(len(loads), vary_sizes(vary), seeds)
    if style is not None:
        try:
            style_of(style)
        except ValueError as exc:
            raise ConfigError("style", str(exc).removeprefix("style: ")) from None
    data = _config_data(config, overrides)
    from_dict(data)                                   # every error before the first run
    if isinstance(loads, (int, float)):
        loads = [loads]
    if isinstance(loads, str):
        grid = parse_loads(loads)
    elif isinstance(loads, Iterable):
        grid = sorted({float(x) for x in loads})
    else:
        raise TypeError(f"loads: a grid ('0.1:0.5:0.1'), a load or a list of loads, got "
                        f"{type(loads).__name__}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers: at least 1, got {workers}")
    curves = make_curves(data, grid, (), varied, seeds=seeds)
    tmp = None if out is not None else tempfile.TemporaryDirectory(prefix="icsim-sweep-")
    where = Path(out) if out is not None else Path(tmp.name)
    try:
        with make_executor(workers or 1) as executor, using_style(style):
            outcome = run_sweep(curves, where, executor=executor, search=search,
                                plots=bool(out is not None if plots is None else plots),
                                progress=ProgressBar(enabled=progress))
        df = read_results(where)
    finally:
        if tmp is not None:
            tmp.cleanup()
    mine = {point_key(r["config_hash"], r["seed"]) for r in outcome.rows}
    keys = [point_key(h, s) for h, s in zip(df["config_hash"], df["seed"])]
    df = df[[k in mine for k in keys]].reset_index(drop=True)
    df.attrs["gamma_star"] = {c.name: c.result.gamma_star for c in outcome.curves}
    df.attrs["gamma_star_lower_bound"] = {c.name: c.result.gamma_star_lower_bound
                                          for c in outcome.curves}
    if seeds > 1:
        by_curve: dict[str, list] = {}
        for c in outcome.curves:
            by_curve.setdefault(c.curve.label, []).append(c.result.gamma_star)
        df.attrs["gamma_star_ci"] = {label: mean_ci(g for g in stars if g is not None)
                                     for label, stars in by_curve.items()}
    df.attrs["notes"] = flip_notes(outcome.curves)
    for note in df.attrs["notes"]:
        warnings.warn(note, stacklevel=2)
    return df


def analyze(config: str | Path | Mapping[str, Any] | Config,
            overrides: Mapping[str, Any] | None = None, *, worst_case: bool = False,
            out: str | Path | None = None) -> dict[str, Any]:
    """Exact channel loads of the config's oblivious routing under its traffic pattern, as
    ``icsim analyze`` gives them (docs/model.md §8.1): ``throughput`` (ideal, in units of γ),
    ``max_load``, ``busiest`` channels and, with ``worst_case``, the worst-case permutation
    (``out``: written as a file ``traffic.params.permutation.file`` runs).  ConfigError for a
    routing without exact loads (an adaptive one)."""
    overrides = check_overrides(overrides)
    worst_case = check_flag("worst_case", worst_case)
    cfg = config_from_dict(_config_data(config, overrides))
    return analyze_config(cfg, worst_case=worst_case, out=out)


def reproduce(name: str, /, **options: Any) -> Reproduction:
    """Run a paper reproduction, as ``icsim reproduce NAME`` does (``icsim reproduce`` lists
    them; :func:`~icsim.experiments.papers.reproduce.options_of` gives one's options).

    Parameters
    ----------
    name : str
        ``"ofr-table2"``, ``"ofr-table3"``, ``"acro-layers"``, ``"angara-table2"``, ...
    **options
        Its command-line options as keyword arguments, with their Python types: ``--k 8`` is
        ``k=8``, ``--report-only`` is ``report_only=True``, ``--patterns uniform,butterfly``
        is ``patterns=["uniform", "butterfly"]``, ``--set key=value`` is
        ``overrides={"key": value}`` (or ``["key=value"]``); ``style="paper"`` draws its
        figures for a paper (``--style paper``).

    Returns
    -------
    Reproduction
        ``report`` (its Markdown report), ``out`` (the folder), ``files`` (each file and whether
        it was written, unchanged, kept or read), ``tables`` (DataFrames, for ``ofr-table2``:
        ``table2`` and ``table3``; ``ofr-table3``: ``table3``) and ``status`` (1 when committed
        files were kept).

    Raises
    ------
    ConfigError
        An option it does not take, of the wrong type or value (one line naming it), or a
        config it reads that is wrong; ``ValueError`` for an unknown name.

    Redraw a copy of the committed k = 8 tables (its options from its provenance.json)::

        r = icsim.reproduce("ofr-table2", report_only=True, no_plots=True, out="ofr_k8_copy")
        r.tables["table2"].set_index(["pattern", "algorithm", "profile"]).gamma_star
    """
    return _reproduce(name, **{key: plain(value) for key, value in options.items()})


# The figure functions import their plot modules when first called: those load matplotlib,
# which runs, sweeps without figures and reproductions never need.
def latency_figure(results: Any, style: str | None = None):
    """Latency against offered load, one line per curve, γ* marked (a matplotlib Figure);
    ``results``: a sweep's DataFrame, rows or path; ``style="paper"``: a figure a journal
    takes (no title, a column's width, 8-pt fonts, a palette that prints in grey; save it as
    PDF or SVG)."""
    from icsim.experiments.pipeline.plots import latency_figure as draw

    return draw(results, style=style)


def accepted_figure(results: Any, style: str | None = None):
    """Accepted against offered load (a matplotlib Figure; ``style`` as for
    :func:`latency_figure`)."""
    from icsim.experiments.pipeline.plots import accepted_figure as draw

    return draw(results, style=style)


def derouted_figure(results: Any, style: str | None = None):
    """Share of derouted packets against offered load (a matplotlib Figure, or None when no
    curve deroutes; ``style`` as for :func:`latency_figure`)."""
    from icsim.experiments.pipeline.plots import derouted_figure as draw

    return draw(results, style=style)


def latency_distribution_figure(results: Mapping[str, Any], title: str | None = None,
                                style: str | None = None):
    """Latency histogram and CDF of one run or of several (``{"dor": r1, "ofr": r2}``): each a
    :class:`Result` or a record as ``icsim run --json`` prints it (``style`` as for
    :func:`latency_figure`)."""
    from icsim.experiments.pipeline.run_figures import latency_distribution_figure as draw
    from icsim.experiments.pipeline.run_figures import run_label

    def is_record(r: Any) -> bool:         # a Result, or a record read from --json
        return isinstance(r, Mapping) and "latency_histogram" in r

    if is_record(results):
        if title is None and style != "paper":
            title = f"Packet latency distribution ({run_label(results)})"
        results = {"run": results}
    if not isinstance(results, Mapping) or not all(map(is_record, results.values())):
        raise TypeError(f"latency_distribution_figure takes a run's Result (icsim.run(...)) "
                        f"or JSON record, or a dict of them, got {_what(results)}")
    return draw({name: r["latency_histogram"] for name, r in results.items()}, title=title,
                style=style)


def channel_heatmap_figure(result: Result | pd.DataFrame, value: str = "utilisation",
                           title: str | None = None, style: str | None = None):
    """A run's channel load: on the torus coordinates, a dragonfly's group pairs, a fat tree's
    levels (ranked bars on graphs and HyperX); ``style`` as for :func:`latency_figure`."""
    import pandas as pd

    from icsim.experiments.pipeline.run_figures import channel_heatmap_figure as draw
    from icsim.experiments.pipeline.run_figures import run_label

    if not isinstance(result, (Result, pd.DataFrame)):
        raise TypeError(f"channel_heatmap_figure takes a run's Result (icsim.run(...)) or its "
                        f"channel table, got {_what(result)}")
    channels = result.channels if isinstance(result, Result) else result
    label = run_label(result) if isinstance(result, Result) else None
    return draw(channels, value=value, title=title, label=label, style=style)


def timeline_figure(result: Result, job: int = 0, max_ranks: int = 64):
    """A closed-loop run's per-rank timeline (computations, waits on messages, iteration
    ends) for one job (its first ``max_ranks`` ranks)."""
    from icsim.experiments.pipeline.apps import timeline_figure as draw

    ops = result.ops if isinstance(result, Result) else None
    if ops is None:
        raise TypeError(f"timeline_figure takes the Result of an app run (traffic.workload: "
                        f"app), got {_what(result)}")
    return draw(ops, job, max_ranks)


def slowdowns(config: str | Path | Mapping[str, Any] | Config,
              overrides: Mapping[str, Any] | None = None, *,
              engine: str | None = None) -> tuple[Result, list[dict]]:
    """An app config's run and each job's slowdown against the same job alone on the network
    (one more run per job): ``(result, [{name, shared_ns, alone_ns, slowdown}, ...])``."""
    from icsim.experiments.pipeline.apps import slowdowns as measure

    overrides = _with_engine(check_overrides(overrides), engine)
    return measure(config_from_dict(_config_data(config, overrides)), engine=engine)


def _what(value: Any) -> str:
    """A value's type for an error message, with the types of a dict's values."""
    if isinstance(value, Mapping):
        kinds = sorted({type(v).__name__ for v in value.values()})
        return f"a dict of {', '.join(kinds) or 'nothing'}"
    return type(value).__name__
