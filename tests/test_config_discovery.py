"""Each input is judged by the nearest configuration file above it (docs/cli.md,
"Configuration"), wherever pcsc runs: from any folder of a `pcsc init` project, and
from the folder above it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_REFUSED = 0, 1, 2, 3


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, _, err = run_cli(capsys, "init", str(tmp_path / "proj"))
    assert code == EXIT_OK, err
    return tmp_path / "proj"


# (folder pcsc runs in, relative to the project; the routes, the tests, from there)
PLACES = [
    ("..", "proj/routes/", "proj/policies"),
    ("..", "proj/routes/example.route", "proj/policies/myproject/tests/example.pcsctest.toml"),
    (".", "routes", "policies"),
    ("routes", ".", "../policies"),
    ("routes", "example.route", "../policies/myproject"),
    ("policies", "../routes", "."),
    ("policies/myproject/tests", "../../../routes/example.route", "example.pcsctest.toml"),
    ("obligations", "../routes", "../policies"),
]


@pytest.mark.parametrize(("where", "routes", "tests"), PLACES)
def test_check_gate_and_test_work_from_every_folder_of_the_project(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    where: str, routes: str, tests: str,
) -> None:
    monkeypatch.chdir(project / where)
    code, _, err = run_cli(capsys, "check", routes)
    assert code == EXIT_OK and "ok: 1 route checked" in err, err
    code, out, err = run_cli(capsys, "gate", routes, "--format", "json")
    assert code == EXIT_OK, err
    assert [r["verdict"] for r in json.loads(out)["routes"]] == ["released"]
    code, out, err = run_cli(capsys, "test", tests)
    assert code == EXIT_OK and "2 passed, 0 failed" in out, (out, err)


def test_the_folder_above_has_no_configuration_of_its_own(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the test above relies on: run there without the project's file, the route's
    library and policy are not found."""
    monkeypatch.chdir(project.parent)
    (project / "pcsc.toml").rename(project / "moved.toml")
    code, _, err = run_cli(capsys, "check", "proj/routes/")
    assert code == EXIT_INPUT and "PCSC-E401" in err and "PCSC-E206" in err, err


def test_config_file_names_the_file_that_judges_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project.parent)
    code, out, _ = run_cli(capsys, "config", "proj/routes/example.route")
    assert code == EXIT_OK
    assert out.startswith(f"# configuration file: {project / 'pcsc.toml'} (the nearest to proj/routes/example.route)")
    assert f"lib_path        {project / 'obligations'}    # from {project / 'pcsc.toml'}" in out
    assert "# format, ledger and docs_url: the working folder's, none" in out
    code, out, _ = run_cli(capsys, "config", "proj/routes/example.route", "--format", "json")
    doc = json.loads(out)
    assert (doc["file"], doc["for"], doc["run_file"]) == (str(project / "pcsc.toml"), "proj/routes/example.route",
                                                           None)
    code, out, _ = run_cli(capsys, "config", "--format", "json")  # the working folder's: none
    assert json.loads(out)["file"] is None


def test_a_pyproject_table_is_found_the_same_way(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = (project / "pcsc.toml").read_text(encoding="utf-8")
    (project / "pcsc.toml").unlink()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.pcsc]\n" + table, encoding="utf-8")
    monkeypatch.chdir(project.parent)
    code, _, err = run_cli(capsys, "check", "proj/routes/")
    assert code == EXIT_OK, err


def test_check_and_gate_judge_two_projects_each_by_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As pre-commit runs them from a repository's root: the files of two projects, whose
    libraries and policies differ (`b`'s routes are found only with `b`'s file)."""
    assert run_cli(capsys, "init", str(tmp_path / "a"))[0] == EXIT_OK
    assert run_cli(capsys, "init", str(tmp_path / "b"), "--name", "other")[0] == EXIT_OK
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "check", "a/routes/example.route", "b/routes")
    assert code == EXIT_OK and "ok: 2 routes checked" in err, err
    code, out, err = run_cli(capsys, "gate", "a/routes", "b/routes/example.route", "--format", "json")
    assert code == EXIT_OK, err
    doc = json.loads(out)
    assert [(r["file"], r["verdict"]) for r in doc["routes"]] == [
        ("a/routes/example.route", "released"), ("b/routes/example.route", "released")]
    assert [r["policy"]["id"] for r in doc["routes"]] == ["myproject", "other"]
    # a file of b's own project breaks only b's routes, and says where
    (tmp_path / "b" / "routes" / "bad.route").write_text("route x {\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", "a/routes", "b/routes")
    assert code == EXIT_INPUT and "b/routes/bad.route" in err and "a/routes" not in err, err


def test_other_commands_take_one_project_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        assert run_cli(capsys, "init", str(tmp_path / name))[0] == EXIT_OK
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "compile", "a/routes", "b/routes")
    assert code == EXIT_USAGE and not out
    assert "different configuration files" in err and "a/pcsc.toml" in err and "b/pcsc.toml" in err, err
    code, _, err = run_cli(capsys, "gate", "a/routes", "b/routes", "--suggest")
    assert code == EXIT_USAGE and "one project's routes at a time" in err, err


def test_the_working_folders_requirement_holds_over_the_inputs_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`require_policy` only tightens: the working folder's list holds even when the
    inputs find another file (a route outside the maintainer's tree)."""
    maintainer = project.parent / "ci"
    maintainer.mkdir()
    (maintainer / "pcsc.toml").write_text('require_policy = ["venture"]\n', encoding="utf-8")
    monkeypatch.chdir(maintainer)
    code, _, err = run_cli(capsys, "gate", "../proj/routes/")
    assert code == EXIT_REFUSED and "PCSC-E414" in err, err


def test_a_route_with_no_file_above_it_uses_the_working_folders(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "loose"
    outside.mkdir()
    (outside / "r.route").write_text((project / "routes" / "example.route").read_text(encoding="utf-8"))
    monkeypatch.chdir(project)
    code, _, err = run_cli(capsys, "check", str(outside / "r.route"))
    assert code == EXIT_OK, err
