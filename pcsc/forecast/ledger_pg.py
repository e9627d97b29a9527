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
  update, delete, truncate, disable a trigger or alter a table.
- **Checked by its catalog.** `verify` compares every object of the ledger's schema
  with what this version creates (`_catalog_problems`): each guard trigger by its
  ``pg_trigger`` row (events and timing, UPDATE OF columns, WHEN condition, enabled,
  the function it runs) and each function by its body and attributes; the tables'
  columns, constraints, indexes and owner; every privilege held by a role other than
  the owner (PUBLIC nothing, others SELECT and INSERT only); and any other object,
  rule, row security policy or inheritance is a problem. Appends refuse a ledger that
  does not verify and read back what they wrote, as the SQLite ledger's do.
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

from pcsc.base.config import hide_credentials
from pcsc.base.extras import require
from pcsc.forecast.ledger import (
    _ENTRY_COLUMNS,
    _OUTCOME_COLUMNS,
    APPLICATION_ID,
    DEFAULT_PATH,
    GENESIS,
    SCHEMA_VERSION,
    Chains,
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


_TABLES = {  # table -> its columns, one a line: what `_schema` creates and what `verify` expects
    "pcsc_identity": """
    application_id bigint NOT NULL,
    schema_version integer NOT NULL""",
    "entries": """
    seq            bigint PRIMARY KEY CHECK (seq >= 1),
    kind           text NOT NULL CHECK (kind IN ('forecast', 'prereg')),
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
    frozen_at      text NOT NULL""",
    "outcomes": """
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
    recorded_at     text NOT NULL""",
}
_BY_ROUTE = {"entries_by_route": "entries", "outcomes_by_route": "outcomes"}


def _schema() -> list[str]:
    statements = []
    for table, columns in _TABLES.items():
        statements.append(f"CREATE TABLE {table} ({columns})")
        statements += [f"CREATE INDEX {index} ON {table} (route)" for index, on in _BY_ROUTE.items() if on == table]
    for name, body in FUNCTIONS.items():
        statements.append(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $pcsc${body}$pcsc$")
    for trigger, (table, tgtype, function) in GUARDS.items():
        each = "ROW" if tgtype & 1 else "STATEMENT"
        statements.append(f"CREATE TRIGGER {trigger} {_TIMING[tgtype]} ON {table} FOR EACH {each} "
                          f"EXECUTE FUNCTION {function}()")
    statements.append("REVOKE ALL ON pcsc_identity, entries, outcomes FROM PUBLIC")
    return statements


# ---------------------------------------------------------------------- the catalog, as pcsc creates it
_CONSTRAINTS = {  # (table, constraint) -> pg_get_constraintdef
    ("entries", "entries_pkey"): "PRIMARY KEY (seq)",
    ("entries", "entries_seq_check"): "CHECK ((seq >= 1))",
    ("entries", "entries_kind_check"): "CHECK ((kind = ANY (ARRAY['forecast'::text, 'prereg'::text])))",
    ("outcomes", "outcomes_pkey"): "PRIMARY KEY (seq)",
    ("outcomes", "outcomes_seq_check"): "CHECK ((seq >= 1))",
    ("outcomes", "outcomes_kind_check"): "CHECK ((kind = ANY (ARRAY['observation'::text, 'label'::text])))",
}
_INDEXES = {  # index -> (table, pg_get_indexdef with the schema left out)
    **{f"{t}_pkey": (t, f"CREATE UNIQUE INDEX {t}_pkey ON {t} USING btree (seq)") for t in ("entries", "outcomes")},
    **{i: (t, f"CREATE INDEX {i} ON {t} USING btree (route)") for i, t in _BY_ROUTE.items()},
}
OBJECTS = (  # what `verify` compares, as its report names them
    *(f"trigger {g}" for g in GUARDS), *(f"function {f}()" for f in FUNCTIONS), *(f"table {t}" for t in _TABLES),
    *(f"index {i}" for i in _INDEXES),
)
COMPARED_BY = ("their catalog rows (pg_trigger, the functions' pg_proc rows and bodies, pg_class, pg_attribute, "
               "pg_constraint, pg_index), with every privilege, rule, row security policy and inheritance")
# pg_class.relkind
_RELATION = {"r": "table", "i": "index", "S": "sequence", "v": "view", "m": "materialized view", "c": "type",
             "f": "foreign table", "p": "partitioned table", "I": "partitioned index"}
# a role other than the owner may hold these (the pipelines' role: docs/forecast.md)
_GRANTABLE = ("SELECT", "INSERT")

_HERE = "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
_CATALOG = {  # what `_catalog` reads: every object of the ledger's schema, and what hangs on its tables
    "relations": "SELECT c.relname, c.relkind, c.relpersistence, c.relrowsecurity OR c.relforcerowsecurity, "
                 "c.relispartition, COALESCE(am.amname, ''), pg_get_userbyid(c.relowner) FROM pg_class c "
                 f"LEFT JOIN pg_am am ON am.oid = c.relam WHERE c.relnamespace = {_HERE}",
    "columns": "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef, "
               "a.attidentity FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
               f"WHERE c.relnamespace = {_HERE} AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped "
               "ORDER BY c.relname, a.attnum",
    "constraints": "SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k "
                   f"JOIN pg_class c ON c.oid = k.conrelid WHERE c.relnamespace = {_HERE} AND k.contype <> 'n'",
    "indexes": "SELECT i.relname, replace(pg_get_indexdef(x.indexrelid), ' ON ' || quote_ident(current_schema()) "
               "|| '.', ' ON '), x.indisvalid AND x.indisready AND x.indislive FROM pg_index x "
               f"JOIN pg_class i ON i.oid = x.indexrelid WHERE i.relnamespace = {_HERE}",
    "triggers": "SELECT t.tgname, c.relname, t.tgtype, t.tgenabled, t.tgisinternal OR t.tgconstraint <> 0 OR "
                "t.tgdeferrable OR t.tginitdeferred, t.tgnargs, t.tgattr::text, t.tgqual IS NOT NULL, "
                "t.tgoldtable IS NOT NULL OR t.tgnewtable IS NOT NULL, pn.nspname, p.proname, "
                "pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace pn ON pn.oid = p.pronamespace "
                f"WHERE c.relnamespace = {_HERE}",
    "functions": "SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', p.prokind, "
                 "l.lanname, p.prosrc, p.prosecdef, p.proconfig IS NOT NULL, p.prorettype::regtype::text, "
                 "pg_get_userbyid(p.proowner) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
                 f"WHERE p.pronamespace = {_HERE}",
    "rules": "SELECT r.rulename, c.relname, pg_get_ruledef(r.oid) FROM pg_rewrite r "  # a view's own is not one
             f"JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = {_HERE} AND c.relkind IN ('r', 'p')",
    "policies": "SELECT pol.polname, c.relname FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid "
                f"WHERE c.relnamespace = {_HERE}",
    "inherits": "SELECT ch.oid::regclass::text, par.oid::regclass::text FROM pg_inherits i "
                "JOIN pg_class par ON par.oid = i.inhparent JOIN pg_class ch ON ch.oid = i.inhrelid "
                f"WHERE par.relnamespace = {_HERE} OR ch.relnamespace = {_HERE}",
    "privileges": "SELECT c.relname, NULL, a.grantee = 0, pg_get_userbyid(a.grantee), a.privilege_type, "
                  f"a.is_grantable FROM pg_class c, aclexplode(c.relacl) a WHERE c.relnamespace = {_HERE} "
                  "AND a.grantee <> c.relowner UNION ALL "
                  "SELECT c.relname, att.attname, a.grantee = 0, pg_get_userbyid(a.grantee), a.privilege_type, "
                  "a.is_grantable FROM pg_attribute att JOIN pg_class c ON c.oid = att.attrelid, "
                  f"aclexplode(att.attacl) a WHERE c.relnamespace = {_HERE} AND a.grantee <> c.relowner",
    "others": "SELECT 'type', t.typname FROM pg_type t WHERE t.typnamespace = " + _HERE + " AND t.typrelid = 0 "
              "AND NOT EXISTS (SELECT FROM pg_type e WHERE e.oid = t.typelem AND e.typrelid <> 0) UNION ALL "
              f"SELECT 'operator', o.oprname FROM pg_operator o WHERE o.oprnamespace = {_HERE}",
}
Catalog = dict[str, list[tuple[Any, ...]]]


def _columns(table: str) -> list[tuple[str, str, bool, bool, str]]:
    """(name, type, NOT NULL, has a default, identity) of each column `_schema` creates in ``table``."""
    lines = [line.rstrip(",").split() for line in _TABLES[table].strip().splitlines()]
    return [(words[0], words[1], "NOT" in words or "PRIMARY" in words, False, "") for words in lines]


def _which(*changes: tuple[str, Any]) -> list[str]:
    """The descriptions of the ``changes`` (description, whether it was made) that were made."""
    return [description for description, made in changes if made]


# a ledger created by schema 1 allowed forecasts alone; it is read, verified and appended to as it is
_KIND_CHECK_1 = "CHECK ((kind = 'forecast'::text))"


def _catalog_problems(found: Catalog, schema: str) -> list[Problem]:
    """Every object of the ledger's schema against what `_schema` creates: each guard
    trigger by its catalog row (events and timing, UPDATE OF columns, WHEN condition,
    enabled, the function it runs) and each function by its body and attributes; the
    tables' columns, constraints, indexes and owner; every privilege held by a role
    other than the owner; and any object, rule, policy or inheritance pcsc does not create."""
    problems = [*_trigger_problems(found, schema), *_function_problems(found), *_relation_problems(found, schema)]
    problems += [f"rule {name} on {table}: pcsc creates no rules ({' '.join(str(sql).split())})"
                 for name, table, sql in sorted(found["rules"])]
    problems += [f"row security policy {name} on {table}: pcsc creates no policies"
                 for name, table in sorted(found["policies"])]
    problems += [f"table {child} inherits from {parent}: pcsc creates no inheritance (a child's rows are read as "
                 "its parent's, and only its own triggers guard them)" for child, parent in sorted(found["inherits"])]
    problems += _privilege_problems(found)
    problems += [f"unknown {kind} {name} in schema {schema}: pcsc creates no such {kind}"
                 for kind, name in sorted(found["others"])]
    return [Problem("schema", None, p) for p in problems]


def _relation_problems(found: Catalog, schema: str) -> list[str]:
    problems = []
    expected = {**dict.fromkeys(_TABLES, "r"), **dict.fromkeys(_INDEXES, "i")}
    relations = {str(row[0]): row for row in found["relations"]}
    problems += [f"{_RELATION[kind]} {name} is missing" for name, kind in expected.items() if name not in relations]
    for name, (_, kind, persistence, row_security, partition, method, _owner) in sorted(relations.items()):
        if expected.get(name) != kind:
            what = _RELATION.get(kind, "relation")
            problems.append(f"unknown {what} {name} in schema {schema}: pcsc creates no such {what}")
        elif kind == "r":
            changes = _which(
                ("it is UNLOGGED (a crash loses its rows)", persistence != "p"),
                ("row-level security is on (rows can be hidden from a reader)", row_security),
                ("it is a partition", partition),
                (f"its access method is {method}", method != "heap"),
            )
            if changes:
                problems.append(f"table {name} has been altered: " + "; ".join(changes))
    owners = sorted({(str(row[6]), str(row[0])) for row in found["relations"] if row[1] == "r" and row[0] in _TABLES}
                    | {(str(row[7]), str(row[0])) for row in found["functions"]})
    if len({owner for owner, _ in owners}) > 1:
        listed = ", ".join(f"{name} by {owner}" for owner, name in owners)
        problems.append(f"the ledger's tables and functions have more than one owner ({listed}): whoever owns one "
                        "can drop or replace its guards")
    columns: dict[str, list[tuple[str, str, bool, bool, str]]] = {}
    for table, name, kind, not_null, default, identity in found["columns"]:
        columns.setdefault(str(table), []).append((str(name), str(kind), bool(not_null), bool(default), str(identity)))
    for table in _TABLES:
        if table in columns and columns[table] != _columns(table):
            problems.append(f"table {table} has been altered: its columns are not the columns pcsc creates")
    constraints = {(str(table), str(name)): str(sql) for table, name, sql in found["constraints"]}
    for (table, name), sql in sorted(constraints.items()):
        want = _CONSTRAINTS.get((table, name))
        if want is None:
            problems.append(f"unknown constraint {name} on {table}: pcsc creates no such constraint ({sql})")
        elif sql != want:
            problems.append(f"constraint {name} on {table} has been altered: it is now {sql}, not {want}")
    problems += [f"constraint {name} on {table} is missing" for table, name in _CONSTRAINTS
                 if table in columns and (table, name) not in constraints]
    for name, sql, usable in sorted(found["indexes"]):
        if name in _INDEXES and (sql != _INDEXES[name][1] or not usable):
            problems.append(f"index {name} has been altered: it is now {sql}" + ("" if usable else " (not valid)"))
    return problems


def _trigger_problems(found: Catalog, schema: str) -> list[str]:
    triggers = {(str(row[0]), str(row[1])): row for row in found["triggers"]}
    problems = []
    missing = [name for name, (table, *_) in GUARDS.items() if (name, table) not in triggers]
    if missing:
        problems.append("append-only guard triggers are missing: " + ", ".join(missing))
    for (name, table), row in sorted(triggers.items()):
        guard = GUARDS.get(name)
        if guard is None or guard[0] != table:
            problems.append(f"unknown trigger {name} on {table}: pcsc creates no such trigger ({row[11]})")
            continue
        tgtype, enabled, constraint, nargs, columns, when, transition, namespace, function, sql = row[2:]
        changes = _which(
            (f"its events or timing (tgtype {tgtype}, not {guard[1]})", tgtype != guard[1]),
            ("it fires only on UPDATE OF some columns", columns not in ("", None)),
            ("it has a WHEN condition", when),
            ("it is a constraint trigger", constraint),
            ("it takes arguments", nargs != 0),
            ("it has transition tables", transition),
            (f"it runs {namespace}.{function}(), not {schema}.{guard[2]}()", (namespace, function) != (schema,
                                                                                                  guard[2])),
        )
        if changes:
            problems.append(f"guard trigger {name} has been altered: " + "; ".join(changes) + f": it is now `{sql}`, "
                            "so it may no longer refuse what it should")
        if enabled != "O":
            problems.append(f"guard trigger {name} is disabled (tgenabled {enabled!r})")
    return problems


def _function_problems(found: Catalog) -> list[str]:
    functions = {str(row[0]): row for row in found["functions"]}
    problems = [f"trigger function {name}() is missing" for name in FUNCTIONS if f"{name}()" not in functions]
    for signature, (_, kind, language, body, definer, configured, returns, _owner) in sorted(functions.items()):
        name = signature.removesuffix("()")
        if name not in FUNCTIONS or signature != f"{name}()":
            problems.append(f"unknown function {signature}: pcsc creates no such function")
            continue
        changes = _which(
            ("it is not a plain function", kind != "f"),
            (f"its language is {language}", language != "plpgsql"),
            ("its body is not the body pcsc creates", _normal(str(body)) != _normal(FUNCTIONS[name])),
            ("it runs as its owner (SECURITY DEFINER)", definer),
            ("it sets configuration when called (ALTER FUNCTION … SET)", configured),
            (f"it returns {returns}", returns != "trigger"),
        )
        if changes:
            problems.append(f"trigger function {signature} has been altered: " + "; ".join(changes))
    return problems


def _privilege_problems(found: Catalog) -> list[str]:
    held: dict[tuple[str, str, bool], list[str]] = {}
    for table, column, public, grantee, privilege, grantable in found["privileges"]:
        where = str(table) if column is None else f"column {table}.{column}"
        who = "PUBLIC" if public else str(grantee)
        if public or privilege not in _GRANTABLE:
            held.setdefault((who, where, False), []).append(str(privilege))
        elif grantable:
            held.setdefault((who, where, True), []).append(str(privilege))
    problems = []
    for (who, where, grant_option), privileges in sorted(held.items()):
        listed = ", ".join(sorted(privileges))
        if grant_option:
            problems.append(f"{who} may grant {listed} on {where} to others (WITH GRANT OPTION)")
        elif who == "PUBLIC":
            problems.append(f"PUBLIC holds {listed} on {where}: pcsc grants PUBLIC nothing")
        else:
            problems.append(f"{who} holds {listed} on {where}: a role other than the owner may hold only SELECT "
                            "and INSERT")
    return problems


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
        self._verified: Chains | None = None
        self.schema_version = SCHEMA_VERSION  # the identity row's, once opened

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
                problems = self._schema_check()
                if problems:  # rolled back: a ledger made here would never verify
                    raise LedgerError(f"{self.path}: no ledger created: schema {schema} holds what pcsc does not "
                                      f"create ({problems[0].message}): give the ledger a schema of its own")
                return
            if found[0] is None:
                raise LedgerError(f"{self.path}: schema {schema} holds an `entries` table but is not a PCSC ledger")
            rows = self._pg.execute("SELECT application_id, schema_version FROM pcsc_identity").fetchall()
        if len(rows) != 1 or int(rows[0][0]) != APPLICATION_ID:
            raise LedgerError(f"{self.path} is not a PCSC ledger: pcsc_identity does not hold the PCSC mark")
        if int(rows[0][1]) > SCHEMA_VERSION:
            raise LedgerError(f"{self.path} is a PCSC ledger of schema version {rows[0][1]}, newer than this pcsc "
                              f"reads (schema {SCHEMA_VERSION}): use a newer pcsc")
        self.schema_version = int(rows[0][1])

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

    def entries(self, route: str | None = None, file: str | None = None, kind: str = "forecast") -> list[Entry]:
        rows = self._select(f"SELECT {_ENTRY_COLUMNS} FROM entries", {"kind": kind, "route": route, "file": file},
                            "the forecasts")
        return [self._entry(row) for row in rows]

    def outcomes(self, route: str | None = None) -> list[Outcome]:
        rows = self._select(f"SELECT {_OUTCOME_COLUMNS} FROM outcomes", {"route": route}, "the outcomes")
        return [_outcome(row) for row in rows]

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
        """The chain check of `Ledger.verify` on both tables and the check of the schema
        (`_catalog_problems`), read in one snapshot."""
        psycopg = _psycopg()
        try:
            with self._snapshot("the ledger"):
                return self._verification(head)
        except (LedgerError, psycopg.Error) as exc:
            return Verification(0, 0, GENESIS, GENESIS, (Problem("file", None, _message(exc)),))

    def _verification(self, head: HeadToken | None = None) -> Verification:
        entry_rows = self._pg.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY seq").fetchall()
        outcome_rows = self._pg.execute(f"SELECT {_OUTCOME_COLUMNS} FROM outcomes ORDER BY seq").fetchall()
        return check_chains(list(entry_rows), list(outcome_rows), self._schema_check(), head, guards=tuple(GUARDS),
                            schema=OBJECTS, compared_by=COMPARED_BY)

    def _schema_check(self) -> list[Problem]:
        schema = str(self._pg.execute("SELECT current_schema()").fetchone()[0])
        found = {what: list(self._pg.execute(sql).fetchall()) for what, sql in _CATALOG.items()}
        if self.schema_version == 1:  # schema 1's CHECK on entries.kind, exactly as it made it, is its own
            found["constraints"] = [(t, n, _CONSTRAINTS[t, n] if (t, n, d) == ("entries", "entries_kind_check",
                                                                             _KIND_CHECK_1) else d)
                                    for t, n, d in found["constraints"]]
        return _catalog_problems(found, schema)

    def upgrade(self) -> None:
        """A PostgreSQL ledger of schema 1 is not upgraded in place (its identity row is
        guarded against change): plans go into a ledger created by this pcsc."""
        raise LedgerError(f"{self.path}: nothing written: this PostgreSQL ledger was created with schema 1, which "
                          "holds forecasts alone; preregister in a ledger created by this pcsc (schema "
                          f"{SCHEMA_VERSION})")

    def _rows_after(self, table: str, columns: str, seq: int) -> list[tuple[Any, ...]]:
        return list(self._pg.execute(f"SELECT {columns} FROM {table} WHERE seq > %s ORDER BY seq", (seq,)))


def _message(exc: BaseException) -> str:
    """psycopg's message, on one line; libpq quotes the address in some, password and all."""
    return hide_credentials(" ".join(str(exc).split())) or type(exc).__name__
