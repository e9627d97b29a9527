"""Grading metrics for forecasts (docs/forecast.md): AUC, top-quartile lift, Brier, ECE,
calibration tables, and their bootstrap confidence intervals.

Only evaluation code imports this module (it needs numpy); `pcsc check` and
`pcsc compile` never do. Every function takes plain sequences or arrays and returns
plain floats or frozen attrs objects of floats and ints, ready for JSON.

The bootstrap. Resample b draws K units with replacement, where the units are the
cases, or the clusters when ``clusters`` is given (a cluster bootstrap: every case of a
drawn cluster comes along, as often as the cluster is drawn). The draw of resample b is
``floor(rng.random(K) * K)`` with ``rng = numpy.random.default_rng(seed)``, resample
after resample, so a plain loop over resamples reproduces the very same resamples; the
vectorized code draws many rows at once (``rng.random((rows, K))`` consumes the
generator exactly as ``rows`` separate calls do). A resample is reduced to the
multiplicity of each case, and each statistic is computed from the multiplicities: the
Mann-Whitney U of a resample is the weighted sum, over positives, of the weighted
negatives scored below plus one half of those tied. Resamples without both classes are
skipped and counted. The interval is the percentile interval (linear interpolation,
``numpy.quantile``) of the resampled statistics at (1 - level)/2 and (1 + level)/2.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

DEFAULT_B = 10_000
DEFAULT_SEED = 20260710  # the RouteCast paper's seed
LEVEL = 0.95
DEFAULT_BINS = 10
CHUNK_ELEMENTS = 1 << 17  # multiplicities held at once (cases × resamples): 1 MB blocks stay in cache


# ---------------------------------------------------------------------- results
def _ci(low: float | None, high: float | None) -> list[float] | None:
    return None if low is None or high is None else [low, high]


@attrs.frozen
class BootstrapCI:
    """A statistic, its percentile bootstrap interval, and how the interval was drawn."""

    estimate: float
    low: float | None  # None when no resample had both classes
    high: float | None
    level: float
    B: int
    seed: int
    used: int  # resamples that entered the interval
    skipped: int  # resamples without both classes
    clusters: int | None  # clusters resampled; None when the cases themselves were

    @property
    def ci(self) -> list[float] | None:
        return _ci(self.low, self.high)

    def to_json(self) -> dict[str, object]:
        return {
            "estimate": self.estimate, "ci": self.ci, "level": self.level, "B": self.B, "seed": self.seed,
            "used": self.used, "skipped": self.skipped, "clusters": self.clusters,
        }


@attrs.frozen
class Ece:
    """Expected calibration error over ``bins`` equal-width bins of [0, 1]."""

    value: float
    bins: int


@attrs.frozen
class CalibrationBin:
    lower: float
    upper: float
    n: int
    mean_p: float | None  # None for an empty bin
    observed: float | None  # the observed rate of positives; None for an empty bin

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


@attrs.frozen
class CalibrationReport:
    """Transition-level grading: Brier and ECE with cluster-bootstrap CIs, and the table."""

    n: int
    positives: int
    bins: int
    brier: BootstrapCI
    ece: BootstrapCI
    table: tuple[CalibrationBin, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "n": self.n, "positives": self.positives, "bins": self.bins,
            "brier": self.brier.to_json(), "ece": self.ece.to_json(),
            "table": [b.to_json() for b in self.table],
        }


# ---------------------------------------------------------------------- inputs
def _scores(scores: ArrayLike, what: str = "scores") -> FloatArray:
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be finite numbers")
    return a


def _labels(labels: ArrayLike, n: int) -> BoolArray:
    raw = np.asarray(labels)
    if raw.ndim != 1 or raw.shape[0] != n:
        raise ValueError(f"labels must be one-dimensional with one label per score ({n})")
    if raw.dtype != np.bool_ and not np.all((raw == 0) | (raw == 1)):
        raise ValueError("labels must be 1 (positive) or 0 (negative)")
    return raw.astype(np.bool_)


def _both_classes(y: BoolArray) -> None:
    positives = int(y.sum())
    if positives == 0 or positives == y.shape[0]:
        empty = "positive" if positives == 0 else "negative"
        raise ValueError(f"AUC needs both classes: no {empty} case among the {y.shape[0]}")


def _probabilities(p: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    pa = _scores(p, "probabilities")
    if np.any((pa < 0) | (pa > 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    if pa.shape[0] == 0:
        raise ValueError("no cases to grade")
    return pa, _labels(y, pa.shape[0]).astype(np.float64)


# ---------------------------------------------------------------------- point statistics
def _two_u(s: FloatArray, y: BoolArray) -> int:
    """Twice the Mann-Whitney U of the positives, from midranks (an exact integer)."""
    ordered = np.sort(s)
    twice_midrank = np.searchsorted(ordered, s, "left") + np.searchsorted(ordered, s, "right") + 1
    P = int(y.sum())
    return int(twice_midrank[y].sum()) - P * (P + 1)


def _pairs(y: BoolArray) -> int:
    """The number of (positive, negative) pairs; ValueError when a class is empty."""
    _both_classes(y)
    P = int(y.sum())
    return P * (int(y.shape[0]) - P)


def auc(scores: ArrayLike, labels: ArrayLike) -> float:
    """Mann-Whitney AUC: P(score of a positive > score of a negative), ties one half.

    Computed from midranks in integers: the result is U / (P·N) exactly rounded.
    Raises ValueError when a class is empty.
    """
    s = _scores(scores)
    y = _labels(labels, s.shape[0])
    return _two_u(s, y) / (2 * _pairs(y))


def lift_top_quartile(scores: ArrayLike, labels: ArrayLike) -> float:
    """Share of positives among the top ⌊n/4⌋ by score (ties in input order), over the base rate."""
    s = _scores(scores)
    y = _labels(labels, s.shape[0])
    n, k = int(s.shape[0]), int(s.shape[0]) // 4
    if k == 0:
        raise ValueError(f"top-quartile lift needs at least 4 cases, got {n}")
    if not y.any():
        raise ValueError("top-quartile lift needs at least one positive case")
    hits = int(y[np.argsort(-s, kind="stable")[:k]].sum())
    return hits * n / (k * int(y.sum()))  # (hits / k) / (P / n), exactly rounded


def brier(p: ArrayLike, y: ArrayLike) -> float:
    """Mean squared difference between forecast probability and outcome (1/0)."""
    pa, ya = _probabilities(p, y)
    return float(np.mean((pa - ya) ** 2))


def _bin_index(p: FloatArray, bins: int) -> IntArray:
    if bins < 1:
        raise ValueError("bins must be at least 1")
    # equal-width bins [i/bins, (i+1)/bins); p = 1 falls in the last bin
    return np.minimum(np.floor(p * bins).astype(np.int64), bins - 1)


def ece(p: ArrayLike, y: ArrayLike, bins: int = DEFAULT_BINS) -> Ece:
    """Expected calibration error: Σ_bins (n_bin / n) · |mean p − observed rate| over equal-width bins."""
    pa, ya = _probabilities(p, y)
    gap = np.bincount(_bin_index(pa, bins), weights=pa - ya, minlength=bins)
    return Ece(float(np.abs(gap).sum() / pa.shape[0]), bins)


def calibration_table(p: ArrayLike, y: ArrayLike, bins: int = DEFAULT_BINS) -> tuple[CalibrationBin, ...]:
    """Per equal-width bin: its edges, the number of forecasts, their mean p and the observed rate."""
    pa, ya = _probabilities(p, y)
    k = _bin_index(pa, bins)
    n = np.bincount(k, minlength=bins)
    sp = np.bincount(k, weights=pa, minlength=bins)
    sy = np.bincount(k, weights=ya, minlength=bins)
    return tuple(
        CalibrationBin(
            lower=i / bins,
            upper=(i + 1) / bins,
            n=int(n[i]),
            mean_p=float(sp[i] / n[i]) if n[i] else None,
            observed=float(sy[i] / n[i]) if n[i] else None,
        )
        for i in range(bins)
    )


# ---------------------------------------------------------------------- resampling
def _units(n: int, clusters: Sequence[Hashable] | ArrayLike | None) -> tuple[IntArray, int]:
    """Each case's resampling unit (its cluster, or itself) and the number of units."""
    if clusters is None:
        return np.arange(n, dtype=np.int64), n
    keys = [str(c) for c in np.asarray(clusters, dtype=object).tolist()]
    if len(keys) != n:
        raise ValueError(f"clusters must give one cluster per case ({n}), got {len(keys)}")
    names, inverse = np.unique(np.asarray(keys), return_inverse=True)
    return inverse.astype(np.int64).reshape(n), int(names.shape[0])


