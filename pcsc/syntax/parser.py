"""Build the Lark parser once (lazily) and turn Lark's exceptions into diagnostics.

Lark stops at the first syntax error of a file; the message is re-worded in the
author's terms (keywords in backticks, "a name", "a number") with a "did you mean"
when a misspelt keyword is the likely cause.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.resources import data_dir

_DESCRIBE = {
    "NAME": "a name",
    "STRING": 'a quoted string ("...")',
    "NUMBER": "a number",
    "DATE": "a date (YYYY-MM-DD)",
    "UNIT": "a unit (usd, days, months, years)",
    "COMPARE": "a comparison (>=, <=, ==, !=, >, <)",
    "ADD_OP": "`+` or `-`",
    "MUL_OP": "`*` or `/`",
    "MINUS": "`-`",
    "SEMI": "`;`",
    "TRUE": "`true`",
    "FALSE": "`false`",
    "NONE": "`none`",
    "$END": "the end of the file",
}


_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "strict": True,
    "propagate_positions": True,
    "maybe_placeholders": True,
    "start": ["file", "expression"],
}


@cache
def get_parser() -> Lark:
    """The parser, built once per process. Building the LALR tables takes ~0.2 s, so
    they are cached on disk per user (see `_table_cache`); any cache problem falls
    back to building them."""
    grammar = (data_dir("grammar") / "pcsc.lark").read_text(encoding="utf-8")
    cache_file = _table_cache(grammar)
    if cache_file is not None:
        try:
            return Lark(grammar, cache=cache_file, **_OPTIONS)
        except Exception:  # a stale or unreadable cache is never fatal
            pass
    return Lark(grammar, **_OPTIONS)


def _table_cache(grammar: str) -> str | None:
    """`$XDG_CACHE_HOME/pcsc/grammar-<hash>.cache` (default `~/.cache`), or None when
    PCSC_NO_CACHE is set or the folder is not private to this user. Lark stores a hash
    of grammar, options and versions in the file and rebuilds on a mismatch; the
    folder check keeps other users from planting a pickle there."""
    if os.environ.get("PCSC_NO_CACHE"):
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "pcsc"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = folder.stat()
    except OSError:
        return None
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        return None
    key = hashlib.sha256(f"{grammar}{lark.__version__}{sys.version_info[:2]}".encode()).hexdigest()[:20]
    return str(folder / f"grammar-{key}.cache")


def _describe(terminal: str) -> str:
    if terminal in _DESCRIBE:
        return _DESCRIBE[terminal]
    try:
        pattern = get_parser().get_terminal(terminal).pattern
    except KeyError:
        return terminal.lower()
    return f"`{pattern.value}`"


def _keywords(expected: set[str]) -> list[str]:
    words = []
    for t in expected:
        desc = _describe(t)
        if desc.startswith("`") and desc[1:-1].replace("_", "").isalpha():
            words.append(desc[1:-1])
    return words


def _expected_phrase(expected: set[str]) -> str:
    # `;` and the `p` trap (a route stating p) are always possible; naming them is noise.
    names = sorted({_describe(t) for t in expected if t not in ("SEMI", "P")})
    if len(names) > 16:
        names = names[:16] + ["…"]
    if len(names) == 1:
        return names[0]
    return "one of " + ", ".join(names)


@cache
def grammar_keywords() -> frozenset[str]:
    """The words the grammar spells out (`route`, `state`, `kill`, …)."""
    return frozenset(
        str(t.pattern.value)
        for t in get_parser().terminals
        if isinstance(t.pattern, PatternStr) and str(t.pattern.value).replace("_", "").isalpha()
    )


def _previous_token(err: UnexpectedToken) -> Token | None:
    """The token the parser shifted last, when it is still a bare token."""
    parser = getattr(err, "interactive_parser", None)
    stack = getattr(getattr(parser, "parser_state", None), "value_stack", None)
    if stack and isinstance(stack[-1], Token):
        return stack[-1]
    return None


def _keyword_read_as_name(err: UnexpectedToken) -> str | None:
    """A help line when a statement keyword was just read as a name: after an
    unfinished statement or a missing `}`, the next line's keyword is taken for a
    field name or a value, and the error only shows up one token later."""
    prev = _previous_token(err)
    if prev is None or prev.type != "NAME" or str(prev.value) not in grammar_keywords():
        return None
    where = f" on line {prev.line}" if prev.line != err.token.line else ""
    return (
        f"`{prev.value}`{where} was read as a name, not as the start of a statement: "
        "is something missing before it (a value, an operand or a closing `}`)?"
    )


def _describe_char(char: str) -> str:
    return f"`{char}`" if char.isprintable() else f"U+{ord(char):04X}"


def _token_text(token: Token) -> str:
    if token.type == "$END":
        return "the end of the file"
    return f"`{token.value}`"


def syntax_error(err: UnexpectedInput, file: str, text: str, diags: Diagnostics) -> None:
    """Append one diagnostic for a Lark syntax error."""
    line = err.line if isinstance(err.line, int) and err.line > 0 else 1
    column = err.column if isinstance(err.column, int) and err.column > 0 else 1
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":
        tok = err.token
        end_line = tok.end_line or line
        end_col = tok.end_column or column + len(str(tok.value))
        span = Span(file, line, column, end_line, end_col)
        expected = set(err.accepts or err.expected)
        help_text = _keyword_read_as_name(err)
        if help_text is None and tok.type == "NAME":
            close = difflib.get_close_matches(str(tok.value), _keywords(expected), n=1)
            if close:
                help_text = f"did you mean `{close[0]}`?"
        diags.add(
            "PCSC-E101",
            f"unexpected {_token_text(tok)}; expected {_expected_phrase(expected)}",
            span,
            help_text,
        )
    elif isinstance(err, (UnexpectedEOF, UnexpectedToken)):
        lines = text.splitlines() or [""]
        last = len(lines)
        col = len(lines[-1]) + 1
        expected = set(err.expected) if isinstance(err, UnexpectedEOF) else set(err.accepts or err.expected)
        diags.add(
            "PCSC-E103",
            f"the file ends early; expected {_expected_phrase(expected)}",
            Span(file, last, col, last, col),
            "is a closing `}` missing?" if "RBRACE" in expected else None,
        )
    elif isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream if err.pos_in_stream is not None else -1
        char = text[pos] if 0 <= pos < len(text) else "?"
        span = Span(file, line, column, line, column + 1)
        allowed = set(err.allowed or ())
        if char == '"':
            msg = 'unterminated string: a string must close with `"` on the same line'
            diags.add("PCSC-E102", msg, span)
        else:
            wanted = f"; expected {_expected_phrase(allowed)}" if allowed else ""
            hint = None
            if char == "%":
                hint = "write `%` right after the number, without a space: `10%`"
            diags.add("PCSC-E102", f"unexpected character {_describe_char(char)}{wanted}", span, hint)
    else:  # pragma: no cover - Lark raises only the three above
        diags.add("PCSC-E101", str(err), Span(file, line, column, line, column + 1))


def parse_source(text: str, file: str, diags: Diagnostics) -> Tree[Token] | None:
    """Parse a .route or .obl text; on a syntax error append a diagnostic, return None."""
    try:
        return get_parser().parse(text, start="file")
    except UnexpectedInput as err:
        syntax_error(err, file, text, diags)
        return None


def parse_expression(text: str, file: str, diags: Diagnostics) -> Tree[Token] | None:
    """Parse a standalone expression (a policy rule)."""
    try:
        return get_parser().parse(text, start="expression")
    except UnexpectedInput as err:
        syntax_error(err, file, text, diags)
        return None
