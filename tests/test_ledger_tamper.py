"""A SQLite ledger whose schema or rows were tampered with: `ledger verify` names it and
`freeze` (and `resolve`) refuse to append to it; a write the database swallows is read
back and reported, never claimed as frozen; head tokens and sequence numbers take ASCII
digits only.

The corruption catalogue is what someone holding the file can do with a plain `sqlite3`
client: drop the guard triggers, change rows (recomputing hashes where that is the
point), put the guards back exactly as pcsc wrote them, or leave the schema altered.
The PostgreSQL side of the same attacks is in tests/test_postgres_ledger.py.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from pcsc.base.canonical import sha256_hex
from pcsc.forecast.ledger import (
    GUARDS,
    HeadToken,
    Ledger,
    LedgerUnverified,
    LedgerWriteLost,
    PolicyId,
    forecast_hash,
    outcome_hash,
)
from tests.conftest import ROOT, run_cli
from tests.test_ledger_hardening import FLAGS, build, observations, records

Corruption = Callable[[sqlite3.Connection], None]
FROZE = re.compile(r"\bfroze\b")


def corrupt(path: Path, change: Corruption) -> None:
    """Drop the guards, ``change`` the file, and put the guards back as they were."""
    conn = sqlite3.connect(path, isolation_level=None)
    saved = [sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    for name in GUARDS:
        conn.execute(f"DROP TRIGGER {name}")
    change(conn)
    for sql in saved:
        conn.execute(sql)
    conn.close()


def execute(path: Path, *statements: str) -> None:
    """Run ``statements`` on the file, guards and all, as a plain sqlite3 client would."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in statements:
        conn.execute(statement)
    conn.close()


def sql(*statements: str) -> Corruption:
    def run(conn: sqlite3.Connection) -> None:
        for statement in statements:
            conn.execute(statement)
    return run


def rehash_entry(conn: sqlite3.Connection, seq: int) -> None:
    """Recompute payload_sha256 and entry_sha256 of forecast ``seq`` from its (edited) columns."""
    row = conn.execute("SELECT seq, kind, route, file, payload, prev_sha256, policy_id, policy_version, "
                       "policy_sha256, pcsc_version, inputs, frozen_at FROM entries WHERE seq = ?", (seq,)).fetchone()
    payload_sha = sha256_hex(row[4])
    inputs = [(i["path"], i["sha256"]) for i in json.loads(row[10])]
    entry_sha = forecast_hash(row[0], row[1], row[2], row[3], payload_sha, row[5], PolicyId(row[6], row[7], row[8]),
                              row[9], inputs, row[11])
    conn.execute("UPDATE entries SET payload_sha256 = ?, entry_sha256 = ? WHERE seq = ?", (payload_sha, entry_sha, seq))


def rehash_outcome(conn: sqlite3.Connection, seq: int) -> None:
    row = conn.execute("SELECT seq, kind, route, observed, payload, prev_sha256, source, forecast_seq, "
                       "forecast_sha256, pcsc_version, recorded_at FROM outcomes WHERE seq = ?", (seq,)).fetchone()
    payload_sha = sha256_hex(row[4])
    entry_sha = outcome_hash(row[0], row[1], row[2], row[3], payload_sha, row[5], row[6], row[7], row[8], row[9],
                             row[10])
    conn.execute("UPDATE outcomes SET payload_sha256 = ?, entry_sha256 = ? WHERE seq = ?",
                 (payload_sha, entry_sha, seq))


def non_canonical_last_forecast(conn: sqlite3.Connection) -> None:
    """The same JSON data written with spaces, every hash recomputed: only the canonical check sees it."""
    payload = conn.execute("SELECT payload FROM entries WHERE seq = 4").fetchone()[0]
    conn.execute("UPDATE entries SET payload = ? WHERE seq = 4", (json.dumps(json.loads(payload), indent=1),))
    rehash_entry(conn, 4)


def edited_payload_rehashed(conn: sqlite3.Connection) -> None:
    conn.execute("""UPDATE entries SET payload = '{"i":7,"tag":""}' WHERE seq = 2""")
    conn.execute("UPDATE entries SET payload_sha256 = ? WHERE seq = 2", (sha256_hex('{"i":7,"tag":""}'),))


