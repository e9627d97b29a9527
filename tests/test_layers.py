"""Layering: the library never imports the command line, and policies never import
what is built on them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PCSC = ROOT / "pcsc"
# built on policies: a policy module importing one of these would be a cycle of layers
ABOVE_POLICIES = (
    "pcsc.compiler.session", "pcsc.analysis.policy_diff", "pcsc.score", "pcsc.coverage", "pcsc.analysis.seams", "pcsc.analysis.redteam",
    "pcsc.forecast", "pcsc.render.packet", "pcsc.analysis.explain", "pcsc.render.text", "pcsc.cli",
)


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
    """Every module but the command line's."""
    return [p for p in sorted(PCSC.rglob("*.py")) if PCSC / "cli" not in p.parents and p != PCSC / "__main__.py"]


@pytest.mark.parametrize("path", library_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_never_imports_the_command_line(path: Path) -> None:
    bad = sorted(m for m in imports(path) if under(m, ("pcsc.cli", "argparse")))
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


def test_the_moved_library_modules_exist() -> None:
    for name in ("render/graph.py", "redteam.py", "fmt.py", "policy_diff.py"):
        assert (PCSC / name).is_file()
    assert not (PCSC / "graph.py").exists() and not (PCSC / "fmt_cmd.py").exists()
    assert not (PCSC / "policy" / "diff.py").exists()


@pytest.mark.parametrize("path", sorted((PCSC / "policy").rglob("*.py")), ids=lambda p: p.name)
def test_policies_import_only_lower_layers(path: Path) -> None:
    bad = sorted(m for m in imports(path) if under(m, ABOVE_POLICIES))
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
