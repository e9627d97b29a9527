"""Score one route: p, W, c per transition; the staged fold; binding; criteria; gates."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from fractions import Fraction
from typing import TypeVar

import attrs

from pcsc.diagnostics.messages import E405_GATE_RULE
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.interp import BASE_FUNCTIONS, EvalError, Interpreter, truthy
from pcsc.lang.ir import Route, Shape, Transition
from pcsc.policy.model import FoldPolicy, Policy
from pcsc.score.cost import Cost, Delta, cost, deltas
from pcsc.score.evidence import Reweight, admitted, clip, reweight
from pcsc.score.finite import checked
from pcsc.score.fold import ChainFold, chain_fold
from pcsc.score.graph import GraphFold, graph_fold
from pcsc.score.units import credit_payoff, in_fold, usd_rate
from pcsc.score.vision import vision_value
from pcsc.score.voi import Voi, graph_flat, value_of_information, value_of_information_refolded


@attrs.frozen
class Payoff:
    """The payoff of the state a transition reaches: what the route writes, and what the
    policy credits of it (at most `[payoffs] max_usd`)."""

    state: str
    written: float  # as the route writes it, in ``unit``
    credited: float  # in the fold's unit (`[units]`): `pcsc.score.units.credit_payoff`
    bound_by: str = "route"  # "route" | "policy cap"
    unit: str = "usd"  # the unit it is written in: usd, or the fold's own (`payoff 300` under a fold in points)


@attrs.frozen
class TransitionNumbers:
    name: str
    source: str
    target: str
    ref_class: str
    p_prior: float
    reweight: Reweight
    p: float
    cost: Cost
    U: float
    U_rule: str  # "range of estimates" | "policy default"
    reach: float
    D: float
    R_next: float
    deltas: tuple[Delta, ...]
    learning_cost: float | None
    d: float = 1.0  # the discount factor (1 + r)^(−h) over the horizon; 1 under the paper's fold
    stops: bool = False  # under `fold.abandonment`: the planner stops before paying this stage
    p_raw: float | None = None  # clip(p_prior·W, 0, 1) when the policy's calibration map made p; else None
    payoff: Payoff | None = None  # the payoff of the target state, credited with this transition's success


@attrs.frozen
class GateResult:
    id: str
    kind: str
    passed: bool
    blocks: bool


@attrs.frozen
class RouteNumbers:
    route: Route
    value: float
    transitions: tuple[TransitionNumbers, ...]
    R: tuple[float, ...]  # R_0 … R_n; R_0 is the score. A graph route: one per state of `route.states`
    score: float
    flat_product: float
    binding: int
    criteria_score: float | None
    criteria_weights: tuple[tuple[str, float, float], ...]  # (criterion, weight, clipped score)
    bucket: str | None
    gates: tuple[GateResult, ...]
    eligible: bool
    admissible_evidence: tuple[str, ...]
    fold: FoldPolicy = FoldPolicy()  # which fold made R (the paper's by default)
    voi: Voi | None = None  # the value-of-information selector beside `binding` (pcsc.score.voi)

    @property
    def payoffs(self) -> list[float] | None:
        """v_{i+1} per transition, as the fold credits them; None when no state has a payoff."""
        if all(t.payoff is None for t in self.transitions):
            return None
        return [0.0 if t.payoff is None else t.payoff.credited for t in self.transitions]

    @property
    def binding_by_tie(self) -> str | None:
        """None when some U_i·D_i > 0; otherwise why every U_i·D_i is 0, so that the binding
        transition is only the tie rule's pick (the earliest): "planner-does-not-start"
        under the option to stop with R_0 = 0 (every D is 0), else "nothing-at-stake"."""
        if any(t.U * t.D > 0 for t in self.transitions):
            return None
        return "planner-does-not-start" if self.fold.abandonment and self.score == 0 else "nothing-at-stake"

    @property
    def tie_note(self) -> str | None:
        """The note `compile` prints under the binding line (and the editor's hover shows)
        when the binding transition is only the tie rule's pick; None otherwise."""
        why = self.binding_by_tie
        if why is None:
            return None
        return f"{TIE_REASONS[why]}: binding is only the tie rule's pick, the earliest step; see learn first"


TIE_REASONS = {
    "planner-does-not-start": "every U·D is 0 (option to stop: the planner would not start, R_0 = 0)",
    "nothing-at-stake": "every U·D is 0 (nothing is at stake at any step)",
}



DAYS_PER_YEAR = 365.25


def horizon_years(horizon: tuple[float, str] | None) -> float:
    """A horizon in years: days over 365.25, months over 12; no horizon is 0 years."""
    if horizon is None:
        return 0.0
    amount, unit = horizon
    if unit == "days":
        return float(amount) / DAYS_PER_YEAR
    if unit == "months":
        return float(amount) / 12.0
    return float(amount)


def discount_factor(rate: float, horizon: tuple[float, str] | None) -> float:
    """d = (1 + r)^(−h), h the horizon in years; exactly 1.0 when r = 0 or h = 0."""
    if rate == 0.0:
        return 1.0
    return checked((1.0 + rate) ** (-horizon_years(horizon)), "the discount factor (1 + r)^(−h)", rate)


Num = TypeVar("Num", float, Fraction)


def route_fold(
    spec: FoldPolicy,
    shape: Shape | None,
    names: Sequence[str],
    sources: Sequence[str],
    targets: Sequence[str],
    ps: Sequence[Num],
    cs: Sequence[Num],
    ds: Sequence[Num],
    value: Num,
    vs: Sequence[Num] | None = None,
) -> ChainFold[Num] | GraphFold[Num]:
    """The fold that the policy's `[fold]` and the route's shape call for: a chain folds
    by `chain_fold` (the paper's fold under the default policy, else discounted by
    ``ds`` and with the option to stop as `[fold]` says); a route that forks and joins by
    the series-parallel fold (`pcsc.score.graph`). ``ds`` are the policy's discount
    factors (`discount_factor`: each 1 under the default). ``names``, ``sources`` and
    ``targets`` (each transition's name and states) are read only for a graph: a chain
    may pass none. ``vs``: each transition's credited payoff, that of the state it
    reaches (None: no payoffs; on a graph the transitions into a join carry the join's,
    credited once, when every branch has arrived)."""
    if shape is not None:
        return graph_fold(shape, names, sources, targets, ps, cs, ds, value, spec.abandonment, vs=vs)
    return ChainFold(chain_fold(ps, cs, value, None if spec.is_default else ds, vs=vs, stop=spec.abandonment))


def payoffs_of(route: Route, policy: Policy) -> list[Payoff | None]:
    """Each transition's payoff (that of the state it reaches), capped by the policy."""
    out: list[Payoff | None] = []
    for t in route.transitions:
        state = route.state(t.target)
        if state.payoff is not None:
            own = state.payoff_in_fold is not None and policy.units.fold != "usd"
            credited, bound = credit_payoff(state.payoff, own, policy)
            out.append(Payoff(t.target, state.payoff, credited, bound, policy.units.fold if own else "usd"))
        else:
            out.append(None)
    return out


def score_route(route: Route, policy: Policy, diags: Diagnostics) -> RouteNumbers:
    """Compute every number of docs/formulas.md for a route already checked against ``policy``."""
    value = vision_value(route.vision, policy)
    rate = usd_rate(policy)
    partial = []
    raw: dict[str, float] = {}  # p before the calibration map, when there is one
    for t in route.transitions:
        prior = policy.priors[t.ref_class].p
        rw = reweight(t.name, route.evidence, route.as_of, policy)
        p = clip(checked(prior * rw.W, f"p of `{t.name}` = prior × W", prior, rw.W), 0.0, policy.reweighting.p_max)
        if policy.calibration is not None:
            from pcsc.score.calibration import calibrate  # only a policy with a calibration map needs it

            raw[t.name] = p
            p = calibrate(p, policy.calibration)
        ds = deltas(route, t)
        c = cost(t, ds, policy)
        if len(t.estimates) >= 2:
            U, rule = max(t.estimates) - min(t.estimates), "range of estimates"
        else:
            U, rule = policy.uncertainty.default, "policy default (fewer than two estimates)"
        partial.append((t, prior, rw, p, c, U, rule, ds))
    spec = policy.fold
    dfs = [discount_factor(spec.discount, x[0].horizon) for x in partial]
    ts = route.transitions
    payoffs = payoffs_of(route, policy)
    vs = None if all(x is None for x in payoffs) else [0.0 if x is None else x.credited for x in payoffs]
    folded = route_fold(spec, route.shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts],
                        [x[3] for x in partial], [x[4].c for x in partial], dfs, value, vs)
    if isinstance(folded, GraphFold):
        return _score_graph(route, policy, diags, value, partial, dfs, folded, payoffs, vs)
    R = folded.R
    numbers = []
    reach = 1.0
    flat = 1.0
    walking = True  # the planner reaches and pays this stage (always, without abandonment)
    for i, (t, prior, rw, p, c, U, rule, ds) in enumerate(partial):
        after = R[i + 1] if vs is None else vs[i] + R[i + 1]  # what e_i's success is worth
        stops = spec.abandonment and -c.c + p * dfs[i] * after < 0.0
        if stops or not walking:  # under abandonment: the planner does not pay this stage
            walking = False
        D = reach * max(after, 0.0) if walking else 0.0
        checked(U * D, f"U·D of `{t.name}`", U, D)
        numbers.append(
            TransitionNumbers(
                t.name,
                t.source,
                t.target,
                t.ref_class,
                prior,
                rw,
                p,
                c,
                U,
                rule,
                reach,
                D,
                R[i + 1],
                ds,
                _learning_cost(t, rate),
                dfs[i],
                stops,
                raw.get(t.name),
                payoffs[i],
            )
        )
        reach *= p * dfs[i]
        flat *= p
    if vs is not None:
        voi = _payoff_voi(route, policy, partial, dfs, vs, value)
        return _finish(route, policy, diags, value, numbers, R, flat, voi)
    voi = value_of_information(
        [t.name for t in route.transitions], [x[3] for x in partial], [x[4].c for x in partial], dfs, value,
        spec.abandonment, [t.estimates for t in route.transitions], policy.uncertainty.default,
        [_learning_cost(t, rate) for t in route.transitions],
    )
    return _finish(route, policy, diags, value, numbers, R, flat, voi)


