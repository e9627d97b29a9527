"""Layering: the library never imports the command line, and policies never import
what is built on them."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

PCSC = ROOT / "pcsc"
# built on policies (the packages above `policy` in the layers of pyproject.toml): a
# policy module importing one of these would be a cycle of layers
_LAYERS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"][0]
_PACKAGES = [name.strip() for layer in _LAYERS["layers"] for name in layer.split("|")]
ABOVE_POLICIES = tuple(f"pcsc.{name}" for name in _PACKAGES[: _PACKAGES.index("policy")])


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (lazy imports in functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def library_modules() -> list[Path]:
    """Every module but the command line's and the developer tools' (the mutation fuzzer
    runs the command line as a user would; nothing of the library imports the tools)."""
    outside = (PCSC / "cli", PCSC / "tools")
    return [p for p in sorted(PCSC.rglob("*.py"))
            if not any(o in p.parents for o in outside) and p != PCSC / "__main__.py"]


@pytest.mark.parametrize("path", library_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_never_imports_the_command_line(path: Path) -> None:
    bad = sorted(m for m in imports(path) if under(m, ("pcsc.cli", "argparse")))
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("path", sorted((PCSC / "policy").rglob("*.py")), ids=lambda p: p.name)
def test_policies_import_only_lower_layers(path: Path) -> None:
    bad = sorted(m for m in imports(path) if under(m, ABOVE_POLICIES))
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
