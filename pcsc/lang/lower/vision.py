"""The vision block against the fields a policy declares (`[vision] fields`).

Lowering keeps a vision's values as written (`pcsc.lang.ir.Vision`); which names a
vision holds and what kind of number each is belong to the policy, so binding checks
them here, with the messages lowering gave when the names were fixed.
"""

from __future__ import annotations

from collections.abc import Mapping

from pcsc.diagnostics.messages import (
    E214_NO_VISION_ITEM,
    E220_UNKNOWN_VISION_ITEM,
    E307_VISION_NEGATIVE,
    E307_VISION_RATIO,
)
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.ir import Vision
from pcsc.lang.lower.common import Quantity, check_field_value, suggest

#: The venture formula and its fields: what a policy without `[vision]` computes.
DEFAULT_VISION_VALUE = "tam * capture * defensibility"
DEFAULT_VISION_FIELDS: Mapping[str, str] = {"tam": "usd", "capture": "ratio", "defensibility": "ratio"}
#: The kinds of number a vision field may be (the numeric field types of a library).
VISION_KINDS = ("usd", "ratio", "count", "number")


def listed(names: tuple[str, ...] | list[str]) -> str:
    """`a`, `a and b`, `a, b and c`: the names as the messages list them."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def check_vision(vision: Vision, fields: Mapping[str, str], diags: Diagnostics) -> bool:
    """Report each value the vision states that ``fields`` does not declare, that does
    not fit its kind, or that is missing; True when the vision is usable."""
    before = len(diags)
    names = tuple(fields)
    stated = listed(list(names))
    misspelt = False
    for item in vision.items:
        kind = fields.get(item.name)
        if kind is None:
            misspelt = True
            diags.diag(E220_UNKNOWN_VISION_ITEM, item.name_span, key=item.name,
                       suggestion=suggest(item.name, names), fields=stated)
            continue
        q = Quantity(item.value, item.unit, item.percent, item.value_span)
        if not check_field_value(kind, q, f"vision `{item.name}`", diags):
            continue
        if kind == "ratio" and not 0.0 <= q.value <= 1.0:
            diags.diag(E307_VISION_RATIO, q.span, key=item.name, value=q.value)
        elif q.value < 0:
            diags.diag(E307_VISION_NEGATIVE, q.span, key=item.name)
    values = vision.values
    for name in names:
        if name not in values and not misspelt and name not in vision.written:
            diags.diag(E214_NO_VISION_ITEM, vision.name_span or vision.span, key=name)
    return len(diags) == before
