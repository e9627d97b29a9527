"""Inputs that ended in exit 70 (an internal error) and now end in a located
diagnostic or a clean result: huge numbers in the seams and stability arms, `--set`
with non-finite values, non-finite policy values, long names, invalid UTF-8, files
that are not regular files, and integer options in other scripts' digits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pcsc.cli import main
from tests.conftest import ROOT, SPEC_ROUTE

SPEC = SPEC_ROUTE.read_text(encoding="utf-8")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err, err
    return code, out, err


def route(tmp_path: Path, old: str, new: str, name: str = "r.route") -> Path:
    assert old in SPEC
    path = tmp_path / name
    path.write_text(SPEC.replace(old, new, 1), encoding="utf-8")
    return path


def strict_json(out: str) -> object:
    """The document, parsed as strict JSON would be (no NaN, no Infinity)."""
    def refuse(word: str) -> object:
        raise AssertionError(f"{word} in the JSON output")

    return json.loads(out, parse_constant=refuse)


# ---------------------------------------------------------------------- the seams arm
def test_a_seam_threshold_beyond_the_floats_is_e311(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # −c/(1 − p) of `monetize` with c = 1.5e308 is beyond the largest float
    path = route(tmp_path, "engineers  4 * 150k usd", "engineers  1.5e308 usd")
    code, _, _ = run(capsys, "compile", str(path))
    assert code == 0  # every number of the score is finite: compile releases it
    for extra in ([], ["--format", "json"], ["--jobs", "2"]):
        code, out, err = run(capsys, "seams", str(path), *extra)
        assert code == 1, err
        assert "PCSC-E311" in out + err and "seam 1 (`monetize`): threshold overflows" in out + err
        assert re.search(r"r\.route:\d+:\d+: error", err) or '"line"' in out
        if extra[:1] == ["--format"]:
            strict_json(out)


@pytest.mark.parametrize("where", ["engineers  2 * 45k usd", "company  1 * 60M usd"])
def test_seams_with_a_cost_of_1_5e308_elsewhere_are_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    path = route(tmp_path, where, "engineers  1.5e308 usd")
    code, out, err = run(capsys, "seams", str(path), "--format", "json")
    assert code == 0, err
    seams = strict_json(out)["routes"][0]["seams"]  # type: ignore[index]
    assert seams and all(isinstance(s["threshold"], float) for s in seams)
    code, out, _ = run(capsys, "seams", str(path))
    assert code == 0 and "e+30" in out and len(max(out.splitlines(), key=len)) < 400  # no 309-digit numbers


def test_stability_median_of_two_huge_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route(tmp_path, "engineers  2 * 45k usd", "engineers  1.5e308 usd")
    code, out, err = run(capsys, "stability", str(path), "--format", "json", "--draws", "4")
    assert code == 0, err
    score = strict_json(out)["routes"][0]["score"]  # type: ignore[index]
    assert score["median"] == pytest.approx(-1.5e308)


# ---------------------------------------------------------------------- --set and policy files
def _numeric_keys() -> list[str]:
    """Every numeric key of the shipped policy, as `--set` names it."""
    import tomllib

    from pcsc.policy.overrides import format_path

    doc = tomllib.loads((ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8"))
    keys: list[str] = []

    def walk(node: object, path: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, (int, float, list)) and not isinstance(node, bool) and path[0] != "gates":
            keys.append(format_path(path))

    walk(doc, ())
    return keys


NUMERIC_KEYS = _numeric_keys()
ROUTE_KEYS = ["vision.tam", "vision.capture", "route.transitions.launch.cost.engineers",
              "route.evidence.hn_launch.weight"]


def test_the_policy_has_numeric_keys() -> None:
    assert len(NUMERIC_KEYS) >= 20 and 'priors."devtools/first-users".floor_usd' in NUMERIC_KEYS


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+inf", "1e309", "[[1e5, nan]]", "5e308k"])
def test_set_refuses_non_finite_values(capsys: pytest.CaptureFixture[str], value: str) -> None:
    for key in NUMERIC_KEYS + ROUTE_KEYS:
        code, out, err = run(capsys, "compile", str(SPEC_ROUTE), "--set", f"{key}={value}", "--format", "json")
        assert code == 1, (key, err)
        document = strict_json(out)
        (problem,) = document["diagnostics"]  # type: ignore[index]
        assert problem["code"] == "PCSC-E901" and "not a finite number" in problem["message"], (key, problem)


@pytest.mark.parametrize("command", [["seams"], ["gate"], ["explain"], ["redteam"], ["splice", "--seam", "1"],
                                     ["policy", "diff", "venture@1.0.0", "venture@1.0.0"]])
def test_every_set_command_refuses_nan(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code, out, err = run(capsys, *command, str(SPEC_ROUTE), "--set", "reweighting.decay=nan")
    assert code == 1, err
    assert "PCSC-E901" in out + err and "not a finite number" in out + err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_the_policy_loader_refuses_non_finite_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """(It did before; kept as a guard beside `--set`.)"""
    text = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
    folder = tmp_path / "policies" / "venture"
    folder.mkdir(parents=True)
    for key, line in (("p", "p = 0.45"), ("decay", "decay = 0.5")):
        assert line in text
        policy = text.replace(line, line.split("=")[0] + f"= {value}", 1).replace('version = "1.0.0"',
                                                                               'version = "9.0.0"', 1)
        (folder / "9.0.0.toml").write_text(policy, encoding="utf-8")
        path = route(tmp_path, "venture@1.0.0", "venture@9.0.0")
        code, out, err = run(capsys, "compile", str(path), "--policy-path", str(tmp_path / "policies"),
                             "--format", "json")
        assert code == 1
        (problem,) = strict_json(out)["diagnostics"]  # type: ignore[index]
        assert problem["code"] == "PCSC-E403" and f".{key}: expected a finite number" in problem["message"]
        assert problem["file"] == "r.route" or problem["file"].endswith("r.route") and problem["line"] == 4
        code, _, err = run(capsys, "policy", "check", str(folder / "9.0.0.toml"))
        assert code == 1 and "PCSC-E403" in err and "9.0.0.toml" in err


# ---------------------------------------------------------------------- names too long for a file system
LONG = "a" * 300


@pytest.mark.parametrize(("old", "new", "code"), [
    ("uses    venture", f"uses    {LONG}", "PCSC-E206"),
    ("venture@1.0.0", f"{LONG}@1.0.0", "PCSC-E406"),
    ("venture@1.0.0", f"venture@1.0.{'1' * 300}", "PCSC-E406"),
])
@pytest.mark.parametrize("command", ["check", "compile", "seams", "explain", "gate"])
def test_long_uses_and_policy_names_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, code: str, command: str
) -> None:
    path = route(tmp_path, old, new)
    got, out, err = run(capsys, command, str(path))
    assert got == 1 and code in err, err
    line = 5 if old.startswith("uses") else 4
    assert re.search(rf"r\.route:{line}:\d+: error: .*\[{code}\]", err), err
    assert "at most 100 characters" in err


@pytest.mark.parametrize("argv", [
    ["check", f"{LONG}.route"], ["compile", f"{LONG}/x.route"], ["fmt", f"{LONG}.route"], ["fmt", "--check", LONG],
    ["seams", f"{LONG}.route"], ["graph", f"{LONG}.route"], ["rank", f"{LONG}.route"], ["test", f"{LONG}.toml"],
    ["policy", "show", f"{LONG}@1.0.0"], ["policy", "show", f"venture@{LONG}"], ["policy", "check", f"{LONG}.toml"],
    ["ledger", "show", "--ledger", f"{LONG}.db"], ["init", LONG], ["check", "--lib-path", LONG, str(SPEC_ROUTE)],
    ["check", "--policy-path", LONG, str(SPEC_ROUTE)],
])
def test_paths_too_long_are_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    got, _, err = run(capsys, *argv)
    assert got in (1, 2), err
    assert got == 2 or re.search(r"\[PCSC-E[0-9]{3}\]", err), err


def test_the_name_limit_is_documented() -> None:
    from pcsc.lang.ir.names import MAX_NAME

    language = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    assert f"| characters in a policy id, a version or a library name (they name files) | {MAX_NAME} |" in language


# ---------------------------------------------------------------------- invalid UTF-8 on standard input
BAD = b'route r "x" {\n  \xff\xfe }\n'


@pytest.mark.parametrize("command", ["check", "compile", "fmt", "seams", "explain", "gate", "graph"])
def test_invalid_utf8_on_standard_input(command: str) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pcsc", command, "-"], input=BAD, capture_output=True, timeout=120)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert "<stdin>:2:3: error: <stdin> is not UTF-8 text: byte 0xFF cannot be decoded [PCSC-E105]" in err
    assert "internal error" not in err


def test_invalid_utf8_from_a_text_stream(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    # what a text stream with surrogateescape (Python's standard input) gives for those bytes
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD.decode("utf-8", "surrogateescape")))
    code, _, err = run(capsys, "check", "-")
    assert code == 1 and "<stdin>:2:3: error" in err and "PCSC-E105" in err


@pytest.mark.parametrize("command", ["check", "compile", "fmt", "seams"])
def test_invalid_utf8_in_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    path = tmp_path / "bad.route"
    path.write_bytes(BAD)
    code, _, err = run(capsys, command, str(path))
    assert code == 1 and "bad.route:2:3: error" in err and "PCSC-E105" in err


def test_standard_input_over_the_size_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    import pcsc.lang.syntax.limits

    monkeypatch.setattr(pcsc.lang.syntax.limits, "MAX_FILE_BYTES", 1000)
    monkeypatch.setattr("sys.stdin", io.StringIO(SPEC))
    code, _, err = run(capsys, "check", "-")
    assert code == 1 and "PCSC-E112" in err and "<stdin>" in err


# ---------------------------------------------------------------------- what is not a regular file
def _pcsc(*argv: str, cwd: Path) -> tuple[int, str]:
    """`pcsc` in a process of its own, bounded in time: a read that never ends fails the test."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pcsc", *argv], cwd=cwd, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert "internal error" not in done.stderr
    return done.returncode, done.stderr


