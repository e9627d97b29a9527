"""Build the Lark parsers once (lazily) and turn Lark's exceptions into diagnostics.

`parse_source` and `parse_expression` return typed nodes (`pcsc.lang.syntax.nodes`), built
inline by `ToSyntax` while the LALR parser reduces, without a Lark tree. `parse_tree`
returns Lark's tree, for the formatter, and reports syntax errors: the typed parse
hands a failing text to it, and both parsers share one grammar and one set of tables,
so they meet the same first error.

Each syntax error is re-worded in the author's terms (keywords in backticks, "a
name", "a number") with a "did you mean" when a misspelt keyword is the likely cause.
Only after a first error does `_Recovery` resume the LALR parser (Lark's interactive
parser) to report the file's further, independent syntax errors in the same run. A
file with a syntax error never yields nodes, so lowering never sees a partly
recovered parse.
"""

from __future__ import annotations

import bisect
import copy
import difflib
import hashlib
import os
import re
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Tree
from lark.common import LexerConf
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr
from lark.parsers.lalr_analysis import Shift

from pcsc.base.files import normalize_newlines
from pcsc.base.gcpause import paused_gc
from pcsc.base.resources import data_dir
from pcsc.diagnostics.messages import (
    E101_KEYWORD_READ_AS_NAME,
    E101_MISSPELT,
    E101_OTHER,
    E101_UNEXPECTED,
    E102_NOT_ASCII,
    E102_SPACE_BEFORE_PERCENT,
    E102_UNEXPECTED_CHARACTER,
    E102_UNTERMINATED_STRING,
    E103_EARLY_END,
    E103_EARLY_END_BRACE,
    E109_HORIZON_NOT_WHOLE,
    E109_HORIZON_UNIT,
    E109_HORIZON_WEEKS,
    E109_UNKNOWN_UNIT,
    E111_TOO_DEEP,
    diag,
)
from pcsc.diagnostics.model import Diagnostics, Finding, Span
from pcsc.lang.syntax.fast import FAILED, FastParser
from pcsc.lang.syntax.limits import MAX_DEPTH, check_characters, check_lines
from pcsc.lang.syntax.nodes import Expression, SourceFile
from pcsc.lang.syntax.transform import ToSyntax

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


class _Words(lark.lark.PostLex):
    """Every state's lexer also matches names, so that a keyword is a whole word: a
    keyword glued to what follows (`estimates0.15`, `and1.5k`) is read as one name, a
    syntax error, never as the keyword and a number (which `pcsc fmt`, putting a space
    between them, would change). Tokens pass unchanged."""

    always_accept = ("NAME",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return stream


_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "postlex": _Words(),
    "strict": True,
    "propagate_positions": True,
    "maybe_placeholders": True,
    "start": ["file", "expression"],
}


# The typed parser: the same grammar and tables, every token kept (spans run from a
# statement's keyword to its closing brace), no tree: `ToSyntax` runs inline.
_TYPED_OPTIONS: dict[str, Any] = {**_OPTIONS, "propagate_positions": False, "keep_all_tokens": True}


@cache
def get_parser() -> Lark:
    """The tree-building parser, built once per process: for syntax errors and their
    recovery, and for the formatter. Building the LALR tables takes ~0.2 s, so they are
    cached on disk per user (see `_table_cache`); any cache problem falls back to
    building them."""
    return _build(_OPTIONS, "tree")


@cache
def _typed_parser() -> tuple[Lark, ToSyntax, threading.Lock]:
    """The typed parser, its transformer (bound into Lark's callbacks, so shared), and
    the lock that keeps one parse at a time on that transformer."""
    builder = ToSyntax()
    return _build({**_TYPED_OPTIONS, "transformer": builder}, "typed"), builder, threading.Lock()


@cache
def _fast_parser() -> FastParser | None:
    """The lean driver over the typed parser's tables (`pcsc.lang.syntax.fast`), or
    None where it cannot reproduce that parser."""
    parser, builder, _ = _typed_parser()
    return FastParser.build(parser, builder)


