"""The tokens and comments of a source text, as the grammar's own lexer reads them: the
formatter (`pcsc.lang.fmt`) and the printer (`pcsc.lang.printer`) lay out exactly the
tokens the parser reads, so there is one lexer outside the certificate checker (which
keeps its own, on purpose: a bug here cannot hide in its check).

The lexer is Lark's, on the grammar's terminals, keeping what the grammar ignores
(comments and whitespace). It reads every terminal of the grammar wherever it stands,
not only where the parser would accept it; a text the grammar does not lex (a stray
character) gives that character as a token of kind ``other`` and goes on.
"""

from __future__ import annotations

from copy import copy
from functools import cache
from typing import NamedTuple

from lark.exceptions import UnexpectedCharacters
from lark.lexer import BasicLexer, LexerState
from lark.utils import TextSlice

from pcsc.lang.syntax.parser import typed_lexer_conf


class Lexeme(NamedTuple):
    kind: str  # string | date | number | word | op | other
    text: str
    start: int
    end: int


class Comment(NamedTuple):
    text: str  # from `#` to the end of the line, trailing whitespace removed
    start: int
    end: int


_KINDS = {"STRING": "string", "DATE": "date", "NUMBER": "number"}


@cache
def _lexer() -> BasicLexer:
    """The grammar's terminals as one lexer that ignores nothing. Built once: the
    grammar was validated when the parser was built, so its checks are not run again."""
    conf = copy(typed_lexer_conf())
    conf.ignore = ()
    conf.skip_validation = True
    return BasicLexer(conf)


def lex(text: str) -> tuple[list[Lexeme], list[Comment]]:
    """The tokens and the comments of ``text``. A `#` inside a string literal is part
    of the string (strings are single-line, with backslash escapes)."""
    tokens: list[Lexeme] = []
    comments: list[Comment] = []
    at = 0
    while True:
        try:
            for t in _lexer().lex(LexerState(TextSlice(text, at, len(text))), None):
                assert t.start_pos is not None and t.end_pos is not None  # a lexer's tokens have both
                value = str(t)
                if t.type == "COMMENT":
                    comments.append(Comment(value.rstrip(), t.start_pos, t.end_pos))
                elif not value.isspace():
                    kind = _KINDS.get(t.type) or ("word" if value[0].isalpha() or value[0] == "_" else "op")
                    tokens.append(Lexeme(kind, value, t.start_pos, t.end_pos))
            return tokens, comments
        except UnexpectedCharacters as exc:  # the tokens before it are in; go on after it
            i = exc.pos_in_stream
            assert i is not None  # the lexer says where
            tokens.append(Lexeme("other", text[i], i, i + 1))
            at = i + 1
