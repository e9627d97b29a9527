"""`pcsc diff HONEST REVISED`: the typed difference between two versions of a route:
transitions added, removed, merged and retargeted, seam skips, newly uncovered changes."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("honest", help="the honest route's file")
    p.add_argument("revised", help="the revised route's file (for example a splice)")
    options.route(p)
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis.routediff import diff_packet, diff_routes, diff_text

    compiled = []
    diags = []
    for path in (args.honest, args.revised):
        session, routes = ctx.load([path])
        diags.extend(session.diags.sorted())
        route = ctx.choose_route(routes, args.route, [path]) if not session.diags.has_errors else None
        c = session.compile_route(route) if route is not None else None
        diags.extend(d for d in session.diags.sorted() if d not in diags)
        if c is None:
            return Outcome("diff", {"ok": False, "honest": None}, diagnostics=diags)
        compiled.append(c)
    if not compiled[0].route.transitions:
        raise UsageError(f"route `{compiled[0].route.name}` has no transitions")
    d = diff_routes(compiled[0], compiled[1])
    return Outcome("diff", diff_packet(d), text=diff_text(d), diagnostics=diags)
