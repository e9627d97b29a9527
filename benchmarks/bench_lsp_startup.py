"""Start-up of the language server (a script, not a test).

    python3 benchmarks/bench_lsp_startup.py [--runs N]

Each run starts `pcsc lsp` (the installed console script when it is on PATH, else
`python3 -m pcsc lsp`), writes `initialize` at once, and times from the start of the
process to the moment the answer to `initialize` is read: what an editor waits before
it may send anything. It then sends `initialized`, `shutdown` and `exit`. Each run is
paired with a run of the yardstick `python3 -c pass` in the same loop (A B A B …);
the script prints the minimum and the median of the seconds and of the per-pair
ratios, the CPU seconds the server process had used when it answered (about the wait
on an idle core; from Linux's /proc), and the load average (`os.getloadavg`) before and after.
The goal is under 1 s; exit status 1 when the median is over it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lsp import receive, send  # noqa: E402  (a sibling script, not a package)

ROOT = Path(__file__).resolve().parent.parent
YARDSTICK = [sys.executable, "-c", "pass"]
GOAL_SECONDS = 1.0


def server_command() -> list[str]:
    script = shutil.which("pcsc")
    return [script, "lsp"] if script else [sys.executable, "-m", "pcsc", "lsp"]


def reply(stream: IO[bytes], request_id: int) -> dict[str, Any]:
    while True:
        message = receive(stream)
        if message.get("id") == request_id and "method" not in message:
            return message


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) the process has used so far (Linux's /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_server(command: list[str]) -> tuple[float, float]:
    """Seconds from the server's start to its answer to `initialize`, and the CPU
    seconds the server had used by then."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    send(proc.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": os.getpid(), "rootUri": ROOT.as_uri(), "capabilities": {}}})
    answer = reply(proc.stdout, 1)
    elapsed = time.perf_counter() - start
    cpu = process_cpu(proc.pid)
    if "result" not in answer or "capabilities" not in answer["result"]:
        raise SystemExit(f"initialize failed: {answer}")
    send(proc.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    reply(proc.stdout, 2)
    send(proc.stdin, {"jsonrpc": "2.0", "method": "exit"})
    proc.wait(timeout=30)
    return elapsed, cpu


def time_yardstick() -> float:
    start = time.perf_counter()
    subprocess.run(YARDSTICK, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="paired runs (default 9)")
    args = parser.parse_args()
    command = server_command()
    print(f"server: {' '.join(command)}")
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    time_server(command)  # warm the file cache and the bytecode
    server, yardstick, ratios, cpus = [], [], [], []
    for _ in range(args.runs):
        s, cpu = time_server(command)
        cpus.append(cpu)
        y = time_yardstick()
        server.append(s)
        yardstick.append(y)
        ratios.append(s / y)
    print("load average after:  " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"python -c pass:             min {min(yardstick):.3f} s, median {statistics.median(yardstick):.3f} s")
    print(f"initialize answered after:  min {min(server):.3f} s, median {statistics.median(server):.3f} s")
    print(f"server CPU by the answer:   min {min(cpus):.3f} s, median {statistics.median(cpus):.3f} s")
    print(f"ratio to python -c pass:    min {min(ratios):.1f}x, median {statistics.median(ratios):.1f}x")
    met = statistics.median(server) <= GOAL_SECONDS
    print(f"goal: median under {GOAL_SECONDS:.0f} s: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
