"""The event calendar of the SimPy engine: actions at exact times, decisions on clock edges.

Every state change of the model is an *action* ``fn(a, b)`` scheduled at an exact time in
picoseconds.  All actions due at one time form a *batch*, carried by a single SimPy
:class:`~simpy.events.Timeout` and applied in the order they were scheduled.  Routers decide only
on edges of their clock: after a batch, if something is waiting for a decision, the decision
phase runs at once when the batch's time is an edge, or a (possibly empty) batch is scheduled at
the next edge.  So every decision sees everything that became ready by its edge, and its outcome
never depends on the order in which same-time events were scheduled.

Only SimPy's public API is used (``Environment.timeout``, ``Event.callbacks``, ``Event.value``,
``Environment.run``); the calendar keeps its own clock, :attr:`Calendar.now`, which the model
reads instead of SimPy's.
"""

from __future__ import annotations

from typing import Any, Callable

import simpy

from icsim.model.units import edge


def _noop(a: Any, b: Any) -> None:
    pass


class Calendar:
    """Batches of actions on a SimPy environment whose clock counts picoseconds.

    Parameters
    ----------
    env : simpy.Environment
    cycle : int
        Router clock period, ps.
    pending : callable
        ``pending()`` is true when a decision phase has work (ports marked, packets arriving).
    decide : callable
        ``decide()`` runs the decision phase (at :attr:`now`, an edge).
    """

    def __init__(self, env: simpy.Environment, cycle: int, pending: Callable[[], bool],
                 decide: Callable[[], None]):
        self.env = env
        self.cycle = cycle
        self.now = 0
        self.actions = 0              # model actions applied (the result's ``events``)
        self._batches: dict[int, list] = {}
        self._pending = pending
        self._decide = decide
        self.at, self.at_edge = self._make_at()

    def _make_at(self) -> tuple[Callable[..., None], Callable[..., None]]:
        """``at(t, fn, a, b)``: schedule ``fn(a, b)`` at time ``t`` ps (>= now);
        ``at_edge(t, fn, a, b, delay)``: the same ``delay`` ps after the first clock edge at or
        after ``t`` (when a packet becomes visible to a router's decisions: the next edge, plus
        the routing pipeline).

        Closures: they run a few times per packet hop, and cell variables are cheaper than
        attribute lookups."""
        batches = self._batches
        env = self.env
        timeout = env.timeout
        run = self._run_batch
        cal = self
        cycle = self.cycle

        def at(t: int, fn: Callable, a: Any = None, b: Any = None) -> None:
            batch = batches.get(t)
            if batch is None:
                batches[t] = [(fn, a, b)]
                timeout(t - cal.now, t).callbacks.append(run)
            else:
                batch.append((fn, a, b))

        def at_edge(t: int, fn: Callable, a: Any = None, b: Any = None, delay: int = 0) -> None:
            r = t % cycle                      # = edge(t, cycle), inlined: once per packet hop
            if r:
                t += cycle - r
            at(t + delay, fn, a, b)

        return at, at_edge

    def _run_batch(self, ev: simpy.Event) -> None:
        t = self.now = ev.value
        batch = self._batches.pop(t)
        self.actions += len(batch)
        for fn, a, b in batch:
            fn(a, b)
        if self._pending():
            nxt = edge(t, self.cycle)
            if nxt == t:
                self._decide()
            elif nxt not in self._batches:
                self.at(nxt, _noop)

    def pending_actions(self):
        """Every scheduled ``(time, fn, a, b)`` (for invariant checks)."""
        for t, batch in self._batches.items():
            for fn, a, b in batch:
                yield t, fn, a, b

    def stop_event(self) -> simpy.Event:
        """An event that ends :meth:`run` when it succeeds."""
        return self.env.event()

    def run(self, until: simpy.Event) -> None:
        self.env.run(until=until)
