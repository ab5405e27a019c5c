"""The build step: from a config to the model an engine runs, with every semantic check.

:func:`check` validates what needs more than the schema — the topology (and its failures), the
routing algorithm and its own ``routing.<name>`` section, the traffic pattern's preconditions,
trace and collective files, the job's nodes, whether the times can be represented — and returns
the *resolved* config (every algorithm section validated, the selected one with its defaults
filled in).  It is cheap: routing tables are not generated.  :func:`build` does the same and
then builds everything once — topology, routing (tables included), the
:class:`~icsim.simulator.spec.NetworkSpec` and the :class:`~icsim.traffic.workloads.Workload` —
into a :class:`Model`.

>>> from icsim.model.config import config_from_dict
>>> m = build(config_from_dict({"topology": {"dims": [4, 4]}, "routing": {"algorithm": "ofr"}}))
>>> m.spec.num_nodes, [vc.name for vc in m.spec.vcs], m.config.routing.section("ofr")["delta"]
(16, ['adaptive', 'escape1', 'escape2'], 2)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
from pydantic import BaseModel, ValidationError

from icsim.model.config import (Config, ConfigError, TopologyConfig, _error_from_validation,
                                config_from_dict, load_config)
from icsim.model.limits import FAMILY_KINDS, MAX_FAMILY_ROUTERS, check_fits, family_size
from icsim.model.input_files import InputFileError
from icsim.model.notes import SETUP_NOTE_AFTER_S, Kept, Note
from icsim.model.registry import UnknownNameError, did_you_mean, unknown_name
from icsim.model.topology import Dragonfly, FatTree, Graph, HyperX, Torus
from icsim.model.units import UnitError, ps, serialisation_ps
from icsim.routing.registry import ROUTING, check_vcs, load_plugin
from icsim.simulator.results import growth_limit
from icsim.simulator.spec import NetworkSpec
from icsim.traffic.load import gamma1_packet_period_ns
from icsim.traffic.patterns import PATTERNS, PatternError, guarded, make_pattern
from icsim.traffic.patterns import load_plugin as load_pattern_plugin
from icsim.traffic.apps.jobs import JobError, job_parts, job_sizes, make_app
from icsim.traffic.apps.ops import AppError
from icsim.traffic.trace import TraceError
from icsim.traffic.workloads import (app_workload, collective_messages, open_loop,
                                     routing_stream, scheduled, trace_messages)


# ---------------------------------------------------------------------------------- topology
#: the topologies built in this process, by their config section (a graph's file excepted,
#: which may change): the runs of a sweep worker share one, and whatever it works out once
#: (its wiring, its distances)
TOPOLOGIES = Kept(4)


def build_topology(tc: TopologyConfig) -> Any:
    """The topology a config section describes; ConfigError naming the key if impossible.
    The same object for the same section within a process (:data:`TOPOLOGIES`)."""
    if tc.kind == "graph":
        return _build_topology(tc)
    return TOPOLOGIES.get(tc.model_dump_json(), lambda: _build_topology(tc))


def _build_topology(tc: TopologyConfig) -> Any:
    try:
        if tc.kind == "torus":
            healthy = Torus(tuple(tc.dims), tuple(tc.wrap) if tc.wrap else ())
            if not (tc.failed_links or tc.failed_nodes):
                return healthy
            links = [_failed_link(healthy, i, item) for i, item in enumerate(tc.failed_links)]
            try:
                return Torus(healthy.dims, healthy.wrap, failed_links=links,
                             failed_nodes=tc.failed_nodes)
            except ValueError as exc:
                raise ConfigError("topology.failed_nodes", str(exc)) from None
        if tc.kind == "dragonfly":
            return Dragonfly(tc.p, tc.a, tc.h, tc.g, tc.arrangement)
        if tc.kind == "fat_tree":
            return FatTree(tc.k, tc.n, tc.taper)
        if tc.kind == "hyperx":
            return HyperX(tuple(tc.dims), tc.p or 1, tc.trunking)
        if tc.kind == "graph":
            graph = Graph.from_file(tc.file)
        else:
            graph = Graph.random_regular(tc.nodes, tc.degree, tc.seed)
        return replace(graph, terminals_per_router=tc.p or 1)
    except ConfigError:
        raise
    except ValueError as exc:
        key = {"torus": "dims", "graph": "file", "random_regular": "nodes"}.get(tc.kind)
        message = str(exc)
        if key is None:                 # a family's message starts with the parameter's name
            named, _, rest = message.partition(": ")
            named = {"S": "dims", "K": "trunking"}.get(named, named)
            key = named if named in TopologyConfig.model_fields else "kind"
            message = rest if key != "kind" else message
        raise ConfigError(f"topology.{key}", message) from None


def _failed_link(torus: Torus, i: int, item: tuple) -> tuple[int, int]:
    """``topology.failed_links[i]`` as (node, port): ``[u, v]`` two neighbours, or ``[u, "x+"]``."""
    u, other = item
    try:
        if not 0 <= u < torus.num_nodes:
            raise ValueError(f"node {u} is not in the torus (ids 0..{torus.num_nodes - 1})")
        if isinstance(other, str):
            port = torus.port_number(other)
            if torus.neighbor(u, port) < 0:
                raise ValueError(f"node {u} has no link at port {other}")
            return u, port
        return u, torus.link_port(u, other)
    except ValueError as exc:
        raise ConfigError(f"topology.failed_links.{i}", str(exc)) from None


# ---------------------------------------------------------------------------------- routing
def routing_class(cfg: Config) -> type:
    for i, path in enumerate(cfg.routing.plugins):
        try:
            load_plugin(path)
        except ValueError as exc:
            raise ConfigError(f"routing.plugins.{i}", str(exc)) from None
    name = cfg.routing.algorithm
    if name not in ROUTING:
        raise ConfigError("routing.algorithm", unknown_name("algorithm", name, ROUTING.names()))
    return ROUTING.get(name)


def _section_model(name: str) -> type[BaseModel] | None:
    return ROUTING.get(name).Settings if name in ROUTING else None


def resolve(cfg: Config) -> Config:
    """``cfg`` with every ``routing.<name>`` section validated by its algorithm's model (the
    selected algorithm's filled with its defaults); ConfigError naming the key otherwise."""
    routing_class(cfg)
    sections = {}
    given = cfg.routing.sections()
    for name in sorted(given.keys() | {cfg.routing.algorithm}):
        model = _section_model(name)
        if model is None:
            near = did_you_mean(name, ROUTING.names(), "routing.")
            raise ConfigError(f"routing.{name}", f"not a routing algorithm's section ("
                              f"{near + ' ' if near else ''}valid: {', '.join(ROUTING.names())})")
        try:
            settings = model.model_validate(given.get(name) or {})
        except ValidationError as exc:
            raise _error_from_validation(exc, model, f"routing.{name}.") from None
        dumped = settings.model_dump(mode="json")
        if dumped or name in given:
            sections[name] = dumped
    routing = type(cfg.routing)(algorithm=cfg.routing.algorithm, **sections)
    return cfg.model_copy(update={"routing": routing})


