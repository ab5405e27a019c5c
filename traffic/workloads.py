"""Workloads: what the NICs are asked to send, and when, as plain data both engines consume.

A :class:`Workload` is a message schedule: one row per message (creation time in ps, source,
destination, packets, whether it is measured), sorted by time, built before the run from the
config and the seeded streams, so that every engine sends exactly the same packets.

* :func:`open_loop` — every node creates messages of M packets at offered load γ, with
  deterministic (the papers') or exponential inter-arrival times, each node starting at a random
  phase or all aligned at t = 0; in window mode until the run's horizon (messages created inside
  the measurement window are measured), in finite mode ``run.messages_per_node`` per node (the
  OutFlank reference simulator's runs, every message measured).
* :func:`scheduled` — collectives and trace replay: given messages, every one measured, run to
  completion.

Message destinations come from a pattern (:mod:`icsim.traffic.patterns`), each node drawing from
its own random stream (first its phase, then per message its destination and, with exponential
arrivals, the next gap), so changing the routing algorithm leaves the offered traffic unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

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


@dataclass(frozen=True)
class Workload:
    """A message schedule.

    Attributes
    ----------
    kind : {"open", "collective", "trace"}
    time, src, dst, packets : ndarray
        One entry per message, sorted by time (then source): creation time (int64 ps),
        source and destination node, packet count.
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

    @property
    def num_messages(self) -> int:
        return len(self.time)


def _sorted(kind: str, rows: list[tuple[int, int, int, int, bool]], avail: int,
            expected: int | None) -> Workload:
    rows.sort(key=lambda r: (r[0], r[1]))
    arr = np.array([r[:4] for r in rows], dtype=np.int64).reshape(-1, 4)
    return Workload(kind, arr[:, 0].copy(), arr[:, 1].astype(np.int32),
                    arr[:, 2].astype(np.int32), arr[:, 3].astype(np.int32),
                    np.array([r[4] for r in rows], dtype=bool), avail, expected)


def open_loop(config: Any, topology: Any, pattern: Any, streams: Sequence[np.random.Generator],
              window: tuple[int, int] | None, horizon: int | None) -> Workload:
    """The open-loop schedule: messages of every node until ``horizon`` ps (window mode) or
    ``run.messages_per_node`` messages each (``window`` None: finite mode).  A window (at a
    load above 0) in which no message is created is a :class:`ConfigError` naming
    ``run.measure_us``.

    Examples
    --------
    >>> from icsim.model.config import config_from_dict
    >>> from icsim.model.topology import Torus
    >>> from icsim.traffic.patterns import make_pattern
    >>> cfg = config_from_dict({"topology": {"dims": [4, 4]}, "run": {"mode": "finite",
    ...                         "messages_per_node": 2}, "traffic": {"phase": "aligned"}})
    >>> t = Torus((4, 4))
    >>> w = open_loop(cfg, t, make_pattern("tornado", t, seed=1),
    ...               [np.random.default_rng(i) for i in range(16)], None, None)
    >>> w.num_messages, int(w.time[16]), int(w.packets.sum()), w.expected_measured
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
    limit = config.run.messages_per_node if finite else None
    if tc.load <= 0:
        return _sorted("open", [], avail, 0 if finite else None)
    interval = M * (t1_ns * 1000.0) / tc.load         # ps between two messages of a node
    per_node = limit if finite else int(horizon // interval) + 2
    if N * per_node > MAX_MESSAGES:
        raise WorkloadError(f"{N} nodes x about {per_node} messages each is more than "
                            f"{MAX_MESSAGES:,} messages; lower traffic.load, run.*_us or "
                            f"run.messages_per_node, or raise traffic.message_packets")
    exponential = tc.arrivals == "exponential"
    aligned = tc.phase == "aligned"
    rows = []
    for node in range(N):
        rng = streams[node]
        if exponential:
            first = int(round(rng.exponential(interval)))
        elif aligned:
            first = 0
        else:
            first = int(rng.random() * interval)
        t, idx = first, 0
        while True:
            if not finite and t > horizon:
                break
            dst = pattern.destination(node, idx, rng)
            rows.append((t, node, dst, M, finite or window[0] <= t < window[1]))
            idx += 1
            if finite and idx >= limit:
                break
            if exponential:
                t = t + max(1, int(round(rng.exponential(interval))))
            else:
                t = first + int(round(idx * interval))
    if not finite and not any(r[4] for r in rows):
        # its record would measure nothing and read as a sustained load
        raise ConfigError("run.measure_us", (
            f"no message is created inside the measurement window ({window[0] / 1e6:g} to "
            f"{window[1] / 1e6:g} µs): at load {tc.load:g} a node creates a {M}-packet message "
            f"every {interval / 1e6:.4g} µs; lengthen run.measure_us or lower "
            f"traffic.message_packets"))
    expected = N * limit * M if finite else None
    return _sorted("open", rows, avail, expected)


def scheduled(kind: str, messages: list[tuple[int, int, int, int]]) -> Workload:
    """A collective's or a trace's messages ``(time_ps, src, dst, packets)``, all measured; a
    message's packets are handed to the NIC at once (an application posting a buffer)."""
    rows = [(t, s, d, k, True) for t, s, d, k in messages]
    total = sum(m[3] for m in messages)
    return _sorted(kind, rows, 0, total)


def app_workload(app: Any) -> Workload:
    """The closed-loop workload of ``app`` (:class:`~icsim.traffic.apps.jobs.App`): every
    packet measured, posted whole when its send is done."""
    empty = np.zeros(0, dtype=np.int64)
    return Workload("app", empty, empty.astype(np.int32), empty.astype(np.int32),
                    empty.astype(np.int32), empty.astype(bool), 0, app.total_packets, app)


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
