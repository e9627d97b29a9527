"""Lark parse -> parse-level nodes (`pcsc.lang.syntax.nodes`) and expression IR, inline.

`ToSyntax` is given to the LALR parser as its transformer (Lark's `transformer=`), so
each rule's method runs as the rule is reduced and no Lark tree is built. That parser
keeps every token (`keep_all_tokens`), so a node's span runs from its first token to
its last, keywords and braces included, exactly as Lark's `propagate_positions` would
place it; a parenthesised expression keeps its own span, and its parentheses count
towards the span of what contains it (Lark's "container" positions).

It checks nothing and reports nothing: lowering does. The two literal problems an
expression can have (a non-finite number, a date that does not exist) are kept with
the expression they occur in (`nodes.Condition.problems`): lowering reports them only
for what it lowers. Nothing of Lark survives past this module.
"""

from __future__ import annotations

import math
import re
from typing import Any

import attrs
from lark import Token

from pcsc.diagnostics.messages import (
    E302_NOT_FINITE,
    E306_NOT_A_DATE,
    diag,
)
from pcsc.diagnostics.model import Finding, Span
from pcsc.lang.ir import expr as ir
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax.limits import MAX_DEPTH
from pcsc.lang.syntax.literals import parse_date, parse_number

Children = list[Any]
_NEWLINE = re.compile("\n")  # tokens, None placeholders, and the nodes of sub-rules


def unquote(text: str) -> str:
    """The value of a STRING token (`"a\\"b"` -> `a"b`)."""
    body = text[1:-1]
    if "\\" not in body:
        return body  # the common case: no escapes
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


def _word(token: Token, file: str) -> syn.Word:
    line = token.line or 1
    column = token.column or 1
    end_column = token.end_column or column + len(token)
    return syn.Word(token.type, str(token), Span(file, line, column, token.end_line or line, end_column))


def token_span(token: Token, file: str) -> Span:
    line = token.line or 1
    column = token.column or 1
    end_line = token.end_line or line
    end_column = token.end_column or column + len(str(token))
    return Span(file, line, column, end_line, end_column)


# methods for statements of one keyword and one operand, by the operand's kind
def _scalar(keyword: str) -> Any:
    def method(self: ToSyntax, children: Children) -> syn.Scalar:
        return syn.Scalar(keyword, self._w(children[1]), self._span(children))

    return method


def _measure(keyword: str) -> Any:
    def method(self: ToSyntax, children: Children) -> syn.Measure:
        return syn.Measure(keyword, children[1], self._span(children))

    return method


def _names(keyword: str) -> Any:
    def method(self: ToSyntax, children: Children) -> syn.Names:
        return syn.Names(keyword, children[1], self._span(children))

    return method


def _cond(keyword: str) -> Any:
    def method(self: ToSyntax, children: Children) -> syn.Condition:
        return self._condition(keyword, children)

    return method


