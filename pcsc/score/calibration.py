"""The policy's calibration map, applied to a transition's p after p = clip(p_prior·W, 0, 1).

- **isotonic**: breakpoints (x_i, y_i), x strictly increasing, y non-decreasing; the map is
  linear between breakpoints and flat outside them (y_0 below x_0, y_last above x_last),
  clipped to [0, 1]. It never falls: a higher p before calibration is never a lower p after.
- **platt**: p' = 1 / (1 + exp(−(a + b·logit(p)))), logit of p clipped to [1e-9, 1 − 1e-9],
  b ≥ 0.

Pure Python, no numpy: scoring stays light.
"""

from __future__ import annotations

import math
from bisect import bisect_right

from pcsc.base.humanize import plural
from pcsc.policy.model import Calibration, IsotonicMap, PlattMap

LOGIT_EPS = 1e-9  # logit(p) is taken of p clipped to [LOGIT_EPS, 1 − LOGIT_EPS]


def _unit(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def isotonic(p: float, m: IsotonicMap) -> float:
    """Linear interpolation between the breakpoints, flat outside them, in [0, 1]."""
    xs, ys = m.x, m.y
    if p <= xs[0]:
        return _unit(ys[0])
    if p >= xs[-1]:
        return _unit(ys[-1])
    i = bisect_right(xs, p) - 1  # xs[i] <= p < xs[i + 1]
    x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
    return _unit(y0 + (y1 - y0) * (p - x0) / (x1 - x0))


def logit(p: float) -> float:
    q = min(max(p, LOGIT_EPS), 1.0 - LOGIT_EPS)
    return math.log(q / (1.0 - q))


def platt(p: float, m: PlattMap) -> float:
    z = m.a + m.b * logit(p)
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def calibrate(p: float, cal: Calibration) -> float:
    """The calibrated p. The policy loader guarantees the method's table is present."""
    if cal.method == "isotonic":
        assert cal.isotonic is not None
        return isotonic(p, cal.isotonic)
    assert cal.platt is not None
    return platt(p, cal.platt)


def rule(cal: Calibration) -> str:
    """The map's rule, as `pcsc explain` shows it."""
    if cal.method == "isotonic":
        assert cal.isotonic is not None
        n = len(cal.isotonic.x)
        return (f"p = isotonic(p_raw): linear between the policy's {plural(n, 'breakpoint')} "
                "(x, y), flat outside them, clipped to [0, 1]")
    return "p = 1 / (1 + exp(−(a + b·logit(p_raw)))), logit of p_raw clipped to [1e-9, 1 − 1e-9]"


def rule_inputs(p_raw: float, cal: Calibration) -> tuple[tuple[str, object], ...]:
    """What `explain` lists beside the rule: p_raw and the breakpoints around it, or a and b."""
    if cal.method == "platt":
        assert cal.platt is not None
        return (("p_raw", p_raw), ("a", cal.platt.a), ("b", cal.platt.b))
    assert cal.isotonic is not None
    xs, ys = cal.isotonic.x, cal.isotonic.y
    i = max(0, min(bisect_right(xs, p_raw) - 1, len(xs) - 1))
    around = [(xs[j], ys[j]) for j in (i, i + 1) if j < len(xs)]
    return (("p_raw", p_raw), ("breakpoints", [f"({x:.6g}, {y:.6g})" for x, y in around]))
