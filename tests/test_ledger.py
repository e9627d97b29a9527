"""The ledger: append-only in the database, hash-chained, verified, safe under
concurrent writers; `pcsc freeze` stores the compile packet byte for byte."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pcsc._version import __version__
from pcsc.base.canonical import dumps, sha256_hex
from pcsc.cli import main as pcsc_main
from pcsc.forecast.ledger import (
    APPLICATION_ID,
    GENESIS,
    SCHEMA_VERSION,
    ForecastRecord,
    Ledger,
    LedgerError,
    OutcomeRecord,
    PolicyId,
)
from tests.conftest import EXAMPLES, ROOT

FLAGS = EXAMPLES / "feature_flags.route"
INELIGIBLE = EXAMPLES / "db_gui_subscription.route"
DEVTOOLS = EXAMPLES / "devtools_api.route"
POLICY = PolicyId("venture", "1.0.0", "ab" * 32)
T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def records(n: int, route: str = "r", start: int = 0) -> list[ForecastRecord]:
    return [ForecastRecord(route, "f.route", POLICY, {"i": start + i, "x": 0.1 * i}) for i in range(n)]


def filled(path: Path, forecasts: int = 4, outcomes: int = 2) -> Path:
    with Ledger.open(path) as ledger:
        ledger.append_forecasts(records(forecasts), inputs=[("f.route", "cd" * 32)], frozen_at=T0)
        ledger.append_outcomes(
            [OutcomeRecord("r", dt.date(2013, 1, i + 1), {"fields": {"developers": i}}) for i in range(outcomes)],
            recorded_at=T0,
        )
    return path


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def freeze_args(files: list[str], ledger: Path | None, fmt: str = "text") -> list[str]:
    return ["freeze", *files, "--format", fmt, *([] if ledger is None else ["--ledger", str(ledger)])]


def ledger_args(ledger: Path, fmt: str = "text", route: str | None = None) -> list[str]:
    return ["--ledger", str(ledger), "--format", fmt, *([] if route is None else ["--route", route])]


def run_freeze(argv: list[str]) -> int:
    return pcsc_main(argv)


def run_ledger_verify(argv: list[str]) -> int:
    return pcsc_main(["ledger", "verify", *argv])


def run_ledger_show(argv: list[str]) -> int:
    return pcsc_main(["ledger", "show", *argv])


# ---------------------------------------------------------------------- append-only, in SQL
@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE entries SET route = 'other' WHERE seq = 2", "append-only: UPDATE on entries is refused"),
        ("UPDATE entries SET payload = payload", "append-only: UPDATE on entries is refused"),
        ("DELETE FROM entries WHERE seq = 4", "append-only: DELETE on entries is refused"),
        ("DELETE FROM entries", "append-only: DELETE on entries is refused"),
        ("UPDATE outcomes SET observed = '2099-01-01'", "append-only: UPDATE on outcomes is refused"),
        ("DELETE FROM outcomes", "append-only: DELETE on outcomes is refused"),
        ("INSERT OR REPLACE INTO entries SELECT * FROM entries WHERE seq = 1", "takes the next seq"),
        ("INSERT INTO outcomes SELECT 3, kind, route, observed, payload, payload_sha256, prev_sha256, entry_sha256, "
         "source, forecast_seq, forecast_sha256, pcsc_version, recorded_at FROM outcomes WHERE seq = 1",
         "takes the next seq and chains to the last"),
    ],
)
def test_sql_refuses_to_change_or_remove_rows(tmp_path: Path, sql: str, message: str) -> None:
    path = filled(tmp_path / "l.sqlite")
    conn = raw(path)

    def rows() -> tuple[list[Any], list[Any]]:
        return (conn.execute("SELECT * FROM entries ORDER BY seq").fetchall(),
                conn.execute("SELECT * FROM outcomes ORDER BY seq").fetchall())

    before = rows()
    with pytest.raises(sqlite3.IntegrityError, match=re.escape(message)):
        conn.execute(sql)
    after = rows()
    conn.close()
    assert before == after and len(after[0]) == 4 and len(after[1]) == 2
    with Ledger.open(path) as ledger:
        assert ledger.verify().ok


def test_schema_is_marked_versioned_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "ledger.sqlite"
    with Ledger.open(path) as ledger:
        assert ledger.verify().ok and ledger.entries() == []
    conn = raw(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_the_default_ledger_is_dot_pcsc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_freeze(freeze_args([str(DEVTOOLS)], None)) == 0
    assert (tmp_path / ".pcsc" / "ledger.sqlite").is_file()
    assert "into .pcsc/ledger.sqlite" in capsys.readouterr().out


# ---------------------------------------------------------------------- not a ledger
def test_a_file_that_is_not_a_ledger_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("these are not the rows you are looking for\n" * 40, encoding="utf-8")
    with pytest.raises(LedgerError, match="is not a PCSC ledger: not an SQLite database"):
        Ledger.open(text)
    foreign = tmp_path / "other.sqlite"
    conn = raw(foreign)
    conn.execute("CREATE TABLE entries (seq INTEGER)")
    conn.close()
    with pytest.raises(LedgerError, match="is not a PCSC ledger: an SQLite database without the PCSC mark"):
        Ledger.open(foreign)
    assert run_ledger_verify(ledger_args(foreign)) == 1
    assert "without the PCSC mark" in capsys.readouterr().err
    # nothing was written into either
    assert text.read_text(encoding="utf-8").startswith("these are not")
    conn = raw(foreign)
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("entries",)]
    conn.close()


def test_a_newer_schema_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = filled(tmp_path / "l.sqlite")
    conn = raw(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(LedgerError, match=f"schema version {SCHEMA_VERSION + 1}, newer than this pcsc"):
        Ledger.open(path)
    assert run_ledger_show(ledger_args(path)) == 1
    assert "newer than this pcsc" in capsys.readouterr().err


def test_verify_and_show_do_not_create_a_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "missing" / "ledger.sqlite"
    assert run_ledger_verify(ledger_args(path)) == 1
    assert run_ledger_show(ledger_args(path, "json")) == 1
    captured = capsys.readouterr()
    assert "no ledger at" in captured.err
    assert json.loads(captured.out)["ok"] is False
    assert not path.exists() and not path.parent.exists()


# ---------------------------------------------------------------------- verify
def tamper(path: Path, table: str, statement: str) -> None:
    """Edit a row behind the ledger's back: drop the guard, then change it."""
    conn = raw(path)
    conn.execute(f"DROP TRIGGER {table}_no_update")
    conn.execute(f"DROP TRIGGER {table}_no_delete")
    conn.execute(statement)
    conn.close()