def _learning_cost(t: Transition, rate: float) -> float | None:
    """``t``'s learning cost in the fold's unit (None when it states none)."""
    return None if t.learning_cost is None else in_fold(t.learning_cost, rate)


def _finish(
    route: Route,
    policy: Policy,
    diags: Diagnostics,
    value: float,
    numbers: list[TransitionNumbers],
    R: Sequence[float],
    flat: float,
    voi: Voi,
) -> RouteNumbers:
    spec = policy.fold
    binding = 0
    for i, tn in enumerate(numbers):
        if tn.U * tn.D > numbers[binding].U * numbers[binding].D:
            binding = i
    T, weights = criteria_score(route, policy)
    bucket = None
    if T is not None and policy.buckets is not None:
        b = policy.buckets
        bucket = "neg" if T < b.neg_below else "pos" if T >= b.pos_from else "mix"
    admissible_names = tuple(e.name for e in admitted(route.evidence, route.as_of, policy))
    result = RouteNumbers(
        route, value, tuple(numbers), tuple(R), R[0], flat, binding, T, weights, bucket, (), True, admissible_names,
        spec, voi,
    )
    gates = run_gates(result, policy, diags)
    eligible = all(g.passed or not g.blocks for g in gates)
    return attrs.evolve(result, gates=gates, eligible=eligible)


