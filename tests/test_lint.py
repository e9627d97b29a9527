"""ruff and mypy, as configured in pyproject.toml, pass on the code base.

ruff and mypy come from the [test] extra; a missing tool fails the test (it is not
skipped), with the output that says so.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def run_tool(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, cwd=ROOT, timeout=600)


def report(proc: subprocess.CompletedProcess[str]) -> str:
    return f"`{' '.join(map(str, proc.args[2:]))}` exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_ruff() -> None:
    proc = run_tool("ruff", "check", "--no-cache", "pcsc", "tests", "benchmarks")
    assert proc.returncode == 0, report(proc)


def test_mypy() -> None:
    proc = run_tool("mypy")  # files and strictness from [tool.mypy] in pyproject.toml
    assert proc.returncode == 0, report(proc)
    assert "Success" in proc.stdout, report(proc)