@pytest.mark.parametrize("command", [["check"], ["compile"], ["fmt", "--check"], ["seams"], ["explain"]])
def test_a_link_to_dev_zero_is_refused_unread(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "zero.route").symlink_to("/dev/zero")
    code, err = _pcsc(*command, "zero.route", cwd=tmp_path)
    assert code == 1 and "zero.route: it is a device, not a regular file: it is not read [PCSC-E105]" in err


@pytest.mark.parametrize("command", [["check"], ["compile"], ["fmt", "--check"]])
def test_a_fifo_is_refused_without_waiting(tmp_path: Path, command: list[str]) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.route")
    code, err = _pcsc(*command, "pipe.route", cwd=tmp_path)
    assert code == 1 and "pipe.route: it is a FIFO (named pipe), not a regular file" in err
    code, err = _pcsc(*command, ".", cwd=tmp_path)  # met in a folder walk too
    assert code == 1 and "pipe.route: it is a FIFO" in err


def test_a_fifo_as_a_policy_outcomes_or_library_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    os.mkfifo(tmp_path / "o.toml")
    code, err = _pcsc("resolve", "o.toml", "--ledger", "l.db", cwd=tmp_path)
    assert code == 1 and "it is a FIFO" in err
    code, err = _pcsc("policy", "check", "o.toml", cwd=tmp_path)
    assert code == 1 and "it is a FIFO" in err and "PCSC-E403" in err
    os.mkfifo(tmp_path / "venture.obl")  # beside the route: not a library file, so the shipped one is used
    (tmp_path / "r.route").write_text(SPEC, encoding="utf-8")
    code, err = _pcsc("check", "r.route", cwd=tmp_path)
    assert code == 0, err


