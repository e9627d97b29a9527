"""No output, log or error carries a credential: every command that takes a ledger,
given a database address with a password (on the command line or in pcsc.toml,
reachable or not, well-formed or not), prints and writes the address only with its
password masked (`pcsc.base.config.hide_credentials`), in every format it offers.

The commands are found from the command registry, so a new one that takes `--ledger`
is covered (or this test says which arguments it needs)."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pcsc.base.config import hide_credentials
from pcsc.cli import main
from pcsc.cli.main import command_parser
from pcsc.cli.registry import COMMANDS, Command
from tests import docrun
from tests.conftest import ROOT

SECRET = "Zq7s3cr3tPw"
RESOLVED = "2042-01-15"  # the tutorial's resolution date
ARGUMENTS: dict[str, list[str]] = {  # what each ledger command needs besides the ledger, in the tutorial's folder
    "freeze": ["routes/invoices.route"],
    "resolve": ["outcomes.toml", "--as-of", RESOLVED],
    "evaluate": ["--as-of", RESOLVED],
    "ledger verify": [],
    "ledger show": [],
    "ledger export": ["--as-of", RESOLVED, "-o", "export.out"],
    "ledger head": [],
    "ledger checkpoint": ["--key", "keys.pem", "-o", "checkpoint.json"],
    "policy fit": ["--policy", "venture@1.0.0", "--version", "1.0.1", "--as-of", RESOLVED, "-o", "fitted.toml"],
    "policy compare": ["venture@1.0.0", "venture@1.0.0", "--as-of", RESOLVED],
    "config": [],
    "prereg": ["plan.toml"],
}
FIRST = ("freeze", "resolve")  # they fill a reachable ledger for the others


def _options(command: Command) -> dict[str, Any]:
    return {o: a for a in command_parser(command)._actions for o in a.option_strings}


def ledger_commands() -> list[Command]:
    found = [c for c in COMMANDS if "--ledger" in _options(c)]
    order = {name: i for i, name in enumerate(FIRST)}
    return sorted(found, key=lambda c: order.get(c.name, len(order)))


def formats(command: Command) -> list[str | None]:
    action = _options(command).get("--format")
    return [None, *(action.choices or [])] if action is not None else [None]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def addresses() -> dict[str, str]:
    """Addresses with the password where libpq takes it, and where libpq's own message
    quotes the address back."""
    port = free_port()
    return {
        "userinfo": f"postgresql://someone:{SECRET}@127.0.0.1:{port}/db",
        "query": f"postgresql://127.0.0.1:{port}/db?user=someone&password={SECRET}",
        "quoted-by-libpq": f"postgresql://someone:{SECRET}@[::1/db",
        "slash-in-password": f"postgres://someone:a/{SECRET}@127.0.0.1:{port}/db",
    }


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tutorial")
    docrun.workspace(ROOT / "docs" / "tutorial.md", folder)
    assert main(["ledger", "keygen", "-o", str(folder / "keys"), "-q"]) == 0
    plan = '[plan]\nname = "pilot"\n\n[[prediction]]\nid = "P1"\nclaim = "auc(score) >= 0.6"\n'
    (folder / "plan.toml").write_text(plan, encoding="utf-8")
    return folder


def test_every_ledger_command_is_exercised() -> None:
    names = {c.name for c in ledger_commands()}
    assert names == set(ARGUMENTS), f"say in ARGUMENTS what these need: {sorted(names ^ set(ARGUMENTS))}"


def files_under(folder: Path) -> Iterator[Path]:
    return (p for p in folder.rglob("*") if p.is_file())


def run_everything(folder: Path, address: str, capsys: pytest.CaptureFixture[str], *, from_config: bool) -> str:
    """Every ledger command in every format, in ``folder``; all they printed."""
    printed: list[str] = []
    for command in ledger_commands():
        for fmt in formats(command):
            ledger = [] if from_config else ["--ledger", address]
            shown = ["--format", fmt] if fmt else []
            code = main([*command.words, *ARGUMENTS[command.name], *ledger, *shown])
            out, err = capsys.readouterr()
            assert code != 70 and "internal error" not in err, (command.name, err)
            printed.append(f"$ pcsc {command.name} {fmt}\n{out}{err}")
    return "\n".join(printed)


def assert_secret_kept(folder: Path, printed: str) -> None:
    assert SECRET not in printed, printed[max(0, printed.find(SECRET) - 800):printed.find(SECRET) + 200]
    for path in files_under(folder):
        assert SECRET.encode() not in path.read_bytes(), f"{path} holds the password"


@pytest.mark.parametrize("kind", list(addresses()))
def test_no_command_prints_the_password_of_an_unreachable_ledger(
    kind: str, tutorial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (the extra pcsc[postgres])")
    address = addresses()[kind]
    folder = tmp_path / "t"
    import shutil

    shutil.copytree(tutorial, folder)
    monkeypatch.chdir(folder)
    printed = run_everything(folder, address, capsys, from_config=False)
    assert "cannot connect" in printed or "***" in printed
    assert_secret_kept(folder, printed)


def test_a_configured_address_is_masked_too(
    tutorial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    folder = tmp_path / "t"
    shutil.copytree(tutorial, folder)
    (folder / "pcsc.toml").write_text(f'ledger = "{addresses()["userinfo"]}"\n', encoding="utf-8")
    monkeypatch.chdir(folder)
    printed = run_everything(folder, "", capsys, from_config=True)
    assert "postgresql://someone:***@127.0.0.1:" in printed
    assert SECRET not in printed
    for path in files_under(folder):
        if path.name != "pcsc.toml":  # where the user wrote it
            assert SECRET.encode() not in path.read_bytes(), f"{path} holds the password"


def test_an_unexpected_failure_does_not_print_the_password(
    tutorial: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug's message (exit 70) can quote the address too: it is masked like the rest."""
    import pcsc.forecast.stores

    address = addresses()["userinfo"]

    def broken(path: Any, **_: Any) -> Any:
        raise RuntimeError(f"unexpected trouble with {getattr(path, 'url', path)}")

    monkeypatch.setattr(pcsc.forecast.stores, "open_ledger", broken)
    monkeypatch.chdir(tutorial)
    assert main(["ledger", "head", "--ledger", address]) == 70
    out, err = capsys.readouterr()
    assert "internal error" in err and "someone:***@" in err and SECRET not in out + err


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
        ("postgresql:/u:pw@h/db", "postgresql:/u:***@h/db"),  # a URL that went through a path
        ("postgres://u:a/b@c@h:5432/db?x=1", "postgres://u:***@h:5432/db?x=1"),
        ("postgresql://h/db?user=u&password=pw&sslmode=require", "postgresql://h/db?user=u&password=***&sslmode=require"),
        ("host=h password='p w' user=u", "host=h password=*** user=u"),
        ("at 'postgresql://u:pw@h/db': refused", "at 'postgresql://u:***@h/db': refused"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),  # no password: nothing to hide
        ("postgresql://h:5432/db", "postgresql://h:5432/db"),
        ("routes/a.route:3:1: error: x", "routes/a.route:3:1: error: x"),
    ],
)
def test_hide_credentials(given: str, shown: str) -> None:
    assert hide_credentials(given) == shown


