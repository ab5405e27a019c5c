"""``icsim analyze``: a config's exact channel loads without simulating (oblivious routing).

For the config's topology, routing and traffic pattern, :mod:`icsim.routing.oblivious` gives
the expected load of every channel, the ideal throughput in units of γ (what ideal flow control
would sustain; a simulation's γ* is at most this) and the busiest channels; ``worst_case=True``
adds the routing's worst-case permutation (Towles and Dally 2002), which ``out`` writes as a
file ``traffic.pattern: permutation`` runs (``traffic.params.permutation.file``).

>>> r = analyze("quickstart", ["topology.dims=[8,8]", "traffic.pattern=tornado"])
>>> r["throughput"], r["busiest"][0]["port"]
(0.3333333333333333, 'x+')
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from icsim.configs import config_path
from icsim.model.config import Config, ConfigError, load_config
from icsim.routing.capacity import capacity_bound, program_masks
from icsim.routing.oblivious import NotOblivious, Oblivious
from icsim.simulator.build import prepare

#: how many of the busiest channels a report names
BUSIEST = 5


def analyze(config: str | Path, overrides: list[str] | None = None, *,
            worst_case: bool = False, out: str | Path | None = None,
            capacity: bool | str = False) -> dict[str, Any]:
    """The exact loads of ``config`` (a path or a bundled config's name) with ``overrides``
    (``key=value``); ConfigError naming the key when the routing or pattern has none."""
    return analyze_config(load_config(config_path(str(config)), overrides or []),
                          worst_case=worst_case, out=out, capacity=capacity)


def analyze_config(config: Config, *, worst_case: bool = False,
                   out: str | Path | None = None, capacity: bool | str = False
                   ) -> dict[str, Any]:
    """:func:`analyze` for a validated :class:`~icsim.model.config.Config`: a dict with
    ``topology``, ``routing``, ``pattern``, ``uniform_bound``, ``max_load``, ``throughput``,
    ``busiest`` (channels), ``same_from_every_node``, ``time_s`` and, with ``worst_case``,
    ``worst_case`` (``max_load``, ``throughput``, ``channel``, and ``file`` with ``out``).
    With ``capacity``, a routing that is not oblivious gets its capacity bound instead of a
    refusal (:func:`_capacity_report`: ``bound`` says which, ``max_load`` is ``None``);
    ``capacity="paths"`` only where its program offers its paths (a small program), else the
    refusal.
    On a topology with several terminals per router the traffic and loads count terminals."""
    t0 = time.perf_counter()
    prep = prepare(config)
    cfg, topo = prep.config, prep.topology
    if prep.pattern is None:
        raise ConfigError("traffic.workload", f"{cfg.traffic.workload}: the analysis needs an "
                                              f"open-loop pattern (traffic.pattern)")
    routing = prep.routing_cls(topo, cfg, prep.settings)
    try:
        rates = prep.pattern.rates()
    except NotImplementedError as exc:
        raise ConfigError("traffic.pattern", str(exc)) from None
    try:
        exact = Oblivious(topo, routing)
    except NotOblivious as exc:
        if worst_case or not capacity:
            raise ConfigError("routing.algorithm",
                              f"{exc}" + ("" if worst_case else
                                          " (--capacity: the capacity bound of its paths)")
                              ) from None
        return _capacity_report(topo, routing, cfg, rates, str(exc), t0, capacity)
    except ValueError as exc:
        raise ConfigError("topology", str(exc)) from None
    loads = exact.loads(rates)
    report: dict[str, Any] = {
        "topology": topo.describe(), "routing": exact.name, "pattern": cfg.traffic.pattern,
        "bound": "oblivious",
        "uniform_bound": float(topo.max_channel_load_factor),
        "max_load": float(loads.max(initial=0.0)), "throughput": exact.throughput(loads),
        "busiest": _busiest(topo, loads), "same_from_every_node": exact.symmetric,
    }
    if worst_case:
        try:
            wc = exact.worst_case()
        except NotOblivious as exc:
            raise ConfigError("topology", str(exc)) from None
        report["worst_case"] = {"max_load": wc.load, "throughput": wc.throughput,
                                "channel": _channel(topo, *wc.channel, wc.load)}
        if out is not None:
            write_permutation(out, wc.mapping, f"worst case of {exact.name} on "
                                               f"{topo.describe()}: throughput "
                                               f"{wc.throughput:.6g}")
            report["worst_case"]["file"] = str(out)
    report["time_s"] = time.perf_counter() - t0
    return report


def _capacity_report(topo: Any, routing: Any, cfg: Config, rates: np.ndarray, why: str,
                     t0: float, capacity: bool | str = True) -> dict[str, Any]:
    """An adaptive routing's bound: the capacity of the paths its program offers (a minimal
    adaptive routing's), else of every channel (:mod:`icsim.routing.capacity`)."""
    masks = program_masks(topo, routing)
    if masks is None and capacity == "paths":
        raise ConfigError("routing.algorithm", f"{why}; its program offers no paths to bound "
                                               f"(only the capacity of every channel)")
    try:
        value = capacity_bound(topo, rates, masks)
    except ValueError as exc:
        raise ConfigError("routing.algorithm", f"{why}; and {exc}") from None
    return {"topology": topo.describe(), "routing": getattr(routing, "name", cfg.routing.algorithm),
            "pattern": cfg.traffic.pattern,
            "bound": "capacity of its paths" if masks is not None else "capacity (any routing)",
            "why": why, "uniform_bound": float(topo.max_channel_load_factor),
            "max_load": None, "throughput": value, "busiest": [],
            "same_from_every_node": False, "time_s": time.perf_counter() - t0}


def _channel(topo: Any, node: int, port: int, load: float) -> dict[str, Any]:
    return {"node": int(node), "where": topo.where(int(node)), "port": topo.port_name(int(port)),
            "load": float(load)}


def _busiest(topo: Any, loads: np.ndarray) -> list[dict[str, Any]]:
    order = np.argsort(-loads, kind="stable")[:BUSIEST]
    P = topo.num_ports
    return [_channel(topo, int(c) // P, int(c) % P, loads[c]) for c in order if loads[c] > 0]


def write_permutation(path: str | Path, mapping: np.ndarray, title: str) -> None:
    """One destination per line in source order, with a comment line first."""
    lines = [f"# {title}", "# line i: the destination of node i - 1 (icsim analyze)"]
    lines += [str(int(d)) for d in mapping]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def format_report(r: dict[str, Any]) -> str:
    """The report as a few lines."""
    if r.get("max_load") is None:
        paths = ("the paths its program offers" if r["bound"] == "capacity of its paths"
                 else "every channel: any routing")
        return "\n".join([
            f"{r['topology']} {r['routing']} {r['pattern']}: capacity bound "
            f"({r['time_s']:.2f} s)",
            f"  not oblivious     {r['why']}",
            f"  capacity bound    γ = {r['throughput']:.6g} (maximum concurrent flow over "
            f"{paths}; a simulation sustains at most this)"])
    top = r["busiest"][0] if r["busiest"] else None
    how = "paths of one node, translated" if r["same_from_every_node"] else "every pair walked"
    lines = [f"{r['topology']} {r['routing']} {r['pattern']}: exact channel loads "
             f"({how}, {r['time_s']:.2f} s)",
             f"  max channel load  {r['max_load']:.6g} per unit of per-node injection"
             + (f" ({top['port']} of node {top['where']})" if top else ""),
             f"  ideal throughput  γ = {r['throughput']:.6g} (uniform bound "
             f"{r['uniform_bound']:.6g} / max load; a simulation sustains at most this)"]
    wc = r.get("worst_case")
    if wc:
        lines.append(f"  worst case        γ = {wc['throughput']:.6g} (max load "
                     f"{wc['max_load']:.6g} on {wc['channel']['port']} of node "
                     f"{wc['channel']['where']})"
                     + (f"; permutation written to {wc['file']}" if wc.get("file") else ""))
    return "\n".join(lines)
