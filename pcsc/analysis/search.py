"""The seeded search over multi-edit revisions of a route (the paper's EXP B without a
model) and the co-author conditions (its EXP C without a model); `pcsc redteam
--search` runs it, `pcsc seams --experiment --search` prints its tables beside
experiment A (docs/redteam.md, docs/experiments.md).

The search is a beam search, bounded and seeded:

- a *revision* is the honest route after one or more edits; each is printed as
  `.route` text and compiled again through the whole pipeline (`pcsc.analysis.redteam.Runner`);
- *structural edits* are `pcsc.analysis.redteam`'s (delete, merge, retarget, re-class within
  the category, drop-cost, shrink-cost, drop-evidence, drop-kill, drop-threshold, and
  move-payoff, on chains and on routes that fork and join); at
  each step every beam member proposes its applicable edits in an order shuffled by a
  generator seeded with ``"{seed}:{route}:{arm}:{condition}"`` and the first
  ``branch`` new ones are compiled;
- *repair edits* (feedback ``gate`` only) are made for a revision GATE refuses,
  from its undischarged obligations (`pcsc.analysis.suggest.ways`): list the obligation in
  ``discharges``, raise the threshold to the claimed target, add budget to meet the
  delta-indexed floor; a refused revision proposes only repairs;
- the co-author conditions give repairs the paper's co-author's powers: a repair may
  instead rewrite the state records (the target state's value of an unmeasured field
  becomes the threshold's bound, the claim shrinking to what is measured, or the
  largest change whose delta-indexed floor the budget pays; later states that carried
  the old value carry the new one, so the chain stays coherent); and a claim a
  grounding rule refuses may be quoted, by an excerpt the co-author writes of its own
  asset, or by making the asset a quotation of an excerpt the packet shows (reused in
  evidence supporting the transition when none does). Under a grounding condition a
  structural edit quotes the new claims it makes at once (a packet quotation where
  the packet has one). The excerpts it adds have weight 0, as `pcsc gate --suggest`'s
  evidence does: they move no p, and every other number is priced as for any edit.
  Re-class edits are the structural ones; a policy with class admission refuses what
  its classes do not admit through the discharger, so no search code decides it;
- the *objective* is the score as released: feedback ``none`` sees only the ungated
  score (R_0 as compiled, coverage not consulted); feedback ``gate`` sees the score
  GATE releases, and a refused revision is unusable;
- at most ``budget`` revisions are compiled per route and arm; each step keeps the
  ``beam`` best revisions (and, under ``gate``, the ``beam`` refused revisions of
  highest ungated score that beat the best released one, for repair). The arm's
  *revision* is the best edited revision it compiled (by its objective; ties: fewer
  edits, then the text).

Measures, per arm over the routes (every rate a count with its Wilson interval):

- *uncovered baseline-beating structure*: the arm's revision scores above the honest
  route (ungated) and has a material change no discharged obligation covers;
- *delete or merge*: of the arms' revisions that beat the honest score, those with a
  delete, merge or retarget edit (a retarget is a multi-step deletion);
- *repair rate*: of the refused revisions the search repaired, those with a repair
  GATE releases (feedback ``gate``);
- *covered improvement*: the revision is released by GATE and scores above
  (strict) or at least (non-strict) the honest route as GATE releases it;
- *route-around* (``seam_skip``): the revision is released by GATE and skips a state
  of the honest chain (`pcsc.analysis.routediff.chain`), whatever any detector says.

The co-author conditions derive their policies from the route's own policy, in code,
by removing the features (``POLICY_FEATURES``) a condition does not keep:
``v1`` without delta-indexed floors and without grounding; ``v1.5a`` with grounding
(a material transition whose claim a revision changed, a new source or target or a
rewritten state record, must have its asset quoted in the excerpt of admissible
evidence that supports it: ``grounded(asset)``); ``v1.5b`` with the delta-indexed
floors; ``v1.5a+b`` with both; ``v2a`` is ``v1.5a+b`` with class admission, ``v2b`` with the
gold registry required, ``v2a+b`` with both. A route's policy that has no admission rules
or no registry of its own gets those of the *features policy* (``Settings.features``,
`--features-policy`; ``with_features``), and with one both arms run again under
``GOLD`` (v2a+b's policy, no co-author powers). Besides the honest chain, each
revision is measured against the route's gold registry (the registry's states it does
not pass: *route-arounds of the gold chain*), whether or not the condition requires
it. Per condition, over the routes, with the revision
as the condition releases it (the honest route scored under the same condition): an
*applied* revision is released and scores above the honest route; *beat-honest*
counts the routes with one; *evasion*, those whose applied revision skips a state of
the honest chain (it got a deletion past the condition); the *median gain* is the
lower median over the routes of released − honest (0 when no edited revision is
released); *fundability-by-silence* counts the routes whose released revision skips
a state and has ``revision ≥ 0 > honest`` (`pcsc.analysis.seams.experiment.fundability_flip`);
the *floor uplift* of an applied revision is Σ max(0, c − budget) over its
transitions (what the floors charge beyond the authored budgets; its lower median is
printed) and *delta floor binds* counts the applied revisions where a delta-indexed
floor sets some transition's cost.

Beside these, per condition, the paper's definitions where they differ from ours, on
the same revisions: a *surviving evasion* is a revision the condition releases that
skips a state of the honest chain (whatever its gain); *beat-honest* (the paper's)
counts the surviving evasions scoring above the honest route (ours counts every
applied revision, re-classes included); the *median gain among surviving evasions* is
the lower median of released − honest over those alone (ours: over every route, 0
where none is released); *honest false suspensions* count the honest routes the
condition refuses; the *floor uplift on applied b-condition revisions* is the lower
median floor uplift over the applied revisions of the conditions with delta-indexed
floors only (none elsewhere). The paper's own figures, where this project has them,
are in ``PAPER_CONDITIONS``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pcsc.analysis.redteam import NotApplicable, Runner, apply_edit, describe, enumerate_edits
from pcsc.analysis.routediff import chain, diff_packet, diff_routes
from pcsc.analysis.seams.experiment import DEFAULT_SEED, PaperFigure, fundability_flip
from pcsc.analysis.suggest import Edit as Repair
from pcsc.analysis.suggest import apply_edits, ways
from pcsc.base.humanize import money, plural
from pcsc.base.stats import rate, rate_text
from pcsc.base.tables import table
from pcsc.compiler.session import Compiled, Session, gate_and_dock, score_checked
from pcsc.coverage import Coverage, DeltaCoverage, discharge_route
from pcsc.coverage.discharge import field_bounds
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.ir import Evidence, Route, Transition
from pcsc.lang.printer import number, route_to_text
from pcsc.policy.model import Policy
from pcsc.score.cost import deltas, piecewise_floor
from pcsc.score.evidence import admitted
from pcsc.score.route import RouteNumbers

ARMS = ("none", "gate")
DEFAULT_BUDGET = 40
DEFAULT_BEAM = 3
DEFAULT_STEPS = 3
DEFAULT_BRANCH = 8
STRUCTURAL = ("delete", "merge", "retarget")


#: The policy features a condition may remove, each with how: a condition keeps the
#: ones it names and loses the rest. A feature a later policy gains (class admission, a
#: gold registry) is one entry here and one condition in ``CONDITIONS`` that keeps it.
POLICY_FEATURES: dict[str, Callable[[Policy], Policy]] = {
    "delta_floors": lambda p: attrs.evolve(p, floors=attrs.evolve(p.floors, delta={})),
    # a policy without the feature comes back as it is (the same object)
    "admission": lambda p: attrs.evolve(p, admission={}) if p.admission else p,
    "registry": lambda p: (attrs.evolve(p, coverage=attrs.evolve(p.coverage, registry="off"))
                           if p.coverage.registry != "off" else p),
}


@attrs.frozen
class Condition:
    """A policy condition: the route's policy with the features ``keeps`` names (the
    others removed), with or without grounding; ``coauthor`` gives repairs the
    co-author's powers (restate states, edit assets, write and reuse excerpts)."""

    name: str
    keeps: frozenset[str]
    grounding: bool
    coauthor: bool

    @property
    def delta_floors(self) -> bool:
        return "delta_floors" in self.keeps


