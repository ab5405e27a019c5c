"""The figures of docs/figures/, made with the Python API (``python docs/figures/make_figures.py``
from the repository root; about a minute with the compiled engine).

* ``channels_8x8x8_transpose3d_dor.png``: the channel heatmap of DOR under 3D transposition on
  the 8x8x8 torus at γ = 0.2 (Table 1 parameters, clean profile): every channel on the torus
  coordinates, one panel per dimension and direction.
* ``latency_distribution_8x8x8_transpose3d.png``: the latency histograms and CDFs of DOR, ABR
  and OFR on the same run.
* ``sweep_seeds_latency.png``: a three-seed sweep of DOR and ABR on 8x8 under transposition,
  per-load means with 95 % confidence intervals.
"""

from pathlib import Path

import icsim

HERE = Path(__file__).resolve().parent
BASE = {"traffic.pattern": "transpose3d", "traffic.load": 0.2, "run.warmup_us": 50,
        "run.measure_us": 200, "run.drain_us": 500}


def main() -> None:
    runs = {alg: icsim.run("ofr/clean/k8", {**BASE, "routing.algorithm": alg})
            for alg in ("dor", "abr", "ofr")}
    for alg, r in runs.items():
        print(f"{alg}: latency {r['latency_ns']:.0f} ns, p99 {r['latency_p99_ns']:.0f} ns, "
              f"max channel utilisation {r['channel_utilisation_max']:.3f}, "
              f"{r['saturation_reason'] or 'sustained'}")
    icsim.channel_heatmap_figure(
        runs["dor"], title="8x8x8 torus, 3D transposition, DOR, γ = 0.2: channel utilisation"
    ).savefig(HERE / "channels_8x8x8_transpose3d_dor.png", dpi=100)
    icsim.latency_distribution_figure(
        runs, title="8x8x8 torus, 3D transposition, γ = 0.2: packet latency"
    ).savefig(HERE / "latency_distribution_8x8x8_transpose3d.png", dpi=100)
    df = icsim.sweep("quickstart", "0.1:0.6:0.1", vary={"routing.algorithm": ["dor", "abr"]},
                     seeds=3, overrides={"topology.dims": [8, 8], "traffic.pattern": "transpose",
                                         "run.measure_us": 100})
    icsim.latency_figure(df).savefig(HERE / "sweep_seeds_latency.png", dpi=100)
    print("gamma* per curve and seed:", df.attrs["gamma_star"])


if __name__ == "__main__":
    main()
