"""`pcsc fmt`: the canonical layout of .route and .obl files (docs/fmt.md).

The formatter keeps the author's text: states stay as written (no carry-forward),
numbers, strings and names keep their token text, and every comment is kept. It only
changes layout: indentation, one statement a line (`;` become newlines), alignment,
spacing inside expressions and blank lines.

Structure comes from the parse tree; the text of each construct comes from the
grammar's own lexer over the source (`pcsc.lang.syntax.tokens`), which also keeps the
comments the grammar ignores.
Comments attach by position: an end-of-line comment stays at the end of its line; an
own-line comment goes above the statement or item that follows it; one inside a
construct that is written on one line (a state, a multi-line threshold) moves above
it; one before a closing `}` or the end of the file stays there.

`check_format` is the safety net the command runs before writing anything: the same
comments (as a multiset), the same parse tree (positions and `;` aside), and the same
lowered IR (spans aside) or, for a file with errors, the same diagnostics.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from lark import Token, Tree

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.printer import BLOCK_COLUMNS, ITEM_COLUMNS, KEY_COLUMNS, STATE_VALUE, respace
from pcsc.lang.syntax.tokens import Lexeme, lex

Node = Tree[Token]

# ---------------------------------------------------------------------- lexing
def comment_texts(text: str) -> Counter[str]:
    """The multiset of comment texts of a source text."""
    return Counter(c.text for c in lex(text)[1])


def normalise_text(text: str) -> str:
    """Source text reduced to its tokens, one space apart (comments and layout dropped)."""
    return " ".join(t.text for t in lex(text)[0])


# ---------------------------------------------------------------------- layout
_STATEMENTS = frozenset(
    {
        "as_of", "policy_ref", "uses",
        "actor", "mechanism", "asset", "ref_class", "threshold", "kill", "horizon",
        "learning_cost", "estimates", "discharges", "stated_p",
        "source", "captured", "tier", "weight", "supports", "contradicts", "excerpt", "unverified",
        "require",
    }
)  # fmt: skip
_EXPRESSIONS = frozenset({"threshold", "kill", "require"})
_ITEMS = frozenset({"field_value", "criterion", "cost_item_times", "cost_item_single"})
_BLOCKS = frozenset({"route", "transition", "evidence", "obligation", "vision", "cost", "criteria"})
_INDENT = "    "

COMMENT_COLUMN = 46  # an end-of-line comment starts here, or two spaces after the code


def _kind(node: Node) -> str:
    data = str(node.data)
    if data in _STATEMENTS:
        return "statement"
    if data in _ITEMS:
        return "item"
    if data in ("state", "field_decl", "library"):
        return data
    return "block"


def _blank_between(text: str, start: int, end: int) -> bool:
    return re.search(r"\n[ \t\r\f]*\n", text[start:end]) is not None


class _Layout:
    """Writes lines and places the comments by position as it goes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens, self.comments = lex(text)
        self.starts = [t.start for t in self.tokens]
        self.next_comment = 0
        self.lines: list[str] = []
        self.pending_blank = False
        self.after_open = False
        self.src_end = 0  # where the text already written ends in the source
        self.stops: list[int] = []  # the cell columns of the state table being written

    # ------------------------------------------------------------------ tokens
    def toks(self, node: Node) -> list[Lexeme]:
        i = bisect_left(self.starts, node.meta.start_pos)
        j = bisect_left(self.starts, node.meta.end_pos)
        return self.tokens[i:j]

    # ------------------------------------------------------------------ writing
    def blank(self) -> None:
        self.pending_blank = True

    def put(self, depth: int, body: str, opener: bool = False) -> None:
        if self.pending_blank and self.lines and not self.after_open:
            self.lines.append("")
        self.pending_blank = False
        self.lines.append(_INDENT * depth + body)
        self.after_open = opener

    def leading(self, depth: int, start: int) -> None:
        """The comments before ``start``, each on its own line; a blank line next to
        them in the source (before, between, after) is kept."""
        wrote = False
        while self.next_comment < len(self.comments) and self.comments[self.next_comment].start < start:
            c = self.comments[self.next_comment]
            self.next_comment += 1
            if _blank_between(self.text, self.src_end, c.start):
                self.blank()
            self.put(depth, c.text)
            self.src_end = c.end
            wrote = True
        if wrote and _blank_between(self.text, self.src_end, start):
            self.blank()

    def trailing(self, end: int, code: str) -> str:
        """The comment after ``end`` on the same line, with only spaces or `;` between,
        placed after ``code`` (the output line so far): at `COMMENT_COLUMN`, or two
        spaces after the code; on a state line, at the first column of the state table
        from there on (the comment takes the next free cell)."""
        if self.next_comment < len(self.comments):
            c = self.comments[self.next_comment]
            between = self.text[end : c.start]
            if not between.strip(" \t\r\f;"):
                self.next_comment += 1
                self.src_end = c.end
                column = max(COMMENT_COLUMN, len(code) + 2)
                column = next((s for s in self.stops if s >= len(code) + 2), column)
                return " " * (column - len(code)) + c.text
        return ""

    def line(self, depth: int, body: str, start: int, end: int, opener: bool = False) -> None:
        """One output line for the source range [start, end): comments before it go
        above; comments inside it (it is written on one line) go above too, in order."""
        self.leading(depth, start)
        while self.next_comment < len(self.comments) and self.comments[self.next_comment].start < end:
            self.put(depth, self.comments[self.next_comment].text)
            self.next_comment += 1
        self.src_end = end
        code = _INDENT * depth + body
        self.put(depth, body + self.trailing(end, code), opener)

    def close(self, depth: int, brace: int) -> None:
        """The closing `}` at ``brace``; comments before it stay at the end of the block."""
        self.leading(depth + 1, brace)
        self.pending_blank = False  # never a blank line before `}`
        self.src_end = brace + 1
        self.put(depth, "}" + self.trailing(brace + 1, _INDENT * depth + "}"))

    def finish(self) -> str:
        self.leading(0, len(self.text) + 1)
        return "\n".join(self.lines) + "\n" if self.lines else ""

    # ------------------------------------------------------------------ constructs
    def sequence(self, items: list[Node], depth: int, block: str = "") -> None:
        """The statements or items of one block of kind ``block`` (or of the file,
        ``""``). In a route and at the top level a blank line separates each block and
        each change of kind (header statements, states, fields)."""
        spaced = block in ("", "route")
        runs: list[list[Node]] = []
        for node in items:
            kind = _kind(node)
            if runs and kind == _kind(runs[-1][0]) and kind != "block":
                runs[-1].append(node)
            else:
                runs.append([node])
        for index, run in enumerate(runs):
            if spaced and index > 0:
                self.blank()
            kind = _kind(run[0])
            if kind == "block":
                self.block(run[0], depth)
                continue
            lines = self.render_run(kind, run, block)
            if kind == "state":
                self.stops = [len(_INDENT * depth) + s for s in self.stops]
            for node, body in zip(run, lines, strict=True):
                self.line(depth, body, node.meta.start_pos, node.meta.end_pos)
            self.stops = []

    def render_run(self, kind: str, run: list[Node], block: str) -> list[str]:
        """The lines of a run of consecutive one-line constructs of one kind, aligned."""
        if kind == "statement":
            lines = []
            for node in run:
                toks = self.toks(node)
                key, value = toks[0].text, respace(toks[1:], str(node.data) in _EXPRESSIONS)
                column = KEY_COLUMNS.get(key, BLOCK_COLUMNS.get(block, 0))
                lines.append(f"{key.ljust(column - 1)} {value}" if value else key)
            return lines
        if kind == "item":
            pairs = [(toks[0].text, respace(toks[1:])) for toks in map(self.toks, run)]
            width = max(ITEM_COLUMNS.get(block, 0) - 2, *(len(k) for k, _ in pairs))
            return [f"{k.ljust(width)}  {v}" for k, v in pairs]
        if kind == "state":
            return self.render_states(run)
        if kind == "field_decl":
            decls = [self.toks(node) for node in run]
            name_width = max(len(toks[1].text) for toks in decls)
            type_width = max((len(toks[2].text) for toks in decls if len(toks) > 3), default=0)
            out = []
            for toks in decls:
                rest = respace(toks[3:])
                head = f"field {toks[1].text.ljust(name_width)}  "
                out.append(head + (f"{toks[2].text.ljust(type_width)}  {rest}" if rest else toks[2].text))
            return out
        return [respace(self.toks(node)) for node in run]  # `library NAME version "X"`

    def render_states(self, run: list[Node]) -> list[str]:
        """State lines as a table: names padded to the longest name; every value but
        the last of its line padded to the widest such value of the run (at least
        `STATE_VALUE` characters), then one space, so a column lines up wherever the
        states agree on their fields. Sets `stops`, the columns where cells start, for
        end-of-line comments."""
        rows: list[tuple[str, list[tuple[str, str]]]] = []
        for node in run:
            cells = [
                (str(fv.children[0]), respace(self.toks(fv)[1:])) for fv in node.children[1:] if isinstance(fv, Tree)
            ]
            rows.append((str(node.children[0]), cells))
        width = max([STATE_VALUE, *(len(v) for _, cells in rows for _, v in cells[:-1])])
        name_width = max(len(name) for name, _ in rows)
        out = []
        stops: set[int] = set()
        for name, cells in rows:
            line = f"state {name.ljust(name_width)} {{"
            for i, (field, value) in enumerate(cells):
                stops.add(len(line) + 1)
                line += f" {field} {value if i == len(cells) - 1 else value.ljust(width)}"
            out.append(line + (" }" if cells else "}"))
        self.stops = sorted(stops)
        return out

    def block(self, node: Node, depth: int) -> None:
        toks = self.toks(node)
        brace = next(i for i, t in enumerate(toks) if t.text == "{")
        items = [c for c in node.children if isinstance(c, Tree) and c.data != "name_list"]
        start, end = node.meta.start_pos, node.meta.end_pos
        if not items:
            self.line(depth, respace(toks[:brace]) + " {}", start, end)
            return
        self.line(depth, respace(toks[: brace + 1]), start, toks[brace].end, opener=True)
        self.sequence(items, depth + 1, str(node.data))
        self.close(depth, toks[-1].start)


