"""Size limits checked before anything is built: what a run would need, against what the machine
has.

:func:`estimate_bytes` is a deliberately generous estimate of the peak memory of a run from its
config alone (no topology is built): per router and queue, the engines' state; per message of
the workload, its schedule; per route of a routing table, the table.  Its constants were
measured on this code (a 32x32x32 torus under DOR: 376 MB resident; 16x16x16x12x2: 1.41 GB;
a 16x16x16 reference-profile schedule of 131,072 messages: 25 MB).  :func:`check_fits` refuses a
config whose estimate exceeds the memory available (``MemAvailable`` of ``/proc/meminfo``, else
the physical memory), with both numbers in the message.

>>> from icsim.model.config import config_from_dict
>>> cfg = config_from_dict({"topology": {"dims": [8, 8, 8]}})
>>> 50e6 < estimate_bytes(cfg) < 500e6
True
"""

from __future__ import annotations

import math
import os
from typing import Any

from icsim.model.config import ConfigError
from icsim.model.topology import torus_load_factor

#: what a Python process with numpy, SimPy and icsim imported holds before building anything
BASELINE_BYTES = 150e6
#: per (router port, VC): a queue (an empty deque is ~630 bytes) and its parallel list entries
PER_QUEUE_BYTES = 800
#: per node: coordinates, neighbours, NIC state, relative-offset tables (2^n entries), streams
PER_NODE_BYTES = 6000
#: per message of the schedule while it is built (Python tuples), then as arrays
PER_MESSAGE_BYTES = 160
#: per route hop of a routing table (dict entry and tuple), and per route
PER_HOP_BYTES = 40
PER_ROUTE_BYTES = 250
#: a table being given virtual layers holds about as much again while the assigner works and
#: the layers are verified: ``icsim layers`` with ACRO (the most of the three assigners)
#: peaked at 0.49 GB on 512 nodes and 1.52 GB on 1,024 (random 6-regular graphs), where
#: :func:`table_bytes` with this factor and the baseline gives 0.48 and 1.51 GB (LASH 0.38 and
#: 1.01 GB, LASH-TOR 0.39 and 1.10 GB)
LAYERS_FACTOR = 2.0
#: per packet waiting at its source beyond what the network carries: an open-loop workload
#: offered above γ = 1 piles up the excess in the nodes' unbounded source queues (the SimPy
#: engine's packet objects).  Measured: the quickstart config at γ = 100 (20 M packets, 99 %
#: of them still at their sources at the end) peaks at 6.0 GB on SimPy, 1.0 GB compiled
PER_PACKET_BYTES = 300
#: per measured packet: its record in the engine and in the result's per-packet arrays.
#: Measured: the quickstart config with a 100 ms window (18.7 M measured packets) peaks at
#: 2.33 GB on the compiled engine, a 20 ms window (3.75 M) at 0.58 GB on SimPy
PER_MEASURED_PACKET_BYTES = 120
#: per node of a torus and per factor 3 for each of its dimensions: the Angara routing graph
#: a table generator searches (``icsim tables``), which covers the whole torus even for a table
#: of a few nodes.  Measured with ``--nodes 8``: 2.4, 5, 13, 36 and 103 KB per node on tori of
#: 1 to 5 dimensions (4,096 to 32,768 nodes), where this gives 3, 9, 27, 81 and 243 KB
PER_ROUTING_GRAPH_NODE_BYTES = 1000
#: the share of the available memory a run or a table may be estimated to take
HEADROOM = 0.9
#: VC classes per port of the built-in algorithms (table routing with layers may use more;
#: vlb and ugal take 4 on a torus, a dateline pair per phase)
VCS = {"dor": 1, "abr": 2, "por": 2, "ofr": 3, "table": 1, "dfly_min": 2, "dfly_val": 3,
       "ugal_l": 3, "ugal_g": 3, "par": 4, "dmodk": 1, "updown_adaptive": 1, "hx_dor": 1,
       "hx_adaptive": 2, "hx_dal": 2, "vlb": 2, "ugal": 2}
#: bytes per ordered pair of routers at the peak of setting up a run of an algorithm whose
#: program reads tables of a row per pair (its routes' tables, its program's, one phase's
#: masks in the deadlock check, the compiled engine's copy of the program): the peak resident
#: memory of the set-up less the rest of :func:`estimate_bytes`, per pair, measured on the
#: dragonflies p 1, h 8, a 12 and 16 (1,164 and 2,064 routers), the 24- and 32-ary 3-trees
#: (1,728 and 3,072) and the HyperX 12^3 and 16^3 (1,728 and 4,096; vlb and ugal there too),
#: each estimate within 10 % of its peak (the 16,512-terminal dragonfly under UGAL-L: 0.95 GB
#: estimated, 0.88 GB measured; the 32-ary 3-tree under D-mod-k 0.89 and 0.84 GB)
PAIR_BYTES = {"dfly_min": 80, "dfly_val": 105, "ugal_l": 130, "ugal_g": 140, "par": 190,
              "dmodk": 36, "updown_adaptive": 36, "hx_dor": 65, "hx_adaptive": 55,
              "hx_dal": 75, "vlb": 85, "ugal": 85}


