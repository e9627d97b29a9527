"""Lower a `route` block to a `Route`: names, the chain, carry-forward, types, units.

Every check reports and continues, so one run shows all the errors of a route; the
route is returned only when none of them is an error.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

import attrs
from lark import Token, Tree

from pcsc.diagnostics import codes
from pcsc.diagnostics.codes import Code
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.ir import (
    CostItem,
    Criterion,
    Evidence,
    Expr,
    FieldDecl,
    Library,
    Obligation,
    PolicyRef,
    Route,
    State,
    Transition,
    Vision,
)
from pcsc.ir import expr as ex
from pcsc.ir.visit import walk
from pcsc.lower.common import (
    Quantity,
    check_field_value,
    check_statement_lines,
    quantity,
    suggest,
)
from pcsc.lower.expr import ExprLowerer, span_of, unquote
from pcsc.lower.literals import add_horizon, parse_date
from pcsc.lower.tree import Node, opt_tok, sub, subtrees, tok, tokens

LibraryResolver = Callable[[str, Span], Library | None]

_POLICY_REF = re.compile(r"^([A-Za-z0-9_.\-/]+)@([A-Za-z0-9_.\-+]+)$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
VISION_KEYS = ("tam", "capture", "defensibility")
EXPR_FUNCTIONS = ("min", "max")
_KEYWORD = {"ref_class": "class", "policy_ref": "policy"}  # statement kinds whose keyword is not their name


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

    @classmethod
    def of(cls, route: Route) -> PolicyFacts:
        return cls(
            route.policy,
            route.as_of,
            tuple((t.ref_class, t.class_span) for t in route.transitions),
            route.criteria,
            route.evidence,
        )


class RouteLowerer:
    def __init__(self, tree: Node, file: str, text: str, resolve: LibraryResolver, diags: Diagnostics) -> None:
        self.tree = tree
        self.file = file
        self.text = text
        self.resolve = resolve
        self.diags = diags
        self.exprs = ExprLowerer(file, diags)
        # False when `uses` is missing or a library cannot be used: names that would
        # come from it are then not reported as unknown (that would only be noise).
        self.libraries_ok = True
        self.facts = PolicyFacts(None, None, (), (), ())
        self.evidence_names: dict[str, Span] = {}

    # ------------------------------------------------------------------ helpers
    def span(self, node: Node | Token) -> Span:
        return span_of(node, self.file)

    def error(self, code: Code, message: str, node: Node | Token | Span, help: str | None = None) -> None:
        span = node if isinstance(node, Span) else self.span(node)
        self.diags.add(code, message, span, help)

    def source_text(self, node: Node) -> str:
        return self.text[node.meta.start_pos : node.meta.end_pos]

    def date(self, token: Token) -> dt.date | None:
        value = parse_date(str(token))
        if value is None:
            self.error(codes.E306, f"`{token}` is not a valid date", token)
        return value

    def qty(self, node: Node) -> Quantity:
        return quantity(node, self.file, self.diags)

    def unique(self, kind: str, items: list[Node], seen: dict[str, Span]) -> None:
        for item in items:
            name_tok = item.children[0]
            name = str(name_tok)
            if name in seen:
                self.error(
                    codes.E209,
                    f"{kind} `{name}` is defined twice",
                    name_tok,
                    f"first defined at line {seen[name].line}",
                )
            else:
                seen[name] = self.span(name_tok)

    # ------------------------------------------------------------------ the route
    def lower(self) -> Route | None:
        before = len(self.diags)
        name_tok, title_tok = tok(self.tree, 0), opt_tok(self.tree, 1)
        route_span = self.span(self.tree)
        check_statement_lines(self.tree.children[2:], self.file, self.diags)
        by_kind: dict[str, list[Node]] = {}
        for item in subtrees(self.tree, 2):
            by_kind.setdefault(str(item.data), []).append(item)

        def single(kind: str, required: bool) -> Node | None:
            items = by_kind.get(kind, [])
            keyword = _KEYWORD.get(kind, kind)
            for extra in items[1:]:
                self.error(
                    codes.E209,
                    f"`{keyword}` is stated twice in route `{name_tok}`",
                    extra,
                    f"first stated at line {self.span(items[0]).line}",
                )
            if not items and required:
                self.error(codes.E214, f"route `{name_tok}` has no `{keyword}` statement", name_tok)
            return items[0] if items else None

        as_of_node = single("as_of", True)
        policy_node = single("policy_ref", True)
        uses_node = single("uses", True)
        vision_node = single("vision", False)
        criteria_node = single("criteria", False)

        as_of = self.date(tok(as_of_node, 0)) if as_of_node else None
        policy = self.policy_ref(policy_node) if policy_node else None
        fields, obligations, uses = self.libraries(uses_node)

        state_nodes = by_kind.get("state", [])
        transition_nodes = by_kind.get("transition", [])
        evidence_nodes = by_kind.get("evidence", [])
        names: dict[str, Span] = {}
        self.unique("state", state_nodes, names)
        names_t: dict[str, Span] = {}
        self.unique("transition", transition_nodes, names_t)
        names_e: dict[str, Span] = {}
        self.unique("evidence", evidence_nodes, names_e)
        self.evidence_names = names_e

        route_fields = self.route_fields(state_nodes, fields)
        raw_states = {str(s.children[0]): s for s in state_nodes}
        transitions = [self.transition(t, route_fields, obligations) for t in transition_nodes]
        if not transitions:
            self.error(
                codes.E219,
                f"route `{name_tok}` has no transitions",
                name_tok,
                "a route is a chain of at least one `transition A: S -> T { … }`",
            )
        vision = self.vision(vision_node, raw_states) if vision_node else None
        if vision_node is None:
            self.error(
                codes.E213,
                f"route `{name_tok}` has no vision",
                name_tok,
                "add `vision STATE { tam … capture … defensibility … }` for the final state",
            )
        chain = self.chain(transitions, raw_states, vision)
        states = self.carry_forward(chain, raw_states, route_fields) if chain else []
        used = {s.name for s in states}
        for s in state_nodes:
            if str(s.children[0]) not in used and chain:
                self.error(codes.W603, f"state `{s.children[0]}` is not used by any transition", s.children[0])
        evidence = [self.evidence(e, names_t) for e in evidence_nodes]
        criteria = self.criteria(criteria_node) if criteria_node else []
        due = self.due_dates(chain, as_of) if chain and as_of is not None else None
        self.facts = PolicyFacts(
            policy,
            as_of,
            tuple((t["ref_class"], t["class_span"]) for t in transitions if t["ref_class"] is not None),
            tuple(criteria),
            tuple(e for e in evidence if e is not None),
        )

        if any(d.severity == "error" for d in self.diags.items[before:]):
            return None
        assert as_of is not None and policy is not None and vision is not None and chain and due is not None
        ordered = self.build_transitions(chain, due)
        return Route(
            name=str(name_tok),
            title=unquote(title_tok) if title_tok is not None else None,
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
            span=route_span,
        )

    # ------------------------------------------------------------------ header
    def policy_ref(self, node: Node) -> PolicyRef | None:
        ref_tok, hash_tok = tok(node, 0), opt_tok(node, 1)
        ref = unquote(ref_tok)
        match = _POLICY_REF.match(ref)
        if not match:
            self.error(
                codes.E406,
                f"policy reference `{ref}` is not of the form `id@version`",
                ref_tok,
                'write e.g. `policy "venture@1.0.0"`',
            )
            return None
        digest = None
        if hash_tok is not None:
            digest = unquote(hash_tok).lower()
            if not _HEX64.match(digest):
                self.error(codes.E406, "a policy pin must be 64 hexadecimal digits (SHA-256)", hash_tok)
                return None
        return PolicyRef(match.group(1), match.group(2), digest, self.span(node))

    def libraries(self, node: Node | None) -> tuple[dict[str, FieldDecl], dict[str, Obligation], tuple[str, ...]]:
        fields: dict[str, FieldDecl] = {}
        obligations: dict[str, Obligation] = {}
        if node is None:
            self.libraries_ok = False
            return fields, obligations, ()
        uses: list[str] = []
        for name in tokens(sub(node, 0)):
            if str(name) in uses:
                self.error(codes.E209, f"library `{name}` is listed twice in `uses`", name)
                continue
            lib = self.resolve(str(name), self.span(name))
            uses.append(str(name))
            if lib is None:
                self.libraries_ok = False
                continue
            for f in lib.fields:
                if f.name in fields:
                    self.error(
                        codes.E209,
                        f"field `{f.name}` is defined by both `{fields[f.name].library}` and `{lib.name}`",
                        name,
                    )
                fields.setdefault(f.name, f)
            for o in lib.obligations:
                if o.name in obligations:
                    self.error(
                        codes.E209,
                        f"obligation `{o.name}` is defined by both `{obligations[o.name].library}` and `{lib.name}`",
                        name,
                    )
                obligations.setdefault(o.name, o)
        return fields, obligations, tuple(uses)

    # ------------------------------------------------------------------ states
    def route_fields(self, state_nodes: list[Node], library_fields: dict[str, FieldDecl]) -> dict[str, FieldDecl]:
        """The library fields this route mentions, in order of first mention."""
        route_fields: dict[str, FieldDecl] = {}
        for s in state_nodes:
            for fv in subtrees(s, 1):
                fname_tok = tok(fv, 0)
                fname = str(fname_tok)
                if fname in library_fields:
                    route_fields.setdefault(fname, library_fields[fname])
                elif self.libraries_ok:
                    self.error(codes.E205, f"unknown field `{fname}`", fname_tok, suggest(fname, library_fields))
        return route_fields

    def state_values(self, node: Node, route_fields: dict[str, FieldDecl]) -> dict[str, float | bool]:
        values: dict[str, float | bool] = {}
        for fv in subtrees(node, 1):
            fname_tok, value_node = tok(fv, 0), sub(fv, 1)
            fname = str(fname_tok)
            if fname in values:
                self.error(codes.E209, f"field `{fname}` is given twice in state `{node.children[0]}`", fname_tok)
                continue
            decl = route_fields.get(fname)
            if decl is None:
                continue  # already reported as unknown
            value = self.value(value_node, decl, f"field `{fname}`")
            if value is not None:
                values[fname] = value
        return values

    def value(self, node: Node, decl: FieldDecl, what: str) -> float | bool | None:
        inner = node.children[0]
        if isinstance(inner, Tree):  # quantity
            q = self.qty(inner)
            return q.value if check_field_value(decl.type, q, what, self.diags) else None
        assert isinstance(inner, Token)
        if inner.type in ("TRUE", "FALSE"):
            if decl.type != "bool":
                self.error(codes.E301, f"{what} is of type {decl.type}; `{inner}` is a bool", inner)
                return None
            return inner.type == "TRUE"
        self.error(codes.E301, f"{what} is of type {decl.type}; a {inner.type.lower()} cannot be its value", inner)
        return None

    # ------------------------------------------------------------------ transitions
    def transition(
        self, node: Node, route_fields: dict[str, FieldDecl], obligations: dict[str, Obligation]
    ) -> dict[str, Any]:
        name, source, target = tok(node, 0), tok(node, 1), tok(node, 2)
        check_statement_lines(node.children[3:], self.file, self.diags)
        t: dict[str, Any] = {
            "name": str(name),
            "source": str(source),
            "target": str(target),
            "source_tok": source,
            "target_tok": target,
            "node": node,
            "actor": None,
            "mechanism": None,
            "asset": None,
            "ref_class": None,
            "class_span": None,
            "threshold": None,
            "threshold_text": None,
            "kill": None,
            "kill_text": None,
            "horizon": None,
            "cost": (),
            "learning_cost": None,
            "estimates": (),
            "discharges": (),
        }
        seen: dict[str, Span] = {}
        for stmt in subtrees(node, 3):
            kind = str(stmt.data)
            if kind in seen and kind != "stated_p":
                self.error(
                    codes.E209,
                    f"`{_KEYWORD.get(kind, kind)}` is stated twice in transition `{name}`",
                    stmt,
                    f"first stated at line {seen[kind].line}",
                )
            seen.setdefault(kind, self.span(stmt))
            if kind in ("actor", "mechanism", "asset"):
                t[kind] = unquote(tok(stmt, 0))
            elif kind == "ref_class":
                t["ref_class"] = unquote(tok(stmt, 0))
                t["class_span"] = self.span(tok(stmt, 0))
            elif kind in ("threshold", "kill"):
                expr = self.exprs.lower(sub(stmt, 0))
                self.check_condition(expr, route_fields, kind)
                t[kind] = expr
                t[kind + "_text"] = self.source_text(sub(stmt, 0))
            elif kind == "horizon":
                t["horizon"] = self.horizon(sub(stmt, 0))
            elif kind == "cost":
                check_statement_lines(stmt.children, self.file, self.diags, "cost items")
                t["cost"] = tuple(c for c in (self.cost_item(i) for i in subtrees(stmt)) if c)
            elif kind == "learning_cost":
                q = self.qty(sub(stmt, 0))
                if check_field_value("usd", q, "`learning_cost`", self.diags):
                    if q.value < 0:
                        self.error(codes.E303, "`learning_cost` cannot be negative", q.span)
                    t["learning_cost"] = q.value
            elif kind == "estimates":
                t["estimates"] = tuple(self.estimate(q) for q in subtrees(stmt))
            elif kind == "discharges":
                names = []
                for ob in tokens(sub(stmt, 0)):
                    if str(ob) not in obligations and self.libraries_ok:
                        self.error(codes.E204, f"unknown obligation `{ob}`", ob, suggest(str(ob), obligations))
                    names.append(str(ob))
                t["discharges"] = tuple(names)
            elif kind == "stated_p":
                self.error(
                    codes.E305,
                    "a route may not state `p`: probabilities are code-owned",
                    stmt,
                    "remove this line; the policy's prior for the class, reweighted by "
                    "evidence, gives p. Record your own view with `estimates`.",
                )
        if t["ref_class"] is None:
            self.error(
                codes.E214,
                f"transition `{name}` has no `class`",
                name,
                'add `class "<reference class>"`: its prior comes from the policy',
            )
        return t

    def horizon(self, node: Node) -> tuple[float, str] | None:
        q = self.qty(node)
        if q.unit not in ("days", "months", "years"):
            self.error(codes.E301, f"a horizon is a duration; {q.value:g} needs a unit: days, months or years", q.span)
            return None
        if q.value <= 0 or q.value != int(q.value) or q.percent:
            self.error(codes.E307, "a horizon is a positive whole number of days, months or years", q.span)
            return None
        return (q.value, q.unit)

    def cost_item(self, node: Node) -> CostItem | None:
        name = tok(node, 0)
        if node.data == "cost_item_times":
            count_node, unit_node = sub(node, 1), sub(node, 2)
            count = self.qty(count_node)
            if count.unit is not None or count.percent:
                self.error(codes.E301, f"cost `{name}`: the count in `n * amount` takes no unit", count.span)
                return None
        else:
            unit_node = sub(node, 1)
            count = Quantity(1.0, None, False, self.span(node))
        amount = self.qty(unit_node)
        if amount.unit != "usd":
            self.error(codes.E301, f"cost `{name}` must be in usd", amount.span, "write e.g. `2 * 45k usd`")
            return None
        if count.value < 0 or amount.value < 0:
            self.error(
                codes.E303,
                f"cost `{name}` is negative",
                self.span(node),
                "costs are amounts spent; a saving belongs in the value, not the cost",
            )
            return None
        return CostItem(str(name), count.value, amount.value, self.span(node))

    def estimate(self, node: Node) -> float:
        q = self.qty(node)
        if q.unit is not None:
            self.error(codes.E301, "an estimate is a probability and takes no unit", q.span)
        elif not 0.0 <= q.value <= 1.0:
            self.error(codes.E304, f"estimate {q.value:g} is outside [0, 1]", q.span)
        return q.value

    def check_condition(self, expr: Expr, route_fields: dict[str, FieldDecl], kind: str) -> None:
        """Names in a threshold or kill condition are route fields; units match the field."""
        for node in walk(expr):
            if isinstance(node, ex.Name) and node.name not in route_fields:
                if not self.libraries_ok:
                    continue
                self.error(
                    codes.E205,
                    f"`{node.name}` in the {kind} is not a field of this route",
                    node.span,
                    suggest(node.name, route_fields),
                )
            elif isinstance(node, ex.Call) and node.func not in EXPR_FUNCTIONS:
                self.error(
                    codes.E218,
                    f"unknown function `{node.func}` in the {kind}",
                    node.span,
                    f"a {kind} may use {', '.join(EXPR_FUNCTIONS)}",
                )
            elif isinstance(node, ex.Compare):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(side, ex.Name) and side.name in route_fields and isinstance(other, ex.Number):
                        decl = route_fields[side.name]
                        q = Quantity(other.value, other.unit, other.percent, other.span)
                        check_field_value(decl.type, q, f"field `{side.name}`", self.diags)
                    if isinstance(side, ex.Name) and side.name in route_fields and isinstance(other, ex.BoolLit):
                        if route_fields[side.name].type != "bool":
                            self.error(codes.E301, f"field `{side.name}` is not a bool", other.span)

    # ------------------------------------------------------------------ the chain
    def chain(
        self, transitions: list[dict[str, Any]], states: dict[str, Node], vision: Vision | None
    ) -> list[dict[str, Any]]:
        """Order the transitions as one chain from the start state to the vision state."""
        ok = True
        for t in transitions:
            for end in ("source", "target"):
                if t[end] not in states:
                    self.error(codes.E201, f"unknown state `{t[end]}`", t[end + "_tok"], suggest(t[end], states))
                    ok = False
        if not ok or not transitions:
            return []
        out_edges: dict[str, int] = {}
        in_edges: dict[str, int] = {}
        for i, t in enumerate(transitions):
            if t["source"] in out_edges:
                first = transitions[out_edges[t["source"]]]
                self.error(
                    codes.E210,
                    f"route branches at state `{t['source']}`: both `{first['name']}` and `{t['name']}` leave it",
                    t["node"].children[0],
                    "competing routes are separate `route` blocks",
                )
                ok = False
            else:
                out_edges[t["source"]] = i
            if t["target"] in in_edges:
                first = transitions[in_edges[t["target"]]]
                self.error(
                    codes.E210,
                    f"route merges at state `{t['target']}`: both `{first['name']}` and `{t['name']}` enter it",
                    t["node"].children[0],
                    "a route is one chain; competing routes are separate `route` blocks",
                )
                ok = False
            else:
                in_edges[t["target"]] = i
        if not ok:
            return []
        # With at most one transition into and out of every state, the transitions
        # fall apart into simple paths (each from a state nothing enters) and cycles.
        placed = [False] * len(transitions)
        paths: list[list[int]] = []
        for i, t in enumerate(transitions):
            if t["source"] not in in_edges:
                path: list[int] = []
                j: int | None = i
                while j is not None and not placed[j]:
                    placed[j] = True
                    path.append(j)
                    j = out_edges.get(transitions[j]["target"])
                paths.append(path)
        for i in range(len(transitions)):
            if placed[i]:
                continue
            cycle: list[int] = []
            k: int | None = i
            while k is not None and not placed[k]:
                placed[k] = True
                cycle.append(k)
                k = out_edges.get(transitions[k]["target"])
            loop = [transitions[c]["source"] for c in cycle] + [transitions[cycle[0]]["source"]]
            self.error(
                codes.E211,
                "the route has a cycle: " + " -> ".join(f"`{s}`" for s in loop),
                transitions[cycle[0]]["node"].children[0],
                "a route runs from its start state to its vision state without returning; "
                "retarget or remove one of " + ", ".join(f"`{transitions[c]['name']}`" for c in cycle),
            )
            ok = False
        if not paths:
            return []
        main = paths[0]
        if vision is not None:
            main = next((p for p in paths if transitions[p[-1]]["target"] == vision.state), main)
        start, end = transitions[main[0]]["source"], transitions[main[-1]]["target"]
        ends_at_vision = vision is not None and end == vision.state
        for piece in paths:
            if piece is main:
                continue
            first, last = transitions[piece[0]], transitions[piece[-1]]
            names = [transitions[j]["name"] for j in piece]
            steps = " -> ".join(f"`{s}`" for s in [first["source"], *(transitions[j]["target"] for j in piece)])
            if len(names) == 1:
                what, verb = f"transition `{names[0]}`", "is"
            else:
                what, verb = "transitions " + ", ".join(f"`{n}`" for n in names), "are"
            gap = (last["target"], start) if ends_at_vision else (end, first["source"])
            self.error(
                codes.E212,
                f"{what} ({steps}) {verb} not on the chain from `{start}` to `{end}`",
                first["node"].children[0],
                f"the route has a gap: no transition leads from `{gap[0]}` to `{gap[1]}`; "
                "each transition must start where the previous one ends",
            )
            ok = False
        if ok and vision is not None and not ends_at_vision and vision.state in states:
            self.error(
                codes.E215,
                f"the chain ends at `{end}` but the vision is for `{vision.state}`",
                vision.span,
                f"the vision belongs to the final state, `{end}`",
            )
            ok = False
        return [transitions[j] for j in main] if ok else []

    def carry_forward(
        self, chain: list[dict[str, Any]], raw: dict[str, Node], route_fields: dict[str, FieldDecl]
    ) -> list[State]:
        order = [chain[0]["source"]] + [t["target"] for t in chain]
        states: list[State] = []
        current: dict[str, float | bool] = {}
        for i, name in enumerate(order):
            node = raw[name]
            listed = self.state_values(node, route_fields)
            if i == 0:
                written = {str(tok(fv, 0)) for fv in subtrees(node, 1)}  # even with a bad value
                for fname in route_fields:
                    if fname not in written:
                        self.error(
                            codes.E216,
                            f"field `{fname}` has no value in the start state `{name}`",
                            node.children[0],
                            f"give `{fname}` its starting value in `state {name}`",
                        )
            current = {**current, **listed}
            values = tuple((f, current[f]) for f in route_fields if f in current)
            states.append(State(name, values, tuple(listed), self.span(node)))
        return states

    def due_dates(self, chain: list[dict[str, Any]], as_of: dt.date) -> list[dt.date | None] | None:
        """as_of plus the horizons up to each transition; None when a date overflows."""
        out: list[dt.date | None] = []
        due: dt.date | None = as_of
        for t in chain:
            if t["horizon"] is None or due is None:
                due = None
            else:
                amount, unit = t["horizon"]
                try:
                    due = add_horizon(due, int(amount), unit)
                except (OverflowError, ValueError):
                    self.error(
                        codes.E306,
                        f"the due date of `{t['name']}` ({as_of} plus the horizons so far) is past the year 9999",
                        t["node"].children[0],
                    )
                    return None
            out.append(due)
        return out

    def build_transitions(self, chain: list[dict[str, Any]], due: list[dt.date | None]) -> list[Transition]:
        return [
            Transition(
                name=t["name"],
                source=t["source"],
                target=t["target"],
                actor=t["actor"],
                mechanism=t["mechanism"],
                asset=t["asset"],
                ref_class=t["ref_class"],
                class_span=t["class_span"],
                threshold=t["threshold"],
                threshold_text=t["threshold_text"],
                kill=t["kill"],
                kill_text=t["kill_text"],
                horizon=t["horizon"],
                cost=t["cost"],
                learning_cost=t["learning_cost"],
                estimates=t["estimates"],
                discharges=t["discharges"],
                due=d,
                span=self.span(t["node"]),
            )
            for t, d in zip(chain, due, strict=True)
        ]

    # ------------------------------------------------------------------ vision, evidence, criteria
    def vision(self, node: Node, states: dict[str, Node]) -> Vision | None:
        state_tok, items = tok(node, 0), subtrees(node, 1)
        if str(state_tok) not in states:
            self.error(
                codes.E201, f"unknown state `{state_tok}` in the vision", state_tok, suggest(str(state_tok), states)
            )
        values: dict[str, float] = {}
        misspelt = False
        for item in items:
            key_tok, value_node = tok(item, 0), sub(item, 1)
            key = str(key_tok)
            if key not in VISION_KEYS:
                misspelt = True
                self.error(
                    codes.E220,
                    f"unknown vision item `{key}`",
                    key_tok,
                    suggest(key, VISION_KEYS) or "a vision states tam, capture and defensibility",
                )
                continue
            if key in values:
                self.error(codes.E209, f"`{key}` is stated twice in the vision", key_tok)
                continue
            inner = value_node.children[0]
            if not isinstance(inner, Tree):
                self.error(codes.E301, f"vision `{key}` must be a number", value_node)
                continue
            q = self.qty(inner)
            ftype = "usd" if key == "tam" else "ratio"
            if not check_field_value(ftype, q, f"vision `{key}`", self.diags):
                continue
            if ftype == "ratio" and not 0.0 <= q.value <= 1.0:
                self.error(codes.E307, f"vision `{key}` is {q.value:g}; it must be in [0, 1]", q.span)
                continue
            if q.value < 0:
                self.error(codes.E307, f"vision `{key}` cannot be negative", q.span)
                continue
            values[key] = q.value
        missing = [k for k in VISION_KEYS if k not in values]
        for k in missing:
            if not misspelt and not any(str(tok(i, 0)) == k for i in items):
                self.error(codes.E214, f"the vision has no `{k}`", node.children[0])
        if missing:
            return None
        return Vision(str(state_tok), values["tam"], values["capture"], values["defensibility"], self.span(node))

    def evidence(self, node: Node, transitions: dict[str, Span]) -> Evidence | None:
        name, body = tok(node, 0), subtrees(node, 1)
        check_statement_lines(node.children[1:], self.file, self.diags)
        e: dict[str, Any] = {
            "source": None,
            "captured": None,
            "tier": None,
            "weight": None,
            "supports": [],
            "contradicts": [],
            "excerpt": "",
            "unverified": False,
        }
        ok = True
        stated: dict[str, int] = {}
        for stmt in body:
            kind = str(stmt.data)
            if kind in stated and kind not in ("supports", "contradicts"):
                self.error(
                    codes.E209,
                    f"`{kind}` is stated twice in evidence `{name}`",
                    stmt,
                    f"first stated at line {stated[kind]}",
                )
            stated.setdefault(kind, self.span(stmt).line)
            if kind in ("source", "excerpt"):
                e[kind] = unquote(tok(stmt, 0))
            elif kind == "captured":
                e["captured"] = self.date(tok(stmt, 0))
                e["captured_span"] = self.span(stmt)
                ok = ok and e["captured"] is not None
            elif kind == "tier":
                e["tier_span"] = self.span(stmt)
                q = self.qty(sub(stmt, 0))
                if q.unit or q.percent or q.value != int(q.value) or q.value < 0:
                    self.error(codes.E307, "an evidence tier is a whole number", q.span)
                    ok = False
                else:
                    e["tier"] = int(q.value)
            elif kind == "weight":
                q = self.qty(sub(stmt, 0))
                if q.unit is not None or not 0.0 <= q.value <= 1.0:
                    self.error(codes.E307, f"evidence weight {q.value:g} is outside [0, 1]", q.span)
                    ok = False
                else:
                    e["weight"] = q.value
            elif kind in ("supports", "contradicts"):
                for target in tokens(sub(stmt, 0)):
                    if str(target) not in transitions:
                        hint = suggest(str(target), transitions)
                        if str(target) in self.evidence_names:
                            hint = f"`{target}` is evidence; `{kind}` lists transitions"
                        self.error(codes.E202, f"unknown transition `{target}`", target, hint)
                        ok = False
                    e[kind].append(str(target))
            elif kind == "unverified":
                flag = opt_tok(stmt, 0)
                e["unverified"] = flag is None or str(flag) == "true"
        for required in ("captured", "tier", "weight"):
            if e[required] is None:
                if not any(s.data == required for s in body):
                    self.error(codes.E214, f"evidence `{name}` has no `{required}`", name)
                ok = False
        if not e["supports"] and not e["contradicts"]:
            self.error(codes.W604, f"evidence `{name}` supports or contradicts no transition", name)
        if not ok:
            return None
        return Evidence(
            str(name),
            e["source"],
            e["captured"],
            e["tier"],
            e["weight"],
            tuple(e["supports"]),
            tuple(e["contradicts"]),
            e["excerpt"],
            e["unverified"],
            self.span(node),
            e.get("captured_span"),
            e.get("tier_span"),
        )

    def criteria(self, node: Node) -> list[Criterion]:
        out: list[Criterion] = []
        seen: set[str] = set()
        for item in subtrees(node):
            name_tok, q_node = tok(item, 0), sub(item, 1)
            q = self.qty(q_node)
            name = str(name_tok)
            if name == "total":
                self.error(
                    codes.W602, "a stated criteria total is ignored; T is computed from the policy's weights", item
                )
                continue
            if name in seen:
                self.error(codes.E209, f"criterion `{name}` is stated twice", name_tok)
                continue
            seen.add(name)
            if q.unit is not None or q.percent:
                self.error(codes.E301, f"criterion `{name}` is a score from 0 to 100 and takes no unit", q.span)
                continue
            out.append(Criterion(name, q.value, self.span(item)))
        return out


def lower_route(tree: Node, file: str, text: str, resolve: LibraryResolver, diags: Diagnostics) -> Route | None:
    return RouteLowerer(tree, file, text, resolve, diags).lower()


def lower_route_facts(
    tree: Node, file: str, text: str, resolve: LibraryResolver, diags: Diagnostics
) -> tuple[Route | None, PolicyFacts]:
    """Like `lower_route`, and also what the policy checks need, even on errors."""
    lowerer = RouteLowerer(tree, file, text, resolve, diags)
    route = lowerer.lower()
    return route, lowerer.facts


__all__ = ["LibraryResolver", "PolicyFacts", "lower_route", "lower_route_facts"]
