"""`pcsc ledger show [--ledger PATH] [--route R]`: the frozen forecasts and the stored
outcomes, oldest first."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    p.add_argument("--route", help="only this route")
    options.formats(p, "text", "json")
    options.output(p, "the listing")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.stores import open_ledger
    from pcsc.forecast.views import entry_json, outcome_json, show_text

    path = ctx.ledger_path()
    route = args.route
    try:
        ledger = open_ledger(path, create=False)
    except LedgerError as exc:
        problem = ledger_diagnostic(path, str(exc))
        return Outcome("ledger-show", {"ledger": str(path), "ok": False, "error": str(exc)}, diagnostics=[problem])
    try:
        with ledger:
            entries, outcomes = ledger.entries(route), ledger.outcomes(route)
        payload = {
            "ledger": str(path),
            "ok": True,
            "route": route,
            "entries": [entry_json(e) for e in entries],
            "outcomes": [outcome_json(o) for o in outcomes],
        }
        text = show_text(Path(path), route, entries, outcomes)
    except (LedgerError, ValueError) as exc:  # a row edited behind the ledger's back
        cause = str(exc).removeprefix(f"{path}: ")
        message = f"cannot show the ledger: {cause}; `pcsc ledger verify` names the bad row"
        problem = ledger_diagnostic(path, message, codes.E714)
        return Outcome("ledger-show", {"ledger": str(path), "ok": False, "error": message}, diagnostics=[problem])
    ctx.note_input(Path(path))
    return Outcome("ledger-show", payload, text=text)
