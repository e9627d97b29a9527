"""`pcsc rule CODE`: what a diagnostic code means, from the registry: its title and
severity, what it does to the exit code, whether it can be suppressed, the messages
PCSC reports under it, and where the diagnostics reference explains it."""

from __future__ import annotations

import argparse
from typing import Any

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", metavar="CODE", help="a diagnostic code: PCSC-W604, W604 or w604")
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.diagnostics.codes import CODES, E414
    from pcsc.diagnostics.messages import MESSAGES
    from pcsc.diagnostics.suppress import full
    from pcsc.render.doclinks import code_anchor, doc_url

    code = full(args.code.upper())
    entry = CODES.get(code)
    if entry is None:
        from pcsc.lang.lower.common import suggest

        hint = suggest(code, list(CODES))
        raise UsageError(f"no diagnostic code {args.code!r}" + (f"; {hint}" if hint else "")
                         + " (docs/diagnostics.md lists every code)")
    if entry.severity == "warning":
        effect = "a warning: it does not change the exit code"
        suppress = (f"can be suppressed: `ignore = [\"{code[5:]}\"]` in the configuration, or "
                    f"`# pcsc: ignore[{code[5:]}]` on its line")
    else:
        effect = "an error: " + ("exit 3, a refusal" if code == E414.code else "exit 1 (exit 3 for a refusal)")
        suppress = "cannot be suppressed: an error decides a number or a verdict"
    templates = [{"message": m.text, "help": m.help} for m in MESSAGES.values() if m.code.code == code]
    anchor = code_anchor(code)
    docs = doc_url(ctx.docs_url, "diagnostics", anchor) if ctx.docs_url else f"docs/diagnostics.md#{anchor}"
    payload: dict[str, Any] = {"code": code, "severity": entry.severity, "title": entry.title,
                               "effect": effect, "suppressible": entry.severity == "warning",
                               "messages": templates, "docs": docs}
    lines = [f"{code}: {entry.title}", f"  {effect}; it {suppress}."]
    if templates:
        lines.append("  reported as (fields in braces):")
        for t in templates:
            lines.append(f"    - {t['message']}")
            if t["help"]:
                lines.append(f"      help: {t['help']}")
    lines.append(f"  see {docs}")
    return Outcome("rule", payload, text="\n".join(lines))
