"""`pcsc ledger export [--ledger PATH] [--format csv|jsonl|json] [-o PATH]`: each route's
latest frozen forecast as a score table, with its entry hash and its route label as of
a date; the CSV is what `pcsc evaluate --scores` grades. With `-o`, a `sha256sum`
sidecar `PATH.sha256` is written beside it (what `evaluate --scores` checks)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import E108_CANNOT_WRITE_THE, diag
from pcsc.diagnostics.model import Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.ledger(p)
    p.add_argument("--mode", choices=("prospective", "retrospective"),
                   help="only forecasts frozen in this mode (each route's latest of that mode)")
    p.add_argument("--as-of", metavar="DATE",
                   help="the date of the route labels written in `outcome` (YYYY-MM-DD; default: today in UTC)")
    options.formats(p, "csv", "jsonl", "json", shown_default="csv")
    options.output(p, "the table (and PATH.sha256 beside it)")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic, resolution_date
    from pcsc.forecast.export import COLUMNS, export_rows, sidecar_text, to_csv, to_jsonl
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.outcomes import OutcomesError
    from pcsc.forecast.records import latest_forecasts, recorded_outcomes, stored_outcomes
    from pcsc.forecast.report import GradingError, label_problems
    from pcsc.forecast.resolve import route_outcomes

    as_of = resolution_date(args.as_of)
    path = ctx.ledger_path()
    try:
        forecasts, outcomes, recorded = ctx.read_ledger(
            lambda ledger: (latest_forecasts(ledger, args.mode), stored_outcomes(ledger), recorded_outcomes(ledger))
        )
    except (LedgerError, OutcomesError, ValueError) as exc:
        problem = ledger_diagnostic(path, str(exc))
        return Outcome("ledger-export", {"ledger": str(path), "ok": False, "error": problem.message},
                       diagnostics=[problem])
    # the table is what `evaluate --scores` grades: it never pools the two modes, nor
    # carries a label its forecast's mode does not allow it to be graded on
    labels = route_outcomes(outcomes, as_of, {e.route for e in forecasts})
    try:
        problems = label_problems(forecasts, labels, recorded, as_of, "the export")
    except GradingError as exc:
        problems, code = exc.messages, exc.code
    else:
        code = codes.E741
    if problems:
        diagnostics = [ledger_diagnostic(path, m, code) for m in problems]
        return Outcome("ledger-export", {"ledger": str(path), "ok": False, "error": "; ".join(problems)},
                       diagnostics=diagnostics)
    rows = export_rows(forecasts, outcomes, as_of)
    payload = {"ledger": str(path), "ok": True, "as_of": as_of.isoformat(), "mode": args.mode,
               "columns": list(COLUMNS), "rows": rows}
    if ctx.format == "json":
        return Outcome("ledger-export", payload)
    text = to_jsonl(rows) if ctx.format == "jsonl" else to_csv(rows)  # csv by default
    notes = []
    target = getattr(args, "output", None)
    if target and target != "-":
        sidecar = Path(target + ".sha256")
        try:
            sidecar.write_text(sidecar_text(text.encode("utf-8"), Path(target).name), encoding="utf-8")
        except OSError as exc:
            reason = exc.strerror or exc
            problem = diag(E108_CANNOT_WRITE_THE, Span.file_only(str(sidecar)), what="checksum", reason=reason)
            return Outcome("ledger-export", {**payload, "ok": False}, diagnostics=[problem])
        notes.append(f"wrote {target} ({plural(len(rows), 'row')}) and its checksum {sidecar}")
    return Outcome("ledger-export", payload, raw=text, notes=notes)
