"""Baselines graded beside the released score by `pcsc evaluate` (docs/forecast.md,
"Baselines"): simple scorers computed from the frozen packets alone, so that the score
has to beat them on the same cases and the same bootstrap resamples.

- ``flat_product``: Πp, the product of the transitions' frozen p (the packet's
  ``flat_product``).
- ``flat_npv``: Πp·V − Σc, the flat product times the route's value, less the sum of
  the transitions' costs: a net present value with no staging. It is the route-structure
  ablation: the route as one transition, whose p is the product and whose cost, every
  cost paid up front.
- ``unweighted``: the reweighting ablation, W = 1: the route's own fold again, each p
  its prior p_prior (the evidence does not move it), a docked route's value 0 as its
  score has it; none where the score is withheld, or where the packet cannot be refolded
  from its numbers (a graph route, a calibrated p).
- ``evidence_compliance``: a contract baseline: the share of the route's transitions
  that keep the evidence contract, at least one admitted evidence item supporting it
  and no material change of it uncovered. It reads no number of the fold.
- the criteria score T is graded already (``criteria_score``).
- ``boosted``: gradient-boosted decision stumps on the same factors and the same
  out-of-fold scheme as ``logistic`` (below): `GBM_ROUNDS` rounds of shrinkage
  `GBM_RATE`, each a one-split tree fitted to the logistic loss's gradient, its leaves
  set by one Newton step; a small numpy implementation, not scikit-learn, so that it
  needs no extra, is the same on every platform and version, and fits the few dozen
  routes of a cohort in milliseconds.
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
from pcsc.score.fold import chain_fold

FOLDS = 5
MIN_PER_CLASS = 3
L2 = 1.0  # penalty on the standardised weights
NEWTON_STEPS = 50
TINY = 1e-12  # log Πp of a zero product
FEATURES = ("log_flat_product", "cost_over_value", "criteria_score", "transitions")
GROUPING = "company: the packet's `company` field when present, else the route name"
GBM_ROUNDS = 100
GBM_RATE = 0.1
GBM_MIN_LEAF = 2  # cases on each side of a split


def flat_product(packet: Mapping[str, Any]) -> float:
    """Πp: the packet's ``flat_product`` (the product of the frozen p when absent)."""
    value = packet.get("flat_product")
    if value is None:
        value = math.prod(float(t["p"]) for t in packet["transitions"])
    return float(value)


def flat_npv(packet: Mapping[str, Any]) -> float:
    """Πp·V − Σc: the flat product of the frozen p times the value, less every cost."""
    return flat_product(packet) * float(packet["value"]) - sum(float(t["c"]) for t in packet["transitions"])


def unweighted(packet: Mapping[str, Any]) -> float | None:
    """The score with W = 1: the packet's fold with every p its p_prior; None when the
    score is withheld or the packet cannot be refolded from its own numbers."""
    transitions = packet["transitions"]
    if (packet.get("score") is None or "graph" in packet or "calibration" in packet
            or any("p_prior" not in t for t in transitions)):
        return None
    fold = packet.get("fold") or {}
    value = 0.0 if packet.get("verdict") == "docked" else float(packet["value"])
    d = fold.get("d")
    R = chain_fold([float(t["p_prior"]) for t in transitions], [float(t["c"]) for t in transitions], value,
                   None if d is None else [float(x) for x in d], stop=bool(fold.get("abandonment", False)))
    return float(R[0])


