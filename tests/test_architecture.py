"""The package's layers, as import-linter contracts (pyproject.toml [tool.importlinter]):
one package per stage, each importing only the packages below it; the library never
imports the command line or the developer tools; the certificate checker imports
nothing of pcsc; and no module imports one that imports it back."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from typing import Any

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


def _contract(name: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == name]
    return contract


def _layered_packages() -> list[str]:
    """The packages the layers contract names, top to bottom."""
    layers = _contract("Packages by stage, top to bottom")["layers"]
    return [name.strip() for layer in layers for name in layer.split("|")]


def test_the_package_root_holds_only_its_entry_files() -> None:
    """Everything else sits in the package of its stage (docs/architecture.md)."""
    files = {p.name for p in (ROOT / "pcsc").iterdir() if p.is_file()}
    assert files == {"__init__.py", "__main__.py", "_version.py", "py.typed"}


def test_every_package_is_in_a_layer() -> None:
    packages = {p.parent.name for p in (ROOT / "pcsc").glob("*/__init__.py")}
    assert packages == set(_layered_packages()), "name the package in [tool.importlinter] of pyproject.toml"


def test_every_package_of_the_library_is_kept_from_the_front_end_and_the_tools() -> None:
    """The packages a library user imports are the sources of the contract that keeps
    them from `pcsc.cli` and `pcsc.tools`: all but those two."""
    contract = _contract("The library never imports the command line or the developer tools")
    library = {f"pcsc.{name}" for name in _layered_packages() if name not in ("cli", "tools")}
    assert set(contract["source_modules"]) - {"pcsc._version"} == library
    assert set(contract["forbidden_modules"]) == {"pcsc.cli", "pcsc.tools"}
