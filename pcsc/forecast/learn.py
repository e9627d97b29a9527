"""The learning loop (RouteCast §12.2): resolved outcomes propose a new policy version;
it is promoted only when it beats the current one on held-out resolved routes.
Frozen forecasts are never touched: everything here reads packets and writes a new
TOML file.

- **Fit.** Per reference class, a beta-binomial update whose prior mean is the old p
  and whose strength is `strength` pseudo-transitions: p' = (s·p + k) / (s + n) over
  the n resolved (positive or negative) training transitions of that class, k of
  them positive. Unresolved and censored milestones carry no information and are
  left out. Classes without resolved transitions keep their p.
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
    new_p: float
    n: int  # resolved training transitions
    k: int  # of which positive


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
    counts: dict[str, tuple[int, int]] = {}
    for _, t, positive in _outcomes(packets, results, lambda r: not held_out(r, holdout)):
        n, k = counts.get(t["class"], (0, 0))
        counts[t["class"]] = (n + 1, k + positive)
    fits = []
    for ref_class, prior in sorted(policy.priors.items()):
        n, k = counts.get(ref_class, (0, 0))
        new_p = (strength * prior.p + k) / (strength + n)
        fits.append(ClassFit(ref_class, prior.p, new_p, n, k))
    return fits


def fitted_policy_document(old: LoadedPolicy, version: str, fits: Sequence[ClassFit], strength: float,
                           ledger: str, when: dt.date) -> dict[str, Any]:
    """The new version as a TOML document: `extends` the old one, overriding only the
    priors that resolved transitions moved."""
    priors = {
        f.ref_class: {
            "p": round(f.new_p, 6),
            "source": (f"fitted {when.isoformat()}: beta-binomial from {old.ref} p={f.old_p} with strength "
                       f"{strength:g}; {f.k} of {f.n} resolved transitions positive ({ledger})"),
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
