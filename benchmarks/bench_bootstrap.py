"""Bootstrap-speed benchmark for the grading metrics (a script, not a test).

    python3 benchmarks/bench_bootstrap.py [--quick] [--repeats R] [--baseline-resamples K]

Times `pcsc.forecast.metrics.bootstrap_auc` (B = 10,000 company-bootstrap resamples,
vectorized) and `paired_delta_auc` for n = 21 and n = 2,000 cases, and compares them with
the obvious baseline: a Python loop over resamples calling scikit-learn's
``roc_auc_score`` on each. The baseline is slow, so it runs on fewer resamples (K,
drawn by the same generator as the vectorized code) and its time is extrapolated
linearly to B; on those K resamples its AUCs must agree with PCSC's. scikit-learn is
imported only if installed; without it the baseline column says so.

Every timing is the best of several repeats after a warm-up, with time.perf_counter.
See benchmarks/README.md for one recorded run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import platform
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from numpy.typing import NDArray

from pcsc.forecast import metrics

B = 10_000
SEED = 20260710


def cases(n: int, seed: int = 1) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """n cases, about 30% positive, scores with some signal and ties (one decimal)."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    y[:2] = (True, False)
    scores = np.round(rng.normal(50, 8, n) + 4 * y, 1)
    return scores, y.astype(np.int64)


def best_of(f: Callable[[], object], repeats: int) -> float:
    f()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def sklearn_loop(scores: NDArray[np.float64], y: NDArray[np.int64], k: int) -> tuple[float, list[float]] | None:
    """Seconds for k resamples graded one by one with roc_auc_score, and their AUCs (NaN when skipped)."""
    try:
        from sklearn.metrics import roc_auc_score
    except ImportError:
        return None
    n = scores.shape[0]

    def run() -> list[float]:
        rng = np.random.default_rng(SEED)
        out = []
        for _ in range(k):
            idx = metrics.resample_units(rng, n, 1)[0]
            yb = y[idx]
            out.append(float(roc_auc_score(yb, scores[idx])) if 0 < yb.sum() < n else float("nan"))
        return out

    t0 = time.perf_counter()
    aucs = run()
    return time.perf_counter() - t0, aucs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeats", type=int, default=5, help="samples per measurement; the best counts (default 5)")
    ap.add_argument("--baseline-resamples", type=int, default=1_000, metavar="K",
                    help="resamples the scikit-learn loop runs before extrapolating to B (default 1,000)")
    ap.add_argument("--quick", action="store_true", help="2 repeats, 200 baseline resamples (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.baseline_resamples = 2, 200
    k = min(args.baseline_resamples, B)

    rows = [("n", "positives", "bootstrap_auc", "paired_delta_auc", "sklearn loop (extrapolated)", "ratio")]
    notes = []
    for n in (21, 2_000):
        scores, y = cases(n)
        other = scores + np.random.default_rng(2).normal(0, 4, n)
        t_auc = best_of(partial(metrics.bootstrap_auc, scores, y, B, SEED), args.repeats)
        t_pair = best_of(partial(metrics.paired_delta_auc, scores, other, y, B, SEED), args.repeats)
        base = sklearn_loop(scores, y, k)
        if base is None:
            baseline, ratio = "scikit-learn not installed", "—"
        else:
            seconds, aucs = base
            ours = metrics.bootstrap_auc_samples(scores, y, k, SEED)
            if not np.allclose(ours, aucs, rtol=0, atol=1e-12, equal_nan=True):
                raise SystemExit(f"bench_bootstrap: n = {n}: roc_auc_score and PCSC disagree on the same resamples")
            extrapolated = seconds * B / k
            baseline, ratio = f"{extrapolated:,.2f} s  ({k:,} in {seconds:.2f} s)", f"{extrapolated / t_auc:,.0f}x"
            notes.append(f"n = {n:,}: on the {k:,} baseline resamples roc_auc_score and PCSC agree to 1e-12")
        timings = (f"{t_auc * 1e3:,.1f} ms", f"{t_pair * 1e3:,.1f} ms")
        rows.append((f"{n:,}", f"{int(y.sum()):,}", *timings, baseline, ratio))

    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"PCSC bootstrap benchmark  {dt.date.today().isoformat()}")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}; "
          f"numpy {np.__version__}" + _sklearn_version())
    print(f"B = {B:,} resamples, seed {SEED}; best of {args.repeats} repeats after a warm-up; time.perf_counter")
    print()
    for i, row in enumerate(rows):
        print("  ".join(c.ljust(w) if j == 4 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths, strict=True)))
              .rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print("ratio: the scikit-learn loop (one roc_auc_score call per resample, extrapolated from K resamples")
    print("linearly to B) over bootstrap_auc.")
    for note in notes:
        print(note)
    return 0


def _sklearn_version() -> str:
    try:
        import sklearn
    except ImportError:
        return "; scikit-learn not installed"
    return f"; scikit-learn {sklearn.__version__}"


if __name__ == "__main__":
    sys.exit(main())
