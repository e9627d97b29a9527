"""The one renderer for diagnostics: text (with source line and caret) and JSON.

SARIF, which also reports GATE refusals, is `pcsc.render.sarif`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pcsc.diagnostics.model import Diagnostic


def to_text(diagnostics: Iterable[Diagnostic], sources: Mapping[str, str]) -> str:
    """`file:line:col: severity: message [code]`, the source line, a caret under the span."""
    blocks: list[str] = []
    for d in diagnostics:
        s = d.span
        lines = [f"{s.where}: {d.severity}: {d.message} [{d.code}]"]
        text = sources.get(s.file)
        if text is not None:
            source_lines = text.splitlines()
            if s.column and 1 <= s.line <= len(source_lines):
                src = source_lines[s.line - 1].expandtabs(1)
                width = (s.end_column - s.column) if s.end_line == s.line else len(src) - s.column + 1
                gutter = f"{s.line:>4} | "
                lines.append(gutter + src)
                lines.append(" " * (len(gutter) + s.column - 1) + "^" + "~" * max(width - 1, 0))
        if d.help:
            lines.append(f"  help: {d.help}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


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
    return out
