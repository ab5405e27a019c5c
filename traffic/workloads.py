"""Workloads: what the NICs are asked to send, and when, as plain data both engines consume.

A :class:`Workload` says what the NICs send:

* open-loop traffic (:func:`open_loop`, an :class:`OpenLoop`) — every node creates messages of
  M packets at offered load γ, with deterministic (the papers') or exponential inter-arrival
  times, each node starting at a random phase or all aligned at t = 0; in window mode until the
  run's horizon (messages created inside the measurement window are measured), in finite mode
  ``run.messages_per_node`` per node (the OutFlank reference simulator's runs, every message
  measured).  Its messages are *made as the run goes*: each engine asks each node for its next
  message when the last one falls due (:class:`Source`; the compiled engine restates it in
  :mod:`icsim.simulator.engines.compiled.traffic`), so that memory holds what is in flight,
  not the run's every message;
* :func:`scheduled` — collectives and trace replay: given messages (a schedule, one row per
  message), every one measured, run to completion;
* :func:`app_workload` — a closed-loop application (:mod:`icsim.traffic.apps`).

Message destinations come from a pattern (:mod:`icsim.traffic.patterns`), each node drawing from
its own random stream (first its phase, then per message its destination and, with exponential
arrivals, the next gap), so changing the routing algorithm leaves the offered traffic unchanged.
Messages of one instant are posted in source order: an engine merges the nodes' next messages
by (time, source), as a schedule sorted by time, then source, would list them
(:meth:`OpenLoop.schedule` makes that schedule, for tests and analysis).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator, Sequence

import numpy as np

from icsim.model.config import ConfigError
from icsim.model.units import ps
from icsim.traffic.load import gamma1_packet_period_ns
from icsim.traffic.patterns import PatternError, make_pattern
from icsim.traffic.trace import read_trace


class WorkloadError(ValueError):
    """A workload too big to hold or simulate; the message says how big and the limit."""


#: the most messages a schedule may hold (about 1.2 GB of schedule arrays)
MAX_MESSAGES = 50_000_000


def node_stream(seed: int, node: int) -> np.random.Generator:
    """Node ``node``'s own traffic stream, from the run's master seed: the second child of the
    seed's :class:`~numpy.random.SeedSequence` spawns one per node (the first child is the
    routing tie-breaks', :func:`routing_stream`)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(1, node))))