def parser_kind() -> str:
    """`fast` (the default) or `lark`: which driver runs the typed parse.
    `PCSC_PARSER=lark` chooses Lark's own; both give the same nodes and diagnostics."""
    if os.environ.get("PCSC_PARSER", "").strip().lower() == "lark" or _fast_parser() is None:
        return "lark"
    return "fast"


def typed_lexer_conf() -> LexerConf:
    """The typed parser's lexer configuration (the grammar's terminals), for
    `pcsc.lang.syntax.tokens`: the compiler builds that parser anyway, so the token
    lexer costs no parser of its own."""
    return _typed_parser()[0].lexer_conf


def _build(options: dict[str, Any], kind: str) -> Lark:
    grammar = (data_dir("grammar") / "pcsc.lark").read_text(encoding="utf-8")
    cache_file = _table_cache(grammar, kind)
    if cache_file is not None:
        try:
            return Lark(grammar, cache=cache_file, **options)
        except Exception:  # a stale or unreadable cache is never fatal
            pass
    return Lark(grammar, **options)


def _table_cache(grammar: str, kind: str) -> str | None:
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
    return str(folder / f"grammar-{kind}-{key}.cache")


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


def _keyword_read_as_name(err: UnexpectedToken) -> tuple[str, str] | None:
    """The keyword, and where it stands (`" on line 12"`, or "" on the error's line),
    when a statement keyword was just read as a name: after an unfinished statement or
    a missing `}`, the next line's keyword is taken for a field name or a value, and
    the error only shows up one token later."""
    prev = _previous_token(err)
    if prev is None or prev.type != "NAME" or str(prev.value) not in grammar_keywords():
        return None
    return str(prev.value), f" on line {prev.line}" if prev.line != err.token.line else ""


def _did_you_mean(err: UnexpectedToken) -> str | None:
    """The keyword a misspelt name most likely stands for, among those expected here."""
    if err.token.type != "NAME":
        return None
    close = difflib.get_close_matches(str(err.token.value), _keywords(set(err.accepts or err.expected)), n=1)
    return close[0] if close else None


_AFTER_HORIZON = re.compile(r"\bhorizon\s+([0-9][0-9_]*(?:\.[0-9_]+)?)\s*$")


def _horizon_unit(err: UnexpectedToken, text: str, span: Span) -> Finding | None:
    """The diagnostic when a horizon's number is followed by a word that is not one
    of its units (`horizon 6 weeks`); weeks are converted to days in the help."""
    tok = err.token
    start = tok.start_pos if isinstance(tok.start_pos, int) else -1
    match = _AFTER_HORIZON.search(text[max(0, start - 80) : start]) if start >= 0 else None
    if tok.type != "NAME" or match is None:
        return None
    number, word = match.group(1), str(tok.value)
    if not number.replace("_", "").isdigit():
        return diag(E109_HORIZON_NOT_WHOLE, span, word=word)
    if word.lower() in ("week", "weeks"):
        return diag(E109_HORIZON_WEEKS, span, word=word, days=int(number.replace("_", "")) * 7)
    return diag(E109_HORIZON_UNIT, span, word=word, number=number)


def _describe_char(char: str) -> str:
    return f"`{char}`" if char.isprintable() else f"U+{ord(char):04X}"


def _looks_like(char: str) -> str:
    """Names, keywords and operators are ASCII: the ASCII letter a non-ASCII ``char``
    looks like, as the help says it (a Cyrillic `а` in a name is the usual confusable)."""
    plain = unicodedata.normalize("NFKD", char)[:1]
    looks = _CONFUSABLE.get(char) or (plain if plain.isascii() and plain.isalpha() else None)
    return f", which looks like the ASCII `{looks}`" if looks else ""


# Non-ASCII letters that render like ASCII ones (Cyrillic and Greek lookalikes).
_CONFUSABLE = dict(
    zip("аеорсухіјѕԁԛԝАВЕКМНОРСТХΑΒΕΖΗΙΚΜΝΟΡΤΥΧον", "aeopcyxijsdqwABEKMHOPCTXABEZHIKMNOPTYXov", strict=True)
)


