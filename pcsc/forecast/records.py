"""What resolution and grading read: each route's latest frozen forecast and the stored
outcomes of a ledger, frozen packets from compile outputs, the outcome records an
outcomes file adds to a ledger, and the resolved history policy fitting learns from.

Pure reading and computing; the commands decide what to print.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import attrs

from pcsc.base.canonical import dumps
from pcsc.base.files import Unreadable, read_text
from pcsc.diagnostics.messages import E721_CANNOT_READ, E721_NESTED_TOO_DEEPLY, E721_NOT_JSON, phrase
from pcsc.forecast.ledger import Entry, Ledger, OutcomeKind, OutcomeRecord
from pcsc.forecast.outcomes import Outcomes, outcomes_from_records
from pcsc.forecast.resolve import (
    FrozenRoute,
    MilestoneResult,
    PacketError,
    frozen_routes,
    resolve_routes,
    route_outcomes,
)


def latest_forecasts(ledger: Ledger, mode: str | None = None) -> list[Entry]:
    """Each route's latest frozen forecast (of ``mode`` only, when given: prospective or
    retrospective), in order of first freezing."""
    from pcsc.forecast.freeze import entry_mode

    latest: dict[str, Entry] = {}
    for entry in ledger.entries():
        if mode is None or entry_mode(entry.document()) == mode:
            latest[entry.route] = entry
    return list(latest.values())


@attrs.frozen
class Recorded:
    """When an outcome was recorded: its ledger seq and time, and the head of the forecast
    chain then (a forecast with a higher seq was frozen after it was recorded)."""

    seq: int
    kind: str
    route: str
    observed: dt.date
    forecast_seq: int
    recorded_at: str


def recorded_outcomes(ledger: Ledger) -> list[Recorded]:
    """Every stored outcome's recording anchor, in seq order."""
    return [
        Recorded(o.seq, o.kind, o.route, o.observed_on, o.forecast_seq, o.recorded_at) for o in ledger.outcomes()
    ]


def stored_outcomes(ledger: Ledger) -> Outcomes:
    """Every outcome stored in ``ledger``, as an outcomes document."""
    return outcomes_from_records(
        [(o.kind, o.route, dt.date.fromisoformat(o.observed), o.document(), o.source) for o in ledger.outcomes()],
        "ledger",
    )


def merged_outcomes(ledger: Ledger, new: Outcomes) -> Outcomes:
    """The stored outcomes and those of ``new``, as if ``new`` had been stored (a dry run)."""
    old = stored_outcomes(ledger)
    return Outcomes(new.path, (*old.observations, *new.observations), (*old.labels, *new.labels))


def new_outcome_records(ledger: Ledger, outcomes: Outcomes, source: str) -> list[OutcomeRecord]:
    """The records of ``outcomes`` not yet stored in ``ledger`` (an outcome is stored once)."""
    known = {(o.kind, o.route, o.observed, o.payload) for o in ledger.outcomes()}
    records = []
    groups: tuple[tuple[OutcomeKind, Sequence[Any]], ...] = (
        ("observation", outcomes.observations),
        ("label", outcomes.labels),
    )
    for kind, items in groups:
        for item in items:
            key = (kind, item.route, item.date.isoformat(), dumps(item.payload()))
            if key not in known:
                known.add(key)
                records.append(OutcomeRecord(item.route, item.date, item.payload(), kind, source))
    return records


def read_packets(path: str) -> list[FrozenRoute]:
    """The frozen routes of one JSON file (a `pcsc compile --format json` output);
    raises ``PacketError``."""
    try:
        doc = json.loads(read_text(path))
    except Unreadable as exc:
        raise PacketError(path, [phrase(E721_CANNOT_READ, reason=exc.reason)]) from None
    except json.JSONDecodeError as exc:
        raise PacketError(path, [phrase(E721_NOT_JSON, reason=exc)]) from None
    except RecursionError:  # the decoder recurses once per nested array or object
        raise PacketError(path, [phrase(E721_NESTED_TOO_DEEPLY)]) from None
    return frozen_routes(doc, path)


@attrs.frozen
class History:
    """The latest frozen packets of a ledger, their milestones resolved as of a date,
    and the route labels known then (True for positive)."""

    packets: list[dict[str, Any]]
    milestones: list[MilestoneResult]
    labels: dict[str, bool]
    # each route's frozen file (as given when frozen) and the hashes of the texts it read
    frozen_inputs: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = attrs.field(factory=dict)


def resolved_history(ledger: Ledger, as_of: dt.date) -> History:
    """What `pcsc policy fit` and `pcsc policy compare` learn from."""
    forecasts = latest_forecasts(ledger)
    outcomes = stored_outcomes(ledger)
    packets = [e.document()["packet"] for e in forecasts]
    routes = frozen_routes([e.document() for e in forecasts], "ledger")
    milestones = resolve_routes(routes, outcomes, as_of)
    labels = {
        o.route: o.label == "positive"
        for o in route_outcomes(outcomes, as_of)
        if o.label in ("positive", "negative")
    }
    return History(packets, milestones, labels, {e.route: (e.file, e.inputs) for e in forecasts})
