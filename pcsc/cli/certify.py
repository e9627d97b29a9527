"""Writing a decision certificate for `pcsc compile --cert PATH` (`pcsc.certificate`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostic, Span

if TYPE_CHECKING:
    from pcsc.cli.context import Context
    from pcsc.overrides import Override
    from pcsc.pipeline import Compiled, Session


def write_certificate(
    ctx: Context, session: Session, compiled: Sequence[Compiled], overrides: Sequence[Override], target: str
) -> Diagnostic | None:
    """Write the certificate; a PCSC-E911 diagnostic when it cannot be."""
    from pcsc.certificate import CertificateError, build, dumps

    path = Path(target)
    try:
        cert = build(compiled, session.inputs, session.policies, path, [o.json() for o in overrides])
        path.write_text(dumps(cert), encoding="utf-8")
    except CertificateError as exc:
        return Diagnostic.of(codes.E911, f"certificate {target}: {exc}", Span.file_only(target))
    except OSError as exc:
        return Diagnostic.of(codes.E911, f"cannot write {target}: {exc.strerror or exc}", Span.file_only(target))
    return None
