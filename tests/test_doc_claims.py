"""Claims the docs make about what a command prints, accepts or exits with, each checked
against the program (issue 17: the docs had drifted from what the program does)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from pcsc.cli import main
from tests.conftest import ROOT, SPEC_ROUTE

DOCS = ROOT / "docs"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def paragraph(page: Path, needle: str) -> str:
    """The paragraph (or list item) of ``page`` that holds ``needle``."""
    text = page.read_text(encoding="utf-8")
    at = text.index(needle)
    start = max(text.rfind("\n\n", 0, at), text.rfind("\n- ", 0, at))
    end = text.find("\n\n", at)
    return text[start: end if end >= 0 else None]


# ---------------------------------------------------------------------- a tier the policy does not list
TIER_CLAIMS = [
    ("language.md", "An item's effective weight"),
    ("formulas.md", "**Effective weight**"),
    ("policy-reference.md", "`evidence.tier_weight.<tier>`"),
]


@pytest.mark.parametrize(("page", "needle"), TIER_CLAIMS, ids=[p for p, _ in TIER_CLAIMS])
def test_the_docs_say_an_unlisted_tier_is_refused(page: str, needle: str) -> None:
    said = paragraph(DOCS / page, needle)
    assert "PCSC-E307" in said and "weighs 0" not in said, said


def test_an_unlisted_tier_is_refused_as_the_docs_say(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    route = tmp_path / "r.route"
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    route.write_text(text.replace("tier      2", "tier      4", 1), encoding="utf-8")
    for command in ("check", "compile"):
        code, out, err = run(capsys, command, str(route), "--format", "json")
        assert code == 1, (command, out, err)
        found = [d for d in json.loads(out)["diagnostics"] if d["code"] == "PCSC-E307"]
        assert found and "gives no weight" in found[0]["message"], out


def test_the_checker_refuses_a_certificate_that_weighs_an_unlisted_tier_0() -> None:
    """The compiler never certifies such an item (it refuses it), so a certificate that
    cites a tier weight the policy lacks is forged, even at 0."""
    from pcsc.certcheck import Mismatch, RouteCheck

    check = RouteCheck({"route": "r", "steps": []}, {"evidence": {"tier_weight": {"2": 0.8}}})
    check.policy_value(["evidence", "tier_weight", "2"], Fraction(0.8), "w")
    with pytest.raises(Mismatch, match=r"evidence\.tier_weight\.4 is None"):
        check.policy_value(["evidence", "tier_weight", "4"], Fraction(0), "w")
    # an absent discount rate still reads as the paper's fold
    check.policy_value(["fold", "discount"], Fraction(0), "w")
    with pytest.raises(Mismatch):
        check.policy_value(["fold", "discount"], Fraction(1, 10), "w")


def test_no_page_says_an_unlisted_tier_weighs_0() -> None:
    pages = [*DOCS.glob("*.md"), ROOT / "README.md"]
    assert not [p.name for p in pages if re.search(r"tier[^.]*weighs 0", p.read_text(encoding="utf-8"))]
