"""``engine_check``: committed runs re-run on an engine give the recorded numbers back."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from icsim.experiments.cli import main as icsim
from icsim.experiments.papers.ofr.engine_check import main

QUICKSTART = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"


def test_runs_of_a_sweep_re_run_on_both_engines_agree_with_their_rows(tmp_path, capsys):
    out = tmp_path / "s"
    assert icsim(["sweep", str(QUICKSTART), "--out", str(out), "--workers", "1",
                  "--loads", "0.2,0.6", "--engine", "simpy", "--no-plots",
                  "--set", "topology.dims=[4,4]", "--set", "traffic.message_packets=4",
                  "--set", "run.warmup_us=5", "--set", "run.measure_us=20",
                  "--set", "run.drain_us=40"]) == 0
    for engine in ("simpy", "compiled"):
        check = tmp_path / f"{engine}.csv"
        assert main([str(out), "--engine", engine, "--out", str(check)]) == 0
        res = pd.read_csv(check)
        assert len(res) == 2 and set(res.engine) == {engine}
        assert set(res.agreement) == {"same"}, res.agreement.tolist()
        assert (res["packet_hops"] == res["recorded.packet_hops"]).all()
        assert (res["packet_hops"] > 0).all()
    assert "2 runs re-run on the compiled engine" in capsys.readouterr().out


def test_a_missing_file_or_one_without_finished_runs_is_one_line_and_status_2(tmp_path, capsys):
    assert main([str(tmp_path / "nothing.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing.csv" in err and "cannot read" in err
    failed = tmp_path / "results.csv"
    failed.write_text("curve,offered_load,status,latency_ns,accepted_load\nabr,0.1,error,,\n")
    assert main([str(failed)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no finished run" in err
