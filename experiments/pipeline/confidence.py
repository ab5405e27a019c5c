"""Means and Student-t confidence intervals over seeds (``icsim sweep --seeds N``).

A sweep run with N seeds gives N independent replications of every load; the per-load summary
reports their mean and the half-width of the two-sided 95 % confidence interval of the mean,
``t(0.975, N-1) * s / sqrt(N)`` with ``s`` the sample standard deviation and the t quantile
SciPy's (``scipy.stats.t.ppf``).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

CONFIDENCE = 0.95


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student-t critical value: ``P(|T| < t) = confidence``.

    Examples
    --------
    >>> round(t_quantile(1), 4), round(t_quantile(2), 4), round(t_quantile(9), 4)
    (12.7062, 4.3027, 2.2622)
    """
    from scipy.stats import t                  # loaded on first use: sweeps with one seed
                                               # and plain runs never need it
    if df < 1:
        raise ValueError("a confidence interval needs at least two samples (df >= 1)")
    return float(t.ppf((1 + confidence) / 2, df))


def mean_ci(values: Iterable[float], confidence: float = CONFIDENCE) -> tuple[float, float, int]:
    """(mean, confidence-interval half-width, n) of the finite values; the half-width is NaN
    for fewer than two values, the mean NaN for none.

    >>> mean_ci([10.0, 12.0, 14.0])[0], round(mean_ci([10.0, 12.0, 14.0])[1], 3)
    (12.0, 4.968)
    """
    x = np.array([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(x[0]), math.nan, 1
    half = t_quantile(n - 1, confidence) * float(np.std(x, ddof=1)) / math.sqrt(n)
    return float(np.mean(x)), half, n
