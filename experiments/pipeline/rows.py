"""A sweep's results row: its columns, how a finished run becomes one, what identifies it.

One tidy row per run: identity columns (``curve``, ``role``, ``config_hash``, ``seed``,
``curve_hash``, ``offered_load``, ``status``, ``error``), every field of the run's JSON result
with nested objects flattened (``derouted.outflank``), provenance (``version``, ``git_commit``,
``host``, ``started_at``, ``finished_at``, ``elapsed_s``) and the resolved config flattened
(``config.routing.algorithm``; lists and free-form mappings such as ``config.topology.dims`` or
``config.traffic.params`` as JSON text).

Identity: ``config_hash`` is a SHA-256 of the resolved config's non-default values except
``seed``; a point is identified by (``config_hash``, ``seed``).  ``curve_hash`` hashes them
without ``traffic.load`` (and the latency limit a sweep sets per run) and groups the runs of one
curve.  Both are computed from the config a row stores (:func:`config_of_row`), so that rows
written under an older config schema still match.  The sweep (:mod:`.sweep`) and the figures
(:mod:`.curve_lines`) both group rows this way.

A row read back from a file is checked cell by cell (:func:`row_problem`): a number that is
not one, a verdict that is neither ``True`` nor ``False``, a negative seed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from icsim.experiments.pipeline.saturation import as_float, is_load
from icsim.model.config import Config, ConfigError
from icsim.simulator.build import identity as build_identity

IDENTITY_COLUMNS = ("curve", "role", "config_hash", "seed", "curve_hash", "offered_load",
                    "status", "error")
RESULT_COLUMNS = (
    "offered_packets_per_terminal_link_time", "topology", "mode", "saturated",
    "saturation_reason", "accepted_load", "offered_measured_load",
    "latency_ns", "latency_p50_ns", "latency_p99_ns", "latency_max_ns", "network_latency_ns",
    "hops", "dilation", "derouted.total", "packets_measured", "packets_delivered",
    "packets_generated", "completion_time_ns", "source_queue_mean", "source_wait_max_ns",
    "starved_packets", "channel_utilisation_mean", "channel_utilisation_max", "packet_hops",
    "sim_time_ns", "events")
#: the derouted share of each kind the routing algorithms declare (``derouted.<kind>``, their
#: own words) goes just before ``derouted.total``, kinds in name order
PROVENANCE_COLUMNS = ("version", "git_commit", "host", "started_at", "finished_at",
                      "elapsed_s", "wall_s")
#: columns that depend on the machine and the moment, not on the simulation
WALL_COLUMNS = ("host", "started_at", "finished_at", "elapsed_s", "wall_s")
#: result columns that hold text, not numbers
TEXT_RESULT_COLUMNS = ("topology", "mode", "saturated", "saturation_reason")
STATUSES = ("ok", "error")


# ---------------------------------------------------------------------------------- identity
def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def identity(config: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a resolved config: its values that differ from their defaults
    (:func:`icsim.simulator.build.identity`).  A key added to the schema with a default, or a
    stored config written before it existed, leaves this unchanged."""
    try:
        return build_identity(dict(config))
    except (ValidationError, ConfigError):
        return json.loads(_canonical(config))      # not of this schema: hash it as it is


def config_hash(config: Mapping[str, Any]) -> str:
    """Stable hash of a resolved config's :func:`identity`, seed excluded (the seed is the other
    half of a point's key)."""
    d = {k: v for k, v in identity(config).items() if k != "seed"}
    return hashlib.sha256(_canonical(d).encode()).hexdigest()[:16]


def curve_hash(config: Mapping[str, Any]) -> str:
    """Stable hash of a resolved config's :func:`identity` without its load and its latency
    limit (which a sweep sets per run from the curve's baseline): equal for every run of one
    curve."""
    d = identity(config)
    d.get("traffic", {}).pop("load", None)
    run = d.get("run", {})
    run.pop("latency_limit_ns", None)
    if "run" in d and not run:
        d.pop("run")
    return hashlib.sha256(_canonical(d).encode()).hexdigest()[:16]


