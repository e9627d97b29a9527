"""Search edits that raise a route's score (docs/redteam.md) and say which of them the
coverage check catches; `pcsc redteam FILE…` runs it.

Every edit is made on the lowered IR, printed as `.route` text (`pcsc/lang/printer.py`) and
compiled again through the whole pipeline, like any input: priors, evidence
reweighting, class floors, delta-indexed floors and coverage all apply to it. The
edits, by kind, in the order they are tried:

- ``delete``: each admissible interior deletion, exactly `pcsc splice` (docs/coverage.md).
- ``merge``: two adjacent transitions e_k, e_{k+1} become one, from e_k's source to
  e_{k+1}'s target. It keeps e_k's name, class, actor, mechanism, asset, kill,
  estimates and learning cost; takes e_{k+1}'s threshold; adds the horizons (the same
  unit: summed; months and years: in months; else in days, counted so that the due
  date is e_{k+1}'s; a missing horizon counts as none); lists the cost items of both
  (an item of e_{k+1} whose name e_k already uses is renamed ``<item>_<e_{k+1}>``);
  discharges the union of both lists (e_k's first). Evidence that supports or
  contradicts e_{k+1} now supports or contradicts the merged transition; the state
  between the two, which nothing uses any more, is dropped.
- ``retarget``: e_k's target moves to a later state and the transitions skipped are
  dropped (a multi-step deletion; the final transition may be among them). Skipping
  one interior transition is a ``delete`` and is not tried twice.
- ``re-class``: a transition's reference class becomes another class of the policy
  with a higher prior p, one edit per (transition, class); classes of the same
  category prefix (``devtools/…``) first, then by p, highest first, then by name.
- ``drop-cost``: one cost item removed (do the floors catch the cheaper plan?).
- ``shrink-cost``: one cost item's amount halved (only the search, `pcsc.analysis.search`,
  enumerates it: `enumerate_edits(…, shrink=True)`).
- ``drop-evidence``: an evidence item that contradicts a transition removed (when it
  also supports something, only its ``contradicts`` list goes).
- ``drop-kill``, ``drop-threshold``: a transition's kill condition or threshold removed.
- ``move-payoff``: a state's payoff moved to an earlier state (not the start), added to
  any payoff there: credited sooner, it is reached more often. On a chain, a state
  before it; on a route that forks and joins, a state on a path from the start into it
  (a join's payoff into one of its branches, a branch's before the fork).

On a route that forks and joins (docs/graphs.md) ``delete`` takes its seams, and
``merge`` and ``retarget`` follow the series of its shape: a merge joins two
transitions that follow each other inside one branch or on the spine (never across a
fork or a join); a retarget moves a transition's target to a later state of the same
series, dropping every item skipped: on the spine (or inside a branch) skipping a whole
parallel block drops every branch of it, the graph's route-around. A route left with
no parallel block is a chain.

Identical edited routes are tried once (the printed text decides). With
``--depth 2``, pairs of score-raising edits are tried too, the second applied, by
names, to the first one's result. ``--max-edits`` bounds the routes compiled per route.

Each edit is classified from the edited route's own compile: ``refused`` when GATE
refuses it (some material change is uncovered); ``ineligible`` when a policy gate
makes it ineligible (the honest route being eligible); ``covered-gain`` when its
ungated score rises and it is still released: an improvement the checks do not
catch; ``no-gain`` otherwise; ``invalid`` when the edited text does not compile
(which would be a bug in this module: every edit is meant to stay a valid route).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from pcsc.analysis.seams.analysis import Drift, drifts
from pcsc.analysis.seams.splice import redate, remove_edge, seam_indices, splice
from pcsc.base.humanize import money, plural
from pcsc.base.tables import table
from pcsc.compiler.session import Compiled, Session, gate_and_dock
from pcsc.coverage import Decision
from pcsc.lang.ir import Edge, Evidence, Parallel, Route, Series, Shape, Transition
from pcsc.lang.ir.shape import edges as shape_edges
from pcsc.lang.printer import number, route_to_text
from pcsc.lang.syntax.literals import add_horizon
from pcsc.score.units import unit_key

KINDS = ("delete", "merge", "retarget", "re-class", "drop-cost", "shrink-cost", "drop-evidence", "drop-kill",
         "drop-threshold", "move-payoff")
OUTCOMES = ("refused", "ineligible", "covered-gain", "no-gain", "invalid")
DEFAULT_MAX_EDITS = 500


class NotApplicable(ValueError):
    """The edit does not apply to this route (e.g. a transition an earlier edit removed)."""


# ---------------------------------------------------------------------- edits
@attrs.frozen(order=True)
class Edit:
    """One edit, addressed by names so that it can also be applied after another edit.

    ``subject`` is the transition edited (for ``drop-evidence``, the evidence item; for
    ``move-payoff``, the state whose payoff moves); ``arg`` is the second transition
    (merge), the new target state (retarget), the new class (re-class), the cost item
    (drop-cost), the state the payoff moves to (move-payoff), or empty."""

    kind: str
    subject: str
    arg: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.subject}" + (f":{self.arg}" if self.arg else "")


def _index(route: Route, name: str) -> int:
    for i, t in enumerate(route.transitions):
        if t.name == name:
            return i
    raise NotApplicable(f"no transition `{name}`")


def _dedupe(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _exit(route: Route, item: Shape) -> str:
    """The state at which a shape item ends."""
    while not isinstance(item, Edge):
        item = item.items[-1] if isinstance(item, Series) else item.branches[0]
    return route.transitions[_index(route, item.transition)].target


def _series_runs(shape: Shape) -> list[Series]:
    """Every series of ``shape`` (the spine first, then depth first)."""
    if isinstance(shape, Edge):
        return []
    out = [shape] if isinstance(shape, Series) else []
    for kid in shape.items if isinstance(shape, Series) else shape.branches:
        out += _series_runs(kid)
    return out


def _place(route: Route, name: str) -> tuple[Series, int] | None:
    """The series holding transition ``name`` as an item, and its position there (None
    on a chain, or for a branch of a single transition)."""
    if route.shape is None:
        return None
    for run in _series_runs(route.shape):
        if Edge(name) in run.items:
            return run, run.items.index(Edge(name))
    return None


def _span(route: Route, k: int, target: str) -> list[int]:
    """The transitions a retarget of e_k to ``target`` drops (in the transitions' order);
    raises `NotApplicable` when ``target`` is not a later state of e_k's series."""
    ts = route.transitions
    if route.shape is None:
        j = next((j for j in range(k + 1, len(ts)) if ts[j].target == target), None)
        if j is None:
            raise NotApplicable(f"`{target}` is not a later target than `{ts[k].name}`'s")
        return list(range(k + 1, j + 1))
    place = _place(route, ts[k].name)
    if place is not None:
        run, a = place
        for b in range(a + 1, len(run.items)):
            if _exit(route, run.items[b]) == target:
                names = {x for item in run.items[a + 1 : b + 1] for x in shape_edges(item)}
                return [i for i, t in enumerate(ts) if t.name in names]
    raise NotApplicable(f"`{target}` is not a later state of `{ts[k].name}`'s branch or of the spine")


def _without(shape: Shape, names: set[str]) -> Shape | None:
    """``shape`` without the items made only of the edges ``names`` (dropped from a
    series); a series left with one item becomes that item; None when no parallel
    block is left (a chain)."""

    def cut(node: Shape) -> Shape:
        if isinstance(node, Edge):
            return node
        if isinstance(node, Parallel):
            return Parallel(tuple(cut(b) for b in node.branches))
        items = tuple(cut(x) for x in node.items if not set(shape_edges(x)) <= names)
        return items[0] if len(items) == 1 else Series(items)

    def has_block(node: Shape) -> bool:
        if isinstance(node, Parallel):
            return True
        return isinstance(node, Series) and any(has_block(x) for x in node.items)

    out = cut(shape)
    return out if has_block(out) else None


def _cut(route: Route, k: int, drop: Sequence[int]) -> Route:
    """e_k now ends at the target of the last transition of ``drop``; the transitions
    ``drop`` and the states nothing uses any more go."""
    ts = route.transitions
    dropped = {ts[i].name for i in drop}
    new_target = ts[drop[-1]].target
    kept = [attrs.evolve(t, target=new_target) if i == k else t for i, t in enumerate(ts) if t.name not in dropped]
    used = {s for t in kept for s in (t.source, t.target)}
    gone = {s for i in drop for s in (ts[i].source, ts[i].target)} - used
    shape = None if route.shape is None else _without(route.shape, dropped)
    transitions = redate(attrs.evolve(route, shape=shape), kept)
    evidence = tuple(
        attrs.evolve(
            e,
            supports=tuple(x for x in e.supports if x not in dropped),
            contradicts=tuple(x for x in e.contradicts if x not in dropped),
        )
        for e in route.evidence
    )
    states = tuple(s for s in route.states if s.name not in gone)
    return attrs.evolve(route, transitions=transitions, states=states, evidence=evidence, shape=shape)


def _reached(route: Route, state: str) -> dt.date | None:
    """The date ``state`` is reached: the latest due date of the transitions into it
    (None if one has none), as_of for the start."""
    dues = [t.due for t in route.transitions if t.target == state]
    if not dues:
        return route.as_of
    return None if any(d is None for d in dues) else max(d for d in dues if d is not None)


def _merged_horizon(route: Route, k: int, j: int) -> tuple[float, str] | None:
    a, b = route.transitions[k].horizon, route.transitions[j].horizon
    if a is None or b is None:
        return a or b
    if a[1] == b[1]:
        return (a[0] + b[0], a[1])
    if {a[1], b[1]} == {"months", "years"}:
        return sum(x[0] * (12 if x[1] == "years" else 1) for x in (a, b)), "months"
    start = _reached(route, route.transitions[k].source) or route.as_of
    end = add_horizon(add_horizon(start, int(a[0]), a[1]), int(b[0]), b[1])
    return (float((end - start).days), "days")


def _merge(route: Route, k: int, j: int) -> Route:
    """e_k and e_j (e_j leaving the state e_k reaches, nothing else touching it) become one."""
    first, second = route.transitions[k], route.transitions[j]
    names = {c.name for c in first.cost}
    later = []
    for c in second.cost:
        name = c.name
        if name in names:
            name = base = f"{c.name}_{second.name}"
            i = 2
            while name in names:
                name, i = f"{base}_{i}", i + 1
        names.add(name)
        later.append(attrs.evolve(c, name=name))
    merged = attrs.evolve(
        first,
        target=second.target,
        threshold=second.threshold,
        threshold_text=second.threshold_text,
        horizon=_merged_horizon(route, k, j),
        cost=(*first.cost, *later),
        discharges=_dedupe((*first.discharges, *second.discharges)),
    )
    ts = route.transitions
    transitions = redate(route, [merged if i == k else t for i, t in enumerate(ts) if i != j])

    def redirect(refs: tuple[str, ...]) -> tuple[str, ...]:
        return _dedupe([first.name if x == second.name else x for x in refs])

    evidence = tuple(
        attrs.evolve(e, supports=redirect(e.supports), contradicts=redirect(e.contradicts)) for e in route.evidence
    )
    states = tuple(s for s in route.states if s.name != second.source)
    shape = None if route.shape is None else remove_edge(route.shape, second.name)
    return attrs.evolve(route, transitions=transitions, states=states, evidence=evidence, shape=shape)


def _replace(route: Route, k: int, t: Transition) -> Route:
    ts = route.transitions
    return attrs.evolve(route, transitions=(*ts[:k], t, *ts[k + 1 :]))


def _next(route: Route, k: int, name: str) -> int:
    """The index of ``name`` when it follows e_k in e_k's series (the chain, a branch or
    the spine); raises `NotApplicable` otherwise."""
    ts = route.transitions
    if route.shape is None:
        if k + 1 < len(ts) and ts[k + 1].name == name:
            return k + 1
    else:
        place = _place(route, ts[k].name)
        if place is not None:
            run, a = place
            if a + 1 < len(run.items) and run.items[a + 1] == Edge(name):
                return _index(route, name)
    raise NotApplicable(f"`{name}` does not follow `{ts[k].name}`")


def apply_edit(route: Route, edit: Edit) -> Route:
    """The edited route (IR); raises `NotApplicable` when the edit does not apply."""
    n = len(route.transitions)
    if edit.kind == "drop-evidence":
        items: list[Evidence] = []
        found = False
        for e in route.evidence:
            if e.name != edit.subject or not e.contradicts:
                items.append(e)
                continue
            found = True
            if e.supports:  # it stays, supporting what it supported
                items.append(attrs.evolve(e, contradicts=()))
        if not found:
            raise NotApplicable(f"no evidence `{edit.subject}` that contradicts a transition")
        return attrs.evolve(route, evidence=tuple(items))
    if edit.kind == "move-payoff":
        return _move_payoff(route, edit.subject, edit.arg)
    k = _index(route, edit.subject)
    t = route.transitions[k]
    if edit.kind == "delete":
        if k not in seam_indices(route) or n < 3:
            raise NotApplicable(f"`{t.name}` is not an interior transition")
        return splice(route, k)
    if edit.kind == "merge":
        return _merge(route, k, _next(route, k, edit.arg))
    if edit.kind == "retarget":
        return _cut(route, k, _span(route, k, edit.arg))
    if edit.kind == "re-class":
        if t.ref_class == edit.arg:
            raise NotApplicable(f"`{t.name}` is already of class {edit.arg}")
        return _replace(route, k, attrs.evolve(t, ref_class=edit.arg))
    if edit.kind == "drop-cost":
        if not any(c.name == edit.arg for c in t.cost):
            raise NotApplicable(f"`{t.name}` has no cost item `{edit.arg}`")
        return _replace(route, k, attrs.evolve(t, cost=tuple(c for c in t.cost if c.name != edit.arg)))
    if edit.kind == "shrink-cost":
        if not any(c.name == edit.arg for c in t.cost):
            raise NotApplicable(f"`{t.name}` has no cost item `{edit.arg}`")
        cost = tuple(attrs.evolve(c, unit_cost=c.unit_cost / 2) if c.name == edit.arg else c for c in t.cost)
        return _replace(route, k, attrs.evolve(t, cost=cost))
    if edit.kind == "drop-kill":
        if t.kill_text is None:
            raise NotApplicable(f"`{t.name}` has no kill condition")
        return _replace(route, k, attrs.evolve(t, kill=None, kill_text=None))
    if edit.kind == "drop-threshold":
        if t.threshold_text is None:
            raise NotApplicable(f"`{t.name}` has no threshold")
        return _replace(route, k, attrs.evolve(t, threshold=None, threshold_text=None))
    raise ValueError(f"unknown edit kind {edit.kind!r}")


def _move_payoff(route: Route, source: str, target: str) -> Route:
    """``source``'s payoff moved to the earlier state ``target`` (added to its own): on a
    chain a state before it, on a graph a state on some path from the start into it
    (`_earlier`); never the start."""
    names = {s.name for s in route.states}
    if source not in names or target not in names or target not in _earlier(route, source) \
            or route.state(source).payoff is None:
        raise NotApplicable(f"no payoff of `{source}` to move to an earlier state `{target}`")
    moved = route.state(source)
    assert moved.payoff is not None
    there = route.state(target)
    if there.payoff is not None and (there.payoff_in_fold is None) != (moved.payoff_in_fold is None):
        raise NotApplicable(f"the payoffs of `{source}` and `{target}` are written in different units")
    states = []
    for s in route.states:
        if s.name == source:
            s = attrs.evolve(s, payoff=None, payoff_span=None)
        elif s.name == target:
            s = attrs.evolve(s, payoff=(s.payoff or 0.0) + moved.payoff, payoff_span=s.payoff_span or moved.payoff_span,
                             payoff_in_fold=moved.payoff_in_fold)
        states.append(s)
    return attrs.evolve(route, states=tuple(states))


def _earlier(route: Route, state: str) -> list[str]:
    """The states a payoff at ``state`` may move to, in the order of `route.states`: on a
    chain those before it, on a graph those on a path from the start into it (a state
    inside one branch for a join's payoff, a state before the fork for a branch's); the
    start never (it takes no payoff)."""
    order = [s.name for s in route.states]
    if route.shape is None:
        return order[1 : order.index(state)] if state in order else []
    into: dict[str, list[str]] = {}
    for t in route.transitions:
        into.setdefault(t.target, []).append(t.source)
    seen: set[str] = set()
    todo = list(into.get(state, []))
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo += into.get(x, [])
    starts = {t.source for t in route.transitions} - set(into)
    return [x for x in order if x in seen and x not in starts]


def describe(route: Route, edit: Edit, priors: dict[str, float]) -> str:
    """One line saying what the edit does to ``route`` (the route it is applied to)."""
    if edit.kind == "move-payoff":
        moved = route.state(edit.subject)
        unit = "in the fold's unit" if moved.payoff_in_fold is not None else "usd"
        return (f"move the payoff of `{edit.subject}` ({number(moved.payoff or 0.0)} {unit}) "
                f"to the earlier state `{edit.arg}`")
    if edit.kind == "drop-evidence":
        e = next(e for e in route.evidence if e.name == edit.subject)
        against = ", ".join(e.contradicts)
        if e.supports:
            return f"drop `contradicts {against}` from evidence `{e.name}` (it still supports {', '.join(e.supports)})"
        return f"drop evidence `{e.name}` (contradicts {against})"
    k = _index(route, edit.subject)
    t = route.transitions[k]
    if edit.kind == "delete":
        before = route.transitions[k - 1]
        return f"delete `{t.name}`; `{before.name}` now ends at `{t.target}`"
    if edit.kind == "merge":
        second = route.transitions[_next(route, k, edit.arg)]
        return f"merge `{t.name}` and `{second.name}` into `{t.name}`: {t.source} -> {second.target}"
    if edit.kind == "retarget":
        dropped = ", ".join(f"`{route.transitions[i].name}`" for i in _span(route, k, edit.arg))
        return f"retarget `{t.name}` to `{edit.arg}`, dropping {dropped}"
    if edit.kind == "re-class":
        return (f'`{t.name}` class "{t.ref_class}" (p {number(priors[t.ref_class])}) -> '
                f'"{edit.arg}" (p {number(priors[edit.arg])})')
    if edit.kind == "drop-cost":
        c = next(c for c in t.cost if c.name == edit.arg)
        return (f"drop cost item `{c.name}` of `{t.name}` "
                f"({number(c.count)} * {number(c.unit_cost)} = {number(c.count * c.unit_cost)} usd)")
    if edit.kind == "shrink-cost":
        c = next(c for c in t.cost if c.name == edit.arg)
        return (f"halve cost item `{c.name}` of `{t.name}` "
                f"({number(c.count)} * {number(c.unit_cost)} usd -> {number(c.count)} * {number(c.unit_cost / 2)} usd)")
    if edit.kind == "drop-kill":
        return f"drop the kill condition of `{t.name}` ({t.kill_text})"
    if edit.kind == "drop-threshold":
        return f"drop the threshold of `{t.name}` ({t.threshold_text})"
    raise ValueError(f"unknown edit kind {edit.kind!r}")


def enumerate_edits(route: Route, priors: dict[str, float], reclass: str = "all", shrink: bool = False) -> list[Edit]:
    """Every single edit of ``route``, in the module docstring's order (deterministic).
    ``reclass``: ``all`` classes of higher prior, those of the same ``category`` prefix
    only, or ``none``; ``shrink``: also halve each cost item."""
    ts = route.transitions
    n = len(ts)
    out: list[Edit] = []
    deletable = set(seam_indices(route)) if n >= 3 else set()
    out += [Edit("delete", ts[k].name) for k in sorted(deletable)]
    # each transition's series: the chain, or on a graph its branch or the spine
    runs: list[tuple[int, list[Shape]]] = []
    for k, t in enumerate(ts):
        if route.shape is None:
            runs.append((k, [Edge(x.name) for x in ts[k + 1 :]]))
        elif (place := _place(route, t.name)) is not None:
            runs.append((k, list(place[0].items[place[1] + 1 :])))
    out += [Edit("merge", ts[k].name, later[0].transition) for k, later in runs
            if later and isinstance(later[0], Edge)]
    for k, later in runs:
        for b, item in enumerate(later):
            if b == 0 and isinstance(item, Edge) and _index(route, item.transition) in deletable:
                continue  # the same route as deleting that transition
            out.append(Edit("retarget", ts[k].name, _exit(route, item)))
    for t in ts:
        prefix = t.ref_class.split("/")[0]
        higher = [c for c, p in priors.items() if p > priors[t.ref_class]]
        if reclass != "all":
            higher = [c for c in higher if reclass == "category" and c.split("/")[0] == prefix]
        higher.sort(key=lambda c: (c.split("/")[0] != prefix, -priors[c], c))
        out += [Edit("re-class", t.name, c) for c in higher]
    for t in ts:
        out += [Edit("drop-cost", t.name, c.name) for c in t.cost]
    if shrink:
        for t in ts:
            out += [Edit("shrink-cost", t.name, c.name) for c in t.cost if c.unit_cost > 0]
    out += [Edit("drop-evidence", e.name) for e in route.evidence if e.contradicts]
    out += [Edit("drop-kill", t.name) for t in ts if t.kill_text is not None]
    out += [Edit("drop-threshold", t.name) for t in ts if t.threshold_text is not None]
    out += [Edit("move-payoff", s.name, x) for s in route.states if s.payoff is not None
            for x in _earlier(route, s.name)]
    return out


# ---------------------------------------------------------------------- results
@attrs.frozen
class CostChange:
    transition: str
    budget_from: float
    budget_to: float
    c_from: float
    c_to: float
    bound_by: str  # what sets the new c: budget | floor_class | floor_delta


@attrs.frozen
class Trial:
    edits: tuple[Edit, ...]
    description: str
    text: str  # the edited route as compiled
    outcome: str  # one of OUTCOMES
    ungated_score: float | None = None
    gain: float | None = None  # edited ungated R_0 − honest ungated R_0
    verdict: str | None = None  # under the active coverage mode
    gate: str | None = None
    dock: str | None = None
    dock_score: float | None = None
    dock_gain: float | None = None  # edited DOCK score − honest DOCK score
    eligible: bool | None = None
    uncovered: tuple[str, ...] = ()  # transition.field
    failed_requires: tuple[str, ...] = ()  # "obligation: require …", claimed obligations only
    drift: tuple[Drift, ...] = ()  # p that moved (c: `costs`)
    costs: tuple[CostChange, ...] = ()  # transitions whose budget or c moved
    errors: tuple[str, ...] = ()  # error diagnostics of an invalid edit

    @property
    def kind(self) -> str:
        return "+".join(e.kind for e in self.edits)

    @property
    def key(self) -> str:
        return " + ".join(e.key for e in self.edits)

    @property
    def floors_bound(self) -> bool:
        """A floor, not the authored budget, sets the cost of some transition whose
        budget or cost the edit moved."""
        return any(c.bound_by != "budget" for c in self.costs)


@attrs.frozen
class RouteReport:
    compiled: Compiled
    gate: Decision
    dock: Decision
    trials: tuple[Trial, ...]  # by gain, highest first; invalid last
    enumerated: int  # single edits enumerated
    duplicates: int  # edits whose route an earlier edit already produced
    not_tried: int  # left out by --max-edits
    depth: int

    def count(self, outcome: str) -> int:
        return sum(1 for t in self.trials if t.outcome == outcome)

    @property
    def raising(self) -> list[Trial]:
        return [t for t in self.trials if t.gain is not None and t.gain > _eps(self.compiled.numbers.score)]


def _eps(score: float) -> float:
    """Gains within float noise of the honest score are no gain."""
    return 1e-9 * max(1.0, abs(score))


class Runner:
    """Compiles edited routes of one honest route through a child session that binds
    the same libraries and policies (libraries parsed once per route)."""

    def __init__(self, honest: Compiled, session: Session) -> None:
        route = honest.route
        self.child = session.for_variants_of(route)
        self.honest = honest
        self.route_dir = Path(route.file).parent
        self.gate, self.dock, _ = gate_and_dock(honest, "redteam")
        self.counter = 0

    def compile_text(self, text: str) -> tuple[Compiled | None, tuple[str, ...]]:
        """Compile an edited route's text through the child session: the compiled
        route (None when it does not compile) and its error diagnostics."""
        self.counter += 1
        shown = f"{self.honest.route.file}#{self.honest.route.name}/redteam-{self.counter}"
        child = self.child
        before = len(child.diags)
        routes = child.routes_from_text(text, shown, self.route_dir)
        compiled = child.compile_route(routes[0]) if len(routes) == 1 else None
        new = child.diags.items[before:]
        del child.diags.items[before:]
        child.sources.pop(shown, None)
        return compiled, tuple(f"{d.code} {d.message}" for d in new if d.severity == "error")

    def trial(self, edits: tuple[Edit, ...], description: str, text: str) -> Trial:
        compiled, errors = self.compile_text(text)
        if compiled is None or errors:
            return Trial(edits, description, text, "invalid", errors=errors or ("the edited route did not compile",))
        h = self.honest.numbers
        n = compiled.numbers
        gate, dock, coverage = gate_and_dock(compiled, "redteam")
        gain = n.score - h.score
        dock_gain = (dock.score or 0.0) - (self.dock.score or 0.0)
        honest = {t.name: t for t in h.transitions}
        costs = []
        for t in n.transitions:
            o = honest.get(t.name)
            if o is None:
                continue
            if t.cost.c != o.cost.c or t.cost.budget != o.cost.budget:
                costs.append(CostChange(t.name, o.cost.budget, t.cost.budget, o.cost.c, t.cost.c, t.cost.bound_by))
        failed = sorted(
            {f"{a.obligation}: {f.require}" for u in coverage.uncovered for a in u.tried if a.claimed for f in a.failed}
        )
        if gate.verdict == "suspend-and-ask":
            outcome = "refused"
        elif h.eligible and not n.eligible:
            outcome = "ineligible"
        elif gain > _eps(h.score):
            outcome = "covered-gain"
        else:
            outcome = "no-gain"
        return Trial(
            edits,
            description,
            text,
            outcome,
            ungated_score=n.score,
            gain=gain,
            verdict=compiled.decision.verdict,
            gate=gate.verdict,
            dock=dock.verdict,
            dock_score=dock.score,
            dock_gain=dock_gain,
            eligible=n.eligible,
            uncovered=tuple(f"{u.transition}.{u.delta.field}" for u in coverage.uncovered),
            failed_requires=tuple(failed),
            drift=drifts(self.honest, compiled, costs=False),
            costs=tuple(costs),
        )


def _sort_key(item: tuple[int, Trial]) -> tuple[int, float, int]:
    i, t = item
    return (t.gain is None, -(t.gain or 0.0), i)


def redteam(
    honest: Compiled, session: Session, max_edits: int = DEFAULT_MAX_EDITS, depth: int = 1, reclass: str = "all"
) -> RouteReport:
    """Try the edits of ``honest.route`` (and, with depth 2, pairs of score-raising
    ones), at most ``max_edits`` compiles, and classify each."""
    route = honest.route
    priors = {name: prior.p for name, prior in honest.policy.policy.priors.items()}
    runner = Runner(honest, session)
    seen = {route_to_text(route)}
    trials: list[Trial] = []
    duplicates = not_tried = 0

    def attempt(edits: tuple[Edit, ...]) -> None:
        nonlocal duplicates, not_tried
        current = route
        parts = []
        try:
            for e in edits:
                edited = apply_edit(current, e)  # first: it refuses an edit that does not apply
                parts.append(describe(current, e, priors))
                current = edited
        except NotApplicable:
            return
        text = route_to_text(current)
        if text in seen:
            duplicates += 1
            return
        seen.add(text)
        if len(trials) >= max_edits:
            not_tried += 1
            return
        trials.append(runner.trial(edits, "; then ".join(parts), text))

    singles = enumerate_edits(route, priors, reclass)
    for edit in singles:
        attempt((edit,))
    if depth >= 2:
        # pairs of score-raising single edits, the second applied after the first: pairs
        # of two covered gains first (they may compound), then the others; each group by
        # the sum of the two gains, highest first
        eps = _eps(honest.numbers.score)
        ranked = [t for _, t in sorted(enumerate(trials), key=_sort_key) if t.gain is not None and t.gain > eps]
        pairs = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]]
        pairs.sort(key=lambda ab: (not all(x.outcome == "covered-gain" for x in ab),
                                   -((ab[0].gain or 0.0) + (ab[1].gain or 0.0))))
        for a, b in pairs:
            attempt((*a.edits, *b.edits))
    ordered = tuple(t for _, t in sorted(enumerate(trials), key=_sort_key))
    return RouteReport(honest, runner.gate, runner.dock, ordered, len(singles), duplicates, not_tried, depth)