def _token_text(token: Token) -> str:
    if token.type == "$END":
        return "the end of the file"
    return f"`{token.value}`"


UNITS = ("usd", "days", "months", "years", "%")
# a number ending just before a name on the same line: `0 eur`
_NUMBER_BEFORE = re.compile(
    r"(?<![A-Za-z0-9_.])(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?[kMB]?[ \t]+$"
)


def _unit_word(token: Token | None, text: str) -> Token | None:
    """``token`` when it reads as a unit the grammar does not know: a short name without
    `_`, not a keyword, right after a number on its line (`arr 0 eur`)."""
    if token is None or token.type != "NAME" or not isinstance(token.start_pos, int):
        return None
    word = str(token.value)
    if "_" in word or len(word) > 8 or word in grammar_keywords():
        return None
    start = text.rfind("\n", 0, token.start_pos) + 1
    return token if _NUMBER_BEFORE.search(text[start : token.start_pos]) else None


def _unknown_unit(err: UnexpectedToken, file: str, text: str, diags: Diagnostics) -> bool:
    """Report `arr 0 eur` as an unknown unit: read as a name after the number, `eur`
    fails there, or one token later (where a field's value was expected)."""
    word = _unit_word(err.token, text)
    if word is None:
        prev = _previous_token(err)
        word = _unit_word(prev, text) if prev is not None and err.token.type in ("RBRACE", "NAME", "$END") else None
    if word is None:
        return False
    end = word.end_column or (word.column or 1) + len(str(word))
    span = Span(file, word.line or 1, word.column or 1, word.end_line or word.line or 1, end)
    diags.diag(E109_UNKNOWN_UNIT, span, word=word, units=", ".join(UNITS))
    return True


def syntax_error(err: UnexpectedInput, file: str, text: str, diags: Diagnostics) -> None:
    """Append one diagnostic for a Lark syntax error."""
    line = err.line if isinstance(err.line, int) and err.line > 0 else 1
    column = err.column if isinstance(err.column, int) and err.column > 0 else 1
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":  # fewer units than amounts: say which
        tok = err.token
        span = Span(file, line, column, tok.end_line or line, tok.end_column or column + len(str(tok.value)))
        horizon = _horizon_unit(err, text, span)
        if horizon is not None:
            diags.items.append(horizon)
            return
    if isinstance(err, UnexpectedToken) and _unknown_unit(err, file, text, diags):
        return
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":
        tok = err.token
        end_line = tok.end_line or line
        end_col = tok.end_column or column + len(str(tok.value))
        span = Span(file, line, column, end_line, end_col)
        shown, wanted = _token_text(tok), _expected_phrase(set(err.accepts or err.expected))
        read_as_name = _keyword_read_as_name(err)
        close = _did_you_mean(err) if read_as_name is None else None
        if read_as_name is not None:
            keyword, where = read_as_name
            diags.diag(E101_KEYWORD_READ_AS_NAME, span, token=shown, expected=wanted, keyword=keyword, where=where)
        elif close is not None:
            diags.diag(E101_MISSPELT, span, token=shown, expected=wanted, keyword=close)
        else:
            diags.diag(E101_UNEXPECTED, span, token=shown, expected=wanted)
    elif isinstance(err, (UnexpectedEOF, UnexpectedToken)):
        lines = text.splitlines() or [""]
        last = len(lines)
        col = len(lines[-1]) + 1
        expected: set[str] = set(err.expected) if isinstance(err, UnexpectedEOF) else set(err.accepts or err.expected)
        at = Span(file, last, col, last, col)
        if "RBRACE" in expected:
            diags.diag(E103_EARLY_END_BRACE, at, expected=_expected_phrase(expected))
        else:
            diags.diag(E103_EARLY_END, at, expected=_expected_phrase(expected))
    elif isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream if err.pos_in_stream is not None else -1
        char = text[pos] if 0 <= pos < len(text) else "?"
        span = Span(file, line, column, line, column + 1)
        allowed = set(err.allowed or ())
        if char == '"':
            diags.diag(E102_UNTERMINATED_STRING, span)
        else:
            wanted = f"; expected {_expected_phrase(allowed)}" if allowed else ""
            shown = _describe_char(char)
            if char == "%":
                diags.diag(E102_SPACE_BEFORE_PERCENT, span, char=shown, expected=wanted)
            elif not char.isascii():
                name = unicodedata.name(char, f"U+{ord(char):04X}")
                like = _looks_like(char)
                diags.diag(E102_NOT_ASCII, span, char=shown, expected=wanted, point=ord(char), name=name, like=like)
            else:
                diags.diag(E102_UNEXPECTED_CHARACTER, span, char=shown, expected=wanted)
    else:  # pragma: no cover - Lark raises only the three above
        diags.diag(E101_OTHER, Span(file, line, column, line, column + 1), error=err)


