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
for float noise. Most transitions take a float check that is exact too: when R_0 is
affine in p_i over the values and max(0, R_0) is too (R_0 clearly of one sign at both
ends; under the option to stop, every stage's max(0, ·) clearly on one side), the
values, which average p_i, give EVI exactly 0 (see `affine_sign`, `stages_flat` and
`graph_flat`). The spread itself is computed on integers (`spread`). Pure Python:
this runs on the compile path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import attrs

from pcsc.diagnostics.messages import E311_RESULT_OVERFLOWS, phrase
from pcsc.score.finite import NotFinite
from pcsc.score.fold import chain_fold
from pcsc.score.graph import GraphFold

SPREAD_ESTIMATES = "estimates"
SPREAD_DEFAULT = "policy default"


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
        raise NotFinite(phrase(E311_RESULT_OVERFLOWS, what=what, operands="")) from None


class Spread:
    """The equally likely values of the true p as integers over one denominator:
    value_k = nums[k] / den exactly, and s = sn / sd. Every input is a float, so a
    dyadic rational: the spread is computed on integers, and each value becomes a
    float by one correctly rounded integer division (what ``float(Fraction)`` gives)
    or a `Fraction` only when the exact refold needs it."""

    __slots__ = ("nums", "den", "sn", "sd", "rule")

    def __init__(self, nums: list[int], den: int, sn: int, sd: int, rule: str) -> None:
        self.nums, self.den, self.sn, self.sd, self.rule = nums, den, sn, sd, rule

    def floats(self) -> list[float]:
        return [n / self.den for n in self.nums]

    def exact(self) -> list[Fraction]:
        return [Fraction(n, self.den) for n in self.nums]

    def scale(self) -> Fraction:
        return Fraction(self.sn, self.sd)


def spread(p: float, estimates: Sequence[float], default_u: float) -> Spread:
    """The spread of docs/formulas.md on integers: with every input k/2^J, the mean of
    m estimates and the deviations share the denominator m·2^J."""
    if len(estimates) >= 2:
        ratios = [float(e).as_integer_ratio() for e in estimates]
        rule = SPREAD_ESTIMATES
    else:
        ratios = [float(default_u).as_integer_ratio()]
        rule = SPREAD_DEFAULT
    pn, pd = float(p).as_integer_ratio()
    big = max(pd, *(d for _, d in ratios))  # every denominator is a power of two: the largest is their lcm
    if rule == SPREAD_ESTIMATES:
        m = len(ratios)
        ns = [n * (big // d) for n, d in ratios]
        total = sum(ns)
        devs = [m * n - total for n in ns]  # e_k − ē, over den = m·big
        den = m * big
    else:
        n, d = ratios[0]
        half = n * (big // d)  # U/2 over den = 2·big
        devs = [-half, half]
        den = 2 * big
    P = pn * (den // pd)  # p over den
    sn, sd = 1, 1  # s = min(1, (1 − p)/d over d > 0, p/(−d) over d < 0), then max(s, 0)
    for a in devs:
        if a > 0:
            cn, cd = den - P, a
        elif a < 0:
            cn, cd = P, -a
        else:
            continue
        if cn * sd < sn * cd:
            sn, sd = cn, cd
    if sn < 0:
        sn, sd = 0, 1
    return Spread([P * sd + sn * a for a in devs], den * sd, sn, sd, rule)


def spread_values(p: float, estimates: Sequence[float], default_u: float) -> tuple[list[Fraction], str, Fraction]:
    """The equally likely values of the true p (exact), the spread's rule, and s."""
    sp = spread(p, estimates, default_u)
    return sp.exact(), sp.rule, sp.scale()


def _refold(i: int, q: Fraction, R: Sequence[Fraction], ps: Sequence[Fraction], cs: Sequence[Fraction],
            ds: Sequence[Fraction], abandonment: bool) -> Fraction:
    """R_0 with p_i = q: the stages after i are unchanged (R_{i+1} as folded), so only
    stage i and the stages before it are folded again."""
    return chain_fold([*ps[:i], q], cs[: i + 1], R[i + 1], ds[: i + 1], stop=abandonment)[0]


MARGIN = 1e-9  # a float sign is trusted when it clears MARGIN × the magnitude of what was summed


def magnitudes(cs: Sequence[float], ds: Sequence[float], value: float) -> list[float]:
    """A_0 … A_n with A_n = |V| and A_i = |c_i| + d_i·A_{i+1}: the fold with every p
    (and every value q a p may take) at its largest, 1, and no term cancelling. Any float
    fold of these numbers, with any p_i replaced by a q in [0, 1], computes each R_i
    with an error below a few n·ε·A_i (ε the float rounding unit), so a float whose
    size clears ``MARGIN·A_i`` has the sign of the exact value."""
    A = [abs(value)] * (len(cs) + 1)
    for i in range(len(cs) - 1, -1, -1):
        A[i] = abs(cs[i]) + abs(ds[i]) * A[i + 1]
    return A


def affine_sign(r0: float, slope: float, lo: float, hi: float, p: float, scale: float) -> bool:
    """R_0(q) = r0 + slope·(q − p) for q in [lo, hi] is clearly of one sign at both ends
    (so at every value between them). ``scale`` bounds the magnitude of the terms."""
    if not (math.isfinite(r0) and math.isfinite(slope) and math.isfinite(scale)):
        return False
    margin = MARGIN * (scale + abs(slope) + 1.0)
    a, b = r0 + slope * (lo - p), r0 + slope * (hi - p)
    return (a > margin and b > margin) or (a < -margin and b < -margin)


def stages_flat(pre_lo: float, pre_hi: float, scales: Sequence[float],
                stage: Callable[[int, float], float]) -> bool:
    """Under the option to stop: is R_0 affine in q over [lo, hi]? ``pre_lo``/``pre_hi``
    are the value of the stage holding p_i before max(0, ·) at both ends (affine in q);
    ``stage(j, r)`` is the earlier stage j's −C_j + Q_j·r, j counting down to 0, with
    ``scales[j]`` its magnitude. R_0 is a chain of max(0, affine) of q, so it is affine
    on [lo, hi] when no max(0, ·) changes side inside it: every stage clearly of one sign
    at both ends; one clearly negative at both makes R_0 constant (0 from there). Then
    the values, which average p_i, give EVI_i = 0 exactly."""
    a, b = pre_lo, pre_hi
    for j in range(len(scales) - 1, -1, -1):
        margin = MARGIN * (scales[j] + 1.0)
        if not (math.isfinite(a) and math.isfinite(b)):
            return False
        if a < -margin and b < -margin:
            return True
        if not (a > margin and b > margin):
            return False
        if j:
            a, b = stage(j - 1, a), stage(j - 1, b)
    return True


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
            exact = (fps, fcs, fds, chain_fold(fps, fcs, Fraction(value), fds, stop=abandonment))
        return exact

    R_float = chain_fold(ps, cs, value, ds, stop=abandonment)  # the float fold, for the float checks only
    A = magnitudes(cs, ds, value)

    def stage(j: int, r: float) -> float:
        return -cs[j] + ps[j] * ds[j] * r

    rows: list[LearnRow] = []
    nets: list[Fraction | float] = []
    reach = 1.0
    for i, name in enumerate(names):
        sp = spread(ps[i], estimates[i], default_u)
        floats = sp.floats()
        lo, hi = min(floats), max(floats)
        slope = reach * ds[i] * R_float[i + 1]
        reach *= ps[i] * ds[i]
        if abandonment:
            nxt = R_float[i + 1]
            flat = stages_flat(-cs[i] + lo * ds[i] * nxt, -cs[i] + hi * ds[i] * nxt, A[: i + 1], stage)
        else:
            flat = affine_sign(R_float[0], slope, lo, hi, ps[i], A[0])
        if flat:  # R_0 affine over the values, which average p_i: EVI_i = 0 exactly
            rows.append(_zero_row(name, floats, sp, learning_costs[i]))
            nets.append(0.0 - (learning_costs[i] or 0.0))
            continue
        fps, fcs, fds, R = folded()
        values = sp.exact()
        total = Fraction(0)
        for q in values:
            total += max(Fraction(0), _refold(i, q, R, fps, fcs, fds, abandonment))
        evi = total / len(values) - max(Fraction(0), R[0])
        rows.append(_row(name, floats, sp, evi, learning_costs[i]))
        nets.append(evi - Fraction(learning_costs[i] or 0.0))
    return Voi(tuple(rows), _select(nets), max(0.0, R_float[0]))


def _row(name: str, floats: Sequence[float], sp: Spread, evi: Fraction, learning_cost: float | None) -> LearnRow:
    lc = Fraction(learning_cost or 0.0)
    return LearnRow(name, tuple(floats), sp.rule, sp.sn / sp.sd,
                    _float(evi, f"the value of learning p of `{name}`"), float(lc), learning_cost is not None,
                    _float(evi - lc, f"the net value of learning p of `{name}`"))


def _zero_row(name: str, floats: Sequence[float], sp: Spread, learning_cost: float | None) -> LearnRow:
    """`_row` of EVI = 0 in floats: 0 − lc is exact in floats (and 0.0, not −0.0, for lc = 0)."""
    lc = float(learning_cost or 0.0)
    return LearnRow(name, tuple(floats), sp.rule, sp.sn / sp.sd, 0.0, lc, learning_cost is not None, 0.0 - lc)


def _select(nets: Sequence[Fraction | float]) -> int | None:
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
    flat: Callable[[int, float, float], bool] | None = None,
) -> Voi:
    """The same selector for any fold given as ``refold(i, q)``: the exact score with
    p_i set to q (``i`` None: as scored). Graph routes use it with the series-parallel
    fold. ``flat(i, lo, hi)``, when given, is a float check that the exact score is
    affine in p_i over [lo, hi] with max(0, ·) of it affine too (see `affine_sign` and
    `stages_flat`): then EVI_i is exactly 0 and the values are not refolded."""
    now = refold(None, Fraction(0))
    rows: list[LearnRow] = []
    nets: list[Fraction | float] = []
    for i, name in enumerate(names):
        sp = spread(ps[i], estimates[i], default_u)
        floats = sp.floats()
        if flat is not None and flat(i, min(floats), max(floats)):
            rows.append(_zero_row(name, floats, sp, learning_costs[i]))
            nets.append(0.0 - (learning_costs[i] or 0.0))
            continue
        total = sum((max(Fraction(0), refold(i, q)) for q in sp.exact()), Fraction(0))
        evi = total / len(sp.nums) - max(Fraction(0), now)
        rows.append(_row(name, floats, sp, evi, learning_costs[i]))
        nets.append(evi - Fraction(learning_costs[i] or 0.0))
    return Voi(tuple(rows), _select(nets), max(0.0, float(now)))


def graph_flat(
    g: GraphFold[float], names: Sequence[str], ps: Sequence[float], cs: Sequence[float], ds: Sequence[float],
    value: float,
) -> Callable[[int, float, float], bool]:
    """The ``flat`` check of `value_of_information_refolded` for a graph route's float
    fold ``g`` (transition i is ``names[i]``, with p, c, d ``ps[i]``, ``cs[i]``,
    ``ds[i]``). The score is affine in p_e with slope reach_e·d_e·R_next_e
    (docs/graphs.md); under the option to stop the spine folds as a chain of blocks,
    the block holding e affine in p_e with slope local_e·d_e·R_next_e (local_e: the
    weight from the block's entry). The magnitudes are the same fold with every p at 1
    and no term cancelling (costs negated, |d|, |V|, no stop), computed once."""
    edge = {n: (1.0, -abs(c), abs(d)) for n, c, d in zip(names, cs, ds, strict=True)}
    try:
        mag = GraphFold(g.shape, edge, abs(value), False, g.entry, g.exit_of).spine_R
    except NotFinite:  # magnitudes beyond the floats: every value takes the exact refold
        return lambda i, lo, hi: False
    blocks = [g.blocks[id(item)] for item in g.spine_items]

    def stage(j: int, r: float) -> float:
        b = blocks[j]
        return -b.C + b.P * b.D * r

    def flat(i: int, lo: float, hi: float) -> bool:
        name, p = names[i], ps[i]
        if not g.abandonment:
            return affine_sign(g.score, g.reach[name] * ds[i] * g.next[name], lo, hi, p, mag[0])
        j = g.item_of[name]
        slope = g.local[name] * ds[i] * g.next[name]
        if not math.isfinite(slope):
            return False
        pre = stage(j, g.spine_R[j + 1])
        return stages_flat(pre + slope * (lo - p), pre + slope * (hi - p), [*mag[:j], mag[j] + abs(slope)], stage)

    return flat
