"""The forecast ledger (docs/forecast.md): an append-only, hash-chained SQLite file.

What it is for: a forecast, once frozen, must never change, and anyone holding the
file can check that it did not. The ledger stores frozen forecasts (`entries`,
written by `pcsc freeze`) and outcome observations (`outcomes`, written by
`pcsc resolve` through `Ledger.append_outcomes`). It does not compile, rank,
resolve or grade anything; it stores and checks.

Guarantees, and where each is enforced:

- **Append-only, in the database.** Triggers refuse every UPDATE and DELETE on both
  tables with ``RAISE(ABORT, …)`` (sqlite3 raises `sqlite3.IntegrityError`), and a
  BEFORE INSERT trigger refuses a row that does not take the next seq and chain to
  the last row (which also stops ``INSERT OR REPLACE`` from overwriting one).
- **Chained.** Each row holds ``payload_sha256`` (SHA-256 of its canonical JSON
  payload), ``prev_sha256`` (the ``entry_sha256`` of the row before it in the same
  table, or 64 zeros for the first) and ``entry_sha256``, the SHA-256 of the canonical
  JSON of the row's identifying fields (`forecast_hash`, `outcome_hash`). `entries`
  and `outcomes` are two chains, each from its own genesis; every outcome also records
  the head of the forecast chain when it was written (``forecast_seq``,
  ``forecast_sha256``, inside its hash), so the order between forecasts and outcomes
  is fixed too: a forecast with a seq above an outcome's ``forecast_seq`` was frozen
  after that outcome was recorded.
- **Checked.** `Ledger.verify` recomputes every payload hash, every entry hash, every
  link and every outcome's forecast anchor, checks that every payload is canonical JSON,
  compares every object of ``sqlite_master`` (tables, indexes, guard triggers) by its
  full SQL with what this version creates (whitespace aside; a missing or altered one,
  and any other trigger, view, index or table, is a problem), runs SQLite's
  ``PRAGMA integrity_check``, and names the first bad row (table, seq, what is wrong).
- **Appended to only when it verifies, and read back.** `append_forecasts` and
  `append_outcomes` refuse (`LedgerUnverified`, nothing written) a ledger that does not
  verify: an object's first append verifies it whole, in its own snapshot; then, under
  the write lock, the schema again and the rows appended since (`continue_chains`);
  its later appends check only the schema and what was appended since its last. Each
  row written is read back in the writing transaction: one missing or not as written
  (a trigger or rule that swallows or rewrites inserts) is a `LedgerWriteLost`, and the
  whole write is rolled back.
- **Its head, kept elsewhere, proves its tail.** Nothing inside the file can show that
  the newest rows were deleted, or that the whole chain was rewritten. The *head* is
  one token for both chains, ``E.O:HASH``: E and O are the last seqs of `entries` and
  `outcomes` (0 for an empty chain) and HASH is the SHA-256 of the canonical JSON
  ``{"entries": {"seq": E, "entry_sha256": …}, "outcomes": {"seq": O, "entry_sha256": …}}``
  (64 zeros for an empty chain), e.g. ``4.2:9f…``. `Ledger.verify(head)` proves that
  nothing at or before a recorded head was removed or rewritten: both chains must
  still verify and hold rows E and O with those entry hashes (each entry hash covers
  its row and, through ``prev_sha256``, every row before it); rows appended since are
  counted. A checkpoint (`pcsc.forecast.checkpoint`) is a head signed with Ed25519.
- **Faults are errors, not crashes.** Every SQLite failure (a full disk, a damaged
  page, a read-only file or folder) becomes a `LedgerError` that carries SQLite's own
  message; a failed write rolls back, and a failing ROLLBACK never hides the cause.
  `create_and_append` builds a new ledger beside its path and links it into place
  whole, so a failed first freeze leaves no file behind.
- **Concurrent writers wait.** WAL journal, a 30 s busy timeout and ``BEGIN
  IMMEDIATE``: one transaction per append call (one per `pcsc freeze` run: all its
  routes or none), and two processes appending at once are serialised, not failed.
- **Identified.** ``PRAGMA application_id`` marks the file as a PCSC ledger and
  ``PRAGMA user_version`` holds the schema version; any other file, or a newer
  schema, is refused with a `LedgerError` that says which.
- **Or in PostgreSQL.** A ``postgresql://`` address (`LedgerURL`) opens the same ledger
  in a database server (`pcsc.forecast.ledger_pg`): the same chains, written through
  this class's `_write`, `_head` and `_insert`, and verified by the same `check_chains`.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PosixPath
from typing import Any, Literal

import attrs

from pcsc._version import __version__
from pcsc.base.canonical import dumps, hash_json, sha256_hex
from pcsc.base.config import DATABASE_SCHEMES, hide_credentials

SCHEMA_VERSION = 2  # 2: `entries` also holds preregistered plans (kind 'prereg'); 1 is still read
ENTRY_KINDS = {1: ("forecast",), 2: ("forecast", "prereg")}
APPLICATION_ID = 0x50435343  # "PCSC"
GENESIS = "0" * 64
DEFAULT_PATH = Path(".pcsc") / "ledger.sqlite"
BUSY_TIMEOUT_S = 30.0

OutcomeKind = Literal["observation", "label"]


class LedgerError(Exception):
    """The ledger cannot be used as asked: not a ledger, a newer schema, locked, missing,
    read-only, damaged, or the disk is full. The message says which, with SQLite's own."""


