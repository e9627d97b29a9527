"""Evidence admissibility and reweighting: W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max).

An item is admitted when it is admissible (`admissible`) and does not repeat an earlier
admitted item: two items that bear on a common transition and share a source or an
excerpt (compared without case and extra spaces) count once, the first written
(`exclusions` says why each other item is left out).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import attrs

from pcsc.lang.ir import Evidence
from pcsc.policy.model import Policy, Reweighting
from pcsc.score.exact import dyadic
from pcsc.score.finite import checked, ratio


def admissible(e: Evidence, as_of: dt.date, policy: Policy) -> bool:
    """Captured on or before as_of, tier at least min_tier, and not unverified."""
    return e.captured is not None and e.captured <= as_of and e.tier >= policy.evidence.min_tier and not e.unverified


@attrs.frozen
class Exclusion:
    """Why an evidence item does not count: ``kind`` is one of ``no-capture-date``,
    ``after-as-of``, ``below-min-tier``, ``unverified``, ``duplicate``; ``reason`` says it
    in words; ``duplicate_of`` names the item it repeats."""

    kind: str
    reason: str
    duplicate_of: str | None = None


def _same_text(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def _inadmissible(e: Evidence, as_of: dt.date, policy: Policy) -> Exclusion | None:
    if e.captured is None:
        return Exclusion("no-capture-date", "no capture date")
    if e.captured > as_of:
        return Exclusion("after-as-of", f"captured {e.captured}, after as_of {as_of}")
    if e.tier < policy.evidence.min_tier:
        return Exclusion("below-min-tier", f"tier {e.tier}, below the policy's minimum tier {policy.evidence.min_tier}")
    if e.unverified:
        return Exclusion("unverified", "marked unverified")
    return None


_memo: list[tuple[Sequence[Evidence], dt.date, Policy, dict[str, Exclusion]]] = []


def exclusions(evidence: Sequence[Evidence], as_of: dt.date, policy: Policy) -> dict[str, Exclusion]:
    """Every item that does not count, by name, with why: inadmissible ones, and those
    that repeat the source or the excerpt of an earlier admitted item bearing on a
    common transition.

    Scoring and coverage ask this of the same route once per transition; the last
    answer is kept, keyed by the very objects asked about (held, so never confused with
    new ones at a reused address), and a copy returned."""
    if _memo:
        ev, day, pol, out = _memo[0]
        if ev is evidence and pol is policy and day == as_of:
            return dict(out)
    out = {}
    kept: list[Kept] = []
    for e in evidence:
        why = _inadmissible(e, as_of, policy)
        bears = frozenset(e.supports) | frozenset(e.contradicts)
        source, excerpt = _same_text(e.source), _same_text(e.excerpt)
        if why is None:
            why = _duplicate(e, bears, source, excerpt, kept)
        if why is None:
            kept.append((e, bears, source, excerpt))
        else:
            out[e.name] = why
    _memo[:] = [(evidence, as_of, policy, out)]
    return dict(out)


Kept = tuple[Evidence, frozenset[str], str, str]  # an admitted item, what it bears on, its source and excerpt


def _duplicate(e: Evidence, bears: frozenset[str], source: str, excerpt: str, kept: Sequence[Kept]) -> Exclusion | None:
    for k, k_bears, k_source, k_excerpt in kept:
        if not bears & k_bears:
            continue
        if e.source and source == k_source:
            return Exclusion("duplicate", f"same source as `{k.name}`: counted once", k.name)
        if excerpt and excerpt == k_excerpt:
            return Exclusion("duplicate", f"same excerpt as `{k.name}`: counted once", k.name)
    return None


def admitted(evidence: Sequence[Evidence], as_of: dt.date, policy: Policy) -> list[Evidence]:
    """The items that count, in the order written."""
    out = exclusions(evidence, as_of, policy)
    return [e for e in evidence if e.name not in out]


def effective_weight(e: Evidence, policy: Policy) -> float:
    tier_weight = policy.evidence.tier_weight.get(str(e.tier), 0.0)
    return checked(e.weight * tier_weight, f"the weight of evidence `{e.name}` × its tier's", e.weight, tier_weight)


def saturating_sum(weights: Sequence[float], decay: float) -> tuple[int, int]:
    """S(x) = Σ x_(i)·decay^i over the weights sorted descending, exactly: (N, K) with
    S = N / 2**K (see `pcsc.score.exact`).

    W is computed exactly and rounded to a float once, so what holds for real numbers
    holds for the output: W never falls when a supporting item is added and never
    rises when a contradicting one is. (In floats, the sum and S/(1+S) can each move
    the wrong way by an ulp.)"""
    step, step_k = dyadic(decay)
    num, k = 0, 0
    power, power_k = 1, 0  # decay**i == power / 2**power_k
    for w in sorted(weights, reverse=True):
        a, a_k = dyadic(w)
        term, term_k = a * power, a_k + power_k
        if term_k > k:
            num, k = num << (term_k - k), term_k
        num += term << (k - term_k)
        power, power_k = power * step, power_k + step_k
    return num, k


def exact_sat(weights: Sequence[float], decay: float) -> tuple[int, int]:
    """sat(x) = S / (1 + S), exactly, as (numerator, denominator)."""
    num, k = saturating_sum(weights, decay)
    return num, (1 << k) + num


def sat(weights: Sequence[float], decay: float) -> float:
    """sat(x) = S / (1 + S), correctly rounded; in [0, 1) for non-negative weights."""
    num, den = exact_sat(weights, decay)
    return num / den


def clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def exact_W(sup: Sequence[float], con: Sequence[float], rw: Reweighting) -> float:
    """clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max), computed exactly, rounded once."""
    nc, dc = exact_sat(sup, rw.decay)
    nk, dk = exact_sat(con, rw.decay)
    gc, gc_k = dyadic(rw.corroborate_gain)
    gk, gk_k = dyadic(rw.contradict_gain)
    # 1 + (gc / 2**gc_k)(nc / dc) − (gk / 2**gk_k)(nk / dk) == num / den, den > 0
    den = (dc * dk) << (gc_k + gk_k)
    num = den + ((gc * nc * dk) << gk_k) - ((gk * nk * dc) << gc_k)
    lo, lo_k = dyadic(rw.w_min)
    hi, hi_k = dyadic(rw.w_max)
    if num << lo_k < lo * den:
        return rw.w_min
    if num << hi_k > hi * den:
        return rw.w_max
    return ratio(num, den, "W = 1 + gc·sat(C) − gk·sat(K)")


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
    for e in admitted(evidence, as_of, policy):
        if transition in e.supports:
            sup.append((e.name, effective_weight(e, policy)))
        if transition in e.contradicts:
            con.append((e.name, effective_weight(e, policy)))
    sup.sort(key=lambda x: (-x[1], x[0]))
    con.sort(key=lambda x: (-x[1], x[0]))
    if not sup and not con:
        return Reweight((), (), 0.0, 0.0, 1.0)
    cs, ks = [w for _, w in sup], [w for _, w in con]
    W = exact_W(cs, ks, rw)
    return Reweight(tuple(sup), tuple(con), sat(cs, rw.decay), sat(ks, rw.decay), W)