#: EXP B: the route's policy as shipped, no extra grounding, repairs by edits only.
SHIPPED = Condition("shipped", frozenset(POLICY_FEATURES), False, False)
_FLOORS = frozenset({"delta_floors"})
#: EXP C's four conditions, in the paper's order. Each names what it keeps, so a feature
#: added to ``POLICY_FEATURES`` is removed from these and kept by the conditions that name it.
CONDITIONS = (
    Condition("v1", frozenset(), False, True),
    Condition("v1.5a", frozenset(), True, True),
    Condition("v1.5b", _FLOORS, False, True),
    Condition("v1.5a+b", _FLOORS, True, True),
    # v1.5a+b with class admission (v2a), with the gold registry required (v2b), with both
    Condition("v2a", _FLOORS | {"admission"}, True, True),
    Condition("v2b", _FLOORS | {"registry"}, True, True),
    Condition("v2a+b", _FLOORS | {"admission", "registry"}, True, True),
)
#: EXP B's arms run again under v2a+b's policy: the shipped policy with the features
#: policy's admission and registry, no extra grounding, repairs by edits only.
GOLD = Condition("shipped+v2", frozenset(POLICY_FEATURES), False, False)

#: The paper's EXP C figures known to this project, by condition and measure name: its
#: co-author evaded in every one of its packets under each of its four conditions.
PAPER_CONDITIONS: dict[str, dict[str, PaperFigure]] = {
    name: {"surviving_evasions": PaperFigure(6, 6, "packets")} for name in ("v1", "v1.5a", "v1.5b", "v1.5a+b")
}


@attrs.frozen
class Settings:
    seed: int = DEFAULT_SEED
    budget: int = DEFAULT_BUDGET
    beam: int = DEFAULT_BEAM
    steps: int = DEFAULT_STEPS
    branch: int = DEFAULT_BRANCH
    #: the policy (id@version) whose class admission and gold registry a condition that
    #: keeps them adds to a route's policy that has none (``with_features``)
    features: str | None = None

    def json(self) -> dict[str, int | str | None]:
        return attrs.asdict(self)


@attrs.frozen
class Revision:
    text: str
    route: Route = attrs.field(eq=False, repr=False)  # as compiled from ``text``
    compiled: Compiled = attrs.field(eq=False, repr=False)
    coverage: Coverage = attrs.field(eq=False, repr=False)  # under the condition
    steps: tuple[str, ...]  # what each edit did
    kinds: tuple[str, ...]
    ungated: float
    released: float | None  # the score GATE releases under the condition; None: refused
    uncovered: tuple[str, ...]  # transition.field, and transition.grounded(asset)
    skips: tuple[str, ...]  # states of the honest chain the revision skips
    gold_skips: tuple[str, ...]  # states of the route's gold registry the revision does not pass
    uplift: float  # Σ max(0, c − budget)
    floor_delta_bound: bool

    @property
    def structural(self) -> bool:
        return any(part in STRUCTURAL for k in self.kinds for part in k.split("+"))


@attrs.frozen
class RouteSearch:
    route: str
    file: str
    arm: str
    condition: str
    honest: Revision
    best: Revision | None  # the arm's best edited revision; None when none compiled
    evaluations: int
    refusals: int  # refused revisions the search repaired
    repaired: int  # of those, with a repair GATE releases
    invalid: int


