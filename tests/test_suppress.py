"""Suppressing warnings: `# pcsc: ignore[CODE]` on a line, `ignore`/`select` in the
configuration; errors cannot be suppressed, and every suppression is recorded
(docs/cli.md, "Configuration"). And `pcsc rule CODE`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pcsc.analysis.seams.splice import splice_text
from pcsc.compiler.session import Session
from pcsc.render import schemas
from tests.conftest import ROOT, SPEC_ROUTE, run_cli
from tests.test_sarif import assert_valid_sarif

ROUTE = "examples/spliced.route"
# --coverage off: the splice's uncovered changes are no errors, its two unused evidence
# items (PCSC-W604) are the only diagnostics
OFF = ("--lib-path", "obligations", "--coverage", "off")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    [route] = Session().load_routes(SPEC_ROUTE, "examples/devtools_api.route")
    (tmp_path / "examples").mkdir()
    (tmp_path / ROUTE).write_text(splice_text(route, 1), encoding="utf-8")
    shutil.copytree(ROOT / "obligations", tmp_path / "obligations")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edit_line(path: Path, needle: str, tail: str) -> int:
    """Append ``tail`` to the line holding ``needle``; its number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    [n] = [i for i, line in enumerate(lines) if needle in line]
    lines[n] += tail
    path.write_text("\n".join(lines), encoding="utf-8")
    return n + 1


def json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code, out, _ = run_cli(capsys, *argv, "--format", "json")
    doc: dict[str, object] = json.loads(out)
    schemas.validate(doc)  # `suppressed` as its kind's schema describes it
    return code, doc


def codes(doc: dict[str, object]) -> list[str]:
    return [d["code"] for d in doc["diagnostics"]]  # type: ignore[attr-defined]


def test_both_warnings_are_there_without_a_suppression(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = json_run(capsys, "check", ROUTE, *OFF)
    assert code == 0 and codes(doc) == ["PCSC-W604", "PCSC-W604"] and "suppressed" not in doc


def test_a_comment_suppresses_the_warning_on_its_line_only(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = edit_line(project / ROUTE, "evidence pricing_survey", "  # pcsc: ignore[W604]")
    code, out, err = run_cli(capsys, "check", ROUTE, *OFF)
    assert code == 0 and "pricing_survey" not in err and "price_war" in err
    assert "note: 1 warning suppressed" in err
    code, doc = json_run(capsys, "check", ROUTE, *OFF)
    assert codes(doc) == ["PCSC-W604"]
    [record] = doc["suppressed"]  # type: ignore[misc]
    assert record["code"] == "PCSC-W604" and record["line"] == line and record["by"] == "comment"
    assert record["config"] is None and "pricing_survey" in record["message"]


def test_the_configuration_ignores_or_selects_warnings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pcsc.toml").write_text('ignore = ["W6"]\n', encoding="utf-8")
    code, doc = json_run(capsys, "check", ROUTE, *OFF)
    assert code == 0 and codes(doc) == []
    assert [(s["by"], s["config"]) for s in doc["suppressed"]] == [  # type: ignore[attr-defined]
        ("ignore", "pcsc.toml")] * 2  # as the run shows paths: relative to where it runs
    (project / "pcsc.toml").write_text('select = ["PCSC-W7"]\n', encoding="utf-8")
    code, doc = json_run(capsys, "check", ROUTE, *OFF)
    assert codes(doc) == [] and {s["by"] for s in doc["suppressed"]} == {"select"}  # type: ignore[attr-defined]
    (project / "pcsc.toml").write_text('select = ["W604"]\n', encoding="utf-8")
    code, doc = json_run(capsys, "check", ROUTE, *OFF)
    assert codes(doc) == ["PCSC-W604", "PCSC-W604"] and "suppressed" not in doc


@pytest.mark.parametrize("entry", ["E501", "PCSC-E4", "E"])
def test_the_configuration_cannot_ignore_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], entry: str
) -> None:
    (project / "pcsc.toml").write_text(f'ignore = ["{entry}"]\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "check", ROUTE, "--lib-path", "obligations")
    assert code == 1 and "PCSC-E407" in err and "an error decides a number or a verdict" in err, err


@pytest.mark.parametrize("entry", ["W999", "nonsense"])
def test_the_configuration_refuses_what_names_no_code(
    project: Path, capsys: pytest.CaptureFixture[str], entry: str
) -> None:
    (project / "pcsc.toml").write_text(f'select = ["{entry}"]\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "check", ROUTE, *OFF)
    assert code == 1 and "PCSC-E407" in err and "`select`" in err, err


def test_a_comment_naming_an_error_leaves_it_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PCSC-W609: the error stays, and a warning says why the comment cannot apply."""
    line = edit_line(project / ROUTE, "transition launch:", "  # pcsc: ignore[E501]")
    code, doc = json_run(capsys, "gate", ROUTE, "--lib-path", "obligations")
    assert code == 3
    code, doc = json_run(capsys, "check", ROUTE, "--lib-path", "obligations")
    assert code == 1 and codes(doc).count("PCSC-E501") == 3 and "suppressed" not in doc
    [w609] = [d for d in doc["diagnostics"] if d["code"] == "PCSC-W609"]  # type: ignore[attr-defined]
    assert w609["line"] == line and "PCSC-E501 is an error" in w609["message"]


def test_a_comment_naming_no_code_is_a_warning(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = edit_line(project / ROUTE, "evidence pricing_survey", "  # pcsc: ignore[W999]")
    code, doc = json_run(capsys, "check", ROUTE, *OFF)
    assert code == 0 and sorted(codes(doc)) == ["PCSC-W604", "PCSC-W604", "PCSC-W609"]
    [w609] = [d for d in doc["diagnostics"] if d["code"] == "PCSC-W609"]  # type: ignore[attr-defined]
    assert w609["line"] == line and "`W999` names no diagnostic code" in w609["message"]


def test_sarif_keeps_a_suppressed_warning_as_a_suppressed_result(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_line(project / ROUTE, "evidence pricing_survey", "  # pcsc: ignore[W604]")
    (project / "pcsc.toml").write_text('ignore = ["W604"]\n', encoding="utf-8")
    code, out, _ = run_cli(capsys, "gate", ROUTE, "--lib-path", "obligations", "--format", "sarif")
    log = json.loads(out)
    assert_valid_sarif(log)
    results = [r for r in log["runs"][0]["results"] if r["ruleId"] == "PCSC-W604"]
    assert sorted(s["kind"] for r in results for s in r["suppressions"]) == ["external", "inSource"]
    code, out, _ = run_cli(capsys, "gate", ROUTE, "--lib-path", "obligations", "--format", "github")
    assert "PCSC-W604" not in out and out.count("::error ") == 3


def test_rule_prints_a_codes_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "rule", "w604")
    assert code == 0 and out.startswith("PCSC-W604: evidence supports or contradicts nothing\n")
    assert "can be suppressed" in out and "supports or contradicts no transition" in out
    assert "docs/diagnostics.md#pcsc-w604" in out
    anchors = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert '<a id="pcsc-w604"></a>' in anchors
    code, out, _ = run_cli(capsys, "rule", "PCSC-E501", "--format", "json")
    doc = json.loads(out)
    assert (doc["severity"], doc["suppressible"]) == ("error", False) and doc["messages"]
    code, _, err = run_cli(capsys, "rule", "W998")
    assert code == 2 and "no diagnostic code" in err
