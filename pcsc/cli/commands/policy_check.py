"""`pcsc policy check POLICY…`: validate policies; every problem a path-addressed
diagnostic (`policies/x/1.0.0.toml: error: reweighting.decay: expected a number`)."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("policies", nargs="+", metavar="POLICY", help="id@version, or paths to .toml files")
    options.formats(p, "text", "json", "sarif")
    options.search_paths(p, libraries=False)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.failures import policy_diagnostics
    from pcsc.policy.load import PolicyError

    diagnostics = []
    errors: list[str] = []
    checked: list[dict[str, str]] = []
    for target in args.policies:
        try:
            loaded = ctx.policy(target)
        except PolicyError as exc:
            diagnostics.extend(policy_diagnostics(exc))
            errors.extend(f"{exc.path}: {m}" for m in exc.messages)
        else:
            checked.append({"policy": loaded.ref, "path": loaded.path, "sha256": loaded.sha256})
    lines = [f"ok: {e['policy']} ({e['path']}) sha256 {e['sha256']}" for e in checked]
    return Outcome(
        "policy-check",
        {"ok": not diagnostics, "checked": checked, "errors": errors},
        text="\n".join(lines) or None,
        diagnostics=diagnostics,
    )