class LedgerUnverified(LedgerError):
    """Nothing was appended: the ledger does not verify (``problems``, as `Ledger.verify`
    names them), and a row chained to a broken or tampered ledger would vouch for it."""

    def __init__(self, path: Path, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        super().__init__(f"{path}: nothing written: the ledger does not verify: {self.problems[0]}{more}")


class LedgerWriteLost(LedgerError):
    """Nothing was appended: a row read back in the writing transaction was missing or not
    as written (a trigger or rule that swallows or rewrites inserts); it was rolled back."""


class LedgerURL(PosixPath):
    """A ledger in a database server (``postgresql://…``, `pcsc.forecast.ledger_pg`),
    where commands expect the path of a ledger file. ``url`` is the address as given;
    ``str()`` shows it without its password, and the path it poses as is built from
    that, so neither a message nor a path derived from it can print one."""

    url: str

    def __new__(cls, url: str) -> LedgerURL:
        self = super().__new__(cls, hide_credentials(url))
        self.url = url
        return self

    def __str__(self) -> str:
        return hide_credentials(self.url)

    def __fspath__(self) -> str:
        return str(self)


def ledger_location(given: str | os.PathLike[str]) -> Path:
    """The ledger ``given`` on a command line: a `LedgerURL` for a database address, else a path."""
    text = os.fspath(given)
    if isinstance(given, LedgerURL):
        return given
    if text.startswith(DATABASE_SCHEMES):
        return LedgerURL(text)
    return Path(text)


# ---------------------------------------------------------------------- records
@attrs.frozen
class PolicyId:
    id: str
    version: str
    sha256: str

    def as_json(self) -> dict[str, str]:
        return {"id": self.id, "version": self.version, "sha256": self.sha256}


@attrs.frozen
class ForecastRecord:
    """One forecast to freeze: ``payload`` is stored as canonical JSON (finite floats only)."""

    route: str
    file: str
    policy: PolicyId
    payload: Mapping[str, Any]


@attrs.frozen
class Entry:
    """A frozen forecast as stored. ``payload`` is the canonical JSON text, byte for byte."""

    seq: int
    kind: str
    route: str
    file: str
    payload: str
    payload_sha256: str
    prev_sha256: str
    entry_sha256: str
    policy: PolicyId
    pcsc_version: str
    inputs: tuple[tuple[str, str], ...]  # (path, sha256)
    frozen_at: str  # UTC, ISO 8601 to the second, e.g. 2026-05-09T07:35:25Z

    def document(self) -> Any:
        """The payload, parsed."""
        return json.loads(self.payload)


@attrs.frozen
class OutcomeRecord:
    """One outcome to record. ``kind`` is ``observation`` (field values seen on
    ``observed``, e.g. ``{"fields": {"developers": 620}}``) or ``label`` (a route-level
    label, e.g. ``{"label": "positive"}``); the payload's shape is the resolver's to
    define, the ledger stores it as canonical JSON. ``source`` says where it came from
    (e.g. ``"outcomes/2013.toml sha256 <hex>"``)."""

    route: str
    observed: dt.date
    payload: Mapping[str, Any]
    kind: OutcomeKind = "observation"
    source: str | None = None


@attrs.frozen
class Outcome:
    seq: int
    kind: str
    route: str
    observed: str  # ISO date
    payload: str
    payload_sha256: str
    prev_sha256: str
    entry_sha256: str
    source: str | None
    forecast_seq: int  # the head of the forecast chain when this was recorded (0: empty)
    forecast_sha256: str
    pcsc_version: str
    recorded_at: str

    def document(self) -> Any:
        """The payload, parsed."""
        return json.loads(self.payload)

    @property
    def observed_on(self) -> dt.date:
        return dt.date.fromisoformat(self.observed)


@attrs.frozen
class Problem:
    table: str  # "entries", "outcomes" or "schema"
    seq: int | None
    message: str

    def __str__(self) -> str:
        where = self.table if self.seq is None else f"{self.table} seq {self.seq}"
        return f"{where}: {self.message}"


# ASCII digits only (`\d` would read `٤` as 4), as printed: no sign, no leading zero,
# at most 19 digits (a seq is a signed 64-bit integer)
_SEQ = r"(0|[1-9][0-9]{0,18})"
_TOKEN = re.compile(rf"{_SEQ}\.{_SEQ}:([0-9a-f]{{64}})")


@attrs.frozen
class HeadToken:
    """A recorded head, ``E.O:HASH`` (see the module docstring): the last seqs of both
    chains and the SHA-256 that binds their entry hashes."""

    entries_seq: int
    outcomes_seq: int
    sha256: str

    def __str__(self) -> str:
        return f"{self.entries_seq}.{self.outcomes_seq}:{self.sha256}"

    @classmethod
    def parse(cls, text: str) -> HeadToken:
        """Read a token; raises ``ValueError`` naming the expected form."""
        match = _TOKEN.fullmatch(text.strip(" \t\r\n"))
        if match is None:
            raise ValueError(f"not a ledger head: expected E.O:HASH (e.g. 4.2:<64 hex digits>; E and O in ASCII "
                             f"digits, as `pcsc ledger head` prints them), got {text!r}")
        return cls(int(match[1]), int(match[2]), match[3])


@attrs.frozen
class Head:
    """The head of a ledger: the last row of each chain."""

    entries_seq: int
    entries_sha256: str  # 64 zeros for an empty chain
    outcomes_seq: int
    outcomes_sha256: str

    @property
    def sha256(self) -> str:
        return head_hash(self.entries_seq, self.entries_sha256, self.outcomes_seq, self.outcomes_sha256)

    @property
    def token(self) -> HeadToken:
        return HeadToken(self.entries_seq, self.outcomes_seq, self.sha256)

    def as_json(self) -> dict[str, Any]:
        return {
            "token": str(self.token),
            "entries": {"seq": self.entries_seq, "entry_sha256": self.entries_sha256},
            "outcomes": {"seq": self.outcomes_seq, "entry_sha256": self.outcomes_sha256},
            "sha256": self.sha256,
        }


@attrs.frozen
class HeadCheck:
    """The check of a recorded head: ``ok`` when both chains still hold it; then the rows
    appended since it was recorded."""

    token: HeadToken
    ok: bool
    appended_entries: int
    appended_outcomes: int


@attrs.frozen
class Chains:
    """Where two verified chains end: enough to check rows appended after them
    (`continue_chains`) without reading again the rows before."""

    entries: tuple[int, str]  # the last forecast's seq and entry_sha256
    outcomes: tuple[int, str, int]  # the last outcome's seq, entry_sha256 and forecast_seq (its anchor)
    forecast_heads: dict[int, str]  # seq -> entry_sha256 of the forecasts a next outcome may anchor to

    @property
    def head(self) -> Head:
        return Head(*self.entries, *self.outcomes[:2])


def _anchorable(forecast_heads: dict[int, str], outcomes: tuple[int, str, int]) -> dict[int, str]:
    """The forecasts a next outcome may anchor to: from the last outcome's anchor on."""
    return {seq: sha for seq, sha in forecast_heads.items() if seq >= outcomes[2]}


@attrs.frozen
class Verification:
    entries: int
    outcomes: int
    entries_head: str  # entry_sha256 of the last forecast (64 zeros when none)
    outcomes_head: str
    problems: tuple[Problem, ...]  # the first bad row of each table, then the schema, the file, the head
    guards: tuple[str, ...] = ()  # the guard triggers compared
    integrity: bool = False  # whether SQLite's integrity_check ran (and passed when ok)
    head_check: HeadCheck | None = None
    schema: tuple[str, ...] = ()  # every schema object compared ("trigger entries_no_update", …)
    compared_by: str = ""  # how the backend compared them
    chains: Chains | None = None  # where the verified chains end, when ok
    plans: int = 0  # of the entries, how many are preregistered plans (kind 'prereg'), not forecasts

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def head(self) -> Head:
        """The head of the verified chains (of their valid prefixes when not ``ok``)."""
        return Head(self.entries, self.entries_head, self.outcomes, self.outcomes_head)

    @property
    def first_bad(self) -> Problem | None:
        return self.problems[0] if self.problems else None


# ---------------------------------------------------------------------- hashing
def forecast_hash(
    seq: int,
    kind: str,
    route: str,
    file: str,
    payload_sha256: str,
    prev_sha256: str,
    policy: PolicyId,
    pcsc_version: str,
    inputs: Sequence[tuple[str, str]],
    frozen_at: str,
) -> str:
    """``entry_sha256`` of a forecast: SHA-256 of the canonical JSON of these fields."""
    return hash_json({
        "seq": seq,
        "kind": kind,
        "route": route,
        "file": file,
        "payload_sha256": payload_sha256,
        "prev_sha256": prev_sha256,
        "policy": policy.as_json(),
        "pcsc": pcsc_version,
        "inputs": [{"path": p, "sha256": h} for p, h in inputs],
        "frozen_at": frozen_at,
    })


def outcome_hash(
    seq: int,
    kind: str,
    route: str,
    observed: str,
    payload_sha256: str,
    prev_sha256: str,
    source: str | None,
    forecast_seq: int,
    forecast_sha256: str,
    pcsc_version: str,
    recorded_at: str,
) -> str:
    """``entry_sha256`` of an outcome: SHA-256 of the canonical JSON of these fields."""
    return hash_json({
        "seq": seq,
        "kind": kind,
        "route": route,
        "observed": observed,
        "payload_sha256": payload_sha256,
        "prev_sha256": prev_sha256,
        "source": source,
        "forecast": {"seq": forecast_seq, "sha256": forecast_sha256},
        "pcsc": pcsc_version,
        "recorded_at": recorded_at,
    })


def head_hash(entries_seq: int, entries_sha256: str, outcomes_seq: int, outcomes_sha256: str) -> str:
    """HASH of a head token: SHA-256 of the canonical JSON of both chains' last (seq, entry_sha256)."""
    return hash_json({
        "entries": {"seq": entries_seq, "entry_sha256": entries_sha256},
        "outcomes": {"seq": outcomes_seq, "entry_sha256": outcomes_sha256},
    })


def writer_version() -> str:
    """What a row records of the pcsc that wrote it: the version, and as its local label
    (PEP 440) the SHA-256 of the code (`pcsc.base.codehash`), e.g. ``0.1.0+9f…``."""
    from pcsc.base.codehash import scorer_sha256

    return f"{__version__}+{scorer_sha256()}"


def utc_stamp(when: dt.datetime | None = None) -> str:
    """UTC ISO 8601 to the second with a `Z`; ``when`` must be timezone-aware."""
    when = when or dt.datetime.now(dt.UTC)
    if when.tzinfo is None:
        raise ValueError("a ledger time must be timezone-aware")
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _canonical(payload: Mapping[str, Any], what: str) -> str:
    try:
        return dumps(payload)
    except (TypeError, ValueError) as exc:
        raise LedgerError(f"{what}: the payload is not canonical JSON data: {exc}") from None


# ---------------------------------------------------------------------- schema
def _guards(table: str, what: str) -> str:
    refuse = f"the PCSC ledger is append-only: {{}} on {table} is refused"
    return f"""
CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, '{refuse.format("UPDATE")}'); END;
CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
BEGIN SELECT RAISE(ABORT, '{refuse.format("DELETE")}'); END;
CREATE TRIGGER {table}_append_in_order BEFORE INSERT ON {table}
WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), 0) + 1 FROM {table})
  OR NEW.prev_sha256 IS NOT COALESCE((SELECT entry_sha256 FROM {table} ORDER BY seq DESC LIMIT 1), '{GENESIS}')
BEGIN SELECT RAISE(ABORT, 'the PCSC ledger is append-only: a new {what} takes the next seq and chains to the last');
END;
"""


def _kind_check(version: int) -> str:
    """The CHECK on `entries.kind` of schema ``version``, as that version wrote it."""
    if version == 1:
        return "CHECK (kind = 'forecast')"
    return "CHECK (kind IN (" + ", ".join(f"'{k}'" for k in ENTRY_KINDS[version]) + "))"


def _entries_table(version: int) -> str:
    return f"""CREATE TABLE entries (
    seq            INTEGER PRIMARY KEY CHECK (seq >= 1),
    kind           TEXT NOT NULL {_kind_check(version)},
    route          TEXT NOT NULL,
    file           TEXT NOT NULL,
    payload        TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL,
    prev_sha256    TEXT NOT NULL,
    entry_sha256   TEXT NOT NULL,
    policy_id      TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    policy_sha256  TEXT NOT NULL,
    pcsc_version   TEXT NOT NULL,
    inputs         TEXT NOT NULL,
    frozen_at      TEXT NOT NULL
);"""


def schema_script(version: int = SCHEMA_VERSION) -> str:
    """The statements that create a ledger of schema ``version`` (1 or 2)."""
    return f"""
{_entries_table(version)}
CREATE INDEX entries_by_route ON entries (route);
CREATE TABLE outcomes (
    seq             INTEGER PRIMARY KEY CHECK (seq >= 1),
    kind            TEXT NOT NULL CHECK (kind IN ('observation', 'label')),
    route           TEXT NOT NULL,
    observed        TEXT NOT NULL,
    payload         TEXT NOT NULL,
    payload_sha256  TEXT NOT NULL,
    prev_sha256     TEXT NOT NULL,
    entry_sha256    TEXT NOT NULL,
    source          TEXT,
    forecast_seq    INTEGER NOT NULL,
    forecast_sha256 TEXT NOT NULL,
    pcsc_version    TEXT NOT NULL,
    recorded_at     TEXT NOT NULL
);
CREATE INDEX outcomes_by_route ON outcomes (route);
{_guards("entries", "entry")}
{_guards("outcomes", "outcome")}
"""


SCHEMA = schema_script()

GUARDS = tuple(f"{t}_{g}" for t in ("entries", "outcomes") for g in ("no_update", "no_delete", "append_in_order"))
SQLITE_COMPARED_BY = "their full SQL in sqlite_master, whitespace normalised"


# ANALYZE writes the query planner's statistics into these; they change no row and no guard
_STATISTICS = ("sqlite_stat1", "sqlite_stat4")


def _normal_sql(sql: str) -> str:
    """SQL with its whitespace collapsed and no final `;`: how schema objects are compared."""
    return " ".join(sql.split()).rstrip(";").rstrip()


@functools.cache
def expected_schema(version: int = SCHEMA_VERSION) -> dict[tuple[str, str], tuple[str, str]]:
    """Every object of the ``sqlite_master`` of a ledger of schema ``version``, as SQLite
    itself records it: (type, name) -> (table, whitespace-normalised SQL)."""
    conn = sqlite3.connect(":memory:")
    try:
        for statement in _statements(schema_script(version)):
            conn.execute(statement)
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    finally:
        conn.close()
    return {(str(kind), str(name)): (str(table), _normal_sql(str(sql))) for kind, name, table, sql in rows}


def guard_sql() -> dict[str, str]:
    """The SQL of each guard trigger as this version creates it, whitespace-normalised."""
    return {name: sql for (kind, name), (_, sql) in expected_schema().items() if kind == "trigger"}

_ENTRY_COLUMNS = (
    "seq, kind, route, file, payload, payload_sha256, prev_sha256, entry_sha256, "
    "policy_id, policy_version, policy_sha256, pcsc_version, inputs, frozen_at"
)
_OUTCOME_COLUMNS = (
    "seq, kind, route, observed, payload, payload_sha256, prev_sha256, entry_sha256, "
    "source, forecast_seq, forecast_sha256, pcsc_version, recorded_at"
)


# ---------------------------------------------------------------------- the ledger
class Ledger:
    """An open ledger. Use as a context manager, or call `close`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, read_only: bool = False) -> None:
        self._conn = conn
        self.path = path
        self.read_only = read_only  # opened read-only because its folder cannot be written
        self._verified: Chains | None = None  # where the chains ended after this object's last append
        self.schema_version = SCHEMA_VERSION  # the file's, once opened: a ledger of schema 1 stays so until upgraded

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: Path | str = DEFAULT_PATH, *, create: bool = True) -> Ledger:
        """Open the ledger at ``path``; with ``create``, make it (and its folders) if
        absent. Raises `LedgerError` for a missing ledger (without ``create``), a file
        that is not a PCSC ledger, a schema newer than this pcsc reads, or a file SQLite
        cannot open (its message kept). Without ``create``, a ledger whose folder cannot
        be written (so SQLite cannot make its WAL files) is opened read-only, when no
        writer has left a WAL file beside it. A database address (`LedgerURL`) is opened by
        `pcsc.forecast.stores.open_ledger`, which chooses the backend."""
        path = ledger_location(path)
        if isinstance(path, LedgerURL):  # a database: `pcsc.forecast.stores.open_ledger` chooses its class
            raise LedgerError(f"{path} is a database ledger: open it with pcsc.forecast.stores.open_ledger")
        if path.is_dir():
            raise LedgerError(f"{path} is a folder, not a PCSC ledger file")
        if not path.exists():
            if not create:
                raise LedgerError(f"no ledger at {path} (`pcsc freeze` creates one)")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LedgerError(f"cannot create the folder of {path}: {exc.strerror or exc}") from None
        try:
            return cls._connect(path, path, create)
        except _FolderReadOnly as exc:
            if create or _wal_file(path).exists():
                raise LedgerError(str(exc)) from None
        return cls._connect(path, path, False, read_only=True)

    @classmethod
    def _connect(cls, file: Path, shown: Path, create: bool, *, read_only: bool = False) -> Ledger:
        """Connect to ``file`` (shown as ``shown`` in messages) and check or create the schema."""
        try:
            if read_only:  # nothing can change the file while its folder is read-only to us
                uri = "file:" + _uri_path(file) + "?mode=ro&immutable=1"
                conn = sqlite3.connect(uri, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=True)
            else:
                conn = sqlite3.connect(file, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise LedgerError(fault_message(shown, "cannot open the ledger", exc)) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            ledger = cls(conn, shown, read_only=read_only)
            ledger._prepare(create)
        except BaseException:
            conn.close()
            raise
        return ledger

    def _identity(self, locked: bool = False) -> tuple[int, int, int]:
        """(application_id, user_version, number of schema objects), read in one snapshot
        (inside the caller's transaction when ``locked``), so that a ledger another
        process is creating is seen either empty or whole."""
        try:
            if not locked:
                self._conn.execute("BEGIN")
            try:
                objects = self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                app = self._conn.execute("PRAGMA application_id").fetchone()[0]
                version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            finally:
                if not locked:
                    self._end_read()
        except sqlite3.DatabaseError as exc:
            name = _error_name(exc)
            if name == "SQLITE_NOTADB":
                raise LedgerError(f"{self.path} is not a PCSC ledger: not an SQLite database ({exc})") from None
            if name in ("SQLITE_READONLY", "SQLITE_CANTOPEN") and not self.read_only:
                raise _FolderReadOnly(
                    f"cannot open {self.path} ({exc}): SQLite needs to create {_wal_file(self.path).name} and "
                    f"{self.path.name}-shm beside it; is its folder read-only?"
                ) from None
            raise LedgerError(self._fault("cannot read", exc)) from None
        return int(app), int(version), int(objects)

    def _end_read(self) -> None:
        """End a read transaction; a failure to end it is not the error to report."""
        if self._conn.in_transaction:
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()

    def _rollback(self) -> None:
        """Roll back, if a transaction is still open (SQLite ends some failed ones itself);
        a failing ROLLBACK is swallowed, so that the error that caused it is the one reported."""
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _fault(self, doing: str, exc: sqlite3.Error) -> str:
        return fault_message(self.path, doing, exc)

    def _check_identity(self, app: int, version: int) -> None:
        if app != APPLICATION_ID:
            raise LedgerError(
                f"{self.path} is not a PCSC ledger: an SQLite database without the PCSC mark "
                f"(application_id {app:#x}, expected {APPLICATION_ID:#x})"
            )
        if version > SCHEMA_VERSION:
            raise LedgerError(
                f"{self.path} is a PCSC ledger of schema version {version}, newer than this pcsc "
                f"({__version__}) reads (schema {SCHEMA_VERSION}): use a newer pcsc"
            )
        if version < 1:
            raise LedgerError(f"{self.path} is a PCSC ledger with no schema version: it was not fully created")

    def _prepare(self, create: bool) -> None:
        app, version, objects = self._identity()
        if app == 0 and version == 0 and objects == 0:
            if not create:
                raise LedgerError(f"{self.path} is not a PCSC ledger: an empty file or database")
            self._initialise()
            return
        self._check_identity(app, version)
        self.schema_version = version
        if not self.read_only:
            self._pragmas()

    def _pragmas(self) -> None:
        # WAL lets readers go on while one writer appends; it is persistent in the file.
        # Switching to it needs the file to itself, and SQLite answers "locked" at once
        # rather than waiting, when another process is on it: retry up to the timeout.
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL").fetchone()
                self._conn.execute("PRAGMA synchronous = FULL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise LedgerError(f"cannot open {self.path}: {exc}") from None
                time.sleep(0.01)

    def _initialise(self) -> None:
        self._pragmas()
        with self._write():
            # another process may have created it since we looked: look again, under the lock
            app, version, objects = self._identity(locked=True)
            if app == 0 and version == 0 and objects == 0:
                for statement in _statements(SCHEMA):
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                return
        self._check_identity(app, version)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction, taken at once (BEGIN IMMEDIATE) so that concurrent
        writers queue on the busy timeout instead of failing halfway. Any SQLite error
        rolls it back and becomes a `LedgerError` with SQLite's message."""
        if self.read_only:
            raise LedgerError(f"{self.path}: nothing written: the ledger is read-only here (its folder cannot "
                              "be written)")
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            if _error_name(exc) in ("SQLITE_BUSY", "SQLITE_LOCKED"):
                raise LedgerError(f"{self.path}: cannot start a write ({exc}); another writer held it over "
                                  f"{BUSY_TIMEOUT_S:g} s") from None
            raise LedgerError(self._fault("nothing written", exc)) from None
        try:
            yield
        except sqlite3.Error as exc:
            self._rollback()
            raise LedgerError(self._fault("nothing written", exc)) from None
        except BaseException:
            self._rollback()
            raise
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise LedgerError(self._fault("nothing written: the write was not committed", exc)) from None

    @contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """Reads whose SQLite failures (a damaged page, an I/O error) become `LedgerError`."""
        try:
            yield
        except sqlite3.Error as exc:
            self._rollback()
            raise LedgerError(self._fault(f"cannot read {what}", exc)) from None

    def _head(self, table: str) -> tuple[int, str]:
        row = self._conn.execute(f"SELECT seq, entry_sha256 FROM {table} ORDER BY seq DESC LIMIT 1").fetchone()
        return (0, GENESIS) if row is None else (int(row[0]), str(row[1]))

    def _insert(self, table: str, columns: str, values: tuple[Any, ...]) -> None:
        """One row, inside `_write` (the hook another backend replaces)."""
        self._conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(values))})", values)

    def _rows_after(self, table: str, columns: str, seq: int) -> list[tuple[Any, ...]]:
        """The rows of ``table`` after ``seq``, in seq order (a hook, like `_insert`)."""
        return list(self._conn.execute(f"SELECT {columns} FROM {table} WHERE seq > ? ORDER BY seq", (seq,)))

    @contextmanager
    def _appending(self) -> Iterator[None]:
        """A write transaction on a ledger that verifies, else `LedgerUnverified` and
        nothing written. Before this object's first append the whole ledger is verified
        as `verify` does, in its own snapshot (other writers need not wait for it); then,
        holding the write lock, the schema is checked again and the rows appended since
        are checked from the verified heads on. Later appends start from the heads this
        object verified and wrote last: each checks the schema and the rows appended
        since, not the whole ledger again."""
        verified = self._verified
        if verified is None:
            verification = self.verify()
            if verification.chains is None:
                raise LedgerUnverified(self.path, verification.problems)
            verified = verification.chains
        with self._write():
            verified = self._continued(verified, self._schema_check())
            yield
            written = self._continued(verified, [])
        self._verified = written

    def _continued(self, verified: Chains, problems: list[Problem]) -> Chains:
        """``verified`` extended over the rows appended since, inside `_write`; the chains
        must still end at or after its heads, with the same rows there."""
        chains, found = continue_chains(verified, self._rows_after("entries", _ENTRY_COLUMNS, verified.entries[0]),
                                        self._rows_after("outcomes", _OUTCOME_COLUMNS, verified.outcomes[0]))
        problems = [*found, *problems]
        head = chains.head
        for table, last in (("entries", (head.entries_seq, head.entries_sha256)),
                            ("outcomes", (head.outcomes_seq, head.outcomes_sha256))):
            if not found and self._head(table) != last:
                problems.append(Problem(table, None, f"the chain no longer ends at seq {last[0]} as verified before "
                                        "this write: rows were deleted or replaced"))
        if problems:
            raise LedgerUnverified(self.path, problems)
        return chains

    def _stored(self, table: str, columns: str, values: tuple[Any, ...]) -> None:
        """Insert one row and read it back in the same transaction: a row the database
        did not store, or stored otherwise, is a `LedgerWriteLost` (the write rolls back)."""
        self._insert(table, columns, values)
        stored = self._rows_after(table, columns, int(values[0]) - 1)
        where = f"{self.path}: nothing written: {table} seq {values[0]}"
        if not stored or int(stored[0][0]) != values[0]:
            raise LedgerWriteLost(f"{where} was not stored: the database accepted the INSERT but holds no such row "
                                  "(a trigger or rule that swallows inserts?); the write was rolled back")
        if tuple(stored[0]) != values:
            names = [name for name, got, want in zip(columns.split(", "), stored[0], values, strict=True)
                     if got != want]
            raise LedgerWriteLost(f"{where} was stored otherwise than written ({', '.join(names)}): a trigger or "
                                  "rule rewrites inserts; the write was rolled back")

    def _last_is(self, table: str, seq: int, entry_sha256: str) -> None:
        """After a write: the chain ends at the row it wrote last, nothing added behind it."""
        last = self._head(table)
        if last != (seq, entry_sha256):
            raise LedgerWriteLost(f"{self.path}: nothing written: after seq {seq} was written, {table} ends at seq "
                                  f"{last[0]}: something else wrote to it in the same transaction; the write was "
                                  "rolled back")

    # ------------------------------------------------------------------ writing
    def append_forecasts(
        self,
        records: Sequence[ForecastRecord],
        *,
        inputs: Sequence[tuple[str, str]],
        pcsc_version: str | None = None,
        frozen_at: dt.datetime | None = None,
        kind: str = "forecast",
    ) -> list[Entry]:
        """Append ``records`` in one transaction (all or none), in order, each chained to
        the one before; ``inputs`` (path, sha256) and ``frozen_at`` (now, by default)
        are stored with each. Returns the entries written. ``kind="prereg"`` appends
        plans instead (`append_plan`)."""
        if kind not in ENTRY_KINDS[self.schema_version]:
            raise LedgerError(f"{self.path}: nothing written: a ledger of schema {self.schema_version} holds no "
                              f"{kind} entries")
        stamp = utc_stamp(frozen_at)
        pcsc_version = pcsc_version or writer_version()
        prepared = []
        for rec in records:
            payload = _canonical(rec.payload, f"forecast of route {rec.route}")
            prepared.append((rec, payload, sha256_hex(payload)))
        frozen_inputs = tuple((str(p), str(h)) for p, h in inputs)
        inputs_text = dumps([{"path": p, "sha256": h} for p, h in frozen_inputs])
        written: list[Entry] = []
        if not prepared:
            return written
        with self._appending():
            seq, prev = self._head("entries")
            for rec, payload, payload_sha in prepared:
                seq += 1
                entry_sha = forecast_hash(seq, kind, rec.route, rec.file, payload_sha, prev, rec.policy,
                                          pcsc_version, frozen_inputs, stamp)
                entry = Entry(seq, kind, rec.route, rec.file, payload, payload_sha, prev, entry_sha,
                              rec.policy, pcsc_version, frozen_inputs, stamp)
                self._stored(
                    "entries", _ENTRY_COLUMNS,
                    (seq, kind, rec.route, rec.file, payload, payload_sha, prev, entry_sha, rec.policy.id,
                     rec.policy.version, rec.policy.sha256, pcsc_version, inputs_text, stamp),
                )
                written.append(entry)
                prev = entry_sha
            self._last_is("entries", seq, prev)
        return written

    def append_plan(
        self,
        record: ForecastRecord,
        *,
        inputs: Sequence[tuple[str, str]],
        frozen_at: dt.datetime | None = None,
    ) -> Entry:
        """Freeze a preregistered plan (`pcsc.forecast.prereg`) in the forecast chain, as an
        entry of kind ``prereg`` (``route`` is the plan's name): every outcome recorded
        after it anchors at or above its seq, which is how a plan is shown to precede its
        outcomes. A ledger of schema 1 is upgraded first (`upgrade`)."""
        if self.schema_version < 2:
            self.upgrade()
        return self.append_forecasts([record], inputs=inputs, frozen_at=frozen_at, kind="prereg")[0]

    def upgrade(self) -> None:
        """Bring a ledger of schema 1 to schema 2, whose `entries` may also hold plans: in
        one write transaction, the table is rebuilt under the new CHECK with every row
        copied unchanged, its index and guards made again, and the whole ledger verified
        under schema 2 before the commit (else rolled back, nothing changed). A ledger
        that does not verify is not upgraded (`LedgerUnverified`)."""
        verification = self.verify()
        if not verification.ok:
            raise LedgerUnverified(self.path, verification.problems)
        with self._write():
            app, version, _ = self._identity(locked=True)
            if version >= 2:
                self.schema_version = version
                return
            before = self._rows("entries", _ENTRY_COLUMNS)
            self._conn.execute("ALTER TABLE entries RENAME TO entries_schema_1")
            new = [s for s in _statements(schema_script(2))
                   if s.startswith("CREATE TABLE entries") or re.search(r"\bON entries\b", s)]
            self._conn.execute(new[0])  # CREATE TABLE entries
            self._conn.execute(f"INSERT INTO entries ({_ENTRY_COLUMNS}) SELECT {_ENTRY_COLUMNS} "
                               "FROM entries_schema_1 ORDER BY seq")
            self._conn.execute("DROP TABLE entries_schema_1")  # its index and guards with it; no trigger fires
            for statement in new[1:]:
                self._conn.execute(statement)
            self._conn.execute("PRAGMA user_version = 2")
            self.schema_version = 2
            check = self._verification()
            if not check.ok or self._rows("entries", _ENTRY_COLUMNS) != before:
                self.schema_version = version
                problems = check.problems or (Problem("entries", None, "rows changed in the upgrade"),)
                raise LedgerUnverified(self.path, problems)
        self._verified = None

    def append_outcomes(
        self,
        records: Sequence[OutcomeRecord],
        *,
        pcsc_version: str | None = None,
        recorded_at: dt.datetime | None = None,
    ) -> list[Outcome]:
        """Append outcome ``records`` in one transaction (all or none), chained in the
        outcomes chain, each anchored to the current head of the forecast chain.
        Outcomes never change a frozen forecast. Returns the outcomes written."""
        stamp = utc_stamp(recorded_at)
        pcsc_version = pcsc_version or writer_version()
        prepared = []
        for rec in records:
            if rec.kind not in ("observation", "label"):
                raise LedgerError(f"outcome of route {rec.route}: kind must be observation or label, not {rec.kind!r}")
            payload = _canonical(rec.payload, f"outcome of route {rec.route}")
            prepared.append((rec, payload, sha256_hex(payload)))
        written: list[Outcome] = []
        if not prepared:
            return written
        with self._appending():
            forecast_seq, forecast_sha = self._head("entries")
            seq, prev = self._head("outcomes")
            for rec, payload, payload_sha in prepared:
                seq += 1
                observed = rec.observed.isoformat()
                entry_sha = outcome_hash(seq, rec.kind, rec.route, observed, payload_sha, prev, rec.source,
                                         forecast_seq, forecast_sha, pcsc_version, stamp)
                outcome = Outcome(seq, rec.kind, rec.route, observed, payload, payload_sha, prev, entry_sha,
                                  rec.source, forecast_seq, forecast_sha, pcsc_version, stamp)
                self._stored(
                    "outcomes", _OUTCOME_COLUMNS,
                    (seq, rec.kind, rec.route, observed, payload, payload_sha, prev, entry_sha, rec.source,
                     forecast_seq, forecast_sha, pcsc_version, stamp),
                )
                written.append(outcome)
                prev = entry_sha
            self._last_is("outcomes", seq, prev)
        return written

    # ------------------------------------------------------------------ reading
    def entries(self, route: str | None = None, file: str | None = None, kind: str = "forecast") -> list[Entry]:
        """Frozen forecasts in seq order, optionally only those of ``route`` (and ``file``);
        with ``kind="prereg"``, the preregistered plans instead (``route`` is a plan's name)."""
        sql, params = _filtered(f"SELECT {_ENTRY_COLUMNS} FROM entries", kind=kind, route=route, file=file)
        with self._reading("the forecasts"):
            rows = list(self._conn.execute(sql + " ORDER BY seq", params))
        return [self._entry(row) for row in rows]

    def plans(self, name: str | None = None) -> list[Entry]:
        """Preregistered plans (`pcsc prereg`) in seq order, optionally only those named ``name``."""
        return self.entries(name, kind="prereg")

    def outcomes(self, route: str | None = None) -> list[Outcome]:
        """Recorded outcomes in seq order, optionally only those of ``route``."""
        sql, params = _filtered(f"SELECT {_OUTCOME_COLUMNS} FROM outcomes", route=route)
        with self._reading("the outcomes"):
            rows = list(self._conn.execute(sql + " ORDER BY seq", params))
        return [_outcome(row) for row in rows]

    def head(self) -> Head:
        """The last row of both chains, read in one snapshot (not verified: `verify` is)."""
        with self._reading("the head"):
            self._conn.execute("BEGIN")
            try:
                (e_seq, e_sha), (o_seq, o_sha) = self._head("entries"), self._head("outcomes")
            finally:
                self._end_read()
        return Head(e_seq, e_sha, o_seq, o_sha)

    def identity(self) -> dict[str, Any]:
        """What names this ledger in a checkpoint: its file name, the PCSC mark, the
        schema, and the entry_sha256 of its first forecast (None while it has none)."""
        with self._reading("the first forecast"):
            row = self._conn.execute("SELECT entry_sha256 FROM entries WHERE seq = 1").fetchone()
        return {"file": self.path.name, "application_id": APPLICATION_ID, "schema": SCHEMA_VERSION,
                "first_forecast_sha256": None if row is None else str(row[0])}

    def _entry(self, row: tuple[Any, ...]) -> Entry:
        try:
            inputs = _inputs(row[12])
        except ValueError as exc:
            raise LedgerError(f"{self.path}: entries seq {row[0]}: {exc}; run `pcsc ledger verify`") from None
        return Entry(int(row[0]), str(row[1]), str(row[2]), str(row[3]), _text(row[4]), str(row[5]), str(row[6]),
                     str(row[7]), PolicyId(str(row[8]), str(row[9]), str(row[10])), str(row[11]), inputs,
                     str(row[13]))

    # ------------------------------------------------------------------ checking
    def verify(self, head: HeadToken | None = None) -> Verification:
        """Recompute every payload hash, entry hash, link and outcome anchor of both
        chains, in one snapshot; compare every schema object's SQL with this version's
        (`_schema_problems`); run SQLite's integrity check; with ``head``, check that both
        chains still hold that recorded head. Reports the first bad row of each table,
        then every schema, file and head problem. A file SQLite cannot read is a
        problem, not an exception."""
        try:
            self._conn.execute("BEGIN")
            try:
                return self._verification(head)
            finally:
                self._end_read()
        except sqlite3.Error as exc:
            return Verification(0, 0, GENESIS, GENESIS, (Problem("file", None, self._fault("cannot read", exc)),))

    def _verification(self, head: HeadToken | None = None) -> Verification:
        """`verify`'s reads and checks, in the caller's transaction (a hook, like `_insert`)."""
        entry_rows = self._rows("entries", _ENTRY_COLUMNS)
        outcome_rows = self._rows("outcomes", _OUTCOME_COLUMNS)
        more = self._schema_check()
        more += [Problem("file", None, f"SQLite's integrity check failed: {m}") for m in self._integrity()]
        return check_chains(entry_rows, outcome_rows, more, head, guards=GUARDS, integrity=True,
                            schema=tuple(f"{kind} {name}" for kind, name in expected_schema(self.schema_version)),
                            compared_by=SQLITE_COMPARED_BY)

    def _schema_check(self) -> list[Problem]:
        """The schema's problems alone, in the caller's transaction: no row is read (a hook)."""
        return _schema_problems(self._schema_objects(), self.schema_version)

    def _rows(self, table: str, columns: str) -> list[tuple[Any, ...]] | Problem:
        try:
            return list(self._conn.execute(f"SELECT {columns} FROM {table} ORDER BY seq"))
        except sqlite3.DatabaseError as exc:
            return Problem(table, None, f"cannot read the table: {exc}")

    def _schema_objects(self) -> list[tuple[str, str, str, str]] | Problem:
        """Every object of the file's schema: (type, name, table, SQL)."""
        try:
            rows = self._conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
            return [(str(kind), str(name), str(table), str(sql or "")) for kind, name, table, sql in rows]
        except sqlite3.DatabaseError as exc:
            return Problem("schema", None, f"cannot read the schema: {exc}")

    def _integrity(self) -> list[str]:
        """SQLite's ``PRAGMA integrity_check`` (at most 10 messages); empty when it passes."""
        try:
            found = [" ".join(str(row[0]).split()) for row in self._conn.execute("PRAGMA integrity_check(10)")]
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [] if found == ["ok"] else found


