"""The run configuration: YAML parsed once into validated, typed, frozen objects.

Units are in the field names (``latency_ns``, ``bandwidth_gbps``, ``warmup_us``).  Unknown keys,
wrong types and impossible values are rejected with the key path, before anything is simulated;
checks that need the topology (a pattern's size precondition, an algorithm's requirements) run
in :func:`check_semantics`, also before the run.

Every field, its default and its meaning is listed in the README's config reference.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ConfigError(ValueError):
    """A bad configuration; ``str()`` is one line naming the key path and the reason."""

    def __init__(self, path: str, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}" if path else reason)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TopologyConfig(_Section):
    kind: Literal["torus", "graph", "random_regular"] = "torus"
    dims: tuple[int, ...] | None = None
    wrap: tuple[bool, ...] | None = None
    file: str | None = None
    nodes: int | None = Field(None, ge=2)
    degree: int | None = Field(None, ge=1)
    seed: int = 0
    # links out of service: [u, v] (two neighbours) or [u, "x+"] (a node and a port name)
    failed_links: tuple[tuple[int, int | str], ...] = ()
    failed_nodes: tuple[int, ...] = ()

    @model_validator(mode="after")
    def _shape(self) -> "TopologyConfig":
        if self.kind == "torus":
            if not self.dims:
                raise ValueError("dims: a torus needs dims, e.g. [8, 8, 8]")
            for i, k in enumerate(self.dims):
                if k < 1:
                    raise ValueError(f"dims.{i}: dimension size must be >= 1, got {k}")
            if self.wrap is not None and len(self.wrap) != len(self.dims):
                raise ValueError(f"wrap: {len(self.wrap)} entries for {len(self.dims)} dimensions")
        elif self.failed_links or self.failed_nodes:
            raise ValueError("failed_links: failures apply to tori (a graph topology is given "
                             "by its working links)")
        elif self.kind == "graph" and not self.file:
            raise ValueError("file: a graph topology needs an edge-list file")
        elif self.kind == "random_regular" and (self.nodes is None or self.degree is None):
            raise ValueError("nodes: random_regular needs nodes and degree")
        return self


class PacketConfig(_Section):
    size_bytes: int = Field(512, gt=0)


class LinkConfig(_Section):
    bandwidth_gbps: float = Field(20.0, gt=0)
    latency_ns: float = Field(200.0, ge=0)


class NicConfig(_Section):
    bandwidth_gbps: float = Field(64.0, gt=0)
    latency_ns: float = Field(80.0, ge=0)
    injection_rate_factor: float = Field(2.4, gt=0)
    handshake: Literal["none", "stop_and_wait"] = "none"


class RouterConfig(_Section):
    queue_packets: int = Field(8, ge=1)
    switching: Literal["store_and_forward", "virtual_cut_through"] = "store_and_forward"
    flow_control: Literal["credit", "ack_nak"] = "credit"
    arbitration: Literal["oldest_first", "escape_priority"] = "oldest_first"
    tie_break: Literal["random", "ordered"] = "random"
    cycle_ns: float = Field(0.8, gt=0)
    delay_cycles: int = Field(0, ge=0)
    injection_min_free: int | None = Field(None, ge=1)
    bubble: bool = True
    ack_bytes: int = Field(10, gt=0)

    @model_validator(mode="after")
    def _room(self) -> "RouterConfig":
        if self.bubble and self.queue_packets < 2:
            raise ValueError("queue_packets: the bubble rule needs queues of at least 2 packets")
        if self.injection_min_free is not None and self.injection_min_free > self.queue_packets:
            raise ValueError(f"injection_min_free: {self.injection_min_free} exceeds "
                             f"queue_packets {self.queue_packets}; nothing could be injected")
        return self


class RoutingConfig(_Section):
    algorithm: str = "dor"
    delta: int = Field(2, ge=1)
    eta: float | None = Field(None, ge=0)
    profit: Literal["paper", "reference"] = "paper"
    ofr_candidates: Literal["paper", "reference"] = "paper"
    min_deroute_distance: int = Field(1, ge=1)
    table: str | None = None
    generator: str | None = None
    layers: str | None = None


class TrafficConfig(_Section):
    workload: Literal["open", "collective", "trace"] = "open"
    pattern: str = "uniform"
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def pattern_params(self, name: str | None = None) -> dict[str, Any]:
        """Parameters for pattern ``name`` (default: the configured one): ``params`` is keyed
        by pattern name, so one config can carry settings for several patterns."""
        return dict(self.params.get(name or self.pattern, {}))
    load: float = Field(0.5, ge=0)
    message_packets: int = Field(96, ge=1)
    arrivals: Literal["deterministic", "exponential"] = "deterministic"
    phase: Literal["random", "aligned"] = "random"
    collective: str = "alltoall"
    interleave: bool = False
    message_bytes: int = Field(1 << 20, gt=0)
    trace: str | None = None
    nodes: list[int] | None = None


class RunConfig(_Section):
    mode: Literal["window", "finite"] = "window"
    warmup_us: float = Field(50.0, ge=0)
    measure_us: float = Field(200.0, gt=0)
    drain_us: float = Field(500.0, ge=0)
    messages_per_node: int = Field(32, ge=1)
    watchdog_us: float = Field(50.0, gt=0)
    max_time_us: float | None = Field(None, gt=0)


class Config(_Section):
    seed: int = 1
    topology: TopologyConfig = TopologyConfig(kind="torus", dims=(4, 4, 4))
    packet: PacketConfig = PacketConfig()
    link: LinkConfig = LinkConfig()
    nic: NicConfig = NicConfig()
    router: RouterConfig = RouterConfig()
    routing: RoutingConfig = RoutingConfig()
    traffic: TrafficConfig = TrafficConfig()
    run: RunConfig = RunConfig()

    def to_dict(self) -> dict:
        """The resolved config as plain JSON-able data (what every result embeds)."""
        return self.model_dump(mode="json")

    def non_default(self) -> dict:
        """Only the values that differ from their defaults, as plain data: what identifies a
        configuration.  Adding a key with a default to the schema leaves it unchanged, so
        hashes of it (the sweeps' ``config_hash``) survive schema growth.

        >>> Config(seed=3, traffic={"load": 0.25}).non_default()
        {'seed': 3, 'traffic': {'load': 0.25}}
        """
        return _non_default(self)


def _non_default(model: BaseModel) -> dict:
    out = {}
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            sub = _non_default(value)
            if sub:
                out[name] = sub
            continue
        default = info.get_default(call_default_factory=True)
        if value != default:
            out[name] = model.model_dump(mode="json", include={name})[name]
    return out


# ---------------------------------------------------------------------------------- loading
def parse_override(item: str) -> tuple[list[str], Any]:
    """``"a.b.c=VALUE"`` -> (["a", "b", "c"], VALUE parsed as YAML)."""
    if "=" not in item:
        raise ConfigError("--set", f"expected key.path=value, got {item!r}")
    key, raw = item.split("=", 1)
    path = [p for p in key.strip().split(".") if p]
    if not path:
        raise ConfigError("--set", f"empty key in {item!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError(key, f"value {raw!r} is not valid YAML ({exc.problem})") from None
    return path, value


def set_path(data: dict, key: str | list[str], value: Any) -> None:
    """``data["a"]["b"]["c"] = value`` for ``key = "a.b.c"``, creating sections on the way."""
    path = key.split(".") if isinstance(key, str) else key
    node = data
    for i, part in enumerate(path[:-1]):
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        elif not isinstance(nxt, dict):
            raise ConfigError(".".join(path[: i + 1]), "is a value, not a section")
        node = nxt
    node[path[-1]] = value


def apply_overrides(raw: dict, overrides: list[str] | None) -> dict:
    """A copy of ``raw`` with every ``key.path=value`` override applied."""
    data = copy.deepcopy(raw)
    for item in overrides or []:
        path, value = parse_override(item)
        set_path(data, path, value)
    return data


def _error_from_validation(exc: ValidationError) -> ConfigError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
        # validators report "field: reason"; fold the field into the path
        head, sep, rest = msg.partition(": ")
        if sep and " " not in head:
            loc.append(head)
            msg = rest
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "literal_error":
        msg = f"{msg} (got {err.get('input')!r})"
    return ConfigError(".".join(loc), msg)


def config_from_dict(data: dict, overrides: list[str] | None = None) -> Config:
    if not isinstance(data, dict):
        raise ConfigError("", "the config must be a mapping of sections")
    data = apply_overrides(data, overrides)
    try:
        cfg = Config.model_validate(data)
    except ValidationError as exc:
        raise _error_from_validation(exc) from None
    check_semantics(cfg)
    return cfg


def load_config(path: str | Path, overrides: list[str] | None = None) -> Config:
    """Read a YAML config, apply ``--set`` overrides, validate everything; raise ConfigError."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(str(path), "no such config file") from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), f"not valid YAML ({exc})") from None
    return config_from_dict(data, overrides)


def check_semantics(cfg: Config) -> None:
    """Checks that need the topology or a registry: raise ConfigError naming the key."""
    from icsim.routing.registry import algorithms
    from icsim.simulator.build import build_topology
    from icsim.traffic.patterns import PatternError, make_pattern

    topo = build_topology(cfg.topology)
    if cfg.traffic.nodes is not None:
        check_job_nodes(cfg, topo.num_nodes)
    ALGORITHMS = algorithms()
    if cfg.routing.algorithm not in ALGORITHMS:
        raise ConfigError("routing.algorithm", f"unknown algorithm {cfg.routing.algorithm!r} "
                          f"(valid: {', '.join(sorted(ALGORITHMS))})")
    try:
        ALGORITHMS[cfg.routing.algorithm].check_config(topo, cfg)
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError("routing.algorithm", str(exc)) from None
    from icsim.traffic.patterns import PATTERNS

    for name in cfg.traffic.params:
        if name not in PATTERNS:
            raise ConfigError(f"traffic.params.{name}", f"not a pattern (valid: "
                              f"{', '.join(sorted(PATTERNS))})")
    if cfg.traffic.workload == "open":
        try:
            make_pattern(cfg.traffic.pattern, topo, seed=cfg.seed,
                         **cfg.traffic.pattern_params())
        except PatternError as exc:
            key = (f"traffic.params.{cfg.traffic.pattern}" if "param" in str(exc)
                   else "traffic.pattern")
            raise ConfigError(key, str(exc)) from None
    if cfg.traffic.workload == "trace":
        from icsim.traffic.trace import TraceError, read_trace

        if not cfg.traffic.trace:
            raise ConfigError("traffic.trace", "a trace workload needs a trace file")
        try:
            read_trace(cfg.traffic.trace, topo.num_nodes)
        except FileNotFoundError:
            raise ConfigError("traffic.trace", f"no such trace file {cfg.traffic.trace!r}") \
                from None
        except TraceError as exc:
            raise ConfigError("traffic.trace", str(exc)) from None
    if cfg.traffic.workload == "collective":
        from icsim.traffic.workloads import collective_messages

        try:
            collective_messages(cfg.traffic.collective, topo, cfg.traffic.message_bytes,
                                cfg.packet.size_bytes, cfg.seed,
                                cfg.traffic.pattern_params(cfg.traffic.collective),
                                cfg.traffic.interleave, cfg.traffic.nodes)
        except PatternError as exc:
            raise ConfigError("traffic.collective", str(exc)) from None


def check_job_nodes(cfg: Config, num_nodes: int) -> None:
    """``traffic.nodes`` (a collective's job nodes): at least two distinct node ids of the
    topology."""
    nodes = cfg.traffic.nodes
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
    if len(nodes) < 2:
        raise ConfigError("traffic.nodes", f"a job needs at least 2 nodes, got {len(nodes)}")
