"""Resolve each frozen milestone against outcome observations (docs/forecast.md).

Pure and deterministic: the result depends only on the frozen packets, the outcomes
and the resolution date passed in. The rules are stated in docs/outcomes.md; in short,
for transition k of a route frozen at ``as_of`` and due at ``due``:

- only observations dated strictly after ``as_of`` and on or before the resolution date
  count; the state at a date carries each field's latest value forward;
- the threshold is watched over (as_of, due], the kill over the transition's own
  planned window (previous due, due] (as_of for the first transition); a kill with
  `by` (the packet's `kill_by`) holds only on an observation, dated on or after that
  date, of one of the fields it names;
- conditions are decided in three-valued logic: a comparison naming a field not yet
  observed is unknown, `and` is false once a part is false, `or` true once a part is;
- positive when the threshold holds first (a tie with the kill goes to the threshold),
  negative when the kill holds first, or the due date passed with the threshold decided
  false (never true) on an observation of one of its fields in the transition's own
  window, unresolved before the due date, censored otherwise (no due date, no
  threshold, no decidable observation in the window, or not reached: the preceding
  transition resolved negative and this threshold was not met in time).
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from pcsc.base.humanize import number
from pcsc.diagnostics.messages import (
    E702_DID_YOU_MEAN,
    E702_ITS_FIELDS,
    E702_NEGATIVE_COUNT,
    E702_NO_SUCH_FIELD,
    E702_NOT_A_BOOL,
    E702_NOT_A_NUMBER,
    E721_CANNOT_READ_CONDITION,
    E721_MISSING,
    E721_NO_ROUTE_NAME,
    E721_NO_TRANSITION_NAME,
    E721_NOT_A_DATE,
    E721_NOT_A_DATE_OR_NULL,
    E721_NOT_A_PACKET,
    E721_NOT_AN_ARRAY,
    E721_NOT_AN_EXPRESSION_TEXT,
    E721_NOT_AN_OBJECT,
    E721_NOT_FIELDS,
    E721_NOT_WINDOWS,
    W701_LABELLED_BEFORE_AS_OF,
    W701_NO_SUCH_ROUTE,
    W701_OBSERVED_BEFORE_AS_OF,
    W701_RATIO_OVER_ONE,
    phrase,
)
from pcsc.diagnostics.model import Diagnostics
from pcsc.forecast.outcomes import Label, LabelOutcome, Observation, Outcomes, Value, plain_value
from pcsc.lang.interp import BASE_FUNCTIONS, EvalError, Interpreter, truthy
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.visit import Visitor, walk

Status = Literal["positive", "negative", "unresolved", "censored"]
#: The fixed windows of a packet frozen before packets carried the policy's (days after as_of).
DEFAULT_WINDOWS: tuple[int, ...] = (30, 90, 180)
STATUSES: tuple[Status, ...] = ("positive", "negative", "unresolved", "censored")


@attrs.frozen
class MilestoneResult:
    """The resolution of one transition's frozen milestone. ``as_of`` is the frozen
    route's as_of (one route may be frozen more than once)."""

    route: str
    transition: str
    due: dt.date | None
    status: Status
    decided_on: dt.date | None
    reason: str
    as_of: dt.date

    def to_json(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "transition": self.transition,
            "as_of": self.as_of.isoformat(),
            "due": None if self.due is None else self.due.isoformat(),
            "status": self.status,
            "decided_on": None if self.decided_on is None else self.decided_on.isoformat(),
            "reason": self.reason,
        }


@attrs.frozen
class RouteOutcome:
    """A route-level outcome: the latest label on or before the resolution date."""

    route: str
    label: LabelOutcome
    date: dt.date
    bucket: str | None = None
    covariates: tuple[tuple[str, float | bool | str], ...] = ()  # the label's, sorted by name

    def to_json(self) -> dict[str, Any]:
        extra = {"covariates": dict(self.covariates)} if self.covariates else {}
        return {"route": self.route, "label": self.label, "date": self.date.isoformat(), "bucket": self.bucket,
                **extra}


