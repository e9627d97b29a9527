"""One of each (docs/architecture.md, "One of each"): an idea the program needs in
several places is written once, in the lowest package that needs it, and imported."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pcsc
from tests.conftest import EXAMPLES, ROOT, run_cli

# the certificate checker keeps its own of everything, on purpose
SOURCES = sorted(p for p in (ROOT / "pcsc").rglob("*.py")
                 if not p.relative_to(ROOT).as_posix().startswith("pcsc/certify/check"))


def where(pattern: str) -> set[str]:
    """The modules of pcsc (the independent checker aside) whose source matches ``pattern``."""
    found = re.compile(pattern, re.M)
    return {str(p.relative_to(ROOT)) for p in SOURCES if found.search(p.read_text(encoding="utf-8"))}


def test_exit_codes_are_defined_once() -> None:
    assert where(r"^_?EXIT_[A-Z]+\b[^=\n]*=") == {"pcsc/diagnostics/exits.py"}
    assert where(r"def _?exit_code\(diagnostics") == {"pcsc/diagnostics/exits.py"}


def test_the_modes_and_verdicts_are_spelled_once() -> None:
    assert where(r'Literal\["gate", "dock", "off"\]|\("gate", "dock", "off"\)') == {"pcsc/base/modes.py"}
    assert where(r'"released", "suspend-and-ask"') == {"pcsc/base/modes.py"}


@pytest.mark.parametrize("path", [
    EXAMPLES / "devtools_api.route",  # released: 0
    ROOT / "tests/data/api/devtools_api_seam1.route",  # GATE refuses: 3
    ROOT / "tests/data/diagnostics/unknown_names.route",  # errors: 1
], ids=lambda p: Path(p).stem)
def test_the_api_and_the_command_line_give_the_same_exit_code(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run_cli(capsys, "compile", str(path))
    assert pcsc.compile(path).exit_code == code
    assert code == {"devtools_api": 0, "devtools_api_seam1": 3, "unknown_names": 1}[path.stem]


def test_one_lexer_outside_the_checker() -> None:
    """The printer and the formatter read tokens with the grammar's own lexer."""
    from pcsc.lang import fmt, printer
    from pcsc.lang.syntax import tokens

    assert printer.lex is tokens.lex and fmt.lex is tokens.lex
    assert where(r"_LEX\b|_EXPR_PIECES") == set()


SHIPPED = sorted([*EXAMPLES.rglob("*.route"), *(ROOT / "obligations").glob("*.obl")])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_the_tokens_are_those_the_parser_reads(path: Path) -> None:
    """The token lexer reads every terminal wherever it stands; the parser's lexer only
    those its state accepts. On every shipped file they read the same tokens."""
    from pcsc.base.files import read_text
    from pcsc.lang.syntax.parser import get_parser
    from pcsc.lang.syntax.tokens import lex

    text = read_text(path)
    parsed = [(t.start_pos, str(t)) for t in get_parser().parse_interactive(text, start="file").iter_parse()
              if t.type != "$END"]
    assert [(t.start, t.text) for t in lex(text)[0]] == parsed


def test_a_stray_character_is_a_token_and_lexing_goes_on() -> None:
    from pcsc.lang.printer import canonical_expression, expression
    from pcsc.lang.syntax.tokens import lex

    tokens, comments = lex('a >= 1 \u00a0 b # c\n"s # t"')
    assert [(t.kind, t.text) for t in tokens] == [("word", "a"), ("op", ">="), ("number", "1"), ("other", "\u00a0"),
                                                  ("word", "b"), ("string", '"s # t"')]
    assert [c.text for c in comments] == ["# c"]
    assert expression("developers>=500 # the bar\n  and arr >= 1.2M usd") == "developers>=500 and arr >= 1.2M usd"
    assert canonical_expression("developers>=500 and-x< -1") == "developers >= 500 and -x < -1"


def test_the_public_names_are_those_docs_api_lists() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    listed = re.search(r"In full, `pcsc.__all__` is: (.*?)\.\n\n", text, re.S)
    assert listed is not None
    names = re.findall(r"`([\w]+)`", listed.group(1))
    assert len(names) == len(set(names)) and set(names) == set(pcsc.__all__)


def test_the_public_name_list_is_written_once() -> None:
    """`pcsc.__all__` is `pcsc.api.core.__all__` and `__version__`, not a second copy."""
    from pcsc.api import core

    assert pcsc.__all__ == [*core.__all__, "__version__"]
    assert '"RouteSeamsResult"' not in (ROOT / "pcsc" / "__init__.py").read_text(encoding="utf-8")


def test_a_seams_route_names_its_score_ungated() -> None:
    seams = pcsc.analyse_seams(EXAMPLES / "devtools_api.route").route("devtools_api")
    compiled = pcsc.compile(EXAMPLES / "devtools_api.route").route("devtools_api")
    assert seams.ungated_score == compiled.ungated_score
    assert not hasattr(seams, "score")  # it was the ungated one under RouteResult's name for the released one
