"""`pcsc test PATH…`: run policy tests (`*.pcsctest.toml`, docs/policy-tests.md), each
case through the real pipeline; one line per case, a summary, exit 1 when any case
fails or cannot run, or a test file cannot be used (PCSC-E801..E803)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.analysis.policy_tests import SUFFIX
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import EXIT_INPUT, EXIT_OK, Outcome, UsageError
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import (
    E105_CANNOT_READ,
    E108_CANNOT_WRITE_THE,
    E802_CASE_ERROR,
    E803_NO_TEST_FILES,
    diag,
)
from pcsc.diagnostics.model import Diagnostic, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help=f"test files, or folders searched recursively for *{SUFFIX}"
    )
    p.add_argument("--junit-xml", metavar="FILE", help="also write a JUnit XML report here")
    p.add_argument(
        "--max-edits",
        type=options.whole_number,
        default=None,
        metavar="N",
        help="red-team expectations compile at most N edited routes per case (default: as `pcsc redteam`)",
    )
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis.policy_tests import (
        FileReport,
        PolicyTestError,
        Runner,
        find_test_files,
        load_test_file,
        ok,
        to_json,
        to_junit,
        to_text,
    )

    if args.max_edits is not None and args.max_edits < 1:
        raise UsageError("--max-edits must be at least 1")
    runner = Runner(lib_path=ctx.search_path("lib_path"), policy_path=ctx.search_path("policy_path"))
    if args.max_edits is not None:
        runner.max_edits = args.max_edits
    diagnostics: list[Diagnostic] = []
    files: list[tuple[Path, str]] = []
    for arg in args.paths:
        path = Path(arg)
        if path.is_dir():
            found, refused = find_test_files(path)
            diagnostics += refused
            if not found and not refused:
                diagnostics.append(
                    diag(E803_NO_TEST_FILES, Span.file_only(arg), suffix=SUFFIX, folder=arg)
                )
            files.extend((f, str(f)) for f in found)
        else:
            files.append((path, arg))
    reports: list[FileReport] = []
    for path, shown in ctx.progress(files, len(files), "test"):
        try:
            tf = load_test_file(path, shown)
        except OSError as exc:
            problem = diag(E105_CANNOT_READ, Span.file_only(shown), file=shown, reason=exc.strerror or exc)
            diagnostics.append(problem)
            reports.append(FileReport(shown, problems=(problem.message,)))
            continue
        except PolicyTestError as exc:
            diagnostics.extend(Diagnostic.of(codes.E801, m, Span.file_only(shown, exc.line)) for m in exc.messages)
            reports.append(FileReport(shown, problems=tuple(exc.messages)))
            ctx.note_input(path, shown)
            continue
        results = runner.run_file(tf)
        for r in results:
            if r.status == "error":
                failures = "; ".join(r.failures)
                diagnostics.append(
                    diag(E802_CASE_ERROR, Span.file_only(shown), index=r.case.index, name=r.name, failures=failures)
                )
        reports.append(FileReport(shown, tuple(results)))
    for shown, sha in runner.inputs:
        ctx.note_hashed_input(shown, sha)
    if args.junit_xml:
        try:
            Path(args.junit_xml).write_text(to_junit(reports), encoding="utf-8")
        except OSError as exc:
            diagnostics.append(
                diag(
                    E108_CANNOT_WRITE_THE,
                    Span.file_only(args.junit_xml),
                    what="JUnit XML report",
                    reason=exc.strerror or exc,
                )
            )
    passed = ok(reports) and not diagnostics
    return Outcome(
        "test",
        {**to_json(reports), "ok": passed},
        text=to_text(reports) if reports else None,
        diagnostics=diagnostics,
        exit_code=EXIT_OK if passed else EXIT_INPUT,
    )
