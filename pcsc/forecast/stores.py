"""Where a ledger lives: a file (SQLite, `pcsc.forecast.ledger`) or a database server
(`postgresql://…`, `pcsc.forecast.ledger_pg`). The commands and the API open ledgers
here, so that the SQLite module never needs to know the database backend, which is
built on it."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

from pcsc.forecast import ledger as sqlite_ledger
from pcsc.forecast.ledger import Entry, ForecastRecord, Ledger, LedgerURL, ledger_location


def _database(path: LedgerURL) -> type[Ledger]:
    from pcsc.forecast.ledger_pg import PostgresLedger

    return PostgresLedger


def open_ledger(path: Path | str | os.PathLike[str] = sqlite_ledger.DEFAULT_PATH, *, create: bool = True) -> Ledger:
    """The ledger at ``path``: a SQLite file, or a PostgreSQL ledger for an address
    (`Ledger.open` for what ``create`` does and what it raises)."""
    where = ledger_location(path)
    if isinstance(where, LedgerURL):
        return _database(where).open(where, create=create)
    return Ledger.open(where, create=create)


def create_and_append(
    path: Path | str,
    records: Sequence[ForecastRecord],
    *,
    inputs: Sequence[tuple[str, str]],
    pcsc_version: str | None = None,
    frozen_at: dt.datetime | None = None,
) -> list[Entry]:
    """`pcsc.forecast.ledger.create_and_append` for a file; for a database, the tables
    are created (when absent) in the transaction that appends the first forecasts."""
    where = ledger_location(path)
    if not isinstance(where, LedgerURL):
        return sqlite_ledger.create_and_append(
            where, records, inputs=inputs, pcsc_version=pcsc_version, frozen_at=frozen_at
        )
    if not records:
        return []
    with _database(where).open(where, create=True) as ledger:
        return ledger.append_forecasts(records, inputs=inputs, pcsc_version=pcsc_version, frozen_at=frozen_at)
