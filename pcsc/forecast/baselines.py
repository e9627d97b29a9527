"""Baselines graded beside the released score by `pcsc evaluate` (docs/forecast.md,
"Baselines"): simple scorers computed from the frozen packets alone, so that the score
has to beat them on the same cases and the same bootstrap resamples.

- ``flat_product``: Πp, the product of the transitions' frozen p (the packet's
  ``flat_product``).
- ``flat_npv``: Πp·V − Σc, the flat product times the route's value, less the sum of
  the transitions' costs: a net present value with no staging.
- the criteria score T is graded already (``criteria_score``).
- ``logistic``: a logistic regression on the structured factors of the packet
  (`FEATURES`), fitted by Newton's method (IRLS) with a small L2 penalty on the
  standardised weights (the intercept is not penalised), its predictions *out of fold*:
  each route is predicted by a model fitted without its company. The company of a route
  is its ``company`` field when the packet has one, else the route's name (one route,
  one company). Companies are dealt to ``min(FOLDS, companies)`` folds in an order
  shuffled by ``numpy.random.default_rng(seed)``, so the predictions are the same for
  the same seed. When a class has fewer than `MIN_PER_CLASS` cases, or a training fold
  lacks a class, the regression is *not fitted* and says why, rather than failing.

Only evaluation code imports this module (it needs numpy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from pcsc.base.stats import rate

FOLDS = 5
MIN_PER_CLASS = 3
L2 = 1.0  # penalty on the standardised weights
NEWTON_STEPS = 50
TINY = 1e-12  # log Πp of a zero product
FEATURES = ("log_flat_product", "cost_over_value", "criteria_score", "transitions")
GROUPING = "company: the packet's `company` field when present, else the route name"


def flat_product(packet: Mapping[str, Any]) -> float:
    """Πp: the packet's ``flat_product`` (the product of the frozen p when absent)."""
    value = packet.get("flat_product")
    if value is None:
        value = math.prod(float(t["p"]) for t in packet["transitions"])
    return float(value)


def flat_npv(packet: Mapping[str, Any]) -> float:
    """Πp·V − Σc: the flat product of the frozen p times the value, less every cost."""
    return flat_product(packet) * float(packet["value"]) - sum(float(t["c"]) for t in packet["transitions"])


def company(packet: Mapping[str, Any]) -> str:
    """The company a route belongs to, for grouped folds: its ``company`` field, else its name."""
    return str(packet.get("company") or packet["route"])


def features(packet: Mapping[str, Any]) -> list[float | None]:
    """The packet's structured factors, in `FEATURES` order; None for a missing criteria score."""
    value = float(packet["value"])
    costs = sum(float(t["c"]) for t in packet["transitions"])
    t_score = packet.get("criteria_score")
    return [
        math.log(max(flat_product(packet), TINY)),
        costs / value if value > 0 else 0.0,
        None if t_score is None else float(t_score),
        float(len(packet["transitions"])),
    ]


@attrs.frozen
class LogisticResult:
    """Out-of-fold predictions by route, or why the regression was not fitted."""

    fitted: bool
    predictions: dict[str, float]
    folds: int
    companies: int
    why: str | None  # None when fitted
    seed: int

    def to_json(self) -> dict[str, Any]:
        return {"name": "logistic", "fitted": self.fitted, "why": self.why, "features": list(FEATURES),
                "folds": self.folds, "companies": self.companies, "grouping": GROUPING, "l2": L2,
                "seed": self.seed}


