"""The obligation discharger: deterministic, no model, no I/O.

A material Δf on a transition is covered when an obligation the transition lists in
`discharges` covers f and every `require` line of it holds for the transition. For
each uncovered delta, every obligation of the route's libraries that covers f is
tried and reported with the exact `require` lines that failed (listed or not, so
the author sees what covering it would take).

`delta` inside an obligation means the material deltas of the fields that obligation
covers: `measured(delta)` asks the threshold to bound each of them, `floor(delta)`
prices each of them with the policy's delta-indexed floors.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Mapping, Sequence

import attrs

from pcsc.base.humanize import number
from pcsc.coverage.registry import RegistryFinding, registry_findings
from pcsc.diagnostics.model import Span
from pcsc.lang.interp import BASE_FUNCTIONS, DAYS, EvalError, Interpreter, Value, truthy
from pcsc.lang.ir import Evidence, Obligation, Route, Transition
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.visit import Visitor
from pcsc.lang.ir.vocabulary import REQUIRE_NAMES
from pcsc.lang.lower.units import REQUIRE_DIMENSIONS, dimension
from pcsc.policy.model import Policy
from pcsc.score.cost import Delta, deltas, piecewise_floor
from pcsc.score.evidence import admitted


@attrs.frozen
class UnmetRequire:
    require: str  # the line as written, e.g. "require measured(delta)"
    span: Span
    reason: str  # why it failed, in the author's terms


@attrs.frozen
class DischargeAttempt:
    obligation: str
    claimed: bool  # listed in the transition's `discharges`
    failed: tuple[UnmetRequire, ...]

    @property
    def holds(self) -> bool:
        return not self.failed


@attrs.frozen
class DeltaCoverage:
    transition: str
    delta: Delta
    covered: bool | None  # None when the delta is not material
    by: str | None  # the obligation that covers it
    tried: tuple[DischargeAttempt, ...]  # filled for uncovered material deltas


@attrs.frozen
class AdmissionFailure:
    """A claimed change the transition's reference class does not admit (the policy's
    `[admission."<class>"]`): ``field`` is the change refused (None for a `require` line
    about the transition as a whole), ``check`` what refused it (`fields` or the
    expression as written), located at the transition's `class` line."""

    transition: str
    ref_class: str
    field: str | None
    check: str
    reason: str
    span: Span


@attrs.frozen
class Coverage:
    transitions: tuple[tuple[str, tuple[DeltaCoverage, ...]], ...]
    admission: tuple[AdmissionFailure, ...] = ()
    registry: tuple[RegistryFinding, ...] = ()
    registry_mode: str = "off"  # the policy's `coverage.registry`: findings refuse only under "required"

    @property
    def uncovered(self) -> list[DeltaCoverage]:
        return [d for _, ds in self.transitions for d in ds if d.covered is False]

    @property
    def uncovered_transitions(self) -> tuple[str, ...]:
        """The transitions with an uncovered material change, in route order, once each."""
        return tuple(t for t, ds in self.transitions if any(d.covered is False for d in ds))

    @property
    def complete(self) -> bool:
        """Nothing GATE refuses or DOCK docks: every material change covered, admitted
        by its class, and (under a required registry) the gold chain kept."""
        return not self.uncovered and not self.admission and not (self.registry_mode == "required" and self.registry)

    def for_transition(self, name: str) -> tuple[DeltaCoverage, ...]:
        for t, ds in self.transitions:
            if t == name:
                return ds
        raise KeyError(name)


# ---------------------------------------------------------------------- the discharger
def discharge_route(route: Route, policy: Policy) -> Coverage:
    out = []
    refused: list[AdmissionFailure] = []
    for t in route.transitions:
        ds = deltas(route, t)
        checker = _TransitionContext(route, t, ds, policy)
        refused.extend(checker.admission_failures())
        rows = []
        for d in ds:
            if not d.material:
                rows.append(DeltaCoverage(t.name, d, None, None, ()))
                continue
            covering = [o for o in route.obligations if d.field in o.covers]
            claimed = [o for o in covering if o.name in t.discharges]
            by = next((o.name for o in claimed if checker.attempt(o).holds), None)
            if by is not None:
                rows.append(DeltaCoverage(t.name, d, True, by, ()))
            else:
                tried = tuple(checker.attempt(o) for o in covering)
                rows.append(DeltaCoverage(t.name, d, False, None, tried))
        out.append((t.name, tuple(rows)))
    mode = policy.coverage.registry
    findings = () if mode == "off" else registry_findings(route, policy)
    return Coverage(tuple(out), tuple(refused), findings, mode)


