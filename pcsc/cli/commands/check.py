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
    options.jobs(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    # each route is bound as soon as its file is lowered, and not kept: a large cohort
    # needs memory for its diagnostics, not for its IR
    session, _ = ctx.load(args.files, bind=True, keep_routes=False)
    n = ctx.loaded_count
    notes = [] if session.diags.has_errors else [f"ok: {n} route{'s' if n != 1 else ''} checked"]
    return Outcome("check", {}, diagnostics=session.diags.items, notes=notes)