def settings_of(cfg: Config) -> BaseModel:
    """The selected algorithm's validated settings."""
    cls = routing_class(cfg)
    return cls.Settings.model_validate(cfg.routing.section(cfg.routing.algorithm))


def identity(config: dict) -> dict:
    """What identifies a resolved config (a results row's ``config``): its values that differ
    from their defaults, routing sections included (a key added to the schema with a default,
    or a stored config written before it existed, leaves this unchanged), without
    ``run.engine`` (both engines run the same model; the result's ``engine`` says which ran)."""
    cfg = Config.model_validate(config)
    out = cfg.non_default()
    run = out.get("run", {})
    run.pop("engine", None)              # how a run is computed, not what it computes
    if not run:
        out.pop("run", None)
    routing = out.get("routing", {})
    for name, body in cfg.routing.sections().items():
        model = _section_model(name)
        if model is None:
            continue
        defaults = model().model_dump(mode="json")
        kept = {k: v for k, v in model.model_validate(body).model_dump(mode="json").items()
                if v != defaults.get(k)}
        if kept:
            routing[name] = kept
        else:
            routing.pop(name, None)
    if routing:
        out["routing"] = routing
    else:
        out.pop("routing", None)
    return out


# ---------------------------------------------------------------------------------- checks
@dataclass
class _Prepared:
    config: Config
    topology: Any
    routing_cls: type
    settings: BaseModel
    pattern: Any = None
    messages: list | None = None
    app: Any = None


def prepare(cfg: Config) -> _Prepared:
    """``cfg`` checked and its parts built, before any network: the resolved config, the
    topology, the routing class and settings, the pattern (or messages); ConfigError naming
    the key otherwise."""
    return _prepare(cfg)


