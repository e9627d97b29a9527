"""Fitting the calibration map and the reweighting gains of a policy (`pcsc policy fit
--calibration`, `--gains`), from training transitions' frozen inputs and outcomes.

- **Isotonic**: pool-adjacent-violators on (p, y) sorted by p (equal p pooled first):
  the non-decreasing step function closest to y in squared error. Stored as breakpoints
  (x, y): each pooled block's lowest and highest p with the block's rate, a flat run
  kept only at its ends; applied by linear interpolation between breakpoints
  (`pcsc.score.calibration`).
- **Platt**: y ~ sigmoid(a + b·logit(p)) by Newton's method on the log-likelihood with a
  small ridge (1e-3) toward the identity map (a = 0, b = 1), which keeps it finite when
  the outcomes are separable; b is kept at least 0.
- **Gains**: W_j(gc, gk) = clip(1 + gc·sat(C_j) − gk·sat(K_j), w_min, w_max) from each
  transition's admitted evidence (its frozen items, the policy's tier weights and decay);
  the gains maximise Σ_j log-likelihood of y_j under q_j = clip(p_class·W_j, ε, 1 − ε)
  − (S/2)·[(gc − gc_old)² + (gk − gk_old)²], each in [0, GAIN_MAX], by coordinate ascent
  (golden-section search on [0, GAIN_MAX], one gain at a time); `pcsc.forecast.learn`
  refits priors and gains in turn until they settle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import attrs

EPS = 1e-9
GAIN_MAX = 10.0
PLATT_RIDGE = 1e-3


# ---------------------------------------------------------------------- isotonic
def pava(ps: Sequence[float], ys: Sequence[bool | float]) -> tuple[list[float], list[float]]:
    """The isotonic fit's breakpoints (x, y): x strictly increasing, y non-decreasing."""
    if len(ps) != len(ys) or not ps:
        raise ValueError("isotonic calibration needs as many outcomes as probabilities, at least one")
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    # blocks: [lowest p, highest p, sum of y, count]
    blocks: list[list[float]] = []
    for i in order:
        p, y = float(ps[i]), float(ys[i])
        if blocks and blocks[-1][1] == p:
            blocks[-1][2] += y
            blocks[-1][3] += 1
        else:
            blocks.append([p, p, y, 1.0])
        while len(blocks) > 1 and blocks[-2][2] / blocks[-2][3] >= blocks[-1][2] / blocks[-1][3]:
            last = blocks.pop()
            blocks[-1][1] = last[1]
            blocks[-1][2] += last[2]
            blocks[-1][3] += last[3]
    xs: list[float] = []
    vs: list[float] = []
    for lo, hi, total, count in blocks:
        rate = total / count
        for x in (lo, hi) if hi > lo else (lo,):
            xs.append(x)
            vs.append(rate)
    # a flat run keeps only its ends (the interior breakpoints change nothing)
    keep = [i for i in range(len(xs)) if i in (0, len(xs) - 1) or not vs[i - 1] == vs[i] == vs[i + 1]]
    return [xs[i] for i in keep], [vs[i] for i in keep]


# ---------------------------------------------------------------------- Platt
def platt_fit(ps: Sequence[float], ys: Sequence[bool | float]) -> tuple[float, float]:
    """(a, b) of p' = sigmoid(a + b·logit(p)), fitted by penalised maximum likelihood."""
    import numpy as np

    if len(ps) != len(ys) or not ps:
        raise ValueError("Platt calibration needs as many outcomes as probabilities, at least one")
    q = np.clip(np.asarray(ps, dtype=np.float64), EPS, 1 - EPS)
    z = np.log(q / (1 - q))
    y = np.asarray(ys, dtype=np.float64)
    X = np.column_stack([np.ones_like(z), z])
    theta = np.array([0.0, 1.0])
    prior = np.array([0.0, 1.0])
    for _ in range(100):
        eta = X @ theta
        mu = 1.0 / (1.0 + np.exp(-eta))
        grad = X.T @ (y - mu) - PLATT_RIDGE * (theta - prior)
        hess = (X * (mu * (1 - mu))[:, None]).T @ X + PLATT_RIDGE * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta = theta + step
        if theta[1] < 0:
            theta[1] = 0.0
        if float(np.abs(step).max()) < 1e-12:
            break
    return float(theta[0]), float(theta[1])


# ---------------------------------------------------------------------- gains
@attrs.frozen
class GainCase:
    """One training transition for the gain fit: its class, the saturated sums of its
    admitted supporting and contradicting evidence (None when its packet does not carry
    its evidence: its frozen W is kept), its frozen W, and its outcome."""

    ref_class: str
    sat_c: float | None
    sat_k: float | None
    has_evidence: bool
    W: float
    positive: bool


