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

import math
import sys
from typing import Any, Callable

import numpy as np

from icsim.model.config import Config, ConfigError
from icsim.model.registry import unknown_name
from icsim.simulator.build import Model, build
from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
from icsim.simulator.results import Result, make_result


#: how much slower the SimPy engine is than the compiled one (``icsim bench``: 35-50x)
SIMPY_SLOWER = "about 40 times"
_SAID: set[str] = set()

#: the workload's minimal packet-hops (:func:`workload_packet_hops`) the SimPy engine gets
#: through in a second at the slowest measured (the shared two-core machine, busy: the
#: reference profile's ack/nak on 4x4x4 33,000, the Angara alltoall example 29,000; DOR and OFR
#: uniform on the quick start 63,000-96,000, which carry about half the estimate: a window-mode
#: run ends once its measured packets are delivered)
SIMPY_PACKET_HOPS_PER_S = 30_000

#: a run is small when the SimPy engine takes at most about 20 s for it at that rate: on a
#: machine whose numba cache lacks the compiled engine (a minute or two of compiling), ``auto``
#: answers it on SimPy at once and builds the compiled engine in the background (the quick
#: start: 184,000, about 3 s; ``ofr/clean/k8``: 6 M, compiled)
SMALL_RUN_PACKET_HOPS = 20 * SIMPY_PACKET_HOPS_PER_S


def say_simpy(why: str) -> None:
    """Say on stderr, once per process and reason, that ``auto`` runs the SimPy engine."""
    if why not in _SAID:
        _SAID.add(why)
        print(f"icsim: running on the SimPy engine, {SIMPY_SLOWER} slower than the compiled "
              f"one: {why}", file=sys.stderr, flush=True)


def workload_packet_hops(model: Model) -> int:
    """The packet-hops of the model's workload on minimal routes: every packet it creates
    times the distance between its source and destination (open-loop traffic: the packets it
    creates by the horizon, or in finite mode, times the mean distance of a sample of its
    messages).  What a run carries, before it starts: a window-mode run stops once its
    measured packets are delivered (fewer), a derouting algorithm adds hops (more)."""
    wl = model.workload
    if wl.open is not None:
        traffic = wl.open
        per_node = (traffic.limit if traffic.limit is not None
                    else traffic.horizon / traffic.interval_ps + 1)
        packets = traffic.num_nodes * per_node * traffic.message_packets
        return int(packets * traffic.mean_distance(model.topology))
    if wl.app is not None:                      # every send's packets, rank to rank
        app = wl.app
        sends = np.nonzero(app.packets)[0]
        src = app.terminal[app.ops.rank[sends]]
        dst = app.terminal[app.ops.peer[sends]]
        return int((app.packets[sends] * model.topology.terminal_distances(src, dst)).sum())
    if not wl.num_messages:
        return 0
    return int((wl.packets * model.topology.terminal_distances(wl.src, wl.dst)).sum())


def small_first_run(model: Model) -> bool:
    """Whether ``auto`` runs ``model`` on the SimPy engine because numba's cache lacks the
    compiled engine and the run is small (:data:`SMALL_RUN_PACKET_HOPS`), the compiled engine
    being built in the background meanwhile for the runs after it (saying so on stderr, once
    per process).  A large run, or one where no background build can start, compiles."""
    from icsim.simulator.engines.compiled.building import build_in_background
    from icsim.simulator.engines.compiled.cache import clear_stale_cache, kernel_cached

    clear_stale_cache()
    if kernel_cached():
        return False
    hops = workload_packet_hops(model)
    if hops > SMALL_RUN_PACKET_HOPS:
        return False
    state = build_in_background()
    if not state:
        return False
    if "small" not in _SAID:
        _SAID.add("small")
        building = ("is being built in the background (about a minute)" if state == "started"
                    else "is being built in the background already")
        seconds = max(1, math.ceil(hops / SIMPY_PACKET_HOPS_PER_S))
        print(f"icsim: the compiled engine is not built in this installation yet: this small run "
              f"takes the SimPy engine (up to about {seconds} s), and the compiled engine "
              f"{building} for the next runs", file=sys.stderr, flush=True)
    return True


def make_engine(model: Model, name: str | None = None, progress: Callable | None = None,
                progress_every_ps: int = 0) -> Any:
    """The engine ``name`` (default ``run.engine``) for a built model.  ``auto`` takes the
    compiled engine where it supports the config, the SimPy engine otherwise, and also for a
    small run while the compiled engine is not built in this installation yet
    (:func:`small_first_run`): the results are the same whichever runs (its ``engine``
    field says which)."""
    name = name or model.config.run.engine
    if name not in ("auto", "simpy", "compiled"):
        raise ConfigError("run.engine", unknown_name("engine", name, ("auto", "simpy", "compiled")))
    if name != "simpy":
        # numba and the machine code load with the compiled engine: only when a run may use it
        from icsim.simulator.engines.compiled import CompiledEngine, supports

        why = supports(model.spec, model.workload)
        if name == "auto":
            name = "simpy" if why or small_first_run(model) else "compiled"
            if why:
                say_simpy(why)
        if name == "compiled":
            if why:
                raise ConfigError("run.engine", f"the compiled engine cannot run this config: "
                                  f"{why} (use run.engine: simpy or auto)")
            return CompiledEngine(model.spec, model.workload, model.routing_stream, progress,
                                  progress_every_ps)
    return SimpyEngine(model.spec, model.workload, RandomStream(model.routing_stream),
                       progress, progress_every_ps)


def runs_compiled(config: Config) -> bool:
    """Whether a run of ``config`` takes the compiled engine once that is built:
    ``run.engine: compiled``, or ``auto`` on a config it supports (the model is built to
    know)."""
    from icsim.simulator.engines.compiled import supports

    if config.run.engine != "auto":
        return config.run.engine == "compiled"
    model = build(config)
    return supports(model.spec, model.workload) is None


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
                      m.spec, tally, m.workload)


def run(config: Config, engine: str | None = None) -> Result:
    """Build and run one simulation; its result record."""
    return Simulation(config, engine=engine).run()
