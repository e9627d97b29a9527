"""The cohort summary (docs/json.md) and the paper's experiment A with GATE / DOCK.

Definitions (the paper's wording where it has one, ours where it does not):
- *admissible deletion*: a seam k ∈ [1, n−2] of a route.
- *identity match*: Δ_k by the formula equals Δ_k by re-folding, exactly.
- *sign match*: the corollary's sign test agrees with Δ_k (where its premises hold).
- *score-improving deletion*: Δ_k > 0 (identity arm: the honest p and c).
- *GATE refusal*: the spliced route, recompiled, is suspend-and-ask under GATE. *Routes
  whose every splice is refused* are counted among the routes with at least one
  admissible deletion; a route with none has no splice to refuse and is reported apart.
- *relative win-by-silence* (per mode): some splice's score under that mode beats the
  honest route's score under that mode (ungated: both ungated; DOCK: both as DOCK
  releases them). A refused (withheld) score never wins.
- *fundability-by-silence*: as above, where the honest score is ≤ 0 and the
  splice's is > 0.
- *with / without delta-indexed floors*: splices whose ungated pipeline score beats
  the honest route's, with the policy as it is and with `[floors.delta]` removed
  (both routes re-scored under the same variant).

The paper's Phase 0 (its definitions; `docs/experiments.md` quotes them). Each arm is
counted on its own, over the routes with an admissible deletion: the paper never pools
the arms.
- *Phase 0 arms*: per route, two admissible deletions, each recompiled through the
  pipeline: the *max-cost* arm deletes the interior transition with the largest
  honest cost c_k (the first on a tie); the *random* arm deletes one drawn uniformly
  from the route's admissible deletions by a generator seeded with
  ``"{seed}:{route name}"`` (`--seed`, default `DEFAULT_SEED`): same seed, same bytes.
- *relative win-by-silence* (Phase 0): the arm's splice scores at least the honest
  route, ``splice ≥ honest``.
- *fundability flip* (Phase 0): the arm's splice has ``splice ≥ 0 > honest``.
- *under DOCK*: the same, with both scores as DOCK releases them.
- *drift reconciliation*: a *sign flip* is a Δ of the splice having another sign than
  the identity's Δ_k (the honest p and c). *With zero drift* the Δ is the exact re-fold
  of the spliced chain with the honest p and c (the identity is exact, so a flip there
  would be a bug); *with drift* it is the pipeline Δ (spliced − honest, both
  recompiled, the spliced route's p and c as the pipeline derives them). Ours besides:
  the pipeline's flips among the arm's splices whose p and c did not move, and among
  those where some p or c moved.

The exhaustive measures above (every splice of every route, strict ``>``) are ours
and are printed as extra rows, labelled so. Also ours:
- *the detection ladder*: the typed-state detector (GATE's coverage decision) and a
  structural proxy detector (`pcsc.analysis.seams.detectors`, edge structure alone), each run
  on every admissible splice and on the random arm's seeded splice of each route
  (*seam detections*, k of the splices) and on the honest routes (*honest flags*, k of
  the routes, and k of their transitions: the paper's unit is edges).
- *value sweep*: for each multiplier m, the routes with a score-improving deletion
  when the terminal value V is m·V, by the exact identity (R_{k+1} is affine in V:
  R_{k+1}(m·V) = R_{k+1}(V) + (m − 1)·V·Π_{i>k} p_i), nothing recompiled.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

import attrs

from pcsc.analysis.seams.analysis import RouteSeams, Seam
from pcsc.analysis.seams.detectors import Ladder, ladder
from pcsc.analysis.seams.folds import fold_seam_identities
from pcsc.analysis.seams.graphs import graph_seam_identities
from pcsc.analysis.seams.splice import splice
from pcsc.compiler.session import Session, score_checked
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.ir import Route
from pcsc.policy.model import Floors, Policy


@attrs.frozen
class Summary:
    routes: int
    deletions: int
    identity_holds: int
    symbolically_verified: int
    sign_checked: int
    sign_matches: int
    routes_with_rewarded_deletion: int
    rewarded_deletions: int
    spliced_refused: int  # splices GATE refuses
    routes_all_splices_refused: int  # of the routes with an admissible deletion
    honest_suspended: int
    routes_without_deletion: int  # no admissible deletion: no splice to refuse, reported apart


def summarise(results: Sequence[RouteSeams]) -> Summary:
    seams = [s for r in results for s in r.seams]
    arms = [s.pipeline for s in seams if s.pipeline is not None]
    signs = [s.identity.sign_matches for s in seams if s.identity.sign_matches is not None]
    return Summary(
        routes=len(results),
        deletions=len(seams),
        identity_holds=sum(s.identity.identity_holds for s in seams),
        symbolically_verified=sum(s.symbolically_verified for s in seams),
        sign_checked=len(signs),
        sign_matches=sum(signs),
        routes_with_rewarded_deletion=sum(any(s.identity.silence_rewarded for s in r.seams) for r in results),
        rewarded_deletions=sum(s.identity.silence_rewarded for s in seams),
        spliced_refused=sum(a.gate.verdict == "suspend-and-ask" for a in arms),
        routes_all_splices_refused=sum(
            bool(r.seams)
            and all(s.pipeline is not None and s.pipeline.gate.verdict == "suspend-and-ask" for s in r.seams)
            for r in results
        ),
        honest_suspended=sum(r.honest_gate.verdict == "suspend-and-ask" for r in results),
        routes_without_deletion=sum(not r.seams for r in results),
    )


@attrs.frozen
class ModeRow:
    mode: str
    relative_wins: int
    fundability: int


#: The Phase 0 random arm's seed when none is given.
DEFAULT_SEED = 20240601


@attrs.frozen
class Phase0Arm:
    """One Phase 0 deletion of one route, recompiled through the pipeline."""

    route: str
    arm: str  # "max-cost" or "random"
    k: int
    transition: str
    honest: float  # ungated
    spliced: float | None  # ungated; None when the splice did not compile
    honest_dock: float | None
    spliced_dock: float | None
    identity_delta: float  # Δ_k by the formula, the honest p and c
    refold_delta: float  # Δ_k by re-folding the spliced chain with the honest p and c (zero drift)
    pipeline_delta: float | None
    drift: bool

    @property
    def sign_flip(self) -> bool | None:
        """With drift: the pipeline Δ's sign is not the identity's (None: did not compile)."""
        if self.pipeline_delta is None:
            return None
        return _sign(self.identity_delta) != _sign(self.pipeline_delta)

    @property
    def zero_drift_flip(self) -> bool:
        """With zero drift: the exact re-fold's sign is not the identity's (a bug if ever true)."""
        return _sign(self.identity_delta) != _sign(self.refold_delta)


#: The Phase 0 arms, in the order they are reported.
PHASE0_ARMS = ("max-cost", "random")


@attrs.frozen
class Phase0Tally:
    """One arm's counts over the routes with an admissible deletion (one splice each)."""

    arm: str
    splices: int
    relative_wins: int  # ungated, splice >= honest
    fundability_flips: int  # ungated, splice >= 0 > honest
    relative_wins_dock: int
    fundability_flips_dock: int
    zero_drift_flips: int  # of `splices`: the exact re-fold against the identity
    compiled: int  # splices that compiled: the pipeline's flips are counted among them
    drift_flips: int  # of `compiled`: the pipeline Δ against the identity
    unmoved: int  # compiled splices whose p and c did not move (ours)
    unmoved_flips: int
    moved: int  # compiled splices where some p or c moved (ours)
    moved_flips: int


