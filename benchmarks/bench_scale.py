"""Many cold routes: `pcsc check` then `pcsc compile` over N generated routes, with
`--jobs 2` and on a Dask LocalCluster of two workers (a script, not a test).

    python3 benchmarks/bench_scale.py                          # N = 1,000, 3 repeats
    python3 benchmarks/bench_scale.py --n 10000 --repeats 2    # the issue's 10,000
    python3 benchmarks/bench_scale.py --n 10000 --serial       # also --jobs 1

The routes are the shipped cohort (examples/cohort) renamed and with their `tam`
varied, 100 to a folder, written to a temporary folder (never to the repository).
Every run is a fresh `python3 -m pcsc` process and cold: an empty XDG_CACHE_HOME of its
own (no parser tables, no lowered IR). Each repeat runs, one after the other:

- `check --jobs 2`, then `compile --jobs 2 -o out.json`;
- `check --scheduler ADDRESS` on a `distributed.LocalCluster` of two worker processes
  of one thread each, started for that run with the same empty cache (its start-up is
  not timed: a cluster is started once and serves many commands), when Dask is
  installed (the extra `pcsc[dask]`);
- with `--serial`, `check --jobs 1`.

It prints, for every row, the minimum and the median over the repeats of the wall
seconds and of the command's CPU seconds (its own and its pool workers'; a Dask
worker's CPU is not the command's), the ratio of the Dask check to the `--jobs 2`
check of the same repeat (minimum and median), whether every run printed the same
report as the first `--jobs 2` check, and the machine's load average
(`os.getloadavg`) before every run and at the end. Targets: `check` and `compile` of
10,000 routes under 20 s each with `--jobs 2`; Dask within 1.5x of `--jobs 2`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(out: Path, n: int, per_folder: int = 100, seed: int = 1) -> int:
    """Write ``n`` routes under ``out`` (the cohort's, renamed, `tam` varied); returns n."""
    rng = random.Random(seed)
    texts = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "examples" / "cohort").glob("*.route"))]
    for i in range(n):
        stem, text = texts[i % len(texts)]
        name = f"{stem}_{i:05d}"
        text = re.sub(rf"^route {stem}\b", f"route {name}", text, count=1, flags=re.M)
        tam = rng.randint(5, 40)
        text = re.sub(r"(tam\s+)\d+(\.\d+)?B", rf"\g<1>{tam}B", text, count=1)
        folder = out / f"d{i // per_folder:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.route").write_text(text, encoding="utf-8")
    return n


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (the process and the workers it waited for), exit
    status and standard output of one `python3 -m pcsc` run."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pcsc", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          check=False)
    return time.perf_counter() - start, _children_cpu() - cpu, done.returncode, done.stdout + done.stderr


@contextlib.contextmanager
def dask_cluster(env: dict[str, str]) -> Iterator[str | None]:
    """A LocalCluster of two one-thread worker processes started under ``env`` (its
    cache folder), or None when Dask is not installed."""
    try:
        import distributed
    except ImportError:
        yield None
        return
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=40)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    with cluster:
        yield cluster.scheduler_address


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=1_000, help="routes (default 1,000)")
    ap.add_argument("--repeats", type=int, default=3, help="cold runs of each command (default 3)")
    ap.add_argument("--serial", action="store_true", help="also `check --jobs 1`")
    args = ap.parse_args(argv)
    times: dict[str, list[tuple[float, float]]] = {}
    ratios: list[float] = []
    loads: list[float] = []
    same = True
    with tempfile.TemporaryDirectory(prefix="pcsc-scale-") as tmp_name:
        tmp = Path(tmp_name)
        generate(tmp / "routes", args.n)
        base_env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        base_env.pop("PCSC_NO_CACHE", None)
        common = ["--lib-path", str(ROOT / "obligations"), "routes"]
        print(f"{args.n:,} routes, cold, {args.repeats} repeats; load average at the start "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
              f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
        reference: str | None = None
        fresh = iter(range(10**6))

        def cold_env() -> dict[str, str]:
            cache = tmp / f"xdg{next(fresh)}"
            cache.mkdir(mode=0o700)
            return {**base_env, "XDG_CACHE_HOME": str(cache)}

        def record(label: str, argv: list[str], env: dict[str, str], compare: bool = True) -> float:
            nonlocal reference, same
            loads.append(os.getloadavg()[0])
            wall, cpu, rc, out = run(argv, env, tmp)
            if rc != 0:
                raise SystemExit(f"{label}: exit {rc}\n{out[-2000:]}")
            if compare:
                reference = out if reference is None else reference
                same = same and out == reference
            times.setdefault(label, []).append((wall, cpu))
            print(f"  {label:<26} {wall:7.1f} s wall {cpu:7.1f} s CPU  (load {loads[-1]:.2f})", flush=True)
            return wall

        for repeat in range(args.repeats):
            print(f"repeat {repeat + 1}")
            jobs2 = record("check --jobs 2", ["check", "--jobs", "2", *common], cold_env())
            record("compile --jobs 2", ["compile", "--jobs", "2", "-o", str(tmp / "out.json"), *common], cold_env(),
                   compare=False)
            env = cold_env()
            with dask_cluster(env) as address:
                if address is not None:
                    on_dask = record("check, Dask 2 workers", ["check", "--scheduler", address, *common], env)
                    ratios.append(on_dask / jobs2)
            if args.serial:
                record("check --jobs 1", ["check", "--jobs", "1", *common], cold_env())
    print()
    print(f"{'run':<26} {'min s':>7} {'median s':>9} {'ms/route':>9} {'CPU s':>7}  target")
    for label, got in times.items():
        walls = [w for w, _ in got]
        target = "< 20 s" if args.n == 10_000 and "--jobs 2" in label else ""
        met = "" if not target else ("met" if statistics.median(walls) < 20 else "MISSED")
        print(f"{label:<26} {min(walls):7.1f} {statistics.median(walls):9.1f} "
              f"{1000 * statistics.median(walls) / args.n:9.2f} {statistics.median(c for _, c in got):7.1f}  "
              f"{target} {met}")
    if ratios:
        met = "met" if statistics.median(ratios) <= 1.5 else "MISSED"
        print(f"{'Dask / --jobs 2 (check)':<26} {min(ratios):6.2f}x {statistics.median(ratios):8.2f}x "
              f"{'':>9} {'':>7}  <= 1.5x {met}")
    else:
        print("Dask: not installed (the extra pcsc[dask]); no Dask row")
    print(f"every check printed the same report: {'yes' if same else 'NO'}")
    print(f"load average before the runs: min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
          f"max {max(loads):.2f}; at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
