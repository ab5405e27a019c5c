"""One simulation run: build the model from a config, run it on an engine, make the result.

>>> from icsim.model.config import config_from_dict
>>> cfg = config_from_dict({"topology": {"kind": "torus", "dims": [4, 4]},
...                         "traffic": {"load": 0.2, "message_packets": 4},
...                         "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 50}})
>>> r = Simulation(cfg).run()
>>> r["saturated"], abs(r["accepted_load"] - 0.2) < 0.05, r["engine"]
(False, True, 'compiled')
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from icsim.model.config import Config, ConfigError
from icsim.model.registry import unknown_name
from icsim.simulator.build import Model, build
from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
from icsim.simulator.results import Result, make_result


#: how much slower the SimPy engine is than the compiled one (``icsim bench``: 35-50x)
SIMPY_SLOWER = "about 40 times"
_SAID: set[str] = set()


def say_simpy(why: str) -> None:
    """Say on stderr, once per process and reason, that ``auto`` runs the SimPy engine."""
    if why not in _SAID:
        _SAID.add(why)
        print(f"icsim: running on the SimPy engine, {SIMPY_SLOWER} slower than the compiled "
              f"one: {why}", file=sys.stderr, flush=True)


def make_engine(model: Model, name: str | None = None, progress: Callable | None = None,
                progress_every_ps: int = 0) -> Any:
    """The engine ``name`` (default ``run.engine``) for a built model.  ``auto`` takes the
    compiled engine where it supports the config, the SimPy engine otherwise."""
    # numba's machine code loads with the compiled engine: only when a run may use it
    from icsim.simulator.engines.compiled import CompiledEngine, supports

    name = name or model.config.run.engine
    if name not in ("auto", "simpy", "compiled"):
        raise ConfigError("run.engine", unknown_name("engine", name, ("auto", "simpy", "compiled")))
    why = supports(model.spec)
    if name == "auto":
        name = "simpy" if why else "compiled"
        if why:
            say_simpy(why)
    if name == "compiled":
        if why:
            raise ConfigError("run.engine", f"the compiled engine cannot run this config: {why} "
                              f"(use run.engine: simpy or auto)")
        return CompiledEngine(model.spec, model.workload, model.routing_stream, progress,
                              progress_every_ps)
    return SimpyEngine(model.spec, model.workload, RandomStream(model.routing_stream),
                       progress, progress_every_ps)


class Simulation:
    """Everything one run needs, built once from a :class:`Config` (nothing started): the
    :class:`~icsim.simulator.build.Model` and the engine that will run it (``.engine``).

    ``progress(now_ps, end_ps, delivered, expected)`` is called every ``progress_every_ps`` of
    simulated time (default: 1/200 of a window-mode run, every µs in finite mode)."""

    def __init__(self, config: Config, progress: Callable | None = None,
                 progress_every_ps: int = 0, engine: str | None = None):
        self.model: Model = build(config)
        self.config = self.model.config
        if progress is not None and progress_every_ps <= 0:
            # 1/200 of a run with an end (window mode), every simulated µs otherwise
            horizon = self.model.spec.horizon_ps
            progress_every_ps = max(1, horizon // 200) if horizon else 1_000_000
        self.engine = make_engine(self.model, engine, progress, progress_every_ps)

    def run(self) -> Result:
        """Run to the end; the result record (a dict, with the run's latencies and channel and
        node tables as attributes: :class:`~icsim.simulator.results.Result`)."""
        tally = self.engine.run()
        m = self.model
        return Result(make_result(m.config, m.spec, m.workload, tally, self.engine.name),
                      m.spec, tally)


def run(config: Config, engine: str | None = None) -> Result:
    """Build and run one simulation; its result record."""
    return Simulation(config, engine=engine).run()