Partial = tuple[Transition, float, Reweight, float, Cost, float, str, tuple[Delta, ...]]


def _payoff_voi(route: Route, policy: Policy, partial: Sequence[Partial], dfs: Sequence[float], vs: Sequence[float],
                value: float) -> Voi:
    """The value-of-information selector of a chain with payoffs: each p refolded exactly."""
    stop = policy.fold.abandonment
    ps = [Fraction(x[3]) for x in partial]
    cs = [Fraction(x[4].c) for x in partial]
    ds = [Fraction(d) for d in dfs]
    fvs = [Fraction(v) for v in vs]
    V = Fraction(value)

    def refold(i: int | None, q: Fraction) -> Fraction:
        qs = ps if i is None else [*ps[:i], q, *ps[i + 1:]]
        return chain_fold(qs, cs, V, ds, vs=fvs, stop=stop)[0]

    return value_of_information_refolded(
        [x[0].name for x in partial], [x[3] for x in partial], [t.estimates for t in route.transitions],
        policy.uncertainty.default, [t.learning_cost for t in route.transitions], refold,
    )


def _score_graph(
    route: Route, policy: Policy, diags: Diagnostics, value: float, partial: Sequence[Partial], dfs: Sequence[float],
    g: GraphFold[float], payoffs: Sequence[Payoff | None], vs: Sequence[float] | None,
) -> RouteNumbers:
    """The numbers of a route that forks and joins, from its series-parallel fold ``g``
    (`pcsc.score.graph`); R is per state, in the order of `route.states` (docs/graphs.md)."""
    assert route.shape is not None
    spec = policy.fold
    rate = usd_rate(policy)
    numbers = []
    flat = 1.0
    for i, (t, prior, rw, p, c, U, rule, ds) in enumerate(partial):
        reach, after = g.reach[t.name], g.next[t.name]
        D = checked(reach * max(after, 0.0), f"D of `{t.name}`", reach, after) if g.walking(t.name) else 0.0
        checked(U * D, f"U·D of `{t.name}`", U, D)
        numbers.append(
            TransitionNumbers(
                t.name, t.source, t.target, t.ref_class, prior, rw, p, c, U, rule, reach, D, after, ds,
                _learning_cost(t, rate), dfs[i], g.stops(t.name, t.source), None, payoffs[i],
            )
        )
        flat *= p
    R = [g.R[s.name] for s in route.states]
    names = [x[0].name for x in partial]
    shape = route.shape
    exact = graph_fold(shape, names, [x[0].source for x in partial], [x[0].target for x in partial],
                       [Fraction(x[3]) for x in partial], [Fraction(x[4].c) for x in partial],
                       [Fraction(d) for d in dfs], Fraction(value), spec.abandonment,
                       vs=None if vs is None else [Fraction(v) for v in vs])

    def refold(i: int | None, q: Fraction) -> Fraction:
        return exact.score if i is None else exact.score_with(names[i], q)

    voi = value_of_information_refolded(
        names, [x[3] for x in partial], [t.estimates for t in route.transitions], policy.uncertainty.default,
        [_learning_cost(t, rate) for t in route.transitions], refold,
        # with payoffs every p takes the exact refold (the float shortcut knows no payoffs)
        None if vs is not None else graph_flat(g, names, [x[3] for x in partial], [x[4].c for x in partial], dfs,
                                               value),
    )
    return _finish(route, policy, diags, value, numbers, R, flat, voi)


