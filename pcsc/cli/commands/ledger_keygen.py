"""`pcsc ledger keygen -o NAME`: a new Ed25519 key pair for signed checkpoints,
``NAME.pem`` (private, mode 0600, not encrypted: guard it) and ``NAME.pub.pem``
(public, for whoever verifies). Never replaces a file. Needs the `sign` extra."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Finding, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", dest="name", required=True, metavar="NAME",
                   help="write NAME.pem (private) and NAME.pub.pem (public)")
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.forecast.checkpoint import CheckpointError, generate_keys

    try:
        private, public = generate_keys(args.name)
    except CheckpointError as exc:
        problem = Finding.of(codes.E717, str(exc), Span.file_only(f"{args.name}.pem"))
        return Outcome("ledger-keygen", {"ok": False, "error": str(exc)}, diagnostics=[problem])
    payload = {"ok": True, "private_key": str(private), "public_key": str(public)}
    text = (f"wrote {private} (private: mode 0600, not encrypted; keep it secret) and {public} (public: give it "
            "to whoever verifies checkpoints)\n")
    return Outcome("ledger-keygen", payload, text=text)
