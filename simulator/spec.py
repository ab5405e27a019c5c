"""The network model as plain data: what every engine runs.

:func:`icsim.simulator.build.build` turns a config into a :class:`NetworkSpec` once: ports and
queues, neighbour and reverse-port tables, capacities, the bubble flag of every VC, every time
in integer picoseconds, NIC pacing, the routing algorithm (an object for the SimPy engine; its
arrays for a compiled one) and the run's measurement plan.  An engine takes a spec and a
:class:`~icsim.traffic.workloads.Workload` and returns the raw tallies that
:func:`icsim.simulator.results.make_result` turns into the result record.

Ids
---
A router has ``P = num_ports + c`` ports with ``c`` its concentration (terminals per router):
ports ``num_ports + j`` are the ejection ports of its terminals ``j = 0 .. c - 1``.  A *port
id* is ``node * P + port``; the NIC of terminal ``t`` (attached to router ``t // c``) is port id
``N * P + t``.  A *queue id* is ``port_id * V + vc`` with ``V`` VC classes per port.  Routing
sees routers (a packet's ``src``/``dst``) and answers "eject" with port ``num_ports``; the
engine sends the packet to its destination terminal's ejection port.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icsim.routing.registry import ADAPTIVE, VC


@dataclass(frozen=True)
class NetworkSpec:
    """Everything an engine needs about the network and the run, derived once.

    Attributes
    ----------
    topology : Torus or Graph
        The topology value (for labels and distances).
    routing : Routing
        The routing algorithm, built for this topology and config.
    neighbor : ndarray (N, num_ports), int64
        The node each port leads to, -1 where none.
    concentration : int
        Terminals per router (``c``; module docstring).
    num_terminals : int
        Terminals (NICs): terminal ``t`` is attached to router ``t // concentration``.
    reverse_port : ndarray (N, num_ports), int64
        The port of the neighbour whose channel leads back (-1 where none): where ack/nak
        control messages travel.
    vcs : tuple of VC
        The routing algorithm's VC classes; ``bubble[vc]`` is their bubble flag with
        ``router.bubble`` applied.
    capacity : int
        Slots of every queue (``router.queue_packets``).
    injection_min_free : int
        Free slots a packet from the NIC needs (1 unless ``router.injection_min_free``).
    cycle_ps, delay_ps : int
        Router clock period; routing pipeline (``delay_cycles`` cycles).
    link_ser_ps, link_lat_ps, nic_ser_ps, nic_lat_ps : int
        Serialisation of one packet and propagation, on router and NIC links.
    port_times : ndarray (N, num_ports, 3) int64, or None
        Where link classes differ (``link.classes``): per router port, its channel's packet
        serialisation, propagation and ACK/NAK serialisation; None: every channel takes
        ``link_ser_ps``, ``link_lat_ps``, ``ack_link_ser_ps``.
    ack_link_ser_ps, ack_nic_ser_ps : int
        Serialisation of an ACK/NAK (``ack_nak`` flow control, stop-and-wait NIC).
    nic_tick_ps : float
        Polling period of a stop-and-wait NIC (ticks at k * nic_tick_ps, rounded to ps).
    window : (int, int) or None
        Measurement window (window mode); None in finite mode and for scheduled workloads.
    horizon_ps : int or None
        The run stops here at the latest (window: end of the drain; finite: ``max_time_us``).
    time_limit_ps : int or None
        Finite mode without ``max_time_us``: the run stops here at the latest, a bound no run
        that moves reaches (:func:`icsim.simulator.build.finite_time_limit`).
    watchdog_ps : int
        Deadlock watchdog period.
    gamma1_period_ns : float
        Per-node packet period at γ = 1 (the load normalisation).
    stop_when_saturated : bool
        Window mode: stop as the window closes if the throughput or source-queue rule
        (:func:`icsim.simulator.results.window_rule`) already finds the load saturated.
    growth_limit : float
        The source-queue rule's limit (:func:`icsim.simulator.results.growth_limit`).
    latency_limit_ns : float or None
        Finite mode: stop once the mean latency is certain to exceed it
        (:func:`icsim.simulator.results.latency_rule`; ``run.latency_limit_ns``).
    """

    topology: Any
    routing: Any
    neighbor: np.ndarray
    reverse_port: np.ndarray
    concentration: int
    num_terminals: int
    vcs: tuple[VC, ...]
    bubble: tuple[bool, ...]
    capacity: int
    injection_min_free: int
    flow_control: str
    arbitration: str
    tie_break: str
    cut_through: bool
    handshake: str
    cycle_ps: int
    delay_ps: int
    link_ser_ps: int
    link_lat_ps: int
    nic_ser_ps: int
    nic_lat_ps: int
    ack_link_ser_ps: int
    ack_nic_ser_ps: int
    port_times: np.ndarray | None
    nic_tick_ps: float
    window: tuple[int, int] | None
    horizon_ps: int | None
    watchdog_ps: int
    gamma1_period_ns: float
    seed: int
    stop_when_saturated: bool
    growth_limit: float
    latency_limit_ns: float | None
    time_limit_ps: int | None = None
    #: window mode: the settling time (ps) and how it was made (``build.settling_time``)
    settling: tuple[int, str] | None = None

    # ------------------------------------------------------------------ sizes
    @property
    def num_nodes(self) -> int:
        return int(self.neighbor.shape[0])

    @property
    def num_ports(self) -> int:
        """Direction ports per router (the ejection port is ``num_ports``)."""
        return int(self.neighbor.shape[1])

    @property
    def num_vcs(self) -> int:
        return len(self.vcs)

    @property
    def eject_port(self) -> int:
        """The first ejection port (that of each router's terminal 0)."""
        return self.num_ports

    @property
    def ports_per_router(self) -> int:
        """``P``: direction ports, then one ejection port per terminal."""
        return self.num_ports + self.concentration

    @property
    def adaptive_vc(self) -> int:
        """The first VC with the adaptive role (what injection-time decisions look at), or 0."""
        return next((i for i, vc in enumerate(self.vcs) if vc.role == ADAPTIVE), 0)

    @property
    def vc_order(self) -> tuple[int, ...]:
        """VCs in ``escape_priority`` arbitration order (their declared priority)."""
        return tuple(sorted(range(len(self.vcs)), key=lambda v: (self.vcs[v].priority, v)))

    @property
    def longest_link_ps(self) -> int:
        """The longest packet or ACK hop over a router-to-router channel (serialisation and
        propagation)."""
        if self.port_times is None:
            return max(self.link_ser_ps, self.ack_link_ser_ps) + self.link_lat_ps
        t = self.port_times
        return int(max(t[..., 0].max(), t[..., 2].max()) + t[..., 1].max())

    def channel_times(self) -> tuple[list[int], list[int], list[int]]:
        """Per port id (``node * P + port``, ejection ports included): packet serialisation,
        propagation and ACK serialisation of its channel (the defaults where nothing differs
        and on ejection ports)."""
        N, P = self.num_nodes, self.ports_per_router
        out = np.empty((N, P, 3), dtype=np.int64)
        out[:] = (self.link_ser_ps, self.link_lat_ps, self.ack_link_ser_ps)
        if self.port_times is not None:
            out[:, :self.num_ports] = self.port_times
        flat = out.reshape(N * P, 3)
        return flat[:, 0].tolist(), flat[:, 1].tolist(), flat[:, 2].tolist()

    @property
    def finite(self) -> bool:
        return self.window is None

    @property
    def stop_ps(self) -> int | None:
        """When the run stops at the latest: the horizon, else the finite time limit."""
        return self.horizon_ps if self.horizon_ps is not None else self.time_limit_ps

    @property
    def diameter(self) -> int:
        """The most router hops between two routers (``topology.distance_tables()``)."""
        return int(self.topology.distance_tables()[2].max(initial=0))

    @property
    def hop_limit(self) -> int:
        """The most channels a packet may cross (:mod:`icsim.simulator.engines.guard`)."""
        from icsim.simulator.engines.guard import hop_limit
        return hop_limit(self.diameter)