def point_key(config_hash_: str, seed: Any) -> tuple[str, str]:
    """What identifies one run: its config's hash and its seed, as text."""
    return str(config_hash_), str(seed)


def config_of_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved config stored in a results row's ``config.*`` columns, as nested data
    (lists and mappings stored as JSON text are read back; empty cells are left out, so that
    they take their defaults).

    >>> config_of_row({"config.topology.dims": "[4, 4]", "config.seed": 2, "latency_ns": 9})
    {'topology': {'dims': [4, 4]}, 'seed': 2}
    """
    out: dict[str, Any] = {}
    for col, value in row.items():
        if not col.startswith("config.") or value is None or value == "":
            continue
        if isinstance(value, str) and value[:1] in "[{":
            try:
                value = json.loads(value)
            except ValueError:
                pass
        path = col.split(".")[1:]
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


def row_key(row: Mapping[str, Any]) -> tuple[str, str]:
    """A stored row's point key, from the config it stores (not from its ``config_hash``
    column, which older versions of the schema computed differently)."""
    config = config_of_row(row)
    digest = config_hash(config) if config else row.get("config_hash", "")
    return point_key(digest, row.get("seed", ""))


# ---------------------------------------------------------------------------------- making rows
def cell(value: Any) -> Any:
    """A value as a CSV cell holds it: lists and mappings as JSON text."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=isinstance(value, dict))
    return value


