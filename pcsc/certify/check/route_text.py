"""A route file read as text, without a parser of the route language: its tokens with
their places and blocks (`Layout`), the statements a route or transition writes, and
`Source`, what a route or library file states."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcsc.certify.check.expressions import _TOKEN, _UNITS, ExprError, literal_number, tokens
from pcsc.certify.check.reading import squeeze


class Source:
    """What a route or library file states, read as text: the checker parses no file;
    it asks whether a statement (`asset "…"`, `threshold …`) is written in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._transitions: dict[tuple[str, str], dict[str, Any]] | None = None
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.squeezed = " " + squeeze(text) + " "

    def states(self, key: str, text: str) -> bool:
        """`key text` is written, `text` ending where a statement may end."""
        needle = f" {key} {squeeze(text)}"
        at = self.squeezed.find(needle)
        while at >= 0:
            if self.squeezed[at + len(needle)] in " };":
                return True
            at = self.squeezed.find(needle, at + 1)
        return False

    def transition(self, route: str, transition: str) -> dict[str, Any] | None:
        """What the route's transition states that the checker looks up: the obligations
        it lists in `discharges` (a set, empty without the statement), its `horizon`
        and `learning_cost` amounts (absent without them) and the horizon's unit
        (`horizon_unit`); None when the file has no
        such transition. The file's tokens are scanned with the braces counted, so a
        text in quotes never misleads it."""
        if self._transitions is None:
            self._transitions = {}
            try:
                toks = tokens(self.text, units=True)
            except ExprError:
                toks = []
            depth, where = 0, ["", ""]
            for i, (_, tok) in enumerate(toks):
                after = toks[i + 1] if i + 1 < len(toks) else ("", "")
                if tok == "{":
                    depth += 1
                elif tok == "}":
                    depth -= 1
                elif depth in (0, 1) and tok in ("route", "transition") and after[1][:1].isidentifier():
                    where[depth] = after[1]
                    if depth == 1:
                        self._transitions[where[0], after[1]] = {"discharges": set()}
                elif depth == 2 and (where[0], where[1]) in self._transitions:
                    stated = self._transitions[where[0], where[1]]
                    if tok in ("horizon", "learning_cost") and after[0] == "number":
                        stated[tok] = literal_number(after[1])
                        unit = toks[i + 2] if i + 2 < len(toks) else ("", "")
                        if tok == "horizon" and unit[0] == "unit":
                            stated["horizon_unit"] = unit[1]
                    elif tok == "discharges":
                        j = i + 1
                        while j < len(toks) and toks[j][0] == "name":
                            stated["discharges"].add(toks[j][1])
                            if j + 1 >= len(toks) or toks[j + 1][1] != ",":
                                break
                            j += 2
        return self._transitions.get((route, transition))

    def obligations(self) -> dict[str, tuple[list[str], list[tuple[int, str]]]]:
        """A library's obligations: name -> (the fields it covers, its require lines as
        (line, the expression's text squeezed)), read from the file's tokens."""
        layout = layout_of(self.text.replace("\r\n", "\n").replace("\r", "\n"))
        toks = layout.toks
        out: dict[str, tuple[list[str], list[tuple[int, str]]]] = {}
        for i, p in enumerate(toks):
            if p[1] != "obligation" or p[4] != () or i + 2 >= len(toks) or toks[i + 2][1] != "covers":
                continue
            j, covers = i + 3, []
            while j < len(toks) and toks[j][1] != "{":
                if toks[j][0] == "name":
                    covers.append(toks[j][1])
                j += 1
            body: list[list[Place]] = []
            j += 1
            while j < len(toks) and not (toks[j][1] == "}" and toks[j][4] == ()):
                if toks[j][1] == "require" and toks[j][4] == ("{",):
                    body.append([toks[j]])
                elif toks[j][1] != ";" and body:
                    body[-1].append(toks[j])
                j += 1
            lines = []
            for req in body:
                if len(req) < 2:
                    continue
                first, last = req[1], req[-1]
                text = layout.text_at(first[2], first[3], last[2], last[3] + len(last[1])) or ""
                lines.append((req[0][2], squeeze(text)))
            out.setdefault(toks[i + 1][1], (covers, lines))
        return out


# ---------------------------------------------------------------------- authored numbers
# Every number the route's author wrote is recorded with the statement that writes it
# (`written`: its line and column, 1-based, end exclusive, and its text). The checker
# reads the hashed route file at that place and requires the same text; requires the
# place to hold that statement (in that route and block, starting with its keyword or
# name, and whole: nothing of it left out after the end); reads the number from the
# text with its own number reader; and requires it to be the value the steps use (or
# the value a recorded route override sets). It finds the statements by counting the
# file's braces, with no parser of the route language.

Place = tuple[str, str, int, int, tuple[str, ...]]  # kind, text, line, column, the blocks it is in
_BLOCK_WORDS = ("route", "state", "vision", "evidence")
_LIST_WORDS = (",", "supports", "contradicts", "discharges", "uses")
_CONDITION_ENDS = {"}", ";", "actor", "mechanism", "asset", "class", "threshold", "kill", "horizon", "cost",
                   "learning_cost", "estimates", "discharges", "p"}


