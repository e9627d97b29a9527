"""`pcsc policy check` on malformed policies: path-addressed messages, exit 1, no traceback.

Every case writes policies under tmp_path/policies/<id>/<version>.toml (the reference
policy with one change, see tests/test_diagnostics.POLICY_TEXT), runs the CLI from
tmp_path, and compares stderr line by line:

    policies/<id>/<version>.toml: error: <key path>: <what is wrong> [PCSC-E403]

Most run in-process through `pcsc.cli.main`; one runs `python -m pcsc` end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pcsc.cli import main
from tests.test_diagnostics import POLICY_TEXT, edit

Files = tuple[tuple[str, str], ...]  # (path under tmp_path/policies, toml text)


def venture(version: str, *pairs: tuple[str, str]) -> tuple[str, str]:
    """POLICY_TEXT as venture@version, with replacements."""
    text = edit(('version = "1.0.0"', f'version = "{version}"'), base=POLICY_TEXT)
    return f"venture/{version}.toml", edit(*pairs, base=text)


def header(id_: str, version: str, extends: str) -> tuple[str, str]:
    return f"{id_}/{version}.toml", f'[policy]\nid = "{id_}"\nversion = "{version}"\nextends = "{extends}"\n'


@dataclass(frozen=True)
class Case:
    id: str
    files: Files
    target: str  # what `pcsc policy check` is given: a path under policies/ or id@version
    errors: tuple[str, ...]  # the whole stderr, one line per problem


E = "[PCSC-E403]"

CASES = [
    Case(
        "unknown-key",
        (venture("2.0.0", ("decay = 0.5", "decay = 0.5\ncolour = 0.5")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: reweighting.colour: unknown key {E}",),
    ),
    Case(
        "unknown-top-level-table",
        (venture("2.0.0", ("[uncertainty]", "[uncertanity]")),),
        "venture/2.0.0.toml",
        (
            f"policies/venture/2.0.0.toml: error: uncertainty: required key missing {E}",
            f"policies/venture/2.0.0.toml: error: uncertanity: unknown key {E}",
        ),
    ),
    Case(
        "string-for-a-number",
        (venture("2.0.0", ("decay = 0.5", 'decay = "0.5"')),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: reweighting.decay: expected a number {E}",),
    ),
    Case(
        "bool-for-a-number",
        (venture("2.0.0", ("team = 2.0", "team = true")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: criteria.team: expected a number {E}",),
    ),
    Case(
        "float-for-a-whole-number",
        (venture("2.0.0", ("min_tier = 1", "min_tier = 1.5")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: evidence.min_tier: expected a whole number {E}",),
    ),
    Case(
        "not-a-finite-number",
        (venture("2.0.0", ("decay = 0.5", "decay = nan")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: reweighting.decay: expected a finite number {E}",),
    ),
    Case(
        "missing-required-key",
        (venture("2.0.0", ("w_max = 1.5\n", "")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: reweighting.w_max: required key missing {E}",),
    ),
    Case(
        "missing-id",
        (venture("2.0.0", ('id = "venture"\n', "")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: policy.id: required key missing {E}",),
    ),
    Case(
        "bad-coverage-literal",
        (venture("2.0.0", ('coverage = "gate"', 'coverage = "strict"')),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: policy.coverage: expected one of gate, dock, off {E}",),
    ),
    Case(
        "probability-out-of-range",
        (venture("2.0.0", ("p = 0.45", "p = 1.45")),),
        "venture/2.0.0.toml",
        (f'policies/venture/2.0.0.toml: error: priors."devtools/first-users".p: must be in [0, 1], got 1.45 {E}',),
    ),
    Case(
        # was a traceback: a cattrs note that is a plain string was taken for an index
        "floor-breakpoint-not-a-pair",
        (venture("2.0.0", ("[1e6, 4e5]", "[1e6]")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: floors.delta.arr.points[1]: expected a pair [x, y] of numbers {E}",),
    ),
    Case(
        # was a traceback: cattrs iterated the string as an array of characters
        "string-for-an-array",
        (venture("2.0.0", ("points = [[1e5, 5e4], [1e6, 4e5], [1e7, 3e6], [1e8, 2.5e7]]", 'points = "none"')),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: floors.delta.arr.points: expected an array {E}",),
    ),
    Case(
        "array-for-a-table",
        (venture("2.0.0", ("tier_weight = { 1 = 0.5, 2 = 0.8, 3 = 1.0 }", "tier_weight = [0.5, 0.8, 1.0]")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: evidence.tier_weight: expected a table {E}",),
    ),
    Case(
        "w-min-above-w-max",
        (venture("2.0.0", ("w_min = 0.3", "w_min = 1.6")),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: reweighting.w_min: must not exceed reweighting.w_max {E}",),
    ),
    Case(
        "gate-rule-does-not-parse",
        (venture("2.0.0", ('rule = "count(evidence.admissible) >= 1"', 'rule = "count(evidence.admissible) >="')),),
        "venture/2.0.0.toml",
        (
            "policies/venture/2.0.0.toml: error: gates[0].rule: the rule ends early; expected one of `(`, `-`, "
            '`false`, `none`, `true`, a date (YYYY-MM-DD), a name, a number, a quoted string ("...") '
            f"(column 30 of the rule) {E}",
        ),
    ),
    Case(
        "gate-rule-unknown-function",
        (venture("2.0.0", ('rule = "count(evidence.admissible) >= 1"', 'rule = "cnt(evidence.admissible) >= 1"')),),
        "venture/2.0.0.toml",
        (
            "policies/venture/2.0.0.toml: error: gates[0].rule: unknown function `cnt` "
            f"(a rule may call `count`, `max`, `min`) {E}",
        ),
    ),
    Case(
        "several-problems-at-once",
        (venture("2.0.0", ("decay = 0.5", 'decay = "half"'), ('coverage = "gate"', 'coverage = "gate"\nowner = "x"')),),
        "venture/2.0.0.toml",
        (
            f"policies/venture/2.0.0.toml: error: policy.owner: unknown key {E}",
            f"policies/venture/2.0.0.toml: error: reweighting.decay: expected a number {E}",
        ),
    ),
    Case(
        "extends-cycle",
        (header("a", "1.0.0", "b@1.0.0"), header("b", "1.0.0", "a@1.0.0")),
        "a/1.0.0.toml",
        (
            "policies/a/1.0.0.toml: error: policy.extends: the policies extend each other in a cycle: "
            f"a@1.0.0 -> b@1.0.0 -> a@1.0.0 {E}",
        ),
    ),
    Case(
        "extends-itself",
        (header("a", "1.0.0", "a@1.0.0"),),
        "a/1.0.0.toml",
        (
            "policies/a/1.0.0.toml: error: policy.extends: the policies extend each other in a cycle: "
            f"a@1.0.0 -> a@1.0.0 {E}",
        ),
    ),
    Case(
        "extends-a-missing-policy",
        (header("a", "1.0.0", "venture@0.9.0"),),
        "a/1.0.0.toml",
        (
            "policies/a/1.0.0.toml: error: policy.extends: no policy `venture@0.9.0` "
            "(looked for venture/0.9.0.toml in policies, ",
        ),
    ),
    Case(
        "extends-a-malformed-policy",
        (header("a", "1.0.0", "venture@2.0.0"), venture("2.0.0", ("decay = 0.5", 'decay = "half"'))),
        "a/1.0.0.toml",
        (
            "policies/a/1.0.0.toml: error: policy.extends: in `venture@2.0.0` (policies/venture/2.0.0.toml): "
            f"reweighting.decay: expected a number {E}",
        ),
    ),
    Case(
        "version-does-not-match-the-path",
        (("venture/2.0.0.toml", venture("2.0.1")[1]),),
        "venture/2.0.0.toml",
        (
            "policies/venture/2.0.0.toml: error: policy: declares venture@2.0.1 but is filed as venture@2.0.0 "
            f"(policies/<id>/<version>.toml) {E}",
        ),
    ),
    Case(
        "id-does-not-match-the-path",
        (("acme/1.0.0.toml", POLICY_TEXT),),
        "acme/1.0.0.toml",
        (
            "policies/acme/1.0.0.toml: error: policy: declares venture@1.0.0 but is filed as acme@1.0.0 "
            f"(policies/<id>/<version>.toml) {E}",
        ),
    ),
    Case(
        "invalid-toml",
        (("venture/2.0.0.toml", '[policy\nid = "venture"\n'),),
        "venture/2.0.0.toml",
        (
            "policies/venture/2.0.0.toml: error: not valid TOML: Expected ']' at the end of a table declaration "
            f"(at line 1, column 8) {E}",
        ),
    ),
    Case(
        "no-policy-table",
        (("venture/2.0.0.toml", "[priors]\n"),),
        "venture/2.0.0.toml",
        (f"policies/venture/2.0.0.toml: error: policy: required table missing {E}",),
    ),
    Case(
        "checked-by-reference",
        (venture("2.0.0", ("decay = 0.5", 'decay = "half"')),),
        "venture@2.0.0",
        (f"policies/venture/2.0.0.toml: error: reweighting.decay: expected a number {E}",),
    ),
    Case(
        "unknown-reference",
        (),
        "nope@1.0.0",
        ("nope@1.0.0: error: no policy `nope@1.0.0` (looked for nope/1.0.0.toml in policies, ",),
    ),
]


def write(tmp_path: Path, files: Files) -> None:
    for rel, text in files:
        target = tmp_path / "policies" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (tmp_path / "policies").mkdir(exist_ok=True)


def target_arg(target: str) -> str:
    return target if "@" in target else f"policies/{target}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_policy_check(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, case.files)
    monkeypatch.chdir(tmp_path)
    code = main(["policy", "check", "--policy-path", "policies", target_arg(case.target)])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == len(case.errors), err
    for line, expected in zip(lines, case.errors, strict=True):
        if expected.endswith(E):
            assert line == expected
        else:  # the rest names folders that depend on the installation
            assert line.startswith(expected) and line.endswith(E), line


def test_the_base_policy_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, (venture("2.0.0"),))
    monkeypatch.chdir(tmp_path)
    assert main(["policy", "check", "policies/venture/2.0.0.toml"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("ok: venture@2.0.0 (policies/venture/2.0.0.toml) sha256 ")


def test_json_lists_every_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, (venture("2.0.0", ("decay = 0.5", 'decay = "half"'), ("p = 0.45", "p = 1.45")), venture("3.0.0")))
    monkeypatch.chdir(tmp_path)
    code = main(["policy", "check", "--format", "json", "policies/venture/2.0.0.toml", "policies/venture/3.0.0.toml"])
    assert code == 1
    body = json.loads(capsys.readouterr().out)
    assert body["ok"] is False
    assert body["errors"] == [
        'policies/venture/2.0.0.toml: priors."devtools/first-users".p: must be in [0, 1], got 1.45',
        "policies/venture/2.0.0.toml: reweighting.decay: expected a number",
    ]
    assert [c["policy"] for c in body["checked"]] == ["venture@3.0.0"]


@pytest.mark.parametrize("action", ["show", "hash"])
def test_show_and_hash_refuse_a_malformed_policy(
    action: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, (venture("2.0.0", ("[1e6, 4e5]", "[1e6]")),))
    monkeypatch.chdir(tmp_path)
    assert main(["policy", action, "policies/venture/2.0.0.toml"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert (
        err
        == f"policies/venture/2.0.0.toml: error: floors.delta.arr.points[1]: expected a pair [x, y] of numbers {E}\n"
    )


def test_policy_check_end_to_end(tmp_path: Path) -> None:
    write(tmp_path, (venture("2.0.0", ("[1e6, 4e5]", "[1e6]"), ("decay = 0.5", 'decay = "half"')),))
    proc = subprocess.run(
        [sys.executable, "-m", "pcsc", "policy", "check", "policies/venture/2.0.0.toml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert proc.stderr == (  # in the order of the policy's tables ([reweighting] before [floors])
        f"policies/venture/2.0.0.toml: error: reweighting.decay: expected a number {E}\n"
        f"policies/venture/2.0.0.toml: error: floors.delta.arr.points[1]: expected a pair [x, y] of numbers {E}\n"
    )