def parse_tree(text: str, file: str, diags: Diagnostics, *, prepared: bool = False) -> Tree[Token] | None:
    """Lark's concrete tree of a .route or .obl text, for the formatter, which lays
    out tokens; the compiler reads `parse_source`. On syntax errors append a diagnostic
    for the first one and for each further independent one (see `_Recovery`), and
    return None: a partly recovered parse is never used. A text with a NUL, or with an
    expression nested deeper than `MAX_DEPTH`, is refused the same way (``prepared``:
    the caller has checked its characters already)."""
    if not prepared:
        checked = _prepare(text, file, diags)
        if checked is None:
            return None
        text = checked
    known, _ = _remembered("tree", text, file, diags)
    if known:  # only failures are remembered
        return None
    try:
        tree = get_parser().parse(text, start="file")
    except UnexpectedInput as err:
        before = len(diags.items)
        syntax_error(err, file, text, diags)
        try:
            _Recovery(text, file, diags).run(err)
        except Exception:  # it relies on Lark's parser internals: never fatal, the first error is reported
            pass
        _remember("tree", text, file, None, diags.items[before:])
        return None
    deep = _too_deep(tree)
    if deep is not None:
        _report_depth(deep, file, diags)
        return None
    return tree


# The last texts this process parsed, by (file, text), with what the parse reported: a
# parse is a function of both alone and its nodes are frozen, so the entry points that
# meet the same text again in one process (the language server re-analysing a document,
# the API, the fuzzer's commands on one input) parse it once. A failed `parse_tree` is
# kept too (its diagnostics only: a successful tree is the formatter's to lay out).
_PARSED: OrderedDict[tuple[str, str, str], tuple[SourceFile | None, tuple[Finding, ...]]] = OrderedDict()
_PARSED_MAX = 16


def _remembered(kind: str, text: str, file: str, diags: Diagnostics) -> tuple[bool, SourceFile | None]:
    """(True, the node) with the diagnostics replayed into ``diags`` when this parse is
    remembered; (False, None) when it is not."""
    found = _PARSED.get((kind, file, text))
    if found is None:
        return False, None
    diags.items.extend(found[1])
    return True, found[0]


def _remember(kind: str, text: str, file: str, node: SourceFile | None, reported: list[Finding]) -> None:
    _PARSED[(kind, file, text)] = (node, tuple(reported))
    while len(_PARSED) > _PARSED_MAX:
        _PARSED.popitem(last=False)


def parse_source(text: str, file: str, diags: Diagnostics) -> SourceFile | None:
    """Parse a .route or .obl text into typed nodes. On syntax errors report them as
    `parse_tree` does (the tree parser meets the same first error) and return None."""
    known, node = _remembered("source", text, file, diags)
    if known:
        return node
    before = len(diags.items)
    node = _parse_source(text, file, diags)
    _remember("source", text, file, node, diags.items[before:])
    return node