@pytest.mark.parametrize(
    ("table", "statement", "seq", "problem"),
    [
        ("entries", "UPDATE entries SET payload = replace(payload, '\"i\":2', '\"i\":7') WHERE seq = 3", 3,
         "the payload does not match its payload_sha256"),
        ("entries", "UPDATE entries SET payload_sha256 = replace(payload_sha256, substr(payload_sha256, 1, 1), "
         "CASE substr(payload_sha256, 1, 1) WHEN 'a' THEN 'b' ELSE 'a' END) WHERE seq = 2", 2,
         "the payload does not match its payload_sha256"),
        ("entries", "UPDATE entries SET entry_sha256 = '" + "e" * 64 + "' WHERE seq = 2", 2,
         "entry_sha256 does not match the row's fields"),
        ("entries", "UPDATE entries SET route = 'someone_else' WHERE seq = 4", 4,
         "entry_sha256 does not match the row's fields"),
        ("entries", "UPDATE entries SET frozen_at = '2020-01-01T00:00:00Z' WHERE seq = 1", 1,
         "entry_sha256 does not match the row's fields"),
        ("entries", "UPDATE entries SET prev_sha256 = '" + "0" * 64 + "' WHERE seq = 3", 3,
         "prev_sha256 is not the entry_sha256 of seq 2"),
        ("entries", "DELETE FROM entries WHERE seq = 2", 3, "follows seq 1: seq 2 missing"),
        ("outcomes", "UPDATE outcomes SET payload = '{\"fields\":{\"developers\":9}}' WHERE seq = 2", 2,
         "the payload does not match its payload_sha256"),
        ("outcomes", "UPDATE outcomes SET observed = '2012-01-01' WHERE seq = 1", 1,
         "entry_sha256 does not match the row's fields"),
    ],
)
def test_verify_names_the_first_edited_row(tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str,
                                           statement: str, seq: int, problem: str) -> None:
    path = filled(tmp_path / "l.sqlite")
    with Ledger.open(path) as ledger:
        assert ledger.verify().ok
    tamper(path, table, statement)
    with Ledger.open(path) as ledger:
        result = ledger.verify()
    assert not result.ok
    first = result.first_bad
    assert first is not None and (first.table, first.seq) == (table, seq)
    assert problem in first.message
    assert any(p.table == "schema" and f"{table}_no_update" in p.message for p in result.problems)
    assert run_ledger_verify(ledger_args(path)) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"{path}: error: {table} seq {seq}: {first.message} [PCSC-E712]"
    assert run_ledger_verify(ledger_args(path, "json")) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["ok"] is False and body["first_bad"] == {"table": table, "seq": seq, "problem": first.message}


