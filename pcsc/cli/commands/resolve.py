"""`pcsc resolve OUTCOMES.toml [--ledger PATH] [--dry-run] [--as-of DATE]`: store the
file's observations and labels in the ledger (append-only; an outcome already stored
is not stored twice), then resolve the milestones of each route's latest frozen
forecast against every stored outcome.

With `--packets FILE.json` it resolves compile outputs instead and stores nothing.
Every problem of the outcomes file, the packets or the ledger is a diagnostic (exit 1).
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import E713_NOTHING_TO_RESOLVE, diag
from pcsc.diagnostics.model import Diagnostic, Span
from pcsc.lang.syntax.limits import read_file

if TYPE_CHECKING:
    from pcsc.forecast.ledger import Ledger
    from pcsc.forecast.outcomes import Outcomes
    from pcsc.forecast.resolve import Resolution


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("outcomes", metavar="OUTCOMES.toml", help="observations and labels (docs/outcomes.md)")
    options.ledger(p)
    p.add_argument(
        "--packets",
        action="append",
        metavar="PACKETS.json",
        help="resolve these compile outputs (`pcsc compile --format json`) instead of the ledger's forecasts; "
        "stores nothing (repeatable)",
    )
    p.add_argument("--dry-run", action="store_true", help="resolve without storing the outcomes")
    options.as_of(p)
    options.formats(p, "text", "json")
    options.output(p, "the resolved milestones")


def failed(diagnostics: list[Diagnostic]) -> Outcome:
    """The document of an input that cannot be used: ``ok`` false, the messages listed."""
    from pcsc.cli.forecasting import messages

    payload = {"ok": False, "errors": messages(diagnostics, "error"), "warnings": messages(diagnostics, "warning")}
    return Outcome("resolve", payload, diagnostics=diagnostics)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import resolution_date

    as_of = resolution_date(args.as_of)
    ctx.note_input(Path(args.outcomes), args.outcomes)
    if args.packets:
        return _packets(ctx, args, as_of)
    return _ledger(ctx, args, as_of)


def _packets(ctx: Context, args: argparse.Namespace, as_of: dt.date) -> Outcome:
    from pcsc.cli.forecasting import findings_diagnostics, outcomes_diagnostics, packet_diagnostics
    from pcsc.forecast.outcomes import OutcomesError, load_outcomes
    from pcsc.forecast.records import read_packets
    from pcsc.forecast.resolve import FrozenRoute, PacketError, check_outcomes, resolve_all

    diagnostics: list[Diagnostic] = []
    routes: list[FrozenRoute] = []
    outcomes = None
    try:
        outcomes = load_outcomes(args.outcomes)
    except OutcomesError as exc:
        diagnostics += outcomes_diagnostics(exc)
    for path in args.packets:
        ctx.note_input(Path(path), path)
        try:
            routes.extend(read_packets(path))
        except PacketError as exc:
            diagnostics += packet_diagnostics(exc)
    if outcomes is not None and not diagnostics:
        diagnostics += findings_diagnostics(outcomes.path, check_outcomes(routes, outcomes))
    if outcomes is None or any(d.severity == "error" for d in diagnostics):
        return failed(diagnostics)
    resolution = resolve_all(routes, outcomes, as_of)
    return _resolved(resolution, as_of, {"outcomes": outcomes.path, "packets": list(args.packets)}, "", diagnostics)


def _resolved(
    resolution: Resolution, as_of: dt.date, source: dict[str, Any], head: str, diagnostics: list[Diagnostic]
) -> Outcome:
    """The report of either mode: ``source`` says what was resolved (packets, or the
    ledger and what was stored), ``head`` is the text above the milestones."""
    from pcsc.cli.forecasting import messages
    from pcsc.forecast.views import resolve_summary, resolve_text, windows_text

    r = resolution
    payload = {
        "ok": True,
        "as_of": as_of.isoformat(),
        **source,
        "milestones": [m.to_json() for m in r.milestones],
        "routes": [o.to_json() for o in r.labelled],
        "summary": resolve_summary(r.milestones),
        "windows": list(r.window_summary),
        "at_windows": [w.to_json() for w in r.windows],
        "warnings": messages(diagnostics, "warning"),
        "errors": [],
    }
    report = head + resolve_text(r.milestones, r.labelled, as_of) + windows_text(r.window_summary)
    return Outcome("resolve", payload, text=report, diagnostics=diagnostics)


def _ledger(ctx: Context, args: argparse.Namespace, as_of: dt.date) -> Outcome:
    from pcsc.cli.forecasting import ledger_diagnostic, outcomes_diagnostics
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.outcomes import OutcomesError, load_outcomes
    from pcsc.forecast.stores import open_ledger

    try:
        outcomes = load_outcomes(args.outcomes)
        text = read_file(args.outcomes)
    except OutcomesError as exc:
        return failed(outcomes_diagnostics(exc))
    path = ctx.ledger_path()
    try:
        with open_ledger(path, create=False) as ledger:
            return _store_and_resolve(ledger, outcomes, text, args, as_of)
    except LedgerError as exc:
        return failed([ledger_diagnostic(path, str(exc))])


def _store_and_resolve(
    ledger: Ledger, outcomes: Outcomes, text: bytes, args: argparse.Namespace, as_of: dt.date
) -> Outcome:
    from pcsc.base.canonical import sha256_hex
    from pcsc.cli.forecasting import append_diagnostics, findings_diagnostics, packet_diagnostics
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.records import latest_forecasts, merged_outcomes, new_outcome_records, stored_outcomes
    from pcsc.forecast.resolve import PacketError, check_outcomes, frozen_routes, resolve_all

    forecasts = latest_forecasts(ledger)
    if not forecasts:
        return failed([diag(E713_NOTHING_TO_RESOLVE, Span.file_only(str(ledger.path)))])
    try:
        routes = frozen_routes([e.document() for e in forecasts], str(ledger.path))
    except PacketError as exc:
        return failed(packet_diagnostics(exc))
    diagnostics = findings_diagnostics(outcomes.path, check_outcomes(routes, outcomes))
    if any(d.severity == "error" for d in diagnostics):
        return failed(diagnostics)
    records = new_outcome_records(ledger, outcomes, f"{args.outcomes} sha256 {sha256_hex(text)}")
    try:
        stored = [] if args.dry_run else ledger.append_outcomes(records)
    except LedgerError as exc:
        return failed(append_diagnostics(ledger.path, exc, "nothing stored"))
    everything = merged_outcomes(ledger, outcomes) if args.dry_run else stored_outcomes(ledger)
    source = {
        "ledger": str(ledger.path),
        "stored": len(stored),
        "already_stored": len(outcomes.observations) + len(outcomes.labels) - len(records),
    }
    verb = "would store" if args.dry_run else "stored"
    head = f"{verb} {plural(len(records), 'new outcome')} in {ledger.path}\n"
    return _resolved(resolve_all(routes, everything, as_of), as_of, source, head, diagnostics)
