"""Expression nodes for thresholds, kill conditions, `require` lines and policy rules."""

from __future__ import annotations

import datetime as dt

import attrs

from pcsc.diagnostics.model import Span


@attrs.frozen
class Number:
    """A numeric literal; ``value`` is already scaled (`5k` is 5000.0, `4%` is 0.04)."""

    value: float
    unit: str | None
    percent: bool
    span: Span


@attrs.frozen
class String:
    value: str
    span: Span


@attrs.frozen
class DateLit:
    value: dt.date
    span: Span


@attrs.frozen
class BoolLit:
    value: bool
    span: Span


@attrs.frozen
class NoneLit:
    span: Span


@attrs.frozen
class Name:
    name: str
    span: Span


@attrs.frozen
class Attribute:
    obj: Expr
    name: str
    span: Span


@attrs.frozen
class Call:
    func: str
    args: tuple[Expr, ...]
    span: Span


@attrs.frozen
class Neg:
    operand: Expr
    span: Span


@attrs.frozen
class Not:
    operand: Expr
    span: Span


@attrs.frozen
class Logic:
    """``and`` / ``or`` over two or more operands."""

    op: str
    operands: tuple[Expr, ...]
    span: Span


@attrs.frozen
class Binary:
    """Arithmetic: ``+ - * /``."""

    op: str
    left: Expr
    right: Expr
    span: Span


@attrs.frozen
class Compare:
    op: str
    left: Expr
    right: Expr
    span: Span


Expr = Number | String | DateLit | BoolLit | NoneLit | Name | Attribute | Call | Neg | Not | Logic | Binary | Compare
