"""Several syntax errors of one file are reported in one run, without follow-on errors.

After the first syntax error the parser recovers (pcsc/lang/syntax/parser.py, `_Recovery`)
and goes on to report the file's further, independent syntax errors. Each case of
CASES is the spec route (SPEC_TEXT of tests/test_diagnostics.py, kept there so that
edits to examples/ cannot move these locations) with 2 to 4 independent edits, and
states the exact (code, line, column) of every diagnostic; each edit on its own must
give exactly one diagnostic, the same one (code, message, span and help) as in the
file with all the edits. FIRST_ONLY lists the errors after which the nesting of blocks
is in doubt: there recovery stops, so that only the errors before them are reported.

A hypothesis test misspells the keywords of k in {1, 2, 3} statement lines of
examples/devtools_api.route and expects exactly k diagnostics, at those lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.compiler.session import Session
from pcsc.diagnostics.model import Diagnostic, Diagnostics
from pcsc.lang.syntax import parse_source
from pcsc.lang.syntax.parser import MAX_SYNTAX_ERRORS, grammar_keywords
from tests.conftest import ROOT
from tests.test_diagnostics import edit  # edits of SPEC_TEXT there

# When a property fails, hypothesis's pytest plugin may import libcst, whose import
# warns; under `filterwarnings = error` that would hide the real failure.
pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

Edit = tuple[str, str]


def parse(text: str, file: str = "r.route") -> list[Diagnostic]:
    diags = Diagnostics()
    assert parse_source(text, file, diags) is None
    return list(diags)


def where(diags: list[Diagnostic]) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in diags]


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[Edit, ...]
    expected: list[tuple[str, int, int]]  # (code, line, column) of every diagnostic, in order


CASES = [
    Case(
        "misspelt-keyword-missing-value-stray-character-unterminated-block",
        (
            ('actor      "two founders"', 'actr       "two founders"'),  # transition launch
            ("horizon    12 months", "horizon"),  # transition monetize: reported at the next token, `cost`
            ("tier      3", "tier      3$"),  # evidence price_war
            ("        wedge    55\n    }\n}", "        wedge    55\n\n}"),  # criteria never closed
        ),
        [("PCSC-E101", 19, 9), ("PCSC-E101", 43, 9), ("PCSC-E102", 97, 20), ("PCSC-E103", 108, 2)],
    ),
    Case(
        "misspelt-keywords-in-two-transitions",
        (
            ('mechanism  "usage-based', 'mechansim  "usage-based'),
            ("kill       arr < 5M usd", "kil        arr < 5M usd"),
        ),
        [("PCSC-E101", 37, 9), ("PCSC-E101", 58, 9)],
    ),
    Case(
        # a misspelt block keyword still opens its block, whose lines are still checked
        "misspelt-block-keywords-and-a-statement-inside",
        (
            ("transition launch", "transiton launch"),
            ('mechanism  "public', 'mechansim  "public'),
            ("evidence hn_launch", "evidnce hn_launch"),
            ("tier      3", "tir       3"),
        ),
        [("PCSC-E101", 18, 5), ("PCSC-E101", 20, 9), ("PCSC-E101", 67, 5), ("PCSC-E101", 97, 9)],
    ),
    Case(
        "bad-date-bare-words-unterminated-string",
        (
            ("as_of   2012-06-01", "as_of   2012-6-1"),
            ('actor      "two founders"', "actor      two founders"),
            ('"founders and first sales hire"', '"founders and first sales hire'),
        ),
        [("PCSC-E101", 3, 13), ("PCSC-E101", 19, 20), ("PCSC-E102", 36, 20)],
    ),
    Case(
        # the unfinished threshold and the empty `supports` are found one token later,
        # where the next line's keyword was read as a name
        "stray-percent-unfinished-threshold-empty-supports",
        (
            ("capture        10%", "capture        10 %"),
            ("threshold  developers >= 500\n", "threshold  developers >=\n"),
            ("supports  expand", "supports"),
        ),
        [("PCSC-E102", 14, 27), ("PCSC-E101", 24, 20), ("PCSC-E101", 91, 19)],
    ),
    Case(
        "value-missing-before-a-brace-and-a-misspelt-keyword",
        (
            ("discharges adoption\n    }", "discharges\n    }"),
            ('source    "letter of intent', 'sorce     "letter of intent'),
        ),
        [("PCSC-E101", 33, 5), ("PCSC-E101", 86, 9)],
    ),
    Case(
        "stray-characters-in-a-state-and-a-cost-item",
        (
            ("state bridge { developers 5k ", "state bridge { developers 5k @"),
            ("sales      1 * 120k usd", "sales      1 * 120k usd ~"),
        ),
        [("PCSC-E102", 9, 34), ("PCSC-E102", 45, 37)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_independent_errors_are_all_reported(case: Case) -> None:
    diags = parse(edit(*case.edits))
    assert where(diags) == case.expected, [str(d) for d in diags]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_error_alone_gives_the_same_single_diagnostic(case: Case) -> None:
    together = parse(edit(*case.edits))
    assert len(together) == len(case.edits)
    for one, expected in zip(case.edits, together, strict=True):
        assert parse(edit(one)) == [expected], one


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


# ---------------------------------------------------------------------- first error only
FIRST_ONLY = [
    (
        "missing-closing-brace",
        ("state wedge  { developers 500 }", "state wedge  { developers 500"),
        ("PCSC-E101", 9, 11),
    ),
    (
        "missing-closing-brace-of-a-transition",
        ("discharges adoption\n    }", "discharges adoption\n"),
        ("PCSC-E101", 35, 5),
    ),
    (
        "route-statement-inside-a-transition",
        ("learning_cost  8k usd", "criteria { team 70 }"),
        ("PCSC-E101", 30, 9),
    ),
    ("stray-closing-brace", ('asset      "working SMS gateway integration"', "}"), ("PCSC-E101", 22, 9)),
    (
        "character-alone-in-place-of-a-brace",
        ("discharges adoption\n    }", "discharges adoption\n    $"),
        ("PCSC-E102", 33, 5),
    ),
]


@pytest.mark.parametrize(("name", "nesting", "first"), FIRST_ONLY, ids=[f[0] for f in FIRST_ONLY])
def test_errors_after_a_doubt_about_the_nesting_are_not_reported(
    name: str, nesting: Edit, first: tuple[str, int, int]
) -> None:
    """Only the first error: a later, independent one is not reported, and neither is
    any follow-on error of the first."""
    assert where(parse(edit(nesting))) == [first]
    later = ("estimates  0.15 0.3", "estmates   0.15 0.3")  # line 63, after each of the above
    assert where(parse(edit(nesting, later))) == [first]


def test_errors_before_a_doubt_about_the_nesting_are_reported() -> None:
    text = edit(('actor      "two founders"', 'actr       "two founders"'), FIRST_ONLY[1][1])
    assert where(parse(text)) == [("PCSC-E101", 19, 9), ("PCSC-E101", 35, 5)]


# ---------------------------------------------------------------------- bounds and the pipeline
def test_at_most_max_syntax_errors_are_reported() -> None:
    block = 'transition t{i}: a -> b {{\n    actr "x"\n    class "devtools/first-users"\n}}\n'
    text = "route r {\n" + "".join(block.format(i=i) for i in range(MAX_SYNTAX_ERRORS + 5)) + "}\n"
    diags = parse(text)
    assert len(diags) == MAX_SYNTAX_ERRORS
    assert {d.help for d in diags} == {"did you mean `actor`?"}
    assert [d.span.line for d in diags] == [3 + 4 * i for i in range(MAX_SYNTAX_ERRORS)]


def test_a_library_reports_each_misspelt_field() -> None:
    text = 'library lib version "1.0.0"\nfeild developers count\nfield arr usd\nfiel paying_teams count\n'
    diags = parse(text, "lib.obl")
    assert where(diags) == [("PCSC-E101", 2, 1), ("PCSC-E101", 4, 1)]
    assert [d.help for d in diags] == ["did you mean `field`?"] * 2


def test_a_file_with_syntax_errors_is_not_lowered(tmp_path: Path) -> None:
    """Semantic errors (the unknown state `garag`) are not looked for in a file with
    syntax errors, so none can come from a partly recovered parse."""
    text = edit(
        ("launch: garage", "launch: garag"),
        ('actor      "two founders"', 'actr       "two founders"'),
        ("kill       arr < 5M usd", "kil        arr < 5M usd"),
    )
    (tmp_path / "r.route").write_text(text, encoding="utf-8")
    session = Session()
    assert session.load_routes(tmp_path / "r.route", "r.route") == []
    assert where(session.diags.sorted()) == [("PCSC-E101", 19, 9), ("PCSC-E101", 58, 9)]


# ---------------------------------------------------------------------- k misspelt keywords, k diagnostics
EXAMPLE = (ROOT / "examples" / "devtools_api.route").read_text(encoding="utf-8")
EXAMPLE_LINES = EXAMPLE.split("\n")
KEYWORDS = grammar_keywords()
STATEMENT_LINES = [
    i for i, line in enumerate(EXAMPLE_LINES) if line.split() and line.split()[0] in KEYWORDS
]
LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Words that are not names to the lexer (units, literals), and so no misspelling of a keyword.
NOT_NAMES = re.compile(r"(usd|days|months|years|true|false|none|nan|inf|infinity)", re.IGNORECASE)


def misspell(word: str, op: str, at: int, letter: str) -> str:
    at %= len(word)
    if op == "drop":
        return word[:at] + word[at + 1 :]
    if op == "swap":
        at = min(at, len(word) - 2)
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if op == "replace":
        return word[:at] + letter + word[at + 1 :]
    return word[:at] + letter + word[at:]  # insert


def is_misspelling(word: str) -> bool:
    """A name that is no keyword, and does not begin with one: `transitions` reads as
    the keyword `transition` followed by the name `s`, which is another error."""
    return (
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word) is not None
        and NOT_NAMES.fullmatch(word) is None
        and not any(word.startswith(k) for k in KEYWORDS)
    )


@st.composite
def misspelt_example(draw: st.DrawFn) -> tuple[str, list[int]]:
    k = draw(st.integers(1, 3))
    chosen = draw(st.lists(st.sampled_from(STATEMENT_LINES), min_size=k, max_size=k, unique=True))
    lines = list(EXAMPLE_LINES)
    for i in chosen:
        indent, word, rest = re.fullmatch(r"(\s*)(\S+)(.*)", lines[i]).groups()  # type: ignore[union-attr]
        op = draw(st.sampled_from(["drop", "swap", "replace", "insert"]))
        new = misspell(word, op, draw(st.integers(0, 20)), draw(st.sampled_from(LETTERS)))
        if not is_misspelling(new):
            new = word[0] + "x" + word[1:]  # `sxtate`, `axctor`: never a keyword nor the start of one
        lines[i] = indent + new + rest
    return "\n".join(lines), sorted(i + 1 for i in chosen)


def test_statement_lines_cover_every_block() -> None:
    words = {EXAMPLE_LINES[i].split()[0] for i in STATEMENT_LINES}
    assert {"route", "transition", "evidence", "state", "vision", "criteria", "cost", "actor", "source"} <= words


@settings(max_examples=150, deadline=None)
@given(case=misspelt_example())
def test_k_misspelt_keywords_give_k_diagnostics(case: tuple[str, list[int]]) -> None:
    text, lines = case
    diags = parse(text)
    assert [(d.code, d.span.line) for d in diags] == [("PCSC-E101", line) for line in lines], [str(d) for d in diags]
