"""Generated documentation stays in step with the code that generates it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from pcsc.diagnostics.codes import CODES
from pcsc.policy.model import (
    Buckets,
    EvidencePolicy,
    FloorTable,
    Gate,
    Policy,
    PolicyHeader,
    Prior,
    Ranking,
    Reweighting,
    Uncertainty,
)
from pcsc.render.doclinks import code_anchor
from pcsc.render.envelope import SCHEMA_VERSIONS
from pcsc.tools.docs import diagnostics_markdown, json_markdown, policy_reference_markdown
from tests.conftest import ROOT


def test_diagnostics_doc_is_current() -> None:
    on_disk = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert on_disk == diagnostics_markdown(), "run `python -m pcsc.tools.docs` to regenerate docs/diagnostics.md"


def test_every_code_is_documented_once() -> None:
    text = diagnostics_markdown()
    for code in CODES:
        assert text.count(f"`{code}`") == 1


def test_json_doc_is_current() -> None:
    on_disk = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    assert on_disk == json_markdown(), "run `python -m pcsc.tools.docs` to regenerate docs/json.md"


def test_every_document_kind_is_documented_with_its_schema_file() -> None:
    text = json_markdown()
    for kind, version in SCHEMA_VERSIONS.items():
        assert f"## `{kind}` " in text
        assert f"`pcsc/render/schemas/{kind}.v{version}.json`" in text


def test_every_diagnostic_code_has_its_anchor() -> None:
    text = diagnostics_markdown()
    for code in CODES:
        assert text.count(f'<a id="{code_anchor(code)}"></a>') == 1


def test_policy_reference_is_current() -> None:
    on_disk = (ROOT / "docs" / "policy-reference.md").read_text(encoding="utf-8")
    assert on_disk == policy_reference_markdown(), \
        "run `python -m pcsc.tools.docs` to regenerate docs/policy-reference.md"


def test_policy_reference_lists_every_key_of_the_model() -> None:
    text = policy_reference_markdown()
    for cls in (Policy, PolicyHeader, Prior, EvidencePolicy, Reweighting, FloorTable, Uncertainty, Buckets, Gate,
                Ranking):
        for field in attrs.fields(cls):
            if field.metadata.get("derived"):
                assert f".{field.name}`" not in text
                continue
            assert re.search(rf"`[^`]*\b{field.name}\b[^`]*`", text), f"{cls.__name__}.{field.name} is not listed"
    assert '## `[priors."<class>"]`' in text and "## `[[gates]]`" in text
    assert "| `reweighting.decay` | number | required |" in text
    assert '| `policy.coverage` | `"gate"` \\| `"dock"` \\| `"off"` | `"gate"` |' in text


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: no broken link or anchor, every page in the nav."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "tutorial" / "index.html").is_file()


def test_every_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs").glob("*.md"):
        assert re.search(rf":\s+{re.escape(page.name)}\s*$", config, re.M), f"docs/{page.name} is not in mkdocs.yml"


def test_no_page_names_a_site_that_is_not_published() -> None:
    """The docs are published nowhere yet: the site's address is a setting (`docs_url`,
    docs/cli.md), so no page, the site's configuration or the package names one."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "site_url" not in config
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "pcsc").rglob("*.py")]
    assert [p.name for p in texts if re.search(r"readthedocs\.io|pypi\.org/project/pcsc", p.read_text())] == []


# ---------------------------------------------------------------------- no unshipped documents cited
#: A citation of a document that does not ship: the team's design file, or its sections.
_CITES_UNSHIPPED = re.compile(r"\bDESIGN\b|design's §")


def _text_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    skip = {"node_modules", "__pycache__", ".mypy_cache"}
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(root).parts) and p.suffix not in {".pyc", ".png", ".svg"}
    )


def _citations(root: Path) -> list[str]:
    found = []
    for path in _text_files(root):
        if path == Path(__file__).resolve():
            continue  # the pattern above
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if _CITES_UNSHIPPED.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("where", ["docs", "README.md", "mkdocs.yml", "editors", "tests", "benchmarks", "examples",
                                   "policies", "obligations", "grammar", ".ci", "pyproject.toml"])
def test_shipped_text_cites_no_unshipped_document(where: str) -> None:
    """Users never see the team's design file, so nothing they read may send them to it."""
    assert _citations(ROOT / where) == []


def test_package_text_cites_no_unshipped_document() -> None:
    assert _citations(ROOT / "pcsc") == []


# ---------------------------------------------------------------------- architecture.md: mutation testing
def test_the_mutation_testing_counts_add_up() -> None:
    """The table is a record of a mutmut run (too slow for this suite, so not re-run
    here); what can be checked is that each row's counts add up to its mutants, the
    rate is killed over those run, and the total row is the sum of the others."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("### mutmut", 1)[1].split("\n### ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| area", "| ---"))]
    assert len(rows) >= 5 and rows[-1][0] == "**total**", rows

    def numbers(row: list[str]) -> list[int]:
        return [int(c.strip("*").replace(",", "")) for c in row[1:7]]

    for row in rows:
        mutants, killed, survived, timeout, no_tests, not_run = numbers(row)
        assert killed + survived + timeout + no_tests + not_run == mutants, row
        run = killed + survived + timeout
        assert row[7].strip("*") == (f"{(killed + timeout) / run:.1%}" if run else "—"), row
    assert [sum(col) for col in zip(*(numbers(r) for r in rows[:-1]), strict=True)] == numbers(rows[-1])
    assert re.search(r"on \d{4}-\d\d-\d\d", section) and "mutmut 3." in section
