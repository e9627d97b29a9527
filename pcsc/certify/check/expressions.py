"""The expression language, read and evaluated by the checker itself: its tokens and
numbers, a parser, an evaluator of gate rules and `require` lines in exact arithmetic, and
the comparisons that decide whether a change is material."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from pcsc.certify.check.reading import rnd


# ---------------------------------------------------------------------- coverage
def written(x: Any) -> Fraction:
    """The decimal a number was written as (its shortest repr), exactly."""
    return Fraction(repr(float(x)))


def is_material(rule: Mapping[str, Any] | None, source: Any, target: Any) -> bool:
    if source == target and type(source) is type(target):
        return False
    if isinstance(source, bool) or isinstance(target, bool) or (rule is not None and rule.get("bool")):
        return bool(source != target)
    if rule is None:
        return True
    s, t = written(source), written(target)
    if rule["relative"] and s == 0:
        return True
    amount = written(rule["amount"]["f"])
    return abs(t - s) >= amount * (abs(s) if rule["relative"] else 1)


def truthy(v: Any) -> bool:
    if isinstance(v, list):
        return len(v) > 0
    if isinstance(v, str):
        return v != ""
    return v is not None and v is not False and v != 0


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def compare(op: str, a: Any, b: Any) -> bool:
    """A comparison as the language defines it: `==`/`!=` on anything, an order only
    between two numbers, two dates or two texts (none satisfies no order)."""
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if a is None or b is None:
        return False
    if not ((is_number(a) and is_number(b)) or (isinstance(a, dt.date) and isinstance(b, dt.date))
            or (isinstance(a, str) and isinstance(b, str))):
        raise ExprError(f"cannot compare {type(a).__name__} with {type(b).__name__}")
    return _ORDER[op](a, b)


def bounds_target(bounds: Sequence[tuple[str, Any]], source: Any, target: Any) -> bool:
    """A bound reaches the target: ≥ it for a rise, ≤ it for a fall, == it either way."""
    for op, bound in bounds:
        if isinstance(target, bool) or isinstance(bound, bool):
            if op == "==" and bound == target:
                return True
            continue
        rise = target > source
        if op == "==" and bound == target:
            return True
        if rise and op in (">=", ">") and bound >= target:
            return True
        if not rise and op in ("<=", "<") and bound <= target:
            return True
    return False


def as_value(x: Any) -> Any:
    """A recorded field value (a JSON number or bool) as the checker's value."""
    return x if isinstance(x, bool) or x is None else Fraction(x)


# ---------------------------------------------------------------------- expressions
# The expression language of `require` lines and policy gate rules, parsed and
# evaluated again here: literals (numbers with `_`, `k`/`M`/`B`, `%` and a unit: usd is
# ignored, a duration is counted in days; strings; dates; true, false, none), names,
# `a.b`, calls, unary `-`, `*` `/`,
# `+` `-`, one comparison, `not`, `and`, `or`. Numbers are exact rationals rounded to
# the nearest float after each operation; a list used as a number is its count.
class ExprError(Exception):
    """The expression cannot be evaluated (the compiler's result is then false)."""


_TOKEN = re.compile(
    r"(?P<skip>\s+|#[^\n]*)"
    r"|(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9]))"
    r"|(?P<number>(?:[0-9][0-9_]*(?:\.[0-9][0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?[kMB]?%?)"
    r'|(?P<string>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<op>>=|<=|==|!=|[<>+\-*/().,{}:;])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)
_UNITS = ("usd", "days", "months", "years")
#: Days per unit of a duration, exactly: a month is 1/12 of a year of 365.25 days.
DAYS = {"days": Fraction(1), "months": Fraction(1461, 48), "years": Fraction(1461, 4)}
_SCALE = {"k": 1_000, "M": 1_000_000, "B": 1_000_000_000}
Node = tuple[Any, ...]


def unquote(token: str) -> str:
    out, body, i = [], token[1:-1], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(body[i + 1], body[i : i + 2]))
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def literal_number(text: str) -> Fraction:
    raw = text.replace("_", "")
    percent = raw.endswith("%")
    raw = raw.removesuffix("%")
    scale = _SCALE.get(raw[-1:], 1)
    value = Fraction(raw[:-1] if scale != 1 else raw) * scale
    return rnd(value / 100 if percent else value)


