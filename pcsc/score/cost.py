"""Cost: c = max(budget, floor_class, floor_delta), and materiality of deltas."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import attrs

from pcsc.base.humanize import significant
from pcsc.diagnostics.messages import E311_DELTA_OVERFLOWS, phrase
from pcsc.lang.ir import FieldDecl, Route, Transition
from pcsc.policy.model import Policy
from pcsc.score.exact import dyadic
from pcsc.score.finite import NotFinite, checked


@attrs.frozen
class Delta:
    field: str
    source: float | bool
    target: float | bool
    material: bool

    @property
    def magnitude(self) -> float:
        if isinstance(self.source, bool) or isinstance(self.target, bool):
            return 0.0 if self.source == self.target else 1.0
        return abs(self.target - self.source)


def written(x: float) -> Fraction:
    """The decimal an author wrote, exactly. Lowering rounds each literal to the
    nearest float once, and `repr` gives back the shortest decimal that rounds to it."""
    return Fraction(repr(float(x)))


def is_material(decl: FieldDecl, source: float | bool, target: float | bool) -> bool:
    """|Δ| reaches the threshold (absolute, or relative to |source| with `%`); from 0
    any change is material; any change of a bool is material; no change never is.

    Decided in the decimals as written: with `material 7%`, 100 -> 107 reaches the
    threshold, though in floats 0.07 × 100 is 7.000000000000001. Floats decide when
    |Δ| is clearly away from the threshold (their error is below 1e-15 of the
    magnitudes involved), exact decimals within 1e-9 of it."""
    if source == target:
        return False
    if decl.type == "bool" or isinstance(source, bool) or isinstance(target, bool):
        return True
    if decl.material is None:
        return True
    s, t, amount = float(source), float(target), decl.material.amount
    if decl.material.relative and s == 0:
        return True
    bound = amount * abs(s) if decl.material.relative else amount
    delta = abs(t - s)
    if abs(delta - bound) > 1e-9 * (abs(s) + abs(t) + abs(bound)):
        return delta > bound
    exact = abs(written(t) - written(s))
    return exact >= written(amount) * (abs(written(s)) if decl.material.relative else 1)


def deltas(route: Route, t: Transition) -> tuple[Delta, ...]:
    source, target = route.state(t.source), route.arrival(t)
    return tuple(
        Delta(f.name, source.get(f.name), target.get(f.name), is_material(f, source.get(f.name), target.get(f.name)))
        for f in route.fields
    )


def piecewise_floor(points: Sequence[tuple[float, float]], x: float) -> float:
    """Piecewise-linear through (0, 0) and the breakpoints, extended past the last one
    along the last segment.

    Interpolated exactly and rounded once (see `pcsc.score.exact`): at a breakpoint the
    price is exactly that breakpoint's floor, and for a valid table (breakpoints
    increasing, floors non-decreasing) it never falls as |Δ| grows. Float
    interpolation can miss a breakpoint by an ulp and so dip just past it. A table's
    breakpoints, as exact dyadic integers, are laid out once per process (`_segments`)."""
    xs, dx, dy = _segments(points)
    i = next((i for i in range(1, len(xs)) if x <= xs[i]), len(xs) - 1)
    n, p = dyadic(x)
    (x0, kx0), (x1, kx1), (y0, ky0), (y1, ky1) = dx[i - 1], dx[i], dy[i - 1], dy[i]
    k = max(p, kx0, kx1, ky0, ky1)
    at, x0, x1, y0, y1 = n << (k - p), x0 << (k - kx0), x1 << (k - kx1), y0 << (k - ky0), y1 << (k - ky1)
    # y0 + (y1 − y0)·(x − x0)/(x1 − x0), every term scaled by 2**k
    return (y0 * (x1 - x0) + (y1 - y0) * (at - x0)) / ((x1 - x0) << k)


_Segments = tuple[tuple[float, ...], tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
# by the identity of a table's breakpoints (a loaded policy never changes): the
# breakpoints as given, with (0, 0) in front, and each one's (n, k) with v == n / 2**k
_SEGMENTS: dict[int, tuple[Sequence[tuple[float, float]], tuple[tuple[float, float], ...], _Segments]] = {}


def _segments(points: Sequence[tuple[float, float]]) -> _Segments:
    entry = _SEGMENTS.get(id(points))
    if entry is not None and entry[0] is points and len(entry[1]) == len(points):
        return entry[2]
    snapshot = tuple((float(a), float(b)) for a, b in points)
    xs = (0.0, *(a for a, _ in snapshot))
    ys = (0.0, *(b for _, b in snapshot))
    segments = (xs, tuple(dyadic(v) for v in xs), tuple(dyadic(v) for v in ys))
    if len(_SEGMENTS) >= 512:
        _SEGMENTS.clear()
    _SEGMENTS[id(points)] = (points, snapshot, segments)  # the entry keeps ``points`` alive: its id stays its own
    return segments


@attrs.frozen
class Cost:
    budget: float
    floor_class: float
    floor_delta: float
    floor_terms: tuple[tuple[str, float, float], ...]  # (field, |Δ|, price)
    c: float
    bound_by: str  # budget | floor_class | floor_delta


def cost(t: Transition, ds: tuple[Delta, ...], policy: Policy) -> Cost:
    budget = 0.0
    for item in t.cost:
        line = checked(item.count * item.unit_cost, f"cost `{item.name}` of `{t.name}` (count × amount)",
                       item.count, item.unit_cost)
        budget = checked(budget + line, f"the budget of `{t.name}`", budget, line)
    rate = policy.units.rate("usd")
    if rate is not None and rate != 1.0:  # the authored usd in the fold's unit
        budget = checked(budget * rate, f"the budget of `{t.name}` in {policy.units.fold}", budget, rate)
    floor_class = policy.priors[t.ref_class].floor_usd
    terms = []
    floor_delta = 0.0
    for d in ds:
        table = policy.floors.table(t.ref_class, d.field)
        if d.material and table is not None:
            what = f"the floor for |Δ{d.field}| in `{t.name}`"
            magnitude = checked(d.magnitude, what, d.source, d.target)
            try:
                price = piecewise_floor(table.points, magnitude)
            except OverflowError:
                raise NotFinite(phrase(E311_DELTA_OVERFLOWS, what=what, magnitude=significant(magnitude))) from None
            price = checked(price, what, magnitude)
            terms.append((d.field, magnitude, price))
            floor_delta = checked(floor_delta + price, f"the delta floor of `{t.name}`", floor_delta, price)
    c = max(budget, floor_class, floor_delta)
    # Ties go to the authored budget first: it already pays what the floor asks.
    bound_by = "budget" if c == budget else "floor_class" if c == floor_class else "floor_delta"
    return Cost(budget, floor_class, floor_delta, tuple(terms), c, bound_by)