def _prepare(cfg: Config) -> _Prepared:
    cfg = resolve(cfg)
    if cfg.topology.kind in FAMILY_KINDS:
        routers, _, _ = family_size(cfg.topology)
        if routers > MAX_FAMILY_ROUTERS:
            raise ConfigError("topology", f"a {cfg.topology.kind} of {routers:,} routers: at "
                              f"most {MAX_FAMILY_ROUTERS:,} (its routing reads tables of a "
                              f"row per pair of routers)")
    if cfg.topology.kind == "torus" or cfg.topology.kind in FAMILY_KINDS:
        check_fits(cfg)                 # before anything is built (a 10^12-node torus, ...)
        topo = build_topology(cfg.topology)
    else:
        topo = build_topology(cfg.topology)     # graph readers bound their own size first
        check_fits(cfg, topo.num_nodes)
    if cfg.traffic.nodes is not None:
        check_job_nodes(cfg, topo)
    cls = routing_class(cfg)
    settings = settings_of(cfg)
    try:
        cls.check_topology(topo)
        cls.check_config(topo, cfg, settings)
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError("routing.algorithm", str(exc)) from None
    _check_times(cfg)
    prep = _Prepared(cfg, topo, cls, settings)
    _prepare_traffic(prep)
    return prep


def _prepare_traffic(prep: _Prepared) -> None:
    cfg, topo = prep.config, prep.topology
    tc = cfg.traffic
    for i, path in enumerate(tc.plugins):
        try:
            load_pattern_plugin(path)
        except ValueError as exc:
            raise ConfigError(f"traffic.plugins.{i}", str(exc)) from None
    for name in tc.params:
        if name not in PATTERNS:
            raise ConfigError(f"traffic.params.{name}",
                              unknown_name("pattern", name, PATTERNS.names(aliases=True)))
    if tc.workload == "open":
        try:
            prep.pattern = guarded(make_pattern(tc.pattern, topo, seed=cfg.seed,
                                                **tc.pattern_params()))
        except PatternError as exc:
            key = f"traffic.params.{tc.pattern}.{exc.param}" if exc.param else "traffic.pattern"
            raise ConfigError(key, str(exc)) from None
    elif tc.workload == "app":
        prep.app = _app(cfg, topo)
    elif tc.workload == "trace":
        if not tc.trace:
            raise ConfigError("traffic.trace", "a trace workload needs a trace file")
        try:
            prep.messages = trace_messages(tc.trace, topo.num_terminals, cfg.packet.size_bytes)
        except (TraceError, UnitError) as exc:
            raise ConfigError("traffic.trace", str(exc)) from None
        check_fits(cfg, topo.num_nodes, len(prep.messages))     # its messages, now known
    else:
        try:
            prep.messages = collective_messages(
                tc.collective, topo, tc.message_bytes, cfg.packet.size_bytes, cfg.seed,
                tc.pattern_params(tc.collective), tc.interleave, tc.nodes)
        except PatternError as exc:
            key = (f"traffic.params.{tc.collective}.{exc.param}" if exc.param else
                   "traffic.collective")
            raise ConfigError(key, str(exc)) from None


def _app(cfg: Config, topo: Any) -> Any:
    """The jobs of ``traffic.jobs`` as one closed-loop application; an error names the job's
    key (``traffic.jobs.<i>.<key>``, or ``.params.<name>`` for a motif's parameter)."""
    jobs = cfg.traffic.jobs
    if not jobs:
        raise ConfigError("traffic.jobs", "an app workload needs at least one job")
    if cfg.run.latency_limit_ns is not None:
        raise ConfigError("run.latency_limit_ns", "stops open-loop finite runs; an app runs "
                          "until its operations are done")
    try:                                # how big each job is, before any is built
        sizes, files = job_sizes(jobs, topo, cfg.seed, cfg.packet.size_bytes)
    except JobError as exc:
        raise _job_error(jobs[exc.index], exc.index, exc.error) from None
    check_fits(cfg, topo.num_nodes, sum(size.ops for size in sizes))
    parts = []
    for i, job in enumerate(jobs):
        try:
            parts.append(job_parts(job, i, topo, cfg.seed, files))
        except (UnknownNameError, InputFileError, AppError) as exc:
            raise _job_error(job, i, exc) from None
    try:
        return make_app(parts, cfg.packet.size_bytes)
    except AppError as exc:
        raise ConfigError("traffic.jobs", str(exc)) from None


