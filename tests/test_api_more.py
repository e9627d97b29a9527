"""The public API's explain, sensitivity, redteam, fmt and report (docs/api.md): each
result's `to_json()` is the document `pcsc <command> --format json` prints for the same
input (run in this process), the report is the page `pcsc report` writes, and bad input
comes back as diagnostics."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import pcsc
from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.usefixtures("at_root")

ROUTE = "examples/devtools_api.route"


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code, out, _ = run_cli(capsys, *argv, "--format", "json")
    document: dict[str, object] = json.loads(out)
    return code, document


@pytest.mark.parametrize("route", [ROUTE, "examples/log_search.route"])
def test_explain_is_the_cli_document(capsys: pytest.CaptureFixture[str], route: str) -> None:
    r = pcsc.explain(route)
    code, cli = _cli_json(capsys, "explain", route)
    assert r.to_json() == cli and r.exit_code == code == 0 and r.ok
    assert r.data is not None and r.data["explain"]["route"] == Path(route).stem
    assert r.text is not None and r.text.startswith(f"route {Path(route).stem} under policy ")


def test_sensitivity_is_the_cli_document(capsys: pytest.CaptureFixture[str]) -> None:
    r = pcsc.sensitivity(ROUTE)
    code, cli = _cli_json(capsys, "sensitivity", ROUTE)
    assert r.to_json() == cli and r.exit_code == code == 0
    assert r.data is not None and r.data["sensitivity"]["route"] == "devtools_api"


def test_sensitivity_with_rivals_is_the_cli_document(capsys: pytest.CaptureFixture[str]) -> None:
    r = pcsc.sensitivity(ROUTE, rivals=["examples/log_search.route", ROUTE])
    _, cli = _cli_json(capsys, "sensitivity", ROUTE, "--rivals", "examples/log_search.route", ROUTE)
    assert r.to_json() == cli
    assert r.to_json() != pcsc.sensitivity(ROUTE).to_json()  # the rival counts in the ranks


def test_redteam_is_the_cli_document(capsys: pytest.CaptureFixture[str]) -> None:
    r = pcsc.redteam(ROUTE, max_edits=20, depth=2, reclass="category")
    code, cli = _cli_json(capsys, "redteam", ROUTE, "--max-edits", "20", "--depth", "2", "--reclass", "category")
    assert r.to_json() == cli and r.exit_code == code == 0
    assert r.data is not None and r.data["settings"] == cli["settings"]
    assert [x["route"] for x in r.data["routes"]] == ["devtools_api"]


def test_redteam_of_one_route_of_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    r = pcsc.redteam("examples/", route="log_search", max_edits=5)
    _, cli = _cli_json(capsys, "redteam", "examples/", "--route", "log_search", "--max-edits", "5")
    assert r.to_json() == cli
    assert r.data is not None and [x["route"] for x in r.data["routes"]] == ["log_search"]


def test_report_is_the_page_the_cli_writes(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("jinja2")
    r = pcsc.report(["examples/devtools_api.route", "examples/log_search.route"])
    code, out, _ = run_cli(capsys, "report", "examples/devtools_api.route", "examples/log_search.route")
    assert r.html is not None and r.html.startswith("<!DOCTYPE html>") and "log_search" in r.html
    assert r.html == out  # the same bytes
    assert r.exit_code == code == 0 and r.ok


def test_fmt_of_files_is_the_cli_check_document(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    messy = tmp_path / "messy.route"
    messy.write_text((ROOT / ROUTE).read_text(encoding="utf-8").replace("\n\n", "\n\n\n"), encoding="utf-8")
    shutil.copy(ROOT / ROUTE, tmp_path / "clean.route")
    before = messy.read_bytes()
    r = pcsc.fmt(tmp_path)
    code, cli = _cli_json(capsys, "fmt", "--check", str(tmp_path))
    assert r.to_json() == cli and r.exit_code == code == 1
    assert {Path(f.path).name: f.status for f in r.files} == {"clean.route": "unchanged",
                                                              "messy.route": "changed"}
    assert messy.read_bytes() == before  # the API writes nothing
    fixed = next(f for f in r.files if f.path.endswith("messy.route"))
    assert fixed.text == (ROOT / ROUTE).read_text(encoding="utf-8")


def test_fmt_of_text(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    text = (ROOT / ROUTE).read_text(encoding="utf-8")
    messy = text.replace("\n\n", "\n\n\n")
    r = pcsc.fmt(messy)
    monkeypatch.setattr("sys.stdin", io.StringIO(messy))
    code, cli = _cli_json(capsys, "fmt", "--check", "-")
    as_text = json.loads(json.dumps(cli).replace('"<stdin>"', '"<string>"'))  # text is shown as <string>
    assert r.to_json() == as_text != cli and code == r.exit_code == 1
    assert [(f.path, f.status, f.text) for f in r.files] == [("<string>", "changed", text)]
    assert pcsc.fmt(text).exit_code == 0 and not pcsc.fmt(text).changed


# ---------------------------------------------------------------------- bad input
def test_bad_input_is_diagnostics_not_exceptions(capsys: pytest.CaptureFixture[str]) -> None:
    for call, kind in ((pcsc.explain, "explain"), (pcsc.sensitivity, "sensitivity")):
        r = call("no/such.route")
        code, cli = _cli_json(capsys, kind, "no/such.route")
        assert r.to_json() == cli and r.data is None and r.text is None
        assert r.exit_code == code == 1 and [d.code for d in r.diagnostics] == ["PCSC-E105"]
    broken = "route x {\n  nonsense\n"
    for result in (pcsc.explain(broken), pcsc.redteam(broken), pcsc.fmt(broken)):
        assert not result.ok and result.exit_code == 1
        assert all(d.file == "<string>" and d.line >= 1 for d in result.diagnostics)
    r = pcsc.report("no/such.route")
    assert r.html is None and [d.code for d in r.diagnostics] == ["PCSC-E105", "PCSC-E751"]
    assert str(r.diagnostics[1]).startswith("no/such.route: error: nothing to report")


def test_programming_errors_raise() -> None:
    with pytest.raises(ValueError, match="several routes"):
        pcsc.explain("examples/")
    with pytest.raises(ValueError, match="no route 'nope'"):
        pcsc.sensitivity(ROUTE, route="nope")
    with pytest.raises(ValueError, match="max_edits"):
        pcsc.redteam(ROUTE, max_edits=0)
    with pytest.raises(TypeError):
        pcsc.fmt(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- schemas
def test_schemas_is_public_and_validates_the_results() -> None:
    from pcsc import schemas

    assert schemas is pcsc.schemas and "schemas" in pcsc.__all__
    assert schemas.load("explain")["$id"] == "urn:pcsc:schema:explain.v1"
    pytest.importorskip("jsonschema")
    for r in (pcsc.explain(ROUTE), pcsc.sensitivity(ROUTE), pcsc.fmt(ROUTE), pcsc.redteam(ROUTE, max_edits=5)):
        schemas.validate(r.to_json())


def test_fmt_of_a_library_file_and_its_text(capsys: pytest.CaptureFixture[str]) -> None:
    messy = "tests/data/fmt/messy.in.obl"
    r = pcsc.fmt(messy)
    _, cli = _cli_json(capsys, "fmt", "--check", messy)
    assert r.to_json() == cli
    canonical = (ROOT / "tests/data/fmt/messy.out.obl").read_text(encoding="utf-8")
    assert [(f.status, f.text) for f in r.files] == [("changed", canonical)]
    assert pcsc.fmt((ROOT / messy).read_text(encoding="utf-8")).files[0].text == canonical  # told a library by its text