def anchored_to_a_missing_forecast(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE outcomes SET forecast_seq = 9 WHERE seq = 2")
    rehash_outcome(conn, 2)


# name -> (corruption, the problem `verify` names)
CATALOGUE: dict[str, tuple[Corruption, str]] = {
    "truncated chain (the first rows deleted)": (sql("DELETE FROM entries WHERE seq <= 2"),
                                                 "entries seq 3: follows seq 0: seqs 1–2 missing"),
    "a middle row deleted, the triggers dropped and restored": (sql("DELETE FROM entries WHERE seq = 2"),
                                                                "entries seq 3: follows seq 1: seq 2 missing"),
    "edited payload": (sql("""UPDATE entries SET payload = '{"i":7,"tag":""}' WHERE seq = 2"""),
                       "entries seq 2: the payload does not match its payload_sha256"),
    "edited payload, its payload hash recomputed": (edited_payload_rehashed,
                                                    "entries seq 2: entry_sha256 does not match"),
    "edited route": (sql("UPDATE entries SET route = 'other' WHERE seq = 3"),
                     "entries seq 3: entry_sha256 does not match"),
    "reordered rows": (sql("UPDATE entries SET seq = 10 WHERE seq = 2", "UPDATE entries SET seq = 2 WHERE seq = 3",
                           "UPDATE entries SET seq = 3 WHERE seq = 10"),
                       "entries seq 2: prev_sha256 is not the entry_sha256 of seq 1"),
    "wrong prev-hash": (sql("UPDATE entries SET prev_sha256 = (SELECT entry_sha256 FROM entries WHERE seq = 1) "
                            "WHERE seq = 3"),
                        "entries seq 3: prev_sha256 is not the entry_sha256 of seq 2"),
    "non-canonical payload JSON, every hash recomputed": (non_canonical_last_forecast,
                                                           "entries seq 4: the payload is not canonical JSON"),
    "inputs that are not JSON": (sql("UPDATE entries SET inputs = 'not json' WHERE seq = 4"),
                                 "entries seq 4: inputs is not a JSON list"),
    "outcome anchored to a forecast that does not exist": (anchored_to_a_missing_forecast,
                                                            "outcomes seq 2: forecast_seq 9 is not a forecast seq"),
    "last entry hash edited": (sql("UPDATE entries SET entry_sha256 = '" + "e" * 64 + "' WHERE seq = 4"),
                               "entries seq 4: entry_sha256 does not match"),
    "outcome payload edited": (sql("""UPDATE outcomes SET payload = '{"fields":{"developers":99}}' WHERE seq = 1"""),
                               "outcomes seq 1: the payload does not match its payload_sha256"),
}


def rows(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    counts = conn.execute("SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM outcomes)").fetchone()
    conn.close()
    return int(counts[0]), int(counts[1])


def assert_freeze_refuses(capsys: pytest.CaptureFixture[str], path: Path, problem: str) -> None:
    before = rows(path), path.read_bytes()
    code, out, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["entries"] == [], err
    refusals = [d for d in doc["diagnostics"] if d["code"] == "PCSC-E718"]
    assert refusals and all(d["message"].startswith("nothing frozen: the ledger does not verify: ")
                            for d in refusals), doc["diagnostics"]
    assert any(problem in d["message"] for d in refusals), (problem, refusals)
    assert (rows(path), path.read_bytes()) == before  # not a byte written


# ---------------------------------------------------------------------- the catalogue
@pytest.mark.parametrize("name", list(CATALOGUE))
def test_a_corrupted_ledger_fails_verify_and_freeze_refuses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               name: str) -> None:
    change, problem = CATALOGUE[name]
    path = build(tmp_path / "l.sqlite")
    corrupt(path, change)
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path))
    assert code == 1 and out == "" and problem in err and "[PCSC-E712]" in err, err
    assert_freeze_refuses(capsys, path, problem)


def test_the_catalogue_leaves_the_guards_as_pcsc_wrote_them(tmp_path: Path) -> None:
    """What the catalogue changes is rows only: verify's schema check alone would pass."""
    for index, (change, _) in enumerate(CATALOGUE.values()):
        path = build(tmp_path / f"{index}.sqlite")
        corrupt(path, change)
        with Ledger.open(path, create=False) as ledger:
            problems = ledger.verify().problems
        assert problems and all(p.table in ("entries", "outcomes") for p in problems), problems


