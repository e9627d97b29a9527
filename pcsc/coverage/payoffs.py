"""Coverage of payoffs (docs/coverage.md): a payoff is credited under DOCK only when the
change into its state, and every change before it on the path, is covered, as the
vision's value is credited only when the whole route is."""

from __future__ import annotations

import attrs

from pcsc.coverage.discharge import Coverage
from pcsc.score.route import RouteNumbers


@attrs.frozen
class PayoffCredit:
    state: str
    transition: str  # the transition that reaches the state
    written: float
    credited: float  # as the score credits it (at most the policy's cap)
    bound_by: str  # "route" | "policy cap"
    covered: bool  # DOCK credits it
    reason: str | None  # why DOCK removes it; None when covered


def payoff_credits(numbers: RouteNumbers, coverage: Coverage | None) -> list[PayoffCredit]:
    """Each payoff of the route with what DOCK does with it (all covered without a check)."""
    uncovered = () if coverage is None else coverage.uncovered_transitions
    out = []
    before: list[str] = []  # the uncovered transitions up to here
    for t in numbers.transitions:
        if t.name in uncovered:
            before.append(t.name)
        if t.payoff is None:
            continue
        reason = None
        if t.name in before:
            reason = f"the change into `{t.target}` (`{t.name}`) is not covered"
        elif before:
            reason = "a change before it on the path is not covered: " + ", ".join(f"`{n}`" for n in before)
        out.append(PayoffCredit(t.payoff.state, t.name, t.payoff.written, t.payoff.credited, t.payoff.bound_by,
                                reason is None, reason))
    return out
