"""The IR as JSON through one cattrs converter (`pcsc compile --emit ir`).

Expression nodes and the shape of a graph route are tagged unions (key `node`), dates are ISO strings, spans are
objects; `structure(unstructure(x)) == x` holds for every route (tested).
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Any

import cattrs
import cattrs.gen
from cattrs.strategies import configure_tagged_union

from pcsc.lang.ir import Route, Shape, State
from pcsc.lang.ir import expr as ex


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
    configure_tagged_union(Shape, conv, tag_name="node", tag_generator=lambda cl: cl.__name__)
    shape_hook = conv.get_structure_hook(Shape)
    conv.register_structure_hook(Shape | None, lambda v, _: None if v is None else shape_hook(v, Shape))
    conv.register_unstructure_hook(Shape | None, lambda v: None if v is None else conv.unstructure(v, Shape))
    state_hook = cattrs.gen.make_dict_unstructure_fn(State, conv)

    def state(s: State) -> dict[str, Any]:
        out: dict[str, Any] = state_hook(s)
        if s.payoff_span is None:  # a state without a payoff is what it was before states had them
            del out["payoff"], out["payoff_span"]
        return out

    conv.register_unstructure_hook(State, state)
    route_hook = cattrs.gen.make_dict_unstructure_fn(Route, conv)

    def route(r: Route) -> dict[str, Any]:
        out: dict[str, Any] = route_hook(r)
        if out.get("shape", 0) is None:  # a chain's IR is what it was before routes could fork
            del out["shape"]
        return out

    conv.register_unstructure_hook(Route, route)
    return conv


def ir_json(route: Route) -> dict[str, Any]:
    result: dict[str, Any] = converter().unstructure(route)
    return result


def ir_from_json(data: dict[str, Any]) -> Route:
    return converter().structure(data, Route)
