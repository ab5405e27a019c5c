"""The run configuration: YAML parsed once into validated, typed, frozen objects.

This module is the schema and nothing else: it imports nothing from the rest of icsim but the
leaves that read user files defensively (:mod:`icsim.model.input_files`), suggest a name for a
mistyped one (:func:`icsim.model.registry.did_you_mean`) and find the files of a bundled config
(:mod:`icsim.configs`).  Units
are in the field names (``latency_ns``, ``bandwidth_gbps``, ``warmup_us``).  Unknown keys, wrong
types (a boolean is not a number, a number is not a string) and values the model cannot
represent (infinite, NaN, negative, absurdly large) are rejected with the key path, before
anything is built.  Checks that need the topology or a registry (a pattern's size precondition,
an algorithm's requirements and its own ``routing.<name>`` section, files) belong to the build
step, :mod:`icsim.simulator.build`.

Routing settings live in one section per algorithm (``routing.ofr: {delta: 2, ...}``,
``routing.table: {generator: sssp}``), validated by the algorithm's own model at build time.
The flat keys of older configs (``routing.delta``, ``routing.profit``, ``routing.table: FILE``
...) keep working: :data:`LEGACY_ROUTING_KEYS` moves them into the sections they mean.

Every field, its default and its meaning is listed in the README's config reference.

An error names the key and says what it expected and what it got, with the nearest valid name
for a mistyped one:

>>> config_from_dict({"topology": {"dim": [4]}})
Traceback (most recent call last):
...
icsim.model.config.ConfigError: topology.dim: unknown key (did you mean 'topology.dims'?)
>>> config_from_dict({"topology": {"dims": 5}})
Traceback (most recent call last):
...
icsim.model.config.ConfigError: topology.dims: expected a list such as [8, 8, 8], got 5
>>> config_from_dict({"topology": {"dims": [4]}, "routing": {"algoritm": "abr"}})
Traceback (most recent call last):
...
icsim.model.config.ConfigError: routing.algoritm: unknown key (did you mean 'routing.algorithm'?)
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from icsim.configs import bundle_files
from icsim.model.errors import Picklable
from icsim.model.input_files import InputFileError, read_text
from icsim.model.job_config import JobConfig
from icsim.model.registry import did_you_mean


class ConfigError(Picklable, ValueError):
    """A bad configuration; ``str()`` is one line naming the key path and the reason."""

    def __init__(self, path: str, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}" if path else reason)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# numbers as the model can represent them: no booleans, no strings, finite, within a
# physically meaningful range (a config is checked before anything is built)
def Int(default: Any = ..., **limits: Any) -> Any:
    return Field(default, strict=True, **limits)


def Num(default: Any = ..., **limits: Any) -> Any:
    return Field(default, strict=True, allow_inf_nan=False, **limits)


#: the largest simulated time any phase of a run may ask for: one second
MAX_US = 1e6


#: the keys each topology kind takes beyond ``kind`` (the rest must be left out)
TOPOLOGY_KEYS = {
    "torus": {"dims", "wrap", "failed_links", "failed_nodes"},
    "graph": {"file", "p"},
    "random_regular": {"nodes", "degree", "seed", "p"},
    "dragonfly": {"p", "a", "h", "g", "arrangement"},
    "fat_tree": {"k", "n", "taper"},
    "hyperx": {"dims", "p", "trunking"},
}


class TopologyConfig(_Section):
    kind: Literal["torus", "graph", "random_regular", "dragonfly", "fat_tree", "hyperx"] = "torus"
    # torus: sizes per dimension; hyperx: routers per dimension (S)
    dims: tuple[Annotated[int, Int(ge=1)], ...] | None = None
    wrap: tuple[Annotated[bool, Field(strict=True)], ...] | None = None
    file: str | None = None
    nodes: int | None = Int(None, ge=2)
    degree: int | None = Int(None, ge=1)
    seed: int = Int(0, ge=0)
    # terminals per router (graph, dragonfly, hyperx; a torus has one, a fat tree k per leaf)
    p: int | None = Int(None, ge=1, le=64)
    # dragonfly: routers per group, global links per router, groups (default a*h + 1), how
    # the global links are arranged
    a: int | None = Int(None, ge=1, le=1 << 12)
    h: int | None = Int(None, ge=1, le=1 << 12)
    g: int | None = Int(None, ge=1, le=1 << 16)
    arrangement: Literal["absolute", "relative", "circulant"] = "absolute"
    # fat tree (k-ary n-tree): arity, levels, top-level tapering
    k: int | None = Int(None, ge=1, le=1 << 10)
    n: int | None = Int(None, ge=1, le=16)
    taper: int = Int(1, ge=1, le=1 << 10)
    # hyperx: parallel links between two routers of a line
    trunking: int = Int(1, ge=1, le=64)
    # links out of service: [u, v] (two neighbours) or [u, "x+"] (a node and a port name)
    failed_links: tuple[tuple[Annotated[int, Int(ge=0)],
                              Annotated[int, Int(ge=0)] | str], ...] = ()
    failed_nodes: tuple[Annotated[int, Int(ge=0)], ...] = ()

    @model_validator(mode="after")
    def _shape(self) -> "TopologyConfig":
        if self.kind == "torus":
            if not self.dims:
                raise ValueError("dims: a torus needs dims, e.g. [8, 8, 8]")
            if self.wrap is not None and len(self.wrap) != len(self.dims):
                raise ValueError(f"wrap: {len(self.wrap)} entries for {len(self.dims)} dimensions")
        elif self.failed_links or self.failed_nodes:
            raise ValueError("failed_links: failures apply to tori (a graph topology is given "
                             "by its working links)")
        if self.kind == "graph" and not self.file:
            raise ValueError("file: a graph topology needs an edge-list file")
        elif self.kind == "random_regular" and (self.nodes is None or self.degree is None):
            raise ValueError("nodes: random_regular needs nodes and degree")
        # a key another kind takes is refused (a dragonfly's dims, a HyperX's wrap), unless
        # it is given its default (an override of the kind drops the old kind's keys first)
        given = self.model_fields_set - {"kind"}
        for key in sorted(given - TOPOLOGY_KEYS[self.kind]):
            if getattr(self, key) == type(self).model_fields[key].default:
                continue
            takes = [kind for kind, keys in TOPOLOGY_KEYS.items() if key in keys]
            raise ValueError(f"{key}: not a key of a {self.kind} topology (it belongs to "
                             f"{' and '.join(takes)}; a {self.kind} takes "
                             f"{', '.join(sorted(TOPOLOGY_KEYS[self.kind]))})")
        need = {"dragonfly": ("p", "a", "h"), "fat_tree": ("k", "n"), "hyperx": ("dims",)}
        for key in need.get(self.kind, ()):
            if getattr(self, key) is None:
                raise ValueError(f"{key}: a {self.kind} needs {', '.join(need[self.kind])}")
        return self


class PacketConfig(_Section):
    size_bytes: int = Int(512, gt=0, le=1 << 24)


class LinkClassConfig(_Section):
    bandwidth_gbps: float | None = Num(None, gt=0, le=1e6)
    latency_ns: float | None = Num(None, ge=0, le=1e9)


class LinkConfig(_Section):
    bandwidth_gbps: float = Num(20.0, gt=0, le=1e6)
    latency_ns: float = Num(200.0, ge=0, le=1e9)
    # a link class's own bandwidth and latency (e.g. a dragonfly's global links), by the
    # topology's class names; what a class leaves out is the values above
    classes: dict[str, LinkClassConfig] = Field(default_factory=dict)


class NicConfig(_Section):
    bandwidth_gbps: float = Num(64.0, gt=0, le=1e6)
    latency_ns: float = Num(80.0, ge=0, le=1e9)
    injection_rate_factor: float = Num(2.4, gt=0, le=1e3)
    handshake: Literal["none", "stop_and_wait"] = "none"


class RouterConfig(_Section):
    queue_packets: int = Int(8, ge=1, le=1 << 20)
    switching: Literal["store_and_forward", "virtual_cut_through"] = "store_and_forward"
    flow_control: Literal["credit", "ack_nak"] = "credit"
    arbitration: Literal["oldest_first", "escape_priority"] = "oldest_first"
    tie_break: Literal["random", "ordered"] = "random"
    cycle_ns: float = Num(0.8, gt=0, le=1e6)
    delay_cycles: int = Int(0, ge=0, le=1 << 20)
    injection_min_free: int | None = Int(None, ge=1)
    bubble: bool = Field(True, strict=True)
    ack_bytes: int = Int(10, gt=0, le=1 << 24)

    @model_validator(mode="after")
    def _room(self) -> "RouterConfig":
        if self.bubble and self.queue_packets < 2:
            raise ValueError("queue_packets: the bubble rule needs queues of at least 2 packets")
        if self.injection_min_free is not None and self.injection_min_free > self.queue_packets:
            raise ValueError(f"injection_min_free: {self.injection_min_free} exceeds "
                             f"queue_packets {self.queue_packets}; nothing could be injected")
        return self


#: flat ``routing.<key>`` of older configs -> the ``routing.<section>.<key>`` entries it means
LEGACY_ROUTING_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "delta": (("ofr", "delta"),),
    "eta": (("por", "eta"), ("ofr", "eta")),
    "profit": (("por", "profit"), ("ofr", "profit")),
    "ofr_candidates": (("ofr", "candidates"),),
    "min_deroute_distance": (("por", "min_deroute_distance"), ("ofr", "min_deroute_distance")),
    "table": (("table", "file"),),
    "generator": (("table", "generator"),),
    "layers": (("table", "layers"),),
}


class RoutingConfig(BaseModel):
    """``routing.algorithm`` and one section per algorithm (``routing.<name>: {...}``).

    The sections are kept as given; the build step validates each with its algorithm's own
    model (an unknown section name, or an unknown key inside one, is an error there).
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    algorithm: str = Field("dor", strict=True)
    #: Python files that register routing algorithms (a plug-in in one file), imported
    #: before ``algorithm`` is looked up; paths from the working directory
    plugins: tuple[str, ...] = Field((), strict=False)

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """Move the flat keys of older configs into the sections they mean (an explicit
        section entry wins over a flat key)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        if isinstance(out.get("table"), (str, type(None))) and "table" in out:
            out["table"] = {"file": out["table"]} if out["table"] is not None else {}
        for key, targets in LEGACY_ROUTING_KEYS.items():
            if key == "table" or key not in out:
                continue
            value = out.pop(key)
            if value is None:
                continue               # "not set" in older configs: the section's default
            for section, name in targets:
                body = out.get(section)
                if body is None:
                    body = {}
                if not isinstance(body, dict):
                    raise ValueError(f"{section}: must be a section (a mapping)")
                out[section] = {name: value, **body}
        for name, body in out.items():
            if name not in ("algorithm", "plugins") and not isinstance(body, dict):
                # a value under a name near a key (routing.algoritm=abr) is that key mistyped
                near = did_you_mean(name, ("algorithm", "plugins", *LEGACY_ROUTING_KEYS))
                if near:
                    key = near.split("'")[1]
                    section = LEGACY_ROUTING_KEYS.get(key, (("", ""),))[0][0]
                    raise ValueError(f"{name}: unknown key (did you mean 'routing."
                                     f"{section + '.' if section else ''}{key}'?)")
                raise ValueError(f"{name}: must be a section (a mapping) of the algorithm's "
                                 f"settings, got {body!r}")
        return out

    def sections(self) -> dict[str, dict[str, Any]]:
        """The algorithm sections present, by name."""
        return dict(self.model_extra or {})

    def section(self, name: str) -> dict[str, Any]:
        """The section of algorithm ``name`` as given (empty when absent)."""
        return dict((self.model_extra or {}).get(name) or {})


class TrafficConfig(_Section):
    workload: Literal["open", "collective", "trace", "app"] = "open"
    pattern: str = Field("uniform", strict=True)
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Python files that register traffic patterns (a plug-in in one file), imported before
    #: ``pattern`` is looked up; paths from the working directory
    plugins: tuple[str, ...] = Field((), strict=False)

    def pattern_params(self, name: str | None = None) -> dict[str, Any]:
        """Parameters for pattern ``name`` (default: the configured one): ``params`` is keyed
        by pattern name, so one config can carry settings for several patterns."""
        return dict(self.params.get(name or self.pattern, {}))
    load: float = Num(0.5, ge=0, le=1e3)
    message_packets: int = Int(96, ge=1, le=1 << 20)
    arrivals: Literal["deterministic", "exponential"] = "deterministic"
    phase: Literal["random", "aligned"] = "random"
    collective: str = Field("alltoall", strict=True)
    interleave: bool = Field(False, strict=True)
    message_bytes: int = Int(1 << 20, gt=0, le=1 << 30)             # at most 1 GiB
    trace: str | None = None
    nodes: list[Annotated[int, Int(ge=0)]] | None = None
    jobs: list[JobConfig] | None = None


class RunConfig(_Section):
    engine: Literal["auto", "simpy", "compiled"] = "auto"
    mode: Literal["window", "finite"] = "window"
    warmup_us: float = Num(50.0, ge=0, le=MAX_US)
    measure_us: float = Num(200.0, gt=0, le=MAX_US)
    drain_us: float = Num(500.0, ge=0, le=MAX_US)
    messages_per_node: int = Int(32, ge=1, le=1 << 20)
    watchdog_us: float = Num(50.0, gt=0, le=MAX_US)
    max_time_us: float | None = Num(None, gt=0, le=MAX_US)
    stop_when_saturated: bool = Field(False, strict=True)
    latency_limit_ns: float | None = Num(None, gt=0, le=MAX_US * 1000)


class Config(_Section):
    seed: int = Int(1, ge=0)
    topology: TopologyConfig
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
        hashes of it (the sweeps' ``config_hash``) survive schema growth.  (Routing sections
        are kept as given; the build step's :func:`~icsim.simulator.build.identity` also drops
        their defaults.)

        >>> Config(seed=3, topology={"dims": [4, 4]}, traffic={"load": 0.25}).non_default()
        {'seed': 3, 'topology': {'dims': [4, 4]}, 'traffic': {'load': 0.25}}
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
    for name, value in (model.model_extra or {}).items():
        if value:
            out[name] = value
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
        value = yaml.load(raw, Loader=_StrictLoader) if raw.strip() else None
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
    if path == ["topology", "kind"] and value != node.get("kind", "torus"):
        # another kind: the keys that described the kind it replaces go (a torus's dims
        # under --set topology.kind=random_regular), what both take stays
        keep = TOPOLOGY_KEYS.get(value, set())
        for other in [k for k in node if k != "kind" and k not in keep]:
            del node[other]
    node[path[-1]] = value


def apply_overrides(raw: dict, overrides: list[str] | None) -> dict:
    """A copy of ``raw`` with every ``key.path=value`` override applied."""
    data = copy.deepcopy(raw)
    for item in overrides or []:
        path, value = parse_override(item)
        set_path(data, path, value)
    return data


#: an example of each list a config holds, for the message that a value is not a list
LIST_EXAMPLES = {"topology.dims": "[8, 8, 8]", "topology.wrap": "[true, true, false]",
                 "topology.failed_links": "[[0, 1], [5, x+]]", "topology.failed_nodes": "[3, 17]",
                 "traffic.nodes": "[0, 1, 2, 3]"}

#: what a value should have been, by the kind of pydantic error it made
EXPECTED = {
    "tuple_type": "a list", "list_type": "a list", "set_type": "a list",
    "int_type": "a whole number", "int_parsing": "a whole number",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "string_type": "text",
    "dict_type": "a section (a mapping of keys to values)",
    "model_type": "a section (a mapping of keys to values)",
    "model_attributes_type": "a section (a mapping of keys to values)",
    "finite_number": "a finite number",
}

#: bounds: pydantic's context key -> how the expectation reads
BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def _error_from_validation(exc: ValidationError, model: type[BaseModel] | None = None,
                           prefix: str = "") -> ConfigError:
    """The first error of a validation as a :class:`ConfigError`: the key path, what was
    expected and what was given.  ``model`` is the model validated (default: :class:`Config`
    when it was), whose fields suggest a mistyped key; ``prefix`` is its key path in a config
    (``routing.ofr.``)."""
    if model is None and exc.title == Config.__name__:
        model = Config
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    msg, kind, ctx = err["msg"], err["type"], err.get("ctx") or {}
    path = prefix + ".".join(loc)
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
        # validators report "field: reason"; fold the field into the path
        head, sep, rest = msg.partition(": ")
        if sep and " " not in head:
            loc.append(head)
            msg = rest
        return ConfigError(prefix + ".".join(loc), msg)
    if kind == "extra_forbidden":
        return ConfigError(path, _unknown_key(model, loc, prefix))
    if kind == "missing":
        return ConfigError(path, "missing: this key is required")
    got = f", got {_shown(err.get('input'))}"
    if kind == "literal_error":
        names = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        near = did_you_mean(err.get("input"), names)
        return ConfigError(path, f"expected {ctx.get('expected')}{got}"
                                 + (f" ({near})" if near else ""))
    bound = next((key for key in BOUNDS if key in ctx), None)
    if kind in EXPECTED:
        expected = EXPECTED[kind]
        example = LIST_EXAMPLES.get(path)
        if expected == "a list" and example:
            expected += f" such as {example}"
    elif bound is not None:
        limit = ctx[bound]                # a whole limit whole (1,048,576, not 1.04858e+06)
        shown = (f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"
                 if isinstance(limit, float) else None)
        expected = (f"a number {BOUNDS[bound]} {shown}" if shown is not None else
                    f"a value {BOUNDS[bound]} {limit}")
    elif kind in ("too_long", "too_short"):
        n = ctx.get("max_length" if kind == "too_long" else "min_length")
        expected = f"{'at most' if kind == 'too_long' else 'at least'} {n} item{'s' * (n != 1)}"
    else:
        return ConfigError(path, msg)
    return ConfigError(path, f"expected {expected}{got}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unknown_key(model: type[BaseModel] | None, loc: list[str], prefix: str) -> str:
    """``unknown key``, with the nearest key of its section or else the section's keys."""
    section = _model_at(model, loc[:-1]) if model is not None else None
    if section is None:
        return "unknown key"
    keys = list(section.model_fields)
    where = prefix + "".join(f"{part}." for part in loc[:-1])
    near = did_you_mean(loc[-1], keys, where)
    if near:
        return f"unknown key ({near})"
    return f"unknown key; {where.rstrip('.') or 'a config'} takes {', '.join(keys)}"


