"""`pcsc check FILE…`: parse, lower, bind the policy and discharge coverage;
diagnostics only (no scoring, no sympy, no numpy)."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, stdin=True)
    options.formats(p, "text", "json", "sarif")
    options.search_paths(p)
    options.coverage(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    session, routes = ctx.load(args.files)
    for route in routes:
        session.check_route(route)
    n = len(routes)
    notes = [] if session.diags.has_errors else [f"ok: {n} route{'s' if n != 1 else ''} checked"]
    return Outcome("check", {}, diagnostics=session.diags.items, notes=notes)
