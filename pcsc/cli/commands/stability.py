"""`pcsc stability FILE… --draws K --seed S`: draw the routes' model-mediated inputs
again within stated bounds (estimates, evidence weights, classes), recompile every draw
through the pipeline, and report how stable the ranking and each route's score are
(see `pcsc.analysis.stability`)."""

from __future__ import annotations

import argparse

from pcsc.analysis.stability import DEFAULT_CLASS_SWAP, DEFAULT_DRAWS, DEFAULT_SEED, DEFAULT_WEIGHT_SPREAD
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    p.add_argument("--draws", type=options.whole_number, default=DEFAULT_DRAWS, metavar="K",
                   help=f"the number of perturbed draws (default: {DEFAULT_DRAWS})")
    p.add_argument("--seed", type=options.whole_number, default=DEFAULT_SEED, metavar="S",
                   help=f"the seed of the draws (default: {DEFAULT_SEED}); the same seed gives the same report")
    p.add_argument("--weight-spread", type=options.decimal_number, default=DEFAULT_WEIGHT_SPREAD, metavar="H",
                   help="each evidence weight w is drawn within [w − H, w + H], clipped to [0, 1] "
                   f"(default: {DEFAULT_WEIGHT_SPREAD:g})")
    p.add_argument("--class-swap", type=options.decimal_number, default=DEFAULT_CLASS_SWAP, metavar="P",
                   help="the probability that a transition's class is swapped for another of its category "
                   f"(default: {DEFAULT_CLASS_SWAP:g}; 0 keeps every class)")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.coverage(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the report, 1 on input errors or when no route compiles, 2 on bad options."""
    import math

    from pcsc.analysis.stability import Bounds, probe, stability_text
    from pcsc.cli.commands.rank import nothing, ranked

    if args.draws < 1:
        raise UsageError("--draws must be at least 1")
    if not (math.isfinite(args.weight_spread) and args.weight_spread >= 0):
        raise UsageError("--weight-spread must be a number at least 0")
    if not (math.isfinite(args.class_swap) and 0 <= args.class_swap <= 1):
        raise UsageError("--class-swap must be a probability in [0, 1]")
    session, compiled = ctx.compile(args.files)
    choice, ranking, warnings = ranked(compiled)
    diagnostics = [*session.diags.sorted(), *warnings]
    if not ranking or choice.key is None:
        diagnostics.append(nothing(args.files, "probe"))
        return Outcome("stability", {"draws": args.draws, "seed": args.seed, "routes_ranked": 0, "routes": []},
                       diagnostics=diagnostics)
    report = probe(compiled, session, choice.key, args.draws, args.seed,
                   Bounds(args.weight_spread, args.class_swap))
    return Outcome("stability", report.to_json(), text=stability_text(report), diagnostics=diagnostics)
