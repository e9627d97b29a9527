"""`pcsc policy compare OLD NEW`: re-score the ledger's held-out resolved routes under
both policies (Brier, AUC, ECE), recompile the held-out routes from their frozen text
under both to compare their GATE verdicts, and say which policy to keep (exit 3 when
NEW is not promoted)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pcsc.cli import options
from pcsc.cli.commands.policy_fit import failed, history
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.exits import EXIT_REFUSED
from pcsc.diagnostics.messages import E744_CLASS_NOT_IN_POLICY, diag
from pcsc.diagnostics.model import Span

if TYPE_CHECKING:
    from pcsc.compiler.session import LibraryUse
    from pcsc.lang.ir import Route
    from pcsc.policy.model import LoadedPolicy

DEFAULT_HOLDOUT = 0.3


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="id@version, or a path to a .toml file")
    p.add_argument("new", metavar="NEW", help="id@version, or a path to a .toml file")
    p.add_argument("--holdout", type=options.decimal_number,
                   help="the share of routes held out (default: the share NEW's `[fit]` "
                   f"section records, as `policy fit` wrote it; else {DEFAULT_HOLDOUT})")
    p.add_argument("--cutoff", metavar="DATE",
                   help="split in time instead: grade the routes whose forecasts were frozen on or after DATE "
                   "(YYYY-MM-DD, UTC), the others being those `policy fit --cutoff DATE` fits on")
    p.add_argument("--min-cases", type=options.whole_number, metavar="N",
                   help="promote nothing on fewer than N held-out routes with a resolved outcome "
                   "(default: 10)")
    p.add_argument("--routes", nargs="+", action="extend", default=[], metavar="PATH",
                   help="route files or folders holding the held-out routes' frozen text, for the GATE check "
                   "(default: the file each route was frozen from, if it is unchanged)")
    options.ledger(p)
    options.as_of(p)
    options.search_paths(p)
    options.formats(p, "text", "json")
    options.output(p, "the comparison")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.failures import policy_diagnostics
    from pcsc.cli.forecasting import cutoff_date, ledger_diagnostic, resolution_date
    from pcsc.forecast.learn import MIN_CASES, ClassNotInPolicy, compare, cutoff_split, held_out_routes
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.views import compare_payload, compare_text
    from pcsc.policy.load import PolicyError

    when = resolution_date(args.as_of)
    cutoff = cutoff_date(args.cutoff)
    if cutoff is not None and args.holdout is not None:
        from pcsc.cli.exits import UsageError

        raise UsageError("--cutoff and --holdout are two ways to split: give one")
    missing = [r for r in args.routes if not Path(r).exists()]
    if missing:
        from pcsc.cli.exits import UsageError

        raise UsageError(f"--routes {missing[0]}: no such file or folder")
    try:
        old, new = ctx.policy(args.old), ctx.policy(args.new)
        found = history(ctx, when)
    except PolicyError as exc:
        return failed("policy-compare", policy_diagnostics(exc))
    except LedgerError as exc:
        return failed("policy-compare", [ledger_diagnostic(ctx.ledger_path(), str(exc))])
    holdout = args.holdout
    if holdout is None:
        recorded = new.policy.fit
        holdout = DEFAULT_HOLDOUT if recorded is None else recorded.holdout
    split = None if cutoff is None else cutoff_split(found.frozen_at, cutoff)
    min_cases = MIN_CASES if args.min_cases is None else args.min_cases
    held = held_out_routes(found.packets, holdout, split)
    verdicts, unchecked = gate_verdicts(ctx, old, new, held, found.frozen_inputs, args.routes)
    try:
        result = compare(old.policy, new.policy, found.packets, found.milestones, found.labels, holdout,
                         verdicts, unchecked, split=split, min_cases=min_cases)
    except ClassNotInPolicy as exc:
        problem = diag(E744_CLASS_NOT_IN_POLICY, Span.file_only(str(ctx.ledger_path())), ref_class=exc.ref_class,
                       policy=exc.policy)
        return failed("policy-compare", [problem])
    return Outcome(
        "policy-compare",
        {"old": old.ref, "new": new.ref, "holdout": None if cutoff else holdout,
         "cutoff": None if cutoff is None else cutoff.isoformat(), **compare_payload(result)},
        text=compare_text(old.ref, new.ref, result, None if cutoff is None else cutoff.isoformat()),
        exit_code=None if result.promote else EXIT_REFUSED,
    )


def gate_verdicts(
    ctx: Context, old: LoadedPolicy, new: LoadedPolicy, routes: Sequence[str],
    frozen: Mapping[str, tuple[str, tuple[tuple[str, str], ...]]], given: Sequence[str],
) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    """Each held-out route's GATE verdict under OLD and NEW, recompiled from the text it
    was frozen from: the file it was frozen from, or one of ``given``, whose SHA-256 is
    the frozen input's (and whose libraries are those frozen). Routes whose text cannot be
    found are returned with why."""
    from pcsc.analysis.policy_diff import PinnedSession, PinnedStore
    from pcsc.compiler.session import Session, expand_inputs
    from pcsc.diagnostics.model import Diagnostics
    from pcsc.policy.load import PolicyStore

    lib_path = ctx.search_path("lib_path")
    policy_path = ctx.search_path("policy_path")
    loader = Session(lib_path=lib_path, policies=PolicyStore(policy_path))
    loaded: dict[tuple[str, str], tuple[str | None, list[Route]]] = {}

    def load(path: Path, shown: str) -> tuple[str | None, list[Route]]:
        key = (str(path), shown)
        if key not in loaded:
            before = len(loader.inputs)
            got = loader.load_routes(path, shown) if path.is_file() else []
            digest = loader.inputs[-1][1] if len(loader.inputs) > before else None
            loaded[key] = (digest, got)
        return loaded[key]

    extra = expand_inputs(list(given), loader.diags)
    verdicts: dict[str, tuple[str, str]] = {}
    unchecked: list[tuple[str, str]] = []
    sessions = [
        PinnedSession(lib_path=lib_path, policies=PinnedStore(policy_path, pinned=p), diags=Diagnostics(),
                      coverage_mode="gate", pinned=p)
        for p in (old, new)
    ]
    for name in routes:
        if name not in frozen:
            unchecked.append((name, "its frozen inputs are not recorded"))
            continue
        file, inputs = frozen[name]
        hashes = {h for _, h in inputs}
        want = dict(inputs).get(file)
        route: Route | None = None
        for path, shown in [(Path(file), file), *extra]:
            digest, got = load(path, shown)
            match = next((r for r in got if r.name == name), None)
            if digest is not None and digest == want and match is not None:
                route = match
                uses: tuple[LibraryUse, ...] = loader.library_uses.get((shown, name), ())
                changed = [u.name for u in uses if u.sha256 not in hashes]
                if changed:
                    route = None
                    why = "library " + ", ".join(f"`{n}`" for n in changed) + " differs from the text frozen"
                    unchecked.append((name, why))
                    break
                ctx.note_hashed_input(shown, digest)
                break
        else:
            unchecked.append((name, f"no route file with its frozen text (sha256 {want}): give it with --routes"))
            continue
        if route is None:
            continue
        sides = []
        for session in sessions:
            compiled = session.compile_route(route)
            sides.append("does not compile" if compiled is None else compiled.decision.verdict)
        verdicts[name] = (sides[0], sides[1])
    return verdicts, unchecked
