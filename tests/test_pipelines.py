"""`.pre-commit-hooks.yaml` parses, names real pcsc commands that pass on clean input,
and the documented code-scanning workflow runs the commands the docs say it runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from pcsc.cli import main
from pcsc.cli.registry import find
from tests.conftest import EXAMPLES, ROOT

HOOKS = ROOT / ".pre-commit-hooks.yaml"
WORKFLOW = ROOT / "docs" / "examples" / "code-scanning.yml"


def parse_hooks(text: str) -> list[dict[str, Any]]:
    """The hooks file's subset of YAML: a list of flat mappings whose values are plain
    scalars, single-quoted strings or booleans (enough for this file; no PyYAML needed)."""
    hooks: list[dict[str, Any]] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("- "):
            hooks.append({})
            line = "  " + line[2:]
        assert line.startswith("  ") and hooks, f"unexpected line: {raw!r}"
        key, sep, value = line.strip().partition(":")
        assert sep and key.isidentifier(), f"not a key: value line: {raw!r}"
        value = value.strip()
        if value.startswith("'"):
            assert value.endswith("'"), raw
            parsed: Any = value[1:-1].replace("''", "'")
        elif value in ("true", "false"):
            parsed = value == "true"
        else:
            parsed = value
        hooks[-1][key] = parsed
    return hooks


def hooks() -> list[dict[str, Any]]:
    return parse_hooks(HOOKS.read_text(encoding="utf-8"))


def test_hooks_parse_and_have_the_required_keys() -> None:
    found = hooks()
    assert [h["id"] for h in found] == ["pcsc-check", "pcsc-fmt", "pcsc-gate"]
    for h in found:
        assert {"id", "name", "entry", "language", "files"} <= h.keys()
        assert h["language"] == "python"
        assert shlex.split(h["entry"])[0] == "pcsc"
    files = {h["id"]: h["files"] for h in found}
    assert files == {"pcsc-check": r"\.route$", "pcsc-fmt": r"\.(route|obl)$", "pcsc-gate": r"\.route$"}


def test_the_line_parser_agrees_with_pyyaml() -> None:
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(HOOKS.read_text(encoding="utf-8")) == hooks()


def test_each_entry_is_a_pcsc_command_that_passes_on_a_clean_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path)]) == 0
    monkeypatch.chdir(tmp_path)


    changed = ["routes/example.route", "obligations/myproject.obl"]
    for h in hooks():
        argv = shlex.split(h["entry"])[1:]
        assert find(tuple(argv[:1])) is not None, h["entry"]
        names = [f for f in changed if re.search(h["files"], f)]
        assert names, h["id"]
        code = main([*argv, *names])
        out, err = capsys.readouterr()
        assert code == 0, f"{h['entry']} {' '.join(names)} exited {code}\n{out}{err}"


@pytest.mark.parametrize("hook_id", ["pcsc-check", "pcsc-gate"])
def test_check_and_gate_hooks_pass_on_the_examples(
    hook_id: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    (entry,) = [h["entry"] for h in hooks() if h["id"] == hook_id]
    routes = sorted(str(p.relative_to(ROOT)) for p in EXAMPLES.glob("*.route"))
    code = main([*shlex.split(entry)[1:], *routes])
    out, err = capsys.readouterr()
    assert code == 0, out + err


def test_the_workflow_uploads_gate_sarif() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "pcsc gate --format sarif -o pcsc.sarif routes/ || true" in text
    assert "github/codeql-action/upload-sarif@" in text
    assert "sarif_file: pcsc.sarif" in text
    assert "security-events: write" in text
    doc = (ROOT / "docs" / "pipelines.md").read_text(encoding="utf-8")
    assert text.strip() in doc, "docs/pipelines.md shows docs/examples/code-scanning.yml verbatim"


def test_the_workflow_is_yaml() -> None:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = doc["jobs"]["routes"]["steps"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)
