"""The deletion identity in exact rationals (docs/coverage.md).

    Δ_k = (Π_{i<k} p_i) · [c_k + (1 − p_k)·R_{k+1}]

Floats enter as `Fraction(x)`, which is exact, so the formula and the re-fold of the
spliced chain agree to the last bit or the identity is false.

`seam_identities` does every seam of a chain at once, in time linear in n: one exact
fold, and the prefix of the chain as an affine map R_0 = A_k + reach_k·R_k built up
seam by seam, so the spliced chain (the same prefix, then R_{k+1}) re-folds in two
operations. Every float is a dyadic rational m/2^e, and so is every number of the
fold, so that arithmetic runs on integers (no gcd, `Dyadic`) and only the results
become `Fraction`s, equal to those `seam_identity` computes one seam at a time. Both
fold with the one chain fold (`pcsc.score.fold`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import attrs

from pcsc.score.fold import chain_fold


@attrs.frozen
class SeamIdentity:
    k: int
    delta_formula: Fraction
    delta_refold: Fraction
    reach: Fraction  # Π_{i<k} p_i
    removed_cost: Fraction  # reach · c_k
    retained_value: Fraction  # reach · (1 − p_k) · R_{k+1}
    threshold: Fraction | None  # −c_k / (1 − p_k); None when p_k = 1
    R_next: Fraction  # R_{k+1}
    fold: str = "chain"  # "chain" (the paper's), "discounted", "abandonment" (pcsc.analysis.seams.folds),
    # "graph", "graph-abandonment" (pcsc.analysis.seams.graphs)
    case: str | None = None  # under abandonment, or on a graph: which case of the identity holds
    local: Fraction | None = None  # on a graph, inside a parallel block: δ_j, the change of its spine item
    removed_payoff: Fraction = Fraction(0)  # reach · v_k: the payoff of the state e_k leaves, deleted with it

    @property
    def identity_holds(self) -> bool:
        return self.delta_formula == self.delta_refold

    @property
    def silence_rewarded(self) -> bool:
        return self.delta_refold > 0

    @property
    def sign_matches(self) -> bool | None:
        """The corollary: for reach > 0 and p_k < 1, Δ_k > 0 ⇔ R_{k+1} > −c_k/(1 − p_k).
        None where its premises fail (it says nothing there). Discounted: p_k·d_k for
        p_k. Under abandonment the sign condition is Δ_k ≥ 0 on every seam (Δ_k ≥ −reach·v_k
        when the state e_k leaves has a payoff v_k). With payoffs the threshold is
        (v_k − c_k)/(1 − q_k) − v_{k+1}."""
        if self.fold in ("abandonment", "graph-abandonment"):
            return self.delta_formula >= -self.removed_payoff
        if self.reach <= 0 or self.threshold is None:
            return None
        return (self.delta_formula > 0) == (self.R_next > self.threshold)


def seam_identity(ps: Sequence[float], cs: Sequence[float], value: float, k: int) -> SeamIdentity:
    P = [Fraction(p) for p in ps]
    C = [Fraction(c) for c in cs]
    V = Fraction(value)
    R = chain_fold(P, C, V)
    reach = Fraction(1)
    for p in P[:k]:
        reach *= p
    formula = reach * (C[k] + (1 - P[k]) * R[k + 1])
    spliced = chain_fold(P[:k] + P[k + 1 :], C[:k] + C[k + 1 :], V)
    threshold = None if P[k] == 1 else -C[k] / (1 - P[k])
    return SeamIdentity(
        k=k,
        delta_formula=formula,
        delta_refold=spliced[0] - R[0],
        reach=reach,
        removed_cost=reach * C[k],
        retained_value=reach * (1 - P[k]) * R[k + 1],
        threshold=threshold,
        R_next=R[k + 1],
    )


class Dyadic:
    """The rational m / 2**e, on integers: sums and products of floats stay dyadic, so
    they need no gcd (a `Fraction` reduces at every step)."""

    __slots__ = ("m", "e")

    def __init__(self, m: int, e: int) -> None:
        self.m, self.e = m, e

    @classmethod
    def of(cls, x: float | Fraction) -> Dyadic:
        m, d = x.as_integer_ratio()
        e = d.bit_length() - 1
        if d != 1 << e:
            raise ValueError(f"{x!r} is not a dyadic rational")
        return cls(m, e)

    def __neg__(self) -> Dyadic:
        return Dyadic(-self.m, self.e)

    def __add__(self, other: Dyadic) -> Dyadic:
        if self.e >= other.e:
            return Dyadic(self.m + (other.m << (self.e - other.e)), self.e)
        return Dyadic((self.m << (other.e - self.e)) + other.m, other.e)

    def __sub__(self, other: Dyadic) -> Dyadic:
        if self.e >= other.e:
            return Dyadic(self.m - (other.m << (self.e - other.e)), self.e)
        return Dyadic((self.m << (other.e - self.e)) - other.m, other.e)

    def __mul__(self, other: Dyadic) -> Dyadic:
        return Dyadic(self.m * other.m, self.e + other.e)

    def __lt__(self, other: Dyadic) -> bool:
        return (self - other).m < 0

    def fraction(self) -> Fraction:
        """m/2^e in lowest terms, without a gcd: strip the common factors of two."""
        m, e = self.m, self.e
        if m == 0:
            return Fraction(0)
        shift = min((m & -m).bit_length() - 1, e)
        m, e = m >> shift, e - shift
        return _make(m, 1 << e)


def _coprime(numerator: int, denominator: int) -> Fraction:
    """A Fraction of coprime integers, without the gcd (CPython 3.11's private flag)."""
    made: Fraction = Fraction(numerator, denominator, _normalize=False)  # type: ignore[call-overload]
    return made


def _normalised(numerator: int, denominator: int) -> Fraction:
    return Fraction(numerator, denominator)


try:
    _coprime(1, 2)
    _make = _coprime
except TypeError:  # a Python without the flag: the public constructor
    _make = _normalised


_ONE = Dyadic(1, 0)


def seam_identities(ps: Sequence[float], cs: Sequence[float], value: float, ks: Sequence[int]) -> list[SeamIdentity]:
    """`seam_identity(ps, cs, value, k)` for every k of ``ks`` (ascending interior
    seams), in time linear in n (see the module)."""
    n = len(ps)
    P = [Dyadic.of(p) for p in ps]
    C = [Dyadic.of(c) for c in cs]
    R = chain_fold(P, C, Dyadic.of(value))
    out = []
    reach = _ONE  # Π_{i<j} p_i
    offset = Dyadic(0, 0)  # A_j: R_0 = A_j + reach_j·R_j
    j = 0
    for k in ks:
        if not 0 <= k < n - 1 or k < j:
            raise ValueError(f"seams must be ascending and interior, not k={k} for n={n}")
        while j < k:
            offset = offset - reach * C[j]
            reach = reach * P[j]
            j += 1
        spliced_R0 = offset + reach * R[k + 1]  # the prefix, then R_{k+1}
        kept = _ONE - P[k]
        retained = reach * (kept * R[k + 1])
        removed = reach * C[k]
        pk = P[k].fraction()
        out.append(
            SeamIdentity(
                k=k,
                delta_formula=(removed + retained).fraction(),
                delta_refold=(spliced_R0 - R[0]).fraction(),
                reach=reach.fraction(),
                removed_cost=removed.fraction(),
                retained_value=retained.fraction(),
                threshold=None if pk == 1 else -C[k].fraction() / kept.fraction(),
                R_next=R[k + 1].fraction(),
            )
        )
    return out


def fraction_text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"
