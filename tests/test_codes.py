"""Diagnostic codes are named constants registered in the one `CODES` table."""

from __future__ import annotations

import pytest

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics, Span


def test_every_registered_code_is_a_constant_named_after_it() -> None:
    for text, code in codes.CODES.items():
        assert getattr(codes, text.removeprefix("PCSC-")) is code


def test_add_takes_a_code_and_records_its_string() -> None:
    diags = Diagnostics()
    diags.add(codes.E209, "twice", Span.whole_file("f"))
    assert diags.items[0].code == "PCSC-E209"
    assert diags.items[0].severity == "error"


def test_a_string_code_is_refused() -> None:
    diags = Diagnostics()
    diags.add(codes.W601, "late", Span.whole_file("f"))
    assert diags.items[0].severity == "warning"
    with pytest.raises(TypeError):
        diags.add("PCSC-W601", "a bare string bypasses the registry", Span.whole_file("f"))  # type: ignore[arg-type]


def test_a_misspelt_code_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        getattr(codes, "E2O9")  # noqa: B009 - the point is the dynamic lookup


def test_no_code_is_written_as_a_bare_string() -> None:
    """Every diagnostic names its code through a constant, so a misspelt code is a type
    error; only the registry (and the docs generator's group prefixes) spell codes out."""
    import re

    from tests.conftest import ROOT

    allowed = {ROOT / "pcsc" / "diagnostics" / "codes.py", ROOT / "pcsc" / "tools" / "docs.py"}
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "pcsc").rglob("*.py"))
        if path not in allowed
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[\"']PCSC-[EW]\d+[\"']", line)
    ]
    assert found == []