def _design(rows: Sequence[Sequence[float | None]], train: np.ndarray) -> np.ndarray:
    """The standardised design matrix (with a leading column of ones): a missing value is
    the training mean; means and spreads are the training rows'."""
    raw = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=np.float64)
    means = np.nanmean(np.where(train[:, None], raw, np.nan), axis=0)
    means = np.where(np.isfinite(means), means, 0.0)
    raw = np.where(np.isnan(raw), means, raw)
    spread = raw[train].std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    return np.hstack([np.ones((raw.shape[0], 1)), (raw - means) / spread])


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """The weights of an L2-penalised logistic regression (intercept in column 0, not
    penalised), by Newton's method; the penalty keeps it finite on separable data."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return w


def logistic_oof(packets: Mapping[str, Mapping[str, Any]], labels: Mapping[str, bool], seed: int) -> LogisticResult:
    """Out-of-fold logistic predictions for the labelled routes ``labels`` (route → positive)."""
    routes = sorted(labels)
    y = np.array([1.0 if labels[r] else 0.0 for r in routes])
    groups = [company(packets[r]) for r in routes]
    names = sorted(set(groups))
    k = min(FOLDS, len(names))
    positives, negatives = int(y.sum()), int(len(routes) - y.sum())
    if min(positives, negatives) < MIN_PER_CLASS:
        return LogisticResult(False, {}, k, len(names), f"too few cases to fit: {positives} positive and "
                              f"{negatives} negative (needs {MIN_PER_CLASS} of each)", seed)
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[int(i)]: j % k for j, i in enumerate(order)}
    fold = np.array([fold_of[g] for g in groups])
    rows = [features(packets[r]) for r in routes]
    predictions = np.zeros(len(routes))
    for f in range(k):
        train = fold != f
        if len(set(y[train].tolist())) < 2:
            return LogisticResult(False, {}, k, len(names), f"fold {f + 1} of {k}: its training companies "
                                  "hold only one class", seed)
        x = _design(rows, train)
        w = fit_logistic(x[train], y[train])
        predictions[~train] = 1.0 / (1.0 + np.exp(-(x[~train] @ w)))
    return LogisticResult(True, {r: float(p) for r, p in zip(routes, predictions, strict=True)}, k, len(names),
                          None, seed)


def baseline_columns(packets: Mapping[str, Mapping[str, Any]], labels: Mapping[str, bool],
                     seed: int) -> tuple[dict[str, dict[str, float]], LogisticResult]:
    """The baseline scorers' values by route for the labelled routes, and the logistic
    regression's outcome (its column is present only when it was fitted)."""
    columns = {
        "flat_product": {r: flat_product(packets[r]) for r in labels},
        "flat_npv": {r: flat_npv(packets[r]) for r in labels},
    }
    logistic = logistic_oof(packets, labels, seed)
    if logistic.fitted:
        columns["logistic"] = dict(logistic.predictions)
    return columns, logistic


BINDING_WHAT = ("the binding transition (argmax U·D) beside the cost-aware value-of-information selector "
                "(argmax EVI − learning cost, none when nothing is worth learning), per frozen route; where a "
                "route's first resolved-negative milestone is known, which of the two named it")


#: How U·D and the selector relate on one route, first that applies: every U·D is 0 (the
#: binding transition is only the tie rule's pick); both name one transition; the
#: selector finds nothing worth learning; they name different transitions.
RELATIONS = ("tie", "agree", "voi-none", "differ")


def relation(by_tie: bool, agrees: bool, selected: str | None) -> str:
    return "tie" if by_tie else "agree" if agrees else "voi-none" if selected is None else "differ"


def binding_vs_voi(packets: Mapping[str, Mapping[str, Any]],
                   negatives: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Where U·D and the VOI selector disagree across the frozen routes ``packets``, and how
    often each names the route's first failed milestone; ``negatives`` are the (route,
    transition) pairs of resolved-negative milestones. A packet frozen before the selector
    existed has no ``voi`` and is counted apart. Where every U·D is 0 (the option to stop
    says the planner would not start), the binding transition is only the tie rule's pick:
    it is neither counted as differing from the selector nor as naming a failure.

    Each route with the selector has one ``relation`` (`RELATIONS`), so the counts
    ``agree``, ``differ``, ``voi_none`` and ``binding_by_tie`` add up to those routes."""
    rows = []
    for route in sorted(packets):
        packet = packets[route]
        order = [t["name"] for t in packet["transitions"]]
        failed = [order.index(t) for r, t in negatives if r == route and t in order]
        first_failed = order[min(failed)] if failed else None
        binding = packet.get("binding", {}).get("transition")
        by_tie = "by_tie" in packet.get("binding", {})  # every U·D is 0: the tie rule's pick, not a finding
        voi = packet.get("voi")
        selected = None if voi is None else voi["selected"]
        agrees = voi is not None and selected == binding
        rows.append({
            "route": route,
            "binding": binding,
            "voi": selected,
            "has_voi": voi is not None,
            "agrees": agrees,
            "binding_by_tie": by_tie,
            "relation": None if voi is None else relation(by_tie, agrees, selected),
            "first_failed": first_failed,
        })
    with_voi = [r for r in rows if r["has_voi"]]
    failed_rows = [r for r in with_voi if r["first_failed"] is not None]
    named = {
        "binding_named_failure": sum(1 for r in failed_rows
                                     if r["binding"] == r["first_failed"] and not r["binding_by_tie"]),
        "voi_named_failure": sum(1 for r in failed_rows if r["voi"] == r["first_failed"]),
    }
    counts = {name: sum(1 for r in with_voi if r["relation"] == name) for name in RELATIONS}
    return {
        "what": BINDING_WHAT,
        "routes": len(rows),
        "without_voi": len(rows) - len(with_voi),
        "agree": counts["agree"],
        "differ": counts["differ"],
        "binding_by_tie": counts["tie"],
        "voi_none": counts["voi-none"],
        "failed_routes": len(failed_rows),
        **named,
        "rates": {name: rate(k, len(failed_rows)) for name, k in named.items()},
        "rows": rows,
    }
