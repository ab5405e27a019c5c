"""The engines that run the model: each takes a :class:`~icsim.simulator.spec.NetworkSpec` and a
:class:`~icsim.traffic.workloads.Workload` and tallies the run
(:class:`~icsim.simulator.stats.Tally`), from which
:func:`~icsim.simulator.results.make_result` makes the result record.

* ``simpy`` (:mod:`.simpy`) — the readable reference, what researchers read and extend.

``run.engine`` in the config chooses.
"""

from __future__ import annotations


class DeadlockError(RuntimeError):
    """Packets are in the network and none has moved for the watchdog time."""
