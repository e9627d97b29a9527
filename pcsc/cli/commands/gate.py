"""`pcsc gate FILE…`: the coverage verdict and the undischarged obligations; exit 3
when GATE refuses any route."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.cli.verdicts import exit_code


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, stdin=True)
    options.formats(p, "text", "json", "sarif")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.packet import gate_packet
    from pcsc.render.sarif import to_sarif
    from pcsc.textout import gate_text

    session, compiled = ctx.compile(args.files)
    diags = session.diags.sorted()
    return Outcome(
        "gate",
        gate_packet(compiled),
        text=gate_text(compiled) if compiled else None,
        diagnostics=diags,
        exit_code=exit_code(session, compiled),
        sarif=lambda: to_sarif(diags, refusals=compiled),
    )
