"""The VS Code extension's TextMate grammar gives every token of every shipped example
its intended scope.

The files are tokenized the way VS Code does it (vscode-textmate and vscode-oniguruma
from npm, `editors/vscode/test/tokenize.js`), all in one node process. The
expectations come from the language's own lexer instead: a Lark parser built from
`grammar/pcsc.lark` with every token kept, so each keyword, name, number, unit, date,
string and comment is located, and its role read from the rule it sits in,
independently of the TextMate grammar. Node and npm are needed; the packages are
installed with `npm ci` when `editors/vscode/node_modules` lacks them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from lark import Lark, Token, Tree

from pcsc.lang.ir.vocabulary import EVIDENCE_NAMES, REQUIRE_FUNCTIONS, REQUIRE_NAMES
from pcsc.lang.lower.route import VISION_KEYS
from tests.conftest import ROOT

EXTENSION = ROOT / "editors" / "vscode"
SHIPPED = sorted(
    [*ROOT.glob("examples/**/*.route"), *ROOT.glob("obligations/*.obl"),
     *ROOT.glob("tests/data/fmt/*.route"), *ROOT.glob("tests/data/fmt/*.obl")]
)
DECLARATIONS = {"route", "library", "state", "vision", "transition", "evidence", "obligation", "field"}
#: The names the defining rules give, by rule (and position among the rule's names).
DEFINED = {
    "route": ["entity.name.type.route"],
    "library": ["entity.name.namespace.library"],
    "field_decl": ["entity.name.variable.field", "support.type"],
    "obligation": ["entity.name.function.obligation"],
    "state": ["entity.name.type.state"],
    "vision": ["entity.name.type.state"],
    "transition": ["entity.name.function.transition", "entity.name.type.state", "entity.name.type.state"],
    "evidence": ["entity.name.type.evidence"],
    "cost_item_times": ["variable.other.cost-item"],
    "cost_item_single": ["variable.other.cost-item"],
    "criterion": ["variable.other.criterion"],
    "attribute": ["variable.other.property"],
}
#: What a name in a `name_list` refers to, by the statement holding the list.
LISTED = {
    "uses": "entity.name.namespace.library",
    "discharges": "entity.name.function.obligation",
    "supports": "entity.name.function.transition",
    "contradicts": "entity.name.function.transition",
    "obligation": "variable.other.field",
}
PUNCTUATION = set("{}(),;:.")
OPERATORS = {"->", ">=", "<=", "==", "!=", ">", "<", "+", "-", "*", "/"}

# Hand-written lines the shipped examples do not show (each must still parse).
TRICKY = {
    "keywords_as_names.obl": (
        "library tricky version \"0.1\"   # route state transition\n"
        "field class_count count\n"
        "field burn usd material -1_000.5k usd\n"
        "obligation o covers class_count, burn {\n"
        "    require mechanism and asset; require kill\n"
        "    require evidence(tier >= 2 and source != \"x # y\" and captured >= 2020-01-31) >= 1\n"
        "    require count(evidence(weight > .5)) >= max(1, 2e3, 1.5e-2)\n"
        "    require budget >= floor(delta) * 1.2B / 3 - -1 or not grounded(asset)\n"
        "}\n"
    ),
    "tricky.route": (
        "route r \"a \\\"quoted\\\" title # not a comment\" {\n"
        "    as_of 2024-02-29 ; policy \"venture@1.0.0\" sha256 \"ab12\"\n"
        "    uses venture, startup\n"
        "    state s0 { class 1 costs 0 usd state_name 2 flag true note \"n\" day 2024-01-01 }\n"
        "    state s1 { class 10% }\n"
        "    transition t : s0->s1 {\n"
        "        p 0.4\n"
        "        threshold class >= 5 and\n"
        "            # route state kill (a comment between the lines)\n"
        "            (costs < 90) ; kill class<=0\n"
        "        horizon 90 days ; learning_cost 12_500 usd\n"
        "        cost { state 1 * 2M usd }\n"
        "        estimates 45% .5 1e-1\n"
        "    }\n"
        "    evidence e { source \"s\" captured 2024-01-01 tier 1 weight 0.5\n"
        "                 supports t excerpt \"x\" unverified false }\n"
        "    evidence f { contradicts t unverified }\n"
        "    criteria { team 1 market 2 }\n"
        "}\n"
    ),
}


# What the Lark grammar rejects: an unterminated string (it stops at the end of its
# line) and characters outside the language.
BAD = {"bad.route": 'route r {\n    policy "venture@1.0.0\n    as_of 2024-01-01 @ [x]\n}\n'}


@dataclass(frozen=True)
class Span:
    line: int  # from 1
    start: int  # from 0
    end: int  # exclusive
    expect: str  # a scope prefix every character of the span must carry
    what: str


def _npm_packages_ready() -> bool:
    return all((EXTENSION / "node_modules" / p / "package.json").is_file()
               for p in ("vscode-textmate", "vscode-oniguruma"))


@pytest.fixture(scope="session")
def tokens() -> dict[str, list[list[list[str]]]]:
    """Per input: per line, the scope stack of each character."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH: the TextMate grammar test needs them")
    if not _npm_packages_ready():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=EXTENSION, check=True,
                       capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    inputs = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in SHIPPED} | TRICKY | BAD
    proc = subprocess.run(["node", "test/tokenize.js", "--stdin"], cwd=EXTENSION, input=json.dumps(inputs),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    raw = json.loads(proc.stdout)
    out: dict[str, list[list[list[str]]]] = {}
    for name, text in inputs.items():
        lines: list[list[list[str]]] = [[[] for _ in line] for line in text.split("\n")]
        for tok in raw[name]:
            for col in range(tok["start"], tok["end"]):
                lines[tok["line"] - 1][col] = tok["scopes"]
        out[name] = lines
    return out


# ------------------------------------------------------------ expectations from Lark


@pytest.fixture(scope="session")
def expected() -> dict[str, list[Span]]:
    comments: list[Token] = []
    parser = Lark((ROOT / "grammar" / "pcsc.lark").read_text(encoding="utf-8"), parser="lalr",
                  lexer="contextual", start="file", keep_all_tokens=True, maybe_placeholders=False,
                  lexer_callbacks={"COMMENT": comments.append})
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in SHIPPED} | TRICKY
    out: dict[str, list[Span]] = {}
    for name, text in texts.items():
        comments.clear()
        tree = parser.parse(text)
        spans = list(_token_spans(tree, ()))
        spans += [_span(c, "comment.line.number-sign", "comment") for c in comments]
        out[name] = spans
    return out