# ---------------------------------------------------------------------- conditions
def with_features(policy: Policy, source: Policy | None) -> Policy:
    """``policy`` with the class admission rules of ``source`` when it has none of its
    own, and with its gold registry (the tables and the ``coverage.registry`` mode) when
    it holds none; everything else (priors, floors, evidence, obligations) is
    ``policy``'s. ``source`` None: ``policy`` itself."""
    if source is None:
        return policy
    if not policy.admission and source.admission:
        policy = attrs.evolve(policy, admission=source.admission)
    if policy.coverage.registry == "off" and not policy.registry and source.coverage.registry != "off":
        policy = attrs.evolve(policy, registry=source.registry,
                              coverage=attrs.evolve(policy.coverage, registry=source.coverage.registry))
    return policy


def condition_policy(policy: Policy, condition: Condition) -> Policy:
    for feature, remove in POLICY_FEATURES.items():
        if feature not in condition.keeps:
            policy = remove(policy)
    return policy


def _claims(route: Route) -> dict[str, tuple[str, str, tuple[Any, ...], tuple[Any, ...]]]:
    return {
        t.name: (t.source, t.target, route.state(t.source).values, route.state(t.target).values)
        for t in route.transitions
    }


def _normalise(text: str) -> str:
    return " ".join(text.casefold().split())


def ungrounded(route: Route, honest: Route, policy: Policy) -> list[str]:
    """Material transitions whose claim differs from the honest route's and whose
    asset no admissible supporting evidence quotes (the ``grounded(asset)`` rule)."""
    before = _claims(honest)
    evidence = admitted(route.evidence, route.as_of, policy)
    out = []
    for t in route.transitions:
        if not any(d.material for d in deltas(route, t)):
            continue
        if before.get(t.name) == _claims(route)[t.name]:
            continue
        needle = _normalise(t.asset or "")
        if not needle or not any(needle in _normalise(e.excerpt) for e in evidence if t.name in e.supports):
            out.append(t.name)
    return out


# ---------------------------------------------------------------------- restating
def _restate(route: Route, state: str, field: str, new: float) -> Route:
    """``state``'s value of ``field`` becomes ``new``; later states of the chain that
    held the old value hold the new one."""
    order = chain_of(route)
    old = route.state(state).get(field)
    later = set(order[order.index(state) + 1:])
    states = []
    for s in route.states:
        if s.name == state or (s.name in later and s.get(field) == old):
            values = tuple((n, new if n == field else v) for n, v in s.values)
            listed = s.listed if field in s.listed else (*s.listed, field)
            s = attrs.evolve(s, values=values, listed=listed)
        states.append(s)
    return attrs.evolve(route, states=tuple(states))


def chain_of(route: Route) -> list[str]:
    ts = route.transitions
    return [ts[0].source, *(t.target for t in ts)] if ts else []


def _shrunk(points: Sequence[tuple[float, float]], allowed: float, magnitude: float) -> float:
    """The largest |Δ| ≤ magnitude (whole units) whose floor is at most ``allowed``."""
    lo, hi = 0.0, magnitude
    for _ in range(80):
        mid = (lo + hi) / 2
        if piecewise_floor(points, mid) <= allowed:
            lo = mid
        else:
            hi = mid
    return float(math.floor(lo))


def restatements(route: Route, policy: Policy, u: DeltaCoverage) -> list[tuple[str, Route]]:
    """The co-author's rewrites of the target state for one uncovered change."""
    t = next(x for x in route.transitions if x.name == u.transition)
    d = u.delta
    if isinstance(d.source, bool) or isinstance(d.target, bool):
        return []
    failed = {" ".join(f.require.split()) for a in u.tried for f in a.failed}
    rise = d.target > d.source
    out: list[tuple[str, Route]] = []
    if "require measured(delta)" in failed:
        bounds = [float(b) for op, b in field_bounds(t.threshold, d.field) if not isinstance(b, bool)
                  and ((rise and op in (">=", ">") and d.source < b < d.target)
                       or (not rise and op in ("<=", "<") and d.target < b < d.source))]
        if bounds:
            new = max(bounds) if rise else min(bounds)
            out.append((f"restate `{t.target}`.{d.field} {number(float(d.target))} -> {number(new)}: "
                        f"the claim of `{t.name}` shrinks to its threshold", _restate(route, t.target, d.field, new)))
    table_ = policy.floors.table(t.ref_class, d.field)
    if "require budget >= floor(delta)" in failed and table_ is not None:
        budget = sum(i.count * i.unit_cost for i in t.cost)
        others = sum(piecewise_floor(other.points, x.magnitude) for x in deltas(route, t)
                     if x.material and x.field != d.field
                     and (other := policy.floors.table(t.ref_class, x.field)) is not None)
        m = _shrunk(table_.points, budget - others, d.magnitude)
        if 0 < m < d.magnitude:
            new = float(d.source) + (m if rise else -m)
            out.append((f"restate `{t.target}`.{d.field} {number(float(d.target))} -> {number(new)}: "
                        f"the claim of `{t.name}` shrinks to what its budget pays",
                        _restate(route, t.target, d.field, new)))
    return out


# ---------------------------------------------------------------------- grounding powers
def _lowest_tier(policy: Policy) -> int:
    """The lowest tier the policy admits and weighs (a written excerpt claims no more)."""
    tiers = sorted(int(t) for t in policy.evidence.tier_weight if int(t) >= policy.evidence.min_tier)
    return tiers[0] if tiers else policy.evidence.min_tier


def _fresh(route: Route, stem: str) -> str:
    taken = {e.name for e in route.evidence} | {t.name for t in route.transitions} | {s.name for s in route.states}
    name = stem
    while name in taken:
        name += "_"
    return name


