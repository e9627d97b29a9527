"""`pcsc fmt`: golden layouts, idempotence, comments kept, IR unchanged, the CLI.

The shipped examples are not rewritten here: they are formatted in memory only. They
are in the canonical layout (`fmt --check` passes on them), and the reference route
is a fixed point.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcsc.cli import main
from pcsc.compiler.meaning import semantics
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang import fmt as fmt_module
from pcsc.lang.fmt import Semantics, check_format, comment_texts, format_source, lex, respace
from tests.conftest import EXAMPLES, ROOT, SPEC_ROUTE

DATA = Path(__file__).resolve().parent / "data" / "fmt"
SHIPPED = sorted(EXAMPLES.rglob("*.route")) + sorted((ROOT / "obligations").glob("*.obl"))
GOLDEN = sorted(p for p in DATA.iterdir() if ".in." in p.name)


def fmt(text: str, file: str = "test.route") -> str:
    diags = Diagnostics()
    out = format_source(text, file, diags)
    assert out is not None, [d.message for d in diags.items]
    return out


def meaning_of(file: Path) -> Any:
    library = file.suffix == ".obl"
    return lambda text: semantics(text, str(file), library, file.parent)


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


# ---------------------------------------------------------------------- golden files
def test_golden_files_exist() -> None:
    names = {p.name for p in GOLDEN}
    assert {"messy.in.route", "messy.in.obl", "layout.in.route"} <= names
    for p in GOLDEN:
        assert p.with_name(p.name.replace(".in.", ".out.")).is_file(), p


@pytest.mark.parametrize("src", GOLDEN, ids=lambda p: p.name)
def test_golden(src: Path) -> None:
    before = src.read_text(encoding="utf-8")
    expected = src.with_name(src.name.replace(".in.", ".out.")).read_text(encoding="utf-8")
    after = fmt(before, str(src))
    assert after == expected
    assert fmt(expected, str(src)) == expected  # the golden output is a fixed point
    assert check_format(before, after, str(src), meaning_of(src)) is None
    assert comment_texts(before) == comment_texts(after) and sum(comment_texts(before).values()) >= 4


def test_golden_messy_route_details() -> None:
    out = (DATA / "messy.out.route").read_text(encoding="utf-8")
    # `;`-joined statements are split; a comment after `{` stays on the `{` line
    assert '    as_of   2012-06-01\n    policy  "venture@1.0.0"\n    uses    venture\n' in out
    assert 'route devtools_api "Developer API for SMS" {  # after the opening brace\n' in out
    # comments inside a multi-line threshold move above it, the last stays at its end
    assert (
        "        # developers\n        # teams\n"
        "        threshold  developers >= 5k and paying_teams >= 200 and (arr >= 1.2M usd)  # revenue\n"
    ) in out
    # a comment between the fields of a state moves above the state line
    assert "    # a comment inside a state\n    state bridge { developers 5k " in out
    # end-of-block and end-of-file comments stay at the end, re-indented
    assert "            # end of the cost block\n        }\n" in out
    assert "    # the end of the route\n}\n# the end of the file\n" in out
    # a `#` inside a string is not a comment
    assert '"news.ycombinator.com/item?id=0000000 # not a comment"' in out
    assert not any(line != line.rstrip() for line in out.splitlines())


def test_layout_golden_repairs_statements_sharing_a_line() -> None:
    src = DATA / "layout.in.route"
    before = src.read_text(encoding="utf-8")
    after = fmt(before, str(src))
    was, now = meaning_of(src)(before), meaning_of(src)(after)
    assert was.codes["PCSC-E104"] >= 5 and "PCSC-E104" not in now.codes
    assert set(was.ir) == {"b"} and set(now.ir) == {"a", "b"}
    assert now.ir["b"] == was.ir["b"]


# ---------------------------------------------------------------------- shipped files
@pytest.mark.parametrize("path", SHIPPED, ids=rel)
def test_shipped_files_idempotent_ir_and_comments(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    once = fmt(text, str(path))
    assert fmt(once, str(path)) == once
    assert comment_texts(once) == comment_texts(text)
    meaning = meaning_of(path)
    was, now = meaning(text), meaning(once)
    assert was.ir and now.ir == was.ir and now.codes == was.codes
    assert check_format(text, once, str(path), meaning) is None


def test_shipped_files_are_all_covered() -> None:
    assert len(SHIPPED) >= 30
    assert any(p.parent.name == "cohort" for p in SHIPPED)
    assert {p.name for p in SHIPPED if p.suffix == ".obl"} == {"oss.obl", "research.obl", "startup.obl", "venture.obl"}


def test_spec_route_layout() -> None:
    out = fmt(SPEC_ROUTE.read_text(encoding="utf-8"))
    assert "    state garage { developers 0    paying_teams 0    arr 0 usd }\n" in out
    assert "    state wedge  { developers 500 }                  # unlisted fields carry forward\n" in out
    assert "    state scale  { developers 100k paying_teams 10k  arr 100M usd }\n" in out
    assert "        threshold  developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd\n" in out
    assert "        learning_cost  8k usd\n        estimates  0.55 0.7 0.6\n        discharges adoption\n" in out
    assert "        tam            10B usd\n" in out
    assert "        contradicts monetize\n" in out
    assert "        team     70\n" in out


def test_reference_route_and_library_are_fixed_points() -> None:
    """The canonical layout is the reference route's: fmt leaves it (and venture.obl,
    the library layout) byte for byte as written."""
    for path in (SPEC_ROUTE, ROOT / "obligations" / "venture.obl"):
        text = path.read_text(encoding="utf-8")
        assert fmt(text, str(path)) == text, path


def test_check_passes_on_every_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_fmt(["--check", str(ROOT / "examples"), str(ROOT / "obligations")], capsys)
    assert code == 0, out
    assert out == f"{len(SHIPPED)} files already formatted\n"


def test_fixed_columns_do_not_depend_on_the_other_keys() -> None:
    """A keyword's column is set by its block's kind, not by its neighbours: removing a
    statement never re-aligns the others."""
    out = fmt(
        'route r { as_of 2012-06-01\n uses venture\n state s { developers 0 }\n'
        " transition t: s -> s { class \"c\"\n kill developers < 1\n learning_cost 1k usd }\n"
        " evidence e { tier 2; weight 0.5; excerpt \"x\"; unverified true }\n"
        " criteria { team 1\n distribution 2 } }\n"
    )
    assert "    as_of   2012-06-01\n    uses    venture\n" in out
    assert '        class      "c"\n        kill       developers < 1\n        learning_cost  1k usd\n' in out
    assert "        tier      2\n" in out and "        unverified true\n" in out
    assert "        team          1\n        distribution  2\n" in out


def test_end_of_line_comments_share_a_column() -> None:
    out = fmt('route r { as_of 2012-06-01 # a\n uses venture  # b\n policy "venture@1.0.0" # c\n}\n')
    assert "    as_of   2012-06-01                        # a\n" in out
    assert "    uses    venture                           # b\n" in out
    long = "x" * 60
    assert f'    policy  "{long}"  # c\n' in fmt(f'route r {{ policy "{long}" # c\n}}\n')


def test_obl_layout() -> None:
    out = fmt((ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8"), "venture.obl")
    assert "field developers    count  material 10%       # relative change of at least 10%\n" in out
    assert "field soc2          bool                      # any change of a bool is material\n" in out
    assert "    require evidence(tier >= 2) >= 1\n" in out
    assert "    require measured(delta)                   # the threshold bounds every claimed delta\n" in out


# ---------------------------------------------------------------------- small cases
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a>=-1 and not(b<2)", "a >= -1 and not (b < 2)"),
        ("a-  -b*(c+ -d)", "a - -b * (c + -d)"),
        ("count( evidence.admissible ,x )>= 1", "count(evidence.admissible, x) >= 1"),
        ("- (1+2)", "-(1 + 2)"),
        ("x>2012-06-01 or y==\"a  b\"", 'x > 2012-06-01 or y == "a  b"'),
        ("n>=1_000 or m<=1.2M usd or p<10%", "n >= 1_000 or m <= 1.2M usd or p < 10%"),
    ],
)
def test_expression_spacing(source: str, expected: str) -> None:
    assert respace(lex(source)[0], expression=True) == expected


def test_plain_spacing_keeps_signs_attached() -> None:
    assert respace(lex("0.5 -0.2  - 3 usd")[0]) == "0.5 -0.2 -3 usd"
    assert respace(lex('transition t :a->b{')[0]) == "transition t: a -> b {"


def test_lex_finds_comments_outside_strings_only() -> None:
    tokens, comments = lex('x "a # b \\" # c" # real   \n# own\n')
    assert [c.text for c in comments] == ["# real", "# own"]
    assert tokens[1].text == '"a # b \\" # c"'


def test_empty_and_comment_only_files() -> None:
    assert fmt("") == ""
    assert fmt("  \n\n") == ""
    assert fmt("\n\n# one   \n\n\n# two\n\n") == "# one\n\n# two\n"


def test_crlf_and_tabs() -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    messy = text.replace("\n", "\r\n").replace("    ", "\t")
    assert fmt(messy) == fmt(text)


# ---------------------------------------------------------------------- safety checks
def test_check_format_refuses_lost_or_added_comments() -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    meaning = meaning_of(SPEC_ROUTE)
    good = fmt(text)
    lost = good.replace("  # unlisted fields carry forward", "")
    assert check_format(text, lost, "spec", meaning) == "the comment `# unlisted fields carry forward` would be lost"
    added = good + "# unlisted fields carry forward\n"
    reason = check_format(text, added, "spec", meaning)
    assert reason is not None and "duplicated" in reason


def test_check_format_refuses_other_meaning() -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    meaning = meaning_of(SPEC_ROUTE)
    good = fmt(text)
    changed = good.replace("developers 500 }", "developers 501 }")
    assert check_format(text, changed, "spec", meaning) == "the formatted text parses to a different tree"
    broken = good.replace("route devtools_api", "rute devtools_api")
    assert check_format(text, broken, "spec", meaning) == "the formatted text does not parse"


def test_check_format_compares_ir_and_diagnostics() -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("as_of   ", "as_of ")  # not canonical
    good = fmt(text)
    assert good != text
    same = Semantics({"r": {"x": 1}}, Counter({"PCSC-W604": 1}))

    def fake(ir: dict[str, Any], codes: Counter[str]) -> Any:
        return lambda t: same if t == text else Semantics(ir, codes)

    assert check_format(text, good, "spec", fake(same.ir, same.codes)) is None
    assert check_format(text, good, "spec", fake({"r": {"x": 2}}, same.codes)) == "the IR of `r` would change"
    reason = check_format(text, good, "spec", fake(same.ir, Counter({"PCSC-E201": 1, "PCSC-W604": 1})))
    assert reason == "the diagnostics would change (PCSC-E201)"
    reason = check_format(text, good, "spec", fake({"r": {"x": 1}, "s": {}}, same.codes))
    assert reason == "the set of routes that compile would change"


def test_ir_comparison_ignores_layout_but_not_values() -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    meaning = meaning_of(SPEC_ROUTE)
    spread = text.replace("threshold  developers >= 500", "threshold  developers\n  >= # why\n 500")
    assert meaning(spread).ir == meaning(text).ir
    assert meaning(text.replace("kill       developers < 100", "kill developers < 101")).ir != meaning(text).ir


# ---------------------------------------------------------------------- messy variants
_SPEC = SPEC_ROUTE.read_text(encoding="utf-8")
_SPEC_LINES = _SPEC.splitlines()
_SEMI_KEYS = {
    "as_of", "policy", "uses", "state", "actor", "mechanism", "asset", "class", "threshold", "kill", "horizon",
    "learning_cost", "estimates", "discharges", "source", "captured", "tier", "weight", "supports", "contradicts",
    "excerpt",
}  # fmt: skip
_LAST_BRACE = max(i for i, line in enumerate(_SPEC_LINES) if line == "}")


def _semi_ok(i: int) -> bool:
    words = _SPEC_LINES[i].split()
    return bool(words) and (words[0] in _SEMI_KEYS or (words == ["}"] and i != _LAST_BRACE))


@st.composite
def messy_spec(draw: st.DrawFn) -> tuple[str, int]:
    """The spec route with random indentation, spacing, line breaks between tokens,
    trailing whitespace, blank lines, `;` separators (some joining two lines) and
    comments at line ends. Returns the text and the number of comments added."""
    out: list[str] = []
    added = 0
    join = False
    comment_odds = draw(st.sampled_from([0, 3, 8]))  # 0: no comments added
    for i, line in enumerate(_SPEC_LINES):
        tokens, comments = lex(line)
        if not tokens:
            out.append(line + "\n")
            continue
        text = "" if join else draw(st.sampled_from(["", " ", "  ", "\t", "        ", "\t  "]))
        for j, t in enumerate(tokens):
            if j:
                sep = draw(st.sampled_from([" ", " ", "  ", "\t", "\n", "\n   ", " \n\t"]))
                if "\n" in sep and comment_odds and draw(st.integers(0, comment_odds)) == 0:
                    sep = f"  # c{added}" + sep
                    added += 1
                text += sep
            text += t.text
        semi = _semi_ok(i) and draw(st.booleans())
        if semi:
            text += draw(st.sampled_from([";", " ;", " ; "]))
        ends_in_comment = bool(comments)
        if comments:
            text += "  " + comments[0].text
        elif comment_odds and draw(st.integers(0, comment_odds)) == 0:
            text += f"   # c{added}"
            added += 1
            ends_in_comment = True
        join = semi and not ends_in_comment and draw(st.booleans())
        if join:
            out.append(text + " ")  # the next line continues this one, after the `;`
            continue
        out.append(text + draw(st.sampled_from(["", " ", "\t"])) + "\n")
        if i > 0 and draw(st.integers(0, 5)) == 0:
            out.append(draw(st.sampled_from(["\n", "  \n\n"])))
    return "".join(out), added


def _without_comments(text: str) -> str:
    lines = [re.sub(r" +#.*$", "", line) for line in text.splitlines() if not line.lstrip().startswith("#")]
    return "\n".join(lines)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messy_spec())
def test_messy_variants_of_the_spec(case: tuple[str, int]) -> None:
    messy, added = case
    once = fmt(messy)
    assert fmt(once) == once
    assert comment_texts(once) == comment_texts(messy)
    assert sum(comment_texts(messy).values()) == added + 2
    assert check_format(messy, once, "spec", meaning_of(SPEC_ROUTE)) is None
    canonical = fmt(_SPEC)
    assert _without_comments(once) == _without_comments(canonical)
    if added == 0:
        assert once == canonical


# ---------------------------------------------------------------------- the command
def run_fmt(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`pcsc fmt ARGV` through `pcsc.cli.main`."""
    code = main(["fmt", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "messy.route").write_text((DATA / "messy.in.route").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "clean.route").write_text((DATA / "messy.out.route").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "sub" / "venture.obl").write_text((DATA / "messy.in.obl").read_text(encoding="utf-8"), "utf-8")
    (tmp_path / "sub" / "notes.txt").write_text("not a route {", encoding="utf-8")
    return tmp_path


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}


