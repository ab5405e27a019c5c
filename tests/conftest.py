"""Shared helpers: small configs and single-message runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from icsim.simulator.build import build
from icsim.simulator.config import config_from_dict
from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
from icsim.traffic.workloads import scheduled


def small_config(dims=(4, 4), **sections):
    """A config on a small torus; keyword arguments are whole sections (dicts) or scalars."""
    data = {"topology": {"kind": "torus", "dims": list(dims)}}
    for key, value in sections.items():
        data[key] = value
    return config_from_dict(data)


def send_one(cfg, src, dst, packets=1, at=0):
    """Run a network with a single message and return (packets, consume times in ns)."""
    model = build(cfg)
    spec = dataclasses.replace(model.spec, window=None, horizon_ps=None)
    engine = SimpyEngine(spec, scheduled("collective", [(at, src, dst, packets)]),
                         RandomStream(np.random.default_rng(0)))
    got = []
    sink = engine.flow.sink
    engine.flow.sink = lambda p, t: (got.append((p, t / 1000.0)), sink(p, t))
    engine.run()
    return got


@pytest.fixture
def table1():
    """Table 1's link and NIC times, in ns."""
    return {"S": 512, "B_link": 20.0, "lat_link": 200.0, "B_nic": 64.0, "lat_nic": 80.0}
