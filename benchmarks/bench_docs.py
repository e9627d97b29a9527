"""The run times README.md and docs/ quote, measured (a script, not a test).

    python3 benchmarks/bench_docs.py             # measure and print
    python3 benchmarks/bench_docs.py --record    # also write docs/artifacts/timings.json
    python3 benchmarks/bench_docs.py --only search,redteam-spec

Each command runs as a whole process from the checkout (`python3 -m pcsc …`, the IR
cache off, so every run parses), after one warm-up run that is not counted; with
`--runs N` it runs N times and keeps the median. Its CPU time is user + system of the
process and of every process it waited for (so a run in parallel workers counts all
of them); the wall time is beside it. The recording says where and when it was made:
for each command the date, the number of cores, the processor, Python, the platform
and the load average before the first run. tests/test_doc_timings.py checks that each time the
pages quote is the recorded one, as they round it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "docs" / "artifacts" / "timings.json"
PCSC = [sys.executable, "-m", "pcsc"]

#: What the pages time, by the name they cite it by.
TIMINGS: dict[str, list[str]] = {
    "search": [*PCSC, "redteam", "--search", "--conditions", "--features-policy", "cohort@1.0.0", "examples/cohort/",
               "--format", "json"],
    "sensitivity-spec": [*PCSC, "sensitivity", "examples/devtools_api.route", "--format", "json"],
    "sensitivity-rivals": [*PCSC, "sensitivity", "examples/cohort/api_monitoring.route", "--rivals",
                           "examples/cohort", "--format", "json"],
    "redteam-spec": [*PCSC, "redteam", "examples/devtools_api.route", "--format", "json"],
    "redteam-spec-depth-2": [*PCSC, "redteam", "examples/devtools_api.route", "--depth", "2", "--format", "json"],
    "redteam-cohort-reclass-all": [*PCSC, "redteam", "examples/cohort/", "--reclass", "all", "--format", "json"],
    "redteam-cohort-reclass-category": [*PCSC, "redteam", "examples/cohort/", "--reclass", "category",
                                        "--format", "json"],
    "redteam-cohort-reclass-none": [*PCSC, "redteam", "examples/cohort/", "--reclass", "none", "--format", "json"],
}
#: Commands long enough that a warm-up run would double the cost for nothing.
NO_WARM_UP = {"search", "sensitivity-rivals"}


def shown(argv: list[str]) -> str:
    """The command as the pages write it."""
    return " ".join(["pcsc", *argv[3:]])


def run_once(argv: list[str]) -> tuple[float, float, str]:
    env = {**os.environ, "PCSC_NO_CACHE": "1", "NO_COLOR": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"`{shown(argv)}` exited {done.returncode}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout


def counts(name: str, stdout: str) -> dict[str, int]:
    """What the pages quote beside a time: how much work it was."""
    if not stdout.startswith("{"):
        return {}
    doc = json.loads(stdout)
    if name.startswith("sensitivity"):
        return {"compiles": int(doc["sensitivity"]["compiles"])}
    if name.startswith("redteam-"):
        return {"compiles": int(doc["summary"]["tried"])}
    return {}


def machine() -> dict[str, object]:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "processor": model or platform.processor(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": round(os.getloadavg()[0], 1),
    }


def record(measured: dict[str, dict[str, object]]) -> None:
    old = json.loads(RECORDING.read_text(encoding="utf-8")) if RECORDING.is_file() else {"timings": {}}
    doc = {"how": "whole processes from the checkout, PCSC_NO_CACHE=1; CPU = user + system of the process "
                  "and the processes it waited for (benchmarks/bench_docs.py)",
           "timings": {**old["timings"], **measured}}
    RECORDING.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1, help="counted runs per command (median; default 1)")
    parser.add_argument("--only", help="comma-separated names (default: all)")
    parser.add_argument("--record", action="store_true", help=f"write {RECORDING.relative_to(ROOT)}")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(TIMINGS)
    unknown = sorted(set(names) - set(TIMINGS))
    if unknown:
        parser.error(f"unknown names: {', '.join(unknown)}")
    where = machine()
    print(f"{dt.date.today().isoformat()}, {where['cores']} cores ({where['processor']}), Python {where['python']}, "
          f"load average {where['load_average']}; {args.runs} run(s) each, medians")
    print(f"{'name':<34} {'cpu s':>8} {'wall s':>8}  command")
    measured: dict[str, dict[str, object]] = {}
    for name in names:
        argv = TIMINGS[name]
        if name not in NO_WARM_UP:
            run_once(argv)
        runs = [run_once(argv) for _ in range(args.runs)]
        cpu = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        measured[name] = {"command": shown(argv), "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                          "runs": args.runs, "recorded": dt.date.today().isoformat(), "machine": where,
                          **counts(name, runs[-1][2])}
        print(f"{name:<34} {cpu:>8.2f} {wall:>8.2f}  {shown(argv)}", flush=True)
        if args.record:  # after each command, so a long run interrupted keeps what it measured
            record({name: measured[name]})
    if args.record:
        print(f"wrote {RECORDING.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
