"""`pcsc cache info [--format text|json]`: where the IR cache lives, whether it is used,
what it holds and its bound (docs/cli.md, "The IR cache")."""

from __future__ import annotations

import argparse
from typing import Any

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.exits import UsageError
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.formats(p, "text", "json")


def size_text(n: int) -> str:
    """Bytes for a reader: `12.3 MB` (2^20 bytes), `4.0 KB`, `512 bytes`. The unit is the
    largest that leaves less than 1,000 of it, so `1002.7 KB` reads `1.0 MB`."""
    if n < 1000:
        return f"{n} bytes"
    for unit, scale in (("KB", 2**10), ("MB", 2**20)):
        if round(n / scale, 1) < 1000:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 2**30:,.1f} GB"


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.compiler.ircache import ENV_MAX_ENTRIES, ENV_MAX_MB, CacheSettingError, Limits, usage

    try:
        limits = Limits.from_environment()
    except CacheSettingError as exc:
        raise UsageError(str(exc)) from None
    u = usage(limits)
    payload: dict[str, Any] = {
        "folder": str(u.folder),
        "enabled": u.enabled,
        "disabled_by": u.why_off,
        "entries": u.entries,
        "bytes": u.bytes,
        "limits": {"entries": limits.entries, "bytes": limits.bytes},
        "other_files": u.other_files,
        "other_bytes": u.other_bytes,
    }
    lines = [f"IR cache: {u.folder}" + ("" if u.enabled else f"  (off: {u.why_off})")]
    lines.append(f"  entries  {u.entries:,} of at most {limits.entries:,} ({ENV_MAX_ENTRIES})")
    lines.append(f"  size     {size_text(u.bytes)} of at most {size_text(limits.bytes)} ({ENV_MAX_MB})")
    lines.append(f"  beside   {u.other_files:,} {'file' if u.other_files == 1 else 'files'}, "
                 f"{size_text(u.other_bytes)} (parser tables, proof records)")
    return Outcome("cache-info", payload, text="\n".join(lines))
