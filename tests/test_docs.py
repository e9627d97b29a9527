"""Generated documentation stays in step with the code that generates it."""

from __future__ import annotations

from pcsc.diagnostics.codes import CODES
from pcsc.docs import code_anchor, diagnostics_markdown, json_markdown
from pcsc.render.envelope import SCHEMA_VERSIONS
from tests.conftest import ROOT


def test_diagnostics_doc_is_current() -> None:
    on_disk = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert on_disk == diagnostics_markdown(), "run `python -m pcsc.docs` to regenerate docs/diagnostics.md"


def test_every_code_is_documented_once() -> None:
    text = diagnostics_markdown()
    for code in CODES:
        assert text.count(f"`{code}`") == 1


def test_json_doc_is_current() -> None:
    on_disk = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    assert on_disk == json_markdown(), "run `python -m pcsc.docs` to regenerate docs/json.md"


def test_every_document_kind_is_documented_with_its_schema_file() -> None:
    text = json_markdown()
    for kind, version in SCHEMA_VERSIONS.items():
        assert f"## `{kind}` " in text
        assert f"`pcsc/schemas/{kind}.v{version}.json`" in text


def test_every_diagnostic_code_has_its_anchor() -> None:
    text = diagnostics_markdown()
    for code in CODES:
        assert text.count(f'<a id="{code_anchor(code)}"></a>') == 1
