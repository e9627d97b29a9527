"""Generated documentation stays in step with the code that generates it."""

from __future__ import annotations

from pcsc.diagnostics.codes import CODES
from pcsc.docs import diagnostics_markdown
from tests.conftest import ROOT


def test_diagnostics_doc_is_current() -> None:
    on_disk = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert on_disk == diagnostics_markdown(), "run `python -m pcsc.docs` to regenerate docs/diagnostics.md"


def test_every_code_is_documented_once() -> None:
    text = diagnostics_markdown()
    for code in CODES:
        assert text.count(f"`{code}`") == 1