class PacketError(Exception):
    """Frozen packets that cannot be resolved; ``messages`` are path-addressed."""

    def __init__(self, path: str, messages: list[str]) -> None:
        super().__init__("; ".join(f"{path}: {m}" for m in messages))
        self.path = path
        self.messages = messages


# ---------------------------------------------------------------------- frozen packets
@attrs.frozen
class Condition:
    """A threshold or kill expression and the fields it names."""

    text: str
    expr: ex.Expr
    fields: tuple[str, ...]  # in order of first appearance


@attrs.frozen
class FrozenTransition:
    name: str
    due: dt.date | None
    threshold: Condition | None
    kill: Condition | None
    source: str | None = None  # the packet's `from` and `to`: a graph route's transitions
    target: str | None = None  # follow their sources, not the previous transition in the list
    kill_by: dt.date | None = None  # the packet's `kill_by`: the kill applies from this date on


@attrs.frozen
class FrozenRoute:
    """What resolution needs of one route of a frozen packet; ``where`` addresses it."""

    route: str
    as_of: dt.date
    fields: tuple[tuple[str, str], ...] | None  # (name, type); None when the packet predates `fields`
    transitions: tuple[FrozenTransition, ...]
    where: str
    windows: tuple[int, ...] = (30, 90, 180)  # the policy's fixed windows, days after as_of
    graph: bool = False  # the packet has `graph`: the route forks and joins (docs/graphs.md)


def frozen_routes(doc: Any, path: str = "packets") -> list[FrozenRoute]:
    """The routes of a `pcsc compile --format json` output, of one route packet, of a
    ledger entry's payload (``{"packet": <route packet>, ...}``), or of a list of these.
    Raises PacketError listing every problem."""
    problems: list[str] = []
    routes: list[FrozenRoute] = []
    _collect(doc, "", routes, problems)
    if problems:
        raise PacketError(path, problems)
    return routes


def _collect(doc: Any, where: str, routes: list[FrozenRoute], problems: list[str]) -> None:
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            _collect(item, f"{where}[{i}]", routes, problems)
        return
    if isinstance(doc, Mapping) and "routes" in doc:
        items = doc["routes"]
        if not isinstance(items, list):
            problems.append(phrase(E721_NOT_AN_ARRAY, where=_at(where, "routes")))
            return
        for j, item in enumerate(items):
            route = _route_packet(item, _at(where, f"routes[{j}]"), problems)
            if route is not None:
                routes.append(route)
        return
    if isinstance(doc, Mapping) and "packet" in doc and "route" not in doc:  # a ledger entry's payload
        route = _route_packet(doc["packet"], _at(where, "packet"), problems)
        if route is not None:
            routes.append(route)
        return
    if isinstance(doc, Mapping) and "route" in doc:
        route = _route_packet(doc, where or "(packet)", problems)
        if route is not None:
            routes.append(route)
        return
    problems.append(phrase(E721_NOT_A_PACKET, where=where or "(top)"))


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where and not key.startswith("[") else f"{where}{key}"


def _route_packet(doc: Any, where: str, problems: list[str]) -> FrozenRoute | None:
    if not isinstance(doc, Mapping):
        problems.append(phrase(E721_NOT_AN_OBJECT, where=where))
        return None
    before = len(problems)
    name = doc.get("route")
    if not isinstance(name, str) or not name:
        problems.append(phrase(E721_NO_ROUTE_NAME, where=_at(where, "route")))
    as_of = _iso(doc, "as_of", where, problems, nullable=False)
    fields: tuple[tuple[str, str], ...] | None = None
    if "fields" in doc:
        raw_fields = doc["fields"]
        if not isinstance(raw_fields, list) or not all(
            isinstance(f, Mapping) and isinstance(f.get("name"), str) and isinstance(f.get("type"), str)
            for f in raw_fields
        ):
            problems.append(phrase(E721_NOT_FIELDS, where=_at(where, "fields")))
        else:
            fields = tuple((f["name"], f["type"]) for f in raw_fields)
    raw = doc.get("transitions")
    transitions: list[FrozenTransition] = []
    if not isinstance(raw, list):
        problems.append(phrase(E721_NOT_AN_ARRAY, where=_at(where, "transitions")))
    else:
        for k, t in enumerate(raw):
            tr = _transition(t, _at(where, f"transitions[{k}]"), problems)
            if tr is not None:
                transitions.append(tr)
    windows = DEFAULT_WINDOWS
    if "windows" in doc:
        raw_windows = doc["windows"]
        if not isinstance(raw_windows, list) or not all(
            isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in raw_windows
        ):
            problems.append(phrase(E721_NOT_WINDOWS, where=_at(where, "windows")))
        else:
            windows = tuple(raw_windows)
    if len(problems) > before or not isinstance(name, str) or as_of is None:
        return None
    return FrozenRoute(name, as_of, fields, tuple(transitions), where, windows, isinstance(doc.get("graph"), Mapping))


