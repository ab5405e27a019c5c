"""Partial deadlocks: a cycle of stuck channels while traffic keeps flowing elsewhere.

The whole-network watchdog (each engine's ``watchdog``) fires only when no packet has moved
for ``run.watchdog_us``.  A deadlock on one ring of a torus leaves the other rings delivering,
so both engines also run this check every ``run.watchdog_us``, on what their state says:

* a router port is **stuck** when it holds packets, is not transmitting, and the head of
  every one of its non-empty VC queues is the same packet (same hops) as one watchdog period
  before (``heads`` against ``previous``);
* a stuck port **waits on** the downstream queues its head last failed to enter (the wait
  lists that wake it up, credit flow control: ``waits``);
* a set of stuck ports that only wait on queues of stuck ports can never move again: that is a
  deadlock, reported with one cycle of it (exit status 3).  A stuck port that waits on a
  queue of a port that moves, or on nothing, may move later: slow, not dead — tiny bandwidths
  and huge backlogs are never called deadlocks.

The rule is written once, here, over plain arrays each engine fills in its own way.  Under
ack/nak flow control packets are sent and refused rather than waiting, so there are no wait
lists and only the whole-network watchdog applies.  A VC-level cycle behind a port whose other
VC still moves is not reported here (the port moves); an unfinished window-mode run then says
how many ports were stuck when it ended (:func:`count_stuck`).

>>> import numpy as np
>>> # a 3-port ring, one VC: ports 0 -> 1 -> 2 -> 0 each wait on the next one's queue
>>> heads = np.array([[5, 1], [6, 1], [7, 2]])
>>> stuck = stuck_ports(heads, heads.copy(), np.zeros(3, bool), vcs=1)
>>> deadlock_cycle(stuck, np.array([0, 1, 2]), np.array([1, 2, 0]), vcs=1)
[0, 1, 2]
>>> moved = heads.copy(); moved[2] = [9, 3]              # port 2's head moved: no deadlock
>>> deadlock_cycle(stuck_ports(heads, moved, np.zeros(3, bool), vcs=1),
...                np.array([0, 1, 2]), np.array([1, 2, 0]), vcs=1) is None
True
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from icsim.model.units import PS_PER_NS
from icsim.simulator.engines import DeadlockError

#: a ``heads`` row of an empty queue
EMPTY = -1


def stuck_ports(previous: np.ndarray | None, heads: np.ndarray, busy: np.ndarray,
                vcs: int) -> np.ndarray:
    """Per router port id: stuck (module docstring).

    ``heads``, ``previous``: one row per queue id (``port_id * vcs + vc``) identifying its head
    packet (any columns; the first is :data:`EMPTY` when the queue is empty), now and one
    watchdog period before (None: no earlier check, nothing is stuck).  ``busy``: per port id,
    transmitting."""
    nports = len(heads) // vcs
    if previous is None:
        return np.zeros(nports, dtype=bool)
    full = (heads[:, 0] != EMPTY).reshape(nports, vcs)
    same = np.all(heads == previous, axis=1).reshape(nports, vcs)
    return full.any(axis=1) & np.all(~full | same, axis=1) & ~np.asarray(busy[:nports], bool)


def deadlock_cycle(stuck: np.ndarray, wait_ports: np.ndarray, wait_queues: np.ndarray,
                   vcs: int) -> list[int] | None:
    """A cycle of stuck ports that only wait on stuck ports (module docstring), as port ids in
    waiting order, or None.  ``wait_ports[i]`` waits for room in queue ``wait_queues[i]``."""
    import networkx as nx              # only when ports are stuck: a run imports it rarely

    nports = len(stuck)
    keep = (wait_ports < nports) & stuck[np.minimum(wait_ports, nports - 1)]
    src, dst = wait_ports[keep], wait_queues[keep] // vcs
    if not len(src):
        return None
    graph = nx.DiGraph()
    # in sorted order, so that the cycle named does not depend on how an engine lists waits
    graph.add_edges_from(sorted(set(zip(src.tolist(), dst.tolist()))))
    # ports that may still move: stuck ports with no wait, ports that are not stuck, and
    # every stuck port that waits (directly or not) on one of them
    free = deque(n for n in graph if not stuck[n] or graph.out_degree(n) == 0)
    gone = set(free)
    while free:
        n = free.popleft()
        for m in graph.predecessors(n):
            if m not in gone:
                gone.add(m)
                free.append(m)
    dead = graph.subgraph(n for n in graph if n not in gone)
    if not dead.number_of_nodes():
        return None
    start = min(dead.nodes)
    return [u for u, _ in nx.find_cycle(dead, source=start)]


def count_stuck(previous: np.ndarray | None, heads: np.ndarray, busy: np.ndarray,
                vcs: int) -> int:
    """How many router ports are stuck (for an unfinished run's verdict)."""
    return int(stuck_ports(previous, heads, busy, vcs).sum())


def waiting_now(heads: np.ndarray, busy: np.ndarray, vcs: int,
                wait_ports: np.ndarray) -> np.ndarray:
    """Per router port id: it holds packets, is not transmitting and waits for room downstream
    (its id in ``wait_ports``) — what the wait graph says at this moment, with no history."""
    nports = len(heads) // vcs
    full = (heads[:, 0] != EMPTY).reshape(nports, vcs).any(axis=1)
    waits = np.zeros(nports, dtype=bool)
    waits[wait_ports[wait_ports < nports]] = True
    return full & waits & ~np.asarray(busy[:nports], bool)


def cycle_at_end(heads: np.ndarray, busy: np.ndarray, vcs: int, wait_ports: np.ndarray,
                 wait_queues: np.ndarray) -> list[int] | None:
    """A deadlocked cycle in the wait graph as it is (an unfinished run's end): ports that hold
    packets, do not transmit and wait only on such ports can never move again, however long
    ago they stopped (:func:`deadlock_cycle` over :func:`waiting_now`)."""
    stuck = waiting_now(heads, busy, vcs, wait_ports)
    return deadlock_cycle(stuck, wait_ports, wait_queues, vcs) if stuck.any() else None


def deadlock_at_end(spec: Any, cycle: list[int], now_ps: int) -> DeadlockError:
    """The error both engines raise for a cycle found at the end of an unfinished run."""
    return DeadlockError(
        f"deadlock: at the end of the run (t = {now_ps / PS_PER_NS:.0f} ns) a cycle of "
        f"{len(cycle)} channels holds packets and waits only on itself: "
        f"{describe_ports(spec, cycle)}")


def describe_ports(spec, ports: list[int]) -> str:
    """``node 3 (3, 0) x+ -> node 0 (0, 0) x+ -> ...``: a cycle of port ids, readably."""
    topo, P = spec.topology, spec.ports_per_router
    out = []
    for pid in ports:
        node, port = divmod(pid, P)
        out.append(f"node {topo.where(node)} {topo.port_name(port)}")
    return " -> ".join(out + out[:1])


def deadlock_in_cycle(spec: Any, cycle: list[int], stuck: int, since_ps: int,
                      now_ps: int) -> DeadlockError:
    """The error both engines raise for a deadlocked cycle."""
    return DeadlockError(
        f"deadlock: a cycle of {len(cycle)} channels whose heads have not moved since "
        f"t = {since_ps / PS_PER_NS:.0f} ns (now {now_ps / PS_PER_NS:.0f} ns) and that wait "
        f"only on each other ({stuck} ports stuck in all; other traffic may still flow): "
        f"{describe_ports(spec, cycle)}")


class HeadHistory:
    """The queue heads at the last two watchdog checks, for an engine's watchdog: ``since(t,
    period)`` is the latest snapshot at least one period before ``t`` (the run may end just
    after a check)."""

    def __init__(self) -> None:
        self.snaps: list[tuple[int, np.ndarray]] = []

    @property
    def last(self) -> tuple[int, np.ndarray | None]:
        return self.snaps[-1] if self.snaps else (0, None)

    def add(self, t: int, heads: np.ndarray) -> None:
        self.snaps = [*self.snaps[-1:], (t, heads)]

    def since(self, t: int, period: int) -> np.ndarray | None:
        for when, heads in reversed(self.snaps):
            if t - when >= period:
                return heads
        return None
