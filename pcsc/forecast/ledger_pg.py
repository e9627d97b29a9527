"""The forecast ledger in PostgreSQL (`--ledger postgresql://…`, the extra ``pcsc[postgres]``).

For teams whose build pipelines freeze from many machines. The same ledger as the
SQLite file (`pcsc.forecast.ledger`): the same tables and columns, the same hash chains
(`forecast_hash`, `outcome_hash`), the same head token, and `verify` runs the same chain
check (`check_chains`) on the rows. What differs is where each guarantee is enforced:

- **Append-only, in the database.** Row triggers refuse every UPDATE and DELETE on
  `entries`, `outcomes` and `pcsc_identity`, statement triggers refuse TRUNCATE, and a
  BEFORE INSERT trigger refuses a row that does not take the next seq and chain to the
  last. ``PUBLIC`` is granted nothing on the tables. Who owns the tables can still drop
  a trigger, so a team creates the ledger as one role and lets its pipelines write as
  another, granted only ``SELECT, INSERT`` (see docs/forecast.md): that role cannot
  update, delete, truncate, disable a trigger or alter a table. `verify` checks that
  every guard is present, enabled, and runs the function body this version creates.
- **Concurrent writers queue.** Each append is one transaction that first takes a
  transaction-level advisory lock of the ledger's schema (needing no privilege), then
  reads the heads and inserts: writers from any number of machines are serialised, and
  a writer that dies mid-transaction (a killed process, a lost connection) is rolled
  back by the server, its lock released, nothing of it kept.
- **Read in one snapshot.** `head` and `verify` read in one REPEATABLE READ transaction.
- **Where.** The tables live in the first schema of the connection's ``search_path``
  (``?options=-csearch_path%3Dteam_ledger`` in the address chooses one), so one
  database can hold several ledgers. ``pcsc_identity`` holds the PCSC mark and the
  schema version.

psycopg 3 is imported only here, and only when a ledger address is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pcsc.extras import require
from pcsc.forecast.ledger import (
    _ENTRY_COLUMNS,
    _OUTCOME_COLUMNS,
    APPLICATION_ID,
    DEFAULT_PATH,
    GENESIS,
    SCHEMA_VERSION,
    Entry,
    Head,
    HeadToken,
    Ledger,
    LedgerError,
    LedgerURL,
    Outcome,
    Problem,
    Verification,
    _outcome,
    check_chains,
    ledger_location,
)

LOCK_TIMEOUT_S = 30

_REFUSE = """
BEGIN
    RAISE EXCEPTION 'the PCSC ledger is append-only: % on % is refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END
"""
_IN_ORDER = """
DECLARE
    last_seq bigint;
    last_sha text;
BEGIN
    EXECUTE format('SELECT seq, entry_sha256 FROM %I.%I ORDER BY seq DESC LIMIT 1', TG_TABLE_SCHEMA, TG_TABLE_NAME)
        INTO last_seq, last_sha;
    IF NEW.seq IS DISTINCT FROM COALESCE(last_seq, 0) + 1
       OR NEW.prev_sha256 IS DISTINCT FROM COALESCE(last_sha, repeat('0', 64)) THEN
        RAISE EXCEPTION 'the PCSC ledger is append-only: a new row of % takes the next seq and chains to the last',
            TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END
