"""`pcsc config [FILE]`: the effective settings, and where each came from (a flag, a
configuration file, or the default). With FILE, the settings that judge that route or
folder: its nearest configuration file's."""

from __future__ import annotations

import argparse
import os
from typing import Any

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="a route, test file or folder: show the configuration that judges it (default: the "
                   "working folder's)")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.coverage(p)
    options.ledger(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.base.config import DOCS_URL_ENV
    from pcsc.forecast.ledger import DEFAULT_PATH, ledger_location

    cfg, run_cfg = ctx.config, ctx.run_config
    source = str(cfg.path) if cfg.path else None
    run_source = str(run_cfg.path) if run_cfg.path else None

    def setting(name: str, flag: Any, configured: Any, default: Any, origin: str | None = source) -> dict[str, Any]:
        if flag not in (None, [], ()):
            return {"name": name, "value": flag, "from": "command line"}
        if configured not in (None, [], ()):
            return {"name": name, "value": configured, "from": origin}
        return {"name": name, "value": default, "from": "default"}

    def paths(ps: Any) -> list[str]:
        return [str(p) for p in ps]

    strictest = cfg.strictest_coverage()  # the nearest file's, or a more demanding one above it
    coverage = setting("coverage", args.coverage, strictest and strictest[0], "the policy's own mode")
    if strictest is not None and coverage["from"] == source:
        coverage["from"] = str(strictest[1])
    required = [{"name": "require_policy", "value": list(allowed), "from": str(path)}
                for path, allowed in cfg.policy_requirements()]
    settings = [
        setting("lib_path", paths(args.lib_path), paths(cfg.lib_path), []),
        setting("policy_path", paths(args.policy_path), paths(cfg.policy_path), []),
        coverage,  # a file's only raises the policy's
        *(required or [{"name": "require_policy", "value": [], "from": "default"}]),
        setting("select", None, list(cfg.select or ()), ["every warning"]),
        setting("ignore", None, list(cfg.ignore), []),
        setting("format", args.format, run_cfg.format, "text", run_source),
        setting("ledger", str(ledger_location(args.ledger)) if args.ledger else None,
                str(ledger_location(run_cfg.ledger)) if run_cfg.ledger else None, str(DEFAULT_PATH), run_source),
        setting("docs_url", None, run_cfg.docs_url, None, run_source),
    ]
    if os.environ.get(DOCS_URL_ENV):
        settings[-1] = {"name": "docs_url", "value": ctx.docs_url, "from": f"environment ({DOCS_URL_ENV})"}
    none = "none (pcsc.toml or [tool.pcsc] in pyproject.toml)"
    lines = [f"# configuration file: {source or none}" + (f" (the nearest to {args.file})" if args.file else "")]
    if run_source != source:
        lines.append(f"# format, ledger and docs_url: the working folder's, {run_source or none}")
    width = max(len(s["name"]) for s in settings)
    for s in settings:
        value = s["value"]
        shown = ", ".join(value) if isinstance(value, list) else "" if value is None else str(value)
        origin = s["from"]
        if s["name"] == "coverage" and origin not in ("command line", "default"):
            origin += " (a policy's mode is only raised by it; --coverage may lower it)"
        if s["name"] == "require_policy" and origin != "default":
            origin += " (every file's list holds; --require-policy adds to them)"
        lines.append(f"{s['name']:<{width}}  {shown or '(none)'}    # from {origin}")
    payload = {"file": source, "for": args.file, "run_file": run_source, "settings": settings}
    return Outcome("config", payload, text="\n".join(lines))