def _excerpt(route: Route, t: Transition, name: str, source: str, tier: int, text: str) -> Evidence:
    """An excerpt the co-author adds, supporting ``t`` only, priced as `gate --suggest`
    prices the evidence it adds: weight 0, so it moves no p, only what it quotes."""
    return Evidence(name, source, route.as_of, tier, 0.0, (t.name,), (), text, False, t.span)


def write_excerpts(route: Route, names: Sequence[str], policy: Policy) -> Route:
    """Each named transition gets an excerpt of its own asset, in evidence the co-author
    writes (what the paper's co-author did: it authored the quotation)."""
    added: list[Evidence] = []
    for t in route.transitions:
        if t.name in names and t.asset:
            name = _fresh(attrs.evolve(route, evidence=(*route.evidence, *added)), f"coauthor_{t.name}")
            added.append(_excerpt(route, t, name, f"co-author's excerpt for {t.name}", _lowest_tier(policy), t.asset))
    return attrs.evolve(route, evidence=(*route.evidence, *added))


def reuse_excerpts(route: Route, names: Sequence[str], policy: Policy) -> Route | None:
    """Each named transition's asset becomes a quotation of text the packet shows: the
    excerpt of admissible evidence that supports it, or else the packet's first
    admissible excerpt, quoted again in evidence supporting it. None: the packet has
    no admissible excerpt."""
    packet = [e for e in admitted(route.evidence, route.as_of, policy) if e.excerpt.strip()]
    if not packet:
        return None
    transitions: list[Transition] = []
    added: list[Evidence] = []
    for t in route.transitions:
        if t.name not in names:
            transitions.append(t)
            continue
        own = next((e for e in packet if t.name in e.supports), None)
        quoted = own if own is not None else packet[0]
        if own is None:
            name = _fresh(attrs.evolve(route, evidence=(*route.evidence, *added)), f"quote_{t.name}")
            added.append(_excerpt(route, t, name, f"quoted from `{quoted.name}`", quoted.tier, quoted.excerpt))
        transitions.append(attrs.evolve(t, asset=quoted.excerpt))
    return attrs.evolve(route, transitions=tuple(transitions), evidence=(*route.evidence, *added))


