"""Exit codes (docs/cli.md) and the one rule that picks a run's from what it found:
the command line and the API (`Result.exit_code`) both ask here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pcsc.diagnostics.codes import E414

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_REFUSED = 0, 1, 2, 3
EXIT_INTERNAL = 70  # a bug in pcsc (EX_SOFTWARE); never caused by input


class _Coded(Protocol):
    """A diagnostic, internal (`Finding`) or public: its code and severity are all the
    rule reads."""

    @property
    def code(self) -> str: ...

    @property
    def severity(self) -> str: ...


def exit_code(diagnostics: Iterable[_Coded], refused: bool = False) -> int:
    """1 for input errors; else 3 when GATE refused a score (``refused``) or a route
    named a policy the run does not require (PCSC-E414: a refusal, not a fault of the
    input); else 0."""
    errors = {d.code for d in diagnostics if d.severity == "error"}
    if errors - {E414.code}:
        return EXIT_INPUT
    if errors or refused:
        return EXIT_REFUSED
    return EXIT_OK
