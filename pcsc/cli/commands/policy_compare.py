"""`pcsc policy compare OLD NEW`: re-score the ledger's held-out resolved routes under
both policies (Brier, AUC) and say which one to keep."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.commands.policy_fit import failed, history
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostic, Span

DEFAULT_HOLDOUT = 0.3


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="id@version, or a path to a .toml file")
    p.add_argument("new", metavar="NEW", help="id@version, or a path to a .toml file")
    p.add_argument("--holdout", type=float, help="the share of routes held out (default: the share NEW's `[fit]` "
                   f"section records, as `policy fit` wrote it; else {DEFAULT_HOLDOUT})")
    options.ledger(p)
    options.as_of(p)
    options.search_paths(p, libraries=False)
    options.formats(p, "text", "json")
    options.output(p, "the comparison")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    import attrs

    from pcsc.cli.failures import policy_diagnostics
    from pcsc.cli.forecasting import ledger_diagnostic, resolution_date
    from pcsc.forecast.learn import compare
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.views import compare_text
    from pcsc.policy.load import PolicyError

    when = resolution_date(args.as_of)
    try:
        old, new = ctx.policy(args.old), ctx.policy(args.new)
        found = history(ctx, when)
    except PolicyError as exc:
        return failed("policy-compare", policy_diagnostics(exc))
    except LedgerError as exc:
        return failed("policy-compare", [ledger_diagnostic(ctx.ledger_path(), str(exc))])
    holdout = args.holdout
    if holdout is None:
        recorded = new.policy.fit
        holdout = DEFAULT_HOLDOUT if recorded is None else recorded.holdout
    try:
        result = compare(old.policy, new.policy, found.packets, found.milestones, found.labels, holdout)
    except KeyError as exc:
        message = f"reference class {exc} of a frozen forecast is in neither policy"
        return failed("policy-compare", [Diagnostic.of(codes.E744, message, Span.file_only(str(ctx.ledger_path())))])
    return Outcome(
        "policy-compare",
        {"old": old.ref, "new": new.ref, "holdout": holdout, **attrs.asdict(result)},
        text=compare_text(old.ref, new.ref, result),
    )
