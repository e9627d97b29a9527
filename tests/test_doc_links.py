"""The docs' navigation holds: every page is reachable from docs/index.md, and no page
(README.md included, which the site build does not read) links to a file or an anchor
that does not exist, or names in backticks a file of the checkout that does not exist."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
#: The checkout's folders a backticked path may start with.
FOLDERS = ("docs", "pcsc", "examples", "benchmarks", "tests", "policies", "obligations", "editors", "grammar", ".ci")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(rf"`((?:{'|'.join(re.escape(f) for f in FOLDERS)})/[^`\s]*)`")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading: its text as rendered,
    folded to ASCII, without punctuation, lower case, runs of spaces and hyphens one `-`."""
    text = re.sub(r"<[^>]+>|[`*]", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    found = {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)}
    return found | set(re.findall(r'<a (?:id|name)="([^"]+)"', text))


def _prose(page: Path) -> str:
    return _FENCE.sub("", page.read_text(encoding="utf-8"))


def test_the_slug_is_mkdocs() -> None:
    assert slug("What an append checks, and what it costs") == "what-an-append-checks-and-what-it-costs"
    assert slug("`pcsc ledger verify [--ledger PATH]`") == "pcsc-ledger-verify-ledger-path"
    assert slug("Folds: time and the option to stop") == "folds-time-and-the-option-to-stop"


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in _LINK.findall(_prose(page)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no such anchor in {where.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_reaches_a_file_and_anchor(page: Path) -> None:
    assert broken_links(page) == []


def test_a_missing_file_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# B page\n\n## A `code` part: here\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#a-code-part-here) [up](#top) [gone](c.md) [no](b.md#nope) [web](https://x.example/c.md)\n"
                    "# Top\n```\n[in a block](d.md)\n```\n", encoding="utf-8")
    assert broken_links(page) == ["c.md: no such file", "b.md#nope: no such anchor in b.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_path_named_is_a_file_of_the_checkout(page: Path) -> None:
    """`pcsc/forecast/freezing.py` named a module that is `freeze.py`."""
    text = page.read_text(encoding="utf-8")
    missing = []
    for raw in _PATH.findall(text):
        path = raw.rstrip(".,;:").split("#")[0]
        if re.search(r"[*<>…{}]|\bOUT\b", path):
            continue  # a pattern or a placeholder
        top = path.split("/")[1]
        if path.startswith("pcsc/") and not path.endswith(".py") and not (ROOT / "pcsc" / top).exists():
            continue  # a SARIF rule id (`pcsc/no-obligation`), not a file
        if not (ROOT / path).exists() and not (page.parent / path).exists():
            missing.append(path)
    assert missing == []


def test_the_index_reaches_every_page() -> None:
    """Linked from docs/index.md directly (tests/test_doc_claims.py) or through the
    pages it links: none is an orphan."""
    seen, todo = set(), ["index.md"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for target in _LINK.findall(_prose(DOCS / name)):
            path = target.partition("#")[0]
            if path.endswith(".md") and "/" not in path and (DOCS / path).exists():
                todo.append(path)
    assert sorted(p.name for p in DOCS.glob("*.md") if p.name not in seen) == []