def resample_units(rng: np.random.Generator, k: int, rows: int) -> IntArray:
    """``rows`` resamples of ``k`` units drawn with replacement: row b is ``floor(rng.random(k) * k)``."""
    u = rng.random((rows, k))
    u *= k  # u < 1, so the product rounds to a double below k: its floor is a unit, 0 … k - 1
    return u.astype(np.int64)


def multiplicities(
    n: int, B: int, seed: int, clusters: Sequence[Hashable] | ArrayLike | None = None
) -> Iterator[IntArray]:
    """The bootstrap as blocks of case multiplicities, B resamples in all, in resample order.

    Each block is (n, rows): column j is one resample, row i how often case i is in it.
    (Resamples as columns keep the cumulative sums over cases contiguous and fast.)
    """
    if B < 1:
        raise ValueError("B must be at least 1")
    unit, k = _units(n, clusters)
    rng = np.random.default_rng(seed)
    per_block = max(1, CHUNK_ELEMENTS // max(n, k))
    for start in range(0, B, per_block):
        m = min(per_block, B - start)
        draws = resample_units(rng, k, m)  # (m, k): resample j draws the units draws[j]
        draws *= m
        draws += np.arange(m, dtype=np.int64)[:, None]  # a draw of unit u in resample j counts at u * m + j
        counts = np.bincount(draws.ravel(), minlength=k * m).reshape(k, m)
        yield counts if clusters is None else counts[unit]


@attrs.frozen
class _Ranked:
    """One scorer's cases sorted once by score; for each positive, its tie group [start, end) in that order."""

    order: IntArray
    pos: IntArray  # sorted positions of the positives
    start: IntArray
    end: IntArray

    @classmethod
    def of(cls, s: FloatArray, y: BoolArray) -> _Ranked:
        order = np.argsort(s, kind="stable")
        ordered = s[order]
        pos = np.flatnonzero(y[order])
        return cls(order, pos, np.searchsorted(ordered, ordered[pos], "left"),
                   np.searchsorted(ordered, ordered[pos], "right"))

    def two_u(self, w: IntArray) -> tuple[IntArray, IntArray]:
        """2U and 2·W⁺·W⁻ of each column of multiplicities ``w`` (n, rows), in integers.

        With C[j] the weight of the sorted cases before position j, a positive's midrank in
        the resample is (C[start] + C[end] + 1) / 2, and U = Σ_pos w · midrank − W⁺(W⁺ + 1) / 2:
        every positive counts the negatives below it plus one half of those tied.
        """
        ws = w[self.order]
        c = np.zeros((ws.shape[0] + 1, ws.shape[1]), dtype=np.int64)
        np.cumsum(ws, axis=0, out=c[1:])
        wp = ws[self.pos]
        plus = wp.sum(axis=0)
        two_u = np.einsum("ij,ij->j", wp, c[self.start] + c[self.end] + 1) - plus * (plus + 1)
        return two_u, 2 * plus * (c[-1] - plus)


def _ratio(numerator: IntArray, total: IntArray) -> FloatArray:
    """numerator / total, exactly rounded; NaN where total is 0 (a resample without both classes)."""
    out = np.full(total.shape[0], np.nan)
    ok = total > 0
    out[ok] = numerator[ok] / total[ok]
    return out


def bootstrap_auc_samples(
    scores: ArrayLike,
    labels: ArrayLike,
    B: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> FloatArray:
    """The B resampled AUCs, in resample order; NaN for a resample without both classes."""
    s = _scores(scores)
    y = _labels(labels, s.shape[0])
    _both_classes(y)
    ranked = _Ranked.of(s, y)
    return np.concatenate([_ratio(*ranked.two_u(w)) for w in multiplicities(s.shape[0], B, seed, clusters)])


def percentile_ci(
    estimate: float, samples: FloatArray, B: int, seed: int, clusters: int | None, level: float = LEVEL
) -> BootstrapCI:
    """The percentile interval of the finite ``samples``; NaN marks a skipped resample."""
    kept = samples[np.isfinite(samples)]
    low = high = None
    if kept.shape[0]:
        tails = [round((1 - level) / 2, 12), round((1 + level) / 2, 12)]  # 0.025, not 0.025000000000000022
        q = np.quantile(kept, tails)
        low, high = float(q[0]), float(q[1])
    return BootstrapCI(estimate, low, high, level, B, seed, int(kept.shape[0]), int(samples.shape[0] - kept.shape[0]),
                       clusters)


def _cluster_count(n: int, clusters: Sequence[Hashable] | ArrayLike | None) -> int | None:
    return None if clusters is None else _units(n, clusters)[1]


def bootstrap_auc(
    scores: ArrayLike,
    labels: ArrayLike,
    B: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> BootstrapCI:
    """AUC with a company (case or cluster) bootstrap 95% percentile CI."""
    samples = bootstrap_auc_samples(scores, labels, B, seed, clusters)
    n = np.asarray(scores).shape[0]
    return percentile_ci(auc(scores, labels), samples, B, seed, _cluster_count(n, clusters))


def paired_delta_auc_samples(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    labels: ArrayLike,
    B: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> FloatArray:
    """AUC(a) − AUC(b) on each of the B resamples (the same resample for both), exactly rounded; NaN when skipped."""
    a, b = _scores(scores_a, "scores_a"), _scores(scores_b, "scores_b")
    if a.shape != b.shape:
        raise ValueError("the two scorers must score the same cases")
    y = _labels(labels, a.shape[0])
    _both_classes(y)
    ra, rb = _Ranked.of(a, y), _Ranked.of(b, y)
    blocks = []
    for w in multiplicities(a.shape[0], B, seed, clusters):
        (u_a, total), (u_b, _) = ra.two_u(w), rb.two_u(w)  # the same resample, so the same pairs
        blocks.append(_ratio(u_a - u_b, total))
    return np.concatenate(blocks)


def paired_delta_auc(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    labels: ArrayLike,
    B: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> BootstrapCI:
    """ΔAUC = AUC(a) − AUC(b) with a paired bootstrap 95% percentile CI."""
    samples = paired_delta_auc_samples(scores_a, scores_b, labels, B, seed, clusters)
    a, b = _scores(scores_a, "scores_a"), _scores(scores_b, "scores_b")
    y = _labels(labels, a.shape[0])
    delta = (_two_u(a, y) - _two_u(b, y)) / (2 * _pairs(y))  # exactly rounded, like the resampled ones
    return percentile_ci(delta, samples, B, seed, _cluster_count(int(a.shape[0]), clusters))


def bootstrap_many(
    columns: Sequence[ArrayLike],
    labels: ArrayLike,
    B: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
) -> tuple[list[BootstrapCI], list[BootstrapCI]]:
    """``bootstrap_auc`` of every column and ``paired_delta_auc`` of every pair of
    columns (in ``itertools.combinations`` order), equal to calling them one by one,
    but each resample is drawn once for all scorers and each scorer's U is computed
    once per resample: the pairs then cost a subtraction and a division each, instead
    of a bootstrap each (60 scorers: 1,770 pairs from 60 rank computations)."""
    scores = [_scores(c) for c in columns]
    if not scores:
        return [], []
    n = scores[0].shape[0]
    if any(s.shape != scores[0].shape for s in scores):
        raise ValueError("every scorer must score the same cases")
    y = _labels(labels, n)
    _both_classes(y)
    ranked = [_Ranked.of(s, y) for s in scores]
    u_blocks: list[list[IntArray]] = [[] for _ in scores]
    totals = []
    for w in multiplicities(n, B, seed):
        for i, r in enumerate(ranked):
            two_u, total = r.two_u(w)
            u_blocks[i].append(two_u)
        totals.append(total)  # 2·W⁺·W⁻: the same for every scorer of the resample
    total = np.concatenate(totals)
    u = [np.concatenate(blocks) for blocks in u_blocks]
    point = [_two_u(s, y) for s in scores]
    pairs = 2 * _pairs(y)
    singles = [
        percentile_ci(auc(columns[i], labels), _ratio(u[i], total), B, seed, None) for i in range(len(scores))
    ]
    paired = []
    for i in range(len(scores)):
        for j in range(i + 1, len(scores)):
            delta = (point[i] - point[j]) / pairs
            paired.append(percentile_ci(delta, _ratio(u[i] - u[j], total), B, seed, None))
    return singles, paired


def bootstrap_brier(
    p: ArrayLike, y: ArrayLike, B: int = DEFAULT_B, seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> BootstrapCI:
    """Brier score with a (cluster) bootstrap 95% percentile CI."""
    pa, ya = _probabilities(p, y)
    sq = (pa - ya) ** 2
    samples = np.concatenate([(sq @ w) / w.sum(axis=0) for w in multiplicities(pa.shape[0], B, seed, clusters)])
    return percentile_ci(brier(pa, ya), samples, B, seed, _cluster_count(pa.shape[0], clusters))


def bootstrap_ece(
    p: ArrayLike, y: ArrayLike, bins: int = DEFAULT_BINS, B: int = DEFAULT_B, seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> BootstrapCI:
    """ECE with a (cluster) bootstrap 95% percentile CI; a resample's ECE is Σ_bins |Σ w (p − y)| / Σ w."""
    pa, ya = _probabilities(p, y)
    gap = np.zeros((pa.shape[0], bins))
    gap[np.arange(pa.shape[0]), _bin_index(pa, bins)] = pa - ya
    samples = np.concatenate(
        [np.abs(gap.T @ w).sum(axis=0) / w.sum(axis=0) for w in multiplicities(pa.shape[0], B, seed, clusters)]
    )
    return percentile_ci(ece(pa, ya, bins).value, samples, B, seed, _cluster_count(pa.shape[0], clusters))


def calibration_report(
    p: ArrayLike, y: ArrayLike, bins: int = DEFAULT_BINS, B: int = DEFAULT_B, seed: int = DEFAULT_SEED,
    clusters: Sequence[Hashable] | ArrayLike | None = None,
) -> CalibrationReport:
    """Brier, ECE (both with the same bootstrap resamples) and the calibration table."""
    pa, ya = _probabilities(p, y)
    return CalibrationReport(
        n=int(pa.shape[0]),
        positives=int(ya.sum()),
        bins=bins,
        brier=bootstrap_brier(pa, ya, B, seed, clusters),
        ece=bootstrap_ece(pa, ya, bins, B, seed, clusters),
        table=calibration_table(pa, ya, bins),
    )