@attrs.frozen
class Phase0:
    seed: int
    arms: tuple[Phase0Arm, ...]
    routes: int  # routes with at least one admissible deletion
    tallies: tuple[Phase0Tally, ...]  # one per arm, in PHASE0_ARMS order


@attrs.frozen
class Experiment:
    summary: Summary
    modes: tuple[ModeRow, ...]
    beats_with_floors: int
    beats_without_floors: int
    splices: int
    phase0: Phase0
    ladder: Ladder
    value_sweep: tuple[SweepRow, ...]


@attrs.frozen
class SweepRow:
    """Score-improving deletions with the terminal value scaled by ``multiplier``."""

    multiplier: str  # as given, e.g. "1.5"
    routes: int
    routes_with_rewarded_deletion: int
    deletions: int
    rewarded_deletions: int


#: The value sweep's multipliers when none are given.
DEFAULT_SWEEP = ("1", "1.5", "2", "3")


@attrs.frozen
class PaperFigure:
    """A figure the paper reports for a measure: k of n in its unit. ``k`` is None where
    only the paper's unit and denominator are known to us, not its count."""

    k: int | None
    n: int
    unit: str


#: The paper's figures, by measure name. A Phase 0 figure is named without its arm
#: (``phase0_relative_wins``): the paper reports each arm on its own, and which arm a
#: figure belongs to is not in the material this project has.
PAPER: dict[str, PaperFigure] = {
    "identity_matches": PaperFigure(57, 57, "admissible deletions"),
    "sign_matches": PaperFigure(57, 57, "admissible deletions"),
    "routes_with_score_improving_deletion": PaperFigure(26, 26, "routes"),
    "routes_all_splices_refused": PaperFigure(26, 26, "routes"),
    "honest_suspended": PaperFigure(0, 26, "routes"),
    "phase0_relative_wins": PaperFigure(21, 26, "routes"),
    "phase0_relative_wins_dock": PaperFigure(18, 26, "routes"),
    "phase0_fundability_flips": PaperFigure(1, 26, "routes"),
    "phase0_fundability_flips_dock": PaperFigure(0, 26, "routes"),
    "phase0_sign_flips_zero_drift": PaperFigure(0, 26, "splices"),
    "phase0_sign_flips_with_drift": PaperFigure(16, 26, "splices"),
    "ladder_seeded_seam_detections": PaperFigure(None, 26, "seeded splices"),
    "ladder_honest_edge_flags": PaperFigure(None, 111, "gold edges"),
}
#: The paper's admissible deletions, on its 26 routes.
PAPER_DELETIONS = 57

