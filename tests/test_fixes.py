"""`pcsc check --fix`: the "did you mean" fixes, safe ones by default, the others with
`--unsafe-fixes` (docs/cli.md, "Coverage at `pcsc check`")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pcsc.analysis.fixes import SAFE, apply_fixes, fix_for
from pcsc.diagnostics.model import Finding, Span
from pcsc.render import schemas
from tests.conftest import ROOT, run_cli

FIXTURES = ROOT / "tests" / "data" / "diagnostics"
DID_YOU_MEAN = ["unknown_names.route", "syntax_misspelt_keyword.route"]


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in DID_YOU_MEAN:
        shutil.copy(FIXTURES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def error_codes(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    _, out, _ = run_cli(capsys, "check", *argv, "--format", "json")
    return sorted(d["code"] for d in json.loads(out)["diagnostics"] if d["severity"] == "error")


def test_the_fixtures_propose_fixes_before(copies: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert {"PCSC-E101", "PCSC-E201", "PCSC-E205", "PCSC-E207"} <= set(error_codes(capsys, *DID_YOU_MEAN))


def test_fix_applies_the_safe_fixes_only(copies: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--fix", *DID_YOU_MEAN, "--format", "json")
    doc = json.loads(out)
    schemas.validate(doc)
    assert code == 1 and len(doc["fixed"]) == 4
    assert all(f"[{c}]" in " ".join(doc["fixed"]) for c in ("PCSC-E101", "PCSC-E201", "PCSC-E202", "PCSC-E204"))
    text = (copies / "unknown_names.route").read_text(encoding="utf-8")
    assert "transition onboard: start -> pilot" in text and "discharges adoption" in text
    assert '"devtools/first-user"' in text and "teem    70" in text  # numbers' sources: left as written
    left = error_codes(capsys, *DID_YOU_MEAN)
    assert {"PCSC-E101", "PCSC-E201", "PCSC-E202", "PCSC-E204"}.isdisjoint(left)
    assert {"PCSC-E205", "PCSC-E207", "PCSC-E208"} <= set(left)
    code, _, err = run_cli(capsys, "check", "--fix", *DID_YOU_MEAN)
    assert "4 more fixes could change a number: --unsafe-fixes applies them" in err, err


def test_unsafe_fixes_leave_files_that_check_clean_of_every_misspelling(
    copies: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "check", "--fix", "--unsafe-fixes", *DID_YOU_MEAN)
    assert err.count("fixed ") == 8, err
    # what is left are the uncovered changes the fixtures hold on purpose
    assert set(error_codes(capsys, *DID_YOU_MEAN)) == {"PCSC-E501"}
    code, _, err = run_cli(capsys, "check", *DID_YOU_MEAN, "--coverage", "off")
    assert code == 0, err


def test_no_fix_without_a_suggestion_or_a_place() -> None:
    line = "    transition onboard: strat -> pilot {"
    at = line.index("strat") + 1
    d = Finding("PCSC-E201", "unknown state `strat`", Span("r.route", 1, at, 1, at + 5), "did you mean `start`?")
    fix = fix_for(d, line)
    assert fix is not None and fix.safe and apply_fixes(line, [fix])[0] == line.replace("strat", "start")
    assert fix_for(Finding("PCSC-E201", "unknown state `strat`", d.span, None), line) is None
    assert fix_for(Finding("PCSC-E201", "unknown state `other`", d.span, d.help), line) is None
    assert "PCSC-E207" not in SAFE and "PCSC-E205" not in SAFE


def test_fix_refuses_standard_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", "--fix", "-")
    assert code == 2 and "cannot fix standard input" in err
    code, _, err = run_cli(capsys, "check", "--unsafe-fixes", "x.route")
    assert code == 2 and "--unsafe-fixes goes with --fix" in err