def _span(tok: Token, expect: str, what: str, start: int = 0, end: int | None = None) -> Span:
    assert tok.line is not None and tok.column is not None
    col = tok.column - 1
    stop = col + len(tok) if end is None else col + end
    return Span(tok.line, col + start, stop, expect, f"{what} {tok.value!r}")


def _token_spans(tree: Tree[Token], context: tuple[str, ...]) -> Iterator[Span]:
    """The expected scope of each token of `tree`; `context` holds the enclosing rules."""
    rule = str(tree.data)
    names = [c for c in tree.children if isinstance(c, Token) and c.type == "NAME"]
    inner = (*context, f"call:{names[0]}" if rule == "call" else rule)
    for child in tree.children:
        if isinstance(child, Tree):
            yield from _token_spans(child, inner)
            continue
        tok, value = child, str(child)
        if tok.type == "NAME":
            yield from _name_span(tok, rule, context, next(i for i, n in enumerate(names) if n is tok))
        elif tok.type == "NUMBER":
            yield _span(tok, "constant.numeric", "number")
            if value.endswith("%"):
                yield _span(tok, "keyword.other.unit.percent", "percent", len(value) - 1)
            if value.rstrip("%")[-1:] in ("k", "M", "B"):
                at = len(value.rstrip("%")) - 1
                yield _span(tok, "keyword.other.unit.magnitude", "magnitude", at, at + 1)
        elif tok.type == "UNIT":
            yield _span(tok, "keyword.other.unit", "unit")
        elif tok.type == "DATE":
            yield _span(tok, "constant.other.date", "date")
        elif tok.type == "STRING":
            yield _span(tok, "string.quoted.double", "string")
        elif tok.type in ("TRUE", "FALSE", "NONE"):
            yield _span(tok, "constant.language", "constant")
        elif value in ("and", "or", "not"):
            yield _span(tok, "keyword.operator.logical", "logical operator")
        elif value in DECLARATIONS:
            yield _span(tok, "storage.type." + value, "declaration keyword")
        elif value == "require":
            yield _span(tok, "keyword.control.require", "keyword")
        elif value.isidentifier():
            yield _span(tok, "keyword.other." + value, "keyword")
        elif value in OPERATORS:
            yield _span(tok, "keyword.operator", "operator")
        elif value in PUNCTUATION:
            yield _span(tok, "punctuation", "punctuation")
        else:  # pragma: no cover - a terminal the grammar gained
            raise AssertionError(f"no expectation for token {tok.type} {value!r}")


