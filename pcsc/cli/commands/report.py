"""`pcsc report FILE…`: the compiled routes as one self-contained HTML page (the route
picture, the staged fold, coverage, undischarged obligations, seams; the ranking
first for several routes). The page is the same bytes on standard output and in
`-o PATH`; it needs Jinja2 (the extra ``pcsc[report]``)."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics.messages import E751_NO_ROUTES, diag
from pcsc.diagnostics.model import Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    options.route(p, "report only this route", default="every route")
    options.output(p, "the HTML page")
    options.coverage(p)
    options.search_paths(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the page (a refused score is reported, not an error), 1 on input
    errors, when no route compiled or without Jinja2 (PCSC-E115), 2 on a usage error."""
    from pcsc.analysis.rank import RankKeyConflict
    from pcsc.render.report import build, render_html, require_jinja2

    require_jinja2()  # before any work: without the extra, PCSC-E115
    session, routes = ctx.load(args.files)
    routes = ctx.routes_named(routes, args.route, args.files)
    compiled = session.compile_routes(routes)
    diagnostics = session.diags.sorted()
    if not compiled:
        files = ", ".join(args.files)
        diagnostics.append(diag(E751_NO_ROUTES, Span.file_only(args.files[0]), what="report", files=files))
        return Outcome("report", {}, diagnostics=diagnostics)
    try:
        report = build(compiled, session)
    except RankKeyConflict as exc:
        raise UsageError(str(exc)) from None
    page = render_html(report)
    return Outcome("report", {}, raw=page, diagnostics=session.diags.sorted())  # the seams' too