def _model_at(model: type[BaseModel], loc: list[str]) -> type[BaseModel] | None:
    """The model of the section at key path ``loc`` below ``model`` (None if not a section)."""
    for part in loc:
        field = model.model_fields.get(part)
        if field is None:
            return None
        found = _model_in(field.annotation)
        if found is None:
            return None
        model = found
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def config_from_dict(data: dict, overrides: list[str] | None = None) -> Config:
    """Validate a config mapping (after ``--set`` overrides) against the schema; ConfigError
    naming the key otherwise.  Semantic checks are the build step's
    (:func:`icsim.simulator.build.check`)."""
    if not isinstance(data, dict):
        raise ConfigError("", "the config must be a mapping of sections")
    data = apply_overrides(data, overrides)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise _error_from_validation(exc) from None


#: a config file is a page of YAML; anything bigger is the wrong file
MAX_CONFIG_BYTES = 1 << 20
#: values in a config after expanding YAML aliases, and how deeply sections may nest
MAX_CONFIG_VALUES, MAX_CONFIG_DEPTH = 100_000, 32


def load_config(path: str | Path, overrides: list[str] | None = None) -> Config:
    """Read a YAML config, apply ``--set`` overrides, validate it against the schema; raise
    ConfigError.  (``icsim.simulator.build.load`` also runs the semantic checks.)

    The file must be a readable UTF-8 file of at most 1 MiB holding a mapping of sections: an
    empty or comment-only file is refused (it would silently run a default network), and so
    is one whose YAML aliases expand to more than 100,000 values or nest deeper than 32
    levels.  File errors name the file (and line): ``cfg.yaml:3: not valid YAML: ...``.
    """
    return config_from_dict(read_config_file(path), overrides)


