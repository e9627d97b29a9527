"""`pcsc explain FILE --route R`: every number of a route, rule by rule, and the
coverage decision behind its verdict."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.cli.verdicts import exit_code


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, one=True)
    options.route(p, "the route to explain")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.coverage(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc import explain

    session, routes = ctx.load(args.files)
    try:
        chosen = ctx.choose_route(routes, args.route, args.files)
    except UsageError:
        if args.route is None or not session.diags.has_errors:
            raise
        chosen = None  # the named route may be the one that failed to lower: report its errors
    compiled = session.compile_route(chosen) if chosen is not None else None
    return Outcome(
        "explain",
        {"explain": explain.to_json(compiled) if compiled else None},
        text=explain.to_text(compiled) if compiled else None,
        diagnostics=session.diags.sorted(),
        exit_code=exit_code(session),
    )
