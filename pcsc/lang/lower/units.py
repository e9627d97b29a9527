"""The units of what an expression compares: `require` lines and policy gate rules.

Each numeric operand has a dimension:

- ``usd``: `budget`, `learning_cost`, `floor(delta)`, the change of a usd field
  (`delta.arr`), a gate rule's `score` and `value`, a literal with `usd`;
- ``duration``: `horizon` and literals in days, months or years, compared in days
  (`pcsc.lang.interp.DAYS`: a month is 1/12 of a year of 365.25 days);
- ``ratio``: the change of a ratio field, a literal with `%`;
- ``count``: the change of a count field, a collection or its `count`;
- ``plain``: any other number (a literal without a unit, a `number` field, `tier`).

The two sides of a comparison, of `+` and `-`, and the arguments of `min` and `max`
must agree: the same dimension, or plain beside a count or a ratio (`retention >= 0.4`),
or a literal 0, which is 0 in any unit. `*` by a dimensionless number keeps the other
side's dimension (`2 * learning_cost` is usd); `/` by one keeps it, and an amount over
an amount of the same dimension is plain (`score / value`). What is not a number, or
the product of two amounts, has no dimension and is not checked here (the
interpreter's own errors apply). So `require horizon <= 12` is refused (12 what?) and
`require horizon <= 12 months` compares 365.25 days with the horizon in days.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from pcsc.diagnostics.model import Span
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.visit import Visitor

Dim = str | None  # usd, duration, ratio, count, plain; None: no dimension
DURATIONS = ("days", "months", "years")
DIMENSIONLESS = ("plain", "count", "ratio")
#: The dimension of a field's change, by field type (bool fields have none).
FIELD_DIMENSIONS: Mapping[str, Dim] = {"usd": "usd", "ratio": "ratio", "count": "count", "number": "plain"}
#: `require` names with a dimension (the others are texts, dates and the `delta` record).
REQUIRE_DIMENSIONS: Mapping[str, Dim] = {"budget": "usd", "learning_cost": "usd", "horizon": "duration"}
#: Names bound inside `evidence(pred)`.
EVIDENCE_DIMENSIONS: Mapping[str, Dim] = {"tier": "plain", "weight": "plain"}
#: Gate rule names with a dimension (`pcsc.score.route.gate_names`).
GATE_DIMENSIONS: Mapping[str, Dim] = {
    "score": "usd", "value": "usd", "flat_product": "plain", "criteria_score": "plain",
}
_FUNCTION_DIMENSIONS: Mapping[str, Dim] = {"count": "count", "floor": "usd", "evidence": "count"}
_DESCRIBED = {"usd": "in usd", "duration": "a duration", "ratio": "a ratio", "count": "a count",
              "plain": "a plain number"}


@attrs.frozen
class UnitProblem:
    message: str
    span: Span
    help: str


def unit_problems(expr: ex.Expr, names: Mapping[str, Dim], fields: Mapping[str, str] | None = None
                  ) -> list[UnitProblem]:
    """Where ``expr`` compares or combines quantities in different units. ``names`` are the
    dimensions of its names; ``fields`` the types of the fields `delta.F` may name."""
    check = _Units(names, fields or {}, inside_evidence=False)
    check.visit(expr)
    return check.problems


def dimension(expr: ex.Expr, names: Mapping[str, Dim]) -> Dim:
    """The dimension of ``expr`` (None when it has none, or it mixes units)."""
    return _Units(names, {}, inside_evidence=False).visit(expr)


def _literal(value: float) -> str:
    """A number with the suffix an author would write (`100k`, `1.5M`)."""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale and (value / scale) * scale == value:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def describe(e: ex.Expr) -> str:
    """An operand as the author wrote it, near enough for a message."""
    return f"`{_text(e)}`"


def _text(e: ex.Expr) -> str:
    if isinstance(e, ex.Number):
        shown = _literal(e.value * 100) + "%" if e.percent else _literal(e.value)
        return f"{shown} {e.unit}" if e.unit else shown
    if isinstance(e, ex.Name):
        return e.name
    if isinstance(e, ex.Attribute):
        return f"{_text(e.obj)}.{e.name}"
    if isinstance(e, ex.Call):
        return f"{e.func}({', '.join(_text(a) for a in e.args)})"
    if isinstance(e, ex.Neg):
        return f"-{_text(e.operand)}"
    if isinstance(e, ex.Binary):
        return f"{_text(e.left)} {e.op} {_text(e.right)}"
    return "…"


def _zero(e: ex.Expr) -> bool:
    return isinstance(e, ex.Number) and e.value == 0 or isinstance(e, ex.Neg) and _zero(e.operand)


def _agree(a: Dim, b: Dim) -> bool:
    if a is None or b is None or a == b:
        return True
    return "plain" in (a, b) and {a, b} <= set(DIMENSIONLESS)


def _example(e: ex.Expr, dim: Dim) -> str:
    """The help: ``e`` written in the unit ``dim`` asks for."""
    if isinstance(e, ex.Number) and not e.percent and not e.unit:
        shown = _literal(e.value)
        if dim == "usd":
            return f"write the amount with its unit: `{shown} usd`"
        if dim == "duration":
            return f"write the duration with its unit: `{shown} days`, `{shown} months` or `{shown} years`"
    if dim == "count" and isinstance(e, ex.Number) and e.percent:
        return "`%` is only for ratios: write the count itself"
    return "compare quantities in the same unit"


class _Units(Visitor[Dim]):
    def __init__(self, names: Mapping[str, Dim], fields: Mapping[str, str], inside_evidence: bool) -> None:
        self.names = names
        self.fields = fields
        self.inside_evidence = inside_evidence
        self.problems: list[UnitProblem] = []

    def _pair(self, left: ex.Expr, right: ex.Expr, how: str) -> tuple[Dim, Dim, bool]:
        """Whether ``left`` and ``right`` agree (``how`` says what joins them, `{}` the
        operand blamed); a problem, located at the operand without a unit, if not."""
        a, b = self.visit(left), self.visit(right)
        if _zero(left) or _zero(right) or _agree(a, b):
            return a, b, True
        blamed: ex.Expr
        other: ex.Expr
        blamed_dim: Dim
        dim: Dim
        if a in DIMENSIONLESS and b not in DIMENSIONLESS:  # blame the side that lacks a unit
            blamed, blamed_dim, other, dim = left, a, right, b
        else:
            blamed, blamed_dim, other, dim = right, b, left, a
        self.problems.append(UnitProblem(
            f"{describe(other)} is {_DESCRIBED[dim or 'plain']}, but {how.format(describe(blamed))}, "
            f"{_DESCRIBED[blamed_dim or 'plain']}",
            blamed.span,
            _example(blamed, dim),
        ))
        return a, b, False

    def visit_Number(self, e: ex.Number) -> Dim:
        if e.unit == "usd":
            return "usd"
        if e.unit in DURATIONS:
            return "duration"
        return "ratio" if e.percent else "plain"

    def visit_Name(self, e: ex.Name) -> Dim:
        if self.inside_evidence and e.name in EVIDENCE_DIMENSIONS:
            return EVIDENCE_DIMENSIONS[e.name]
        return self.names.get(e.name)

    def visit_Attribute(self, e: ex.Attribute) -> Dim:
        if isinstance(e.obj, ex.Name) and e.obj.name == "delta" and e.name in self.fields:
            return FIELD_DIMENSIONS.get(self.fields[e.name])
        self.visit(e.obj)
        return None

    def visit_Call(self, e: ex.Call) -> Dim:
        if e.func == "evidence":
            inner = _Units(self.names, self.fields, inside_evidence=True)
            for arg in e.args:
                inner.visit(arg)
            self.problems.extend(inner.problems)
            return "count"
        dims = [self.visit(a) for a in e.args]
        if e.func in ("min", "max"):
            for arg in e.args[1:]:
                self._pair(e.args[0], arg, f"`{e.func}` weighs it against {{}}")
            return next((d for d in dims if d not in (None, *DIMENSIONLESS)), dims[0] if dims else None)
        return _FUNCTION_DIMENSIONS.get(e.func)

    def visit_Neg(self, e: ex.Neg) -> Dim:
        return self.visit(e.operand)

    def visit_Binary(self, e: ex.Binary) -> Dim:
        if e.op in "+-":
            a, b, ok = self._pair(e.left, e.right, f"`{e.op}` combines it with {{}}")
            if not ok:
                return None
            return a if a not in DIMENSIONLESS or b is None else b if b not in DIMENSIONLESS else a
        a, b = self.visit(e.left), self.visit(e.right)
        if a is None or b is None:
            return None
        if b in DIMENSIONLESS and (e.op == "/" or a not in DIMENSIONLESS):
            return a if a not in DIMENSIONLESS else "plain"
        if e.op == "*" and a in DIMENSIONLESS:
            return b if b not in DIMENSIONLESS else "plain"
        if e.op == "/" and a == b:
            return "plain"
        return None  # an amount times an amount, a count over a duration: not checked

    def visit_Compare(self, e: ex.Compare) -> Dim:
        self._pair(e.left, e.right, "it is compared with {}")
        return None

    def visit_Not(self, e: ex.Not) -> Dim:
        self.visit(e.operand)
        return None

    def visit_Logic(self, e: ex.Logic) -> Dim:
        for operand in e.operands:
            self.visit(operand)
        return None

    def generic_visit(self, e: ex.Expr) -> Dim:
        return None  # texts, dates, bools, none
