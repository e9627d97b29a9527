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

from pcsc.diagnostics.model import Span
from pcsc.lang.ir import Route, Shape, State, Transition, Vision, VisionItem
from pcsc.lang.ir import expr as ex
from pcsc.lang.lower.vision import DEFAULT_VISION_FIELDS


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
        if s.payoff_in_fold is None:  # a payoff in usd is what it was before a payoff could be in the fold's unit
            del out["payoff_in_fold"]
        return out

    conv.register_unstructure_hook(State, state)
    item_hook = cattrs.gen.make_dict_unstructure_fn(VisionItem, conv)
    item_structure = cattrs.gen.make_dict_structure_fn(VisionItem, conv)

    def vision(v: Vision) -> dict[str, Any]:
        """The venture vision as its IR always was; any other as its items."""
        span = conv.unstructure(v.span, Span)
        if sorted(i.name for i in v.items) == sorted(DEFAULT_VISION_FIELDS):
            return {"state": v.state, **{k: v.get(k) for k in DEFAULT_VISION_FIELDS}, "span": span,
                    "item_spans": [[i.name, conv.unstructure(i.span, Span)] for i in v.items]}
        return {"state": v.state, "items": [item_hook(i) for i in v.items], "span": span,
                "name_span": None if v.name_span is None else conv.unstructure(v.name_span, Span),
                "written": list(v.written)}

    def vision_back(d: dict[str, Any], _: Any) -> Vision:
        span = conv.structure(d["span"], Span)
        if "items" in d:
            name_span = None if d["name_span"] is None else conv.structure(d["name_span"], Span)
            return Vision(d["state"], tuple(item_structure(i, VisionItem) for i in d["items"]), span, name_span,
                          tuple(d["written"]))
        items = []
        for name, at in d["item_spans"]:
            where = conv.structure(at, Span)
            unit = "usd" if DEFAULT_VISION_FIELDS[name] == "usd" else None
            items.append(VisionItem(name, float(d[name]), unit, False, where, where, where))
        return Vision(d["state"], tuple(items), span, None, tuple(i.name for i in items))

    conv.register_unstructure_hook(Vision, vision)
    conv.register_structure_hook(Vision, vision_back)
    transition_hook = cattrs.gen.make_dict_unstructure_fn(Transition, conv)

    def transition(t: Transition) -> dict[str, Any]:
        out: dict[str, Any] = transition_hook(t)
        for key in ("kill_by", "kill_by_text"):  # an unbounded kill's IR is what it was before kills had dates
            if out.get(key, 0) is None:
                del out[key]
        return out

    conv.register_unstructure_hook(Transition, transition)
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