@attrs.frozen
class Bounds:
    w_min: float
    w_max: float


def weights_of(cases: Sequence[GainCase], gc: float, gk: float, bounds: Bounds) -> list[float]:
    """Each case's W under gains (gc, gk) (floats; the score computes W exactly)."""
    out = []
    for c in cases:
        if c.sat_c is None or c.sat_k is None:
            out.append(c.W)
        elif not c.has_evidence:
            out.append(1.0)
        else:
            w = 1.0 + gc * c.sat_c - gk * c.sat_k
            out.append(min(max(w, bounds.w_min), bounds.w_max))
    return out


def golden(f: Callable[[float], float], lo: float, hi: float, tol: float = 1e-10) -> tuple[float, float]:
    """The argmax of ``f`` on [lo, hi] (unimodal near the bracket), and its value."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = f(a), f(b)
    while hi - lo > tol:
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = f(b)
    x = (lo + hi) / 2
    return x, f(x)


def gain_objective(cases: Sequence[GainCase], priors: dict[str, float], bounds: Bounds, old: tuple[float, float],
                   strength: float) -> Callable[[float, float], float]:
    """(gc, gk) ↦ the penalised log-likelihood of the cases' outcomes. Cases whose W does
    not depend on the gains (no evidence, or no evidence in the packet) add a constant."""
    import numpy as np

    def log_lik(q: Any, y: Any) -> float:
        q = np.clip(q, EPS, 1 - EPS)
        return float(np.log(q[y]).sum() + np.log1p(-q[~y]).sum())

    p = np.array([priors[c.ref_class] for c in cases], dtype=np.float64)
    y = np.array([c.positive for c in cases], dtype=np.bool_)
    moving = np.array([c.sat_c is not None and c.sat_k is not None and c.has_evidence for c in cases], dtype=np.bool_)
    constant_w = np.array([c.W if c.sat_c is None or c.sat_k is None else 1.0 for c in cases], dtype=np.float64)
    constant = log_lik(p[~moving] * constant_w[~moving], y[~moving])
    sc = np.array([c.sat_c or 0.0 for c in cases], dtype=np.float64)[moving]
    sk = np.array([c.sat_k or 0.0 for c in cases], dtype=np.float64)[moving]
    pm, ym = p[moving], y[moving]
    p_pos, sc_pos, sk_pos = pm[ym], sc[ym], sk[ym]
    p_neg, sc_neg, sk_neg = pm[~ym], sc[~ym], sk[~ym]

    def f(gc: float, gk: float) -> float:
        w_pos = np.clip(1.0 + gc * sc_pos - gk * sk_pos, bounds.w_min, bounds.w_max)
        w_neg = np.clip(1.0 + gc * sc_neg - gk * sk_neg, bounds.w_min, bounds.w_max)
        ll = float(np.log(np.clip(p_pos * w_pos, EPS, 1 - EPS)).sum()
                   + np.log1p(-np.clip(p_neg * w_neg, EPS, 1 - EPS)).sum())
        return constant + ll - strength / 2 * ((gc - old[0]) ** 2 + (gk - old[1]) ** 2)

    return f


def fit_gains(cases: Sequence[GainCase], priors: dict[str, float], bounds: Bounds, old: tuple[float, float],
              strength: float, rounds: int = 50, start: tuple[float, float] | None = None) -> tuple[float, float]:
    """The gains that maximise the penalised likelihood with the priors held fixed:
    coordinate ascent, each gain by golden-section search on [0, GAIN_MAX] (the
    log-likelihood is concave in the gains where W is not clipped)."""
    f = gain_objective(cases, priors, bounds, old, strength)
    first = old if start is None else start
    gc, gk = min(max(first[0], 0.0), GAIN_MAX), min(max(first[1], 0.0), GAIN_MAX)
    for _ in range(rounds):
        new_gc = _best(partial(_first, f, gk), gc)
        new_gk = _best(partial(_second, f, new_gc), gk)
        done = abs(new_gc - gc) < 1e-8 and abs(new_gk - gk) < 1e-8
        gc, gk = new_gc, new_gk
        if done:
            break
    return gc, gk


def _first(f: Callable[[float, float], float], gk: float, gc: float) -> float:
    return f(gc, gk)


def _second(f: Callable[[float, float], float], gc: float, gk: float) -> float:
    return f(gc, gk)


def _best(f: Callable[[float], float], current: float) -> float:
    """Golden-section search on [0, GAIN_MAX], never worse than ``current``."""
    x, fx = golden(f, 0.0, GAIN_MAX, 1e-10)
    return x if fx >= f(current) else current
