"""Exit codes from what a run found: input errors first, then GATE refusals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pcsc.cli.exits import EXIT_INPUT, EXIT_OK, EXIT_REFUSED

if TYPE_CHECKING:
    from pcsc.compiler.session import Compiled, Session


def exit_code(session: Session, compiled: Sequence[Compiled] = ()) -> int:
    """1 for input errors; else 3 when GATE refused any score or a route named a policy
    the run does not require (PCSC-E414: a refusal, not a fault of the input); else 0."""
    from pcsc.diagnostics.codes import E414

    errors = {d.code for d in session.diags.items if d.severity == "error"}
    if errors - {E414.code}:
        return EXIT_INPUT
    if errors or any(c.decision.verdict == "suspend-and-ask" for c in compiled):
        return EXIT_REFUSED
    return EXIT_OK
