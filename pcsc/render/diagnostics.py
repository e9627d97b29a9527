"""The one renderer for diagnostics: text (with source line and caret) and JSON.

SARIF, which also reports GATE refusals, is `pcsc.render.sarif`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pcsc.base.escape import escape_controls
from pcsc.diagnostics.model import Diagnostic, Span

SNIPPET = 100  # characters of a long source line shown around a diagnostic's span
_BEFORE = 40  # of which before the span's first column
MESSAGE = 1_000  # characters of a message or a help shown (a name can be as long as a line)


def to_text(diagnostics: Iterable[Diagnostic], sources: Mapping[str, str]) -> str:
    """`file:line:col: severity: message [code]`, the source line, a caret under the
    span; a long line is cut to `SNIPPET` characters around the span. Control
    characters of the inputs (in file names, messages and lines) are escaped."""
    blocks: list[str] = []
    lines_of: dict[str, list[str]] = {}
    for d in diagnostics:
        s = d.span
        lines = [escape_controls(f"{s.where}: {d.severity}: {_cut(d.message)} [{d.code}]")]
        text = sources.get(s.file)
        if text is not None and s.column:
            if s.file not in lines_of:
                lines_of[s.file] = text.split("\n")  # lines as the parser counts them
            source_lines = lines_of[s.file]
            if 1 <= s.line <= len(source_lines):
                lines += snippet(source_lines[s.line - 1], s)
        if d.repeats:
            lines.append(f"  note: the same {d.repeats:,} more time{'s' if d.repeats != 1 else ''} on this line")
        if d.help:
            lines.append(escape_controls(f"  help: {_cut(d.help)}"))
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _cut(text: str) -> str:
    return text if len(text) <= MESSAGE else text[:MESSAGE] + f"… ({len(text) - MESSAGE:,} more characters)"


def snippet(line: str, s: Span) -> list[str]:
    """The source line (escaped, cut around the span when long) and the caret line under
    the span."""
    src = line.expandtabs(1)
    col = s.column - 1
    width = (s.end_column - s.column) if s.end_line == s.line else len(src) - s.column + 1
    start = min(col, len(src))
    stop = min(len(src), max(start, col + width))
    before, span, after = (escape_controls(x) for x in (src[:start], src[start:stop], src[stop:]))
    shown = before + span + after
    lo = len(before) + col - start  # a span past the end of the line stays where it is
    width += len(span) - (stop - start)  # an escape is wider than the character it shows
    if len(shown) > SNIPPET + SNIPPET // 5:
        first = max(0, min(lo, len(shown)) - _BEFORE)
        last = min(len(shown), first + SNIPPET)
        width = min(width, last - lo)
        shown = ("…" if first else "") + shown[first:last] + ("…" if last < len(shown) else "")
        lo = lo - first + (1 if first else 0)
    gutter = f"{s.line:>4} | "
    return [gutter + shown, " " * (len(gutter) + lo) + "^" + "~" * max(width - 1, 0)]


def cut_note(cut: Sequence[Diagnostic], how: str) -> str:
    """The line that ends a list of diagnostics cut short: how many are not shown, of
    which severity, and ``how`` to see them."""
    errors = sum(d.severity == "error" for d in cut)
    counts = ((errors, "error"), (len(cut) - errors, "warning"))
    kinds = " and ".join(f"{n:,} {kind}{'' if n == 1 else 's'}" for n, kind in counts if n)
    return f"pcsc: {len(cut):,} more diagnostic{'' if len(cut) == 1 else 's'} not shown ({kinds}): {how}"


def to_json(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "file": d.span.file,
        "line": d.span.line,
        "column": d.span.column,
        "end_line": d.span.end_line,
        "end_column": d.span.end_column,
    }
    if d.help:
        out["help"] = d.help
    if d.repeats:
        out["repeats"] = d.repeats
    return out
