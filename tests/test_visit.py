"""The expression visitor covers every expression node class in pcsc/lang/ir/expr.py."""

from __future__ import annotations

import datetime as dt
import typing

import attrs
import pytest

from pcsc.diagnostics.model import Span
from pcsc.lang.interp import Interpreter
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.visit import EXPR_CLASSES, NodeVisitor, Visitor, children, walk

S = Span("t", 1, 1, 1, 2)
LEAF = ex.Number(1.0, None, False, S)

SAMPLES: dict[type, ex.Expr] = {
    ex.Number: LEAF,
    ex.String: ex.String("s", S),
    ex.DateLit: ex.DateLit(dt.date(2020, 1, 1), S),
    ex.BoolLit: ex.BoolLit(True, S),
    ex.NoneLit: ex.NoneLit(S),
    ex.Name: ex.Name("x", S),
    ex.Attribute: ex.Attribute(ex.Name("r", S), "a", S),
    ex.Call: ex.Call("max", (LEAF, ex.Name("y", S)), S),
    ex.Neg: ex.Neg(LEAF, S),
    ex.Not: ex.Not(ex.BoolLit(False, S), S),
    ex.Logic: ex.Logic("and", (ex.BoolLit(True, S), ex.Name("z", S)), S),
    ex.Binary: ex.Binary("+", LEAF, ex.Name("w", S), S),
    ex.Compare: ex.Compare(">=", ex.Name("v", S), LEAF, S),
}


def _sub_expressions(e: ex.Expr) -> list[ex.Expr]:
    """Every field value of ``e`` that is an expression, found from the attrs fields."""
    out: list[ex.Expr] = []
    for field in attrs.fields(type(e)):
        value = getattr(e, field.name)
        items = value if isinstance(value, tuple) else (value,)
        out += [v for v in items if isinstance(v, EXPR_CLASSES)]
    return out


def test_the_samples_and_the_dispatch_cover_every_expression_class() -> None:
    assert set(EXPR_CLASSES) == set(typing.get_args(ex.Expr)) == set(SAMPLES)


@pytest.mark.parametrize("cls", EXPR_CLASSES, ids=lambda c: c.__name__)
def test_children_are_exactly_the_sub_expressions(cls: type) -> None:
    e = SAMPLES[cls]
    assert list(children(e)) == _sub_expressions(e)
    assert list(walk(e)) == [e, *(n for c in children(e) for n in walk(c))]


@pytest.mark.parametrize("cls", EXPR_CLASSES, ids=lambda c: c.__name__)
def test_dispatch_reaches_visit_methods_and_the_fallback(cls: type) -> None:
    class Names(Visitor[str]):
        def generic_visit(self, e: ex.Expr) -> str:
            return "generic:" + type(e).__name__

        def visit_Name(self, e: ex.Name) -> str:
            return "name:" + e.name

    expected = "name:x" if cls is ex.Name else "generic:" + cls.__name__
    assert Names().visit(SAMPLES[cls]) == expected


def test_node_visitor_visits_every_node_in_source_order() -> None:
    seen: list[ex.Expr] = []

    class Record(NodeVisitor):
        def generic_visit(self, e: ex.Expr) -> None:
            seen.append(e)
            super().generic_visit(e)

    tree = ex.Logic("or", tuple(SAMPLES.values()), S)
    Record().visit(tree)
    assert seen == list(walk(tree))


def test_a_visitor_without_a_method_or_fallback_says_so() -> None:
    class Empty(Visitor[int]):
        pass

    with pytest.raises(NotImplementedError, match="visit_Number"):
        Empty().visit(LEAF)


def test_the_interpreter_has_a_method_for_every_class() -> None:
    for cls in EXPR_CLASSES:
        assert hasattr(Interpreter, f"visit_{cls.__name__}"), cls