def evidence_compliance(packet: Mapping[str, Any]) -> float:
    """The share of transitions with admitted supporting evidence and no uncovered material change."""
    transitions = packet["transitions"]
    supported = {name for e in packet.get("evidence", []) if e.get("admitted") for name in e.get("supports", [])}
    kept = sum(1 for t in transitions if t.get("name") in supported
               and not any(d.get("material") and d.get("covered") is False for d in t.get("deltas", [])))
    return kept / len(transitions)


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
    """Out-of-fold predictions by route of a model fitted on `FEATURES` (``name``), or why it was not fitted."""

    fitted: bool
    predictions: dict[str, float]
    folds: int
    companies: int
    why: str | None  # None when fitted
    seed: int
    name: str = "logistic"

    def to_json(self) -> dict[str, Any]:
        settings: dict[str, Any] = ({"l2": L2} if self.name == "logistic" else
                                    {"rounds": GBM_ROUNDS, "rate": GBM_RATE, "min_leaf": GBM_MIN_LEAF})
        return {"name": self.name, "fitted": self.fitted, "why": self.why, "features": list(FEATURES),
                "folds": self.folds, "companies": self.companies, "grouping": GROUPING, **settings,
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


def fit_stumps(x: np.ndarray, y: np.ndarray) -> tuple[float, list[tuple[int, float, float, float]]]:
    """Gradient-boosted stumps for the logistic loss: the starting log odds and, per round,
    (feature, threshold, step left, step right); a case goes left when its value ≤ the
    threshold. Deterministic: ties between splits go to the first feature and threshold."""
    mean = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
    f0 = math.log(mean / (1 - mean))
    f = np.full(y.shape[0], f0)
    stumps = []
    for _ in range(GBM_ROUNDS):
        p = 1.0 / (1.0 + np.exp(-f))
        g, h = y - p, p * (1 - p)
        best: tuple[float, int, float] | None = None
        for j in range(x.shape[1]):
            values = np.unique(x[:, j])
            for lo, hi in zip(values[:-1], values[1:], strict=True):
                left = x[:, j] <= (lo + hi) / 2
                if min(int(left.sum()), int((~left).sum())) < GBM_MIN_LEAF:
                    continue
                gain = g[left].sum() ** 2 / h[left].sum() + g[~left].sum() ** 2 / h[~left].sum()
                if best is None or gain > best[0] + 1e-12:
                    best = (float(gain), j, float((lo + hi) / 2))
        if best is None:
            break
        _, j, threshold = best
        left = x[:, j] <= threshold
        step_l = GBM_RATE * float(g[left].sum() / h[left].sum())
        step_r = GBM_RATE * float(g[~left].sum() / h[~left].sum())
        f += np.where(left, step_l, step_r)
        stumps.append((j, threshold, step_l, step_r))
    return f0, stumps


def predict_stumps(model: tuple[float, list[tuple[int, float, float, float]]], x: np.ndarray) -> np.ndarray:
    f0, stumps = model
    f = np.full(x.shape[0], f0)
    for j, threshold, step_l, step_r in stumps:
        f += np.where(x[:, j] <= threshold, step_l, step_r)
    out: np.ndarray = 1.0 / (1.0 + np.exp(-f))
    return out


def boosted_oof(packets: Mapping[str, Mapping[str, Any]], labels: Mapping[str, bool], seed: int) -> LogisticResult:
    """Out-of-fold predictions of boosted stumps, on the folds `logistic_oof` uses."""
    return logistic_oof(packets, labels, seed, model="boosted")


def logistic_oof(packets: Mapping[str, Mapping[str, Any]], labels: Mapping[str, bool], seed: int,
                 model: str = "logistic") -> LogisticResult:
    """Out-of-fold predictions (a logistic regression, or with ``model="boosted"`` boosted
    stumps) for the labelled routes ``labels`` (route → positive)."""
    routes = sorted(labels)
    y = np.array([1.0 if labels[r] else 0.0 for r in routes])
    groups = [company(packets[r]) for r in routes]
    names = sorted(set(groups))
    k = min(FOLDS, len(names))
    positives, negatives = int(y.sum()), int(len(routes) - y.sum())
    if min(positives, negatives) < MIN_PER_CLASS:
        return LogisticResult(False, {}, k, len(names), f"too few cases to fit: {positives} positive and "
                              f"{negatives} negative (needs {MIN_PER_CLASS} of each)", seed, model)
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[int(i)]: j % k for j, i in enumerate(order)}
    fold = np.array([fold_of[g] for g in groups])
    rows = [features(packets[r]) for r in routes]
    predictions = np.zeros(len(routes))
    for f in range(k):
        train = fold != f
        if len(set(y[train].tolist())) < 2:
            return LogisticResult(False, {}, k, len(names), f"fold {f + 1} of {k}: its training companies "
                                  "hold only one class", seed, model)
        x = _design(rows, train)
        if model == "boosted":
            predictions[~train] = predict_stumps(fit_stumps(x[train], y[train]), x[~train])
        else:
            w = fit_logistic(x[train], y[train])
            predictions[~train] = 1.0 / (1.0 + np.exp(-(x[~train] @ w)))
    return LogisticResult(True, {r: float(p) for r, p in zip(routes, predictions, strict=True)}, k, len(names),
                          None, seed, model)


