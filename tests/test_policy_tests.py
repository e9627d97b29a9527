"""`pcsc test`: policy tests run through the real pipeline; the shipped policies' own
tests pass; a wrong expectation fails naming it; JUnit XML; malformed test files are
path-addressed diagnostics."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pcsc.analysis.policy_tests import PolicyTestError, load_test_file
from pcsc.cli import main
from pcsc.policy.load import PolicyStore
from tests.conftest import EXAMPLES, ROOT, run_cli

SHIPPED = ROOT / "policies" / "venture" / "tests"
SPEC = (EXAMPLES / "devtools_api.route").as_posix()


def write(folder: Path, text: str, name: str = "t.pcsctest.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_policy_tests_pass(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "test", "policies/")
    assert code == 0, out + err
    assert sorted(p.name for p in SHIPPED.glob("*.pcsctest.toml")) == ["1.0.0.pcsctest.toml", "1.1.0.pcsctest.toml",
                                                                 "1.3.0.pcsctest.toml"]
    assert "FAIL" not in out and "0 failed, 0 could not run" in out
    code, out, _ = run_cli(capsys, "test", "--format", "json", "policies/")
    doc = json.loads(out)
    assert doc["schema"] == {"kind": "test", "version": 1}
    assert doc["ok"] is True and doc["summary"]["failed"] == 0
    assert doc["summary"]["cases"] >= 20
    cases = {c["name"]: c for f in doc["files"] for c in f["cases"]}
    refused = cases["deleting monetize from the reference route is refused"]
    assert refused["observed"]["verdict"] == "suspend-and-ask" and refused["splice"] == 1
    paths = {i["path"] for i in doc["inputs"]}
    assert "policies/venture/tests/1.0.0.pcsctest.toml" in paths and "examples/devtools_api.route" in paths


def test_policy_loader_ignores_the_tests_folder() -> None:
    shipped = ["cohort@1.0.0", "oss-impact@1.0.0", "oss-impact@1.1.0", "planner-discount@1.0.0",
               "planner-payoffs@1.0.0", "planner-stop@1.0.0", "planner@1.0.0", "product@1.0.0", "research-lab@1.0.0",
               "venture@1.0.0", "venture@1.1.0", "venture@1.3.0"]
    assert PolicyStore().available() == shipped
    assert main(["policy", "check", *shipped]) == 0


def test_the_wheel_carries_the_shipped_tests() -> None:
    # the wheel force-includes policies/ whole (pyproject.toml); the tests are in it
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"policies" = "pcsc/_data/policies"' in pyproject
    assert list(SHIPPED.glob("*.pcsctest.toml"))


def test_a_wrong_expectation_fails_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "venture" / "tests"
    shutil.copytree(SHIPPED, copy)
    shipped = copy / "1.0.0.pcsctest.toml"
    text = shipped.read_text(encoding="utf-8").replace("../../../examples/", (EXAMPLES.as_posix() + "/"))
    wrong = text.replace('expect.binding = "expand"', 'expect.binding = "launch"', 1)
    assert wrong != text
    shipped.write_text(wrong, encoding="utf-8")
    (copy / "1.1.0.pcsctest.toml").unlink()
    code, out, err = run_cli(capsys, "test", str(copy))
    assert code == 1
    assert "FAIL   the reference route is released, with its score, T, bucket and binding step" in out
    assert "expected binding launch, got expand" in out
    assert "1 failed" in out


def test_expectations_of_every_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        tmp_path,
        f"""
[defaults]
route = "{SPEC}"

[[case]]
name = "verdict"
expect.verdict = "suspend-and-ask"

[[case]]
name = "score"
expect.score = {{ min = 900_000 }}

[[case]]
name = "exact score"
expect.score = 885_626.17

[[case]]
name = "T"
expect.T = {{ max = 50 }}

[[case]]
name = "bucket"
expect.bucket = "neg"

[[case]]
name = "uncovered"
splice = 1
expect.uncovered = ["launch.developers"]

[[case]]
name = "withheld"
splice = 1
expect.score = {{ min = 0 }}

[[case]]
name = "policy override"
policy = "venture@1.1.0"
expect.verdict = "released"

[[case]]
name = "redteam"
expect.redteam_max_covered_gain = 0.10

[[case]]
name = "errors"
route = "{(EXAMPLES / 'cohort' / 'adherence_texts.route').as_posix()}"
policy = "venture@1.0.0"
expect.errors = ["PCSC-E207"]

