"""The input limits and the checks of a source text before it is parsed.

Every limit is a diagnostic, never a crash: a file over
`pcsc.base.files.MAX_FILE_BYTES` is not read (`pcsc.base.files`, the one reader of
files, also reads line breaks as written), an expression nested deeper than
`MAX_DEPTH` is not lowered (so no recursive pass meets it: lowering, the type checks,
the interpreter, the printer and the formatter recurse once per level, far below
Python's recursion limit), a route over `MAX_TRANSITIONS` or a file over `MAX_ROUTES`
is refused, a line over `MAX_LINE` characters is refused before it is lexed.
docs/language.md lists them.

`check_characters` reports what the parser would accept but a reader should not: a
NUL character (an error), other control characters (a warning: a terminal obeys ESC
and BEL, so PCSC prints them escaped) and the bidirectional control characters of
"Trojan Source" (a warning naming the code point: they are legitimate in right-to-left
excerpts, but they can make a line display differently from what it says; outside
strings and comments the parser refuses them anyway).
"""

from __future__ import annotations

import re
import unicodedata

from pcsc.base.escape import CONTROLS, escape_controls
from pcsc.diagnostics.messages import (
    E110_NUL,
    E126_LINE_TOO_LONG,
    W606_BIDI_CONTROL,
    W620_CONTROL,
)
from pcsc.diagnostics.model import Diagnostics, Span

MAX_DEPTH = 100  # nested operators in one expression (parentheses alone do not count)
MAX_TRANSITIONS = 1_000  # transitions in one route
MAX_ROUTES = 10_000  # routes in one file
MAX_REPORTED = 20  # NUL, bidi or control characters reported per file
MAX_LINE = 10_000  # characters in one line: a longer one is refused before it is lexed

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_SPECIAL = re.compile(f"[\x00{BIDI_CONTROLS}]|{CONTROLS.pattern}")



def check_lines(text: str, file: str, diags: Diagnostics) -> bool:
    """Report the first line longer than `MAX_LINE` characters (and how many more there
    are); False when there is one. Nothing longer reaches the lexer, whose time and
    memory, and every diagnostic that shows the line, grow with it."""
    lines = text.split("\n")
    if max(map(len, lines)) <= MAX_LINE:
        return True
    over = [i for i, line in enumerate(lines) if len(line) > MAX_LINE]
    first = over[0]
    more = f" ({len(over) - 1:,} more line{'s are' if len(over) > 2 else ' is'} too)" if len(over) > 1 else ""
    diags.diag(
        E126_LINE_TOO_LONG,
        Span(file, first + 1, MAX_LINE + 1, first + 1, len(lines[first]) + 1),
        line=first + 1,
        length=len(lines[first]),
        limit=MAX_LINE,
        more=more,
    )
    return False


def check_characters(text: str, file: str, diags: Diagnostics) -> bool:
    """Report NUL (error), control (warning) and bidi control (warning) characters;
    False on a NUL."""
    ok = True
    for reported, m in enumerate(_SPECIAL.finditer(text)):
        ch = m.group()
        ok = ok and ch != "\x00"
        if reported >= MAX_REPORTED:
            if not ok:
                break
            continue
        pos = m.start()
        line = text.count("\n", 0, pos) + 1
        column = pos - text.rfind("\n", 0, pos)
        span = Span(file, line, column, line, column + 1)
        if ch == "\x00":
            diags.diag(E110_NUL, span)
        elif ch not in BIDI_CONTROLS:
            diags.diag(W620_CONTROL, span, point=ord(ch), escaped=escape_controls(ch))
        else:
            name = unicodedata.name(ch, "bidirectional control")
            diags.diag(W606_BIDI_CONTROL, span, point=ord(ch), name=name)
    return ok
