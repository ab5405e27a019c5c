"""The three papers' published numbers, shipped with the package (``experiments/paper_data``,
copied from the project's shared reference directory; see its README for sources).

>>> paper_table("ofr_table2_saturation").query("pattern == 'uniform' and k == 8")
...                                                      # doctest: +NORMALIZE_WHITESPACE
   pattern algorithm  k  gamma_star
18  uniform       abr  8        0.55
20  uniform       por  8        0.70
22  uniform       ofr  8        0.70
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parent / "paper_data"


def paper_table(name: str) -> pd.DataFrame:
    """A published table by file stem, e.g. ``"ofr_table2_saturation"`` (comment lines
    skipped)."""
    path = DATA / f"{name}.csv"
    if not path.exists():
        valid = sorted(p.stem for p in DATA.glob("*.csv"))
        raise KeyError(f"no paper table {name!r} (valid: {', '.join(valid)})")
    return pd.read_csv(path, comment="#")