def test_check_exit_codes_and_writes_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(workdir)
    code, out, _ = run_fmt(["--check", str(workdir)], capsys)
    assert code == 1
    assert out == (
        f"would format {workdir / 'messy.route'}\nwould format {workdir / 'sub' / 'venture.obl'}\n"
        "2 files would be reformatted, 1 file already formatted\n"
    )
    assert _snapshot(workdir) == before
    code, out, _ = run_fmt(["--check", str(workdir / "clean.route")], capsys)
    assert (code, out) == (0, "1 file already formatted\n")


def test_rewrite_in_place(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messy = workdir / "messy.route"
    messy.chmod(0o640)
    code, out, _ = run_fmt([str(workdir)], capsys)
    assert code == 0
    obl = workdir / "sub" / "venture.obl"
    assert out.splitlines() == [f"formatted {messy}", f"formatted {obl}", "2 files reformatted, 1 file left unchanged"]
    assert messy.read_text(encoding="utf-8") == (DATA / "messy.out.route").read_text(encoding="utf-8")
    assert (workdir / "sub" / "venture.obl").read_text(encoding="utf-8") == (DATA / "messy.out.obl").read_text("utf-8")
    assert messy.stat().st_mode & 0o777 == 0o640
    assert (workdir / "sub" / "notes.txt").read_text(encoding="utf-8") == "not a route {"
    names = sorted(p.name for p in workdir.rglob("*"))  # no temporary file left behind
    assert names == ["clean.route", "messy.route", "notes.txt", "sub", "venture.obl"]
    code, out, _ = run_fmt([str(workdir)], capsys)
    assert (code, out) == (0, "3 files left unchanged\n")


def test_diff_prints_and_writes_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(workdir)
    code, out, err = run_fmt(["--diff", str(workdir / "messy.route"), str(workdir / "clean.route")], capsys)
    assert code == 1  # as ruff: a diff that would change something exits 1, with or without --check
    assert out.startswith(f"--- {workdir / 'messy.route'} (original)\n+++ {workdir / 'messy.route'} (formatted)\n")
    assert "\n-as_of 2012-06-01 ;policy \"venture@1.0.0\"; uses venture\n" in out
    assert "\n+    as_of   2012-06-01\n" in out
    assert "clean.route" not in out
    assert err == f"would format {workdir / 'messy.route'}\n1 file would be reformatted, 1 file already formatted\n"
    assert _snapshot(workdir) == before
    code, _, _ = run_fmt(["--diff", "--check", str(workdir / "messy.route")], capsys)
    assert code == 1
    assert run_fmt(["--diff", str(workdir / "clean.route")], capsys) == (0, "", "1 file already formatted\n")


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


@pytest.mark.parametrize("name", ["messy.in.route", "messy.in.obl"])
def test_stdin_to_stdout(name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    _stdin(monkeypatch, (DATA / name).read_text(encoding="utf-8"))
    code, out, err = run_fmt(["-"], capsys)
    assert (code, err) == (0, "")
    assert out == (DATA / name.replace(".in.", ".out.")).read_text(encoding="utf-8")


def test_stdin_check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stdin(monkeypatch, (DATA / "messy.in.route").read_text(encoding="utf-8"))
    assert run_fmt(["--check", "-"], capsys) == (1, "", "")
    _stdin(monkeypatch, (DATA / "messy.out.route").read_text(encoding="utf-8"))
    assert run_fmt(["--check", "-"], capsys) == (0, "", "")


def test_stdin_cannot_mix_with_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_fmt(["-", "a.route"], capsys)[0] == 2


def test_syntax_error_is_reported_and_left_untouched(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = workdir / "bad.route"
    bad.write_text("route r {\n    as_of 2012-06-01\n    bogus 1\n}\n", encoding="utf-8")
    code, out, err = run_fmt([str(bad), str(workdir / "messy.route")], capsys)
    assert code == 1
    assert "PCSC-E101" in err and f"{bad}:3:5" in err
    assert bad.read_text(encoding="utf-8") == "route r {\n    as_of 2012-06-01\n    bogus 1\n}\n"
    assert f"formatted {workdir / 'messy.route'}" in out
    code, _, err = run_fmt([str(workdir / "missing.route")], capsys)
    assert code == 1 and "PCSC-E105" in err


def test_refusal_leaves_the_file_untouched(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = fmt_module.format_source

    def dropping(text: str, file: str, diags: Diagnostics) -> str | None:
        out = real(text, file, diags)
        return None if out is None else out.replace("  # the asset", "")

    monkeypatch.setattr(fmt_module, "format_source", dropping)
    messy = workdir / "messy.route"
    before = messy.read_text(encoding="utf-8")
    code, out, err = run_fmt([str(messy)], capsys)
    assert code == 70
    assert f"fmt refused {messy}: the comment `# the asset` would be lost; the file is left untouched" in err
    assert messy.read_text(encoding="utf-8") == before
    assert out == ""  # no file was formatted or found formatted: no summary


def test_json_report(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_fmt(["--check", "--diff", "--format", "json", str(workdir)], capsys)
    assert code == 1
    doc = json.loads(out)
    statuses = {Path(f["path"]).name: f["status"] for f in doc["files"]}
    assert statuses == {"clean.route": "unchanged", "messy.route": "changed", "venture.obl": "changed"}
    assert all(("diff" in f) == (f["status"] == "changed") for f in doc["files"])
    assert doc["diagnostics"] == []


def test_fmt_is_on_the_command_line(tmp_path: Path) -> None:
    messy = tmp_path / "m.route"
    messy.write_text((DATA / "messy.in.route").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["fmt", "--check", str(messy)]) == 1
    assert main(["fmt", str(messy)]) == 0
    assert messy.read_text(encoding="utf-8") == (DATA / "messy.out.route").read_text(encoding="utf-8")
    assert main(["fmt", "--check", str(messy)]) == 0


# ---------------------------------------------------------------------- the printer is canonical
SHIPPED_ROUTES = sorted(EXAMPLES.rglob("*.route"))


@pytest.mark.parametrize("path", SHIPPED_ROUTES, ids=lambda p: p.stem)
def test_printed_routes_and_their_splices_are_already_formatted(path: Path) -> None:
    """`pcsc splice`, `redteam` and `gate --suggest --apply` print routes from the IR
    (`pcsc.lang.printer`): what they print is a fixed point of `pcsc fmt`, for every shipped
    route and every splice of it."""
    from pcsc.analysis.seams.splice import seam_indices, splice
    from pcsc.compiler.session import Session
    from pcsc.lang.printer import route_to_text

    session = Session()
    routes = session.load_paths([str(path)])
    assert routes
    printed = 0
    for route in routes:
        for variant in (route, *(splice(route, k) for k in seam_indices(route))):
            text = route_to_text(variant, header=f"{variant.name}, printed")
            assert fmt(text) == text, f"{variant.name}: the printer's layout is not fmt's"
            printed += 1
    if routes[0].shape is None:  # a chain has n − 2 seams; a graph's are fewer (docs/graphs.md)
        assert printed >= 1 + len(routes[0].transitions) - 2
    else:
        assert printed >= 1 + len(seam_indices(routes[0]))


def test_the_printer_spaces_expressions_as_fmt_does() -> None:
    from pcsc.compiler.session import Session
    from pcsc.lang.printer import route_to_text

    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("threshold  developers >= 500",
                                                          "threshold  developers>=500 and not(paying_teams>2*-50)")
    assert "developers>=500" in text
    (route, *_) = Session().routes_from_text(text, "spec.route", ROOT / "examples")
    printed = route_to_text(route)
    assert "        threshold  developers >= 500 and not (paying_teams > 2 * -50)\n" in printed
    assert fmt(printed) == printed


def test_one_file_formatted_is_counted_as_reformatted(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messy = workdir / "messy.route"
    assert run_fmt([str(messy)], capsys) == (0, f"formatted {messy}\n1 file reformatted\n", "")


@pytest.mark.parametrize("flags", [["--check"], ["--diff"], []])
def test_a_missing_path_is_an_error_on_the_path_with_no_summary(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No `:1:1` (a missing folder has no lines) and no `0 files …` summary: nothing was read."""
    missing = tmp_path / "nope"
    code, out, err = run_fmt([*flags, str(missing)], capsys)
    assert (code, out) == (1, "")
    assert err == f"{missing}: error: cannot read {missing}: No such file or directory [PCSC-E105]\n"


def test_a_folder_without_route_or_library_files_is_an_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    code, out, err = run_fmt(["--check", str(tmp_path)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path}: error: no .route or .obl files in the folder {tmp_path} [PCSC-E106]\n")


def test_the_summaries_docs_fmt_shows_are_what_fmt_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = " ".join((ROOT / "docs" / "fmt.md").read_text(encoding="utf-8").split())
    monkeypatch.chdir(tmp_path)
    Path("a.route").write_text((DATA / "messy.in.route").read_text(encoding="utf-8"), encoding="utf-8")
    for name in ("b.route", "c.route"):
        Path(name).write_text((DATA / "messy.out.route").read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = run_fmt(["--check", "."], capsys)
    assert code == 1 and f"`{out.splitlines()[-1]}`" in doc
    code, out, _ = run_fmt(["."], capsys)
    assert code == 0 and out.splitlines()[-1] == "1 file reformatted, 2 files left unchanged"
    assert f"`{out.splitlines()[-1]}`" in doc
    code, out, err = run_fmt(["nope"], capsys)
    assert (code, out) == (1, "") and f"`{err.strip()}`" in doc
