"""`pcsc freeze FILE…|DIR [--ledger PATH]`: compile and rank the routes as `pcsc rank`
does, then store every route's packet in the ledger, in one transaction.

Nothing is stored when the input has errors (exit 1; the ledger is not even created),
nor when the write fails (a full disk, a read-only ledger): a new ledger appears only
whole, with its forecasts in it.
A route whose score GATE refused is frozen like any other, its score withheld.

`--retrospective` freezes routes whose as_of is in the past, for a retrospective pilot:
each entry records its mode, and `pcsc evaluate` grades a retrospective forecast only
against outcomes recorded in the ledger after it was frozen, and never pools the modes.

`--cert` stores each route's decision certificate (`pcsc compile --cert`, for that
route alone) in its entry's payload under `certificate`, beside the packet, so the
ledger's hash chain covers it; `pcsc ledger show --cert SEQ` writes it out.
"""

from __future__ import annotations

import argparse
from typing import Any

from pcsc.cli import options
from pcsc.cli.commands.rank import nothing, ranked
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import (
    E715_INPUT_HAS_ERRORS,
    E715_NOT_IN_THE_PAST,
    E911_NOTHING_FROZEN,
    diag,
)
from pcsc.diagnostics.model import Diagnostic, Span


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    options.ledger(p)
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    p.add_argument("--retrospective", action="store_true",
                   help="freeze routes whose as_of is in the past (a retrospective pilot): graded only against "
                   "outcomes recorded in the ledger after this freeze")
    p.add_argument("--cert", action="store_true",
                   help="also store each route's decision certificate in its entry, beside the packet (paths "
                   "relative to the current folder); `pcsc ledger show --cert SEQ` writes it out for "
                   "`pcsc verify-cert`")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    import datetime as dt

    from pcsc.cli.forecasting import append_diagnostics
    from pcsc.forecast.freeze import Mode, freeze_inputs, freeze_records, in_input_order, not_in_the_past
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.stores import create_and_append
    from pcsc.forecast.views import freeze_text, frozen_row

    path = ctx.ledger_path()
    session, routes = ctx.load(args.files)
    compiled = [
        c for c in (session.compile_route(r) for r in ctx.progress(routes, len(routes), "compiling")) if c is not None
    ]
    diagnostics = session.diags.sorted()

    def refuse(*problems: Diagnostic) -> Outcome:
        payload: dict[str, Any] = {"ledger": str(path), "ok": False, "error": problems[0].message, "entries": []}
        return Outcome("freeze", payload, diagnostics=[*diagnostics, *problems])

    if session.diags.has_errors:
        return refuse(diag(E715_INPUT_HAS_ERRORS, Span.file_only(str(path))))
    if not compiled:
        return refuse(nothing(args.files, "freeze"))
    mode: Mode = "retrospective" if args.retrospective else "prospective"
    today = dt.datetime.now(dt.UTC).date()
    late = not_in_the_past(compiled, today) if args.retrospective else []
    if late:
        names = ", ".join(f"{c.route.name} (as_of {c.route.as_of})" for c in late)
        return refuse(diag(E715_NOT_IN_THE_PAST, Span.file_only(late[0].route.file), today=today, routes=names))
    choice, ranking, warnings = ranked(compiled)
    diagnostics += warnings
    in_order = in_input_order(compiled, ranking)
    inputs = freeze_inputs(session)
    records = freeze_records(in_order, mode)
    if args.cert:
        from pcsc.certify.emit import CertificateError
        from pcsc.cli.certify import certify_records

        try:
            records = certify_records(records, [r.compiled for r in in_order], session)
        except CertificateError as exc:
            return refuse(diag(E911_NOTHING_FROZEN, Span.file_only(str(path)), problem=exc))
    try:
        entries = create_and_append(path, records, inputs=inputs)
    except LedgerError as exc:
        return refuse(*append_diagnostics(path, exc, "nothing frozen"))
    for shown, sha256 in inputs[len(session.inputs):]:  # the libraries, after the route files
        ctx.note_hashed_input(shown, sha256)
    frozen = list(zip(entries, in_order, strict=True))
    payload = {
        "ledger": str(path),
        "ok": True,
        "mode": mode,
        "frozen_at": entries[0].frozen_at,
        "key": choice.key,
        "warnings": list(choice.warnings),
        "entries": [frozen_row(e, r) for e, r in frozen],
    }
    return Outcome("freeze", payload, text=freeze_text(path, frozen, mode), diagnostics=diagnostics)