#: Phase 0's measures, by the name each arm's rate carries after ``phase0_<arm>_``
#: (and the paper's figure after ``phase0_``).
PHASE0_MEASURES = (
    "relative_wins", "relative_wins_dock", "fundability_flips", "fundability_flips_dock",
    "sign_flips_zero_drift", "sign_flips_with_drift", "sign_flips_unmoved", "sign_flips_moved",
)


def phase0_rate_name(arm: str, measure: str) -> str:
    return f"phase0_{arm.replace('-', '_')}_{measure}"


def phase0_rates(t: Phase0Tally) -> dict[str, tuple[int, int]]:
    counts = {
        "relative_wins": (t.relative_wins, t.splices),
        "relative_wins_dock": (t.relative_wins_dock, t.splices),
        "fundability_flips": (t.fundability_flips, t.splices),
        "fundability_flips_dock": (t.fundability_flips_dock, t.splices),
        "sign_flips_zero_drift": (t.zero_drift_flips, t.splices),
        "sign_flips_with_drift": (t.drift_flips, t.compiled),
        "sign_flips_unmoved": (t.unmoved_flips, t.unmoved),
        "sign_flips_moved": (t.moved_flips, t.moved),
    }
    return {phase0_rate_name(t.arm, m): counts[m] for m in PHASE0_MEASURES}


def rates(e: Experiment) -> dict[str, tuple[int, int]]:
    """Every rate of the experiment, (k, n), by measure name (the JSON keys)."""
    s, n, lad = e.summary, e.summary.routes, e.ladder
    by_mode = {m.mode: m for m in e.modes}
    out = {
        "identity_matches": (s.identity_holds, s.deletions),
        "symbolically_verified": (s.symbolically_verified, s.deletions),
        "sign_matches": (s.sign_matches, s.sign_checked),
        "routes_with_score_improving_deletion": (s.routes_with_rewarded_deletion, n),
        "routes_all_splices_refused": summary_rates(s)["routes_all_splices_refused"],
        "honest_suspended": (s.honest_suspended, n),
    }
    for t in e.phase0.tallies:
        out |= phase0_rates(t)
    out |= {
        "all_splices_relative_wins": (by_mode["ungated"].relative_wins, n),
        "all_splices_relative_wins_dock": (by_mode["dock"].relative_wins, n),
        "all_splices_relative_wins_gate": (by_mode["gate"].relative_wins, n),
        "all_splices_fundability": (by_mode["ungated"].fundability, n),
        "all_splices_fundability_dock": (by_mode["dock"].fundability, n),
        "splices_beating_honest_without_delta_floors": (e.beats_without_floors, e.splices),
        "splices_beating_honest_with_delta_floors": (e.beats_with_floors, e.splices),
        "ladder_typed_seam_detections": (lad.typed_detections, lad.splices),
        "ladder_proxy_seam_detections": (lad.proxy_detections, lad.splices),
        "ladder_typed_seeded_seam_detections": (lad.typed_seeded_detections, lad.seeded),
        "ladder_proxy_seeded_seam_detections": (lad.proxy_seeded_detections, lad.seeded),
        "ladder_typed_honest_flags": (lad.typed_honest_flags, lad.honest),
        "ladder_proxy_honest_flags": (lad.proxy_honest_flags, lad.honest),
        "ladder_typed_honest_edge_flags": (lad.typed_edge_flags, lad.edges),
        "ladder_proxy_honest_edge_flags": (lad.proxy_edge_flags, lad.edges),
    }
    return out


