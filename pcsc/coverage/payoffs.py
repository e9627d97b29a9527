"""Coverage of payoffs (docs/coverage.md): a payoff is credited under DOCK only when the
change into its state, and every change before it on the path, is covered, as the
vision's value is credited only when the whole route is."""

from __future__ import annotations

import attrs

from pcsc.coverage.discharge import Coverage
from pcsc.score.route import RouteNumbers, uncovered_before


@attrs.frozen
class PayoffCredit:
    state: str
    transition: str  # the transition that reaches the state
    written: float
    credited: float  # as the score credits it (at most the policy's cap)
    bound_by: str  # "route" | "policy cap"
    covered: bool  # DOCK credits it
    reason: str | None  # why DOCK removes it; None when covered
    unit: str = "usd"  # the unit ``written`` is in: usd, or the fold's own


def payoff_credits(numbers: RouteNumbers, coverage: Coverage | None) -> list[PayoffCredit]:
    """Each payoff of the route with what DOCK does with it (all covered without a check);
    a join's payoff once, credited only when every branch into it is covered."""
    uncovered = () if coverage is None else coverage.uncovered_transitions
    out = []
    paths = uncovered_before(numbers.transitions, uncovered)
    credited: set[str] = set()  # a join's payoff once, on the first transition into it
    for t, before in zip(numbers.transitions, paths, strict=True):
        if t.payoff is None or t.target in credited:
            continue
        credited.add(t.target)
        reason = None
        last = [u.name for u in numbers.transitions if u.target == t.target and u.name in before]
        if last:  # a join's: any branch's change into it
            reason = f"the change into `{t.target}` ({', '.join(f'`{n}`' for n in last)}) is not covered"
        elif before:
            reason = "a change before it on the path is not covered: " + ", ".join(f"`{n}`" for n in before)
        out.append(PayoffCredit(t.payoff.state, t.name, t.payoff.written, t.payoff.credited, t.payoff.bound_by,
                                reason is None, reason, t.payoff.unit))
    return out
