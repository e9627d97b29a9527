"""`pcsc prereg PLAN.toml [--ledger PATH]`: freeze a preregistered plan in the ledger
before its outcomes (`pcsc.forecast.prereg`): its predictions, the cohort's frozen
forecasts, their scorer (policies and code hash) and the analysis options.

Refused (exit 1, nothing written): a plan that does not parse (PCSC-E762, located in the
plan file), a name the ledger already holds, a cohort route without a frozen forecast, and
a cohort with outcomes already recorded or dated by the day of freezing (PCSC-E763).
`pcsc evaluate --prereg NAME` grades it.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from pcsc.base.files import Unreadable, read_bytes
from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import (
    E762_CANNOT_READ_PLAN,
    E762_COHORT_NOT_FROZEN,
    E762_NOTHING_TO_PREREGISTER,
    E762_PLAN_EXISTS,
    E762_PLAN_NOT_UTF8,
    E763_OUTCOMES_RECORDED,
    diag,
)
from pcsc.diagnostics.model import Finding, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("plan", metavar="PLAN.toml", help="the plan: [plan] name and cohort, [analysis], [[prediction]]")
    options.ledger(p)
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.base.canonical import sha256_hex
    from pcsc.base.codehash import scorer_identity
    from pcsc.cli.forecasting import append_diagnostics, ledger_diagnostic
    from pcsc.forecast.freeze import entry_mode
    from pcsc.forecast.ledger import ForecastRecord, LedgerError, PolicyId, utc_stamp
    from pcsc.forecast.prereg import PlanError, known_before, plan_payload, read_plan
    from pcsc.forecast.records import latest_forecasts, recorded_outcomes
    from pcsc.forecast.stores import open_ledger

    path = ctx.ledger_path()
    try:
        data = read_bytes(args.plan)
        plan = read_plan(data.decode("utf-8"))
    except Unreadable as exc:
        return _failed(path, [diag(E762_CANNOT_READ_PLAN, Span.file_only(args.plan), reason=exc.reason)])
    except UnicodeDecodeError:
        return _failed(path, [diag(E762_PLAN_NOT_UTF8, Span.file_only(args.plan))])
    except PlanError as exc:
        span = Span(args.plan, exc.line, exc.column, exc.line, exc.column) if exc.line else Span.file_only(args.plan)
        return _failed(path, [Finding.of(codes.E762, exc.message, span)])
    ctx.note_input(Path(args.plan), args.plan)
    try:
        with open_ledger(path, create=False) as ledger:
            if ledger.plans(plan.name):
                first = ledger.plans(plan.name)[0]
                return _failed(path, [diag(E762_PLAN_EXISTS, Span.file_only(args.plan), name=plan.name,
                                           seq=first.seq, frozen=first.frozen_at)])
            latest = {e.route: e for e in latest_forecasts(ledger)}
            routes = list(plan.cohort) if plan.cohort is not None else list(latest)
            missing = [r for r in routes if r not in latest]
            if missing:
                what = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
                return _failed(path, [diag(E762_COHORT_NOT_FROZEN, Span.file_only(args.plan), routes=what)])
            if not routes:
                return _failed(path, [diag(E762_NOTHING_TO_PREREGISTER, Span.file_only(args.plan))])
            forecasts = [latest[r] for r in routes]
            modes = {entry_mode(e.document()) for e in forecasts}
            mode = plan.analysis.get("mode") or (modes.pop() if len(modes) == 1 else "prospective")
            recorded = recorded_outcomes(ledger)
            today = dt.datetime.now(dt.UTC)
            early = known_before(ledger.head().entries_seq + 1, utc_stamp(today), routes, recorded, dt.date.max,
                                 mode)
            if early:
                o = early[0]
                return _failed(path, [diag(E763_OUTCOMES_RECORDED, Span.file_only(args.plan),
                                           outcomes=plural(len(early), "outcome"), kind=o.kind, route=o.route,
                                           observed=o.observed, recorded=o.recorded_at)])
            policy = forecasts[0].policy
            one = len({e.policy for e in forecasts}) == 1
            record = ForecastRecord(plan.name, args.plan, policy if one else PolicyId("(several)", "", ""),
                                    plan_payload(plan, forecasts, (args.plan, sha256_hex(data)), scorer_identity()))
            try:
                entry = ledger.append_plan(record, inputs=[(args.plan, sha256_hex(data))], frozen_at=today)
            except LedgerError as exc:
                return _failed(path, append_diagnostics(path, exc, "nothing frozen"))
    except LedgerError as exc:
        return _failed(path, [ledger_diagnostic(path, str(exc))])
    payload: dict[str, Any] = {
        "ok": True,
        "ledger": str(path),
        "name": plan.name,
        "seq": entry.seq,
        "entry_sha256": entry.entry_sha256,
        "frozen_at": entry.frozen_at,
        "predictions": list(plan.predictions),
        "cohort": routes,
        "analysis": entry.document()["analysis"],
    }
    text = (f"froze plan {plan.name} in {path} (seq {entry.seq}, {entry.frozen_at}): "
            f"{plural(len(plan.predictions), 'prediction')} on {plural(len(routes), 'route')}\n"
            + "".join(f"  {p['id']}: {p['claim']}\n" for p in plan.predictions))
    return Outcome("prereg", payload, text=text)


def _failed(path: Path, diagnostics: list[Finding]) -> Outcome:
    from pcsc.cli.forecasting import messages

    return Outcome("prereg", {"ok": False, "ledger": str(path), "errors": messages(diagnostics, "error")},
                   diagnostics=diagnostics)
