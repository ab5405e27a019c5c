"""Applications on the network, closed loop (icsim.traffic.apps): exact times on idle networks,
both engines identical, jobs that do not disturb each other, and bad input named."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icsim.model.config import ConfigError, config_from_dict
from icsim.simulator.build import build
from icsim.simulator.simulation import run
from icsim.traffic.apps.ops import SEND, AppError, Builder
from tests.golden.cases import pinned
from tests.test_model import zero_load_ns

ENGINES = ["simpy", "compiled"]


def app(jobs, dims=(4, 4), **sections):
    data = {"topology": {"dims": list(dims)}, "traffic": {"workload": "app", "jobs": jobs}}
    data.update(sections)
    return config_from_dict(data)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("nodes,h", [([0, 1], 1), ([0, 5], 2), ([0, 10], 4)])
def test_a_ping_pong_round_trip_is_twice_the_zero_load_latency(table1, engine, nodes, h):
    res = run(app([{"motif": "pingpong", "placement": "list", "nodes": nodes,
                    "params": {"iterations": 5, "bytes": 512}}]), engine=engine)
    job, = res["jobs"]
    rtt = 2 * zero_load_ns(table1, h)
    assert job["iterations"] == 5
    assert job["iteration_ns"] == pytest.approx([rtt] * 5, abs=1e-6)
    assert res["completion_time_ns"] == pytest.approx(5 * rtt, abs=1e-6)
    assert res["messages"]["<=4KiB"]["mean_ns"] == pytest.approx(rtt / 2, abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_ring_allreduce_on_an_idle_ring_takes_its_closed_form_time(table1, engine):
    # 8 ranks on an 8-ring, rank r on node r: each of the 2(n - 1) steps sends B/n bytes (m
    # packets) one hop to the right while receiving from the left, every channel used by one
    # message: a step takes the first packet's zero-load time and one bottleneck
    # serialisation per further packet (the NIC, 64 Gb/s, is faster than the link, 20 Gb/s)
    n, m = 8, 4
    cfg = app([{"motif": "allreduce", "params": {"bytes": n * m * 512, "algorithm": "ring"}}],
              dims=(n,))
    res = run(cfg, engine=engine)
    link_ser = table1["S"] * 8 / table1["B_link"]
    step = zero_load_ns(table1, 1) + (m - 1) * link_ser
    assert res["completion_time_ns"] == pytest.approx(2 * (n - 1) * step, abs=1e-6)
    assert res["jobs"][0]["wait_share_mean"] > 0.9          # it only communicates


@pytest.mark.parametrize("engine", ENGINES)
def test_a_job_beside_an_idle_job_finishes_as_it_does_alone(engine):
    halo = {"motif": "halo2d", "placement": "list", "nodes": list(range(8)),
            "params": {"iterations": 3, "bytes": 2048, "compute_us": 1.0}}
    idle = {"motif": "pingpong", "placement": "list", "nodes": [12, 13],
            "params": {"iterations": 1, "bytes": 0, "compute_us": 50.0}}
    alone = run(app([halo]), engine=engine)["jobs"][0]
    shared = run(app([halo, {**idle, "params": {**idle["params"], "iterations": 1}}]),
                 engine=engine)["jobs"]
    assert shared[0]["completion_ns"] == alone["completion_ns"]
    assert shared[0]["iteration_ns"] == alone["iteration_ns"]


CASES = {
    "halo3d+allreduce": [{"motif": "halo3d", "params": {"iterations": 2, "bytes": 4096,
                                                        "compute_us": 2.0,
                                                        "allreduce_bytes": 64}}],
    "alltoall-bruck": [{"motif": "alltoall", "params": {"bytes": 1024, "algorithm": "bruck"}}],
    "npb_is-pairwise": [{"motif": "npb_is", "ranks_per_node": 2, "params": {
        "cls": "S", "iterations": 1, "key_exchange": "pairwise"}}],
    "npb_is-pieces": [{"motif": "npb_is", "ranks_per_node": 2, "params": {
        "cls": "S", "iterations": 1, "chunk_bytes": 1000}}],
    "two-jobs": [{"motif": "halo2d", "placement": "list", "nodes": list(range(8)),
                  "params": {"iterations": 2, "bytes": 8192}},
                 {"motif": "alltoall", "placement": "list", "nodes": list(range(8, 16)),
                  "params": {"bytes": 4096}}],
    "random-compute": [{"motif": "halo2d", "ranks_per_node": 2, "params": {
        "iterations": 3, "bytes": 1024, "compute_us": {"mean_us": 2, "dist": "exponential"}}}],
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("flow", ["credit", "ack_nak"])
def test_both_engines_give_identical_records(name, flow):
    cfg = app(CASES[name], dims=(4, 4), router={"flow_control": flow})
    a, b = run(cfg, engine="simpy"), run(cfg, engine="compiled")
    assert pinned(a) == pinned(b)
    assert a["jobs"] == b["jobs"] and a["messages"] == b["messages"]
    assert all(j["finished"] for j in a["jobs"]) and not a["saturated"]
    assert a["packets_delivered"] == a["packets_generated"] == a["packets_measured"]


@st.composite
def applications(draw):
    """Random small applications: messages between random ranks, each send and receive at a
    random place of its rank's program, computations and waits between."""
    n = draw(st.integers(2, 5))
    steps = draw(st.lists(st.tuples(st.sampled_from(["msg", "compute", "wait"]),
                                     st.integers(0, n - 1), st.integers(0, n - 1),
                                     st.integers(0, 3000)), min_size=1, max_size=25))
    b = Builder(n)
    for what, a, c, x in steps:
        if what == "msg" and a != c:
            b.isend(a, c, x)
            b.irecv(c, a, x)
        elif what == "compute":
            b.compute(a, x * 1000)
        else:
            b.waitall(a)
    return b


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(applications())
def test_random_applications_run_to_completion_identically_on_both_engines(b):
    import dataclasses

    from icsim.simulator.engines.compiled import CompiledEngine
    from icsim.simulator.engines.simpy import RandomStream, SimpyEngine
    from icsim.traffic.apps.jobs import make_app
    from icsim.traffic.workloads import app_workload

    try:
        ops = b.build()
    except AppError as exc:                 # only a cycle can stop a program written this way
        assert "would hang" in str(exc)
        return
    model = build(app([{"motif": "pingpong"}]))
    spec = dataclasses.replace(model.spec, window=None, horizon_ps=None)
    wl = app_workload(make_app([("random", ops, np.arange(ops.num_ranks) * 3)], 512))
    a = SimpyEngine(spec, wl, RandomStream(np.random.default_rng(0))).run()
    c = CompiledEngine(spec, wl, np.random.default_rng(0)).run()
    for key in ("ready", "done", "arrived"):
        assert a.op_times[key].tolist() == c.op_times[key].tolist()
    assert (a.op_times["done"] >= 0).all()
    assert a.delivered == a.generated == wl.app.total_packets
    # a receive is never done before its message has arrived, nor a send's message before
    # the send
    recv = ops.match[ops.kind == SEND]
    assert (a.op_times["arrived"][recv] >= a.op_times["done"][ops.kind == SEND]).all()
    assert (a.op_times["done"][recv] >= a.op_times["arrived"][recv]).all()


