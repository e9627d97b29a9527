"""`pcsc ledger checkpoint --key PRIVATE.pem -o CHECKPOINT.json [--ledger PATH]`: verify
the ledger, then write its head, the time and the ledger's identity, signed with an
Ed25519 key (`pcsc ledger keygen` makes one; needs the `sign` extra). `pcsc ledger
verify --checkpoint FILE --public-key PUB.pem` checks it later."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import E712_NOT_VERIFIED, diag
from pcsc.diagnostics.model import Diagnostic, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    p.add_argument("--key", required=True, metavar="PRIVATE.pem", help="the Ed25519 private key that signs")
    p.add_argument("-o", "--output", dest="checkpoint", required=True, metavar="CHECKPOINT.json",
                   help="write the signed checkpoint here")
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic
    from pcsc.forecast.checkpoint import CheckpointError, make_checkpoint, write_checkpoint
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.stores import open_ledger

    path = ctx.ledger_path()

    def failed(problem: Diagnostic) -> Outcome:
        return Outcome("ledger-checkpoint", {"ledger": str(path), "ok": False, "error": problem.message},
                       diagnostics=[problem])

    try:
        with open_ledger(path, create=False) as ledger:
            result = ledger.verify()
            identity = ledger.identity()
    except LedgerError as exc:
        return failed(ledger_diagnostic(path, str(exc)))
    ctx.note_input(Path(path))
    if not result.ok:
        first = result.problems[0]
        at = Span.file_only(str(path))
        return failed(diag(E712_NOT_VERIFIED, at, nothing="no checkpoint written", problem=first))
    try:
        doc = make_checkpoint(result.head, identity, args.key)
        write_checkpoint(doc, args.checkpoint)
    except CheckpointError as exc:
        return failed(Diagnostic.of(codes.E717, str(exc), Span.file_only(str(args.key))))
    payload = {
        "ledger": str(path),
        "ok": True,
        "checkpoint": str(args.checkpoint),
        **{k: doc[k] for k in ("head", "created_at", "signature")},
    }
    text = (f"wrote {args.checkpoint}: head {result.head.token}, signed {doc['created_at']} "
            f"(key sha256 {doc['signature']['public_key_sha256'][:16]}…)\n")
    return Outcome("ledger-checkpoint", payload, text=text)
