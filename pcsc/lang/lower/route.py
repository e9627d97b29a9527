"""Lower a `route` block to a `Route`: names, the chain, carry-forward, types, units.

Every check reports and continues, so one run shows all the errors of a route; the
route is returned only when none of them is an error.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from typing import Protocol

import attrs

from pcsc.diagnostics.messages import (
    E201_UNKNOWN_STATE,
    E201_UNKNOWN_VISION_STATE,
    E202_UNKNOWN_TRANSITION,
    E204_UNKNOWN_OBLIGATION,
    E205_NOT_A_ROUTE_FIELD,
    E205_UNKNOWN_FIELD,
    E209_CRITERION_TWICE,
    E209_DEFINED_TWICE,
    E209_EVIDENCE_STATEMENT_TWICE,
    E209_FIELD_IN_TWO_LIBRARIES,
    E209_OBLIGATION_IN_TWO_LIBRARIES,
    E209_ROUTE_STATEMENT_TWICE,
    E209_STATE_FIELD_TWICE,
    E209_TRANSITION_STATEMENT_TWICE,
    E209_USES_TWICE,
    E209_VISION_ITEM_TWICE,
    E210_BRANCH_NEVER_JOINS,
    E210_BRANCHES,
    E210_MERGES,
    E210_NOT_NESTED,
    E211_CYCLE,
    E212_OFF_THE_CHAIN,
    E212_UNREACHABLE,
    E213_NO_VISION,
    E214_NO_CLASS,
    E214_NO_EVIDENCE_STATEMENT,
    E214_NO_ROUTE_STATEMENT,
    E215_CHAIN_ENDS_ELSEWHERE,
    E215_ROUTE_ENDS_ELSEWHERE,
    E216_NO_START_VALUE,
    E218_UNKNOWN_CONDITION_FUNCTION,
    E219_NO_TRANSITIONS,
    E220_PAYOFF_ON_START,
    E222_TOO_MANY_TRANSITIONS,
    E224_JOIN_CONFLICT,
    E301_ADDS,
    E301_BARE_BOOL_FIELD,
    E301_BARE_FIELD,
    E301_BOOL_FOR_TYPE,
    E301_COMPARES,
    E301_COMPARES_DATE,
    E301_COMPARES_QUOTED_NUMBER,
    E301_COMPARES_UNITS,
    E301_COST_NOT_USD,
    E301_COUNT_UNIT,
    E301_CRITERION_UNIT,
    E301_DIVIDES,
    E301_ESTIMATE_UNIT,
    E301_FUNCTION_UNITS,
    E301_HORIZON_UNIT,
    E301_MULTIPLIES,
    E301_NEEDS_NUMBERS,
    E301_NEGATE,
    E301_NOT_A_BOOL_FIELD,
    E301_ORDERS,
    E301_PAYOFF_NOT_A_NUMBER,
    E301_PAYOFF_UNIT,
    E301_VISION_NOT_A_NUMBER,
    E301_WRONG_LITERAL,
    E303_NEGATIVE_COST,
    E303_NEGATIVE_LEARNING_COST,
    E304_ESTIMATE_RANGE,
    E305_STATES_P,
    E306_DUE_PAST_9999,
    E306_NOT_A_DATE,
    E307_HORIZON,
    E307_NEGATIVE_PAYOFF,
    E307_TIER,
    E307_WEIGHT,
    E311_COST_OVERFLOWS,
    E312_DIVISION_BY_ZERO,
    E314_KILL_BY_EARLY,
    E314_KILL_BY_LATE,
    E314_KILL_BY_NO_START,
    E406_BAD_PIN,
    E406_NOT_A_REFERENCE,
    W602_TOTAL_IGNORED,
    W603_UNUSED_STATE,
    W604_SUPPORTS_NOTHING,
    Message,
)
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.ir import (
    CostItem,
    Criterion,
    Edge,
    Evidence,
    Expr,
    FieldDecl,
    Library,
    Obligation,
    PolicyRef,
    Route,
    Series,
    Shape,
    State,
    Transition,
    Vision,
    VisionItem,
)
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.names import MAX_NAME, REFERENCE_RULE, split_policy_ref
from pcsc.lang.ir.visit import Visitor, children, walk
from pcsc.lang.lower.common import (
    Quantity,
    check_field_value,
    check_statement_lines,
    quantity,
    suggest,
    warn_ratio_over_one,
)
from pcsc.lang.lower.expr import lower_expression, unquote
from pcsc.lang.lower.graph import decompose, find_cycle, reachable, rename, topological
from pcsc.lang.lower.vision import DEFAULT_VISION_FIELDS
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax.limits import MAX_TRANSITIONS
from pcsc.lang.syntax.literals import add_horizon, parse_date

LibraryResolver = Callable[[str, Span], Library | None]
VISION_KEYS = tuple(DEFAULT_VISION_FIELDS)  # the venture vision's names, the default

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
PAYOFF_KEY = "payoff"  # in a state block, `payoff 250k usd` is the state's payoff, not a field
EXPR_FUNCTIONS = ("min", "max")


class HasSpan(Protocol):
    @property
    def span(self) -> Span: ...


class Named(Protocol):
    @property
    def name(self) -> syn.Word: ...


@attrs.frozen
class PolicyFacts:
    """What the policy binding checks read (the pin, reference classes, criteria,
    point-in-time evidence). Lowering gathers these even when the route has errors,
    so one run also reports the errors that need the policy."""

    policy: PolicyRef | None
    as_of: dt.date | None
    classes: tuple[tuple[str, Span], ...]
    criteria: tuple[Criterion, ...]
    evidence: tuple[Evidence, ...]
    vision: Vision | None = None  # its values are checked against the policy's `[vision] fields`
    payoffs: tuple[tuple[str, Span], ...] = ()  # (state, where its payoff is written)
    fold_payoffs: tuple[tuple[str, Span], ...] = ()  # (state, its amount) of each payoff written without a unit

    @classmethod
    def of(cls, route: Route) -> PolicyFacts:
        return cls(
            route.policy,
            route.as_of,
            tuple((t.ref_class, t.class_span) for t in route.transitions),
            route.criteria,
            route.evidence,
            route.vision,
            tuple((s.name, s.payoff_span) for s in route.states if s.payoff_span is not None),
            tuple((s.name, s.payoff_in_fold) for s in route.states if s.payoff_in_fold is not None),
        )


@attrs.define
class _Draft:
    """A transition while its statements are read; `build_transitions` freezes it."""

    node: syn.TransitionBlock
    actor: str | None = None
    mechanism: str | None = None
    asset: str | None = None
    ref_class: str | None = None
    class_span: Span | None = None
    threshold: Expr | None = None
    threshold_text: str | None = None
    kill: Expr | None = None
    kill_text: str | None = None
    kill_by: syn.KillBy | None = None
    kill_after: tuple[float, str] | None = None  # `by 6 months`, checked
    kill_on: dt.date | None = None  # `by 2027-06-01`, checked
    horizon: tuple[float, str] | None = None
    cost: tuple[CostItem, ...] = ()
    learning_cost: float | None = None
    estimates: tuple[float, ...] = ()
    discharges: tuple[str, ...] = ()
    estimates_span: Span | None = None

    @property
    def name(self) -> str:
        return self.node.name.text

    def freeze(self, due: dt.date | None, kill_by: dt.date | None = None) -> Transition:
        """The IR transition; only for a route without errors (so it has a class)."""
        assert self.ref_class is not None and self.class_span is not None
        return Transition(
            name=self.name,
            source=self.source,
            target=self.target,
            actor=self.actor,
            mechanism=self.mechanism,
            asset=self.asset,
            ref_class=self.ref_class,
            class_span=self.class_span,
            threshold=self.threshold,
            threshold_text=self.threshold_text,
            kill=self.kill,
            kill_text=self.kill_text,
            horizon=self.horizon,
            cost=self.cost,
            learning_cost=self.learning_cost,
            estimates=self.estimates,
            discharges=self.discharges,
            due=due,
            span=self.node.span,
            estimates_span=self.estimates_span,
            kill_by=kill_by,
            kill_by_text=None if self.kill_by is None else _kill_by_text(self.kill_by),
        )

    @property
    def source(self) -> str:
        return self.node.source.text

    @property
    def target(self) -> str:
        return self.node.target.text


class RouteLowerer:
    def __init__(
        self, tree: syn.RouteBlock, file: str, text: str, resolve: LibraryResolver, diags: Diagnostics
    ) -> None:
        self.tree = tree
        self.file = file
        self.text = text
        self.resolve = resolve
        self.diags = diags
        # False when `uses` is missing or a library cannot be used: names that would
        # come from it are then not reported as unknown (that would only be noise).
        self.libraries_ok = True
        self.facts = PolicyFacts(None, None, (), (), ())
        self.policy_evidence: list[Evidence] = []  # evidence with a tier, for the policy checks
        self.used_libraries: list[Library] = []  # the libraries of `uses` that resolved
        self.evidence_names: dict[str, Span] = {}
        self.shape: Shape | None = None  # set by `graph` for a route that forks and joins

    # ------------------------------------------------------------------ helpers
    def report(self, message: Message, at: HasSpan | Span, **fields: object) -> None:
        self.diags.diag(message, at if isinstance(at, Span) else at.span, **fields)

    def date(self, word: syn.Word) -> dt.date | None:
        value = parse_date(word.text)
        if value is None:
            self.report(E306_NOT_A_DATE, word, date=word.text)
        return value

    def qty(self, node: syn.Quantity) -> Quantity:
        return quantity(node, self.diags)

    def unique(self, kind: str, items: Sequence[Named], seen: dict[str, Span]) -> None:
        for item in items:
            name = item.name.text
            if name in seen:
                self.report(E209_DEFINED_TWICE, item.name, kind=kind, name=name, line=seen[name].line)
            else:
                seen[name] = item.name.span

    # ------------------------------------------------------------------ the route
    def lower(self) -> Route | None:
        before = len(self.diags)
        tree = self.tree
        name_word = tree.name
        check_statement_lines(tree.items, self.diags)
        by_kind: dict[str, list[syn.RouteItem]] = {}
        for item in tree.items:
            if not isinstance(item, syn.Semi):
                by_kind.setdefault(_route_key(item), []).append(item)
        count = len(by_kind.get("transition", []))
        if count > MAX_TRANSITIONS:
            self.report(E222_TOO_MANY_TRANSITIONS, name_word, route=name_word.text, count=count, limit=MAX_TRANSITIONS)
            return None

        def single(keyword: str, required: bool) -> syn.RouteItem | None:
            items = by_kind.get(keyword, [])
            for extra in items[1:]:
                self.report(
                    E209_ROUTE_STATEMENT_TWICE, extra, keyword=keyword, route=name_word.text, line=items[0].span.line
                )
            if not items and required:
                self.report(E214_NO_ROUTE_STATEMENT, name_word, route=name_word.text, keyword=keyword)
            return items[0] if items else None

        as_of_node = single("as_of", True)
        policy_node = single("policy", True)
        uses_node = single("uses", True)
        vision_node = single("vision", False)
        criteria_node = single("criteria", False)

        as_of = self.date(as_of_node.value) if isinstance(as_of_node, syn.Scalar) else None
        policy = self.policy_ref(policy_node) if isinstance(policy_node, syn.PolicyPin) else None
        fields, obligations, uses = self.libraries(uses_node if isinstance(uses_node, syn.Names) else None)

        state_nodes = [s for s in by_kind.get("state", []) if isinstance(s, syn.StateBlock)]
        transition_nodes = [t for t in by_kind.get("transition", []) if isinstance(t, syn.TransitionBlock)]
        evidence_nodes = [e for e in by_kind.get("evidence", []) if isinstance(e, syn.EvidenceBlock)]
        names: dict[str, Span] = {}
        self.unique("state", state_nodes, names)
        names_t: dict[str, Span] = {}
        self.unique("transition", transition_nodes, names_t)
        names_e: dict[str, Span] = {}
        self.unique("evidence", evidence_nodes, names_e)
        self.evidence_names = names_e

        route_fields = self.route_fields(state_nodes, fields)
        raw_states = {s.name.text: s for s in state_nodes}
        transitions = [self.transition(t, route_fields, obligations) for t in transition_nodes]
        if not transitions:
            self.report(E219_NO_TRANSITIONS, name_word, route=name_word.text)
        vision_block = vision_node if isinstance(vision_node, syn.StateBlock) else None
        vision = self.vision(vision_block, raw_states) if vision_block else None
        if vision_block is None:
            self.report(E213_NO_VISION, name_word, route=name_word.text)
        chain = self.chain(transitions, raw_states, vision)
        states = self.carry_forward(chain, raw_states, route_fields) if chain else []
        used = {s.name for s in states}
        for s in state_nodes:
            if s.name.text not in used and chain:
                self.report(W603_UNUSED_STATE, s.name, state=s.name.text)
        evidence = [self.evidence(e, names_t) for e in evidence_nodes]
        criteria = self.criteria(criteria_node) if isinstance(criteria_node, syn.Criteria) else []
        due = self.due_dates(chain, as_of) if chain and as_of is not None else None
        kills = self.kill_dates(chain, due, as_of) if chain and as_of is not None and due is not None else None
        self.facts = PolicyFacts(
            policy,
            as_of,
            tuple((t.ref_class, t.class_span) for t in transitions if t.ref_class is not None and t.class_span),
            tuple(criteria),
            tuple(self.policy_evidence),
            vision,
            tuple((s.name, s.payoff_span) for s in states if s.payoff_span is not None),
            tuple((s.name, s.payoff_in_fold) for s in states if s.payoff_in_fold is not None),
        )

        if any(d.severity == "error" for d in self.diags.items[before:]):
            return None
        assert as_of is not None and policy is not None and vision is not None and chain and due is not None
        assert kills is not None
        ordered = self.build_transitions(chain, due, kills)
        return Route(
            name=name_word.text,
            title=unquote(tree.title.text) if tree.title is not None else None,
            file=self.file,
            as_of=as_of,
            policy=policy,
            uses=uses,
            fields=tuple(route_fields.values()),
            states=tuple(states),
            vision=vision,
            transitions=tuple(ordered),
            evidence=tuple(e for e in evidence if e is not None),
            criteria=tuple(criteria),
            obligations=tuple(obligations.values()),
            span=tree.span,
            shape=self.shape,
        )

    # ------------------------------------------------------------------ header
    def policy_ref(self, node: syn.PolicyPin) -> PolicyRef | None:
        ref = unquote(node.ref.text)
        parts = split_policy_ref(ref)
        if parts is None:
            shown = ref if len(ref) <= 2 * MAX_NAME + 1 else f"{ref[:40]}…"
            self.report(E406_NOT_A_REFERENCE, node.ref, ref=shown, rule=REFERENCE_RULE)
            return None
        digest = None
        if node.sha256 is not None:
            digest = unquote(node.sha256.text).lower()
            if not _HEX64.match(digest):
                self.report(E406_BAD_PIN, node.sha256)
                return None
        return PolicyRef(parts[0], parts[1], digest, node.span)

    def libraries(
        self, node: syn.Names | None
    ) -> tuple[dict[str, FieldDecl], dict[str, Obligation], tuple[str, ...]]:
        fields: dict[str, FieldDecl] = {}
        obligations: dict[str, Obligation] = {}
        if node is None:
            self.libraries_ok = False
            return fields, obligations, ()
        uses: list[str] = []
        for word in node.names:
            name = word.text
            if name in uses:
                self.report(E209_USES_TWICE, word, name=name)
                continue
            lib = self.resolve(name, word.span)
            if lib is not None:
                self.used_libraries.append(lib)
            uses.append(name)
            if lib is None:
                self.libraries_ok = False
                continue
            for f in lib.fields:
                if f.name in fields:
                    self.report(
                        E209_FIELD_IN_TWO_LIBRARIES, word, name=f.name, first=fields[f.name].library, second=lib.name
                    )
                fields.setdefault(f.name, f)
            for o in lib.obligations:
                if o.name in obligations:
                    self.report(
                        E209_OBLIGATION_IN_TWO_LIBRARIES,
                        word,
                        name=o.name,
                        first=obligations[o.name].library,
                        second=lib.name,
                    )
                obligations.setdefault(o.name, o)
        return fields, obligations, tuple(uses)

    # ------------------------------------------------------------------ states
    def route_fields(
        self, state_nodes: list[syn.StateBlock], library_fields: dict[str, FieldDecl]
    ) -> dict[str, FieldDecl]:
        """The library fields this route mentions, in order of first mention."""
        route_fields: dict[str, FieldDecl] = {}
        for s in state_nodes:
            for fv in s.values:
                fname = fv.name.text
                if fname == PAYOFF_KEY:
                    continue
                if fname in library_fields:
                    route_fields.setdefault(fname, library_fields[fname])
                elif self.libraries_ok:
                    self.report(E205_UNKNOWN_FIELD, fv.name, field=fname, hint=self.field_help(fname, library_fields))
        return route_fields

    def state_values(self, node: syn.StateBlock, route_fields: dict[str, FieldDecl]) -> dict[str, float | bool]:
        values: dict[str, float | bool] = {}
        for fv in node.values:
            fname = fv.name.text
            if fname == PAYOFF_KEY:
                continue
            if fname in values:
                self.report(E209_STATE_FIELD_TWICE, fv.name, field=fname, state=node.name.text)
                continue
            decl = route_fields.get(fname)
            if decl is None:
                continue  # already reported as unknown
            value = self.value(fv.value, decl, f"field `{fname}`")
            if value is not None:
                values[fname] = value
        return values

    def payoff(self, node: syn.StateBlock) -> tuple[float | None, Span | None, Span | None]:
        """The state's `payoff AMOUNT usd` line (an amount in usd, converted at the policy's
        usd rate) or `payoff AMOUNT` (no unit: in the unit the policy keeps its fold in, at
        face value): a finite amount, at least 0. The third item is where the amount is
        written when it has no unit (in the fold's unit; None: in usd). What the policy
        credits of it is the policy's (`pcsc.score.units.credit_payoff`)."""
        lines = [fv for fv in node.values if fv.name.text == PAYOFF_KEY]
        for extra in lines[1:]:
            self.report(E209_STATE_FIELD_TWICE, extra.name, field=PAYOFF_KEY, state=node.name.text)
        if not lines:
            return None, None, None
        fv = lines[0]
        state = node.name.text
        if not isinstance(fv.value, syn.Quantity):
            self.report(E301_PAYOFF_NOT_A_NUMBER, fv.value, state=state)
            return None, fv.span, None
        q = self.qty(fv.value)
        in_fold = q.unit is None and not q.percent
        if q.unit is not None and q.unit != "usd":
            self.report(E301_PAYOFF_UNIT, q.span, state=state, unit=q.unit)
            return None, fv.span, None
        if not in_fold and not check_field_value("usd", q, f"the payoff of state `{state}`", self.diags):
            return None, fv.span, None
        if q.value < 0:
            self.report(E307_NEGATIVE_PAYOFF, q.span, state=state)
            return None, fv.span, None
        return q.value, fv.span, q.span if in_fold else None

    def value(self, node: syn.Value, decl: FieldDecl, what: str) -> float | bool | None:
        if isinstance(node, syn.Quantity):
            q = self.qty(node)
            if not check_field_value(decl.type, q, what, self.diags):
                return None
            warn_ratio_over_one(decl.type, q, what, self.diags)
            return q.value
        if node.kind in ("TRUE", "FALSE"):
            if decl.type != "bool":
                self.report(E301_BOOL_FOR_TYPE, node, what=what, type=decl.type, value=node.text)
                return None
            return node.kind == "TRUE"
        self.report(E301_WRONG_LITERAL, node, what=what, type=decl.type, kind=node.kind.lower())
        return None

    # ------------------------------------------------------------------ transitions
    def transition(
        self, node: syn.TransitionBlock, route_fields: dict[str, FieldDecl], obligations: dict[str, Obligation]
    ) -> _Draft:
        name = node.name
        check_statement_lines(node.items, self.diags)
        t = _Draft(node)
        seen: dict[str, Span] = {}
        for stmt in node.items:
            if isinstance(stmt, syn.Semi):
                continue
            kind = stmt.keyword
            if kind in seen and kind != "p":
                self.report(
                    E209_TRANSITION_STATEMENT_TWICE, stmt, keyword=kind, transition=name.text, line=seen[kind].line
                )
            seen.setdefault(kind, stmt.span)
            if isinstance(stmt, syn.Scalar):
                text = unquote(stmt.value.text)
                if kind == "actor":
                    t.actor = text
                elif kind == "mechanism":
                    t.mechanism = text
                elif kind == "asset":
                    t.asset = text
                else:  # class
                    t.ref_class, t.class_span = text, stmt.value.span
            elif isinstance(stmt, syn.Condition):
                expr = lower_expression(stmt, self.diags)
                self.check_condition(expr, route_fields, kind)
                self.check_bare_fields(expr, route_fields, kind)
                if kind == "threshold":
                    t.threshold, t.threshold_text = expr, stmt.text
                else:
                    t.kill, t.kill_text, t.kill_by = expr, stmt.text, stmt.by
                    if stmt.by is not None and stmt.by.duration is not None:
                        t.kill_after = self.horizon(stmt.by.duration)
                    elif stmt.by is not None and stmt.by.date is not None:
                        t.kill_on = self.date(stmt.by.date)
            elif isinstance(stmt, syn.Cost):
                check_statement_lines(stmt.items, self.diags, "cost items")
                t.cost = tuple(c for c in (self.cost_item(i) for i in stmt.items) if c)
            elif isinstance(stmt, syn.Estimates):
                t.estimates = tuple(self.estimate(q) for q in stmt.values)
                t.estimates_span = stmt.span
            elif isinstance(stmt, syn.Names):  # discharges
                names = []
                for ob in stmt.names:
                    if ob.text not in obligations and self.libraries_ok:
                        self.report(
                            E204_UNKNOWN_OBLIGATION, ob, obligation=ob.text, suggestion=suggest(ob.text, obligations)
                        )
                    names.append(ob.text)
                t.discharges = tuple(names)
            elif kind == "horizon":
                t.horizon = self.horizon(stmt.value)
            elif kind == "learning_cost":
                q = self.qty(stmt.value)
                if check_field_value("usd", q, "`learning_cost`", self.diags):
                    if q.value < 0:
                        self.report(E303_NEGATIVE_LEARNING_COST, q.span)
                    t.learning_cost = q.value
            else:  # p
                self.report(E305_STATES_P, stmt)
        if t.ref_class is None:
            self.report(E214_NO_CLASS, name, transition=name.text)
        return t

    def horizon(self, node: syn.Quantity) -> tuple[float, str] | None:
        q = self.qty(node)
        if q.unit not in ("days", "months", "years"):
            self.report(E301_HORIZON_UNIT, q.span, value=q.value)
            return None
        if q.value <= 0 or q.value != int(q.value) or q.percent:
            self.report(E307_HORIZON, q.span)
            return None
        return (q.value, q.unit)

    def cost_item(self, node: syn.CostItem) -> CostItem | None:
        name = node.name.text
        if node.count is not None:
            count = self.qty(node.count)
            if count.unit is not None or count.percent:
                self.report(E301_COUNT_UNIT, count.span, cost=name)
                return None
        else:
            count = Quantity(1.0, None, False, node.span)
        amount = self.qty(node.amount)
        if amount.unit != "usd":
            self.report(E301_COST_NOT_USD, amount.span, cost=name)
            return None
        if count.value < 0 or amount.value < 0:
            self.report(E303_NEGATIVE_COST, node.span, cost=name)
            return None
        if not math.isfinite(count.value * amount.value):
            self.report(E311_COST_OVERFLOWS, node.span, cost=name, count=count.value, amount=amount.value)
            return None
        return CostItem(name, count.value, amount.value, node.span)

    def estimate(self, node: syn.Quantity) -> float:
        q = self.qty(node)
        if q.unit is not None:
            self.report(E301_ESTIMATE_UNIT, q.span)
        elif not 0.0 <= q.value <= 1.0:
            self.report(E304_ESTIMATE_RANGE, q.span, value=q.value)
        return q.value

    def check_condition(self, expr: Expr, route_fields: dict[str, FieldDecl], kind: str) -> None:
        """Names in a threshold or kill condition are route fields; units match the field;
        both sides of each comparison and operator have one type and unit (see
        `ConditionTypes`); no division by a literal zero."""
        for node in walk(expr):
            if isinstance(node, ex.Name) and node.name not in route_fields:
                if not self.libraries_ok:
                    continue
                self.report(
                    E205_NOT_A_ROUTE_FIELD,
                    node.span,
                    field=node.name,
                    kind=kind,
                    hint=self.field_help(node.name, route_fields),
                )
            elif isinstance(node, ex.Call) and node.func not in EXPR_FUNCTIONS:
                self.report(
                    E218_UNKNOWN_CONDITION_FUNCTION,
                    node.span,
                    function=node.func,
                    kind=kind,
                    functions=", ".join(EXPR_FUNCTIONS),
                )
            elif isinstance(node, ex.Compare):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(side, ex.Name) and side.name in route_fields and isinstance(other, ex.Number):
                        decl = route_fields[side.name]
                        q = Quantity(other.value, other.unit, other.percent, other.span)
                        if check_field_value(decl.type, q, f"field `{side.name}`", self.diags):
                            warn_ratio_over_one(decl.type, q, f"field `{side.name}`", self.diags)
                    if isinstance(side, ex.Name) and side.name in route_fields and isinstance(other, ex.BoolLit):
                        if route_fields[side.name].type != "bool":
                            self.report(E301_NOT_A_BOOL_FIELD, other.span, field=side.name)
        ConditionTypes(route_fields, kind, self.diags).visit(expr)

    def check_bare_fields(
        self, expr: Expr, route_fields: dict[str, FieldDecl], kind: str, negated: bool = False
    ) -> None:
        """A field alone where a condition belongs (`threshold soc2`, `kill developers`,
        an operand of `and`/`or`/`not`): a threshold or kill is a comparison, or
        comparisons joined by `and`, `or` and `not`."""
        if isinstance(expr, ex.Logic):
            for operand in expr.operands:
                self.check_bare_fields(operand, route_fields, kind)
        elif isinstance(expr, ex.Not):
            self.check_bare_fields(expr.operand, route_fields, kind, not negated)
        elif isinstance(expr, ex.Name) and expr.name in route_fields:
            name, decl = expr.name, route_fields[expr.name]
            if decl.type == "bool":
                value = "false" if negated else "true"
                self.report(E301_BARE_BOOL_FIELD, expr.span, kind=kind, field=name, value=value)
            else:
                example = {"usd": "1M usd", "ratio": "0.5"}.get(decl.type, "100")
                self.report(E301_BARE_FIELD, expr.span, kind=kind, field=name, type=decl.type, example=example)

    def field_help(self, name: str, known: Sequence[str] | dict[str, FieldDecl]) -> str:
        """The help of an unknown field: that a library field needs a value in a state
        before a condition can read it; else a close name among ``known``; else where
        fields come from (the libraries of `uses`, with their files and fields)."""
        for lib in self.used_libraries:
            if any(f.name == name for f in lib.fields):
                return (
                    f"`{name}` is declared by `{lib.name}` ({lib.path}), but no state of this route "
                    "gives it a value: list it in the start state"
                )
        declared = "; ".join(
            f"{lib.name} ({lib.path}) declares " + (", ".join(f.name for f in lib.fields) or "no fields")
            for lib in self.used_libraries
        )
        where = f"fields come from the libraries the route uses: {declared}" if declared else (
            "fields come from the libraries the route names in `uses`"
        )
        return suggest(name, known) or where

    # ------------------------------------------------------------------ the chain
    def chain(
        self, transitions: list[_Draft], states: dict[str, syn.StateBlock], vision: Vision | None
    ) -> list[_Draft]:
        """Order the transitions as one chain from the start state to the vision state."""
        ok = True
        for t in transitions:
            for side in (t.node.source, t.node.target):
                if side.text not in states:
                    self.report(E201_UNKNOWN_STATE, side, state=side.text, suggestion=suggest(side.text, states))
                    ok = False
        if not ok or not transitions:
            return []
        sources = [t.source for t in transitions]
        targets = [t.target for t in transitions]
        if len(set(sources)) < len(sources) or len(set(targets)) < len(targets):
            return self.graph(transitions, vision)
        out_edges: dict[str, int] = {}
        in_edges: dict[str, int] = {}
        for i, t in enumerate(transitions):
            if t.source in out_edges:
                first = transitions[out_edges[t.source]]
                self.report(E210_BRANCHES, t.node.name, state=t.source, first=first.name, second=t.name)
                ok = False
            else:
                out_edges[t.source] = i
            if t.target in in_edges:
                first = transitions[in_edges[t.target]]
                self.report(E210_MERGES, t.node.name, state=t.target, first=first.name, second=t.name)
                ok = False
            else:
                in_edges[t.target] = i
        if not ok:
            return []
        # With at most one transition into and out of every state, the transitions
        # fall apart into simple paths (each from a state nothing enters) and cycles.
        placed = [False] * len(transitions)
        paths: list[list[int]] = []
        for i, t in enumerate(transitions):
            if t.source not in in_edges:
                path: list[int] = []
                j: int | None = i
                while j is not None and not placed[j]:
                    placed[j] = True
                    path.append(j)
                    j = out_edges.get(transitions[j].target)
                paths.append(path)
        for i in range(len(transitions)):
            if placed[i]:
                continue
            cycle: list[int] = []
            k: int | None = i
            while k is not None and not placed[k]:
                placed[k] = True
                cycle.append(k)
                k = out_edges.get(transitions[k].target)
            self.cycle_error(transitions, cycle)
            ok = False
        if not paths:
            return []
        main = paths[0]
        if vision is not None:
            main = next((p for p in paths if transitions[p[-1]].target == vision.state), main)
        start, end = transitions[main[0]].source, transitions[main[-1]].target
        ends_at_vision = vision is not None and end == vision.state
        for piece in paths:
            if piece is main:
                continue
            first, last = transitions[piece[0]], transitions[piece[-1]]
            names = [transitions[j].name for j in piece]
            steps = " -> ".join(f"`{s}`" for s in [first.source, *(transitions[j].target for j in piece)])
            if len(names) == 1:
                what, verb = f"transition `{names[0]}`", "is"
            else:
                what, verb = "transitions " + ", ".join(f"`{n}`" for n in names), "are"
            gap = (last.target, start) if ends_at_vision else (end, first.source)
            self.report(
                E212_OFF_THE_CHAIN,
                first.node.name,
                what=what,
                steps=steps,
                verb=verb,
                start=start,
                end=end,
                gap_from=gap[0],
                gap_to=gap[1],
            )
            ok = False
        if ok and vision is not None and not ends_at_vision and vision.state in states:
            self.report(E215_CHAIN_ENDS_ELSEWHERE, vision.span, end=end, vision=vision.state)
            ok = False
        return [transitions[j] for j in main] if ok else []

    def cycle_error(self, transitions: list[_Draft], cycle: list[int]) -> None:
        """PCSC-E211 for the transitions ``cycle`` (indices, in walking order)."""
        loop = [transitions[c].source for c in cycle] + [transitions[cycle[0]].source]
        self.report(
            E211_CYCLE,
            transitions[cycle[0]].node.name,
            loop=" -> ".join(f"`{s}`" for s in loop),
            transitions=", ".join(f"`{transitions[c].name}`" for c in cycle),
        )

    def graph(self, transitions: list[_Draft], vision: Vision | None) -> list[_Draft]:
        """Order the transitions of a route that forks and joins (docs/graphs.md), and
        set ``self.shape`` to its series-parallel tree; [] after a diagnostic."""
        pairs = [(t.source, t.target) for t in transitions]
        cycle = find_cycle(pairs)
        if cycle is not None:
            self.cycle_error(transitions, cycle)
            return []
        entered = set(targets := [t.target for t in transitions])
        starts = list(dict.fromkeys(t.source for t in transitions if t.source not in entered))
        start = starts[0]
        if vision is not None:
            start = next((s for s in starts if vision.state in reachable(pairs, s)), start)
        seen = reachable(pairs, start)
        ok = True
        cut = [i for i, t in enumerate(transitions) if t.source not in seen]
        if cut:
            names = ", ".join(f"`{transitions[i].name}`" for i in cut)
            what = f"transition {names} is" if len(cut) == 1 else f"transitions {names} are"
            self.report(E212_UNREACHABLE, transitions[cut[0]].node.name, what=what, start=start)
            ok = False
        left = {t.source for t in transitions}
        ends = list(dict.fromkeys(t for t in targets if t in seen and t not in left))
        end = vision.state if vision is not None and vision.state in ends else ends[0]
        for other in ends:
            if other == end:
                continue
            into = [t for t in transitions if t.target == other and t.source in seen]
            self.report(E210_BRANCH_NEVER_JOINS, into[0].node.name, transition=into[0].name, state=other, end=end)
            ok = False
        if ok and vision is not None and end != vision.state:
            self.report(E215_ROUTE_ENDS_ELSEWHERE, vision.span, end=end, vision=vision.state)
            ok = False
        if not ok:
            return []
        order, _ = topological(pairs)
        # branches sort by their first transition in topological order, which printing
        # the route in that order keeps (so a spliced route re-lowers to its own shape)
        shape = decompose([pairs[i] for i in order], start, end)
        if isinstance(shape, list):
            stuck = ", ".join(f"`{s}`" for s in shape)
            first = next(t for t in transitions if t.source in shape or t.target in shape)
            self.report(E210_NOT_NESTED, first.node.name, states=stuck)
            return []
        self.shape = rename(shape, [transitions[i].name for i in order])
        return [transitions[i] for i in order]

    def carry_forward(
        self, chain: list[_Draft], raw: dict[str, syn.StateBlock], route_fields: dict[str, FieldDecl]
    ) -> list[State]:
        if self.shape is not None:
            return self.carry_forward_graph(chain, raw, route_fields, self.shape)
        order = [chain[0].source] + [t.target for t in chain]
        states: list[State] = []
        current: dict[str, float | bool] = {}
        for i, name in enumerate(order):
            node = raw[name]
            listed = self.state_values(node, route_fields)
            if i == 0:
                written = {fv.name.text for fv in node.values}  # even with a bad value
                for fname in route_fields:
                    if fname not in written:
                        self.report(E216_NO_START_VALUE, node.name, field=fname, state=name)
            current = {**current, **listed}
            values = tuple((f, current[f]) for f in route_fields if f in current)
            payoff, payoff_span, payoff_in_fold = self.payoff(node)
            if i == 0 and payoff_span is not None:
                self.report(E220_PAYOFF_ON_START, payoff_span, state=name)
            states.append(State(name, values, tuple(listed), node.span, value_spans(node, listed), payoff, payoff_span,
                                payoff_in_fold))
        return states

    def carry_forward_graph(
        self, order: list[_Draft], raw: dict[str, syn.StateBlock], route_fields: dict[str, FieldDecl], shape: Shape
    ) -> list[State]:
        """Carry-forward along a series-parallel route: each branch starts from the fork's
        values; a join takes, for each field it does not list, the value a branch changed
        it to (the fork's value when no branch changed it); two branches that change a
        field to different values need the join to write it (PCSC-E224)."""
        by_name = {t.name: t for t in order}

        def entry(s: Shape) -> str:
            while not isinstance(s, Edge):
                s = s.items[0] if isinstance(s, Series) else s.branches[0]
            return by_name[s.transition].source

        def exit_of(s: Shape) -> str:
            while not isinstance(s, Edge):
                s = s.items[-1] if isinstance(s, Series) else s.branches[0]
            return by_name[s.transition].target

        def first_edge(s: Shape) -> str:
            while not isinstance(s, Edge):
                s = s.items[0] if isinstance(s, Series) else s.branches[0]
            return s.transition

        listed: dict[str, dict[str, float | bool]] = {}
        values: dict[str, dict[str, float | bool]] = {}

        def arrive(state: str, arriving: dict[str, float | bool]) -> dict[str, float | bool]:
            listed[state] = self.state_values(raw[state], route_fields)
            values[state] = {**arriving, **listed[state]}
            return values[state]

        def flow(s: Shape, at: dict[str, float | bool]) -> dict[str, float | bool]:
            if isinstance(s, Edge):
                return at
            if isinstance(s, Series):
                current = at
                for i, item in enumerate(s.items):
                    arriving = flow(item, current)
                    if i < len(s.items) - 1:
                        current = arrive(exit_of(item), arriving)
                return arriving
            join = exit_of(s)
            written = {fv.name.text for fv in raw[join].values}
            ends = [(first_edge(b), flow(b, at)) for b in s.branches]
            merged = dict(at)
            for fname in route_fields:
                changed: dict[float | bool, str] = {}
                for branch, end in ends:
                    if fname in end and (fname not in at or end[fname] != at[fname]):
                        changed.setdefault(end[fname], branch)
                if len(changed) > 1 and fname not in written:
                    (a, ba), (b, bb) = list(changed.items())[:2]
                    self.report(
                        E224_JOIN_CONFLICT,
                        raw[join].name,
                        join=join,
                        field=fname,
                        first=a,
                        first_branch=ba,
                        second=b,
                        second_branch=bb,
                    )
                if changed:
                    merged[fname] = next(iter(changed))
            return merged

        start = order[0].source
        payoffs = {name: self.payoff(raw[name]) for name in raw}
        start_span = payoffs[start][1]
        if start_span is not None:  # credited when a transition reaches its state: never the start
            self.report(E220_PAYOFF_ON_START, start_span, state=start)
        node = raw[start]
        written = {fv.name.text for fv in node.values}
        for fname in route_fields:
            if fname not in written:
                self.report(E216_NO_START_VALUE, node.name, field=fname, state=start)
        arrive(exit_of(shape), flow(shape, arrive(start, {})))
        _, state_order = topological([(t.source, t.target) for t in order])
        return [
            State(
                name,
                tuple((f, values[name][f]) for f in route_fields if f in values[name]),
                tuple(listed[name]),
                raw[name].span,
                value_spans(raw[name], listed[name]),
                *payoffs[name],
            )
            for name in state_order
        ]

    def due_dates(self, order: list[_Draft], as_of: dt.date) -> list[dt.date | None] | None:
        """as_of plus the horizons up to each transition (``order`` is topological); None
        when a date overflows. A state's date is the latest over the transitions into it
        (on a graph a join waits for its slowest branch), None when any of them has none;
        on a chain each transition starts where the one before it ended."""
        if not order:
            return []
        at: dict[str, dt.date | None] = {order[0].source: as_of}
        out: list[dt.date | None] = []
        for t in order:
            due = at[t.source]
            if t.horizon is None or due is None:
                due = None
            else:
                amount, unit = t.horizon
                try:
                    due = add_horizon(due, int(amount), unit)
                except (OverflowError, ValueError):
                    self.report(E306_DUE_PAST_9999, t.node.name, transition=t.name, as_of=as_of)
                    return None
            out.append(due)
            if t.target not in at:
                at[t.target] = due
            else:
                before = at[t.target]
                at[t.target] = None if before is None or due is None else max(before, due)
        return out

    def build_transitions(self, chain: list[_Draft], due: list[dt.date | None],
                          kills: list[dt.date | None]) -> list[Transition]:
        return [t.freeze(d, k) for t, d, k in zip(chain, due, kills, strict=True)]

    def kill_dates(self, order: list[_Draft], due: list[dt.date | None], as_of: dt.date) -> list[dt.date | None]:
        """The date each bounded kill is armed (None: no `by`, or an error reported). It
        must fall after the start of the transition's planned window (where the one
        before it is due; as_of for the first; on a graph, the latest due date into its
        source) and on or before its own due date."""
        at: dict[str, dt.date | None] = {order[0].source: as_of} if order else {}
        out: list[dt.date | None] = []
        for t, d in zip(order, due, strict=True):
            start = at.get(t.source)
            armed: dt.date | None = None
            if t.kill_by is not None and t.kill_after is not None:
                amount, unit = t.kill_after
                if start is None:
                    self.report(E314_KILL_BY_NO_START, t.kill_by.span, transition=t.name,
                                amount=_kill_by_text(t.kill_by))
                else:
                    try:
                        armed = add_horizon(start, int(amount), unit)
                    except (OverflowError, ValueError):
                        self.report(E306_DUE_PAST_9999, t.node.name, transition=t.name, as_of=as_of)
            elif t.kill_by is not None:
                armed = t.kill_on
            if armed is not None and t.kill_by is not None:
                if start is not None and armed <= start:
                    self.report(E314_KILL_BY_EARLY, t.kill_by.span, transition=t.name, date=armed, start=start)
                    armed = None
                elif d is not None and armed > d:
                    self.report(E314_KILL_BY_LATE, t.kill_by.span, transition=t.name, date=armed, due=d)
                    armed = None
            out.append(armed)
            if t.target not in at:
                at[t.target] = d
            else:
                before = at[t.target]
                at[t.target] = None if before is None or d is None else max(before, d)
        return out

    # ------------------------------------------------------------------ vision, evidence, criteria
    def vision(self, node: syn.StateBlock, states: dict[str, syn.StateBlock]) -> Vision:
        """The vision block's values as written. Which names it may hold and what kind of
        number each is are the policy's (`[vision] fields`): binding checks them
        (`pcsc.lang.lower.vision.check_vision`), so lowering never depends on a policy."""
        state_tok, lines = node.name, node.values
        if state_tok.text not in states:
            hint = suggest(state_tok.text, states)
            self.report(E201_UNKNOWN_VISION_STATE, state_tok, state=state_tok.text, suggestion=hint)
        items: list[VisionItem] = []
        for line in lines:
            key_tok, value_node = line.name, line.value
            key = key_tok.text
            if any(i.name == key for i in items):
                self.report(E209_VISION_ITEM_TWICE, key_tok, key=key)
                continue
            if not isinstance(value_node, syn.Quantity):
                self.report(E301_VISION_NOT_A_NUMBER, value_node, key=key)
                continue
            q = self.qty(value_node)
            items.append(VisionItem(key, q.value, q.unit, q.percent, line.span, key_tok.span, q.span))
        return Vision(state_tok.text, tuple(items), node.span, node.name.span,
                      tuple(line.name.text for line in lines))

    def evidence(self, node: syn.EvidenceBlock, transitions: dict[str, Span]) -> Evidence | None:
        name = node.name
        check_statement_lines(node.items, self.diags)
        text: dict[str, str | None] = {"source": None, "excerpt": ""}
        captured: dt.date | None = None
        captured_span: Span | None = None
        tier: int | None = None
        tier_span: Span | None = None
        weight: float | None = None
        weight_span: Span | None = None
        targets: dict[str, list[str]] = {"supports": [], "contradicts": []}
        unverified = False
        ok = True
        stated: dict[str, int] = {}
        for stmt in node.items:
            if isinstance(stmt, syn.Semi):
                continue
            kind = stmt.keyword
            if kind in stated and kind not in ("supports", "contradicts"):
                self.report(E209_EVIDENCE_STATEMENT_TWICE, stmt, keyword=kind, evidence=name.text, line=stated[kind])
            stated.setdefault(kind, stmt.span.line)
            if isinstance(stmt, syn.Scalar) and kind in ("source", "excerpt"):
                text[kind] = unquote(stmt.value.text)
            elif isinstance(stmt, syn.Scalar):  # captured
                captured = self.date(stmt.value)
                captured_span = stmt.span
                ok = ok and captured is not None
            elif isinstance(stmt, syn.Measure) and kind == "tier":
                tier_span = stmt.span
                q = self.qty(stmt.value)
                if q.unit or q.percent or q.value != int(q.value) or q.value < 0:
                    self.report(E307_TIER, q.span)
                    ok = False
                else:
                    tier = int(q.value)
            elif isinstance(stmt, syn.Measure):  # weight
                q = self.qty(stmt.value)
                if q.unit is not None or not 0.0 <= q.value <= 1.0:
                    self.report(E307_WEIGHT, q.span, value=q.value)
                    ok = False
                else:
                    weight = q.value
                    weight_span = stmt.span
            elif isinstance(stmt, syn.Names):  # supports, contradicts
                for target in stmt.names:
                    if target.text not in transitions:
                        hint = suggest(target.text, transitions)
                        if target.text in self.evidence_names:
                            hint = f"`{target.text}` is evidence; `{kind}` lists transitions"
                        self.report(E202_UNKNOWN_TRANSITION, target, transition=target.text, hint=hint)
                        ok = False
                    targets[kind].append(target.text)
            else:  # unverified
                unverified = stmt.flag is None or stmt.flag.text == "true"
        for required, value in (("captured", captured), ("tier", tier), ("weight", weight)):
            if value is None:
                if required not in stated:
                    self.report(E214_NO_EVIDENCE_STATEMENT, name, evidence=name.text, keyword=required)
                ok = False
        if not targets["supports"] and not targets["contradicts"]:
            self.report(W604_SUPPORTS_NOTHING, name, evidence=name.text)
        if tier is None:
            return None
        evidence = Evidence(
            name.text,
            text["source"],
            captured,
            tier,
            weight if weight is not None else 0.0,
            tuple(targets["supports"]),
            tuple(targets["contradicts"]),
            text["excerpt"] or "",
            unverified,
            node.span,
            captured_span,
            tier_span,
            weight_span,
        )
        # the policy checks its tier and date even when the block has other errors
        self.policy_evidence.append(evidence)
        return evidence if ok else None

    def criteria(self, node: syn.Criteria) -> list[Criterion]:
        out: list[Criterion] = []
        seen: set[str] = set()
        for item in node.items:
            name_tok = item.name
            q = self.qty(item.value)
            name = name_tok.text
            if name == "total":
                self.report(W602_TOTAL_IGNORED, item)
                continue
            if name in seen:
                self.report(E209_CRITERION_TWICE, name_tok, name=name)
                continue
            seen.add(name)
            if q.unit is not None or q.percent:
                self.report(E301_CRITERION_UNIT, q.span, name=name)
                continue
            out.append(Criterion(name, q.value, item.span))
        return out


def _route_key(item: syn.RouteItem) -> str:
    """How a route statement is grouped and named in messages: its keyword."""
    if isinstance(item, syn.TransitionBlock):
        return "transition"
    if isinstance(item, syn.EvidenceBlock):
        return "evidence"
    return item.keyword


def lower_route(
    tree: syn.RouteBlock, file: str, text: str, resolve: LibraryResolver, diags: Diagnostics
) -> Route | None:
    return RouteLowerer(tree, file, text, resolve, diags).lower()


def lower_route_facts(
    tree: syn.RouteBlock, file: str, text: str, resolve: LibraryResolver, diags: Diagnostics
) -> tuple[Route | None, PolicyFacts]:
    """Like `lower_route`, and also what the policy checks need, even on errors."""
    lowerer = RouteLowerer(tree, file, text, resolve, diags)
    route = lowerer.lower()
    return route, lowerer.facts


__all__ = ["LibraryResolver", "PolicyFacts", "lower_route", "lower_route_facts"]


# ---------------------------------------------------------------------- condition types
_NUMERIC = frozenset({"number", "usd", "days", "months", "years"})
_KIND_TEXT = {
    "number": "a number",
    "usd": "an amount in usd",
    "days": "a duration in days",
    "months": "a duration in months",
    "years": "a duration in years",
    "bool": "a bool",
    "date": "a date",
    "string": "a string",
    "none": "`none`",
}
_FIELD_KIND = {"usd": "usd", "bool": "bool", "count": "number", "number": "number", "ratio": "number"}


def _is_zero(e: Expr) -> bool:
    while isinstance(e, ex.Neg):
        e = e.operand
    return isinstance(e, ex.Number) and e.value == 0


class ConditionTypes(Visitor[str]):
    """The type of each part of a threshold or kill: "number", a unit ("usd", "days",
    …), "bool", "date", "string", "none", or "any" where it cannot be known (an unknown
    field, already reported). A comparison or an operator whose sides do not fit is a
    PCSC-E301 at `check`, a division by a literal zero a PCSC-E312: `resolve` never
    meets either. A field compared with a number or a bool literal is checked by
    `check_field_value` (as a state's value is), not here."""

    def __init__(self, fields: dict[str, FieldDecl], kind: str, diags: Diagnostics) -> None:
        self.fields = fields
        self.kind = kind
        self.diags = diags

    def generic_visit(self, e: Expr) -> str:
        for child in children(e):
            self.visit(child)
        return "any"

    def visit_Number(self, e: ex.Number) -> str:
        return e.unit or "number"

    def visit_String(self, e: ex.String) -> str:
        return "string"

    def visit_DateLit(self, e: ex.DateLit) -> str:
        return "date"

    def visit_BoolLit(self, e: ex.BoolLit) -> str:
        return "bool"

    def visit_NoneLit(self, e: ex.NoneLit) -> str:
        return "none"

    def visit_Name(self, e: ex.Name) -> str:
        decl = self.fields.get(e.name)
        return "any" if decl is None else _FIELD_KIND.get(decl.type, "any")

    def visit_Not(self, e: ex.Not) -> str:
        self.visit(e.operand)
        return "bool"

    def visit_Logic(self, e: ex.Logic) -> str:
        for operand in e.operands:
            self.visit(operand)
        return "bool"

    def visit_Neg(self, e: ex.Neg) -> str:
        kind = self.visit(e.operand)
        if kind not in _NUMERIC and kind != "any":
            self.diags.diag(E301_NEGATE, e.span, kind=self.kind, operand=_KIND_TEXT[kind])
            return "any"
        return kind

    def visit_Call(self, e: ex.Call) -> str:
        kinds = {self.visit(a) for a in e.args} - {"any"}
        if len(kinds) == 1 and kinds <= _NUMERIC:
            return kinds.pop()
        if kinds and not kinds <= _NUMERIC:
            self.diags.diag(E301_FUNCTION_UNITS, e.span, kind=self.kind, function=e.func)
        return "any"

    def visit_Binary(self, e: ex.Binary) -> str:
        left, right = self.visit(e.left), self.visit(e.right)
        if e.op == "/" and _is_zero(e.right):
            self.diags.diag(E312_DIVISION_BY_ZERO, e.span, kind=self.kind)
            return "any"
        if "any" in (left, right):
            return "any"
        for side in (left, right):
            if side not in _NUMERIC:
                self.diags.diag(E301_NEEDS_NUMBERS, e.span, kind=self.kind, op=e.op, operand=_KIND_TEXT[side])
                return "any"
        if e.op in "+-":
            if left != right:
                self.diags.diag(
                    E301_ADDS, e.span, kind=self.kind, op=e.op, left=_KIND_TEXT[left], right=_KIND_TEXT[right]
                )
                return "any"
            return left
        if e.op == "*":
            if "number" not in (left, right):
                self.diags.diag(E301_MULTIPLIES, e.span, kind=self.kind, left=_KIND_TEXT[left], right=_KIND_TEXT[right])
                return "any"
            return right if left == "number" else left
        if left == right:  # usd / usd is a ratio
            return "number"
        if right == "number":
            return left
        self.diags.diag(E301_DIVIDES, e.span, kind=self.kind, left=_KIND_TEXT[left], right=_KIND_TEXT[right])
        return "any"

    def visit_Compare(self, e: ex.Compare) -> str:
        left, right = self.visit(e.left), self.visit(e.right)
        if self.field_literal(e.left, e.right) or self.field_literal(e.right, e.left):
            return "bool"  # checked by check_field_value
        if "any" in (left, right) or (e.op in ("==", "!=") and "none" in (left, right)):
            return "bool"
        ordered = e.op not in ("==", "!=")
        if left != right:
            self.diags.diag(
                _compare_message(left, right),
                e.span,
                kind=self.kind,
                op=e.op,
                left=self.describe(e.left, left),
                right=self.describe(e.right, right),
            )
        elif ordered and left not in _NUMERIC and left != "date":
            self.diags.diag(E301_ORDERS, e.span, kind=self.kind, op=e.op, operand=_KIND_TEXT[left])
        return "bool"

    def describe(self, side: Expr, kind: str) -> str:
        if isinstance(side, ex.Name) and side.name in self.fields:
            return f"field `{side.name}` (a {self.fields[side.name].type})"
        return _KIND_TEXT[kind]

    def field_literal(self, side: Expr, other: Expr) -> bool:
        return isinstance(side, ex.Name) and side.name in self.fields and isinstance(other, ex.Number | ex.BoolLit)



def _compare_message(left: str, right: str) -> Message:
    """A comparison of two kinds that differ, with the help that fits them."""
    kinds = {left, right}
    if "string" in kinds and kinds & _NUMERIC:
        return E301_COMPARES_QUOTED_NUMBER
    if "date" in kinds:
        return E301_COMPARES_DATE
    if kinds <= _NUMERIC:
        return E301_COMPARES_UNITS
    return E301_COMPARES


def value_spans(node: syn.StateBlock, listed: dict[str, float | bool]) -> tuple[tuple[str, Span], ...]:
    """Where each field a state lists is written (its first `name value` statement)."""
    out: dict[str, Span] = {}
    for fv in node.values:
        if fv.name.text in listed and fv.name.text not in out:
            out[fv.name.text] = fv.span
    return tuple(out.items())


def _kill_by_text(by: syn.KillBy) -> str:
    """What follows `by`, as written in canonical form: `2027-06-01`, `6 months`."""
    if by.date is not None:
        return by.date.text
    assert by.duration is not None
    q = by.duration
    return f"{'-' if q.minus else ''}{q.number}{'' if q.unit is None else ' ' + q.unit}"