def admitting_classes(route: Route, t: Transition, policy: Policy) -> list[str]:
    """The reference classes of ``policy`` whose admission rules admit what ``t`` claims,
    in the policy's order (a class the rules do not name admits only a step that claims
    nothing; under a policy without rules, every class admits)."""
    ds = deltas(route, t)
    return [
        cls for cls in policy.priors
        if not _TransitionContext(route, attrs.evolve(t, ref_class=cls), ds, policy).admission_failures()
    ]


class _TransitionContext:
    """Evaluates `require` lines for one transition; results are cached per obligation."""

    def __init__(self, route: Route, t: Transition, ds: tuple[Delta, ...], policy: Policy) -> None:
        self.route = route
        self.t = t
        self.deltas = ds
        self.policy = policy
        self.supporting = [e for e in admitted(route.evidence, route.as_of, policy) if t.name in e.supports]
        self._cache: dict[str, DischargeAttempt] = {}

    def attempt(self, o: Obligation) -> DischargeAttempt:
        if o.name not in self._cache:
            self._cache[o.name] = self._attempt(o)
        return self._cache[o.name]

    def _attempt(self, o: Obligation) -> DischargeAttempt:
        scoped = [d for d in self.deltas if d.material and d.field in o.covers]
        it = self.interpreter(scoped)
        failed = []
        for req in o.requires:
            try:
                ok = truthy(it.eval(req.expr))
                reason = _explain_failure(req.expr, it) if not ok else ""
            except EvalError as err:
                ok, reason = False, err.message
            if not ok:
                failed.append(UnmetRequire(req.text, req.span, reason))
        return DischargeAttempt(o.name, o.name in self.t.discharges, tuple(failed))

    def admission_failures(self) -> list[AdmissionFailure]:
        """What the transition claims that its class's admission table refuses: a
        material change of a field not in `fields`, a failed bound, a failed `require`."""
        t = self.t
        if not self.policy.admission:
            return []  # a policy without admission rules admits every claim
        rules = self.policy.admission.get(t.ref_class)
        material = [d for d in self.deltas if d.material]
        out = []

        def refuse(field: str | None, check: str, reason: str) -> None:
            out.append(AdmissionFailure(t.name, t.ref_class, field, check, reason, t.class_span))

        if rules is None:  # closed by default: a class the rules do not name admits no change
            for d in material:
                refuse(d.field, "fields", f"the policy's admission rules have no table for `{t.ref_class}`, "
                       "so a transition of that class may change no field")
            return out

        for d in material:
            if d.field not in rules.fields:
                allowed = ", ".join(f"`{f}`" for f in rules.fields)
                refuse(d.field, "fields", f"a `{t.ref_class}` transition may change only {allowed}" if allowed
                       else f"a `{t.ref_class}` transition may change no field")
        by_field = {d.field: d for d in material}
        whole = self.interpreter(material)
        for field, text, expr in rules.checks:
            changed = by_field.get(field) if field else None
            if field and changed is None:
                continue  # a bound on a change the transition does not claim
            it = _bound_interpreter(changed) if changed is not None else whole
            try:
                ok = truthy(it.eval(expr))
                reason = "" if ok else _explain_failure(expr, it)
            except EvalError as err:
                ok, reason = False, err.message
            if not ok:
                refuse(field or None, text, reason)
        return out

    def interpreter(self, scoped: Sequence[Delta]) -> Interpreter:
        t = self.t
        budget = 0.0
        for item in t.cost:
            budget += item.count * item.unit_cost
        delta_record: dict[str, Value] = {d.field: _signed(d) for d in scoped}
        names: dict[str, Value] = {
            "mechanism": t.mechanism,
            "asset": t.asset,
            "actor": t.actor,
            "kill": t.kill_text,
            "threshold": t.threshold_text,
            "horizon": t.horizon[0] * DAYS[t.horizon[1]] if t.horizon else None,  # in days, as duration literals
            "class": t.ref_class,
            "budget": budget,
            "learning_cost": t.learning_cost,
            "delta": _DeltaSet(tuple(scoped), delta_record),
            "as_of": self.route.as_of,
        }
        assert tuple(names) == REQUIRE_NAMES, "pcsc/lang/ir/vocabulary.py and the discharger disagree"
        functions = dict(BASE_FUNCTIONS)
        functions["measured"] = self._measured
        functions["floor"] = self._floor
        functions["grounded"] = self._grounded
        functions["evidence"] = self._evidence
        functions["abs"] = _abs  # for admission lines; a library's `require` cannot name it
        return Interpreter(names, functions)

    # -------------------------------------------------------------- built-ins
    def _delta_arg(self, it: Interpreter, args: Sequence[ex.Expr], span: Span, name: str) -> _DeltaSet:
        if len(args) != 1:
            raise EvalError(f"`{name}` takes one argument, `delta`", span)
        value = it.eval(args[0])
        if not isinstance(value, _DeltaSet):
            raise EvalError(f"`{name}` takes `delta`", span)
        return value

    def _measured(self, it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
        ds = self._delta_arg(it, args, span, "measured")
        return all(bounds_target(self.t.threshold, d) for d in ds.deltas)

    def _floor(self, it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
        ds = self._delta_arg(it, args, span, "floor")
        total = 0.0
        for d in ds.deltas:
            table = self.policy.floors.table(self.t.ref_class, d.field)
            if table is not None:
                try:
                    total += piecewise_floor(table.points, d.magnitude)
                except OverflowError:  # beyond the floats: +inf compares as the true floor would
                    return math.inf
        rate = self.policy.units.rate("usd")
        # a `require` line reads amounts in usd, as the route writes them: a floor priced in
        # another fold unit is read back in usd
        return total / rate if rate is not None and rate != 1.0 else total

    def _grounded(self, it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
        if len(args) != 1:
            raise EvalError("`grounded` takes one argument", span)
        text = it.eval(args[0])
        if text is None:
            return False
        if not isinstance(text, str):
            raise EvalError("`grounded` needs text, such as `asset`", span)
        needle = _normalise(text)
        return bool(needle) and any(needle in _normalise(e.excerpt) for e in self.supporting)

    def _evidence(self, it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
        if len(args) > 1:
            raise EvalError("`evidence` takes at most one filter", span)
        chosen = []
        for e in self.supporting:
            if not args or truthy(it.child(_evidence_names(e)).eval(args[0])):
                chosen.append(e.name)
        return chosen


def _abs(it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
    if len(args) != 1:
        raise EvalError("`abs` takes one number", span)
    v = it.eval(args[0])
    if not isinstance(v, float | int) or isinstance(v, bool):
        raise EvalError("`abs` needs a number", span)
    return abs(v)


def _bound_interpreter(d: Delta) -> Interpreter:
    """The names of an admission bound: the one field's change, source, target and the
    change relative to |source| (none from 0, where no relative bound holds)."""
    signed = _signed(d)
    relative = None
    if not isinstance(d.source, bool) and not isinstance(signed, bool) and d.source != 0:
        relative = signed / abs(d.source)
    names: dict[str, Value] = {"delta": signed, "source": d.source, "target": d.target, "relative": relative}
    return Interpreter(names, {**BASE_FUNCTIONS, "abs": _abs})


@attrs.frozen
class _DeltaSet(Mapping[str, Value]):
    """The value of `delta`: a record whose fields are the signed changes (`delta.arr`).

    It is a `Mapping`, which is what the interpreter's field access reads; a field that
    is not one of the obligation's material deltas is not an attribute of it."""

    deltas: tuple[Delta, ...]
    by_field: dict[str, Value]

    def __getitem__(self, key: str) -> Value:
        return self.by_field[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_field)

    def __len__(self) -> int:
        return len(self.deltas)


def _signed(d: Delta) -> Value:
    if isinstance(d.source, bool) or isinstance(d.target, bool):
        return d.target
    return d.target - d.source


def _evidence_names(e: Evidence) -> dict[str, Value]:
    return {
        "tier": float(e.tier),
        "weight": e.weight,
        "source": e.source,
        "captured": e.captured,
        "excerpt": e.excerpt,
        "name": e.name,
    }


def _normalise(text: str) -> str:
    return " ".join(text.casefold().split())


# ---------------------------------------------------------------------- measured(delta)
def _constant(e: ex.Expr) -> float | bool | None:
    """The value of a constant bound (a literal, possibly negated or combined)."""
    return _Constant().visit(e)


class _Constant(Visitor["float | bool | None"]):
    def visit_Number(self, e: ex.Number) -> float | bool | None:
        return e.value

    def visit_BoolLit(self, e: ex.BoolLit) -> float | bool | None:
        return e.value

    def visit_Neg(self, e: ex.Neg) -> float | bool | None:
        v = self.visit(e.operand)
        return -v if isinstance(v, float) else None

    def visit_Binary(self, e: ex.Binary) -> float | bool | None:
        a, b = self.visit(e.left), self.visit(e.right)
        if isinstance(a, float) and isinstance(b, float):
            if e.op == "/" and b == 0:
                return None
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[e.op]
        return None

    def generic_visit(self, e: ex.Expr) -> float | bool | None:
        return None  # names, calls, comparisons: not a constant


_FLIP = {">=": "<=", "<=": ">=", ">": "<", "<": ">", "==": "==", "!=": "!="}


def conjuncts(e: ex.Expr | None) -> list[ex.Expr]:
    """The top-level `and` operands: only these constrain the outcome on their own."""
    if e is None:
        return []
    if isinstance(e, ex.Logic) and e.op == "and":
        return [c for o in e.operands for c in conjuncts(o)]
    return [e]


def field_bounds(threshold: ex.Expr | None, field: str) -> list[tuple[str, float | bool]]:
    """(op, bound) pairs, normalised to `field OP bound`, from the threshold's conjuncts."""
    out: list[tuple[str, float | bool]] = []
    for c in conjuncts(threshold):
        if not isinstance(c, ex.Compare):
            continue
        if isinstance(c.left, ex.Name) and c.left.name == field:
            bound, op = _constant(c.right), c.op
        elif isinstance(c.right, ex.Name) and c.right.name == field:
            bound, op = _constant(c.left), _FLIP[c.op]
        else:
            continue
        if bound is not None:
            out.append((op, bound))
    return out


def bounds_target(threshold: ex.Expr | None, d: Delta) -> bool:
    """The threshold has a comparison on d.field whose bound reaches d.target:
    ≥ target for a rise, ≤ target for a fall, == target either way."""
    for op, bound in field_bounds(threshold, d.field):
        if isinstance(d.target, bool) or isinstance(bound, bool):
            if op == "==" and bound == d.target:
                return True
            continue
        rise = d.target > d.source
        if op == "==" and bound == d.target:
            return True
        if rise and op in (">=", ">") and bound >= d.target:
            return True
        if not rise and op in ("<=", "<") and bound <= d.target:
            return True
    return False


def _explain_failure(e: ex.Expr, it: Interpreter) -> str:
    """A short reason for a false `require`, in the author's terms."""
    if isinstance(e, ex.Name):
        return f"the transition states no `{e.name}`"
    if isinstance(e, ex.Call) and e.func == "measured":
        return "the threshold does not bound every claimed change up to its target"
    if isinstance(e, ex.Call) and e.func == "grounded":
        return "no admissible supporting evidence quotes it"
    if isinstance(e, ex.Compare):
        try:
            left, right = it.eval(e.left), it.eval(e.right)
        except EvalError:
            return "does not hold"
        durations = "duration" in (dimension(e.left, REQUIRE_DIMENSIONS), dimension(e.right, REQUIRE_DIMENSIONS))
        unit = " days" if durations else ""
        return f"{_show(left)}{unit} {e.op} {_show(right)}{unit} is false"
    return "does not hold"


def _show(v: Value) -> str:
    if v is None:
        return "none"
    if isinstance(v, list):
        return f"{len(v)} (of {', '.join(v) or 'none'})"
    if isinstance(v, float | bool):
        return number(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    return repr(v)
