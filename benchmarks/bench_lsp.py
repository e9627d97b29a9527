"""Editor latency of the language server (a script, not a test).

    python3 benchmarks/bench_lsp.py [--changes N] [--file ROUTE]

Starts `python -m pcsc lsp` over stdio, opens a copy of the route (default: the
reference route, with its library beside it), then sends ``--changes`` whole-document
changes, alternating between the text and an edited one (a state's value changed, so
that each change is a new text to compile and an uncovered change to report), and
times each from the moment `didChange` is written to the moment its
`publishDiagnostics` (for that version) is read. Prints the median, the best and the
90th percentile in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent


def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def receive(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise SystemExit("the server closed the connection")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


def published(stream: IO[bytes], version: int) -> dict[str, Any]:
    """Read until the diagnostics of ``version`` arrive (skipping logs and other replies)."""
    while True:
        message = receive(stream)
        if message.get("method") == "textDocument/publishDiagnostics" and message["params"].get("version") == version:
            return message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=60, help="document changes timed (default 60)")
    parser.add_argument("--file", type=Path, default=ROOT / "examples" / "devtools_api.route")
    args = parser.parse_args()
    text = args.file.read_text(encoding="utf-8")
    edited = text.replace("state wedge  { developers 500 }", "state wedge  { developers 5k }", 1)
    if edited == text:
        edited = text + "\n# edited\n"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ROOT / "obligations" / "venture.obl", folder / "venture.obl")
        path = folder / args.file.name
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        server = subprocess.Popen([sys.executable, "-m", "pcsc", "lsp"], cwd=ROOT, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert server.stdin is not None and server.stdout is not None
        send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                            "params": {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}})
        while receive(server.stdout).get("id") != 1:
            pass
        send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send(server.stdin, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "pcsc", "version": 1, "text": text}}})
        published(server.stdout, 1)
        times: list[float] = []
        counts: set[int] = set()
        for i in range(args.changes):
            version = i + 2
            change = edited if i % 2 == 0 else text
            start = time.perf_counter()
            send(server.stdin, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": change}]}})
            message = published(server.stdout, version)
            times.append((time.perf_counter() - start) * 1000)
            counts.add(len(message["params"]["diagnostics"]))
        send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        while receive(server.stdout).get("id") != 2:
            pass
        send(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
        server.wait(timeout=10)
    times.sort()
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    print(f"didChange -> publishDiagnostics over {len(times)} changes of {args.file.name} "
          f"(diagnostics per publish: {sorted(counts)}): median {statistics.median(times):.1f} ms, "
          f"best {times[0]:.1f} ms, p90 {p90:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
