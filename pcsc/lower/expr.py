"""Syntax tree -> expression IR (shared by routes, libraries and policy rules)."""

from __future__ import annotations

import math

from lark import Token, Tree

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.ir import expr as ir
from pcsc.lower.literals import parse_date, parse_number, span_of_token
from pcsc.lower.tree import Node, opt_sub, opt_tok, sub, subtrees, tok


def span_of(node: Tree[Token] | Token, file: str) -> Span:
    if isinstance(node, Token):
        return span_of_token(node, file)
    meta = node.meta
    if getattr(meta, "empty", True):
        return Span(file, 1, 1, 1, 1)
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def unquote(token: Token) -> str:
    body = str(token)[1:-1]
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


class ExprLowerer:
    """Lowers one expression tree; reports non-finite numbers and bad dates."""

    def __init__(self, file: str, diags: Diagnostics) -> None:
        self.file = file
        self.diags = diags

    def lower(self, node: Node) -> ir.Expr:
        span = span_of(node, self.file)
        kind = str(node.data)
        if kind == "expression":
            return self.lower(sub(node, 0))
        if kind == "number":
            return self.number(tok(node, 0), opt_tok(node, 1), span)
        if kind == "string":
            return ir.String(unquote(tok(node, 0)), span)
        if kind == "date":
            value = parse_date(str(tok(node, 0)))
            if value is None:
                self.diags.add(codes.E306, f"`{tok(node, 0)}` is not a valid date", span)
                return ir.NoneLit(span)
            return ir.DateLit(value, span)
        if kind in ("true", "false"):
            return ir.BoolLit(kind == "true", span)
        if kind == "none":
            return ir.NoneLit(span)
        if kind == "name":
            return ir.Name(str(tok(node, 0)), span)
        if kind == "attribute":
            return ir.Attribute(self.lower(sub(node, 0)), str(tok(node, 1)), span)
        if kind == "call":
            args = opt_sub(node, 1)
            lowered = () if args is None else tuple(self.lower(a) for a in subtrees(args))
            return ir.Call(str(tok(node, 0)), lowered, span)
        if kind == "neg":
            return ir.Neg(self.lower(sub(node, 1)), span)
        if kind == "not_":
            return ir.Not(self.lower(sub(node, 0)), span)
        if kind in ("and_", "or_"):
            return ir.Logic(kind[:-1], tuple(self.lower(k) for k in subtrees(node)), span)
        if kind == "compare":
            return ir.Compare(str(tok(node, 1)), self.lower(sub(node, 0)), self.lower(sub(node, 2)), span)
        if kind == "arith":
            return ir.Binary(str(tok(node, 1)), self.lower(sub(node, 0)), self.lower(sub(node, 2)), span)
        raise AssertionError(f"unhandled expression node {kind}")  # pragma: no cover

    def number(self, token: Token, unit: Token | None, span: Span) -> ir.Number:
        value, percent = parse_number(str(token))
        if not math.isfinite(value):
            self.diags.add(codes.E302, f"`{token}` is not a finite number", span)
            value = 0.0
        return ir.Number(value, str(unit) if unit is not None else None, percent, span)
