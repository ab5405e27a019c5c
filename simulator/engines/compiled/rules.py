"""The saturation rules of :mod:`icsim.simulator.results` compiled for the loop: the very same
functions (:func:`~icsim.simulator.results.window_rule`,
:func:`~icsim.simulator.results.queue_growth`, :func:`~icsim.simulator.results.latency_rule`),
their code jitted as it is, so that the two engines and the result record decide saturation by
one source.  The Python side calls them uncompiled: a run on the SimPy engine, a record and a
sweep's analysis need no numba.

Each is compiled with the module's names, the compiled ones in place of the plain
(``window_rule`` calls ``queue_growth``, which numba compiles into it):

>>> import numpy as np
>>> from icsim.simulator import results
>>> ramp = np.arange(21, dtype=np.int64) * 64       # queues grow by 16 packets per node
>>> window_rule(100, 100, ramp, 64, 1000.0, 1.0, 15.0) == results.window_rule(
...     100, 100, ramp, 64, 1000.0, 1.0, 15.0) == results.GROWING_QUEUES
True
>>> latency_rule(40, 2, 4, 50, 8, 0.016), results.latency_rule(40, 2, 4, 50, 8, 0.016)
(True, True)
"""

from __future__ import annotations

import types
from typing import Any, Callable

from numba import njit

from icsim.simulator import results


def _compiled(fn: Callable, names: dict[str, Any]) -> Any:
    """``fn``'s code, jitted (cached) with ``names`` as its module's names."""
    return njit(cache=True)(types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__,
                                               fn.__closure__))


_names = dict(vars(results))
queue_growth = _names["queue_growth"] = _compiled(results.queue_growth, _names)
window_rule = _names["window_rule"] = _compiled(results.window_rule, _names)
latency_rule = _names["latency_rule"] = _compiled(results.latency_rule, _names)
