"""Means and Student-t confidence intervals over seeds (``icsim sweep --seeds N``).

A sweep run with N seeds gives N independent replications of every load; the per-load summary
reports their mean and the half-width of the two-sided 95 % confidence interval of the mean,
``t(0.975, N-1) * s / sqrt(N)`` with ``s`` the sample standard deviation.  The t quantile is
computed exactly for integer degrees of freedom (Abramowitz & Stegun 26.7.3-4, solved by
bisection), so no statistics package is needed.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

CONFIDENCE = 0.95


def _student_t_central(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with ``df`` degrees of freedom (A&S 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:                                  # odd: (2/pi)(theta + sin cos (1 + 2/3 c^2 ...))
        total, term = 0.0, math.cos(theta)
        for k in range(1, df - 1, 2):           # k = 1, 3, ..., df - 2
            total += term
            term *= c2 * (k + 1) / (k + 2)
        return (2 / math.pi) * (theta + math.sin(theta) * total)
    total, term = 0.0, 1.0                      # even: sin (1 + 1/2 c^2 + 1.3/2.4 c^4 ...)
    for k in range(0, df - 1, 2):               # k = 0, 2, ..., df - 2
        total += term
        term *= c2 * (k + 1) / (k + 2)
    return math.sin(theta) * total


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student-t critical value: ``P(|T| < t) = confidence``.

    Examples
    --------
    >>> round(t_quantile(1), 4), round(t_quantile(2), 4), round(t_quantile(9), 4)
    (12.7062, 4.3027, 2.2622)
    """
    if df < 1:
        raise ValueError("a confidence interval needs at least two samples (df >= 1)")
    lo, hi = 0.0, 1.0
    while _student_t_central(hi, int(df)) < confidence:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if _student_t_central(mid, int(df)) < confidence:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


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
