"""The ledger proves its head (`ledger head`, `verify --head`, signed checkpoints),
compares its guard triggers by their SQL, says what `verify` checked, and reports
faults (a full disk, a damaged page, a read-only file or folder) as diagnostics with
SQLite's own message, exit 1, never 70.

Read-only files and folders: the tests run as root, where chmod stops no write. The
in-process tests open the ledger through a read-only URI (``mode=ro``); the
subprocess tests drop root's permission override with ``setpriv`` (or, when not root,
rely on chmod alone) and are skipped when neither is possible.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pcsc.forecast import ledger as ledger_module
from pcsc.forecast.ledger import (
    GUARDS,
    ForecastRecord,
    HeadToken,
    Ledger,
    OutcomeRecord,
    PolicyId,
    create_and_append,
    guard_sql,
    head_hash,
)
from tests.conftest import EXAMPLES, ROOT, run_cli

POLICY = PolicyId("venture", "1.0.0", "ab" * 32)
T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
FLAGS = EXAMPLES / "feature_flags.route"
TOKEN = re.compile(r"\d+\.\d+:[0-9a-f]{64}")


def records(n: int, start: int = 0, tag: str = "") -> list[ForecastRecord]:
    return [ForecastRecord("r", "f.route", POLICY, {"i": start + i, "tag": tag}) for i in range(n)]


def observations(n: int, start: int = 0) -> list[OutcomeRecord]:
    return [OutcomeRecord("r", dt.date(2013, 1, start + i + 1), {"fields": {"developers": i}}) for i in range(n)]


def build(path: Path, tag: str = "") -> Path:
    """2 forecasts, 2 outcomes anchored to them, then 2 more forecasts."""
    with Ledger.open(path) as ledger:
        ledger.append_forecasts(records(2, tag=tag), inputs=[], frozen_at=T0)
        ledger.append_outcomes(observations(2), recorded_at=T0)
        ledger.append_forecasts(records(2, 2, tag=tag), inputs=[], frozen_at=T0)
    return path


def head_of(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    code, out, err = run_cli(capsys, "ledger", "head", "--ledger", str(path))
    assert code == 0, err
    return out.strip()


def attack(path: Path, *statements: str) -> None:
    """What an attacker with the file does: drop the guards, change rows, put the guards
    back exactly as pcsc wrote them."""
    conn = sqlite3.connect(path, isolation_level=None)
    saved = list(conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'"))
    for name in GUARDS:
        conn.execute(f"DROP TRIGGER {name}")
    for statement in statements:
        conn.execute(statement)
    for (sql,) in saved:
        conn.execute(sql)
    conn.close()


# ---------------------------------------------------------------------- the head
def test_head_is_one_token_covering_both_chains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    token = head_of(capsys, path)
    assert TOKEN.fullmatch(token) and token.startswith("4.2:")
    with Ledger.open(path, create=False) as ledger:
        e, o = ledger.entries()[-1], ledger.outcomes()[-1]
        assert str(ledger.head().token) == token
    assert token.split(":")[1] == head_hash(4, e.entry_sha256, 2, o.entry_sha256)
    code, out, _ = run_cli(capsys, "ledger", "head", "--ledger", str(path), "--format", "json")
    doc = json.loads(out)
    assert (code, doc["schema"]["kind"], doc["token"]) == (0, "ledger-head", token)
    assert doc["entries"] == {"seq": 4, "entry_sha256": e.entry_sha256}
    assert doc["outcomes"] == {"seq": 2, "entry_sha256": o.entry_sha256}


def test_head_of_an_empty_ledger_and_a_token_that_is_not_one(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "l.sqlite"
    Ledger.open(path).close()
    token = head_of(capsys, path)
    assert token.startswith("0.0:")
    assert HeadToken.parse(token) == HeadToken(0, 0, token[4:])
    code, _, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", "4:abc")
    assert code == 2 and "expected E.O:HASH" in err


@pytest.mark.parametrize(
    ("deleted", "statements"),
    [
        ("the newest forecasts", ["DELETE FROM entries WHERE seq > 2"]),
        ("the newest outcome", ["DELETE FROM outcomes WHERE seq = 2"]),
        ("every row", ["DELETE FROM outcomes", "DELETE FROM entries"]),
    ],
)
def test_verify_head_catches_deleting_the_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str], deleted: str,
                                               statements: list[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    token = head_of(capsys, path)
    attack(path, *statements)
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(path))
    assert code == 0 and "is intact" in out  # the file alone cannot tell ...
    assert "cannot be detected without a recorded head" in out  # ... and says so
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", token)
    assert code == 1 and out == ""
    assert "[PCSC-E716]" in err and "were deleted" in err, deleted


def test_verify_head_catches_a_rewritten_chain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    token = head_of(capsys, path)
    forged = build(tmp_path / "forged.sqlite", tag="forged")  # every hash recomputed, every link valid
    shutil.copyfile(forged, path)
    assert run_cli(capsys, "ledger", "verify", "--ledger", str(path))[0] == 0
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", token, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and not doc["ok"]
    assert doc["checked"]["recorded_head"]["held"] is False
    assert any("were rewritten" in p["problem"] and p["table"] == "head" for p in doc["problems"])
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E716"]


def test_rewriting_one_row_at_or_before_the_head_is_caught(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    token = head_of(capsys, path)
    attack(path, "UPDATE entries SET route = 'other' WHERE seq = 1")
    code, _, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", token)
    assert code == 1 and "entries seq 1: entry_sha256 does not match" in err


def test_appending_after_the_head_still_verifies_and_is_counted(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    token = head_of(capsys, path)
    with Ledger.open(path) as ledger:
        ledger.append_outcomes(observations(1, 5))
        ledger.append_forecasts(records(3, 10), inputs=[])
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", token)
    assert code == 0, err
    assert f"recorded head {token} holds" in out and "3 forecasts and 1 outcome appended since" in out
    assert "not checked" not in out
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--head", token, "--format", "json")
    doc = json.loads(out)
    assert doc["checked"]["recorded_head"] == {"token": token, "held": True,
                                               "appended": {"entries": 3, "outcomes": 1}}
    assert doc["not_checked"] == [] and doc["head"]["token"].startswith("7.3:")


# ---------------------------------------------------------------------- guard triggers
def test_a_no_op_guard_of_the_same_name_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER entries_no_delete")
    conn.execute("CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries BEGIN SELECT 1; END")
    conn.execute("CREATE TRIGGER helpful AFTER INSERT ON outcomes BEGIN SELECT 1; END")
    conn.close()
    code, out, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path))
    assert code == 1 and out == ""
    assert "guard trigger entries_no_delete has been altered" in err
    assert "unknown trigger helpful on outcomes" in err


def test_guards_are_compared_by_sql_with_whitespace_normalised(tmp_path: Path) -> None:
    path = build(tmp_path / "l.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'outcomes_no_update'").fetchone()[0]
    conn.execute("DROP TRIGGER outcomes_no_update")
    conn.execute(sql.replace(" ", "   ").replace("\n", "\n\n  "))  # the same trigger, spaced out
    conn.close()
    with Ledger.open(path, create=False) as ledger:
        result = ledger.verify()
    assert result.ok and set(guard_sql()) == set(GUARDS) and result.guards == GUARDS


# ---------------------------------------------------------------------- what verify says it checked
def test_verify_states_what_it_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = build(tmp_path / "l.sqlite")
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(path))
    assert code == 0
    assert "checked: 4 rows of entries and 2 rows of outcomes" in out
    assert "payload hashes, entry hashes, links and outcome anchors recomputed" in out
    assert "10 schema objects (6 guard triggers) compared by their full SQL in sqlite_master" in out
    assert "record one with `pcsc ledger head`" in out
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--format", "json")
    doc = json.loads(out)
    for key in ("ok", "entries", "outcomes", "heads", "first_bad", "problems"):  # the keys kept
        assert key in doc
    assert doc["checked"]["rows"] == {"entries": 4, "outcomes": 2}
    assert doc["checked"]["recomputed"] == ["payload_sha256", "entry_sha256", "prev_sha256 links",
                                            "outcome forecast anchors"]
    assert doc["checked"]["guard_triggers"] == list(GUARDS) and doc["checked"]["integrity_check"] is True
    assert sorted(doc["checked"]["schema_objects"]) == sorted(
        [*(f"trigger {g}" for g in GUARDS), "table entries", "table outcomes", "index entries_by_route",
         "index outcomes_by_route"])
    assert doc["checked"]["recorded_head"] is None
    assert len(doc["not_checked"]) == 1 and "recorded head" in doc["not_checked"][0]


# ---------------------------------------------------------------------- signed checkpoints
@pytest.fixture
def keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    pytest.importorskip("cryptography")
    code, out, err = run_cli(capsys, "ledger", "keygen", "-o", str(tmp_path / "signer"))
    assert code == 0, err
    return tmp_path / "signer.pem", tmp_path / "signer.pub.pem"


def test_keygen_writes_a_private_key_only_its_owner_reads(keys: tuple[Path, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    private, public = keys
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in private.read_bytes() and b"PUBLIC KEY" in public.read_bytes()
    code, _, err = run_cli(capsys, "ledger", "keygen", "-o", str(private.with_suffix("")))
    assert code == 1 and "is never replaced" in err and "[PCSC-E717]" in err


def test_a_signed_checkpoint_verifies_then_proves_the_head(tmp_path: Path, keys: tuple[Path, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    private, public = keys
    path = build(tmp_path / "l.sqlite")
    checkpoint = tmp_path / "checkpoint.json"
    code, out, err = run_cli(capsys, "ledger", "checkpoint", "--ledger", str(path), "--key", str(private),
                             "-o", str(checkpoint))
    assert code == 0, err
    doc = json.loads(checkpoint.read_text(encoding="utf-8"))
    assert doc["head"]["token"] == head_of(capsys, path) and doc["signature"]["algorithm"] == "ed25519"
    assert doc["ledger"]["first_forecast_sha256"] and doc["created_at"].endswith("Z")
    with Ledger.open(path) as ledger:
        ledger.append_outcomes(observations(1, 9))
    verify = ["ledger", "verify", "--ledger", str(path), "--checkpoint", str(checkpoint), "--public-key", str(public)]
    code, out, err = run_cli(capsys, *verify)
    assert code == 0, err
    assert "signature verified" in out and "0 forecasts and 1 outcome appended since" in out
    attack(path, "DELETE FROM outcomes WHERE seq >= 2")  # below the signed head
    code, _, err = run_cli(capsys, *verify)
    assert code == 1 and "[PCSC-E716]" in err and "were deleted" in err


def test_a_tampered_checkpoint_or_a_wrong_key_is_refused(tmp_path: Path, keys: tuple[Path, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    private, public = keys
    path = build(tmp_path / "l.sqlite")
    checkpoint = tmp_path / "checkpoint.json"
    assert run_cli(capsys, "ledger", "checkpoint", "--ledger", str(path), "--key", str(private),
                   "-o", str(checkpoint))[0] == 0
    other_private, other_public = tmp_path / "other.pem", tmp_path / "other.pub.pem"
    assert run_cli(capsys, "ledger", "keygen", "-o", str(tmp_path / "other"))[0] == 0
    verify = ["ledger", "verify", "--ledger", str(path), "--checkpoint", str(checkpoint), "--public-key"]
    code, out, err = run_cli(capsys, *verify, str(other_public))
    assert (code, out) == (1, "") and "signature does not verify" in err and "[PCSC-E717]" in err
    doc = json.loads(checkpoint.read_text(encoding="utf-8"))
    doc["head"]["entries"]["seq"] = 2  # claim an earlier head
    checkpoint.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = run_cli(capsys, *verify, str(public))
    assert code == 1 and "signature does not verify" in err
    code, _, err = run_cli(capsys, *verify, str(other_private))
    assert code == 1 and "not an unencrypted PEM public key" in err
    code, _, err = run_cli(capsys, "ledger", "verify", "--ledger", str(path), "--checkpoint", str(checkpoint))
    assert code == 2 and "--checkpoint needs --public-key" in err


def test_without_cryptography_the_message_names_the_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "cryptography" or m.startswith("cryptography.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cryptography", None)
    code, out, err = run_cli(capsys, "ledger", "keygen", "-o", str(tmp_path / "k"))
    assert code == 1 and "pip install 'cryptography>=42' (the extra pcsc[sign])" in err
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------- faults
class RollbackFails:
    """A connection whose ROLLBACK fails, as it does when SQLite already ended the transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "ROLLBACK":
            raise sqlite3.OperationalError("cannot rollback - no transaction is active")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def full_disk(monkeypatch: pytest.MonkeyPatch, pages: int | None = None, rollback_fails: bool = True) -> None:
    """Every ledger opened from now on can grow no further (``PRAGMA max_page_count``)."""
    real = Ledger._connect.__func__  # type: ignore[attr-defined]

    def connect(cls: type[Ledger], file: Path, shown: Path, create: bool, *, read_only: bool = False) -> Ledger:
        if create and not file.exists():  # a new ledger: no room even for its schema
            conn = sqlite3.connect(file, isolation_level=None)
            conn.execute(f"PRAGMA max_page_count = {pages or 1}")
            ledger = cls(conn, shown)
            if rollback_fails:
                ledger._conn = RollbackFails(conn)  # type: ignore[assignment]
            try:
                ledger._prepare(create)
            except BaseException:
                conn.close()  # as the real _connect does: an open connection would leak
                raise
            return ledger
        ledger = real(cls, file, shown, create, read_only=read_only)
        count = ledger._conn.execute("PRAGMA page_count").fetchone()[0]
        ledger._conn.execute(f"PRAGMA max_page_count = {pages or count}")
        if rollback_fails:
            ledger._conn = RollbackFails(ledger._conn)  # type: ignore[assignment]
        return ledger

    monkeypatch.setattr(Ledger, "_connect", classmethod(connect))


