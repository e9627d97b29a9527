"""The commands `pcsc rank`, `pcsc freeze`, `pcsc ledger verify` and `pcsc ledger show`.

Each `run_*` takes the parsed arguments and returns the exit code. Arguments read:

- rank:    ``files``, ``format`` (text|json), ``lib_path``, ``policy_path``, ``coverage``
- freeze:  the same as rank, and ``ledger`` (a path; None for `.pcsc/ledger.sqlite`)
- ledger verify: ``ledger``, ``format``
- ledger show:   ``ledger``, ``route`` (None for all), ``format``

Exit codes: 0 success; 1 errors in the input (diagnostics, no routes, a file that is
not a ledger, a broken chain); 2 usage (routes whose policies name different rank
keys). A route whose score GATE refused is ranked and frozen like any other: it is
not an error here (`pcsc gate` is the command that exits 3).

Helpers come from `pcsc.cli`, imported inside the functions: `pcsc.cli` imports this
module lazily, and importing it back at module level would make a cycle.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcsc import __version__
from pcsc.forecast.freeze import freeze_inputs, freeze_records, in_input_order
from pcsc.forecast.ledger import DEFAULT_PATH, Entry, Ledger, LedgerError, Outcome
from pcsc.forecast.rank import KeyChoice, Ranked, RankKeyConflict, choose_key, rank, rank_packet, rank_text
from pcsc.pipeline import Compiled, Session
from pcsc.render.tables import all_but, table


def _rank(compiled: list[Compiled]) -> tuple[KeyChoice, list[Ranked]]:
    from pcsc.cli import UsageError

    try:
        choice = choose_key(compiled)
    except RankKeyConflict as exc:
        raise UsageError(str(exc)) from None
    return choice, ([] if choice.key is None else rank(compiled, choice.key))


def _warn(lines: tuple[str, ...]) -> None:
    for line in lines:
        sys.stderr.write(f"pcsc: warning: {line}\n")


def _error(message: str) -> None:
    sys.stderr.write(f"pcsc: error: {message}\n")


def _diagnostics_json(session: Session) -> list[dict[str, Any]]:
    from pcsc.render.diagnostics import to_json

    return [to_json(d) for d in session.diags.sorted()]


def run_rank(args: argparse.Namespace) -> int:
    """`pcsc rank FILE…|DIR`: every route that compiles, ranked (see pcsc.forecast.rank)."""
    from pcsc.cli import EXIT_INPUT, EXIT_OK, _compile_all, emit_diagnostics, print_json

    session, compiled = _compile_all(args)
    if args.format == "text":
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
    choice, ranked = _rank(compiled)
    if args.format == "json":
        print_json(rank_packet(ranked, choice, _diagnostics_json(session), session.inputs))
    elif ranked:
        sys.stdout.write(rank_text(ranked, choice) + "\n")
    _warn(choice.warnings)
    if session.diags.has_errors:
        return EXIT_INPUT
    if not ranked:
        _error("nothing to rank: no routes in " + ", ".join(args.files))
        return EXIT_INPUT
    return EXIT_OK


def run_freeze(args: argparse.Namespace) -> int:
    """`pcsc freeze FILE…|DIR [--ledger PATH]`: compile, rank, and store every route's
    packet in one transaction; nothing is stored when the input has errors."""
    from pcsc.cli import EXIT_INPUT, EXIT_OK, _compile_all, emit_diagnostics, print_json

    session, compiled = _compile_all(args)
    path = Path(args.ledger) if getattr(args, "ledger", None) else DEFAULT_PATH
    if args.format == "text":
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)

    def refuse(message: str) -> int:
        if args.format == "json":
            print_json({"pcsc": __version__, "ledger": str(path), "ok": False, "error": message, "entries": [],
                        "diagnostics": _diagnostics_json(session)})
        _error(message)
        return EXIT_INPUT

    if session.diags.has_errors:
        return refuse("nothing frozen: the input has errors")
    if not compiled:
        return refuse("nothing to freeze: no routes in " + ", ".join(args.files))
    choice, ranked = _rank(compiled)
    _warn(choice.warnings)
    ranked_in_input_order = in_input_order(compiled, ranked)
    records = freeze_records(ranked_in_input_order)
    try:
        with Ledger.open(path, create=True) as ledger:
            entries = ledger.append_forecasts(records, inputs=freeze_inputs(session))
    except LedgerError as exc:
        return refuse(f"nothing frozen: {exc}")
    frozen = list(zip(entries, ranked_in_input_order, strict=True))
    if args.format == "json":
        print_json({
            "pcsc": __version__,
            "ledger": str(path),
            "ok": True,
            "frozen_at": entries[0].frozen_at,
            "key": choice.key,
            "warnings": list(choice.warnings),
            "inputs": [{"path": p, "sha256": h} for p, h in freeze_inputs(session)],
            "diagnostics": _diagnostics_json(session),
            "entries": [_frozen_row(e, r) for e, r in frozen],
        })
    else:
        sys.stdout.write(_freeze_text(path, frozen) + "\n")
    return EXIT_OK


def _frozen_row(e: Entry, r: Ranked) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "route": e.route,
        "file": e.file,
        "rank": r.rank,
        "verdict": r.compiled.decision.verdict,
        "score": r.compiled.decision.score,
        "payload_sha256": e.payload_sha256,
        "entry_sha256": e.entry_sha256,
    }


def _table(rows: Sequence[tuple[str, ...]], right: set[int]) -> list[str]:
    return table(rows, left=all_but(right, len(rows[0])), indent="")


def _freeze_text(path: Path, frozen: list[tuple[Entry, Ranked]]) -> str:
    entries = [e for e, _ in frozen]
    n = len(entries)
    head = (
        f"froze {n} forecast{'s' if n != 1 else ''} into {path} at {entries[0].frozen_at} "
        f"(seq {entries[0].seq}–{entries[-1].seq}, one transaction)"
    )
    rows: list[tuple[str, ...]] = [("seq", "rank", "route", "file", "verdict", "entry_sha256")]
    for e, r in frozen:
        rows.append((str(e.seq), str(r.rank), e.route, e.file, r.compiled.decision.verdict, e.entry_sha256))
    return head + "\n" + "\n".join(_table(rows, {0, 1}))


def _open_existing(args: argparse.Namespace) -> tuple[Path, Ledger | None, int]:
    from pcsc.cli import EXIT_INPUT, EXIT_OK, print_json

    path = Path(args.ledger) if getattr(args, "ledger", None) else DEFAULT_PATH
    try:
        return path, Ledger.open(path, create=False), EXIT_OK
    except LedgerError as exc:
        if args.format == "json":
            print_json({"pcsc": __version__, "ledger": str(path), "ok": False, "error": str(exc)})
        _error(str(exc))
        return path, None, EXIT_INPUT


def run_ledger_verify(args: argparse.Namespace) -> int:
    """`pcsc ledger verify [--ledger PATH]`: 0 when both chains are intact, else 1 with
    the first bad entry named."""
    from pcsc.cli import EXIT_INPUT, EXIT_OK, print_json

    path, ledger, code = _open_existing(args)
    if ledger is None:
        return code
    with ledger:
        result = ledger.verify()
    if args.format == "json":
        first = result.first_bad
        print_json({
            "pcsc": __version__,
            "ledger": str(path),
            "ok": result.ok,
            "entries": result.entries,
            "outcomes": result.outcomes,
            "heads": {"entries": result.entries_head, "outcomes": result.outcomes_head},
            "first_bad": None if first is None else {"table": first.table, "seq": first.seq, "problem": first.message},
            "problems": [{"table": p.table, "seq": p.seq, "problem": p.message} for p in result.problems],
        })
    elif result.ok:
        sys.stdout.write(
            f"ok: {path} is intact: {result.entries} forecast{'s' if result.entries != 1 else ''}, "
            f"{result.outcomes} outcome{'s' if result.outcomes != 1 else ''}\n"
            f"  head of forecasts {result.entries_head}\n  head of outcomes  {result.outcomes_head}\n"
        )
    else:
        for problem in result.problems:
            sys.stderr.write(f"{path}: error: {problem}\n")
    return EXIT_OK if result.ok else EXIT_INPUT


def _entry_json(e: Entry) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "kind": e.kind,
        "route": e.route,
        "file": e.file,
        "policy": e.policy.as_json(),
        "pcsc": e.pcsc_version,
        "inputs": [{"path": p, "sha256": h} for p, h in e.inputs],
        "frozen_at": e.frozen_at,
        "payload": e.document(),
        "payload_sha256": e.payload_sha256,
        "prev_sha256": e.prev_sha256,
        "entry_sha256": e.entry_sha256,
    }


def _outcome_json(o: Outcome) -> dict[str, Any]:
    return {
        "seq": o.seq,
        "kind": o.kind,
        "route": o.route,
        "observed": o.observed,
        "source": o.source,
        "forecast": {"seq": o.forecast_seq, "sha256": o.forecast_sha256},
        "pcsc": o.pcsc_version,
        "recorded_at": o.recorded_at,
        "payload": o.document(),
        "payload_sha256": o.payload_sha256,
        "prev_sha256": o.prev_sha256,
        "entry_sha256": o.entry_sha256,
    }


def _entry_cells(e: Entry) -> tuple[str, ...]:
    doc = e.document()
    packet = doc.get("packet", {}) if isinstance(doc, dict) else {}
    rank_info = doc.get("rank", {}) if isinstance(doc, dict) else {}
    score = packet.get("score")
    rank_cell = f"{rank_info['rank']}/{rank_info['of']}" if "rank" in rank_info and "of" in rank_info else "—"
    return (
        str(e.seq),
        e.frozen_at,
        e.route,
        e.file,
        f"{e.policy.id}@{e.policy.version}",
        str(packet.get("verdict", "—")),
        "—" if not isinstance(score, (int, float)) else f"{score:,.2f}",
        rank_cell,
        e.entry_sha256[:16],
    )


def run_ledger_show(args: argparse.Namespace) -> int:
    """`pcsc ledger show [--ledger PATH] [--route R]`: the frozen forecasts and recorded
    outcomes, oldest first."""
    from pcsc.cli import EXIT_INPUT, EXIT_OK, print_json

    path, ledger, code = _open_existing(args)
    if ledger is None:
        return code
    route = getattr(args, "route", None)
    try:
        with ledger:
            entries, outcomes = ledger.entries(route), ledger.outcomes(route)
        if args.format == "json":
            body = {
                "pcsc": __version__,
                "ledger": str(path),
                "route": route,
                "entries": [_entry_json(e) for e in entries],
                "outcomes": [_outcome_json(o) for o in outcomes],
            }
        else:
            text = _show_text(path, route, entries, outcomes)
    except (LedgerError, ValueError) as exc:  # a row edited behind the ledger's back
        _error(f"{path}: cannot show the ledger: {exc}; `pcsc ledger verify` names the bad row")
        return EXIT_INPUT
    if args.format == "json":
        print_json(body)
    else:
        sys.stdout.write(text + "\n")
    return EXIT_OK


def _show_text(path: Path, route: str | None, entries: list[Entry], outcomes: list[Outcome]) -> str:
    what = f" for route {route}" if route else ""
    out = [f"{path}: {len(entries)} forecast{'s' if len(entries) != 1 else ''}{what}"]
    if entries:
        rows: list[tuple[str, ...]] = [
            ("seq", "frozen_at", "route", "file", "policy", "verdict", "score", "rank", "entry_sha256")
        ]
        out += _table(rows + [_entry_cells(e) for e in entries], {0, 6, 7})
    out.append(f"{len(outcomes)} outcome{'s' if len(outcomes) != 1 else ''}{what}")
    if outcomes:
        orows: list[tuple[str, ...]] = [("seq", "recorded_at", "route", "observed", "kind", "payload", "entry_sha256")]
        orows += [(str(o.seq), o.recorded_at, o.route, o.observed, o.kind, o.payload, o.entry_sha256[:16])
                  for o in outcomes]
        out += _table(orows, {0})
    return "\n".join(out)