def _job_error(job: Any, i: int, exc: Exception) -> ConfigError:
    """A job's error as a ConfigError naming its key: ``traffic.jobs.<i>.motif`` for an
    unknown motif, ``.file`` for a motif file's error, ``.<key>`` or ``.params.<name>`` for an
    AppError that starts with a job key's or a parameter's name, else the job."""
    where = f"traffic.jobs.{i}"
    if isinstance(exc, UnknownNameError):
        return ConfigError(f"{where}.motif", str(exc))
    if isinstance(exc, InputFileError):
        return ConfigError(f"{where}.file", str(exc))
    head = str(exc).split(":", 1)[0]
    key = (f"{where}.{head}" if head in type(job).model_fields else
           f"{where}.params.{head}" if head in job.params else where)
    return ConfigError(key, str(exc))


def _check_times(cfg: Config) -> None:
    """Every time of the model must be a whole, positive number of picoseconds that the engines
    can represent; an error names the key whose value makes it."""
    def positive(key: str, value_ps: Callable[[], int]) -> None:
        try:
            got = value_ps()
        except UnitError as exc:
            raise ConfigError(key, str(exc)) from None
        if got < 1:
            raise ConfigError(key, "rounds to 0 ps (the engines count whole picoseconds)")

    positive("router.cycle_ns", lambda: ps(cfg.router.cycle_ns))
    positive("link.bandwidth_gbps",
             lambda: serialisation_ps(cfg.packet.size_bytes, cfg.link.bandwidth_gbps))
    positive("nic.bandwidth_gbps",
             lambda: serialisation_ps(cfg.packet.size_bytes, cfg.nic.bandwidth_gbps))
    if cfg.run.mode == "window" and cfg.traffic.workload == "open":
        positive("run.measure_us", lambda: ps(cfg.run.measure_us * 1000))


def check(cfg: Config) -> Config:
    """Every semantic check (module docstring), cheaply; the resolved config."""
    return _prepare(cfg).config


def check_job_nodes(cfg: Config, topology: Any) -> None:
    """``traffic.nodes`` (a collective's job nodes): at least two distinct node ids of the
    topology, all in service."""
    nodes = cfg.traffic.nodes
    num_nodes = topology.num_nodes
    if cfg.traffic.workload != "collective":
        raise ConfigError("traffic.nodes", f"a job's nodes apply to the collective workload, "
                          f"not {cfg.traffic.workload!r}")
    bad = [v for v in nodes if not 0 <= v < num_nodes]
    if bad:
        raise ConfigError("traffic.nodes", f"node {bad[0]} is not in the topology "
                          f"(ids 0..{num_nodes - 1})")
    seen: set[int] = set()
    for v in nodes:
        if v in seen:
            raise ConfigError("traffic.nodes", f"node {v} is listed twice")
        seen.add(v)
    dead = sorted(seen & topology.failed_nodes)
    if dead:
        raise ConfigError("traffic.nodes", f"node {dead[0]} has failed")
    if len(nodes) < 2:
        raise ConfigError("traffic.nodes", f"a job needs at least 2 nodes, got {len(nodes)}")


# ---------------------------------------------------------------------------------- the model
@dataclass
class Model:
    """Everything one run needs, built once: the resolved config, the topology, the routing
    algorithm, the network spec, the workload and the routing tie-break stream."""

    config: Config
    topology: Any
    routing: Any
    spec: NetworkSpec
    workload: Any
    routing_stream: np.random.Generator


#: the steps of :func:`build`, as its set-up note names them
SETUP_STEPS = ("the config and the topology", "the routing tables and their deadlock check",
               "the network's arrays", "the traffic")


def build(cfg: Config) -> Model:
    """Check and build everything a run needs (module docstring).  Past
    :data:`~icsim.model.notes.SETUP_NOTE_AFTER_S`, a line on a terminal says how far it is."""
    with Note(f"setting up {cfg.topology.kind}, {cfg.routing.algorithm}",
              total=len(SETUP_STEPS), after_s=SETUP_NOTE_AFTER_S, terminal_only=True,
              estimate=False, timer=True, doing=f"now: {SETUP_STEPS[0]}") as note:
        return _build(cfg, note)


