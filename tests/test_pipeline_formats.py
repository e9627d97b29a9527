"""`--format junit` and `--format github` for `check` and `gate`, SARIF's fingerprints
and invocations, and one rule id per fact (docs/pipelines.md)."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pcsc.analysis.seams.splice import splice_text
from pcsc.compiler.session import Session
from pcsc.render.pipeline import escape_data, escape_property, github_annotations
from tests.conftest import ROOT, SPEC_ROUTE, run_cli
from tests.test_sarif import assert_valid_sarif


@pytest.fixture
def spliced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The reference route with seam 1 deleted (GATE refuses it: three uncovered changes
    on `launch`, two unused evidence items), in a project folder pcsc runs in."""
    [route] = Session().load_routes(SPEC_ROUTE, "examples/devtools_api.route")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "spliced.route").write_text(splice_text(route, 1), encoding="utf-8")
    shutil.copytree(ROOT / "obligations", tmp_path / "obligations")
    (tmp_path / "examples" / "clean.route").write_text(SPEC_ROUTE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def pcsc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, *argv, "--lib-path", "obligations")


@pytest.mark.parametrize(("command", "exit_code"), [("check", 1), ("gate", 3)])
def test_junit_has_a_case_per_file_failing_where_errors_are(
    spliced: Path, capsys: pytest.CaptureFixture[str], command: str, exit_code: int
) -> None:
    code, out, _ = pcsc(capsys, command, "examples/", "--format", "junit")
    assert code == exit_code
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    [suite] = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"examples/spliced.route", "examples/clean.route"}
    assert suite.get("tests") == "2" and suite.get("failures") == "1" and root.get("failures") == "1"
    [failure] = cases["examples/spliced.route"].findall("failure")
    assert failure.get("type") == "PCSC-E501" and failure.text is not None
    assert failure.text.count("[PCSC-E501]") == 3 and "examples/spliced.route:" in failure.text
    out_text = cases["examples/spliced.route"].findtext("system-out") or ""
    assert out_text.count("[PCSC-W604]") == 2
    assert cases["examples/clean.route"].find("failure") is None


@pytest.mark.parametrize(("command", "exit_code"), [("check", 1), ("gate", 3)])
def test_github_annotations_locate_each_finding(
    spliced: Path, capsys: pytest.CaptureFixture[str], command: str, exit_code: int
) -> None:
    code, out, _ = pcsc(capsys, command, "examples/spliced.route", "--format", "github")
    assert code == exit_code
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(errors) == 3 and len(warnings) == 2 and len(lines) == 5
    text = (spliced / "examples" / "spliced.route").read_text(encoding="utf-8").splitlines()
    launch = next(i for i, line in enumerate(text, 1) if "transition launch:" in line)
    col = text[launch - 1].index("launch") + 1
    assert all(e.startswith(f"::error file=examples/spliced.route,line={launch},col={col},") for e in errors)
    assert all(",title=PCSC-E501::" in e for e in errors)
    assert all("%0Ahelp: " in e and "\n" not in e for e in errors)  # the message's newline, escaped


def test_github_escaping_follows_the_toolkit() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    log = {"runs": [{"results": [{
        "ruleId": "PCSC-W604", "level": "warning", "message": {"text": "50%\nof it"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a%2Cb%3A.route", "uriBaseId": "%SRCROOT%"},
                                            "region": {"startLine": 2}}}]}]}]}
    assert github_annotations(log) == "::warning file=a%2Cb%3A.route,line=2,title=PCSC-W604::50%25%0Aof it\n"


def _sarif(capsys: pytest.CaptureFixture[str], command: str) -> dict[str, Any]:
    _, out, _ = pcsc(capsys, command, "examples/spliced.route", "--format", "sarif")
    log: dict[str, Any] = json.loads(out)
    assert_valid_sarif(log)
    return log


def test_check_and_gate_report_one_fact_under_one_rule_place_and_fingerprint(
    spliced: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def facts(log: dict[str, Any]) -> set[tuple[str, str, str]]:
        return {(r["ruleId"], json.dumps(r["locations"][0]["physicalLocation"], sort_keys=True),
                 r["partialFingerprints"]["pcsc/v1"]) for r in log["runs"][0]["results"]}

    check, gate = _sarif(capsys, "check"), _sarif(capsys, "gate")
    assert facts(check) == facts(gate) and len(facts(gate)) == 5
    prints = [r["partialFingerprints"]["pcsc/v1"] for r in gate["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)


def test_a_fingerprint_does_not_move_with_the_line(spliced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {r["partialFingerprints"]["pcsc/v1"] for r in _sarif(capsys, "gate")["runs"][0]["results"]}
    route = spliced / "examples" / "spliced.route"
    route.write_text("# a comment that moves every line down\n" + route.read_text(encoding="utf-8"), encoding="utf-8")
    log = _sarif(capsys, "gate")
    assert {r["partialFingerprints"]["pcsc/v1"] for r in log["runs"][0]["results"]} == before


def test_invocations_say_success_and_the_exit_code_and_nothing_else(
    spliced: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _sarif(capsys, "gate")["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 3}]
    assert _sarif(capsys, "check")["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_reading_a_cohort_shows_progress_on_a_terminal_only(spliced: Path, terminal: bool) -> None:
    from pcsc.base.config import Config
    from pcsc.cli.context import Context
    from pcsc.cli.main import command_parser
    from pcsc.cli.registry import find

    command = find(("check",))
    assert command is not None
    args = command_parser(command).parse_args(["examples/", "--lib-path", "obligations"])
    stderr = _Terminal() if terminal else io.StringIO()
    ctx = Context(args, Config(), stderr=stderr)
    ctx.load(args.files, bind=True, keep_routes=False)
    assert ctx.loaded_count == 2
    assert ("reading routes" in stderr.getvalue()) is terminal, stderr.getvalue()