def docked_score(numbers: RouteNumbers, uncovered: Collection[str] = ()) -> float:
    """R_0 with the value over the uncovered path removed (R_n = 0), as DOCK releases it
    (by the policy's fold: discounted, and with the option to stop, as the score was).
    A payoff is removed too unless every transition up to the state it is paid at is
    covered (``uncovered`` names the transitions with an uncovered material change):
    coverage applies to a payoff as to the vision."""
    ts = numbers.transitions
    return route_fold(numbers.fold, numbers.route.shape, [t.name for t in ts], [t.source for t in ts],
                      [t.target for t in ts], [t.p for t in ts], [t.cost.c for t in ts], [t.d for t in ts], 0.0,
                      docked_payoffs(numbers, uncovered)).score


def docked_payoffs(numbers: RouteNumbers, uncovered: Collection[str]) -> list[float] | None:
    """The payoffs DOCK credits: each one whose paths from the start are covered, else 0."""
    vs = numbers.payoffs
    if vs is None:
        return None
    before = uncovered_before(numbers.transitions, uncovered)
    return [0.0 if before[i] else v for i, v in enumerate(vs)]


def uncovered_before(transitions: Sequence[TransitionNumbers], uncovered: Collection[str]) -> list[tuple[str, ...]]:
    """For each transition, the transitions of ``uncovered`` on a path from the start into
    its target state, itself included, in the transitions' order: on a chain every one up
    to it; on a graph those of every branch into a join (its payoff is credited when all
    arrive). The transitions are in topological order."""
    into: dict[str, set[str]] = {}
    for t in transitions:
        into.setdefault(t.target, set()).update(into.get(t.source, set()), {t.name} & set(uncovered))
    order = [t.name for t in transitions]
    return [tuple(sorted(into[t.target], key=order.index)) for t in transitions]