def available_bytes() -> float:
    """Memory this process could still get: ``MemAvailable`` (Linux), else physical memory."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return math.inf


def node_count(cfg: Any, nodes: int | None = None) -> tuple[int, int]:
    """(nodes, direction ports per router) of the config's topology, without building it (a
    graph's node count is given once its file is read)."""
    tc = cfg.topology
    if tc.kind == "torus":
        return math.prod(tc.dims), 2 * len(tc.dims)
    if tc.kind == "random_regular":
        return tc.nodes, tc.degree
    if tc.kind in FAMILY_KINDS:
        routers, ports, terminals = family_size(tc)
        return max(routers, terminals), ports + (tc.p or tc.k or 1)
    return nodes or 4096, 64


#: the topology families sized from their parameters (:func:`family_size`)
FAMILY_KINDS = ("dragonfly", "fat_tree", "hyperx")
#: the most routers a dragonfly, fat tree or HyperX may have: their routing reads tables of a
#: row per pair of routers (8,192^2 rows of 8 bytes: 0.5 GB a table)
MAX_FAMILY_ROUTERS = 1 << 13


def family_size(tc: Any) -> tuple[int, int, int]:
    """(routers, router-to-router ports per router, terminals) of a dragonfly, fat tree or
    HyperX section, from its parameters alone (before anything is built)."""
    if tc.kind == "dragonfly":
        g = tc.g if tc.g is not None else tc.a * tc.h + 1
        routers = tc.a * g
        return routers, tc.a - 1 + tc.h, routers * tc.p
    if tc.kind == "fat_tree":
        return tc.n * tc.k ** (tc.n - 1), 2 * tc.k, tc.k ** tc.n
    routers = math.prod(tc.dims)
    return routers, sum(s - 1 for s in tc.dims) * tc.trunking, routers * (tc.p or 1)


def messages_upper_bound(cfg: Any, nodes: int, window_only: bool = False) -> float:
    """Messages the workload may create (open loop: until the horizon, or in the measurement
    window only; collectives: all)."""
    tc, run = cfg.traffic, cfg.run
    if tc.workload == "collective":
        n = len(tc.nodes) if tc.nodes else nodes
        return float(n) * max(1, n - 1)
    if tc.workload == "trace":
        return 0.0                 # bounded by the trace reader
    if tc.load <= 0:
        return 0.0
    if run.mode == "finite":
        return float(nodes) * run.messages_per_node
    # one message per node every M packets at γ times the γ = 1 packet rate, over warm-up,
    # window and drain.  The γ = 1 packet period is S / B times the busiest channel's load
    # factor c (traffic.load): a torus's from its dims, a graph's taken as 1

    horizon_ns = (run.measure_us if window_only else
                  run.warmup_us + run.measure_us + run.drain_us) * 1000
    c = 1.0
    if cfg.topology.kind == "torus":
        c = torus_load_factor(cfg.topology.dims, cfg.topology.wrap) or 1.0
    per_packet_ns = max(cfg.packet.size_bytes * 8 * c / cfg.link.bandwidth_gbps, 1e-3)
    rate = tc.load / (tc.message_packets * per_packet_ns)
    return nodes * (horizon_ns * rate + 2)


def excess_packets(cfg: Any, nodes: int) -> float:
    """Packets an open-loop workload offers above γ = 1 (what uniform traffic saturates at),
    which wait at their sources: a share (γ - 1) / γ of all it creates, none at γ <= 1."""
    tc = cfg.traffic
    if tc.workload != "open" or tc.load <= 1:
        return 0.0
    return messages_upper_bound(cfg, nodes) * tc.message_packets * (tc.load - 1) / tc.load


