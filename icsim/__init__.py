"""icsim: a cycle-level discrete-event simulator of interconnection networks.

The Python API (:mod:`icsim.api`, loaded on first use so that ``import icsim`` stays light):

* ``icsim.run(config, overrides=None, *, engine=None, progress=False)`` — one run; a
  :class:`~icsim.simulator.results.Result` (the JSON record, with ``latencies``, ``channels``
  and ``nodes``);
* ``icsim.sweep(config, loads, vary=None, seeds=1, out=None, workers=None)`` — a load sweep;
  the tidy DataFrame of its runs;
* ``icsim.analyze(config, overrides=None, *, worst_case=False, out=None)`` — exact channel
  loads of an oblivious routing, its ideal throughput and worst-case permutation (a dict);
* ``icsim.reproduce(name, **options)`` — a paper reproduction (``"ofr-table2"``, ...), its
  command-line options as typed keyword arguments; a
  :class:`~icsim.experiments.papers.reproduce.Reproduction` (report, tables, files);
* ``icsim.read_results(path)``; ``icsim.latency_figure``, ``accepted_figure``,
  ``derouted_figure`` (sweeps), ``latency_distribution_figure``, ``channel_heatmap_figure``
  (runs): matplotlib Figures.

The packages live under this name: ``icsim.simulator`` (the model and its engines),
``icsim.routing``, ``icsim.traffic``, ``icsim.experiments`` and the bundled ``icsim.configs``.
"""

from __future__ import annotations

from typing import Any

_API = ("run", "sweep", "analyze", "reproduce", "read_results", "config_path", "latency_figure",
        "accepted_figure", "derouted_figure", "latency_distribution_figure",
        "channel_heatmap_figure", "timeline_figure", "slowdowns", "Result", "Reproduction",
        "ConfigError")

__all__ = list(_API)


def __getattr__(name: str) -> Any:
    if name in _API:
        from icsim import api
        from icsim.simulator.results import Result

        return Result if name == "Result" else getattr(api, name)
    raise AttributeError(f"module 'icsim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
