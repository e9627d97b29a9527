"""Route and library nodes. Lowering writes every state in full (carry-forward
resolved) and orders transitions along the chain, so later passes never look back."""

from __future__ import annotations

import datetime as dt

import attrs

from pcsc.diagnostics.model import Span
from pcsc.lang.ir.expr import Expr
from pcsc.lang.ir.shape import Shape


@attrs.frozen
class Material:
    """Materiality threshold: ``relative`` compares |Δ| with amount·|source|."""

    amount: float
    relative: bool


@attrs.frozen
class FieldDecl:
    name: str
    type: str  # count | number | ratio | usd | bool
    material: Material | None
    library: str
    span: Span


@attrs.frozen
class Require:
    text: str
    expr: Expr
    span: Span


@attrs.frozen
class Obligation:
    name: str
    covers: tuple[str, ...]
    requires: tuple[Require, ...]
    library: str
    span: Span


@attrs.frozen
class Library:
    name: str
    version: str
    path: str
    fields: tuple[FieldDecl, ...]
    obligations: tuple[Obligation, ...]


@attrs.frozen
class PolicyRef:
    id: str
    version: str
    sha256: str | None
    span: Span

    def __str__(self) -> str:
        return f"{self.id}@{self.version}"


@attrs.frozen
class State:
    """A state record; ``values`` holds every route field, in the route's field order."""

    name: str
    values: tuple[tuple[str, float | bool], ...]
    listed: tuple[str, ...]  # the fields the author wrote (the rest carried forward)
    span: Span
    value_spans: tuple[tuple[str, Span], ...] = ()  # where each listed field's `name value` is written
    payoff: float | None = None  # credited when the state is reached (`payoff 250k usd`); never carried forward
    payoff_span: Span | None = None
    # where the amount is written when the payoff has no unit (`payoff 300`): in the unit the policy
    # keeps its fold in, credited at face value; None: in usd, converted at the policy's usd rate
    payoff_in_fold: Span | None = None

    def get(self, field: str) -> float | bool:
        for name, value in self.values:
            if name == field:
                return value
        raise KeyError(field)


@attrs.frozen
class VisionItem:
    """One `name value` line of a vision block, as written: the policy's `[vision]`
    declares which names a vision holds and what kind of number each is, so lowering
    keeps the unit and percent sign for binding to check (`pcsc.policy.vision`)."""

    name: str
    value: float
    # how it is written, for binding's checks; not part of the value (the IR of a venture
    # vision, `pcsc.lang.serialize`, keeps the line's span only)
    unit: str | None = attrs.field(eq=False)
    percent: bool = attrs.field(eq=False)
    span: Span  # the whole `name value` line
    name_span: Span = attrs.field(eq=False)
    value_span: Span = attrs.field(eq=False)


@attrs.frozen
class Vision:
    """The vision block: its state and the values it states, in the order written.
    The policy's formula (by default `tam * capture * defensibility`) reads them."""

    state: str
    items: tuple[VisionItem, ...]
    span: Span
    name_span: Span | None = attrs.field(default=None, eq=False)  # the state name: a missing value is reported there
    #: every name a line of the block states, those lowering refused included (so a
    #: value written but refused is not also reported missing)
    written: tuple[str, ...] = attrs.field(default=(), eq=False)

    @property
    def values(self) -> dict[str, float]:
        return {i.name: i.value for i in self.items}

    @property
    def item_spans(self) -> tuple[tuple[str, Span], ...]:
        """Where each value's `name value` line is written."""
        return tuple((i.name, i.span) for i in self.items)

    def get(self, name: str) -> float:
        for item in self.items:
            if item.name == name:
                return item.value
        raise KeyError(name)

    def replace(self, values: dict[str, float]) -> Vision:
        """This vision with the named values replaced (what-if overrides)."""
        return attrs.evolve(self, items=tuple(
            attrs.evolve(i, value=values[i.name]) if i.name in values else i for i in self.items))

    @property
    def tam(self) -> float:
        return self.get("tam")

    @property
    def capture(self) -> float:
        return self.get("capture")

    @property
    def defensibility(self) -> float:
        return self.get("defensibility")


