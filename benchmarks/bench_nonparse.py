"""The non-parse part of a compile against the plain fold, alone (a script, not a test).

    python3 benchmarks/bench_nonparse.py              # 15 interleaved samples
    python3 benchmarks/bench_nonparse.py --samples 31

The row "non-parse / fold" of `bench_targets.py`, measured on its own so that it can
be re-run in seconds: the 12-transition route of `bench_compile.py` is parsed once;
then each sample times, in CPU time (`time.process_time`), one after the other,
`lower_route` + `Session.compile_route` (bind, score with the value-of-information
selector, coverage) of that tree in one session (the policy and the libraries loaded
once, as in a run over many files: what depends only on the policy is computed once
per process), and `pcsc.score.fold.chain_fold` of the same 12 (p, c) pairs. It prints
the minimum and the median of the per-sample ratios and the load average before and
after (`os.getloadavg`). Target: at most 600x.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_targets import non_parse_step, route_text  # noqa: E402


def per_call(fn: Callable[[], object], number: int) -> float:
    gc.collect()
    start = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - start) / number


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--samples", type=int, default=15)
    args = ap.parse_args(argv)
    from pcsc.score.fold import chain_fold

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="pcsc-nonparse-") as tmp_name:
        tmp = Path(tmp_name)
        shared, step = non_parse_step(route_text("twelve"), tmp)

        def non_parse() -> None:
            if step() is None:
                raise SystemExit("bench_nonparse: the route did not compile")

        compiled = step()
        assert compiled is not None and not shared.diags.items, [d.message for d in shared.diags.items]
        ps = [t.p for t in compiled.numbers.transitions]
        cs = [t.cost.c for t in compiled.numbers.transitions]
        value = compiled.numbers.value
        for _ in range(5):
            non_parse()
        ours, folds, ratios = [], [], []
        for _ in range(args.samples):
            a = per_call(non_parse, 20)
            b = per_call(lambda: chain_fold(ps, cs, value), 20_000)
            ours.append(a)
            folds.append(b)
            ratios.append(a / b)
    median = statistics.median(ratios)
    print(f"{'measure':<40} {'min':>8} {'median':>8}  target")
    mid = statistics.median
    print(f"{'non-parse (lower+bind+score+coverage)':<40} {min(ours) * 1e6:7.0f}us {mid(ours) * 1e6:7.0f}us")
    print(f"{'float fold, 12 transitions':<40} {min(folds) * 1e6:7.2f}us {mid(folds) * 1e6:7.2f}us")
    met = "met" if median <= 600 else "MISSED"
    print(f"{'non-parse / fold':<40} {min(ratios):7.0f}x {median:7.0f}x  <= 600x {met}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
