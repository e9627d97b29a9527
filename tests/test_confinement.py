"""Folder walks never follow a link out of the folder (`pcsc.compiler.walk`).

The attack: a route folder holding `creds.route`, a link to a credential file; `pcsc
check DIR` read it and its syntax error printed the token's line on standard error,
and `pcsc blind DIR` copied it. Now every walk (check, compile, the cohort loaders
with `--jobs`, report, blind, fmt, test) refuses such a link with PCSC-E408 and reads
nothing through it; a link to a file inside the folder is read, and a linked folder is
not entered. A file named on the command line is read as named."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, run_cli

SECRET = "aws_secret_access_key = AKIAEXAMPLESECRET"
ROUTE = (EXAMPLES / "log_search.route").read_text(encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """routes/ with a route, a link to a credential file outside, a link to the route
    inside, and a linked folder outside with a route in it."""
    monkeypatch.chdir(tmp_path)
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET + "\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "other.route").write_text(ROUTE.replace("route log_search", "route other"), encoding="utf-8")
    routes = tmp_path / "routes"
    routes.mkdir()
    (routes / "a.route").write_text(ROUTE, encoding="utf-8")
    (routes / "creds.route").symlink_to(secret)
    (routes / "again.route").symlink_to(routes / "a.route")
    (routes / "linked").symlink_to(elsewhere, target_is_directory=True)
    return tmp_path


RUNS = [["check"], ["compile"], ["gate"], ["check", "--jobs", "2"], ["compile", "--jobs", "2"], ["report"]]


@pytest.mark.parametrize("command", RUNS, ids=" ".join)
def test_a_link_out_of_a_route_folder_is_refused_and_never_read(
    tree: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, err = run_cli(capsys, *command, "routes")
    assert code == 1
    assert "AKIAEXAMPLESECRET" not in out + err
    assert "routes/creds.route: error: routes/creds.route is a link to" in err and "[PCSC-E408]" in err
    assert "other" not in out  # the linked folder is not entered
    if command[0] == "report":
        return  # HTML only
    code, out, err = run_cli(capsys, *command, "--format", "json", "routes")
    assert "AKIAEXAMPLESECRET" not in out + err
    doc = json.loads(out)
    assert [d["code"] for d in doc["diagnostics"] if d["severity"] == "error"] == ["PCSC-E408"]
    assert sorted(i["path"] for i in doc["inputs"]) == ["routes/a.route", "routes/again.route"]


def test_a_link_inside_the_folder_is_read(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "routes" / "creds.route").unlink()
    code, _, err = run_cli(capsys, "check", "routes")
    assert code == 0 and "ok: 2 routes checked" in err  # a.route and its link


def test_a_file_named_on_the_command_line_is_read_as_named(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tree / "mine.route"
    link.symlink_to(tree / "elsewhere" / "other.route")
    assert run_cli(capsys, "check", str(link))[0] == 0


def test_a_loop_of_links_is_no_crash(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tree / "routes" / "loop.route"
    loop.symlink_to(loop)
    code, _, err = run_cli(capsys, "check", "routes")
    assert code == 1 and "PCSC-E105" in err and "internal error" not in err


def test_blind_copies_nothing_through_a_link_out(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "blind", "routes", "-o", "blinded", "--map", "map.json")
    assert code == 1 and "[PCSC-E408]" in err
    assert not (tree / "blinded").exists() and not (tree / "map.json").exists()
    assert "AKIAEXAMPLESECRET" not in out + err


def test_fmt_neither_reads_nor_rewrites_a_file_through_a_link_out(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tree / "elsewhere" / "other.route"
    messy = "route other {\nas_of 2014-01-15\n}\n"
    outside.write_text(messy, encoding="utf-8")
    (tree / "routes" / "messy.route").symlink_to(outside)
    code, out, err = run_cli(capsys, "fmt", "routes")
    assert code == 1 and err.count("[PCSC-E408]") == 2  # creds.route and messy.route
    assert outside.read_text(encoding="utf-8") == messy
    assert "AKIAEXAMPLESECRET" not in out + err


def test_policy_test_folders_refuse_a_link_out(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tests = tree / "policies" / "venture" / "tests"
    tests.mkdir(parents=True)
    shutil.copy(ROOT / "policies" / "venture" / "1.0.0.toml", tree / "policies" / "venture" / "1.0.0.toml")
    (tests / "leak.pcsctest.toml").symlink_to(tree / "home" / ".aws" / "credentials")
    code, out, err = run_cli(capsys, "test", str(tests))
    assert code == 1 and "[PCSC-E408]" in err and "AKIAEXAMPLESECRET" not in out + err


def test_the_walk_reports_each_link_out_once_in_sorted_order(tree: Path) -> None:
    from pcsc.compiler.walk import folder_files

    (tree / "routes" / "b_out.route").symlink_to(tree / "elsewhere" / "other.route")
    found, refused = folder_files(Path("routes"), (".route",))
    assert found == [Path("routes/a.route"), Path("routes/again.route")]
    assert [d.span.file for d in refused] == ["routes/b_out.route", "routes/creds.route"]
    assert all(os.path.islink(d.span.file) for d in refused)
