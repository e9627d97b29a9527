"""The PostgreSQL ledger (`--ledger postgresql://…`, the extra pcsc[postgres]) against a
real server: the same commands, the same chains and head, append-only in the database,
concurrent writers from several processes, and a writer killed mid-transaction.

The server is the one `.ci/run` starts; its address is in PCSC_TEST_POSTGRES (a role
that may create schemas, and roles for the privilege test). Without it, or when the
server does not answer, these tests skip. Each test gets its own schema (chosen with
the address's ``search_path``) and drops it afterwards.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pcsc.forecast.ledger import ForecastRecord, LedgerError, PolicyId
from pcsc.forecast.stores import open_ledger
from tests.conftest import run_cli
from tests.test_forecast_loop import FAR, outcomes, write_routes

DSN = os.environ.get("PCSC_TEST_POSTGRES", "")


def _admin() -> Any:
    if not DSN:
        pytest.skip("PCSC_TEST_POSTGRES is not set (.ci/run starts a PostgreSQL server and sets it)")
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (the extra pcsc[postgres])")
    try:
        return psycopg.connect(DSN, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        pytest.skip(f"the PostgreSQL server at PCSC_TEST_POSTGRES does not answer: {exc}")


def _with_schema(dsn: str, schema: str) -> str:
    return dsn + ("&" if "?" in dsn else "?") + f"options=-csearch_path%3D{schema}"


@pytest.fixture
def admin() -> Iterator[Any]:
    conn = _admin()
    yield conn
    conn.close()


@pytest.fixture
def schema(admin: Any) -> Iterator[str]:
    import psycopg

    name = "pcsc_t_" + uuid.uuid4().hex[:12]
    try:
        admin.execute(f"CREATE SCHEMA {name}")
    except psycopg.errors.InsufficientPrivilege as exc:
        pytest.skip(f"the role of PCSC_TEST_POSTGRES cannot create a schema for the test: {exc}")
    yield name
    admin.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture
def url(schema: str) -> str:
    return _with_schema(DSN, schema)


def verified(capsys: pytest.CaptureFixture[str], url: str, *more: str) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", url, "--format", "json", *more)
    doc: dict[str, Any] = json.loads(out)
    doc["_code"] = code
    doc["_err"] = err + json.dumps(doc.get("diagnostics", []))
    return doc


# ---------------------------------------------------------------------- the commands
def test_freeze_resolve_verify_round_trip(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    routes = write_routes(tmp_path)
    code, out, err = run_cli(capsys, "freeze", *routes, "--ledger", url)
    assert code == 0, err
    assert "froze 2 prospective forecasts into postgresql://" in out
    code, head, _ = run_cli(capsys, "ledger", "head", "--ledger", url)
    assert code == 0 and head.startswith("2.0:")
    code, out, err = run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", url, "--as-of", FAR.isoformat())
    assert code == 0, err
    code, out, err = run_cli(capsys, "freeze", routes[0], "--ledger", url)
    assert code == 0, err
    doc = verified(capsys, url, "--head", head.strip())
    assert doc["_code"] == 0 and doc["ok"], doc
    assert doc["checked"]["rows"] == {"entries": 3, "outcomes": 5}
    assert doc["checked"]["recorded_head"]["held"]
    assert doc["checked"]["recorded_head"]["appended"] == {"entries": 1, "outcomes": 5}

    # the same chain as a SQLite ledger: every stored hash recomputes (verify), and
    # evaluate and show read it like a file
    code, out, err = run_cli(capsys, "evaluate", "--ledger", url, "--as-of", FAR.isoformat(), "--format", "json")
    assert code == 0, err
    code, out, err = run_cli(capsys, "ledger", "show", "--ledger", url)
    assert code == 0 and "devtools_api" in out and "rival_api" in out, err


def test_a_plan_is_frozen_graded_and_verified_in_postgresql(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pcsc prereg` into a database ledger: a `prereg` entry in the same chain, read apart
    from the forecasts, verified, graded by `evaluate --prereg`."""
    monkeypatch.chdir(tmp_path)
    assert run_cli(capsys, "freeze", *write_routes(tmp_path), "--ledger", url)[0] == 0
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nname = "p"\n\n[analysis]\nbootstrap = 50\n\n[[prediction]]\nid = "P1"\n'
                    'claim = "auc(score) >= 0.5"\n', encoding="utf-8")
    code, out, err = run_cli(capsys, "prereg", str(plan), "--ledger", url)
    assert code == 0 and "froze plan p" in out and "(seq 3," in out, err
    with open_ledger(url, create=False) as ledger:
        assert [e.route for e in ledger.entries()] == ["devtools_api", "rival_api"]
        assert [(p.seq, p.kind) for p in ledger.plans()] == [(3, "prereg")]
    assert run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", url, "--as-of", FAR.isoformat())[0] == 0
    doc = verified(capsys, url)
    assert doc["_code"] == 0 and doc["ok"] and doc["checked"]["rows"]["entries"] == 3, doc
    code, out, err = run_cli(capsys, "evaluate", "--ledger", url, "--as-of", FAR.isoformat(), "--prereg", "p",
                             "--format", "json")
    assert code == 0, err
    assert [p["id"] for p in json.loads(out)["prereg"]["predictions"]] == ["P1"]


