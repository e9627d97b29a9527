"""`pcsc explain FILE --route R`: every number of a route, rule by rule, and the
coverage decision behind its verdict."""

from __future__ import annotations

import argparse

from pcsc.cli import options, whatif
from pcsc.cli.context import Context
from pcsc.cli.outcome import EXIT_INPUT, Outcome
from pcsc.cli.verdicts import exit_code


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, one=True)
    options.route(p, "the route to explain")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.coverage(p)
    options.output(p)
    whatif.add_set_option(p, "(repeatable)")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis import explain

    overrides, problems = whatif.parse(args)
    if problems:
        return Outcome("explain", {"explain": None}, diagnostics=problems, exit_code=EXIT_INPUT)
    session, _, compiled = ctx.compile_one(
        args.files, args.route, edit=lambda s, routes: whatif.apply_to_session(s, routes, overrides)
    )
    payload = {"explain": explain.to_json(compiled) if compiled else None}
    text = whatif.record(payload, explain.to_text(compiled) if compiled else None, overrides)
    return Outcome(
        "explain",
        payload,
        text=text,
        diagnostics=session.diags.sorted(),
        exit_code=exit_code(session),
    )
