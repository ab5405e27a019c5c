"""icsim beside BookSim2, whole process, on the same three networks and loads.

Standalone measurement script (issue 55): BookSim2 is not a dependency of icsim and none of
its code is here.  Build it from its public source (github.com/booksim/booksim2, ``src/``:
``make``) and give this script the binary:

    python experiments/booksim/speed.py /path/to/booksim2/src/booksim

For each case it writes BookSim2's config, then runs BookSim2 and the equivalent
``icsim run ... --engine compiled --json`` alternately as whole processes, ``--reps`` times,
and records per run the wall time, the packet-hops, the simulated duration in link times and
the peak memory.  Rows go to ``experiments/results/booksim_speed/runs.csv`` (rows of the cases
run replace that file's earlier rows of the same cases), the summary (best and median wall
time, packet-hops per second, icsim / BookSim2) to ``summary.csv`` beside it and to stdout.

What is counted alike.  A packet-hop is one router-to-router channel traversal, icsim's
``packet_hops``.  BookSim2's "Hops average" counts routers traversed (its ``f->hops++`` at
every switch traversal), one more than the channels between them, so BookSim2's packet-hops
here are packets x (Hops average - 1), with packets = its measured injected packet rate
(packets entering the network per node and cycle over the measured periods) x nodes x the
cycles it injected for (warm-up plus measured sample periods).  Its accepted rate would
undercount a short run: deliveries lag injection by a latency.  One BookSim2 cycle
is one flit time and its packets are one flit, so a cycle is icsim's link time (a 512-B packet
on a 20 Gb/s link, 204.8 ns) and its injection rate is icsim's γ.

Matching the simulated duration.  icsim injects over ``warmup_us + measure_us`` and then runs
until every packet is delivered.  BookSim2 here does the same: it warms up for one sample
period (``warmup_periods = 1``) of icsim's warm-up in cycles, measures whole sample periods to
icsim's window (``max_samples`` = 1 + that count; ``acc_stopping_thres`` 0 so it never stops
early on convergence), and, as ``sim_type = throughput``, then stops injecting and drains (a
``latency`` run would go on injecting until its measured packets are out, uncounted work).
A BookSim2 run is stable here when packets enter its network at least 0.95 as fast as they are
offered (a saturated network holds them back in the source queues).

``--marginal`` adds a run of each case with a window a tenth as long, for both tools: the
marginal speed (``marginal.csv``) is the difference of the two windows' packet-hops over the
difference of their median wall (and CPU) times: what a longer run costs once start-up is paid.

On a shared machine the CPU time of each process (user + system, from ``wait4``) is steadier
than its wall time; both are recorded.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "experiments" / "results" / "booksim_speed"
LINK_NS = 512 * 8 / 20.0          # one packet on one link: 204.8 ns, one BookSim2 cycle

# The router of BookSim2's own dragonfly runfile (runfiles/dragonflyconfig), used for all
# three networks: input-queued, iSLIP allocators of 4 iterations, internal speedup 1.7.
ROUTER = {
    "router": "iq", "vc_allocator": "islip", "sw_allocator": "islip", "alloc_iters": 4,
    "credit_delay": 2, "routing_delay": 0, "vc_alloc_delay": 1, "sw_alloc_delay": 1,
    "st_final_delay": 1, "input_speedup": 1, "output_speedup": 1, "internal_speedup": 1.7,
    "wait_for_tail_credit": 0,
}
TRAFFIC = {"packet_size": 1, "traffic": "uniform", "injection_process": "bernoulli",
           "sim_type": "throughput", "seed": 1}


@dataclass(frozen=True)
class Case:
    """One network and load, as an icsim command and a BookSim2 config."""
    icsim: tuple[str, ...]
    nodes: int
    warmup_us: float
    measure_us: float
    booksim: dict = field(default_factory=dict)


CASES = {
    "8x8x8-dor-uniform-0.3": Case(
        icsim=("configs/ofr/clean/k8.yaml", "--set", "routing.algorithm=dor",
               "--set", "traffic.message_packets=1", "--set", "traffic.load=0.3"),
        nodes=512, warmup_us=100, measure_us=1000,
        # dim_order on a torus: dimension order with dateline VCs (two VC classes)
        booksim={"topology": "torus", "k": 8, "n": 3, "routing_function": "dim_order",
                 "num_vcs": 2, "vc_buf_size": 8, "injection_rate": 0.3}),
    "fattree4x3-dmodk-uniform-0.3": Case(
        icsim=("configs/families/fat_tree.yaml", "--set", "traffic.load=0.3"),
        nodes=64, warmup_us=20, measure_us=10000,
        # nearest-common-ancestor routing, BookSim2's deterministic fat-tree routing
        booksim={"topology": "fattree", "k": 4, "n": 3, "routing_function": "nca",
                 "num_vcs": 1, "vc_buf_size": 8, "injection_rate": 0.3}),
    "dragonfly1056-min-uniform-0.5": Case(
        icsim=("configs/families/dragonfly_1056.yaml", "--set", "routing.algorithm=dfly_min",
               "--set", "traffic.load=0.5"),
        nodes=1056, warmup_us=20, measure_us=600,
        # runfiles/dragonflyconfig: p 4, a 8, h 4 (k 4, n 1), 3 VCs of 256 flits
        booksim={"topology": "dragonflynew", "k": 4, "n": 1, "routing_function": "min",
                 "num_vcs": 3, "vc_buf_size": 256, "injection_rate": 0.5}),
}

FIELDS = ["case", "tool", "window_us", "rep", "wall_s", "cpu_s", "inner_s", "packet_hops",
          "packets", "hops_per_packet", "sim_link_times", "hops_per_s", "peak_rss_mb",
          "accepted_load", "stable", "load1"]


def periods(case: Case, measure_us: float) -> tuple[int, int]:
    """BookSim2's sample period (icsim's warm-up in cycles) and its number of samples."""
    period = round(case.warmup_us * 1000 / LINK_NS)
    measured = max(1, round(measure_us * 1000 / LINK_NS / period))
    return period, 1 + measured


def booksim_config(case: Case, measure_us: float) -> str:
    period, samples = periods(case, measure_us)
    settings = {**case.booksim, **ROUTER, **TRAFFIC,
                "warmup_periods": 1, "sample_period": period, "max_samples": samples,
                "acc_stopping_thres": 0.0}
    return "".join(f"{k} = {v};\n" for k, v in settings.items())


def timed(cmd: list[str], stdout: Path, cwd: Path) -> tuple[float, float, float, int]:
    """Run cmd as a whole process: wall seconds, CPU seconds, peak resident MB, exit status."""
    with open(stdout, "w") as out, open(stdout.with_suffix(".err"), "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def run_icsim(name: str, case: Case, measure_us: float, tmp: Path) -> dict:
    cmd = [sys.executable, "-m", "icsim", "run", *case.icsim,
           "--set", f"run.measure_us={measure_us:g}", "--engine", "compiled", "--json"]
    out = tmp / "icsim.json"
    load1 = os.getloadavg()[0]
    wall, cpu, rss, status = timed(cmd, out, REPO)
    if status != 0:
        sys.exit(f"icsim failed (exit {status}): {' '.join(cmd)}\n"
                 + out.with_suffix(".err").read_text()[-2000:])
    rec = json.loads(out.read_text())
    cfg = rec["config"]
    link_ns = cfg["packet"]["size_bytes"] * 8 / cfg["link"]["bandwidth_gbps"]
    if (link_ns, cfg["run"]["warmup_us"]) != (LINK_NS, case.warmup_us):
        sys.exit(f"{name}: icsim's link time {link_ns} ns or warm-up {cfg['run']['warmup_us']}"
                 f" µs is not the case's ({LINK_NS} ns, {case.warmup_us} µs)")
    hops = rec["packet_hops"]
    return {"wall_s": wall, "cpu_s": cpu, "inner_s": rec["wall_s"], "packet_hops": hops,
            "packets": rec["packets_generated"],
            "hops_per_packet": hops / rec["packets_generated"],
            "sim_link_times": rec["sim_time_ns"] / LINK_NS, "peak_rss_mb": rss,
            "accepted_load": rec["accepted_load"], "stable": not rec["saturated"],
            "load1": load1}


def overall(text: str, label: str) -> float:
    section = text.rsplit("Overall Traffic Statistics", 1)[-1]
    found = re.search(rf"{label}\s*=\s*([-+0-9.eE]+)", section)
    if not found:
        raise ValueError(f"no '{label}' in BookSim2's overall statistics")
    return float(found.group(1))


def run_booksim(binary: Path, name: str, case: Case, measure_us: float, tmp: Path) -> dict:
    config = tmp / f"{name}.cfg"
    config.write_text(booksim_config(case, measure_us))
    out = tmp / "booksim.out"
    load1 = os.getloadavg()[0]
    wall, cpu, rss, status = timed([str(binary), str(config)], out, tmp)
    text = out.read_text()
    if "Overall Traffic Statistics" not in text:
        sys.exit(f"BookSim2 gave no overall statistics (exit {status}) on {config}:\n"
                 + "\n".join(text.splitlines()[-5:]))
    injected = overall(text, "Injected packet rate average")
    accepted = overall(text, "Accepted packet rate average")
    routers = overall(text, "Hops average")
    period, samples = periods(case, measure_us)
    packets = injected * case.nodes * period * samples
    hops = packets * (routers - 1)
    cycles = int(re.findall(r"Time taken is (\d+) cycles", text)[-1])
    inner = re.findall(r"Total run time ([0-9.]+)", text)
    return {"wall_s": wall, "cpu_s": cpu, "inner_s": float(inner[-1]) if inner else "",
            "packet_hops": round(hops), "packets": round(packets),
            "hops_per_packet": routers - 1, "sim_link_times": cycles, "peak_rss_mb": rss,
            "accepted_load": accepted, "load1": load1,
            "stable": "unstable" not in text and injected >= 0.95 * case.booksim["injection_rate"]}


def summarise(rows: list[dict]) -> list[dict]:
    """Best and median per case, tool and window; icsim / BookSim2 on each."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["case"], float(r["window_us"]), r["tool"]), []).append(r)
    summary = []
    for (name, window, tool), runs in sorted(groups.items()):
        walls = [float(r["wall_s"]) for r in runs]
        cpus = [float(r["cpu_s"]) for r in runs]
        hops = statistics.median(float(r["packet_hops"]) for r in runs)
        summary.append({"case": name, "window_us": window, "tool": tool, "runs": len(runs),
                        "packet_hops": round(hops), "best_wall_s": round(min(walls), 3),
                        "median_wall_s": round(statistics.median(walls), 3),
                        "best_Mhops_per_s": round(hops / min(walls) / 1e6, 4),
                        "median_Mhops_per_s": round(hops / statistics.median(walls) / 1e6, 4),
                        "median_cpu_s": round(statistics.median(cpus), 3),
                        "Mhops_per_cpu_s": round(hops / statistics.median(cpus) / 1e6, 4)})
    by_key = {(s["case"], s["window_us"], s["tool"]): s for s in summary}
    for s in summary:
        other = by_key.get((s["case"], s["window_us"], "booksim2"))
        if s["tool"] == "icsim" and other:
            for kind in ("best", "median"):
                s[f"{kind}_ratio"] = round(s[f"{kind}_Mhops_per_s"]
                                           / other[f"{kind}_Mhops_per_s"], 2)
            s["cpu_ratio"] = round(s["Mhops_per_cpu_s"] / other["Mhops_per_cpu_s"], 2)
    return summary