def test_a_schema_1_database_ledger_verifies_and_takes_no_plan(
    url: str, admin: Any, schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ledger as schema 1 made it (the CHECK on entries.kind allowing forecasts alone,
    identity schema 1) verifies against what schema 1 created; a plan is refused with
    a message, not written."""
    monkeypatch.chdir(tmp_path)
    assert run_cli(capsys, "freeze", *write_routes(tmp_path), "--ledger", url)[0] == 0
    admin.execute(f"ALTER TABLE {schema}.entries DROP CONSTRAINT entries_kind_check")
    admin.execute(f"ALTER TABLE {schema}.entries ADD CONSTRAINT entries_kind_check CHECK (kind = 'forecast')")
    admin.execute(f"ALTER TABLE {schema}.pcsc_identity DISABLE TRIGGER USER")
    admin.execute(f"UPDATE {schema}.pcsc_identity SET schema_version = 1")
    admin.execute(f"ALTER TABLE {schema}.pcsc_identity ENABLE TRIGGER USER")
    doc = verified(capsys, url)
    assert doc["_code"] == 0 and doc["ok"], doc
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nname = "p"\n\n[[prediction]]\nid = "P1"\nclaim = "auc(score) >= 0.5"\n',
                    encoding="utf-8")
    code, _, err = run_cli(capsys, "prereg", str(plan), "--ledger", url)
    assert code == 1 and "created with schema 1" in err
    with open_ledger(url, create=False) as ledger:
        assert ledger.plans() == [] and len(ledger.entries()) == 2


def test_the_password_is_never_printed(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from pcsc.forecast.ledger import ledger_location

    shown = str(ledger_location("postgresql://someone:s3cret@127.0.0.1:1/db"))
    assert "s3cret" not in shown and shown.startswith("postgresql://someone:***@")
    code, _, err = run_cli(capsys, "ledger", "verify", "--ledger", url)  # nothing frozen yet: no ledger
    assert code == 1 and "no ledger at postgresql://" in err
    assert ":pcsc@" not in err or "***" in err


def test_a_missing_ledger_is_not_created_by_readers(url: str, capsys: pytest.CaptureFixture[str], admin: Any,
                                                    schema: str) -> None:
    code, _, err = run_cli(capsys, "ledger", "head", "--ledger", url)
    assert code == 1 and "no ledger" in err
    tables = admin.execute("SELECT count(*) FROM pg_tables WHERE schemaname = %s", (schema,)).fetchone()[0]
    assert tables == 0


# ---------------------------------------------------------------------- append-only
def _record(route: str, n: int) -> ForecastRecord:
    return ForecastRecord(route, f"{route}.route", PolicyId("venture", "1.0.0", "0" * 64), {"n": n})


def _freeze(url: str, route: str, n: int) -> None:
    with open_ledger(url) as ledger:
        ledger.append_forecasts([_record(route, n)], inputs=[])


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE entries SET route = 'other'",
        "DELETE FROM entries",
        "TRUNCATE entries",
        "UPDATE pcsc_identity SET schema_version = 2",
        "DELETE FROM pcsc_identity",
        "INSERT INTO entries SELECT seq + 10, kind, route, file, payload, payload_sha256, prev_sha256, entry_sha256, "
        "policy_id, policy_version, policy_sha256, pcsc_version, inputs, frozen_at FROM entries",
        "INSERT INTO entries SELECT seq + 1, kind, route, file, payload, payload_sha256, prev_sha256, entry_sha256, "
        "policy_id, policy_version, policy_sha256, pcsc_version, inputs, frozen_at FROM entries",
    ],
)
def test_rows_cannot_be_changed_removed_or_inserted_out_of_order(url: str, admin: Any, schema: str,
                                                                 statement: str) -> None:
    import psycopg

    _freeze(url, "a", 1)
    admin.execute(f"SET search_path = {schema}")
    with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
        admin.execute(statement)
    with open_ledger(url, create=False) as ledger:
        assert ledger.verify().ok and len(ledger.entries()) == 1


def test_a_writer_with_insert_only_cannot_tamper(url: str, admin: Any, schema: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A team's pipelines write as a role granted SELECT and INSERT only: they freeze,
    and cannot update, delete, truncate or switch a guard off (privileges, not triggers)."""
    import psycopg

    _freeze(url, "a", 1)  # the owner creates the ledger
    role, password = "pcsc_w_" + uuid.uuid4().hex[:10], uuid.uuid4().hex
    try:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    except psycopg.Error as exc:
        pytest.skip(f"the test role cannot create roles: {exc}")
    try:
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        admin.execute(f"GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        info = psycopg.conninfo.conninfo_to_dict(DSN)
        info.update(user=role, password=password)
        writer_dsn = "postgresql://{user}:{password}@{host}:{port}/{dbname}".format(
            user=role, password=password, host=info.get("host", "localhost"), port=info.get("port", 5432),
            dbname=info["dbname"])
        writer_url = _with_schema(writer_dsn, schema)
        _freeze(writer_url, "b", 2)
        with psycopg.connect(writer_dsn, autocommit=True, options=f"-csearch_path={schema}") as writer:
            for statement in ("UPDATE entries SET route = 'x'", "DELETE FROM entries", "TRUNCATE entries",
                              "ALTER TABLE entries DISABLE TRIGGER ALL", "DROP TRIGGER entries_no_update ON entries"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    writer.execute(statement)
        doc = verified(capsys, writer_url)
        assert doc["ok"] and doc["checked"]["rows"]["entries"] == 2, doc
    finally:
        admin.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}")
        admin.execute(f"REVOKE ALL ON SCHEMA {schema} FROM {role}")
        admin.execute(f"DROP ROLE {role}")


def test_verify_finds_a_disabled_guard_and_the_row_changed_behind_it(
    url: str, admin: Any, schema: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _freeze(url, "a", 1)
    _freeze(url, "b", 2)
    admin.execute(f"SET search_path = {schema}")
    admin.execute("ALTER TABLE entries DISABLE TRIGGER entries_no_update")
    admin.execute("UPDATE entries SET route = 'z' WHERE seq = 1")
    doc = verified(capsys, url)
    assert doc["_code"] == 1 and not doc["ok"]
    messages = doc["_err"]
    assert "entries seq 1" in messages and "entry_sha256 does not match" in messages
    assert "entries_no_update is disabled" in messages


def test_verify_finds_an_altered_guard_function(url: str, admin: Any, schema: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _freeze(url, "a", 1)
    admin.execute(f"SET search_path = {schema}")
    admin.execute("CREATE OR REPLACE FUNCTION pcsc_refuse() RETURNS trigger LANGUAGE plpgsql AS "
                  "$$ BEGIN RETURN OLD; END $$")
    doc = verified(capsys, url)
    assert not doc["ok"] and "has been altered" in doc["_err"]


# ---------------------------------------------------------------------- tampered guards
def _tamper(admin: Any, schema: str, *statements: str) -> None:
    """Run ``statements`` in the ledger's schema, as its owner, in one transaction."""
    with admin.transaction():
        admin.execute(f"SET LOCAL search_path = {schema}")
        for statement in statements:
            admin.execute(statement)


def _entries(admin: Any, schema: str) -> int:
    return int(admin.execute(f"SELECT count(*) FROM {schema}.entries").fetchone()[0])


@pytest.mark.parametrize(("attack", "statements", "problem"), [
    ("WHEN (false)",
     ["DROP TRIGGER entries_no_update ON entries",
      "CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries FOR EACH ROW WHEN (false) "
      "EXECUTE FUNCTION pcsc_refuse()"],
     "guard trigger entries_no_update has been altered: it has a WHEN condition"),
    ("UPDATE OF col",
     ["DROP TRIGGER entries_no_update ON entries",
      "CREATE TRIGGER entries_no_update BEFORE UPDATE OF kind ON entries FOR EACH ROW EXECUTE FUNCTION pcsc_refuse()"],
     "guard trigger entries_no_update has been altered: it fires only on UPDATE OF some columns"),
])
def test_a_guard_replaced_under_its_name_fails_verify(url: str, admin: Any, schema: str,
                                                      capsys: pytest.CaptureFixture[str], attack: str,
                                                      statements: list[str], problem: str) -> None:
    """The attacks as first found: both passed `ledger verify`, and the route column could
    then be rewritten."""
    _freeze(url, "a", 1)
    _tamper(admin, schema, *statements)
    _tamper(admin, schema, "UPDATE entries SET route = 'z'")  # the guard no longer refuses it
    doc = verified(capsys, url)
    assert doc["_code"] == 1 and not doc["ok"] and problem in doc["_err"], doc["_err"]


@pytest.mark.parametrize(("swallow", "problem"), [
    ("CREATE RULE swallow AS ON INSERT TO entries DO INSTEAD NOTHING",
     "rule swallow on entries: pcsc creates no rules"),
    ("CREATE TRIGGER swallow BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION pcsc_nothing()",
     "unknown trigger swallow on entries"),
])
def test_freeze_into_a_ledger_that_swallows_inserts_fails_loudly(url: str, admin: Any, schema: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch, swallow: str,
                                                                 problem: str) -> None:
    monkeypatch.chdir(tmp_path)
    routes = write_routes(tmp_path)
    assert run_cli(capsys, "freeze", routes[0], "--ledger", url)[0] == 0
    _tamper(admin, schema, "CREATE FUNCTION pcsc_nothing() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RETURN NULL; END $$", swallow)
    code, out, err = run_cli(capsys, "freeze", *routes, "--ledger", url, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["entries"] == [], err
    assert any(d["code"] == "PCSC-E718" and problem in d["message"] for d in doc["diagnostics"]), doc["diagnostics"]
    assert _entries(admin, schema) == 1
    assert problem in verified(capsys, url)["_err"]


def test_an_insert_swallowed_behind_verify_is_read_back(url: str, admin: Any, schema: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the schema check blind to a rule, reading the row back would still catch it."""
    from pcsc.forecast import ledger_pg
    from pcsc.forecast.ledger import LedgerWriteLost

    _freeze(url, "a", 1)
    _tamper(admin, schema, "CREATE RULE swallow AS ON INSERT TO entries DO INSTEAD NOTHING")
    monkeypatch.setattr(ledger_pg, "_catalog_problems", lambda found, schema: [])
    with open_ledger(url, create=False) as ledger, pytest.raises(LedgerWriteLost, match="entries seq 2 was not stored"):
        ledger.append_forecasts([_record("b", 2)], inputs=[])
    assert _entries(admin, schema) == 1


def _guard_variants() -> list[tuple[str, list[str], list[str]]]:
    """Each way someone could change a guard trigger, applied to every guard at once (one
    ledger per way): verify must name every guard it was done to."""
    from pcsc.forecast.ledger_pg import _TIMING, FUNCTIONS, GUARDS

    def each_guard(change: Callable[[str, str, str, str, str], list[str]], problem: str) -> tuple[list[str], list[str]]:
        statements, problems = [], []
        for name, (table, tgtype, function) in GUARDS.items():
            changed = change(name, table, _TIMING[tgtype], "ROW" if tgtype & 1 else "STATEMENT", function)
            statements += changed
            problems += [problem.format(name=name)] if changed else []  # [] where the way does not apply
        return statements, problems

    def replaced(definition: str, rows_only: bool = False) -> Callable[[str, str, str, str, str], list[str]]:
        def change(name: str, table: str, timing: str, each: str, function: str) -> list[str]:
            if rows_only and each != "ROW":
                return []
            column = "schema_version" if table == "pcsc_identity" else "route"
            events = f"BEFORE UPDATE OF {column}" if "UPDATE" in timing else f"{timing} OR UPDATE OF {column}"
            after = timing.replace("BEFORE", "AFTER")
            other = "pcsc_append_in_order" if function == "pcsc_refuse" else "pcsc_refuse"
            text = definition.format(timing=timing, table=table, each=each, function=function, events=events,
                                     after=after, other=other)
            return [f"DROP TRIGGER {name} ON {table}", f"CREATE TRIGGER {name} {text}"]
        return change

    altered = "guard trigger {name} has been altered: "
    variants = {
        "WHEN (false)": each_guard(replaced("{timing} ON {table} FOR EACH {each} WHEN (false) EXECUTE FUNCTION "
                                            "{function}()"), altered + "it has a WHEN condition"),
        "UPDATE OF a column": each_guard(replaced("{events} ON {table} FOR EACH {each} EXECUTE FUNCTION {function}()"),
                                         altered),
        "AFTER, not BEFORE": each_guard(replaced("{after} ON {table} FOR EACH {each} EXECUTE FUNCTION {function}()"),
                                        altered + "its events or timing"),
        "FOR EACH STATEMENT": each_guard(replaced("{timing} ON {table} FOR EACH STATEMENT EXECUTE FUNCTION "
                                                  "{function}()", rows_only=True), altered + "its events or timing"),
        "replaced by one running the other function": each_guard(
            replaced("{timing} ON {table} FOR EACH {each} EXECUTE FUNCTION {other}()"), altered + "it runs"),
        "dropped": each_guard(lambda name, table, *_: [f"DROP TRIGGER {name} ON {table}"], "{name}"),
        "disabled": each_guard(lambda name, table, *_: [f"ALTER TABLE {table} DISABLE TRIGGER {name}"],
                               "guard trigger {name} is disabled (tgenabled 'D')"),
        "enabled in replicas only": each_guard(lambda name, table, *_: [f"ALTER TABLE {table} ENABLE REPLICA TRIGGER "
                                                                        f"{name}"],
                                               "guard trigger {name} is disabled (tgenabled 'R')"),
    }
    cases = [(f"every guard {way}", statements, problems) for way, (statements, problems) in variants.items()]
    cases += [(f"the body of {function}()", [f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE "
                                             "plpgsql AS $$ BEGIN RETURN NULL; END $$"],
               [f"trigger function {function}() has been altered: its body is not the body pcsc creates"])
              for function in FUNCTIONS]
    return cases


SCHEMA_CHANGES = [
    ("a rule", ["CREATE RULE keep AS ON UPDATE TO outcomes DO INSTEAD NOTHING"], "rule keep on outcomes"),
    ("an extra trigger", ["CREATE TRIGGER audit AFTER INSERT ON outcomes FOR EACH ROW EXECUTE FUNCTION pcsc_refuse()"],
     "unknown trigger audit on outcomes"),
    ("a grant to PUBLIC", ["GRANT SELECT ON entries TO PUBLIC"], "PUBLIC holds SELECT on entries"),
    ("a column grant to PUBLIC", ["GRANT UPDATE (route) ON outcomes TO PUBLIC"],
     "PUBLIC holds UPDATE on column outcomes.route"),
    ("UPDATE granted to a role", ["GRANT UPDATE, DELETE ON pcsc_identity TO pg_monitor"],
     "pg_monitor holds DELETE, UPDATE on pcsc_identity: a role other than the owner may hold only SELECT and INSERT"),
    ("a grant option", ["GRANT INSERT ON entries TO pg_monitor WITH GRANT OPTION"],
     "pg_monitor may grant INSERT on entries to others"),
    ("row-level security", ["ALTER TABLE entries ENABLE ROW LEVEL SECURITY"],
     "table entries has been altered: row-level security is on"),
    ("a row security policy", ["CREATE POLICY hide ON entries USING (seq < 2)"], "row security policy hide on entries"),
    ("an unlogged table", ["ALTER TABLE outcomes SET UNLOGGED"], "table outcomes has been altered: it is UNLOGGED"),
    ("a column added", ["ALTER TABLE entries ADD COLUMN note text"],
     "table entries has been altered: its columns are not the columns pcsc creates"),
    ("a NOT NULL dropped", ["ALTER TABLE entries ALTER COLUMN route DROP NOT NULL"],
     "table entries has been altered: its columns"),
    ("a default", ["ALTER TABLE outcomes ALTER COLUMN source SET DEFAULT 'x'"], "table outcomes has been altered"),
    ("a check dropped", ["ALTER TABLE entries DROP CONSTRAINT entries_kind_check"],
     "constraint entries_kind_check on entries is missing"),
    ("a check replaced", ["ALTER TABLE entries DROP CONSTRAINT entries_seq_check",
                          "ALTER TABLE entries ADD CONSTRAINT entries_seq_check CHECK (seq >= 0)"],
     "constraint entries_seq_check on entries has been altered"),
    ("an index dropped", ["DROP INDEX entries_by_route"], "index entries_by_route is missing"),
    ("an index replaced", ["DROP INDEX outcomes_by_route", "CREATE INDEX outcomes_by_route ON outcomes (kind)"],
     "index outcomes_by_route has been altered"),
    ("an extra index", ["CREATE UNIQUE INDEX one ON entries (route) WHERE seq > 100"], "unknown index one"),
    ("a child table", ["CREATE TABLE more () INHERITS (entries)"], "inherits from"),
    ("an extra table", ["CREATE TABLE notes (x int)"], "unknown table notes"),
    ("a view", ["CREATE VIEW latest AS SELECT * FROM entries"], "unknown view latest"),
    ("an extra function", ["CREATE FUNCTION helper() RETURNS int LANGUAGE sql AS 'SELECT 1'"],
     "unknown function helper()"),
    ("a function overload", ["CREATE FUNCTION pcsc_refuse(int) RETURNS int LANGUAGE sql AS 'SELECT 1'"],
     "unknown function pcsc_refuse(integer)"),
    ("SECURITY DEFINER", ["ALTER FUNCTION pcsc_append_in_order() SECURITY DEFINER"],
     "trigger function pcsc_append_in_order() has been altered: it runs as its owner"),
    ("a function setting", ["ALTER FUNCTION pcsc_refuse() SET search_path = public"],
     "trigger function pcsc_refuse() has been altered: it sets configuration"),
    ("a type", ["CREATE TYPE mood AS ENUM ('a')"], "unknown type mood"),
]


CHANGES = [*_guard_variants(), *((change, statements, [problem]) for change, statements, problem in SCHEMA_CHANGES)]


@pytest.mark.parametrize(("change", "statements", "problems"), CHANGES, ids=[change for change, *_ in CHANGES])
def test_every_guard_rule_and_privilege_is_compared(url: str, admin: Any, schema: str, change: str,
                                                    statements: list[str], problems: list[str]) -> None:
    _freeze(url, "a", 1)
    _tamper(admin, schema, *statements)
    with open_ledger(url, create=False) as ledger:
        found = [str(p) for p in ledger.verify().problems]
        assert found and [p for p in problems if not any(p in f for f in found)] == [], found
        with pytest.raises(LedgerError, match="the ledger does not verify"):
            ledger.append_forecasts([_record("b", 2)], inputs=[])
    assert _entries(admin, schema) == 1


def test_a_table_owned_by_another_role_is_reported(url: str, admin: Any, schema: str) -> None:
    import psycopg

    _freeze(url, "a", 1)
    role = "pcsc_o_" + uuid.uuid4().hex[:10]
    me = admin.execute("SELECT current_user").fetchone()[0]
    try:
        admin.execute(f"CREATE ROLE {role}")
        admin.execute(f"GRANT {role} TO {me}")
        admin.execute(f"GRANT CREATE ON SCHEMA {schema} TO {role}")
    except psycopg.Error as exc:
        pytest.skip(f"the test role cannot create and join roles: {exc}")
    try:
        _tamper(admin, schema, f"ALTER TABLE entries OWNER TO {role}")
        with open_ledger(url, create=False) as ledger:
            problems = [str(p) for p in ledger.verify().problems]
        assert any("have more than one owner" in p and f"entries by {role}" in p for p in problems), problems
    finally:
        _tamper(admin, schema, f"ALTER TABLE entries OWNER TO {me}")
        admin.execute(f"REVOKE ALL ON SCHEMA {schema} FROM {role}")
        admin.execute(f"DROP ROLE {role}")


def test_a_ledger_is_not_created_beside_other_objects(url: str, admin: Any, schema: str,
                                                      capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where it would never verify: nothing is created, and the schema is left as it was."""
    monkeypatch.chdir(tmp_path)
    _tamper(admin, schema, "CREATE TABLE app_users (id int)")
    code, _, err = run_cli(capsys, "freeze", write_routes(tmp_path)[0], "--ledger", url)
    assert code == 1 and "no ledger created" in err and "unknown table app_users" in err
    tables = admin.execute("SELECT count(*) FROM pg_tables WHERE schemaname = %s", (schema,)).fetchone()[0]
    assert tables == 1


# ---------------------------------------------------------------------- several processes
def _writer(url: str, worker: int, count: int) -> None:
    for n in range(count):
        _freeze(url, f"w{worker}", n)


def test_concurrent_writers_lose_nothing(url: str) -> None:
    _freeze(url, "first", 0)  # created once; the writers then race on appends
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(url, w, 6)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
        assert p.exitcode == 0
    with open_ledger(url, create=False) as ledger:
        result = ledger.verify()
        entries = ledger.entries()
    assert result.ok, result.problems
    assert result.entries == 1 + 4 * 6
    for w in range(4):
        assert [e.document()["n"] for e in entries if e.route == f"w{w}"] == list(range(6))


def test_concurrent_first_freezes_create_one_ledger(url: str) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(url, w, 2)) for w in range(3)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
        assert p.exitcode == 0
    with open_ledger(url, create=False) as ledger:
        result = ledger.verify()
    assert result.ok and result.entries == 6, result.problems


def _hold_a_write(url: str, ready: Any) -> None:
    ledger = open_ledger(url)
    with ledger._write():
        seq, prev = ledger._head("entries")
        ledger._insert("entries", "seq, kind, route, file, payload, payload_sha256, prev_sha256, entry_sha256, "
                       "policy_id, policy_version, policy_sha256, pcsc_version, inputs, frozen_at",
                       (seq + 1, "forecast", "half", "half.route", "{}", "0" * 64, prev, "0" * 64, "p", "1", "0" * 64,
                        "0", "[]", "2026-01-01T00:00:00Z"))
        ready.set()
        signal.pause()  # killed here, inside the transaction, holding the ledger's lock


def test_verify_after_a_writer_killed_mid_transaction(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _freeze(url, "a", 1)
    code, head, _ = run_cli(capsys, "ledger", "head", "--ledger", url)
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    child = context.Process(target=_hold_a_write, args=(url, ready))
    child.start()
    assert ready.wait(60), "the writer did not start its transaction"
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.join(30)
    assert child.exitcode == -signal.SIGKILL
    doc = verified(capsys, url, "--head", head.strip())
    assert doc["_code"] == 0 and doc["ok"] and doc["checked"]["rows"]["entries"] == 1, doc
    _freeze(url, "b", 2)  # the server rolled the dead writer back and released its lock
    with open_ledger(url, create=False) as ledger:
        result = ledger.verify()
        assert result.ok and [e.route for e in ledger.entries()] == ["a", "b"]


# ---------------------------------------------------------------------- without a server
def test_without_psycopg_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    code, _, err = run_cli(capsys, "ledger", "verify", "--ledger", "postgresql://nobody@127.0.0.1:1/none")
    assert code == 1 and "pcsc[postgres]" in err


def test_an_unreachable_server_is_an_error_not_a_crash(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (the extra pcsc[postgres])")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = run_cli(capsys, "ledger", "verify", "--ledger", f"postgresql://nobody:pw@127.0.0.1:{port}/none")
    assert code == 1 and "cannot connect" in err and "internal error" not in err and ":pw@" not in err


def test_ledger_errors_are_ledger_errors() -> None:
    with pytest.raises(LedgerError):
        open_ledger("postgres://nobody@127.0.0.1:1/none?connect_timeout=1", create=False)