# ---------------------------------------------------------------------- a reachable server
DSN = os.environ.get("PCSC_TEST_POSTGRES", "")


@pytest.fixture
def own_role() -> Iterator[str]:
    """A schema and a role of its own whose password is SECRET: the address of a ledger
    every command can reach."""
    if not DSN:
        pytest.skip("PCSC_TEST_POSTGRES is not set (.ci/run starts a PostgreSQL server and sets it)")
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (the extra pcsc[postgres])")
    try:
        admin = psycopg.connect(DSN, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        pytest.skip(f"the PostgreSQL server at PCSC_TEST_POSTGRES does not answer: {exc}")
    suffix = uuid.uuid4().hex[:10]
    schema, role = f"pcsc_c_{suffix}", f"pcsc_c_{suffix}"
    try:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{SECRET}'")
    except psycopg.Error as exc:
        admin.close()
        pytest.skip(f"the test role cannot create roles: {exc}")
    admin.execute(f"CREATE SCHEMA {schema}")
    admin.execute(f"GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    info = psycopg.conninfo.conninfo_to_dict(DSN)
    host, port, dbname = info.get("host", "localhost"), info.get("port", 5432), info["dbname"]
    yield f"postgresql://{role}:{SECRET}@{host}:{port}/{dbname}?options=-csearch_path%3D{schema}"
    admin.execute(f"DROP SCHEMA {schema} CASCADE")
    admin.execute(f"DROP ROLE {role}")
    admin.close()


def test_no_command_prints_the_password_of_a_reachable_ledger(
    own_role: str, tutorial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import psycopg

    folder = tmp_path / "t"
    shutil.copytree(tutorial, folder)
    monkeypatch.chdir(folder)
    printed = run_everything(folder, own_role, capsys, from_config=False)
    assert "froze 1 prospective forecast into postgresql://pcsc_c_" in printed
    assert "invoices" in printed.split("$ pcsc ledger show None", 1)[1]  # the ledger was reached and read
    assert_secret_kept(folder, printed)
    with psycopg.connect(own_role, autocommit=True) as conn:  # nor is it stored in the ledger
        for table in ("entries", "outcomes"):
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert rows and SECRET not in repr(rows)