def criteria_score(route: Route, policy: Policy) -> tuple[float | None, tuple[tuple[str, float, float], ...]]:
    """T = Σ w_i·clip(s_i, 0, 100) / Σ w_i over the criteria present."""
    rows = [
        (c.name, policy.criteria[c.name], clip(c.score, 0.0, 100.0))
        for c in route.criteria
        if c.name in policy.criteria
    ]
    total_w = checked(sum(w for _, w, _ in rows), "the sum of the criteria weights", *(w for _, w, _ in rows))
    if not rows or total_w == 0:
        return None, tuple(rows)
    weighted = 0.0
    for name, w, s in rows:
        weighted = checked(weighted + w * s, f"the criteria total at `{name}` (weight × score)", w, s)
    return checked(weighted / total_w, "the criteria score T", weighted, total_w), tuple(rows)


def gate_names(numbers: RouteNumbers) -> dict[str, object]:
    route = numbers.route
    evidence_all = [e.name for e in route.evidence]
    return {
        "evidence": {"all": evidence_all, "admissible": list(numbers.admissible_evidence)},
        "route": {"name": route.name, "as_of": route.as_of, "transitions": [t.name for t in route.transitions]},
        "transitions": [t.name for t in route.transitions],
        "score": numbers.score,
        "value": numbers.value,
        "flat_product": numbers.flat_product,
        "criteria_score": numbers.criteria_score,
    }


def run_gates(numbers: RouteNumbers, policy: Policy, diags: Diagnostics) -> tuple[GateResult, ...]:
    out = []
    it = Interpreter(gate_names(numbers), BASE_FUNCTIONS)
    for gate in policy.gates:
        passed = False
        try:
            assert gate.expr is not None, f"gate `{gate.id}`: rules are compiled when the policy is loaded"
            passed = truthy(it.eval(gate.expr))
        except EvalError as err:
            diags.diag(E405_GATE_RULE, numbers.route.policy.span, gate=gate.id, problem=err.message, rule=gate.rule)
        out.append(GateResult(gate.id, gate.kind, passed, gate.kind == "eligibility" or gate.block))
    return tuple(out)


def score_without_stop(numbers: RouteNumbers, docked: bool, uncovered: Collection[str] = ()) -> float:
    """R_0 refolded without the option to stop, payoffs credited (``docked``: with the
    value over the uncovered path removed, and the payoffs past ``uncovered``, as DOCK
    releases it): what the route is worth to a planner who pays every stage. Equal to the
    score under a policy without the option to stop."""
    ts = numbers.transitions
    spec = attrs.evolve(numbers.fold, abandonment=False)
    return route_fold(spec, numbers.route.shape, [t.name for t in ts], [t.source for t in ts],
                      [t.target for t in ts], [t.p for t in ts], [t.cost.c for t in ts], [t.d for t in ts],
                      0.0 if docked else numbers.value,
                      docked_payoffs(numbers, uncovered) if docked else numbers.payoffs).score