def measured_packets(cfg: Any, nodes: int) -> float:
    """Packets the run measures, each with a record: those of the messages created in the
    window (open loop, window mode), else every one (finite runs, collectives; a trace's are
    bounded by its reader)."""
    tc = cfg.traffic
    if tc.workload == "collective":
        return messages_upper_bound(cfg, nodes) * -(-tc.message_bytes // cfg.packet.size_bytes)
    return messages_upper_bound(cfg, nodes, window_only=True) * tc.message_packets


def workload_bytes(cfg: Any, nodes: int) -> float:
    """The workload's share of :func:`estimate_bytes`: its schedule, the packets waiting at
    their sources and the measured packets' records."""
    return (messages_upper_bound(cfg, nodes) * PER_MESSAGE_BYTES
            + excess_packets(cfg, nodes) * PER_PACKET_BYTES
            + measured_packets(cfg, nodes) * PER_MEASURED_PACKET_BYTES)


def estimate_bytes(cfg: Any, nodes: int | None = None) -> float:
    """A generous estimate of the run's peak memory (module docstring)."""
    nodes, ports = node_count(cfg, nodes)
    vcs = VCS.get(cfg.routing.algorithm, 4)
    dims = cfg.topology.dims or ()
    routers = nodes
    if cfg.topology.kind in FAMILY_KINDS:
        # per terminal its NIC and streams; per router its ports' and terminals' queues
        routers, ports, terminals = family_size(cfg.topology)
        total = BASELINE_BYTES + terminals * PER_NODE_BYTES
        total += (routers * (ports + 1) + terminals) * vcs * PER_QUEUE_BYTES
    else:
        # the relative-offset tables: a byte and an int64 per 2^n coordinate differences
        total = BASELINE_BYTES + nodes * (PER_NODE_BYTES + 9 * 2 ** len(dims))
        total += nodes * (ports + 1) * vcs * PER_QUEUE_BYTES
    total += float(routers) ** 2 * PAIR_BYTES.get(cfg.routing.algorithm, 0)
    total += workload_bytes(cfg, nodes)
    if cfg.routing.algorithm == "table":
        table = getattr(cfg.routing, "table", None)
        total += table_bytes(nodes, dims, layers=isinstance(table, dict)
                             and bool(table.get("layers")))
    return total


def table_bytes(nodes: int, dims: Any = (), layers: bool = False) -> float:
    """A routing table's share of :func:`estimate_bytes`: ``N (N - 1)`` routes of about
    ``sum(dims) / 4`` hops on a torus (``log2 N`` on a graph), :data:`LAYERS_FACTOR` times that
    while virtual ``layers`` are assigned.  Measured against it: the BFS table of 16x16x16
    (12.2 GB estimated) peaks at 6.1 GB in ``icsim tables`` and at 10.1 GB in a run."""
    routes = float(nodes) * (nodes - 1)
    hops = sum(dims) / 4 if dims else math.log2(max(nodes, 2))
    return routes * (PER_ROUTE_BYTES + PER_HOP_BYTES * hops) * (LAYERS_FACTOR if layers else 1)


#: how the refusals say what they keep free
SPARE = f", of which icsim takes at most {HEADROOM:.0%}"


def check_fits(cfg: Any, nodes: int | None = None) -> None:
    """Refuse (ConfigError naming the topology, or the workload when that dominates) a config
    that would need more memory than this machine has available."""
    need = estimate_bytes(cfg, nodes)
    have = available_bytes()
    if need > HEADROOM * have:
        nodes, _ = node_count(cfg, nodes)
        msgs = messages_upper_bound(cfg, nodes)
        excess = excess_packets(cfg, nodes)
        measured = measured_packets(cfg, nodes)
        key = "topology" if workload_bytes(cfg, nodes) < need / 2 else "traffic"
        what = (f"{nodes:,} nodes" if key == "topology" else
                f"about {msgs:,.0f} messages, {measured:,.0f} packets measured" +
                (f", {excess:,.0f} waiting at their sources" if excess else ""))
        raise ConfigError(key, f"this run needs about {need / 1e9:,.3g} GB ({what}); this machine "
                               f"has {have / 1e9:,.1f} GB available{SPARE}")


def routing_graph_bytes(dims: Any) -> float:
    """The Angara routing graph of the torus ``dims`` (:data:`PER_ROUTING_GRAPH_NODE_BYTES`)."""
    return math.prod(dims) * PER_ROUTING_GRAPH_NODE_BYTES * 3.0 ** len(dims)


def check_table_fits(nodes: int, dims: Any = (), layers: bool = False,
                     routing_graph: bool = False) -> None:
    """Refuse (ValueError) a routing table of ``nodes`` nodes that would not fit in the memory
    available (:func:`table_bytes`; with virtual ``layers`` assigned to it; with the
    ``routing_graph`` of the whole torus ``dims`` it is searched on), before it is generated.

    >>> check_table_fits(8, (1000, 1000, 1000), routing_graph=True)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: a table of 8 nodes on a torus of 1,000,000,000 nodes needs about 27,000... GB...
    """
    need = BASELINE_BYTES + table_bytes(nodes, dims, layers)
    torus = ""
    if routing_graph and dims:
        need += routing_graph_bytes(dims)
        if math.prod(dims) != nodes:
            torus = f" on a torus of {math.prod(dims):,} nodes"
    have = available_bytes()
    if need > HEADROOM * have:
        what = " while virtual layers are assigned to it" if layers else ""
        holds = "needs" if torus else f"holds {nodes * (nodes - 1):,} routes,"
        raise ValueError(f"a table of {nodes:,} nodes{torus} {holds} about {need / 1e9:,.1f} "
                         f"GB{what}; this machine has {have / 1e9:,.1f} GB available{SPARE}")