def _parse_source(text: str, file: str, diags: Diagnostics) -> SourceFile | None:
    checked = _prepare(text, file, diags)
    if checked is None:
        return None
    node, deep = _parse_typed(checked, file, "file")
    if deep is not None:
        _report_depth((deep.line, deep.column, deep.end_line, deep.end_column), file, diags)
        return None
    if node is None:
        tree = parse_tree(checked, file, diags, prepared=True)
        assert tree is None, "the typed and the tree parser share their tables"
        return None
    assert isinstance(node, SourceFile)
    return node


def parse_expression(text: str, file: str, diags: Diagnostics) -> Expression | None:
    """Parse a standalone expression (a policy rule)."""
    checked = _prepare(text, file, diags)
    if checked is None:
        return None
    node, deep = _parse_typed(checked, file, "expression")
    if deep is not None:
        _report_depth((deep.line, deep.column, deep.end_line, deep.end_column), file, diags)
        return None
    if node is None:
        try:
            get_parser().parse(checked, start="expression")
        except UnexpectedInput as err:
            syntax_error(err, file, checked, diags)
        return None
    assert isinstance(node, Expression)
    return node


def _prepare(text: str, file: str, diags: Diagnostics) -> str | None:
    """The text with its line breaks read as LF, or None when it holds a NUL or a line
    over the length limit."""
    text = normalize_newlines(text)
    return text if check_lines(text, file, diags) and check_characters(text, file, diags) else None


def _parse_typed(text: str, file: str, start: str) -> tuple[object | None, Span | None]:
    """The typed parse of ``text``, or None on a syntax error (not reported here); and
    the first expression nested deeper than `MAX_DEPTH`, if any."""
    parser, builder, lock = _typed_parser()
    fast = _fast_parser() if parser_kind() == "fast" else None
    with lock, paused_gc():  # the nodes all stay alive: full collections would only cost
        builder.start(file, text)
        try:
            result: object = parser.parse(text, start=start) if fast is None else fast.parse(text, start)
        except UnexpectedInput:
            return None, None
        finally:
            deep = builder.too_deep
            builder.finish()
    if result is FAILED:  # a syntax error, as Lark's `UnexpectedInput` above
        return None, None
    return result, deep


# the rules (after inlining) that build an operator node of an expression
_OPERATOR_RULES = frozenset({"or_", "and_", "not_", "compare", "arith", "neg", "attribute", "call"})