def routing_stream(seed: int) -> np.random.Generator:
    """The routing tie-break stream of a run with master seed ``seed``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed).spawn(2)[0]))


@dataclass(frozen=True)
class OpenLoop:
    """Open-loop traffic as every node makes it (module docstring).

    Attributes
    ----------
    pattern : Pattern
        Where messages go.
    num_nodes : int
        The sources (terminals).
    message_packets : int
        M, packets per message.
    interval_ps : float
        Mean time between two messages of a node: M packet periods at γ.
    exponential : bool
        Exponential gaps (else every ``interval_ps``).
    aligned : bool
        Deterministic arrivals only: every node's first message at t = 0 (else at a random
        phase in the first interval).
    limit : int or None
        Finite mode: messages per node.  None in window mode.
    window : (int, int) or None
        Window mode: messages created in ``[window[0], window[1])`` ps are measured.
    horizon : int or None
        Window mode: no message is created after it.
    seed : int
        The run's master seed: the nodes' streams are :func:`node_stream`.
    """

    pattern: Any
    num_nodes: int
    message_packets: int
    interval_ps: float
    exponential: bool
    aligned: bool
    limit: int | None
    window: tuple[int, int] | None
    horizon: int | None
    seed: int

    def source(self, node: int) -> "Source":
        """Node ``node``'s :class:`Source` at the start of a run (a fresh stream)."""
        return Source(self, node, node_stream(self.seed, node))

    def sources(self) -> list["Source"]:
        """Every node's :class:`Source`, at the start of a run."""
        return [self.source(node) for node in range(self.num_nodes)]

    def states(self) -> np.ndarray:
        """The nodes' streams at the start of a run as PCG64 states, a row per node:
        ``[state_hi, state_lo, inc_hi, inc_lo]`` (uint64; what the compiled engine steps)."""
        out = np.zeros((self.num_nodes, 4), dtype=np.uint64)
        mask = (1 << 64) - 1
        for node in range(self.num_nodes):
            st = node_stream(self.seed, node).bit_generator.state["state"]
            s, inc = st["state"], st["inc"]
            out[node] = (s >> 64, s & mask, inc >> 64, inc & mask)
        return out

    def measured(self, t: int) -> bool:
        """Whether a message created at ``t`` is measured."""
        return self.window is None or self.window[0] <= t < self.window[1]

    @cached_property
    def rule(self) -> Any:
        """The pattern's :class:`~icsim.traffic.rules.Rule` (None: Python only), made once."""
        return self.pattern.rule()

    @cached_property
    def expected_measured(self) -> int | None:
        """Finite mode: every packet the run creates (all measured); None in window mode."""
        if self.limit is None:
            return None
        return self.num_nodes * self.limit * self.message_packets

    def most_at_once(self) -> int:
        """The most messages created at one instant: one per node, or several where a node's
        deterministic gap is under a picosecond."""
        if self.exponential or self.interval_ps >= 1.0:
            return self.num_nodes
        return self.num_nodes * (math.ceil(1.0 / self.interval_ps) + 1)

    def messages(self) -> Iterator[tuple[int, int, int, bool]]:
        """Every message ``(time_ps, src, dst, measured)`` in the order the engines post them:
        by time, then source (the merge of :meth:`sources`)."""
        sources = self.sources()
        heap = [(s.t, s.node) for s in sources if s.t >= 0]
        heapq.heapify(heap)
        while heap:
            t, node = heap[0]
            src = sources[node]
            yield t, node, src.dst, self.measured(t)
            if src.advance() >= 0:
                heapq.heapreplace(heap, (src.t, node))
            else:
                heapq.heappop(heap)

    def schedule(self, limit: int = MAX_MESSAGES) -> "Workload":
        """The whole run's messages as a schedule (a :class:`Workload` of rows; for tests and
        analysis: an engine never holds it).  :class:`WorkloadError` past ``limit`` messages."""
        rows = []
        for i, row in enumerate(self.messages()):
            if i >= limit:
                raise WorkloadError(f"more than {limit:,} messages")
            rows.append(row)
        arr = np.array([r[:3] for r in rows], dtype=np.int64).reshape(-1, 3)
        return Workload("open", arr[:, 0].copy(), arr[:, 1].astype(np.int32),
                        arr[:, 2].astype(np.int32),
                        np.full(len(rows), self.message_packets, dtype=np.int32),
                        np.array([r[3] for r in rows], dtype=bool), 0, self.expected_measured)

    def any_measured(self) -> bool:
        """Whether some message is created inside the window (window mode), found by making
        each node's messages up to the window's end from a fresh stream, node by node, until
        one falls inside."""
        if self.window is None:
            return True
        w0, w1 = self.window
        for node in range(self.num_nodes):
            src = self.source(node)
            while 0 <= src.t < w1:
                if src.t >= w0:
                    return True
                src.advance()
        return False

    def mean_distance(self, topology: Any, sample: int = 256) -> float:
        """The mean hop distance of the messages, estimated from the first message of up to
        ``sample`` nodes spread over the network (a private stream: the run's are untouched)."""
        nodes = np.unique(np.linspace(0, self.num_nodes - 1, min(sample, self.num_nodes))
                          .astype(np.int64))
        rng = np.random.default_rng(self.seed)
        dst = np.array([self.pattern.destination(int(s), 0, rng) for s in nodes])
        return float(np.mean(topology.terminal_distances(nodes, dst)))


class Source:
    """One node's open-loop messages, made one at a time from its own stream (the model of
    docs/model.md §6): its phase first, then per message its destination and, with
    exponential arrivals, the gap to the next.  ``t`` and ``dst`` are its next message (``t``
    -1: no more), ``index`` that message's number."""

    __slots__ = ("traffic", "node", "rng", "t", "dst", "index", "first")

    def __init__(self, traffic: OpenLoop, node: int, rng: np.random.Generator):
        self.traffic, self.node, self.rng = traffic, node, rng
        interval = traffic.interval_ps
        if traffic.exponential:
            first = int(round(rng.exponential(interval)))
        elif traffic.aligned:
            first = 0
        else:
            first = int(rng.random() * interval)
        self.first, self.index = first, 0
        self._make(first)

    def _make(self, t: int) -> int:
        """Message ``index`` is due at ``t``, unless past the horizon: its destination."""
        horizon = self.traffic.horizon
        if horizon is not None and t > horizon:
            self.t = -1
        else:
            self.t = t
            self.dst = self.traffic.pattern.destination(self.node, self.index, self.rng)
        return self.t

    def advance(self) -> int:
        """The message ``(t, dst)`` was posted: make the next one; its time (-1: none)."""
        traffic = self.traffic
        self.index += 1
        if traffic.limit is not None and self.index >= traffic.limit:
            self.t = -1
            return -1
        if traffic.exponential:
            t = self.t + max(1, int(round(self.rng.exponential(traffic.interval_ps))))
        else:
            t = self.first + int(round(self.index * traffic.interval_ps))
        return self._make(t)


