"""Diagnostic values: errors are data, collected, never raised past a pass."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Literal, Protocol

import attrs

from pcsc.base.config import hide_credentials
from pcsc.diagnostics.codes import CODES, Code


class Message(Protocol):
    """What `Diagnostics.diag` needs of a template of `pcsc.diagnostics.messages` (which
    imports this module: a protocol here keeps the two out of a circle)."""

    @property
    def code(self) -> Code: ...

    def render(self, fields: Mapping[str, object]) -> tuple[str, str | None]: ...

Severity = Literal["error", "warning"]


@attrs.frozen(order=True)
class Span:
    """A region of a source file; lines and columns are 1-based, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def whole_file(cls, file: str) -> Span:
        return cls(file, 1, 1, 1, 1)

    @classmethod
    def file_only(cls, file: str, line: int = 0) -> Span:
        """A file (line 0) or a line of it (column 0) that is not source text: a policy,
        a CSV table, a ledger, a path that cannot be read. Rendered `file: error:` or
        `file:line: error:`."""
        return cls(file, line, 0, line, 0)

    @property
    def where(self) -> str:
        """`file:line:column`, `file:line` (column 0) or `file` (line 0), as diagnostics print it."""
        return where(self.file, self.line, self.column)


def where(file: str, line: int, column: int) -> str:
    return file if line == 0 else f"{file}:{line}" if column == 0 else f"{file}:{line}:{column}"


def _hidden_file(span: Span) -> Span:
    shown = hide_credentials(span.file)
    return span if shown == span.file else attrs.evolve(span, file=shown)


def _hidden_help(text: str | None) -> str | None:
    return None if text is None else hide_credentials(text)


@attrs.frozen
class Diagnostic:
    """A finding at a span. No diagnostic carries a password: an address quoted in its
    message, help or file shows ``***`` in its place."""

    code: str
    message: str = attrs.field(converter=hide_credentials)
    span: Span = attrs.field(converter=_hidden_file)
    help: str | None = attrs.field(default=None, converter=_hidden_help)
    repeats: int = 0  # the same diagnostic at this many more places of its line (`condense`)

    @classmethod
    def of(cls, code: Code, message: str, span: Span, help: str | None = None) -> Diagnostic:
        """A diagnostic of a registered code (a constant of `pcsc.diagnostics.codes`)."""
        if not isinstance(code, Code):  # a bare string would bypass the registry
            raise TypeError(f"diagnostic codes are constants of pcsc.diagnostics.codes, not {code!r}")
        return cls(code.code, message, span, help)

    @property
    def severity(self) -> Severity:
        return CODES[self.code].severity


@attrs.define
class Diagnostics:
    """An ordered collection that passes append to."""

    items: list[Diagnostic] = attrs.field(factory=list)

    def add(self, code: Code, message: str, span: Span, help: str | None = None) -> None:
        """Append a diagnostic; ``code`` is a constant of `pcsc.diagnostics.codes`."""
        self.items.append(Diagnostic.of(code, message, span, help))

    def diag(self, message: Message, span: Span, **fields: object) -> None:
        """Append the diagnostic ``message`` (a template of `pcsc.diagnostics.messages`)
        reports at ``span``, its named fields filled in."""
        text, help_text = message.render(fields)
        self.items.append(Diagnostic.of(message.code, text, span, help_text))

    def extend(self, other: Diagnostics) -> None:
        self.items.extend(other.items)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        """Diagnostics in source order (file, line, column), stable for equal spans."""
        return sorted(self.items, key=lambda d: (d.span.file, d.span.line, d.span.column))

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def condense(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Each diagnostic once per line: the same code, message and help at several places
    of one line (a unit error in every conjunct of a long threshold) is the first of
    them, with the number of the others in ``repeats``; the order is kept."""
    out: list[Diagnostic] = []
    at: dict[tuple[str, str, str | None, str, int], int] = {}
    for d in diagnostics:
        key = (d.code, d.message, d.help, d.span.file, d.span.line)
        i = at.get(key)
        if i is None:
            at[key] = len(out)
            out.append(d)
        else:
            out[i] = attrs.evolve(out[i], repeats=out[i].repeats + 1 + d.repeats)
    return out
