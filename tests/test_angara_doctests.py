"""The runnable examples in the Angara modules' docstrings."""

import doctest
import importlib

import pytest

MODULES = ["icsim.routing.tables.routing_graph", "icsim.routing.tables.augment", "icsim.routing.tables.metrics",
           "icsim.routing.tables.check", "icsim.routing.tables.generators", "icsim.routing.tables.bfs",
           "icsim.routing.tables.sssp", "icsim.routing.tables.genetic", "icsim.experiments.papers.angara.analysis"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