MOTIF_FILE_CYCLE = "id,rank,op,peer,bytes,depends_on\nr0,0,recv,1,64,\ns0,0,send,1,64,r0\n" \
                   "r1,1,recv,0,64,\ns1,1,send,0,64,r1\n"
MOTIF_FILE_UNMATCHED = "id,rank,op,peer,bytes,depends_on\na,0,send,1,64,\nb,1,recv,0,64,\n" \
                       "c,2,recv,1,64,\n"


@pytest.mark.parametrize("job,key,words", [
    ({"motif": "pingpong", "placement": "list", "nodes": [0, 99]}, "traffic.jobs.0.nodes",
     "terminal 99, which the topology does not have"),
    ({"motif": "pingpong", "placement": "coords", "nodes": [[0, 0], [4, 1]]},
     "traffic.jobs.0.nodes", "[4, 1] is not a coordinate"),
    ({"motif": "halo3d", "params": {"grid": [3, 3, 3]}}, "traffic.jobs.0.params.grid", "grid"),
    ({"motif": "pingpng"}, "traffic.jobs.0.motif", "did you mean 'pingpong'"),
    ({"file": "CYCLE"}, "traffic.jobs.0.file", "rank 0 would hang: its operation 'r0'"),
    ({"file": "UNMATCHED"}, "traffic.jobs.0.file",
     "rank 2 would hang: its receive from rank 1 (operation 'c') has no matching send"),
])
def test_bad_jobs_are_one_line_naming_the_key(tmp_path, job, key, words):
    if job.get("file") in ("CYCLE", "UNMATCHED"):
        path = tmp_path / "motif.csv"
        path.write_text(MOTIF_FILE_CYCLE if job["file"] == "CYCLE" else MOTIF_FILE_UNMATCHED)
        job = {"file": str(path)}
    with pytest.raises(ConfigError) as err:
        build(app([job]))
    assert err.value.path == key and words in str(err.value)


