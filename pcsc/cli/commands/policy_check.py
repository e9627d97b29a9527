"""`pcsc policy check POLICY…`: validate policies; every problem a path-addressed
diagnostic (`policies/x/1.0.0.toml: error: reweighting.decay: expected a number`).
Each `[libraries.<name>]` pin is checked against the library a route would resolve
the name to (`--lib-path`, then the shipped obligations/)."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("policies", nargs="+", metavar="POLICY", help="id@version, or paths to .toml files")
    options.formats(p, "text", "json", "sarif")
    options.search_paths(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.failures import policy_diagnostics
    from pcsc.policy.load import PolicyError

    diagnostics = []
    errors: list[str] = []
    checked: list[dict[str, object]] = []
    lines = []
    for target in args.policies:
        try:
            loaded = ctx.policy(target)
        except PolicyError as exc:
            diagnostics.extend(policy_diagnostics(exc))
            errors.extend(f"{exc.path}: {m}" for m in exc.messages)
            continue
        session = ctx.session()
        pins = session.check_pins(loaded)
        found = session.diags.sorted()
        diagnostics.extend(found)
        errors.extend(f"{d.span.file}: {d.message}" for d in found if d.severity == "error")
        checked.append({"policy": loaded.ref, "path": loaded.path, "sha256": loaded.sha256, "libraries": pins})
        if not found:
            matched = ", ".join(f"{p['name']} ({p['file'] or 'not on the library path'})" for p in pins)
            lines.append(f"ok: {loaded.ref} ({loaded.path}) sha256 {loaded.sha256}"
                         + (f"; pins match: {matched}" if matched else ""))
    return Outcome(
        "policy-check",
        {"ok": not diagnostics, "checked": checked, "errors": errors},
        text="\n".join(lines) or None,
        diagnostics=diagnostics,
    )
