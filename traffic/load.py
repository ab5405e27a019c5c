"""Offered-load normalisation (docs/model.md §6).

γ = 1 saturates the bisection under uniform traffic: the per-node packet rate at γ = 1 is
``B_link / (S * max_i c_i)``, with c_i the uniform channel-load factor of dimension i
(:meth:`simulator.topology.Torus.channel_load_factor`; for a graph, the busiest channel of its
minimal routing, :attr:`simulator.topology.Graph.max_channel_load_factor`).  On a dragonfly, a
fat tree and a HyperX, c = 1.

One unit for every topology: a load in **packets per terminal per link time** (a link time is
``S / B_link``, one packet's serialisation on a channel of the ``link`` section) is γ / max_i c_i
(:func:`packets_per_link_time`), what every record, CSV and figure gives beside γ.
"""

from __future__ import annotations

from typing import Any


def gamma1_packet_period_ns(topology: Any, packet_bytes: int, link_gbps: float) -> float:
    """Per-node packet period at γ = 1, in ns (``S * 8 * max c_i / B``).

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> gamma1_packet_period_ns(Torus((8, 8, 8)), 512, 20.0)
    204.8
    >>> gamma1_packet_period_ns(Torus((16, 16, 16)), 512, 20.0)
    409.6
    """
    c = topology.max_channel_load_factor
    if c <= 0:
        raise ValueError("a single-node topology has no channel to normalise the load by")
    return packet_bytes * 8 * c / link_gbps


def packets_per_link_time(topology: Any) -> float:
    """The offered load at γ = 1 in packets per terminal per link time: ``1 / max_i c_i``
    (a link time is one packet's serialisation on a channel of ``link.bandwidth_gbps``).

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> packets_per_link_time(Torus((4, 4, 4))), packets_per_link_time(Torus((8, 8, 8)))
    (2.0, 1.0)
    >>> packets_per_link_time(Torus((16, 16, 16)))
    0.5
    """
    c = topology.max_channel_load_factor
    if c <= 0:
        raise ValueError("a single-node topology has no channel to normalise the load by")
    return 1.0 / c