def test_a_bad_motif_file_exits_2_with_one_line(tmp_path):
    path = tmp_path / "motif.csv"
    path.write_text(MOTIF_FILE_CYCLE)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"topology: {{dims: [4, 4]}}\ntraffic: {{workload: app, jobs: [{{file: "
                   f"{path}}}]}}\n")
    done = subprocess.run([sys.executable, "-m", "icsim", "run", str(cfg)], capture_output=True,
                          text=True)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "would hang" in done.stderr


def test_slowdowns_and_the_timeline_of_a_small_job():
    import icsim

    cfg = {"topology": {"dims": [4, 4]}, "traffic": {"workload": "app", "jobs": [
        {"motif": "halo2d", "placement": "list", "nodes": list(range(8)),
         "params": {"iterations": 3, "bytes": 8192, "compute_us": 1}},
        {"motif": "alltoall", "placement": "list", "nodes": list(range(8, 16)),
         "params": {"bytes": 8192}}]}}
    shared, slow = icsim.slowdowns(cfg, {"routing.algorithm": "abr"})
    assert [s["name"] for s in slow] == ["halo2d", "alltoall"]
    for s, job in zip(slow, shared["jobs"]):
        assert s["shared_ns"] == job["completion_ns"] > 0
        assert s["slowdown"] == pytest.approx(s["shared_ns"] / s["alone_ns"])
    ops = shared.ops
    assert len(ops) > 0 and set(ops.job) == {0, 1}
    assert (ops.done_ns >= ops.ready_ns).all()
    fig = icsim.timeline_figure(shared, job=0)
    ax = fig.axes[0]
    assert len(ax.get_yticks()) == 8                      # one row per rank
    assert any(len(c.get_paths()) for c in ax.collections)  # the bars
    with pytest.raises(TypeError, match="the Result of an app run"):
        icsim.timeline_figure(icsim.run({"topology": {"dims": [4, 4]},
                                         "run": {"warmup_us": 1, "measure_us": 2,
                                                 "drain_us": 5}}))


@pytest.mark.parametrize("name,agrees", [("angara_npb", 5), ("apps_torus", None)])
def test_the_app_reproductions_redraw_their_committed_reports(tmp_path, name, agrees):
    import shutil

    import icsim
    from tests.golden.cases import REPO

    committed = REPO / "experiments" / "results" / name
    shutil.copy(committed / "runs.csv", tmp_path / "runs.csv")
    rep = icsim.reproduce(name.replace("_", "-"), out=tmp_path)
    assert rep.report == (committed / "report.md").read_text()
    if agrees is not None:
        assert rep.report.count("| agrees") == agrees
    else:
        for png in ("slowdown_slabs.png", "slowdown_scattered.png", "iterations.png"):
            assert (tmp_path / png).read_bytes() == (committed / png).read_bytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "0", "1", "2", "-1", "send", "recv",
                                          "compute", "wait", "", "1e9", "nan", "x;y", "a;b",
                                          "4096", " "]), min_size=0, max_size=8),
                min_size=0, max_size=8))
def test_a_hostile_motif_file_is_refused_with_its_line_or_read(tmp_path_factory, rows):
    """Any text under the header: read as operations, or one InputFileError naming the file
    (and the line), never another exception."""
    from icsim.model.input_files import InputFileError
    from icsim.traffic.apps.files import read_motif_file

    path = tmp_path_factory.mktemp("motif") / "m.csv"
    path.write_text("id,rank,op,peer,bytes,time_us,depends_on\n"
                    + "".join(",".join(r) + "\n" for r in rows))
    try:
        ops = read_motif_file(path)
    except InputFileError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert ops.num_ops == sum(1 for r in rows if any(c.strip() for c in r))


def test_icsim_run_alone_gives_each_job_its_slowdown(tmp_path):
    import json

    cfg = tmp_path / "jobs.yaml"
    cfg.write_text("topology: {dims: [4, 4]}\ntraffic:\n  workload: app\n  jobs:\n"
                   "    - {motif: halo2d, placement: list, nodes: [0, 1, 2, 3, 4, 5, 6, 7], "
                   "params: {iterations: 2, bytes: 4096}}\n"
                   "    - {motif: alltoall, placement: list, "
                   "nodes: [8, 9, 10, 11, 12, 13, 14, 15], params: {bytes: 4096}}\n")
    done = subprocess.run([sys.executable, "-m", "icsim", "run", str(cfg), "--alone", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    jobs = json.loads(done.stdout)["jobs"]
    for j in jobs:
        assert j["slowdown"] == pytest.approx(j["completion_ns"] / j["alone_ns"])
    # under DOR these two halves of the 4x4 torus share no channel: no slowdown at all
    assert [j["slowdown"] for j in jobs] == [1.0, 1.0]
    bad = subprocess.run([sys.executable, "-m", "icsim", "run", "quickstart", "--alone"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--alone" in bad.stderr
