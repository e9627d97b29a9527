"""Lark tree -> parse-level nodes (`pcsc.syntax.nodes`) and expression IR.

One method per grammar rule or `-> alias`; each turns Lark's positions into `Span`s,
so nothing of Lark survives past this module. It checks nothing and reports nothing:
lowering does. The two literal problems an expression can have (a non-finite number,
a date that does not exist) are kept with the expression they occur in (see
`nodes.Condition.problems`): the old lowering reported them only for what it lowered.
"""

from __future__ import annotations

import math
from typing import Any

from lark import Token, Transformer, Tree, v_args
from lark.tree import Meta

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostic, Span
from pcsc.ir import expr as ir
from pcsc.lower.literals import parse_date, parse_number
from pcsc.syntax import nodes as syn


def unquote(text: str) -> str:
    """The value of a STRING token (`"a\\"b"` -> `a"b`)."""
    body = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _words(children: list[Any], file: str) -> tuple[syn.Word, ...]:
    return tuple(_word(c, file) for c in children if isinstance(c, Token))


def _word(token: Token, file: str) -> syn.Word:
    return syn.Word(token.type, str(token), token_span(token, file))


def token_span(token: Token, file: str) -> Span:
    line = token.line or 1
    column = token.column or 1
    end_line = token.end_line or line
    end_column = token.end_column or column + len(str(token))
    return Span(file, line, column, end_line, end_column)


# statement methods of one keyword and one operand, by the operand's kind
def _scalar(keyword: str) -> Any:
    def method(self: ToSyntax, meta: Meta, children: list[Any]) -> syn.Scalar:
        return syn.Scalar(keyword, self._w(children[0]), self._span(meta))

    return method

def _measure(keyword: str) -> Any:
    def method(self: ToSyntax, meta: Meta, children: list[Any]) -> syn.Measure:
        return syn.Measure(keyword, children[0], self._span(meta))

    return method

def _names(keyword: str) -> Any:
    def method(self: ToSyntax, meta: Meta, children: list[Any]) -> syn.Names:
        return syn.Names(keyword, children[0], self._span(meta))

    return method

def _cond(keyword: str) -> Any:
    def method(self: ToSyntax, meta: Meta, children: list[Any]) -> syn.Condition:
        return self._condition(keyword, meta, children)

    return method