# ---------------------------------------------------------------------- output
@attrs.frozen
class Summary:
    routes: int
    tried: int
    raising: int
    by_outcome: tuple[tuple[str, int], ...]
    by_kind: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # kind -> outcome counts
    refused_raising: int  # score-raising edits GATE refuses
    covered_gains: tuple[tuple[str, Trial], ...]  # (route, trial), by gain
    not_tried: int


def summarise(reports: Sequence[RouteReport]) -> Summary:
    trials = [(r.compiled.route.name, t) for r in reports for t in r.trials]
    kinds = sorted({t.kind for _, t in trials}, key=lambda k: ([KINDS.index(x) for x in k.split("+")], k))
    by_kind = tuple(
        (k, tuple((o, sum(1 for _, t in trials if t.kind == k and t.outcome == o)) for o in OUTCOMES)) for k in kinds
    )
    gains = sorted(
        ((name, t) for name, t in trials if t.outcome == "covered-gain"), key=lambda x: (-(x[1].gain or 0.0), x[0])
    )
    return Summary(
        routes=len(reports),
        tried=len(trials),
        raising=sum(len(r.raising) for r in reports),
        by_outcome=tuple((o, sum(r.count(o) for r in reports)) for o in OUTCOMES),
        by_kind=by_kind,
        refused_raising=sum(1 for r in reports for t in r.raising if t.outcome == "refused"),
        covered_gains=tuple(gains),
        not_tried=sum(r.not_tried for r in reports),
    )


