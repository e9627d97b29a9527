"""`pcsc cache clear [--format text|json]`: remove every file pcsc caches (IR entries,
parser tables, proof records); each is rebuilt when next needed. Only the names pcsc
writes, and only in a folder private to this user (else PCSC-E113, exit 1)."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.commands.cache_info import size_text
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import E113_CANNOT_CLEAR, diag
from pcsc.diagnostics.model import Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.compiler.ircache import cache_location, clear

    folder = cache_location().parent
    try:
        removed, freed = clear()
    except OSError as exc:
        problem = diag(E113_CANNOT_CLEAR, Span.file_only(str(folder)), reason=exc.strerror or exc)
        return Outcome("cache-clear", {"folder": str(folder), "removed": 0, "bytes": 0, "ok": False},
                       diagnostics=[problem])
    text = f"removed {removed:,} {'file' if removed == 1 else 'files'} ({size_text(freed)}) from {folder}"
    return Outcome("cache-clear", {"folder": str(folder), "removed": removed, "bytes": freed, "ok": True}, text=text)