def sweep_rates(row: SweepRow) -> dict[str, tuple[int, int]]:
    return {
        "routes_with_score_improving_deletion": (row.routes_with_rewarded_deletion, row.routes),
        "score_improving_deletions": (row.rewarded_deletions, row.deletions),
    }


def summary_rates(s: Summary) -> dict[str, tuple[int, int]]:
    """The rates of the cohort summary, (k, n), named after its integer counts."""
    return {
        "identity_holds": (s.identity_holds, s.deletions),
        "symbolically_verified": (s.symbolically_verified, s.deletions),
        "sign_matches": (s.sign_matches, s.sign_checked),
        "routes_with_rewarded_deletion": (s.routes_with_rewarded_deletion, s.routes),
        "rewarded_deletions": (s.rewarded_deletions, s.deletions),
        "spliced_refused": (s.spliced_refused, s.deletions),
        "routes_all_splices_refused": (s.routes_all_splices_refused, s.routes - s.routes_without_deletion),
        "honest_suspended": (s.honest_suspended, s.routes),
    }


def experiment(results: Sequence[RouteSeams], session: Session, seed: int = DEFAULT_SEED,
               multipliers: Sequence[str] = DEFAULT_SWEEP) -> Experiment:
    summary = summarise(results)
    rows = []
    for mode in ("ungated", "gate", "dock"):
        wins = fundable = 0
        for r in results:
            honest = _released(r, mode, None)
            spliced = [_released(r, mode, s.k) for s in r.seams]
            better = [x for x in spliced if x is not None and (honest is None or x > honest)]
            wins += bool(better)
            fundable += bool(honest is not None and honest <= 0 and any(x > 0 for x in better))
        rows.append(ModeRow(mode, wins, fundable))
    with_floors = without_floors = total = 0
    for r in results:
        policy = r.compiled.policy.policy
        bare = attrs.evolve(policy, floors=Floors())
        for s in r.seams:
            total += 1
            with_floors += _beats(r.compiled.route, s.k, policy)
            without_floors += _beats(r.compiled.route, s.k, bare)
    p0 = phase0(results, seed)
    seeded = {a.route: a.k for a in p0.arms if a.arm == "random"}
    return Experiment(summary, tuple(rows), with_floors, without_floors, total, p0,
                      ladder(results, seeded), tuple(value_sweep(results, m) for m in multipliers))


def value_sweep(results: Sequence[RouteSeams], multiplier: str) -> SweepRow:
    """The routes (and deletions) with Δ_k > 0 when V becomes m·V, exactly."""
    m = Fraction(multiplier)
    routes = rewarded_routes = deletions = rewarded = 0
    for r in results:
        routes += 1
        deltas = scaled_deltas(r, m)
        deletions += len(deltas)
        rewarded += sum(d > 0 for d in deltas)
        rewarded_routes += any(d > 0 for d in deltas)
    return SweepRow(multiplier, routes, rewarded_routes, deletions, rewarded)


def scaled_deltas(r: RouteSeams, m: Fraction) -> list[Fraction]:
    """Δ_k of every seam of the route with the terminal value m·V (exact rationals).
    The paper's fold: Δ_k = reach·[c_k + (1 − p_k)·R_{k+1}(m·V)] with R_{k+1} affine in V.
    A policy's own fold: its exact identity (pcsc/analysis/seams/folds.py) at m·V."""
    n = r.compiled.numbers
    ts = n.transitions
    V = Fraction(n.value)
    shape = r.compiled.route.shape
    if shape is not None:  # a graph route: its own identity (pcsc/analysis/seams/graphs.py) at m·V
        scaled = graph_seam_identities(
            shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts], [t.p for t in ts],
            [t.cost.c for t in ts], [t.d for t in ts], V * m, [s.k for s in r.seams],  # type: ignore[arg-type]
            n.fold.abandonment,
        )
        return [i.delta_formula for i in scaled]
    if not n.fold.is_default:
        ks = [s.k for s in r.seams]
        scaled = fold_seam_identities([t.p for t in ts], [t.cost.c for t in ts], [t.d for t in ts],
                                      V * m, ks, n.fold.abandonment)  # type: ignore[arg-type]  # exact: Fraction(x) of a Fraction
        return [i.delta_formula for i in scaled]
    out = []
    for s in r.seams:
        i, k = s.identity, s.k
        tail = Fraction(1)
        for t in ts[k + 1:]:
            tail *= Fraction(t.p)
        R_next = i.R_next + (m - 1) * V * tail
        out.append(i.reach * (Fraction(ts[k].cost.c) + (1 - Fraction(ts[k].p)) * R_next))
    return out


