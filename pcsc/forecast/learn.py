"""The learning loop (RouteCast §12.2): resolved outcomes propose a new policy version;
it is promoted only when it beats the current one on held-out resolved routes.
Frozen forecasts are never touched: everything here reads packets and writes a new
TOML file.

- **Fit.** Per reference class, the prior that, after each transition's own frozen W,
  best explains the outcomes: p' maximises
  Σ_j [y_j·log q_j + (1 − y_j)·log(1 − q_j)] + s·p·log p' + s·(1 − p)·log(1 − p')
  with q_j = clip(p'·W_j, ε, 1 − ε), over the n resolved (positive or negative) training
  transitions of that class (k of them positive), p the old prior and s = `strength`
  pseudo-transitions (a Beta penalty). With every W = 1 this is the beta-binomial
  update p' = (s·p + k) / (s + n), the *pooled* estimate, which is also reported:
  pooling raw success rates estimates p·mean(W), not p. The maximum is found on a grid
  of 1,000 points of (0, 1), refined by golden-section search. Unresolved and censored
  milestones carry no information and are left out. Classes without resolved
  transitions keep their p.
- **Split.** A route is held out when the first byte of SHA-256(route name) is below
  256·holdout; fit uses the other routes, compare the held-out ones, so the same
  routes are never used for both.
- **Compare.** On held-out routes, each transition's p is recomputed under each
  policy from its frozen inputs, p = clip(p_prior·W, 0, 1) with the frozen W
  (policies that differ only in priors, as `fit` writes them, need nothing else),
  and the route score is re-folded with the frozen costs and value. Transition level:
  Brier against resolved milestones. Route level: AUC against route labels where
  both classes occur. NEW may be promoted when its Brier is lower and its AUC, where
  defined, is not lower.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from pcsc.policy.model import LoadedPolicy, Policy
from pcsc.score.route import fold


class Resolved(Protocol):
    @property
    def route(self) -> str: ...
    @property
    def transition(self) -> str: ...
    @property
    def status(self) -> str: ...


def held_out(route: str, holdout: float) -> bool:
    return hashlib.sha256(route.encode("utf-8")).digest()[0] < 256 * holdout


@attrs.frozen
class ClassFit:
    ref_class: str
    old_p: float
    new_p: float  # the W-aware estimate
    n: int  # resolved training transitions
    k: int  # of which positive
    pooled_p: float | None = None  # the beta-binomial update of the raw success rate, (s·p + k) / (s + n)


EPS = 1e-9  # a transition's p is kept in [EPS, 1 − EPS] so that every outcome has a finite log-likelihood
GRID = 1000
GOLDEN_TOL = 1e-12


def _log_posterior(p: float, ws: Sequence[float], ys: Sequence[bool], p0: float, strength: float) -> float:
    import numpy as np

    q = np.clip(p * np.asarray(ws, dtype=np.float64), EPS, 1 - EPS)
    y = np.asarray(ys, dtype=np.bool_)
    ll = float(np.log(q[y]).sum() + np.log1p(-q[~y]).sum())
    if p0 > 0:
        ll += strength * p0 * math.log(p)
    if p0 < 1:
        ll += strength * (1 - p0) * math.log1p(-p)
    return ll


def w_aware_prior(ws: Sequence[float], ys: Sequence[bool], p0: float, strength: float) -> float:
    """The p' in (0, 1) that maximises the penalised likelihood of outcomes ``ys`` when
    each transition succeeds with clip(p'·W, 0, 1) (the module docstring): the best of a
    grid of (0, 1), refined by golden-section search between its neighbours."""
    grid = [(i + 0.5) / GRID for i in range(GRID)]
    values = [_log_posterior(p, ws, ys, p0, strength) for p in grid]
    best = max(range(GRID), key=lambda i: values[i])
    lo, hi = (EPS if best == 0 else grid[best - 1]), (1 - EPS if best == GRID - 1 else grid[best + 1])
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = _log_posterior(a, ws, ys, p0, strength), _log_posterior(b, ws, ys, p0, strength)
    while hi - lo > GOLDEN_TOL:
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = _log_posterior(a, ws, ys, p0, strength)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = _log_posterior(b, ws, ys, p0, strength)
    p = (lo + hi) / 2
    return p if _log_posterior(p, ws, ys, p0, strength) >= values[best] else grid[best]


def _outcomes(packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
              keep: Any) -> list[tuple[Mapping[str, Any], Mapping[str, Any], bool]]:
    """(packet, transition, positive) for resolved milestones of routes ``keep`` accepts."""
    by_route = {p["route"]: p for p in packets}
    out = []
    for r in results:
        if r.status not in ("positive", "negative") or r.route not in by_route or not keep(r.route):
            continue
        packet = by_route[r.route]
        t = next((t for t in packet["transitions"] if t["name"] == r.transition), None)
        if t is not None:
            out.append((packet, t, r.status == "positive"))
    return out


def fit(policy: Policy, packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
        strength: float, holdout: float) -> list[ClassFit]:
    if strength <= 0:
        raise ValueError("the prior strength must be positive")
    seen: dict[str, tuple[list[float], list[bool]]] = {}
    for _, t, positive in _outcomes(packets, results, lambda r: not held_out(r, holdout)):
        ws, ys = seen.setdefault(t["class"], ([], []))
        ws.append(float(t["W"]))
        ys.append(positive)
    fits = []
    for ref_class, prior in sorted(policy.priors.items()):
        ws, ys = seen.get(ref_class, ([], []))
        n, k = len(ys), sum(ys)
        pooled = (strength * prior.p + k) / (strength + n)
        new_p = w_aware_prior(ws, ys, prior.p, strength) if n else prior.p
        fits.append(ClassFit(ref_class, prior.p, new_p, n, k, pooled))
    return fits


def fitted_policy_document(old: LoadedPolicy, version: str, fits: Sequence[ClassFit], strength: float,
                           ledger: str, when: dt.date, holdout: float = 0.3) -> dict[str, Any]:
    """The new version as a TOML document: `extends` the old one, overriding only the
    priors that resolved transitions moved, and recording the hold-out split in `[fit]`."""
    priors = {
        f.ref_class: {
            "p": round(f.new_p, 6),
            "source": (f"fitted {when.isoformat()}: the prior that best explains the outcomes after each "
                       f"transition's W, Beta penalty from {old.ref} p={f.old_p} with strength {strength:g}; "
                       f"{f.k} of {f.n} resolved transitions positive ({ledger}); pooled estimate "
                       f"{f.pooled_p:.6f}"),
        }
        for f in fits
        if f.n > 0
    }
    doc: dict[str, Any] = {
        "policy": {
            "id": old.policy.id,
            "version": version,
            "extends": old.ref,
            "coverage": old.policy.policy.coverage,
            "description": f"priors refitted from {ledger} on {when.isoformat()}",
        }
    }
    if priors:
        doc["priors"] = priors
    doc["fit"] = {"holdout": holdout, "strength": strength}
    return doc


@attrs.frozen
class Comparison:
    routes: int
    transitions: int
    brier_old: float | None
    brier_new: float | None
    auc_old: float | None
    auc_new: float | None
    promote: bool
    reason: str


def rescore(packet: Mapping[str, Any], policy: Policy) -> tuple[list[float], float]:
    """Each transition's p under ``policy`` from the frozen W, and the re-folded score."""
    ps = []
    for t in packet["transitions"]:
        prior = policy.priors.get(t["class"])
        if prior is None:
            raise KeyError(t["class"])
        ps.append(min(max(prior.p * t["W"], 0.0), 1.0))
    R = fold(ps, [t["c"] for t in packet["transitions"]], packet["value"])
    return ps, R[0]


def compare(old: Policy, new: Policy, packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
            labels: Mapping[str, bool], holdout: float) -> Comparison:
    from pcsc.forecast.metrics import auc, brier

    test = [p for p in packets if held_out(p["route"], holdout)]
    rows = _outcomes(test, results, lambda r: True)
    ys = [1.0 if positive else 0.0 for _, _, positive in rows]
    p_old, p_new = [], []
    for packet, t, _ in rows:
        index = [x["name"] for x in packet["transitions"]].index(t["name"])
        p_old.append(rescore(packet, old)[0][index])
        p_new.append(rescore(packet, new)[0][index])
    b_old = float(brier(p_old, ys)) if rows else None
    b_new = float(brier(p_new, ys)) if rows else None
    labelled = [p for p in test if p["route"] in labels]
    y_route = [1 if labels[p["route"]] else 0 for p in labelled]
    a_old = a_new = None
    if 0 < sum(y_route) < len(y_route):
        a_old = float(auc([rescore(p, old)[1] for p in labelled], y_route))
        a_new = float(auc([rescore(p, new)[1] for p in labelled], y_route))
    if b_old is None or b_new is None:
        promote, reason = False, "no resolved held-out transition: nothing to compare on"
    elif b_new >= b_old:
        promote, reason = False, f"held-out Brier does not improve ({b_new:.4f} vs {b_old:.4f})"
    elif a_old is not None and a_new is not None and a_new < a_old:
        promote, reason = False, f"held-out AUC falls ({a_new:.3f} vs {a_old:.3f})"
    else:
        promote, reason = True, f"held-out Brier improves ({b_new:.4f} vs {b_old:.4f})" + (
            "" if a_old is None else f" and AUC does not fall ({a_new:.3f} vs {a_old:.3f})")
    return Comparison(len(test), len(rows), b_old, b_new, a_old, a_new, promote, reason)
