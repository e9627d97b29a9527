"""Why the bootstrap intervals of the RouteCast Table A1 grading differ from the paper's
Table 2 (README.md, after `pcsc evaluate --scores examples/routecast_table_a1.csv`):
how far each choice a bootstrap makes moves the twelve bounds (three AUCs and three
paired ΔAUCs, low and high), measured here with resamplers written apart from PCSC's."""

from __future__ import annotations

import csv
import itertools
from collections.abc import Callable

import numpy as np
import pytest

from pcsc.forecast.metrics import DEFAULT_B, DEFAULT_SEED, bootstrap_many
from tests.conftest import ROOT

TABLE = ROOT / "examples" / "routecast_table_a1.csv"
SCORERS = ("routecast_score", "blind_llm_mean", "heuristic_score")
Bounds = dict[str, tuple[float, float]]


def _table() -> tuple[dict[str, np.ndarray], np.ndarray]:
    with TABLE.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["outcome_bucket"] in ("S+", "+", "-")]
    y = np.array([r["outcome_bucket"] != "-" for r in rows])
    return {c: np.array([float(r[c]) for r in rows]) for c in SCORERS}, y


SCORES, LABELS = _table()
N = LABELS.shape[0]
PAIRS = list(itertools.combinations(SCORERS, 2))


def _aucs(draws: np.ndarray) -> dict[str, np.ndarray]:
    """Each scorer's AUC in each resample (rows of case indices), ties one half; NaN
    where a resample lacks a class. Written from the definition, not from PCSC's code."""
    w = np.zeros((draws.shape[0], N))
    np.add.at(w, (np.repeat(np.arange(draws.shape[0]), N), draws.ravel()), 1)
    pos, neg = np.flatnonzero(LABELS), np.flatnonzero(~LABELS)
    out = {}
    for c in SCORERS:
        s = SCORES[c]
        beats = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
        num = np.einsum("bi,ij,bj->b", w[:, pos], beats, w[:, neg])
        den = w[:, pos].sum(1) * w[:, neg].sum(1)
        out[c] = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    return out


def _bounds(aucs: dict[str, np.ndarray], method: str = "linear") -> Bounds:
    def ci(x: np.ndarray) -> tuple[float, float]:
        kept = x[np.isfinite(x)]
        low, high = np.quantile(kept, [0.025, 0.975], method=method)  # type: ignore[call-overload]
        return float(low), float(high)

    return {**{c: ci(aucs[c]) for c in SCORERS}, **{f"{a}-{b}": ci(aucs[a] - aucs[b]) for a, b in PAIRS}}


def _shift(a: Bounds, b: Bounds) -> float:
    return max(abs(a[k][i] - b[k][i]) for k in a for i in (0, 1))


def _pcsc(seed: int) -> Bounds:
    singles, paired = bootstrap_many([SCORES[c] for c in SCORERS], LABELS, DEFAULT_B, seed)
    cis = [(x.low, x.high) for x in (*singles, *paired)]
    names = [*SCORERS, *(f"{a}-{b}" for a, b in PAIRS)]
    return {name: (float(low), float(high)) for name, (low, high) in zip(names, cis, strict=True)
            if low is not None and high is not None}


def _ours_drawn_apart(seed: int) -> np.ndarray:
    """PCSC's documented draw: resample b is floor(u·n), u from numpy's default generator."""
    return (np.random.default_rng(seed).random((DEFAULT_B, N)) * N).astype(np.int64)


DRAWS: dict[str, Callable[[int], np.ndarray]] = {
    "Generator.integers": lambda seed: np.random.default_rng(seed).integers(0, N, (DEFAULT_B, N)),
    "RandomState.randint": lambda seed: np.random.RandomState(seed).randint(0, N, (DEFAULT_B, N)),
}


@pytest.fixture(scope="module")
def ours() -> Bounds:
    bounds = _pcsc(DEFAULT_SEED)
    assert len(bounds) == 6
    return bounds


def test_the_resamplers_written_here_are_pcscs(ours: Bounds) -> None:
    """The independent resampler, drawing as PCSC documents, gives PCSC's bounds exactly."""
    assert _shift(_bounds(_aucs(_ours_drawn_apart(DEFAULT_SEED))), ours) < 1e-12


def _readme() -> str:
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def test_what_each_choice_moves_is_what_the_readme_says(ours: Bounds) -> None:
    readme = _readme()
    aucs = _aucs(_ours_drawn_apart(DEFAULT_SEED))
    for name, draw in DRAWS.items():
        moved = _shift(_bounds(_aucs(draw(DEFAULT_SEED))), ours)
        assert f"{moved:.3f} (numpy's `{name}`)" in readme, (name, moved)
    methods = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
               "hazen", "weibull", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest")
    rule = max(_shift(_bounds(aucs, m), ours) for m in methods)
    assert f"another of numpy's {len(methods)} other percentile rules, by up to {rule:.3f}" in readme
    seeds = [_shift(_pcsc(seed), ours) for seed in range(1, 21)]
    assert f"another seed (1 to 20) by {float(np.median(seeds)):.3f} at the median" in readme
    # redrawing a resample without both classes instead of skipping it
    rng = np.random.default_rng(DEFAULT_SEED)
    kept: list[np.ndarray] = []
    while len(kept) < DEFAULT_B:
        d = (rng.random(N) * N).astype(np.int64)
        if LABELS[d].any() and (~LABELS[d]).any():
            kept.append(d)
    redrawn = _shift(_bounds(_aucs(np.array(kept))), ours)
    assert f"redrawing the resamples without both classes instead of skipping them, by {redrawn:.4f}" in readme
    assert max(seeds) > 0.004 and rule < 0.004, "the paper's 0.004 is within the resampling's own spread"
