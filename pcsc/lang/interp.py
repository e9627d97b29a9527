"""A small interpreter for the expression language (never Python `eval`).

Values: float, str, date, bool, None, lists (collections) and records (mappings
reached with `.`). A collection compared with a number compares by its count, so
`evidence(tier >= 2) >= 1` reads as "at least one".
"""

from __future__ import annotations

import datetime as dt
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pcsc.diagnostics.model import Span
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.visit import Visitor

Value = Any
#: A duration in days, the one unit durations are compared in: a month is 1/12 of a year
#: of 365.25 days, as in the discount (each factor exact in binary, so is every product).
DAYS: dict[str, float] = {"days": 1.0, "months": 365.25 / 12, "years": 365.25}
Function = Callable[["Interpreter", Sequence[ex.Expr], Span], Value]

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


class EvalError(Exception):
    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


def truthy(value: Value) -> bool:
    if isinstance(value, (list, tuple)):
        return len(value) > 0
    if isinstance(value, str):
        return value != ""
    return value is not None and value is not False and value != 0


def _numeric(value: Value) -> Value:
    return len(value) if isinstance(value, (list, tuple)) else value


class Interpreter(Visitor[Value]):
    """Evaluates expressions against names and functions; `eval` is `visit`."""

    def __init__(self, names: Mapping[str, Value], functions: Mapping[str, Function]) -> None:
        self.names = names
        self.functions = functions

    def child(self, names: Mapping[str, Value]) -> Interpreter:
        return Interpreter({**self.names, **names}, self.functions)

    def eval(self, e: ex.Expr) -> Value:
        return self.visit(e)

    def visit_Number(self, e: ex.Number) -> Value:
        return e.value * DAYS[e.unit] if e.unit in DAYS else e.value

    def visit_String(self, e: ex.String) -> Value:
        return e.value

    def visit_DateLit(self, e: ex.DateLit) -> Value:
        return e.value

    def visit_BoolLit(self, e: ex.BoolLit) -> Value:
        return e.value

    def visit_NoneLit(self, e: ex.NoneLit) -> Value:
        return None

    def visit_Name(self, e: ex.Name) -> Value:
        if e.name not in self.names:
            raise EvalError(f"unknown name `{e.name}`", e.span)
        return self.names[e.name]

    def visit_Attribute(self, e: ex.Attribute) -> Value:
        obj = self.visit(e.obj)
        if isinstance(obj, Mapping) and e.name in obj:
            return obj[e.name]
        raise EvalError(f"`{e.name}` is not an attribute here", e.span)

    def visit_Call(self, e: ex.Call) -> Value:
        fn = self.functions.get(e.func)
        if fn is None:
            raise EvalError(f"unknown function `{e.func}`", e.span)
        return fn(self, e.args, e.span)

    def visit_Neg(self, e: ex.Neg) -> Value:
        v = self.visit(e.operand)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise EvalError("`-` needs a number", e.span)
        return -v

    def visit_Not(self, e: ex.Not) -> Value:
        return not truthy(self.visit(e.operand))

    def visit_Logic(self, e: ex.Logic) -> Value:
        if e.op == "and":
            return all(truthy(self.visit(o)) for o in e.operands)
        return any(truthy(self.visit(o)) for o in e.operands)

    def visit_Binary(self, e: ex.Binary) -> Value:
        a, b = _numeric(self.visit(e.left)), _numeric(self.visit(e.right))
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
            raise EvalError(f"`{e.op}` needs numbers", e.span)
        if e.op == "/" and b == 0:
            raise EvalError("division by zero", e.span)
        try:
            result = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[e.op]
        except OverflowError:  # int operands (counts) whose quotient no float holds
            result = math.inf
        if isinstance(result, float) and not math.isfinite(result):
            raise EvalError(f"`{a:.6g} {e.op} {b:.6g}` overflows: the result is beyond about 1.8e308", e.span)
        return result

    def visit_Compare(self, e: ex.Compare) -> Value:
        a, b = _numeric(self.visit(e.left)), _numeric(self.visit(e.right))
        if e.op in ("==", "!="):
            return _COMPARE[e.op](a, b)
        if a is None or b is None:
            return False  # an absent value satisfies no ordering
        comparable = (
            (isinstance(a, (int, float)) and isinstance(b, (int, float)))
            or (isinstance(a, dt.date) and isinstance(b, dt.date))
            or (isinstance(a, str) and isinstance(b, str))
        )
        if not comparable:
            raise EvalError(f"cannot compare {type(a).__name__} with {type(b).__name__}", e.span)
        return _COMPARE[e.op](a, b)


def fn_count(it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
    if len(args) != 1:
        raise EvalError("`count` takes one argument", span)
    v = it.eval(args[0])
    if not isinstance(v, (list, tuple)):
        raise EvalError("`count` needs a collection", span)
    return float(len(v))


def _extreme(pick: Callable[..., Any], name: str) -> Function:
    def fn(it: Interpreter, args: Sequence[ex.Expr], span: Span) -> Value:
        values = [_numeric(it.eval(a)) for a in args]
        if not values or not all(isinstance(v, (int, float)) for v in values):
            raise EvalError(f"`{name}` needs one or more numbers", span)
        return pick(values)

    return fn


BASE_FUNCTIONS: dict[str, Function] = {
    "count": fn_count,
    "min": _extreme(min, "min"),
    "max": _extreme(max, "max"),
}
