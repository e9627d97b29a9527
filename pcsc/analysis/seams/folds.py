"""The deletion identity of each policy fold, in exact rationals and symbolically.

The policy's fold (`pcsc.score.fold.chain_fold`) is R_n = V and
R_i = −c_i + q_i·R_{i+1} with q_i = p_i·d_i, d_i = (1 + r)^(−h_i), and under
`fold.abandonment` R_i = max(0, −c_i + q_i·R_{i+1}). Deleting e_k retargets e_{k−1},
which keeps its own horizon (`pcsc.analysis.seams.splice` keeps it, and `redate` drops the
deleted horizon), so d_{k−1} is unchanged and the spliced chain is the original
without (p_k, d_k, c_k). With Q_k = Π_{i<k} q_i and A_k = −Σ_{i<k} Q_i·c_i:

Discounting (no abandonment). The prefix is affine, R_0 = A_k + Q_k·R_k, and the
spliced R_0 is A_k + Q_k·R_{k+1}, so

    Δ_k = Q_k · [c_k + (1 − p_k·d_k)·R_{k+1}]

the paper's Δ_k with p_i·d_i for p_i (it is the paper's when every d_i = 1).

The option to stop (premises: every c_i ≥ 0, 0 ≤ p_i·d_i ≤ 1). R_{k+1} ≥ 0 (it is a
max, k + 1 ≤ n − 1) and R_k = max(0, −c_k + q_k·R_{k+1}) ≤ R_{k+1}. With costs ≥ 0 a
stage at which the planner stops zeroes every earlier stage, so the prefix from a
value x at position k is F(x) = A_k + Q_k·x when the planner *starts* (every plain
partial fold of the prefix, −Σ_{j≤i<k} (Π_{j≤l<i} q_l)·c_i + (Π_{j≤l<k} q_l)·x, is ≥ 0),
else 0. F is non-decreasing, so four cases:

    both start, continue at k:     Δ_k = Q_k · [c_k + (1 − p_k·d_k)·R_{k+1}]
    both start, stop at k:         Δ_k = Q_k · R_{k+1}
    only the spliced chain starts: Δ_k = A_k + Q_k · R_{k+1}
    neither starts:                Δ_k = 0

(the original starting without the spliced chain cannot happen). Sign: Δ_k ≥ 0 on
every seam: with the option to stop, deleting a step never lowers the score.

Exact arithmetic: (1 + r)^(−h) is irrational in general, so the exact check takes each
d_i as the rational `Fraction(d_i)` of the float the score used; the symbolic proof
keeps d_i as a symbol. The proof is made per shape (n, k) on the prefix 0..k with
R_{k+1} a free generator (as `pcsc.analysis.seams.symbolic` does for the paper's formula), and
under abandonment per case: in each case the fold is a polynomial (the max resolved as
the case says) and the case's formula must equal the difference of the two folds.
`pcsc seams --symbolic` prints that algebra (`fold_derivation`). Which case holds on
a seam is decided by the numbers (`abandonment_case`), under the premises above.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from typing import Any

from pcsc.analysis.seams import proven
from pcsc.analysis.seams.identity import SeamIdentity
from pcsc.score.fold import chain_fold


def _starts(qs: Sequence[Fraction], cs: Sequence[Fraction], k: int, x: Fraction) -> bool:
    """Every plain partial fold of the prefix 0..k−1 from x at position k is ≥ 0."""
    return all(r >= 0 for r in chain_fold(qs[:k], cs[:k], x)[:-1])


def fold_seam_identities(
    ps: Sequence[float], cs: Sequence[float], ds: Sequence[float], value: float, ks: Sequence[int], abandonment: bool
) -> list[SeamIdentity]:
    """The identity of the policy's fold on each seam of ``ks``, with the re-fold of the
    spliced chain beside it, in exact rationals (d_i as the rationals of their floats)."""
    P = [Fraction(p) for p in ps]
    D = [Fraction(d) for d in ds]
    C = [Fraction(c) for c in cs]
    Q = [p * d for p, d in zip(P, D, strict=True)]
    V = Fraction(value)
    n = len(ps)
    R = chain_fold(Q, C, V, stop=abandonment)
    out = []
    for k in ks:
        if not 1 <= k <= n - 2:
            raise ValueError(f"seam k={k} is not interior for n={n}")
        reach, offset = Fraction(1), Fraction(0)  # Q_k and A_k
        for i in range(k):
            offset -= reach * C[i]
            reach *= Q[i]
        spliced = chain_fold(Q[:k] + Q[k + 1 :], C[:k] + C[k + 1 :], V, stop=abandonment)
        kept = 1 - Q[k]
        case = None
        if not abandonment:
            formula = reach * (C[k] + kept * R[k + 1])
        else:
            case = abandonment_case(Q, C, R, k)
            if case == "continue":
                formula = reach * (C[k] + kept * R[k + 1])
            elif case == "stop":
                formula = reach * R[k + 1]
            elif case == "spliced-only":
                formula = offset + reach * R[k + 1]
            else:
                formula = Fraction(0)
        out.append(
            SeamIdentity(
                k=k,
                delta_formula=formula,
                delta_refold=spliced[0] - R[0],
                reach=reach,
                removed_cost=reach * C[k],
                retained_value=reach * kept * R[k + 1],
                threshold=None if kept == 0 else -C[k] / kept,
                R_next=R[k + 1],
                fold="abandonment" if abandonment else "discounted",
                case=case,
            )
        )
    return out


def abandonment_case(Q: Sequence[Fraction], C: Sequence[Fraction], R: Sequence[Fraction], k: int) -> str:
    """Which case of the identity under abandonment holds at seam k (see the module)."""
    spliced_starts = _starts(Q, C, k, R[k + 1])
    original_starts = _starts(Q, C, k, R[k])
    if original_starts and spliced_starts:
        return "continue" if -C[k] + Q[k] * R[k + 1] >= 0 else "stop"
    return "spliced-only" if spliced_starts else "neither"


# --- symbolic ---------------------------------------------------------------------------

Formula = Callable[[list[Any], list[Any], list[Any], Any, int], Any]


def discounted_formula(ps: list[Any], ds: list[Any], cs: list[Any], R_next: Any, k: int) -> Any:
    """Π_{i<k} p_i·d_i · [c_k + (1 − p_k·d_k)·R_{k+1}] over any ring."""
    reach = 1
    for p, d in zip(ps[:k], ds[:k], strict=True):
        reach = reach * p * d
    return reach * (cs[k] + (1 - ps[k] * ds[k]) * R_next)


@cache
def _ring(n: int) -> tuple[list[Any], list[Any], list[Any], Any]:
    from sympy import QQ
    from sympy.polys.rings import ring

    names = [f"p{i}" for i in range(n)] + [f"d{i}" for i in range(n)] + [f"c{i}" for i in range(n)] + ["R"]
    _, *gens = ring(names, QQ)
    return gens[:n], gens[n : 2 * n], gens[2 * n : 3 * n], gens[3 * n]


def _prefix(ps: list[Any], ds: list[Any], cs: list[Any], k: int, x: Any) -> Any:
    """The plain fold of e_0..e_{k−1} from x at position k."""
    return chain_fold(ps[:k], cs[:k], x, ds[:k])[0]


def verify_discounted(n: int, k: int, formula: Formula = discounted_formula) -> bool:
    """Spliced R_0 − original R_0 − formula = 0 as a polynomial in p, d, c and R_{k+1}."""
    if formula is discounted_formula:
        return _verify_discounted(n, k)
    return _check_discounted(n, k, formula)


@cache
def _verify_discounted(n: int, k: int) -> bool:
    return _check_discounted(n, k, discounted_formula)


def _check_discounted(n: int, k: int, formula: Formula) -> bool:
    if not 1 <= k <= n - 2:
        raise ValueError(f"seam k={k} is not interior for n={n}")
    ps, ds, cs, R = _ring(n)
    spliced, original = discounted_folds(ps, ds, cs, R, k)
    return bool(spliced - original - formula(ps, ds, cs, R, k) == 0)


def discounted_folds(ps: list[Any], ds: list[Any], cs: list[Any], R: Any, k: int) -> tuple[Any, Any]:
    """(spliced R_0, original R_0) folded down from R = R_{k+1}, over any ring."""
    return _prefix(ps, ds, cs, k, R), _prefix(ps, ds, cs, k + 1, R)


def abandonment_formulas(ps: list[Any], ds: list[Any], cs: list[Any], R_next: Any, k: int) -> dict[str, Any]:
    """The identity's formula in each case, over any ring."""
    reach, offset = 1, 0
    for i in range(k):
        offset = offset - reach * cs[i]
        reach = reach * ps[i] * ds[i]
    return {
        "continue": reach * (cs[k] + (1 - ps[k] * ds[k]) * R_next),
        "stop": reach * R_next,
        "spliced-only": offset + reach * R_next,
        "neither": 0 * R_next,
    }


