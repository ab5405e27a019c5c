"""The compiled engine: the model of the SimPy engine restated in numba over flat arrays
(:mod:`.layout`), laid out like it — :mod:`.calendar`, :mod:`.fabric`, :mod:`.admission`,
:mod:`.credit`, :mod:`.acknak`, :mod:`.nic`, the routing program (:mod:`.routing`, with the
decisions of :mod:`.decide`) and the loop (:mod:`.loop`), with the speed machinery apart
(:mod:`.speed`, :mod:`.prefetching`).  :class:`~.engine.CompiledEngine` builds a run's arrays
and runs it; :func:`~.engine.supports` says what it can run.
"""

from icsim.simulator.engines.compiled.cache import kernel_cached
from icsim.simulator.engines.compiled.engine import MAX_WHEEL_SLOTS, CompiledEngine, supports

__all__ = ["CompiledEngine", "MAX_WHEEL_SLOTS", "kernel_cached", "supports"]
