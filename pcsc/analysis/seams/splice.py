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

from pcsc.base.humanize import plural
from pcsc.lang.ir import Edge, Parallel, Route, Series, Shape, Transition
from pcsc.lang.printer import route_to_text
from pcsc.lang.syntax.literals import add_horizon


class SpliceError(ValueError):
    pass


def seam_indices(route: Route) -> Sequence[int]:
    """k ∈ [1, n−2]: the interior transitions that can be deleted. On a graph route
    (docs/graphs.md): each transition whose source has exactly one transition in and
    one out, and whose target is neither a join nor the end state."""
    if route.shape is None:
        return range(1, max(len(route.transitions) - 1, 1))
    return graph_seams([t.source for t in route.transitions], [t.target for t in route.transitions])


def graph_seams(sources: Sequence[str], targets: Sequence[str]) -> list[int]:
    """The seams of a graph given each transition's source and target (see `seam_indices`)."""
    entering: dict[str, int] = {}
    leaving: dict[str, int] = {}
    for s, t in zip(sources, targets, strict=True):
        entering[t] = entering.get(t, 0) + 1
        leaving[s] = leaving.get(s, 0) + 1
    ends = {t for t in targets if t not in leaving}
    return [
        k
        for k, (s, t) in enumerate(zip(sources, targets, strict=True))
        if entering.get(s) == 1 and leaving[s] == 1 and t not in ends and entering[t] == 1
    ]


def _not_a_seam(route: Route, k: int) -> str:
    n = len(route.transitions)
    if route.shape is None:
        if n < 3:
            return (f"route `{route.name}` has {plural(n, 'transition')}: "
                    "a seam needs at least three (k from 1 to n-2)")
        return f"seam {k} is not interior: route `{route.name}` has seams 1 to {n - 2}"
    seams = seam_indices(route)
    listed = ", ".join(f"{j} ({route.transitions[j].name})" for j in seams) or "none"
    return (
        f"seam {k} is not a seam of graph route `{route.name}`: a seam's source has one transition in and "
        f"one out, and its target is neither a join nor the end state; its seams are {listed}"
    )


def splice(route: Route, k: int) -> Route:
    if k not in seam_indices(route):
        raise SpliceError(_not_a_seam(route, k))
    removed = route.transitions[k]
    i = next(j for j, t in enumerate(route.transitions) if t.target == removed.source)  # k − 1 on a chain
    retargeted = attrs.evolve(route.transitions[i], target=removed.target)
    kept = [retargeted if j == i else t for j, t in enumerate(route.transitions) if j != k]
    transitions = redate(route, kept)
    states = tuple(s for s in route.states if s.name != removed.source)
    evidence = tuple(
        attrs.evolve(
            e,
            supports=tuple(x for x in e.supports if x != removed.name),
            contradicts=tuple(x for x in e.contradicts if x != removed.name),
        )
        for e in route.evidence
    )
    shape = None if route.shape is None else remove_edge(route.shape, removed.name)
    return attrs.evolve(route, transitions=transitions, states=states, evidence=evidence, shape=shape)


def remove_edge(shape: Shape, name: str) -> Shape:
    """``shape`` without the edge ``name`` (an item of a series of at least two items);
    a series left with one item becomes that item."""
    if isinstance(shape, Edge):
        return shape
    if isinstance(shape, Parallel):
        return Parallel(tuple(remove_edge(b, name) for b in shape.branches))
    items = tuple(remove_edge(x, name) for x in shape.items if x != Edge(name))
    return items[0] if len(items) == 1 else Series(items)


def redate(route: Route, transitions: Sequence[Transition]) -> tuple[Transition, ...]:
    """Each due date is as_of plus the horizons up to the transition (docs/forecast.md), added
    in calendar steps as lowering adds them; the deleted horizon no longer counts. On a
    graph a state's date is the latest of the transitions into it (None if any has none)."""
    out: list[Transition] = []
    at: dict[str, dt.date | None] = {transitions[0].source: route.as_of} if transitions else {}
    for n, t in enumerate(transitions):
        start = at[t.source]
        if route.shape is None and n > 0:
            start = out[-1].due
        due = None if t.horizon is None or start is None else add_horizon(start, int(t.horizon[0]), t.horizon[1])
        out.append(attrs.evolve(t, due=due))
        if t.target in at:
            before = at[t.target]
            at[t.target] = None if before is None or due is None else max(before, due)
        else:
            at[t.target] = due
    return tuple(out)


def splice_text(route: Route, k: int) -> str:
    spliced = splice(route, k)  # first: it rejects a seam that is not interior
    removed = route.transitions[k]
    before = next(t for t in route.transitions if t.target == removed.source)
    header = (
        f"Spliced by pcsc: seam k={k} of route {route.name} ({route.file}).\n"
        f"Transition `{removed.name}` ({removed.source} -> {removed.target}) is deleted and "
        f"`{before.name}` now ends at `{removed.target}`.\n"
        "States are written in full (carry-forward resolved); comments of the original are not kept."
    )
    return route_to_text(spliced, header)