def trial_json(t: Trial) -> dict[str, Any]:
    return {
        "kind": t.kind,
        "edit": t.key,
        "steps": [{"kind": e.kind, "subject": e.subject, "arg": e.arg or None} for e in t.edits],
        "description": t.description,
        "class": t.outcome,
        "gain": t.gain,
        "ungated_score": t.ungated_score,
        "verdict": t.verdict,
        "gate": t.gate,
        "dock": t.dock,
        "dock_score": t.dock_score,
        "dock_gain": t.dock_gain,
        "eligible": t.eligible,
        "uncovered": list(t.uncovered),
        "failed_requires": list(t.failed_requires),
        "drift": [str(d) for d in t.drift],
        "costs": [attrs.asdict(c) for c in t.costs],
        "floors_bound": t.floors_bound,
        "errors": list(t.errors),
    }


def report_json(reports: Sequence[RouteReport], max_edits: int, depth: int, reclass: str = "all") -> dict[str, Any]:
    s = summarise(reports)
    routes = []
    for r in reports:
        c = r.compiled
        routes.append({
            "route": c.route.name,
            "file": c.route.file,
            **unit_key(c.policy.policy),
            "honest": {
                "ungated_score": c.numbers.score,
                "verdict": c.decision.verdict,
                "gate": r.gate.verdict,
                "dock": r.dock.verdict,
                "dock_score": r.dock.score,
                "eligible": c.numbers.eligible,
            },
            "enumerated": r.enumerated,
            "tried": len(r.trials),
            "duplicates": r.duplicates,
            "not_tried": r.not_tried,
            "raising": len(r.raising),
            "by_class": {o: r.count(o) for o in OUTCOMES},
            "edits": [trial_json(t) for t in r.trials],
        })
    return {
        "settings": {"max_edits": max_edits, "depth": depth, "reclass": reclass},
        "routes": routes,
        "summary": {
            "routes": s.routes,
            "tried": s.tried,
            "raising": s.raising,
            "refused_raising": s.refused_raising,
            "not_tried": s.not_tried,
            "by_class": dict(s.by_outcome),
            "by_kind": {k: dict(v) for k, v in s.by_kind},
            "covered_gains": [{"route": name, "edit": t.key, "description": t.description, "gain": t.gain}
                              for name, t in s.covered_gains],
        },
    }