@attrs.frozen
class CostItem:
    name: str
    count: float
    unit_cost: float
    span: Span


@attrs.frozen
class Transition:
    name: str
    source: str
    target: str
    actor: str | None
    mechanism: str | None
    asset: str | None
    ref_class: str
    class_span: Span
    threshold: Expr | None
    threshold_text: str | None
    kill: Expr | None
    kill_text: str | None
    horizon: tuple[float, str] | None  # (amount, unit) as written: days | months | years
    cost: tuple[CostItem, ...]
    learning_cost: float | None
    estimates: tuple[float, ...]
    discharges: tuple[str, ...]
    due: dt.date | None  # as_of plus the horizons of this and every earlier transition
    span: Span
    estimates_span: Span | None = None  # where `estimates …` is written
    kill_by: dt.date | None = None  # the kill applies only to readings on or after this date
    kill_by_text: str | None = None  # `2027-06-01` or `6 months`, as written after `by`


@attrs.frozen
class Evidence:
    name: str
    source: str | None
    captured: dt.date | None
    tier: int
    weight: float
    supports: tuple[str, ...]
    contradicts: tuple[str, ...]
    excerpt: str
    unverified: bool
    span: Span
    captured_span: Span | None = None  # where `captured` is written, for point-in-time diagnostics
    tier_span: Span | None = None
    weight_span: Span | None = None  # where `weight …` is written


@attrs.frozen
class Criterion:
    name: str
    score: float
    span: Span


_SCAN = 16  # states looked up by a scan; a longer route's by an index (one lookup per transition stays linear)
_INDEXES: dict[int, tuple[tuple[State, ...], dict[str, State]]] = {}  # by the id of a route's states


def _state_index(states: tuple[State, ...]) -> dict[str, State]:
    """The states by name (the first of a name wins), kept for the last few routes: the
    IR is frozen and its fields are the route's data, so the index lives beside it."""
    cached = _INDEXES.get(id(states))
    if cached is None or cached[0] is not states:
        if len(_INDEXES) >= 64:
            _INDEXES.pop(next(iter(_INDEXES)))
        cached = (states, {s.name: s for s in reversed(states)})
        _INDEXES[id(states)] = cached
    return cached[1]


@attrs.frozen
class Route:
    name: str
    title: str | None
    file: str
    as_of: dt.date
    policy: PolicyRef
    uses: tuple[str, ...]
    fields: tuple[FieldDecl, ...]  # the library fields this route mentions, in order
    states: tuple[State, ...]  # topological order: start state first, vision state last
    vision: Vision
    transitions: tuple[Transition, ...]  # topological order, stable by source order (chain order)
    evidence: tuple[Evidence, ...]
    criteria: tuple[Criterion, ...]
    obligations: tuple[Obligation, ...]  # from the libraries in `uses`
    span: Span
    shape: Shape | None = None  # None for a chain; the series-parallel tree of a graph route

    def state(self, name: str) -> State:
        if len(self.states) <= _SCAN:
            for s in self.states:
                if s.name == name:
                    return s
            raise KeyError(name)
        return _state_index(self.states)[name]

    def arrival(self, t: Transition) -> State:
        """The target state as transition ``t`` brings it about: on a chain, the target
        itself; on a graph, the source's values with those the target lists, so an edge
        into a join is not credited with what the other branches did (docs/graphs.md)."""
        target = self.state(t.target)
        if self.shape is None:
            return target
        values = dict(self.state(t.source).values)
        values.update((name, target.get(name)) for name in target.listed)
        return attrs.evolve(target, values=tuple((f.name, values[f.name]) for f in self.fields if f.name in values))

    def field(self, name: str) -> FieldDecl:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)