@dataclass(frozen=True)
class Workload:
    """What the NICs send.

    Attributes
    ----------
    kind : {"open", "collective", "trace", "app"}
    time, src, dst, packets : ndarray
        A schedule (collectives, traces): one entry per message, sorted by time (then
        source): creation time (int64 ps), source and destination node, packet count.  Empty
        for open-loop traffic (made as the run goes: ``open``) and applications.
    measured : ndarray of bool
        Whether the message's packets are measured.
    avail_period_ps : int
        Packets of a message become available to the NIC one per this period (0: at once).
    expected_measured : int or None
        Measured packets the run must deliver to finish (finite runs); None in window mode
        (there, what the generators created inside the window).
    app : App, optional
        The closed-loop workload (kind ``"app"``, :mod:`icsim.traffic.apps`): no schedule,
        the engines create each message when its send is done; the run ends when every
        operation is done.
    open : OpenLoop, optional
        Open-loop traffic (kind ``"open"``), made by the engines as it falls due.
    """

    kind: str
    time: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    packets: np.ndarray
    measured: np.ndarray
    avail_period_ps: int
    expected_measured: int | None
    app: Any = None
    open: OpenLoop | None = None

    @property
    def num_messages(self) -> int:
        """Messages of the schedule (0 for open-loop traffic and applications)."""
        return len(self.time)


def _empty(kind: str, avail: int, expected: int | None, **parts: Any) -> Workload:
    none = np.zeros(0, dtype=np.int64)
    return Workload(kind, none, none.astype(np.int32), none.astype(np.int32),
                    none.astype(np.int32), none.astype(bool), avail, expected, **parts)


def _sorted(kind: str, rows: list[tuple[int, int, int, int, bool]], avail: int,
            expected: int | None) -> Workload:
    rows.sort(key=lambda r: (r[0], r[1]))
    arr = np.array([r[:4] for r in rows], dtype=np.int64).reshape(-1, 4)
    return Workload(kind, arr[:, 0].copy(), arr[:, 1].astype(np.int32),
                    arr[:, 2].astype(np.int32), arr[:, 3].astype(np.int32),
                    np.array([r[4] for r in rows], dtype=bool), avail, expected)


def open_loop(config: Any, topology: Any, pattern: Any, window: tuple[int, int] | None,
              horizon: int | None) -> Workload:
    """The open-loop workload (:class:`OpenLoop`): messages of every node until ``horizon`` ps
    (window mode) or ``run.messages_per_node`` messages each (``window`` None: finite mode).
    A window (at a load above 0) in which no message is created is a :class:`ConfigError`
    naming ``run.measure_us``.

    Examples
    --------
    >>> from icsim.model.config import config_from_dict
    >>> from icsim.model.topology import Torus
    >>> from icsim.traffic.patterns import make_pattern
    >>> cfg = config_from_dict({"topology": {"dims": [4, 4]}, "run": {"mode": "finite",
    ...                         "messages_per_node": 2}, "traffic": {"phase": "aligned"}})
    >>> t = Torus((4, 4))
    >>> w = open_loop(cfg, t, make_pattern("tornado", t, seed=1), None, None)
    >>> s = w.open.schedule()
    >>> s.num_messages, int(s.time[16]), int(s.packets.sum()), w.expected_measured
    (32, 19660800, 3072, 3072)
    """
    tc, nc = config.traffic, config.nic
    N = topology.num_terminals
    M = tc.message_packets
    t1_ns = gamma1_packet_period_ns(topology, config.packet.size_bytes,
                                    config.link.bandwidth_gbps)
    # packets become available at injection_rate_factor x the γ = 1 rate; a stop-and-wait
    # NIC instead has the whole message at once and paces itself by polling
    avail = 0 if nc.handshake == "stop_and_wait" else ps(t1_ns / nc.injection_rate_factor)
    finite = window is None
    if tc.load <= 0:
        return _empty("open", avail, 0 if finite else None)
    traffic = OpenLoop(pattern, N, M, M * (t1_ns * 1000.0) / tc.load,
                       tc.arrivals == "exponential", tc.phase == "aligned",
                       config.run.messages_per_node if finite else None, window,
                       None if finite else horizon, config.seed)
    if not traffic.any_measured():
        # its record would measure nothing and read as a sustained load
        raise ConfigError("run.measure_us", (
            f"no message is created inside the measurement window ({window[0] / 1e6:g} to "
            f"{window[1] / 1e6:g} µs): at load {tc.load:g} a node creates a {M}-packet message "
            f"every {traffic.interval_ps / 1e6:.4g} µs; lengthen run.measure_us or lower "
            f"traffic.message_packets"))
    return _empty("open", avail, traffic.expected_measured, open=traffic)


