"""The IR as JSON through one cattrs converter (`pcsc compile --emit ir`).

Expression nodes are a tagged union (key `node`), dates are ISO strings, spans are
objects; `structure(unstructure(x)) == x` holds for every route (tested).
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Any

import cattrs
from cattrs.strategies import configure_tagged_union

from pcsc.ir import Route
from pcsc.ir import expr as ex


@cache
def converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    conv.register_unstructure_hook(dt.date, lambda d: d.isoformat())
    conv.register_structure_hook(dt.date, lambda v, _: dt.date.fromisoformat(v))

    def scalar(v: Any, _: Any) -> float | bool:
        return v if isinstance(v, bool) else float(v)

    conv.register_structure_hook(float | bool, scalar)
    configure_tagged_union(ex.Expr, conv, tag_name="node", tag_generator=lambda cl: cl.__name__)
    expr_hook = conv.get_structure_hook(ex.Expr)
    conv.register_structure_hook(ex.Expr | None, lambda v, _: None if v is None else expr_hook(v, ex.Expr))
    conv.register_unstructure_hook(ex.Expr | None, lambda v: None if v is None else conv.unstructure(v, ex.Expr))
    return conv


def ir_json(route: Route) -> dict[str, Any]:
    result: dict[str, Any] = converter().unstructure(route)
    return result


def ir_from_json(data: dict[str, Any]) -> Route:
    return converter().structure(data, Route)