# ---------------------------------------------------------------------- the search
class _Search:
    def __init__(self, honest: Compiled, session: Session, arm: str, condition: Condition, settings: Settings):
        self.honest_compiled = honest
        self.runner = Runner(honest, session)
        self.arm = arm
        self.condition = condition
        self.settings = settings
        features = None if settings.features is None else session.policies.load_ref(settings.features).policy
        full = with_features(honest.policy.policy, features)
        self.policy = condition_policy(full if condition != SHIPPED else honest.policy.policy, condition)
        self.priors = {name: prior.p for name, prior in honest.policy.policy.priors.items()}
        self.honest_chain = chain(honest)
        # the gold chain: the registry's states, whether or not the condition requires them
        gold = full.registry.get(honest.route.name)
        self.gold_chain = tuple(g.name for g in gold.states) if gold is not None else ()
        self.evaluations = self.invalid = 0

    def evaluate(self, text: str, steps: tuple[str, ...], kinds: tuple[str, ...]) -> Revision | None:
        compiled, errors = self.runner.compile_text(text)
        if compiled is None or errors:
            self.invalid += 1
            return None
        route = compiled.route
        numbers: RouteNumbers
        if self.condition == SHIPPED:
            numbers = compiled.numbers
            coverage = gate_and_dock(compiled, "search")[2]
        else:  # the score and discharge passes under the condition's policy
            scored = score_checked(route, self.policy, Diagnostics())
            if scored is None:  # an overflow, or a gate rule that fails, under that policy
                self.invalid += 1
                return None
            numbers = scored[0]
            coverage = discharge_route(route, self.policy)
        uncovered = [f"{u.transition}.{u.delta.field}" for u in coverage.uncovered]
        # what GATE refuses besides an uncovered change: a claim its class does not admit, a registry departure
        uncovered += [f"{a.transition}.admitted({a.ref_class})" for a in coverage.admission]
        if coverage.registry_mode == "required":
            uncovered += [f"registry.{f.state or f.kind}" for f in coverage.registry]
        if self.condition.grounding:
            uncovered += [f"{n}.grounded(asset)" for n in ungrounded(route, self.honest_compiled.route, self.policy)]
        honest_eligible = self.honest_compiled.numbers.eligible
        usable = not uncovered and (numbers.eligible or not honest_eligible)
        kept = set(chain(compiled))
        return Revision(
            text=text,
            route=route,
            compiled=compiled,
            coverage=coverage,
            steps=steps,
            kinds=kinds,
            ungated=numbers.score,
            released=numbers.score if usable else None,
            uncovered=tuple(uncovered),
            skips=tuple(s for s in self.honest_chain if s not in kept),
            gold_skips=tuple(s for s in self.gold_chain if s not in kept),
            uplift=sum(max(0.0, t.cost.c - t.cost.budget) for t in numbers.transitions),
            floor_delta_bound=any(t.cost.bound_by == "floor_delta" for t in numbers.transitions),
        )

    def proposals(self, parent: Revision, rng: random.Random) -> Iterator[tuple[str, str, Route]]:
        """(description, kind, edited route) for the parent's next edits, made lazily
        (the caller stops at ``branch`` new revisions)."""
        if self.arm == "gate" and parent.released is None:
            yield from self.repairs(parent)
            return
        edits = enumerate_edits(parent.route, self.priors, "category", shrink=True)
        rng.shuffle(edits)
        for e in edits:
            try:
                edited = apply_edit(parent.route, e)
            except NotApplicable:
                continue
            move = (describe(parent.route, e, self.priors), e.kind, edited)
            # the co-author quotes the new claims an edit makes as it makes them (a
            # packet quotation where the packet has one), in the same revision
            variants = self.grounded(move) if self.condition.coauthor else []
            yield next((v for v in variants if v[1].endswith("reuse-excerpt")), variants[0]) if variants else move

    def repairs(self, parent: Revision) -> list[tuple[str, str, Route]]:
        c = parent.compiled
        uncovered = parent.coverage.uncovered
        options = {(u.transition, u.delta.field): ways(c, u) for u in uncovered}
        out: list[tuple[str, str, Route]] = []
        seen: set[tuple[Repair, ...]] = set()
        for u in uncovered:
            key = (u.transition, u.delta.field)
            for way in options[key]:
                union = set(way)
                for other, ws in options.items():
                    if other != key and ws and not any(set(w) <= union for w in ws):
                        union |= set(ws[0])
                chosen = tuple(sorted(union))
                if chosen in seen or not chosen:
                    continue
                seen.add(chosen)
                out.append(("; ".join(e.describe(parent.route) for e in chosen), "repair",
                            apply_edits(parent.route, chosen)))
        if self.condition.coauthor:
            for u in uncovered:
                for description, restated in restatements(parent.route, self.policy, u):
                    rest = [w[0] for k, w in options.items() if k != (u.transition, u.delta.field) and w]
                    edits = tuple(sorted({e for w in rest for e in w}))
                    if edits:
                        description += "; " + "; ".join(e.describe(restated) for e in edits)
                        restated = apply_edits(restated, edits)
                    out.append((description, "restate", restated))
            out = [*self.groundings(parent, options), *(g for r in out for g in (r, *self.grounded(r)))]
        return out

    def _ungrounded(self, route: Route, obligations: Sequence[str] = ()) -> list[str]:
        """The transitions a grounding rule refuses: the condition's, and the obligations'
        `require grounded(asset)` lines that failed."""
        names = list(obligations)
        if self.condition.grounding:
            names += [n for n in ungrounded(route, self.honest_compiled.route, self.policy) if n not in names]
        return names

    def _grounding_variants(self, route: Route, names: Sequence[str]) -> list[tuple[str, str, Route]]:
        if not names:
            return []
        listed = ", ".join(f"`{n}`" for n in names)
        out = [(f"write an excerpt quoting the asset of {listed}", "write-excerpt",
                write_excerpts(route, names, self.policy))]
        reused = reuse_excerpts(route, names, self.policy)
        if reused is not None:
            out.append((f"make the asset of {listed} a quotation of the packet's evidence", "reuse-excerpt", reused))
        return out

    def groundings(self, parent: Revision, options: Mapping[tuple[str, str], list[tuple[Repair, ...]]]
                   ) -> list[tuple[str, str, Route]]:
        """The co-author's grounding repairs of a refused revision: each ungrounded claim
        quoted (by a written or a reused excerpt), with the first repair of every
        uncovered change."""
        failing = [u.transition for u in parent.coverage.uncovered
                   if any("grounded(asset)" in f.require for a in u.tried for f in a.failed)]
        names = self._ungrounded(parent.route, list(dict.fromkeys(failing)))
        edits = tuple(sorted({e for ws in options.values() if ws for e in ws[0]}))
        base = apply_edits(parent.route, edits) if edits else parent.route
        prefix = "; ".join(e.describe(parent.route) for e in edits)
        return [(f"{prefix}; {d}" if prefix else d, kind, r) for d, kind, r in self._grounding_variants(base, names)]

    def grounded(self, repair: tuple[str, str, Route]) -> list[tuple[str, str, Route]]:
        """A repair whose new claims a grounding rule would refuse, with them quoted."""
        description, kind, route = repair
        return [(f"{description}; {d}", f"{kind}+{k}", r)
                for d, k, r in self._grounding_variants(route, self._ungrounded(route))]

    def run(self) -> RouteSearch:
        s = self.settings
        route = self.honest_compiled.route
        honest = self.evaluate(route_to_text(route), (), ())
        assert honest is not None, "the honest route compiled once already"
        self.evaluations = 0
        rng = random.Random(f"{s.seed}:{route.name}:{self.arm}:{self.condition.name}")
        seen = {honest.text}
        expanded: set[str] = set()
        edited: list[Revision] = []
        frontier = [honest]
        refusals = repaired = 0
        for _ in range(s.steps):
            children: list[Revision] = []
            for parent in frontier:
                if self.evaluations >= s.budget:
                    break
                refused = self.arm == "gate" and parent.released is None
                expanded.add(parent.text)
                made = 0
                mine: list[Revision] = []
                for description, kind, revised in self.proposals(parent, rng):
                    if made >= s.branch or self.evaluations >= s.budget:
                        break
                    text = route_to_text(revised)
                    if text in seen:
                        continue
                    seen.add(text)
                    made += 1
                    self.evaluations += 1
                    child = self.evaluate(text, (*parent.steps, description), (*parent.kinds, kind))
                    if child is not None:
                        mine.append(child)
                if refused:
                    refusals += 1
                    repaired += any(c.released is not None for c in mine)
                children += mine
            edited += children
            if not children:
                break
            frontier = self.select([*frontier, *children], expanded)
        best = max(edited, key=self.rank, default=None)
        return RouteSearch(route.name, route.file, self.arm, self.condition.name, honest,
                           best if best is not None and self.rank(best)[0] else None,
                           self.evaluations, refusals, repaired, self.invalid)

    def rank(self, r: Revision) -> tuple[bool, float, int, str]:
        """Higher is better: usable, objective, fewer edits, then the text (deterministic)."""
        value = r.ungated if self.arm == "none" else r.released
        return (value is not None, value if value is not None else -math.inf, -len(r.steps), r.text)

    def select(self, pool: list[Revision], expanded: set[str]) -> list[Revision]:
        beam = self.settings.beam
        unique = {r.text: r for r in pool}
        ranked = sorted(unique.values(), key=self.rank, reverse=True)
        if self.arm == "none":
            return ranked[:beam]
        released = [r for r in ranked if r.released is not None][:beam]
        top = released[0].released if released and released[0].released is not None else -math.inf
        refused = sorted((r for r in unique.values() if r.released is None and r.text not in expanded
                          and r.ungated > top), key=lambda r: (r.ungated, r.text), reverse=True)[:beam]
        return [*released, *refused]