def check_chains(
    entry_rows: list[tuple[Any, ...]] | Problem,
    outcome_rows: list[tuple[Any, ...]] | Problem,
    schema_problems: list[Problem],
    head: HeadToken | None = None,
    *,
    guards: tuple[str, ...] = (),
    integrity: bool = False,
    schema: tuple[str, ...] = (),
    compared_by: str = "",
) -> Verification:
    """The verification of both chains from their rows (or the problem reading each), in
    the columns of `entries` and `outcomes` and in seq order, whatever database they came
    from: every payload hash, entry hash, link and outcome anchor, then the backend's own
    ``schema_problems`` (its guards, its file), then the recorded ``head``. When all
    holds, ``chains`` says where they end, for `continue_chains`."""
    problems: list[Problem] = []
    entries, outcomes = (0, GENESIS, 0), (0, GENESIS, 0)
    # seq -> the stored entry_sha256, for the outcomes' anchors; in seq order (`_outcome_expected`)
    forecast_heads = {0: GENESIS}
    if isinstance(entry_rows, Problem):
        problems.append(entry_rows)
        entry_rows = []
    else:
        forecast_heads.update((int(row[0]), str(row[7])) for row in entry_rows)
        entries, problem = _verify_chain("entries", entry_rows, _forecast_expected, forecast_heads)
        problems += [problem] if problem else []
    if isinstance(outcome_rows, Problem):
        problems.append(outcome_rows)
        outcome_rows = []
    else:
        outcomes, problem = _verify_chain("outcomes", outcome_rows, _outcome_expected, forecast_heads)
        problems += [problem] if problem else []
    problems += schema_problems
    check = None
    if head is not None:
        check, problem = _check_head(head, entry_rows, outcome_rows)
        problems += [problem] if problem else []
    chains = None if problems else Chains(entries[:2], outcomes, _anchorable(forecast_heads, outcomes))
    return Verification(len(entry_rows), len(outcome_rows), entries[1], outcomes[1], tuple(problems),
                        guards=guards, integrity=integrity, head_check=check, schema=schema, compared_by=compared_by,
                        chains=chains, plans=sum(1 for row in entry_rows if row[1] == "prereg"))


