"""The diagnostic of a file the one reader (`pcsc.base.files`) did not read."""

from __future__ import annotations

from pcsc.base.files import FileTooLarge, NotText, Unreadable
from pcsc.diagnostics.messages import E105_CANNOT_READ, E105_NOT_UTF8, E112_TOO_LARGE, diag
from pcsc.diagnostics.model import Finding, Span


def unreadable(exc: Unreadable, shown: str) -> Finding:
    """PCSC-E112 for a file over the size limit; PCSC-E105 at the first byte of one that
    is not UTF-8, or with the reason it was refused (`No such file or directory`, `it is
    a folder, not a regular file: it is not read`)."""
    if isinstance(exc, FileTooLarge):
        return diag(E112_TOO_LARGE, Span.whole_file(shown), file=shown, size=exc.reason)
    if isinstance(exc, NotText):
        span = Span(shown, exc.line, exc.column, exc.line, exc.column + 1)
        return diag(E105_NOT_UTF8, span, file=shown, byte=exc.byte)
    return diag(E105_CANNOT_READ, Span.file_only(shown), file=shown, reason=exc.reason)