def _iso(doc: Mapping[str, Any], key: str, where: str, problems: list[str], *, nullable: bool) -> dt.date | None:
    if key not in doc:
        problems.append(phrase(E721_MISSING, where=_at(where, key)))
        return None
    value = doc[key]
    if value is None and nullable:
        return None
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    if nullable:
        problems.append(phrase(E721_NOT_A_DATE_OR_NULL, where=_at(where, key)))
    else:
        problems.append(phrase(E721_NOT_A_DATE, where=_at(where, key)))
    return None


def _transition(doc: Any, where: str, problems: list[str]) -> FrozenTransition | None:
    if not isinstance(doc, Mapping):
        problems.append(phrase(E721_NOT_AN_OBJECT, where=where))
        return None
    before = len(problems)
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        problems.append(phrase(E721_NO_TRANSITION_NAME, where=_at(where, "name")))
    due = _iso(doc, "due", where, problems, nullable=True)
    threshold = _condition(doc, "threshold", where, problems)
    kill = _condition(doc, "kill", where, problems)
    kill_by = _iso(doc, "kill_by", where, problems, nullable=True) if "kill_by" in doc else None
    if len(problems) > before or not isinstance(name, str):
        return None
    source, target = doc.get("from"), doc.get("to")
    return FrozenTransition(
        name, due, threshold, kill,
        source if isinstance(source, str) else None,
        target if isinstance(target, str) else None,
        kill_by,
    )


def _condition(doc: Mapping[str, Any], key: str, where: str, problems: list[str]) -> Condition | None:
    from pcsc.lang.lower.expr import lower_expression
    from pcsc.lang.syntax import parse_expression

    here = _at(where, key)
    if key not in doc:
        problems.append(phrase(E721_MISSING, where=here))
        return None
    text = doc[key]
    if text is None:
        return None
    if not isinstance(text, str):
        problems.append(phrase(E721_NOT_AN_EXPRESSION_TEXT, where=here))
        return None
    diags = Diagnostics()
    node = parse_expression(text, here, diags)
    expr = lower_expression(node, diags) if node is not None else None
    if expr is None or diags.has_errors:
        first = next((d.message for d in diags if d.severity == "error"), "not an expression")
        problems.append(phrase(E721_CANNOT_READ_CONDITION, where=here, text=text, problem=first))
        return None
    return Condition(text, expr, tuple(_names_ordered(expr)))


def names_in(e: ex.Expr) -> set[str]:
    """The names an expression reads (function names are not names)."""
    return set(_names_ordered(e))


def _names_ordered(e: ex.Expr) -> dict[str, None]:
    """The names an expression reads, in order of first appearance."""
    return {node.name: None for node in walk(e) if isinstance(node, ex.Name)}


# ---------------------------------------------------------------------- three-valued evaluation
def decide(e: ex.Expr, state: Mapping[str, Value], errors: list[str]) -> bool | None:
    """True, False, or None (unknown: a field it needs has not been observed).

    `and`, `or` and `not` follow Kleene's logic; every other node is evaluated by the
    interpreter once all the names it reads are known."""
    return _Decide(state, errors).visit(e)