def _schema_problems(objects: list[tuple[str, str, str, str]] | Problem,
                     version: int = SCHEMA_VERSION) -> list[Problem]:
    """Every object of ``sqlite_master`` (type, name, table, SQL) against `expected_schema`:
    a guard trigger, table or index missing or with other SQL (a no-op trigger under a
    guard's name, a guard with a WHEN or an UPDATE OF, a table without its CHECKs), and
    any object pcsc does not create (a trigger that swallows inserts, a view, an index)."""
    if isinstance(objects, Problem):
        return [objects]
    expected = expected_schema(version)
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for kind, name, table, sql in objects:
        if kind != "table" or name not in _STATISTICS:
            found.setdefault((kind, name), []).append((table, _normal_sql(sql)))
    problems = []
    missing = [name for (kind, name) in expected if kind == "trigger" and (kind, name) not in found]
    if missing:
        problems.append(Problem("schema", None, "append-only guard triggers are missing: " + ", ".join(missing)))
    problems += [Problem("schema", None, f"{kind} {name} is missing") for (kind, name) in expected
                 if kind != "trigger" and (kind, name) not in found]
    for (kind, name), copies in sorted(found.items()):
        if (kind, name) not in expected:
            on = f" on {copies[0][0]}" if copies[0][0] != name else ""
            problems.append(Problem("schema", None, f"unknown {kind} {name}{on}: pcsc creates no such {kind}"))
        elif copies != [expected[kind, name]]:
            what = f"guard trigger {name}" if kind == "trigger" else f"{kind} {name}"
            problems.append(Problem("schema", None, f"{what} has been altered: its SQL is not the SQL pcsc creates, "
                                    "so it may no longer refuse what it should"))
    return problems