def phase0_arms(r: RouteSeams, seed: int = DEFAULT_SEED) -> tuple[Phase0Arm, ...]:
    """The route's max-cost and random arms (none when it has no admissible deletion)."""
    if not r.seams:
        return ()
    costs = {t.name: t.cost.c for t in r.compiled.numbers.transitions}
    by_cost = max(r.seams, key=lambda s: (costs[s.transition], -s.k))
    drawn = random.Random(f"{seed}:{r.compiled.route.name}").choice(r.seams)
    return (_arm(r, "max-cost", by_cost), _arm(r, "random", drawn))


def _arm(r: RouteSeams, name: str, s: Seam) -> Phase0Arm:
    a = s.pipeline
    return Phase0Arm(
        route=r.compiled.route.name,
        arm=name,
        k=s.k,
        transition=s.transition,
        honest=r.compiled.numbers.score,
        spliced=None if a is None else a.ungated_score,
        honest_dock=r.honest_dock.score,
        spliced_dock=None if a is None else a.dock.score,
        identity_delta=float(s.identity.delta_formula),
        refold_delta=float(s.identity.delta_refold),
        pipeline_delta=None if a is None else a.delta,
        drift=a is not None and bool(a.drift),
    )


def relative_win(honest: float | None, spliced: float | None) -> bool:
    """The paper's relative win-by-silence: ``splice ≥ honest`` (a withheld splice never wins)."""
    return spliced is not None and (honest is None or spliced >= honest)


def fundability_flip(honest: float | None, spliced: float | None) -> bool:
    """The paper's fundability flip: ``splice ≥ 0 > honest``."""
    return spliced is not None and honest is not None and spliced >= 0 > honest


def phase0(results: Sequence[RouteSeams], seed: int = DEFAULT_SEED) -> Phase0:
    arms = [a for r in results for a in phase0_arms(r, seed)]
    return Phase0(seed, tuple(arms), len({a.route for a in arms}),
                  tuple(tally(name, [a for a in arms if a.arm == name]) for name in PHASE0_ARMS))


def tally(name: str, arms: Sequence[Phase0Arm]) -> Phase0Tally:
    """One arm's counts: every measure over that arm's splices alone."""
    compiled = [a for a in arms if a.sign_flip is not None]
    unmoved = [a for a in compiled if not a.drift]
    moved = [a for a in compiled if a.drift]
    return Phase0Tally(
        arm=name,
        splices=len(arms),
        relative_wins=sum(relative_win(a.honest, a.spliced) for a in arms),
        fundability_flips=sum(fundability_flip(a.honest, a.spliced) for a in arms),
        relative_wins_dock=sum(relative_win(a.honest_dock, a.spliced_dock) for a in arms),
        fundability_flips_dock=sum(fundability_flip(a.honest_dock, a.spliced_dock) for a in arms),
        zero_drift_flips=sum(a.zero_drift_flip for a in arms),
        compiled=len(compiled),
        drift_flips=sum(bool(a.sign_flip) for a in compiled),
        unmoved=len(unmoved),
        unmoved_flips=sum(bool(a.sign_flip) for a in unmoved),
        moved=len(moved),
        moved_flips=sum(bool(a.sign_flip) for a in moved),
    )


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _released(r: RouteSeams, mode: str, k: int | None) -> float | None:
    """The score a mode releases for the honest route (k None) or a splice."""
    if k is None:
        if mode == "ungated":
            return r.compiled.numbers.score
        return (r.honest_gate if mode == "gate" else r.honest_dock).score
    arm = next(s.pipeline for s in r.seams if s.k == k)
    if arm is None:
        return None
    if mode == "ungated":
        return arm.ungated_score
    return (arm.gate if mode == "gate" else arm.dock).score


def _beats(route: Route, k: int, policy: Policy) -> bool:
    """Splice k's ungated score beats the honest route's under ``policy`` (the splice is
    scored from the IR: the same numbers the text round trip gives)."""
    diags = Diagnostics()
    honest = score_checked(route, policy, diags)
    spliced = score_checked(splice(route, k), policy, diags)
    return honest is not None and spliced is not None and spliced[0].score > honest[0].score  # else PCSC-E311
