"""The one number formatter (`pcsc.base.humanize`): each format against values written
out by hand, and the text views that used to format on their own now agree with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pcsc.base.humanize import byte_size, compact, money, number, percent, plural, points, probability, significant
from tests.conftest import ROOT, SPEC_ROUTE, run_cli


@pytest.mark.parametrize(("x", "text"), [
    (613_333.3333, "613,333.33"), (-16_458_173_770_323_802.0, "-1.64582e+16"), (999_999_999_999_999.0,
                                                                                 "999,999,999,999,999.00"),
    (0.0, "0.00"), (-0.004, "-0.00"),
])
def test_money(x: float, text: str) -> None:
    assert money(x) == text


def test_money_whole_and_signed() -> None:
    assert money(1_234_567.5, 0) == "1,234,568"
    assert money(1200.0, signed=True) == "+1,200.00"
    assert money(-3.5, signed=True) == "-3.50"
    assert money(2e15, signed=True) == "+2e+15"


def test_the_small_formats() -> None:
    assert probability(0.29759615384615384) == "0.2976"
    assert points(61.5) == "61.50"
    assert significant(0.29759615384615384) == "0.297596"
    assert significant(0.29759615384615384, 4) == "0.2976"
    assert significant(1e308) == "1e+308"
    assert percent(0.125) == "12.5%"
    assert percent(119.7) == "11,970%"  # not 1.197e+04%
    assert compact(96_029_197.94) == "96.03M" and compact(0.35, "ratio") == "35%" and compact(True) == "true"
    assert byte_size(999) == "999 bytes" and byte_size(1500 * 2**30) == "1,500.0 GB"
    assert plural(1, "file") == "1 file" and plural(1200, "entry", "entries") == "1,200 entries"


@pytest.mark.parametrize(("x", "text"), [
    (5000.0, "5,000"), (1_234_567.8, "1,234,567.80"), (0.35, "0.35"), (0.123456789, "0.123457"),
    (3e-7, "3e-07"), (1.5e20, "1.5e+20"), (True, "true"),
])
def test_number(x: float, text: str) -> None:
    assert number(x) == text


def test_an_uncovered_change_quotes_its_values_as_every_text_view_does(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """E501 quoted field values with a formatter of its own, which wrote 1,234,567.8 as
    `1.235e+06`; it now writes what `explain` and the packet's text write."""
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    assert "paying_teams 200  arr 1.2M usd" in text
    route = tmp_path / "r.route"
    route.write_text(text.replace("paying_teams 200  arr 1.2M usd", "paying_teams 200  arr 1234567.8 usd"),
                     encoding="utf-8")
    (tmp_path / "venture.obl").write_text((ROOT / "obligations/venture.obl").read_text(encoding="utf-8"),
                                          encoding="utf-8")
    spliced = tmp_path / "spliced.route"
    code, _, err = run_cli(capsys, "splice", str(route), "--seam", "1", "-o", str(spliced))
    assert code == 0, err
    code, _, err = run_cli(capsys, "check", str(spliced))
    assert code == 1
    assert "`launch` changes arr 0 -> 1,234,567.80" in err


def test_no_text_view_formats_an_amount_on_its_own() -> None:
    """Thousands-separated float formats (`:,.2f`, `:+,.2f`, `:,.0f`) live in humanize only."""
    inline = re.compile(r":\+?,\.\d+f")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "pcsc").rglob("*.py"))
             if p.name != "humanize.py" and "certify" not in p.parts
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if inline.search(line)]
    assert found == []
