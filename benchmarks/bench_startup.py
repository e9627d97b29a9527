"""Start-up benchmark for the `pcsc` command (a script, not a test).

    python3 benchmarks/bench_startup.py [--runs N]

Times whole processes, each run of a pcsc command paired with a run of the yardstick
`python3 -c pass` in the same loop (A B A B …), and prints the median of the per-pair
ratios (and their minimum), so that a machine whose speed drifts during the run still
gives a fair ratio; it prints the load average (`os.getloadavg`) before and after:

- `pcsc --version`: needs no parser, no policy, no numbers; target at most 4x;
- `pcsc check examples/devtools_api.route`: parse, lower, bind the policy; at most 10x.

The pcsc command is the installed console script when it is on PATH, else
`python3 -m pcsc`. Exit status 1 when a target is missed.
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

ROOT = Path(__file__).resolve().parent.parent
YARDSTICK = [sys.executable, "-c", "pass"]
TARGETS: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("pcsc --version", ("--version",), 4.0),
    ("pcsc check examples/devtools_api.route", ("check", "examples/devtools_api.route"), 10.0),
)


def pcsc_command() -> list[str]:
    script = shutil.which("pcsc")
    return [script] if script else [sys.executable, "-m", "pcsc"]


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="paired runs per command (default 15)")
    args = parser.parse_args()
    base = pcsc_command()
    missed = 0
    print(f"yardstick: {' '.join(YARDSTICK)}; pcsc: {' '.join(base)}; {args.runs} paired runs")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    print(f"{'command':<42} {'pcsc ms':>8} {'python ms':>10} {'min':>6} {'median':>6} {'target':>7}  ")
    for label, extra, target in TARGETS:
        wall([*base, *extra])  # warm the file cache
        ours, theirs, ratios = [], [], []
        for _ in range(args.runs):
            a = wall([*base, *extra])
            b = wall(YARDSTICK)
            ours.append(a)
            theirs.append(b)
            ratios.append(a / b)
        ratio = statistics.median(ratios)
        ok = ratio <= target
        missed += not ok
        print(
            f"{label:<42} {statistics.median(ours) * 1e3:8.1f} {statistics.median(theirs) * 1e3:10.1f} "
            f"{min(ratios):6.2f} {ratio:6.2f} {target:6.1f}x  {'met' if ok else 'MISSED'}"
        )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
