"""`pcsc graph FILE`: the route as a picture, in DOT, Mermaid or SVG (no Graphviz
needed). The picture is the same bytes on standard output and in `-o PATH`, whose
extension chooses the format when `--format` is not given."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError

FORMATS = ("dot", "mermaid", "svg")
DEFAULT = "dot"


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, one=True)
    options.route(p, "draw only this route", default="every route of the file")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help=f"output format (default: from the -o extension, else {DEFAULT})",
    )
    p.set_defaults(_formats=FORMATS)
    options.output(p, "the picture")
    options.coverage(p)
    options.search_paths(p)


def picture_format(chosen: str | None, output: str | None) -> str:
    """``--format`` if given; else the format the ``-o`` extension names (.svg, .dot or
    .gv, .mmd or .mermaid); else dot. An unknown extension is a usage error."""
    from pcsc.render.graph import EXTENSIONS

    if chosen:
        return chosen
    if not output or output == "-":
        return DEFAULT
    suffix = Path(output).suffix.lower()
    if not suffix:
        return DEFAULT
    if suffix not in EXTENSIONS:
        known = ", ".join(EXTENSIONS)
        raise UsageError(f"cannot tell the format from the extension of {output}: use {known}, or --format")
    return EXTENSIONS[suffix]


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the picture (a refused score is drawn, not an error), 1 on input errors."""
    from pcsc.render.graph import render

    args.format = picture_format(args.format, args.output)
    session, routes = ctx.load(args.files)
    routes = ctx.routes_named(routes, args.route, args.files)
    compiled = session.compile_routes(routes)
    picture = render(compiled, args.format) if compiled else None
    return Outcome("graph", {}, raw=picture, diagnostics=session.diags.sorted())
