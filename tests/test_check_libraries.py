"""`pcsc check` on an `.obl` file checks it as a library (as a route's `uses` loads it,
and as the language server checks an open one), never as a route: no PCSC-E220; a
folder's libraries are checked beside its routes, whose results do not change."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pcsc.lsp.analysis import analyse
from tests.conftest import ROOT, SPEC_ROUTE, run_cli
from tests.test_sarif import assert_valid_sarif

SHIPPED = sorted((ROOT / "obligations").glob("*.obl"))
OBL = (ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8")
#: venture.obl with an unknown field in a `covers` (PCSC-E205 at the obligation) and a
#: misspelt requirement (PCSC-E217 at it), as the language server's test breaks it
BROKEN = (OBL.replace("library venture", "library extra", 1)
          .replace("require kill\n    require measured", "require kil\n    require measured", 1)
          .replace("covers developers {", "covers developers, nosuch {", 1))


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` that is ``needle`` or starts with it (the only one)."""
    [at] = [i for i, line in enumerate(text.splitlines(), 1) if (line.strip() + " ").startswith(needle + " ")]
    return at


EXPECTED = [("PCSC-E205", line_of(BROKEN, "obligation adoption")), ("PCSC-E217", line_of(BROKEN, "require kil"))]


@pytest.mark.parametrize("library", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_library_checks_clean_in_text_and_json(
    library: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    shown = f"obligations/{library.name}"
    code, out, err = run_cli(capsys, "check", shown)
    assert code == 0 and "PCSC-E" not in out + err
    assert "ok: 1 library checked" in out + err
    code, out, _ = run_cli(capsys, "check", shown, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["diagnostics"] == [] and doc["schema"]["kind"] == "check"
    assert [i["path"] for i in doc["inputs"]] == [shown]


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "extra.obl").write_text(BROKEN, encoding="utf-8")
    return tmp_path / "extra.obl"


def test_a_broken_library_gives_the_library_codes_at_their_lines(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "check", "extra.obl", "--format", "json")
    found = json.loads(out)["diagnostics"]
    assert code == 1
    assert sorted((d["code"], d["line"]) for d in found) == EXPECTED
    assert all(d["file"] == "extra.obl" for d in found)
    # the language server reports the same, from the same check
    lsp = analyse(BROKEN, broken).diagnostics
    assert sorted((d.code, d.span.line) for d in lsp) == EXPECTED
    code, out, err = run_cli(capsys, "check", "extra.obl")
    assert code == 1 and "PCSC-E220" not in out + err
    assert f"extra.obl:{EXPECTED[0][1]}:" in out + err and "[PCSC-E217]" in out + err


def test_a_broken_library_in_every_format(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", "extra.obl", "--format", "sarif")
    assert code == 1
    log = json.loads(out)
    assert_valid_sarif(log)
    results = log["runs"][0]["results"]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
                  for r in results) == EXPECTED
    code, out, _ = run_cli(capsys, "check", "extra.obl", "--format", "github")
    assert code == 1
    assert sorted(line.split(",title=")[1].split("::")[0] for line in out.splitlines()) == ["PCSC-E205", "PCSC-E217"]
    assert all(line.startswith("::error file=extra.obl,line=") for line in out.splitlines())
    code, out, _ = run_cli(capsys, "check", "extra.obl", "--format", "junit")
    assert code == 1
    [suite] = ET.fromstring(out).findall("testsuite")
    [case] = suite.findall("testcase")
    assert case.get("name") == "extra.obl" and suite.get("failures") == "1"
    failure = case.find("failure")
    assert failure is not None and failure.text is not None and "[PCSC-E217]" in failure.text


def _route_results(out: str) -> list[tuple[str, str, int]]:
    return sorted((d["code"], d["file"], d["line"]) for d in json.loads(out)["diagnostics"]
                  if d["file"].endswith(".route"))


def test_a_folder_of_routes_and_libraries_keeps_its_route_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cohort").mkdir()
    shutil.copy(SPEC_ROUTE, tmp_path / "cohort" / "good.route")
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    (tmp_path / "cohort" / "typo.route").write_text(text.replace("discharges", "discharge", 1), encoding="utf-8")
    code, before, _ = run_cli(capsys, "check", "cohort", "--format", "json")
    routes_only = _route_results(before)
    assert code == 1 and routes_only  # the typo is a route error
    (tmp_path / "cohort" / "libs").mkdir()
    (tmp_path / "cohort" / "libs" / "extra.obl").write_text(BROKEN, encoding="utf-8")
    code, after, _ = run_cli(capsys, "check", "cohort", "--format", "json")
    assert code == 1 and _route_results(after) == routes_only
    found = json.loads(after)["diagnostics"]
    assert sorted((d["code"], d["line"]) for d in found if d["file"].endswith(".obl")) == EXPECTED
    assert {i["path"] for i in json.loads(after)["inputs"]} >= {
        "cohort/good.route", "cohort/typo.route", "cohort/libs/extra.obl"}
    code, in_workers, _ = run_cli(capsys, "check", "cohort", "--format", "json", "--jobs", "2")
    assert code == 1 and json.loads(in_workers)["diagnostics"] == found  # the routes in workers, the library here
    # a clean library adds nothing; the note counts both kinds
    (tmp_path / "cohort" / "typo.route").unlink()
    (tmp_path / "cohort" / "libs" / "extra.obl").write_text(OBL.replace("library venture", "library extra"),
                                                            encoding="utf-8")
    code, out, err = run_cli(capsys, "check", "cohort")
    assert code == 0 and "ok: 1 route and 1 library checked" in out + err


def test_a_folder_of_libraries_only_is_checked_and_an_empty_one_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "obligations", tmp_path / "libs")
    code, out, err = run_cli(capsys, "check", "libs")
    assert code == 0 and f"ok: {len(SHIPPED)} libraries checked" in out + err
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli(capsys, "check", "empty")
    assert code == 1 and "PCSC-E106" in out + err
