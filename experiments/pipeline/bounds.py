"""The exact bound beside a simulated γ*: an oblivious routing's ideal throughput (``icsim
analyze``, docs/model.md §8.1), where it is cheap to know.

A simulation's γ* is at most its routing's ideal throughput under the same traffic (the load
at which its busiest channel would be 100 % busy with ideal flow control).  Sweep summaries and
the figures print it beside γ* for the curves where it costs at most a second or two: a
deterministic routing (dimension order, a routing table) on a torus or mesh of at most
:data:`MAX_NODES` nodes under a pattern whose rates are known.  Randomised oblivious routings
(ROMM, VAL, RLB) have exact bounds too, but the analysis enumerates their choices (RLB on
8x8x8: 12 s), so they are left to ``icsim analyze`` and ``icsim reproduce torus-routing``;
adaptive routings have none.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Mapping

#: the routings whose exact loads are one walk per pair (cheap)
CHEAP = frozenset({"dor", "table"})
#: the largest torus analysed for a summary or a figure (16x16x16 under DOR: about 2 s)
MAX_NODES = 4096


def exact_bound(config: Mapping[str, Any] | Any) -> float | None:
    """The ideal throughput (γ units) of ``config``'s routing under its pattern, or ``None``
    where it is not cheap or not defined (module docstring).  ``config``: a resolved config's
    dict (as a results row stores it) or a :class:`~icsim.model.config.Config`."""
    data = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    topology = data.get("topology") or {}
    routing = (data.get("routing") or {}).get("algorithm", "dor")
    traffic = data.get("traffic") or {}
    if (topology.get("kind", "torus") != "torus" or routing not in CHEAP
            or traffic.get("workload", "open") != "open"):
        return None
    dims = topology.get("dims") or []
    nodes = 1
    for k in dims:
        nodes *= int(k)
    if not dims or nodes > MAX_NODES:
        return None
    keep = {k: data[k] for k in ("seed", "topology", "routing", "traffic") if k in data}
    return _bound(json.dumps(keep, sort_keys=True, default=str))


@functools.lru_cache(maxsize=256)
def _bound(text: str) -> float | None:
    from icsim.experiments.analyze import analyze_config
    from icsim.model.config import ConfigError, config_from_dict

    try:
        report = analyze_config(config_from_dict(json.loads(text)))
    except ConfigError:
        return None
    except Exception:           # noqa: BLE001 -- an aside: a file gone since the run, ...
        return None
    value = float(report["throughput"])
    return value if value > 0 else None


# ---------------------------------------------------------------------------------- the guard
#: the most routers a guard's bound is computed for (every pair walked: 1,024 routers ~ 2 s)
GUARD_ROUTERS = 1024
#: the most routers of a capacity program a guard solves (a minimal adaptive routing's paths;
#: the 8x8 HyperX's 64 routers: about 3 s)
GUARD_CAPACITY_ROUTERS = 256


@dataclass(frozen=True)
class Bound:
    """A bound on a curve's γ*: ``value`` in γ units, ``what`` names it for a verdict."""

    value: float
    what: str


def guard_bound(config: Mapping[str, Any] | Any) -> Bound | None:
    """The bound a sweep guards a curve's γ* with (:mod:`.sweep`, issue 56), where it is cheap:
    :func:`exact_bound`'s, any oblivious routing's ideal throughput on a dragonfly, fat tree or
    HyperX (loads per terminal), and the capacity of a minimal adaptive routing's paths on a
    small one; ``None`` elsewhere (a randomised routing on a torus, an adaptive routing that
    may take any path, a closed-loop workload)."""
    data = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    topology = data.get("topology") or {}
    routing = (data.get("routing") or {}).get("algorithm", "dor")
    if (data.get("traffic") or {}).get("workload", "open") != "open":
        return None
    if topology.get("kind", "torus") == "torus":
        value = exact_bound(data)
        return None if value is None else Bound(value, f"{routing}'s exact ideal throughput")
    if topology.get("kind") not in FAMILIES:
        return None
    keep = {k: data[k] for k in ("seed", "topology", "routing", "traffic") if k in data}
    return _guard(json.dumps(keep, sort_keys=True, default=str))


#: the topology kinds whose routings :func:`guard_bound` analyses
FAMILIES = frozenset({"dragonfly", "fat_tree", "hyperx"})


@functools.lru_cache(maxsize=256)
def _guard(text: str) -> Bound | None:
    from icsim.experiments.analyze import analyze_config
    from icsim.model.config import ConfigError, config_from_dict
    from icsim.simulator.build import prepare

    try:
        config = config_from_dict(json.loads(text))
        routers = prepare(config).topology.num_nodes
        if routers > GUARD_ROUTERS:
            return None
        capacity = "paths" if routers <= GUARD_CAPACITY_ROUTERS else False
        report = analyze_config(config, capacity=capacity)
    except ConfigError:
        return None
    except Exception:           # noqa: BLE001 -- an aside: the sweep runs without its guard
        return None
    value = float(report["throughput"])
    if not value > 0:
        return None
    what = ("exact ideal throughput" if report["bound"] == "oblivious"
            else "capacity of its paths")
    return Bound(value, f"{report['routing']}'s {what}")
