"""`pcsc sensitivity`: the margins of a route's decisions.

For every number a route's decisions depend on (each prior and class floor of the
classes the route uses, each delta-indexed floor table that prices one of its material
changes, each admitted evidence item's weight, the policy's reweighting gains, each
cost item, the vision's values, the criteria weights and the bucket bounds) this finds
the value at which each decision flips:

- ``sign``: the score R_0 is positive, or not (zero or below);
- ``verdict``: released / suspend-and-ask / docked / ungated, or ineligible (a gate
  that blocks failed);
- ``bucket``: neg / mix / pos;
- ``binding``: the binding transition;
- ``rank``: the route's place among its rivals, the other routes of its file and any
  the caller adds (`pcsc rank` order).

Every value is tried by recompiling the route through the pipeline with one what-if
override (`pcsc.policy.overrides`, the mechanism of `compile --set`): the key of each
parameter is a `--set` key. Nothing is written. Along each direction from the current
value the search scans outward geometrically to the end of the parameter's legal
range (or, for a range without an end, to 2^30 times the current value), in steps
that double (or quadruple, far from the current value), and stops at the first scan
point where every decision has differed. Where the decision is an affine
equation in the parameter (the score is affine in V, in each c_i and in each p_i; T
is a ratio of affine functions of a criterion weight) the flip is solved exactly in
rationals (`closed form`); otherwise the bracket is bisected to a relative width of
1e-9 (`bisection`). Either way the reported value is checked by recompiling: at it the
decision has flipped, and at ``inside`` (within the tolerance, towards the current
value) it has not. A decision that does not change at any scan point has ``no flip in
range [lo, hi]``; a map that is not monotone may flip and flip back between two scan
points, which the scan does not see.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import attrs

from pcsc.analysis.rank import RankKeyConflict, choose_key, rank
from pcsc.base.humanize import number, percent
from pcsc.base.tables import table
from pcsc.compiler.session import Compiled, Session
from pcsc.lang.ir import Route
from pcsc.policy.load import PolicyError, PolicyStore
from pcsc.policy.model import LoadedPolicy
from pcsc.policy.overrides import Override, OverrideError, format_path, override_policy, override_route
from pcsc.score.evidence import admitted
from pcsc.score.units import usd_rate

DECISIONS = ("sign", "verdict", "bucket", "binding", "rank")
TOLERANCE = 1e-9  # the relative width of a bisected bracket, and how far `inside` is from the flip
# scan points toward a finite end: the current value plus 2^-k of the way there
SCAN_BOUNDED = (16, 14, 12, 10, 8, 6, 4, 3, 2, 1)
# toward no end: the current value plus 2^k of itself (of 1 when it is 0), up to 2^30
SCAN_UP = (*range(-8, 3), *range(4, 31, 2))
CLOSED = "closed form"
BISECTION = "bisection"
NONE = "none"


# ---------------------------------------------------------------------- parameters
@attrs.frozen
class Parameter:
    """One number a decision depends on, addressed by its `--set` key."""

    key: str
    path: tuple[str, ...]
    kind: str  # prior | floor | floor-table | evidence-weight | gain | cost | value | criteria-weight | bucket-bound
    about: str
    value: float
    lo: float
    hi: float | None  # None: no upper end
    target: str  # "policy" | "route"
    points: tuple[tuple[float, float], ...] = ()  # a floor table: the value scales its floors

    def override(self, x: float) -> Override:
        value: Any = [[dx, y * x] for dx, y in self.points] if self.kind == "floor-table" else x
        return Override(f"{self.key}={_literal(value)}", self.path, value, self.target)

    def json(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "about": self.about, "value": self.value,
                "range": [self.lo, self.hi], "applies_to": self.target}


def _literal(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(float(value))


def parameters(c: Compiled) -> list[Parameter]:
    """The parameters of a compiled route, in a fixed order."""
    route, policy = c.route, c.policy.policy
    out: list[Parameter] = []
    classes: dict[str, list[str]] = {}
    for t in route.transitions:
        classes.setdefault(t.ref_class, []).append(t.name)
    for cls, names in classes.items():
        prior = policy.priors[cls]
        where = ", ".join(f"`{n}`" for n in names)
        out.append(_policy(("priors", cls, "p"), "prior", f"the prior p of class {cls} ({where})", prior.p, 0.0, 1.0))
    for cls, names in classes.items():
        prior = policy.priors[cls]
        where = ", ".join(f"`{n}`" for n in names)
        out.append(_policy(("priors", cls, "floor_usd"), "floor", f"the class floor of {cls} ({where})",
                           prior.floor_usd, 0.0, None))
    tables: dict[tuple[str, ...], tuple[str, str]] = {}  # each table once, whichever classes read it
    for tn in c.numbers.transitions:
        for d in tn.deltas:
            if d.material and policy.floors.table(tn.ref_class, d.field) is not None:
                tables.setdefault(policy.floors.key(tn.ref_class, d.field), (tn.ref_class, d.field))
    for key in sorted(tables):
        cls, f = tables[key]
        table = policy.floors.table(cls, f)
        assert table is not None
        whose = f"`{f}`" if key[1] == "delta" else f"`{f}` for class {cls}"
        out.append(attrs.evolve(
            _policy((*key, "points"), "floor-table",
                    f"the delta floors of {whose}, every breakpoint's usd times this factor", 1.0, 0.0, None),
            points=tuple((float(x), float(y)) for x, y in table.points),
        ))
    for e in admitted(route.evidence, route.as_of, policy):
        bears = ", ".join(f"`{n}`" for n in (*e.supports, *e.contradicts))
        path: tuple[str, ...] = ("route", "evidence", e.name, "weight")
        about = f"the weight of evidence `{e.name}` (on {bears})"
        out.append(Parameter(format_path(path), path, "evidence-weight", about, e.weight, 0.0, 1.0, "route"))
    rw = policy.reweighting
    out.append(_policy(("reweighting", "corroborate_gain"), "gain", "the gain gc of supporting evidence",
                       rw.corroborate_gain, 0.0, None))
    out.append(_policy(("reweighting", "contradict_gain"), "gain", "the gain gk of contradicting evidence",
                       rw.contradict_gain, 0.0, None))
    for t in route.transitions:
        for item in t.cost:
            path = ("route", "transitions", t.name, "cost", item.name)
            out.append(Parameter(format_path(path), path, "cost",
                                 f"the unit amount of cost `{item.name}` of `{t.name}` (× {item.count:g})",
                                 item.unit_cost, 0.0, None, "route"))
    v, vp = route.vision, policy.vision
    formula = "tam × capture × defensibility" if vp.is_default else vp.value
    for name, kind in vp.fields.items():  # the fields the policy's formula reads
        out.append(Parameter(f"vision.{name}", ("vision", name), "value", f"the vision's {name} (V = {formula})",
                             v.get(name), 0.0, 1.0 if kind == "ratio" else None, "route"))
    for name, weight, _ in c.numbers.criteria_weights:
        out.append(_policy(("criteria", name), "criteria-weight", f"the weight of criterion `{name}` in T",
                           weight, 0.0, None))
    b = policy.buckets
    if b is not None and c.numbers.criteria_score is not None:
        out.append(_policy(("buckets", "neg_below"), "bucket-bound", "T below this is bucket neg", b.neg_below,
                           0.0, b.pos_from))
        out.append(_policy(("buckets", "pos_from"), "bucket-bound", "T at or above this is bucket pos", b.pos_from,
                           b.neg_below, 100.0))
    return out


def _policy(path: tuple[str, ...], kind: str, about: str, value: float, lo: float, hi: float | None) -> Parameter:
    return Parameter(format_path(path), path, kind, about, float(value), lo, hi, "policy")


# ---------------------------------------------------------------------- decisions
@attrs.frozen
class State:
    """The decisions of the route at one value of one parameter."""

    score: float
    verdict: str
    bucket: str | None
    binding: str
    rank: int | None
    of: int | None
    order: tuple[str, ...]  # the file's routes in rank order
    tiers: tuple[str, ...] = ()  # each one's rank tier (`pcsc.analysis.rank.TIERS`), in that order

    def decision(self, name: str) -> str | None:
        if name == "sign":
            return "positive" if self.score > 0 else "not positive"
        if name == "verdict":
            return self.verdict
        if name == "bucket":
            return self.bucket
        if name == "binding":
            return self.binding
        return None if self.rank is None else f"{self.rank} of {self.of}"


def state_of(c: Compiled, rivals: Sequence[Compiled]) -> State:
    verdict = c.decision.verdict if c.numbers.eligible else f"ineligible ({c.decision.verdict})"
    binding = c.numbers.transitions[c.numbers.binding].name
    place: int | None = None
    of: int | None = None
    order: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    if rivals:
        everyone = [c, *rivals]
        try:
            choice = choose_key(everyone)
        except RankKeyConflict:
            choice = None
        if choice is not None and choice.key is not None:
            ranked = rank(everyone, choice.key)
            order = tuple(r.compiled.route.name for r in ranked)
            tiers = tuple(r.tier for r in ranked)
            place = next(i for i, r in enumerate(ranked, 1) if r.compiled is c)
            of = len(ranked)
    return State(c.numbers.score, verdict, c.numbers.bucket, binding, place, of, order, tiers)


@attrs.define
class _Store(PolicyStore):
    """The policy store with one policy replaced (the route's, overridden)."""

    fixed: dict[str, LoadedPolicy] = attrs.field(factory=dict)

    def load_ref(self, ref: str, _chain: tuple[str, ...] = ()) -> LoadedPolicy:
        if not _chain and ref in self.fixed:
            return self.fixed[ref]
        return super().load_ref(ref, _chain)


def _unpinned(route: Route, base: LoadedPolicy) -> Route:
    """A route that pins the policy as it is compiles under the overridden one (whose
    sha256 differs by design), as `compile --set` does."""
    if route.policy.sha256 is not None and route.policy.sha256 == base.sha256:
        return attrs.evolve(route, policy=attrs.evolve(route.policy, sha256=None))
    return route


class Evaluator:
    """Recompiles the route with one parameter set to a value; caches each state."""

    def __init__(self, base: Compiled, session: Session, rivals: Sequence[Route]) -> None:
        self.base = base
        self.session = session
        self.ref = str(base.route.policy)
        self.route = _unpinned(base.route, base.policy)
        self.rivals = [_unpinned(r, base.policy) if str(r.policy) == self.ref else r for r in rivals]
        self.base_rivals = [x for x in (self._compile(r, session.policies) for r in rivals) if x is not None]
        self.start = state_of(base, self.base_rivals)
        self.compiles = 0
        self._cache: dict[tuple[str, float], State | None] = {}

    def _compile(self, route: Route, store: PolicyStore) -> Compiled | None:
        child = Session(
            policies=store, coverage_mode=self.session.coverage_mode, coverage_source=self.session.coverage_source,
            config_coverage=self.session.config_coverage
        )
        return child.compile_route(route)

    def state(self, p: Parameter, x: float) -> State | None:
        """The decisions with ``p`` at ``x``; None when the route does not compile there."""
        key = (p.key, x)
        if key not in self._cache:
            self._cache[key] = self._state(p, x)
        return self._cache[key]

    def _state(self, p: Parameter, x: float) -> State | None:
        self.compiles += 1
        o = p.override(x)
        if p.target == "route":
            c = self._compile(override_route(self.route, [o]), self.session.policies)
            return None if c is None else state_of(c, self.base_rivals)
        try:
            loaded = override_policy(self.base.policy, [o])
        except OverrideError:
            return None
        store = _Store(list(self.session.policies.search_path), fixed={self.ref: loaded})
        c = self._compile(self.route, store)
        if c is None:
            return None
        rivals = []
        for r in self.rivals:
            try:
                got = self._compile(r, store)
            except PolicyError:
                got = None
            if got is not None:
                rivals.append(got)
        return state_of(c, rivals)


# ---------------------------------------------------------------------- margins
@attrs.frozen
class RankChange:
    # Why a rank moved: the route passed the rival (or the rival passed it) on the rank
    # key ("passed"); the rival moved to another tier ("rival-tier": refused, ineligible,
    # released again); the route itself did ("route-tier"); the rival no longer compiles
    # ("rival-gone"), or compiles where it did not ("rival-new").
    cause: str
    rival: str | None  # None: the route itself
    tier: str | None = None  # for a tier cause: the tier it moved to

    def text(self) -> str:
        """`past X`, `X now refused`, `this route now ineligible`, `X does not compile`."""
        if self.cause == "passed":
            return f"past {self.rival}"
        if self.cause == "rival-gone":
            return f"{self.rival} does not compile"
        if self.cause == "rival-new":
            return f"{self.rival} now compiles"
        tier = "ineligible" if self.tier and self.tier.startswith("ineligible") else self.tier
        return f"{self.rival or 'this route'} now {tier}"


@attrs.frozen
class Margin:
    parameter: Parameter
    decision: str
    before: str | None
    after: str | None  # None: no flip
    direction: str | None  # "up" | "down"
    at: float | None  # the value at which the decision has flipped
    inside: float | None  # within the tolerance of `at`, towards the current value: not flipped
    method: str  # closed form | bisection | none
    searched: tuple[float, float]  # the range the search covered
    exact: Fraction | None = None  # the closed form's solution, exactly
    rank_change: RankChange | None = None  # for `rank`: what moved the route
    monotone: bool | None = None  # True: the decision's map is monotone in the parameter; None: not established

    @property
    def change(self) -> float | None:
        return None if self.at is None else self.at - self.parameter.value

    @property
    def relative(self) -> float | None:
        if self.at is None or self.parameter.value == 0:
            return None
        return abs(self.at - self.parameter.value) / abs(self.parameter.value)

    def sort_key(self) -> tuple[int, float, float, str, str]:
        rel = self.relative
        absolute = abs(self.change) if self.change is not None else math.inf
        return (0 if self.at is not None else 1, rel if rel is not None else math.inf, absolute,
                self.parameter.key, self.decision)

    def json(self) -> dict[str, Any]:
        return {
            "key": self.parameter.key,
            "kind": self.parameter.kind,
            "about": self.parameter.about,
            "current": self.parameter.value,
            "decision": self.decision,
            "before": self.before,
            "after": self.after,
            "flips": self.at is not None,
            "direction": self.direction,
            "at": self.at,
            "inside": self.inside,
            "change": self.change,
            "relative": self.relative,
            "method": self.method,
            "exact": None if self.exact is None else f"{self.exact.numerator}/{self.exact.denominator}",
            "neighbour": None if self.rank_change is None else self.rank_change.rival,
            "rank_cause": None if self.rank_change is None else self.rank_change.cause,
            "rank_tier": None if self.rank_change is None else self.rank_change.tier,
            "monotone": self.monotone,
            "set": None if self.at is None else self.parameter.override(self.at).text,
            "range": [self.parameter.lo, self.parameter.hi],
            "searched": list(self.searched),
        }


@attrs.frozen
class Report:
    route: str
    file: str
    policy: str
    start: State
    margins: tuple[Margin, ...]
    compiles: int
    rivals: tuple[str, ...]
    unit: str = "usd"  # the fold's unit: the score's and every amount's


def _scan(p: Parameter, direction: int) -> list[float]:
    x0 = p.value
    end = p.lo if direction < 0 else p.hi
    if end is not None:
        if end == x0:
            return []
        return [x0 + (end - x0) * 2.0**-k for k in SCAN_BOUNDED] + [end]
    scale = abs(x0) if x0 != 0 else 1.0
    return [x0 + scale * 2.0**k for k in SCAN_UP]


def _width(a: float, b: float, p: Parameter) -> float:
    """The tolerance: 1e-9 of the largest of the bracket's ends and the current value
    (of 1 when all are 0)."""
    return TOLERANCE * (max(abs(a), abs(b), abs(p.value)) or 1.0)


def search(ev: Evaluator, p: Parameter) -> list[Margin]:
    """Every decision's nearest flip in each direction; a no-flip row for a decision
    that flips in neither."""
    start = ev.start
    wanted = [d for d in DECISIONS if start.decision(d) is not None]
    out: list[Margin] = []
    flipped: set[str] = set()
    ends: dict[int, float] = {}
    for direction in (-1, 1):
        brackets: dict[str, tuple[float, float]] = {}
        last = p.value
        for x in _scan(p, direction):
            s = ev.state(p, x)
            if s is None:
                break
            for d in wanted:
                if d not in brackets and s.decision(d) != start.decision(d):
                    brackets[d] = (last, x)
            last = x
            if len(brackets) == len(wanted):
                break
        ends[direction] = last
        for d, (a, b) in brackets.items():
            found = _closed_margin(ev, p, d, direction, a, b) or _bisect(ev, p, d, direction, a, b)
            out.append(attrs.evolve(found, monotone=monotone(ev.base, p, d)))
            flipped.add(d)
    searched = (min(ends[-1], p.value), max(ends[1], p.value))
    for d in wanted:
        if d not in flipped:
            out.append(Margin(p, d, start.decision(d), None, None, None, None, NONE, searched,
                              monotone=monotone(ev.base, p, d)))
    return out


def monotone(c: Compiled, p: Parameter, d: str) -> bool | None:
    """Whether decision ``d`` is known to be a monotone function of ``p`` (then the scan
    cannot miss a flip and its return): the score never falls as V rises or as a cost,
    a floor or a floor table falls, and is affine in the prior of a class one transition
    uses; T moves towards a criterion's score as its weight rises, and the bucket is a
    threshold of T. None: not established (the binding transition, the rank, the
    verdict through coverage and gates, W's clip and saturation)."""
    if d == "sign":
        if p.kind in ("value", "cost", "floor", "floor-table"):
            return True
        if p.kind == "prior" and sum(t.ref_class == p.path[1] for t in c.route.transitions) == 1:
            return True
    if d == "bucket" and p.kind in ("criteria-weight", "bucket-bound"):
        return True
    return None


def _bisect(ev: Evaluator, p: Parameter, d: str, direction: int, a: float, b: float) -> Margin:
    """``a`` keeps the decision, ``b`` flips it: halve until they are within the tolerance."""
    before = ev.start.decision(d)
    while abs(b - a) > _width(a, b, p):
        m = a + (b - a) / 2
        if m in (a, b):
            break
        s = ev.state(p, m)
        if s is not None and s.decision(d) == before:
            a = m
        else:
            b = m
    return _flipped(ev, p, d, direction, b, a, BISECTION, None)


def _flipped(ev: Evaluator, p: Parameter, d: str, direction: int, at: float, inside: float, method: str,
             exact: Fraction | None) -> Margin:
    s = ev.state(p, at)
    after = s.decision(d) if s is not None else "does not compile"
    moved = rank_change(ev.start, s) if d == "rank" and s is not None else None
    return Margin(p, d, ev.start.decision(d), after, "up" if direction > 0 else "down", at, inside, method,
                  (min(p.value, at), max(p.value, at)), exact, moved)


def rank_change(before: State, after: State) -> RankChange | None:
    """Why the route moved from ``before.rank`` to ``after.rank``: its own tier changed,
    or, of the rivals that changed sides of it, the nearest to it before did."""
    if before.rank is None or after.rank is None or before.rank == after.rank:
        return None
    i, j = before.rank - 1, after.rank - 1
    if before.tiers[i] != after.tiers[j]:
        return RankChange("route-tier", None, after.tiers[j])
    rivals_before = before.order[:i] + before.order[i + 1:]
    rivals_after = after.order[:j] + after.order[j + 1:]
    # nearest first: the rivals just above it (moving up) or just below it (moving down)
    near = reversed(before.order[:i]) if j < i else iter(before.order[i + 1:])
    for name in [*near, *(n for n in rivals_after if n not in rivals_before)]:
        if name not in rivals_after:
            return RankChange("rival-gone", name)
        if name not in rivals_before:
            return RankChange("rival-new", name)
        if (name in before.order[:i]) != (name in after.order[:j]):
            tier_before = before.tiers[before.order.index(name)]
            tier_after = after.tiers[after.order.index(name)]
            if tier_before != tier_after:
                return RankChange("rival-tier", name, tier_after)
            return RankChange("passed", name)
    return None


def _closed_margin(ev: Evaluator, p: Parameter, d: str, direction: int, a: float, b: float) -> Margin | None:
    """The exact solution, when the decision is an affine equation in ``p`` and the
    solution lies in the bracket; checked by recompiling (None when the check fails:
    the caller bisects)."""
    lo, hi = min(a, b), max(a, b)
    for x in _solutions(ev, p, d):
        if not lo <= x <= hi:
            continue
        got = _confirm(ev, p, d, direction, x, a)
        if got is not None:
            return _flipped(ev, p, d, direction, got[0], got[1], CLOSED, x)
    return None


def _confirm(ev: Evaluator, p: Parameter, d: str, direction: int, x: Fraction, a: float) -> tuple[float, float] | None:
    """The float nearest ``x`` (moved outward by a few ulps if rounding needs it) at which
    the decision has flipped, and a value within the tolerance inside at which it has not."""
    before = ev.start.decision(d)
    at = float(x)
    toward = math.inf if direction > 0 else -math.inf
    for step in range(12):
        s = ev.state(p, at)
        if s is not None and s.decision(d) != before:
            break
        at = at + direction * math.ulp(at) * 2**step if at != 0 else math.nextafter(at, toward)
    else:
        return None
    inside = at - direction * _width(at, at, p)
    if direction > 0 and inside < a or direction < 0 and inside > a:
        inside = a
    s = ev.state(p, inside)
    if s is None or s.decision(d) != before:
        return None
    return at, inside


def _solutions(ev: Evaluator, p: Parameter, d: str) -> list[Fraction]:
    """Where ``d`` flips as an exact affine equation in ``p`` (empty where it is not one):
    the score crosses 0 (sign); T crosses a bucket bound (bucket); the score crosses a
    rival's released score (rank, for a parameter of this route only, when both rank by
    their released scores)."""
    c = ev.base
    if d == "sign":
        x = _score_root(c, p, Fraction(0))
        return [] if x is None else [x]
    if d == "bucket":
        return _bucket_roots(c, p)
    if d == "rank" and p.target == "route" and c.decision.verdict in ("released", "ungated") and c.numbers.eligible:
        key = choose_key([c, *ev.base_rivals]).key if ev.base_rivals else None
        out = []
        for r in ev.base_rivals:
            if key == "score" and r.decision.score is not None and r.numbers.eligible:
                x = _score_root(c, p, Fraction(r.decision.score))
                if x is not None:
                    out.append(x)
        return out
    return []


def _fold_parts(c: Compiled) -> tuple[list[Fraction], list[Fraction], Fraction, Fraction] | None:
    """reach_i, c_i, the reach of V and R_0, exactly, for a fold that is affine."""
    n = c.numbers
    if n.fold.abandonment:
        return None
    reach: list[Fraction] = []
    r = Fraction(1)
    for t in n.transitions:
        reach.append(r)
        r *= Fraction(t.p) * Fraction(t.d)
    cs = [Fraction(t.cost.c) for t in n.transitions]
    score = r * Fraction(n.value) - sum((a * b for a, b in zip(reach, cs, strict=True)), Fraction(0))
    return reach, cs, r, score


def _score_root(c: Compiled, p: Parameter, target: Fraction) -> Fraction | None:
    """The value of ``p`` at which R_0 = ``target``, when R_0 is affine in ``p``:
    V = (Σ reach_i·c_i + target) / Π p_i·d_i; c_k = c_k + (R_0 − target)/reach_k (a cost
    item or class floor that then binds c_k); p_k = p_k − (R_0 − target)/(reach_k·d_k·R_{k+1})
    (a class of one transition, p not clipped)."""
    parts = _fold_parts(c)
    if parts is None:
        return None
    reach, cs, last, score = parts
    gap = score - target
    n = c.numbers
    route = c.route
    if p.kind == "value":
        pol = c.policy.policy
        if last == 0 or not (pol.vision.is_default and pol.units.is_default):
            return None  # V is a product of the three only under the venture formula: else bisected
        v = route.vision
        values = {"tam": v.tam, "capture": v.capture, "defensibility": v.defensibility}
        others = Fraction(1)
        for name, val in values.items():
            if name != p.path[1]:
                others *= Fraction(val)
        if others == 0:
            return None
        return (sum((a * b for a, b in zip(reach, cs, strict=True)), Fraction(0)) + target) / last / others
    users = [i for i, t in enumerate(n.transitions) if p.kind in ("prior", "floor") and t.ref_class == p.path[1]]
    if p.kind in ("prior", "floor") and len(users) != 1:
        return None  # a class used twice: the score is not affine in it
    if p.kind == "cost":
        k = next(i for i, t in enumerate(route.transitions) if t.name == p.path[2])
    elif p.kind in ("prior", "floor"):
        k = users[0]
    else:
        return None
    tn = n.transitions[k]
    if reach[k] == 0:
        return None
    if p.kind == "prior":
        slope = reach[k] * Fraction(tn.d) * Fraction(tn.R_next)
        if slope == 0 or tn.reweight.W == 0:
            return None
        p_star = Fraction(tn.p) - gap / slope
        if not 0 <= p_star <= 1:
            return None
        return p_star / Fraction(tn.reweight.W)
    c_star = cs[k] + gap / reach[k]
    if p.kind == "floor":
        return c_star if c_star > max(Fraction(tn.cost.budget), Fraction(tn.cost.floor_delta)) else None
    item = next(i for i in route.transitions[k].cost if i.name == p.path[4])
    if item.count == 0 or c_star <= max(Fraction(tn.cost.floor_class), Fraction(tn.cost.floor_delta)):
        return None
    budget = sum((Fraction(i.count) * Fraction(i.unit_cost) for i in route.transitions[k].cost), Fraction(0))
    rest = budget - Fraction(item.count) * Fraction(item.unit_cost)
    rate = usd_rate(c.policy.policy)  # c is in the fold's unit, cost items in usd
    return (c_star / Fraction(rate) - rest) / Fraction(item.count)


def _bucket_roots(c: Compiled, p: Parameter) -> list[Fraction]:
    b = c.policy.policy.buckets
    T = c.numbers.criteria_score
    if b is None or T is None:
        return []
    if p.kind == "bucket-bound":
        return [Fraction(T)]
    if p.kind != "criteria-weight":
        return []
    rows = c.numbers.criteria_weights
    name = p.path[1]
    s = next(Fraction(x) for k, _, x in rows if k == name)
    A = sum((Fraction(w) * Fraction(x) for k, w, x in rows if k != name), Fraction(0))
    B = sum((Fraction(w) for k, w, _ in rows if k != name), Fraction(0))
    out = []
    for tau in (Fraction(b.neg_below), Fraction(b.pos_from)):
        if s != tau:  # T(w) = (A + w·s)/(B + w) = τ
            w = (tau * B - A) / (s - tau)
            if w >= 0:
                out.append(w)
    return out


def sensitivity(c: Compiled, session: Session, rivals: Sequence[Route]) -> Report:
    """The margins of ``c``; ``rivals`` are the routes it is ranked among (for `rank`):
    the other routes of its file, and any the caller adds."""
    ev = Evaluator(c, session, rivals)
    margins: list[Margin] = []
    for p in parameters(c):
        margins.extend(search(ev, p))
    margins.sort(key=Margin.sort_key)
    return Report(c.route.name, c.route.file, c.policy.ref, ev.start, tuple(margins), ev.compiles,
                  tuple(r.name for r in rivals), c.policy.policy.units.fold)


# ---------------------------------------------------------------------- output
def report_json(r: Report) -> dict[str, Any]:
    s = r.start
    return {
        "route": r.route,
        "file": r.file,
        "policy": r.policy,
        "tolerance": TOLERANCE,
        "current": {d: s.decision(d) for d in DECISIONS} | {"score": s.score, "order": list(s.order)},
        "rivals": list(r.rivals),
        "compiles": r.compiles,
        "margins": [m.json() for m in r.margins],
        **({} if r.unit == "usd" else {"unit": r.unit}),
    }


def _rel(m: Margin) -> str:
    rel = m.relative
    if rel is None:
        return "—"
    sign = "+" if m.change is not None and m.change > 0 else "-"
    return sign + percent(rel)


def report_text(r: Report) -> str:
    s = r.start
    among = ", ".join(r.rivals) if len(r.rivals) < 4 else f"{len(r.rivals)} rivals"
    lines = [
        f"route {r.route}  [{r.file}]  under {r.policy}",
        "  now: score " + number(s.score) + ("" if r.unit == "usd" else f" {r.unit}")
        + f" ({s.decision('sign')}), verdict {s.verdict}, bucket {s.bucket or '—'}, binding {s.binding}"
        + (f", rank {s.decision('rank')} among it and {among}" if s.rank is not None else ""),
    ]
    flips = [m for m in r.margins if m.at is not None]
    if flips:
        lines.append(f"  margins, smallest relative change first (each recompiled: at `flips at` the decision "
                     f"has flipped, {TOLERANCE:g} relative inside it has not):")
        rows = [("parameter", "current", "flips at", "change", "relative", "decision", "method")]
        for m in flips:
            assert m.at is not None and m.change is not None
            past = f" ({m.rank_change.text()})" if m.rank_change else ""
            flip = f"{m.decision}: {m.before or '—'} → {m.after or '—'}{past}"
            rows.append((m.parameter.key, number(m.parameter.value), number(m.at), ("+" if m.change > 0 else "")
                         + number(m.change), _rel(m), flip, m.method))
        lines += table(rows, left=(0, 5, 6))
    none = [m for m in r.margins if m.at is None]
    if none:
        lines.append("  no flip in range:")
        by_key: dict[str, list[Margin]] = {}
        for m in none:
            by_key.setdefault(m.parameter.key, []).append(m)
        for key in sorted(by_key):
            ms = by_key[key]
            lo, hi = ms[0].searched
            decisions = ", ".join(m.decision for m in ms)
            lines.append(f"    {key}: no flip of {decisions} in range [{number(lo)}, {number(hi)}]")
    lines.append(f"  {r.compiles} recompiles")
    return "\n".join(lines)
