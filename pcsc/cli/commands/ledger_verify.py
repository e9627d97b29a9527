"""`pcsc ledger verify [--ledger PATH]`: recompute every hash and link of both chains;
exit 0 when both are intact, else 1 with every problem a PCSC-E712 diagnostic (the
first bad row of each table first)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostic, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic
    from pcsc.forecast.ledger import Ledger, LedgerError
    from pcsc.forecast.views import verify_json, verify_text

    path = ctx.ledger_path()
    try:
        with Ledger.open(path, create=False) as ledger:
            result = ledger.verify()
    except LedgerError as exc:
        problem = ledger_diagnostic(path, str(exc))
        return Outcome("ledger-verify", {"ledger": str(path), "ok": False, "error": str(exc)}, diagnostics=[problem])
    ctx.note_input(Path(path))
    problems = [Diagnostic.of(codes.E712, str(p), Span.file_only(str(path))) for p in result.problems]
    return Outcome(
        "ledger-verify",
        {"ledger": str(path), **verify_json(result)},
        text=verify_text(path, result) if result.ok else None,
        diagnostics=problems,
    )
