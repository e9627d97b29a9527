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
    code, out, _ = pcsc(capsys, command, "examples/", "--format", "junit", "-o", "report.xml")
    assert code == exit_code and not out  # -o: the report goes to the file, for the CI's test view
    root = ET.parse(spliced / "report.xml").getroot()
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


class _Lines:
    """What a child process writes on a pipe, read as it comes (no buffering in between:
    a buffered reader would hold lines that `select` then never reports)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.unread = fd, ""

    def until(self, marker: str, deadline: float) -> str:
        """Everything up to and including the first line that holds ``marker``."""
        import os
        import select
        import time

        while marker not in self.unread or not self.unread.split(marker, 1)[1].count("\n"):
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} in time; read {self.unread!r}"
            if select.select([self.fd], [], [], left)[0]:
                chunk = os.read(self.fd, 65536)
                assert chunk, f"the stream ended; read {self.unread!r}"
                self.unread += chunk.decode("utf-8")
        head, tail = self.unread.split(marker, 1)
        line_end = tail.index("\n") + 1
        self.unread = tail[line_end:]
        return head + marker + tail[:line_end]


def test_watch_checks_again_after_each_change_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    route = tmp_path / "r.route"

    def save(text: str) -> None:  # as editors save: a new file moved over the old one
        (tmp_path / "r.tmp").write_text(text, encoding="utf-8")
        (tmp_path / "r.tmp").replace(route)

    save(SPEC_ROUTE.read_text(encoding="utf-8"))
    # A run started in the background (`cmd &`) inherits SIGINT ignored, and Python then never
    # raises KeyboardInterrupt: give the watcher the default that a terminal's Ctrl-C meets.
    proc = subprocess.Popen([sys.executable, "-m", "pcsc", "check", "--watch", "r.route"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 90
        assert proc.stderr is not None
        err = _Lines(proc.stderr.fileno())
        first = err.until("watching", deadline)
        assert "ok: 1 route checked" in first and "error" not in first, first
        save(route.read_text(encoding="utf-8").replace("launch: garage", "launch: garag", 1))
        second = err.until("watching", deadline)
        assert "a file changed" in second and "PCSC-E201" in second, second
        save(SPEC_ROUTE.read_text(encoding="utf-8"))
        third = err.until("watching", deadline)
        assert "ok: 1 route checked" in third and "PCSC-E201" not in third, third
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()  # type: ignore[union-attr]
