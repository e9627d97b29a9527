"""Parse-speed benchmark: the typed parse against a raw Lark LALR parse (a script, not a test).

    python3 benchmarks/bench_parse.py [--copies N] [--repeats R]

One text, every `.route` of examples/ laid end to end ``--copies`` times (one file of
many routes), parsed in interleaved rounds by:

- raw:  Lark's LALR parser of `grammar/pcsc.lark`, pure Python, the same options as
        the compiler's (contextual lexer, the same postlex, placeholders), building
        Lark's plain tree: no transformer, no positions. The reference.
- lark: the compiler's typed parse through Lark's own loop (`PCSC_PARSER=lark`):
        nodes built inline by `ToSyntax`.
- fast: the compiler's typed parse through `pcsc.lang.syntax.fast` (the default).
- driver: the fast driver alone, every reduction building a plain list (the lexer and
        the automaton without the nodes): what the nodes cost is fast - driver.
- lark-cython (only when that package is installed): its Cython LALR on the same
        grammar, building a tree, without the postlex (it cannot run one under the
        locked Lark: see benchmarks/README.md), so not the same lexer.

Each figure is CPU time (time.process_time) for one parse of the whole text; rounds
run the arms in turn so that a busy machine slows them alike. Printed: min and median
per arm, and the ratio raw / arm per round (min and median), with the load average.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lark import Lark

from pcsc.lang.syntax import parser as syntax_parser
from pcsc.lang.syntax.fast import FastParser

ROOT = Path(__file__).resolve().parents[1]


def corpus(copies: int) -> str:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.route"))]
    return "\n".join(texts * copies)


def _typed(kind: str, text: str) -> Callable[[], object]:
    def run() -> object:
        os.environ["PCSC_PARSER"] = kind
        node, _ = syntax_parser._parse_typed(text, "bench.route", "file")
        assert node is not None, "the benchmark text parses"
        return node

    return run


def arms(text: str) -> dict[str, Callable[[], object]]:
    grammar = (ROOT / "grammar" / "pcsc.lark").read_text(encoding="utf-8")
    options = {k: v for k, v in syntax_parser._OPTIONS.items() if k != "propagate_positions"}
    raw = Lark(grammar, **options)
    out: dict[str, Callable[[], object]] = {
        "raw": lambda: raw.parse(text, start="file"),
        "lark": _typed("lark", text),
        "fast": _typed("fast", text),
    }
    fast = syntax_parser._fast_parser()
    assert fast is not None, "the fast driver builds"
    lists = [(size, origin, None if made is None else list) for size, origin, made in fast.rules]
    driver = FastParser(fast.states, lists, fast.lexers, fast.starts, fast.skip)
    out["driver"] = lambda: driver.parse(text, "file")
    try:
        import lark_cython  # type: ignore[import-not-found]  # optional, see the module

        plain = {k: v for k, v in options.items() if k != "postlex"}
        cython = Lark(grammar, _plugins=lark_cython.plugins, **plain)
        out["lark-cython"] = lambda: cython.parse(text, start="file")
    except ImportError:
        pass
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--copies", type=int, default=20, help="copies of the examples in the text (default 20)")
    ap.add_argument("--repeats", type=int, default=9, help="interleaved rounds (default 9)")
    args = ap.parse_args(argv)
    text = corpus(args.copies)
    runs = arms(text)
    saved = os.environ.get("PCSC_PARSER")
    for run in runs.values():  # warm-up: parsers and tables built, caches filled
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    load_before = os.getloadavg()
    try:
        for _ in range(args.repeats):
            for name, run in runs.items():
                gc.collect()
                start = time.process_time()
                run()
                times[name].append(time.process_time() - start)
    finally:
        if saved is None:
            os.environ.pop("PCSC_PARSER", None)
        else:
            os.environ["PCSC_PARSER"] = saved
    load_after = os.getloadavg()
    lines = text.count("\n") + 1
    print(f"bench_parse: {lines:,} lines, {len(text):,} characters; {args.repeats} interleaved rounds, CPU time")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)")
    print(f"{'arm':<12} {'min ms':>9} {'median ms':>10} {'lines/s (min)':>14} {'raw/arm min':>12} {'median':>8}")
    for name, ts in times.items():
        ratios = [r / t for r, t in zip(times["raw"], ts, strict=True)]
        print(
            f"{name:<12} {min(ts) * 1e3:>9.1f} {statistics.median(ts) * 1e3:>10.1f} {lines / min(ts):>14,.0f}"
            f" {min(ratios):>11.2f}x {statistics.median(ratios):>7.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
