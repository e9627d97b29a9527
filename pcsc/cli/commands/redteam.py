"""`pcsc redteam FILE…`: search edits that raise each route's score, recompiled through
the whole pipeline, and report which of them the coverage check catches; with
`--search`, the seeded beam search over multi-edit revisions (`pcsc.analysis.search`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pcsc.analysis.redteam import DEFAULT_MAX_EDITS
from pcsc.base.humanize import plural
from pcsc.cli import options, whatif
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics.exits import EXIT_INPUT
from pcsc.diagnostics.messages import (
    E108_CANNOT_CREATE_FOLDER,
    E108_CANNOT_WRITE,
    diag,
)
from pcsc.diagnostics.model import Finding, Span

FEEDBACK = {"none": ("none",), "gate": ("gate",), "both": ("none", "gate")}


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    options.route(p, "only the route of this name", default="every route")
    p.add_argument(
        "--max-edits",
        type=options.whole_number,
        default=DEFAULT_MAX_EDITS,
        metavar="N",
        help=f"compile at most N edited routes per route (default: {DEFAULT_MAX_EDITS})",
    )
    p.add_argument(
        "--depth",
        type=options.whole_number,
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
    search_arguments(p)
    p.add_argument(
        "--emit",
        default=None,
        metavar="DIR",
        help="with --search, write each route's best revision per arm as DIR/<route>.<arm>.route",
    )
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.output(p)
    whatif.add_set_option(p, "(repeatable; with --search too)")


def search_arguments(p: argparse.ArgumentParser, *, with_flag: bool = True) -> None:
    """The search's options; `pcsc seams --experiment --search` takes them without
    `--search`, `--seed` and `--conditions` (it has its own `--seed`, and always runs
    the conditions)."""
    from pcsc.analysis.search import DEFAULT_BEAM, DEFAULT_BRANCH, DEFAULT_BUDGET, DEFAULT_STEPS

    if with_flag:
        p.add_argument(
            "--search",
            action="store_true",
            help="run the seeded beam search over multi-edit revisions (EXP B) instead of the single edits",
        )
        p.add_argument(
            "--seed",
            type=options.whole_number,
            default=None,
            help="with --search, the seed of the search's generator (default: fixed; same seed, same bytes)",
        )
    p.add_argument(
        "--feedback",
        choices=tuple(FEEDBACK),
        default="both",
        help="with --search: the arm that sees only the ungated score (none), the arm GATE refuses and that "
        "repairs (gate), or both (default)",
    )
    if with_flag:
        p.add_argument(
            "--conditions",
            action="store_true",
            help="with --search, also run the co-author conditions v1, v1.5a, v1.5b, v1.5a+b, v2a, v2b and v2a+b "
            "(EXP C)",
        )
    p.add_argument("--features-policy", default=None, metavar="ID@VERSION",
                   help="with --search, the policy whose class admission rules and gold registry the conditions "
                   "v2a, v2b and v2a+b add to a route's policy that has none, and under which both arms run again "
                   "(default: the route's own policy alone)")
    p.add_argument("--budget", type=options.whole_number, default=DEFAULT_BUDGET, metavar="N",
                   help=f"with --search, compile at most N revisions per route and arm (default: {DEFAULT_BUDGET})")
    p.add_argument("--beam", type=options.whole_number, default=DEFAULT_BEAM, metavar="N",
                   help=f"with --search, the revisions kept per step (default: {DEFAULT_BEAM})")
    p.add_argument("--steps", type=options.whole_number, default=DEFAULT_STEPS, metavar="N",
                   help=f"with --search, the most edits in a revision (default: {DEFAULT_STEPS})")
    p.add_argument("--branch", type=options.whole_number, default=DEFAULT_BRANCH, metavar="N",
                   help=f"with --search, the new revisions each kept revision proposes per step "
                   f"(default: {DEFAULT_BRANCH})")


def search_settings(args: argparse.Namespace) -> Any:
    from pcsc.analysis.seams.experiment import DEFAULT_SEED
    from pcsc.analysis.search import Settings

    for name in ("budget", "beam", "steps", "branch"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1")
    return Settings(DEFAULT_SEED if args.seed is None else args.seed, args.budget, args.beam, args.steps,
                    args.branch, args.features_policy)


def check_features_policy(session: Any, args: argparse.Namespace) -> None:
    """A `--features-policy` that does not load is a usage error, said before any search."""
    from pcsc.policy.load import PolicyError

    if args.features_policy is None:
        return
    try:
        session.policies.load_ref(args.features_policy)
    except PolicyError as exc:
        raise UsageError(f"--features-policy {args.features_policy}: {'; '.join(exc.messages)}") from None


def output_folder(folder: Path, flag: str) -> Finding | None:
    """Create ``folder`` (an output folder given by ``flag``) before any work is done;
    a folder that cannot be created is PCSC-E108, returned as a diagnostic."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = "a file of that name exists" if isinstance(exc, FileExistsError) else exc.strerror or str(exc)
        return diag(E108_CANNOT_CREATE_FOLDER, Span.file_only(str(folder)), flag=flag, reason=reason)
    return None


