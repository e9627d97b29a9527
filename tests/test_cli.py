"""The command layer's conventions: standard input, usage errors, quiet and colour,
output files, configuration, the JSON envelope, and commands imported only when run."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pcsc.base.config import ConfigError, load_config
from pcsc.cli.context import colour_enabled
from pcsc.cli.main import fit_terminal
from tests.conftest import ROOT, SPEC_ROUTE, run_cli


# ---------------------------------------------------------------------- standard input
@pytest.mark.parametrize("command", ["check", "compile", "gate"])
def test_dash_reads_standard_input(
    at_root: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(SPEC_ROUTE.read_text(encoding="utf-8")))
    code, out, _ = run_cli(capsys, command, "-", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["inputs"][0]["path"] == "<stdin>"
    if command == "compile":
        (route,) = doc["routes"]
        assert route["route"] == "devtools_api" and round(route["score"], 4) == 885626.1726


def test_errors_in_standard_input_are_located_in_it(
    at_root: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("launch: garage", "launch: garag")
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code, _, err = run_cli(capsys, "check", "-")
    assert code == 1
    assert err.startswith("<stdin>:18:24: error: unknown state `garag`")


def test_standard_input_is_read_once(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", "-", "-")
    assert code == 2 and "standard input (`-`) can be read only once" in err


# ---------------------------------------------------------------------- usage
def test_unknown_option_prints_the_subcommands_usage(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "--bogus", str(SPEC_ROUTE))
    assert code == 2 and out == ""
    assert err.startswith("usage: pcsc check ")
    assert "pcsc check: error: unrecognized arguments: --bogus" in err


def test_no_command_and_a_bare_group_print_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys)
    assert code == 2 and "check" in err and "compile" in err
    code, _, err = run_cli(capsys, "policy")
    assert code == 2 and "usage: pcsc policy" in err and "hash" in err


def test_unknown_command_names_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "complie", "x")
    assert code == 2 and "invalid choice: 'complie'" in err


def test_a_missing_search_folder_is_an_error(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", str(SPEC_ROUTE), "--lib-path", "no/such/folder")
    assert code == 2 and "--lib-path no/such/folder: no such folder" in err


def test_commands_are_imported_only_when_they_run() -> None:
    probe = (
        "import sys\n"
        "from pcsc.cli import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('lark', 'sympy', 'numpy', 'pcsc.compiler.session', 'rich')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('pcsc.cli.commands.') or m in heavy)\n"
        "print(loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]"


# ---------------------------------------------------------------------- quiet, colour, width
def test_quiet_drops_the_ok_note(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "check", str(SPEC_ROUTE))[2] == "ok: 1 route checked\n"
    assert run_cli(capsys, "check", "--quiet", str(SPEC_ROUTE))[2] == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "environ", "terminal", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # only a non-empty NO_COLOR counts
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_colour_choice(choice: str, environ: dict[str, str], terminal: bool, expected: bool) -> None:
    stream = _Terminal() if terminal else io.StringIO()
    assert colour_enabled(choice, stream, environ) is expected


def test_forced_colour_colours_errors(
    at_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "r.route"
    bad.write_text(SPEC_ROUTE.read_text(encoding="utf-8").replace("launch: garage", "launch: garag"))
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, _, err = run_cli(capsys, "check", str(bad))
    assert "\x1b[" in err
    _, _, err = run_cli(capsys, "check", "--color", "never", str(bad))
    assert "\x1b[" not in err and ": error: unknown state `garag`" in err


def test_long_lines_are_cut_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "x" * 200 + "\nshort"
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert fit_terminal(text, wide=False) == text  # a pipe gets whole lines
    monkeypatch.setattr(sys, "stdout", _Terminal())
    monkeypatch.setenv("COLUMNS", "80")
    cut = fit_terminal(text, wide=False).split("\n")
    assert cut == ["x" * 79 + "…", "short"]
    assert fit_terminal(text, wide=True) == text


# ---------------------------------------------------------------------- output files
def test_output_to_a_missing_folder_is_a_clear_error(
    at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "out.json"
    code, out, err = run_cli(capsys, "compile", str(SPEC_ROUTE), "--format", "json", "-o", str(target))
    assert code == 1 and out == ""
    assert err.startswith(f"{target}: error: cannot write the output") and "[PCSC-E108]" in err


def test_output_file_holds_what_stdout_would(at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, printed, _ = run_cli(capsys, "compile", str(SPEC_ROUTE), "--format", "json")
    target = tmp_path / "out.json"
    code, out, _ = run_cli(capsys, "compile", str(SPEC_ROUTE), "--format", "json", "-o", str(target))
    assert code == 0 and out == ""
    assert target.read_text(encoding="utf-8") == printed


# ---------------------------------------------------------------------- the envelope
@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        (["check"], "check"),
        (["compile"], "compile"),
        (["gate"], "gate"),
        (["seams"], "seams"),
        (["explain"], "explain"),
    ],
)
def test_every_document_has_the_envelope(
    at_root: None, capsys: pytest.CaptureFixture[str], argv: list[str], kind: str
) -> None:
    code, out, _ = run_cli(capsys, *argv, "examples/devtools_api.route", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == {"kind": kind, "version": 1}
    assert doc["pcsc"]
    assert [i["path"] for i in doc["inputs"]] == ["examples/devtools_api.route"]
    assert len(doc["inputs"][0]["sha256"]) == 64
    assert doc["diagnostics"] == []


def test_policy_errors_are_diagnostics_in_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "policies" / "broken"
    folder.mkdir(parents=True)
    (folder / "1.0.0.toml").write_text('[policy]\nid = "broken"\nversion = "1.0.0"\ncoverage = "maybe"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "policy", "show", "policies/broken/1.0.0.toml")
    assert code == 1
    assert err.startswith("policies/broken/1.0.0.toml: error: ") and err.rstrip().endswith("[PCSC-E403]")
    code, out, _ = run_cli(capsys, "policy", "show", "policies/broken/1.0.0.toml", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["schema"]["kind"] == "policy-show"
    assert {d["code"] for d in doc["diagnostics"]} == {"PCSC-E403"}
    assert all(d["file"] == "policies/broken/1.0.0.toml" for d in doc["diagnostics"])


# ---------------------------------------------------------------------- configuration
def test_configuration_is_found_upward_and_flags_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "libs").mkdir()
    (tmp_path / "pcsc.toml").write_text('lib_path = ["libs"]\ncoverage = "dock"\nformat = "json"\n')
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    config = load_config()
    assert config.path == tmp_path / "pcsc.toml"
    assert config.lib_path == (tmp_path / "libs",) and config.coverage == "dock"

    code, out, _ = run_cli(capsys, "config")
    assert code == 0
    doc = json.loads(out)  # the configured default format
    settings = {s["name"]: s for s in doc["settings"]}
    assert settings["coverage"] == {"name": "coverage", "value": "dock", "from": str(tmp_path / "pcsc.toml")}
    assert settings["ledger"]["from"] == "default"

    code, out, _ = run_cli(capsys, "config", "--coverage", "off", "--format", "text")
    assert code == 0
    assert "coverage        off    # from command line" in out


def test_the_configuration_example_of_the_docs_is_what_pcsc_config_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    block = re.search(r"```\n\$ pcsc config\n(.*?)```", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), re.S)
    assert block is not None
    project = tmp_path / "work" / "project"
    (project / "obligations").mkdir(parents=True)
    (project / "pcsc.toml").write_text('lib_path = ["obligations"]\ncoverage = "gate"\n')
    monkeypatch.chdir(project)
    code, out, _ = run_cli(capsys, "config")
    assert code == 0 and out.replace(str(tmp_path), "") == block[1]


def test_a_configured_postgresql_ledger_is_an_address_not_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ledger = "postgresql://…"` in pcsc.toml opens the PostgreSQL store, as `--ledger`
    does (no server is needed: nothing listens on port 1, so the connection is refused)."""
    address = "postgresql://ana:secret@127.0.0.1:1/pcsc"
    shown = "postgresql://ana:***@127.0.0.1:1/pcsc"
    (tmp_path / "pcsc.toml").write_text(f'ledger = "{address}"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert load_config().ledger == address  # not joined to the file's folder
    code, out, _ = run_cli(capsys, "config", "--format", "json")
    settings = {s["name"]: s for s in json.loads(out)["settings"]}
    assert code == 0 and settings["ledger"] == {"name": "ledger", "value": shown, "from": str(tmp_path / "pcsc.toml")}
    for argv in (["ledger", "head"], ["ledger", "head", "--ledger", address]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 1 and "PCSC-E711" in err, err
        assert err.startswith(shown) and "secret" not in err and "no ledger at" not in err, err
    file_ledger = tmp_path / "pcsc.toml"
    file_ledger.write_text('ledger = "ledgers/main.sqlite"\n')
    assert load_config().ledger == tmp_path / "ledgers" / "main.sqlite"


def test_pyproject_tool_table_configures_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    route = tmp_path / "r.route"
    route.write_text(SPEC_ROUTE.read_text(encoding="utf-8"))
    table = '[tool.pcsc]\nformat = "json"\ncoverage = "off"\n'
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n' + table)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "compile", "r.route")
    assert code == 0
    (packet,) = json.loads(out)["routes"]  # JSON: the table's `format`
    # ... but a configuration file never lowers the policy's coverage mode
    assert packet["verdict"] == "released" and packet["coverage"]["mode_source"] == "policy"
    code, out, _ = run_cli(capsys, "compile", "r.route", "--coverage", "off")
    assert json.loads(out)["routes"][0]["verdict"] == "ungated"


def test_a_pyproject_without_the_table_is_not_a_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_config(tmp_path).path is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('colour = "red"\n', "unknown key `colour`"),
        ('coverage = "maybe"\n', "`coverage` must be one of gate, dock, off"),
        ("lib_path = 3\n", "`lib_path` must be a list of folder paths"),
        ("lib_path = [\n", "not valid TOML"),
    ],
)
def test_bad_configuration_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (tmp_path / "pcsc.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "check", str(SPEC_ROUTE))
    assert code == 1
    assert err.startswith(f"{tmp_path / 'pcsc.toml'}: error: ") and "[PCSC-E407]" in err