def test_resolve_refuses_to_append_to_a_corrupted_ledger(tmp_path: Path) -> None:
    path = build(tmp_path / "l.sqlite")
    corrupt(path, CATALOGUE["edited route"][0])
    with Ledger.open(path, create=False) as ledger, pytest.raises(LedgerUnverified) as caught:
        ledger.append_outcomes(observations(1, 9))
    assert "entries seq 3: entry_sha256 does not match" in str(caught.value)
    assert [str(p) for p in caught.value.problems][0].startswith("entries seq 3")
    assert rows(path) == (4, 2)


def test_later_appends_check_the_rows_appended_since(tmp_path: Path) -> None:
    """An open ledger verifies itself whole before its first append; before each later
    one, the schema and what was appended or removed since its last."""
    path = build(tmp_path / "l.sqlite")
    with Ledger.open(path, create=False) as ledger:
        ledger.append_forecasts(records(1, 10), inputs=[])
        execute(path, SWALLOW)
        with pytest.raises(LedgerUnverified, match="unknown trigger swallow"):
            ledger.append_forecasts(records(1, 11), inputs=[])
        execute(path, "DROP TRIGGER swallow")
        corrupt(path, sql("DELETE FROM entries WHERE seq = 5"))  # the row it wrote last
        with pytest.raises(LedgerUnverified, match="entries: the chain no longer ends at seq 5"):
            ledger.append_forecasts(records(1, 11), inputs=[])
    with Ledger.open(path, create=False) as ledger:  # a new object verifies the whole (shorter) ledger again
        ledger.append_forecasts(records(1, 12), inputs=[])
        head = ledger.head()
        execute(path, "INSERT INTO entries SELECT seq + 1, kind, route, file, payload, payload_sha256, entry_sha256, "
                f"'{'f' * 64}', policy_id, policy_version, policy_sha256, pcsc_version, inputs, frozen_at "
                f"FROM entries WHERE seq = {head.entries_seq}")  # another writer: guards intact, a hash wrong
        with pytest.raises(LedgerUnverified, match="entries seq 6: entry_sha256 does not match"):
            ledger.append_outcomes(observations(1, 20))
    assert rows(path) == (6, 2)


# ---------------------------------------------------------------------- the schema, object by object
SWALLOW = "CREATE TRIGGER swallow BEFORE INSERT ON entries BEGIN SELECT RAISE(IGNORE); END"
SCHEMA_CHANGES: dict[str, tuple[list[str], str]] = {
    "a trigger that swallows inserts": ([SWALLOW], "unknown trigger swallow on entries"),
    "the order guard replaced by one that swallows inserts": (
        ["DROP TRIGGER entries_append_in_order",
         "CREATE TRIGGER entries_append_in_order BEFORE INSERT ON entries BEGIN SELECT RAISE(IGNORE); END"],
        "guard trigger entries_append_in_order has been altered"),
    "a guard given a WHEN clause": (
        ["DROP TRIGGER entries_no_update",
         "CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries WHEN 0 "
         "BEGIN SELECT RAISE(ABORT, 'the PCSC ledger is append-only: UPDATE on entries is refused'); END"],
        "guard trigger entries_no_update has been altered"),
    "a guard narrowed to UPDATE OF one column": (
        ["DROP TRIGGER outcomes_no_update",
         "CREATE TRIGGER outcomes_no_update BEFORE UPDATE OF source ON outcomes "
         "BEGIN SELECT RAISE(ABORT, 'the PCSC ledger is append-only: UPDATE on outcomes is refused'); END"],
        "guard trigger outcomes_no_update has been altered"),
    "a guard's body changed": (
        ["DROP TRIGGER outcomes_no_delete",
         "CREATE TRIGGER outcomes_no_delete BEFORE DELETE ON outcomes BEGIN SELECT 1; END"],
        "guard trigger outcomes_no_delete has been altered"),
    "a guard fired after the change": (
        ["DROP TRIGGER entries_no_delete",
         "CREATE TRIGGER entries_no_delete AFTER DELETE ON entries "
         "BEGIN SELECT RAISE(ABORT, 'the PCSC ledger is append-only: DELETE on entries is refused'); END"],
        "guard trigger entries_no_delete has been altered"),
    "a guard dropped": (["DROP TRIGGER outcomes_append_in_order"],
                        "append-only guard triggers are missing: outcomes_append_in_order"),
    "a view": (["CREATE VIEW latest AS SELECT * FROM entries"], "unknown view latest"),
    "an index pcsc does not create": (["CREATE UNIQUE INDEX one_per_route ON entries (route, seq)"],
                                      "unknown index one_per_route on entries"),
    "an index dropped": (["DROP INDEX outcomes_by_route"], "index outcomes_by_route is missing"),
    "a table pcsc does not create": (["CREATE TABLE notes (x)"], "unknown table notes"),
    "a table rebuilt without its checks": (
        ["CREATE TABLE copy AS SELECT * FROM outcomes", "DROP TABLE outcomes", "ALTER TABLE copy RENAME TO outcomes"],
        "table outcomes has been altered"),
}