def _check_head(
    head: HeadToken, entry_rows: list[tuple[Any, ...]], outcome_rows: list[tuple[Any, ...]]
) -> tuple[HeadCheck, Problem | None]:
    """Whether both chains still hold the recorded ``head``: rows E and O must exist
    with entry hashes whose head hash is the token's. The chains themselves are checked
    by `_verify_chain`; each entry hash covers every row before it."""
    def stored(rows: list[tuple[Any, ...]], seq: int) -> str | None:
        if seq == 0:
            return GENESIS
        if seq <= len(rows) and int(rows[seq - 1][0]) == seq:
            return str(rows[seq - 1][7])
        by_seq = {int(r[0]): str(r[7]) for r in rows}
        return by_seq.get(seq)

    e_sha, o_sha = stored(entry_rows, head.entries_seq), stored(outcome_rows, head.outcomes_seq)
    last_e = int(entry_rows[-1][0]) if entry_rows else 0
    last_o = int(outcome_rows[-1][0]) if outcome_rows else 0
    appended = (max(0, len(entry_rows) - head.entries_seq), max(0, len(outcome_rows) - head.outcomes_seq))
    lost = [f"{table} ends at seq {last} but the head was recorded at seq {seq}"
            for table, sha, last, seq in (("entries", e_sha, last_e, head.entries_seq),
                                          ("outcomes", o_sha, last_o, head.outcomes_seq)) if sha is None]
    if lost:
        message = "; ".join(lost) + f": rows at or before the recorded head {head} were deleted"
        return HeadCheck(head, False, 0, 0), Problem("head", None, message)
    assert e_sha is not None and o_sha is not None
    if head_hash(head.entries_seq, e_sha, head.outcomes_seq, o_sha) != head.sha256:
        message = (f"the rows at the recorded head {head} (entries seq {head.entries_seq}, outcomes seq "
                   f"{head.outcomes_seq}) do not hash to it: rows at or before the head were rewritten (or "
                   "deleted and replaced)")
        return HeadCheck(head, False, 0, 0), Problem("head", None, message)
    return HeadCheck(head, True, *appended), None