def _build(cfg: Config, note: Note) -> Model:
    def done(steps: int) -> None:
        note(steps, f"now: {SETUP_STEPS[steps]}")

    prep = _prepare(cfg)
    cfg, topo = prep.config, prep.topology
    note.what = f"setting up {topo.describe()}, {cfg.routing.algorithm}"
    done(1)
    routing = prep.routing_cls(topo, cfg, prep.settings)
    try:
        check_vcs(routing.vcs)
    except ValueError as exc:
        raise ConfigError("routing.algorithm", f"{routing.name}'s VCs: {exc}") from None
    try:
        routing.form                    # the program, made and checked before the run
    except ValueError as exc:
        raise ConfigError("routing.algorithm", f"{routing.name}'s program: {exc}") from None
    done(2)
    rc, lc, nc, run = cfg.router, cfg.link, cfg.nic, cfg.run
    size = cfg.packet.size_bytes
    finite = run.mode == "finite" or cfg.traffic.workload != "open"
    if not finite and run.latency_limit_ns is not None:
        raise ConfigError("run.latency_limit_ns", "stops a finite run once its mean latency is "
                          "certain to exceed it: needs run.mode finite (window mode stops by "
                          "run.stop_when_saturated)")
    if finite:
        window = None
        horizon = ps(run.max_time_us * 1000) if run.max_time_us else None
    gamma1 = gamma1_packet_period_ns(topo, size, lc.bandwidth_gbps)
    cycle = ps(rc.cycle_ns)
    link_ser, link_lat = serialisation_ps(size, lc.bandwidth_gbps), ps(lc.latency_ns)
    nic_ser, nic_lat = serialisation_ps(size, nc.bandwidth_gbps), ps(nc.latency_ns)
    # a watchdog shorter than a hop would call a slow link a deadlock
    hop = max(link_ser + link_lat, nic_ser + nic_lat) + rc.delay_cycles * cycle + cycle
    port_times = link_class_times(cfg, topo)
    settle = None
    if not finite:
        settle = settling_time(topo, rc.queue_packets, link_ser, port_times)
        w0 = max(ps(run.warmup_us * 1000), settle[0])
        window = (w0, w0 + ps(run.measure_us * 1000))
        horizon = window[1] + max(ps(run.drain_us * 1000), settle[0])
    hop = max(hop, (max(port_times[..., 0].max(), port_times[..., 2].max())
                    + port_times[..., 1].max() + rc.delay_cycles * cycle + cycle)
              if port_times is not None else 0)
    spec = NetworkSpec(
        topology=topo, routing=routing,
        neighbor=np.asarray(topo.neighbor_table, dtype=np.int64).reshape(topo.num_nodes, -1),
        reverse_port=topo.reverse_ports(), concentration=topo.terminals_per_router,
        num_terminals=topo.num_terminals, vcs=tuple(routing.vcs),
        bubble=tuple(rc.bubble and vc.bubble for vc in routing.vcs),
        capacity=rc.queue_packets, injection_min_free=rc.injection_min_free or 1,
        flow_control=rc.flow_control, arbitration=rc.arbitration, tie_break=rc.tie_break,
        cut_through=rc.switching == "virtual_cut_through", handshake=nc.handshake,
        cycle_ps=cycle, delay_ps=rc.delay_cycles * cycle,
        link_ser_ps=link_ser, link_lat_ps=link_lat, nic_ser_ps=nic_ser, nic_lat_ps=nic_lat,
        ack_link_ser_ps=serialisation_ps(rc.ack_bytes, lc.bandwidth_gbps),
        ack_nic_ser_ps=serialisation_ps(rc.ack_bytes, nc.bandwidth_gbps),
        port_times=port_times,
        nic_tick_ps=gamma1 * 1000.0 / nc.injection_rate_factor,
        window=window, horizon_ps=horizon,
        watchdog_ps=max(ps(run.watchdog_us * 1000), 2 * hop),
        gamma1_period_ns=gamma1, seed=cfg.seed,
        stop_when_saturated=run.stop_when_saturated and not finite,
        growth_limit=growth_limit(cfg.traffic.message_packets),
        latency_limit_ns=run.latency_limit_ns, settling=settle)
    done(3)
    if cfg.traffic.workload == "open":
        workload = open_loop(cfg, topo, prep.pattern, window, horizon)
    elif cfg.traffic.workload == "app":
        workload = app_workload(prep.app)
    else:
        workload = scheduled(cfg.traffic.workload, prep.messages)
    if finite and run.max_time_us is None and workload.app is None:
        spec = replace(spec, time_limit_ps=finite_time_limit(spec, workload))
    return Model(cfg, topo, routing, spec, workload, routing_stream(cfg.seed))


