"""Finite arithmetic: every step of the scoring checked, so no score is ever ±inf or NaN.

Each input number is finite (lowering and the policy loader check that), but finite
numbers can still overflow when they are added or multiplied (`10 * 1e308 usd`). A
step that leaves the floats raises `NotFinite`, whose message names the numbers; the
pipeline reports it as PCSC-E311 and releases nothing for the route.
"""

from __future__ import annotations

import math
from fractions import Fraction

from pcsc.diagnostics.messages import E311_RESULT_OVERFLOWS, phrase
from pcsc.diagnostics.model import Span


class NotFinite(ArithmeticError):
    """A computation on finite numbers overflowed; ``message`` names them."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


def show(x: float) -> str:
    """A number as a message shows it: `1e+308`, `12000`, `0.45`."""
    return f"{x:.6g}"


def checked(value: float, what: str, *operands: float) -> float:
    """``value``, or NotFinite naming ``what`` and the ``operands`` it came from."""
    if math.isfinite(value):
        return value
    numbers = ", ".join(show(o) for o in operands)
    of = f" (from {numbers})" if operands else ""
    raise NotFinite(phrase(E311_RESULT_OVERFLOWS, what=what, operands=of))


def fits(value: Fraction, what: str) -> Fraction:
    """``value``, an exact result that is shown as a float (JSON, text), or NotFinite
    naming ``what`` when no float holds it."""
    try:
        float(value)
    except OverflowError:
        raise NotFinite(phrase(E311_RESULT_OVERFLOWS, what=what, operands="")) from None
    return value


def ratio(num: int, den: int, what: str) -> float:
    """``num / den`` rounded to a float, or NotFinite when it does not fit one."""
    try:
        return num / den
    except OverflowError:
        raise NotFinite(phrase(E311_RESULT_OVERFLOWS, what=what, operands="")) from None
