"""The parse boundary: typed nodes with spans, and nothing of Lark past it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import lark
import pytest

from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax import parse_expression, parse_source
from pcsc.lang.syntax.parser import get_parser
from pcsc.lang.syntax.transform import ToSyntax

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ["examples/devtools_api.route", "obligations/venture.obl"]


def _lark_objects(value: Any, path: str = "$") -> list[str]:
    """Paths to every Lark object (or str subclass, as a Token is) inside ``value``."""
    if isinstance(value, (lark.Tree, lark.Token)) or (isinstance(value, str) and type(value) is not str):
        return [path]
    if attrs.has(type(value)):
        return [p for f in attrs.fields(type(value)) for p in _lark_objects(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, tuple):
        return [p for i, v in enumerate(value) for p in _lark_objects(v, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("name", INPUTS)
def test_no_lark_object_survives_the_parse(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    diags = Diagnostics()
    tree = parse_source(text, name, diags)
    assert tree is not None and not diags.items
    assert _lark_objects(tree) == []


def test_every_grammar_rule_and_alias_has_a_transform_method() -> None:
    rules = get_parser().rules
    names = {str(r.alias or r.origin.name) for r in rules if r.alias or not r.options.expand1}  # `?rule`s inline
    names = {n for n in names if not n.startswith("_")}
    names.add("atom")  # `( expr )`: inlined in a tree, reduced with its parentheses in the typed parse
    missing = sorted(n for n in names if not callable(getattr(ToSyntax, n, None)))
    assert missing == []


def test_a_route_parses_to_typed_statements_with_spans() -> None:
    text = 'route r "t" {\n  as_of 2020-01-01; uses venture\n'
    text += "  transition a: s -> t {\n    threshold (x) >= 5k\n  }\n}\n"
    tree = parse_source(text, "r.route", Diagnostics())
    assert tree is not None
    (route,) = tree.items
    assert isinstance(route, syn.RouteBlock) and route.name.text == "r" and route.title is not None
    kinds = [type(i).__name__ for i in route.items]
    assert kinds == ["Scalar", "Semi", "Names", "TransitionBlock"]
    transition = route.items[3]
    assert isinstance(transition, syn.TransitionBlock)
    (threshold,) = transition.items
    assert isinstance(threshold, syn.Condition)
    assert threshold.text == "(x) >= 5k"
    assert threshold.span == Span("r.route", 4, 5, 4, 24)
    assert transition.span == Span("r.route", 3, 3, 5, 4)


def test_literal_problems_travel_with_their_expression() -> None:
    node = parse_expression("nan > 2020-02-30", "rule", Diagnostics())
    assert node is not None
    assert [d.code for d in node.problems] == ["PCSC-E302", "PCSC-E306"]