@attrs.frozen
class _Expected:
    entry_sha256: str | None = None  # what the row's entry_sha256 must be
    problem: str | None = None  # or why it cannot be computed
    anchor: int = 0  # for an outcome: its forecast_seq, the least the next outcome's may be


def _forecast_expected(row: tuple[Any, ...], _: dict[int, str], __: int) -> _Expected:
    try:
        inputs = _inputs(row[12])
    except ValueError as exc:
        return _Expected(problem=str(exc))
    policy = PolicyId(str(row[8]), str(row[9]), str(row[10]))
    return _Expected(forecast_hash(int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[5]), str(row[6]),
                                   policy, str(row[11]), inputs, str(row[13])))


def _outcome_expected(row: tuple[Any, ...], forecast_heads: dict[int, str], anchor: int) -> _Expected:
    forecast_seq, forecast_sha = row[9], str(row[10])
    last = next(reversed(forecast_heads))  # its keys are in seq order
    if not isinstance(forecast_seq, int) or not anchor <= forecast_seq <= last:
        return _Expected(problem=f"forecast_seq {forecast_seq!r} is not a forecast seq from {anchor} (the previous "
                                 f"outcome's) to {last} (the last)")
    if forecast_heads.get(forecast_seq) != forecast_sha:
        return _Expected(problem=f"forecast_sha256 is not the entry_sha256 of forecast seq {forecast_seq}")
    source = None if row[8] is None else str(row[8])
    return _Expected(outcome_hash(int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[5]), str(row[6]),
                                  source, forecast_seq, forecast_sha, str(row[11]), str(row[12])),
                     anchor=forecast_seq)


