"""Clean output: control characters from inputs never reach a terminal raw, and no CSV
cell PCSC writes is a formula.

The attacks: ESC and BEL in a route's title and strings and in a file's name (a
terminal retitles its window, clears the screen, rings), a right-to-left override that
makes a line display in another order, and a file name a spreadsheet evaluates in
`ledger export`'s CSV. `pcsc.base.escape.escape_controls` is the one function every text
output goes through; JSON keeps the characters as JSON escapes (the same string when
read back); `pcsc.forecast.export.spreadsheet_safe` neutralises CSV cells."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from pcsc.base.escape import escape_controls
from pcsc.cli import main
from pcsc.forecast.export import spreadsheet_safe
from tests.conftest import EXAMPLES, run_cli

BASE = (EXAMPLES / "log_search.route").read_text(encoding="utf-8")
TITLE = "Hosted \x1b]0;owned\x07 log \u202esearch\x9b2J \x7f"
#: what a terminal obeys: C0 but tab and line feed, DEL, C1, bidi overrides and isolates
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The log-search route with control characters in its title, a mechanism and a
    comment, in a file whose name holds ESC and BEL."""
    monkeypatch.chdir(tmp_path)
    text = BASE.replace('"Hosted log search for small teams"', f'"{TITLE}"', 1)
    text = text.replace('mechanism  "one-line install', 'mechanism  "\x1b[2Jone-line install', 1)
    text = text.replace("        kill       developers < 200\n", "        kill       developers < 200  # \x1b[8m\n", 1)
    path = tmp_path / "log\x1b]0;owned\x07.route"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_escape_is_visible_and_json_escapes_read_back() -> None:
    assert escape_controls("a\x1b[2Jb\x07\tc\n\u202ed\x9b\x7f") == "a\\x1b[2Jb\\x07\tc\n\\u202ed\\x9b\\x7f"
    assert escape_controls("plain ünïcode, \u200f marks stay") == "plain ünïcode, \u200f marks stay"
    encoded = escape_controls(json.dumps({"t": TITLE}, ensure_ascii=False), json=True)
    assert not RAW.search(encoded) and json.loads(encoded) == {"t": TITLE}


TEXT_COMMANDS = [
    ["check"], ["compile"], ["explain"], ["seams"], ["gate"], ["rank"], ["sensitivity"], ["redteam"],
    ["graph", "--format", "dot"], ["graph", "--format", "mermaid"], ["graph", "--format", "svg"], ["report"],
    ["stability", "--draws", "20"], ["compile", "--emit", "ir"],
]


@pytest.mark.parametrize("command", TEXT_COMMANDS, ids=lambda c: " ".join(c))
def test_no_text_output_carries_a_control_character(
    route: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, err = run_cli(capsys, *command, route.name)
    assert code == 0, err
    assert not RAW.search(out), RAW.findall(out)
    assert not RAW.search(err), RAW.findall(err)
    assert "PCSC-W620" in err  # check says what it escaped
    shown = escape_controls(TITLE)
    if command[:3] == ["graph", "--format", "dot"]:
        assert shown.replace("\\", "\\\\") in out  # a DOT string doubles the backslash: Graphviz shows one
    elif command[0] in ("compile", "graph", "report") and command[-1] != "ir":
        assert shown in out  # the title, escaped


@pytest.mark.parametrize("command", [["compile"], ["gate"], ["check"], ["seams"]], ids=lambda c: c[0])
def test_json_keeps_the_text_as_json_escapes(
    route: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, _ = run_cli(capsys, *command, "--format", "json", route.name)
    assert code == 0
    assert not RAW.search(out)
    doc = json.loads(out)
    assert doc["inputs"][0]["path"] == route.name  # the file name, whole
    if command[0] == "compile":
        assert doc["routes"][0]["title"] == TITLE


def test_a_diagnostic_escapes_its_file_name_message_and_snippet(
    route: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = route.read_text(encoding="utf-8").replace("developers < 200  # \x1b[8m", "developers < 200 usd  # \x1b[8m")
    route.write_text(text, encoding="utf-8")
    code, _, err = run_cli(capsys, "check", ".")  # a folder: the name comes from the walk
    assert code == 1 and not RAW.search(err)
    lines = err.splitlines()
    i = next(i for i, line in enumerate(lines) if "[PCSC-E301]" in line)
    assert lines[i].startswith("log\\x1b]0;owned\\x07.route:30:")
    source, caret = lines[i + 1], lines[i + 2]
    assert source.endswith("developers < 200 usd  # \\x1b[8m")
    assert source[caret.index("^") :].startswith("200 usd")
    w620 = next(i for i, line in enumerate(lines) if "[PCSC-W620]" in line and ":30:" in line)
    assert lines[w620 + 2].strip() == "^~~~"  # the caret spans the escape, four characters


def test_a_usage_error_escapes_what_the_user_typed(route: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "explain", "--route", "x\x1b]0;owned\x07", route.name)
    assert code == 2 and not RAW.search(err) and "x\\x1b]0;owned\\x07" in err
    code, _, err = run_cli(capsys, "check", "--format", "\x1b[2J", route.name)  # argparse's own message
    assert code == 2 and not RAW.search(err) and "\\x1b[2J" in err
    code, _, err = run_cli(capsys, "compile", route.name, "-o", "out\x07/")  # an output that cannot be written
    assert code == 1 and not RAW.search(err) and "out\\x07/: error: cannot write the output" in err


def test_file_content_goes_to_a_pipe_as_written_and_to_a_terminal_escaped(
    route: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pcsc fmt -` prints a route: byte for byte into a pipe or a file (nothing a user
    wrote is changed), escaped on a terminal."""
    import io

    text = route.read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    code, out, _ = run_cli(capsys, "fmt", "-")
    assert code == 0 and TITLE in out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run_cli(capsys, "fmt", "-")
    assert code == 0 and not RAW.search(out) and escape_controls(TITLE) in out


# ---------------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    ("cell", "safe"),
    [
        ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-215144.82", "-215144.82"),  # a number stays a number
        ("+1.5e-07", "+1.5e-07"),
        ("devtools_api", "devtools_api"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_a_cell_a_spreadsheet_would_evaluate_is_neutralised(cell: str, safe: str) -> None:
    assert spreadsheet_safe(cell) == safe


def test_ledger_export_neutralises_a_file_name_and_keeps_the_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import csv
    import io

    monkeypatch.chdir(tmp_path)
    name = "=2+5+cmd|' -c calc'!A0.route"
    (tmp_path / name).write_text(BASE, encoding="utf-8")
    (tmp_path / "-9.route").write_text(BASE.replace("route log_search", "route rival"), encoding="utf-8")
    assert main(["freeze", "--ledger", "l.sqlite", "-q", "--", name, "-9.route"]) == 0
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "ledger", "export", "--ledger", "l.sqlite", "--as-of", "2030-01-01")
    assert code == 0
    rows = {r["route"]: r for r in csv.DictReader(io.StringIO(out))}
    assert rows["log_search"]["file"] == "'" + name
    assert rows["rival"]["file"] == "'-9.route"  # not a number: a file name
    assert float(rows["log_search"]["score"]) == float(rows["rival"]["score"]) > 0
    code, out, _ = run_cli(capsys, "ledger", "export", "--ledger", "l.sqlite", "--as-of", "2030-01-01",
                           "--format", "jsonl")
    assert {json.loads(line)["file"] for line in out.splitlines()} == {name, "-9.route"}  # JSON: as written
