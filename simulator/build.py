"""Turning config sections into model objects (topology, routing), with config errors."""

from __future__ import annotations

from typing import Any

from icsim.simulator.config import ConfigError, TopologyConfig
from icsim.simulator.topology import Graph, Torus


def build_topology(tc: TopologyConfig) -> Any:
    """The topology a config section describes; ConfigError naming the key if impossible."""
    try:
        if tc.kind == "torus":
            return Torus(tuple(tc.dims), tuple(tc.wrap) if tc.wrap else ())
        if tc.kind == "graph":
            return Graph.from_file(tc.file)
        return Graph.random_regular(tc.nodes, tc.degree, tc.seed)
    except FileNotFoundError:
        raise ConfigError("topology.file", f"no such edge-list file {tc.file!r}") from None
    except ValueError as exc:
        key = {"torus": "topology.dims", "graph": "topology.file"}.get(tc.kind, "topology")
        raise ConfigError(key, str(exc)) from None
