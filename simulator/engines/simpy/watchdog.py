"""The deadlock watchdog: packets are in the network and none has moved for a period."""

from __future__ import annotations

from typing import Any

from icsim.simulator.engines import DeadlockError
from icsim.simulator.units import PS_PER_NS


class Watchdog:
    """Every ``period`` ps, raise :class:`DeadlockError` (naming the blocked queues) if packets
    are in the network and none has moved for the whole period."""

    def __init__(self, fab: Any, cal: Any, period: int):
        self.fab, self.cal, self.period = fab, cal, period

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
        self.cal.at(now + self.period, self.check)