def _money(x: float | None) -> str:
    return "—" if x is None else money(x)


def _changes(t: Trial) -> str:
    parts = [d.text() for d in t.drift]
    for c in t.costs:
        if c.c_to != c.c_from:
            parts.append(f"{c.transition}.c: {_money(c.c_from)} -> {_money(c.c_to)} ({c.bound_by})")
        else:
            parts.append(f"{c.transition}.c: unchanged ({c.bound_by}; budget "
                         f"{_money(c.budget_from)} -> {_money(c.budget_to)})")
    return "; ".join(parts) or "none"


def report_text(reports: Sequence[RouteReport]) -> str:
    blocks = []
    for r in reports:
        c = r.compiled
        lines = [
            f"route {c.route.name}  [{c.route.file}]  honest score {_money(c.numbers.score)} "
            f"{c.policy.policy.units.label}, "
            f"GATE: {r.gate.verdict}, DOCK: {r.dock.verdict}",
            f"  {plural(len(r.trials), 'edit')} tried ({plural(r.duplicates, 'duplicate')} skipped"
            + (f", {r.not_tried} not tried: --max-edits" if r.not_tried else "")
            + f"); {len(r.raising)} raise the score; " + ", ".join(f"{r.count(o)} {o}" for o in OUTCOMES if r.count(o)),
        ]
        rows = [("#", "gain", "class", "kind", "edit", "GATE", "DOCK", "DOCK Δ", "p and c drift")]
        for i, t in enumerate(r.trials, 1):
            rows.append((str(i), _money(t.gain), t.outcome, t.kind, t.description, t.gate or "—", t.dock or "—",
                         _money(t.dock_gain), _changes(t) if t.outcome != "invalid" else "; ".join(t.errors)))
        if r.trials:
            lines += table(rows, left=(2, 3, 4, 5, 6, 8))
        for i, t in enumerate(r.trials, 1):
            if t.uncovered:
                failed = "; ".join(t.failed_requires) or "no listed obligation covers them"
                lines.append(f"  {i}: uncovered {', '.join(t.uncovered)}; failed: {failed}")
        blocks.append("\n".join(lines))
    s = summarise(reports)
    counts = dict(s.by_outcome)
    rows2 = [
        ("", ""),
        ("routes", str(s.routes)),
        ("edits tried", str(s.tried) + (f" ({s.not_tried} more not tried: --max-edits)" if s.not_tried else "")),
        ("raising the score", str(s.raising)),
        ("  refused by GATE", str(s.refused_raising)),
        ("  covered gains (released)", str(counts["covered-gain"])),
        *((f"class {o}", str(counts[o])) for o in OUTCOMES),
    ]
    summary = ["redteam summary", *table(rows2)[1:]]
    kind_rows = [("kind", *OUTCOMES)] + [(k, *(str(n) for _, n in v)) for k, v in s.by_kind]
    summary += ["  by kind:", *table(kind_rows, indent="    ")]
    if s.covered_gains:
        summary.append("  covered gains remaining (score rises, GATE still releases):")
        gain_rows = [(name, _money(t.gain), t.description) for name, t in s.covered_gains]
        summary += table(gain_rows, left=(0, 2), indent="    ")
    else:
        summary.append("  no covered gain remains: GATE refuses, or nothing gains from, every edit tried")
    blocks.append("\n".join(summary))
    return "\n\n".join(blocks)
