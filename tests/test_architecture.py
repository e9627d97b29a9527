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


def test_every_library_module_is_under_the_contracts() -> None:
    """A new module of the library is named in the contract that keeps it from the
    command line (else import-linter never looks at it)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"]
                   if c["name"] == "The library never imports the command line"]
    named = set(contract["source_modules"])
    package = ROOT / "pcsc"
    modules = {f"pcsc.{p.stem}" for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    modules |= {f"pcsc.{p.parent.name}" for p in package.glob("*/__init__.py") if p.parent.name != "cli"}
    assert modules - named == set(), "add these to [tool.importlinter] in pyproject.toml"
