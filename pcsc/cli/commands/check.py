"""`pcsc check FILE…`: parse, lower, bind the policy, score and discharge coverage,
reporting whatever `pcsc compile` would refuse; diagnostics only (no packet, no sympy,
no numpy). An `.obl` file (named, or under a folder) is checked as a library."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pcsc.base.files import Unreadable, read_text
from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError

if TYPE_CHECKING:
    from pcsc.compiler.session import Session
    from pcsc.diagnostics.model import Finding


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, stdin=True, libraries=True)
    options.formats(p, "text", "json", "sarif", "junit", "github")
    options.search_paths(p)
    options.coverage(p)
    options.require_policy(p)
    options.jobs(p)
    options.output(p, "the JSON, SARIF, JUnit or GitHub report")
    p.add_argument("--fix", action="store_true",
                   help="apply the safe fixes the diagnostics propose (a misspelt state, transition, obligation or "
                   "keyword: `did you mean`), then check again; never one that could change a number")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix, also the fixes that choose where a number comes from (a field, a reference "
                   "class, a criterion, a library, a policy)")
    p.add_argument("--watch", action="store_true",
                   help="check again whenever a route, library, policy or configuration file it reads changes; "
                   "Ctrl-C stops (exit 130)")
    p.add_argument("--leakage", metavar="NAMES.txt",
                   help="also flag identity cues left in the routes: these names (one per line; an empty file "
                   "for the patterns only), e-mails, URLs, domains, known investors (PCSC-W702)")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    if args.unsafe_fixes and not args.fix:
        raise UsageError("--unsafe-fixes goes with --fix")
    if args.fix:
        return _fix(ctx, args)
    return _check(ctx, args)


#: Rounds of fixing at most: a fix can let a file lower further, and show the next misspelling.
FIX_ROUNDS = 10


def _fix(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Check, apply the fixes proposed, and again until none is left; then report what
    still holds, with a note per fix written."""

    from pcsc.analysis.fixes import apply_fixes, fixes

    if "-" in args.files:
        raise UsageError("--fix writes files back: it cannot fix standard input (`-`)")
    written: list[str] = []
    for _ in range(FIX_ROUNDS):
        outcome = _check(ctx, args)
        proposed = [f for f in fixes(ctx.diagnostics, ctx.sources) if f.safe or args.unsafe_fixes]
        changed = False
        for file in sorted({f.file for f in proposed}):
            path = Path(file)
            try:
                text = read_text(path)
            except Unreadable:
                continue
            if text != ctx.sources.get(file):
                continue  # the file is not the text checked (it changed meanwhile): left alone
            new_text, applied = apply_fixes(text, [f for f in proposed if f.file == file])
            if applied:
                with open(path, "w", encoding="utf-8", newline="") as out:  # as read: line ends kept
                    out.write(new_text)
                written += [f"fixed {f.description}" for f in applied]
                changed = True
        if not changed:
            break
        ctx.forget_sessions()
    left = [f for f in fixes(ctx.diagnostics, ctx.sources) if not f.safe and not args.unsafe_fixes]
    notes = [*written, *outcome.notes]
    if left:
        notes.append(f"{plural(len(left), 'more fix', 'more fixes')} could change a number: --unsafe-fixes applies "
                     "them (" + "; ".join(f.description for f in left) + ")")
    return Outcome("check", {"fixed": written}, diagnostics=outcome.diagnostics, notes=notes)


