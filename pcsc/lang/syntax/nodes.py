"""Parse-level nodes: what a .route or .obl file says, typed, before any checking.

`pcsc.lang.syntax.transform` builds these from Lark's tree; lowering (`pcsc.lang.lower`) reads
them and does every check. They keep what lowering reports about: tokens as written
(`Word`, a STRING keeps its quotes), numbers as written (`Quantity`), the `;`
separators and a `Span` on every node. Expressions are already IR (`pcsc.lang.ir.expr`):
the only problems an expression can have on its own (a non-finite number, a date
that does not exist) travel with it as `problems`, for lowering to report when, and
only if, it lowers that expression. No Lark object is kept.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from pcsc.diagnostics.model import Finding, Span
from pcsc.lang.ir.expr import Expr


@attrs.frozen
class Word:
    """A token: ``kind`` is its terminal (NAME, STRING, DATE, TRUE, FALSE)."""

    kind: str
    text: str
    span: Span


@attrs.frozen
class Quantity:
    """`-`? NUMBER UNIT?, as written."""

    minus: bool
    number: str
    unit: str | None
    span: Span


Value = Quantity | Word


@attrs.frozen
class Semi:
    """A `;`: it ends the statement before it, so the next may share its line."""

    span: Span


# ---------------------------------------------------------------------- statements
@attrs.frozen
class Scalar:
    """`actor`, `mechanism`, `asset`, `class`, `source`, `excerpt` (a string);
    `as_of`, `captured` (a date)."""

    keyword: str
    value: Word
    span: Span


@attrs.frozen
class Measure:
    """`horizon`, `learning_cost`, `tier`, `weight`, `p`: one quantity."""

    keyword: str
    value: Quantity
    span: Span


@attrs.frozen
class Names:
    """`uses`, `discharges`, `supports`, `contradicts`: a list of names."""

    keyword: str
    names: tuple[Word, ...]
    span: Span


@attrs.frozen
class KillBy:
    """`by 2027-06-01` or `by 6 months` after a kill: when the kill is armed."""

    keyword: ClassVar[str] = "by"
    date: Word | None
    duration: Quantity | None  # counted from the start of the transition's planned window
    span: Span


@attrs.frozen
class Condition:
    """`threshold`, `kill`, `require`: an expression and its source text."""

    keyword: str
    expr: Expr
    text: str
    problems: tuple[Finding, ...]
    span: Span
    by: KillBy | None = None  # only a kill has one


@attrs.frozen
class Estimates:
    keyword: ClassVar[str] = "estimates"
    values: tuple[Quantity, ...]
    span: Span


@attrs.frozen
class CostItem:
    """`NAME amount` or `NAME count * amount`."""

    name: Word
    count: Quantity | None
    amount: Quantity
    span: Span


@attrs.frozen
class Cost:
    keyword: ClassVar[str] = "cost"
    items: tuple[CostItem, ...]
    span: Span


@attrs.frozen
class Unverified:
    keyword: ClassVar[str] = "unverified"
    flag: Word | None
    span: Span


@attrs.frozen
class PolicyPin:
    """`policy "id@version"` with an optional `sha256 "…"`."""

    keyword: ClassVar[str] = "policy"
    ref: Word
    sha256: Word | None
    span: Span


@attrs.frozen
class FieldValue:
    name: Word
    value: Value
    span: Span


@attrs.frozen
class StateBlock:
    """`state NAME { field value … }` or `vision NAME { tam … }`."""

    keyword: Literal["state", "vision"]
    name: Word
    values: tuple[FieldValue, ...]
    span: Span


@attrs.frozen
class Criterion:
    name: Word
    value: Quantity
    span: Span


@attrs.frozen
class Criteria:
    keyword: ClassVar[str] = "criteria"
    items: tuple[Criterion, ...]
    span: Span


TransitionItem = Scalar | Condition | Measure | Cost | Estimates | Names
EvidenceItem = Scalar | Measure | Names | Unverified


@attrs.frozen
class TransitionBlock:
    name: Word
    source: Word
    target: Word
    items: tuple[TransitionItem | Semi, ...]
    span: Span


@attrs.frozen
class EvidenceBlock:
    name: Word
    items: tuple[EvidenceItem | Semi, ...]
    span: Span


RouteItem = Scalar | PolicyPin | Names | StateBlock | TransitionBlock | EvidenceBlock | Criteria


@attrs.frozen
class RouteBlock:
    form: ClassVar[str] = "route"  # the grammar rule, as messages name it
    name: Word
    title: Word | None
    items: tuple[RouteItem | Semi, ...]
    span: Span


# ---------------------------------------------------------------------- libraries
@attrs.frozen
class LibraryHeader:
    form: ClassVar[str] = "library"  # the grammar rule, as messages name it
    name: Word
    version: Word
    span: Span


@attrs.frozen
class FieldDecl:
    form: ClassVar[str] = "field_decl"  # the grammar rule, as messages name it
    name: Word
    type: Word
    material: Quantity | None
    span: Span


@attrs.frozen
class ObligationBlock:
    form: ClassVar[str] = "obligation"  # the grammar rule, as messages name it
    name: Word
    covers: tuple[Word, ...]
    items: tuple[Condition | Semi, ...]
    span: Span


FileItem = RouteBlock | LibraryHeader | FieldDecl | ObligationBlock


@attrs.frozen
class SourceFile:
    """A parsed .route or .obl file: its top-level items in order."""

    items: tuple[FileItem, ...]
    span: Span


Node = (
    Word | Quantity | Semi | Scalar | Measure | Names | Condition | Estimates | CostItem | Cost | Unverified
    | PolicyPin | FieldValue | StateBlock | Criterion | Criteria | TransitionBlock | EvidenceBlock | RouteBlock
    | LibraryHeader | FieldDecl | ObligationBlock
)


@attrs.frozen
class Expression:
    """A standalone expression (a policy rule, a frozen condition)."""

    expr: Expr
    problems: tuple[Finding, ...]
    span: Span
