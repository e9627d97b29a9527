"""The fold's unit (`[units]`): what the amounts a route writes are worth in it.

A route writes amounts in usd (cost items, `learning_cost`, a vision's `usd` fields).
Under a fold kept in usd they are read as written; under a fold kept in another unit
each is multiplied by `[units.rates] usd` as it is read, and a route that writes one
without that rate is refused (PCSC-E416), never read as if the units were the same.
"""

from __future__ import annotations

from pcsc.diagnostics.messages import E416_NO_RATE
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.ir import Route
from pcsc.policy.model import Policy


def usd_rate(policy: Policy) -> float:
    """What 1 usd is worth in the fold's unit: 1 under a usd fold. Only a route that
    passed `check_amount_units` is scored, so a missing rate is never read here."""
    rate = policy.units.rate("usd")
    return 1.0 if rate is None else rate


def in_fold(amount: float, rate: float) -> float:
    """``amount`` usd in the fold's unit; exactly ``amount`` at rate 1."""
    return amount if rate == 1.0 else amount * rate


def usd_amounts(route: Route, policy: Policy) -> list[tuple[str, Span]]:
    """Every amount ``route`` writes in usd that enters the fold, with where it is written."""
    out: list[tuple[str, Span]] = []
    kinds = policy.vision.fields
    for item in route.vision.items:
        if kinds.get(item.name) == "usd":
            out.append((f"vision `{item.name}`", item.value_span))
    for t in route.transitions:
        for c in t.cost:
            out.append((f"cost `{c.name}` of `{t.name}`", c.span))
        if t.learning_cost is not None:
            out.append((f"the learning cost of `{t.name}`", t.span))
    for s in route.states:
        if s.payoff_span is not None:
            out.append((f"the payoff of state `{s.name}`", s.payoff_span))
    return out


def check_amount_units(route: Route, policy: Policy, diags: Diagnostics) -> bool:
    """False, with one PCSC-E416 at the first such amount, when the route writes usd
    into a fold kept in another unit that the policy gives no usd rate for."""
    if policy.units.rate("usd") is not None:
        return True
    amounts = usd_amounts(route, policy)
    if not amounts:
        return True
    what, span = amounts[0]
    more = f"; {len(amounts) - 1} more amount(s) of this route are in usd" if len(amounts) > 1 else ""
    diags.diag(E416_NO_RATE, span, what=what, policy=route.policy, unit=policy.units.fold, more=more)
    return False


def unit_key(policy: Policy) -> dict[str, str]:
    """`{"unit": …}` for a JSON document whose amounts are in a fold kept in another unit
    than usd; empty under usd (so a usd document is what it always was)."""
    return {} if policy.units.fold == "usd" else {"unit": policy.units.fold}
