"""Expressions at lowering: the parser already built their IR; report its problems.

An expression's own problems (a non-finite number, a date that does not exist) are
found while parsing and kept with it (`pcsc.lang.syntax.nodes.Condition.problems`);
lowering reports them where it lowers that expression, so an expression that is never
lowered (a route not compiled) reports nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from pcsc.diagnostics.model import Diagnostic, Diagnostics
from pcsc.lang.ir import expr as ir
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax.transform import unquote

__all__ = ["lower_expression", "report", "unquote"]


def report(problems: Iterable[Diagnostic], diags: Diagnostics) -> None:
    diags.items.extend(problems)  # built from `codes` constants by the parser


def lower_expression(node: syn.Expression | syn.Condition, diags: Diagnostics) -> ir.Expr:
    """The IR of a parsed expression, its literal problems reported to ``diags``."""
    report(node.problems, diags)
    return node.expr

