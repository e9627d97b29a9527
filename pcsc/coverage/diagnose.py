"""Uncovered material changes as diagnostics, for `pcsc check` and the language server.

Each uncovered material change is one diagnostic located on its transition's name in
the header (`transition launch: garage -> wedge`): an error (PCSC-E501) under the
coverage gate, a warning (PCSC-W501) under dock, nothing when coverage is off. Its
help names every obligation tried and the `require` lines that failed (file:line).
"""

from __future__ import annotations

import re

from pcsc.base.humanize import number
from pcsc.base.modes import Mode
from pcsc.coverage.discharge import AdmissionFailure, Coverage, DeltaCoverage, admitting_classes
from pcsc.diagnostics.messages import (
    E501_UNCOVERED,
    E502_NOT_ADMITTED,
    E503_REGISTRY,
    W501_UNCOVERED,
    W502_NOT_ADMITTED,
    W503_REGISTRY,
    W504_REGISTRY,
)
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.ir import Route, Transition
from pcsc.policy.model import Policy


def report_uncovered(route: Route, coverage: Coverage, mode: Mode, text: str | None, diags: Diagnostics,
                     policy: Policy | None = None) -> None:
    """Add one diagnostic per uncovered material change of ``route`` to ``diags``, one
    per change its class does not admit (at the `class` line) and one per departure from
    its gold registry; ``text`` is the route's source (to find each transition's name),
    if known, and ``policy`` the route's policy (to name the classes that would admit)."""
    if mode == "off":
        return
    report_admission(route, coverage, mode, diags, policy)
    report_registry(coverage, mode, diags)
    by_name = {t.name: t for t in route.transitions}
    for u in coverage.uncovered:
        t = by_name[u.transition]
        d = u.delta
        span, source, target = transition_name_span(t, text), number(d.source), number(d.target)
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



def admission_subject(a: AdmissionFailure) -> str:
    """What the class does not admit, in words: `a change of arr` or `this transition`."""
    return "this transition" if a.field is None else f"a change of {a.field}"


def report_admission(route: Route, coverage: Coverage, mode: Mode, diags: Diagnostics,
                     policy: Policy | None) -> None:
    by_name = {t.name: t for t in route.transitions}
    for a in coverage.admission:
        classes = None
        if policy is not None:
            found = [c for c in admitting_classes(route, by_name[a.transition], policy) if c != a.ref_class]
            classes = ("classes of this policy that would admit it: " + ", ".join(f"`{c}`" for c in found)
                       if found else "no class of this policy admits this change: claim less, or split the step")
        reason = a.reason if a.check == "fields" else f"`{a.check}` fails ({a.reason})"
        what = admission_subject(a)
        if mode == "gate":
            diags.diag(E502_NOT_ADMITTED, a.span, transition=a.transition, ref_class=a.ref_class, what=what,
                       reason=reason, classes=classes)
        else:
            diags.diag(W502_NOT_ADMITTED, a.span, transition=a.transition, ref_class=a.ref_class, what=what,
                       reason=reason, classes=classes)


def report_registry(coverage: Coverage, mode: Mode, diags: Diagnostics) -> None:
    if coverage.registry_mode == "off":
        return
    for f in coverage.registry:
        if coverage.registry_mode == "report":
            diags.diag(W504_REGISTRY, f.span, finding=f.message)
        elif mode == "gate":
            diags.diag(E503_REGISTRY, f.span, finding=f.message)
        else:
            diags.diag(W503_REGISTRY, f.span, finding=f.message)
