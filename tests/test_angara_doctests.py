"""The runnable examples in the Angara modules' docstrings."""

import doctest
import importlib

import pytest

MODULES = ["routing.tables.routing_graph", "routing.tables.augment", "routing.tables.metrics",
           "routing.tables.check", "routing.tables.generators", "routing.tables.bfs",
           "routing.tables.sssp", "routing.tables.genetic", "experiments.angara"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
