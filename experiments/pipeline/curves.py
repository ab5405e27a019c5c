"""What a sweep sweeps: load grids, the ``--vary`` product, and curves.

A *curve* is one config (after ``--set`` overrides and one combination of ``--vary`` values)
swept over a load grid.  Only an open-loop workload has a load to sweep: a collective or a trace
is the same run at every load (:func:`load_independence`), and a sweep over one is refused
before anything runs.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from icsim.experiments.pipeline.saturation import CurveResult

if TYPE_CHECKING:
    from icsim.model.config import Config

# the config schema and the model are imported where a curve is made: the command line's
# parsers take DEFAULT_LOADS from here (icsim --help imports this module)

DEFAULT_LOADS = "0.05:1.0:0.05"
MAX_GRID_POINTS = 10_000


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
    import yaml

    from icsim.model.config import ConfigError

    if "=" not in item:
        raise ConfigError("--vary", f"expected key.path=V1,V2,..., got {item!r}")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key or not raw.strip():
        raise ConfigError("--vary", f"expected key.path=V1,V2,..., got {item!r}")
    check_varied(key, [None], "--vary", "--loads")
    try:
        values = yaml.safe_load(f"[{raw}]")
    except yaml.YAMLError as exc:
        raise ConfigError(key, f"values {raw!r} are not valid YAML ({exc.problem})") from None
    check_varied(key, values, "--vary", "--loads")
    return key, values


def check_varied(key: Any, values: Any, where: str = "vary", loads: str = "loads") -> None:
    """ConfigError (naming ``where``, or the key) for a varied key that is not a dotted config
    key, that is the load (a sweep's ``loads`` give it), or that has no values."""
    from icsim.model.config import ConfigError

    if not isinstance(key, str) or not key.strip():
        raise ConfigError(where, f"keys are dotted config keys such as 'routing.algorithm', "
                          f"got {key!r}")
    if key.strip() == "traffic.load":
        raise ConfigError(where, f"vary the load with {loads}")
    if not values:
        raise ConfigError(key, "no values to vary over")


# ---------------------------------------------------------------------------------- curves
#: what a workload's run depends on instead of the load, named when a sweep over it is refused
NOT_LOAD = {
    "collective": "traffic.collective, traffic.message_bytes, traffic.interleave, "
                  "traffic.nodes or the routing (routing.algorithm, routing.table.generator)",
    "trace": "traffic.trace, the topology or the routing (routing.algorithm)",
    "app": "traffic.jobs, the topology or the routing (routing.algorithm; icsim run --alone "
           "adds each job's slowdown)",
}


def load_independence(config: Config) -> str | None:
    """Why a load sweep of ``config`` has no γ* to find (its runs do not depend on
    ``traffic.load``), or ``None`` for an open-loop workload, whose load is swept.

    >>> from icsim.model.config import Config
    >>> load_independence(Config(topology={"dims": [4, 4]}))
    >>> print(load_independence(Config(topology={"dims": [4, 4]},
    ...                                traffic={"workload": "trace", "trace": "t.csv"})))
    a trace replay is the same run at every traffic.load: a load sweep would repeat it and
    has no γ* to find; compare its completion time with icsim run, varying traffic.trace,
    the topology or the routing (routing.algorithm) instead
    """
    workload = config.traffic.workload
    if workload == "open":
        return None
    what = {"collective": f"a collective ({config.traffic.collective}, run to completion)",
            "trace": "a trace replay",
            "app": "an application (traffic.jobs, run to completion)"}.get(
                workload, f"the {workload} workload")
    return (f"{what} is the same run at every traffic.load: a load sweep would repeat it and "
            f"has no γ* to find; compare its completion time with icsim run, varying "
            f"{NOT_LOAD.get(workload, 'the config')} instead")


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
    guess_from : tuple of str
        Labels of other curves of the sweep whose γ* is this curve's guess, when it has none
        given: a bisecting sweep runs their probes before this curve's first
        (:class:`~icsim.experiments.pipeline.sweep.Sweep`), and starts this curve at the
        median of their γ* (e.g. the same pattern under another routing algorithm).
    """

    label: str
    data: dict[str, Any]
    grid: list[float]
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    guess: float | None = None
    guess_from: tuple[str, ...] = ()
    _validated: Config | None = field(default=None, repr=False, compare=False)

    def config(self, load: float) -> Config:
        """The validated config at ``load`` (full validation once per curve; raises
        :class:`~icsim.model.config.ConfigError`)."""
        from icsim.model.config import ConfigError, set_path
        from icsim.simulator.build import from_dict

        if self._validated is None:
            data = json.loads(json.dumps(self.data))
            set_path(data, "traffic.load", float(load))
            self._validated = from_dict(data)
        base = self._validated
        if load < 0:
            raise ConfigError("traffic.load", f"must be >= 0, got {load}")
        return base.model_copy(update={"traffic": base.traffic.model_copy(
            update={"load": float(load)})})

    def check(self) -> Config:
        """Validate the curve before its sweep starts: its config (at the grid's first load),
        and that the load is what its runs depend on (:func:`load_independence`)."""
        from icsim.model.config import ConfigError

        config = self.config(self.grid[0])
        why = load_independence(config)
        if why is not None:
            raise ConfigError("traffic.workload", why)
        return config


def make_curves(data: Mapping[str, Any], grid: list[float], overrides: Iterable[str] = (),
                vary: Iterable[tuple[str, list[Any]]] = (), label: str = "base",
                seeds: int = 1) -> list[Curve]:
    """The curves of a sweep: ``data`` with ``--set`` overrides, times the ``--vary`` product.

    ``seeds`` > 1: each combination once per seed ``s, s+1, ..., s+seeds-1`` (``s`` the
    config's seed, default 1), as curves of one label with :attr:`Curve.seed` set.  A value
    listed twice counts once; a key varied twice is a ConfigError.
    """
    from icsim.model.config import Config, ConfigError, apply_overrides, set_path

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


@dataclass
class CurveOutcome:
    """A curve, its search verdict and its rows (in the order they finished or were reused)."""

    curve: Curve
    mode: str
    result: CurveResult
    rows: list[dict[str, Any]]

    @property
    def name(self) -> str:
        """The curve's label, and its seed when it is one of several (``"dor seed=2"``)."""
        return self.curve.label + ("" if self.curve.seed is None else f" seed={self.curve.seed}")
