"""The deletion identity in exact rationals (docs/coverage.md).

    Δ_k = (Π_{i<k} p_i) · [c_k + (1 − p_k)·R_{k+1}]

Floats enter as `Fraction(x)`, which is exact, so the formula and the re-fold of the
spliced chain agree to the last bit or the identity is false.

`seam_identities` does every seam of a chain at once, in time linear in n: one exact
fold, and the prefix of the chain as an affine map R_0 = A_k + reach_k·R_k built up
seam by seam, so the spliced chain (the same prefix, then R_{k+1}) re-folds in two
operations. Every float is a dyadic rational m/2^e, and so is every number of the
fold, so that arithmetic runs on integers (no gcd) and only the results become
`Fraction`s, equal to those `seam_identity` computes one seam at a time.
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
    fold: str = "chain"  # "chain" (the paper's), "discounted", "abandonment" (pcsc.analysis.seams.folds),
    # "graph", "graph-abandonment" (pcsc.analysis.seams.graphs)
    case: str | None = None  # under abandonment, or on a graph: which case of the identity holds
    local: Fraction | None = None  # on a graph, inside a parallel block: δ_j, the change of its spine item

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
        p_k. Under abandonment the sign condition is Δ_k ≥ 0 on every seam."""
        if self.fold in ("abandonment", "graph-abandonment"):
            return self.delta_formula >= 0
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


Dyadic = tuple[int, int]  # (m, e): the rational m / 2**e


def _dyadic(x: float | Fraction) -> Dyadic:
    m, d = x.as_integer_ratio()
    e = d.bit_length() - 1
    if d != 1 << e:
        raise ValueError(f"{x!r} is not a dyadic rational")
    return m, e


def _add(a: Dyadic, b: Dyadic) -> Dyadic:
    (ma, ea), (mb, eb) = a, b
    if ea >= eb:
        return ma + (mb << (ea - eb)), ea
    return (ma << (eb - ea)) + mb, eb


def _sub(a: Dyadic, b: Dyadic) -> Dyadic:
    return _add(a, (-b[0], b[1]))


def _mul(a: Dyadic, b: Dyadic) -> Dyadic:
    return a[0] * b[0], a[1] + b[1]


def _fraction(a: Dyadic) -> Fraction:
    """m/2^e in lowest terms, without a gcd: strip the common factors of two."""
    m, e = a
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


_ONE: Dyadic = (1, 0)


def seam_identities(ps: Sequence[float], cs: Sequence[float], value: float, ks: Sequence[int]) -> list[SeamIdentity]:
    """`seam_identity(ps, cs, value, k)` for every k of ``ks`` (ascending interior
    seams), in time linear in n (see the module)."""
    n = len(ps)
    P = [_dyadic(p) for p in ps]
    C = [_dyadic(c) for c in cs]
    R: list[Dyadic] = [_dyadic(value)] * (n + 1)
    for i in range(n - 1, -1, -1):
        R[i] = _sub(_mul(P[i], R[i + 1]), C[i])
    out = []
    reach: Dyadic = _ONE  # Π_{i<j} p_i
    offset: Dyadic = (0, 0)  # A_j: R_0 = A_j + reach_j·R_j
    j = 0
    for k in ks:
        if not 0 <= k < n - 1 or k < j:
            raise ValueError(f"seams must be ascending and interior, not k={k} for n={n}")
        while j < k:
            offset = _sub(offset, _mul(reach, C[j]))
            reach = _mul(reach, P[j])
            j += 1
        spliced_R0 = _add(offset, _mul(reach, R[k + 1]))  # the prefix, then R_{k+1}
        kept = _sub(_ONE, P[k])
        retained = _mul(reach, _mul(kept, R[k + 1]))
        removed = _mul(reach, C[k])
        pk = _fraction(P[k])
        out.append(
            SeamIdentity(
                k=k,
                delta_formula=_fraction(_add(removed, retained)),
                delta_refold=_fraction(_sub(spliced_R0, R[0])),
                reach=_fraction(reach),
                removed_cost=_fraction(removed),
                retained_value=_fraction(retained),
                threshold=None if pk == 1 else -_fraction(C[k]) / _fraction(kept),
                R_next=_fraction(R[k + 1]),
            )
        )
    return out


def fraction_text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"
