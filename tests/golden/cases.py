"""Pinned results of fixed configs: the model must not change when the code is restructured.

``CASES`` are configs (dicts, relative to the repository) whose result records were recorded
with the SimPy engine *before* the engine was split and the network spec introduced; every field
of ``PINNED`` must come out bit-identical, in both engines.  They were re-recorded once since,
when mean latencies became exact integer sums (independent of the order in which packets are
consumed): only the last bits of ``latency_ns``/``network_latency_ns`` moved.  Re-record only for
a deliberate change, and say so in the commit::

    python -m tests.golden.cases          # writes tests/golden/results.json
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
RESULTS = HERE / "results.json"
REPO = HERE.parent.parent

# fields that depend on the model only (not on wall time, version, event batching or schema)
PINNED = ("accepted_load", "offered_measured_load", "latency_ns", "latency_p50_ns",
          "latency_p99_ns", "latency_max_ns", "network_latency_ns", "hops", "dilation",
          "derouted", "packets_measured", "packets_delivered", "packets_generated",
          "completion_time_ns", "finish_time_ns", "source_queue_mean",
          "channel_utilisation_mean", "channel_utilisation_max", "packet_hops", "sim_time_ns",
          "retransmissions", "saturated", "saturation_reason")

_REF = {"nic": {"handshake": "stop_and_wait"},
        "router": {"flow_control": "ack_nak", "arbitration": "escape_priority",
                   "tie_break": "ordered", "injection_min_free": 5},
        "routing": {"profit": "reference", "ofr_candidates": "reference",
                    "min_deroute_distance": 2},
        "traffic": {"phase": "aligned", "params": {"uniform": {"include_self": True}}},
        "run": {"mode": "finite"}}


def _merge(base: dict, *more: dict) -> dict:
    out = json.loads(json.dumps(base))
    for m in more:
        for k, v in m.items():
            if isinstance(v, dict) and isinstance(out.get(k), dict):
                out[k] = _merge(out[k], v)
            else:
                out[k] = v
    return out


CASES: dict[str, dict] = {
    # the committed reference-profile k = 8 row (experiments/results/ofr_k8/reference)
    "ref-k8-butterfly-abr-0.10": _merge(_REF, {
        "topology": {"kind": "torus", "dims": [8, 8, 8]},
        "routing": {"algorithm": "abr"},
        "traffic": {"pattern": "butterfly", "load": 0.1, "message_packets": 96},
        "run": {"messages_per_node": 32}}),
    "ref-4x4x4-ofr-uniform-ack_nak": _merge(_REF, {
        "topology": {"kind": "torus", "dims": [4, 4, 4]},
        "routing": {"algorithm": "ofr"},
        "traffic": {"pattern": "uniform", "load": 0.6, "message_packets": 16},
        "run": {"messages_per_node": 4}}),
    "ref-4x4x4-por-transpose3d-ack_nak": _merge(_REF, {
        "topology": {"kind": "torus", "dims": [4, 4, 4]},
        "routing": {"algorithm": "por"},
        "traffic": {"pattern": "transpose3d", "load": 0.5, "message_packets": 16},
        "run": {"messages_per_node": 4}}),
    "clean-4x4x4-ofr-uniform-random-ties": {
        "seed": 3, "topology": {"kind": "torus", "dims": [4, 4, 4]},
        "routing": {"algorithm": "ofr"},
        "traffic": {"pattern": "uniform", "load": 0.6, "message_packets": 8},
        "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}},
    "clean-5x4-por-tornado-exponential": {
        "seed": 5, "topology": {"kind": "torus", "dims": [5, 4]},
        "routing": {"algorithm": "por"},
        "traffic": {"pattern": "tornado", "load": 0.7, "message_packets": 4,
                    "arrivals": "exponential"},
        "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}},
    "clean-4x4-abr-transpose-vct": {
        "seed": 2, "topology": {"kind": "torus", "dims": [4, 4]},
        "router": {"switching": "virtual_cut_through"},
        "routing": {"algorithm": "abr"},
        "traffic": {"pattern": "transpose", "load": 0.5, "message_packets": 4},
        "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}},
    "clean-4x4x2-dor-bitreverse-saturated": {
        "seed": 4, "topology": {"kind": "torus", "dims": [4, 4, 2]},
        "routing": {"algorithm": "dor"},
        "traffic": {"pattern": "bitreverse", "load": 1.2, "message_packets": 8},
        "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 10}},
    "graph-acro-layers-uniform": {
        "seed": 1, "topology": {"kind": "random_regular", "nodes": 16, "degree": 3, "seed": 2},
        "routing": {"algorithm": "table", "generator": "minimal", "layers": "acro"},
        "traffic": {"pattern": "uniform", "load": 0.5, "message_packets": 4},
        "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}},
    "angara-sssp-alltoall-collective": {
        "seed": 1, "topology": {"kind": "torus", "dims": [4, 2, 2, 2]},
        "packet": {"size_bytes": 4096},
        "routing": {"algorithm": "table", "generator": "sssp"},
        "traffic": {"workload": "collective", "collective": "alltoall", "interleave": True,
                    "message_bytes": 65536}},
    "trace-abr-4x4": {
        "seed": 1, "topology": {"kind": "torus", "dims": [4, 4]},
        "routing": {"algorithm": "abr"},
        "traffic": {"workload": "trace", "trace": "configs/examples/trace.csv"}},
    "clean-4x4-dor-stop_and_wait-delay": {
        "seed": 6, "topology": {"kind": "torus", "dims": [4, 4]},
        "nic": {"handshake": "stop_and_wait"},
        "router": {"delay_cycles": 2, "queue_packets": 4},
        "routing": {"algorithm": "dor"},
        "traffic": {"pattern": "hotspot", "load": 0.4, "message_packets": 4,
                    "params": {"hotspot": {"nodes": [5], "fraction": 0.2}}},
        "run": {"warmup_us": 5, "measure_us": 20, "drain_us": 40}},
}

SLOW = {"ref-k8-butterfly-abr-0.10"}


def pinned(result: dict) -> dict:
    return {k: result.get(k) for k in PINNED}


def record() -> None:
    import os

    from icsim.model.config import config_from_dict
    from icsim.simulator.simulation import run

    os.chdir(REPO)
    out = {}
    for name, data in CASES.items():
        out[name] = pinned(run(config_from_dict(data), engine="simpy"))
        print(name, out[name]["latency_ns"], out[name]["packet_hops"], flush=True)
    RESULTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record()
