"""The cohort summary (DESIGN §10) and the paper's experiment A with GATE / DOCK.

Definitions (the paper's wording where it has one, ours where it does not):
- *admissible deletion*: a seam k ∈ [1, n−2] of a route.
- *identity match*: Δ_k by the formula equals Δ_k by re-folding, exactly.
- *sign match*: the corollary's sign test agrees with Δ_k (where its premises hold).
- *score-improving deletion*: Δ_k > 0 (identity arm: the honest p and c).
- *GATE refusal*: the spliced route, recompiled, is suspend-and-ask under GATE.
- *relative win-by-silence* (per mode): some splice's score under that mode beats the
  honest route's score under that mode (ungated: both ungated; DOCK: both as DOCK
  releases them). A refused (withheld) score never wins.
- *fundability-by-silence*: as above, where the honest score is ≤ 0 and the
  splice's is > 0.
- *with / without delta-indexed floors*: splices whose ungated pipeline score beats
  the honest route's, with the policy as it is and with `[floors.delta]` removed
  (both routes re-scored under the same variant).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from pcsc.diagnostics.model import Diagnostics
from pcsc.ir import Route
from pcsc.pipeline import Session
from pcsc.policy.model import Floors, Policy
from pcsc.score.route import score_route
from pcsc.seams.analysis import RouteSeams
from pcsc.seams.splice import splice


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
    routes_all_splices_refused: int
    honest_suspended: int


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
    )


@attrs.frozen
class ModeRow:
    mode: str
    relative_wins: int
    fundability: int


@attrs.frozen
class Experiment:
    summary: Summary
    modes: tuple[ModeRow, ...]
    beats_with_floors: int
    beats_without_floors: int
    splices: int


def experiment(results: Sequence[RouteSeams], session: Session) -> Experiment:
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
    return Experiment(summary, tuple(rows), with_floors, without_floors, total)


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
    honest = score_route(route, policy, diags).score
    spliced = score_route(splice(route, k), policy, diags).score
    return spliced > honest
