"""`pcsc sensitivity FILE --route R`: for each prior, floor, evidence weight, gain, cost
item and vision value, the change that would flip the score's sign, the verdict, the
bucket, the binding transition or the rank in the file, or among `--rivals` too
(`pcsc.analysis.sensitivity`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.cli.verdicts import exit_code

if TYPE_CHECKING:
    from pcsc.lang.ir import Route


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, one=True)
    options.route(p, "the route whose margins to find")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.coverage(p)
    options.output(p, "the margins")
    p.add_argument(
        "--rivals",
        nargs="+",
        default=[],
        metavar="PATH",
        help="more routes (files or folders, e.g. the cohort) to rank against, besides the other routes of FILE; "
        "each recompile of a policy parameter recompiles them too",
    )


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the margins, 1 on input errors (nothing is searched then)."""
    from pcsc.analysis.sensitivity import report_json, report_text, sensitivity

    session, routes, compiled = ctx.compile_one(args.files, args.route)
    if compiled is None or session.diags.has_errors:
        return Outcome("sensitivity", {"sensitivity": None}, diagnostics=session.diags.sorted(),
                       exit_code=exit_code(session))
    rivals = [r for r in routes if r.name != compiled.route.name and r.file == compiled.route.file]
    if args.rivals:
        from pathlib import Path

        def same(r: Route) -> bool:
            return r.name == compiled.route.name and Path(r.file).resolve() == Path(compiled.route.file).resolve()

        more = session.load_paths(list(args.rivals))
        if session.diags.has_errors:
            return Outcome("sensitivity", {"sensitivity": None}, diagnostics=session.diags.sorted(),
                           exit_code=exit_code(session))
        known = {(r.name, Path(r.file).resolve()) for r in rivals}
        rivals += [r for r in more if not same(r) and (r.name, Path(r.file).resolve()) not in known]
    report = sensitivity(compiled, session, rivals)
    return Outcome(
        "sensitivity",
        {"sensitivity": report_json(report)},
        text=report_text(report),
        diagnostics=session.diags.sorted(),
        exit_code=exit_code(session),
    )