"""
FUNCTIONS = {"pcsc_refuse": _REFUSE, "pcsc_append_in_order": _IN_ORDER}

# pg_trigger.tgtype bits: ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16, TRUNCATE 32
_GUARD_KINDS = {
    "no_update": (1 | 2 | 16, "pcsc_refuse"),
    "no_delete": (1 | 2 | 8, "pcsc_refuse"),
    "no_truncate": (2 | 32, "pcsc_refuse"),
    "append_in_order": (1 | 2 | 4, "pcsc_append_in_order"),
}
_GUARDED = {
    "entries": tuple(_GUARD_KINDS),
    "outcomes": tuple(_GUARD_KINDS),
    "pcsc_identity": ("no_update", "no_delete", "no_truncate"),  # one row, written when the ledger is made
}
GUARDS: dict[str, tuple[str, int, str]] = {  # trigger -> (table, tgtype, function)
    f"{table}_{kind}": (table, *_GUARD_KINDS[kind]) for table, kinds in _GUARDED.items() for kind in kinds
}
_TIMING = {19: "BEFORE UPDATE", 11: "BEFORE DELETE", 34: "BEFORE TRUNCATE", 7: "BEFORE INSERT"}  # by tgtype


def _schema() -> list[str]:
    columns_entries = """
    seq            bigint PRIMARY KEY CHECK (seq >= 1),
    kind           text NOT NULL CHECK (kind = 'forecast'),
    route          text NOT NULL,
    file           text NOT NULL,
    payload        text NOT NULL,
    payload_sha256 text NOT NULL,
    prev_sha256    text NOT NULL,
    entry_sha256   text NOT NULL,
    policy_id      text NOT NULL,
    policy_version text NOT NULL,
    policy_sha256  text NOT NULL,
    pcsc_version   text NOT NULL,
    inputs         text NOT NULL,
    frozen_at      text NOT NULL"""
    columns_outcomes = """
    seq             bigint PRIMARY KEY CHECK (seq >= 1),
    kind            text NOT NULL CHECK (kind IN ('observation', 'label')),
    route           text NOT NULL,
    observed        text NOT NULL,
    payload         text NOT NULL,
    payload_sha256  text NOT NULL,
    prev_sha256     text NOT NULL,
    entry_sha256    text NOT NULL,
    source          text,
    forecast_seq    bigint NOT NULL,
    forecast_sha256 text NOT NULL,
    pcsc_version    text NOT NULL,
    recorded_at     text NOT NULL"""
    statements = [
        "CREATE TABLE pcsc_identity (application_id bigint NOT NULL, schema_version integer NOT NULL)",
        f"CREATE TABLE entries ({columns_entries})",
        "CREATE INDEX entries_by_route ON entries (route)",
        f"CREATE TABLE outcomes ({columns_outcomes})",
        "CREATE INDEX outcomes_by_route ON outcomes (route)",
    ]
    for name, body in FUNCTIONS.items():
        statements.append(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $pcsc${body}$pcsc$")
    for trigger, (table, tgtype, function) in GUARDS.items():
        each = "ROW" if tgtype & 1 else "STATEMENT"
        statements.append(f"CREATE TRIGGER {trigger} {_TIMING[tgtype]} ON {table} FOR EACH {each} "
                          f"EXECUTE FUNCTION {function}()")
    statements.append("REVOKE ALL ON pcsc_identity, entries, outcomes FROM PUBLIC")
    return statements


def _normal(text: str) -> str:
    return " ".join(text.split())


def _psycopg() -> Any:
    return require("postgres", "a postgresql:// ledger")


class PostgresLedger(Ledger):
    """A ledger in a PostgreSQL schema, opened by `pcsc.forecast.stores.open_ledger` for a `LedgerURL`."""

    def __init__(self, conn: Any, path: LedgerURL) -> None:
        self._pg = conn
        self.path = path
        self.read_only = False

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: Path | str = DEFAULT_PATH, *, create: bool = True) -> PostgresLedger:
        """Connect to the database at ``path`` (a `LedgerURL`); with ``create``, make the
        ledger's tables in the schema when it has none. Raises `LedgerError`."""
        url = ledger_location(path)
        if not isinstance(url, LedgerURL):
            raise LedgerError(f"{url} is not a postgresql:// address")
        psycopg = _psycopg()
        try:
            conn = psycopg.connect(url.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise LedgerError(f"{url}: cannot connect to the ledger's database: {_message(exc)}") from None
        ledger = cls(conn, url)
        try:
            conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT_S}s'")
            ledger._prepare(create)
        except BaseException:
            conn.close()
            raise
        return ledger

    def _prepare(self, create: bool) -> None:
        with self._write(creating=True):
            schema = self._pg.execute("SELECT current_schema()").fetchone()[0]
            if schema is None:
                raise LedgerError(f"{self.path}: no schema to hold the ledger (the search_path names none that exists)")
            found = self._pg.execute("SELECT to_regclass('pcsc_identity'), to_regclass('entries')").fetchone()
            if found == (None, None):
                if not create:
                    raise LedgerError(f"no ledger at {self.path} (schema {schema}; `pcsc freeze` creates one)")
                for statement in _schema():
                    self._pg.execute(statement)
                self._pg.execute("INSERT INTO pcsc_identity VALUES (%s, %s)", (APPLICATION_ID, SCHEMA_VERSION))
                return
            if found[0] is None:
                raise LedgerError(f"{self.path}: schema {schema} holds an `entries` table but is not a PCSC ledger")
            rows = self._pg.execute("SELECT application_id, schema_version FROM pcsc_identity").fetchall()
        if len(rows) != 1 or int(rows[0][0]) != APPLICATION_ID:
            raise LedgerError(f"{self.path} is not a PCSC ledger: pcsc_identity does not hold the PCSC mark")
        if int(rows[0][1]) > SCHEMA_VERSION:
            raise LedgerError(f"{self.path} is a PCSC ledger of schema version {rows[0][1]}, newer than this pcsc "
                              f"reads (schema {SCHEMA_VERSION}): use a newer pcsc")

    def close(self) -> None:
        self._pg.close()

    # ------------------------------------------------------------------ the hooks `Ledger` writes through
    @contextmanager
    def _write(self, *, creating: bool = False) -> Iterator[None]:
        """One transaction holding the ledger's advisory lock: writers queue, one at a
        time; any error rolls it back and becomes a `LedgerError` with the server's message."""
        psycopg = _psycopg()
        doing = "cannot open the ledger" if creating else "nothing written"
        try:
            self._pg.execute("BEGIN")
            self._pg.execute(
                "SELECT pg_advisory_xact_lock(%s, (SELECT oid::int FROM pg_namespace WHERE nspname = "
                "current_schema()))",
                (APPLICATION_ID,),
            )
        except psycopg.Error as exc:
            self._rollback()
            raise LedgerError(f"{self.path}: {doing}: cannot start a write: {_message(exc)}") from None
        try:
            yield
        except psycopg.Error as exc:
            self._rollback()
            raise LedgerError(f"{self.path}: {doing}: {_message(exc)}") from None
        except BaseException:
            self._rollback()
            raise
        try:
            self._pg.execute("COMMIT")
        except psycopg.Error as exc:
            self._rollback()
            raise LedgerError(f"{self.path}: {doing}: the write was not committed: {_message(exc)}") from None

    def _rollback(self) -> None:
        try:
            self._pg.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - the error that caused it is the one to report
            pass

    def _head(self, table: str) -> tuple[int, str]:
        row = self._pg.execute(f"SELECT seq, entry_sha256 FROM {table} ORDER BY seq DESC LIMIT 1").fetchone()
        return (0, GENESIS) if row is None else (int(row[0]), str(row[1]))

    def _insert(self, table: str, columns: str, values: tuple[Any, ...]) -> None:
        self._pg.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(values))})", values)

    @contextmanager
    def _snapshot(self, what: str) -> Iterator[None]:
        psycopg = _psycopg()
        try:
            self._pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield
            finally:
                self._rollback()
        except psycopg.Error as exc:
            raise LedgerError(f"{self.path}: cannot read {what}: {_message(exc)}") from None

    # ------------------------------------------------------------------ reading
    def _select(self, sql: str, where: dict[str, str | None], what: str) -> list[tuple[Any, ...]]:
        clauses = [f"{column} = %s" for column, value in where.items() if value is not None]
        params = [value for value in where.values() if value is not None]
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        with self._snapshot(what):
            rows: list[tuple[Any, ...]] = self._pg.execute(sql + " ORDER BY seq", params).fetchall()
        return rows

    def entries(self, route: str | None = None, file: str | None = None) -> list[Entry]:
        rows = self._select(f"SELECT {_ENTRY_COLUMNS} FROM entries", {"route": route, "file": file}, "the forecasts")
        return [self._entry(row) for row in rows]

    def outcomes(self, route: str | None = None) -> list[Outcome]:
        rows = self._select(f"SELECT {_OUTCOME_COLUMNS} FROM outcomes", {"route": route}, "the outcomes")
        return [_outcome(row) for row in rows]

    def forecast_head(self) -> tuple[int, str]:
        with self._snapshot("the head"):
            return self._head("entries")

    def head(self) -> Head:
        with self._snapshot("the head"):
            (e_seq, e_sha), (o_seq, o_sha) = self._head("entries"), self._head("outcomes")
        return Head(e_seq, e_sha, o_seq, o_sha)

    def identity(self) -> dict[str, Any]:
        with self._snapshot("the first forecast"):
            row = self._pg.execute("SELECT entry_sha256 FROM entries WHERE seq = 1").fetchone()
        return {"file": str(self.path), "application_id": APPLICATION_ID, "schema": SCHEMA_VERSION,
                "first_forecast_sha256": None if row is None else str(row[0])}

    # ------------------------------------------------------------------ checking
    def verify(self, head: HeadToken | None = None) -> Verification:
        """The chain check of `Ledger.verify` on both tables, read in one snapshot, and
        the guards: every trigger present, enabled, on its table, of its kind, running
        the function body this version creates; no other trigger on the ledger's tables."""
        psycopg = _psycopg()
        try:
            with self._snapshot("the ledger"):
                entry_rows = self._pg.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY seq").fetchall()
                outcome_rows = self._pg.execute(f"SELECT {_OUTCOME_COLUMNS} FROM outcomes ORDER BY seq").fetchall()
                triggers = self._pg.execute(
                    "SELECT t.tgname, c.relname, t.tgtype, t.tgenabled, p.proname, p.prosrc "
                    "FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid "
                    "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace "
                    "AND c.relname IN ('entries', 'outcomes', 'pcsc_identity')"
                ).fetchall()
        except (LedgerError, psycopg.Error) as exc:
            return Verification(0, 0, GENESIS, GENESIS, (Problem("file", None, str(exc)),))
        return check_chains(list(entry_rows), list(outcome_rows), _guard_problems(triggers), head,
                            guards=tuple(GUARDS))


def _guard_problems(rows: list[tuple[Any, ...]]) -> list[Problem]:
    found = {str(name): (str(table), int(tgtype), str(enabled), str(proname), str(src))
             for name, table, tgtype, enabled, proname, src in rows}
    problems = []
    missing = [g for g in GUARDS if g not in found]
    if missing:
        problems.append(Problem("schema", None, "append-only guard triggers are missing: " + ", ".join(missing)))
    for name, (table, tgtype, function) in GUARDS.items():
        if name not in found:
            continue
        got_table, got_type, enabled, got_function, src = found[name]
        if (got_table, got_type, got_function) != (table, tgtype, function) or _normal(src) != _normal(
            FUNCTIONS[function]
        ):
            problems.append(Problem("schema", None, f"guard trigger {name} has been altered: it is not the trigger "
                                    "pcsc creates, so it may no longer refuse what it should"))
        elif enabled != "O":
            problems.append(Problem("schema", None, f"guard trigger {name} is disabled (tgenabled {enabled!r})"))
    for name, (table, *_) in sorted(found.items()):
        if name not in GUARDS:
            problems.append(Problem("schema", None, f"unknown trigger {name} on {table}: pcsc creates no such "
                                    "trigger"))
    return problems


def _message(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