#: What each case of the identity under abandonment says (docs/folds.md).
CASE_TEXT = {
    "continue": "both chains start, the planner continues at k",
    "stop": "both chains start, the planner stops at k",
    "spliced-only": "only the spliced chain starts",
    "neither": "neither chain starts",
}


def abandonment_folds(ps: list[Any], ds: list[Any], cs: list[Any], R: Any, k: int) -> dict[str, tuple[Any, Any]]:
    """(spliced R_0, original R_0) in each case, the max resolved as the case says (a
    stage that stops is 0, a prefix that does not start is 0), over any ring."""
    zero = 0 * R
    spliced, original = discounted_folds(ps, ds, cs, R, k)
    return {
        "continue": (spliced, original),
        "stop": (spliced, _prefix(ps, ds, cs, k, zero)),
        "spliced-only": (spliced, zero),
        "neither": (zero, zero),
    }


CaseFormulas = Callable[[list[Any], list[Any], list[Any], Any, int], dict[str, Any]]


def verify_abandonment(n: int, k: int, formulas: CaseFormulas = abandonment_formulas) -> bool:
    """Each case's algebra: with the max resolved as the case says, spliced − original −
    the case's formula = 0 as a polynomial."""
    if formulas is abandonment_formulas:
        return _verify_abandonment(n, k)
    return _check_abandonment(n, k, formulas)


