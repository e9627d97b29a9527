"""`pcsc gate --suggest`: the smallest edits that would discharge a refused route's
uncovered material changes, each checked by recompiling the edited route.

For an uncovered change, each obligation that covers its field is a way to discharge
it, when every `require` line that failed can be met by an edit PCSC knows how to
make:

- the obligation is not listed in the transition's `discharges`: list it;
- `require measured(delta)` fails: add to the threshold a bound that reaches each
  claimed change's target (`field >= target` for a rise, `<=` for a fall);
- `require budget >= floor(delta)` fails: add a cost item `floor_gap` that brings the
  budget up to the delta-indexed floor of the obligation's changes;
- `require evidence(FILTER) >= N` (or `> N`, or `evidence(FILTER)` alone) fails: add
  the evidence items it lacks, of the lowest admissible tier the filter accepts,
  supporting the transition: placeholders (captured at as_of, weight 0, a `TODO`
  source and excerpt) for the author to replace with the real evidence;
- given the earlier version of the route (`--was`), a transition that now ends where a
  transition it deleted ended (a splice): restore the deleted transition(s), the
  states between and the evidence links to them, so the transition ends where it did.

A failing line of another kind (a missing `asset`, `grounded(asset)`) needs the
author, not an edit: that obligation is not offered. A suggestion is a complete edit set: the
edits for its change, with those of the first way for every other uncovered change,
so that applying it alone releases the route. Every suggestion is recompiled before
it is shown; one that does not come out `released` is dropped. Its effect on the score
is the released score of the edited route against the route's ungated score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import attrs

from pcsc.compiler.session import Compiled, Session
from pcsc.coverage import DeltaCoverage, discharge_route
from pcsc.coverage.discharge import _evidence_names, _TransitionContext, admitting_classes, bounds_target
from pcsc.lang.interp import EvalError, truthy
from pcsc.lang.ir import CostItem, Evidence, Route, Transition
from pcsc.lang.ir import expr as ex
from pcsc.lang.printer import number, route_to_text, value
from pcsc.score.cost import deltas, piecewise_floor

GAP_ITEM = "floor_gap"


KINDS = ("restore", "discharges", "threshold", "budget", "evidence")


@attrs.frozen(order=True)
class Edit:
    kind: str  # one of KINDS
    transition: str
    subject: str  # the obligation, the field, the evidence item, or the deleted transitions (comma-separated)
    amount: float = 0.0  # the threshold's bound, the budget to add, or the evidence's tier
    op: str = ""  # for a threshold: >=, <= or ==; for a restore, the state the transition ends at again

    def describe(self, route: Route) -> str:
        if self.kind == "restore":
            names = ", ".join(f"`{n}`" for n in self.subject.split(","))
            return (f"restore the deleted transition{'s' if ',' in self.subject else ''} {names} from the earlier "
                    f"version: `{self.transition}` ends at `{self.op}` again")
        if self.kind == "discharges":
            return f"list `{self.subject}` in the `discharges` of `{self.transition}`"
        if self.kind == "threshold":
            bound = _bound_text(route, self.subject, self.amount, self.op)
            where = f"raise the threshold of `{self.transition}` to the claimed target"
            return f"{where}: add `{self.subject} {self.op} {bound}`"
        if self.kind == "evidence":
            return (f"add evidence of tier {int(self.amount)} supporting `{self.transition}`: item `{self.subject}`, "
                    "a placeholder (weight 0) for the author to replace with the real source, excerpt and weight")
        where = f"add budget to `{self.transition}` to meet the floor"
        return f"{where}: cost item `{GAP_ITEM}  1 * {number(self.amount)} usd`"


@attrs.frozen
class Suggestion:
    route: str
    file: str
    changes: tuple[str, ...]  # `transition.field` of the uncovered changes it was made for
    edits: tuple[Edit, ...]
    descriptions: tuple[str, ...]
    text: str  # the edited route, as .route text
    score_before: float  # the ungated score of the route as written
    score_after: float  # the released score of the edited route
    verdict: str


def _bound_text(route: Route, field: str, bound: float, op: str) -> str:
    decl = next(f for f in route.fields if f.name == field)
    if decl.type == "bool":
        return "true" if bound else "false"
    return value(bound, decl.type)


def _transition(route: Route, name: str) -> Transition:
    return next(t for t in route.transitions if t.name == name)


def ways(c: Compiled, u: DeltaCoverage, was: Route | None = None) -> list[tuple[Edit, ...]]:
    """Each way to discharge ``u``: restoring what a splice deleted (given the earlier
    version ``was``), then the edits for each covering obligation."""
    route, policy = c.route, c.policy.policy
    t = _transition(route, u.transition)
    out: list[tuple[Edit, ...]] = []
    restore = _restore(route, was, t) if was is not None else None
    if restore is not None:
        out.append((restore,))
    named = {e.name for e in route.evidence}  # a placeholder's name must be new
    for attempt in u.tried:
        o = next(x for x in route.obligations if x.name == attempt.obligation)
        scoped = [d for d in deltas(route, t) if d.material and d.field in o.covers]
        edits: list[Edit] = []
        if not attempt.claimed:
            edits.append(Edit("discharges", t.name, o.name))
        fixable = True
        for failed in attempt.failed:
            text = " ".join(failed.require.split())
            if text == "require measured(delta)":
                for d in scoped:
                    if bounds_target(t.threshold, d):
                        continue
                    if isinstance(d.target, bool) or isinstance(d.source, bool):
                        edits.append(Edit("threshold", t.name, d.field, float(d.target), "=="))
                    else:
                        op = ">=" if d.target > d.source else "<="
                        edits.append(Edit("threshold", t.name, d.field, float(d.target), op))
            elif text == "require budget >= floor(delta)":
                floor = 0.0
                for d in scoped:
                    table = policy.floors.table(t.ref_class, d.field)
                    if table is not None:
                        floor += piecewise_floor(table.points, d.magnitude)
                budget = sum(i.count * i.unit_cost for i in t.cost)
                edits.append(Edit("budget", t.name, "floor", float(math.ceil(floor - budget))))
            else:
                req = next((r for r in o.requires if r.span == failed.span), None)
                added = _evidence_edits(c, t, req.expr, named) if req is not None else None
                if added is None:
                    fixable = False
                else:
                    edits += added
        if fixable:
            out.append(tuple(edits))
    return out


def _restore(route: Route, was: Route, t: Transition) -> Edit | None:
    """Restoring the transitions of ``was`` that ``t`` absorbed: ``t`` is in both
    versions, starts where it did, and now ends where one of the consecutive
    transitions after it in ``was``, all deleted, ended."""
    now = {x.name for x in route.transitions}
    order = list(was.transitions)
    i = next((k for k, x in enumerate(order) if x.name == t.name), None)
    if i is None or order[i].source != t.source or order[i].target == t.target:
        return None
    absorbed = []
    for x in order[i + 1:]:
        if x.name in now:
            return None
        absorbed.append(x.name)
        if x.target == t.target:
            return Edit("restore", t.name, ",".join(absorbed), 0.0, order[i].target)
    return None


_TIERS = range(0, 10)


def _evidence_edits(c: Compiled, t: Transition, e: ex.Expr, taken: set[str]) -> list[Edit] | None:
    """The placeholder evidence items that would make ``require e`` hold, when ``e`` is
    `evidence(FILTER) >= N`, `> N` or `evidence(FILTER)`; None for any other line."""
    count: float
    if isinstance(e, ex.Call) and e.func == "evidence":
        call, count = e, 1
    elif (isinstance(e, ex.Compare) and e.op in (">=", ">") and isinstance(e.left, ex.Call)
          and e.left.func == "evidence" and isinstance(e.right, ex.Number)):
        call, count = e.left, e.right.value if e.op == ">=" else math.floor(e.right.value) + 1
    else:
        return None
    policy = c.policy.policy
    ctx = _TransitionContext(c.route, t, (), policy)
    it = ctx.interpreter(())
    try:
        have = it.eval(call)
    except EvalError:
        return None
    lacking = math.ceil(count) - (len(have) if isinstance(have, list) else 0)
    if lacking <= 0 or lacking > 10:
        return None
    for tier in _TIERS:
        if tier < policy.evidence.min_tier:
            continue
        stub = _placeholder(c.route, t, "candidate", tier)
        try:
            if call.args and not truthy(it.child(_evidence_names(stub)).eval(call.args[0])):
                continue
        except EvalError:
            return None
        out = []
        for k in range(1, lacking + 1):
            name = f"needed_{t.name}_tier{tier}" + (f"_{k}" if lacking > 1 else "")
            while name in taken:
                name += "_"
            taken = taken | {name}
            out.append(Edit("evidence", t.name, name, float(tier)))
        return out
    return None


def _placeholder(route: Route, t: Transition, name: str, tier: int) -> Evidence:
    return Evidence(
        name, f"TODO: the source of the tier-{tier} evidence for {t.name}", route.as_of, tier, 0.0, (t.name,), (),
        f"TODO: quote the evidence that supports {t.name} ({name})", False, t.span,
    )


def _order(e: Edit) -> tuple[int, str, str, float]:
    return (KINDS.index(e.kind), e.transition, e.subject, e.amount)


def _restored(route: Route, was: Route, edits: Sequence[Edit]) -> Route:
    """``route`` with the transitions the restore edits name put back from ``was``,
    each retargeted transition ending where it did, and the states between."""
    restores = {e.transition: e for e in edits if e.kind == "restore"}
    old = {x.name: x for x in was.transitions}
    transitions: list[Transition] = []
    for t in route.transitions:
        e = restores.get(t.name)
        if e is None:
            transitions.append(t)
            continue
        transitions.append(attrs.evolve(t, target=e.op))
        transitions += [old[n] for n in e.subject.split(",")]
    needed = {x.source for x in transitions} | {x.target for x in transitions}
    have = {s.name for s in route.states}
    states = list(route.states)
    for s in was.states:
        if s.name in needed and s.name not in have:
            # in the earlier version's place: after the state it followed there
            before = [x.name for x in was.states[: was.states.index(s)]]
            at = max((i + 1 for i, x in enumerate(states) if x.name in before), default=0)
            states.insert(at, s)
            have.add(s.name)
    # the evidence links to the restored transitions, as the earlier version had them
    earlier = {e.name: e for e in was.evidence}
    restored = {n for e in restores.values() for n in e.subject.split(",")}

    def relinked(e: Evidence) -> Evidence:
        before = earlier.get(e.name)
        if before is None:
            return e
        supports = e.supports + tuple(n for n in before.supports if n in restored and n not in e.supports)
        contradicts = e.contradicts + tuple(n for n in before.contradicts if n in restored and n not in e.contradicts)
        return attrs.evolve(e, supports=supports, contradicts=contradicts)

    evidence = tuple(relinked(e) for e in route.evidence)
    return attrs.evolve(route, transitions=tuple(transitions), states=tuple(states), evidence=evidence)


def apply_edits(route: Route, edits: Sequence[Edit], was: Route | None = None) -> Route:
    """``route`` with ``edits`` made (budgets to one transition add up once, the largest)."""
    if was is not None and any(e.kind == "restore" for e in edits):
        route = _restored(route, was, edits)
    added = [_placeholder(route, _transition(route, e.transition), e.subject, int(e.amount))
             for e in edits if e.kind == "evidence"]
    if added:
        route = attrs.evolve(route, evidence=(*route.evidence, *added))
    transitions = []
    for t in route.transitions:
        mine = [e for e in edits if e.transition == t.name]
        discharges = t.discharges + tuple(e.subject for e in mine if e.kind == "discharges" and
                                          e.subject not in t.discharges)
        threshold = t.threshold_text
        for e in mine:
            if e.kind == "threshold":
                conjunct = f"{e.subject} {e.op} {_bound_text(route, e.subject, e.amount, e.op)}"
                threshold = conjunct if threshold is None else f"{threshold} and {conjunct}"
        cost = t.cost
        gaps = [e.amount for e in mine if e.kind == "budget"]
        if gaps:
            cost = (*cost, CostItem(GAP_ITEM, 1.0, max(gaps), t.span))
        transitions.append(attrs.evolve(t, discharges=discharges, threshold_text=threshold, cost=cost))
    return attrs.evolve(route, transitions=tuple(transitions))


def suggest(c: Compiled, session: Session, was: Route | None = None) -> list[Suggestion]:
    """The checked suggestions for a route GATE refuses; none for any other route.
    ``was`` is an earlier version of the route, for restoring what it deleted."""
    if c.decision.verdict != "suspend-and-ask":
        return []
    coverage = c.coverage if c.coverage is not None else discharge_route(c.route, c.policy.policy)
    uncovered = coverage.uncovered
    options = {(u.transition, u.delta.field): ways(c, u, was) for u in uncovered}
    # a restore puts the deleted transitions back whole: it is offered on its own (with
    # the first edit way of each change it does not touch), not mixed with edits
    restores = {k: [w for w in ws if w[0].kind == "restore"] for k, ws in options.items()}
    edits_only = {k: [w for w in ws if w[0].kind != "restore"] for k, ws in options.items()}
    found: dict[tuple[Edit, ...], list[str]] = {}
    if any(restores.values()) and all(restores[k] or edits_only[k] for k in options):
        union = {e for k in options for e in (restores[k] or edits_only[k])[0]}
        found[tuple(sorted(union, key=_order))] = [f"{t}.{f}" for (t, f) in options if restores[t, f]]
    if all(edits_only.values()):  # else some change needs the author or a restore
        for u in uncovered:
            key = (u.transition, u.delta.field)
            for way in edits_only[key]:
                union = set(way)
                for other, ws in edits_only.items():
                    if other != key and not any(set(w) <= union for w in ws):
                        union |= set(ws[0])
                chosen = tuple(sorted(union, key=_order))
                found.setdefault(chosen, []).append(f"{u.transition}.{u.delta.field}")
    out: list[Suggestion] = []
    for edits, changes in sorted(found.items(), key=lambda kv: (kv[0][0].kind != "restore", len(kv[0]), kv[0])):
        checked = check(c, session, edits, was)
        if checked is None:
            continue
        text, score, verdict = checked
        out.append(Suggestion(c.route.name, c.route.file, tuple(dict.fromkeys(changes)), edits,
                              tuple(e.describe(c.route) for e in edits), text, c.numbers.score, score, verdict))
    return out


@attrs.frozen
class Admitting:
    """For a transition whose class does not admit what it claims: the classes of the
    route's policy that would (listed for the author to judge; never applied as an edit,
    since a class is a claim about the step, not a repair of it)."""

    route: str
    transition: str
    ref_class: str
    classes: tuple[str, ...]


def admitting(c: Compiled) -> list[Admitting]:
    coverage = c.coverage if c.coverage is not None else discharge_route(c.route, c.policy.policy)
    by_name = {t.name: t for t in c.route.transitions}
    out = []
    for name in dict.fromkeys(a.transition for a in coverage.admission):
        t = by_name[name]
        found = [k for k in admitting_classes(c.route, t, c.policy.policy) if k != t.ref_class]
        out.append(Admitting(c.route.name, name, t.ref_class, tuple(found)))
    return out


def check(
    c: Compiled, session: Session, edits: Sequence[Edit], was: Route | None = None
) -> tuple[str, float, str] | None:
    """Recompile the edited route; its text, released score and verdict when it is released."""
    edited = apply_edits(c.route, edits, was)
    text = route_to_text(edited, f"Edited by pcsc gate --suggest from {c.route.file}.")
    child = session.for_variants_of(c.route)
    routes = child.routes_from_text(text, c.route.file, Path(c.route.file).parent)
    if child.diags.has_errors or len(routes) != 1:
        return None
    compiled = child.compile_route(routes[0])
    if compiled is None or compiled.decision.verdict != "released" or compiled.decision.score is None:
        return None
    return text, compiled.decision.score, compiled.decision.verdict
