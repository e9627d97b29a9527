"""What resolution and grading read: each route's latest frozen forecast and the stored
outcomes of a ledger, frozen packets from compile outputs, the outcome records an
outcomes file adds to a ledger, and the resolved history policy fitting learns from.

Pure reading and computing; the commands decide what to print.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from pcsc.base.canonical import dumps
from pcsc.base.files import Unreadable, read_text
from pcsc.diagnostics.messages import E721_CANNOT_READ, E721_NESTED_TOO_DEEPLY, E721_NOT_JSON, phrase
from pcsc.forecast.ledger import Entry, Ledger, Outcome, OutcomeKind, OutcomeRecord
from pcsc.forecast.outcomes import Outcomes, outcomes_from_records
from pcsc.forecast.resolve import (
    FrozenRoute,
    MilestoneResult,
    PacketError,
    frozen_routes,
    resolve_routes,
    route_outcomes,
)

# Blinded resolution (`pcsc resolve --blind`, then `--join MAP.json`): outcomes entered
# under blind ids are stored first, with a source starting `BLIND`; they grade nothing.
# Joining the map afterwards stores each again under its route, with a source starting
# `JOINED` that names the blind row, so the chain shows the map came after them.
BLIND = "blind: "
JOINED = "joined: blind outcome seq "
_JOINED_SEQ = re.compile(re.escape(JOINED) + r"([0-9]+)\b")


def blind_seq(source: str | None) -> int | None:
    """The seq of the blind outcome a joined outcome's ``source`` names; None for others."""
    match = _JOINED_SEQ.match(source or "")
    return None if match is None else int(match[1])


def is_blind(outcome: Outcome) -> bool:
    return (outcome.source or "").startswith(BLIND)


def graded_outcomes(ledger: Ledger) -> list[Outcome]:
    """The stored outcomes that grade forecasts, in seq order: every one but those still
    under blind ids. A joined outcome keeps the recording anchor and time of the blind
    outcome it joins: it was known from then on."""
    stored = ledger.outcomes()
    blind = {o.seq: o for o in stored if is_blind(o)}
    out = []
    for o in stored:
        if o.seq in blind:
            continue
        first = blind.get(blind_seq(o.source) or 0)
        out.append(o if first is None else attrs.evolve(o, forecast_seq=first.forecast_seq,
                                                         recorded_at=first.recorded_at))
    return out


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
        Recorded(o.seq, o.kind, o.route, o.observed_on, o.forecast_seq, o.recorded_at) for o in graded_outcomes(ledger)
    ]


def stored_outcomes(ledger: Ledger) -> Outcomes:
    """Every outcome stored in ``ledger``, as an outcomes document."""
    return outcomes_from_records(
        [(o.kind, o.route, dt.date.fromisoformat(o.observed), o.document(), o.source)
         for o in graded_outcomes(ledger)],
        "ledger",
    )


def merged_outcomes(ledger: Ledger, new: Outcomes) -> Outcomes:
    """The stored outcomes and those of ``new``, as if ``new`` had been stored (a dry run)."""
    old = stored_outcomes(ledger)
    return Outcomes(new.path, (*old.observations, *new.observations), (*old.labels, *new.labels))


def new_outcome_records(ledger: Ledger, outcomes: Outcomes, source: str, *, blind: bool = False) -> list[OutcomeRecord]:
    """The records of ``outcomes`` not yet stored in ``ledger`` (an outcome is stored
    once); with ``blind``, outcomes under blind ids, compared with those stored blind."""
    stored = [o for o in ledger.outcomes() if is_blind(o)] if blind else graded_outcomes(ledger)
    known = {(o.kind, o.route, o.observed, o.payload) for o in stored}
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
    frozen_at: dict[str, str] = attrs.field(factory=dict)  # each route's latest forecast's freezing time (UTC)


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
    return History(packets, milestones, labels, {e.route: (e.file, e.inputs) for e in forecasts},
                   {e.route: e.frozen_at for e in forecasts})


@attrs.frozen
class BlindMap:
    """The private map of `pcsc blind`: blinded route names -> the routes' own names (a
    route whose name carried no cue keeps it); ``sha256`` of the file as read."""

    routes: dict[str, str]
    sha256: str

    def route(self, blind_id: str) -> str:
        return self.routes.get(blind_id, blind_id)


def read_blind_map(text: str, sha256: str) -> BlindMap:
    """Read a `pcsc blind` map; raises ``ValueError`` saying what is wrong."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("format") != "pcsc-blind-map" or doc.get("version") != 1:
        raise ValueError("not a map `pcsc blind` wrote (format pcsc-blind-map, version 1)")
    routes = doc.get("routes")
    if not isinstance(routes, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in routes.items()):
        raise ValueError("its `routes` is not an object of blinded name -> route name")
    return BlindMap(dict(routes), sha256)


def join_records(ledger: Ledger, blind_map: BlindMap, by: str) -> list[OutcomeRecord]:
    """Every blind outcome not yet joined, under its route's own name, its source naming
    the blind row, when it was entered, the map and who joins it."""
    stored = ledger.outcomes()
    joined = {blind_seq(o.source) for o in stored}
    records = []
    for o in stored:
        if not is_blind(o) or o.seq in joined:
            continue
        kind: OutcomeKind = "label" if o.kind == "label" else "observation"
        source = (f"{JOINED}{o.seq} (entered {o.recorded_at}) through map sha256 {blind_map.sha256}; "
                  f"joined by {by}")
        records.append(OutcomeRecord(blind_map.route(o.route), o.observed_on, o.document(), kind, source))
    return records


def blind_outcomes(ledger: Ledger) -> list[Outcome]:
    """The outcomes stored under blind ids, in seq order."""
    return [o for o in ledger.outcomes() if is_blind(o)]
