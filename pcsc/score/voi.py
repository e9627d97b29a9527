"""The cost-aware value-of-information selector, reported beside the binding transition.

The binding transition (argmax U_i·D_i) says where uncertainty multiplies the most
value; it ignores what learning costs and whether learning could change the decision.
This selector asks instead: which transition's probability is worth learning exactly
before committing to the route?

For transition i (docs/formulas.md, "Value of information"):

- **What could be learnt.** The true p_i is taken to be one of a few equally likely
  values q_i1 … q_im spread like the transition's `estimates` around the route's own
  p_i: q_ik = p_i + s·(e_k − ē), ē the mean of the m ≥ 2 estimates. With fewer than
  two estimates the spread is the policy's default U: the two values p_i ± U/2. The
  factor s ≤ 1 is the largest that keeps every value in [0, 1] (1 unless a value would
  leave it), so the values always average p_i: learning reveals where p_i lies, it
  does not move the forecast by itself.
- **Expected value of learning p_i exactly.** With R_0(q) the score refolded with p_i
  set to q (every other number as scored, the policy's own fold),
  EVI_i = (1/m)·Σ_k max(0, R_0(q_ik)) − max(0, R_0(p_i)). The max(0, ·) is abandonment:
  when what is learnt makes the route worth less than nothing, the route is dropped
  and is worth 0 instead. Under the paper's fold R_0 is affine in p_i,
  R_0(q) = R_0 + reach_i·R_{i+1}·(q − p_i), so EVI_i is 0 unless the values straddle
  the break-even p_i; it is never negative (the values average p_i and max(0, ·) is
  convex).
- **Net of its cost.** VOI_i = EVI_i − learning_cost_i. A transition without a
  `learning_cost` counts it as 0 (and says so).
- **The selection** is argmax_i VOI_i (ties: the earliest), or none when every
  VOI_i ≤ 0: nothing is worth learning at its price.

EVI is computed exactly in `fractions.Fraction` (every float is a rational) and rounded
to a float once, so a transition whose EVI is 0 in exact arithmetic is never selected
for float noise. Under the paper's fold most transitions take a float shortcut that is
exact too: when R_0 is clearly of one sign at every value, EVI is exactly 0 (see
`_one_side`). Pure Python: this runs on the compile path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import attrs

from pcsc.score.finite import LARGEST, NotFinite

SPREAD_ESTIMATES = "estimates"
SPREAD_DEFAULT = "policy default"
NO_COST_NOTE = "no learning_cost stated: counted as 0"


@attrs.frozen
class LearnRow:
    """One transition's value of learning its p exactly."""

    name: str
    values: tuple[float, ...]  # the equally likely values of the true p
    spread: str  # SPREAD_ESTIMATES | SPREAD_DEFAULT
    scale: float  # s: 1 unless the spread was narrowed to stay in [0, 1]
    evi: float
    learning_cost: float  # 0 when not stated
    cost_stated: bool
    voi: float


@attrs.frozen
class Voi:
    """The value of information of every transition and the selection (None: none
    worth learning)."""

    rows: tuple[LearnRow, ...]
    selected: int | None
    now: float  # max(0, R_0): the route's worth without learning anything


def _float(x: Fraction, what: str) -> float:
    try:
        return float(x)
    except OverflowError:
        raise NotFinite(f"{what} overflows: the result is beyond {LARGEST}") from None


def spread_values(p: float, estimates: Sequence[float], default_u: float) -> tuple[list[Fraction], str, Fraction]:
    """The equally likely values of the true p (exact), the spread's rule, and s."""
    fp = Fraction(p)
    if len(estimates) >= 2:
        es = [Fraction(e) for e in estimates]
        mean = sum(es, Fraction(0)) / len(es)
        devs = [e - mean for e in es]
        rule = SPREAD_ESTIMATES
    else:
        half = Fraction(default_u) / 2
        devs = [-half, half]
        rule = SPREAD_DEFAULT
    s = Fraction(1)
    for d in devs:
        if d > 0:
            s = min(s, (1 - fp) / d)
        elif d < 0:
            s = min(s, fp / -d)
    s = max(s, Fraction(0))
    return [fp + s * d for d in devs], rule, s


def _suffix(ps: Sequence[Fraction], cs: Sequence[Fraction], ds: Sequence[Fraction], value: Fraction,
            abandonment: bool) -> list[Fraction]:
    """R_0 … R_n of R_n = V; R_i = −c_i + p_i·d_i·R_{i+1} (with abandonment: max(0, that))."""
    R = [value] * (len(ps) + 1)
    for i in range(len(ps) - 1, -1, -1):
        r = -cs[i] + ps[i] * ds[i] * R[i + 1]
        R[i] = max(Fraction(0), r) if abandonment else r
    return R


def _refold(i: int, q: Fraction, R: Sequence[Fraction], ps: Sequence[Fraction], cs: Sequence[Fraction],
            ds: Sequence[Fraction], abandonment: bool) -> Fraction:
    """R_0 with p_i = q: the stages after i are unchanged (R_{i+1} as folded), so only
    stage i and the stages before it are folded again."""
    r = R[i + 1]
    for j in range(i, -1, -1):
        r = -cs[j] + (q if j == i else ps[j]) * ds[j] * r
        if abandonment and r < 0:
            r = Fraction(0)
    return r