[[case]]
name = "does not compile"
route = "{(EXAMPLES / 'cohort' / 'adherence_texts.route').as_posix()}"
policy = "venture@1.0.0"
expect.verdict = "released"
""",
    )
    code, out, _ = run_cli(capsys, "test", "--format", "json", str(path))
    assert code == 1
    cases = {c["name"]: c for c in json.loads(out)["files"][0]["cases"]}
    status = {name: c["status"] for name, c in cases.items()}
    assert status == {
        "verdict": "fail",
        "score": "fail",
        "exact score": "pass",
        "T": "fail",
        "bucket": "fail",
        "uncovered": "fail",
        "withheld": "fail",
        "policy override": "pass",
        "redteam": "fail",
        "errors": "pass",
        "does not compile": "fail",
    }
    assert cases["verdict"]["failures"] == ["expected verdict suspend-and-ask, got released"]
    assert cases["score"]["failures"] == ["expected score >= 900,000.00, got 885,626.17"]
    assert cases["T"]["failures"] == ["expected T <= 50.00, got 63.75"]
    assert cases["bucket"]["failures"] == ["expected bucket neg, got pos"]
    assert cases["uncovered"]["failures"] == [
        "expected uncovered [launch.developers], got [launch.arr, launch.developers, launch.paying_teams]"
    ]
    assert cases["withheld"]["failures"] == ["expected score >= 0.00, got none (withheld: suspend-and-ask)"]
    assert cases["policy override"]["observed"]["policy"] == "venture@1.1.0"
    (red,) = cases["redteam"]["failures"]
    assert red.startswith("expected no covered red-team gain above 10.0% of the honest score (885,626.17 USD), got ")
    assert cases["errors"]["observed"]["errors"] == ["PCSC-E207"]
    head, first, *_ = cases["does not compile"]["failures"]
    assert head.startswith("the route does not compile (") and "PCSC-E207 unknown reference class" in first


def test_junit_xml_is_well_formed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, f'[[case]]\nname = "ok"\nroute = "{SPEC}"\nexpect.verdict = "released"\n', "a.pcsctest.toml")
    bad = write(
        tmp_path, f'[[case]]\nname = "no"\nroute = "{SPEC}"\nexpect.verdict = "suspend-and-ask"\n', "b.pcsctest.toml"
    )
    broken = write(tmp_path, "[[case]]\nname = 3\n", "c.pcsctest.toml")
    gone_text = '[[case]]\nname = "gone"\nroute = "nowhere.route"\nexpect.verdict = "released"\n'
    missing = write(tmp_path, gone_text, "d.pcsctest.toml")
    report = tmp_path / "junit.xml"
    code, out, err = run_cli(capsys, "test", str(tmp_path), "--junit-xml", str(report))
    assert code == 1
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "2")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {str(good), str(bad), str(broken), str(missing)}
    (ok_case,) = suites[str(good)].findall("testcase")
    assert ok_case.get("name") == "ok" and list(ok_case) == []
    (no_case,) = suites[str(bad)].findall("testcase")
    (failure,) = no_case.findall("failure")
    assert failure.get("message") == "expected verdict suspend-and-ask, got released"
    assert suites[str(broken)].get("errors") == "1"
    assert suites[str(broken)].find("testcase/error") is not None
    (gone,) = suites[str(missing)].findall("testcase")
    assert "nowhere.route not found" in (gone.find("error").get("message") or "")  # type: ignore[union-attr]
    assert "PCSC-E801" in err and "PCSC-E802" in err
    # deterministic: the same run writes the same bytes
    first = report.read_bytes()
    run_cli(capsys, "test", str(tmp_path), "--junit-xml", str(report))
    assert report.read_bytes() == first


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[case]]\nname = 3\nroute = 'x.route'\nexpect.verdict = 'released'\n", "case[1].name: expected a string"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nexpect.verdict = 'great'\n", "case[1].expect.verdict: expected"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nexpect.score = {min = '1'}\n", "case[1].expect.score.min: expected"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nexpect.score = {min = 2, max = 1}\n", "case[1].expect.score: min 2"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nexpect.color = 1\n", "case[1].expect.color: unknown key"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\n", "case[1].expect: missing"),
        ("[[case]]\nname = 'a'\nexpect.verdict = 'released'\n", "case[1].route: missing"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nsplice = 0\nexpect.verdict = 'released'\n", "case[1].splice"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nexpect.uncovered = ['launch']\n", "case[1].expect.uncovered[0]"),
        ("[[case]]\nname = 'a'\nroute = 'x.route'\nexpect.errors = ['E207']\n", "case[1].expect.errors[0]"),
        ("[[case]]\nname = 'a'\nroute = 'r'\nexpect.verdict = 'released'\n[[case]]\nname = 'a'\nroute = 'r'\n"
         "expect.verdict = 'released'\n", "case[2].name: 'a' is already the name of case[1]"),
        ("title = 'x'\n", "title: unknown key"),
        ("[[case]\n", "not valid TOML"),
    ],
)
def test_a_malformed_test_file_is_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(PolicyTestError) as info:
        load_test_file(path)
    assert any(message in m for m in info.value.messages), info.value.messages
    code, out, err = run_cli(capsys, "test", "--format", "json", str(path))
    assert code == 1
    doc = json.loads(out)
    assert doc["ok"] is False
    (diag, *_) = doc["diagnostics"]
    assert diag["code"] == "PCSC-E801" and diag["file"] == str(path)
    assert any(message in d["message"] for d in doc["diagnostics"])


def test_a_folder_without_test_files_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "test", str(tmp_path))
    assert code == 1 and "PCSC-E803" in err


def test_several_routes_need_route_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = (EXAMPLES / "feature_flags.route").as_posix()
    path = write(tmp_path, f'[[case]]\nname = "x"\nroute = "{flags}"\nexpect.verdict = "released"\n')
    code, out, err = run_cli(capsys, "test", str(path))
    assert code == 1
    assert "ERROR  x" in out and "choose one with route_name: self_serve, enterprise_first" in out
    assert "PCSC-E802" in err


def test_a_seam_that_is_not_interior_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, f'[[case]]\nname = "x"\nroute = "{SPEC}"\nsplice = 2\nexpect.verdict = "released"\n')
    code, out, _ = run_cli(capsys, "test", str(path))
    assert code == 1 and "splice 2: seam 2 is not interior" in out


def test_a_policy_given_by_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "2.0.0.toml").write_text(
        '[policy]\nid = "mine"\nversion = "2.0.0"\nextends = "venture@1.0.0"\ncoverage = "dock"\n', encoding="utf-8"
    )
    path = write(
        tmp_path,
        f'[[case]]\nname = "x"\nroute = "{SPEC}"\npolicy = "mine/2.0.0.toml"\nsplice = 1\nexpect.verdict = "docked"\n',
    )
    code, out, err = run_cli(capsys, "test", str(path))
    assert code == 0, out + err
