"""Print a lowered `Route` back as `.route` text that compiles to the same IR.

States are written in full (carry-forward already resolved), numbers so that they
read back to the identical float, and expressions as the author wrote them.
Comments are not in the IR and are not reproduced.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pcsc.ir import Evidence, Route, Transition


def number(x: float) -> str:
    """The shortest text that reads back to exactly ``x`` (with `_` groups for integers)."""
    if x == int(x) and abs(x) < 1e21:
        return f"{int(x):_}"
    text = repr(x)
    if "e" in text or "E" in text:
        # the grammar has exponents, but a plain decimal reads better where it is short
        plain = format(Decimal(text), "f")
        return plain if len(plain) <= 24 else text
    return text


_EXPR_PIECES = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|\s+|[^"#\s]+|"')


def expression(text: str) -> str:
    """An expression's source text on one line: comments dropped (a `#` inside a
    multi-line threshold would otherwise swallow the rest of it) and whitespace
    collapsed, outside string literals only."""
    out: list[str] = []
    for piece in _EXPR_PIECES.findall(text):
        if piece.startswith("#") or piece.isspace():
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(piece)
    return "".join(out).strip()


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def value(v: float | bool, field_type: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return number(v) + (" usd" if field_type == "usd" else "")


def route_to_text(route: Route, header: str | None = None) -> str:
    types = {f.name: f.type for f in route.fields}
    out: list[str] = []
    if header:
        out += [f"# {line}" if line else "#" for line in header.splitlines()]
    title = f" {quote(route.title)}" if route.title is not None else ""
    out.append(f"route {route.name}{title} {{")
    out.append(f"    as_of   {route.as_of.isoformat()}")
    pin = f" sha256 {quote(route.policy.sha256)}" if route.policy.sha256 else ""
    out.append(f"    policy  {quote(str(route.policy))}{pin}")
    out.append(f"    uses    {', '.join(route.uses)}")
    out.append("")
    width = max((len(s.name) for s in route.states), default=0)
    entering: dict[str, int] = {}
    for t in route.transitions:
        entering[t.target] = entering.get(t.target, 0) + 1
    for s in route.states:
        # a join of a graph route keeps what it lists: its other values are the merge of
        # its branches, and what it lists is what each transition into it claims
        shown = [(n, v) for n, v in s.values if n in s.listed] if entering.get(s.name, 0) > 1 else s.values
        items = "  ".join(f"{name} {value(v, types[name])}" for name, v in shown)
        out.append(f"    state {s.name.ljust(width)} {{ {items} }}")
    out.append("")
    v = route.vision
    out.append(f"    vision {v.state} {{")
    out.append(f"        tam            {number(v.tam)} usd")
    out.append(f"        capture        {number(v.capture)}")
    out.append(f"        defensibility  {number(v.defensibility)}")
    out.append("    }")
    for t in route.transitions:
        out.append("")
        out += _transition(t)
    for e in route.evidence:
        out.append("")
        out += _evidence(e)
    if route.criteria:
        out.append("")
        out.append("    criteria {")
        width = max(len(c.name) for c in route.criteria)
        out += [f"        {c.name.ljust(width)}  {number(c.score)}" for c in route.criteria]
        out.append("    }")
    out.append("}")
    return "\n".join(out) + "\n"


def _transition(t: Transition) -> list[str]:
    out = [f"    transition {t.name}: {t.source} -> {t.target} {{"]

    def line(key: str, text: str) -> None:
        out.append(f"        {key.ljust(13)} {text}")

    for key, text in (("actor", t.actor), ("mechanism", t.mechanism), ("asset", t.asset)):
        if text is not None:
            line(key, quote(text))
    line("class", quote(t.ref_class))
    if t.threshold_text is not None:
        line("threshold", expression(t.threshold_text))
    if t.kill_text is not None:
        line("kill", expression(t.kill_text))
    if t.horizon is not None:
        line("horizon", f"{number(t.horizon[0])} {t.horizon[1]}")
    if t.cost:
        out.append("        cost {")
        width = max(len(c.name) for c in t.cost)
        for c in t.cost:
            out.append(f"            {c.name.ljust(width)}  {number(c.count)} * {number(c.unit_cost)} usd")
        out.append("        }")
    if t.learning_cost is not None:
        line("learning_cost", f"{number(t.learning_cost)} usd")
    if t.estimates:
        line("estimates", " ".join(number(x) for x in t.estimates))
    if t.discharges:
        line("discharges", ", ".join(t.discharges))
    out.append("    }")
    return out


def _evidence(e: Evidence) -> list[str]:
    out = [f"    evidence {e.name} {{"]

    def line(key: str, text: str) -> None:
        out.append(f"        {key.ljust(11)} {text}")

    if e.source is not None:
        line("source", quote(e.source))
    if e.captured is not None:
        line("captured", e.captured.isoformat())
    line("tier", str(e.tier))
    line("weight", number(e.weight))
    if e.supports:
        line("supports", ", ".join(e.supports))
    if e.contradicts:
        line("contradicts", ", ".join(e.contradicts))
    line("excerpt", quote(e.excerpt))
    if e.unverified:
        out.append("        unverified")
    out.append("    }")
    return out