def search_route(honest: Compiled, session: Session, arm: str, condition: Condition = SHIPPED,
                 settings: Settings = Settings()) -> RouteSearch:
    if arm not in ARMS:
        raise ValueError(f"unknown feedback arm {arm!r}")
    return _Search(honest, session, arm, condition, settings).run()


@attrs.frozen
class RouteResult:
    """One route's searches: per arm (EXP B) and per condition (EXP C)."""

    arms: tuple[RouteSearch, ...]
    conditions: tuple[RouteSearch, ...]
    gold: tuple[RouteSearch, ...] = ()  # the arms again under ``GOLD`` (with a features policy)


def search_all(honest: Compiled, session: Session, arms: Sequence[str], conditions: bool,
               settings: Settings) -> RouteResult:
    return RouteResult(
        tuple(search_route(honest, session, a, SHIPPED, settings) for a in arms),
        tuple(search_route(honest, session, "gate", c, settings) for c in CONDITIONS) if conditions else (),
        tuple(search_route(honest, session, a, GOLD, settings) for a in arms) if settings.features else (),
    )


# ---------------------------------------------------------------------- measures
Rates = dict[str, tuple[int, int]]


def arm_rates(results: Sequence[RouteSearch]) -> Rates:
    n = len(results)
    beating = [r for r in results if r.best is not None and r.best.ungated > r.honest.ungated]
    uncovered = sum(1 for r in beating if r.best is not None and r.best.uncovered)
    pairs = [(r.best.released, r.honest.released) for r in results if r.best is not None]
    released = [(b, h) for b, h in pairs if b is not None and h is not None]
    strict = sum(1 for b, h in released if b > h)
    loose = sum(1 for b, h in released if b >= h)
    return {
        "uncovered_baseline_beating": (uncovered, n),
        "delete_or_merge": (sum(1 for r in beating if r.best is not None and r.best.structural), len(beating)),
        "repair_rate": (sum(r.repaired for r in results), sum(r.refusals for r in results)),
        "covered_improvement_strict": (strict, n),
        "covered_improvement_nonstrict": (loose, n),
        "route_arounds": (sum(1 for r in results if r.best is not None and r.best.released is not None
                              and r.honest.released is not None and r.best.skips), n),
        "gold_route_arounds": (sum(1 for r in results if r.best is not None and r.best.released is not None
                                   and r.honest.released is not None and r.best.gold_skips), n),
    }


def _gain(r: RouteSearch) -> float:
    if r.best is None or r.best.released is None or r.honest.released is None:
        return 0.0
    return r.best.released - r.honest.released


def lower_median(xs: Sequence[float]) -> float | None:
    if not xs:
        return None
    return sorted(xs)[(len(xs) - 1) // 2]


@attrs.frozen
class ConditionRow:
    condition: Condition
    rates: dict[str, tuple[int, int]]
    median_gain: float | None  # ours: over every route, 0 where no edited revision is released
    median_uplift: float | None  # over applied revisions
    median_gain_evasions: float | None  # the paper's: among the surviving evasions
    median_uplift_b: float | None  # the paper's: applied revisions of a condition with delta floors


def condition_row(condition: Condition, results: Sequence[RouteSearch]) -> ConditionRow:
    n = len(results)
    released = [r for r in results if r.best is not None and r.best.released is not None]
    applied = [r for r in released if _gain(r) > 0]
    surviving = [r for r in released if r.best is not None and r.best.skips]
    uplifts = [r.best.uplift for r in applied if r.best is not None]
    return ConditionRow(
        condition,
        {
            "evasion": (sum(1 for r in applied if r.best is not None and r.best.skips), n),
            "beat_honest": (len(applied), n),
            "fundability_by_silence": (sum(
                1 for r in released if r.best is not None and r.best.skips
                and fundability_flip(r.honest.released, r.best.released)
            ), n),
            "floor_delta_binds": (sum(1 for r in applied if r.best is not None and r.best.floor_delta_bound),
                                  len(applied)),
            "surviving_evasions": (len(surviving), n),
            "evasions_beating_honest": (sum(1 for r in surviving if _gain(r) > 0), n),
            "honest_false_suspensions": (sum(1 for r in results if r.honest.released is None), n),
            "gold_route_arounds": (sum(1 for r in released if r.best is not None and r.best.gold_skips), n),
        },
        lower_median([_gain(r) for r in results]),
        lower_median(uplifts),
        lower_median([_gain(r) for r in surviving]),
        lower_median(uplifts) if condition.delta_floors else None,
    )


# ---------------------------------------------------------------------- output
def _revision_json(r: Revision | None, honest: Revision) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "edits": list(r.steps),
        "kinds": list(r.kinds),
        "ungated_score": r.ungated,
        "released_score": r.released,
        "gate": "released" if r.released is not None else "suspend-and-ask",
        "gain": r.ungated - honest.ungated,
        "uncovered": list(r.uncovered),
        "seam_skips": list(r.skips),
        "gold_skips": list(r.gold_skips),
        "floor_uplift": r.uplift,
        "floor_delta_bound": r.floor_delta_bound,
        "diff": _diff_json(honest, r),
    }


def _diff_json(honest: Revision, r: Revision) -> dict[str, Any]:
    """The typed difference from the honest route (`pcsc diff`), without its scores."""
    packet = diff_packet(diff_routes(honest.compiled, r.compiled))
    return {k: v for k, v in packet.items() if k not in ("honest", "revised", "score")}