def read_config_file(path: str | Path) -> dict:
    """The mapping a YAML config file holds; ConfigError naming the file for anything else.
    The files a bundled config names are taken from the bundle
    (:func:`icsim.configs.bundle_files`), those of any other config from the working
    directory."""
    name = str(path)
    try:
        text = read_text(path, max_bytes=MAX_CONFIG_BYTES)
    except InputFileError as exc:
        raise ConfigError(exc.where, exc.reason) from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.reader.ReaderError as exc:
        raise ConfigError(f"{name}:{text.count(chr(10), 0, exc.position) + 1}",
                          f"not valid YAML: character U+{_code(exc.character):04X} is not "
                          f"allowed") from None
    except yaml.MarkedYAMLError as exc:
        where = f"{name}:{exc.problem_mark.line + 1}" if exc.problem_mark else name
        problem = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise ConfigError(where, f"not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(name, f"not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise ConfigError(name, "not a config: nested too deeply") from None
    except ValueError as exc:                      # e.g. an integer of more than 4300 digits
        raise ConfigError(name, f"not a config: {exc}") from None
    if data is None:
        raise ConfigError(name, "the config file holds no settings (it is empty or only "
                                "comments); a config needs at least a topology section")
    if not isinstance(data, dict):
        raise ConfigError(name, f"a config is a mapping of sections (topology:, traffic:, "
                                f"...), not a {_yaml_kind(data)}")
    _check_size(name, data)
    return bundle_files(path, data)


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (YAML
    says keys are unique; PyYAML silently keeps the last, so a second ``traffic:`` section
    would replace the first), and that numbers with an exponent are numbers as YAML 1.2 reads
    them: PyYAML follows YAML 1.1, which takes ``5e-1`` or ``1.0e3`` for text.

    >>> yaml.load("[5e-1, 1.0e3, -2E+2, .5e-1, 5, 1.5, 5e]", Loader=_StrictLoader)
    [0.5, 1000.0, -200.0, 0.05, 5, 1.5, '5e']
    """

    def construct_mapping(self, node, deep=False):
        first: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                again = key in first
            except TypeError:                     # unhashable: the base class reports it
                continue
            if again:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice in one section (first on line "
                                f"{first[key].line + 1})", key_node.start_mark)
            first[key] = key_node.start_mark
        return super().construct_mapping(node, deep)


# YAML 1.2's core-schema floats that YAML 1.1 reads as text: those with an exponent (the ones
# without are read alike by both)
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$"), list("-+.0123456789"))


def _code(character: int | str) -> int:
    return character if isinstance(character, int) else ord(character)


def _yaml_kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def _check_size(name: str, data: dict) -> None:
    """Refuse a config whose YAML aliases expand to an absurd size (a "billion laughs"), that
    refers to itself, or with a key no schema has (a line break in it), before anything walks
    it."""
    count = 0

    def walk(value: Any, depth: int) -> None:
        nonlocal count
        count += 1
        if count > MAX_CONFIG_VALUES:
            raise ConfigError(name, f"not a config: more than {MAX_CONFIG_VALUES:,} values "
                                    f"(counting every use of a YAML alias)")
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(name, f"not a config: nested more than {MAX_CONFIG_DEPTH} levels "
                                    f"deep (or a YAML alias that refers to itself)")
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and not k.isprintable():
                    raise ConfigError(name, f"not a config: key {k!r} is not a name")
                walk(k, depth + 1)
                walk(v, depth + 1)
        elif isinstance(value, (list, tuple, set)):
            for v in value:
                walk(v, depth + 1)

    walk(data, 0)
