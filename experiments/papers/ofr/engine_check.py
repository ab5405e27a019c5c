"""Re-run committed runs on another engine and compare them field by field with what was
recorded (``python -m icsim.experiments.papers.ofr.engine_check RESULTS.csv``).

Each row's resolved config (its ``config.*`` columns) is run again with ``--engine`` (default
compiled) and its table-making fields are compared: mean latency, completion time, accepted
load, packet-hops, delivered packets, derouted shares and the verdict (with ``--all-fields``
also the percentiles, the network latency, hops, dilation, the packets made and the events).
``--decisive`` re-runs only the rows a table rests on: for every curve its γ = 0.10 run, the
largest sustained and the smallest saturated load; ``--sample N`` the N quickest.  Writes ``engine_check.csv`` (one row per run: recorded and new values)
and prints how many rows agree exactly, agree to the last bits (relative 1e-12: means that the
recording computed in floating point; the engines now sum integers) or differ.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import pandas as pd

from icsim.experiments.pipeline.lines import read_results
from icsim.experiments.pipeline.rows import config_of_row
from icsim.experiments.pipeline.saturation import judge
from icsim.model.input_files import InputFileError
from icsim.simulator.build import from_dict
from icsim.simulator.simulation import run

FIELDS = ("latency_ns", "completion_time_ns", "accepted_load", "packet_hops",
          "packets_delivered", "derouted.total", "derouted.outflank", "derouted.wraparound",
          "derouted.orthant", "saturated")
#: ``--all-fields``: the record's other statistics too (the percentiles, the network latency,
#: the dilation, the packets made, the events), where the row recorded them
MORE_FIELDS = ("latency_p50_ns", "latency_p99_ns", "latency_max_ns", "network_latency_ns",
               "hops", "dilation", "offered_measured_load", "packets_generated", "events",
               "sim_time_ns")


def decisive(df: pd.DataFrame) -> pd.DataFrame:
    """The rows a γ* table rests on: per curve, γ = 0.10, the largest sustained and the
    smallest saturated load."""
    keep = []
    for _, g in df[df.status == "ok"].groupby("curve", sort=False):
        g = g.sort_values("offered_load")
        base = g[g.offered_load.round(2) == 0.10]
        keep += list(base.index)
        baseline = float(base.latency_ns.iloc[0]) if len(base) else None
        mode = str(g["mode"].iloc[0])
        ok = [i for i, r in g.iterrows() if judge(r.to_dict(), mode, baseline).sustained]
        bad = [i for i in g.index if i not in ok]
        keep += ok[-1:] + bad[:1]
    return df.loc[sorted(set(keep))]


def plain(value: object) -> object:
    """A CSV cell as the config reads it: numpy scalars as Python ones, empty cells as None."""
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and math.isnan(value) else value


def compare(old: object, new: object) -> str:
    if isinstance(new, bool) or isinstance(old, bool):
        return "same" if bool(old) == bool(new) else "differs"
    if old is None or (isinstance(old, float) and math.isnan(old)):
        return "same" if new is None else "differs"
    if new is None:
        return "differs"
    if float(old) == float(new):
        return "same"
    return "last bits" if math.isclose(float(old), float(new), rel_tol=1e-12) else "differs"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m icsim.experiments.papers.ofr.engine_check",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("results", help="a results.csv (or its folder)")
    p.add_argument("--engine", default="compiled", choices=("simpy", "compiled"))
    p.add_argument("--decisive", action="store_true", help="only the rows the table rests on")
    p.add_argument("--sample", type=int, default=0, metavar="N",
                   help="only the N rows that took least time to record (a quick check of a "
                        "reproduction's committed runs)")
    p.add_argument("--all-fields", action="store_true",
                   help="compare every statistic the rows recorded, not only the tables'")
    p.add_argument("--out", default=None, help="engine_check.csv here (default: beside it)")
    args = p.parse_args(argv)
    try:
        df = read_results(args.results)
    except InputFileError as exc:
        print(f"engine_check: cannot read the results: {exc}", file=sys.stderr)
        return 2
    if "status" not in df.columns or not (df.status == "ok").any():
        print(f"engine_check: {args.results}: no finished run (status ok) to re-run",
              file=sys.stderr)
        return 2
    rows = decisive(df) if args.decisive else df[df.status == "ok"]
    if args.sample:
        rows = rows.sort_values("wall_s" if "wall_s" in rows else "elapsed_s").head(args.sample)
    fields = FIELDS + (tuple(f for f in MORE_FIELDS if f in df.columns)
                       if args.all_fields else ())
    out = Path(args.out) if args.out else Path(args.results).parent / "engine_check.csv"
    if Path(args.results).is_dir():
        out = Path(args.out) if args.out else Path(args.results) / "engine_check.csv"
    records, t0 = [], time.perf_counter()
    for n, (_, row) in enumerate(rows.iterrows(), 1):
        cells = {k: plain(v) for k, v in row.to_dict().items()}
        r = run(from_dict(config_of_row(cells)), engine=args.engine)
        # a kind the run's algorithm does not declare is 0: older rows recorded every kind,
        # newer ones only the algorithm's own (an empty cell)
        flat = {**r, **{f: 0.0 for f in fields if f.startswith("derouted.")},
                **{f"derouted.{k}": v for k, v in r["derouted"].items()}}
        rec = {"curve": row.curve, "offered_load": row.offered_load, "engine": r["engine"],
               "wall_s": r["wall_s"], "recorded_wall_s": row.get("wall_s")}
        verdicts = []
        for f in fields:
            old = plain(row.get(f))
            if old is None and f.startswith("derouted."):
                old = 0.0
            rec[f"recorded.{f}"], rec[f] = old, flat.get(f)
            verdicts.append(compare(old, flat.get(f)))
        rec["agreement"] = ("differs" if "differs" in verdicts else
                            "last bits" if "last bits" in verdicts else "same")
        records.append(rec)
        pd.DataFrame(records).to_csv(out, index=False)      # kept as it grows: nothing is lost
        print(f"[{n}/{len(rows)}] {row.curve} γ={row.offered_load:.2f}: {rec['agreement']} "
              f"({r['wall_s']:.1f} s, recorded {row.get('wall_s', float('nan')):.1f} s)",
              file=sys.stderr, flush=True)
    res = pd.DataFrame(records)
    counts = res.agreement.value_counts().to_dict()
    print(f"{len(res)} runs re-run on the {args.engine} engine in "
          f"{time.perf_counter() - t0:.0f} s: {counts}; wrote {out}")
    return 0 if "differs" not in counts else 1


if __name__ == "__main__":
    sys.exit(main())