def marginal(summary: list[dict]) -> list[dict]:
    """(long - short packet-hops) / (long - short median wall, and CPU), per case and tool."""
    out = []
    for long in summary:
        shorter = [s for s in summary if (s["case"], s["tool"]) == (long["case"], long["tool"])
                   and s["window_us"] < long["window_us"]]
        for short in shorter:
            dh = long["packet_hops"] - short["packet_hops"]
            row = {"case": long["case"], "tool": long["tool"],
                   "windows_us": f"{long['window_us']:g}-{short['window_us']:g}"}
            for kind, key in (("wall", "median_wall_s"), ("cpu", "median_cpu_s")):
                dt = long[key] - short[key]
                row[f"marginal_Mhops_per_{kind}_s"] = round(dh / dt / 1e6, 3) if dt > 0 else ""
            out.append(row)
    return out


def table(rows: list[dict]) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def write_csv(path: Path, rows: list[dict]) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("booksim", type=Path, help="the BookSim2 binary (src/booksim)")
    parser.add_argument("--reps", type=int, default=3, help="runs of each tool per case")
    parser.add_argument("--case", action="append", choices=sorted(CASES),
                        help="run only this case (repeatable; default all three)")
    parser.add_argument("--marginal", action="store_true",
                        help="also run each case with a window a tenth as long")
    parser.add_argument("--out", type=Path, default=OUT, help="directory for the CSVs")
    parser.add_argument("--nice", type=int, default=10, help="niceness of the runs")
    args = parser.parse_args(argv)
    if not (args.booksim.is_file() and os.access(args.booksim, os.X_OK)):
        print(f"speed.py: {args.booksim} is not an executable BookSim2 binary", file=sys.stderr)
        return 2
    if args.reps < 1:
        print("speed.py: --reps must be at least 1", file=sys.stderr)
        return 2
    os.nice(args.nice)
    names = args.case or list(CASES)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "configs").mkdir(exist_ok=True)
    for name in names:
        (args.out / "configs" / f"{name}.cfg").write_text(
            booksim_config(CASES[name], CASES[name].measure_us))

    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        # untimed: numba's cache and the OS's file cache warm, as for a user's second run
        run_icsim(names[0], CASES[names[0]], 10, tmp)
        for rep in range(args.reps):
            for name in names:
                case = CASES[name]
                windows = [case.measure_us] + ([case.measure_us / 10] if args.marginal else [])
                for window in windows:
                    tools = ["icsim", "booksim2"] if rep % 2 == 0 else ["booksim2", "icsim"]
                    for tool in tools:
                        run = (run_icsim(name, case, window, tmp) if tool == "icsim" else
                               run_booksim(args.booksim, name, case, window, tmp))
                        run["hops_per_s"] = run["packet_hops"] / run["wall_s"]
                        row = {"case": name, "tool": tool, "window_us": f"{window:g}", "rep": rep,
                               **run}
                        rows.append(row)
                        print(f"{name} {tool} {window:g} µs rep {rep}: {run['wall_s']:.2f} s, "
                              f"{run['packet_hops']:,} packet-hops, "
                              f"{run['hops_per_s'] / 1e6:.3f} M/s", flush=True)

    runs_csv = args.out / "runs.csv"
    kept = []
    if runs_csv.exists():
        with open(runs_csv, newline="") as f:
            reader = csv.DictReader(f)
            kept = [r for r in reader if r["case"] not in names]
        if reader.fieldnames != FIELDS:
            print(f"speed.py: {runs_csv} has other columns; its earlier rows are dropped")
            kept = []
    for r in rows:
        for k in ("wall_s", "cpu_s", "inner_s", "hops_per_packet", "sim_link_times", "hops_per_s",
                  "peak_rss_mb", "accepted_load"):
            if isinstance(r[k], float):
                r[k] = round(r[k], 4)
    everything = kept + [{k: r[k] for k in FIELDS} for r in rows]
    everything.sort(key=lambda r: (r["case"], -float(r["window_us"]), int(r["rep"]), r["tool"]))
    write_csv(runs_csv, everything)
    summary = summarise(everything)
    write_csv(args.out / "summary.csv", summary)
    print(table(summary))
    pairs = marginal(summary)
    if pairs:
        write_csv(args.out / "marginal.csv", pairs)
        print(table(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
