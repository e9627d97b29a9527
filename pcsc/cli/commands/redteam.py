"""`pcsc redteam FILE…`: search edits that raise each route's score, recompiled through
the whole pipeline, and report which of them the coverage check catches."""

from __future__ import annotations

import argparse
from typing import Any

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics import codes
from pcsc.redteam import DEFAULT_MAX_EDITS


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    options.route(p, "only the route of this name", default="every route")
    p.add_argument(
        "--max-edits",
        type=int,
        default=DEFAULT_MAX_EDITS,
        metavar="N",
        help=f"compile at most N edited routes per route (default: {DEFAULT_MAX_EDITS})",
    )
    p.add_argument(
        "--depth",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: also try pairs of score-raising edits (within --max-edits)",
    )
    p.add_argument(
        "--reclass",
        choices=("all", "category", "none"),
        default="all",
        help="re-class to any class of higher prior (default), to those of the same category, or not",
    )
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the report (a score-raising edit is a finding, not an error), 1 on
    input errors."""
    from pcsc.redteam import redteam, report_json, report_text

    if args.max_edits < 1:
        raise UsageError("--max-edits must be at least 1")
    session, routes = ctx.load(args.files)
    if args.route is not None:
        chosen = [r for r in routes if r.name == args.route]
        if not chosen and not session.diags.has_errors:
            from pcsc.lower.common import suggest

            hint = suggest(args.route, [r.name for r in routes])
            raise UsageError(f"no route `{args.route}` in {', '.join(args.files)}" + (f"; {hint}" if hint else ""))
        routes = chosen
    compiled = []
    for c in session.compile_routes(routes):
        if c.route.shape is None:
            compiled.append(c)
            continue
        session.diags.add(
            codes.W609,
            f"route `{c.route.name}` forks and joins: redteam searches the edits of chain routes only, so it is "
            "skipped",
            c.route.span,
            "`pcsc seams` and `pcsc splice` check the deletions of a graph route (docs/graphs.md)",
        )
    if ctx.jobs == 1:
        reports = [
            redteam(c, session, args.max_edits, args.depth, args.reclass)
            for c in ctx.progress(compiled, len(compiled), "redteam")
        ]
    else:
        from functools import partial

        from pcsc.cohort import map_routes

        job = partial(_redteam, max_edits=args.max_edits, depth=args.depth, reclass=args.reclass)
        reports = map_routes(session, ctx.settings(session), job, compiled, ctx.executor())
    return Outcome(
        "redteam",
        report_json(reports, args.max_edits, args.depth, args.reclass),
        text=report_text(reports) if reports else None,
        diagnostics=session.diags.sorted(),
    )


def _redteam(session: Any, compiled: Any, *, max_edits: int, depth: int, reclass: str) -> Any:
    from pcsc.redteam import redteam

    return redteam(compiled, session, max_edits, depth, reclass)