@pytest.mark.parametrize("name", list(SCHEMA_CHANGES))
def test_every_schema_object_is_compared_by_its_sql(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    name: str) -> None:
    statements, problem = SCHEMA_CHANGES[name]
    path = build(tmp_path / "l.sqlite")
    execute(path, *statements)
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path))
    assert code == 1 and out == "" and f"schema: {problem}" in err, err
    assert_freeze_refuses(capsys, path, problem)


def test_a_swallowing_trigger_never_gets_a_forecast_reported_as_frozen(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The attack as first found: freeze said `froze 2 forecasts` and stored none."""
    path = tmp_path / "l.sqlite"
    assert run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))[0] == 0
    execute(path, SWALLOW)
    code, out, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))
    assert code == 1 and not FROZE.search(out + err) and "nothing frozen" in err and "[PCSC-E718]" in err
    assert rows(path) == (2, 0)


def test_analyze_statistics_are_not_tampering(tmp_path: Path) -> None:
    path = build(tmp_path / "l.sqlite")
    execute(path, "ANALYZE")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone()[0] == 1
    conn.close()
    with Ledger.open(path, create=False) as ledger:
        assert ledger.verify().ok
        ledger.append_forecasts(records(1, 20), inputs=[])


def test_the_docs_show_what_verify_says_it_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/forecast.md's example of an intact ledger (4 forecasts, 2 outcomes), line by line."""
    shown = (ROOT / "docs" / "forecast.md").read_text(encoding="utf-8")
    example = shown.split("ok: .pcsc/ledger.sqlite is intact: 4 forecasts, 2 outcomes\n", 1)[1].split("```")[0]
    path = build(tmp_path / "l.sqlite")
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(path))
    printed = out.splitlines()[1:]
    assert code == 0 and len(printed) == len(example.splitlines())
    for doc_line, line in zip(example.splitlines(), printed, strict=True):
        # a line shown cut short (a hash, a token, a long sentence) ends in `…`
        kept = re.sub(r"[0-9a-f.:]*…$", "", doc_line)
        assert line == doc_line or (kept != doc_line and len(kept.strip()) > 8 and line.startswith(kept)), (doc_line,
                                                                                                         line)


