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
from pcsc.diagnostics import codes


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
        payload = {
            "ledger": str(path),
            "ok": True,
            "route": route,
            "entries": [entry_json(e) for e in entries],
            "outcomes": [outcome_json(o) for o in outcomes],
        }
        text = show_text(path, route, entries, outcomes)
    except (LedgerError, ValueError) as exc:  # a row edited behind the ledger's back
        cause = str(exc).removeprefix(f"{path}: ")
        message = f"cannot show the ledger: {cause}; `pcsc ledger verify` names the bad row"
        problem = ledger_diagnostic(path, message, codes.E714)
        return Outcome("ledger-show", {"ledger": str(path), "ok": False, "error": message}, diagnostics=[problem])
    ctx.note_input(path)
    if args.cert is not None:
        return _certificate(path, payload, args.cert)
    return Outcome("ledger-show", payload, text=text)


def _certificate(path: str | Path, payload: dict[str, Any], seq: int) -> Outcome:
    """The certificate stored with forecast ``seq``, as its own bytes (`raw`)."""
    from pcsc.certify.emit import dumps
    from pcsc.diagnostics.model import Finding, Span

    entry = next((e for e in payload["entries"] if e["seq"] == seq), None)
    cert = entry["payload"].get("certificate") if entry is not None and isinstance(entry["payload"], dict) else None
    if cert is None:
        why = "no such forecast" if entry is None else "it was frozen without --cert"
        message = f"forecast {seq} of {path} holds no certificate: {why}"
        failure = {"ledger": str(path), "ok": False, "error": message}
        problem = Finding.of(codes.E911, message, Span.file_only(str(path)))
        return Outcome("ledger-show", failure, diagnostics=[problem])
    return Outcome("ledger-show", {**payload, "entries": [entry], "outcomes": []}, raw=dumps(cert))