def test_a_folder_link_named_as_a_route_is_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "routes").mkdir()
    (tmp_path / "routes" / "r.route").write_text(SPEC, encoding="utf-8")
    (tmp_path / "linked.route").symlink_to(tmp_path / "routes")
    code, _, err = run(capsys, "check", str(tmp_path / "linked.route"))
    assert code == 0 and "ok: 1 route checked" in err
    (tmp_path / "linked.toml").symlink_to(tmp_path / "routes")
    code, _, err = run(capsys, "policy", "check", str(tmp_path / "linked.toml"))
    assert code == 1 and "it is a folder, not a regular file" in err


def test_a_file_over_the_limit_is_refused_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from pcsc.lang.syntax.limits import MAX_FILE_BYTES

    path = tmp_path / "huge.route"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES * 100)  # 1 GB, sparse: reading it would take seconds and the memory
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(-1) or b"")
    for command in ("check", "compile", "fmt"):
        code, _, err = run(capsys, command, str(path))
        assert code == 1 and "PCSC-E112" in err and f"the file is {MAX_FILE_BYTES * 100:,} bytes" in err
    assert reads == []


# ---------------------------------------------------------------------- numeric options
def _numeric_options() -> list[tuple[str, str, object]]:
    """(command, option, type) of every option of every command that takes a number."""
    from pcsc.cli.main import command_parser
    from pcsc.cli.registry import COMMANDS

    found = []
    for command in COMMANDS:
        for action in command_parser(command)._actions:
            if action.option_strings and action.type is not None and action.type is not str:
                name = getattr(action.type, "__name__", "")
                if action.type in (int, float) or name in ("whole_number", "count", "decimal_number"):
                    found.append((command.name, action.option_strings[-1], action.type))
    return found


