"""Wilson score intervals: the one place PCSC turns a count k of n into a rate.

Every rate PCSC prints is shown with its Wilson 95% interval, and every rate in JSON
is the object ``{"k": 21, "n": 26, "wilson95": [0.621…, 0.914…]}`` (fractions,
unrounded), so that tools read any rate the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

#: The two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054


def wilson95(k: int, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of k successes in n trials, as fractions in
    [0, 1]. With n = 0 nothing is known: (0, 1)."""
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"a rate needs 0 <= k <= n, got {k}/{n}")
    if n == 0:
        return (0.0, 1.0)
    z2 = Z95 * Z95
    p = k / n
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = Z95 / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (max(0.0, centre - half) if k else 0.0, min(1.0, centre + half) if k != n else 1.0)


def rate(k: int, n: int) -> dict[str, Any]:
    """A rate as JSON: ``{"k", "n", "wilson95": [low, high]}``."""
    low, high = wilson95(k, n)
    return {"k": k, "n": n, "wilson95": [low, high]}


def rate_text(k: int, n: int) -> str:
    """``21/26 [62.1, 91.5]``: the count and its interval in percent, one decimal."""
    low, high = wilson95(k, n)
    return f"{k}/{n} [{100 * low:.1f}, {100 * high:.1f}]"


def median(xs: Sequence[float]) -> float:
    """The median of ``xs`` (not empty), as `statistics.median` gives it, except that
    the mean of the two middle values never overflows (two scores near −1.8e308)."""
    ordered = sorted(xs)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    a, b = ordered[mid - 1], ordered[mid]
    mean = (a + b) / 2
    return float(mean if math.isfinite(mean) else a / 2 + b / 2)
