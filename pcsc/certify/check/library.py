"""A library's canonical text: the checker's own reader of `.obl` files lays a library
out as `pcsc fmt` does, and its SHA-256 is what a policy pins."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcsc.certify.check.expressions import _UNITS
from pcsc.certify.check.reading import sha256_text, text_of

# ---------------------------------------------------------------------- a library's canonical text
# A policy pins a library by the SHA-256 of its canonical text, the text `pcsc fmt` writes
# (docs/fmt.md), so that layout never moves a pin. The checker lays the library file out
# itself, from those rules, with its own reader of the library grammar: the text it
# writes holds every token of the file, in order (`;` aside), and every comment, so two
# files with one canonical text state the same library.

_OBL_TOKEN = re.compile(
    r"(?P<space>[ \t\n\f]+)"
    r"|(?P<comment>#[^\n]*)"
    r'|(?P<string>"(?:[^"\\\n]|\\[^\n])*")'
    r"|(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9]))"
    r"|(?P<number>(?:[0-9][0-9_]*(?:\.[0-9][0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?[kMB]?%?)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>>=|<=|==|!=|[<>+\-*/(),.;{}])"
)
_COMPARE = frozenset({">=", "<=", "==", "!=", "<", ">"})
_WORD_OPS = frozenset({"and", "or", "not"})
_LITERAL_WORDS = frozenset({"true", "false", "none"})
_NUMBER_WORDS = frozenset({"nan", "inf", "infinity"})  # numbers, in any case
_INDENT = "    "
_COMMENT_COLUMN = 46  # an end-of-line comment starts after this many characters, or two spaces after the code

Lexeme = tuple[str, str, int, int]  # kind, text, start, end


class NotALibrary(Exception):
    """The text does not read as a library (the compiler could not have loaded it)."""


def _spaced(toks: Sequence[Lexeme], expression: bool = False) -> str:
    """Tokens on one line: a space between two, except before `,` `)` `.`, after `(`
    `.` and a sign, and between a function name and its `(`. A `-` is a sign outside
    expressions; inside, where an operand starts: first, after an operator but `)`,
    after `and`, `or`, `not`."""
    out = ""
    for k, (_, text, _, _) in enumerate(toks):
        if k:
            before_kind, before = toks[k - 1][0], toks[k - 1][1]
            earlier = toks[k - 2] if k >= 2 else None
            sign = before == "-" and (not expression or earlier is None or earlier[1] in _WORD_OPS
                                      or (earlier[0] == "op" and earlier[1] != ")"))
            call = text == "(" and before_kind == "word" and before not in _WORD_OPS
            if not (text in (",", ")", ".") or before in ("(", ".") or sign or call):
                out += " "
        out += text
    return out


class _LibraryReader:
    """The items of a library file, read by the grammar of `.obl` files. A word is a
    keyword only where the grammar expects that keyword (`require kill`, `field p
    count`: `kill` and `p` are names there)."""

    def __init__(self, text: str) -> None:
        self.toks: list[Lexeme] = []
        self.comments: list[tuple[str, int, int]] = []
        pos = 0
        while pos < len(text):
            m = _OBL_TOKEN.match(text, pos)
            if m is None:
                self.text = text
                raise NotALibrary(f"{self.place(pos)}: `{text[pos]}` is no token of the language")
            kind, pos = m.lastgroup or "", m.end()
            if kind == "comment":
                self.comments.append((m.group().rstrip(), m.start(), m.end()))
            elif kind != "space":
                self.toks.append((kind, m.group(), m.start(), m.end()))
        self.text, self.i = text, 0

    def place(self, pos: int) -> str:
        return f"line {self.text.count(chr(10), 0, pos) + 1}, column {pos - self.text.rfind(chr(10), 0, pos)}"

    def fail(self, expected: str) -> NotALibrary:
        t = self.peek()
        if t is None:
            return NotALibrary(f"the file ends where {expected} is expected")
        glued = any(t[1].startswith(k) and t[1] != k for k in re.findall(r"`(\w+)`", expected))
        return NotALibrary(f"{self.place(t[2])}: `{t[1]}` where {expected} is expected"
                           + (" (a keyword is a whole word)" if glued else ""))

    def peek(self, ahead: int = 0) -> Lexeme | None:
        return self.toks[self.i + ahead] if self.i + ahead < len(self.toks) else None

    def at(self, *texts: str) -> bool:
        t = self.peek()
        return t is not None and t[0] in ("word", "op") and t[1] in texts

    def take(self, kind: str | None = None, text: str | None = None) -> Lexeme:
        t = self.peek()
        if t is None or (kind is not None and t[0] != kind) or (text is not None and t[1] != text):
            raise self.fail(f"`{text}`" if text else {"word": "a name", "string": "a text"}.get(kind or "", "more"))
        self.i += 1
        return t

    # ------------------------------------------------------------------ items
    def items(self) -> list[tuple[str, list[Lexeme], Any]]:
        """Each top-level item: (kind, its tokens, for an obligation its `require` lines)."""
        out: list[tuple[str, list[Lexeme], Any]] = []
        while self.peek() is not None:
            start = self.i
            if self.at("library"):
                self.take()
                self.take("word")
                self.take("word", "version")
                self.take("string")
                out.append(("library", self.toks[start:self.i], None))
            elif self.at("field"):
                self.take()
                self.take("word")
                self.take("word")
                if self.at("material"):
                    self.take()
                    self.quantity()
                out.append(("field", self.toks[start:self.i], None))
            elif self.at("obligation"):
                self.take()
                self.take("word")
                self.take("word", "covers")
                self.take("word")
                while self.at(","):
                    self.take()
                    self.take("word")
                self.take("op", "{")
                requires: list[list[Lexeme]] = []
                while not self.at("}"):
                    if self.at(";"):
                        self.take()
                        continue
                    first = self.i
                    self.take("word", "require")
                    self.expression()
                    if not self.at("require", ";", "}"):
                        raise self.fail("`require`, `;` or `}` (one expression a line)")
                    requires.append(self.toks[first:self.i])
                self.take("op", "}")
                out.append(("obligation", self.toks[start:self.i], requires))
            else:
                raise self.fail("`library`, `field` or `obligation`")
        return out

    def quantity(self) -> None:
        if self.at("-"):
            self.take()
        t = self.peek()
        if t is None or not (t[0] == "number" or (t[0] == "word" and t[1].lower() in _NUMBER_WORDS)):
            raise self.fail("a number")
        self.take()
        if self.at(*_UNITS):
            self.take()

    # ------------------------------------------------------------------ expressions
    def expression(self) -> None:
        self.conjunction()
        while self.at("or"):
            self.take()
            self.conjunction()

    def conjunction(self) -> None:
        self.negation()
        while self.at("and"):
            self.take()
            self.negation()

    def negation(self) -> None:
        if self.at("not"):
            self.take()
            self.negation()
            return
        self.sum()
        if self.at(*_COMPARE):
            self.take()
            self.sum()

    def sum(self) -> None:
        self.product()
        while self.at("+", "-"):
            self.take()
            self.product()

    def product(self) -> None:
        self.signed()
        while self.at("*", "/"):
            self.take()
            self.signed()

    def signed(self) -> None:
        if self.at("-"):
            self.take()
            self.signed()
            return
        t, after = self.peek(), self.peek(1)
        if t is None:
            raise self.fail("an operand")
        word = t[0] == "word"
        if word and after is not None and after[1] == "(" and t[1] not in _LITERAL_WORDS \
                and t[1].lower() not in _NUMBER_WORDS:
            self.take()
            self.take("op", "(")
            if not self.at(")"):
                self.expression()
                while self.at(","):
                    self.take()
                    self.expression()
            self.take("op", ")")
        elif t[0] == "number" or (word and t[1].lower() in _NUMBER_WORDS):
            self.take()
            if self.at(*_UNITS):
                self.take()
        elif t[0] in ("string", "date") or word:
            self.take()
        elif t[1] == "(":
            self.take()
            self.expression()
            self.take("op", ")")
        else:
            raise self.fail("an operand")
        while self.at("."):
            self.take()
            self.take("word")


class _CanonicalWriter:
    """Writes the lines of the canonical text and places the comments by position: one
    before a line goes above it (a blank line next to it in the source is kept), one
    inside a line's construct goes above it too, one after it on the same line (only
    spaces or `;` between) stays at its end, one before a `}` stays inside the block."""

    def __init__(self, text: str, comments: Sequence[tuple[str, int, int]]) -> None:
        self.text, self.comments = text, comments
        self.next = 0  # the first comment not yet written
        self.lines: list[str] = []
        self.gap = False  # a blank line is due before the next line
        self.opened = False  # the last line opens a block: no blank line after it
        self.written = 0  # where the source written so far ends

    def _blank(self, start: int, end: int) -> bool:
        return re.search(r"\n[ \t\f]*\n", self.text[start:end]) is not None

    def _emit(self, depth: int, body: str, opens: bool = False) -> None:
        if self.gap and self.lines and not self.opened:
            self.lines.append("")
        self.gap = False
        self.lines.append(_INDENT * depth + body)
        self.opened = opens

    def _above(self, depth: int, start: int) -> None:
        wrote = False
        while self.next < len(self.comments) and self.comments[self.next][1] < start:
            text, at, end = self.comments[self.next]
            self.next += 1
            if self._blank(self.written, at):
                self.gap = True
            self._emit(depth, text)
            self.written, wrote = end, True
        if wrote and self._blank(self.written, start):
            self.gap = True

    def _after(self, end: int, width: int) -> str:
        if self.next < len(self.comments):
            text, at, to = self.comments[self.next]
            if re.fullmatch(r"[ \t\f;]*", self.text[end:at]):
                self.next += 1
                self.written = to
                return " " * (max(_COMMENT_COLUMN, width + 2) - width) + text
        return ""

    def line(self, depth: int, body: str, start: int, end: int, opens: bool = False) -> None:
        self._above(depth, start)
        while self.next < len(self.comments) and self.comments[self.next][1] < end:
            self._emit(depth, self.comments[self.next][0])
            self.next += 1
        self.written = end
        self._emit(depth, body + self._after(end, len(_INDENT) * depth + len(body)), opens)

    def close(self, depth: int, brace: int) -> None:
        self._above(depth + 1, brace)
        self.gap = False  # never a blank line before `}`
        self.written = brace + 1
        self._emit(depth, "}" + self._after(brace + 1, len(_INDENT) * depth + 1))

    def blank(self) -> None:
        self.gap = True

    def finish(self) -> str:
        self._above(0, len(self.text) + 1)
        return "\n".join(self.lines) + "\n" if self.lines else ""


def canonical_library(text: str) -> str:
    """The canonical text of a library file's text (its `pcsc fmt` layout): one item a
    line, a blank line between the `library` line, the run of `field` lines and each
    obligation; the field lines a table; tokens spaced by the spacing rule. Raises
    `NotALibrary` when the text does not read as a library."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    reader = _LibraryReader(text)
    items = reader.items()
    out = _CanonicalWriter(text, reader.comments)
    runs: list[list[tuple[str, list[Lexeme], Any]]] = []
    for item in items:
        if runs and item[0] == runs[-1][0][0] != "obligation":
            runs[-1].append(item)
        else:
            runs.append([item])
    for n, run in enumerate(runs):
        if n:
            out.blank()
        kind = run[0][0]
        if kind == "library":
            for _, toks, _ in run:
                out.line(0, _spaced(toks), toks[0][2], toks[-1][3])
        elif kind == "field":
            names = max(len(toks[1][1]) for _, toks, _ in run)
            types = max((len(toks[2][1]) for _, toks, _ in run if len(toks) > 3), default=0)
            for _, toks, _ in run:
                head = f"field {toks[1][1].ljust(names)}  "
                rest = _spaced(toks[3:])
                out.line(0, head + (f"{toks[2][1].ljust(types)}  {rest}" if rest else toks[2][1]),
                         toks[0][2], toks[-1][3])
        else:
            _, toks, requires = run[0]
            brace = next(k for k, t in enumerate(toks) if t[1] == "{")
            header = _spaced(toks[:brace])
            if not requires:
                out.line(0, header + " {}", toks[0][2], toks[-1][3])
                continue
            out.line(0, header + " {", toks[0][2], toks[brace][3], opens=True)
            for line in requires:
                out.line(1, "require " + _spaced(line[1:], expression=True), line[0][2], line[-1][3])
            out.close(0, toks[-1][2])
    return out.finish()


def library_sha256(text: str) -> str | None:
    """What a policy's pin compares: the SHA-256 of the canonical text; None when the
    text does not read as a library."""
    try:
        return sha256_text(canonical_library(text))
    except NotALibrary:
        return None


def why_not_a_library(text: str) -> str:
    try:
        canonical_library(text)
    except NotALibrary as exc:
        return str(exc)
    return "it does"


def library_file(path: Path, what: str, field: str) -> tuple[str, str, str | None]:
    """A library file's text (UTF-8, a byte order mark dropped, CRLF read as LF), the
    SHA-256 of that text and of its canonical text (None when it is not a library)."""
    text = text_of(path, what, field).replace("\r\n", "\n")
    return text, sha256_text(text), library_sha256(text)
