"""`pcsc splice FILE --seam K`: the route with interior transition K deleted and its
predecessor retargeted, as `.route` text that compiles."""

from __future__ import annotations

import argparse

from pcsc.cli import options, whatif
from pcsc.cli.context import Context
from pcsc.cli.outcome import EXIT_INPUT, Outcome, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, one=True)
    options.route(p)
    p.add_argument("--seam", type=options.whole_number, required=True, metavar="K",
                   help="the interior transition to delete (1..n-2)")
    options.output(p, "the splice")
    options.formats(p, "text", "json")
    options.search_paths(p)
    whatif.add_set_option(p, "(repeatable; a route override is written into the splice)")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis.seams.splice import SpliceError, splice_text

    overrides, problems = whatif.parse(args)
    if problems:
        return Outcome("splice", {"ok": False, "route": None}, diagnostics=problems, exit_code=EXIT_INPUT)
    session, routes = whatif.load(ctx, args.files, overrides)
    if session.diags.has_errors:
        return Outcome("splice", {"ok": False, "route": None}, diagnostics=session.diags.sorted())
    route = ctx.choose_route(routes, args.route, args.files)
    if route is None:
        return Outcome("splice", {"ok": False, "route": None}, diagnostics=session.diags.sorted())
    try:
        text = splice_text(route, args.seam)
    except SpliceError as exc:
        raise UsageError(str(exc)) from None
    payload = {"route": route.name, "seam": args.seam}
    whatif.record(payload, None, overrides)
    return Outcome("splice", payload, raw=text, diagnostics=session.diags.sorted(), notes=whatif.note(overrides))
