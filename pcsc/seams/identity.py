"""The deletion identity in exact rationals (DESIGN §7).

    Δ_k = (Π_{i<k} p_i) · [c_k + (1 − p_k)·R_{k+1}]

Floats enter as `Fraction(x)`, which is exact, so the formula and the re-fold of the
spliced chain agree to the last bit or the identity is false.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import attrs


def fold_exact(ps: Sequence[Fraction], cs: Sequence[Fraction], value: Fraction) -> list[Fraction]:
    """R_n = V; R_i = −c_i + p_i·R_{i+1}, in rationals. Returns [R_0, …, R_n]."""
    R = [Fraction(0)] * (len(ps) + 1)
    R[-1] = value
    for i in range(len(ps) - 1, -1, -1):
        R[i] = -cs[i] + ps[i] * R[i + 1]
    return R


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

    @property
    def identity_holds(self) -> bool:
        return self.delta_formula == self.delta_refold

    @property
    def silence_rewarded(self) -> bool:
        return self.delta_refold > 0

    @property
    def sign_matches(self) -> bool | None:
        """The corollary: for reach > 0 and p_k < 1, Δ_k > 0 ⇔ R_{k+1} > −c_k/(1 − p_k).
        None where its premises fail (it says nothing there)."""
        if self.reach <= 0 or self.threshold is None:
            return None
        return (self.delta_formula > 0) == (self.R_next > self.threshold)


def seam_identity(ps: Sequence[float], cs: Sequence[float], value: float, k: int) -> SeamIdentity:
    P = [Fraction(p) for p in ps]
    C = [Fraction(c) for c in cs]
    V = Fraction(value)
    R = fold_exact(P, C, V)
    reach = Fraction(1)
    for p in P[:k]:
        reach *= p
    formula = reach * (C[k] + (1 - P[k]) * R[k + 1])
    spliced = fold_exact(P[:k] + P[k + 1 :], C[:k] + C[k + 1 :], V)
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


def fraction_text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"
