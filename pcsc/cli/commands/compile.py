"""`pcsc compile FILE…`: the ranking packet of every route (or, with `--emit ir`, the
lowered IR)."""

from __future__ import annotations

import argparse

from pcsc.cli import options, whatif
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.cli.verdicts import exit_code
from pcsc.diagnostics.exits import EXIT_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, stdin=True)
    p.add_argument(
        "--emit",
        choices=("packet", "ir"),
        default="packet",
        help="`ir` prints the lowered IR as JSON instead of the packet",
    )
    options.formats(p, "text", "json", "sarif")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.require_policy(p)
    options.output(p)
    whatif.add_set_option(p, "(repeatable)")
    p.add_argument(
        "--cert",
        metavar="PATH",
        help="also write the decision certificate of every route here (`pcsc verify-cert` re-checks it)",
    )


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    if args.emit == "ir":
        return _ir(ctx, args)
    from pcsc.render.packet import compile_packet
    from pcsc.render.text import compile_summary, compile_text

    overrides, problems = whatif.parse(args)
    if problems:
        return Outcome("compile", compile_packet([], problems), diagnostics=problems, exit_code=EXIT_INPUT)
    session, routes = whatif.load(ctx, args.files, overrides)
    compiled = [c for c in (session.compile_route(r) for r in ctx.progress(routes, len(routes), "compiling"))
                if c is not None]  # session.compile_routes, with a progress bar
    diags = session.diags.sorted()
    text = compile_text(compiled) if compiled else None
    if text is not None and len(compiled) > 1:
        text += "\n\n" + compile_summary(compiled, len(session.inputs))
    payload = compile_packet(compiled, diags)
    notes: list[str] = []
    text = whatif.record(payload, text, overrides)
    code = exit_code(session, compiled)
    if args.cert and not session.diags.has_errors:
        from pcsc.cli.certify import write_certificate

        failure = write_certificate(ctx, session, compiled, overrides, args.cert)
        if failure is not None:
            from pcsc.render.diagnostics import to_json

            diags = [*diags, failure]
            payload["diagnostics"] = [*payload["diagnostics"], to_json(failure)]
            code = EXIT_INPUT
        else:
            notes.append(f"ok: certificate written to {args.cert}")
    elif args.cert:
        notes.append(f"certificate not written to {args.cert}: the run has errors")
    return Outcome("compile", payload, text=text, diagnostics=diags, exit_code=code, notes=tuple(notes))


def _ir(ctx: Context, args: argparse.Namespace) -> Outcome:
    """The IR is a JSON document whatever the format; diagnostics go to standard error
    in text mode."""
    from pcsc.base import canonical
    from pcsc.base.escape import escape_controls
    from pcsc.diagnostics.model import condense
    from pcsc.lang.serialize import ir_json
    from pcsc.render.diagnostics import to_json
    from pcsc.render.envelope import envelope

    session, routes = ctx.load(args.files)
    diags = session.diags.sorted()
    payload = {"routes": [ir_json(r) for r in routes], "diagnostics": [to_json(d) for d in condense(diags)]}
    if ctx.format == "json":
        return Outcome("ir", payload, diagnostics=diags)
    document = escape_controls(canonical.dumps(envelope("ir", payload, ctx.inputs), pretty=True), json=True) + "\n"
    return Outcome("ir", payload, diagnostics=diags, raw=document)