class _Decide(Visitor["bool | None"]):
    def __init__(self, state: Mapping[str, Value], errors: list[str]) -> None:
        self.state = state
        self.errors = errors

    def visit_Logic(self, e: ex.Logic) -> bool | None:
        parts = [self.visit(o) for o in e.operands]
        if e.op == "and":
            return False if False in parts else None if None in parts else True
        return True if True in parts else None if None in parts else False

    def visit_Not(self, e: ex.Not) -> bool | None:
        inner = self.visit(e.operand)
        return None if inner is None else not inner

    def generic_visit(self, e: ex.Expr) -> bool | None:
        if not names_in(e) <= self.state.keys():
            return None
        try:
            return truthy(Interpreter(self.state, BASE_FUNCTIONS).eval(e))
        except EvalError as exc:
            if exc.message not in self.errors:
                self.errors.append(exc.message)
            return None


# ---------------------------------------------------------------------- timeline and scans
Timeline = list[tuple[dt.date, dict[str, Value]]]
Known = dict[str, tuple[Value, dt.date]]  # field -> (latest value, date observed)


def timeline_of(observations: Iterable[Observation], route: str, until: dt.date) -> Timeline:
    """The route's observations dated on or before ``until``, merged per date, in date order."""
    by_date: dict[dt.date, dict[str, Value]] = {}
    for obs in observations:
        if obs.route == route and obs.date <= until:
            by_date.setdefault(obs.date, {}).update(obs.values)
    return sorted(by_date.items())


@attrs.frozen
class _Scan:
    hit: dt.date | None  # the first date the condition held
    hit_state: Known
    last: tuple[dt.date, Known] | None  # the last date it was decided false (before any hit)
    last_own: tuple[dt.date, Known] | None  # the same, on a date after `own_from` that observed one of its fields
    observed_own: bool  # any observation of the route after `own_from`
    known: frozenset[str]  # fields known at the end of the scan
    errors: tuple[str, ...]


def _scan(cond: Condition, timeline: Timeline, start: dt.date, end: dt.date, own_from: dt.date | None = None,
          armed: dt.date | None = None) -> _Scan:
    """Walk the observations dated in (start, end], carrying values forward. With
    ``armed`` (a kill's `by` date), the condition holds only on a day on or after it
    that observes one of its fields: an earlier reading alone never decides it."""
    own_from = start if own_from is None else own_from
    known: Known = {}
    last: tuple[dt.date, Known] | None = None
    last_own: tuple[dt.date, Known] | None = None
    observed_own = False
    errors: list[str] = []
    for day, values in timeline:
        if day <= start:
            continue
        if day > end:
            break
        own = day > own_from
        observed_own = observed_own or own
        for field, value in values.items():
            known[field] = (value, day)
        if armed is not None and (day < armed or not any(f in values for f in cond.fields)):
            continue
        verdict = decide(cond.expr, {f: v for f, (v, _) in known.items()}, errors)
        if verdict is True:
            return _Scan(day, dict(known), last, last_own, observed_own, frozenset(known), tuple(errors))
        if verdict is False:
            last = (day, dict(known))
            if own and any(f in values for f in cond.fields):
                last_own = last
    return _Scan(None, {}, last, last_own, observed_own, frozenset(known), tuple(errors))


def _state_text(cond: Condition, known: Known, on: dt.date) -> str:
    parts = []
    for field in cond.fields:
        if field in known:
            value, seen = known[field]
            parts.append(f"{field} = {plain_value(value)}" + ("" if seen == on else f" (observed {seen.isoformat()})"))
        else:
            parts.append(f"{field} unknown")
    return ", ".join(parts)


# ---------------------------------------------------------------------- resolution
def resolve_route(route: FrozenRoute, observations: Iterable[Observation], as_of: dt.date) -> list[MilestoneResult]:
    """Resolve every transition of one frozen route as of the resolution date ``as_of``."""
    timeline = timeline_of(observations, route.route, as_of)
    results: list[MilestoneResult] = []
    if _is_graph(route):
        return _resolve_graph(route, timeline, as_of)
    reached = True  # not reached: the preceding transition resolved negative, or was itself not reached
    for k, tr in enumerate(route.transitions):
        previous = route.transitions[k - 1] if k > 0 else None
        # the kill is watched over the transition's own planned window: from the previous due date
        start = route.as_of if previous is None or previous.due is None else max(route.as_of, previous.due)
        result = _resolve_one(route, tr, timeline, start, as_of, None if reached else results[-1])
        results.append(result)
        reached = result.status == "positive" or (reached and result.status != "negative")
    return results


