"""`pcsc ledger verify [--ledger PATH] [--head TOKEN | --checkpoint FILE --public-key PUB]`:
recompute every hash, link and outcome anchor of both chains, compare the guard
triggers' SQL and run SQLite's integrity check; with a recorded head (a token, or a
signed checkpoint whose signature is checked first), prove that nothing at or before
it was removed or rewritten. Exit 0 when all holds, else 1: a chain or schema problem
is PCSC-E712 (the first bad row of each table first), a lost head PCSC-E716, a
checkpoint or key that cannot be used PCSC-E717."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Finding, Span

if TYPE_CHECKING:
    from pcsc.forecast.checkpoint import Checkpoint
    from pcsc.forecast.ledger import HeadToken


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    recorded = p.add_mutually_exclusive_group()
    recorded.add_argument("--head", metavar="TOKEN",
                          help="a head recorded earlier by `pcsc ledger head` (E.O:HASH): prove nothing at or "
                          "before it was removed or rewritten")
    recorded.add_argument("--checkpoint", metavar="FILE",
                          help="a signed checkpoint (`pcsc ledger checkpoint`): check its signature, then its head")
    p.add_argument("--public-key", metavar="PUB.pem", help="with --checkpoint: the signer's public key")
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic
    from pcsc.forecast.checkpoint import CheckpointError
    from pcsc.forecast.ledger import HeadToken, LedgerError
    from pcsc.forecast.stores import open_ledger

    path = ctx.ledger_path()
    if args.checkpoint and not args.public_key:
        raise UsageError("--checkpoint needs --public-key PUB.pem (a checkpoint proves nothing unless its "
                         "signature is checked)")
    if args.public_key and not args.checkpoint:
        raise UsageError("--public-key applies only with --checkpoint FILE")
    head: HeadToken | None = None
    checkpoint: Checkpoint | None = None
    if args.head is not None:
        try:
            head = HeadToken.parse(args.head)
        except ValueError as exc:
            raise UsageError(f"--head: {exc}") from None
    if args.checkpoint:
        from pcsc.forecast.checkpoint import read_checkpoint

        try:
            checkpoint = read_checkpoint(args.checkpoint, args.public_key)
        except CheckpointError as exc:
            problem = Finding.of(codes.E717, str(exc), Span.file_only(str(args.checkpoint)))
            return Outcome("ledger-verify", {"ledger": str(path), "ok": False, "error": str(exc)},
                           diagnostics=[problem])
        ctx.note_input(Path(args.checkpoint), args.checkpoint)
        head = checkpoint.token
    try:
        with open_ledger(path, create=False) as ledger:
            result = ledger.verify(head)
    except LedgerError as exc:
        problem = ledger_diagnostic(path, str(exc))
        return Outcome("ledger-verify", {"ledger": str(path), "ok": False, "error": str(exc)}, diagnostics=[problem])
    from pcsc.forecast.views import verify_json, verify_text

    ctx.note_input(Path(path))
    problems = [Finding.of(codes.E716 if p.table == "head" else codes.E712, str(p), Span.file_only(str(path)))
                for p in result.problems]
    payload: dict[str, Any] = {"ledger": str(path), **verify_json(result)}
    text = verify_text(path, result) if result.ok else None
    if checkpoint is not None:
        payload["checkpoint"] = {
            "file": str(checkpoint.path),
            "signature": "verified",
            "public_key_sha256": checkpoint.public_key_sha256,
            "created_at": checkpoint.created_at,
            "head": str(checkpoint.token),
            "ledger": dict(checkpoint.ledger),
        }
        if text is not None:
            text += (f"  checkpoint {checkpoint.path}: signature verified (key sha256 "
                     f"{checkpoint.public_key_sha256[:16]}…), signed {checkpoint.created_at}\n")
    return Outcome("ledger-verify", payload, text=text, diagnostics=problems)
