"""BookSim2's UGAL-L on its own 1,056-node dragonfly, with shallow and deep buffers, for the
dragonfly reproduction (issue 56; ``icsim reproduce dragonfly``'s report reads the rows).

Standalone script: BookSim2 is not a dependency of icsim and none of its code is here.  Build
it from its public source (github.com/booksim/booksim2, ``src/``: ``make``) and give this
script the binary:

    python experiments/booksim/ugal.py /path/to/booksim2/src/booksim \\
        --traffic bad_dragon --buffers 32 256 --loads 0.1 0.2 0.3 0.5

The network is ``runfiles/dragonflyconfig``'s (topology ``dragonflynew``, k 4, n 1: p 4, a 8,
h 4, g 33; local channels of 10 cycles, global of 100, fixed in BookSim2's dragonfly.cpp), its
router (input-queued, iSLIP allocators, internal speedup 1.7: ``speed.ROUTER``), 1-flit
packets (one cycle is one packet time, icsim's link time; an injection rate is icsim's γ),
3 VCs of ``vc_buf_size`` flits each, routing ``ugal`` (``ugal_dragonflynew``: UGAL-L decided
once at the source router, minimal if q_min <= 2 q_nonmin + 30, q the used credits of each
route's first output), traffic ``uniform`` or ``bad_dragon`` (every node sends to the next
group: icsim's ``group_shift``).  Bernoulli injection, throughput mode: ``WARMUP`` sample
periods of ``PERIOD`` cycles, then ``SAMPLES`` measured periods (``acc_stopping_thres`` 0: it
never stops early), then a drain.  BookSim2 ends a run whose latency does not converge with
"unstable"; the row keeps its measured rates either way (``stable`` says which).

Rows go to ``experiments/results/dragonfly/booksim_ugal.csv``; rows of the (traffic, buffer,
load) cases run replace that file's earlier rows of the same cases.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from icsim.experiments.booksim.speed import ROUTER, overall

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "experiments" / "results" / "dragonfly" / "booksim_ugal.csv"
PERIOD, WARMUP, SAMPLES = 500, 3, 3
FIELDS = ["routing", "traffic", "vc_buf_size", "offered", "injected", "accepted",
          "latency_cycles", "stable", "cycles"]
NETWORK = {"topology": "dragonflynew", "k": 4, "n": 1, "num_vcs": 3, "routing_function": "ugal",
           "packet_size": 1, "injection_process": "bernoulli", "sim_type": "throughput",
           "seed": 1}


def config(traffic: str, buffers: int, load: float) -> str:
    settings = {**NETWORK, **ROUTER, "traffic": traffic, "vc_buf_size": buffers,
                "injection_rate": load, "warmup_periods": WARMUP, "sample_period": PERIOD,
                "max_samples": WARMUP + SAMPLES, "acc_stopping_thres": 0.0}
    return "".join(f"{k} = {v};\n" for k, v in settings.items())


def run(binary: Path, traffic: str, buffers: int, load: float, tmp: Path) -> dict:
    cfg = tmp / f"{traffic}-{buffers}-{load}.cfg"
    cfg.write_text(config(traffic, buffers, load))
    text = subprocess.run(["nice", "-n", "10", str(binary), str(cfg)], capture_output=True,
                          text=True, cwd=tmp).stdout
    if "Overall Traffic Statistics" not in text:
        sys.exit(f"BookSim2 gave no overall statistics on {cfg}:\n"
                 + "\n".join(text.splitlines()[-5:]))
    cycles = int(re.findall(r"Time taken is (\d+) cycles", text)[-1])
    return {"routing": "ugal", "traffic": traffic, "vc_buf_size": buffers, "offered": load,
            "injected": overall(text, "Injected packet rate average"),
            "accepted": overall(text, "Accepted packet rate average"),
            "latency_cycles": overall(text, "Packet latency average"),
            "stable": "unstable" not in text, "cycles": cycles}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("booksim", type=Path, help="the BookSim2 binary")
    ap.add_argument("--traffic", nargs="+", default=["bad_dragon"],
                    choices=["uniform", "bad_dragon"])
    ap.add_argument("--buffers", nargs="+", type=int, default=[32, 256])
    ap.add_argument("--loads", nargs="+", type=float, default=[0.1, 0.2, 0.3, 0.5])
    args = ap.parse_args(argv)
    if not os.access(args.booksim, os.X_OK):
        print(f"ugal.py: {args.booksim} is not an executable BookSim2 binary", file=sys.stderr)
        return 2
    rows = []
    if OUT.exists():
        with open(OUT) as f:
            rows = list(csv.DictReader(f))
    with tempfile.TemporaryDirectory() as tmp:
        for traffic in args.traffic:
            for buffers in args.buffers:
                for load in args.loads:
                    row = run(args.booksim, traffic, buffers, load, Path(tmp))
                    print(row, flush=True)
                    key = (traffic, str(buffers), str(load))
                    rows = [r for r in rows
                            if (r["traffic"], str(r["vc_buf_size"]), str(r["offered"])) != key]
                    rows.append(row)
                    rows.sort(key=lambda r: (r["traffic"], int(r["vc_buf_size"]),
                                             float(r["offered"])))
                    with open(OUT, "w", newline="") as f:
                        w = csv.DictWriter(f, fieldnames=FIELDS)
                        w.writeheader()
                        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
