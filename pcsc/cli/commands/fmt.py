"""`pcsc fmt FILE…|DIR|-`: rewrite .route and .obl files in the canonical layout.

- Files are rewritten in place, only when the layout changes (`formatted PATH`), and
  the run ends with a summary in ruff's words (`1 file reformatted, 2 files left
  unchanged`). Folders expand to their *.route and *.obl files, recursively. `-` reads
  standard input and writes the result to standard output.
- `--check` writes nothing, lists the files that would change (`would format PATH`,
  then `1 file would be reformatted, 2 files already formatted`) and exits 1 if any
  would; `--diff` prints a unified diff instead of writing, and also exits 1 when
  anything would change; the file list and the summary then go to standard error.
- A path that cannot be read (a missing file or folder) is an error diagnostic on the
  path (no line), and the summary counts only the files that were read: none read,
  no summary.
- A file with a syntax error is reported (exit 1) and left untouched. Before anything
  is written, `pcsc.lang.fmt.check_format` compares the comments, the parse tree and the
  lowered IR of the old and the new text; a difference is a bug in pcsc: the file is
  left untouched and the run exits 70.

The formatter itself is `pcsc.lang.fmt`; this module finds the files, reads standard input,
writes files safely and reports.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import STDIN, STDIN_NAME, Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics.exits import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK

SOURCES = (".route", ".obl")  # what a folder stands for


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="files or folders (*.route and *.obl, recursively); `-` for stdin"
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    p.add_argument("--diff", action="store_true", help="print a unified diff instead of writing")
    options.formats(p, "text", "json")
    options.search_paths(p)


def is_library(text: str, shown: str) -> bool:
    """An .obl file; on standard input, text whose first statement is a library's."""
    if shown != STDIN_NAME:
        return shown.endswith(".obl")
    from pcsc.lang.fmt import opens_a_library

    return opens_a_library(text)


def write_atomically(path: Path, text: str) -> None:
    """Replace the file's contents atomically, keeping its permissions."""
    target = path.resolve()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".pcsc-fmt", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        shutil.copymode(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def unified_diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"{shown} (original)", f"{shown} (formatted)"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def summary(changed: int, unchanged: int, would: bool) -> str | None:
    """`1 file reformatted, 2 files left unchanged` (`would be reformatted`, `already
    formatted` with --check or --diff), as ruff says it; None when no file was read."""
    done, kept = ("would be reformatted", "already formatted") if would else ("reformatted", "left unchanged")
    parts = [f"{plural(n, 'file')} {what}" for n, what in ((changed, done), (unchanged, kept)) if n]
    return ", ".join(parts) or None


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    """Exit 0 when done, 1 on input errors or (with --check or --diff) when a file would
    change, 70 when the formatter would change a file's meaning (a bug in pcsc)."""
    from pcsc.base.canonical import sha256_hex
    from pcsc.base.escape import escape_controls
    from pcsc.compiler.meaning import semantics
    from pcsc.compiler.session import expand_inputs
    from pcsc.lang.fmt import check_format, format_source

    stdin = STDIN in args.files
    if stdin and len(args.files) > 1:
        raise UsageError("`-` (standard input) cannot be combined with other files")
    json_out = ctx.format == "json"
    lib_path = ctx.search_path("lib_path")
    policy_path = ctx.search_path("policy_path")
    session = ctx.session()  # reads files and keeps their text for the diagnostics
    report: list[dict[str, Any]] = []
    out: list[str] = []  # standard output, in text mode
    refused = 0
    would_change = 0

    def note(shown: str, status: str, **extra: str) -> None:
        report.append({"path": shown, "status": status, **extra})
        if json_out or stdin or status not in ("formatted", "changed"):
            return
        line = f"{'formatted' if status == 'formatted' else 'would format'} {shown}\n"
        if not args.diff:
            out.append(line)
        elif not ctx.quiet:  # keep a diff on standard output clean
            ctx.stderr.write(escape_controls(line))

    inputs = [(Path.cwd() / STDIN_NAME, STDIN_NAME)] if stdin else expand_inputs(args.files, session.diags, SOURCES)
    for path, shown in inputs:
        if stdin:
            text = session.read_stream(ctx.stdin, shown)
        else:
            text = session.read(path, shown)
        if text is None:
            note(shown, "error")
            continue
        session.inputs.append((shown, sha256_hex(text)))
        formatted = format_source(text, shown, session.diags)
        if formatted is None:
            note(shown, "error")
            continue
        changed = formatted != text
        if changed:
            library = is_library(text, shown)

            def meaning(t: str, shown: str = shown, library: bool = library, folder: Path = path.parent) -> Any:
                return semantics(t, shown, library, folder, lib_path, policy_path)

            reason = check_format(text, formatted, shown, meaning)
            if reason is not None:
                refused += 1
                note(shown, "refused", reason=reason)
                ctx.stderr.write(escape_controls(
                    f"pcsc: internal error: fmt refused {shown}: {reason}; the file is left untouched.\n"
                    "This is a bug in pcsc, not in your input. Please report it with the file.\n"
                ))
                continue
        extra: dict[str, str] = {}
        if stdin and not args.check and not args.diff:
            if json_out:
                extra["text"] = formatted
            else:
                out.append(formatted)
        if args.diff and changed:
            diff = unified_diff(text, formatted, shown)
            if json_out:
                extra["diff"] = diff
            else:
                out.append(diff)
        if not changed:
            note(shown, "unchanged", **extra)
        elif args.check or args.diff:
            would_change += 1
            note(shown, "changed", **extra)
        else:
            if not stdin:
                write_atomically(path, formatted)
            note(shown, "formatted", **extra)

    if refused:
        code = EXIT_INTERNAL
    elif session.diags.has_errors or ((args.check or args.diff) and would_change):
        code = EXIT_INPUT
    else:
        code = EXIT_OK
    notes: list[str] = []
    statuses = [r["status"] for r in report]
    line = summary(statuses.count("formatted") + statuses.count("changed"), statuses.count("unchanged"),
                   args.check or args.diff)
    if not stdin and line is not None:
        if args.diff:
            notes.append(line)
        else:
            out.append(line + "\n")
    return Outcome(
        "fmt",
        {"files": report},
        raw=None if json_out else "".join(out),
        diagnostics=session.diags.sorted(),
        exit_code=code,
        notes=notes,
    )
