"""The closed loop: ranks' operations (:mod:`icsim.traffic.apps.ops`) run against the network.

An operation is *ready* when everything it depends on is done; then a send posts its message
to its rank's NIC (all packets at once, each carrying the send's id) and is done, a receive is
done once its message has arrived, a computation is done ``duration`` later, a wait at once.
Done operations are taken in first-in first-out order, and each makes its dependants ready in
the order they were written: the compiled engine (``engines/compiled/app.py``) follows the
same order, so both post the same messages at the same times.  A message has arrived when its
last packet is consumed: the sink counts a message's packets as it books them, and the last
one's consumption is an action at its time, so the arrival, and what it makes ready, happens
then.  The run ends when every
operation is done.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

import numpy as np

from icsim.traffic.apps.ops import COMPUTE, RECV, SEND


class AppRunner:
    """The operations of ``app`` over the fabric ``fab`` and calendar ``cal``; ``post(src,
    dst, packets, t, op)`` posts a message, ``finish(t)`` ends the run."""

    def __init__(self, app: Any, cal: Any, post: Callable[[int, int, int, int, int], None],
                 finish: Callable[[int], None]):
        ops = app.ops
        self.cal, self.post, self.finish = cal, post, finish
        self.kind = ops.kind.tolist()
        self.src = app.terminal[ops.rank].tolist()
        self.dst = np.where(ops.peer >= 0, app.terminal[np.maximum(ops.peer, 0)], -1).tolist()
        self.packets = app.packets.tolist()
        self.duration = ops.duration.tolist()
        self.match = ops.match.tolist()
        self.ptr, self.succ = ops.succ_ptr.tolist(), ops.succ.tolist()
        self.deps = ops.ndeps.tolist()
        n = ops.num_ops
        # a send's packets still to arrive; a receive's message still to come (1) or not (0)
        self.pending = [self.packets[i] if k == SEND else 1 if k == RECV else 0
                        for i, k in enumerate(self.kind)]
        self.ready_at = [-1] * n
        self.done_at = [-1] * n
        self.arrived_at = [-1] * n
        self.left = n
        self.fifo: deque[int] = deque()

    def start(self, _: Any = None, __: Any = None) -> None:
        """At time 0: every operation that depends on nothing is ready, in order."""
        for i, d in enumerate(self.deps):
            if d == 0:
                self._ready(i)
        self._drain()

    def consumed(self, op: int, t: int) -> None:
        """A packet of send ``op``'s message is consumed at t (the sink, as it books it): the
        message arrives at t with its last packet."""
        self.pending[op] -= 1
        if self.pending[op] == 0:
            self.cal.at(t, self.arrived, op)

    def arrived(self, op: int, _: Any = None) -> None:
        """Send ``op``'s message has arrived, now."""
        r = self.match[op]
        self.pending[r] = 0
        self.arrived_at[r] = self.cal.now
        if self.deps[r] == 0:
            self.fifo.append(r)
            self._drain()

    def computed(self, op: int, _: Any = None) -> None:
        self.fifo.append(op)
        self._drain()

    def _ready(self, i: int) -> None:
        now = self.cal.now
        self.ready_at[i] = now
        k = self.kind[i]
        if k == SEND:
            self.post(self.src[i], self.dst[i], self.packets[i], now, i)
            self.fifo.append(i)
        elif k == RECV:
            if self.pending[i] == 0:
                self.fifo.append(i)
        elif k == COMPUTE and self.duration[i] > 0:
            self.cal.at(now + self.duration[i], self.computed, i)
        else:
            self.fifo.append(i)

    def _drain(self) -> None:
        now, fifo, deps, ptr, succ = self.cal.now, self.fifo, self.deps, self.ptr, self.succ
        while fifo:
            i = fifo.popleft()
            self.done_at[i] = now
            self.left -= 1
            for j in range(ptr[i], ptr[i + 1]):
                s = succ[j]
                deps[s] -= 1
                if deps[s] == 0:
                    self._ready(s)
        if self.left == 0:
            self.finish(now)

    def times(self) -> dict[str, np.ndarray]:
        """Per operation: when it was ready, done, and (a receive) when its message arrived
        (-1: never)."""
        return {"ready": np.asarray(self.ready_at, dtype=np.int64),
                "done": np.asarray(self.done_at, dtype=np.int64),
                "arrived": np.asarray(self.arrived_at, dtype=np.int64)}
