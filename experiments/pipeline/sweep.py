"""Load sweeps with saturation search, resumable, in parallel (``icsim sweep``).

A sweep is a set of *curves* — one config (after ``--set`` overrides and one combination of
``--vary`` values) swept over a load grid — each climbed by a
:class:`icsim.experiments.pipeline.saturation.CurveSearch`.  Every finished run becomes one row of
``OUT/results.csv``, written the moment it finishes; ``OUT/gamma_star.csv`` (one row per curve),
``OUT/verdicts.csv`` (every run judged sustained or saturated, with the reason) and the plots
are written at the end.

Results file
------------
One tidy row per run: identity columns (``curve``, ``role``, ``config_hash``, ``seed``,
``curve_hash``, ``offered_load``, ``status``, ``error``), every field of the run's JSON result
with nested objects flattened (``derouted.outflank``), provenance (``version``, ``git_commit``,
``host``, ``started_at``, ``finished_at``, ``elapsed_s``) and the resolved config flattened
(``config.routing.algorithm``; lists and free-form mappings such as ``config.topology.dims`` or
``config.traffic.params`` as JSON text).  ``config_hash`` is a SHA-256 of the resolved config
except ``seed``; a point is identified by (``config_hash``, ``seed``).  ``curve_hash`` hashes the
resolved config except ``traffic.load`` and groups the runs of one curve.

Resumption
----------
Each row is written with one ``write`` of one line, flushed and fsynced, so an interrupted
sweep (Ctrl-C, a killed job) leaves every finished point in a valid CSV; at most a truncated
last line, which is cut off on restart (a line that does not match the header is moved to
``results.rejected.csv``).  A restarted sweep reads the file and takes every point whose key is
there from it instead of running it.  If a later row brings a column the file does not have
yet, the file is rewritten once (to a temporary file, then renamed) with the wider header.  A
lock file (``results.csv.lock``) keeps a second sweep from writing the same file.  Rows are
reused regardless of the code version they were made with (a warning names the commits);
delete the file to start over.

Parallelism
-----------
The coordinator keeps ``slots`` runs in flight.  Whenever a slot is free it asks the curves,
fewest-in-flight first and among those the least advanced (fewest finished runs) first, for
their next load.  So every curve's first run starts before any curve's second: the
finite-mode baselines, which a curve's later runs wait for, all come early, and the curves'
chains of runs advance side by side instead of one curve's chain running alone at the end
beside an idle slot (the 16x16x16 reference column of OFR Table 2, replayed with its measured
run times: 3,671 s instead of 3,754 s in the order of the curves, against a bound of 3,625 s).
A climbing curve proposes its lowest grid load that is neither finished nor in flight, until
the finished runs show ``stop_after`` saturated loads in a row (then refinement, if asked,
proceeds one bisection point at a time).  Many curves thus run side by side one load each, and
a single curve speculatively runs up to ``slots`` consecutive loads at once.  A curve never
proposes a load above ``stop_after`` consecutive grid loads already finished saturated, even
while lower loads still run, so speculation wastes at most the runs in flight when the stop
becomes certain; they still finish and are recorded.  γ* never depends on the timing — only
on the finished runs, judged in grid order — but which loads above the stop get run can.
Runs are never cancelled: a finished point is never lost, and a running process cannot be
stopped cleanly anyway.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import yaml
from pydantic import ValidationError

from icsim.experiments.pipeline.confidence import mean_ci
from icsim.experiments.pipeline.execution import (Executor, Progress, SerialExecutor,
                                                  cut_partial_line, execute_point, git_commit,
                                                  package_version)
from icsim.experiments.pipeline.outputs import Outputs
from icsim.experiments.pipeline.saturation import (BASELINE_LOAD, STOP_AFTER, CurveResult,
                                                   CurveSearch, as_float, is_load, load_key,
                                                   sustained_above)
from icsim.model.config import Config, ConfigError, apply_overrides, set_path
from icsim.simulator.build import from_dict
from icsim.simulator.build import identity as build_identity

RESULTS_NAME = "results.csv"
SUMMARY_NAME = "gamma_star.csv"
VERDICTS_NAME = "verdicts.csv"
LOAD_SUMMARY_NAME = "load_summary.csv"
DEFAULT_LOADS = "0.05:1.0:0.05"
MAX_GRID_POINTS = 10_000

IDENTITY_COLUMNS = ("curve", "role", "config_hash", "seed", "curve_hash", "offered_load",
                    "status", "error")
RESULT_COLUMNS = (
    "mode", "saturated", "saturation_reason", "accepted_load", "offered_measured_load",
    "latency_ns", "latency_p50_ns", "latency_p99_ns", "latency_max_ns", "network_latency_ns",
    "hops", "dilation", "derouted.outflank", "derouted.wraparound", "derouted.orthant",
    "derouted.total", "packets_measured", "packets_delivered", "packets_generated",
    "completion_time_ns", "source_queue_mean", "channel_utilisation_mean",
    "channel_utilisation_max", "packet_hops", "sim_time_ns", "events")
PROVENANCE_COLUMNS = ("version", "git_commit", "host", "started_at", "finished_at",
                      "elapsed_s", "wall_s")
#: columns that depend on the machine and the moment, not on the simulation
WALL_COLUMNS = ("host", "started_at", "finished_at", "elapsed_s", "wall_s")


# ---------------------------------------------------------------------------------- grids
def parse_loads(spec: str) -> list[float]:
    """Parse a load grid: ``start:stop:step`` (stop included) or a comma list.

    Decimal arithmetic keeps grid points exact (``0.15``, not ``0.15000000000000002``).

    Examples
    --------
    >>> parse_loads("0.1:0.3:0.05")
    [0.1, 0.15, 0.2, 0.25, 0.3]
    >>> parse_loads("0.5, 0.1,0.3")
    [0.1, 0.3, 0.5]
    >>> parse_loads("0.1,nan")
    Traceback (most recent call last):
    ...
    ValueError: --loads: loads must be finite numbers, got 'nan' in '0.1,nan'
    """
    text = spec.strip()
    usage = (f"--loads: expected START:STOP:STEP (STOP included, STEP > 0) or a comma list of "
             f"loads, got {spec!r}")

    def number(part: str) -> Decimal:
        try:
            x = Decimal(part.strip())
        except InvalidOperation:
            raise ValueError(usage) from None
        if not x.is_finite() or abs(float(x)) == float("inf"):
            raise ValueError(f"--loads: loads must be finite numbers, got {part.strip()!r} "
                             f"in {spec!r}")
        return x

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ValueError(usage)
        start, stop, step = (number(p) for p in parts)
        if step <= 0 or start > stop:
            raise ValueError(usage)
        if (stop - start) / step > MAX_GRID_POINTS:
            raise ValueError(f"--loads: {spec!r} makes a grid of more than "
                             f"{MAX_GRID_POINTS:,} loads")
        loads, x = [], start
        while x <= stop:
            loads.append(x)
            x += step
    else:
        loads = [number(p) for p in text.split(",") if p.strip()]
    if not loads or any(x <= 0 or float(x) == 0 for x in loads):
        raise ValueError(f"--loads: loads must be positive, got {spec!r}")
    return sorted({float(x) for x in loads})


def parse_vary(item: str) -> tuple[str, list[Any]]:
    """``"routing.algorithm=abr,por,ofr"`` -> ``("routing.algorithm", ["abr", "por", "ofr"])``.

    The values are read as one YAML flow sequence, so list values work:
    ``topology.dims=[4,4],[8,8]``.
    """
    if "=" not in item:
        raise ConfigError("--vary", f"expected key.path=V1,V2,..., got {item!r}")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key or not raw.strip():
        raise ConfigError("--vary", f"expected key.path=V1,V2,..., got {item!r}")
    if key == "traffic.load":
        raise ConfigError("--vary", "vary the load with --loads")
    try:
        values = yaml.safe_load(f"[{raw}]")
    except yaml.YAMLError as exc:
        raise ConfigError(key, f"values {raw!r} are not valid YAML ({exc.problem})") from None
    if not values:
        raise ConfigError(key, "no values to vary over")
    return key, values


# ---------------------------------------------------------------------------------- curves
@dataclass
class Curve:
    """One config swept over a load grid.

    Attributes
    ----------
    label : str
        Human name (``"routing.algorithm=dor"``); the ``curve`` column.
    data : dict
        Config mapping with every override applied except the load.
    grid : list of float
        Loads to climb.
    params : dict
        The values that distinguish this curve from the others of the sweep (for summaries).
    seed : int, optional
        Set when the curve is one of several seeds of the same config (``--seeds N``): the
        curves with equal ``label`` are its replications, and the sweep runs every load any of
        them runs with all of them.
    guess : float, optional
        Where γ* is expected (e.g. a published value): a bisecting search starts there
        (:class:`~icsim.experiments.pipeline.saturation.CurveSearch`); ignored by climbing.
    """

    label: str
    data: dict[str, Any]
    grid: list[float]
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    guess: float | None = None
    _validated: Config | None = field(default=None, repr=False, compare=False)

    def config(self, load: float) -> Config:
        """The validated config at ``load`` (full validation once per curve; raises
        :class:`~icsim.model.config.ConfigError`)."""
        if self._validated is None:
            data = json.loads(json.dumps(self.data))
            set_path(data, "traffic.load", float(load))
            self._validated = from_dict(data)
        base = self._validated
        if load < 0:
            raise ConfigError("traffic.load", f"must be >= 0, got {load}")
        return base.model_copy(update={"traffic": base.traffic.model_copy(
            update={"load": float(load)})})


def make_curves(data: Mapping[str, Any], grid: list[float], overrides: Iterable[str] = (),
                vary: Iterable[tuple[str, list[Any]]] = (), label: str = "base",
                seeds: int = 1) -> list[Curve]:
    """The curves of a sweep: ``data`` with ``--set`` overrides, times the ``--vary`` product.

    ``seeds`` > 1: each combination once per seed ``s, s+1, ..., s+seeds-1`` (``s`` the
    config's seed, default 1), as curves of one label with :attr:`Curve.seed` set.  A value
    listed twice counts once; a key varied twice is a ConfigError.
    """
    base = apply_overrides(dict(data), list(overrides))
    vary = list(vary)
    keys = [key for key, _ in vary]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:                 # the product would set the key twice: copies of one curve
        raise ConfigError("--vary", f"{', '.join(twice)} varied twice; list its values in one "
                                    f"--vary ({twice[0]}=V1,V2,...)")
    # a value listed twice would make the same curve twice
    vary = [(key, [v for i, v in enumerate(values) if v not in values[:i]])
            for key, values in vary]
    if seeds < 1:
        raise ConfigError("--seeds", f"must be at least 1, got {seeds}")
    if seeds > 1 and any(key == "seed" for key, _ in vary):
        raise ConfigError("--seeds", "give either --seeds or --vary seed=..., not both")
    first_seed = base.get("seed", Config.model_fields["seed"].default)
    if not isinstance(first_seed, int):
        raise ConfigError("seed", f"must be a whole number, got {first_seed!r}")
    curves = []
    for combo in itertools.product(*(values for _, values in vary)):
        d = json.loads(json.dumps(base))
        params = {}
        for (key, _), value in zip(vary, combo):
            set_path(d, key, value)
            params[key] = value
        name = " ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                        for k, v in params.items()) or label
        if seeds == 1:
            curves.append(Curve(name, d, list(grid), params))
            continue
        for seed in range(first_seed, first_seed + seeds):
            ds = json.loads(json.dumps(d))
            ds["seed"] = seed
            curves.append(Curve(name, ds, list(grid), dict(params), seed=seed))
    return curves


# ---------------------------------------------------------------------------------- rows
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


def config_of_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved config stored in a results row's ``config.*`` columns, as nested data
    (lists and mappings stored as JSON text are read back; empty cells are left out, so that
    they take their defaults)."""
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


def point_key(config_hash_: str, seed: Any) -> tuple[str, str]:
    return str(config_hash_), str(seed)


def flatten_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result dict as flat columns: one level of nesting (``derouted.total``) flattened,
    the config two levels (``config.routing.algorithm``); lists and deeper mappings as JSON."""
    row: dict[str, Any] = {}
    for key, value in result.items():
        if key == "config" and isinstance(value, Mapping):
            for section, body in value.items():
                if isinstance(body, Mapping):
                    for name, v in body.items():
                        row[f"config.{section}.{name}"] = _cell(v)
                else:
                    row[f"config.{section}"] = _cell(body)
        elif isinstance(value, Mapping):
            for name, v in value.items():
                row[f"{key}.{name}"] = _cell(v)
        else:
            row[key] = _cell(value)
    return row


def _cell(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=isinstance(value, dict))
    return value


def make_row(curve: Curve, role: str, config: Mapping[str, Any], outcome: Mapping[str, Any],
             provenance: Mapping[str, str]) -> dict[str, Any]:
    """One results-file row from a worker's outcome (:func:`execute_point`)."""
    result = outcome.get("result")
    error = outcome.get("error")
    row: dict[str, Any] = {
        "curve": curve.label, "role": role, "config_hash": config_hash(config),
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
        if col.startswith("config."):
            return (3, config_order.index(col) if col in config_order else len(config_order),
                    col)
        if col in PROVENANCE_COLUMNS:
            return (2, PROVENANCE_COLUMNS.index(col), col)
        return (1, 0, col)

    return sorted(set(columns), key=rank)


# ---------------------------------------------------------------------------------- the file
def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return ""
    # one physical line per row, so that a truncated last line is the only possible damage
    return str(value).replace("\r", " ").replace("\n", " | ")


def _parse_cell(text: str) -> Any:
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class SweepError(RuntimeError):
    """A sweep cannot go on (another sweep holds its file, the execution backend failed);
    every finished point is saved."""


class ResultsFile:
    """The append-only CSV of a sweep, one complete line per finished run.

    Parameters
    ----------
    path : Path
        ``OUT/results.csv``; created with its directory on the first row.

    Notes
    -----
    Damage is repaired when the file is read: a truncated last line (a write cut short by a
    kill) is cut off; a line whose field count does not match the header, or whose
    ``offered_load`` is not a load (a manual edit), is moved to ``results.rejected.csv`` beside
    it.  Either way the point is run again.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.header: list[str] | None = None
        self.dropped = 0

    @property
    def rejected_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".rejected.csv")

    def _read_raw(self) -> tuple[list[str] | None, list[dict[str, str]], list[str]]:
        """Header, rows as text, and malformed lines; cuts a truncated last line on disk."""
        if not self.path.exists():
            return None, [], []
        if cut_partial_line(self.path, say=False):      # counted in the sweep's own line
            self.dropped += 1
        data = self.path.read_bytes() if self.path.exists() else b""
        lines = data.decode("utf-8", errors="replace").splitlines()
        if not lines:
            return None, [], []
        header = next(csv.reader([lines[0]]))
        load_at = header.index("offered_load") if "offered_load" in header else None
        rows, bad = [], []
        for line in lines[1:]:
            if not line.strip():
                continue
            cells = next(csv.reader([line]), [])
            if len(cells) != len(header) or load_at is not None \
                    and not is_load(cells[load_at]):
                bad.append(line)
                continue
            rows.append(dict(zip(header, cells)))
        return header, rows, bad

    def _quarantine(self, header: list[str], bad: list[str]) -> None:
        new = not self.rejected_path.exists()
        with open(self.rejected_path, "a", encoding="utf-8") as f:
            if new:
                f.write("# lines of results.csv that did not match its header:\n")
                f.write(",".join(header) + "\n")
            f.writelines(line + "\n" for line in bad)
        self.dropped += len(bad)

    def load(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Every complete row, keyed by (config_hash, seed), values parsed to Python types."""
        header, rows, bad = self._read_raw()
        self.header = header
        if bad:
            self._quarantine(header, bad)
            self._write(header, rows)
        out = {}
        for r in rows:
            parsed = {k: _parse_cell(v) for k, v in r.items()}
            out[row_key(parsed)] = parsed
        return out

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row durably (one line, flushed and fsynced)."""
        if self.header is None and self.path.exists():
            self.load()
        if self.header is None or not set(row) <= set(self.header):
            header, rows, bad = self._read_raw()
            if bad:
                self._quarantine(header, bad)
            self._write(column_order(set(row) | set(header or ())), rows)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([_text(row.get(c)) for c in self.header])
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())

    def _write(self, header: list[str], rows: list[dict[str, str]]) -> None:
        """Replace the file atomically (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow([r.get(c, "") for c in header])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self.header = header

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold ``results.csv.lock`` so that two sweeps never write one file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:                      # not POSIX: no protection
            yield
            return
        with open(self.path.with_name(self.path.name + ".lock"), "w") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SweepError(f"{self.path} is being written by another sweep "
                                 f"(it holds {f.name})") from None
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------- the loop
@dataclass
class CurveOutcome:
    """A curve, its search verdict and its rows (in the order they finished or were reused)."""

    curve: Curve
    mode: str
    result: CurveResult
    rows: list[dict[str, Any]]


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did."""

    curves: list[CurveOutcome]
    ran: int
    reused: int
    out_dir: Path
    files: list[Path]
    wall_s: float
    outputs: Outputs = field(default_factory=Outputs)

    @property
    def rows(self) -> list[dict[str, Any]]:
        seen, out = set(), []
        for c in self.curves:
            for r in c.rows:
                key = point_key(r["config_hash"], r["seed"])
                if key not in seen:
                    seen.add(key)
                    out.append(r)
        return out


def run_sweep(curves: list[Curve], out_dir: str | Path, *, executor: Executor | None = None,
              run_fn: Callable | None = None, stop_after: int = STOP_AFTER, refine: int = 0,
              full: bool = False, baseline_load: float = BASELINE_LOAD, search: str = "climb",
              run_missing: bool = True, plots: bool = True, progress: Progress | bool | None = None,
              label: str = "sweep", outputs: Outputs | None = None) -> SweepOutcome:
    """Run (or resume) a sweep; write ``results.csv``, ``gamma_star.csv``, ``verdicts.csv``
    (with several seeds also ``load_summary.csv``) and plots to ``out_dir``.

    Parameters
    ----------
    curves : list of Curve
        What to sweep (see :func:`make_curves`).  Curves of one label with different
        :attr:`Curve.seed` are replications: each runs its own search (γ* per seed), and every
        load one of them runs is run with all of them, so that each load has every seed.
    out_dir : path
        Output directory; an existing ``results.csv`` there is resumed.
    executor : Executor, optional
        Where runs go; default in-process (:class:`SerialExecutor`).  Not closed here.
    run_fn : callable, optional
        ``run_fn(Config) -> result dict`` instead of the simulator (tests inject fakes).
    stop_after, refine, full, baseline_load, search
        Saturation search options (:class:`icsim.experiments.pipeline.saturation.CurveSearch`); a bisecting
        search starts from every grid load of the curve already in ``results.csv``.
    run_missing : bool
        False: run nothing, judge the curves from the points already in ``results.csv``
        (a curve whose search needs another run is reported incomplete).
    plots : bool
        Draw the figures at the end (:func:`icsim.experiments.pipeline.plots.plot_results`).
    progress : Progress or bool, optional
        Progress line on stderr; ``None``: only when stderr is a terminal.
    outputs : Outputs, optional
        Writes the summaries and figures (unchanged files untouched, committed files kept
        unless forced: :mod:`icsim.experiments.pipeline.outputs`); what happened to each file is
        in its ``status``.

    Raises
    ------
    ConfigError
        A curve's config is invalid: raised before anything runs.
    SweepError
        Another sweep holds ``results.csv``, or the execution backend failed.
    KeyboardInterrupt
        Passed on (close the executor with ``abort``); every finished point is already saved.
    """
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    executor = executor or SerialExecutor()
    outputs = outputs if outputs is not None else Outputs()
    if not isinstance(progress, Progress):
        progress = Progress(label, enabled=progress)

    # Validate everything before the first run (docs/model.md §9): a config error stops the
    # sweep here.
    searches = []
    for c in curves:
        cfg = c.config(c.grid[0])
        searches.append(CurveSearch(c.grid, cfg.run.mode, stop_after=stop_after,
                                    refine_steps=refine, full=full, baseline_load=baseline_load,
                                    search=search,
                                    guess=c.guess if search == "bisect" else None))
    provenance = {"version": package_version(), "git_commit": git_commit()}
    siblings = [[j for j, d in enumerate(curves) if j != i and d.seed is not None
                 and c.seed is not None and d.label == c.label] for i, c in enumerate(curves)]

    store = ResultsFile(out_dir / RESULTS_NAME)
    rows_of: list[list[dict[str, Any]]] = [[] for _ in curves]
    in_flight: list[set[float]] = [set() for _ in curves]
    roles: list[dict[float, str]] = [{} for _ in curves]     # every load run or running
    waiting: dict[tuple[str, str], list[tuple[int, float]]] = {}
    handles: dict[Any, tuple[tuple[str, str], str, int, dict]] = {}
    ran = reused = 0
    old_commits: set[str] = set()
    finished: dict[tuple[str, str], dict[str, Any]] = {}

    def record(ci: int, load: float, row: dict[str, Any], role: str) -> None:
        searches[ci].record(load, row)
        rows_of[ci].append(row)
        roles[ci].setdefault(load_key(load), role)

    def seed_fill(ci: int) -> tuple[float, str] | None:
        """A load another seed of this curve runs (or ran) that this seed has not: every load
        of a multi-seed curve is run with every seed."""
        mine = set(searches[ci].points) | {load_key(x) for x in in_flight[ci]}
        for cj in siblings[ci]:
            for load, role in sorted(roles[cj].items()):
                if load not in mine:
                    return load, role
        return None

    def missing_fills(ci: int) -> int:
        mine = set(searches[ci].points) | {load_key(x) for x in in_flight[ci]}
        return len({x for cj in siblings[ci] for x in roles[cj]} - mine)

    stalled: set[int] = set()      # run_missing=False: curves whose next point is not run

    def point_config(ci: int, load: float) -> tuple[dict[str, Any], str, str | None]:
        """The config of curve ``ci``'s run at ``load``, its key, and the key of a finished run
        that serves as well (or ``None``).  Under ``run.stop_when_saturated`` a finite-mode run
        after the baseline gets the curve's latency limit (:meth:`CurveSearch.latency_limit`),
        so that it stops once it is saturated for sure; a run of the same point made without
        the limit (one that started before the baseline was known) serves as well."""
        cfg = curves[ci].config(load).to_dict()
        plain = point_key(config_hash(cfg), cfg["seed"])
        run = cfg["run"]
        limit = searches[ci].latency_limit(load)
        if run["stop_when_saturated"] and run["latency_limit_ns"] is None and limit is not None:
            run["latency_limit_ns"] = limit
            return cfg, point_key(config_hash(cfg), cfg["seed"]), plain
        return cfg, plain, None

    def finished_row(key: str, alias: str | None) -> dict[str, Any] | None:
        row = finished.get(key)
        return row if row is not None or alias is None else finished.get(alias)

    def fill() -> None:
        nonlocal reused
        while len(handles) < executor.slots:
            # fewest in flight, then least advanced: every curve's first run (a finite-mode
            # baseline, which its later runs wait for) goes before any curve's second
            order = sorted(range(len(curves)),
                           key=lambda i: (len(in_flight[i]), len(searches[i].points)))
            for ci in order:
                if ci in stalled:
                    continue
                proposal = searches[ci].next_load(in_flight[ci]) or seed_fill(ci)
                if proposal is None:
                    continue
                load, role = proposal
                cfg, key, alias = point_config(ci, load)
                row = finished_row(key, alias)
                if row is not None:
                    commit = str(row.get("git_commit") or "")
                    if commit and commit != provenance["git_commit"]:
                        old_commits.add(commit)
                    record(ci, load, row, role)
                    reused += 1
                    progress.reused += 1
                elif not run_missing:
                    stalled.add(ci)
                elif key in waiting:
                    waiting[key].append((ci, load))
                    in_flight[ci].add(load)
                    roles[ci].setdefault(load_key(load), role)
                else:
                    waiting[key] = [(ci, load)]
                    in_flight[ci].add(load)
                    roles[ci].setdefault(load_key(load), role)
                    handles[executor.submit(execute_point, cfg, run_fn)] = (key, role, ci, cfg)
                break
            else:
                return

    with store.lock():
        finished.update(store.load())
        if store.dropped:
            print(f"{label}: dropped {store.dropped} damaged line(s) of {store.path}; "
                  f"their points run again", file=sys.stderr)
        if search == "bisect":
            for ci, c in enumerate(curves):
                # the finite-mode baseline first: the other loads' configs depend on it
                base = searches[ci].baseline
                for load in sorted(c.grid, key=lambda x: load_key(x) != base):
                    row = finished_row(*point_config(ci, load)[1:])
                    if row is not None:
                        record(ci, load, row, "grid")
                        reused += 1
                        progress.reused += 1
        try:
            fill()
            while handles:
                for h in executor.wait(list(handles)):
                    key, role, ci, cfg = handles.pop(h)
                    try:
                        outcome = executor.result(h)
                    except Exception as exc:
                        # the run itself never raises (execute_point records its errors):
                        # this is the backend (a worker process died, a dask worker was lost)
                        raise SweepError(
                            f"execution backend failed ({type(exc).__name__}: {exc}); the "
                            f"{len(finished)} finished points are saved in {store.path}, run "
                            f"again to resume") from exc
                    row = make_row(curves[ci], role, cfg, outcome, provenance)
                    store.append(row)
                    finished[key] = row
                    ran += 1
                    progress.ran += 1
                    for cj, load in waiting.pop(key):
                        in_flight[cj].discard(load)
                        record(cj, load, row, role)
                    status = ("error" if row["status"] == "error" else
                              "saturated" if row.get("saturated") else "ok")
                    seed = f" seed {cfg['seed']}" if curves[ci].seed is not None else ""
                    last = f"{curves[ci].label}{seed} γ={cfg['traffic']['load']:g} {status}"
                    fill()
                    progress.update(len(handles), sum(
                        s.remaining_bound(f) + missing_fills(i)
                        for i, (s, f) in enumerate(zip(searches, in_flight))), last)
        finally:
            progress.close()
    if old_commits:
        print(f"{label}: reused points computed with other code versions "
              f"({', '.join(sorted(old_commits))}; now {provenance['git_commit'] or 'unknown'})",
              file=sys.stderr)

    outcomes = [CurveOutcome(c, s.mode, s.result(), rows_of[i])
                for i, (c, s) in enumerate(zip(curves, searches))]
    files = [write_summary(outcomes, out_dir / SUMMARY_NAME, outputs),
             write_verdicts(outcomes, out_dir / VERDICTS_NAME, outputs)]
    if any(c.seed is not None for c in curves):
        files.append(write_load_summary(outcomes, out_dir / LOAD_SUMMARY_NAME, outputs))
    if plots:
        from icsim.experiments.pipeline.plots import plot_results

        sweep_rows = [r for o in outcomes for r in o.rows]
        files += plot_results(sweep_rows, out_dir, outputs=outputs)
    return SweepOutcome(outcomes, ran, reused, out_dir, [store.path, *files],
                        time.perf_counter() - t0, outputs)


# ---------------------------------------------------------------------------------- summary
SUMMARY_COLUMNS = ("curve", "mode", "gamma_star", "gamma_star_refined", "first_saturated",
                   "first_saturated_reason", "complete", "baseline_latency_ns", "points",
                   "curve_hash")
#: gamma_star.csv of a sweep with several seeds: the spread of γ* over the seeds of the curve
SPREAD_COLUMNS = ("seeds", "gamma_star_mean", "gamma_star_sd", "gamma_star_min",
                  "gamma_star_max")


def _groups(outcomes: list[CurveOutcome]) -> dict[str, list[CurveOutcome]]:
    """Outcomes by curve label: the seeds of one curve together."""
    groups: dict[str, list[CurveOutcome]] = {}
    for o in outcomes:
        groups.setdefault(o.curve.label, []).append(o)
    return groups


def _multi_seed(outcomes: list[CurveOutcome]) -> bool:
    return any(o.curve.seed is not None for o in outcomes)


def gamma_star_spread(group: list[CurveOutcome]) -> dict[str, Any]:
    """Seeds, mean, sample standard deviation, min and max of the seeds' γ* (the seeds without
    a sustained load count in ``seeds`` but not in the statistics)."""
    stars = [o.result.gamma_star for o in group if o.result.gamma_star is not None]
    out: dict[str, Any] = {"seeds": len(group), "gamma_star_mean": None, "gamma_star_sd": None,
                           "gamma_star_min": None, "gamma_star_max": None}
    if stars:
        mean = sum(stars) / len(stars)
        out.update(gamma_star_mean=round(mean, 9), gamma_star_min=min(stars),
                   gamma_star_max=max(stars))
        if len(stars) > 1:
            var = sum((x - mean) ** 2 for x in stars) / (len(stars) - 1)
            out["gamma_star_sd"] = round(var ** 0.5, 9)
    return out


def summary_rows(outcomes: list[CurveOutcome]) -> list[dict[str, Any]]:
    """One dict per curve (and seed): its varied parameters and its saturation verdict; with
    several seeds also the spread of γ* over the curve's seeds (:func:`gamma_star_spread`)."""
    spread = {label: gamma_star_spread(g) for label, g in _groups(outcomes).items()}
    rows = []
    for o in outcomes:
        r = o.result
        row = {"curve": o.curve.label, **{k: _cell(v) for k, v in o.curve.params.items()},
               "mode": o.mode, "gamma_star": r.gamma_star,
               "gamma_star_refined": r.gamma_star_refined,
               "first_saturated": r.first_saturated,
               "first_saturated_reason": r.first_saturated_reason, "complete": r.complete,
               "baseline_latency_ns": r.baseline_latency_ns, "points": len(o.rows),
               "curve_hash": o.rows[0]["curve_hash"] if o.rows else ""}
        if o.curve.seed is not None:
            row.update(seed=o.curve.seed, **spread[o.curve.label])
        rows.append(row)
    return rows


def _csv_text(columns: list[str], rows: Iterable[Iterable[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_text(x) for x in r])
    return buf.getvalue()


def write_summary(outcomes: list[CurveOutcome], path: Path,
                  outputs: Outputs | None = None) -> Path:
    """Write ``gamma_star.csv`` (one row per curve; per curve and seed with several seeds,
    with the spread columns)."""
    rows = summary_rows(outcomes)
    params = [k for o in outcomes for k in o.curve.params]
    columns = ["curve", *(["seed"] if _multi_seed(outcomes) else []), *dict.fromkeys(params),
               *SUMMARY_COLUMNS[1:], *(SPREAD_COLUMNS if _multi_seed(outcomes) else ())]
    (outputs or Outputs()).write(path, _csv_text(columns, ([r.get(c) for c in columns]
                                                           for r in rows)))
    return path


def write_verdicts(outcomes: list[CurveOutcome], path: Path,
                   outputs: Outputs | None = None) -> Path:
    """Write ``verdicts.csv``: every run of the sweep judged sustained or saturated by its
    curve's (and seed's) rule (in finite mode this is where the 1.2 x rule's outcome is
    visible)."""
    columns = ["curve", "offered_load", "role", "sustained", "reason", "config_hash", "seed"]
    rows = []
    for o in outcomes:
        for r in sorted(o.rows, key=lambda r: float(r["offered_load"])):
            v = o.result.verdicts.get(load_key(r["offered_load"]))
            rows.append((o.curve.label, r["offered_load"], r.get("role"),
                         None if v is None else v.sustained, None if v is None else v.reason,
                         r["config_hash"], r["seed"]))
    (outputs or Outputs()).write(path, _csv_text(columns, rows))
    return path


LOAD_SUMMARY_COLUMNS = ("curve", "offered_load", "seeds", "sustained_seeds",
                        "latency_ns_mean", "latency_ns_ci95", "accepted_load_mean",
                        "accepted_load_ci95")


def load_summary_rows(outcomes: list[CurveOutcome]) -> list[dict[str, Any]]:
    """Per curve and load, over its seeds: how many ran it and sustained it, and the mean and
    the 95 % confidence half-width (Student t) of the mean latency and the accepted load."""
    out = []
    for label, group in _groups(outcomes).items():
        by_load: dict[float, list[tuple[CurveOutcome, dict]]] = {}
        for o in group:
            for r in o.rows:
                by_load.setdefault(load_key(r["offered_load"]), []).append((o, r))
        for load in sorted(by_load):
            pairs = by_load[load]
            row: dict[str, Any] = {"curve": label, **{k: _cell(v) for k, v in
                                                      group[0].curve.params.items()},
                                   "offered_load": load, "seeds": len(pairs)}
            row["sustained_seeds"] = sum(
                1 for o, _ in pairs if (v := o.result.verdicts.get(load)) and v.sustained)
            for col in ("latency_ns", "accepted_load"):
                mean, half, n = mean_ci(as_float(r.get(col)) for _, r in pairs)
                row[f"{col}_mean"] = None if n == 0 else round(mean, 6)
                row[f"{col}_ci95"] = None if n < 2 else round(half, 6)
            out.append(row)
    return out


def write_load_summary(outcomes: list[CurveOutcome], path: Path,
                       outputs: Outputs | None = None) -> Path:
    """Write ``load_summary.csv`` (:func:`load_summary_rows`)."""
    rows = load_summary_rows(outcomes)
    params = [k for o in outcomes for k in o.curve.params]
    columns = ["curve", *dict.fromkeys(params), *LOAD_SUMMARY_COLUMNS[1:]]
    (outputs or Outputs()).write(path, _csv_text(columns, ([r.get(c) for c in columns]
                                                           for r in rows)))
    return path


def flip_notes(outcomes: list[CurveOutcome]) -> list[str]:
    """One line per curve whose verdicts flip back to sustained above its first saturated load
    (:func:`~icsim.experiments.pipeline.saturation.sustained_above`): the loads, and what would
    settle them."""
    notes = []
    for o in outcomes:
        above = sustained_above(o.result)
        if not above:
            continue
        r = o.result
        label = o.curve.label + ("" if o.curve.seed is None else f" (seed {o.curve.seed})")
        longer = ("a longer window (run.measure_us)" if o.mode == "window"
                  else "more messages per node (run.messages_per_node)")
        notes.append(f"note: {label} is saturated at {r.first_saturated:g} "
                     f"({r.first_saturated_reason}) yet sustained at "
                     f"{', '.join(f'{x:g}' for x in above)} above it; γ* counts only the loads "
                     f"below the first saturated one. A verdict that flips back is more often "
                     f"noise than the network: {longer} or more seeds (--seeds) settle it.")
    return notes


def format_summary(outcomes: list[CurveOutcome]) -> str:
    """A plain-text table of γ* per curve (full curve names; with several seeds, γ* as the
    mean over the seeds with its range, and each seed's)."""
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.4g}"

    width = max([len("curve"), *(len(o.curve.label) for o in outcomes)])
    if _multi_seed(outcomes):
        lines = [f"{'curve':{width}s} {'mode':7s} {'seeds':>5s} {'γ* mean':>8s} "
                 f"{'range':>11s}  γ* per seed"]
        for label, group in _groups(outcomes).items():
            spread = gamma_star_spread(group)
            rng = ("-" if spread["gamma_star_min"] is None else
                   f"{f(spread['gamma_star_min'])}–{f(spread['gamma_star_max'])}")
            per_seed = ", ".join(f"{o.curve.seed}: {f(o.result.gamma_star)}" for o in group)
            note = "" if all(o.result.complete for o in group) else "  [incomplete]"
            counted = sum(o.result.gamma_star is not None for o in group)
            if 0 < counted < len(group):
                note += (f"  [mean and range over {counted} of {len(group)} seeds; the "
                         f"others have no γ*]")
            lines.append(f"{label:{width}s} {group[0].mode:7s} {len(group):>5d} "
                         f"{f(spread['gamma_star_mean']):>8s} {rng:>11s}  {per_seed}{note}")
        return "\n".join(lines)
    lines = [f"{'curve':{width}s} {'mode':7s} {'γ*':>6s} {'refined':>8s}  first saturated"]
    for o in outcomes:
        r = o.result
        sat = "none" if r.first_saturated is None else \
            f"{r.first_saturated:g} ({r.first_saturated_reason})"
        note = "" if r.complete else "  [incomplete]"
        lines.append(f"{o.curve.label:{width}s} {o.mode:7s} {f(r.gamma_star):>6s} "
                     f"{f(r.gamma_star_refined):>8s}  {sat}{note}")
    return "\n".join(lines)