def _search_json(s: RouteSearch) -> dict[str, Any]:
    return {
        "honest": {"ungated_score": s.honest.ungated, "released_score": s.honest.released},
        "revision": _revision_json(s.best, s.honest),
        "evaluations": s.evaluations,
        "refusals": s.refusals,
        "repaired": s.repaired,
        "invalid": s.invalid,
    }


def search_json(results: Sequence[RouteResult], arms: Sequence[str], settings: Settings) -> dict[str, Any]:
    routes = []
    for r in results:
        first = (r.arms or r.conditions)[0]
        entry: dict[str, Any] = {"route": first.route, "file": first.file,
                                 "arms": {s.arm: _search_json(s) for s in r.arms}}
        if r.conditions:
            entry["conditions"] = {s.condition: _search_json(s) for s in r.conditions}
        if r.gold:
            entry["arms_gold"] = {s.arm: _search_json(s) for s in r.gold}
        routes.append(entry)
    out: dict[str, Any] = {
        "settings": {**settings.json(), "feedback": list(arms)},
        "routes": routes,
        "arms": {a: {"rates": {k: rate(*v) for k, v in arm_rates([r.arms[i] for r in results]).items()}}
                 for i, a in enumerate(arms)},
    }
    if results and results[0].gold:
        out["arms_gold"] = {a: {"rates": {k: rate(*v) for k, v in arm_rates([r.gold[i] for r in results]).items()}}
                            for i, a in enumerate(arms)}
    if results and results[0].conditions:
        rows = [condition_row(c, [r.conditions[i] for r in results]) for i, c in enumerate(CONDITIONS)]
        out["conditions"] = [
            {"condition": row.condition.name, "delta_floors": row.condition.delta_floors,
             "grounding": row.condition.grounding, "admission": "admission" in row.condition.keeps,
             "registry": "registry" in row.condition.keeps,
             "rates": {k: rate(*v) for k, v in row.rates.items()},
             "median_gain": row.median_gain, "median_floor_uplift": row.median_uplift,
             "median_gain_surviving_evasions": row.median_gain_evasions,
             "median_floor_uplift_b": row.median_uplift_b,
             "paper": {k: {**rate(f.k, f.n), "unit": f.unit}
                       for k, f in PAPER_CONDITIONS.get(row.condition.name, {}).items() if f.k is not None}}
            for row in rows
        ]
    return out


def _money(x: float | None) -> str:
    return "—" if x is None else money(x)


ARM_LABELS = (
    ("uncovered_baseline_beating", "routes with an uncovered baseline-beating structure"),
    ("delete_or_merge", "improving revisions that delete or merge"),
    ("repair_rate", "repair rate after a refusal"),
    ("covered_improvement_strict", "covered improvement, strict (> honest)"),
    ("covered_improvement_nonstrict", "covered improvement, non-strict (≥ honest)"),
    ("route_arounds", "route-arounds (seam_skip, released)"),
    ("gold_route_arounds", "route-arounds of the gold chain (registry state skipped, released)"),
)
#: The co-author tables' columns: a rate's name in ``rates``, or a median's key (money).
OUR_COLUMNS = (
    ("evasion", "evasion"),
    ("beat-honest", "beat_honest"),
    ("median gain", "median_gain"),
    ("fundability-by-silence", "fundability_by_silence"),
    ("delta floor binds", "floor_delta_binds"),
    ("median floor uplift", "median_floor_uplift"),
    ("route-arounds, gold chain", "gold_route_arounds"),
)
PAPER_COLUMNS = (
    ("surviving evasions", "surviving_evasions"),
    ("beat-honest", "evasions_beating_honest"),
    ("median gain, evasions", "median_gain_surviving_evasions"),
    ("honest false suspensions", "honest_false_suspensions"),
    ("median floor uplift, b", "median_floor_uplift_b"),
)


def _cell(row: Mapping[str, Any], key: str) -> str:
    if key in row["rates"]:
        return rate_text(row["rates"][key]["k"], row["rates"][key]["n"])
    return _money(row[key])


def _paper_cell(row: Mapping[str, Any], key: str) -> str:
    figure = row.get("paper", {}).get(key)
    return "—" if figure is None else f"{rate_text(figure['k'], figure['n'])} {figure['unit']}"


def tables_text(doc: Mapping[str, Any]) -> str:
    """The search table (each arm) and, when run, the co-author tables, from the
    search's JSON (``search_json``): what the commands print, and what the docs show of
    a recorded run. Rows and arms are the document's, so a new condition is a new row."""
    settings = doc["settings"]
    arms = list(settings["feedback"])  # the order run (JSON objects print their keys sorted)
    budget, steps = plural(settings["budget"], "revision"), plural(settings["steps"], "step")
    lines = [f"search (EXP B without a model): seed {settings['seed']}, budget {budget} per route and arm, "
             f"beam {settings['beam']}, {steps}, branch {settings['branch']}"]
    groups = [("", doc["arms"])]
    if "arms_gold" in doc:
        groups.append((", v2a+b", doc["arms_gold"]))
        lines.append(f"(v2a+b: the arms again with the class admission and gold registry of {settings['features']})")
    rows: list[tuple[str, ...]] = [("  measure", *(f"feedback {a}{g}" for g, _ in groups for a in arms))]
    for key, label in ARM_LABELS:
        rows.append((label, *(rate_text(got[a]["rates"][key]["k"], got[a]["rates"][key]["n"])
                              for _, got in groups for a in arms)))
    lines += table(rows)
    conditions = doc.get("conditions", [])
    if conditions:
        lines += ["", "co-author conditions (EXP C without a model): feedback gate, the co-author's powers; "
                  "our definitions"]
        ours: list[tuple[str, ...]] = [("condition", *(label for label, _ in OUR_COLUMNS))]
        ours += [(row["condition"], *(_cell(row, key) for _, key in OUR_COLUMNS)) for row in conditions]
        lines += table(ours)
        lines += ["", "co-author conditions, the paper's definitions on the same revisions, and the paper's figure"]
        paper: list[tuple[str, ...]] = [("condition", *(label for label, _ in PAPER_COLUMNS), "paper: evasions")]
        paper += [(row["condition"], *(_cell(row, key) for _, key in PAPER_COLUMNS),
                   _paper_cell(row, "surviving_evasions")) for row in conditions]
        lines += table(paper)
    return "\n".join(lines)


