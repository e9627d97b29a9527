"""`pcsc resolve OUTCOMES.toml [--ledger PATH] [--dry-run] [--as-of DATE]`: store the
file's observations and labels in the ledger (append-only; an outcome already stored
is not stored twice), then resolve the milestones of each route's latest frozen
forecast against every stored outcome.

With `--packets FILE.json` it resolves compile outputs instead and stores nothing.

Blinded resolution: `--blind --by NAME` stores outcomes entered under blind ids (the route
names of `pcsc blind`'s copies) and resolves nothing: they grade nothing yet. `--join
MAP.json --by NAME` then joins the private map: each blind outcome not yet joined is
stored again under its route's own name, its source naming the blind row, when it was
entered and who joins it; then every milestone is resolved. The chain shows the map was
joined after the outcomes were stored. `--by NAME` on any store records who resolved.
Every problem of the outcomes file, the packets or the ledger is a diagnostic (exit 1).
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.base.files import read_bytes
from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import E713_NOTHING_TO_RESOLVE, diag
from pcsc.diagnostics.model import Finding, Span

if TYPE_CHECKING:
    from pcsc.forecast.ledger import Ledger
    from pcsc.forecast.outcomes import Outcomes
    from pcsc.forecast.resolve import Resolution


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("outcomes", metavar="OUTCOMES.toml", nargs="?",
                   help="observations and labels (docs/outcomes.md); not with --join")
    options.ledger(p)
    p.add_argument(
        "--packets",
        action="append",
        metavar="PACKETS.json",
        help="resolve these compile outputs (`pcsc compile --format json`) instead of the ledger's forecasts; "
        "stores nothing (repeatable)",
    )
    p.add_argument("--dry-run", action="store_true", help="resolve without storing the outcomes")
    p.add_argument("--blind", action="store_true",
                   help="the outcomes are entered under blind ids (`pcsc blind`'s route names): store them as "
                   "entered and resolve nothing until the map is joined with --join")
    p.add_argument("--join", metavar="MAP.json",
                   help="join the private map of `pcsc blind` to the blind outcomes stored, then resolve")
    p.add_argument("--by", metavar="NAME", help="who resolves: recorded with each outcome stored (needed with "
                   "--blind and --join)")
    options.as_of(p)
    options.formats(p, "text", "json")
    options.output(p, "the resolved milestones")


def failed(diagnostics: list[Finding]) -> Outcome:
    """The document of an input that cannot be used: ``ok`` false, the messages listed."""
    from pcsc.cli.forecasting import messages

    payload = {"ok": False, "errors": messages(diagnostics, "error"), "warnings": messages(diagnostics, "warning")}
    return Outcome("resolve", payload, diagnostics=diagnostics)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import resolution_date

    as_of = resolution_date(args.as_of)
    _check_modes(args)
    if args.join:
        return _join(ctx, args, as_of)
    ctx.note_input(Path(args.outcomes), args.outcomes)
    if args.packets:
        return _packets(ctx, args, as_of)
    return _ledger(ctx, args, as_of)


def _check_modes(args: argparse.Namespace) -> None:
    """Usage errors: what each mode needs and what it does not take."""
    from pcsc.cli.outcome import UsageError

    if args.join and args.outcomes:
        raise UsageError("--join joins the blind outcomes already stored: give no OUTCOMES.toml with it")
    if not args.join and not args.outcomes:
        raise UsageError("give the OUTCOMES.toml to store (or --join MAP.json)")
    if (args.blind or args.join) and not (args.by or "").strip():
        raise UsageError(f"{'--blind' if args.blind else '--join'} needs --by NAME: who enters or joins them")
    if args.blind and args.join:
        raise UsageError("--blind stores outcomes, --join joins the map to them: one at a time")
    for flag, given in (("--packets", args.packets), ("--dry-run", args.dry_run)):
        if given and (args.blind or args.join):
            raise UsageError(f"{flag} does not apply with {'--blind' if args.blind else '--join'}")
    if args.by is not None and not args.by.strip():
        raise UsageError("--by needs a name")


def _packets(ctx: Context, args: argparse.Namespace, as_of: dt.date) -> Outcome:
    from pcsc.cli.forecasting import findings_diagnostics, outcomes_diagnostics, packet_diagnostics
    from pcsc.forecast.outcomes import OutcomesError, load_outcomes
    from pcsc.forecast.records import read_packets
    from pcsc.forecast.resolve import FrozenRoute, PacketError, check_outcomes, resolve_all

    diagnostics: list[Finding] = []
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
    resolution: Resolution, as_of: dt.date, source: dict[str, Any], head: str, diagnostics: list[Finding]
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
        text = read_bytes(args.outcomes)  # read again for its hash: it was readable a moment ago
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
    if args.blind:  # under blind ids: nothing to check them against until the map is joined
        return _store_and_resolve_blind(ledger, outcomes, text, args, as_of)
    try:
        routes = frozen_routes([e.document() for e in forecasts], str(ledger.path))
    except PacketError as exc:
        return failed(packet_diagnostics(exc))
    diagnostics = findings_diagnostics(outcomes.path, check_outcomes(routes, outcomes))
    if any(d.severity == "error" for d in diagnostics):
        return failed(diagnostics)
    by = f"; resolved by {args.by}" if args.by else ""
    records = new_outcome_records(ledger, outcomes, f"{args.outcomes} sha256 {sha256_hex(text)}{by}")
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


def _store_and_resolve_blind(
    ledger: Ledger, outcomes: Outcomes, text: bytes, args: argparse.Namespace, as_of: dt.date
) -> Outcome:
    """Store outcomes entered under blind ids, as entered, with who entered them; they
    grade nothing until `--join`."""
    from pcsc.base.canonical import sha256_hex
    from pcsc.cli.forecasting import append_diagnostics
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.records import BLIND, blind_outcomes, new_outcome_records

    source = f"{BLIND}{args.outcomes} sha256 {sha256_hex(text)}; entered by {args.by}"
    records = new_outcome_records(ledger, outcomes, source, blind=True)
    try:
        stored = ledger.append_outcomes(records)
    except LedgerError as exc:
        return failed(append_diagnostics(ledger.path, exc, "nothing stored"))
    waiting = len(blind_outcomes(ledger)) - _joined_count(ledger)
    payload = {
        "ok": True, "as_of": as_of.isoformat(), "ledger": str(ledger.path), "blind": True, "by": args.by,
        "stored": len(stored), "already_stored": len(outcomes.observations) + len(outcomes.labels) - len(records),
        "waiting": waiting, "milestones": [], "routes": [], "errors": [], "warnings": [],
    }
    text_out = (f"stored {plural(len(stored), 'new blind outcome')} in {ledger.path}, entered by {args.by}; "
                f"{plural(waiting, 'blind outcome')} wait for the map: nothing is resolved until "
                "`pcsc resolve --join MAP.json --by NAME`\n")
    return Outcome("resolve", payload, text=text_out)


def _joined_count(ledger: Ledger) -> int:
    from pcsc.forecast.records import blind_seq

    return len({blind_seq(o.source) for o in ledger.outcomes()} - {None})


def _join(ctx: Context, args: argparse.Namespace, as_of: dt.date) -> Outcome:
    """Join the private map to the blind outcomes stored, then resolve everything."""
    from pcsc.base.canonical import sha256_hex
    from pcsc.base.files import Unreadable
    from pcsc.cli.forecasting import append_diagnostics, findings_diagnostics, ledger_diagnostic, packet_diagnostics
    from pcsc.diagnostics.messages import (
        E764_CANNOT_READ_MAP,
        E764_JOINS_NO_ROUTE,
        E764_NOT_A_MAP,
        E764_NOTHING_TO_JOIN,
    )
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.outcomes import outcomes_from_records
    from pcsc.forecast.records import join_records, latest_forecasts, read_blind_map, stored_outcomes
    from pcsc.forecast.resolve import PacketError, check_outcomes, frozen_routes, resolve_all
    from pcsc.forecast.stores import open_ledger

    at = Span.file_only(args.join)
    try:
        data = read_bytes(args.join)
        blind_map = read_blind_map(data.decode("utf-8"), sha256_hex(data))
    except Unreadable as exc:
        return failed([diag(E764_CANNOT_READ_MAP, at, reason=exc.reason)])
    except (ValueError, UnicodeDecodeError) as exc:
        return failed([diag(E764_NOT_A_MAP, at, reason=exc)])
    ctx.note_input(Path(args.join), args.join)
    path = ctx.ledger_path()
    try:
        with open_ledger(path, create=False) as ledger:
            forecasts = latest_forecasts(ledger)
            if not forecasts:
                return failed([diag(E713_NOTHING_TO_RESOLVE, Span.file_only(str(ledger.path)))])
            try:
                routes = frozen_routes([e.document() for e in forecasts], str(ledger.path))
            except PacketError as exc:
                return failed(packet_diagnostics(exc))
            records = join_records(ledger, blind_map, args.by)
            if not records and not _joined_count(ledger):
                return failed([diag(E764_NOTHING_TO_JOIN, Span.file_only(str(ledger.path)))])
            known = {r.route for r in routes}
            astray = sorted({r.route for r in records} - known)
            if astray:  # a wrong map, or blind ids mistyped: joined, they would grade nothing
                return failed([diag(E764_JOINS_NO_ROUTE, at, outcomes=plural(len(astray), "blind outcome route"),
                                    routes=", ".join(astray[:5]))])
            joining: Outcomes = outcomes_from_records(
                [(r.kind, r.route, r.observed, r.payload, r.source) for r in records], args.join)
            diagnostics = findings_diagnostics(args.join, check_outcomes(routes, joining))
            if any(d.severity == "error" for d in diagnostics):
                return failed(diagnostics)
            try:
                stored = ledger.append_outcomes(records)
            except LedgerError as exc:
                return failed(append_diagnostics(ledger.path, exc, "nothing joined"))
            source = {"ledger": str(ledger.path), "stored": len(stored), "already_stored": 0, "joined": len(stored),
                      "by": args.by, "map_sha256": blind_map.sha256}
            head = (f"joined {plural(len(stored), 'blind outcome')} through {args.join} (sha256 "
                    f"{blind_map.sha256[:12]}…), by {args.by}, into {ledger.path}\n")
            return _resolved(resolve_all(routes, stored_outcomes(ledger), as_of), as_of, source, head, diagnostics)
    except LedgerError as exc:
        return failed([ledger_diagnostic(path, str(exc))])
