"""Every bundled config validates and runs (shortened), so the examples stay true."""

from __future__ import annotations

from pathlib import Path

import pytest

from icsim.model.config import load_config
from icsim.simulator.simulation import run

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").rglob("*.yaml"))


def shortened(cfg) -> list[str]:
    """Overrides that keep each config's model but make the run take a second or two."""
    over = []
    if cfg.topology.kind == "torus" and max(cfg.topology.dims) > 4 and len(cfg.topology.dims) == 3:
        over.append("topology.dims=[4,4,4]")
    if cfg.traffic.workload == "collective":
        over.append("traffic.message_bytes=16384")
    elif cfg.traffic.workload == "open" and cfg.run.mode == "finite":
        over += ["run.messages_per_node=1", "traffic.message_packets=4"]
    elif cfg.traffic.workload == "open":
        over += ["run.warmup_us=2", "run.measure_us=8", "run.drain_us=20"]
    return over


@pytest.mark.parametrize("path", CONFIGS, ids=[str(p.relative_to(ROOT)) for p in CONFIGS])
def test_every_bundled_config_runs(path, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)                  # the files a bundled config names are its own
    cfg = load_config(path)
    r = run(load_config(path, shortened(cfg)))
    assert r["packets_delivered"] > 0