_Link = tuple[int, str, int]  # where a chain's valid prefix ends: (seq, entry_sha256, anchor)


def _verify_chain(
    table: str,
    rows: list[tuple[Any, ...]],
    expected: Callable[[tuple[Any, ...], dict[int, str], int], _Expected],
    forecast_heads: dict[int, str],
    start: _Link = (0, GENESIS, 0),
) -> tuple[_Link, Problem | None]:
    """Where the valid prefix of one chain ends, and its first problem; ``rows`` follow
    the row ``start`` (the genesis, or a head verified before). Rows are (seq, kind,
    route, …, payload [4], payload_sha256 [5], prev_sha256 [6], entry_sha256 [7], …)."""
    last = start
    for index, row in enumerate(rows, start=start[0] + 1):
        seq, payload = int(row[0]), _text(row[4])
        problem = _check_link(table, seq, index, row[5], row[6], last[1], payload)
        if problem is not None:
            return last, problem
        want = expected(row, forecast_heads, last[2])
        if want.problem is not None or want.entry_sha256 is None:
            return last, Problem(table, seq, str(want.problem))
        problem = _check_entry_hash(table, seq, row[7], want.entry_sha256, payload)
        if problem is not None:
            return last, problem
        last = (seq, str(row[7]), want.anchor)
    return last, None


