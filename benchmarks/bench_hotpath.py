"""The hot path against a baseline checkout (a script, not a test).

    python3 benchmarks/bench_hotpath.py --baseline-commit REV [--rounds N]
    python3 benchmarks/bench_hotpath.py --baseline PATH [--rounds N]

Times three things on the shipped venture routes (the five chains of `examples/` under
`venture@1.0.0` and the three graphs of `examples/graphs/` under `venture@1.1.0`), in
this checkout and in a baseline checkout, each in its own long-lived worker process:

- `fold`: `pcsc.score.route.route_fold` on each route's compiled floats (p, c, d, V);
- `score`: `pcsc.score.route.score_route` of each lowered route under its loaded policy;
- `compile`: one in-process compile of each route from its file with a fresh `Session`
  (read, parse, lower, bind the policy, score, coverage, decide).

A round asks each worker for one sample of every case, the order of the two workers
alternating from round to round, so that a machine whose load drifts slows both alike.
Each sample is the mean of a batch of calls after a `gc.collect()`. Printed: per case,
the minimum and median sample of each side, the ratios current / baseline of the
minima and of the medians, and the median of each round's own ratio (`paired`), with
the load average before and after. The route files are the current checkout's, read by
both workers; the script refuses to time a route whose score differs between the two
(the defaults must reproduce the baseline's numbers).

`--baseline-commit REV` checks REV out with `git worktree add --detach` into a temporary
folder, removed at the end (nothing is committed). The baseline worker runs with this
interpreter and `PYTHONPATH` set to that checkout, so it imports the baseline's `pcsc`
and reads its `policies/` and `obligations/`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROUTES = (
    "examples/ci_cache.route",
    "examples/db_gui_subscription.route",
    "examples/devtools_api.route",
    "examples/feature_flags.route",
    "examples/log_search.route",
    "examples/graphs/lock_cert_pilot.route",
    "examples/graphs/oss_sponsors_freeze.route",
    "examples/graphs/saas_retention_upsell.route",
)
#: calls per sample: the fold is microseconds, a compile milliseconds
BATCH = {"fold": 2000, "score": 100, "compile": 5}
CASES = tuple(BATCH)


# ---------------------------------------------------------------------- the worker (either checkout)
def worker() -> None:
    """Read commands from stdin, one JSON line each; answer one JSON line each."""
    import gc
    import time

    from pcsc.compiler.session import Session
    from pcsc.diagnostics.model import Diagnostics
    from pcsc.score.route import route_fold, score_route

    paths = [ROOT / r for r in ROUTES]

    def compile_all() -> list[Any]:
        out = []
        for path in paths:
            session = Session()
            for route in session.load_routes(path, str(path.relative_to(ROOT))):
                compiled = session.compile_route(route)
                if compiled is None or any(d.code.startswith("PCSC-E") for d in session.diags.items):
                    raise SystemExit(f"bench_hotpath: {path} does not compile cleanly")
                out.append(compiled)
        return out

    compiled = compile_all()
    fold_args = []
    for c in compiled:
        n, r = c.numbers, c.route
        ts = n.transitions
        fold_args.append((n.fold, r.shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts],
                          [t.p for t in ts], [t.cost.c for t in ts], [t.d for t in ts], n.value))
    score_args = [(c.route, c.policy.policy) for c in compiled]

    def fold() -> None:
        for a in fold_args:
            route_fold(*a)

    def score() -> None:
        for route, policy in score_args:
            score_route(route, policy, Diagnostics())

    run = {"fold": fold, "score": score, "compile": compile_all}
    print(json.dumps({"scores": [float(c.numbers.score) for c in compiled],
                      "pcsc": sys.modules["pcsc"].__file__}), flush=True)
    for line in sys.stdin:
        case = json.loads(line)["case"]
        fn, number = run[case], BATCH[case]
        fn()  # warm
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        print(json.dumps({"seconds": (time.perf_counter() - start) / number}), flush=True)


# ---------------------------------------------------------------------- the driver
class Worker:
    def __init__(self, label: str, pythonpath: Path | None) -> None:
        env = dict(os.environ)
        if pythonpath is not None:
            env["PYTHONPATH"] = str(pythonpath)
        env["PCSC_NO_CACHE"] = "1"
        self.label = label
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.hello = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"bench_hotpath: the {self.label} worker stopped (exit {self.proc.wait()})")
        out: dict[str, Any] = json.loads(line)
        return out

    def sample(self, case: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"case": case}) + "\n")
        self.proc.stdin.flush()
        return float(self._read()["seconds"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def measure(baseline: Path, rounds: int) -> dict[str, Any]:
    current, base = Worker("current", None), Worker("baseline", baseline)
    try:
        if current.hello["scores"] != base.hello["scores"]:
            raise SystemExit(f"bench_hotpath: the scores differ: current {current.hello['scores']}, baseline "
                             f"{base.hello['scores']}")
        times: dict[str, dict[str, list[float]]] = {k: {"current": [], "baseline": []} for k in CASES}
        load_before = _load()
        for i in range(rounds):
            order = (current, base) if i % 2 == 0 else (base, current)
            for case in CASES:
                for w in order:
                    times[case][w.label].append(w.sample(case))
        load_after = _load()
    finally:
        current.close()
        base.close()
    return {"times": times, "load": (load_before, load_after), "scores": current.hello["scores"],
            "imports": (current.hello["pcsc"], base.hello["pcsc"])}


def report(result: dict[str, Any], label: str, rounds: int) -> str:
    unit = {"fold": 1e6, "score": 1e6, "compile": 1e3}
    shown = {"fold": "us", "score": "us", "compile": "ms"}
    lines = [f"baseline: {label}; current: {_git('rev-parse', '--short', 'HEAD')} (+ working tree)",
             f"{len(ROUTES)} files, {len(result['scores'])} routes per sample; {rounds} interleaved rounds; "
             f"Python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} cores",
             f"imported: current {result['imports'][0]}, baseline {result['imports'][1]}",
             f"load average (1, 5, 15 min) before: {result['load'][0]}, after: {result['load'][1]}",
             "",
             f"{'case':<8} {'current min':>12} {'base min':>10} {'min ratio':>9} {'current med':>12} {'base med':>10}"
             f" {'med ratio':>9} {'paired':>7}"]
    for case in CASES:
        cur, base = result["times"][case]["current"], result["times"][case]["baseline"]
        u, s = unit[case], shown[case]
        lines.append(f"{case:<8} {min(cur) * u:>9,.1f} {s} {min(base) * u:>7,.1f} {s} {min(cur) / min(base):>9.3f} "
                     f"{statistics.median(cur) * u:>9,.1f} {s} {statistics.median(base) * u:>7,.1f} {s} "
                     f"{statistics.median(cur) / statistics.median(base):>9.3f} "
                     f"{statistics.median(a / b for a, b in zip(cur, base, strict=True)):>7.3f}")
    lines.append("")
    lines.append(f"(each time is for all {len(result['scores'])} routes; ratio = current / baseline, "
                 "under 1 is faster;")
    lines.append(" paired: the median over rounds of the round's own ratio)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--baseline", type=Path, help="a checkout of the baseline (its root folder)")
    where.add_argument("--baseline-commit", help="a commit to check out into a temporary git worktree")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    args = parser.parse_args(argv)
    if args.worker:
        worker()
        return 0
    if args.baseline is not None:
        print(report(measure(args.baseline.resolve(), args.rounds), str(args.baseline), args.rounds))
        return 0
    if args.baseline_commit is None:
        parser.error("give --baseline PATH or --baseline-commit REV")
    rev = _git("rev-parse", "--short", args.baseline_commit)
    with tempfile.TemporaryDirectory(prefix="pcsc-baseline-") as tmp:
        folder = Path(tmp) / "baseline"
        _git("worktree", "add", "--detach", str(folder), rev)
        try:
            print(report(measure(folder, args.rounds), f"{args.baseline_commit} = {rev}", args.rounds))
        finally:
            _git("worktree", "remove", "--force", str(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
