"""`pcsc fmt FILE…|DIR|-`: rewrite .route and .obl files in the canonical layout.

- Files are rewritten in place, only when the layout changes (`formatted PATH`), and
  the run ends with `N files unchanged`. Folders expand to their *.route and *.obl
  files, recursively. `-` reads standard input and writes the result to standard output.
- `--check` writes nothing, lists the files that would change and exits 1 if any
  would; `--diff` prints a unified diff instead of writing (with `--check`, the exit
  code says whether anything would change).
- A file with a syntax error is reported (exit 1) and left untouched. Before anything
  is written, `pcsc.fmt.check_format` compares the comments, the parse tree and the
  lowered IR of the old and the new text; a difference is a bug in pcsc: the file is
  left untouched and the run exits 70.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pcsc.diagnostics.model import Diagnostics, Span

STDIN = "-"
STDIN_NAME = "<stdin>"


def register(sub: Any, common: Callable[..., None]) -> None:
    """Add `pcsc fmt` to the command-line parser (``common`` adds the shared options)."""
    p = sub.add_parser("fmt", help="canonical formatting of .route and .obl files; comments kept")
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="files or folders (*.route and *.obl, recursively); `-` for stdin"
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    p.add_argument("--diff", action="store_true", help="print a unified diff instead of writing")
    common(p, ("text", "json"))
    p.set_defaults(func=run_fmt)


def expand_fmt_inputs(args: Sequence[str]) -> list[tuple[Path, str]]:
    """Files as given; folders expand to their *.route and *.obl files, recursively, sorted."""
    out: list[tuple[Path, str]] = []
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            found = [f for f in p.rglob("*") if f.suffix in (".route", ".obl") and f.is_file()]
            out.extend((f, str(f)) for f in sorted(found))
        else:
            out.append((p, arg))
    return out


def _is_library(text: str, shown: str) -> bool:
    """An .obl file; on standard input, text whose first statement is a library's."""
    if shown != STDIN_NAME:
        return shown.endswith(".obl")
    from pcsc.fmt import lex

    words = [t.text for t in lex(text)[0][:1]]
    return words in (["library"], ["field"], ["obligation"])


def _read_stdin(diags: Diagnostics) -> str | None:
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.add(
            "PCSC-E105",
            f"{STDIN_NAME} is not UTF-8 text: byte 0x{data[exc.start]:02X} cannot be decoded",
            Span.whole_file(STDIN_NAME),
        )
        return None


def _write(path: Path, text: str) -> None:
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


def _diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"{shown} (original)", f"{shown} (formatted)"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def run_fmt(args: argparse.Namespace) -> int:
    from pcsc import __version__
    from pcsc.cli import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, UsageError, emit_diagnostics, print_json
    from pcsc.fmt import check_format, format_source, semantics
    from pcsc.pipeline import Session
    from pcsc.render.diagnostics import to_json as diagnostic_json

    stdin = STDIN in args.files
    if stdin and len(args.files) > 1:
        raise UsageError("`-` (standard input) cannot be combined with other files")
    json_out = getattr(args, "format", "text") == "json"
    lib_path = [Path(p) for p in getattr(args, "lib_path", [])]
    policy_path = [Path(p) for p in getattr(args, "policy_path", [])]
    session = Session()  # reads files and keeps their text for the diagnostics
    report: list[dict[str, Any]] = []
    refused = 0
    would_change = 0

    info = sys.stderr if args.diff else sys.stdout  # keep a diff on standard output clean

    def note(shown: str, status: str, **extra: str) -> None:
        report.append({"path": shown, "status": status, **extra})
        if json_out or stdin:
            return
        if status == "formatted":
            info.write(f"formatted {shown}\n")
        elif status == "changed":
            info.write(f"would format {shown}\n")

    inputs = [(Path.cwd() / STDIN_NAME, STDIN_NAME)] if stdin else expand_fmt_inputs(args.files)
    for path, shown in inputs:
        if stdin:
            text = _read_stdin(session.diags)
            if text is not None:
                session.sources[shown] = text
        else:
            text = session.read(path, shown)
        if text is None:
            note(shown, "error")
            continue
        formatted = format_source(text, shown, session.diags)
        if formatted is None:
            note(shown, "error")
            continue
        if formatted != text:
            library = _is_library(text, shown)

            def meaning(t: str, shown: str = shown, library: bool = library, folder: Path = path.parent) -> Any:
                return semantics(t, shown, library, folder, lib_path, policy_path)

            reason = check_format(text, formatted, shown, meaning)
            if reason is not None:
                refused += 1
                note(shown, "refused", reason=reason)
                sys.stderr.write(
                    f"pcsc: internal error: fmt refused {shown}: {reason}; the file is left untouched.\n"
                    "This is a bug in pcsc, not in your input. Please report it with the file.\n"
                )
                continue
        changed = formatted != text
        extra: dict[str, str] = {}
        if stdin and not args.check and not args.diff:
            if json_out:
                extra["text"] = formatted
            else:
                sys.stdout.write(formatted)
        if args.diff and changed:
            diff = _diff(text, formatted, shown)
            if json_out:
                extra["diff"] = diff
            else:
                sys.stdout.write(diff)
        if not changed:
            note(shown, "unchanged", **extra)
        elif args.check or args.diff:
            would_change += 1
            note(shown, "changed", **extra)
        else:
            if not stdin:
                _write(path, formatted)
            note(shown, "formatted", **extra)

    diags = session.diags.sorted()
    unchanged = sum(1 for r in report if r["status"] == "unchanged")
    if json_out:
        print_json({"pcsc": __version__, "files": report, "diagnostics": [diagnostic_json(d) for d in diags]})
    else:
        emit_diagnostics(diags, session.sources, sys.stderr)
        if not stdin:
            info.write(f"{_plural(unchanged, 'file')} unchanged\n")
    if refused:
        return EXIT_INTERNAL
    if session.diags.has_errors:
        return EXIT_INPUT
    if args.check and would_change:
        return EXIT_INPUT
    return EXIT_OK