def _is_graph(route: FrozenRoute) -> bool:
    return route.graph and all(t.source is not None and t.target is not None for t in route.transitions)


def _resolve_graph(route: FrozenRoute, timeline: Timeline, as_of: dt.date) -> list[MilestoneResult]:
    """A route that forks and joins (docs/graphs.md): a transition's window starts at the
    latest due date of the transitions into its source, and it is not reached when any
    of them resolved negative or was not reached (the packet lists them in topological order)."""
    results: list[MilestoneResult] = []
    reached: dict[str, bool] = {}
    for tr in route.transitions:
        before = [(t, r) for t, r in zip(route.transitions, results, strict=False) if t.target == tr.source]
        dues = [t.due for t, _ in before if t.due is not None]
        start = max([route.as_of, *dues])
        blocked = next((r for t, r in before if not reached[t.name]), None)
        result = _resolve_one(route, tr, timeline, start, as_of, blocked)
        results.append(result)
        ok = all(reached[t.name] for t, _ in before)
        reached[tr.name] = result.status == "positive" or (ok and result.status != "negative")
    return results


def _resolve_one(
    route: FrozenRoute,
    tr: FrozenTransition,
    timeline: Timeline,
    start: dt.date,
    today: dt.date,
    blocked_by: MilestoneResult | None,
) -> MilestoneResult:
    def result(status: Status, decided_on: dt.date | None, reason: str) -> MilestoneResult:
        return MilestoneResult(route.route, tr.name, tr.due, status, decided_on, reason, route.as_of)

    if tr.due is None:
        return result("censored", None, "no due date: this transition or an earlier one states no horizon")
    due = tr.due
    if tr.threshold is None:
        return result("censored", due if today >= due else None, "the transition states no threshold")
    end = min(due, today)
    met = _scan(tr.threshold, timeline, route.as_of, end, own_from=start)
    thr = f"threshold `{tr.threshold.text}`"
    killed: _Scan | None = None
    if tr.kill is not None and blocked_by is None:
        killed = _scan(tr.kill, timeline, start, end, armed=tr.kill_by)
    kill_day = killed.hit if killed is not None else None

    if met.hit is not None and (kill_day is None or met.hit <= kill_day):
        tie = " (the kill held the same day; the threshold wins)" if kill_day == met.hit else ""
        state = _state_text(tr.threshold, met.hit_state, met.hit)
        return result("positive", met.hit, f"{thr} met on {met.hit}: {state}{tie}")
    if blocked_by is not None:
        how = f"resolved negative on {blocked_by.decided_on}" if blocked_by.status == "negative" else "was not reached"
        if today < due:
            return result(
                "unresolved",
                None,
                f"not yet due ({due}); the preceding transition `{blocked_by.transition}` {how}, "
                "so only meeting the threshold in time can resolve it",
            )
        return result(
            "censored", due, f"not reached: the preceding transition `{blocked_by.transition}` {how}; {thr} not met"
        )
    if killed is not None and kill_day is not None and tr.kill is not None:
        later = f"; the threshold was met only on {met.hit}" if met.hit is not None else ""
        return result(
            "negative",
            kill_day,
            f"kill `{tr.kill.text}`{'' if tr.kill_by is None else f' (armed {tr.kill_by})'} held on {kill_day}: "
            f"{_state_text(tr.kill, killed.hit_state, kill_day)}, "
            f"before the threshold was met{later}",
        )
    if today < due:
        if met.last is not None:
            day, known = met.last
            state = _state_text(tr.threshold, known, day)
            return result("unresolved", None, f"not yet due ({due}); {thr} not met when last decided, {day}: {state}")
        return result("unresolved", None, f"not yet due ({due}); no decidable observation yet")
    if met.last_own is not None:
        day, known = met.last_own
        state = _state_text(tr.threshold, known, day)
        return result("negative", due, f"due {due} passed without the {thr} met; last decided {day}: {state}")
    window = f"{'as_of' if start == route.as_of else 'the planned start'} {start} and due {due}"
    if not met.observed_own:
        return result("censored", due, f"no observation of {route.route} between {window}")
    missing = [f for f in tr.threshold.fields if f not in met.known]
    if missing:
        why = f"{', '.join(missing)} never observed"
    elif met.errors:
        why = "it cannot be evaluated: " + "; ".join(met.errors)
    else:
        why = f"none of {', '.join(tr.threshold.fields)} observed after the planned start"
    return result("censored", due, f"{thr} never decided between {window}: {why}")


