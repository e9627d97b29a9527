"""`pcsc policy diff OLD NEW [FILE…|DIR]`: what changed between two policies (their
resolved documents, key by key), and which routes' numbers move when each given
route is compiled under both."""

from __future__ import annotations

import argparse

from pcsc.cli import options, whatif
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="id@version, or a path to a .toml file")
    p.add_argument("new", metavar="NEW", help="id@version, or a path to a .toml file")
    p.add_argument("files", nargs="*", metavar="FILE", help=".route files or folders: compile each under both")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.output(p)
    whatif.add_set_option(p, "on the NEW side (repeatable; give the same policy twice to try a change)")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the diff (a route that one policy cannot compile is a finding), 1 when
    a policy or a route file cannot be read."""
    from pcsc.analysis.policy_diff import diff_policies, to_json, to_text
    from pcsc.cli.failures import policy_diagnostics
    from pcsc.policy.load import PolicyError
    from pcsc.policy.overrides import OverrideError, override_policy, override_route, parse_overrides, unmatched

    try:
        old = ctx.policy(args.old)
        new = ctx.policy(args.new)
    except PolicyError as exc:
        errors = [f"{exc.path}: {m}" for m in exc.messages]
        return Outcome("policy-diff", {"ok": False, "errors": errors}, diagnostics=policy_diagnostics(exc))
    try:
        overrides = parse_overrides(args.set)
        new = override_policy(new, overrides)
    except OverrideError as exc:
        diagnostics = whatif.diagnostics(exc.messages)
        return Outcome("policy-diff", {"ok": False, "errors": exc.messages}, diagnostics=diagnostics)
    loader = ctx.session()
    routes = loader.load_paths(list(args.files))  # an empty folder is an error, as everywhere
    missing = unmatched(routes, overrides)
    if missing:
        return Outcome("policy-diff", {"ok": False, "errors": missing}, diagnostics=whatif.diagnostics(missing))
    edit = (lambda r: override_route(r, overrides)) if any(o.target == "route" for o in overrides) else None
    result = diff_policies(old, new, routes, ctx.search_path("policy_path"), edit)
    payload = to_json(result)
    text = whatif.record(payload, to_text(result, bool(args.files)), overrides, "what-if on NEW")
    return Outcome(
        "policy-diff",
        payload,
        text=text,
        diagnostics=loader.diags.sorted(),
    )
