"""`pcsc policy diff OLD NEW [FILE…|DIR]`: what changed between two policies (their
resolved documents, key by key), and which routes' numbers move when each given
route is compiled under both."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="id@version, or a path to a .toml file")
    p.add_argument("new", metavar="NEW", help="id@version, or a path to a .toml file")
    p.add_argument("files", nargs="*", metavar="FILE", help=".route files or folders: compile each under both")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the diff (a route that one policy cannot compile is a finding), 1 when
    a policy or a route file cannot be read."""
    from pcsc.cli.failures import policy_diagnostics
    from pcsc.pipeline import expand_inputs
    from pcsc.policy.load import PolicyError
    from pcsc.policy_diff import diff_policies, to_json, to_text

    try:
        old = ctx.policy(args.old)
        new = ctx.policy(args.new)
    except PolicyError as exc:
        errors = [f"{exc.path}: {m}" for m in exc.messages]
        return Outcome("policy-diff", {"ok": False, "errors": errors}, diagnostics=policy_diagnostics(exc))
    loader = ctx.session()
    routes = []
    for path, shown in expand_inputs(args.files):
        routes.extend(loader.load_routes(path, shown))
    result = diff_policies(old, new, routes, ctx.search_path("policy_path"))
    return Outcome(
        "policy-diff",
        to_json(result),
        text=to_text(result, bool(args.files)),
        diagnostics=loader.diags.sorted(),
    )