def cannot_write(path: Path, exc: OSError) -> Finding:
    """PCSC-E108 for an output file that could not be written."""
    return diag(E108_CANNOT_WRITE, Span.file_only(str(path)), path=path, reason=exc.strerror or exc)


def run_search(ctx: Context, session: Any, compiled: list[Any], args: argparse.Namespace,
               conditions: bool) -> list[Any]:
    """Each route's searches, in order (in worker processes with --jobs)."""
    from functools import partial

    settings = search_settings(args)
    check_features_policy(session, args)
    arms = FEEDBACK[args.feedback]
    if ctx.jobs == 1:
        from pcsc.analysis.search import search_all

        return [search_all(c, session, arms, conditions, settings)
                for c in ctx.progress(compiled, len(compiled), "search")]
    from pcsc.compiler.cohort import map_routes

    job = partial(_search, arms=arms, conditions=conditions, settings=settings)
    return map_routes(session, ctx.settings(session), job, compiled, ctx.executor())


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the report (a score-raising edit is a finding, not an error), 1 on
    input errors."""
    from pcsc.analysis.redteam import redteam, report_json, report_text

    if args.max_edits < 1:
        raise UsageError("--max-edits must be at least 1")
    if not args.search:
        for flag, given in (("--emit", args.emit is not None), ("--conditions", args.conditions),
                            ("--seed", args.seed is not None), ("--features-policy", args.features_policy is not None)):
            if given:
                raise UsageError(f"{flag} needs --search")
    if args.search and args.emit is not None:
        problem = output_folder(Path(args.emit), "--emit")
        if problem is not None:
            return Outcome("redteam-search", {"ok": False}, diagnostics=[problem])
    overrides, problems = whatif.parse(args)
    if problems:
        kind = "redteam-search" if args.search else "redteam"
        return Outcome(kind, {"ok": False}, diagnostics=problems, exit_code=EXIT_INPUT)
    session, routes = whatif.load(ctx, args.files, overrides)
    if args.route is not None:
        chosen = [r for r in routes if r.name == args.route]
        if not chosen and not session.diags.has_errors:
            from pcsc.lang.lower.common import suggest

            hint = suggest(args.route, [r.name for r in routes])
            raise UsageError(f"no route `{args.route}` in {', '.join(args.files)}" + (f"; {hint}" if hint else ""))
        routes = chosen
    compiled = session.compile_routes(routes)
    if args.search:
        return _search_outcome(ctx, session, compiled, args, overrides)
    if ctx.jobs == 1:
        reports = [
            redteam(c, session, args.max_edits, args.depth, args.reclass)
            for c in ctx.progress(compiled, len(compiled), "redteam")
        ]
    else:
        from functools import partial

        from pcsc.compiler.cohort import map_routes

        job = partial(_redteam, max_edits=args.max_edits, depth=args.depth, reclass=args.reclass)
        reports = map_routes(session, ctx.settings(session), job, compiled, ctx.executor())
    payload = report_json(reports, args.max_edits, args.depth, args.reclass)
    text = whatif.record(payload, report_text(reports) if reports else None, overrides)
    return Outcome("redteam", payload, text=text, diagnostics=session.diags.sorted())


def _redteam(session: Any, compiled: Any, *, max_edits: int, depth: int, reclass: str) -> Any:
    from pcsc.analysis.redteam import redteam

    return redteam(compiled, session, max_edits, depth, reclass)


def _search_outcome(
    ctx: Context, session: Any, compiled: list[Any], args: argparse.Namespace, overrides: tuple[Any, ...]
) -> Outcome:
    from pcsc.analysis.search import emit_revisions, routes_text, search_json, tables_text

    results = run_search(ctx, session, compiled, args, args.conditions)
    arms = FEEDBACK[args.feedback]
    settings = search_settings(args)
    notes = []
    if args.emit is not None:
        try:
            written = emit_revisions(results, Path(args.emit))
        except OSError as exc:
            where = Path(exc.filename) if isinstance(exc.filename, str) else Path(args.emit)
            problems = [*session.diags.sorted(), cannot_write(where, exc)]
            return Outcome("redteam-search", {"ok": False}, diagnostics=problems)
        notes.append(f"wrote {plural(len(written), 'revision')} to {args.emit}")
    payload = search_json(results, arms, settings)
    text = routes_text(results) + "\n\n" + tables_text(payload) if results else None
    text = whatif.record(payload, text, overrides)
    return Outcome("redteam-search", payload, text=text, diagnostics=session.diags.sorted(), notes=notes)


def _search(session: Any, compiled: Any, *, arms: tuple[str, ...], conditions: bool, settings: Any) -> Any:
    from pcsc.analysis.search import search_all

    return search_all(compiled, session, arms, conditions, settings)