def flatten_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result dict as flat columns: one level of nesting (``derouted.total``) flattened,
    the config two levels (``config.routing.algorithm``); lists and deeper mappings as JSON.

    >>> flatten_result({"derouted": {"total": 0.1}, "config": {"topology": {"dims": [4, 4]}}})
    {'derouted.total': 0.1, 'config.topology.dims': '[4, 4]'}
    """
    row: dict[str, Any] = {}
    for key, value in result.items():
        if key == "config" and isinstance(value, Mapping):
            for section, body in value.items():
                if isinstance(body, Mapping):
                    for name, v in body.items():
                        row[f"config.{section}.{name}"] = cell(v)
                else:
                    row[f"config.{section}"] = cell(body)
        elif isinstance(value, Mapping):
            for name, v in value.items():
                row[f"{key}.{name}"] = cell(v)
        else:
            row[key] = cell(value)
    return row


def make_row(label: str, role: str, config: Mapping[str, Any], outcome: Mapping[str, Any],
             provenance: Mapping[str, str]) -> dict[str, Any]:
    """One results-file row of the curve ``label`` from a worker's outcome
    (:func:`~icsim.experiments.pipeline.execution.execute_point`)."""
    result = outcome.get("result")
    error = outcome.get("error")
    row: dict[str, Any] = {
        "curve": label, "role": role, "config_hash": config_hash(config),
        "seed": config["seed"], "curve_hash": curve_hash(config),
        "offered_load": config["traffic"]["load"],
        "status": "error" if error else "ok", "error": error,
    }
    if result is not None:
        flat = flatten_result({k: v for k, v in result.items() if k != "config"})
        flat.pop("seed", None)
        flat.pop("offered_load", None)
        row.update(flat)
    else:
        row.update({"mode": config["run"]["mode"], "saturated": True,
                    "saturation_reason": "error"})
    row["version"] = row.get("version") or provenance.get("version", "")
    row["git_commit"] = provenance.get("git_commit", "")
    for key in ("host", "started_at", "finished_at", "elapsed_s"):
        row[key] = outcome.get(key)
    row.update(flatten_result({"config": config}))
    return row


def _config_column_order() -> list[str]:
    return list(flatten_result({"config": Config(topology={"dims": [1]}).to_dict()}))


def column_order(columns: Iterable[str]) -> list[str]:
    """The canonical order of a set of columns (same set, same order, whatever came first)."""
    fixed = [*IDENTITY_COLUMNS, *RESULT_COLUMNS]
    config_order = _config_column_order()

    def rank(col: str) -> tuple:
        if col in fixed:
            return (0, fixed.index(col), col)
        if col.startswith("derouted."):
            return (0, fixed.index("derouted.total") - 0.5, col)
        if col.startswith("config."):
            return (3, config_order.index(col) if col in config_order else len(config_order),
                    col)
        if col in PROVENANCE_COLUMNS:
            return (2, PROVENANCE_COLUMNS.index(col), col)
        return (1, 0, col)

    return sorted(set(columns), key=rank)


# ---------------------------------------------------------------------------------- the load unit
#: the offered load in packets per terminal per link time (docs/model.md §6), a record field
UNIT_FIELD = "offered_packets_per_terminal_link_time"


def load_unit(rows: Iterable[Mapping[str, Any]], from_config: bool = False) -> float | None:
    """Packets per terminal per link time at γ = 1 of one curve's runs: from the record field
    (:data:`UNIT_FIELD` over ``offered_load``), or, for runs recorded before it and with
    ``from_config``, from the topology their stored config describes; ``None`` otherwise.

    >>> load_unit([{"offered_load": 0.3, UNIT_FIELD: 0.6}])
    2.0
    >>> load_unit([{"offered_load": 0.3, "config.topology.dims": "[16, 16, 16]"}], True)
    0.5
    """
    first = None
    for r in rows:
        first = r if first is None else first
        packets, load = as_float(r.get(UNIT_FIELD)), as_float(r.get("offered_load"))
        if packets is not None and load:
            return round(packets / load, 12)
    if not from_config or first is None:
        return None
    return _unit_of_topology(_canonical(config_of_row(first).get("topology", {})))


@functools.lru_cache(maxsize=64)
def _unit_of_topology(topology: str) -> float | None:
    from icsim.simulator.build import build_topology
    from icsim.traffic.load import packets_per_link_time

    try:
        section = Config(topology=json.loads(topology) or {"dims": [1]}).topology
        return packets_per_link_time(build_topology(section))
    except (ValidationError, ConfigError, ValueError, OSError):
        return None


# ---------------------------------------------------------------------------------- checking rows
def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def _is_number_column(col: str) -> bool:
    return (col in RESULT_COLUMNS and col not in TEXT_RESULT_COLUMNS
            or col.startswith("derouted.") or col in ("elapsed_s", "wall_s"))


def _shown(value: Any) -> str:
    """A cell as an error message quotes it, whether read as text or parsed (``'-5'``)."""
    return repr(str(value))


def row_problem(row: Mapping[str, Any]) -> str | None:
    """What is wrong with the values of a results row read back from a file (its cells as
    text, or as pandas parsed them), or ``None``: a load that is not a load, a result number
    that is not a finite number (``latency_ns=abc``), a verdict that is neither True nor False
    (``saturated=maybe``), a seed that is not a whole number of at least 0 (``seed=-5``), a
    status other than ok or error.  Empty cells are missing values, not damage.

    >>> row_problem({"offered_load": "0.3", "saturated": "False", "latency_ns": "812.5"})
    >>> row_problem({"offered_load": "0.3", "saturated": "maybe"})
    "saturated 'maybe' is neither True nor False"
    >>> row_problem({"offered_load": "0.3", "seed": "-5"})
    "seed '-5' is not a whole number of at least 0"
    """
    for col, value in row.items():
        if col == "offered_load":
            if not is_load(value):
                return f"offered_load {_shown(value)} is not a load (a number of at least 0)"
        elif _empty(value):
            continue
        elif col == "saturated":
            if value not in (True, False, "True", "False"):
                return f"saturated {_shown(value)} is neither True nor False"
        elif col == "seed":
            number = as_float(value) if not isinstance(value, bool) else None
            if number is None or not number.is_integer() or number < 0 or (
                    isinstance(value, str) and not value.strip().isdigit()):
                return f"seed {_shown(value)} is not a whole number of at least 0"
        elif col == "status":
            if value not in STATUSES:
                return f"status {_shown(value)} is neither {' nor '.join(STATUSES)}"
        elif _is_number_column(col):
            number = as_float(value) if not isinstance(value, bool) else None
            if number is None or not math.isfinite(number):
                return f"{col} {_shown(value)} is not a number"
    return None
