"""The fast typed parse (`pcsc.lang.syntax.fast`, the default) against Lark's own loop
(`PCSC_PARSER=lark`): the same nodes, spans included, for every shipped route and
library and the fuzzers' inputs, and the same diagnostics (codes, spans, messages)
for every input either way rejects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lark import Lark

from pcsc.base.files import normalize_newlines
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.syntax import parser as syntax_parser
from pcsc.lang.syntax.fast import FAILED, FastParser
from pcsc.lang.syntax.transform import ToSyntax
from pcsc.tools.fuzz import Generator, Mutator
from tests.conftest import ROOT

SHIPPED = sorted(
    [*ROOT.glob("examples/**/*.route"), *ROOT.glob("obligations/*.obl"), *ROOT.glob("tests/data/**/*.route"),
     *ROOT.glob("tests/data/**/*.obl")]
)


def _both(monkeypatch: pytest.MonkeyPatch, text: str, start: str = "file") -> Iterator[tuple[str, str]]:
    """(repr of the nodes or None, repr of the diagnostics) by each driver, parsed afresh."""
    for kind in ("lark", "fast"):
        monkeypatch.setenv("PCSC_PARSER", kind)
        assert syntax_parser.parser_kind() == kind
        syntax_parser._PARSED.clear()  # no remembered parse: each driver parses
        diags = Diagnostics()
        if start == "file":
            node: object = syntax_parser.parse_source(text, "in.route", diags)
        else:
            node = syntax_parser.parse_expression(text, "rule", diags)
        yield repr(node), repr(diags.items)


def _same(monkeypatch: pytest.MonkeyPatch, text: str, start: str = "file") -> tuple[str, str]:
    lark_way, fast_way = _both(monkeypatch, text, start)
    assert fast_way == lark_way, text[:400]
    return fast_way


def test_fast_is_the_default_and_lark_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PCSC_PARSER", raising=False)
    assert syntax_parser.parser_kind() == "fast"
    monkeypatch.setenv("PCSC_PARSER", "lark")
    assert syntax_parser.parser_kind() == "lark"


def test_the_driver_refuses_what_it_does_not_reproduce() -> None:
    grammar = (ROOT / "grammar" / "pcsc.lark").read_text(encoding="utf-8")
    plain = Lark(grammar, parser="lalr", maybe_placeholders=True, start=["file", "expression"])  # drops tokens
    assert FastParser.build(plain, ToSyntax()) is None


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_files_parse_the_same(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    node, diagnostics = _same(monkeypatch, path.read_text(encoding="utf-8"))
    if "diagnostics" not in path.parts:
        assert node != "None", diagnostics


def test_the_nodes_hold_the_source_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """An independent look at one parse: spans from the text itself, not from Lark."""
    text = 'route r "t" {\n  as_of 2024-01-01\n  transition go: a -> b {\n    threshold (x.y >= 2)\n  }\n}\n'
    monkeypatch.setenv("PCSC_PARSER", "fast")
    syntax_parser._PARSED.clear()
    node = syntax_parser.parse_source(text, "in.route", Diagnostics())
    assert node is not None
    route = node.items[0]
    assert (route.span.line, route.span.column, route.span.end_line, route.span.end_column) == (1, 1, 6, 2)
    transition = route.items[1]
    assert (transition.span.line, transition.span.column, transition.span.end_line) == (3, 3, 5)
    condition = transition.items[0]
    assert condition.text == "x.y >= 2"  # the parentheses are the container's
    assert (condition.span.line, condition.span.column, condition.span.end_column) == (4, 5, 25)


CONTEXTUAL = [
    "",
    "# only a comment\n",
    'route r {\n  transition t: a -> b {\n    estimates 2024-01-01\n  }\n}\n',  # a number, a minus, ...
    'route r {\n  state s { arr 0 usd  day 2024-02-30 ok true n none }\n}\n',
    'route r {\n  state s { usd 1 days 2 }\n}\n',  # units and keywords where a name is read
    'route r {\n  transition t: a -> b {\n    p 0.5\n    kill not (a and b or c) by 3 months\n  }\n}\n',
    'route r {\n  transition t: a -> b { threshold f(1, -2.5e3k, "s\\"q", 1e999) < -x.y.z; horizon 6 weeks }\n}\n',
    'route r {\r\n  as_of 2024-01-01;\r\n}\r\n',
    'route r {\n  transition route: a -> b {}\n}\n',
    'library venture version "1"\nfield arr usd material 10\nobligation o covers a, b {\n  require 1 + 2 * 3 == 7\n}\n',
    "route r { transition t: a -> b { threshold " + "(" * 300 + "x" + ")" * 300 + " } }\n",
    "route r { transition t: a -> b { threshold " + "not " * 300 + "x } }\n",
    'route r {\n  state s { x 1 }\n  statee t { }\n  transitin u: a -> b {}\n',
    'route r { transition t: a -> b { actor "unterminated } }\n',
    "route r { state s { x 1 % } }\n",
    "route r { state s { x 0 eur } }\n",
    "route r { state s { x \u0430 } }\n",
]


@pytest.mark.parametrize("text", CONTEXTUAL)
def test_contextual_lexing_and_errors_are_the_same(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    _same(monkeypatch, text)


@pytest.mark.parametrize("text", ["1 + 2", "a.b(c, 2024-01-01) >= 3 usd", "not", "(1", "x ==", "2024-13-40", ""])
def test_expressions_are_the_same(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    _same(monkeypatch, text, "expression")


def test_the_mutation_fuzzers_inputs_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    mutator = Mutator(20240601)
    rejected = 0
    for i in range(400):
        text = mutator.input(i).data.decode("utf-8", "replace")
        node, diagnostics = _same(monkeypatch, text)
        rejected += node == "None"
    assert 40 < rejected < 400  # both kinds of input were met


def test_the_generators_inputs_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    accepted = 0
    for seed in range(150):
        item = Generator(seed).next()
        if item.kind not in ("route", "library"):
            continue
        node, _ = _same(monkeypatch, item.data.decode("utf-8", "replace"))
        accepted += node != "None"
    assert accepted > 10


def test_failure_is_lark_failure() -> None:
    """The driver fails exactly where Lark raises, on its own (no fallback in between)."""
    lark, builder, _ = syntax_parser._typed_parser()
    fast = syntax_parser._fast_parser()
    assert fast is not None
    mutator = Mutator(7)
    for i in range(150):
        text = normalize_newlines(mutator.input(i).data.decode("utf-8", "replace"))
        builder.start("in.route", text)
        fast_failed = fast.parse(text, "file") is FAILED
        builder.finish()
        builder.start("in.route", text)
        try:
            lark.parse(text, start="file")
            lark_failed = False
        except Exception:  # Lark's UnexpectedInput
            lark_failed = True
        finally:
            builder.finish()
        assert fast_failed == lark_failed, text[:300]
