"""Uncovered material changes as diagnostics, for `pcsc check` and the language server.

Each uncovered material change is one diagnostic located on its transition's name in
the header (`transition launch: garage -> wedge`): an error (PCSC-E501) under the
coverage gate, a warning (PCSC-W501) under dock, nothing when coverage is off. Its
help names every obligation tried and the `require` lines that failed (file:line).
"""

from __future__ import annotations

import re

from pcsc.coverage.discharge import Coverage, DeltaCoverage
from pcsc.coverage.verdict import Mode
from pcsc.diagnostics.messages import E501_UNCOVERED, W501_UNCOVERED
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.ir import Route, Transition


def report_uncovered(route: Route, coverage: Coverage, mode: Mode, text: str | None, diags: Diagnostics) -> None:
    """Add one diagnostic per uncovered material change of ``route`` to ``diags``;
    ``text`` is the route's source (to find each transition's name), if known."""
    if mode == "off":
        return
    by_name = {t.name: t for t in route.transitions}
    for u in coverage.uncovered:
        t = by_name[u.transition]
        d = u.delta
        span, source, target = transition_name_span(t, text), show_value(d.source), show_value(d.target)
        if mode == "gate":
            diags.diag(
                E501_UNCOVERED,
                span,
                transition=t.name,
                field=d.field,
                source=source,
                target=target,
                tried=uncovered_help(u),
            )
        else:
            diags.diag(
                W501_UNCOVERED,
                span,
                transition=t.name,
                field=d.field,
                source=source,
                target=target,
                tried=uncovered_help(u),
            )


def uncovered_help(u: DeltaCoverage) -> str:
    """What was tried for an uncovered change: each obligation, claimed or not, with
    the `require` lines that failed, on one line."""
    field = u.delta.field
    if not u.tried:
        return (
            f"no obligation of the route's libraries covers `{field}`; "
            "add one that does, then list it in `discharges`"
        )
    parts = []
    for a in u.tried:
        claim = "claimed" if a.claimed else "not in `discharges`"
        if not a.failed:
            parts.append(f"obligation `{a.obligation}` ({claim}) would hold: add it to `discharges`")
            continue
        failed = "; ".join(f"{f.span.file}:{f.span.line}: `{f.require}` ({f.reason})" for f in a.failed)
        parts.append(f"obligation `{a.obligation}` ({claim}) fails {failed}")
    return "; ".join(parts)


def transition_name_span(t: Transition, text: str | None) -> Span:
    """The span of the transition's name in its header; the `transition` keyword when
    the source is not at hand or the header is split across lines."""
    s = t.span
    if text is not None:
        lines = text.splitlines()
        if 1 <= s.line <= len(lines):
            pattern = re.compile(r"transition\s+(" + re.escape(t.name) + r")\b")
            m = pattern.search(lines[s.line - 1], max(s.column - 1, 0))
            if m is not None:
                return Span(s.file, s.line, m.start(1) + 1, s.line, m.end(1) + 1)
    return Span(s.file, s.line, s.column, s.line, s.column + len("transition"))


def show_value(x: float | bool) -> str:
    """A field value as the gate report writes it (`5,000`, `0.25`, `true`, `1e+307`)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if abs(x) >= 1e15:
        return f"{x:.6g}"
    return f"{x:,.0f}" if x == int(x) else f"{x:,.4g}"
