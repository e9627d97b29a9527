"""`pcsc rank FILE…|DIR`: every route that compiles, ranked together: gates first, then
the policy's rank key (see `pcsc.analysis.rank`).

Exit 1 on input errors (the routes that compiled are still ranked) or when there is
nothing to rank; 2 when the routes' policies name different rank keys. A route whose
score GATE refused is ranked like any other: `pcsc gate` is the command that exits 3.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pcsc.analysis.rank import KeyChoice, Ranked
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.compiler.session import Compiled
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import E751_NO_ROUTES, diag
from pcsc.diagnostics.model import Diagnostic, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.output(p, "the ranking")


def ranked(compiled: Sequence[Compiled]) -> tuple[KeyChoice, list[Ranked], list[Diagnostic]]:
    """The rank key, the ranking, and a PCSC-W751 when the routes' policies differ; a
    usage error when they name different keys."""
    from pcsc.analysis.rank import RankKeyConflict, choose_key, rank

    try:
        choice = choose_key(compiled)
    except RankKeyConflict as exc:
        raise UsageError(str(exc)) from None
    warnings = [Diagnostic.of(codes.W751, w, Span.file_only(compiled[0].route.file)) for w in choice.warnings]
    return choice, ([] if choice.key is None else rank(compiled, choice.key)), warnings


def nothing(files: Sequence[str], what: str) -> Diagnostic:
    """PCSC-E751: no route compiled, located at the first file given."""
    return diag(E751_NO_ROUTES, Span.file_only(files[0]), what=what, files=", ".join(files))


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis.rank import rank_packet, rank_text

    session, compiled = ctx.compile(args.files)
    choice, ranking, warnings = ranked(compiled)
    diagnostics = [*session.diags.sorted(), *warnings]
    if not ranking:
        diagnostics.append(nothing(args.files, "rank"))
    payload = rank_packet(ranking, choice, [], session.inputs)
    for key in ("pcsc", "inputs", "diagnostics"):  # the envelope's, and every diagnostic of the run
        payload.pop(key)
    return Outcome(
        "rank",
        payload,
        text=rank_text(ranking, choice) if ranking else None,
        diagnostics=diagnostics,
    )
