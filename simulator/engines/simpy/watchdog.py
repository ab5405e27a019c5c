"""The deadlock watchdog, every ``run.watchdog_us``: packets are in the network and none has
moved for a period (the whole network stopped), or a cycle of stuck channels while traffic
flows elsewhere (:mod:`icsim.simulator.engines.deadlock`, the rule both engines share)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icsim.model.units import PS_PER_NS
from icsim.simulator.engines import DeadlockError
from icsim.simulator.engines.deadlock import (EMPTY, HeadHistory, count_stuck, cycle_at_end,
                                              deadlock_at_end, deadlock_cycle, deadlock_in_cycle,
                                              stuck_ports)


class Watchdog:
    """Every ``period`` ps, raise :class:`DeadlockError` (naming the blocked queues) if packets
    are in the network and none has moved for the whole period, or (naming the cycle) if some
    ports form a deadlocked cycle."""

    def __init__(self, fab: Any, cal: Any, period: int):
        self.fab, self.cal, self.period = fab, cal, period
        self.history = HeadHistory()                  # queue heads at the last checks

    def start(self) -> None:
        self.cal.at(self.cal.now + self.period, self.check)

    def check(self, _: Any = None, __: Any = None) -> None:
        fab, now = self.fab, self.cal.now
        if fab.in_network > 0 and now - fab.progress_ps >= self.period:
            blocked = fab.blocked_queues()
            shown = "; ".join(blocked[:12])
            more = f" (+{len(blocked) - 12} more)" if len(blocked) > 12 else ""
            raise DeadlockError(
                f"deadlock: {fab.in_network} packets in the network and none has moved for "
                f"{(now - fab.progress_ps) / PS_PER_NS:.0f} ns (since t = "
                f"{fab.progress_ps / PS_PER_NS:.0f} ns); blocked queues: {shown}{more}")
        self.check_cycles()
        self.cal.at(now + self.period, self.check)

    # ------------------------------------------------------------------ partial deadlocks
    def heads(self) -> np.ndarray:
        """One row per queue: its head packet (id, hops), :data:`EMPTY` when empty."""
        rows = np.full((len(self.fab.queues), 2), EMPTY, dtype=np.int64)
        for q, dq in enumerate(self.fab.queues):
            if dq:
                rows[q] = dq[0].pid, dq[0].hops
        return rows

    def waits(self) -> tuple[np.ndarray, np.ndarray]:
        """(port id, queue id) pairs: the queues each waiting port waits for room in."""
        pairs = [(pid, q) for q, w in enumerate(self.fab.waiting) if w for pid in w]
        return (np.array([p for p, _ in pairs], dtype=np.int64),
                np.array([q for _, q in pairs], dtype=np.int64))

    def check_cycles(self) -> None:
        fab, now = self.fab, self.cal.now
        heads = self.heads()
        since, previous = self.history.last
        stuck = stuck_ports(previous, heads, np.asarray(fab.busy, bool), fab.V)
        if stuck.any():
            ports, queues = self.waits()
            cycle = deadlock_cycle(stuck, ports, queues, fab.V)
            if cycle:
                raise deadlock_in_cycle(fab.spec, cycle, int(stuck.sum()), since, now)
        self.history.add(now, heads)

    def stuck_at_end(self) -> int:
        """Router ports whose heads have not moved for a watchdog period or more (for an
        unfinished run's verdict), after raising :class:`DeadlockError` if the wait graph as
        it is holds a deadlocked cycle (``deadlock.cycle_at_end``)."""
        heads, busy = self.heads(), np.asarray(self.fab.busy, bool)
        if self.fab.in_network:
            cycle = cycle_at_end(heads, busy, self.fab.V, *self.waits())
            if cycle:
                raise deadlock_at_end(self.fab.spec, cycle, self.cal.now)
        return count_stuck(self.history.since(self.cal.now, self.period), heads, busy,
                           self.fab.V)