def settling_time(topo: Any, capacity: int, link_ser_ps: int,
                  port_times: np.ndarray | None) -> tuple[int, str]:
    """Window mode's settling time (docs/model.md §7): twice the time a queue of
    ``queue_packets`` takes to fill, or to empty, at one packet per link time of the slowest
    channel.  An overloaded channel's queue fills first, then the one feeding it, and only then
    do the routers upstream (a local adaptive decision, a source) see the congestion; the
    warm-up and the drain last at least this long, whatever ``run.warmup_us`` and
    ``run.drain_us`` say (8-packet queues of 512-byte packets at 20 Gb/s: 3.3 µs; 256-packet
    queues: 105 µs).  Returns the time (ps) and how it was made, in words.

    >>> settling_time(None, 8, 204800, None)
    (3276800, '2 x 8 packets x 204.8 ns')
    """
    ser = link_ser_ps
    if port_times is not None:
        ser = max(ser, int(port_times[..., 0].max()))
    return 2 * capacity * ser, f"2 x {capacity} packets x {ser / 1000:.6g} ns"


def finite_time_limit(spec: NetworkSpec, workload: Any) -> int:
    """Finite mode without ``run.max_time_us``: when the run stops at the latest, so that no
    run can go on for ever (docs/model.md §7).  A bound no run that moves can reach: the
    messages' creation (open-loop traffic: ten times its expected end), then every packet
    crossing the longest route's channels one after another, each hop the slowest channel's
    and a NIC's.  A packet going round is a livelock and a network that stops is a deadlock
    (``simulator/engines/guard.py``, the watchdog), named long before; this ends the rest."""
    if workload.open is not None:
        traffic = workload.open
        made = int(10 * traffic.limit * traffic.interval_ps)
        packets = traffic.expected_measured
    else:
        made = int(workload.time.max()) if workload.num_messages else 0
        packets = int(workload.packets.sum())
    hop = (spec.longest_link_ps + spec.nic_ser_ps + spec.nic_lat_ps + spec.delay_ps
           + spec.cycle_ps)
    return made + packets * (spec.diameter + 2) * hop


def link_class_times(cfg: Config, topology: Any) -> np.ndarray | None:
    """Per ``[node, port]``: (packet serialisation, propagation, ACK serialisation) of its
    channel's link class (``link.classes``), or None without ``link.classes`` (every channel
    takes ``link``'s).
    ConfigError naming ``link.classes.<name>`` for a class the topology does not have."""
    lc, rc, size = cfg.link, cfg.router, cfg.packet.size_bytes
    if not lc.classes:
        return None
    names, index = topology.port_classes
    rows = []
    for name in names:
        c = lc.classes.get(name)
        bw = c.bandwidth_gbps if c and c.bandwidth_gbps is not None else lc.bandwidth_gbps
        lat = c.latency_ns if c and c.latency_ns is not None else lc.latency_ns
        try:
            row = (serialisation_ps(size, bw), ps(lat), serialisation_ps(rc.ack_bytes, bw))
        except UnitError as exc:
            raise ConfigError(f"link.classes.{name}", str(exc)) from None
        if min(row[0], row[2]) < 1:
            raise ConfigError(f"link.classes.{name}.bandwidth_gbps", "rounds a packet's "
                              "serialisation to 0 ps (the engines count whole picoseconds)")
        rows.append(row)
    for name in lc.classes:
        if name not in names:
            raise ConfigError(f"link.classes.{name}", f"{topology.describe()} has no link class "
                              f"{name!r} (its classes: {', '.join(names)})")
    table = np.array(rows + [rows[0]], dtype=np.int64)
    return table[index]                  # absent ports (-1) take the last row: unused


def load(path: Any, overrides: list[str] | None = None) -> Config:
    """Read a YAML config file, apply ``--set`` overrides and run every check; the resolved
    config (ConfigError naming the key otherwise)."""
    return check(load_config(path, overrides))


def from_dict(data: dict, overrides: list[str] | None = None) -> Config:
    """:func:`load` for a config mapping."""
    return check(config_from_dict(data, overrides))
