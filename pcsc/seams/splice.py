"""Admissible interior deletions: remove e_k, retarget e_{k-1} to e_k's target.

A splice changes no state record: carry-forward is resolved on the honest route first
(the IR already holds every state in full), the retargeted target keeps all its
fields, and e_k's source state, which nothing uses any more, is dropped. Evidence is
kept; only its references to the deleted transition go. Due dates are recomputed, so
the spliced IR is the one its printed text compiles to.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import attrs

from pcsc.ir import Route, Transition
from pcsc.printer import route_to_text
from pcsc.syntax.literals import add_horizon


class SpliceError(ValueError):
    pass


def seam_indices(route: Route) -> range:
    """k ∈ [1, n−2]: the interior transitions that can be deleted."""
    return range(1, max(len(route.transitions) - 1, 1))


def splice(route: Route, k: int) -> Route:
    n = len(route.transitions)
    if k not in seam_indices(route):
        if n < 3:
            raise SpliceError(f"route `{route.name}` has {n} transition{'s' if n != 1 else ''}: "
                              "a seam needs at least three (k from 1 to n-2)")
        raise SpliceError(f"seam {k} is not interior: route `{route.name}` has seams 1 to {n - 2}")
    removed = route.transitions[k]
    before = route.transitions[k - 1]
    retargeted = attrs.evolve(before, target=removed.target)
    transitions = redate(route, (*route.transitions[: k - 1], retargeted, *route.transitions[k + 1 :]))
    states = tuple(s for s in route.states if s.name != removed.source)
    evidence = tuple(
        attrs.evolve(
            e,
            supports=tuple(x for x in e.supports if x != removed.name),
            contradicts=tuple(x for x in e.contradicts if x != removed.name),
        )
        for e in route.evidence
    )
    return attrs.evolve(route, transitions=transitions, states=states, evidence=evidence)


def redate(route: Route, transitions: Sequence[Transition]) -> tuple[Transition, ...]:
    """Each due date is as_of plus the horizons up to the transition (docs/forecast.md), added
    in calendar steps as lowering adds them; the deleted horizon no longer counts."""
    out = []
    due: dt.date | None = route.as_of
    for t in transitions:
        due = None if t.horizon is None or due is None else add_horizon(due, int(t.horizon[0]), t.horizon[1])
        out.append(attrs.evolve(t, due=due))
    return tuple(out)


def splice_text(route: Route, k: int) -> str:
    spliced = splice(route, k)  # first: it rejects a seam that is not interior
    removed = route.transitions[k]
    header = (
        f"Spliced by pcsc: seam k={k} of route {route.name} ({route.file}).\n"
        f"Transition `{removed.name}` ({removed.source} -> {removed.target}) is deleted and "
        f"`{route.transitions[k - 1].name}` now ends at `{removed.target}`.\n"
        "States are written in full (carry-forward resolved); comments of the original are not kept."
    )
    return route_to_text(spliced, header)
