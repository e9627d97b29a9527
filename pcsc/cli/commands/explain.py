"""`pcsc explain FILE --route R`: every number of a route, rule by rule, and the
coverage decision behind its verdict."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
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

    session, _, compiled = ctx.compile_one(args.files, args.route)
    return Outcome(
        "explain",
        {"explain": explain.to_json(compiled) if compiled else None},
        text=explain.to_text(compiled) if compiled else None,
        diagnostics=session.diags.sorted(),
        exit_code=exit_code(session),
    )
