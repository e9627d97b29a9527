"""What the forecast commands (`resolve`, `evaluate`, `ledger …`, `policy fit|compare`,
`freeze`) share on the command line: the resolution date, the bootstrap options, and
their input errors (outcomes files, the ledger, frozen packets) as diagnostics."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.cli.outcome import UsageError
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import E711_NOTHING_WRITTEN, E718_NOT_VERIFIED, E719_NOTHING_WRITTEN, diag
from pcsc.diagnostics.model import Finding, Span

if TYPE_CHECKING:
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.outcomes import OutcomesError
    from pcsc.forecast.resolve import Findings, PacketError


def resolution_date(text: str | None) -> dt.date:
    """`--as-of`: an ISO date; by default today in UTC."""
    if text is None:
        return dt.datetime.now(dt.UTC).date()
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):  # fromisoformat also takes 20190101, 2019-W01-1
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--as-of: expected a date (YYYY-MM-DD, ASCII digits), got {text!r}") from None


def cutoff_date(text: str | None) -> dt.date | None:
    """`--cutoff`: an ISO date, or None when not given."""
    if text is None:
        return None
    try:
        return resolution_date(text)
    except UsageError:
        raise UsageError(f"--cutoff: expected a date (YYYY-MM-DD, ASCII digits), got {text!r}") from None


def bootstrap(args: Any) -> tuple[int, int]:
    """``--bootstrap B`` and ``--seed S``, defaulted and checked."""
    from pcsc.forecast import metrics

    B = metrics.DEFAULT_B if getattr(args, "bootstrap", None) is None else args.bootstrap
    seed = metrics.DEFAULT_SEED if getattr(args, "seed", None) is None else args.seed
    if B < 1:
        raise UsageError(f"--bootstrap must be at least 1, got {B}")
    if seed < 0:
        raise UsageError(f"--seed must not be negative, got {seed}")
    return B, seed


def ledger_diagnostic(path: Path, message: str, code: codes.Code = codes.E711) -> Finding:
    """A ledger problem, located at the ledger file (its name not repeated in front)."""
    shown = str(path)
    if message.startswith(shown + ": "):
        message = message[len(shown) + 2:]
    return Finding.of(code, message, Span.file_only(shown))


def append_diagnostics(path: Path, exc: LedgerError, nothing: str) -> list[Finding]:
    """Why an append (``nothing``: "nothing frozen", "nothing stored") wrote nothing: one
    PCSC-E718 per problem of a ledger that does not verify, PCSC-E719 for a write the
    database did not keep as written, else PCSC-E711."""
    from pcsc.forecast.ledger import LedgerUnverified, LedgerWriteLost

    if isinstance(exc, LedgerUnverified):
        return [diag(E718_NOT_VERIFIED, Span.file_only(str(path)), nothing=nothing, problem=p) for p in exc.problems]
    if isinstance(exc, LedgerWriteLost):
        problem = ledger_diagnostic(path, str(exc), codes.E719)
        return [diag(E719_NOTHING_WRITTEN, problem.span, nothing=nothing,
                     problem=problem.message.removeprefix("nothing written: "))]
    problem = ledger_diagnostic(path, str(exc))
    return [diag(E711_NOTHING_WRITTEN, problem.span, nothing=nothing, problem=problem.message)]


def outcomes_diagnostics(exc: OutcomesError) -> list[Finding]:
    """One PCSC-E701 per problem of an outcomes file."""
    return [Finding.of(codes.E701, m, Span.file_only(str(exc.path))) for m in exc.messages]


def packet_diagnostics(exc: PacketError) -> list[Finding]:
    """One PCSC-E721 per problem of a frozen packets file (or of the ledger's packets)."""
    return [Finding.of(codes.E721, m, Span.file_only(str(exc.path))) for m in exc.messages]


def findings_diagnostics(path: str, findings: Findings) -> list[Finding]:
    """The outcomes that do not fit the frozen routes (PCSC-E702) and the suspect or
    ignored ones (PCSC-W701), located at the outcomes file."""
    return [
        *(Finding.of(codes.E702, m, Span.file_only(path)) for m in findings.errors),
        *(Finding.of(codes.W701, m, Span.file_only(path)) for m in findings.warnings),
    ]


def messages(diagnostics: Sequence[Finding], severity: str) -> list[str]:
    """The `errors` or `warnings` lists of the JSON documents: `FILE: message`."""
    return [f"{d.span.file}: {d.message}" for d in diagnostics if d.severity == severity]
