"""`pcsc splice FILE --seam K`: the route with interior transition K deleted and its
predecessor retargeted, as `.route` text that compiles."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, one=True)
    options.route(p)
    p.add_argument("--seam", type=int, required=True, metavar="K", help="the interior transition to delete (1..n-2)")
    options.output(p, "the splice")
    options.formats(p, "text", "json")
    options.search_paths(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.seams.splice import SpliceError, splice_text

    session, routes = ctx.load(args.files)
    if session.diags.has_errors:
        return Outcome("splice", {"route": None}, diagnostics=session.diags.sorted())
    route = ctx.choose_route(routes, args.route, args.files)
    if route is None:
        return Outcome("splice", {"route": None}, diagnostics=session.diags.sorted())
    try:
        text = splice_text(route, args.seam)
    except SpliceError as exc:
        raise UsageError(str(exc)) from None
    return Outcome("splice", {"route": route.name, "seam": args.seam}, raw=text, diagnostics=session.diags.sorted())
