"""Symbolic verification of the deletion identity with sympy (imported only here).

For a chain of n transitions and a seam k, the claim is

    fold(spliced) − fold(original) − Π_{i<k} p_i·[c_k + (1 − p_k)·R_{k+1}] = 0

as a polynomial in p_0…p_{n−1}, c_0…c_{n−1}, V over QQ. It is checked in sympy's
sparse polynomial ring (canonical form: equal polynomials are equal objects), never
with `simplify`, `equals` or `subs`, and cached per shape (n, k).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

Formula = Callable[[list[Any], list[Any], Any, int], Any]


def paper_formula(ps: list[Any], cs: list[Any], R_next: Any, k: int) -> Any:
    """Π_{i<k} p_i · [c_k + (1 − p_k)·R_{k+1}] over any ring."""
    reach = 1
    for p in ps[:k]:
        reach = reach * p
    return reach * (cs[k] + (1 - ps[k]) * R_next)


def _fold(ps: list[Any], cs: list[Any], value: Any) -> list[Any]:
    R = [value] * (len(ps) + 1)
    for i in range(len(ps) - 1, -1, -1):
        R[i] = -cs[i] + ps[i] * R[i + 1]
    return R


def verify_shape(n: int, k: int, formula: Formula = paper_formula) -> bool:
    """True when the identity holds symbolically for (n, k) with ``formula``."""
    if formula is paper_formula:
        return _verify_cached(n, k)
    return _verify(n, k, formula)


@cache
def _verify_cached(n: int, k: int) -> bool:
    return _verify(n, k, paper_formula)


@cache
def _ring(n: int) -> tuple[Any, list[Any], list[Any], Any]:
    from sympy import QQ
    from sympy.polys.rings import ring

    names = [f"p{i}" for i in range(n)] + [f"c{i}" for i in range(n)] + ["V"]
    R, *gens = ring(names, QQ)
    return R, gens[:n], gens[n : 2 * n], gens[2 * n]


def _verify(n: int, k: int, formula: Formula) -> bool:
    if not 1 <= k <= n - 2:
        raise ValueError(f"seam k={k} is not interior for n={n}")
    _, ps, cs, V = _ring(n)
    original = _fold(ps, cs, V)
    spliced = _fold(ps[:k] + ps[k + 1 :], cs[:k] + cs[k + 1 :], V)
    residual = spliced[0] - original[0] - formula(ps, cs, original[k + 1], k)
    return bool(residual == 0)


def derivation(n: int, k: int) -> dict[str, str]:
    """For `pcsc seams --symbolic`: the difference of the two symbolic folds, with
    R_{k+1} kept as a symbol, factored; the paper's formula; and the residual."""
    import sympy

    ps = list(sympy.symbols(f"p0:{n}"))
    cs = list(sympy.symbols(f"c0:{n}"))
    R_next = sympy.Symbol(f"R{k + 1}")
    # fold the prefix 0..k of both chains down from R_{k+1}
    orig = -cs[k] + ps[k] * R_next
    for i in range(k - 1, -1, -1):
        orig = -cs[i] + ps[i] * orig
    spliced = R_next
    for i in range(k - 1, -1, -1):
        spliced = -cs[i] + ps[i] * spliced
    difference = sympy.factor(sympy.expand(spliced - orig))
    paper = paper_formula(ps, cs, R_next, k)
    residual = sympy.expand(difference - paper)
    return {
        "shape": f"n={n}, k={k}",
        "difference": sympy.sstr(difference),
        "paper": sympy.sstr(paper),
        "residual": sympy.sstr(residual),
        "verified": str(verify_shape(n, k)),
    }