def resolve_packets(packets: Sequence[Any], outcomes: Outcomes, as_of: dt.date) -> list[MilestoneResult]:
    """Resolve every transition of every route of ``packets`` (compile outputs or route
    packets) as of the resolution date ``as_of``. Raises PacketError on malformed packets."""
    return resolve_routes(frozen_routes(list(packets)), outcomes, as_of)


def resolve_routes(routes: Iterable[FrozenRoute], outcomes: Outcomes, as_of: dt.date) -> list[MilestoneResult]:
    results: list[MilestoneResult] = []
    for route in routes:
        results.extend(resolve_route(route, outcomes.observations, as_of))
    return results


@attrs.frozen
class WindowResult:
    """The milestones of one route read at a fixed window: as of ``as_of + days`` (or
    the resolution date, if earlier: then the window is still ``open``)."""

    route: str
    days: int
    date: dt.date
    closed: bool
    milestones: tuple[MilestoneResult, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "days": self.days,
            "date": self.date.isoformat(),
            "closed": self.closed,
            "milestones": [{"transition": m.transition, "status": m.status,
                            "decided_on": None if m.decided_on is None else m.decided_on.isoformat()}
                           for m in self.milestones],
        }


def resolve_windows(routes: Iterable[FrozenRoute], outcomes: Outcomes, as_of: dt.date) -> list[WindowResult]:
    """Every route's milestones read at each of its fixed windows (route by route, windows
    in order). A window not yet reached on ``as_of`` is read as of ``as_of``, marked open."""
    out: list[WindowResult] = []
    for route in routes:
        for days in route.windows:
            at = route.as_of + dt.timedelta(days=days)
            closed = at <= as_of
            results = resolve_route(route, outcomes.observations, at if closed else as_of)
            out.append(WindowResult(route.route, days, at, closed, tuple(results)))
    return out


def window_summary(windows: Sequence[WindowResult]) -> list[dict[str, Any]]:
    """Per window length: routes whose window has closed, routes still open, and the
    statuses of the closed routes' milestones."""
    by_days: dict[int, list[WindowResult]] = {}
    for w in windows:
        by_days.setdefault(w.days, []).append(w)
    rows = []
    for days in sorted(by_days):
        group = by_days[days]
        closed = [w for w in group if w.closed]
        counts = {s: sum(1 for w in closed for m in w.milestones if m.status == s) for s in STATUSES}
        rows.append({"days": days, "closed": len(closed), "open": len(group) - len(closed), "summary": counts})
    return rows


@attrs.frozen
class Resolution:
    """What `pcsc resolve` reports for a set of frozen routes, whichever mode read them
    (packets or the ledger): each milestone's status, each route's latest label, and
    the milestones at each fixed window with their per-window summary."""

    milestones: tuple[MilestoneResult, ...]
    labelled: tuple[RouteOutcome, ...]
    windows: tuple[WindowResult, ...]
    window_summary: tuple[dict[str, Any], ...]


def resolve_all(routes: Sequence[FrozenRoute], outcomes: Outcomes, as_of: dt.date) -> Resolution:
    """`resolve_routes`, `route_outcomes` (for these routes), `resolve_windows` and
    `window_summary`, as of ``as_of``."""
    windows = resolve_windows(routes, outcomes, as_of)
    return Resolution(
        milestones=tuple(resolve_routes(routes, outcomes, as_of)),
        labelled=tuple(route_outcomes(outcomes, as_of, {r.route for r in routes})),
        windows=tuple(windows),
        window_summary=tuple(window_summary(windows)),
    )


