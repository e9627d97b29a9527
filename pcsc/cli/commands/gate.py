"""`pcsc gate FILE…`: the coverage verdict and the undischarged obligations; exit 3
when GATE refuses any route."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from pcsc.base.humanize import money, plural
from pcsc.cli import options, whatif
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.exits import EXIT_INPUT, exit_code

if TYPE_CHECKING:
    from pcsc.analysis.suggest import Suggestion
    from pcsc.compiler.session import Compiled
    from pcsc.lang.ir import Route


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p, stdin=True)
    options.formats(p, "text", "json", "sarif", "junit", "github")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.require_policy(p)
    options.output(p)
    whatif.add_set_option(p, "(repeatable; with --suggest, each suggestion is checked under them too)")
    p.add_argument(
        "--suggest",
        action="store_true",
        help="list, for each refused route, the smallest edits that would release it (each checked by recompiling)",
    )
    p.add_argument(
        "--apply",
        type=options.whole_number,
        metavar="N",
        help="with --suggest: write the route edited by suggestion N (to -o FILE, or standard output)",
    )
    p.add_argument(
        "--was",
        metavar="FILE",
        help="(implies --suggest) an earlier version of the routes (e.g. the file a splice was cut from); "
        "also suggest restoring the transitions they deleted",
    )


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.render.packet import gate_packet
    from pcsc.render.text import gate_text

    overrides, problems = whatif.parse(args)
    if problems:
        return Outcome("gate", gate_packet([]), diagnostics=problems, exit_code=EXIT_INPUT)
    groups = ctx.input_groups(args.files)
    suggesting = args.suggest or args.apply is not None or args.was is not None
    if suggesting and len(groups) > 1:
        from pcsc.cli.exits import UsageError

        raise UsageError("--suggest, --apply and --was take one project's routes at a time: the inputs fall under "
                         "different configuration files")
    compiled: list[Compiled] = []
    for config, files in groups:  # each project's files under its own configuration
        with ctx.judged_by(config):
            session, routes = whatif.load(ctx, files, overrides)
            compiled += session.compile_routes(routes)
    diags = sorted(ctx.diagnostics, key=lambda d: (d.span.file, d.span.line, d.span.column))
    payload = gate_packet(compiled)
    whatif.record(payload, None, overrides)
    text = gate_text(compiled) if compiled else None
    code = exit_code(diags, any(c.decision.verdict == "suspend-and-ask" for c in compiled))
    if suggesting:
        from pcsc.analysis.suggest import admitting, suggest
        from pcsc.cli.exits import UsageError

        earlier: dict[str, Route] = {}
        if args.was is not None:
            was_session, was_routes = ctx.load([args.was])
            if was_session.diags.has_errors:
                diags = [*diags, *was_session.diags.sorted()]
                return Outcome("gate", payload, diagnostics=diags, exit_code=EXIT_INPUT)
            earlier = {r.name: r for r in was_routes}
        found = [s for c in compiled for s in suggest(c, session, earlier.get(c.route.name))]
        payload["suggestions"] = [_suggestion_json(i, s) for i, s in enumerate(found, 1)]
        classes = [a for c in compiled for a in admitting(c)]
        if classes:
            payload["admitting_classes"] = [
                {"route": a.route, "transition": a.transition, "class": a.ref_class, "admitting": list(a.classes)}
                for a in classes
            ]
        if args.apply is not None:
            if not 1 <= args.apply <= len(found):
                raise UsageError(f"--apply {args.apply}: there are {plural(len(found), 'suggestion')}")
            return Outcome("gate", payload, diagnostics=diags, exit_code=code, raw=found[args.apply - 1].text,
                           notes=whatif.note(overrides))
        if text is not None:  # nothing compiled (errors only): no suggestion to speak of
            text += "\n\n" + _suggestions_text(found)
            for a in classes:
                names = ", ".join(a.classes) if a.classes else "none: claim less, or split the step"
                text += f"\nclasses that would admit {a.route}.{a.transition} (now {a.ref_class}): {names}"
    return Outcome(
        "gate",
        payload,
        text=whatif.record(None, text, overrides),
        diagnostics=diags,
        exit_code=code,
        refusals=compiled,
    )


def _suggestion_json(n: int, s: Suggestion) -> dict[str, Any]:
    return {
        "n": n,
        "route": s.route,
        "file": s.file,
        "changes": list(s.changes),
        "edits": list(s.descriptions),
        "verdict": s.verdict,
        "score_before": s.score_before,
        "score_after": s.score_after,
    }


def _suggestions_text(found: list[Suggestion]) -> str:
    if not found:
        return "suggestions: none (no edit PCSC knows how to make releases a refused route)"
    lines = ["suggestions (each recompiled: applied alone, it releases the route; --apply N -o FILE writes it):"]
    for n, s in enumerate(found, 1):
        delta = s.score_after - s.score_before
        lines.append(
            f"  {n}. {s.route}: discharges {', '.join(s.changes)}; score {money(s.score_after)} "
            f"({money(delta, signed=True)} against the ungated {money(s.score_before)})"
        )
        lines += [f"       - {d}" for d in s.descriptions]
    return "\n".join(lines)
