"""The edits a diagnostic's "did you mean" help proposes, as fixes `pcsc check --fix`
applies (and an editor's code action can offer).

A fix replaces the misspelt name the message quotes, inside the diagnostic's span, by
the name its help suggests. It is *safe* when it changes no number: a reference to a
state, a transition or an obligation of the route, or a keyword. Every other fix (a
field, a reference class, a criterion, a library, a policy: each picks where a number
or a verdict comes from) is *unsafe*, applied only when asked for (`--unsafe-fixes`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Finding

#: The codes whose "did you mean" fix changes no number.
SAFE = frozenset(c.code for c in (codes.E101, codes.E201, codes.E202, codes.E204))
_SUGGESTED = re.compile(r"^did you mean `([^`]+)`\?$")
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"")


@attrs.frozen
class Fix:
    """Replace ``old`` by ``new`` at ``line``, columns ``start`` to ``end`` (1-based,
    end exclusive) of ``file``, for the diagnostic ``code``."""

    file: str
    line: int
    start: int
    end: int
    old: str
    new: str
    code: str
    safe: bool

    @property
    def description(self) -> str:
        return f"{self.file}:{self.line}:{self.start}: `{self.old}` -> `{self.new}` [{self.code}]"


def fix_for(d: Finding, source: str) -> Fix | None:
    """The fix ``d``'s help proposes, when its span (on one line of ``source``) holds the
    name its message quotes exactly once; None otherwise."""
    wanted = _SUGGESTED.match(d.help or "")
    quoted = _QUOTED.search(d.message)
    s = d.span
    if wanted is None or quoted is None or s.line < 1 or s.column < 1 or s.end_line != s.line:
        return None
    old = quoted[1] or quoted[2]
    lines = source.split("\n")
    if s.line > len(lines):
        return None
    text = lines[s.line - 1][s.column - 1 : s.end_column - 1]
    if text.count(old) != 1:
        return None
    at = s.column + text.index(old)
    return Fix(s.file, s.line, at, at + len(old), old, wanted[1], d.code, d.code in SAFE)


def fixes(diagnostics: Iterable[Finding], sources: Mapping[str, str]) -> list[Fix]:
    """Every fix the diagnostics propose, once each, in file order."""
    found = {f for d in diagnostics if d.span.file in sources
             for f in [fix_for(d, sources[d.span.file])] if f is not None}
    return sorted(found, key=lambda f: (f.file, f.line, f.start))


def apply_fixes(source: str, chosen: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """``source`` with the fixes applied (the later of two that overlap is left out),
    and those applied."""
    lines = source.split("\n")
    applied: list[Fix] = []
    taken: dict[int, list[tuple[int, int]]] = {}
    for f in sorted(chosen, key=lambda f: (f.line, f.start)):
        spans = taken.setdefault(f.line, [])
        if any(a < f.end and f.start < b for a, b in spans):
            continue
        if lines[f.line - 1][f.start - 1 : f.end - 1] != f.old:
            continue  # the text moved: not this fix's place any more
        spans.append((f.start, f.end))
        applied.append(f)
    for f in sorted(applied, key=lambda f: (f.line, -f.start)):
        line = lines[f.line - 1]
        lines[f.line - 1] = line[: f.start - 1] + f.new + line[f.end - 1 :]
    return "\n".join(lines), applied