def layout(text: str, tree: Node) -> str:
    """The canonical layout of ``text``, whose parse tree is ``tree``."""
    out = _Layout(text)
    items = [c for c in tree.children if isinstance(c, Tree)]
    out.sequence(items, 0)
    return out.finish()


def format_source(text: str, file: str, diags: Diagnostics) -> str | None:
    """Parse and lay out ``text``; None (with a diagnostic) on a syntax error.
    This does not run the safety checks: see `check_format`."""
    from pcsc.base.files import normalize_newlines
    from pcsc.lang.syntax import parse_tree

    text = normalize_newlines(text)
    tree = parse_tree(text, file, diags)
    return None if tree is None else layout(text, tree)


def opens_a_library(text: str) -> bool:
    """Text whose first statement is a library's (how a text without a file name, on
    standard input or given to the API, is told from a route)."""
    return [t.text for t in lex(text)[0][:1]] in (["library"], ["field"], ["obligation"])


def canonical_library(text: str) -> str | None:
    """A library's text as `pcsc fmt` writes it, which a policy's `[libraries.<name>]`
    pin hashes: layout (indentation, spacing, alignment, line ends, `;`, blank lines
    between blocks) never changes a pin, and a library already formatted pins to its
    own bytes. Comments are kept, so they count. None when the text does not parse."""
    return format_source(text, "<library>", Diagnostics())