def _name_span(tok: Token, rule: str, context: tuple[str, ...], index: int) -> Iterator[Span]:
    value = str(tok)
    if rule in DEFINED:
        yield _span(tok, DEFINED[rule][min(index, len(DEFINED[rule]) - 1)], "name in " + rule)
    elif rule == "name_list":
        yield _span(tok, LISTED[context[-1]], "name listed in " + context[-1])
    elif rule == "field_value":
        vision = context[-1] == "vision" and value in VISION_KEYS
        yield _span(tok, "keyword.other." + value if vision else "variable.other.field", "field")
    elif rule == "call":
        if value in REQUIRE_FUNCTIONS:
            yield _span(tok, "support.function.builtin", "built-in function")
    elif rule == "name":
        in_evidence = "call:evidence" in context
        if "require" in context and in_evidence and value in EVIDENCE_NAMES:
            yield _span(tok, "variable.language", "evidence name")
        elif "require" in context and not in_evidence and value in REQUIRE_NAMES:
            yield _span(tok, "variable.language", "transition name")
        elif "threshold" in context or "kill" in context:
            yield _span(tok, "variable.other.field", "field in a condition")
    # Whatever the role, a name is never a keyword, unless it is a vision key.
    if not (rule == "field_value" and value in VISION_KEYS):
        yield Span(tok.line or 0, (tok.column or 1) - 1, (tok.column or 1) - 1 + len(value), "!keyword",
                   f"name {value!r}")


# ------------------------------------------------------------ checks


def _problems(lines: list[list[list[str]]], spans: list[Span]) -> list[str]:
    problems = []
    for s in spans:
        for col in range(s.start, s.end):
            scopes = lines[s.line - 1][col]
            if s.expect == "!keyword":
                ok = not any(sc.startswith(("keyword.", "storage.")) for sc in scopes)
            else:
                ok = any(sc.startswith(s.expect) for sc in scopes)
            if s.expect.startswith(("comment.", "string.")):
                other = "string." if s.expect.startswith("comment.") else "comment."
                ok = ok and not any(sc.startswith((other, "keyword.", "storage.")) for sc in scopes)
            if not ok:
                problems.append(f"{s.line}:{col + 1}: {s.what}: expected {s.expect}, got {scopes}")
                break
    return problems


@pytest.mark.parametrize("name", [str(p.relative_to(ROOT)) for p in SHIPPED] + sorted(TRICKY))
def test_every_token_has_its_scope(name: str, tokens: dict[str, list[list[list[str]]]],
                                   expected: dict[str, list[Span]]) -> None:
    problems = _problems(tokens[name], expected[name])
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", [str(p.relative_to(ROOT)) for p in SHIPPED] + sorted(TRICKY))
def test_no_invalid_scope(name: str, tokens: dict[str, list[list[list[str]]]]) -> None:
    bad = [f"{i + 1}:{col + 1}: {scopes}" for i, line in enumerate(tokens[name]) for col, scopes in enumerate(line)
           if any(sc.startswith("invalid") for sc in scopes)]
    assert not bad, "\n".join(bad[:20])


