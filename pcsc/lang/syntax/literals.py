"""Literal tokens: numbers with `_`, `k`/`M`/`B` and `%`; units; ISO dates."""

from __future__ import annotations

import calendar
import datetime as dt
import math
from decimal import Decimal
from functools import lru_cache

_SCALE = {"k": Decimal(1_000), "M": Decimal(1_000_000), "B": Decimal(1_000_000_000)}


@lru_cache(maxsize=8192)  # a cohort repeats its numbers; the value is a pure function of the text
def parse_number(text: str) -> tuple[float, bool]:
    """Return (value, percent). Scaling is exact in decimal, then rounded once to float."""
    raw = text.replace("_", "")
    percent = raw.endswith("%")
    if percent:
        raw = raw[:-1]
    lowered = raw.lower()
    if lowered in ("nan", "inf", "infinity"):
        return (math.nan if lowered == "nan" else math.inf), percent
    scale = Decimal(1)
    if raw and raw[-1] in _SCALE:
        scale = _SCALE[raw[-1]]
        raw = raw[:-1]
    try:
        value = Decimal(raw) * scale
        if percent:
            value = value / 100
    except ArithmeticError:  # decimal.Overflow: `1e1000000` is beyond the context's exponents
        rough = float(raw) * float(scale)  # inf or 0.0: the exponent alone decides
        return (rough / 100 if percent else rough), percent
    return float(value), percent


def parse_date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def add_horizon(start: dt.date, amount: int, unit: str) -> dt.date:
    """Calendar addition: `12 months` from 2012-06-01 is 2013-06-01; month ends clamp."""
    if unit == "days":
        return start + dt.timedelta(days=amount)
    months = amount * 12 if unit == "years" else amount
    total = start.month - 1 + months
    year = start.year + total // 12
    month = total % 12 + 1
    day = min(start.day, calendar.monthrange(year, month)[1])
    return dt.date(year, month, day)
