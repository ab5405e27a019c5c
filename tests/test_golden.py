"""The model is pinned: fixed configs give exactly the results recorded before the engine split
(``tests/golden``), field by field, to the last bit."""

from __future__ import annotations

import json

import pytest

from icsim.model.config import config_from_dict
from icsim.simulator.simulation import run
from tests.golden.cases import CASES, REPO, RESULTS, SLOW, pinned

RECORDED = json.loads(RESULTS.read_text())


@pytest.mark.parametrize("engine", ["simpy", "compiled"])
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in CASES])
def test_a_fixed_config_gives_exactly_its_pinned_result_in_both_engines(name, engine,
                                                                         monkeypatch):
    monkeypatch.chdir(REPO)
    got = pinned(run(config_from_dict(CASES[name]), engine=engine))
    assert got == RECORDED[name]