def _check(ctx: Context, args: argparse.Namespace) -> Outcome:
    # each route is bound as soon as its file is lowered, and not kept: a large cohort
    # needs memory for its diagnostics, not for its IR (the leakage scan needs the texts);
    # each project's files under its own configuration. An `.obl` file, named or in a
    # folder, is checked as a library, as a route's `uses` loads it.
    n = n_libraries = 0
    for config, files in ctx.input_groups(args.files):
        route_args, libraries, refused = _split_inputs(files)
        with ctx.judged_by(config):
            if route_args:
                session, _ = ctx.load(route_args, bind=True, keep_routes=bool(args.leakage))
                n += ctx.loaded_count
            else:
                session = ctx.session()
        session.diags.items.extend(refused)
        for path, shown in libraries:
            since = len(session.diags)
            session.check_library_file(path, shown)
            if not any(d.span.file == shown for d in session.diags.items[since:]):
                session.sources.pop(shown, None)  # as for a route: only a diagnostic shows its lines
        n_libraries += len(libraries)
        if args.leakage:
            _leakage(ctx, session, args.leakage)
    checked = plural(n, "route")
    if n_libraries:
        checked = f"{checked} and {plural(n_libraries, 'library', 'libraries')}" if n else plural(
            n_libraries, "library", "libraries")
    notes = [] if ctx.has_errors else [f"ok: {checked} checked"]
    return Outcome("check", {}, diagnostics=ctx.diagnostics, notes=notes)


def _split_inputs(files: Sequence[str]) -> tuple[list[str], list[tuple[Path, str]], list[Finding]]:
    """``files`` as (what the routes are read from, the `.obl` libraries, the links to a
    library that lead out of their folder). A named `.obl` file is a library; a folder
    gives its libraries and stays a route input unless it holds libraries and no route
    (so a folder with neither is still PCSC-E106, as for routes alone)."""
    import os

    from pcsc.cli.context import STDIN
    from pcsc.compiler.walk import folder_files

    route_args: list[str] = []
    libraries: list[tuple[Path, str]] = []
    refused: list[Finding] = []
    for arg in files:
        if arg != STDIN and os.path.isdir(arg):
            found, out = folder_files(Path(arg), (".route", ".obl"))
            obl = [f for f in found if f.suffix == ".obl"]
            libraries += [(f, str(f)) for f in obl]
            routes_too = len(obl) < len(found) or any(not d.span.file.endswith(".obl") for d in out)
            if routes_too or not obl:
                route_args.append(arg)  # its route files, and the links to one that lead out, as before
            refused += [d for d in out if d.span.file.endswith(".obl")]
        elif arg != STDIN and arg.endswith(".obl"):
            libraries.append((Path(arg), arg))
        else:
            route_args.append(arg)
    return route_args, libraries, refused


def _leakage(ctx: Context, session: Session, names_file: str) -> None:
    """A PCSC-W702 warning at every identity cue left in the route files read."""
    from pcsc.analysis.blind import in_identifier, leakage_cues, read_names, renamable
    from pcsc.cli.outcome import UsageError
    from pcsc.diagnostics.messages import W702_CUE_BLIND, W702_CUE_BLIND_RENAMES, W702_CUE_IN_FILE_NAME, W702_CUE_RENAME
    from pcsc.diagnostics.model import Span

    try:
        names = read_names(read_text(names_file))
    except Unreadable as exc:
        raise UsageError(f"--leakage {names_file}: cannot read the names: {exc.reason}") from None
    ctx.note_input(Path(names_file), names_file)
    for shown, _ in session.inputs:
        if shown.endswith(".obl"):
            continue  # a library, not a route to blind
        source = session.sources.get(shown, "")
        for cue in leakage_cues(source, names):
            kind = {"NAME": f"a name from {names_file}", "EMAIL": "an e-mail address", "URL": "a URL",
                    "DOMAIN": "a domain name", "INVESTOR": "an investor's name"}[cue.kind]
            span = Span(shown, cue.line, cue.column, cue.line, cue.column + len(cue.text))
            if not in_identifier(source, cue):
                session.diags.diag(W702_CUE_BLIND, span, cue=cue.text, kind=kind)
            elif renamable(source, cue):
                session.diags.diag(W702_CUE_BLIND_RENAMES, span, cue=cue.text, kind=kind)
            else:
                session.diags.diag(W702_CUE_RENAME, span, cue=cue.text, kind=kind)
        for cue in leakage_cues(Path(shown).name, names):
            session.diags.diag(W702_CUE_IN_FILE_NAME, Span(shown, 1, 1, 1, 1), cue=cue.text, file=Path(shown).name)
