"""The tokens and names of a PCSC text, read without the parser (for semantic tokens,
references, rename and workspace symbols).

`tokens` splits the text as the grammar's terminals do (`grammar/pcsc.lark`): names,
numbers, dates, units, strings, comments, operators; a word is a keyword where the
grammar reads one (a statement's first word, or `covers`, `version`, `and`, …).
`names` gives each name the role its place gives it: the declaration or a use of a
state, a transition, an obligation, an evidence item, a field, a route or a library,
with the route it belongs to. Both read the text alone, so they work while the
document does not parse. Positions are PCSC's: 1-based lines and character columns,
end exclusive.
"""

from __future__ import annotations

import re

import attrs

#: Words that open a statement (a keyword where a statement starts).
STATEMENTS = frozenset({
    "route", "library", "field", "obligation", "require", "as_of", "policy", "uses", "state", "vision",
    "transition", "actor", "mechanism", "asset", "class", "threshold", "kill", "horizon", "cost",
    "learning_cost", "estimates", "discharges", "p", "evidence", "source", "captured", "tier", "weight",
    "supports", "contradicts", "excerpt", "unverified", "criteria",
})
#: Words that are keywords wherever they stand.
ANYWHERE = frozenset({"version", "covers", "material", "sha256", "by", "and", "or", "not", "true", "false", "none"})
UNITS = frozenset({"usd", "days", "months", "years"})
#: What a name may not be renamed to: a keyword or a unit reads as one, not as a name.
RESERVED = STATEMENTS | ANYWHERE | UNITS | {"nan", "inf", "infinity"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

_TOKEN = re.compile(
    r"(?P<comment>#[^\n]*)"
    r'|(?P<string>"(?:[^"\\\n]|\\[^\n])*"?)'
    r"|(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9]))"
    r"|(?P<number>(?:[0-9][0-9_]*(?:\.[0-9][0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?[kMB]?%?)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<operator>->|>=|<=|==|!=|[-+*/<>:,;.(){}])"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)",
    re.S,
)


@attrs.frozen
class Token:
    kind: str  # keyword | name | number | date | unit | string | comment | operator | other
    text: str
    line: int
    column: int

    @property
    def end(self) -> int:
        return self.column + len(self.text)


@attrs.frozen
class Name:
    """A name in the text: what it names (``kind``), whether this is its declaration,
    and the route it belongs to (``route``: the index of its route block in the file,
    -1 outside every route)."""

    kind: str  # state | transition | obligation | evidence | field | route | library | criterion | cost | other
    text: str
    line: int
    column: int
    declaration: bool
    route: int

    @property
    def end(self) -> int:
        return self.column + len(self.text)


def tokens(text: str) -> list[Token]:
    """The text's tokens, in order, without white space."""
    out: list[Token] = []
    line, line_start = 1, 0
    statement_start = True  # at the start of a line, or after `{`, `}` or `;`
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        value = m.group()
        if kind == "space":
            if "\n" in value:
                line += value.count("\n")
                line_start = m.start() + value.rfind("\n") + 1
                statement_start = True
            continue
        column = m.start() - line_start + 1
        if kind == "word":
            if value in UNITS and out and out[-1].kind == "number" and out[-1].line == line:
                kind = "unit"
            elif value in ANYWHERE or (statement_start and value in STATEMENTS):
                kind = "keyword"
            else:
                kind = "name"
        out.append(Token(kind, value, line, column))
        if kind != "comment":
            statement_start = kind == "operator" and value in "{};"
    return out


_LISTS = {"supports": "transition", "contradicts": "transition", "discharges": "obligation", "uses": "library",
          "covers": "field"}
_DECLARES = {"route": "route", "state": "state", "transition": "transition", "evidence": "evidence",
             "obligation": "obligation", "library": "library", "field": "field"}
_FIELD_BLOCKS = frozenset({"state", "vision"})


def names(text: str) -> list[Name]:
    """Every name of the text, with the role its place gives it."""
    out: list[Name] = []
    route = -1
    blocks: list[str] = []  # the statements whose `{` is open, innermost last
    statement = ""  # the keyword of the statement being read
    listing = ""  # the kind a `, NAME` continues, after a list keyword
    previous: Token | None = None
    for t in tokens(text):
        if t.kind == "comment":
            continue
        if t.kind == "keyword":
            if t.text in STATEMENTS:
                statement = t.text
            listing = _LISTS.get(t.text, "")
        elif t.kind == "operator":
            if t.text == "{":
                blocks.append(statement)
            elif t.text == "}":
                if blocks:
                    blocks.pop()
                statement = ""
            if t.text != ",":
                listing = ""
        elif t.kind == "name":
            prev = previous.text if previous is not None and previous.kind in ("keyword", "operator") else ""
            depth0 = not blocks
            kind, declaration = "other", False
            if previous is not None and previous.kind == "keyword" and prev in _DECLARES:
                kind, declaration = _DECLARES[prev], True
                if kind == "route" and depth0:
                    route += 1
            elif prev == "vision":
                kind = "state"
            elif statement == "transition" and prev in (":", "->"):
                kind = "state"
            elif listing and (prev == "," or (previous is not None and previous.kind == "keyword")):
                kind = listing
            elif blocks and blocks[-1] in _FIELD_BLOCKS:
                kind = "field"
            elif blocks and blocks[-1] == "criteria":
                kind = "criterion"
            elif blocks and blocks[-1] == "cost":
                kind = "cost"
            elif statement in ("threshold", "kill"):
                kind = "field"
            out.append(Name(kind, t.text, t.line, t.column, declaration, route if blocks or kind == "route" else -1))
        previous = t
    return out


def name_at(found: list[Name], line: int, column: int) -> Name | None:
    """The name under (or just after, as an editor's cursor stands) the position."""
    for n in found:
        if n.line == line and n.column <= column <= n.end:
            return n
    return None


def is_valid_name(name: str) -> bool:
    return bool(NAME.match(name)) and name not in RESERVED
