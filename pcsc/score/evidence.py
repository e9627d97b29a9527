"""Evidence admissibility and reweighting: W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max)."""

from __future__ import annotations

import datetime as dt

import attrs

from pcsc.ir import Evidence
from pcsc.policy.model import Policy


def admissible(e: Evidence, as_of: dt.date, policy: Policy) -> bool:
    """Captured on or before as_of, tier at least min_tier, and not unverified."""
    return e.captured is not None and e.captured <= as_of and e.tier >= policy.evidence.min_tier and not e.unverified


def effective_weight(e: Evidence, policy: Policy) -> float:
    return e.weight * policy.evidence.tier_weight.get(str(e.tier), 0.0)


def saturating_sum(weights: list[float], decay: float) -> float:
    """S(x) = Σ x_(i)·decay^i over weights sorted descending (decay^i by repeated
    multiplication: libm's pow may differ in the last bit between platforms)."""
    total = 0.0
    factor = 1.0
    for w in sorted(weights, reverse=True):
        total += w * factor
        factor *= decay
    return total


def sat(weights: list[float], decay: float) -> float:
    s = saturating_sum(weights, decay)
    return s / (1.0 + s)


def clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


@attrs.frozen
class Reweight:
    supporting: tuple[tuple[str, float], ...]  # (evidence, effective weight), sorted descending
    contradicting: tuple[tuple[str, float], ...]
    sat_c: float
    sat_k: float
    W: float


def reweight(transition: str, evidence: tuple[Evidence, ...], as_of: dt.date, policy: Policy) -> Reweight:
    rw = policy.reweighting
    sup: list[tuple[str, float]] = []
    con: list[tuple[str, float]] = []
    for e in evidence:
        if not admissible(e, as_of, policy):
            continue
        if transition in e.supports:
            sup.append((e.name, effective_weight(e, policy)))
        if transition in e.contradicts:
            con.append((e.name, effective_weight(e, policy)))
    sup.sort(key=lambda x: (-x[1], x[0]))
    con.sort(key=lambda x: (-x[1], x[0]))
    if not sup and not con:
        return Reweight((), (), 0.0, 0.0, 1.0)
    sat_c = sat([w for _, w in sup], rw.decay)
    sat_k = sat([w for _, w in con], rw.decay)
    W = clip(1.0 + rw.corroborate_gain * sat_c - rw.contradict_gain * sat_k, rw.w_min, rw.w_max)
    return Reweight(tuple(sup), tuple(con), sat_c, sat_k, W)
