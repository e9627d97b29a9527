"""Bounded output and cost: no input makes PCSC print or work much more than it read.

The attacks: one diagnostic per conjunct of a long threshold, each echoing the whole
line (a 34 KB route gave 92 MB of standard error); a 9.9 MB line of junk (27 s of CPU
and 1.2 GB); many distinct diagnostics. Each is now reported once per line with a
count, cut to `--max-diagnostics`, with source lines cut around the span, and a line
over `MAX_LINE` characters is refused before it is lexed."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from pcsc.cli import main
from pcsc.lang.syntax import parser
from pcsc.lang.syntax.limits import MAX_LINE
from tests import docrun
from tests.conftest import EXAMPLES, ROOT, run_cli

BASE = (EXAMPLES / "log_search.route").read_text(encoding="utf-8")
THRESHOLD = "threshold  developers >= 1.5k\n"
CONJUNCT = "developers >= 1.5k usd"  # E301: a count takes no unit


def with_threshold(tmp_path: Path, conjuncts: int, name: str = "flood.route") -> Path:
    assert THRESHOLD in BASE
    path = tmp_path / name
    threshold = f"threshold  {' and '.join([CONJUNCT] * conjuncts)}\n"
    path.write_text(BASE.replace(THRESHOLD, threshold, 1), encoding="utf-8")
    return path


def test_a_diagnostic_at_every_conjunct_of_a_line_is_reported_once_with_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = with_threshold(tmp_path, 360)  # a line of 9,743 characters: under the limit
    code, out, err = run_cli(capsys, "check", str(path))
    assert code == 1
    assert err.count("[PCSC-E301]") == 1
    assert f"{path}:29:34: error: field `developers` is of type count" in err  # the first site, located
    assert "note: the same 359 more times on this line" in err
    assert len(err) < 2_000  # before: 360 copies of the line, 3.5 MB
    # JSON and SARIF say it once too, with the count
    code, out, _ = run_cli(capsys, "check", "--format", "json", str(path))
    (e301,) = [d for d in json.loads(out)["diagnostics"] if d["code"] == "PCSC-E301"]
    assert e301["repeats"] == 359 and (e301["line"], e301["column"]) == (29, 34)
    code, out, _ = run_cli(capsys, "check", "--format", "sarif", str(path))
    (result,) = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "PCSC-E301"]
    assert result["occurrenceCount"] == 360
    # and so does every command's JSON: compile's packet and its IR, as check, gate and explain
    for command in (["compile"], ["compile", "--emit", "ir"], ["gate"], ["explain"]):
        code, out, _ = run_cli(capsys, *command, "--format", "json", str(path))
        found = [d for d in json.loads(out)["diagnostics"] if d["code"] == "PCSC-E301"]
        assert [(d["repeats"], d["line"], d["column"]) for d in found] == [(359, 29, 34)], command
    # the Python API's documents too
    import pcsc

    for document in (pcsc.compile(path).to_json(), pcsc.analyse_seams(path).to_json()):
        found = [d for d in document["diagnostics"] if d["code"] == "PCSC-E301"]
        assert [(d["repeats"], d["line"], d["column"]) for d in found] == [(359, 29, 34)]


def test_a_long_route_of_such_lines_gives_little_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """200 KB of thresholds: 24 transitions, each with a 360-conjunct line."""
    text = BASE.replace(THRESHOLD, f"threshold  {' and '.join([CONJUNCT] * 360)}\n", 1)
    head, sep, tail = text.partition("    transition paid_retention")
    block = head[head.index("    transition agent_launch") :]
    copies = "".join(block.replace("agent_launch", f"agent_launch{i}") for i in range(24))
    path = tmp_path / "long.route"
    path.write_text(head + copies + sep + tail, encoding="utf-8")
    assert path.stat().st_size > 200_000
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1 and err.count("[PCSC-E301]") == 25
    assert len(err) < 20_000, len(err)  # before: about 80 MB


def test_a_line_over_the_limit_is_refused_before_it_is_lexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "junk.route"
    path.write_text("route r {\n" + "x" * 9_900_000 + "\n}\n", encoding="utf-8")

    def no_lexing(*_: object) -> None:
        raise AssertionError("the parser ran on a line over the limit")

    monkeypatch.setattr(parser, "_parse_typed", no_lexing)
    monkeypatch.setattr(parser, "get_parser", no_lexing)
    start = time.process_time()
    code, _, err = run_cli(capsys, "check", str(path))
    assert time.process_time() - start < 3  # before: 27 s
    assert code == 1
    assert f"{path}:2:{MAX_LINE + 1}: error: line 2 is 9,900,000 characters long; the limit is 10,000" in err
    assert "[PCSC-E126]" in err and len(err) < 1_000


def test_every_long_line_is_counted_and_a_line_at_the_limit_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comment = "# " + "c" * (MAX_LINE - 2) + "\n"  # exactly MAX_LINE characters
    path = tmp_path / "at.route"
    path.write_text(comment + BASE, encoding="utf-8")
    assert run_cli(capsys, "check", str(path))[0] == 0
    path.write_text(comment.replace("#", "##", 1) * 3 + BASE, encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1 and "line 1 is 10,001 characters long; the limit is 10,000 (2 more lines are too)" in err


def test_a_snippet_is_cut_around_its_span(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An error far into a long line shows about 100 characters around it, and the caret
    under it."""
    padding = " and ".join(["developers >= 1"] * 300)
    path = tmp_path / "far.route"
    path.write_text(BASE.replace(THRESHOLD, f"threshold  {padding} and developers >= 7 usd\n", 1), encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1
    lines = err.splitlines()
    i = next(i for i, line in enumerate(lines) if "[PCSC-E301]" in line)
    source, caret = lines[i + 1], lines[i + 2]
    assert source.startswith("  29 | …") and len(source) < 120
    assert source[caret.index("^") : caret.index("^") + 5] == "7 usd"
    assert caret.count("~") == 4


def test_output_stops_at_max_diagnostics_and_says_what_was_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """150 distinct errors: 100 are printed, then a line says 52 more (50 errors and the
    route's 2 warnings) were not; `0` prints them all; JSON carries every one."""
    items = "".join(f"            extra{i}  2 days * 1k usd\n" for i in range(150))  # E301 on each line
    text = BASE.replace("            storage   4 * 3k usd\n", "            storage   4 * 3k usd\n" + items, 1)
    path = tmp_path / "many.route"
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1
    assert err.count("[PCSC-E301]") == 100
    assert err.rstrip().endswith("pcsc: 52 more diagnostics not shown (50 errors and 2 warnings): "
                                 "--max-diagnostics 0 prints them all")
    _, _, every = run_cli(capsys, "check", "--max-diagnostics", "0", str(path))
    assert every.count("[PCSC-E301]") == 150 and "not shown" not in every
    _, _, few = run_cli(capsys, "check", "--max-diagnostics", "3", str(path))
    assert few.count("[PCSC-E301]") == 3 and "149 more diagnostics not shown (147 errors and 2 warnings)" in few
    _, out, _ = run_cli(capsys, "check", "--format", "json", "--max-diagnostics", "3", str(path))
    assert sum(d["code"] == "PCSC-E301" for d in json.loads(out)["diagnostics"]) == 150
    assert main(["check", "--max-diagnostics", "-1", str(path)]) == 2


# ---------------------------------------------------------------------- the documentation

OUTPUT_PAGE = ROOT / "docs" / "output.md"


def test_the_output_page_runs_as_written(tmp_path: Path) -> None:
    steps = docrun.steps(OUTPUT_PAGE.read_text(encoding="utf-8"))
    assert sum(s.kind == "command" for s in steps) == 2
    for step in steps:
        if step.kind == "file":
            (tmp_path / step.path).write_text(step.text, encoding="utf-8")
        else:
            assert step.command is not None
            docrun.check_command(step.command, tmp_path)


def test_the_pages_state_the_limits_the_code_has() -> None:
    from pcsc.base.files import MAX_FILE_BYTES
    from pcsc.cli.options import MAX_DIAGNOSTICS
    from pcsc.lang.syntax.limits import MAX_DEPTH, MAX_ROUTES, MAX_TRANSITIONS
    from pcsc.render.diagnostics import _BEFORE, MESSAGE, SNIPPET

    page = " ".join(OUTPUT_PAGE.read_text(encoding="utf-8").split())
    for claim in (
        f"Standard error shows at most {MAX_DIAGNOSTICS} diagnostics",
        f"A source line longer than {SNIPPET + SNIPPET // 5} characters is shown as the {SNIPPET} characters",
        f"longer than {MESSAGE:,} characters is cut there",
        f"## Lines of at most {MAX_LINE:,} characters",
        f"longer than {MAX_LINE:,} characters is refused before it is lexed",
        f"up to the limit of {MAX_TRANSITIONS:,} transitions",
    ):
        assert claim in page, claim
    assert 0 < _BEFORE < SNIPPET
    cli = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert f"`--max-diagnostics N` prints at most N diagnostics on standard error (default {MAX_DIAGNOSTICS};" in cli
    limits = dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| PCSC-E[12]\d\d \|$",
                             (ROOT / "docs" / "language.md").read_text(encoding="utf-8"), re.M))
    assert limits["operators nested in one expression (parentheses alone do not count)"] == str(MAX_DEPTH)
    assert limits["size of a route or library file"] == f"10 MB ({MAX_FILE_BYTES:,} bytes)"
    assert limits["characters in one line (refused before it is lexed)"] == f"{MAX_LINE:,}"
    assert limits["transitions in one route"] == f"{MAX_TRANSITIONS:,}"
    assert limits["routes in one file"] == f"{MAX_ROUTES:,}"
