"""No crash on any input: every attack of the hardening issue, through `pcsc.cli.main`,
with its diagnostic code and exit code (text and JSON where both apply). Exit 70 (an
internal error) must never happen."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pcsc.lang.syntax.limits import MAX_DEPTH, MAX_ROUTES, MAX_TRANSITIONS
from tests.conftest import ROOT, SPEC_ROUTE, pin_libraries, run_cli

SPEC = SPEC_ROUTE.read_text(encoding="utf-8")
POLICY = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
COMMANDS = (["check"], ["compile"], ["seams"], ["explain"], ["redteam"], ["gate"])


def codes_of(out: str, err: str) -> set[str]:
    """The diagnostic codes in a text or JSON output."""
    import re

    return set(re.findall(r"PCSC-[EW][0-9]{3}", out + err))


def route_file(tmp_path: Path, text: str, name: str = "attack.route") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


def expect(
    capsys: pytest.CaptureFixture[str],
    path: Path,
    code: str,
    exit_code: int,
    commands: tuple[list[str], ...] = COMMANDS,
    extra: tuple[str, ...] = (),
) -> None:
    for command in commands:
        for fmt in ("text", "json"):
            if command == ["explain"] and fmt == "json":
                continue
            got, out, err = run_cli(capsys, *command, str(path), "--format", fmt, *extra)
            assert got == exit_code, (command, fmt, got, err[-500:])
            assert code in codes_of(out, err), (command, fmt, out[-500:], err[-500:])
            assert "internal error" not in err
            if fmt == "json" and out:
                json.loads(out)  # never NaN or Infinity
                assert "Infinity" not in out and "NaN" not in out


# ---------------------------------------------------------------------- numbers that overflow
OVERFLOW = {
    "cost 10 * 1e308": (replace("engineers  2 * 45k usd", "company 10 * 1e308 usd"), "PCSC-E311", COMMANDS),
    "two costs of 1e308": (
        replace("engineers  2 * 45k usd", "a 1e308 usd\n            b 1e308 usd"),
        "PCSC-E311",
        COMMANDS,
    ),
    "two costs of 1 * 1.7e308": (
        replace("engineers  2 * 45k usd", "a 1 * 1.7e308 usd\n            b 1 * 1.7e308 usd"),
        "PCSC-E311",
        COMMANDS,
    ),
    "state 1e308 past the floor table": (
        replace("state wedge  { developers 500 }", "state wedge  { developers 500 paying_teams 1e308 }"),
        "PCSC-E311",
        COMMANDS,
    ),
    "a start state of 1e307 past the floor table": (
        replace("paying_teams 0", "paying_teams 1e307"), "PCSC-E311", COMMANDS,
    ),
    "exponent 1e1000000": (replace("engineers  2 * 45k usd", "company 10 * 1e1000000 usd"), "PCSC-E302", COMMANDS),
    "threshold 1e1000000": (replace("developers >= 500", "developers >= 1e1000000"), "PCSC-E302", COMMANDS),
}


@pytest.mark.parametrize("name", OVERFLOW)
def test_overflow_is_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    edit, code, commands = OVERFLOW[name]
    expect(capsys, route_file(tmp_path, edit(SPEC)), code, 1, commands)


def test_overflow_names_the_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("engineers  2 * 45k usd", "company 10 * 1e308 usd")(SPEC))
    _, _, err = run_cli(capsys, "check", str(path))
    assert "cost `company` overflows: 10 × 1e+308 usd" in err


def policy_folder(tmp_path: Path, edit: Callable[[str], str], version: str = "9.0.0") -> Path:
    folder = tmp_path / "policies" / "venture"
    folder.mkdir(parents=True)
    (folder / f"{version}.toml").write_text(
        edit(POLICY).replace('version = "1.0.0"', f'version = "{version}"', 1), encoding="utf-8"  # not the pins
    )
    return tmp_path / "policies"


POLICY_NUMBERS = {
    "criteria weights 1e308": (replace("team = 2.0\nmarket = 1.0", "team = 1e308\nmarket = 1e308"), "PCSC-E311", 1),
    "a 400-digit floor": (replace("floor_usd = 50_000", "floor_usd = " + "9" * 400), "PCSC-E403", 1),
    "a 5000-digit floor": (replace("floor_usd = 50_000", "floor_usd = " + "9" * 5000), "PCSC-E403", 1),
    "inf weight": (replace("team = 2.0", "team = inf"), "PCSC-E403", 1),
    "nested 5000 deep": (lambda t: t + "\n[deep]\nx = " + "[" * 5000 + "]" * 5000 + "\n", "PCSC-E403", 1),
}


@pytest.mark.parametrize("name", POLICY_NUMBERS)
def test_policy_numbers_end_in_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    edit, code, exit_code = POLICY_NUMBERS[name]
    folder = policy_folder(tmp_path, edit)
    path = route_file(tmp_path, SPEC.replace("venture@1.0.0", "venture@9.0.0"))
    expect(capsys, path, code, exit_code, COMMANDS, ("--policy-path", str(folder)))


def test_extends_chain_of_500_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "policies" / "venture"
    folder.mkdir(parents=True)
    for i in range(500):
        parent = f'extends = "venture@8.0.{i + 1}"\n' if i < 499 else ""
        body = f'[policy]\nid = "venture"\nversion = "8.0.{i}"\n{parent}'
        if i == 499:
            body = POLICY.replace('version = "1.0.0"', 'version = "8.0.499"')
        (folder / f"8.0.{i}.toml").write_text(body, encoding="utf-8")
    path = route_file(tmp_path, SPEC.replace("venture@1.0.0", "venture@8.0.0"))
    expect(capsys, path, "PCSC-E403", 1, (["check"], ["compile"]), ("--policy-path", str(tmp_path / "policies")))
    _, _, err = run_cli(capsys, "check", str(path), "--policy-path", str(tmp_path / "policies"))
    assert "a chain of more than 32 policies" in err


def test_outcomes_with_huge_integers_are_diagnostics() -> None:
    from pcsc.forecast.outcomes import OutcomesError, parse_outcomes

    for value in ("9" * 400, "9" * 5000, "[" * 5000 + "]" * 5000):
        text = f'[[observation]]\nroute = "r"\ndate = 2020-01-01\nfields = {{ developers = {value} }}\n'
        with pytest.raises(OutcomesError):
            parse_outcomes(text, "outcomes.toml")


def test_outcomes_file_with_huge_integer_through_resolve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = tmp_path / "outcomes.toml"
    outcomes.write_text(
        f'[[observation]]\nroute = "devtools_api"\ndate = 2020-01-01\nfields = {{ developers = {"9" * 400} }}\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(
        capsys, "resolve", str(outcomes), "--ledger", str(tmp_path / "l.sqlite"), "--as-of", "2021-01-01"
    )
    assert code == 1, err
    assert "PCSC-E701" in codes_of(out, err)


# ---------------------------------------------------------------------- recursion
DEEP = {
    "threshold of 1000 additions": replace("developers >= 500", "developers >= " + "1 + " * 1000 + "500"),
    "kill of 1000 nots": replace("kill       developers < 100", "kill       " + "not " * 1000 + "developers < 100"),
    "threshold of 1000 negations": replace("developers >= 500", "developers >= " + "- " * 1000 + "500"),
    "fmt-deep 400 products": replace("developers >= 500", "developers >= " + "2 * " * 400 + "500"),
    f"just past {MAX_DEPTH}": replace("developers >= 500", "developers >= " + "1 + " * MAX_DEPTH + "500"),
}


@pytest.mark.parametrize("name", DEEP)
def test_deep_expressions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    path = route_file(tmp_path, DEEP[name](SPEC))
    expect(capsys, path, "PCSC-E111", 1)
    for command in (["fmt", "--check"], ["graph"]):
        code, out, err = run_cli(capsys, *command, str(path))
        assert code == 1 and "PCSC-E111" in err


def test_depth_at_the_limit_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `>=` is one level: MAX_DEPTH - 1 additions under it make MAX_DEPTH
    path = route_file(tmp_path, replace("developers >= 500", "developers >= " + "0 + " * (MAX_DEPTH - 1) + "500")(SPEC))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 0, err


def test_a_thousand_parentheses_are_not_nesting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("developers >= 500", "(" * 1000 + "developers >= 500" + ")" * 1000)(SPEC))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 0, err


def test_deep_require_line_in_a_library(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    library = (ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8")
    deep = library.replace("require evidence(tier >= 2) >= 1", "require " + "not " * 1000 + "kill")
    # a new name, which a policy with local libraries names (a pin of its content would need
    # its canonical text, and a text nested this deep has none): an edited copy named
    # `venture` would be refused as replacing the pinned library
    (tmp_path / "deep.obl").write_text(deep.replace("library venture", "library deep"), encoding="utf-8")
    ref = pin_libraries(tmp_path / "policies", [tmp_path / "deep.obl"], local=True)
    path = route_file(tmp_path, SPEC.replace("uses    venture", "uses    deep").replace("venture@1.0.0", ref))
    code, out, err = run_cli(capsys, "check", str(path), "--policy-path", str(tmp_path / "policies"))
    assert code == 1 and {"PCSC-E111", "PCSC-E404"} <= codes_of(out, err)


def test_deep_gate_rule_in_a_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rule = 'rule = "count(evidence.admissible) >= 1"'
    folder = policy_folder(tmp_path, replace(rule, 'rule = "' + "not " * 1000 + 'score > 0"'))
    path = route_file(tmp_path, SPEC.replace("venture@1.0.0", "venture@9.0.0"))
    code, out, err = run_cli(capsys, "compile", str(path), "--policy-path", str(folder))
    assert code == 1 and "PCSC-E403" in codes_of(out, err), err
    assert "nests operators more than" in err


def test_deep_json_packets_are_a_diagnostic(tmp_path: Path) -> None:
    from pcsc.forecast.records import PacketError, read_packets

    path = tmp_path / "packets.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(PacketError):
        read_packets(str(path))


# ---------------------------------------------------------------------- type gaps
TYPES = {
    "developers / 0": ("developers / 0 >= 1", "PCSC-E312"),
    'developers >= "500"': ('developers >= "500"', "PCSC-E301"),
    "developers >= 2012-01-01": ("developers >= 2012-01-01", "PCSC-E301"),
    "arr >= developers": ("arr >= developers", "PCSC-E301"),
    "arr + 5 >= 1M usd": ("arr + 5 >= 1M usd", "PCSC-E301"),
    "soc2 > true": ("developers >= 500 and arr * arr > 1 usd", "PCSC-E301"),
}


@pytest.mark.parametrize("name", TYPES)
def test_threshold_types_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    threshold, code = TYPES[name]
    path = route_file(tmp_path, replace("developers >= 500", threshold)(SPEC))
    expect(capsys, path, code, 1, (["check"], ["compile"], ["gate"]))


def test_kill_types_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("developers < 100", 'developers < "100"')(SPEC))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1 and "in the kill: `<` compares field `developers` (a count) with a string" in err


def test_well_typed_conditions_still_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    threshold = ("developers >= 500 and arr / 2 >= 600k usd and arr / arr >= 1 and max(developers, 5) >= 500"
                 " and -developers < 0")
    path = route_file(tmp_path, replace("developers >= 500", threshold)(SPEC))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 0, err


# ---------------------------------------------------------------------- text input
def test_nul_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace('actor      "', 'actor      "\x00')(SPEC))
    expect(capsys, path, "PCSC-E110", 1, (*COMMANDS, ["fmt", "--check"]))


def test_nul_outside_a_string_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, "\x00" + SPEC)
    code, out, err = run_cli(capsys, "check", str(path), "--format", "json")
    assert code == 1
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["PCSC-E110"]


def test_bidi_control_is_a_warning_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace('actor      "', 'actor      "\u202e')(SPEC))
    for command in COMMANDS[:2]:
        for fmt in ("text", "json"):
            code, out, err = run_cli(capsys, *command, str(path), "--format", fmt)
            assert code == 0 and "PCSC-W606" in codes_of(out, err)
    _, _, err = run_cli(capsys, "check", str(path))
    assert "U+202E (RIGHT-TO-LEFT OVERRIDE)" in err


def test_bidi_control_outside_strings_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("threshold  developers", "threshold  \u2066developers")(SPEC))
    code, out, err = run_cli(capsys, "check", str(path))
    assert code == 1 and {"PCSC-W606", "PCSC-E102"} <= codes_of(out, err)


def test_confusable_letter_in_a_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("threshold  developers", "threshold  d\u0435velopers")(SPEC))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1 and "PCSC-E102" in err
    assert "CYRILLIC SMALL LETTER IE, which looks like the ASCII `e`" in err


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_cr_line_breaks_are_line_breaks(tmp_path: Path, capsys: pytest.CaptureFixture[str], newline: str) -> None:
    path = route_file(tmp_path, SPEC.replace("\n", newline))
    code, out, err = run_cli(capsys, "compile", str(path), "--format", "json")
    assert code == 0, err
    assert round(json.loads(out)["routes"][0]["score"], 4) == 885626.1726
    code, _, err = run_cli(capsys, "fmt", "--check", str(path))
    assert "internal error" not in err and code in (0, 1)


def test_cr_only_file_errors_point_at_the_right_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("launch: garage", "launch: garag")(SPEC).replace("\n", "\r"))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1 and ":18:24:" in err and "unknown state `garag`" in err


def test_unknown_unit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("arr 0 usd }", "arr 0 eur }")(SPEC))
    expect(capsys, path, "PCSC-E109", 1, (["check"], ["compile"]))
    _, _, err = run_cli(capsys, "check", str(path))
    assert "unknown unit `eur`; units are usd, days, months, years, %" in err


def test_unknown_unit_of_a_horizon(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route_file(tmp_path, replace("horizon    90 days", "horizon    90 weeks")(SPEC))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 1 and "unknown unit `weeks`" in err


def test_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.route"
    path.write_bytes(SPEC.encode() + b"\xff\xfe")
    expect(capsys, path, "PCSC-E105", 1, (["check"], ["compile"]))


# ---------------------------------------------------------------------- limits
def test_file_size_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import pcsc.compiler.session

    monkeypatch.setattr(pcsc.lang.syntax.limits, "MAX_FILE_BYTES", 1000)
    path = route_file(tmp_path, SPEC)
    monkeypatch.setattr(pcsc.compiler.session, "too_large", pcsc.lang.syntax.limits.too_large)
    expect(capsys, path, "PCSC-E112", 1, (["check"], ["compile"]))


def test_transitions_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = MAX_TRANSITIONS + 1
    lines = ['route big "b" {', "    as_of 2019-03-01", '    policy "venture@1.0.0"', "    uses venture"]
    lines += [f"    state s{i} {{ developers {i} }}" for i in range(n + 1)]
    lines.append(f"    vision s{n} {{ tam 1M usd capture 5% defensibility 0.5 }}")
    lines += [
        f'    transition t{i}: s{i} -> s{i + 1} {{ class "devtools/first-users"; threshold developers >= {i + 1} }}'
        for i in range(n)
    ]
    path = route_file(tmp_path, "\n".join([*lines, "}"]) + "\n")
    expect(capsys, path, "PCSC-E222", 1, (["check"], ["compile"]))


def test_routes_per_file_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    block = 'route r "t" { as_of 2019-03-01 }\n'
    path = route_file(tmp_path, block * (MAX_ROUTES + 1))
    expect(capsys, path, "PCSC-E223", 1, (["check"],))
