"""A command's exit code from its session and compiled routes (the rule is
`pcsc.diagnostics.exits.exit_code`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pcsc.diagnostics.exits import exit_code as _exit_code

if TYPE_CHECKING:
    from pcsc.compiler.session import Compiled, Session


def exit_code(session: Session, compiled: Sequence[Compiled] = ()) -> int:
    """1 for input errors; else 3 when GATE refused any score or PCSC-E414 refused a
    route's policy; else 0."""
    return _exit_code(session.diags.items, any(c.decision.verdict == "suspend-and-ask" for c in compiled))
