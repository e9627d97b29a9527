"""`pcsc check` reports whatever `pcsc compile` refuses (pre-commit runs check): an
overflow in the scoring (PCSC-E311) and a gate rule that cannot be evaluated
(PCSC-E405), under every way check reads routes (files, `--jobs`, `--coverage off`,
standard input, the API and the language server)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import pcsc
from pcsc.cli import main
from pcsc.lsp.analysis import analyse
from tests.conftest import ROOT, SPEC_ROUTE

SPEC = SPEC_ROUTE.read_text(encoding="utf-8")
POLICY = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")


def _edit(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


def _same(text: str) -> str:
    return text


# name: (edit of the route, edit of the policy, the code compile refuses with)
REFUSALS: dict[str, tuple[Callable[[str], str], Callable[[str], str], str]] = {
    "two costs of 1 * 1.7e308": (
        _edit("engineers  2 * 45k usd", "a 1 * 1.7e308 usd\n            b 1 * 1.7e308 usd"), _same, "PCSC-E311"),
    "a start state past the floor table": (_edit("paying_teams 0", "paying_teams 1e307"), _same, "PCSC-E311"),
    "a cost of 10 * 1e308": (_edit("engineers  2 * 45k usd", "company 10 * 1e308 usd"), _same, "PCSC-E311"),
    "criteria weights of 1e308": (_same, _edit("team = 2.0\nmarket = 1.0", "team = 1e308\nmarket = 1e308"),
                                  "PCSC-E311"),
    "a gate rule dividing by zero": (
        _same, _edit('rule = "count(evidence.admissible) >= 1"', 'rule = "score / 0 >= 1 usd"'), "PCSC-E405"),
}


def _setup(tmp_path: Path, name: str) -> tuple[Path, Path]:
    route_edit, policy_edit, _ = REFUSALS[name]
    folder = tmp_path / "policies" / "venture"
    folder.mkdir(parents=True)
    policy = policy_edit(POLICY).replace('version = "1.0.0"', 'version = "9.0.0"', 1)  # not the library pins
    (folder / "9.0.0.toml").write_text(policy, encoding="utf-8")
    route = tmp_path / "r.route"
    route.write_text(route_edit(SPEC).replace("venture@1.0.0", "venture@9.0.0"), encoding="utf-8")
    return route, tmp_path / "policies"


def _errors(text: str) -> set[str]:
    return set(re.findall(r"PCSC-E[0-9]{3}", text))


@pytest.mark.parametrize("name", REFUSALS)
@pytest.mark.parametrize("how", [[], ["--jobs", "2"], ["--coverage", "off"], ["--format", "json"]])
def test_check_reports_what_compile_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, how: list[str]
) -> None:
    route, policies = _setup(tmp_path, name)
    code = REFUSALS[name][2]
    assert main(["compile", str(route), "--policy-path", str(policies), *how[:2]]) == 1
    compiled = _errors("".join(capsys.readouterr()))
    assert code in compiled
    assert main(["check", str(route), "--policy-path", str(policies), *how]) == 1
    out, err = capsys.readouterr()
    assert compiled <= _errors(out + err), (compiled, out, err)
    assert "ok:" not in out + err and "internal error" not in err


@pytest.mark.parametrize("name", REFUSALS)
def test_check_of_standard_input_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    route, policies = _setup(tmp_path, name)
    monkeypatch.setattr("sys.stdin", io.StringIO(route.read_text(encoding="utf-8")))
    assert main(["check", "-", "--policy-path", str(policies)]) == 1
    assert REFUSALS[name][2] in capsys.readouterr().err


@pytest.mark.parametrize("name", REFUSALS)
def test_the_api_and_the_language_server_report_it(tmp_path: Path, name: str) -> None:
    route, policies = _setup(tmp_path, name)
    code = REFUSALS[name][2]
    result = pcsc.check(route, policy_path=policies)
    assert not result.ok and code in {d.code for d in result.diagnostics}
    analysis = analyse(route.read_text(encoding="utf-8"), route, policy_path=[policies])
    assert code in {d.code for d in analysis.diagnostics}


def test_a_clean_route_still_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SPEC_ROUTE)]) == 0
    assert "ok: 1 route checked" in capsys.readouterr().err