@cache
def _verify_abandonment(n: int, k: int) -> bool:
    return _check_abandonment(n, k, abandonment_formulas)


def _check_abandonment(n: int, k: int, formulas: CaseFormulas) -> bool:
    if not 1 <= k <= n - 2:
        raise ValueError(f"seam k={k} is not interior for n={n}")
    ps, ds, cs, R = _ring(n)
    f = formulas(ps, ds, cs, R, k)
    return all(s - o - f[case] == 0 for case, (s, o) in abandonment_folds(ps, ds, cs, R, k).items())


def verify_fold_shape(n: int, k: int, abandonment: bool) -> bool:
    if proven.holds(_fold_name(abandonment), n, k):
        return True
    return prove_fold_shape(n, k, abandonment)


def prove_fold_shape(n: int, k: int, abandonment: bool) -> bool:
    """The policy fold's identity for (n, k) proved with sympy (no table)."""
    return _verify_abandonment(n, k) if abandonment else _verify_discounted(n, k)


def _fold_name(abandonment: bool) -> str:
    return "abandonment" if abandonment else "discounted"


def fold_derivation(n: int, k: int, abandonment: bool, shape: str | None = None) -> dict[str, Any]:
    """For `pcsc seams --symbolic` under a policy fold: the shipped table's entry
    (`pcsc.analysis.seams.proven`) when ``shape`` is not given, else `derive_fold`."""
    stored = None if shape is not None else proven.stored_derivation(_fold_name(abandonment), n, k)
    return stored if stored is not None else derive_fold(n, k, abandonment, shape)


def derive_fold(n: int, k: int, abandonment: bool, shape: str | None = None) -> dict[str, Any]:
    """By sympy: the difference of the two folds
    with a symbol for every p, d, c and for R_{k+1}, factored, beside the identity's
    formula and the residual; under abandonment one such row per case. The algebra is
    the proof's (`discounted_folds`, `abandonment_folds`), in sympy expressions."""
    import sympy

    ps, ds, cs = (list(sympy.symbols(f"{x}0:{n}")) for x in "pdc")
    R = sympy.Symbol(f"R{k + 1}")
    out: dict[str, Any] = {
        "fold": _fold_name(abandonment),
        "shape": shape or f"n={n}, k={k}",
        "verified": str(prove_fold_shape(n, k, abandonment)),
    }
    if not abandonment:
        return {**out, **_derived(*discounted_folds(ps, ds, cs, R, k), discounted_formula(ps, ds, cs, R, k))}
    formulas = abandonment_formulas(ps, ds, cs, R, k)
    cases = abandonment_folds(ps, ds, cs, R, k)
    out["cases"] = [{"case": case, **_derived(s, o, formulas[case])} for case, (s, o) in cases.items()]
    return out


def _derived(spliced: Any, original: Any, formula: Any) -> dict[str, str]:
    """spliced − original factored, the formula, and their difference expanded."""
    import sympy

    difference = sympy.factor(sympy.cancel(sympy.expand(spliced - original)))
    return {
        "difference": sympy.sstr(difference),
        "formula": sympy.sstr(formula),
        "residual": sympy.sstr(sympy.cancel(sympy.expand(difference - formula))),
    }
