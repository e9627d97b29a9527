"""`pcsc ledger show [--ledger PATH] [--route R]`: the frozen forecasts and the stored
outcomes, oldest first. `--cert SEQ` writes instead the decision certificate stored
with forecast SEQ by `pcsc freeze --cert`, byte for byte as `pcsc compile --cert`
writes one, for `pcsc verify-cert`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import (
    E714_CANNOT_SHOW,
    E911_FROZEN_WITHOUT_CERT,
    E911_NO_SUCH_FORECAST,
    diag,
)
from pcsc.diagnostics.model import Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    p.add_argument("--route", help="only this route")
    options.formats(p, "text", "json")
    options.output(p, "the listing")
    p.add_argument("--cert", type=options.whole_number, metavar="SEQ",
                   help="write the decision certificate stored with forecast SEQ (`pcsc freeze --cert`) instead")


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
            plans = [] if route else ledger.plans()  # a plan is of a cohort, not of one route
        payload = {
            "ledger": str(path),
            "ok": True,
            "route": route,
            "entries": [entry_json(e) for e in entries],
            "outcomes": [outcome_json(o) for o in outcomes],
            "plans": [entry_json(e) for e in plans],
        }
        text = show_text(path, route, entries, outcomes, plans)
    except (LedgerError, ValueError) as exc:  # a row edited behind the ledger's back
        cause = str(exc).removeprefix(f"{path}: ")
        problem = diag(E714_CANNOT_SHOW, Span.file_only(str(path)), cause=cause)
        failure = {"ledger": str(path), "ok": False, "error": problem.message}
        return Outcome("ledger-show", failure, diagnostics=[problem])
    ctx.note_input(path)
    if args.cert is not None:
        return _certificate(path, payload, args.cert)
    return Outcome("ledger-show", payload, text=text)


def _certificate(path: str | Path, payload: dict[str, Any], seq: int) -> Outcome:
    """The certificate stored with forecast ``seq``, as its own bytes (`raw`)."""
    from pcsc.certify.emit import dumps
    from pcsc.diagnostics.model import Span

    entry = next((e for e in payload["entries"] if e["seq"] == seq), None)
    cert = entry["payload"].get("certificate") if entry is not None and isinstance(entry["payload"], dict) else None
    if cert is None:
        at = Span.file_only(str(path))
        if entry is None:
            problem = diag(E911_NO_SUCH_FORECAST, at, seq=seq, ledger=path)
        else:
            problem = diag(E911_FROZEN_WITHOUT_CERT, at, seq=seq, ledger=path)
        failure = {"ledger": str(path), "ok": False, "error": problem.message}
        return Outcome("ledger-show", failure, diagnostics=[problem])
    return Outcome("ledger-show", {**payload, "entries": [entry], "outcomes": []}, raw=dumps(cert))
