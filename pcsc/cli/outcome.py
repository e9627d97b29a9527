"""What a command returns, and the one place an ``Outcome`` becomes output.

A command computes; it does not print. It returns an ``Outcome``: the document kind,
the JSON payload, the text view, the diagnostics and the exit code. ``emit`` writes
it in the chosen format (text, JSON in the one envelope, or SARIF), to standard
output or ``-o``, and returns the exit code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from pcsc.cli.exits import UsageError
from pcsc.diagnostics.exits import EXIT_INPUT, EXIT_OK
from pcsc.diagnostics.model import Finding

if TYPE_CHECKING:
    from pcsc.cli.context import Context
    from pcsc.compiler.session import Compiled

#: The formats that report findings for a pipeline: built from the one SARIF log.
PIPELINE_FORMATS = ("sarif", "junit", "github")

__all__ = ["Outcome", "UsageError", "emit"]


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
    ``refusals`` are the compiled routes whose uncovered changes SARIF, JUnit and
    GitHub annotations report beside the diagnostics (GATE's refusals)."""

    kind: str
    payload: Mapping[str, Any] | None = None
    text: str | None = None
    diagnostics: Sequence[Finding] = ()
    exit_code: int | None = None
    notes: Sequence[str] = ()
    raw: str | None = None
    refusals: Sequence[Compiled] = ()

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
    from pcsc.diagnostics.suppress import apply
    from pcsc.render.diagnostics import to_json

    fmt = ctx.format
    reported, suppressed = apply(outcome.diagnostics, ctx.sources, ctx.selection)
    diagnostics = condense(sorted(reported, key=lambda d: (d.span.file, d.span.line, d.span.column)))
    code = outcome.code()
    if outcome.raw is not None and fmt not in ("json", *PIPELINE_FORMATS):
        ctx.show_diagnostics(diagnostics)
        ctx.write(outcome.raw)
        ctx.wide = True  # a route, a picture or a diff is never cut to the terminal's width
        _notes(ctx, outcome, len(suppressed))
    elif fmt == "json":
        from pcsc.base import canonical
        from pcsc.diagnostics.suppress import records
        from pcsc.render.envelope import envelope

        payload = dict(outcome.payload or {})
        if "diagnostics" in payload and (suppressed or len(reported) != len(outcome.diagnostics)):
            hidden = [to_json(q.finding) for q in suppressed]
            own = [d for d in payload["diagnostics"] if d not in hidden]
            payload["diagnostics"] = own + [to_json(d) for d in reported if to_json(d) not in own]
        payload.setdefault("diagnostics", [to_json(d) for d in diagnostics])
        if suppressed:
            payload["suppressed"] = records(suppressed)
        if outcome.raw is not None:
            payload.setdefault("output", outcome.raw)
        document = envelope(outcome.kind, payload, ctx.inputs)
        ctx.write(escape_controls(canonical.dumps(document, pretty=True), json=True) + "\n")
    elif fmt in PIPELINE_FORMATS:
        from pcsc.render.sarif import to_sarif

        log = to_sarif(diagnostics, refusals=outcome.refusals, docs_url=ctx.docs_url, sources=ctx.sources,
                       suppressed=suppressed, exit_code=code)
        ctx.write(_pipeline_text(fmt, log, outcome.kind, [p for p, _ in ctx.inputs]))
    else:
        ctx.show_diagnostics(diagnostics)
        if outcome.text:
            ctx.write(escape_controls(outcome.text if outcome.text.endswith("\n") else outcome.text + "\n"))
        _notes(ctx, outcome, len(suppressed))
    return code


def _pipeline_text(fmt: str, log: dict[str, Any], kind: str, inputs: Sequence[str]) -> str:
    from pcsc.base import canonical
    from pcsc.base.escape import escape_controls

    if fmt == "sarif":
        return escape_controls(canonical.dumps(log, pretty=True), json=True) + "\n"
    from pcsc.render.pipeline import github_annotations, junit_xml

    if fmt == "junit":
        return junit_xml(log, f"pcsc {kind}", inputs)
    return github_annotations(log)


def _notes(ctx: Context, outcome: Outcome, suppressed: int = 0) -> None:
    from pcsc.base.escape import escape_controls
    from pcsc.base.humanize import plural

    if not ctx.quiet:
        for note in outcome.notes:
            ctx.stderr.write(escape_controls(note) + "\n")
        if suppressed:
            ctx.stderr.write(f"note: {plural(suppressed, 'warning')} suppressed (`--format json` lists them)\n")
