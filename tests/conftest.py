"""Shared helpers: small configs and single-message runs."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from icsim.routing.registry import algorithms
from icsim.simulator.build import build_topology
from icsim.simulator.config import config_from_dict
from icsim.simulator.network import Network, RandomStream


def small_config(dims=(4, 4), **sections):
    """A config on a small torus; keyword arguments are whole sections (dicts) or scalars."""
    data = {"topology": {"kind": "torus", "dims": list(dims)}}
    for key, value in sections.items():
        data[key] = value
    return config_from_dict(data)


def send_one(cfg, src, dst, packets=1, at=0):
    """Run a network with a single message and return (packets, consume times in ns)."""
    topo = build_topology(cfg.topology)
    env = simpy.Environment()
    got = []
    routing = algorithms()[cfg.routing.algorithm](topo, cfg, eject_port=topo.num_ports)
    net = Network(env, topo, routing, cfg, RandomStream(np.random.default_rng(0)),
                  lambda p, t: got.append((p, t / 1000.0)))
    net.at(at, lambda a, b: net.post_message(src, dst, packets, at, 0, 0, True, 0))
    env.run()
    return got


@pytest.fixture
def table1():
    """Table 1's link and NIC times, in ns."""
    return {"S": 512, "B_link": 20.0, "lat_link": 200.0, "B_nic": 64.0, "lat_nic": 80.0}
