"""Print a lowered `Route` back as `.route` text that compiles to the same IR.

States are written in full (carry-forward already resolved), numbers so that they
read back to the identical float, and expressions with the author's tokens.
Comments are not in the IR and are not reproduced.

The text is laid out as `pcsc fmt` lays it out (docs/fmt.md), so a printed route is
already canonical: the tokens are the grammar's own (`pcsc.lang.syntax.tokens`), and
the spacing rule and the columns below are the formatter's (`pcsc.lang.fmt` imports
them from here).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from pcsc.lang.ir import Evidence, Route, Transition
from pcsc.lang.lower.vision import DEFAULT_VISION_FIELDS
from pcsc.lang.syntax.tokens import Lexeme, lex

# ---------------------------------------------------------------------- spacing
_WORD_OPERATORS = frozenset({"and", "or", "not"})


def respace(tokens: Sequence[Lexeme], expression: bool = False) -> str:
    """Tokens on one line: one space between tokens, except none before `,` `)` `:` `.`,
    none after `(` `.` or a unary minus, and none between a function name and its `(`.
    Outside expressions every `-` is a sign; inside, a `-` is unary where an operand
    must start (at the start, after an operator, `(`, `,`, `and`, `or`, `not`)."""
    out: list[str] = []
    prev: Lexeme | None = None
    unary = False
    for t in tokens:
        if prev is not None:
            tight = (
                t.text in (",", ")", ":", ".")
                or prev.text in ("(", ".")
                or unary
                or (t.text == "(" and prev.kind == "word" and prev.text not in _WORD_OPERATORS)
            )
            if not tight:
                out.append(" ")
        out.append(t.text)
        unary = t.text == "-" and (
            not expression
            or prev is None
            or (prev.kind == "op" and prev.text != ")")
            or prev.text in _WORD_OPERATORS
        )
        prev = t
    return "".join(out)


# The value column of a keyword statement, counted from the keyword: the reference
# route's fixed columns (docs/fmt.md). A keyword as long as its column or longer
# (`contradicts`, `unverified true`) takes one space.
BLOCK_COLUMNS = {"route": 8, "transition": 11, "evidence": 10}
KEY_COLUMNS = {"learning_cost": 15}
# The least column of the items of a block (wider names widen it to the longest + 2).
ITEM_COLUMNS = {"vision": 15, "criteria": 9}
STATE_VALUE = 4  # the least width of a value in a state table (`100k`, `1.2M`)

def statement(key: str, text: str, column: int) -> str:
    """A keyword statement with its value at ``column`` (counted from the keyword)."""
    return f"{key.ljust(column - 1)} {text}"


def items(pairs: Sequence[tuple[str, str]], least_column: int = 0) -> list[str]:
    """The `name value` items of a block, values aligned two spaces after the longest
    name (at ``least_column`` at the least)."""
    width = max(least_column - 2, *(len(k) for k, _ in pairs))
    return [f"{k.ljust(width)}  {v}" for k, v in pairs]


def state_table(rows: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> list[str]:
    """State lines as `pcsc fmt` writes them: names padded to the longest; every value
    but the last of its line padded to the widest such value (at least `STATE_VALUE`)."""
    width = max([STATE_VALUE, *(len(v) for _, cells in rows for _, v in cells[:-1])])
    name_width = max(len(name) for name, _ in rows)
    out = []
    for name, cells in rows:
        line = f"state {name.ljust(name_width)} {{"
        for i, (field, text) in enumerate(cells):
            line += f" {field} {text if i == len(cells) - 1 else text.ljust(width)}"
        out.append(line + (" }" if cells else "}"))
    return out


def canonical_expression(text: str) -> str:
    """An expression's tokens on one line, spaced as `pcsc fmt` spaces them."""
    return respace(lex(text)[0], expression=True)



def number(x: float) -> str:
    """The shortest text that reads back to exactly ``x`` (with `_` groups for integers)."""
    if x == int(x) and abs(x) < 1e21:
        return f"{int(x):_}"
    text = repr(x)
    if "e" in text or "E" in text:
        # the grammar has exponents, but a plain decimal reads better where it is short
        plain = format(Decimal(text), "f")
        return plain if len(plain) <= 24 else text
    return text