def _one_side(r0: float, slope: float, p: float, values: Sequence[Fraction]) -> bool:
    """Under the paper's fold (with any discount) R_0(q) = R_0 + slope·(q − p_i) is affine
    in q, so when the values average p_i and R_0 has one sign at all of them,
    mean max(0, R_0(q)) = max(0, R_0(p_i)) and EVI_i is exactly 0. A float check, with a
    margin far above its rounding, saves the exact refold of most transitions; a value
    near break-even takes the exact path."""
    if not (math.isfinite(r0) and math.isfinite(slope)):
        return False
    margin = 1e-9 * (abs(r0) + abs(slope) + 1.0)
    at = [r0 + slope * (float(q) - p) for q in values]
    return all(x > margin for x in at) or all(x < -margin for x in at)


def value_of_information(
    names: Sequence[str],
    ps: Sequence[float],
    cs: Sequence[float],
    ds: Sequence[float],
    value: float,
    abandonment: bool,
    estimates: Sequence[Sequence[float]],
    default_u: float,
    learning_costs: Sequence[float | None],
) -> Voi:
    """EVI_i, VOI_i and the selection for a route's transitions (chain order): ``ps``,
    ``cs``, ``ds`` their scored p, c and discount factors, ``value`` V."""
    exact: tuple[list[Fraction], ...] = ()

    def folded() -> tuple[list[Fraction], ...]:
        """p, c, d and R_0 … R_n as exact rationals, computed once when first needed."""
        nonlocal exact
        if not exact:
            fps, fcs, fds = [Fraction(p) for p in ps], [Fraction(c) for c in cs], [Fraction(d) for d in ds]
            exact = (fps, fcs, fds, _suffix(fps, fcs, fds, Fraction(value), abandonment))
        return exact

    R_float = [value] * (len(ps) + 1)  # the float fold, for the one-sided check only
    for i in range(len(ps) - 1, -1, -1):
        r = -cs[i] + ps[i] * ds[i] * R_float[i + 1]
        R_float[i] = max(0.0, r) if abandonment else r
    rows: list[LearnRow] = []
    nets: list[Fraction] = []
    reach = 1.0
    for i, name in enumerate(names):
        values, rule, s = spread_values(ps[i], estimates[i], default_u)
        slope = reach * ds[i] * R_float[i + 1]
        reach *= ps[i] * ds[i]
        if not abandonment and _one_side(R_float[0], slope, ps[i], values):
            evi = Fraction(0)  # affine R_0, values averaging p_i, all on one side of break-even
        else:
            fps, fcs, fds, R = folded()
            total = Fraction(0)
            for q in values:
                total += max(Fraction(0), _refold(i, q, R, fps, fcs, fds, abandonment))
            evi = total / len(values) - max(Fraction(0), R[0])
        rows.append(_row(name, values, rule, s, evi, learning_costs[i]))
        nets.append(evi - Fraction(learning_costs[i] or 0.0))
    return Voi(tuple(rows), _select(nets), max(0.0, R_float[0]))


def _row(name: str, values: Sequence[Fraction], rule: str, s: Fraction, evi: Fraction,
         learning_cost: float | None) -> LearnRow:
    lc = Fraction(learning_cost or 0.0)
    return LearnRow(name, tuple(float(q) for q in values), rule, float(s),
                    _float(evi, f"the value of learning p of `{name}`"), float(lc), learning_cost is not None,
                    _float(evi - lc, f"the net value of learning p of `{name}`"))


def _select(nets: Sequence[Fraction]) -> int | None:
    selected: int | None = None
    for i, net in enumerate(nets):
        if net > 0 and (selected is None or net > nets[selected]):
            selected = i
    return selected


def value_of_information_refolded(
    names: Sequence[str],
    ps: Sequence[float],
    estimates: Sequence[Sequence[float]],
    default_u: float,
    learning_costs: Sequence[float | None],
    refold: Callable[[int | None, Fraction], Fraction],
) -> Voi:
    """The same selector for any fold given as ``refold(i, q)``: the exact score with
    p_i set to q (``i`` None: as scored). Graph routes use it with the series-parallel
    fold; every value is refolded exactly (no shortcut)."""
    now = refold(None, Fraction(0))
    rows: list[LearnRow] = []
    nets: list[Fraction] = []
    for i, name in enumerate(names):
        values, rule, s = spread_values(ps[i], estimates[i], default_u)
        total = sum((max(Fraction(0), refold(i, q)) for q in values), Fraction(0))
        evi = total / len(values) - max(Fraction(0), now)
        rows.append(_row(name, values, rule, s, evi, learning_costs[i]))
        nets.append(evi - Fraction(learning_costs[i] or 0.0))
    return Voi(tuple(rows), _select(nets), max(0.0, float(now)))
