"""The ledger as a score table: each route's latest frozen forecast, one row each, with
its entry hash, its scores and its route label as of a date (`pcsc ledger export`).

The CSV is what `pcsc evaluate --scores` grades: `route` is the case id, `outcome` the
label (``positive``, ``negative``, ``mixed``, or empty when none is known yet), and the
numeric columns `score`, `ungated_score`, `criteria_score` and the baselines
`flat_product` (Πp) and `flat_npv` (Πp·V − Σc) are the scorers. JSON lines
carry the same columns and the frozen packet itself. Pure: the same ledger, mode and date
give the same bytes.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcsc.base.canonical import dumps
from pcsc.base.files import Unreadable, read_bytes, read_text
from pcsc.diagnostics.messages import (
    E732_CANNOT_READ_SIDECAR,
    E732_CANNOT_READ_TABLE,
    E732_DOES_NOT_MATCH,
    E732_NOT_A_SHA256SUM_LINE,
    E732_OF_ANOTHER_FILE,
    phrase,
)
from pcsc.forecast.ledger import Entry
from pcsc.forecast.outcomes import Outcomes

COLUMNS: tuple[str, ...] = (
    "route", "file", "mode", "frozen_at", "entry_sha256", "payload_sha256", "policy", "verdict", "bucket",
    "score", "ungated_score", "criteria_score", "flat_product", "flat_npv", "outcome", "outcome_bucket",
    "outcome_date",
)


def export_rows(forecasts: Sequence[Entry], outcomes: Outcomes, as_of: dt.date) -> list[dict[str, Any]]:
    """One row per forecast (in the order given): the columns of `COLUMNS`, and ``packet``."""
    from pcsc.forecast.baselines import flat_npv, flat_product
    from pcsc.forecast.freeze import entry_mode
    from pcsc.forecast.resolve import route_outcomes

    labels = {o.route: o for o in route_outcomes(outcomes, as_of, {e.route for e in forecasts})}
    rows = []
    for e in forecasts:
        doc = e.document()
        packet = doc["packet"]
        label = labels.get(e.route)
        rows.append({
            "route": e.route,
            "file": e.file,
            "mode": entry_mode(doc),
            "frozen_at": e.frozen_at,
            "entry_sha256": e.entry_sha256,
            "payload_sha256": e.payload_sha256,
            "policy": f"{e.policy.id}@{e.policy.version}",
            "verdict": packet.get("verdict"),
            "bucket": packet.get("bucket"),
            "score": packet.get("score"),
            "ungated_score": packet.get("ungated_score"),
            "criteria_score": packet.get("criteria_score"),
            "flat_product": flat_product(packet),  # the baselines `evaluate` grades beside the score
            "flat_npv": flat_npv(packet),
            "outcome": None if label is None else label.label,
            "outcome_bucket": None if label is None else label.bucket,
            "outcome_date": None if label is None else label.date.isoformat(),
            "packet": packet,
        })
    return rows


#: What a spreadsheet reads as the start of a formula when a cell begins with it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def spreadsheet_safe(text: str) -> str:
    """A text cell as no spreadsheet evaluates it: one that begins with `=`, `+`, `-`,
    `@`, a tab or a carriage return gets a leading `'` (which a spreadsheet shows as
    text and does not print), unless the whole cell is a plain number."""
    if text.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return spreadsheet_safe(str(value))


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as CSV (``\\n`` line ends, a header row; null is an empty cell; a text
    cell a spreadsheet would evaluate is neutralised by `spreadsheet_safe`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in COLUMNS])
    return out.getvalue()


def to_jsonl(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as JSON lines: one canonical object per line, the packet included."""
    return "".join(dumps(row) + "\n" for row in rows)


def sidecar_text(data: bytes, name: str) -> str:
    """A `sha256sum` line for ``data`` written as the file ``name``."""
    return f"{hashlib.sha256(data).hexdigest()}  {name}\n"


class SidecarError(Exception):
    """A checksum sidecar that cannot be read, or that the file does not match."""


def check_sidecar(table: Path, sidecar: Path) -> str:
    """The SHA-256 of ``table``, checked against the `sha256sum` line of ``sidecar``
    (its file name, when given, must be the table's). Raises `SidecarError`."""
    try:
        line = read_text(sidecar).strip().splitlines()
    except Unreadable as exc:
        raise SidecarError(phrase(E732_CANNOT_READ_SIDECAR, sidecar=sidecar, reason=exc.reason)) from None
    parts = line[0].split(None, 1) if line else []
    expected = parts[0].lower() if parts else ""
    if len(expected) != 64 or any(ch not in "0123456789abcdef" for ch in expected):
        raise SidecarError(phrase(E732_NOT_A_SHA256SUM_LINE, sidecar=sidecar, table=table.name))
    named = parts[1].strip().lstrip("*") if len(parts) > 1 else table.name
    if Path(named).name != table.name:
        raise SidecarError(phrase(E732_OF_ANOTHER_FILE, sidecar=sidecar, named=named, table=table.name))
    try:
        actual = hashlib.sha256(read_bytes(table)).hexdigest()
    except Unreadable as exc:
        raise SidecarError(phrase(E732_CANNOT_READ_TABLE, table=table, reason=exc.reason)) from None
    if actual != expected:
        raise SidecarError(phrase(E732_DOES_NOT_MATCH, sidecar=sidecar, expected=expected, actual=actual))
    return actual
