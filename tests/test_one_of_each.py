"""One of each (docs/architecture.md, "One of each"): an idea the program needs in
several places is written once, in the lowest package that needs it, and imported."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pcsc
from tests.conftest import EXAMPLES, ROOT, run_cli

# the certificate checker keeps its own of everything, on purpose
SOURCES = sorted(p for p in (ROOT / "pcsc").rglob("*.py")
                 if not p.relative_to(ROOT).as_posix().startswith("pcsc/certify/check"))


def where(pattern: str) -> set[str]:
    """The modules of pcsc (the independent checker aside) whose source matches ``pattern``."""
    found = re.compile(pattern, re.M)
    return {str(p.relative_to(ROOT)) for p in SOURCES if found.search(p.read_text(encoding="utf-8"))}


def test_exit_codes_are_defined_once() -> None:
    assert where(r"^_?EXIT_[A-Z]+\b[^=\n]*=") == {"pcsc/diagnostics/exits.py"}
    assert where(r"def _?exit_code\(diagnostics") == {"pcsc/diagnostics/exits.py"}


def test_the_modes_and_verdicts_are_spelled_once() -> None:
    assert where(r'Literal\["gate", "dock", "off"\]|\("gate", "dock", "off"\)') == {"pcsc/base/modes.py"}
    assert where(r'"released", "suspend-and-ask"') == {"pcsc/base/modes.py"}


@pytest.mark.parametrize("path", [
    EXAMPLES / "devtools_api.route",  # released: 0
    ROOT / "tests/data/api/devtools_api_seam1.route",  # GATE refuses: 3
    ROOT / "tests/data/diagnostics/unknown_names.route",  # errors: 1
], ids=lambda p: Path(p).stem)
def test_the_api_and_the_command_line_give_the_same_exit_code(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run_cli(capsys, "compile", str(path))
    assert pcsc.compile(path).exit_code == code
    assert code == {"devtools_api": 0, "devtools_api_seam1": 3, "unknown_names": 1}[path.stem]