def test_a_full_disk_during_freeze_reports_the_real_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l.sqlite"
    assert run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))[0] == 0
    full_disk(monkeypatch)
    code, out, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and not doc["ok"] and "database or disk is full" in doc["error"]
    assert "nothing frozen" in doc["error"] and "cannot rollback" not in doc["error"]
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E711"]
    monkeypatch.undo()
    with Ledger.open(path, create=False) as ledger:
        assert len(ledger.entries()) == 2 and ledger.verify().ok  # the failed freeze left nothing


def test_a_failed_first_freeze_leaves_no_file_and_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "new" / "deeper" / "l.sqlite"
    full_disk(monkeypatch)
    code, _, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))
    assert code == 1 and "database or disk is full" in err and "[PCSC-E711]" in err
    assert list(tmp_path.iterdir()) == []
    full_disk(monkeypatch, pages=5)  # room for the schema, not for the forecasts
    code, _, err = run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))
    assert code == 1 and "database or disk is full" in err
    assert list(tmp_path.iterdir()) == []


def test_a_new_ledger_appears_whole(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    assert create_and_append(path, [], inputs=[]) == [] and not path.exists()
    entries = create_and_append(path, records(3), inputs=[])
    assert [e.seq for e in entries] == [1, 2, 3] and sorted(p.name for p in tmp_path.iterdir()) == ["l.sqlite"]
    assert [e.seq for e in create_and_append(path, records(1), inputs=[])] == [4]
    with Ledger.open(path, create=False) as ledger:
        assert ledger.verify().ok


def damaged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A frozen ledger with the headers of its table b-tree pages (past the schema page)
    overwritten: whatever the payloads' size, the rows cannot be read."""
    path = tmp_path / "l.sqlite"
    assert run_cli(capsys, "freeze", str(FLAGS), "--ledger", str(path))[0] == 0
    data = path.read_bytes()
    with open(path, "r+b") as f:
        for page in range(1, len(data) // 4096):
            if data[page * 4096] in (0x05, 0x0D):  # interior or leaf page of a table b-tree
                f.seek(page * 4096 + 1)
                f.write(b"\xff" * 300)
    return path


@pytest.mark.parametrize("command", [["ledger", "verify"], ["ledger", "show"], ["evaluate"], ["ledger", "head"]])
def test_a_damaged_page_is_a_diagnostic_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    command: list[str]) -> None:
    path = damaged(tmp_path, capsys)
    code, out, err = run_cli(capsys, *command, "--ledger", str(path))
    assert code == 1 and "internal error" not in err
    assert "malformed" in err and "[PCSC-E7" in err


def test_resolve_on_a_read_only_ledger_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_forecast_loop import outcomes, write_routes

    path = tmp_path / "l.sqlite"
    assert run_cli(capsys, "freeze", *write_routes(tmp_path), "--ledger", str(path))[0] == 0
    real = sqlite3.connect

    def read_only(file: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        return real(f"file:{file}?mode=ro", *args, uri=True, **kwargs)

    monkeypatch.setattr(ledger_module.sqlite3, "connect", read_only)
    code, out, err = run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(path))
    assert code == 1 and "attempt to write a readonly database" in err and "read-only" in err
    assert "[PCSC-E711]" in err


# ---------------------------------------------------------------------- real permissions, in a subprocess
def without_override() -> list[str] | None:
    """A command prefix under which file permissions hold: none needed when not root;
    as root, setpriv dropping the permission override; None when neither works."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def pcsc_limited(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    prefix = without_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*prefix, sys.executable, "-m", "pcsc", *argv], capture_output=True, text=True, cwd=cwd,
                          env=env)


def test_a_ledger_in_a_read_only_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    path = build(folder / "l.sqlite")
    token = head_of(capsys, path)
    folder.chmod(0o555)
    try:
        done = pcsc_limited("ledger", "verify", "--ledger", str(path), "--head", token, cwd=tmp_path)
        assert done.returncode == 0, done.stderr  # read without WAL files: nothing can write there
        assert "holds" in done.stdout
        done = pcsc_limited("freeze", str(FLAGS), "--ledger", str(path), cwd=tmp_path)
        assert done.returncode == 1 and "[PCSC-E711]" in done.stderr
        assert "not an SQLite database" not in done.stderr and "read-only" in done.stderr
        done = pcsc_limited("freeze", str(FLAGS), "--ledger", str(folder / "new.sqlite"), cwd=tmp_path)
        assert done.returncode == 1 and "[PCSC-E711]" in done.stderr and "internal error" not in done.stderr
        assert sorted(p.name for p in folder.iterdir()) == ["l.sqlite"]
    finally:
        folder.chmod(0o755)


def test_resolve_on_a_read_only_ledger_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_forecast_loop import outcomes, write_routes

    path = tmp_path / "l.sqlite"
    assert run_cli(capsys, "freeze", *write_routes(tmp_path), "--ledger", str(path))[0] == 0
    path.chmod(0o444)
    done = pcsc_limited("resolve", outcomes(tmp_path), "--ledger", str(path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "readonly database" in done.stderr and "[PCSC-E711]" in done.stderr