def tokens(text: str, units: bool = False) -> list[tuple[str, str]]:
    """The tokens of ``text``; a unit after a number is dropped, or kept as ("unit", word)
    with ``units``."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ExprError(f"cannot read `{text[pos:pos + 10]}`")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind == "name" and m.group() in _UNITS and out and out[-1][0] == "number":
            if units:
                out.append(("unit", m.group()))
            continue
        if kind == "skip":
            continue
        out.append((kind, m.group()))
    return out


class Parser:
    """Recursive descent over the grammar's expression rules; nodes are tuples."""

    def __init__(self, text: str) -> None:
        self.toks = tokens(text, units=True)
        self.i = 0

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks) or (expected is not None and self.toks[self.i][1] != expected):
            raise ExprError(f"expected `{expected or 'more'}` at `{self.peek()}`")
        self.i += 1
        return self.toks[self.i - 1]

    def parse(self) -> Node:
        node = self.or_()
        if self.i != len(self.toks):
            raise ExprError(f"unexpected `{self.peek()}`")
        return node

    def _chain(self, op: str, inner: Callable[[], Node]) -> Node:
        items = [inner()]
        while self.peek() == op:
            self.take()
            items.append(inner())
        return items[0] if len(items) == 1 else (op, items)

    def or_(self) -> Node:
        return self._chain("or", self.and_)

    def and_(self) -> Node:
        return self._chain("and", self.not_)

    def not_(self) -> Node:
        if self.peek() == "not":
            self.take()
            return ("not", self.not_())
        left = self.sum()
        if self.peek() in ("<", "<=", ">", ">=", "==", "!="):
            op = self.take()[1]
            return ("cmp", op, left, self.sum())
        return left

    def sum(self) -> Node:
        node = self.product()
        while self.peek() in ("+", "-"):
            node = ("bin", self.take()[1], node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while self.peek() in ("*", "/"):
            node = ("bin", self.take()[1], node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek() == "-":
            self.take()
            return ("neg", self.unary())
        node = self.atom()
        while self.peek() == ".":
            self.take()
            kind, name = self.take()
            if kind != "name":
                raise ExprError(f"expected a name after `.`, got `{name}`")
            node = ("attr", node, name)
        return node

    def atom(self) -> Node:
        kind, text = self.take()
        if kind == "number":
            value = literal_number(text)
            if self.i < len(self.toks) and self.toks[self.i][0] == "unit":
                value = rnd(value * DAYS.get(self.take()[1], Fraction(1)))
            return ("lit", value)
        if kind == "string":
            return ("lit", unquote(text))
        if kind == "date":
            try:
                return ("lit", dt.date.fromisoformat(text))
            except ValueError:
                return ("lit", None)
        if text == "(":
            node = self.or_()
            self.take(")")
            return node
        if kind != "name":
            raise ExprError(f"unexpected `{text}`")
        if text in ("true", "false", "none"):
            return ("lit", {"true": True, "false": False, "none": None}[text])
        if self.peek() == "(":
            self.take()
            args: list[Node] = []
            if self.peek() != ")":
                args.append(self.or_())
                while self.peek() == ",":
                    self.take()
                    args.append(self.or_())
            self.take(")")
            return ("call", text, args)
        return ("name", text)


def parse_expression(text: str) -> Node:
    return Parser(text).parse()


def is_number(v: Any) -> bool:
    return isinstance(v, (Fraction, bool))


def numeric(v: Any) -> Any:
    return Fraction(len(v)) if isinstance(v, list) else v


class DeltaSet(dict[str, Any]):
    """The value of `delta`: a record of the signed changes, with the changes."""

    def __init__(self, changes: Sequence[tuple[str, Any, Any]]) -> None:
        super().__init__((f, t if isinstance(t, bool) or isinstance(s, bool) else rnd(t - s)) for f, s, t in changes)
        self.changes = list(changes)


Function = Callable[["Evaluator", Sequence[Node]], Any]


class Evaluator:
    def __init__(self, names: Mapping[str, Any], functions: Mapping[str, Function]) -> None:
        self.names = names
        self.functions = functions

    def child(self, names: Mapping[str, Any]) -> Evaluator:
        return Evaluator({**self.names, **names}, self.functions)

    def eval(self, node: Node) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "name":
            if node[1] not in self.names:
                raise ExprError(f"unknown name `{node[1]}`")
            return self.names[node[1]]
        if kind == "attr":
            obj = self.eval(node[1])
            if isinstance(obj, dict) and node[2] in obj:
                return obj[node[2]]
            raise ExprError(f"`{node[2]}` is not an attribute here")
        if kind == "call":
            fn = self.functions.get(node[1])
            if fn is None:
                raise ExprError(f"unknown function `{node[1]}`")
            return fn(self, node[2])
        if kind == "neg":
            v = self.eval(node[1])
            if not isinstance(v, Fraction):
                raise ExprError("`-` needs a number")
            return -v
        if kind == "not":
            return not truthy(self.eval(node[1]))
        if kind == "and":
            return all(truthy(self.eval(o)) for o in node[1])
        if kind == "or":
            return any(truthy(self.eval(o)) for o in node[1])
        if kind == "bin":
            return self.binary(node[1], numeric(self.eval(node[2])), numeric(self.eval(node[3])))
        return compare(node[1], numeric(self.eval(node[2])), numeric(self.eval(node[3])))

    @staticmethod
    def binary(op: str, a: Any, b: Any) -> Fraction:
        if not (isinstance(a, Fraction) and isinstance(b, Fraction)):
            raise ExprError(f"`{op}` needs numbers")
        if op == "/" and b == 0:
            raise ExprError("division by zero")
        exact = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else Fraction(0)}[op]
        try:
            return rnd(exact)
        except OverflowError:
            raise ExprError("overflows") from None


def fn_count(ev: Evaluator, args: Sequence[Node]) -> Fraction:
    if len(args) != 1:
        raise ExprError("`count` takes one argument")
    v = ev.eval(args[0])
    if not isinstance(v, list):
        raise ExprError("`count` needs a collection")
    return Fraction(len(v))


def _extreme(pick: Callable[[list[Any]], Any]) -> Function:
    def fn(ev: Evaluator, args: Sequence[Node]) -> Any:
        values = [numeric(ev.eval(a)) for a in args]
        if not values or not all(is_number(v) for v in values):
            raise ExprError("needs one or more numbers")
        return pick(values)

    return fn


BASE_FUNCTIONS: dict[str, Function] = {"count": fn_count, "min": _extreme(min), "max": _extreme(max)}


def _constant(node: Node) -> Any:
    """A constant bound of a threshold comparison (a literal, negated or combined), else None."""
    if node[0] == "lit":
        return node[1] if isinstance(node[1], (Fraction, bool)) else None
    if node[0] == "neg":
        v = _constant(node[1])
        return -v if isinstance(v, Fraction) and not isinstance(v, bool) else None
    if node[0] == "bin":
        a, b = _constant(node[2]), _constant(node[3])
        if isinstance(a, Fraction) and isinstance(b, Fraction) and not (node[1] == "/" and b == 0):
            return Evaluator.binary(node[1], a, b)
    return None


_FLIP = {">=": "<=", "<=": ">=", ">": "<", "<": ">", "==": "==", "!=": "!="}


def conjuncts(node: Node | None) -> list[Node]:
    if node is None:
        return []
    if node[0] == "and":
        return [c for o in node[1] for c in conjuncts(o)]
    return [node]


def field_bounds(threshold: Node | None, field: str) -> list[tuple[str, Any]]:
    """(op, bound) pairs, as `field OP bound`, from the threshold's top-level conjuncts."""
    out = []
    for c in conjuncts(threshold):
        if c[0] != "cmp":
            continue
        if c[2] == ("name", field):
            bound, op = _constant(c[3]), c[1]
        elif c[3] == ("name", field):
            bound, op = _constant(c[2]), _FLIP[c[1]]
        else:
            continue
        if bound is not None:
            out.append((op, bound))
    return out


def normalise(text: str) -> str:
    return " ".join(text.casefold().split())
