"""The one reader of a user's files (`pcsc.base.files`) and its one error: every file a
command reads is refused the same way when it is not a regular file, too large or not
UTF-8, with the same words, and never read past the limit."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pcsc.base import files
from pcsc.diagnostics.files import unreadable
from tests.conftest import EXAMPLES, run_cli

ROUTECAST = EXAMPLES / "routecast_table_a1.csv"
FOLDER = "it is a folder, not a regular file: it is not read"


def test_text_is_utf8_without_its_byte_order_mark_and_with_lf_line_breaks(tmp_path: Path) -> None:
    path = tmp_path / "a.route"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\n")
    assert files.read_text(path) == "one\ntwo\nthree\n"
    assert files.read_bytes(path) == b"\xef\xbb\xbfone\r\ntwo\rthree\n"


def test_text_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "a.route"
    path.write_bytes(b"\xef\xbb\xbfok\nab\xffc\n")
    with pytest.raises(files.NotText) as caught:
        files.read_text(path)
    exc = caught.value
    assert (exc.line, exc.column, exc.reason) == (2, 3, "not UTF-8 text: byte 0xFF cannot be decoded")
    d = unreadable(exc, "a.route")
    assert (d.code, d.span.line, d.span.column, d.message) == (
        "PCSC-E105", 2, 3, "a.route is not UTF-8 text: byte 0xFF cannot be decoded")


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 10)
    path = tmp_path / "big.route"
    path.write_bytes(b"x" * 11)
    reads: list[int] = []
    real_read = os.read  # other threads read too (xdist's channel): count this file's reads only
    monkeypatch.setattr(os, "read", lambda fd, n: (os.fstat(fd).st_size == 11 and reads.append(n)) or real_read(fd, n))
    with pytest.raises(files.FileTooLarge) as caught:
        files.read_bytes(path)
    assert reads == []
    assert caught.value.reason == "the file is 11 bytes; the limit is 10 bytes"
    d = unreadable(caught.value, "big.route")
    assert (d.code, d.message) == ("PCSC-E112", "big.route: the file is 11 bytes; the limit is 10 bytes")


def test_what_is_not_a_regular_file_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: a plain open would wait for one
    with pytest.raises(files.NotAFile) as caught:
        files.read_text(fifo)
    assert caught.value.reason == "it is a FIFO (named pipe), not a regular file: it is not read"
    with pytest.raises(files.NotAFile, match="it is a folder"):
        files.read_text(tmp_path)


def test_the_system_s_own_refusal_is_an_unreadable_with_its_words(tmp_path: Path) -> None:
    with pytest.raises(files.Unreadable) as caught:
        files.read_text(tmp_path / "missing.route")
    assert caught.value.errno == errno.ENOENT and caught.value.reason == "No such file or directory"
    d = unreadable(caught.value, "missing.route")
    assert (d.code, d.message) == ("PCSC-E105", "cannot read missing.route: No such file or directory")


def commands(tmp: Path) -> list[list[str]]:
    """A command for each kind of file a user gives PCSC, that file being a folder."""
    d, route = str(tmp / "folder"), str(EXAMPLES / "devtools_api.route")
    ledger = str(tmp / "ledger.sqlite")
    return [
        ["check", "--leakage", d, route],  # a names file
        ["blind", "--names", d, route, "-o", str(tmp / "out"), "--map", str(tmp / "map.json")],
        ["resolve", d, "--ledger", ledger],  # an outcomes file
        ["evaluate", "--scores", d, "--id", "blind_id", "--outcome", "outcome_bucket",
         "--positive", "S+,+", "--negative", "-"],  # a score table
        ["evaluate", "--scores", str(ROUTECAST), "--id", "blind_id", "--outcome", "outcome_bucket",
         "--positive", "S+,+", "--negative", "-", "--sha256", d],  # its checksum file
        ["ledger", "verify", "--ledger", ledger, "--checkpoint", d, "--public-key", d],  # a key
        ["policy", "check", d + ".toml"],  # a policy
    ]


@pytest.mark.parametrize("index", range(7))
def test_every_user_file_is_read_by_the_one_reader(index: int, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder.toml").mkdir()
    if index == 5:  # verify needs a ledger to verify
        run_cli(capsys, "freeze", "--retrospective", str(EXAMPLES / "devtools_api.route"),
                "--ledger", str(tmp_path / "ledger.sqlite"))
    argv = commands(tmp_path)[index]
    code, out, err = run_cli(capsys, *argv)
    assert code in (1, 2), (argv, out, err)
    assert FOLDER in out + err, (argv, out, err)
    assert "Traceback" not in err and "[Errno" not in out + err
