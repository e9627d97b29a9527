"""`pcsc ledger head [--ledger PATH] [--format text|json] [-o PATH]`: verify the ledger,
then print its head, one token for both chains (``E.O:HASH``), to keep somewhere the
ledger's owner cannot edit and pass to `pcsc ledger verify --head` later. A ledger that
does not verify has no head to record (exit 1, PCSC-E712)."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import E712_NOT_VERIFIED, diag
from pcsc.diagnostics.model import Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    options.formats(p, "text", "json")
    options.output(p, "the head")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.views import head_text

    path = ctx.ledger_path()
    try:
        result = ctx.read_ledger(lambda ledger: ledger.verify())
    except LedgerError as exc:
        problem = ledger_diagnostic(path, str(exc))
        return Outcome("ledger-head", {"ledger": str(path), "ok": False, "error": str(exc)}, diagnostics=[problem])
    if not result.ok:
        problems = [diag(E712_NOT_VERIFIED, Span.file_only(str(path)), nothing="no head recorded", problem=p)
                    for p in result.problems]
        return Outcome("ledger-head", {"ledger": str(path), "ok": False, "error": problems[0].message},
                       diagnostics=problems)
    head = result.head
    return Outcome("ledger-head", {"ledger": str(path), "ok": True, **head.as_json()}, text=head_text(head))