def routes_text(results: Sequence[RouteResult]) -> str:
    rows: list[tuple[str, ...]] = [("route", "arm", "honest", "revision", "GATE", "gain", "skips", "edits")]
    for r in results:
        for s in (*r.arms, *r.gold, *r.conditions):
            b = s.best
            arm = s.arm if s.condition == SHIPPED.name else f"{s.arm}, v2a+b" if s.condition == GOLD.name \
                else s.condition
            if b is None:
                rows.append((s.route, arm, _money(s.honest.ungated), "—", "—", "—", "", "no revision compiled"))
                continue
            rows.append((s.route, arm, _money(s.honest.ungated), _money(b.ungated),
                         "released" if b.released is not None else "refused", _money(b.ungated - s.honest.ungated),
                         ",".join(b.skips), "+".join(b.kinds)))
    return "\n".join(table(rows, left=(0, 1, 4, 6, 7)))


def emit_revisions(results: Sequence[RouteResult], folder: Path) -> list[Path]:
    """Write each route's best revision per arm as ``<route>.<arm>.route``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for r in results:
        for s in r.arms:
            if s.best is None:
                continue
            path = folder / f"{s.route}.{s.arm}.route"
            header = [f"# Revision of {s.route} by pcsc redteam --search (feedback {s.arm}), "
                      f"{plural(len(s.best.steps), 'edit')}:"]
            header += [f"# {i}. {step}" for i, step in enumerate(s.best.steps, 1)]
            path.write_text("\n".join(header) + "\n" + s.best.text, encoding="utf-8")
            written.append(path)
    return written



# ---------------------------------------------------------------------- channels
def _parts(revision: Mapping[str, Any]) -> set[str]:
    return {part for kind in revision["kinds"] for part in kind.split("+")}


def channel_counts(doc: Mapping[str, Any], condition: str) -> dict[str, tuple[int, int]]:
    """Per condition, from the search's JSON: the applied revisions (released, above the
    honest route), those that skip a state (evasions), the evasions whose edits quote a
    claim by a reused packet quotation or by an excerpt the co-author wrote, the applied
    revisions with a re-class, with a restated state and with a cost item dropped or
    shrunk (the class floors price it), and the released revisions that
    skip a state of the gold registry (route-arounds of the gold chain)."""
    n = len(doc["routes"])
    applied, released = [], []
    for r in doc["routes"]:
        s = r["conditions"][condition]
        rev, honest = s["revision"], s["honest"]["released_score"]
        if rev is not None and rev["released_score"] is not None and honest is not None:
            released.append(rev)
            if rev["released_score"] > honest:
                applied.append(rev)
    evasions = [rev for rev in applied if rev["seam_skips"]]
    return {
        "evasion": (len(evasions), n),
        "reused_quotation": (sum("reuse-excerpt" in _parts(rev) for rev in evasions), len(evasions)),
        "written_excerpt": (sum("write-excerpt" in _parts(rev) for rev in evasions), len(evasions)),
        "reclass": (sum("re-class" in _parts(rev) for rev in applied), len(applied)),
        "restate": (sum("restate" in _parts(rev) for rev in applied), len(applied)),
        "cost_cut": (sum(bool({"drop-cost", "shrink-cost"} & _parts(rev)) for rev in applied), len(applied)),
        "gold_route_arounds": (sum(bool(rev.get("gold_skips")) for rev in released), n),
    }


def _open(k: int) -> str:
    return "open" if k else "closed"


def channels_table(doc: Mapping[str, Any]) -> str:
    """The co-author conditions as channels, a Markdown table from the search's JSON:
    what each condition closes and what stays open, beside the paper's figure. A
    channel is open under a condition when some applied revision uses it: deletion (an
    evasion: a skipped state of the honest chain), re-class, restatement, cost cut."""
    lines = ["| condition | grounding | delta floors | admission | registry | evasion (routes) | evasions quoting "
             "by a reused packet quotation | by a written excerpt | applied with a re-class | applied with a "
             "restatement | applied with a cost cut | route-arounds of the gold chain | deletion channel "
             "| re-class channel | restatement channel | cost channel | paper: evasions |",
             "|" + "---|" * 17]
    for row in doc["conditions"]:
        c = channel_counts(doc, row["condition"])
        paper = row.get("paper", {}).get("surviving_evasions")
        figure = "—" if paper is None else f"{paper['k']}/{paper['n']} {paper['unit']}"
        flags = " | ".join("yes" if row.get(k) else "no"
                           for k in ("grounding", "delta_floors", "admission", "registry"))
        lines.append(
            f"| `{row['condition']}` | {flags} "
            f"| {rate_text(*c['evasion'])} | {rate_text(*c['reused_quotation'])} | {rate_text(*c['written_excerpt'])} "
            f"| {rate_text(*c['reclass'])} | {rate_text(*c['restate'])} | {rate_text(*c['cost_cut'])} "
            f"| {rate_text(*c['gold_route_arounds'])} | {_open(c['evasion'][0])} | {_open(c['reclass'][0])} "
            f"| {_open(c['restate'][0])} | {_open(c['cost_cut'][0])} | {figure} |")
    return "\n".join(lines)