# ---------------------------------------------------------------------- safety
_SPAN_KEYS = frozenset({"file", "line", "column", "end_line", "end_column"})
_TEXT_KEYS = frozenset({"threshold_text", "kill_text", "text"})
_E104 = codes.E104.code  # two statements on one line: the layout error fmt repairs
_W620 = codes.W620.code  # a control character: fmt drops one between tokens, as whitespace


def tree_shape(node: Any) -> Any:
    """A parse tree without positions and without `;` separators."""
    if isinstance(node, Tree):
        return (str(node.data), [tree_shape(c) for c in node.children if not _is_semi(c)])
    if isinstance(node, Token):
        return (node.type, str(node))
    return node


def _is_semi(node: Any) -> bool:
    return isinstance(node, Token) and node.type == "SEMI"


def strip_ir(obj: Any) -> Any:
    """IR JSON with spans removed and source-text fields reduced to their tokens."""
    if isinstance(obj, dict):
        if set(obj) == _SPAN_KEYS:
            return None
        return {
            k: normalise_text(v) if k in _TEXT_KEYS and isinstance(v, str) else strip_ir(v) for k, v in obj.items()
        }
    if isinstance(obj, list | tuple):
        return [strip_ir(v) for v in obj]
    return obj


class Semantics(NamedTuple):
    ir: dict[str, Any]  # route (or library) name -> IR without spans
    codes: Counter[str]  # diagnostic codes (errors and warnings)


SemanticsFn = Callable[[str], Semantics]


def check_format(before: str, after: str, file: str, meaning: SemanticsFn) -> str | None:
    """None when ``after`` is a faithful reformatting of ``before``; else the reason.

    Faithful: the same comments (a multiset of texts); the same parse tree, positions
    and `;` aside; the same diagnostics, except that `PCSC-E104` (two statements on
    one line) may go away, and so may `PCSC-W620` (a control character: one in the
    whitespace between tokens goes with it; strings and comments keep theirs); and the
    same IR, spans aside, for every route (or the library) that lowered before."""
    from pcsc.lang.syntax import parse_tree

    lost = comment_texts(before) - comment_texts(after)
    added = comment_texts(after) - comment_texts(before)
    if lost or added:
        what = next(iter(lost or added))
        return f"the comment `{what}` would be {'lost' if lost else 'duplicated'}"
    diags = Diagnostics()
    old, new = parse_tree(before, file, diags), parse_tree(after, file, diags)
    if old is None or new is None:
        return "the formatted text does not parse"
    if tree_shape(old) != tree_shape(new):
        return "the formatted text parses to a different tree"
    was, now = meaning(before), meaning(after)
    expected = Counter({code: n for code, n in was.codes.items() if code not in (_E104, _W620)})
    kept = Counter({code: n for code, n in now.codes.items() if code != _W620})
    if kept != expected or now.codes[_W620] > was.codes[_W620]:
        changed = sorted(set(kept) ^ set(expected)) or sorted(now.codes)
        return "the diagnostics would change (" + ", ".join(changed) + ")"
    for name, ir in was.ir.items():
        if now.ir.get(name) != ir:
            return f"the IR of `{name}` would change"
    if not was.codes[_E104] and set(now.ir) != set(was.ir):
        return "the set of routes that compile would change"
    return None
