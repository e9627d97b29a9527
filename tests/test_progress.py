"""The progress bar of `check` and `compile` over many files, through a real terminal:
the command runs with its standard error on a pseudo-terminal (the `pty` module) and
its standard output on a pipe. The bar is drawn on the terminal only; standard output
is byte for byte what it is without a terminal; a JSON or SARIF report, `--quiet` and a
pipe get no bar at all."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@pytest.fixture(scope="module")
def cohort(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped cohort twice over (60 routes), so the run lasts long enough to draw."""
    folder = tmp_path_factory.mktemp("progress")
    for copy in ("a", "b"):
        shutil.copytree(EXAMPLES / "cohort", folder / copy, ignore=shutil.ignore_patterns("*.toml", "*.md"))
    return folder


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30", "XDG_CACHE_HOME": str(tmp / "xdg"),
            "PYTHONPATH": str(ROOT)}


def run_on_terminal(argv: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Exit status, standard output (a pipe) and what reached the terminal (standard error)."""
    primary, secondary = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "pcsc", *argv], cwd=cwd, env=_env(cwd), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=secondary) as proc:
        os.close(secondary)
        assert proc.stdout is not None
        terminal, out = b"", b""
        streams = {primary, proc.stdout.fileno()}
        while streams:
            ready, _, _ = select.select(list(streams), [], [], 120)
            assert ready, "the command stopped writing"
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the terminal is closed (Linux: EIO) once the command is gone
                    chunk = b""
                if not chunk:
                    streams.discard(fd)
                elif fd == primary:
                    terminal += chunk
                else:
                    out += chunk
        os.close(primary)
        return proc.wait(timeout=120), out, terminal


def run_on_pipes(argv: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    done = subprocess.run([sys.executable, "-m", "pcsc", *argv], cwd=cwd, env=_env(cwd), capture_output=True,
                          timeout=300, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("argv", [["check", "a", "b"], ["compile", "a", "b"], ["check", "a", "b", "--jobs", "2"]],
                         ids=["check", "compile", "check-jobs-2"])
def test_a_terminal_shows_the_bar_and_the_report_is_unchanged(cohort: Path, argv: list[str]) -> None:
    code, out, terminal = run_on_terminal(argv, cohort)
    piped = run_on_pipes(argv, cohort)
    assert (code, out) == piped[:2]  # the bar never reaches standard output
    assert b"reading routes" in terminal  # rich draws the task's description ...
    assert b"\x1b[" in terminal  # ... with cursor control: a live bar, not a line of text
    assert b"reading routes" not in piped[2] and b"\x1b[" not in piped[2]  # a pipe sees no bar
    if argv[0] == "compile":
        assert b"compiling" in terminal
        assert out.count(b"\n") > 60  # the ranking of 60 routes


@pytest.mark.parametrize("argv", [["check", "a", "b", "--format", "json"], ["check", "a", "b", "--format", "sarif"],
                                  ["compile", "a", "b", "--format", "json"], ["check", "a", "b", "--quiet"]],
                         ids=["check-json", "check-sarif", "compile-json", "quiet"])
def test_no_bar_beside_a_json_or_sarif_report_or_when_quiet(cohort: Path, argv: list[str]) -> None:
    code, out, terminal = run_on_terminal(argv, cohort)
    piped = run_on_pipes(argv, cohort)
    assert (code, out) == piped[:2]
    assert b"reading routes" not in terminal and b"compiling" not in terminal
    if "--quiet" not in argv:
        assert out.lstrip().startswith(b"{")
