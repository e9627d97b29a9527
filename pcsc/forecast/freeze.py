"""What `pcsc freeze` stores, built without the command line: the forecast records of
ranked routes and the inputs hashed beside them.

Used by the `freeze` command and by the library API
(`pcsc.Ledger.freeze`), so that both write the same records. This module builds
records only; it opens no ledger and prints nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Literal

from pcsc.analysis.rank import Ranked
from pcsc.base.canonical import sha256_hex
from pcsc.compiler.session import Compiled, Session
from pcsc.forecast.ledger import ForecastRecord, PolicyId


def freeze_inputs(session: Session) -> list[tuple[str, str]]:
    """Every text the run read, hashed: the route files (as given), then the obligation
    libraries they use (`Session.inputs` holds only the former)."""
    inputs = list(session.inputs)
    given = {path for path, _ in inputs}
    inputs += [(shown, sha256_hex(text)) for shown, text in session.sources.items() if shown not in given]
    return inputs


Mode = Literal["prospective", "retrospective"]
MODES: tuple[Mode, ...] = ("prospective", "retrospective")


def freeze_records(ranked: Sequence[Ranked], mode: Mode = "prospective") -> list[ForecastRecord]:
    """One `ForecastRecord` per ranked route, in the order given. The payload is
    ``{"packet": <the route's packet, as in `pcsc compile --format json`>, "rank":
    <its rank among the routes frozen together>, "mode": <prospective|retrospective>}``."""
    from pcsc.render.packet import route_packet

    records = []
    for r in ranked:
        c = r.compiled
        policy = PolicyId(c.policy.policy.id, c.policy.policy.version, c.policy.sha256)
        payload = {"packet": route_packet(c), "rank": r.info(), "mode": mode}
        records.append(ForecastRecord(c.route.name, c.route.file, policy, payload))
    return records


def entry_mode(document: object) -> Mode:
    """The mode of a frozen entry's payload; entries frozen before modes were recorded
    are prospective (the only mode there was)."""
    mode = document.get("mode") if isinstance(document, dict) else None
    return "retrospective" if mode == "retrospective" else "prospective"


def not_in_the_past(compiled: Sequence[Compiled], today: dt.date) -> list[Compiled]:
    """The routes a retrospective freeze refuses: those whose as_of is not before ``today``."""
    return [c for c in compiled if c.route.as_of >= today]


def in_input_order(compiled: Sequence[Compiled], ranked: Sequence[Ranked]) -> list[Ranked]:
    """``ranked`` (which is in rank order) put back in the order the routes were compiled:
    the order `pcsc freeze` stores them in."""
    by_compiled = {id(r.compiled): r for r in ranked}
    return [by_compiled[id(c)] for c in compiled]