def test_verify_reports_a_removed_guard_even_when_the_rows_are_intact(tmp_path: Path) -> None:
    path = filled(tmp_path / "l.sqlite")
    conn = raw(path)
    conn.execute("DROP TRIGGER outcomes_no_delete")
    conn.close()
    with Ledger.open(path) as ledger:
        result = ledger.verify()
    assert [(p.table, p.seq) for p in result.problems] == [("schema", None)]
    assert "outcomes_no_delete" in result.problems[0].message


def test_verify_reports_an_intact_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = filled(tmp_path / "l.sqlite")
    with Ledger.open(path) as ledger:
        result = ledger.verify()
        last_entry, last_outcome = ledger.entries()[-1], ledger.outcomes()[-1]
    assert result.ok and (result.entries, result.outcomes) == (4, 2)
    assert (result.entries_head, result.outcomes_head) == (last_entry.entry_sha256, last_outcome.entry_sha256)
    assert run_ledger_verify(ledger_args(path)) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: {path} is intact: 4 forecasts, 2 outcomes") and last_entry.entry_sha256 in out


# ---------------------------------------------------------------------- chaining
def test_entries_chain_and_hash_as_documented(tmp_path: Path) -> None:
    path = filled(tmp_path / "l.sqlite", forecasts=3, outcomes=0)
    with Ledger.open(path) as ledger:
        entries = ledger.entries()
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].prev_sha256 == GENESIS
    assert [e.prev_sha256 for e in entries[1:]] == [e.entry_sha256 for e in entries[:-1]]
    e = entries[1]
    assert e.payload == dumps({"i": 1, "x": 0.1}) and e.payload_sha256 == sha256_hex(e.payload)
    assert e.frozen_at == "2026-01-02T03:04:05Z"
    from tests.test_golden import _package_hash

    assert e.pcsc_version == f"{__version__}+{_package_hash()}"  # the version and, as its local label, the code
    assert e.entry_sha256 == sha256_hex(dumps({
        "seq": 2, "kind": "forecast", "route": "r", "file": "f.route", "payload_sha256": e.payload_sha256,
        "prev_sha256": entries[0].entry_sha256, "policy": {"id": "venture", "version": "1.0.0", "sha256": "ab" * 32},
        "pcsc": e.pcsc_version, "inputs": [{"path": "f.route", "sha256": "cd" * 32}],
        "frozen_at": "2026-01-02T03:04:05Z",
    }))


