"""Ranks' operations: what an application asks of the network, closed loop (SPEC §11's
workloads seam, beside the open-loop schedule of :mod:`icsim.traffic.workloads`).

An application is a set of ranks, each a list of operations with dependencies:

* ``SEND`` -- post a message of ``bytes`` to rank ``peer``: its packets go to the rank's NIC
  at once (an eager, buffered send), and the operation is done as soon as it is posted;
* ``RECV`` -- a message from rank ``peer``: done when the message has arrived (its last
  packet consumed) *and* its own dependencies are done;
* ``COMPUTE`` -- busy for ``duration`` ps;
* ``WAIT`` -- nothing but its dependencies (MPI's waitall; with ``iteration >= 0`` it marks
  the end of that iteration of the rank, what per-iteration times are read from).

An operation starts when every operation it depends on is done (operations with none start
at time 0).  Sends and receives match as MPI's do for one communicator and tag: the k-th send
of rank a to rank b is received by the k-th receive of b from a.

:class:`Builder` writes the operations in MPI's non-blocking style: ``isend``/``irecv`` depend
on the rank's last blocking operation; ``compute``, ``waitall`` and ``mark`` are blocking --
each depends on the last one and on every send and receive posted since.  :meth:`Builder.op`
takes explicit dependencies (what a motif file gives, :mod:`icsim.traffic.apps.files`).

:meth:`Builder.build` checks the whole: a receive with no matching send (its rank would hang),
a send no receive takes, and a dependency cycle -- through the ranks' own dependencies and
the messages between them, which is how an application deadlocks (each rank waiting for a
message the other sends only after its own receive) -- each a :class:`AppError` naming the
rank and the operation.  A checked :class:`Ops` always runs to completion on a network that
delivers every packet.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from icsim.traffic.trace import MAX_MESSAGE_BYTES, MAX_PACKETS, MAX_TIME_NS

SEND, RECV, COMPUTE, WAIT = 0, 1, 2, 3
KINDS = ("send", "recv", "compute", "wait")

#: the most operations an application may have (about 100 bytes each in the engines)
MAX_OPS = 20_000_000
#: the most messages, and packets, an application may send in all: a trace's limits
#: (:data:`~icsim.traffic.trace.MAX_PACKETS`), for the same reason (hours of simulation)
MAX_MESSAGES = MAX_PACKETS
#: the longest computation: 1 s (a motif file's ``time_us`` <= 1e6)
MAX_COMPUTE_PS = 10 ** 12
#: the most time a rank may spend computing in all: a trace's last time (100 s)
MAX_BUSY_PS = int(MAX_TIME_NS) * 1000


class AppError(ValueError):
    """An application that cannot run: the message names the rank and the operation."""


@dataclass(frozen=True)
class Ops:
    """Checked operations, as the engines read them (one entry per operation, rank by rank
    in the order written).

    Attributes
    ----------
    kind, rank, peer : ndarray of int32
        ``SEND``/``RECV``/``COMPUTE``/``WAIT``; the operation's rank; the other rank of a send
        or receive (-1 otherwise).
    nbytes : ndarray of int64
        A message's size (sends and receives; 0 otherwise).
    duration : ndarray of int64
        A computation's time in ps.
    iteration : ndarray of int32
        The iteration a ``WAIT`` ends (-1: none).
    match : ndarray of int64
        A send's receive, a receive's send (-1 otherwise).
    ndeps : ndarray of int32
        How many operations each depends on.
    succ_ptr, succ : ndarray of int64
        Who depends on each operation: ``succ[succ_ptr[i]:succ_ptr[i + 1]]``, in the order
        they were written.
    num_ranks : int
    """

    kind: np.ndarray
    rank: np.ndarray
    peer: np.ndarray
    nbytes: np.ndarray
    duration: np.ndarray
    iteration: np.ndarray
    match: np.ndarray
    ndeps: np.ndarray
    succ_ptr: np.ndarray
    succ: np.ndarray
    num_ranks: int

    @property
    def num_ops(self) -> int:
        return len(self.kind)

    def offset(self, ops: int, ranks: int) -> "Ops":
        """These operations numbered after ``ops`` others and ``ranks`` other ranks (several
        jobs in one run)."""
        peer = np.where(self.peer >= 0, self.peer + ranks, -1).astype(np.int32)
        match = np.where(self.match >= 0, self.match + ops, -1)
        return Ops(self.kind, (self.rank + ranks).astype(np.int32), peer, self.nbytes,
                   self.duration, self.iteration, match, self.ndeps, self.succ_ptr + 0,
                   self.succ + ops, self.num_ranks)


def concatenate(parts: Sequence[Ops]) -> Ops:
    """Several jobs' operations as one application (ranks and operations renumbered in
    order; the jobs do not talk to each other)."""
    shifted, ops, ranks = [], 0, 0
    for part in parts:
        shifted.append(part.offset(ops, ranks))
        ops += part.num_ops
        ranks += part.num_ranks
    cat = {name: np.concatenate([getattr(p, name) for p in shifted])
           for name in ("kind", "rank", "peer", "nbytes", "duration", "iteration", "match",
                        "ndeps", "succ")}
    ptr, base = [np.zeros(1, np.int64)], 0
    for p in shifted:
        ptr.append(p.succ_ptr[1:] + base)
        base += len(p.succ)
    return Ops(succ_ptr=np.concatenate(ptr), num_ranks=ranks, **cat)


class Builder:
    """Operations of ``num_ranks`` ranks, written rank by rank or interleaved (module
    docstring).  Every method returns the new operation's id."""

    def __init__(self, num_ranks: int):
        if num_ranks < 1:
            raise AppError(f"an application needs at least one rank, got {num_ranks}")
        self.num_ranks = num_ranks
        self._kind: list[int] = []
        self._rank: list[int] = []
        self._peer: list[int] = []
        self._bytes: list[int] = []
        self._dur: list[int] = []
        self._iter: list[int] = []
        self._deps: list[tuple[int, ...]] = []
        self._last: list[int | None] = [None] * num_ranks        # the last blocking op
        self._open: list[list[int]] = [[] for _ in range(num_ranks)]   # posted since

    # ------------------------------------------------------------------ explicit
    def op(self, kind: int, rank: int, peer: int = -1, nbytes: int = 0, duration_ps: int = 0,
           deps: Sequence[int] = (), iteration: int = -1) -> int:
        """An operation with explicit dependencies: earlier operations of its own rank (a
        rank waits only on what it did itself, and a receive on its message)."""
        i = len(self._kind)
        if i >= MAX_OPS:
            raise AppError(f"more than {MAX_OPS:,} operations")
        self._check(i, kind, rank, peer, nbytes, duration_ps)
        for d in deps:
            if not 0 <= d < i:
                raise AppError(f"rank {rank}, operation {i}: depends on operation {d}, which "
                               f"is not an earlier one")
            if self._rank[d] != rank:
                raise AppError(f"rank {rank}, operation {i}: depends on operation {d} of rank "
                               f"{self._rank[d]} (a rank waits on its own operations and on "
                               f"messages)")
        self._kind.append(kind)
        self._rank.append(rank)
        self._peer.append(peer if kind in (SEND, RECV) else -1)
        self._bytes.append(int(nbytes) if kind in (SEND, RECV) else 0)
        self._dur.append(int(duration_ps) if kind == COMPUTE else 0)
        self._iter.append(int(iteration) if kind == WAIT else -1)
        self._deps.append(tuple(dict.fromkeys(int(d) for d in deps)))
        return i

    def _check(self, i: int, kind: int, rank: int, peer: int, nbytes: int,
               duration_ps: int) -> None:
        """AppError naming operation ``i`` if its rank, peer, size or time is not one."""
        if not 0 <= rank < self.num_ranks:
            raise AppError(f"operation {i}: rank {rank} is not a rank (0..{self.num_ranks - 1})")
        if kind in (SEND, RECV):
            if not 0 <= peer < self.num_ranks:
                raise AppError(f"rank {rank}, operation {i}: peer {peer} is not a rank "
                               f"(0..{self.num_ranks - 1})")
            if peer == rank:
                raise AppError(f"rank {rank}, operation {i}: a {KINDS[kind]} to itself")
            if not _whole(nbytes) or not 0 <= nbytes <= MAX_MESSAGE_BYTES:
                raise AppError(f"rank {rank}, operation {i}: {nbytes!r} bytes (a message has "
                               f"a whole number of bytes, 0 to {MAX_MESSAGE_BYTES:,}: 1 GiB)")
        if kind == COMPUTE and (not _whole(duration_ps)
                                or not 0 <= duration_ps <= MAX_COMPUTE_PS):
            raise AppError(f"rank {rank}, operation {i}: a compute time of {duration_ps!r} ps "
                           f"(0 to {MAX_COMPUTE_PS:,} ps: 1 s)")

    # ------------------------------------------------------------------ MPI style
    def _after(self, rank: int) -> tuple[int, ...]:
        last = self._last[rank]
        return () if last is None else (last,)

    def isend(self, rank: int, peer: int, nbytes: int) -> int:
        i = self.op(SEND, rank, peer, nbytes, deps=self._after(rank))
        self._open[rank].append(i)
        return i

    def irecv(self, rank: int, peer: int, nbytes: int) -> int:
        i = self.op(RECV, rank, peer, nbytes, deps=self._after(rank))
        self._open[rank].append(i)
        return i

    def _blocking(self, kind: int, rank: int, duration_ps: int = 0,
                  iteration: int = -1) -> int:
        i = self.op(kind, rank, duration_ps=duration_ps,
                    deps=self._after(rank) + tuple(self._open[rank]), iteration=iteration)
        self._open[rank] = []
        self._last[rank] = i
        return i

    def compute(self, rank: int, duration_ps: int) -> int:
        """Busy for ``duration_ps`` once everything posted so far is done."""
        return self._blocking(COMPUTE, rank, duration_ps)

    def waitall(self, rank: int) -> int:
        return self._blocking(WAIT, rank)

    def mark(self, rank: int, iteration: int) -> int:
        """A waitall that ends ``iteration`` of the rank."""
        return self._blocking(WAIT, rank, iteration=iteration)

    def sendrecv(self, rank: int, to: int, send_bytes: int, frm: int, recv_bytes: int) -> None:
        """MPI_Sendrecv: a send and a receive, then wait for both."""
        self.isend(rank, to, send_bytes)
        self.irecv(rank, frm, recv_bytes)
        self.waitall(rank)

    def exchange(self, messages: Iterable[tuple[int, int, int]]) -> None:
        """One step of ``(from rank, to rank, bytes)`` messages: each posted (``isend`` at its
        source, ``irecv`` at its destination, in the order given, so that a pair's k-th send
        meets its k-th receive), then a waitall on each rank taking part.  Messages to oneself
        are left out (a local copy)."""
        ranks: dict[int, None] = {}
        for src, dst, nbytes in messages:
            if src == dst:
                continue
            self.isend(src, dst, nbytes)
            self.irecv(dst, src, nbytes)
            ranks[src] = ranks[dst] = None
        for r in ranks:
            self.waitall(r)

    def repeat(self, count: int, one: Callable[[int], None]) -> None:
        """``one(it)`` for ``it`` in ``0 .. count - 1``: a motif's iterations (a
        :class:`Counter` counts the first and the last and takes the others as the first)."""
        for it in range(count):
            one(it)

    def ahead(self, messages: int, nbytes: int) -> None:
        """The next steps write ``messages`` messages of ``nbytes`` each (a collective's
        size, known in closed form): nothing here; a :class:`Counter` refuses at once what
        would pass a limit, instead of counting up to it."""

    # ------------------------------------------------------------------ the whole
    def build(self) -> Ops:
        """The checked operations (module docstring)."""
        n = len(self._kind)
        kind = np.array(self._kind, dtype=np.int32)
        rank = np.array(self._rank, dtype=np.int32)
        peer = np.array(self._peer, dtype=np.int32)
        match = np.full(n, -1, dtype=np.int64)
        sends: dict[tuple[int, int], deque[int]] = defaultdict(deque)
        for i in np.nonzero(kind == SEND)[0].tolist():
            sends[(self._rank[i], self._peer[i])].append(i)
        for i in np.nonzero(kind == RECV)[0].tolist():
            key = (self._peer[i], self._rank[i])
            if not sends[key]:
                raise AppError(f"rank {self._rank[i]} would hang: its receive from rank "
                               f"{self._peer[i]} (operation {i}) has no matching send")
            j = sends[key].popleft()
            match[i], match[j] = j, i
        for (a, b), left in sends.items():
            if left:
                raise AppError(f"rank {a}'s send to rank {b} (operation {left[0]}) is never "
                               f"received: rank {b} posts no receive for it")
        counts = np.fromiter((len(d) for d in self._deps), dtype=np.int64, count=n)
        src = np.fromiter((d for deps in self._deps for d in deps), dtype=np.int64,
                          count=int(counts.sum()))
        dst = np.repeat(np.arange(n, dtype=np.int64), counts)
        order = np.argsort(src, kind="stable")
        succ = dst[order]
        succ_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=succ_ptr[1:])
        ops = Ops(kind, rank, peer, np.array(self._bytes, dtype=np.int64),
                  np.array(self._dur, dtype=np.int64), np.array(self._iter, dtype=np.int32),
                  match, counts.astype(np.int32), succ_ptr, succ, self.num_ranks)
        check_acyclic(ops)
        return ops