def continue_chains(
    verified: Chains, entry_rows: list[tuple[Any, ...]], outcome_rows: list[tuple[Any, ...]]
) -> tuple[Chains, list[Problem]]:
    """`check_chains` for the rows appended after ``verified``: each new row is checked
    as `verify` checks it, from the verified heads on, without reading the rows before."""
    forecast_heads = {**verified.forecast_heads, **{int(row[0]): str(row[7]) for row in entry_rows}}
    entries, entry_problem = _verify_chain("entries", entry_rows, _forecast_expected, forecast_heads,
                                           (*verified.entries, 0))
    outcomes, outcome_problem = _verify_chain("outcomes", outcome_rows, _outcome_expected, forecast_heads,
                                              verified.outcomes)
    chains = Chains(entries[:2], outcomes, _anchorable(forecast_heads, outcomes))
    return chains, [p for p in (entry_problem, outcome_problem) if p is not None]


def _statements(script: str) -> list[str]:
    """The statements of the schema script (split at `;` that end a statement)."""
    out, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    return [s for s in out if s]


def _filtered(sql: str, **where: str | None) -> tuple[str, list[str]]:
    clauses = [f"{column} = ?" for column, value in where.items() if value is not None]
    params = [value for value in where.values() if value is not None]
    return (sql + (" WHERE " + " AND ".join(clauses) if clauses else "")), params


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="surrogateescape")
    return str(value)


def _inputs(text: Any) -> tuple[tuple[str, str], ...]:
    try:
        items = json.loads(_text(text))
        return tuple((str(i["path"]), str(i["sha256"])) for i in items)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"inputs is not a JSON list of {{path, sha256}} ({exc})") from None


def _outcome(row: tuple[Any, ...]) -> Outcome:
    return Outcome(int(row[0]), str(row[1]), str(row[2]), str(row[3]), _text(row[4]), str(row[5]), str(row[6]),
                   str(row[7]), None if row[8] is None else str(row[8]), int(row[9]), str(row[10]), str(row[11]),
                   str(row[12]))


def _check_link(table: str, seq: int, expected_seq: int, payload_sha: Any, prev_sha: Any, prev_head: str,
                payload: str) -> Problem | None:
    if seq != expected_seq:
        missing = f"seq {expected_seq}" if seq == expected_seq + 1 else f"seqs {expected_seq}–{seq - 1}"
        return Problem(table, seq, f"follows seq {expected_seq - 1}: {missing} missing (a row was deleted)")
    if sha256_hex(payload.encode("utf-8", errors="surrogateescape")) != payload_sha:
        return Problem(table, seq, "the payload does not match its payload_sha256: it was changed after it was written")
    if prev_sha != prev_head:
        before = "the genesis (64 zeros)" if seq == 1 else f"the entry_sha256 of seq {seq - 1}"
        return Problem(table, seq, f"prev_sha256 is not {before}: the chain is broken here")
    return None


def _check_entry_hash(table: str, seq: int, stored: Any, expected: str, payload: str) -> Problem | None:
    if stored != expected:
        return Problem(table, seq, "entry_sha256 does not match the row's fields: a column (route, file, policy, "
                       "pcsc version, inputs, time, kind or a hash) was changed after it was written")
    try:
        canonical = dumps(json.loads(payload)) == payload
    except ValueError:
        canonical = False
    if not canonical:
        return Problem(table, seq, "the payload is not canonical JSON: it was not written by pcsc")
    return None


class _FolderReadOnly(LedgerError):
    """SQLite could not open or write beside the file: a read-only folder, most likely."""


def _error_name(exc: sqlite3.Error) -> str:
    """SQLite's primary result code name (``SQLITE_FULL``, …), or "" when unknown."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    return name.split("_")[0] + "_" + name.split("_")[1] if name.count("_") > 1 else name


def _wal_file(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.resolve()), safe="/")


_HINTS = {
    "SQLITE_FULL": "the disk (or the ledger's size limit) is full",
    "SQLITE_READONLY": "the ledger file (or its folder) is read-only",
    "SQLITE_CORRUPT": "the file is damaged; restore it from a copy and check it with `pcsc ledger verify`",
    "SQLITE_NOTADB": "the file is damaged or not a ledger",
    "SQLITE_IOERR": "the disk or file system failed",
    "SQLITE_CANTOPEN": "the file or its folder cannot be opened",
    "SQLITE_PERM": "access is denied",
}


def fault_message(path: Path, doing: str, exc: sqlite3.Error) -> str:
    """The message of an SQLite failure: the ledger, what was being done, SQLite's own
    message, and what it means."""
    hint = _HINTS.get(_error_name(exc))
    return f"{path}: {doing}: {exc}" + (f" ({hint})" if hint else "")


def create_and_append(
    path: Path | str,
    records: Sequence[ForecastRecord],
    *,
    inputs: Sequence[tuple[str, str]],
    pcsc_version: str | None = None,
    frozen_at: dt.datetime | None = None,
) -> list[Entry]:
    """Append ``records`` to the ledger at ``path`` (`Ledger.append_forecasts`), creating
    it when absent. A new ledger is built in a hidden file beside ``path`` and linked into
    place only once its forecasts are committed, so a failure leaves no file (nor a folder
    this made) behind, and other processes see the new ledger whole or not at all. Nothing
    to append creates nothing. A PostgreSQL ledger is created (when absent) in the
    transaction that appends the first forecasts."""
    path = ledger_location(path)
    if isinstance(path, LedgerURL):  # a database: `pcsc.forecast.stores.create_and_append` handles it
        raise LedgerError(f"{path} is a database ledger: append to it with pcsc.forecast.stores.create_and_append")
    if path.exists() or not records:
        if not records and not path.exists():
            return []
        with Ledger.open(path, create=True) as ledger:
            return ledger.append_forecasts(records, inputs=inputs, pcsc_version=pcsc_version, frozen_at=frozen_at)
    made = _make_folders(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.new")
    try:
        with Ledger._connect(temporary, path, True) as ledger:
            entries = ledger.append_forecasts(records, inputs=inputs, pcsc_version=pcsc_version, frozen_at=frozen_at)
        linked = _link_new(temporary, path)
    except BaseException:
        _remove_new(temporary)
        for folder in reversed(made):
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    _remove_new(temporary)
    if linked:
        return entries
    with Ledger.open(path, create=True) as ledger:  # another process created it first: append to theirs
        return ledger.append_forecasts(records, inputs=inputs, pcsc_version=pcsc_version, frozen_at=frozen_at)


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; the folders created, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    made: list[Path] = []
    for each in reversed(missing):
        try:
            each.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            for done in reversed(made):
                try:
                    done.rmdir()
                except OSError:
                    break
            raise LedgerError(f"cannot create the folder {each}: {exc.strerror or exc}") from None
        made.append(each)
    return made


def _link_new(temporary: Path, path: Path) -> bool:
    """Put the finished ``temporary`` ledger at ``path`` unless a file is there already
    (False). A hard link never replaces a file; where the file system has none, a rename
    after a last look does."""
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    except OSError:
        if path.exists():
            return False
        try:
            os.replace(temporary, path)
        except OSError as exc:
            raise LedgerError(f"{path}: nothing written: cannot put the new ledger in place: "
                              f"{exc.strerror or exc}") from None
        return True


def _remove_new(temporary: Path) -> None:
    """Remove a temporary ledger and the files SQLite keeps beside it."""
    for each in (temporary, *(temporary.with_name(temporary.name + s) for s in ("-wal", "-shm", "-journal"))):
        try:
            each.unlink()
        except OSError:  # absent, or not ours to remove
            pass