def route_outcomes(outcomes: Outcomes, as_of: dt.date, routes: Collection[str] | None = None) -> list[RouteOutcome]:
    """Per route, the latest label dated on or before ``as_of`` (sorted by route)."""
    latest: dict[str, Label] = {}
    for lab in outcomes.labels:
        if lab.date > as_of or (routes is not None and lab.route not in routes):
            continue
        if lab.route not in latest or lab.date >= latest[lab.route].date:
            latest[lab.route] = lab
    return [RouteOutcome(r, lab.outcome, lab.date, lab.bucket, lab.covariates) for r, lab in sorted(latest.items())]


# ---------------------------------------------------------------------- outcomes against packets
@attrs.frozen
class Findings:
    """Problems of an outcomes file against the packets it resolves, path-addressed
    within the outcomes file. Errors make the file unusable; warnings do not."""

    errors: tuple[str, ...]
    warnings: tuple[str, ...]


_NUMERIC_TYPES = ("count", "number", "ratio", "usd")


def check_outcomes(routes: Sequence[FrozenRoute], outcomes: Outcomes) -> Findings:
    errors: list[str] = []
    warnings: list[str] = []
    names = sorted({r.route for r in routes})
    fields: dict[str, dict[str, str]] = {}
    declared: set[str] = set()  # routes whose packets declare their fields
    earliest: dict[str, dt.date] = {}
    for r in routes:
        if r.fields is not None:
            declared.add(r.route)
            fields.setdefault(r.route, {}).update(dict(r.fields))
        earliest[r.route] = min(earliest.get(r.route, r.as_of), r.as_of)
    for i, obs in enumerate(outcomes.observations):
        where = f"observation[{i}]"
        if obs.route not in earliest:
            hint = _did_you_mean(obs.route, names)
            warnings.append(phrase(W701_NO_SUCH_ROUTE, where=where, route=obs.route, hint=hint))
            continue
        if obs.date <= earliest[obs.route]:
            warnings.append(phrase(W701_OBSERVED_BEFORE_AS_OF, where=where, as_of=earliest[obs.route], route=obs.route))
        if obs.route not in declared:
            continue
        route_fields = fields[obs.route]
        for field, value in obs.values:
            kind = route_fields.get(field)
            if kind is None:
                its_fields = phrase(E702_ITS_FIELDS, fields=", ".join(sorted(route_fields)))
                hint = _did_you_mean(field, route_fields) or its_fields
                errors.append(phrase(E702_NO_SUCH_FIELD, where=where, field=field, route=obs.route, hint=hint))
            elif kind == "bool" and not isinstance(value, bool):
                errors.append(phrase(E702_NOT_A_BOOL, where=where, field=field))
            elif kind in _NUMERIC_TYPES and isinstance(value, bool):
                errors.append(phrase(E702_NOT_A_NUMBER, where=where, field=field, kind=kind))
            elif kind == "count" and isinstance(value, float) and value < 0:
                errors.append(phrase(E702_NEGATIVE_COUNT, where=where, field=field))
            elif kind == "ratio" and isinstance(value, float) and value > 1:
                warnings.append(phrase(W701_RATIO_OVER_ONE, where=where, field=field, value=plain_value(value),
                                       percent=number(value * 100)))
    for i, lab in enumerate(outcomes.labels):
        if lab.route not in earliest:
            warnings.append(phrase(W701_NO_SUCH_ROUTE, where=f"label[{i}]", route=lab.route,
                                   hint=_did_you_mean(lab.route, names)))
        elif lab.date <= earliest[lab.route]:
            warnings.append(phrase(W701_LABELLED_BEFORE_AS_OF, i=i, as_of=earliest[lab.route], route=lab.route))
    return Findings(tuple(errors), tuple(warnings))


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return phrase(E702_DID_YOU_MEAN, name=close[0]) if close else ""