def scheduled(kind: str, messages: list[tuple[int, int, int, int]]) -> Workload:
    """A collective's or a trace's messages ``(time_ps, src, dst, packets)``, all measured; a
    message's packets are handed to the NIC at once (an application posting a buffer)."""
    rows = [(t, s, d, k, True) for t, s, d, k in messages]
    total = sum(m[3] for m in messages)
    return _sorted(kind, rows, 0, total)


def app_workload(app: Any) -> Workload:
    """The closed-loop workload of ``app`` (:class:`~icsim.traffic.apps.jobs.App`): every
    packet measured, posted whole when its send is done."""
    return _empty("app", 0, app.total_packets, app=app)


def packets_for(size_bytes: int, packet_bytes: int) -> int:
    """Packets needed to carry ``size_bytes`` (the last one padded to a full packet)."""
    return max(1, -(-size_bytes // packet_bytes))


class JobRanks:
    """The ranks of a job placed on a node subset, as a traffic pattern sees them: ``num_nodes``
    ranks numbered ``0 ..``, without coordinates (so only index patterns apply)."""

    capabilities = frozenset()

    def __init__(self, num_nodes: int):
        self.num_nodes = self.num_terminals = num_nodes
        self.label = self.describe()

    def describe(self) -> str:
        return f"a job of {self.num_nodes} ranks"


def collective_messages(kind: str, topology: Any, message_bytes: int, packet_bytes: int,
                        seed: int, params: dict | None = None, interleave: bool = False,
                        nodes: Sequence[int] | None = None) -> list[tuple[int, int, int, int]]:
    """Messages of one collective exchange, all posted at t = 0 in step order.

    With ``interleave`` a node's messages are handed to its NIC packet by packet, round robin
    over its destinations (as concurrent non-blocking sends or several DMA engines do), instead
    of one message after the other.

    * ``alltoall`` — every node sends one message to every other node, step i (1..N-1) to
      (s + i) mod N (the ``alltoall`` pattern);
    * ``neighbor`` — every node sends one message to each neighbour, in port order;
    * the name of any permutation pattern (``transpose``, ``tornado``, ``bitreverse``, ...) —
      every node sends one message to its destination under the pattern (nodes mapped to
      themselves send nothing); ``params`` are the pattern's parameters.

    ``nodes`` places the exchange on a job's nodes (rank r on ``nodes[r]``, an MPI job on the
    nodes its scheduler gave it): patterns then work on the N ranks (:class:`JobRanks`; the
    coordinate patterns do not apply) and ``neighbor`` means the torus neighbours inside the job.
    On a torus with failed nodes the default job is every node in service.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> msgs = collective_messages("tornado", Torus((4, 2)), 512, 512, 0,
    ...                            {"over": "index"}, nodes=[0, 1, 2, 4, 6])
    >>> [(s, d) for _, s, d, _ in msgs]       # ranks r -> r + 2 of 5, on the job's nodes
    [(0, 2), (1, 4), (2, 6), (4, 0), (6, 1)]
    """
    if nodes is None and topology.failed_nodes:
        nodes = topology.alive_nodes        # failed nodes take no part: a job of the others
    job = list(range(topology.num_terminals)) if nodes is None else [int(v) for v in nodes]
    n = len(job)
    packets = packets_for(message_bytes, packet_bytes)
    if kind == "neighbor":
        make_pattern(kind, topology, seed=seed, **(params or {}))   # a torus, no parameters
        rank = {v: r for r, v in enumerate(job)}
        dests = [[rank[v] for v in topology.neighbor_table[s] if v in rank] for s in job]
    else:
        pat = make_pattern(kind, topology if nodes is None else JobRanks(n), seed=seed,
                           **(params or {}))
        if kind == "alltoall":
            dests = [[pat.destination(r, i, None) for i in range(n - 1)] for r in range(n)]
        elif pat.permutation:
            dests = [[d] if (d := pat.destination(r, 0, None)) != r else [] for r in range(n)]
        else:
            raise PatternError(f"{kind}: not an exchange (use alltoall, neighbor or a "
                               f"permutation pattern)")
    most = max(map(len, dests), default=0)
    out = []
    if interleave:
        for i in range(packets * most):
            step = i % most
            for r in range(n):
                if step < len(dests[r]) and i < packets * len(dests[r]):
                    out.append((0, job[r], job[dests[r][step]], 1))
        return out
    for step in range(most):
        for r in range(n):
            if step < len(dests[r]):
                out.append((0, job[r], job[dests[r][step]], packets))
    return out


def trace_messages(path: str, num_nodes: int, packet_bytes: int) -> list[tuple[int, int, int, int]]:
    """Messages of a trace file (see :mod:`traffic.trace`), as recorded."""
    return [(ps(r.time_ns), r.src, r.dst, packets_for(r.bytes, packet_bytes))
            for r in read_trace(path, num_nodes, packet_bytes)]
