"""Exit codes from what a run found: input errors first, then GATE refusals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pcsc.cli.exits import EXIT_INPUT, EXIT_OK, EXIT_REFUSED

if TYPE_CHECKING:
    from pcsc.compiler.session import Compiled, Session


def exit_code(session: Session, compiled: Sequence[Compiled] = ()) -> int:
    """1 for input errors; else 3 when GATE refused any score; else 0."""
    if session.diags.has_errors:
        return EXIT_INPUT
    if any(c.decision.verdict == "suspend-and-ask" for c in compiled):
        return EXIT_REFUSED
    return EXIT_OK
