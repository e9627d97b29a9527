"""Writing a decision certificate for `pcsc compile --cert PATH` (`pcsc.certify.emit`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.diagnostics.messages import (
    E911_CANNOT_WRITE,
    E911_CERTIFICATE,
    diag,
)
from pcsc.diagnostics.model import Diagnostic, Span

if TYPE_CHECKING:
    from pcsc.cli.context import Context
    from pcsc.compiler.session import Compiled, Session
    from pcsc.forecast.ledger import ForecastRecord
    from pcsc.policy.overrides import Override


def write_certificate(
    ctx: Context, session: Session, compiled: Sequence[Compiled], overrides: Sequence[Override], target: str
) -> Diagnostic | None:
    """Write the certificate; a PCSC-E911 diagnostic when it cannot be."""
    from pcsc.certify.emit import CertificateError, build, dumps

    path = Path(target)
    try:
        cert = build(compiled, session.inputs, session.policies, path, [o.json() for o in overrides])
        path.write_text(dumps(cert), encoding="utf-8")
    except CertificateError as exc:
        return diag(E911_CERTIFICATE, Span.file_only(target), file=target, problem=exc)
    except OSError as exc:
        return diag(E911_CANNOT_WRITE, Span.file_only(target), file=target, reason=exc.strerror or exc)
    return None


def certify_records(
    records: Sequence[ForecastRecord], compiled: Sequence[Compiled], session: Session
) -> list[ForecastRecord]:
    """`pcsc freeze --cert`: each forecast record (of ``compiled``, in the same order)
    with the certificate of its route's file beside the packet, under `certificate`,
    its paths relative to the current folder. A certificate holds every route of the
    files it hashes (so no route of a file can be left out of one), so a file of
    several routes gives each of their entries the same certificate. Raises
    `CertificateError`."""
    import attrs

    from pcsc.certify.emit import build

    here = Path.cwd() / "certificate.json"
    by_file: dict[str, Any] = {}
    out = []
    for rec, c in zip(records, compiled, strict=True):
        if c.route.file not in by_file:
            own = [(shown, sha) for shown, sha in session.inputs if shown == c.route.file]
            siblings = [x for x in compiled if x.route.file == c.route.file]
            by_file[c.route.file] = build(siblings, own, session.policies, here)
        out.append(attrs.evolve(rec, payload={**rec.payload, "certificate": by_file[c.route.file]}))
    return out