def test_outcomes_form_their_own_chain_anchored_to_the_forecast_head(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger.open(path) as ledger:
        (early,) = ledger.append_outcomes([OutcomeRecord("r", dt.date(2012, 1, 1), {"label": "positive"}, "label")])
        entries = ledger.append_forecasts(records(2), inputs=[])
        later = ledger.append_outcomes([
            OutcomeRecord("r", dt.date(2013, 1, 1), {"fields": {"developers": 5}}, source="o.toml sha256 ff"),
            OutcomeRecord("q", dt.date(2013, 2, 1), {"fields": {"arr": 1.5}}),
        ])
        assert (early.seq, early.prev_sha256, early.forecast_seq, early.forecast_sha256) == (1, GENESIS, 0, GENESIS)
        assert [o.seq for o in later] == [2, 3] and later[0].prev_sha256 == early.entry_sha256
        assert {(o.forecast_seq, o.forecast_sha256) for o in later} == {(2, entries[-1].entry_sha256)}
        assert [o.route for o in ledger.outcomes("r")] == ["r", "r"] and ledger.outcomes("nobody") == []
        assert ledger.outcomes()[1].document() == {"fields": {"developers": 5}}
        assert ledger.outcomes()[1].source == "o.toml sha256 ff"
        assert ledger.outcomes()[1].observed_on == dt.date(2013, 1, 1)
        assert ledger.verify().ok


def test_an_outcome_anchored_to_a_forged_forecast_head_is_caught(tmp_path: Path) -> None:
    path = filled(tmp_path / "l.sqlite")
    conn = raw(path)
    conn.execute("DROP TRIGGER outcomes_no_update")
    conn.execute("UPDATE outcomes SET forecast_seq = 2 WHERE seq = 2")
    conn.close()
    with Ledger.open(path) as ledger:
        first = ledger.verify().first_bad
    assert first is not None and (first.table, first.seq) == ("outcomes", 2)
    assert "forecast_seq 2 is not a forecast seq from 4" in first.message


def test_one_transaction_per_append_all_or_nothing(tmp_path: Path) -> None:
    path = filled(tmp_path / "l.sqlite", forecasts=2, outcomes=0)
    batch = [*records(3, "fine"), ForecastRecord("boom", "f.route", POLICY, {}), *records(2, "fine")]
    with Ledger.open(path) as ledger:
        # a TEMP trigger is the connection's, not the file's: the ledger still verifies,
        # and the fourth insert of the batch fails in the database
        ledger._conn.execute("CREATE TEMP TRIGGER boom BEFORE INSERT ON main.entries WHEN NEW.route = 'boom' "
                             "BEGIN SELECT RAISE(ABORT, 'boom refused'); END")
        with pytest.raises(LedgerError, match="nothing written: boom refused"):
            ledger.append_forecasts(batch, inputs=[])
        assert [e.route for e in ledger.entries()] == ["r", "r"]
        with pytest.raises(LedgerError, match="not canonical JSON data"):
            ledger.append_forecasts([*records(1, "fine"), ForecastRecord("nan", "f", POLICY, {"x": float("nan")})],
                                    inputs=[])
        assert len(ledger.entries()) == 2
        assert ledger.verify().ok
        assert [e.seq for e in ledger.append_forecasts(records(2, "fine"), inputs=[])] == [3, 4]


# ---------------------------------------------------------------------- concurrency
WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pcsc.forecast.ledger import ForecastRecord, Ledger, PolicyId
    from pcsc.render.packet import route_packet
    from pcsc.compiler.session import Session

    path, me, other, barrier = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    session = Session()
    (route,) = session.load_routes(Path(sys.argv[5]))
    compiled = session.compile_route(route)
    packet = route_packet(compiled)
    policy = PolicyId(compiled.policy.policy.id, compiled.policy.policy.version, compiled.policy.sha256)

    def wait_for(ready, what):
        deadline = time.monotonic() + 120
        while not ready():
            assert not (barrier / f"{other}.failed").exists(), "the other writer failed"
            assert time.monotonic() < deadline, f"the other writer never {what}"
            time.sleep(0.002)

    try:
        (barrier / me).touch()  # ready: start together
        wait_for((barrier / other).exists, "started")
        with Ledger.open(path) as ledger:
            for t in range(50):
                if t == 25:  # both must have written before either finishes: they interleave
                    wait_for(lambda: ledger.entries(route=other), "wrote")
                batch = [ForecastRecord(me, "w.route", policy, {"packet": packet, "i": t * 10 + j}) for j in range(10)]
                ledger.append_forecasts(batch, inputs=session.inputs)
    except BaseException:
        (barrier / f"{me}.failed").touch()
        raise
    print("done", me)
""")


def test_two_processes_freezing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "ledger.sqlite"  # neither writer finds it: both race to create it too
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), me, other, str(barrier), str(DEVTOOLS)],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for me, other in (("a", "b"), ("b", "a"))
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.startswith("done")
    with Ledger.open(path, create=False) as ledger:
        result = ledger.verify()
        entries = ledger.entries()
    assert result.ok, result.problems
    assert result.entries == len(entries) == 1000
    assert [e.seq for e in entries] == list(range(1, 1001))
    for writer in ("a", "b"):
        mine = [e.document()["i"] for e in entries if e.route == writer]
        assert mine == list(range(500))  # all there, in the order each wrote them
    authors = [e.route for e in entries]
    switches = sum(1 for x, y in zip(authors, authors[1:], strict=False) if x != y)
    assert switches >= 2
    # every transaction of ten stayed together
    assert all(len({e.route for e in entries[i:i + 10]}) == 1 for i in range(0, 1000, 10))


# ---------------------------------------------------------------------- freeze
def compile_json(*files: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = pcsc_main(["compile", "--format", "json", *map(str, files)])
    assert code == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_frozen_payload_is_the_compile_packet_byte_for_byte(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "l.sqlite"
    assert run_freeze(freeze_args([str(FLAGS), str(INELIGIBLE)], path, "json")) == 0
    frozen = json.loads(capsys.readouterr().out)
    compiled = compile_json(FLAGS, INELIGIBLE, capsys=capsys)
    with Ledger.open(path) as ledger:
        entries = ledger.entries()
    assert [e.route for e in entries] == ["self_serve", "enterprise_first", "subscription_switch"]
    assert [e["seq"] for e in frozen["entries"]] == [1, 2, 3]
    assert [e["entry_sha256"] for e in frozen["entries"]] == [e.entry_sha256 for e in entries]
    for entry, packet in zip(entries, compiled["routes"], strict=True):
        packet_text = dumps(packet)
        assert entry.payload.startswith('{"mode":"prospective","packet":' + packet_text + ',"rank":{')
        assert dumps(entry.document()["packet"]) == packet_text
        assert entry.payload_sha256 == sha256_hex(entry.payload)
        assert entry.policy == PolicyId(packet["policy"]["id"], packet["policy"]["version"],
                                        packet["policy"]["sha256"])
    ranks = [e.document()["rank"] for e in entries]
    assert [(r["rank"], r["of"], r["tier"]) for r in ranks] == [
        (1, 3, "released"), (2, 3, "released"), (3, 3, "ineligible-released")
    ]
    assert [(r["rank_in_file"], r["of_in_file"]) for r in ranks] == [(1, 2), (2, 2), (1, 1)]
    # the inputs: the route files as given, then the library they use
    assert [i["path"] for i in compiled["inputs"]] == [str(FLAGS), str(INELIGIBLE)]
    assert [p for p, _ in entries[0].inputs][:2] == [str(FLAGS), str(INELIGIBLE)]
    assert entries[0].inputs[:2] == tuple((i["path"], i["sha256"]) for i in compiled["inputs"])
    assert entries[0].inputs[2][0].endswith("venture.obl")
    assert entries[0].inputs[2][1] == sha256_hex((ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8"))


def test_same_inputs_same_payload_hash_and_no_time_in_the_payload(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    assert run_freeze(freeze_args([str(FLAGS)], one)) == 0
    assert run_freeze(freeze_args([str(FLAGS)], two)) == 0
    assert run_freeze(freeze_args([str(FLAGS)], two)) == 0
    capsys.readouterr()
    with Ledger.open(one) as a, Ledger.open(two) as b:
        first, again = a.entries(), b.entries()
    assert len(first) == 2 and len(again) == 4
    assert [e.payload_sha256 for e in first] * 2 == [e.payload_sha256 for e in again]
    assert [e.payload for e in first] * 2 == [e.payload for e in again]
    assert len({e.entry_sha256 for e in again}) == 4  # the entries themselves differ: seq, chain
    for e in first:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e.frozen_at)
        assert e.frozen_at not in e.payload and e.frozen_at[:10] not in e.payload
    # and through the API, two different times give the same payload hash
    with Ledger.open(tmp_path / "t.sqlite") as ledger:
        x = ledger.append_forecasts(records(1), inputs=[], frozen_at=T0)[0]
        y = ledger.append_forecasts(records(1), inputs=[], frozen_at=T0 + dt.timedelta(days=400))[0]
    assert x.payload_sha256 == y.payload_sha256 and x.frozen_at != y.frozen_at


def test_freeze_refuses_input_errors_and_freezes_nothing(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.route"
    broken.write_text(DEVTOOLS.read_text(encoding="utf-8").replace("as_of   2012-06-01", "as_of   2012-13-01"),
                      encoding="utf-8")
    path = tmp_path / "l.sqlite"
    assert run_freeze(freeze_args([str(DEVTOOLS), str(broken)], path)) == 1
    err = capsys.readouterr().err
    assert "nothing frozen: the input has errors" in err and "broken.route" in err
    assert not path.exists()
    filled(path, forecasts=1, outcomes=0)
    assert run_freeze(freeze_args([str(broken), str(FLAGS)], path, "json")) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["ok"] is False and body["entries"] == [] and body["diagnostics"]
    with Ledger.open(path) as ledger:
        assert len(ledger.entries()) == 1


def test_freeze_stores_a_refused_route_with_its_score_withheld(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = DEVTOOLS.read_text(encoding="utf-8").replace("        kill       developers < 100\n", "", 1)
    refused = tmp_path / "refused.route"
    refused.write_text(text, encoding="utf-8")
    path = tmp_path / "l.sqlite"
    assert run_freeze(freeze_args([str(refused)], path)) == 0
    out = capsys.readouterr().out
    assert "suspend-and-ask" in out
    with Ledger.open(path) as ledger:
        (entry,) = ledger.entries()
    doc = entry.document()
    assert doc["packet"]["verdict"] == "suspend-and-ask" and doc["packet"]["score"] is None
    assert doc["rank"]["tier"] == "refused"


def test_freeze_text_lists_the_entries_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "l.sqlite"
    assert run_freeze(freeze_args([str(DEVTOOLS)], path)) == 0
    assert run_freeze(freeze_args([str(FLAGS)], path)) == 0
    lines = capsys.readouterr().out.splitlines()
    with Ledger.open(path) as ledger:
        entries = ledger.entries()
    assert re.fullmatch(
        rf"froze 2 prospective forecasts into {re.escape(str(path))} at \S+Z \(seq 2–3, one transaction\)", lines[3]
    )
    assert lines[5].split() == ["2", "1", "self_serve", str(FLAGS), "released", entries[1].entry_sha256]
    assert lines[6].split() == ["3", "2", "enterprise_first", str(FLAGS), "released", entries[2].entry_sha256]


# ---------------------------------------------------------------------- show
def test_show_lists_entries_and_outcomes_optionally_for_one_route(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "l.sqlite"
    assert run_freeze(freeze_args([str(FLAGS), str(DEVTOOLS)], path)) == 0
    with Ledger.open(path) as ledger:
        ledger.append_outcomes([OutcomeRecord("devtools_api", dt.date(2012, 9, 1), {"fields": {"developers": 620}})])
    capsys.readouterr()
    assert run_ledger_show(ledger_args(path, "json", route="devtools_api")) == 0
    body = json.loads(capsys.readouterr().out)
    assert [e["route"] for e in body["entries"]] == ["devtools_api"]
    assert body["entries"][0]["payload"]["rank"]["rank"] == 3
    assert body["entries"][0]["payload"]["packet"]["route"] == "devtools_api"
    assert [(o["route"], o["observed"], o["forecast"]["seq"]) for o in body["outcomes"]] == [
        ("devtools_api", "2012-09-01", 3)
    ]
    assert run_ledger_show(ledger_args(path)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{path}: 3 forecasts"
    assert [line.split()[2] for line in lines[2:5]] == ["self_serve", "enterprise_first", "devtools_api"]
    assert lines[5] == "1 outcome"
    assert run_ledger_show(ledger_args(path, route="nobody")) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: 0 forecasts for route nobody",
        "0 outcomes for route nobody",
    ]


def test_show_refuses_a_row_edited_into_nonsense(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = filled(tmp_path / "l.sqlite")
    tamper(path, "entries", "UPDATE entries SET payload = '{not json' WHERE seq = 2")
    assert run_ledger_show(ledger_args(path, "json")) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["ok"] is False and "entries" not in body
    (problem,) = body["diagnostics"]
    assert problem["code"] == "PCSC-E714" and "`pcsc ledger verify` names the bad row" in problem["message"]
    assert run_ledger_show(ledger_args(path)) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "`pcsc ledger verify` names the bad row" in captured.err
    assert run_ledger_verify(ledger_args(path)) == 1
    assert "entries seq 2: the payload does not match" in capsys.readouterr().err
