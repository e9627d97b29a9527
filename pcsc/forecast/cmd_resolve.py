"""`pcsc resolve OUTCOMES.toml --packets PACKETS.json [--as-of DATE] [--format text|json]`.

Resolves the milestones of frozen packets (for now: `pcsc compile --format json`
outputs) against an outcomes file. The core is the pure `resolve_packets`; this
module reads the files, reports problems path-addressed, and prints the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pcsc.forecast.outcomes import OutcomesError, load_outcomes
from pcsc.forecast.resolve import (
    STATUSES,
    FrozenRoute,
    MilestoneResult,
    PacketError,
    RouteOutcome,
    check_outcomes,
    frozen_routes,
    resolve_routes,
    route_outcomes,
)
from pcsc.render.tables import ALL, table


def add_resolve_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of `pcsc resolve`, for the command-line parser."""
    p.add_argument("outcomes", metavar="OUTCOMES.toml", help="observations and labels (docs/outcomes.md)")
    p.add_argument(
        "--packets",
        action="append",
        required=True,
        metavar="PACKETS.json",
        help="frozen packets: a `pcsc compile --format json` output (repeatable)",
    )
    p.add_argument("--as-of", metavar="DATE", help="the resolution date (YYYY-MM-DD; default: today in UTC)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def resolution_date(text: str | None) -> dt.date:
    """`--as-of`: an ISO date; by default today in UTC."""
    from pcsc.cli import UsageError

    if text is None:
        return dt.datetime.now(dt.UTC).date()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--as-of: expected a date (YYYY-MM-DD), got `{text}`") from None


def read_packets(path: str) -> list[FrozenRoute]:
    """The frozen routes of one JSON file; raises PacketError."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PacketError(path, [f"cannot read the file: {exc.strerror or exc}"]) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PacketError(path, [f"not JSON: {exc}"]) from None
    return frozen_routes(doc, path)


def run_resolve(args: argparse.Namespace) -> int:
    from pcsc import __version__
    from pcsc.cli import EXIT_INPUT, EXIT_OK, print_json

    as_of = resolution_date(args.as_of)
    fmt = getattr(args, "format", "text")
    errors: list[str] = []
    warnings: list[str] = []
    routes: list[FrozenRoute] = []
    outcomes = None
    try:
        outcomes = load_outcomes(args.outcomes)
    except OutcomesError as exc:
        errors.extend(f"{exc.path}: {m}" for m in exc.messages)
    packet_paths = args.packets if isinstance(args.packets, list) else [args.packets]
    for path in packet_paths:
        try:
            routes.extend(read_packets(path))
        except PacketError as exc:
            errors.extend(f"{exc.path}: {m}" for m in exc.messages)
    if outcomes is not None and not errors:
        findings = check_outcomes(routes, outcomes)
        errors.extend(f"{outcomes.path}: {m}" for m in findings.errors)
        warnings.extend(f"{outcomes.path}: {m}" for m in findings.warnings)
    if errors or outcomes is None:
        if fmt == "json":
            print_json({"pcsc": __version__, "ok": False, "errors": errors, "warnings": warnings})
        _stderr(errors, warnings)
        return EXIT_INPUT

    milestones = resolve_routes(routes, outcomes, as_of)
    labelled = route_outcomes(outcomes, as_of, {r.route for r in routes})
    if fmt == "json":
        print_json(
            {
                "pcsc": __version__,
                "ok": True,
                "as_of": as_of.isoformat(),
                "outcomes": outcomes.path,
                "packets": packet_paths,
                "milestones": [m.to_json() for m in milestones],
                "routes": [r.to_json() for r in labelled],
                "summary": _summary(milestones),
                "warnings": warnings,
                "errors": [],
            }
        )
    else:
        _stderr([], warnings)
        sys.stdout.write(resolve_text(milestones, labelled, as_of))
    return EXIT_OK


def _stderr(errors: list[str], warnings: list[str]) -> None:
    for kind, lines in (("error", errors), ("warning", warnings)):
        for line in lines:
            path, _, message = line.partition(": ")
            sys.stderr.write(f"{path}: {kind}: {message}\n")


def _summary(milestones: list[MilestoneResult]) -> dict[str, int]:
    counts = Counter(m.status for m in milestones)
    return {s: counts.get(s, 0) for s in STATUSES}


def resolve_text(milestones: list[MilestoneResult], labelled: list[RouteOutcome], as_of: dt.date) -> str:
    counts = _summary(milestones)
    lines = [f"resolved as of {as_of}: " + ", ".join(f"{n} {s}" for s, n in counts.items())]
    rows = [
        (
            m.route,
            m.transition,
            "—" if m.due is None else m.due.isoformat(),
            m.status,
            "—" if m.decided_on is None else m.decided_on.isoformat(),
            m.reason,
        )
        for m in milestones
    ]
    lines.extend(_table([("route", "transition", "due", "status", "decided", "reason"), *rows]))
    if labelled:
        lines.append("")
        lines.append("route labels:")
        lines.extend(
            _table(
                [("route", "label", "date", "bucket")]
                + [(r.route, r.label, r.date.isoformat(), r.bucket or "") for r in labelled]
            )
        )
    return "\n".join(lines) + "\n"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    return table(rows, left=ALL, indent="")
