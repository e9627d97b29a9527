"""The language server bounds what it reads: a `Content-Length` past
`MAX_MESSAGE_BYTES` or a header line past `MAX_HEADER_BYTES` closes the connection
with a message on standard error and exit 1, never a MemoryError. A real `python -m
pcsc lsp` process, spoken to over its standard input and output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("pygls")

from pcsc.lsp.server import MAX_HEADER_BYTES, MAX_MESSAGE_BYTES  # noqa: E402


def message(obj: object) -> bytes:
    body = json.dumps(obj).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INITIALIZE = message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": None, "capabilities": {}}})


def serve(data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "pcsc", "lsp"], input=data, capture_output=True, timeout=120)


def replies(out: bytes) -> list[dict[str, object]]:
    found = []
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        found.append(json.loads(rest[:length]))
        out = rest[length:]
    return found


@pytest.mark.parametrize("length", [MAX_MESSAGE_BYTES + 1, 99_999_999_999, 10**40])
def test_a_message_over_the_limit_closes_the_connection(length: int) -> None:
    done = serve(INITIALIZE + b"Content-Length: %d\r\n\r\n{" % length)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert f"a message of {length:,} bytes (Content-Length); the limit is {MAX_MESSAGE_BYTES:,}" in err
    assert "MemoryError" not in err and "Traceback" not in err
    assert [r["id"] for r in replies(done.stdout)] == [1]  # the request before it was answered


def test_a_header_line_over_the_limit_closes_the_connection() -> None:
    done = serve(INITIALIZE + b"X-Junk: " + b"x" * MAX_HEADER_BYTES + b"\r\n")
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1 and f"a header line longer than {MAX_HEADER_BYTES:,} bytes" in err
    assert "Traceback" not in err


def test_messages_within_the_limits_are_answered() -> None:
    shutdown = message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    done = serve(INITIALIZE + shutdown + message({"jsonrpc": "2.0", "method": "exit"}))
    assert done.returncode == 0, done.stderr.decode()
    assert [r["id"] for r in replies(done.stdout)] == [1, 2]


def test_the_limits_are_documented() -> None:
    from tests.conftest import ROOT

    cli = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert f"It reads at most 64 MiB ({MAX_MESSAGE_BYTES:,} bytes) in one message and {MAX_HEADER_BYTES:,} bytes" in cli
