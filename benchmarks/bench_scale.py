"""Many cold routes: `pcsc check` then `pcsc compile` over N generated routes (a script, not a test).

    python3 benchmarks/bench_scale.py            # N = 1,000
    python3 benchmarks/bench_scale.py --n 10000  # the issue's 10,000

The routes are the shipped cohort (examples/cohort) renamed and with their `tam`
varied, 100 to a folder, written to a temporary folder (never to the repository).
Each command runs in a fresh process with ``--jobs`` workers (default 2), first cold
(an empty XDG_CACHE_HOME in the temporary folder), then warm (the same cache).
Prints wall seconds, milliseconds a route and the machine's load (`os.getloadavg`).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
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
        text = re.sub(r"(tam\s+)\d+(\.\d+)?B", lambda m, tam=tam: f"{m.group(1)}{tam}B", text, count=1)
        folder = out / f"d{i // per_folder:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.route").write_text(text, encoding="utf-8")
    return n


def run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pcsc", *args], capture_output=True, text=True, env=env, cwd=cwd)
    return time.perf_counter() - start, done.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=1_000, help="routes (default 1,000)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pcsc-scale-") as tmp_name:
        tmp = Path(tmp_name)
        generate(tmp / "routes", args.n)
        cache = tmp / "xdg"
        cache.mkdir(mode=0o700)
        env = {**os.environ, "XDG_CACHE_HOME": str(cache),
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        env.pop("PCSC_NO_CACHE", None)
        common = ["--lib-path", str(ROOT / "obligations"), "--jobs", str(args.jobs), "routes"]
        print(f"{args.n:,} routes, --jobs {args.jobs}, load average {os.getloadavg()[0]:.1f}")
        print(f"{'run':<20} {'wall s':>8} {'ms/route':>9} exit")
        for label, cmd in (("check, cold", ["check"]), ("check, warm", ["check"]),
                           ("compile, warm", ["compile", "-o", str(tmp / "out.json")])):
            wall, rc = run([*cmd, *common], env, tmp)
            print(f"{label:<20} {wall:8.1f} {1000 * wall / args.n:9.2f} {rc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