def expression(text: str) -> str:
    """An expression's source text on one line: its tokens as written, one space where
    the source has whitespace or a comment between two (a `#` inside a multi-line
    threshold would otherwise swallow the rest of it), none where it has none."""
    out: list[str] = []
    end: int | None = None
    for t in lex(text)[0]:
        if end is not None and end < t.start:
            out.append(" ")
        out.append(t.text)
        end = t.end
    return "".join(out)


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def value(v: float | bool, field_type: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return number(v) + (" usd" if field_type == "usd" else "")


def route_to_text(route: Route, header: str | None = None) -> str:
    types = {f.name: f.type for f in route.fields}
    out: list[str] = []
    if header:
        out += [f"# {line}" if line else "#" for line in header.splitlines()]
    title = f" {quote(route.title)}" if route.title is not None else ""
    out.append(f"route {route.name}{title} {{")
    column = BLOCK_COLUMNS["route"]
    out.append("    " + statement("as_of", route.as_of.isoformat(), column))
    pin = f" sha256 {quote(route.policy.sha256)}" if route.policy.sha256 else ""
    out.append("    " + statement("policy", f"{quote(str(route.policy))}{pin}", column))
    out.append("    " + statement("uses", ", ".join(route.uses), column))
    if route.states:
        out.append("")
        entering: dict[str, int] = {}
        for t in route.transitions:
            entering[t.target] = entering.get(t.target, 0) + 1
        # a join of a graph route keeps what it lists: its other values are the merge of
        # its branches, and what it lists is what each transition into it claims
        rows = [
            (
                s.name,
                [
                    (name, value(v, types[name]))
                    for name, v in s.values
                    if entering.get(s.name, 0) <= 1 or name in s.listed
                ] + ([] if s.payoff is None else [("payoff", _payoff(s.payoff, s.payoff_in_fold is not None))]),
            )
            for s in route.states
        ]
        out += ["    " + line for line in state_table(rows)]
    out.append("")
    v = route.vision
    out.append(f"    vision {v.state} {{")
    if sorted(i.name for i in v.items) == sorted(DEFAULT_VISION_FIELDS):
        vision = [("tam", f"{number(v.tam)} usd"), ("capture", number(v.capture)),
                  ("defensibility", number(v.defensibility))]
    else:  # the fields of the policy's own formula, as written (a usd amount with its unit)
        vision = [(i.name, f"{number(i.value)} usd" if i.unit == "usd" else number(i.value)) for i in v.items]
    out += ["        " + line for line in items(vision, ITEM_COLUMNS["vision"])]
    out.append("    }")
    for t in route.transitions:
        out.append("")
        out += _transition(t)
    for e in route.evidence:
        out.append("")
        out += _evidence(e)
    if route.criteria:
        out.append("")
        out.append("    criteria {")
        out += ["        " + line for line in items([(c.name, number(c.score)) for c in route.criteria],
                                                   ITEM_COLUMNS["criteria"])]
        out.append("    }")
    out.append("}")
    return "\n".join(out) + "\n"


def _transition(t: Transition) -> list[str]:
    out = [f"    transition {t.name}: {t.source} -> {t.target} {{"]

    def line(key: str, text: str) -> None:
        out.append("        " + statement(key, text, KEY_COLUMNS.get(key, BLOCK_COLUMNS["transition"])))

    for key, text in (("actor", t.actor), ("mechanism", t.mechanism), ("asset", t.asset)):
        if text is not None:
            line(key, quote(text))
    line("class", quote(t.ref_class))
    if t.threshold_text is not None:
        line("threshold", canonical_expression(t.threshold_text))
    if t.kill_text is not None:
        by = "" if t.kill_by_text is None else f" by {t.kill_by_text}"
        line("kill", canonical_expression(t.kill_text) + by)
    if t.horizon is not None:
        line("horizon", f"{number(t.horizon[0])} {t.horizon[1]}")
    if t.cost:
        out.append("        cost {")
        costs = [(c.name, f"{number(c.count)} * {number(c.unit_cost)} usd") for c in t.cost]
        out += ["            " + text for text in items(costs)]
        out.append("        }")
    if t.learning_cost is not None:
        line("learning_cost", f"{number(t.learning_cost)} usd")
    if t.estimates:
        line("estimates", " ".join(number(x) for x in t.estimates))
    if t.discharges:
        line("discharges", ", ".join(t.discharges))
    out.append("    }")
    return out


def _evidence(e: Evidence) -> list[str]:
    out = [f"    evidence {e.name} {{"]

    def line(key: str, text: str) -> None:
        out.append("        " + statement(key, text, BLOCK_COLUMNS["evidence"]))

    if e.source is not None:
        line("source", quote(e.source))
    if e.captured is not None:
        line("captured", e.captured.isoformat())
    line("tier", str(e.tier))
    line("weight", number(e.weight))
    if e.supports:
        line("supports", ", ".join(e.supports))
    if e.contradicts:
        line("contradicts", ", ".join(e.contradicts))
    line("excerpt", quote(e.excerpt))
    if e.unverified:
        out.append("        unverified")
    out.append("    }")
    return out


def _payoff(amount: float, in_fold: bool) -> str:
    """A state's payoff as a route writes it: in usd, or without a unit (in the fold's unit)."""
    return number(amount) if in_fold else f"{number(amount)} usd"