@v_args(meta=True)
class ToSyntax(Transformer[Token, Any]):
    """Builds the nodes of one text; use a fresh instance per parse."""

    def __init__(self, file: str, text: str) -> None:
        super().__init__(visit_tokens=False)
        self._file = file
        self.text = text
        self._pending: list[Diagnostic] = []  # literal problems of the expression being built
        self._line_starts: list[int] | None = None

    # ------------------------------------------------------------------ helpers
    def _span(self, meta: Meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self._file, 1, 1, 1, 1)
        return Span(self._file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _w(self, token: Token) -> syn.Word:
        return _word(token, self._file)

    def _opt_w(self, token: Token | None) -> syn.Word | None:
        return None if token is None else _word(token, self._file)

    def _items(self, children: list[Any]) -> tuple[Any, ...]:
        """Statements of a block, a `;` as `Semi`."""
        return tuple(
            syn.Semi(token_span(c, self._file)) if isinstance(c, Token) else c for c in children if c is not None
        )

    def _take_problems(self) -> tuple[Diagnostic, ...]:
        problems, self._pending = tuple(self._pending), []
        return problems

    def _offset(self, line: int, column: int) -> int:
        if self._line_starts is None:
            starts = [0]
            starts += [i + 1 for i, ch in enumerate(self.text) if ch == "\n"]
            self._line_starts = starts
        return self._line_starts[line - 1] + column - 1

    def _source(self, expr: ir.Expr) -> str:
        s = expr.span
        return self.text[self._offset(s.line, s.column) : self._offset(s.end_line, s.end_column)]

    def _condition(self, keyword: str, meta: Meta, children: list[Any]) -> syn.Condition:
        expr = children[0]
        return syn.Condition(keyword, expr, self._source(expr), self._take_problems(), self._span(meta))

    def __default__(self, data: Any, children: list[Any], meta: Meta) -> Any:
        raise AssertionError(f"no transform for grammar rule {data}")  # pragma: no cover

    # ------------------------------------------------------------------ files and libraries
    def file(self, meta: Meta, children: list[Any]) -> syn.SourceFile:
        return syn.SourceFile(tuple(children), self._span(meta))

    def library(self, meta: Meta, children: list[Token]) -> syn.LibraryHeader:
        return syn.LibraryHeader(self._w(children[0]), self._w(children[1]), self._span(meta))

    def field_decl(self, meta: Meta, children: list[Any]) -> syn.FieldDecl:
        return syn.FieldDecl(self._w(children[0]), self._w(children[1]), children[2], self._span(meta))

    def material(self, meta: Meta, children: list[Any]) -> syn.Quantity:
        quantity: syn.Quantity = children[0]
        return quantity

    def obligation(self, meta: Meta, children: list[Any]) -> syn.ObligationBlock:
        return syn.ObligationBlock(
            self._w(children[0]), children[1], self._items(children[2:]), self._span(meta)
        )

    def require(self, meta: Meta, children: list[Any]) -> syn.Condition:
        return self._condition("require", meta, children)

    # ------------------------------------------------------------------ routes
    def route(self, meta: Meta, children: list[Any]) -> syn.RouteBlock:
        return syn.RouteBlock(
            self._w(children[0]), self._opt_w(children[1]), self._items(children[2:]), self._span(meta)
        )

    def policy_ref(self, meta: Meta, children: list[Any]) -> syn.PolicyPin:
        return syn.PolicyPin(self._w(children[0]), self._opt_w(children[1]), self._span(meta))

    def state(self, meta: Meta, children: list[Any]) -> syn.StateBlock:
        return syn.StateBlock("state", self._w(children[0]), tuple(children[1:]), self._span(meta))

    def vision(self, meta: Meta, children: list[Any]) -> syn.StateBlock:
        return syn.StateBlock("vision", self._w(children[0]), tuple(children[1:]), self._span(meta))

    def field_value(self, meta: Meta, children: list[Any]) -> syn.FieldValue:
        return syn.FieldValue(self._w(children[0]), children[1], self._span(meta))

    def value(self, meta: Meta, children: list[Any]) -> syn.Value:
        inner = children[0]
        return self._w(inner) if isinstance(inner, Token) else inner

    def transition(self, meta: Meta, children: list[Any]) -> syn.TransitionBlock:
        name, source, target = (self._w(t) for t in children[:3])
        return syn.TransitionBlock(name, source, target, self._items(children[3:]), self._span(meta))

    def evidence(self, meta: Meta, children: list[Any]) -> syn.EvidenceBlock:
        return syn.EvidenceBlock(self._w(children[0]), self._items(children[1:]), self._span(meta))

    def cost(self, meta: Meta, children: list[Any]) -> syn.Cost:
        return syn.Cost(tuple(children), self._span(meta))

    def cost_item_times(self, meta: Meta, children: list[Any]) -> syn.CostItem:
        return syn.CostItem(self._w(children[0]), children[1], children[2], self._span(meta))

    def cost_item_single(self, meta: Meta, children: list[Any]) -> syn.CostItem:
        return syn.CostItem(self._w(children[0]), None, children[1], self._span(meta))

    def estimates(self, meta: Meta, children: list[Any]) -> syn.Estimates:
        return syn.Estimates(tuple(children), self._span(meta))

    def unverified(self, meta: Meta, children: list[Any]) -> syn.Unverified:
        return syn.Unverified(self._opt_w(children[0]), self._span(meta))

    def criteria(self, meta: Meta, children: list[Any]) -> syn.Criteria:
        return syn.Criteria(tuple(children), self._span(meta))

    def criterion(self, meta: Meta, children: list[Any]) -> syn.Criterion:
        return syn.Criterion(self._w(children[0]), children[1], self._span(meta))

    def name_list(self, meta: Meta, children: list[Any]) -> tuple[syn.Word, ...]:
        return _words(children, self._file)

    def quantity(self, meta: Meta, children: list[Any]) -> syn.Quantity:
        minus, number, unit = children
        return syn.Quantity(minus is not None, str(number), None if unit is None else str(unit), self._span(meta))

    # one-operand statements
    as_of, captured = _scalar("as_of"), _scalar("captured")
    actor, mechanism, asset, ref_class = _scalar("actor"), _scalar("mechanism"), _scalar("asset"), _scalar("class")
    source, excerpt = _scalar("source"), _scalar("excerpt")
    horizon, learning_cost, stated_p = _measure("horizon"), _measure("learning_cost"), _measure("p")
    tier, weight = _measure("tier"), _measure("weight")
    uses, discharges = _names("uses"), _names("discharges")
    supports, contradicts = _names("supports"), _names("contradicts")
    threshold, kill = _cond("threshold"), _cond("kill")

    # ------------------------------------------------------------------ expressions
    def expression(self, meta: Meta, children: list[Any]) -> syn.Expression:
        return syn.Expression(children[0], self._take_problems(), self._span(meta))

    def number(self, meta: Meta, children: list[Any]) -> ir.Number:
        token, unit = children
        span = self._span(meta)
        value, percent = parse_number(str(token))
        if not math.isfinite(value):
            self._pending.append(Diagnostic(codes.E302.code, f"`{token}` is not a finite number", span))
            value = 0.0
        return ir.Number(value, None if unit is None else str(unit), percent, span)

    def string(self, meta: Meta, children: list[Token]) -> ir.String:
        return ir.String(unquote(str(children[0])), self._span(meta))

    def date(self, meta: Meta, children: list[Token]) -> ir.DateLit | ir.NoneLit:
        span = self._span(meta)
        value = parse_date(str(children[0]))
        if value is None:
            self._pending.append(Diagnostic(codes.E306.code, f"`{children[0]}` is not a valid date", span))
            return ir.NoneLit(span)
        return ir.DateLit(value, span)

    def true(self, meta: Meta, children: list[Token]) -> ir.BoolLit:
        return ir.BoolLit(True, self._span(meta))

    def false(self, meta: Meta, children: list[Token]) -> ir.BoolLit:
        return ir.BoolLit(False, self._span(meta))

    def none(self, meta: Meta, children: list[Token]) -> ir.NoneLit:
        return ir.NoneLit(self._span(meta))

    def name(self, meta: Meta, children: list[Token]) -> ir.Name:
        return ir.Name(str(children[0]), self._span(meta))

    def attribute(self, meta: Meta, children: list[Any]) -> ir.Attribute:
        return ir.Attribute(children[0], str(children[1]), self._span(meta))

    def arguments(self, meta: Meta, children: list[Any]) -> tuple[ir.Expr, ...]:
        return tuple(children)

    def call(self, meta: Meta, children: list[Any]) -> ir.Call:
        args = children[1]
        return ir.Call(str(children[0]), () if args is None else args, self._span(meta))

    def neg(self, meta: Meta, children: list[Any]) -> ir.Neg:
        return ir.Neg(children[1], self._span(meta))

    def not_(self, meta: Meta, children: list[Any]) -> ir.Not:
        return ir.Not(children[0], self._span(meta))

    def and_(self, meta: Meta, children: list[Any]) -> ir.Logic:
        return ir.Logic("and", tuple(children), self._span(meta))

    def or_(self, meta: Meta, children: list[Any]) -> ir.Logic:
        return ir.Logic("or", tuple(children), self._span(meta))

    def compare(self, meta: Meta, children: list[Any]) -> ir.Compare:
        return ir.Compare(str(children[1]), children[0], children[2], self._span(meta))

    def arith(self, meta: Meta, children: list[Any]) -> ir.Binary:
        return ir.Binary(str(children[1]), children[0], children[2], self._span(meta))


def to_source_file(tree: Tree[Token], file: str, text: str) -> syn.SourceFile:
    """The nodes of a parsed .route or .obl file."""
    node = ToSyntax(file, text).transform(tree)
    assert isinstance(node, syn.SourceFile)
    return node


def to_expression(tree: Tree[Token], file: str, text: str) -> syn.Expression:
    """The node of a parsed standalone expression."""
    node = ToSyntax(file, text).transform(tree)
    assert isinstance(node, syn.Expression)
    return node


__all__ = ["ToSyntax", "to_expression", "to_source_file", "token_span", "unquote"]