def _too_deep(tree: Tree[Token]) -> tuple[int, int, int, int] | None:
    """Where an expression of ``tree`` nests operators deeper than `MAX_DEPTH`: found
    without recursion, as the typed parser counts them."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if node.data in _OPERATOR_RULES:
            depth += 1
            if depth > MAX_DEPTH:
                meta = node.meta
                if getattr(meta, "empty", True):
                    return (1, 1, 1, 2)
                return (meta.line, meta.column, meta.end_line, meta.end_column)
        stack.extend((child, depth) for child in node.children if isinstance(child, Tree))
    return None


def _report_depth(where: tuple[int, int, int, int], file: str, diags: Diagnostics) -> None:
    diags.diag(E111_TOO_DEEP, Span(file, *where), limit=MAX_DEPTH)


# ---------------------------------------------------------------------- further syntax errors
MAX_SYNTAX_ERRORS = 20  # syntax errors reported for one file, the first one included
_MAX_STEPS = 200  # resumptions of the parser for one file, reported or not: a bound on the work
_STOP = -1  # a resynchronisation that gives up: the rest of the file is not checked

# The recovery's own view of the text: only braces, words and where lines start matter,
# and braces inside strings and comments must not count. An unterminated string runs to
# the end of its line, as its author meant.
_SCAN = re.compile(
    r"(?P<newline>\n)|(?P<space>[ \t\r\f]+|#[^\n]*)"
    r'|(?P<string>"(?:[^"\\\n]|\\.)*"?)'
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<open>\{)|(?P<close>\})"
    r"|(?P<other>[0-9][A-Za-z0-9_.%]*|.)"
)
_SPACE = re.compile(r"(?:[ \t\r\f\n]|#[^\n]*)*")


@dataclass(frozen=True, slots=True)
class _Item:
    pos: int
    kind: str  # "word", "open", "close", "string" or "other"
    text: str
    first: bool  # the first item of its line


def _scan(text: str) -> list[_Item]:
    items = []
    first = True
    for m in _SCAN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "newline":
            first = True
        elif kind != "space":
            items.append(_Item(m.start(), kind, m.group(), first))
            first = False
    return items


@cache
def _keyword_terminals() -> dict[str, str]:
    """`transition` -> `TRANSITION`, for every word the grammar spells out."""
    return {
        str(t.pattern.value): t.name
        for t in get_parser().terminals
        if isinstance(t.pattern, PatternStr) and str(t.pattern.value).replace("_", "").isalpha()
    }


def _shifts(actions: dict[str, Any], terminal: str) -> bool:
    action = actions.get(terminal)
    return action is not None and action[0] is Shift


def _error_pos(err: UnexpectedInput) -> int:
    pos = err.token.start_pos if isinstance(err, UnexpectedToken) else err.pos_in_stream
    return pos if isinstance(pos, int) else -1


def _accepts(err: UnexpectedInput) -> set[str]:
    if isinstance(err, UnexpectedToken):
        return set(err.accepts or err.expected)
    return set(err.allowed or ()) if isinstance(err, UnexpectedCharacters) else set()


def _error_line(err: UnexpectedInput) -> int:
    line = err.token.line if isinstance(err, UnexpectedToken) else err.line
    return line if isinstance(line, int) else 0


class _Recovery:
    """Report the further syntax errors of a file after its first one (LALR panic mode).

    After each error, the interactive parser of Lark's exception is set to go on:

    - repair: a name that starts a line where a statement may start, and that has a
      "did you mean" keyword, is read as that keyword (a misspelt `transition` still
      opens its block, whose lines are still checked), provided that its line then
      parses to the end of a statement or to a `{`;
    - a stray character is skipped and the parse goes on in the same state;
    - otherwise resynchronise (an unterminated string: from the end of its line): skip,
      counting braces, to the first of
        - a `}` that closes the innermost block open at the error;
        - the first word of a line, outside any block opened after the error, that the
          innermost open block takes: a statement keyword (`horizon`, `source`,
          `transition`, ...), or a name in a `state`, `vision`, `cost` or `criteria`
          block;
      and cut the parser's stack back to just inside that block.

    Where the braces leave the nesting in doubt, recovery stops (the rest of the file is
    not checked, since any guess at the intended nesting can invent errors):
    - a keyword at the start of a line that only an outer block takes: a `}` missing
      before it, or a statement in the wrong block (`state`, `criteria {` in a
      transition);
    - a `}` that would close more blocks than are open (a stray `}`), or that is first
      on its line but indented unlike the line of the `{` it would close;
    - the end of the file reached while skipping.

    An error is not reported, only recovered from, when it is likely a consequence of
    the previous one: on the line of the previous error; on the line after a skipped
    character, when the statement before it is unfinished, a keyword was just read as
    a name, or the character was alone on its line (where a `}` may have been); and the
    file ending early after a character alone on its line was skipped. Recovery stops
    at the end of the file or after `MAX_SYNTAX_ERRORS` reported errors.
    """

    def __init__(self, text: str, file: str, diags: Diagnostics) -> None:
        self.text = text
        self.file = file
        self.diags = diags
        self.items = _scan(text)
        self.starts = [item.pos for item in self.items]
        # closes[i]: how many of the blocks open before items[i] a `}` from items[i] on closes
        self.closes = [0] * (len(self.items) + 1)
        for i in range(len(self.items) - 1, -1, -1):
            step = {"open": 1, "close": -1}.get(self.items[i].kind, 0)
            self.closes[i] = max(0, self.closes[i + 1] - step)
        self.states: dict[Any, dict[str, Any]] = {}
        self.quiet_line = 0  # the next line with a token after the character skipped last
        self.quiet_lone = False  # whether that character was alone on its line
        self.lone_skipped = False  # whether any skipped character was alone on its line

    def run(self, err: UnexpectedInput) -> None:
        """Recover from `err`, already reported, and report the errors that follow."""
        reported, line = 1, _error_line(err)  # line: that of the error met last
        for _ in range(_MAX_STEPS):
            parser: Any = getattr(err, "interactive_parser", None)
            if parser is None or reported >= MAX_SYNTAX_ERRORS:
                return
            self.states = parser.parser_state.parse_conf.states
            if not self._resume(err, parser):
                return
            try:
                parser.resume_parse()
                return  # the rest of the file parsed
            except UnexpectedInput as new:
                err = new
            if isinstance(err, UnexpectedToken) and err.token.type == "$END":
                fresh = not self.lone_skipped  # else the missing `}` may be the skipped character
            elif _error_line(err) == line:
                fresh = False
            elif _error_line(err) == self.quiet_line:  # the line after a skipped character's
                fresh = not self.quiet_lone and self._independent(err)
            else:
                fresh = True
            line = _error_line(err)
            if fresh:
                syntax_error(err, self.file, self.text, self.diags)
                reported += 1

    @staticmethod
    def _independent(err: UnexpectedInput) -> bool:
        """Whether an error on the line after a skipped character is not its consequence:
        the statement before it may end there, and no keyword was just read as a name."""
        if not {"RBRACE", "$END"} & _accepts(err):
            return False
        return not (isinstance(err, UnexpectedToken) and _keyword_read_as_name(err) is not None)

    def _resume(self, err: UnexpectedInput, parser: Any) -> bool:
        """Set the parser's stack and the lexer's position to go on after `err`."""
        pos = _error_pos(err)
        if not 0 <= pos < len(self.text):
            return False
        if isinstance(err, UnexpectedCharacters):
            if self.text[pos] != '"':
                self._move(parser, pos + 1)
                end = self.text.find("\n", pos)
                space = _SPACE.match(self.text, end) if end >= 0 else None
                after = space.end() if space else len(self.text)
                self.quiet_line = self.text.count("\n", 0, after) + 1 if after < len(self.text) else 0
                rest = self.text[pos + 1 : end if end >= 0 else len(self.text)]
                self.quiet_lone = self._first_on_line(pos) and not rest.split("#")[0].strip()
                self.lone_skipped = self.lone_skipped or self.quiet_lone
                return True
            end = self.text.find("\n", pos)
            return self._resynchronise(parser, end if end >= 0 else len(self.text), pos)
        if not isinstance(err, UnexpectedToken) or err.token.type == "$END":
            return False
        return self._repair(err, parser) or self._resynchronise(parser, pos, pos)

    def _repair(self, err: UnexpectedToken, parser: Any) -> bool:
        """Read a misspelt keyword at the start of a line as the keyword it resembles."""
        token = err.token
        if token.type != "NAME" or not self._first_on_line(token.start_pos):
            return False
        if _keyword_read_as_name(err) is not None:
            return False
        word = _did_you_mean(err)
        terminal = _keyword_terminals().get(word) if word else None
        if terminal is None:
            return False
        keyword = Token.new_borrow_pos(terminal, token.value, token)
        if not self._completes_line(parser, keyword):
            return False
        parser.feed_token(keyword)
        return True

    @staticmethod
    def _completes_line(parser: Any, keyword: Token) -> bool:
        """Whether, with `keyword` for its first token, the line parses to its end and
        the statement may end there (or a block opens): else the misspelt word was not
        just a keyword (`contradictsmonetize`), and the repair would invent errors."""
        trial = parser.copy(deepcopy_values=False)
        conf = copy.copy(trial.parser_state.parse_conf)
        conf.callbacks = {}  # no tree building on a trial
        trial.parser_state.parse_conf = conf
        try:
            trial.feed_token(keyword)
            for token in trial.lexer_thread.lex(trial.parser_state):
                if token.line != keyword.line:
                    break
                trial.feed_token(token)
        except UnexpectedInput as err:
            if _error_line(err) == keyword.line:
                return False  # else the line parsed, and the next one starts with an error
        return bool({"RBRACE", "$END"} & trial.accepts())

    def _resynchronise(self, parser: Any, start: int, error_pos: int) -> bool:
        """Skip from `start` to the next place the parse can resume (see the class)."""
        blocks = self._open_blocks(parser)
        depth = 0
        for i in range(bisect.bisect_left(self.starts, start), len(self.items)):
            item = self.items[i]
            if item.kind == "open":
                depth += 1
                continue
            if item.kind == "close":
                depth -= 1
                if depth >= 0:
                    continue
                depth = 0  # a `}` of a block open at the error
                target = self._close(blocks, i) if blocks else None
            elif item.kind == "word" and item.first and depth == 0:
                target = self._word(parser, blocks, i, error_pos)
            else:
                continue
            if target == _STOP:
                return False
            if target is not None:
                self._cut(parser, target)
                self._move(parser, item.pos)
                return True
        return False  # nothing to resume at: whether a `}` is missing is not clear

    def _open_blocks(self, parser: Any) -> list[tuple[int, Token]]:
        """The blocks open on the parser's stack, innermost first: the stack index just
        inside the block's `{`, and that `{`."""
        state = parser.parser_state
        opened: list[tuple[int, Token]] = []
        for k, value in enumerate(state.value_stack):
            if isinstance(value, Token) and value.type == "LBRACE":
                opened.append((k + 1, value))
            elif isinstance(value, Token) and value.type == "RBRACE" and opened:
                opened.pop()
        return [(index, brace) for index, brace in reversed(opened) if index < len(state.state_stack)]

    def _close(self, blocks: list[tuple[int, Token]], i: int) -> int | None:
        """Where to resume at the `}` items[i], which closes the innermost open block."""
        index, brace = blocks[0]
        if self.closes[i] > len(blocks) or not self._closes_layout(brace, self.items[i]):
            return _STOP
        return index

    def _word(self, parser: Any, blocks: list[tuple[int, Token]], i: int, error_pos: int) -> int | None:
        """Where to resume at the word items[i], which starts a line."""
        item = self.items[i]
        stack = parser.parser_state.state_stack
        terminal = _keyword_terminals().get(item.text)
        inside = [index for index, _ in blocks] + [0]  # and the file's top level
        if terminal is None:  # a name: an item of a `state`, `vision`, `cost` or `criteria` block
            return inside[0] if item.pos > error_pos and _shifts(self.states[stack[inside[0]]], "NAME") else None
        for n, index in enumerate(inside):
            at_error = item.pos == error_pos and index == len(stack) - 1
            if not at_error and _shifts(self.states[stack[index]], terminal):
                return index if n == 0 else _STOP  # only an outer block takes it: a `}` missing, or misplaced
        return None

    def _closes_layout(self, brace: Token, close: _Item) -> bool:
        """Whether a `}` may close `brace`'s block by the layout: it is on the line of
        the `{`, or after other tokens on its line, or indented like the line of the `{`."""
        if not close.first or not isinstance(brace.start_pos, int) or brace.start_pos >= close.pos:
            return True
        if "\n" not in self.text[brace.start_pos : close.pos]:
            return True
        return self._indent(brace.start_pos) == self._indent(close.pos)

    def _indent(self, pos: int) -> str:
        start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[start : pos + 1]
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    def _first_on_line(self, pos: int) -> bool:
        return not self.text[self.text.rfind("\n", 0, pos) + 1 : pos].strip(" \t\r\f")

    @staticmethod
    def _cut(parser: Any, index: int) -> None:
        """Cut the parser's stack back to `state_stack[index]`."""
        state = parser.parser_state
        del state.state_stack[index + 1 :]
        del state.value_stack[index:]

    def _move(self, parser: Any, pos: int) -> None:
        """Make the lexer go on from `pos`."""
        counter = parser.lexer_thread.state.line_ctr
        counter.char_pos = pos
        counter.line = self.text.count("\n", 0, pos) + 1
        counter.line_start_pos = self.text.rfind("\n", 0, pos) + 1
        counter.column = pos - counter.line_start_pos + 1
