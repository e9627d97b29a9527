"""The package's layers, as import-linter contracts (pyproject.toml [tool.importlinter]):
the library never imports the command line, each layer imports only the layers below
it, and no module imports one that imports it back."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_import_contracts_are_kept() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout
