"""`pcsc gate --suggest`: the smallest edits that would discharge a refused route's
uncovered material changes, each checked by recompiling the edited route.

For an uncovered change, each obligation that covers its field is a way to discharge
it, when every `require` line that failed can be met by an edit PCSC knows how to
make:

- the obligation is not listed in the transition's `discharges`: list it;
- `require measured(delta)` fails: add to the threshold a bound that reaches each
  claimed change's target (`field >= target` for a rise, `<=` for a fall);
- `require budget >= floor(delta)` fails: add a cost item `floor_gap` that brings the
  budget up to the delta-indexed floor of the obligation's changes.

A failing line of another kind (a missing `asset`, evidence) needs the author, not
an edit: that obligation is not offered. A suggestion is a complete edit set: the
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

from pcsc.coverage import DeltaCoverage, discharge_route
from pcsc.coverage.discharge import bounds_target
from pcsc.ir import CostItem, Route, Transition
from pcsc.pipeline import Compiled, Session
from pcsc.printer import number, route_to_text, value
from pcsc.score.cost import deltas, piecewise_floor

GAP_ITEM = "floor_gap"


@attrs.frozen(order=True)
class Edit:
    kind: str  # "discharges" | "threshold" | "budget"
    transition: str
    subject: str  # the obligation, or the field
    amount: float = 0.0  # the threshold's bound, or the budget to add
    op: str = ""  # for a threshold: >=, <= or ==

    def describe(self, route: Route) -> str:
        if self.kind == "discharges":
            return f"list `{self.subject}` in the `discharges` of `{self.transition}`"
        if self.kind == "threshold":
            bound = _bound_text(route, self.subject, self.amount, self.op)
            where = f"raise the threshold of `{self.transition}` to the claimed target"
            return f"{where}: add `{self.subject} {self.op} {bound}`"
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


def ways(c: Compiled, u: DeltaCoverage) -> list[tuple[Edit, ...]]:
    """Each way to discharge ``u``: the edits for one covering obligation."""
    route, policy = c.route, c.policy.policy
    t = _transition(route, u.transition)
    out: list[tuple[Edit, ...]] = []
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
                    table = policy.floors.delta.get(d.field)
                    if table is not None:
                        floor += piecewise_floor(table.points, d.magnitude)
                budget = sum(i.count * i.unit_cost for i in t.cost)
                edits.append(Edit("budget", t.name, "floor", float(math.ceil(floor - budget))))
            else:
                fixable = False
        if fixable:
            out.append(tuple(edits))
    return out


def _order(e: Edit) -> tuple[int, str, str, float]:
    return (["discharges", "threshold", "budget"].index(e.kind), e.transition, e.subject, e.amount)


def apply_edits(route: Route, edits: Sequence[Edit]) -> Route:
    """``route`` with ``edits`` made (budgets to one transition add up once, the largest)."""
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


def suggest(c: Compiled, session: Session) -> list[Suggestion]:
    """The checked suggestions for a route GATE refuses; none for any other route."""
    if c.decision.verdict != "suspend-and-ask":
        return []
    coverage = c.coverage if c.coverage is not None else discharge_route(c.route, c.policy.policy)
    uncovered = coverage.uncovered
    options = {(u.transition, u.delta.field): ways(c, u) for u in uncovered}
    if any(not w for w in options.values()):
        return []  # some change needs the author: no edit set releases the route
    found: dict[tuple[Edit, ...], list[str]] = {}
    for u in uncovered:
        key = (u.transition, u.delta.field)
        for way in options[key]:
            union = set(way)
            for other, ws in options.items():
                if other != key and not any(set(w) <= union for w in ws):
                    union |= set(ws[0])
            chosen = tuple(sorted(union, key=_order))
            found.setdefault(chosen, []).append(f"{u.transition}.{u.delta.field}")
    out: list[Suggestion] = []
    for edits, changes in sorted(found.items(), key=lambda kv: (len(kv[0]), kv[0])):
        checked = check(c, session, edits)
        if checked is None:
            continue
        text, score, verdict = checked
        out.append(Suggestion(c.route.name, c.route.file, tuple(dict.fromkeys(changes)), edits,
                              tuple(e.describe(c.route) for e in edits), text, c.numbers.score, score, verdict))
    return out


def check(c: Compiled, session: Session, edits: Sequence[Edit]) -> tuple[str, float, str] | None:
    """Recompile the edited route; its text, released score and verdict when it is released."""
    edited = apply_edits(c.route, edits)
    text = route_to_text(edited, f"Edited by pcsc gate --suggest from {c.route.file}.")
    child = session.for_variants_of(c.route)
    routes = child.routes_from_text(text, c.route.file, Path(c.route.file).parent)
    if child.diags.has_errors or len(routes) != 1:
        return None
    compiled = child.compile_route(routes[0])
    if compiled is None or compiled.decision.verdict != "released" or compiled.decision.score is None:
        return None
    return text, compiled.decision.score, compiled.decision.verdict
