"""What the README shows is what the program prints."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT


def _block_after(marker: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(marker)
    body = text[start:].split("```", 2)[0]
    return body


def test_experiment_table_matches_the_command() -> None:
    shown = _block_after("$ pcsc seams --experiment examples/cohort/")
    shown_lines = [line for line in shown.splitlines()[1:] if line.strip()]
    out = subprocess.run(
        [sys.executable, "-m", "pcsc", "seams", "--experiment", "examples/cohort/"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout
    assert shown_lines, "the README lost its experiment block"
    printed = out.splitlines()
    start = printed.index(shown_lines[0])
    assert printed[start : start + len(shown_lines)] == shown_lines


def test_set_up_commands_come_first() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", text, re.S)
    assert blocks[0] == "python3 -m pip install . && pcsc compile examples/"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert blocks[1] in ci, ".ci/run must run the README's test command"


def test_table_a1_grading_matches_the_command() -> None:
    command = '$ pcsc evaluate --scores examples/routecast_table_a1.csv --id blind_id --outcome outcome_bucket'
    shown = [line for line in _block_after(command).splitlines()[1:] if line.strip()]
    out = subprocess.run(
        [sys.executable, "-m", "pcsc", "evaluate", "--scores", "examples/routecast_table_a1.csv", "--id", "blind_id",
         "--outcome", "outcome_bucket", "--positive", "S+,+", "--negative", "-"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout
    assert shown and [line for line in out.splitlines() if line.strip()] == shown


def test_compile_block_matches_the_command() -> None:
    shown = [line for line in _block_after("$ pcsc compile examples/devtools_api.route\n").splitlines()[1:]]
    out = subprocess.run([sys.executable, "-m", "pcsc", "compile", "examples/devtools_api.route"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert shown and out.splitlines()[: len(shown)] == shown


def test_seams_block_matches_the_command() -> None:
    shown = _block_after("$ pcsc seams examples/devtools_api.route --symbolic\n").splitlines()[1:]
    out = subprocess.run([sys.executable, "-m", "pcsc", "seams", "examples/devtools_api.route", "--symbolic"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert shown and [line for line in out.splitlines() if line.strip()] == [line for line in shown if line.strip()]


def test_python_example_runs() -> None:
    (code,) = re.findall(r"```python\n(.*?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    ok, routes, score = out.split()
    blocks = sum(
        line.startswith("route ") for f in (ROOT / "examples").rglob("*.route")
        for line in f.read_text(encoding="utf-8").splitlines()
    )
    assert ok == "True" and int(routes) == blocks
    assert round(float(score), 4) == 885626.1726
