"""The deletion identity of a chain whose states carry payoffs (docs/formulas.md).

The fold is R_n = V, R_i = −c_i + q_i·(w_i + R_{i+1}), q_i = p_i·d_i, w_i the payoff
of the state e_i reaches (state i + 1, so w_i = v_{i+1}), under `fold.abandonment`
R_i = max(0, that). Deleting e_k retargets e_{k−1} to state k + 1 and drops state k,
whose payoff v_k = w_{k−1} goes with it: the spliced chain is the original without
(p_k, d_k, c_k) and without w_{k−1}, so e_{k−1} then earns w_k.

With the prefix e_0 … e_{k−1} as a function F(y) of what e_{k−1} leads to, the original
has y = w_{k−1} + R_k and the spliced chain y' = w_k + R_{k+1}; Δ_k = F(y') − F(y).
Without the option to stop F is affine with slope Q_k = Π_{i<k} q_i, so

    Δ_k = Q_k · [c_k − v_k + (1 − p_k·d_k)·(v_{k+1} + R_{k+1})]

(the removed cost, minus the removed payoff, plus the retained value), and for Q_k > 0,
q_k < 1: Δ_k > 0 ⇔ R_{k+1} > (v_k − c_k)/(1 − q_k) − v_{k+1}.

With the option to stop, the planner's first stop from the start decides F: when it
stops first before e_j (j < k), F = L_j(w_{j−1}), else F = L_k(y), with
L_j(x) = −Σ_{i<j} Q_i·c_i + Σ_{i<j−1} Q_{i+1}·w_i + Q_j·x the plain prefix fold of
e_0 … e_{j−1} when e_{j−1} leads to x (L_0 = 0: the planner does not start). Cases:

    neither chain stops in the prefix, the planner continues at k:
        Δ_k = Q_k · [c_k − v_k + (1 − q_k)·(v_{k+1} + R_{k+1})]
    neither stops in the prefix, the planner stops at k:  Δ_k = Q_k · (v_{k+1} + R_{k+1} − v_k)
    a chain stops in the prefix (first before e_j, resp. e_j'):  Δ_k = L_j'(·) − L_j(·)

Sign: R_k ≤ w_k + R_{k+1}, so y' ≥ y − v_k, and F rises with slope at most Q_k, hence
Δ_k ≥ −Q_k·v_k: deleting a step lowers the score by at most the reach-weighted payoff it
deletes (Δ_k ≥ 0 without payoffs, as for the fold without them).

The proof is per shape (n, k) on the prefix 0..k with R_{k+1} a free generator and a
generator w_i per payoff; under abandonment per case, the max resolved as the case says
(every first stop j, j' of each chain, and continue or stop at k). Nothing here imports
sympy at module level: the exact check is on the hot path of `pcsc seams`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from typing import Any

from pcsc.analysis.seams import proven
from pcsc.analysis.seams.identity import SeamIdentity
from pcsc.score.fold import chain_fold


def first_stop(Q: Sequence[Any], C: Sequence[Any], W: Sequence[Any], k: int, y: Any) -> int | None:
    """The first stage of e_0 … e_{k−1} (from the start) the planner stops before, when
    e_{k−1} leads to y; None when it walks the whole prefix."""
    R = chain_fold(Q[:k], C[:k], y - W[k - 1], vs=W[:k], stop=True) if k else [y]
    for i in range(k):
        if -C[i] + Q[i] * (W[i] + R[i + 1]) < 0:
            return i
    return None


def prefix_value(Q: Sequence[Any], C: Sequence[Any], W: Sequence[Any], j: int, x: Any) -> Any:
    """L_j(x) in closed form: −Σ_{i<j} Q_i·c_i + Σ_{i<j−1} Q_{i+1}·w_i + Q_j·x (0 for j = 0)."""
    if j == 0:
        return 0 * x
    reach, total = 1, 0 * x
    for i in range(j):
        total = total - reach * C[i]
        reach = reach * Q[i]
        if i < j - 1:
            total = total + reach * W[i]
    return total + reach * x


def _formula(Q: Sequence[Any], C: Sequence[Any], W: Sequence[Any], k: int, after: Any, case: str,
             stops: tuple[int | None, int | None]) -> Any:
    """Δ_k in ``case`` (see the module); ``after`` is v_{k+1} + R_{k+1}; ``stops`` the first
    stops (original, spliced) in the prefix."""
    reach = prefix_value(Q, C, W, k, 1) - prefix_value(Q, C, W, k, 0) if k else 1  # Q_k
    if case == "continue":
        return reach * (C[k] - W[k - 1] + (1 - Q[k]) * after)
    if case == "stop":
        return reach * (after - W[k - 1])
    j, j2 = stops
    spliced = prefix_value(Q, C, W, k, after) if j2 is None else prefix_value(Q, C, W, j2, W[j2 - 1] if j2 else 0)
    original_y = W[k - 1] + _clip(-C[k] + Q[k] * after)
    original = prefix_value(Q, C, W, k, original_y) if j is None else prefix_value(Q, C, W, j, W[j - 1] if j else 0)
    return spliced - original


def _clip(r: Any) -> Any:
    return r if r >= 0 else 0 * r


def payoff_seam_identities(
    ps: Sequence[float], cs: Sequence[float], ds: Sequence[float], ws: Sequence[float], value: float,
    ks: Sequence[int], abandonment: bool,
) -> list[SeamIdentity]:
    """The identity with payoffs on each seam of ``ks``, beside the re-fold of the spliced
    chain, in exact rationals (d_i as the rationals of their floats)."""
    Q = [Fraction(p) * Fraction(d) for p, d in zip(ps, ds, strict=True)]
    C = [Fraction(c) for c in cs]
    W = [Fraction(w) for w in ws]
    V = Fraction(value)
    n = len(ps)
    R = chain_fold(Q, C, V, vs=W, stop=abandonment)
    out = []
    for k in ks:
        if not 1 <= k <= n - 2:
            raise ValueError(f"seam k={k} is not interior for n={n}")
        spliced = chain_fold(Q[:k] + Q[k + 1:], C[:k] + C[k + 1:], V, vs=W[:k - 1] + W[k:], stop=abandonment)
        reach = prefix_value(Q, C, W, k, Fraction(1)) - prefix_value(Q, C, W, k, Fraction(0))
        after = W[k] + R[k + 1]
        kept = 1 - Q[k]
        case, stops = payoff_case(Q, C, W, R, k, abandonment)
        out.append(
            SeamIdentity(
                k=k,
                delta_formula=_formula(Q, C, W, k, after, case, stops),
                delta_refold=spliced[0] - R[0],
                reach=reach,
                removed_cost=reach * C[k],
                retained_value=reach * kept * after,
                threshold=None if kept == 0 else (W[k - 1] - C[k]) / kept - W[k],
                R_next=R[k + 1],
                fold="abandonment" if abandonment else "discounted",
                case=case if abandonment else None,
                removed_payoff=reach * W[k - 1],
            )
        )
    return out


def payoff_case(Q: Sequence[Fraction], C: Sequence[Fraction], W: Sequence[Fraction], R: Sequence[Fraction], k: int,
                abandonment: bool) -> tuple[str, tuple[int | None, int | None]]:
    """Which case holds at seam k, and the first stops (original, spliced) in the prefix."""
    if not abandonment:
        return "continue", (None, None)
    j = first_stop(Q, C, W, k, W[k - 1] + R[k])
    j2 = first_stop(Q, C, W, k, W[k] + R[k + 1])
    if j is None and j2 is None:
        return ("continue" if -C[k] + Q[k] * (W[k] + R[k + 1]) >= 0 else "stop"), (None, None)
    return "prefix-stops", (j, j2)


# --- symbolic ---------------------------------------------------------------------------

@cache
def _ring(n: int) -> tuple[list[Any], list[Any], list[Any], Any]:
    from sympy import QQ
    from sympy.polys.rings import ring

    names = [f"q{i}" for i in range(n)] + [f"c{i}" for i in range(n)] + [f"w{i}" for i in range(n)] + ["R"]
    _, *gens = ring(names, QQ)
    return gens[:n], gens[n: 2 * n], gens[2 * n: 3 * n], gens[3 * n]


def _resolved(Q: list[Any], C: list[Any], W: list[Any], k: int, y: Any, j: int | None) -> Any:
    """R_0 of the prefix e_0 … e_{k−1} from y, the max resolved: the planner stops first
    before e_j (j None: it walks the prefix), by the fold itself."""
    if j is None:
        return chain_fold(Q[:k], C[:k], y - W[k - 1], vs=W[:k])[0]
    if j == 0:
        return 0 * y
    return chain_fold(Q[:j], C[:j], 0 * y, vs=W[:j])[0]


def _fold_name(abandonment: bool) -> str:
    return "payoffs-abandonment" if abandonment else "payoffs"


def verify_payoff_shape(n: int, k: int, abandonment: bool) -> bool:
    """The shipped table's entry (`pcsc.analysis.seams.proven`), else `prove_payoff_shape`."""
    return proven.holds(_fold_name(abandonment), n, k) or prove_payoff_shape(n, k, abandonment)


