"""`pcsc init [DIR]`: scaffold a project: a route, an obligation library, a policy
that extends the shipped one, and a `pcsc.toml` pointing at them (`pcsc.cli.scaffold`).

Existing files are never overwritten unless `--force` is given: the run lists them
(PCSC-E811) and writes nothing. `pcsc check routes/` and `pcsc gate routes/` pass on
the result, run in DIR.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.cli.scaffold import DEFAULT_NAME, Project, existing, files, valid_name
from pcsc.diagnostics.messages import (
    E811_EXISTING,
    E812_CANNOT_WRITE,
    diag,
)
from pcsc.diagnostics.model import Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", nargs="?", default=".", metavar="DIR", help="the project folder (default: .)")
    p.add_argument(
        "--name",
        default=DEFAULT_NAME,
        help=f"the project's name, for its library, policy and classes ([a-z0-9_-]+; default: {DEFAULT_NAME})",
    )
    p.add_argument("--force", action="store_true", help="overwrite files that already exist")
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 with the files written; 1 when one exists (without --force) or cannot be written."""
    if not valid_name(args.name):
        raise UsageError(f"--name {args.name!r}: use lower-case letters, digits, `_` and `-` only")
    root = Path(args.dir)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{args.dir}: not a folder")
    project = Project(args.name)
    wanted = files(project)
    clash = existing(root, project)
    payload: dict[str, object] = {"dir": str(root), "name": project.name, "library": project.ident}
    if clash and not args.force:
        shown = [str(root / rel) for rel in clash]
        diagnostic = diag(E811_EXISTING, Span.file_only(str(root)), files=", ".join(shown))
        return Outcome("init", {**payload, "ok": False, "written": [], "existing": shown}, diagnostics=[diagnostic])
    written: list[str] = []
    for rel, text in wanted.items():
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            diagnostic = diag(E812_CANNOT_WRITE, Span.file_only(str(target)), path=target, reason=exc.strerror or exc)
            failed = {**payload, "ok": False, "written": written, "existing": []}
            return Outcome("init", failed, diagnostics=[diagnostic])
        written.append(str(target))
    text = "\n".join(
        [
            *(f"wrote {w}" for w in written),
            "",
            f"next, in {root}:",
            "  pcsc check routes/     # parse, lower and check",
            "  pcsc compile routes/   # every number, from the policy",
            "  pcsc gate routes/      # is every material change covered?",
            "  pcsc test policies/    # what the policy must decide (docs/policy-tests.md)",
        ]
    )
    overwritten = [str(root / rel) for rel in clash]
    return Outcome(
        "init",
        {**payload, "ok": True, "written": written, "existing": [], "overwritten": overwritten},
        text=text,
        notes=[f"overwrote {o}" for o in overwritten],
    )
