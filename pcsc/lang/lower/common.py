"""Helpers shared by the route and library lowerings."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pcsc.diagnostics.messages import (
    E104_TWO_ITEMS,
    E104_TWO_STATEMENTS,
    E301_BOOL_EXPECTED,
    E301_NOT_USD,
    E301_TAKES_NO_UNIT,
    E302_NOT_FINITE,
    E307_NEGATIVE_COUNT,
    E309_PERCENT,
    W610_RATIO_OVER_ONE,
)
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax.literals import parse_number

FIELD_TYPES = ("count", "number", "ratio", "usd", "bool")


class Quantity(NamedTuple):
    value: float
    unit: str | None
    percent: bool
    span: Span


def quantity(node: syn.Quantity, diags: Diagnostics) -> Quantity:
    """Lower a `quantity` (`-`? NUMBER UNIT?); a non-finite number is reported."""
    value, percent = parse_number(node.number)
    if not math.isfinite(value):
        diags.diag(E302_NOT_FINITE, node.span, number=node.number)
        value = 0.0
    if node.minus:
        value = -value
    return Quantity(value, node.unit, percent, node.span)


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """A "did you mean" help line, or None."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


def policy_help(ref: str, available: Iterable[str]) -> str | None:
    """The help line of an unknown policy ``ref`` (`id@version`): the versions of its
    id when the id exists; else a "did you mean" for a close id (compared without the
    version, which every reference shares, so `myv` never suggests `venture`); else
    the available policies."""
    ident, _, version = ref.partition("@")
    versions: dict[str, list[str]] = {}
    for other in sorted(set(available)):
        other_id, _, other_version = other.partition("@")
        versions.setdefault(other_id, []).append(other_version)
    if ident in versions:
        known = versions[ident]
        return f"policy `{ident}` has version{'s' if len(known) > 1 else ''} " + ", ".join(known)
    close = difflib.get_close_matches(ident, sorted(versions), n=1, cutoff=0.6)
    if close:
        best = version if version in versions[close[0]] else versions[close[0]][-1]
        return f"did you mean `{close[0]}@{best}`?"
    if not versions:
        return None
    shown = [f"{i}@{v}" for i, vs in versions.items() for v in vs]
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    return "available policies: " + ", ".join(shown[:10]) + more


def check_statement_lines(items: Sequence[syn.Node], diags: Diagnostics, what: str = "statements") -> None:
    """One statement a line: two statements on a line need a `;` between them.
    Cost items take no `;`: each goes on its own line (`what="cost items"`)."""
    previous_end: int | None = None
    for item in items:
        if isinstance(item, syn.Semi):
            previous_end = None
            continue
        span = item.span
        if previous_end is not None and span.line == previous_end:
            if what == "statements":
                diags.diag(E104_TWO_STATEMENTS, span)
            else:
                diags.diag(E104_TWO_ITEMS, span, what=what)
        previous_end = span.end_line


def describe_unit(q: Quantity) -> str:
    if q.percent:
        return "a percentage"
    return f"`{q.unit}`" if q.unit else "a plain number"


def warn_ratio_over_one(field_type: str, q: Quantity, what: str, diags: Diagnostics) -> None:
    """A ratio is a fraction: `retention 45` is 4,500%. Allowed (a ratio may pass 1),
    but most likely a percentage without its `%`, so say so where it is written."""
    if field_type == "ratio" and not q.percent and q.value > 1:
        shown = f"{q.value:g}"
        diags.diag(W610_RATIO_OVER_ONE, q.span, what=what, shown=shown, percent=q.value * 100)


def check_field_value(field_type: str, q: Quantity, what: str, diags: Diagnostics) -> bool:
    """Type/unit check of a number against a field type; True when it fits."""
    if field_type == "bool":
        diags.diag(E301_BOOL_EXPECTED, q.span, what=what)
        return False
    if q.percent and field_type != "ratio":
        diags.diag(E309_PERCENT, q.span, what=what, type=field_type)
        return False
    if field_type == "usd":
        if q.unit not in ("usd", None) or (q.unit is None and q.value != 0):
            diags.diag(E301_NOT_USD, q.span, what=what, value=describe_unit(q))
            return False
        return True
    if q.unit is not None:
        diags.diag(E301_TAKES_NO_UNIT, q.span, what=what, type=field_type, unit=q.unit)
        return False
    if field_type == "count" and q.value < 0:
        diags.diag(E307_NEGATIVE_COUNT, q.span, what=what)
        return False
    return True
