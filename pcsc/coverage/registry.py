"""The gold registry: the typed states a route must pass through, written apart from it.

A policy's `[registry.<route>]` lists, in order, the states the route must visit and
the value each listed field must have there. The route is held to it by name: each
registry state must be a state of the route, the registry's states must come in the
registry's order along the route, and each listed field must have the registry's value
in that state (after carry-forward). What this does not check: the route's own states
between registry states, fields the registry does not list, or whether the registry's
values are true; docs/coverage.md says so in full.
"""

from __future__ import annotations

import attrs

from pcsc.base.humanize import number
from pcsc.diagnostics.model import Span
from pcsc.lang.ir import Route
from pcsc.policy.model import Policy, RegistryState


@attrs.frozen
class RegistryFinding:
    """A way the route departs from its gold registry: ``kind`` is `no-entry` (the policy
    has no registry for the route), `skip` (a registry state the route does not pass),
    `order` (passed out of the registry's order) or `restate` (a registry field the route
    states with another value, or does not have)."""

    kind: str
    state: str | None
    field: str | None
    message: str
    span: Span


def registry_findings(route: Route, policy: Policy) -> tuple[RegistryFinding, ...]:
    entry = policy.registry.get(route.name)
    if entry is None:
        return (RegistryFinding("no-entry", None, None, f"the policy holds no registry for route `{route.name}`",
                                route.span),)
    position = {s.name: i for i, s in enumerate(route.states)}
    out: list[RegistryFinding] = []
    last = -1
    for k, gold in enumerate(entry.states):
        if gold.name not in position:
            out.append(RegistryFinding("skip", gold.name, None, _skip_message(route, entry.states, k),
                                       _skip_span(route, entry.states, k, position)))
            continue
        state = route.states[position[gold.name]]
        if position[gold.name] < last:
            out.append(RegistryFinding("order", gold.name, None,
                                       f"state `{gold.name}` comes before a registry state it must follow",
                                       state.span))
        last = max(last, position[gold.name])
        spans = dict(state.value_spans)
        for field, value in gold.fields.items():
            have = dict(state.values).get(field)
            if have is None:
                out.append(RegistryFinding("restate", gold.name, field,
                                           f"state `{gold.name}` has no `{field}`; the registry says {number(value)}",
                                           state.span))
            elif have != value:
                out.append(RegistryFinding(
                    "restate", gold.name, field,
                    f"state `{gold.name}` states {field} {number(have)}; the registry says {number(value)}",
                    spans.get(field, state.span)))
    return tuple(out)


def _skip_message(route: Route, states: list[RegistryState], k: int) -> str:
    return (f"route `{route.name}` does not pass registry state `{states[k].name}` "
            f"(registry state {k + 1} of {len(states)})")


def _skip_span(route: Route, states: list[RegistryState], k: int, position: dict[str, int]) -> Span:
    """Where the skip is: the transition that arrives at the next registry state the
    route does pass (the one that jumps over the skipped state), else the route."""
    later = [g.name for g in states[k + 1:] if g.name in position]
    if later:
        for t in route.transitions:
            if t.target == later[0]:
                return t.span
    return route.span
