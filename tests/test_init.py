"""`pcsc init [DIR]`: the scaffolded project checks, passes GATE, compiles to a released
score and passes its own policy test; existing files are never overwritten silently."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pcsc.cli.scaffold import Project, files
from tests.conftest import run_cli

EXPECTED = (
    "pcsc.toml",
    "obligations/myproject.obl",
    "policies/myproject/1.0.0.toml",
    "policies/myproject/tests/example.pcsctest.toml",
    "routes/example.route",
)


def test_init_scaffolds_a_project_that_checks_gates_and_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    code, out, err = run_cli(capsys, "init", str(project))
    assert code == 0, err
    for rel in EXPECTED:
        assert (project / rel).is_file(), rel
        assert f"wrote {project / rel}" in out
    policy = (project / "policies/myproject/1.0.0.toml").read_text(encoding="utf-8")
    assert 'extends = "venture@1.0.0"' in policy
    # the policy pins the project's library (a route uses only what its policy pins), by
    # `sha256sum` of the file: the template is in `pcsc fmt`'s layout
    library = hashlib.sha256((project / "obligations/myproject.obl").read_bytes()).hexdigest()
    assert f'[libraries.myproject]\nversion = "1.0.0"\nsha256 = "{library}"\n' in policy

    monkeypatch.chdir(project)  # so that its pcsc.toml applies
    code, _, err = run_cli(capsys, "check", "routes/")
    assert code == 0, err
    assert "error" not in err
    code, out, err = run_cli(capsys, "gate", "routes/")
    assert code == 0, err
    assert "example: released" in out
    code, out, err = run_cli(capsys, "compile", "--format", "json", "routes/")
    assert code == 0, err
    (route,) = json.loads(out)["routes"]
    assert route["verdict"] == "released"
    assert route["policy"]["id"] == "myproject"
    assert isinstance(route["score"], float) and route["score"] > 0
    code, out, err = run_cli(capsys, "fmt", "--check", "routes/", "obligations/")
    assert code == 0, out + err
    code, out, err = run_cli(capsys, "test", "policies/")
    assert code == 0, out + err
    assert "2 passed, 0 failed" in out
    code, out, err = run_cli(capsys, "policy", "check", "myproject@1.0.0")
    assert code == 0, err


def test_init_twice_refuses_and_names_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "init", str(tmp_path))[0] == 0
    route = tmp_path / "routes" / "example.route"
    route.write_text("# mine\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "init", str(tmp_path))
    assert code == 1
    assert "PCSC-E811" in err
    for rel in EXPECTED:
        assert str(tmp_path / rel) in err
    assert route.read_text(encoding="utf-8") == "# mine\n", "an existing file was overwritten"
    code, out, err = run_cli(capsys, "init", str(tmp_path), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["schema"]["kind"] == "init" and doc["ok"] is False
    assert sorted(doc["existing"]) == sorted(str(tmp_path / rel) for rel in EXPECTED)
    assert doc["diagnostics"][0]["code"] == "PCSC-E811"


def test_force_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    route = tmp_path / "routes" / "example.route"
    route.parent.mkdir()
    route.write_text("# mine\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "init", str(tmp_path), "--force")
    assert code == 0, err
    assert f"overwrote {route}" in err
    assert route.read_text(encoding="utf-8").startswith("# routes/example.route")


def test_name_sets_the_library_policy_and_classes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "init", str(tmp_path), "--name", "acme-labs")
    assert code == 0, err
    assert (tmp_path / "obligations" / "acme_labs.obl").is_file()  # libraries are named by identifiers
    assert (tmp_path / "policies" / "acme-labs" / "1.0.0.toml").is_file()
    text = (tmp_path / "routes" / "example.route").read_text(encoding="utf-8")
    assert 'policy  "acme-labs@1.0.0"' in text and "uses    acme_labs" in text
    assert '"acme-labs/first-users"' in text
    monkeypatch.chdir(tmp_path)
    assert run_cli(capsys, "gate", "routes/")[0] == 0


@pytest.mark.parametrize("name", ["Acme", "a b", "", "x/y", "é"])
def test_a_bad_name_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, _, err = run_cli(capsys, "init", str(tmp_path), "--name", name)
    assert code == 2
    assert "--name" in err
    assert not any(tmp_path.iterdir())


def test_a_file_as_dir_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "file"
    target.write_text("", encoding="utf-8")
    assert run_cli(capsys, "init", str(target))[0] == 2


def test_a_leading_digit_gives_an_identifier() -> None:
    assert Project("9lives").ident == "_9lives"
    assert "obligations/_9lives.obl" in files(Project("9lives"))