@cache
def prove_payoff_shape(n: int, k: int, abandonment: bool) -> bool:
    """spliced − original − Δ_k = 0 as a polynomial in q, c, w and R_{k+1}, in every case."""
    if not 1 <= k <= n - 2:
        raise ValueError(f"seam k={k} is not interior for n={n}")
    Q, C, W, R = _ring(n)
    after = W[k] + R
    spliced_W = W[:k - 1] + W[k:]
    continued = W[k - 1] + (-C[k] + Q[k] * after)  # y when the planner continues at k
    cases: list[tuple[str, Any, tuple[int | None, int | None]]] = [("continue", continued, (None, None))]
    if abandonment:
        cases.append(("stop", W[k - 1] + 0 * R, (None, None)))
        for j in [None, *range(k)]:
            for j2 in [None, *range(k)]:
                if j is None and j2 is None:
                    continue
                for y in (continued, W[k - 1] + 0 * R):
                    cases.append(("prefix-stops", y, (j, j2)))
    for case, y, (j, j2) in cases:
        original = _resolved(Q, C, W, k, y, j)
        spliced = _resolved(Q, C, spliced_W, k, after, j2)
        if case == "prefix-stops":
            # the formula with the stage-k max resolved as y says
            formula = _case_formula(Q, C, W, k, after, y, (j, j2))
        else:
            formula = _formula(Q, C, W, k, after, case, (j, j2))
        if spliced - original - formula != 0:
            return False
    return True