NUMERIC_OPTIONS = _numeric_options()


def test_no_option_is_parsed_by_int_or_float() -> None:
    assert len(NUMERIC_OPTIONS) > 20
    assert not [(c, o) for c, o, t in NUMERIC_OPTIONS if t in (int, float)]


@pytest.mark.parametrize(("command", "option"), [(c, o) for c, o, _ in NUMERIC_OPTIONS])
def test_numeric_options_take_ascii_digits_only(capsys: pytest.CaptureFixture[str], command: str, option: str) -> None:
    for value in ("٤", "４", "nan", "inf", "1_0", " 4", "+4"):
        code, _, err = run(capsys, *command.split(), option, value)
        assert code == 2 and "in ASCII digits" in err, (command, option, value, err)


# ---------------------------------------------------------------------- found by the mutation fuzzer
def test_fmt_drops_a_control_character_between_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """(seed 1, input 709) A form feed in the whitespace of a line: the formatter lays
    the line out without it, so its PCSC-W620 goes; the safety check called that a
    changed meaning (exit 70). One in a string stays, with its warning."""
    path = route(tmp_path, "tam            10B usd", "tam        \x0c    10B usd")
    text = path.read_text(encoding="utf-8").replace('"Developer API for SMS"', '"Developer\x0cAPI"')
    path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "fmt", "--check", str(path))
    assert code == 1 and "would format" in out + err
    code, _, err = run(capsys, "fmt", str(path))
    assert code == 0, err
    formatted = path.read_text(encoding="utf-8")
    assert formatted.count("\x0c") == 1 and '"Developer\x0cAPI"' in formatted
    code, _, err = run(capsys, "check", str(path))
    assert code == 0 and err.count("PCSC-W620") == 1


@pytest.mark.parametrize(("old", "new", "word"), [
    ("estimates  0.55 0.7 0.6", "estimates0.15 0.3", "estimates0"),  # the case
    ("developers >= 5k and paying_teams", "developers >= 5k and1.5k and paying_teams", "and1"),  # seed 2, input 5076
    ("horizon    90 days", "horizon90 days", "horizon90"),
])
def test_a_keyword_glued_to_a_number_is_one_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, word: str
) -> None:
    """A keyword is a whole word: glued to a number it was read as the keyword and the
    number (check passed), and `pcsc fmt`, spacing them apart, made text that does not
    parse (exit 70)."""
    path = route(tmp_path, old, new)
    for command in (["check"], ["compile"], ["fmt", "--check"], ["fmt"]):
        code, _, err = run(capsys, *command, str(path))
        assert code == 1 and f"`{word}`" in err, (command, err)
    assert path.read_text(encoding="utf-8") == SPEC.replace(old, new, 1)  # fmt left it as written


def test_fmt_repairing_two_statements_on_a_line_keeps_the_policys_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(seed 1, input 18801) An unknown class (PCSC-E207) is reported for a route that
    fails to lower; `fmt` repairs PCSC-E104, the route lowers, and the safety check
    missed E207 after (exit 70): it binds every route that lowers now."""
    path = route(tmp_path, 'class      "devtools/first-users"', 'class      "devtools/nope"')
    text = path.read_text(encoding="utf-8").replace("kill       developers < 100\n        horizon",
                                                    "kill       developers < 100  horizon", 1)
    path.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "check", str(path))
    assert code == 1 and "PCSC-E104" in err and "PCSC-E207" in err
    code, out, err = run(capsys, "fmt", "--check", str(path))
    assert code == 1 and "would format" in out + err
    code, _, err = run(capsys, "fmt", str(path))
    assert code == 0, err
    code, _, err = run(capsys, "check", str(path))
    assert code == 1 and "PCSC-E104" not in err and "PCSC-E207" in err
