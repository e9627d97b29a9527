"""A small interpreter for the expression language (never Python `eval`).

Values: float, str, date, bool, None, lists (collections) and records (mappings
reached with `.`). A collection compared with a number compares by its count, so
`evidence(tier >= 2) >= 1` reads as "at least one".
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pcsc.diagnostics.model import Span
from pcsc.ir import expr as ex

Value = Any
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


class Interpreter:
    def __init__(self, names: Mapping[str, Value], functions: Mapping[str, Function]) -> None:
        self.names = names
        self.functions = functions

    def child(self, names: Mapping[str, Value]) -> Interpreter:
        return Interpreter({**self.names, **names}, self.functions)

    def eval(self, e: ex.Expr) -> Value:
        if isinstance(e, ex.Number):
            return e.value
        if isinstance(e, (ex.String, ex.DateLit, ex.BoolLit)):
            return e.value
        if isinstance(e, ex.NoneLit):
            return None
        if isinstance(e, ex.Name):
            if e.name not in self.names:
                raise EvalError(f"unknown name `{e.name}`", e.span)
            return self.names[e.name]
        if isinstance(e, ex.Attribute):
            obj = self.eval(e.obj)
            if isinstance(obj, Mapping) and e.name in obj:
                return obj[e.name]
            raise EvalError(f"`{e.name}` is not an attribute here", e.span)
        if isinstance(e, ex.Call):
            fn = self.functions.get(e.func)
            if fn is None:
                raise EvalError(f"unknown function `{e.func}`", e.span)
            return fn(self, e.args, e.span)
        if isinstance(e, ex.Neg):
            v = self.eval(e.operand)
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise EvalError("`-` needs a number", e.span)
            return -v
        if isinstance(e, ex.Not):
            return not truthy(self.eval(e.operand))
        if isinstance(e, ex.Logic):
            if e.op == "and":
                return all(truthy(self.eval(o)) for o in e.operands)
            return any(truthy(self.eval(o)) for o in e.operands)
        if isinstance(e, ex.Binary):
            a, b = _numeric(self.eval(e.left)), _numeric(self.eval(e.right))
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
                raise EvalError(f"`{e.op}` needs numbers", e.span)
            if e.op == "/" and b == 0:
                raise EvalError("division by zero", e.span)
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[e.op]
        if isinstance(e, ex.Compare):
            a, b = _numeric(self.eval(e.left)), _numeric(self.eval(e.right))
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
        raise AssertionError(f"unhandled expression {type(e).__name__}")  # pragma: no cover


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
