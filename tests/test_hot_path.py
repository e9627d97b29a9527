"""`pcsc check` and `pcsc compile` stay on the hot path: no sympy, no numpy (docs/cli.md).

Each command runs in a fresh interpreter, in process through `pcsc.cli.main`, and the
probe then reports which of the heavy modules `sys.modules` holds.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, SPEC_ROUTE

HEAVY = ("sympy", "numpy")

PROBE = """
import json, sys
from pcsc.cli import main
{before}
code = main({argv!r})
sys.stdout.flush()
print()
print("PROBE " + json.dumps({{"exit": code, "loaded": {{m: m in sys.modules for m in {heavy!r}}}}}))
"""


def probe(argv: list[str], before: str = "") -> dict[str, object]:
    code = PROBE.format(argv=argv, heavy=HEAVY, before=before)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PROBE ")]
    assert len(lines) == 1, proc.stdout
    result: dict[str, object] = json.loads(lines[0].removeprefix("PROBE "))
    return result


@pytest.mark.parametrize(
    "argv",
    [
        ["check", str(SPEC_ROUTE)],
        ["check", "--format", "json", str(SPEC_ROUTE)],
        ["compile", str(SPEC_ROUTE)],
        ["compile", "--format", "json", str(SPEC_ROUTE)],
    ],
    ids=["check", "check-json", "compile", "compile-json"],
)
def test_check_and_compile_import_neither_sympy_nor_numpy(argv: list[str]) -> None:
    result = probe(argv)
    assert result["exit"] == 0
    assert result["loaded"] == {"sympy": False, "numpy": False}


def test_the_probe_sees_a_heavy_import() -> None:
    # the control: the same probe reports True once the modules are imported
    result = probe(["check", str(SPEC_ROUTE)], before="import numpy, sympy")
    assert result["exit"] == 0
    assert result["loaded"] == {"sympy": True, "numpy": True}