class ToSyntax:
    """The transformer of the typed parser: one method per grammar rule or alias.
    One instance serves one parse at a time (`start` before, `finish` after)."""

    def __init__(self) -> None:
        self.start("", "")

    def start(self, file: str, text: str) -> None:
        self._file = file
        self._text = text
        self._pending: list[Finding] = []  # literal problems of the expression being built
        self._outer: dict[int, tuple[ir.Expr, Span]] = {}  # a parenthesised expression -> its parentheses
        self._line_starts: list[int] | None = None
        self._depth: dict[int, int] = {}  # an operator node's id -> its nesting depth
        self.too_deep: Span | None = None  # the first expression nested deeper than MAX_DEPTH

    def finish(self) -> None:
        self.start("", "")

    # ------------------------------------------------------------------ spans
    def _start_of(self, c: Any) -> tuple[int, int]:
        if isinstance(c, Token):
            return c.line or 1, c.column or 1
        if isinstance(c, tuple):
            return self._start_of(c[0])
        outer = self._outer.get(id(c)) if self._outer else None
        span: Span = outer[1] if outer is not None else c.span
        return span.line, span.column

    def _end_of(self, c: Any) -> tuple[int, int]:
        if isinstance(c, Token):  # as `token_span`, without building it
            line = c.end_line or c.line or 1
            return line, c.end_column or (c.column or 1) + len(str(c))
        if isinstance(c, tuple):
            return self._end_of(c[-1])
        outer = self._outer.get(id(c)) if self._outer else None
        span = outer[1] if outer is not None else c.span
        return span.end_line, span.end_column

    def _span(self, children: Children) -> Span:
        """From the first present child's start to the last one's end."""
        first = last = None
        for first in children:
            if first is not None:
                break
        for last in reversed(children):
            if last is not None:
                break
        if first is None or last is None:
            return Span(self._file, 1, 1, 1, 1)
        if type(first) is Token:
            line, column = first.line or 1, first.column or 1
        else:
            line, column = self._start_of(first)
        if type(last) is Token:
            end_line = last.end_line or last.line or 1
            end_column = last.end_column or (last.column or 1) + len(last)
        else:
            end_line, end_column = self._end_of(last)
        return Span(self._file, line, column, end_line, end_column)

    # ------------------------------------------------------------------ helpers
    def _w(self, token: Token) -> syn.Word:
        return _word(token, self._file)

    def _opt_w(self, token: Token | None) -> syn.Word | None:
        return None if token is None else _word(token, self._file)

    def _items(self, children: Children) -> tuple[Any, ...]:
        """The statements of a block's body, a `;` as `Semi`."""
        return tuple(
            syn.Semi(token_span(c, self._file)) if isinstance(c, Token) else c for c in children if c is not None
        )

    def _take_problems(self) -> tuple[Finding, ...]:
        problems, self._pending = tuple(self._pending), []
        return problems

    def _offset(self, line: int, column: int) -> int:
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in _NEWLINE.finditer(self._text))]
        return self._line_starts[line - 1] + column - 1

    def _nest(self, node: ir.Expr, operands: Children) -> None:
        """Record ``node``'s depth (one more than its deepest operand's); the parse is
        refused when it passes `MAX_DEPTH`, before any recursive pass sees it."""
        depth = 1 + max((self._depth.get(id(c), 0) for c in operands), default=0)
        self._depth[id(node)] = depth
        if depth > MAX_DEPTH and self.too_deep is None:
            self.too_deep = node.span

    def _condition(self, keyword: str, children: Children) -> syn.Condition:
        expr: ir.Expr = children[1]
        s = expr.span  # its own span: the source text leaves out enclosing parentheses
        text = self._text[self._offset(s.line, s.column) : self._offset(s.end_line, s.end_column)]
        return syn.Condition(keyword, expr, text, self._take_problems(), self._span(children))

    # ------------------------------------------------------------------ files and libraries
    def file(self, children: Children) -> syn.SourceFile:
        return syn.SourceFile(tuple(children), self._span(children))

    def library(self, children: Children) -> syn.LibraryHeader:
        return syn.LibraryHeader(self._w(children[1]), self._w(children[3]), self._span(children))

    def field_decl(self, children: Children) -> syn.FieldDecl:
        return syn.FieldDecl(self._w(children[1]), self._w(children[2]), children[3], self._span(children))

    def material(self, children: Children) -> syn.Quantity:
        quantity: syn.Quantity = children[1]
        return quantity

    def obligation(self, children: Children) -> syn.ObligationBlock:
        return syn.ObligationBlock(
            self._w(children[1]), children[3], self._items(children[5:-1]), self._span(children)
        )

    def require(self, children: Children) -> syn.Condition:
        return self._condition("require", children)

    # ------------------------------------------------------------------ routes
    def route(self, children: Children) -> syn.RouteBlock:
        return syn.RouteBlock(
            self._w(children[1]), self._opt_w(children[2]), self._items(children[4:-1]), self._span(children)
        )

    def policy_ref(self, children: Children) -> syn.PolicyPin:
        strings = [c for c in children if isinstance(c, Token) and c.type == "STRING"]
        pin = self._w(strings[1]) if len(strings) > 1 else None
        return syn.PolicyPin(self._w(strings[0]), pin, self._span(children))

    def state(self, children: Children) -> syn.StateBlock:
        return syn.StateBlock("state", self._w(children[1]), tuple(children[3:-1]), self._span(children))

    def vision(self, children: Children) -> syn.StateBlock:
        return syn.StateBlock("vision", self._w(children[1]), tuple(children[3:-1]), self._span(children))

    def field_value(self, children: Children) -> syn.FieldValue:
        return syn.FieldValue(self._w(children[0]), children[1], self._span(children))

    def value(self, children: Children) -> syn.Value:
        inner = children[0]
        return self._w(inner) if isinstance(inner, Token) else inner

    def transition(self, children: Children) -> syn.TransitionBlock:
        name, source, target = self._w(children[1]), self._w(children[3]), self._w(children[5])
        return syn.TransitionBlock(name, source, target, self._items(children[7:-1]), self._span(children))

    def evidence(self, children: Children) -> syn.EvidenceBlock:
        return syn.EvidenceBlock(self._w(children[1]), self._items(children[3:-1]), self._span(children))

    def cost(self, children: Children) -> syn.Cost:
        return syn.Cost(tuple(children[2:-1]), self._span(children))

    def cost_item_times(self, children: Children) -> syn.CostItem:
        return syn.CostItem(self._w(children[0]), children[1], children[3], self._span(children))

    def cost_item_single(self, children: Children) -> syn.CostItem:
        return syn.CostItem(self._w(children[0]), None, children[1], self._span(children))

    def estimates(self, children: Children) -> syn.Estimates:
        return syn.Estimates(tuple(children[1:]), self._span(children))

    def unverified(self, children: Children) -> syn.Unverified:
        return syn.Unverified(self._opt_w(children[1]), self._span(children))

    def criteria(self, children: Children) -> syn.Criteria:
        return syn.Criteria(tuple(children[2:-1]), self._span(children))

    def criterion(self, children: Children) -> syn.Criterion:
        return syn.Criterion(self._w(children[0]), children[1], self._span(children))

    def name_list(self, children: Children) -> tuple[syn.Word, ...]:
        return tuple(self._w(c) for c in children if c.type == "NAME")

    def quantity(self, children: Children) -> syn.Quantity:
        minus, number, unit = children
        return syn.Quantity(minus is not None, str(number), None if unit is None else str(unit), self._span(children))

    # one-operand statements
    as_of, captured = _scalar("as_of"), _scalar("captured")
    actor, mechanism, asset, ref_class = _scalar("actor"), _scalar("mechanism"), _scalar("asset"), _scalar("class")
    source, excerpt = _scalar("source"), _scalar("excerpt")
    horizon, learning_cost, stated_p = _measure("horizon"), _measure("learning_cost"), _measure("p")
    tier, weight = _measure("tier"), _measure("weight")
    uses, discharges = _names("uses"), _names("discharges")
    supports, contradicts = _names("supports"), _names("contradicts")
    threshold = _cond("threshold")

    def kill(self, children: Children) -> syn.Condition:
        by: syn.KillBy | None = children[2] if len(children) > 2 else None
        return attrs.evolve(self._condition("kill", children[:2]), by=by, span=self._span(children))

    def kill_by(self, children: Children) -> syn.KillBy:
        at = children[1]
        if isinstance(at, syn.Quantity):
            return syn.KillBy(None, at, self._span(children))
        return syn.KillBy(self._w(at), None, self._span(children))

    # ------------------------------------------------------------------ expressions
    def expression(self, children: Children) -> syn.Expression:
        return syn.Expression(children[0], self._take_problems(), self._span(children))

    def atom(self, children: Children) -> ir.Expr:
        """`( expr )`: the expression itself; its parentheses only widen its container."""
        inner: ir.Expr = children[1]
        self._outer[id(inner)] = (inner, self._span(children))
        return inner

    def number(self, children: Children) -> ir.Number:
        token, unit = children
        span = self._span(children)
        value, percent = parse_number(str(token))
        if not math.isfinite(value):
            self._pending.append(diag(E302_NOT_FINITE, span, number=token))
            value = 0.0
        return ir.Number(value, None if unit is None else str(unit), percent, span)

    def string(self, children: Children) -> ir.String:
        return ir.String(unquote(str(children[0])), self._span(children))

    def date(self, children: Children) -> ir.DateLit | ir.NoneLit:
        span = self._span(children)
        value = parse_date(str(children[0]))
        if value is None:
            self._pending.append(diag(E306_NOT_A_DATE, span, date=children[0]))
            return ir.NoneLit(span)
        return ir.DateLit(value, span)

    def true(self, children: Children) -> ir.BoolLit:
        return ir.BoolLit(True, self._span(children))

    def false(self, children: Children) -> ir.BoolLit:
        return ir.BoolLit(False, self._span(children))

    def none(self, children: Children) -> ir.NoneLit:
        return ir.NoneLit(self._span(children))

    def name(self, children: Children) -> ir.Name:
        return ir.Name(str(children[0]), self._span(children))

    def attribute(self, children: Children) -> ir.Attribute:
        node = ir.Attribute(children[0], str(children[2]), self._span(children))
        self._nest(node, [children[0]])
        return node

    def arguments(self, children: Children) -> tuple[ir.Expr, ...]:
        return tuple(c for c in children if not isinstance(c, Token))

    def call(self, children: Children) -> ir.Call:
        args = children[2]
        node = ir.Call(str(children[0]), () if args is None else args, self._span(children))
        self._nest(node, list(node.args))
        return node

    def neg(self, children: Children) -> ir.Neg:
        node = ir.Neg(children[1], self._span(children))
        self._nest(node, [children[1]])
        return node

    def not_(self, children: Children) -> ir.Not:
        node = ir.Not(children[1], self._span(children))
        self._nest(node, [children[1]])
        return node

    def and_(self, children: Children) -> ir.Logic:
        node = ir.Logic("and", tuple(c for c in children if not isinstance(c, Token)), self._span(children))
        self._nest(node, list(node.operands))
        return node

    def or_(self, children: Children) -> ir.Logic:
        node = ir.Logic("or", tuple(c for c in children if not isinstance(c, Token)), self._span(children))
        self._nest(node, list(node.operands))
        return node

    def compare(self, children: Children) -> ir.Compare:
        node = ir.Compare(str(children[1]), children[0], children[2], self._span(children))
        self._nest(node, [children[0], children[2]])
        return node

    def arith(self, children: Children) -> ir.Binary:
        node = ir.Binary(str(children[1]), children[0], children[2], self._span(children))
        self._nest(node, [children[0], children[2]])
        return node


__all__ = ["ToSyntax", "token_span", "unquote"]