def _case_formula(Q: list[Any], C: list[Any], W: list[Any], k: int, after: Any, y: Any,
                  stops: tuple[int | None, int | None]) -> Any:
    """L_j' − L_j in closed form, with the original's y given (symbols cannot be compared)."""
    j, j2 = stops
    spliced = prefix_value(Q, C, W, k, after) if j2 is None else prefix_value(Q, C, W, j2, W[j2 - 1] if j2 else 0)
    original = prefix_value(Q, C, W, k, y) if j is None else prefix_value(Q, C, W, j, W[j - 1] if j else 0)
    return spliced - original


def payoff_derivation(n: int, k: int, abandonment: bool) -> dict[str, Any]:
    """For `pcsc seams --symbolic` on a chain with payoffs: the shipped table's entry
    (`pcsc.analysis.seams.proven`), else `derive_payoffs`."""
    stored = proven.stored_derivation(_fold_name(abandonment), n, k)
    return stored if stored is not None else derive_payoffs(n, k, abandonment)


def derive_payoffs(n: int, k: int, abandonment: bool) -> dict[str, Any]:
    """By sympy: spliced − original with a
    symbol for every q_i = p_i·d_i, c_i, payoff w_i (w_i = v_{i+1}) and R_{k+1}, factored,
    beside the formula and the residual; under the option to stop, one row for each case
    that walks the prefix (the proof also covers every first stop in it)."""
    import sympy

    Q, C, W = (list(sympy.symbols(f"{x}0:{n}")) for x in "qcw")
    R = sympy.Symbol(f"R{k + 1}")
    after = W[k] + R
    spliced = _resolved(Q, C, W[:k - 1] + W[k:], k, after, None)
    rows = []
    for case, y in (("continue", W[k - 1] - C[k] + Q[k] * after), ("stop", W[k - 1])):
        formula = _formula(Q, C, W, k, after, case, (None, None))
        difference = sympy.factor(sympy.expand(spliced - _resolved(Q, C, W, k, y, None)))
        rows.append({"case": case, "difference": sympy.sstr(difference), "formula": sympy.sstr(formula),
                     "residual": sympy.sstr(sympy.expand(difference - formula))})
    out: dict[str, Any] = {"fold": _fold_name(abandonment), "shape": f"n={n}, k={k}",
                           "verified": str(prove_payoff_shape(n, k, abandonment))}
    if abandonment:
        return {**out, "cases": rows}
    return {**out, **{key: rows[0][key] for key in ("difference", "formula", "residual")}}
