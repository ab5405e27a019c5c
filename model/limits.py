"""Size limits checked before anything is built: what a run would need, against what the machine
has.

:func:`estimate_bytes` estimates the peak memory of a run from its config alone (no topology is
built), for the engine it will take (:func:`engines_of`; the larger of the two when a plug-in
may send it to SimPy): a baseline, per router, port, queue and relative offset the network's
state, a family's tables of router pairs, and the workload -- a collective's or a trace's
messages, an application's operations, the packets an overload piles up at their sources and a
byte or two per measured packet (an open loop's messages are made as the run goes: they cost
nothing ahead).  Its constants were measured on this code (``/usr/bin/time -f %M`` on 45
configs, December: from the quickstart to 98,304-router tori, windows to 100 ms, overloads,
16.8 M-message collectives, a 10^6-message trace, 6.5 M-operation applications, every family
algorithm, both engines; each estimate within 16 % of its peak, most within 5 %, the largest
in ``tests/test_limits.py``).  A trace is checked again once read, an application
once its operations are counted.  :func:`check_fits` refuses a config whose estimate exceeds the
memory available (``MemAvailable`` of ``/proc/meminfo``, else the physical memory), with both
numbers in the message.

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

#: the engines whose memory is estimated apart (:func:`engines_of`): the compiled engine's
#: arrays and numba's code against the SimPy engine's Python objects.  Each figure below was
#: measured (``/usr/bin/time -f %M``, peak resident memory, on this code, December) and fit:
#: the 4x4x4 quickstart with a 10 µs window for the baseline; DOR on the tori 256x256,
#: 32x32x32, 16^4 and 16x16x16x12x2 (65,536 to 98,304 routers) for a router (within 3 % of
#: each), OFR on 32x32x32 for a VC; SimPy on 32x32x32 under DOR and OFR
ENGINES = ("compiled", "simpy")
#: what a process holds before building anything: Python, numpy, icsim (and numba with the
#: compiled engine's machine code): 210 MB compiled, 72 MB SimPy
BASELINE_BYTES = {"compiled": 210e6, "simpy": 75e6}
#: per router: its NIC, terminal and streams, coordinates, tables by router
PER_NODE_BYTES = {"compiled": 2500, "simpy": 3300}
#: per port of a router (its ejection port counted): neighbours, link times, arrivals
PER_PORT_BYTES = {"compiled": 560, "simpy": 0}
#: per (port, VC): a queue (the compiled engine's rows, a deque and its lists on SimPy)
PER_QUEUE_BYTES = {"compiled": 310, "simpy": 1055}
#: per router and per entry of its 2^n relative offsets (a torus's offset-keyed tables)
PER_OFFSET_BYTES = 55
#: per message of a schedule (collectives, traces; an open loop has none: its messages are
#: made as the run goes): its rows while built and the engine's arrays.  Measured: alltoall
#: collectives of 261,632 and 16,773,120 one-packet messages (8x8x8, 16x16x16): 868 and
#: 862 bytes a message compiled, 400 on SimPy
PER_MESSAGE_BYTES = {"compiled": 870, "simpy": 400}
#: per message of a trace, read and replayed (its packets measured).  Measured: 1,000,000
#: one-packet messages on 8x8x8 peak at 480 MB compiled (270 bytes a message)
PER_TRACE_MESSAGE_BYTES = {"compiled": 270, "simpy": 400}
#: per operation of an application (``traffic/apps/``): its builder's lists, its arrays and
#: the engine's, its messages' packets.  Measured: halo3d on 512 ranks, 300 iterations (6.45
#: M operations, 2.3 M messages) peaks at 3.59 GB compiled (524 bytes an operation); 100
#: iterations (2.15 M) at 914 MB on SimPy (390 bytes)
PER_OP_BYTES = {"compiled": 525, "simpy": 390}
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
#: offered above γ = 1 piles up the excess in the nodes' unbounded source queues.  Measured:
#: the quickstart config at γ = 10 (1.8 M packets waiting at the end) peaks at 782 MB on
#: SimPy (394 bytes a packet), at γ = 100 (19.8 M) at 811 MB compiled (30 bytes)
PER_PACKET_BYTES = {"compiled": 30, "simpy": 400}
#: per measured packet: its latency kept in a byte or two (``simulator/latencies.py``), and
#: the rest summed.  Measured: the quickstart config with a 100 ms window (18.7 M measured
#: packets) peaks at 249 MB compiled, 39 MB above its 10 µs window; 8x8x8 with a 20 ms window
#: (15.0 M) at 246 MB
PER_MEASURED_PACKET_BYTES = 2.1
#: per node of a torus and per factor 3 for each of its dimensions: the Angara routing graph
#: a table generator searches (``icsim tables``), which covers the whole torus even for a table
#: of a few nodes.  Measured with ``--nodes 8``: 2.4, 5, 13, 36 and 103 KB per node on tori of
#: 1 to 5 dimensions (4,096 to 32,768 nodes), where this gives 3, 9, 27, 81 and 243 KB
PER_ROUTING_GRAPH_NODE_BYTES = 1000
#: what ``icsim tables`` and ``icsim layers`` hold before a table (networkx and scipy too)
TABLE_BASELINE_BYTES = 150e6
#: the share of the available memory a run or a table may be estimated to take
HEADROOM = 0.9
#: VC classes per port of the built-in algorithms (table routing with layers may use more;
#: vlb and ugal take 4 on a torus, a dateline pair per phase)
VCS = {"dor": 1, "abr": 2, "por": 2, "ofr": 3, "table": 1, "dfly_min": 2, "dfly_val": 3,
       "ugal_l": 3, "ugal_g": 3, "par": 4, "dmodk": 1, "updown_adaptive": 1, "hx_dor": 1,
       "hx_adaptive": 2, "hx_dal": 2, "vlb": 2, "ugal": 2}
#: bytes per ordered pair of routers at the peak of a run of an algorithm whose program reads
#: tables of a row per pair (its routes' tables, its program's, one phase's masks in the
#: deadlock check, the compiled engine's copy of the program): the peak resident memory of a
#: run at γ = 0.0001 less the rest of :func:`estimate_bytes`, per pair, measured on the
#: dragonfly p 1, a 16, h 8 (2,064 routers), the 32-ary 3-tree (3,072) and the HyperX 16^3
#: (4,096; vlb and ugal there too), December: the 32-ary 3-tree under D-mod-k peaks at 1.00 GB,
#: the HyperX under DAL at 1.93 GB
PAIR_BYTES = {"dfly_min": 80, "dfly_val": 110, "ugal_l": 135, "ugal_g": 142, "par": 202,
              "dmodk": 48, "updown_adaptive": 42, "hx_dor": 67, "hx_adaptive": 65,
              "hx_dal": 89, "vlb": 71, "ugal": 71}


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
    if tc.workload in ("trace", "app"):
        return 0.0                 # bounded by the trace reader, the application's count
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


def engines_of(cfg: Any) -> tuple[str, ...]:
    """The engines a run of ``cfg`` may take (:data:`ENGINES`): ``run.engine``'s, and for
    ``auto`` the compiled engine -- or either when a plug-in file may route or make traffic in
    Python (then the SimPy engine runs it)."""
    engine = cfg.run.engine
    if engine in ENGINES:
        return (engine,)
    if cfg.routing.plugins or cfg.traffic.plugins:
        return ENGINES
    return ("compiled",)


def workload_bytes(cfg: Any, nodes: int, engine: str = "compiled",
                   known: float | None = None) -> float:
    """The workload's share of :func:`estimate_bytes` on ``engine``: a collective's messages,
    a trace's (``known``, once read) or an application's operations (``known``, once
    counted), the packets waiting at their sources and the measured packets."""
    kind = cfg.traffic.workload
    size = known or 0
    scheduled = (messages_upper_bound(cfg, nodes) * PER_MESSAGE_BYTES[engine]
                 if kind == "collective" else
                 size * PER_TRACE_MESSAGE_BYTES[engine] if kind == "trace" else
                 size * PER_OP_BYTES[engine] if kind == "app" else 0.0)
    return (scheduled + excess_packets(cfg, nodes) * PER_PACKET_BYTES[engine]
            + measured_packets(cfg, nodes) * PER_MEASURED_PACKET_BYTES)


def network_bytes(cfg: Any, engine: str, nodes: int | None = None) -> float:
    """The network's share of :func:`estimate_bytes` on ``engine``: per router, per port,
    per (port, VC) queue and, on a torus, per relative offset; a family's tables of router
    pairs."""
    nodes, ports = node_count(cfg, nodes)
    vcs = VCS.get(cfg.routing.algorithm, 4)
    per_port = PER_PORT_BYTES[engine] + vcs * PER_QUEUE_BYTES[engine]
    tc = cfg.topology
    if tc.kind in FAMILY_KINDS:
        # per terminal its NIC and streams; per router its ports and its terminals' ejection
        routers, ports, terminals = family_size(tc)
        per_router = ports + (tc.k if tc.kind == "fat_tree" else tc.p or 1)
        return (terminals * PER_NODE_BYTES[engine] + routers * per_router * per_port
                + float(routers) ** 2 * PAIR_BYTES.get(cfg.routing.algorithm, 0))
    offsets = 2 ** len(tc.dims) if tc.kind == "torus" else 0
    return (nodes * (PER_NODE_BYTES[engine] + (ports + 1) * per_port
                     + offsets * PER_OFFSET_BYTES)
            + float(nodes) ** 2 * PAIR_BYTES.get(cfg.routing.algorithm, 0))


def estimate_bytes(cfg: Any, nodes: int | None = None, known: float | None = None) -> float:
    """An estimate of the run's peak memory (module docstring): the largest over the engines
    it may take (:func:`engines_of`).  ``nodes``: a graph's, once read; ``known``: a trace's
    messages once read, an application's operations once counted."""
    count, _ = node_count(cfg, nodes)
    total = max(BASELINE_BYTES[e] + network_bytes(cfg, e, nodes)
                + workload_bytes(cfg, count, e, known) for e in engines_of(cfg))
    if cfg.routing.algorithm == "table":
        table = getattr(cfg.routing, "table", None)
        total += table_bytes(count, cfg.topology.dims or (),
                             layers=isinstance(table, dict) and bool(table.get("layers")))
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


def check_fits(cfg: Any, nodes: int | None = None, known: float | None = None) -> None:
    """Refuse (ConfigError naming the topology, or the workload when that dominates) a config
    that would need more memory than this machine has available (``known``: a trace's
    messages once read, an application's operations once counted)."""
    need = estimate_bytes(cfg, nodes, known)
    have = available_bytes()
    if need > HEADROOM * have:
        nodes, _ = node_count(cfg, nodes)
        excess = excess_packets(cfg, nodes)
        measured = measured_packets(cfg, nodes)
        load = max(workload_bytes(cfg, nodes, e, known) for e in engines_of(cfg))
        key = "topology" if load < need / 2 else "traffic"
        kind = cfg.traffic.workload
        what = (f"{nodes:,} nodes" if key == "topology" else
                f"{known:,.0f} messages of a trace" if kind == "trace" else
                f"{known:,.0f} operations of an application" if kind == "app" else
                f"about {messages_upper_bound(cfg, nodes):,.0f} messages, {measured:,.0f} "
                f"packets measured" +
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
    need = TABLE_BASELINE_BYTES + table_bytes(nodes, dims, layers)
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