class Counter(Builder):
    """What a motif would write, counted and not kept: its messages, their packets of
    ``packet_bytes``, its operations and each rank's time computing -- how big an application
    is, known before it is built.  The operations are checked as :class:`Builder` checks them
    (a bad size or time is the same AppError), and counting stops with an AppError as soon as
    the application is sure to pass a limit (:data:`MAX_MESSAGES`, :data:`MAX_PACKETS`,
    :data:`MAX_OPS`, :data:`MAX_BUSY_PS`), so that a motif of 10^9 iterations, or one of
    whose iterations sends 10^8 messages, is refused in about a second.  A motif's
    iterations (:meth:`repeat`) are counted from the first and the last: the others write
    what the first does (their compute times drawn again); while the first is counted, a
    count past its share of the limit (what is left of it over the iterations) stops
    counting.  A collective's size known in closed form is checked before it is counted
    (:meth:`ahead`)."""

    def __init__(self, num_ranks: int, packet_bytes: int):
        super().__init__(num_ranks)
        self.packet_bytes = packet_bytes
        self.messages = self.packets = self.ops = 0
        self.busy = np.zeros(num_ranks, dtype=np.int64)       # compute ps, per rank
        #: the counts at the start of the iteration being counted, and the iterations it
        #: stands for: a count c then means base + (c - base) * times in all
        self._base, self._times = (0, 0, 0), 1

    def op(self, kind: int, rank: int, peer: int = -1, nbytes: int = 0, duration_ps: int = 0,
           deps: Sequence[int] = (), iteration: int = -1) -> int:
        i = self.ops
        self._check(i, kind, rank, peer, nbytes, duration_ps)
        self.ops += 1
        if kind == SEND:
            self.messages += 1
            self.packets += max(1, -(-int(nbytes) // self.packet_bytes))
        elif kind == COMPUTE:
            self.busy[rank] += duration_ps
        if not self.ops & 1023:
            self.check(busy=False, so_far=True)
        return i

    def exchange(self, messages: Iterable[tuple[int, int, int]]) -> None:
        steps = [m for m in messages if m[0] != m[1]]
        if not steps:
            return
        arr = np.array(steps)
        n = self.num_ranks
        if (arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer)
                or ((arr[:, :2] < 0) | (arr[:, :2] >= n)).any()
                or ((arr[:, 2] < 0) | (arr[:, 2] > MAX_MESSAGE_BYTES)).any()):
            super().exchange(steps)               # one at a time: the first bad one named
            return
        self.messages += len(arr)
        self.packets += int(np.maximum(1, -(-arr[:, 2] // self.packet_bytes)).sum())
        self.ops += 2 * len(arr) + len(np.unique(arr[:, :2]))
        self.check(busy=False, so_far=True)

    def repeat(self, count: int, one: Callable[[int], None]) -> None:
        if count <= 2:
            super().repeat(count, one)
            return
        outer = self._base, self._times
        self._base, self._times = (self.messages, self.packets, self.ops), outer[1] * count
        busy = self.busy.copy()
        one(0)
        first = (self.messages - self._base[0], self.packets - self._base[1],
                 self.ops - self._base[2], self.busy - busy)
        self._base, self._times = outer
        one(count - 1)
        self.messages += first[0] * (count - 2)
        self.packets += first[1] * (count - 2)
        self.ops += first[2] * (count - 2)
        self.busy += first[3] * (count - 2)
        self.check()

    def ahead(self, messages: int, nbytes: int) -> None:
        packets = messages * max(1, -(-nbytes // self.packet_bytes))
        self._refuse(self.messages + messages, self.packets + packets, 0, True)

    def check(self, busy: bool = True, so_far: bool = False) -> None:
        """AppError when the count (``so_far``: counting stopped there; at least this much)
        passes a limit (class docstring)."""
        self._refuse(self.messages, self.packets, self.ops, so_far)
        if busy and len(self.busy) and self.busy.max() > MAX_BUSY_PS:
            r = int(self.busy.argmax())
            raise AppError(f"rank {r} computes for {self.busy[r] / 1e12:,.0f} s in all, more "
                           f"than the limit of {MAX_BUSY_PS / 1e12:.0f} s of simulated time")

    def _refuse(self, messages: int, packets: int, ops: int, so_far: bool) -> None:
        for count, base, limit, what in (
                (messages, self._base[0], MAX_MESSAGES, "messages"),
                (packets, self._base[1], MAX_PACKETS, f"packets of {self.packet_bytes} bytes"),
                (ops, self._base[2], MAX_OPS, "operations")):
            total = base + (count - base) * self._times
            if total > limit:
                raise AppError(f"{'at least ' if so_far else ''}{total:,} {what}, more than "
                               f"the limit of {limit:,} {what.split()[0]} of an application "
                               f"(as of a trace)")


def _whole(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_acyclic(ops: Ops) -> None:
    """AppError naming a rank and an operation on a cycle of dependencies and messages (a
    receive depends on its send): Kahn's peeling, the rest is the cycle's reach."""
    n = ops.num_ops
    indeg = ops.ndeps.astype(np.int64) + (ops.kind == RECV)
    ready = list(np.nonzero(indeg == 0)[0])
    done = 0
    ptr, succ, kind, match = ops.succ_ptr, ops.succ, ops.kind, ops.match
    while ready:
        i = ready.pop()
        done += 1
        nxt = succ[ptr[i]:ptr[i + 1]].tolist()
        if kind[i] == SEND:
            nxt.append(int(match[i]))
        for j in nxt:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    if done < n:
        # peel the stuck operations that nothing stuck waits on: what is left lies on a cycle
        left = indeg > 0
        out = np.zeros(n, dtype=np.int64)
        for i in np.nonzero(left)[0].tolist():
            nxt = succ[ptr[i]:ptr[i + 1]].tolist() + ([int(match[i])] if kind[i] == SEND else [])
            out[i] = sum(1 for j in nxt if left[j])
        tails = [i for i in np.nonzero(left & (out == 0))[0].tolist()]
        preds: dict[int, list[int]] = defaultdict(list)
        for i in np.nonzero(left)[0].tolist():
            nxt = succ[ptr[i]:ptr[i + 1]].tolist() + ([int(match[i])] if kind[i] == SEND else [])
            for j in nxt:
                if left[j]:
                    preds[j].append(i)
        while tails:
            j = tails.pop()
            left[j] = False
            for i in preds[j]:
                out[i] -= 1
                if out[i] == 0 and left[i]:
                    tails.append(i)
        stuck = int(np.nonzero(left)[0][0])
        raise AppError(f"rank {int(ops.rank[stuck])} would hang: its operation {stuck} "
                       f"({KINDS[int(ops.kind[stuck])]}"
                       + (f" from rank {int(ops.peer[stuck])}" if ops.kind[stuck] == RECV else "")
                       + ") lies on a cycle of dependencies and messages between ranks (each "
                         "waits on the next)")