def test_the_corpus_shows_what_the_test_claims(expected: dict[str, list[Span]]) -> None:
    """The shipped examples do contain the cases the issue names, so the checks above
    are not vacuous: numbers with units and suffixes, dates, keywords in comments,
    `#` in strings."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in SHIPPED)
    for needle in ("45k usd", "10%", "1.2M usd", "90 days", "2012-06-01", '# not a comment"', "# the threshold",
                   "require mechanism"):
        assert needle in text
    kinds = {s.what.split(" ")[0] for spans in expected.values() for s in spans}
    assert {"number", "unit", "magnitude", "percent", "date", "string", "comment", "keyword",
            "declaration", "logical", "operator", "built-in", "transition", "evidence"} <= kinds


def _scopes(tokens: dict[str, list[list[list[str]]]], name: str, line: int, needle: str, nth: int = 0) -> list[str]:
    text = TRICKY[name].split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.index(needle, col + 1)
    return tokens[name][line - 1][col]


def _has(scopes: list[str], prefix: str) -> bool:
    return any(sc.startswith(prefix) for sc in scopes)


def test_tricky_lines(tokens: dict[str, list[list[list[str]]]]) -> None:
    obl, route = "keywords_as_names.obl", "tricky.route"
    # a keyword in a comment is comment only; a `#` in a string is string only
    assert _has(_scopes(tokens, obl, 1, "route"), "comment.line") and not _has(
        _scopes(tokens, obl, 1, "route"), "keyword")
    assert not _has(_scopes(tokens, route, 1, "# not"), "comment")
    assert _has(_scopes(tokens, route, 1, "\\\""), "constant.character.escape")
    assert _has(_scopes(tokens, obl, 6, "# y"), "string.quoted.double")
    # `usd` is a type after `field NAME`, a unit after a number
    assert _has(_scopes(tokens, obl, 3, "usd"), "support.type")
    assert _has(_scopes(tokens, obl, 3, "usd", 1), "keyword.other.unit")
    assert _has(_scopes(tokens, obl, 3, "1_000.5"), "constant.numeric")
    # statement keywords inside require lines are the transition's names
    assert _has(_scopes(tokens, obl, 5, "mechanism"), "variable.language")
    assert _has(_scopes(tokens, obl, 5, "kill"), "variable.language")
    assert _has(_scopes(tokens, obl, 6, "source"), "variable.language")
    assert _has(_scopes(tokens, obl, 6, "evidence"), "support.function.builtin")
    # keywords as field names inside a state; names that contain keywords
    assert _has(_scopes(tokens, route, 4, "class"), "variable.other.field")
    assert _has(_scopes(tokens, route, 4, "state_name"), "variable.other.field")
    assert _has(_scopes(tokens, route, 12, "state"), "variable.other.cost-item")
    # an expression over several lines, a comment between, `;` ends it
    assert _has(_scopes(tokens, route, 9, "kill"), "comment.line")
    assert _has(_scopes(tokens, route, 10, "costs"), "variable.other.field")
    assert _has(_scopes(tokens, route, 10, "kill"), "keyword.other.kill")
    assert _has(_scopes(tokens, route, 7, "p"), "keyword.other.p")


def test_unterminated_string_and_stray_characters_are_invalid(tokens: dict[str, list[list[list[str]]]]) -> None:
    """The other direction: what the Lark grammar rejects shows as invalid."""
    lines = BAD["bad.route"].split("\n")
    invalid = ["".join(lines[i][col] for col, scopes in enumerate(line) if _has(scopes, "invalid"))
               for i, line in enumerate(tokens["bad.route"])]
    assert invalid == ["", "venture@1.0.0", "@[]", "", ""]
    date = lines[2].index("2024")
    assert _has(tokens["bad.route"][2][date], "constant.other.date")
    assert not _has(tokens["bad.route"][2][date], "string")
