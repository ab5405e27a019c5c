"""Turning config sections into model objects (topology, routing), with config errors."""

from __future__ import annotations

from typing import Any

from icsim.simulator.config import ConfigError, TopologyConfig
from icsim.simulator.topology import Graph, Torus


def build_topology(tc: TopologyConfig) -> Any:
    """The topology a config section describes; ConfigError naming the key if impossible."""
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
        if tc.kind == "graph":
            return Graph.from_file(tc.file)
        return Graph.random_regular(tc.nodes, tc.degree, tc.seed)
    except ConfigError:
        raise
    except FileNotFoundError:
        raise ConfigError("topology.file", f"no such edge-list file {tc.file!r}") from None
    except ValueError as exc:
        key = {"torus": "topology.dims", "graph": "topology.file"}.get(tc.kind, "topology")
        raise ConfigError(key, str(exc)) from None


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