def baseline_columns(packets: Mapping[str, Mapping[str, Any]], labels: Mapping[str, bool],
                     seed: int) -> tuple[dict[str, dict[str, float | None]], list[LogisticResult]]:
    """The baseline scorers' values by route for the labelled routes (None: no value),
    and the fitted models' outcomes, logistic then boosted (a model's column is present
    only when it was fitted)."""
    columns: dict[str, dict[str, float | None]] = {
        "flat_product": {r: flat_product(packets[r]) for r in labels},
        "flat_npv": {r: flat_npv(packets[r]) for r in labels},
        "unweighted": {r: unweighted(packets[r]) for r in labels},
        "evidence_compliance": {r: evidence_compliance(packets[r]) for r in labels},
    }
    models = [logistic_oof(packets, labels, seed), boosted_oof(packets, labels, seed)]
    for m in models:
        if m.fitted:
            columns[m.name] = dict(m.predictions)
    return columns, models


BINDING_WHAT = ("the binding transition (argmax U·D) beside the cost-aware value-of-information selector "
                "(argmax EVI − learning cost, none when nothing is worth learning) and the knowledge-gradient "
                "selector (argmax of the expected gain of one observed trial, none when no trial could change the "
                "decision), per frozen route; where a route's first resolved-negative milestone is known, which "
                "of them named it")


def _refold(packet: Mapping[str, Any], i: int, q: float) -> float:
    """R_0 of the packet's fold with transition i's p set to ``q``."""
    transitions = packet["transitions"]
    fold = packet.get("fold") or {}
    d = fold.get("d")
    ps = [q if j == i else float(t["p"]) for j, t in enumerate(transitions)]
    value = 0.0 if packet.get("verdict") == "docked" else float(packet["value"])
    return float(chain_fold(ps, [float(t["c"]) for t in transitions], value,
                            None if d is None else [float(x) for x in d], stop=bool(fold.get("abandonment")))[0])


def knowledge_gradient(packet: Mapping[str, Any]) -> tuple[str | None, list[float]] | None:
    """The knowledge-gradient selector of a chain packet with a ``voi`` block: per
    transition, the expected gain of observing one trial of it before deciding to commit.

    Transition i's p is given a Beta distribution with mean p_i and the variance of the
    values the value-of-information selector spreads it over (its ``voi`` values: what
    the author's estimates allow); one trial succeeds with probability p_i and moves the
    mean to (α + 1)/(n + 1) or α/(n + 1), n = α + β. Then

        KG_i = p_i·max(0, R_0(p⁺)) + (1 − p_i)·max(0, R_0(p⁻)) − max(0, R_0(p_i))

    with R_0 the packet's fold refolded with p_i moved. Unlike the value of information it
    learns from one noisy trial, not the exact p, and charges no learning cost. The
    selection is the largest KG_i > 0 (ties: the earliest), else none; None for a packet
    without ``voi`` (or without its numbers) or a graph route."""
    voi = packet.get("voi")
    if (voi is None or "graph" in packet or "transitions" not in voi
            or any("p" not in t or "c" not in t for t in packet["transitions"])):
        return None
    now = max(0.0, _refold(packet, 0, float(packet["transitions"][0]["p"])))
    gains = []
    for i, (t, row) in enumerate(zip(packet["transitions"], voi["transitions"], strict=True)):
        p = float(t["p"])
        variance = sum((float(v) - p) ** 2 for v in row["values"]) / len(row["values"])
        if variance <= 0 or not 0 < p < 1:
            gains.append(0.0)
            continue
        n = max(p * (1 - p) / variance - 1, 1e-9)  # α + β of the Beta with this mean and variance
        up, down = (p * n + 1) / (n + 1), p * n / (n + 1)
        gains.append(p * max(0.0, _refold(packet, i, up)) + (1 - p) * max(0.0, _refold(packet, i, down)) - now)
    best = max(range(len(gains)), key=lambda i: (gains[i], -i))
    scale = max(1.0, abs(now))
    return (packet["transitions"][best]["name"] if gains[best] > 1e-12 * scale else None), gains


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
        kg = knowledge_gradient(packet)
        rows.append({
            "kg": None if kg is None else kg[0],
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
        "kg_named_failure": sum(1 for r in failed_rows if r["kg"] is not None and r["kg"] == r["first_failed"]),
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
        "kg_none": sum(1 for r in with_voi if r["kg"] is None),
        "failed_routes": len(failed_rows),
        **named,
        "rates": {name: rate(k, len(failed_rows)) for name, k in named.items()},
        "rows": rows,
    }
