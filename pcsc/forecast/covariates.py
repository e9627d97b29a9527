"""Covariates of a score table (docs/forecast.md, "Covariates"): a column that is not a
scorer but could explain the outcome by itself (recognition first: a case the graders
may have recognised). Each covariate is graded as a baseline the scorers must beat, and
a logistic regression of the outcome on a scorer and the covariates says how much of
the scorer's discrimination is left once the covariates are known.

Coding. A covariate column whose graded cells are all numbers is used as it is; a
column of yes/no words is coded 1 for ``yes``, ``y``, ``true``, ``1`` and 0 for ``no``,
``n``, ``false``, ``0`` and an empty cell (case-insensitive); anything else is refused.

The regression. logit P(positive) = b0 + b1·z + Σ c_j·x_j, where z is the scorer in
standard deviations over the graded cases (population SD, so the coefficient is per SD),
a numeric covariate is standardised the same way and a yes/no covariate stays 0/1 (its
coefficient is the log odds ratio of a flagged case). The estimate is the maximum
likelihood one, by Newton's method; the standard error is from the inverse Hessian at
it and the p-value is the two-sided Wald test (z = b / se against the normal). The
interval is the percentile interval over the score table's own bootstrap resamples
(the same multiplicities as every AUC of the table, `metrics.multiplicities`): each
resample is refitted with its multiplicities as case weights, keeping the full sample's
standardisation. A resample without both classes, or whose terms are collinear among
the drawn cases (a term constant, or a combination of the others), is skipped and
counted. In a resample whose outcomes the terms separate (no finite maximum exists)
Newton's method does not converge: the coefficients still moving at its last steps are
counted at plus or minus infinity, in the direction they move, and an interval bound
that reaches one of them is unbounded (None).

Only evaluation code imports this module (it needs numpy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import numpy as np

from pcsc.diagnostics.messages import E731_COVARIATE_NOT_CODED, E731_COVARIATE_ONE_VALUE, phrase
from pcsc.forecast import metrics

ONE = frozenset({"yes", "y", "true", "1"})
ZERO = frozenset({"no", "n", "false", "0", ""})
CODING_WORDS = "yes/y/true/1 = 1; no/n/false/0/empty = 0"
CODING_NUMBERS = "numbers as written"
NEWTON_STEPS = 60
CONVERGED = 1e-8  # the largest step at which Newton's method has converged
MOVING = 0.1  # a coefficient that moves more than this over the last WINDOW steps diverges
WINDOW = 10
INFINITE = 1e300  # ±∞ in the percentile computation; a quantile beyond INFINITE / 2 is unbounded
MAX_LEVELS = 5  # a covariate with at most this many distinct values is also a set of strata
COLLINEAR = 1e-9  # det of the weighted, normalised cross-product below which the terms are not identified
SEPARATED = "the terms separate the outcomes of the graded cases: no finite maximum"
NOT_IDENTIFIED = "the terms are collinear among the graded cases (one is constant, or a combination of the others)"


@attrs.frozen
class Covariate:
    name: str
    values: tuple[float, ...]  # per graded case
    coding: str
    binary: bool  # two values, 0 and 1: used as is in the regression

    @property
    def levels(self) -> tuple[float, ...]:
        return tuple(sorted(set(self.values)))


class CovariateError(ValueError):
    """A covariate column that cannot be coded: ``message``, about graded row ``row`` (None: the column)."""

    def __init__(self, message: str, row: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row


def code_cells(name: str, cells: Sequence[str], numbers: Sequence[float | None]) -> Covariate:
    """The covariate coded from its graded cells (``numbers``: each cell read as the table
    reads a scorer's, None when it is not a number); a `CovariateError` naming the first
    cell that is neither a number (when all are) nor a yes/no word, or a column of one value."""
    if all(v is not None for v in numbers):
        values = tuple(float(v) for v in numbers if v is not None)
        coding = CODING_NUMBERS
    else:
        bad = next((i for i, c in enumerate(cells) if c.lower() not in ONE | ZERO), None)
        if bad is not None:
            shown = f"`{cells[bad]}`" if cells[bad] else "empty"
            raise CovariateError(phrase(E731_COVARIATE_NOT_CODED, column=name, value=shown, coding=CODING_WORDS), bad)
        values = tuple(1.0 if c.lower() in ONE else 0.0 for c in cells)
        coding = CODING_WORDS
    if len(set(values)) < 2:
        raise CovariateError(phrase(E731_COVARIATE_ONE_VALUE, column=name, value=f"{values[0]:g}"))
    return Covariate(name, values, coding, set(values) == {0.0, 1.0})


# ---------------------------------------------------------------------- the regression
@attrs.frozen
class Term:
    """One coefficient of the adjusted model."""

    name: str
    unit: str  # "per SD" | "flagged vs not" | "intercept"
    estimate: float | None  # None when the full sample has no finite maximum
    se: float | None
    z: float | None
    p: float | None  # two-sided Wald
    low: float | None  # None: unbounded (or no resample)
    high: float | None
    diverged: int  # resamples in which this coefficient ran off to ±∞

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "unit": self.unit, "estimate": self.estimate, "se": self.se, "z": self.z,
                "p": self.p, "ci": [self.low, self.high], "diverged": self.diverged}


@attrs.frozen
class Adjusted:
    """The logistic regression of the outcome on one scorer and the covariates."""

    scorer: str
    n: int
    terms: tuple[Term, ...]
    converged: bool  # on the full sample
    why: str | None  # why there is no estimate (None when converged)
    B: int
    seed: int
    used: int
    skipped: int  # resamples without both classes or with a constant term
    separated: int  # resamples with no finite maximum

    def to_json(self) -> dict[str, object]:
        return {"scorer": self.scorer, "n": self.n, "model": "logit", "converged": self.converged, "why": self.why,
                "terms": [t.to_json() for t in self.terms],
                "bootstrap": {"B": self.B, "seed": self.seed, "used": self.used, "skipped": self.skipped,
                              "separated": self.separated}}


def _standardised(values: Sequence[float]) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    sd = float(a.std())
    out: np.ndarray = (a - a.mean()) / (sd if sd > 0 else 1.0)
    return out


def design(scores: Sequence[float], covariates: Sequence[Covariate]) -> np.ndarray:
    """The design matrix: ones, the scorer in SDs, each covariate (0/1 as is, else in SDs)."""
    columns = [np.ones(len(scores)), _standardised(scores)]
    columns += [np.asarray(c.values) if c.binary else _standardised(c.values) for c in covariates]
    return np.column_stack(columns)


def newton(x: np.ndarray, y: np.ndarray, w: np.ndarray, steps: int = NEWTON_STEPS,
           start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted maximum-likelihood logit fits, one per column of the weights ``w`` (n, m),
    each from ``start`` (zeros by default): the coefficients after each of ``steps``
    Newton steps, (steps, m, k), and which fits converged (their last step under
    `CONVERGED`), (m,). Converged fits stop moving."""
    n, k = x.shape
    m = w.shape[1]
    outer = (x[:, :, None] * x[:, None, :]).reshape(n, k * k)
    beta = np.zeros((m, k)) if start is None else np.tile(start, (m, 1))
    active = np.ones(m, dtype=bool)
    history = np.empty((steps, m, k))
    for step in range(steps):
        idx = np.flatnonzero(active)
        if idx.shape[0]:
            eta = np.clip(beta[idx] @ x.T, -700.0, 700.0)
            p = 1.0 / (1.0 + np.exp(-eta))
            wt = w[:, idx].T
            grad = (wt * (y - p)) @ x
            hess = ((wt * p * (1.0 - p)) @ outer).reshape(idx.shape[0], k, k) + 1e-12 * np.eye(k)
            delta = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
            beta[idx] += delta
            active[idx[np.max(np.abs(delta), axis=1) < CONVERGED]] = False
        history[step] = beta
    return history, ~active


def _wald(x: np.ndarray, y: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = 1.0 / (1.0 + np.exp(-(x @ beta)))
    cov = np.linalg.inv((x * (p * (1.0 - p))[:, None]).T @ x)
    se = np.sqrt(np.diag(cov))
    z = beta / se
    return se, z, np.array([math.erfc(abs(v) / math.sqrt(2.0)) for v in z])


def _interval(samples: np.ndarray, level: float) -> tuple[float | None, float | None]:
    kept = samples[~np.isnan(samples)]
    if not kept.shape[0]:
        return None, None
    tails = [round((1 - level) / 2, 12), round((1 + level) / 2, 12)]
    q = np.quantile(np.clip(kept, -INFINITE, INFINITE), tails)
    low, high = (float(v) if abs(v) < INFINITE / 2 else None for v in q)
    return low, high


def adjusted(
    name: str, scores: Sequence[float], covariates: Sequence[Covariate], labels: Sequence[int],
    B: int = metrics.DEFAULT_B, seed: int = metrics.DEFAULT_SEED, level: float = metrics.LEVEL,
) -> Adjusted:
    """The logit of the outcome on ``scores`` and ``covariates``, with Wald p-values and
    bootstrap percentile intervals on the table's resamples."""
    x = design(scores, covariates)
    y = np.asarray(labels, dtype=np.float64)
    n, k = x.shape
    ones = np.ones((n, 1))
    identified = bool(_identified(x, ones)[0])
    history, converged = newton(x, y, ones) if identified else (np.zeros((1, 1, k)), np.zeros(1, dtype=bool))
    full_ok = bool(converged[0])
    why = None if full_ok else SEPARATED if identified else NOT_IDENTIFIED
    beta = history[-1, 0]
    se, z, p = _wald(x, y, beta) if full_ok else (None, None, None)

    chunks, diverged, separated, skipped = [], np.zeros(k, dtype=np.int64), 0, 0
    for block in metrics.multiplicities(n, B, seed):
        samples, runaway, apart, unfit = _refit(x, y, block.astype(np.float64), beta if full_ok else None)
        chunks.append(samples)
        diverged += runaway
        separated += apart
        skipped += unfit
    samples = np.concatenate(chunks)
    names = ["intercept", name, *(c.name for c in covariates)]
    units = ["intercept", "per SD", *("flagged vs not" if c.binary else "per SD" for c in covariates)]
    terms = []
    for j in range(k):
        low, high = _interval(samples[:, j], level)
        terms.append(Term(
            names[j], units[j],
            float(beta[j]) if full_ok else None,
            None if se is None else float(se[j]),
            None if z is None else float(z[j]),
            None if p is None else float(p[j]),
            low, high, int(diverged[j]),
        ))
    return Adjusted(name, n, tuple(terms), full_ok, why, B, seed, B - skipped, skipped, separated)


def _identified(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per column of weights ``w``, whether the weighted design has full rank: the
    determinant of its cross-product, over the total weight, clears `COLLINEAR`."""
    n, k = x.shape
    outer = (x[:, :, None] * x[:, None, :]).reshape(n, k * k)
    total = w.sum(axis=0)
    cross = (w.T @ outer).reshape(w.shape[1], k, k) / np.where(total > 0, total, 1.0)[:, None, None]
    identified: np.ndarray = np.linalg.det(cross) > COLLINEAR
    return identified


def _refit(x: np.ndarray, y: np.ndarray, w: np.ndarray,
           start: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The coefficients refitted on each resample (column) of the multiplicities ``w``:
    (m, k) with NaN for a skipped resample and ±inf for a diverging coefficient; per term,
    how many diverged; how many resamples separated; how many were skipped."""
    k = x.shape[1]
    both = ((w * y[:, None]).sum(axis=0) > 0) & ((w * (1 - y)[:, None]).sum(axis=0) > 0)
    fit = both & _identified(x, w)
    samples = np.full((w.shape[1], k), np.nan)
    if not fit.any():
        return samples, np.zeros(k, dtype=np.int64), 0, int(w.shape[1])
    history, ok = newton(x, y, w[:, fit], start=start)  # from the full sample's fit: fewer steps
    motion = history[-1] - history[-1 - WINDOW]
    runaway = (np.abs(motion) > MOVING) & ~ok[:, None]
    samples[fit] = np.where(runaway, np.where(motion > 0, np.inf, -np.inf), history[-1])
    return samples, runaway.sum(axis=0), int((~ok).sum()), int(w.shape[1] - fit.sum())
