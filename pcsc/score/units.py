"""The fold's unit (`[units]`): what the amounts a route writes are worth in it.

A route writes amounts in usd (cost items, `learning_cost`, a vision's `usd` fields, a
state's `payoff 250k usd`); a payoff written without a unit (`payoff 300`) is in the
fold's own unit and is read at face value.
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
        if s.payoff_span is not None and s.payoff_in_fold is None:  # `payoff 300`: in the fold's unit already
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


def credit_payoff(written: float, in_fold_unit: bool, policy: Policy) -> tuple[float, str]:
    """What ``policy`` credits of a payoff written ``written`` (`[payoffs] max_usd`, 0 when the
    policy has no such table), in the fold's unit, and what bound it (`route` | `policy cap`).

    A payoff in usd is capped in usd, then converted: min(written, max_usd) × rate. A payoff
    written in the fold's unit (``in_fold_unit``, `payoff 300`) is at face value, capped at
    the cap converted the same way: min(written, max_usd × rate) (under a fold in usd, or
    one that gives no usd rate, the rate is 1). Every reader of a payoff (the fold, DOCK,
    the seams, the certificate, `explain`) reads this one number."""
    cap = policy.payoffs.max_usd if policy.payoffs is not None else 0.0
    rate = usd_rate(policy)
    if in_fold_unit and policy.units.fold != "usd":
        limit = in_fold(cap, rate)
        return min(written, limit), "route" if written <= limit else "policy cap"
    return in_fold(min(written, cap), rate), "route" if written <= cap else "policy cap"
