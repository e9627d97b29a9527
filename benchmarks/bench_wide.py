"""Wide-fork benchmark for PCSC (a script, not a test).

    python3 benchmarks/bench_wide.py [--quick]

Prints the CPU time of compiling a route whose one fork has many parallel branches
(``generate_wide_route``), and of ``pcsc seams`` on it, for 100 and 1,000 transitions,
and the ratio of the two: a fold linear in the branches gives about 10 (before the
linear fold, 999 branches took 40 s to compile and 76 s in ``pcsc seams``). Both
commands run in this process (``pcsc.cli.main``, output discarded), after a warm-up
that builds the parser; each figure is the best of ``--repeats`` runs of
``time.process_time``. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import platform
import sys
import tempfile
import time
from pathlib import Path

from pcsc.cli import main as pcsc

POLICY = "venture@1.0.0"


def generate_wide_route(branches: int, steps: int = 1) -> str:
    """A route of ``1 + branches·steps`` transitions under venture@1.0.0: a first step
    from the start to the fork, then ``branches`` branches of ``steps`` transitions each
    from the fork to the join (the vision state). No state changes a value, so there is
    no material change to cover, and the route compiles without a diagnostic; with
    ``steps`` 3 every branch's middle transition is a seam."""
    lines = [
        f'route wide "generated: {branches} parallel branches" {{',
        "    as_of   2012-06-01",
        f'    policy  "{POLICY}"',
        "    uses    venture",
        "",
        "    state start { developers 0  paying_teams 0  arr 0 usd }",
        "    state fork {}",
        *(f"    state b{i}_{k} {{}}" for i in range(branches) for k in range(1, steps)),
        "    state join {}",
        "    vision join {",
        "        tam            1B usd",
        "        capture        10%",
        "        defensibility  0.5",
        "    }",
    ]

    def transition(name: str, source: str, target: str, p: int) -> list[str]:
        return [
            "", f"    transition {name}: {source} -> {target} {{",
            '        actor      "a team"', '        mechanism  "a mechanism"', '        asset      "an asset"',
            '        class      "devtools/first-users"', "        horizon    6 months",
            "        cost {", "            team  1 * 1k usd", "        }",
            f"        estimates  0.{p} 0.{p + 10}", "    }",
        ]

    lines += transition("first", "start", "fork", 50)
    for i in range(branches):
        path = ["fork", *(f"b{i}_{k}" for k in range(1, steps)), "join"]
        for k in range(steps):
            lines += transition(f"t{i}_{k}", path[k], path[k + 1], 80 + i % 10)
    lines.append("}")
    return "\n".join(lines) + "\n"


def cpu_seconds(argv: list[str], repeats: int) -> float:
    """The best process time of ``pcsc argv`` in this process, output discarded."""
    best = float("inf")
    for _ in range(repeats):
        sink = io.StringIO()
        start = time.process_time()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = pcsc(argv)
        best = min(best, time.process_time() - start)
        if code != 0:
            raise SystemExit(f"pcsc {' '.join(argv)} exited {code}:\n{sink.getvalue()}")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 repeat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for branches in (99, 999):
            path = Path(tmp) / f"wide{branches + 1}.route"
            path.write_text(generate_wide_route(branches), encoding="utf-8")
            paths[branches + 1] = str(path)
        cpu_seconds(["check", paths[100]], 1)  # warm-up: imports, the parser's tables
        print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.platform()}")
        print(f"{'measurement':<34}{'100':>10}{'1,000':>10}{'ratio':>8}")
        for command in ("compile", "seams"):
            small, large = (cpu_seconds([command, paths[n]], repeats) for n in (100, 1000))
            label = f"pcsc {command}, one fork (CPU s)"
            print(f"{label:<34}{small:>10.3f}{large:>10.3f}{large / small:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