def _block_of(prev: Sequence[Place]) -> str:
    """The block a `{` opens, from the tokens before it: `route R`, `transition T`,
    `state S`, `vision S`, `evidence E`, `cost`, `criteria` (else `{`)."""
    w, k = [p[1] for p in prev[-7:]], [p[0] for p in prev[-7:]]
    if len(w) >= 7 and w[-7] == "transition" and w[-5] == ":" and w[-3:-1] == ["-", ">"]:
        return f"transition {w[-6]}"
    if len(w) >= 3 and w[-3] == "route" and k[-1] == "string":
        return f"route {w[-2]}"
    if len(w) >= 2 and w[-2] in _BLOCK_WORDS and k[-1] == "name":
        return f"{w[-2]} {w[-1]}"
    if w and w[-1] in ("cost", "criteria"):
        return w[-1]
    return "{"


class Layout:
    """A route file's tokens, each with its place and the blocks it is in (outermost
    first); a unit after a number is of kind `unit`."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.toks: list[Place] = []
        blocks: list[str] = []
        pos, line, start = 0, 1, 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                break  # the checker reads no further than it can: a statement after this is not found
            kind, tok, column, pos = m.lastgroup or "", m.group(), pos - start + 1, m.end()
            if kind == "skip":
                if "\n" in tok:
                    line, start = line + tok.count("\n"), m.start() + tok.rindex("\n") + 1
                continue
            if kind == "name" and tok in _UNITS and self.toks and self.toks[-1][0] == "number":
                kind = "unit"
            if tok == "}" and blocks:
                blocks.pop()
            self.toks.append((kind, tok, line, column, tuple(blocks)))
            if tok == "{":
                blocks.append(_block_of(self.toks[:-1]))
        self.index = {(p[2], p[3]): i for i, p in enumerate(self.toks)}

    def text_at(self, line: int, column: int, end_line: int, end_column: int) -> str | None:
        if not 1 <= line <= end_line <= len(self.lines) or column < 1 or end_column < 1:
            return None
        if line == end_line:
            return self.lines[line - 1][column - 1 : end_column - 1] if column <= end_column else None
        return "\n".join([self.lines[line - 1][column - 1 :], *self.lines[line : end_line - 1],
                          self.lines[end_line - 1][: end_column - 1]])

    def statements(self, blocks: tuple[str, ...], first: str) -> list[int]:
        """Where a statement that starts with ``first`` is written directly in ``blocks``."""
        return [i for i, p in enumerate(self.toks) if p[4] == blocks and p[1] == first
                and (i == 0 or self.toks[i - 1][1] not in _LIST_WORDS)]

    def names(self, blocks: tuple[str, ...]) -> list[str]:
        """The names written directly in ``blocks`` that start a statement of a cost or
        criteria block (a cost item's, a criterion's)."""
        return [p[1] for p in self.toks if p[4] == blocks and p[0] == "name"]

    def listed(self, blocks: tuple[str, ...], keyword: str) -> set[str]:
        """The names a `supports`/`contradicts` list written directly in ``blocks`` holds."""
        out: set[str] = set()
        for i in self.statements(blocks, keyword):
            j = i + 1
            while j < len(self.toks) and self.toks[j][0] == "name":
                out.add(self.toks[j][1])
                if j + 1 >= len(self.toks) or self.toks[j + 1][1] != ",":
                    break
                j += 2
        return out


_LAYOUTS: dict[str, Layout] = {}


def layout_of(text: str) -> Layout:
    """The `Layout` of a text, made once per text (a certificate asks many times)."""
    if text not in _LAYOUTS:
        if len(_LAYOUTS) > 64:
            _LAYOUTS.clear()
        _LAYOUTS[text] = Layout(text)
    return _LAYOUTS[text]


# ---------------------------------------------------------------------- files, routes and libraries
def declared_routes(text: str) -> list[str]:
    """The names of the routes a route file declares (`route NAME …` at the top level)."""
    toks = layout_of(text).toks
    return [toks[i + 1][1] for i, p in enumerate(toks)
            if p[1] == "route" and p[4] == () and i + 1 < len(toks) and toks[i + 1][0] == "name"]


def route_statement(text: str, route: str, keyword: str) -> list[tuple[str, str]] | None:
    """The tokens after ``keyword`` of its statement directly in ``route`` (to the next
    statement's keyword or the block's end), or None when the route does not write it."""
    toks = layout_of(text).toks
    block = (f"route {route}",)
    for i, p in enumerate(toks):
        if p[4] == block and p[1] == keyword and (i == 0 or toks[i - 1][1] not in _LIST_WORDS):
            out = []
            for q in toks[i + 1:]:
                if q[4] != block or q[1] in _ROUTE_STATEMENTS or q[1] == "}":
                    break
                out.append((q[0], q[1]))
            return out
    return None


_ROUTE_STATEMENTS = {"as_of", "policy", "uses", "state", "vision", "transition", "evidence", "criteria", ";"}