# ---------------------------------------------------------------------- reading back what was written
def test_an_insert_the_database_swallows_is_read_back_and_refused(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A TEMP trigger lives in the connection, not in the file, so verify cannot see it;
    reading the rows back in the same transaction does."""
    path = build(tmp_path / "l.sqlite")
    with Ledger.open(path, create=False) as ledger:
        ledger._conn.execute("CREATE TEMP TRIGGER swallow BEFORE INSERT ON main.entries BEGIN SELECT RAISE(IGNORE); "
                             "END")
        assert ledger.verify().ok
        with pytest.raises(LedgerWriteLost, match="entries seq 5 was not stored"):
            ledger.append_forecasts(records(2, 10), inputs=[])
    assert rows(path) == (4, 2)


def test_a_row_stored_otherwise_than_written_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    real = Ledger._insert

    def rewriting(self: Ledger, table: str, columns: str, values: tuple[object, ...]) -> None:
        real(self, table, columns, (*values[:2], "someone_else", *values[3:]))

    monkeypatch.setattr(Ledger, "_insert", rewriting)
    code, out, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["entries"] == [] and not doc["ok"]
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E719"]
    message = doc["diagnostics"][0]["message"]
    assert message.startswith("nothing frozen: ")
    assert "entries seq 5 was stored otherwise than written (route)" in message
    assert rows(path) == (4, 2)


def test_a_write_that_stores_nothing_fails_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    monkeypatch.setattr(Ledger, "_insert", lambda self, table, columns, values: None)
    code, out, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))
    assert code == 1 and out == "" and not FROZE.search(err)
    assert "nothing frozen: " in err and "entries seq 5 was not stored" in err and "[PCSC-E719]" in err
    monkeypatch.undo()
    with Ledger.open(path, create=False) as ledger:
        assert ledger.verify().ok and rows(path) == (4, 2)


# ---------------------------------------------------------------------- ASCII digits only
@pytest.mark.parametrize("token", ["٤.2:{h}", "4.٢:{h}", "４.2:{h}", "04.2:{h}", "4.2:{H}", "+4.2:{h}", "4_0.2:{h}",
                                   "4.2:{h}\u00a0", "1" * 20 + ".2:{h}"])
def test_a_head_token_takes_ascii_digits_only(tmp_path: Path, capsys: pytest.CaptureFixture[str], token: str) -> None:
    text = token.format(h="ab" * 32, H="AB" * 32)
    with pytest.raises(ValueError, match="expected E.O:HASH"):
        HeadToken.parse(text)
    path = build(tmp_path / "l.sqlite")
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", text)
    assert code == 2 and "expected E.O:HASH" in err and "Traceback" not in err


def test_a_head_token_round_trips(tmp_path: Path) -> None:
    token = HeadToken(4, 2, "ab" * 32)
    assert HeadToken.parse(str(token)) == token and HeadToken.parse(f" {token}\n") == token
    assert HeadToken.parse("0.0:" + "0" * 64) == HeadToken(0, 0, "0" * 64)


@pytest.mark.parametrize("seq", ["٤", "+1", "1_0", " 1", "１"])
def test_show_cert_takes_a_seq_in_ascii_digits(tmp_path: Path, capsys: pytest.CaptureFixture[str], seq: str) -> None:
    path = build(tmp_path / "l.sqlite")
    code, _, err = run_cli(capsys, "ledger", "show", "--ledger", str(path), "--cert", seq)
    assert code == 2 and "ASCII digits" in err and "Traceback" not in err


@pytest.mark.parametrize("date", ["20190101", "2019-W01-1", "٢٠١٩-01-01", "2019-1-1", " 2019-01-01"])
def test_export_as_of_takes_an_iso_date_in_ascii_digits(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        date: str) -> None:
    path = build(tmp_path / "l.sqlite")
    code, _, err = run_cli(capsys, "ledger", "export", "--ledger", str(path), "--as-of", date)
    assert code == 2 and "expected a date (YYYY-MM-DD, ASCII digits)" in err


@pytest.mark.parametrize("seq", ["4", "٤", 4.0, True, -1])
def test_a_checkpoint_head_takes_whole_numbers_only(seq: object) -> None:
    from pcsc.forecast.checkpoint import CheckpointError, _head
    from pcsc.forecast.ledger import Head

    head = Head(4, "a" * 64, 2, "b" * 64)
    doc = {**head.as_json(), "entries": {"seq": seq, "entry_sha256": "a" * 64}}
    with pytest.raises(CheckpointError, match="not whole numbers"):
        _head(doc, Path("c.json"))
    assert _head(head.as_json(), Path("c.json")) == head


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_checkpoint_version_is_a_whole_number(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                version: object) -> None:
    pytest.importorskip("cryptography")
    from pcsc.forecast.checkpoint import FORMAT, CheckpointError, read_checkpoint

    assert run_cli(capsys, "ledger", "keygen", "-o", str(tmp_path / "k"))[0] == 0
    checkpoint = tmp_path / "c.json"
    checkpoint.write_text(json.dumps({"format": FORMAT, "version": version}), encoding="utf-8")
    with pytest.raises(CheckpointError, match="a checkpoint of version"):
        read_checkpoint(checkpoint, tmp_path / "k.pub.pem")
