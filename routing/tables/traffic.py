"""Traffic matrices for traffic-aware routing tables (the SGR direction of the Angara paper's
related work; Angara's scheduler plugin makes a table per job).

A traffic matrix says how much each ordered pair of nodes sends: a mapping ``{(src, dst):
weight}`` (pairs left out send nothing).  The table generators that take ``traffic=`` (``optimal``,
``refined``) then weigh a route's channels by its pair's weight, so that channel load is the
traffic a channel carries, and balance that instead of the route count.

Sources of a matrix:

* :func:`collective_traffic` -- one exchange of the simulator's collective workload (``alltoall``,
  ``neighbor`` or a permutation pattern such as ``tornado``), optionally on a job's nodes, exactly
  the messages :func:`icsim.traffic.workloads.collective_messages` posts;
* :func:`pattern_traffic` -- a permutation traffic pattern of :mod:`icsim.traffic.patterns`, one
  unit per source;
* :func:`trace_traffic` -- the bytes of a trace file (:mod:`icsim.traffic.trace`);
* :func:`workload_traffic` -- whichever of these a run's ``traffic`` section describes (the
  simulator's ``routing.table.options.traffic: workload``).

Examples
--------
>>> from icsim.model.topology import Torus
>>> tm = collective_traffic("tornado", Torus((4, 2, 2, 2)), nodes=[0, 1, 2, 3, 4, 5, 6, 7],
...                         params={"over": "index"})
>>> sorted(tm.items())[:3]                     # rank r -> r + 3 of 8, one 1 MiB message each
[((0, 3), 1048576.0), ((1, 4), 1048576.0), ((2, 5), 1048576.0)]
>>> pair_weights(tm, [(0, 3), (3, 0)]).tolist()
[1.0, 0.0]
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from icsim.traffic.patterns import make_pattern
from icsim.traffic.trace import read_trace
from icsim.traffic.workloads import collective_messages

TrafficMatrix = dict[tuple[int, int], float]


def collective_traffic(kind: str, topology: Any, nodes: Sequence[int] | None = None, *,
                       message_bytes: int = 1 << 20, params: dict | None = None,
                       seed: int = 0) -> TrafficMatrix:
    """Bytes per ordered pair of one collective exchange (see
    :func:`icsim.traffic.workloads.collective_messages`); ``nodes`` places it on a job (rank r on
    ``nodes[r]``)."""
    out: TrafficMatrix = {}
    for _, s, d, packets in collective_messages(kind, topology, message_bytes, 1, seed, params,
                                                False, nodes):
        if s != d:
            out[(s, d)] = out.get((s, d), 0.0) + float(packets)
    return out


def pattern_traffic(name: str, topology: Any, seed: int = 0, **params) -> TrafficMatrix:
    """One unit from every node to its destination under a permutation pattern."""
    pat = make_pattern(name, topology, seed=seed, **params)
    if not pat.permutation:
        raise ValueError(f"pattern {name!r} is not a permutation; give a collective or a trace")
    out: TrafficMatrix = {}
    for s in range(topology.num_nodes):
        d = int(pat.destination(s, 0, None))
        if d != s:
            out[(s, d)] = 1.0
    return out


def trace_traffic(path: str, num_nodes: int) -> TrafficMatrix:
    """Bytes per ordered pair of a trace file."""
    out: TrafficMatrix = {}
    for r in read_trace(path, num_nodes):
        if r.src != r.dst:
            out[(r.src, r.dst)] = out.get((r.src, r.dst), 0.0) + float(r.bytes)
    return out


def workload_traffic(topology: Any, traffic: Any, seed: int = 0) -> TrafficMatrix | None:
    """The traffic matrix of a run's own traffic section (``config.traffic``): its collective
    (on ``traffic.nodes`` when given), its trace, or its permutation pattern; None for traffic
    that weighs every pair alike (an open workload with a non-permutation pattern such as
    uniform) -- then a plain table is the traffic-aware one."""
    if traffic.workload == "collective":
        return collective_traffic(traffic.collective, topology, traffic.nodes,
                                  message_bytes=traffic.message_bytes,
                                  params=traffic.pattern_params(traffic.collective), seed=seed)
    if traffic.workload == "trace":
        return trace_traffic(traffic.trace, topology.num_nodes)

    if make_pattern(traffic.pattern, topology, seed=seed,
                    **traffic.pattern_params()).permutation:
        return pattern_traffic(traffic.pattern, topology, seed, **traffic.pattern_params())
    return None


def pair_weights(traffic: Mapping[tuple[int, int], float] | np.ndarray | None,
                 pairs: Iterable[tuple[int, int]]) -> np.ndarray | None:
    """Weights of ``pairs`` under ``traffic`` (a mapping, or an ``N x N`` array), scaled so that
    the largest is 1; None for ``traffic=None`` (every pair weighs 1)."""
    if traffic is None:
        return None
    pairs = [(int(s), int(t)) for s, t in pairs]
    if isinstance(traffic, np.ndarray):
        w = np.array([float(traffic[s, t]) for s, t in pairs])
    else:
        w = np.array([float(traffic.get(p, 0.0)) for p in pairs])
    if (w < 0).any():
        raise ValueError("traffic weights must be non-negative")
    top = w.max(initial=0.0)
    if top <= 0:
        raise ValueError("the traffic matrix sends nothing between the table's nodes")
    return w / top


def integral_weights(w: np.ndarray) -> np.ndarray | None:
    """``w`` rescaled to integers (smallest positive weight 1) when every weight is a whole
    multiple of the smallest, else None.

    >>> integral_weights(np.array([0.5, 1.0, 0.0])).tolist()
    [1, 2, 0]
    >>> integral_weights(np.array([0.3, 1.0])) is None
    True
    """
    pos = w[w > 0]
    if not len(pos):
        return np.zeros(len(w), dtype=np.int64)
    q = w / pos.min()
    r = np.rint(q)
    if np.abs(q - r).max() > 1e-9:
        return None
    return r.astype(np.int64)
