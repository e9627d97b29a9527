"""What a command returns, and the one place an ``Outcome`` becomes output.

A command computes; it does not print. It returns an ``Outcome``: the document kind,
the JSON payload, the text view, the diagnostics and the exit code. ``emit`` writes
it in the chosen format (text, JSON in the one envelope, or SARIF), to standard
output or ``-o``, and returns the exit code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from pcsc.cli.exits import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UsageError
from pcsc.diagnostics.model import Diagnostic

if TYPE_CHECKING:
    from pcsc.cli.context import Context

__all__ = [
    "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "Outcome", "UsageError", "emit",
]


@attrs.frozen
class Outcome:
    """The result of one command.

    ``payload`` is the JSON document without its envelope (``emit`` adds ``pcsc``,
    ``schema``, ``inputs`` and, unless the payload has them, ``diagnostics``);
    ``text`` is what the text format prints on standard output (or ``-o``);
    ``notes`` are short lines for standard error in text mode (``--quiet`` drops
    them); ``raw`` is output written as is in every format but JSON (which carries
    it as ``output``) and SARIF: a route, a picture, a diff; never cut to the
    terminal's width.
    ``sarif`` builds a SARIF log when the command has more to report than its
    diagnostics (GATE refusals)."""

    kind: str
    payload: Mapping[str, Any] | None = None
    text: str | None = None
    diagnostics: Sequence[Diagnostic] = ()
    exit_code: int | None = None
    notes: Sequence[str] = ()
    raw: str | None = None
    sarif: Callable[[], dict[str, Any]] | None = None

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    def code(self) -> int:
        """The exit code: the command's own, else 1 when any diagnostic is an error."""
        if self.exit_code is not None:
            return self.exit_code
        return EXIT_INPUT if self.has_errors else EXIT_OK


def emit(ctx: Context, outcome: Outcome) -> int:
    """Write ``outcome`` as ``ctx`` asks; return its exit code."""
    from pcsc.base.escape import escape_controls
    from pcsc.diagnostics.model import condense
    from pcsc.render.diagnostics import to_json

    fmt = ctx.format
    diagnostics = condense(sorted(outcome.diagnostics, key=lambda d: (d.span.file, d.span.line, d.span.column)))
    if outcome.raw is not None and fmt not in ("json", "sarif"):
        ctx.show_diagnostics(diagnostics)
        ctx.write(outcome.raw)
        ctx.wide = True  # a route, a picture or a diff is never cut to the terminal's width
        _notes(ctx, outcome)
    elif fmt in ("json", "sarif"):
        from pcsc.base import canonical

        if fmt == "json":
            from pcsc.render.envelope import envelope

            payload = dict(outcome.payload or {})
            payload.setdefault("diagnostics", [to_json(d) for d in diagnostics])
            if outcome.raw is not None:
                payload.setdefault("output", outcome.raw)
            document = envelope(outcome.kind, payload, ctx.inputs)
        else:
            from pcsc.render.sarif import to_sarif

            document = outcome.sarif() if outcome.sarif is not None else to_sarif(diagnostics, docs_url=ctx.docs_url)
        ctx.write(escape_controls(canonical.dumps(document, pretty=True), json=True) + "\n")
    else:
        ctx.show_diagnostics(diagnostics)
        if outcome.text:
            ctx.write(escape_controls(outcome.text if outcome.text.endswith("\n") else outcome.text + "\n"))
        _notes(ctx, outcome)
    return outcome.code()


def _notes(ctx: Context, outcome: Outcome) -> None:
    from pcsc.base.escape import escape_controls

    if not ctx.quiet:
        for note in outcome.notes:
            ctx.stderr.write(escape_controls(note) + "\n")
