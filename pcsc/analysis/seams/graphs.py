"""The deletion identity on a series-parallel route (docs/graphs.md), exact and symbolic.

A seam e_k (source with one transition in, e_{k−1}, and one out; target neither a join
nor the end state) and e_{k−1} are consecutive edges of one series block S, so the
splice removes e_k from S and changes nothing else. Two places:

On the spine (S is the top-level series): the spine is a chain of blocks with
Q_i = P_i·D_i and C_i, and deleting e_k deletes spine item j; the chain's identity
holds with the spine's blocks for the edges: Δ_k = Q_{<j}·[c_k + (1 − p_k·d_k)·R_{j+1}]
(and its four cases under `fold.abandonment`).

Inside a parallel block: the score is affine in e_k, R = a + reach_k·(−c_k + p_k·x_k)
(x_k its continuation), as long as no parallel block's discount D = min_b D_b moves,
which holds when e_k's d_k = 1 (no discount, or no horizon). Deleting e_k is then
p_k → 1, c_k → 0:

    Δ_k = reach_k · [c_k + (1 − p_k)·x_k]                              ("branch")

the chain's formula with the continuation for R_{k+1}; Δ_k > 0 ⇔ x_k > −c_k/(1 − p_k).
With d_k < 1 the join may wait for another branch after the splice, so the spine item
j's block is recomputed along the path from e_k's series to the spine by the block
rules (series: P·P, D·D, C1 + P1·D1·C2; parallel: ΠP, ΣC, min D) and
Δ_k = Q_{<j}·δ_j, δ_j the change of item j's value −C + P·D·R_{j+1} ("slowest branch").

Under `fold.abandonment` the branches are committed and the option to stop is at the
spine's states: with v_j = −C_j + Q_j·R_{j+1} and δ_j the change above, item j's value
goes from max(0, v_j) to max(0, v_j + δ_j), and the prefix maps y to A_j + Q_{<j}·y when
the planner starts (every partial fold ≥ 0) and to 0 otherwise:
Δ_k = F(max(0, v_j + δ_j)) − F(max(0, v_j)) in four cases (both start, only the spliced
route starts, only the original starts, neither). F is non-decreasing, so Δ_k has the
sign of δ_j or is 0; and δ_j < 0 needs x_k < 0, which makes v_j < 0 (every other term
of v_j is a cost), so the planner stops before item j either way: Δ_k ≥ 0 on every
seam, as on a chain ("only the original starts" cannot happen).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from typing import Any

from pcsc.analysis.seams.folds import _starts, abandonment_case
from pcsc.analysis.seams.identity import SeamIdentity
from pcsc.analysis.seams.payoffs import _formula as payoff_formula
from pcsc.analysis.seams.payoffs import first_stop, payoff_case, prefix_value
from pcsc.analysis.seams.splice import remove_edge
from pcsc.lang.ir.shape import Edge, Parallel, Series, Shape
from pcsc.score.fold import chain_fold
from pcsc.score.graph import Block, GraphFold, edges_of, graph_fold, spine


def _spine_index(shape: Shape, name: str) -> int | None:
    """The spine position of edge ``name`` when it is an item of the top-level series."""
    items = spine(shape)
    return next((j for j, x in enumerate(items) if x == Edge(name)), None)


def _without(g: GraphFold[Any], s: Shape, name: str, pick: Mapping[frozenset[str], str] | None = None) -> Block[Any]:
    """Block s after deleting edge ``name`` from its series, by the block rules along
    the path down to it (every other block is the honest one); ``pick`` names the
    slowest branch of each parallel block after the splice (else the min decides)."""
    if name not in edges_of(s):
        return g.blocks[id(s)]
    one, zero = g.one, g.zero
    if isinstance(s, Series):
        P, C, D, Q = one, zero, one, one
        items, last = s.items, len(s.items) - 1
        for i, item in enumerate(items):
            if item == Edge(name):
                continue
            x = _without(g, item, name, pick)
            C = C + Q * x.C
            Q = Q * x.P * x.D
            P, D = P * x.P, D * x.D
            if g.payoff is not None and i < last:  # e_{k−1} now reaches e_k's target and earns its payoff
                C = C - Q * g.w(g.exit_of(items[i + 1] if items[i + 1] == Edge(name) else item))
        return Block(P, C, D)
    assert isinstance(s, Parallel)
    parts = [_without(g, b, name, pick) for b in s.branches]
    P, C = one, zero
    for x in parts:
        P, C = P * x.P, C + x.C
    if pick is not None:
        heads = [edges_of(b)[0] for b in s.branches]
        return Block(P, C, parts[heads.index(pick[frozenset(edges_of(s)) - {name}])].D)
    return Block(P, C, min(x.D for x in parts))


def graph_seam_identities(
    shape: Shape,
    names: Sequence[str],
    sources: Sequence[str],
    targets: Sequence[str],
    ps: Sequence[float],
    cs: Sequence[float],
    ds: Sequence[float],
    value: float,
    ks: Sequence[int],
    abandonment: bool,
    ws: Sequence[float] | None = None,
) -> list[SeamIdentity]:
    """The identity on each seam of ``ks`` (indices into ``names``), with the re-fold of
    the spliced route beside it, in exact rationals (d as the rationals of their floats);
    ``ws``: each transition's credited payoff, that of its target (`paid_seam_identities`)."""
    if ws is not None:
        return paid_seam_identities(shape, names, sources, targets, ps, cs, ds, ws, value, ks, abandonment)
    P = [Fraction(p) for p in ps]
    C = [Fraction(c) for c in cs]
    D = [Fraction(d) for d in ds]
    V = Fraction(value)
    g = graph_fold(shape, names, sources, targets, P, C, D, V, abandonment)
    items = spine(shape)
    Qs = [g.blocks[id(x)].P * g.blocks[id(x)].D for x in items]
    Cs = [g.blocks[id(x)].C for x in items]
    R = g.spine_R
    out = []
    for k in ks:
        name = names[k]
        p, c, d = P[k], C[k], D[k]
        q = p * d
        reach, x = g.reach[name], g.next[name]
        j = _spine_index(shape, name)
        case: str | None = None
        local: Fraction | None = None
        if j is not None:  # on the spine: the chain's identity over the spine's blocks
            if not abandonment:
                formula = reach * (c + (1 - q) * x)
            else:
                case = abandonment_case(Qs, Cs, R, j)
                prefix_reach, offset = Fraction(1), Fraction(0)
                for i in range(j):
                    offset -= prefix_reach * Cs[i]
                    prefix_reach *= Qs[i]
                formula = {
                    "continue": reach * (c + (1 - q) * x),
                    "stop": reach * x,
                    "spliced-only": offset + reach * x,
                    "neither": Fraction(0),
                }[case]
        else:
            j = g.item_of[name]
            item = items[j]
            honest = g.blocks[id(item)]
            if d == 1:  # the affine case: no discount moves
                local = g.local[name] * (c + (1 - p) * x)
                case = "branch"
            else:
                picked = _slowest_branches(remove_edge(shape, name), dict(zip(names, D, strict=True)))
                new = _without(g, item, name, picked)
                local = (-new.C + new.P * new.D * R[j + 1]) - (-honest.C + honest.P * honest.D * R[j + 1])
                case = "slowest branch"
            prefix_reach, offset = Fraction(1), Fraction(0)
            for i in range(j):
                offset -= prefix_reach * Cs[i]
                prefix_reach *= Qs[i]
            if not abandonment:
                formula = prefix_reach * local if case == "slowest branch" else reach * (c + (1 - p) * x)
            else:
                v = -honest.C + honest.P * honest.D * R[j + 1]
                before, after = max(Fraction(0), v), max(Fraction(0), v + local)
                starts_before = _starts(Qs, Cs, j, before)
                starts_after = _starts(Qs, Cs, j, after)
                formula = (offset + prefix_reach * after if starts_after else Fraction(0)) - (
                    offset + prefix_reach * before if starts_before else Fraction(0)
                )
                case = {
                    (True, True): "both start",
                    (True, False): "only the spliced route starts",
                    (False, True): "only the original starts",
                    (False, False): "neither starts",
                }[(starts_after, starts_before)]
        spliced = graph_fold(remove_edge(shape, name), *_minus(names, sources, targets, P, C, D, k), V, abandonment)
        slowest = case == "slowest branch"
        out.append(
            SeamIdentity(
                k=k,
                delta_formula=formula,
                delta_refold=spliced.score - g.score,
                reach=reach,
                removed_cost=reach * c,
                retained_value=reach * (1 - q) * x,
                threshold=None if q == 1 or slowest else -c / (1 - q),
                R_next=x,
                fold="graph-abandonment" if abandonment else "graph",
                case=case,
                local=local,
            )
        )
    return out


def paid_seam_identities(
    shape: Shape, names: Sequence[str], sources: Sequence[str], targets: Sequence[str], ps: Sequence[float],
    cs: Sequence[float], ds: Sequence[float], ws: Sequence[float], value: float, ks: Sequence[int],
    abandonment: bool,
) -> list[SeamIdentity]:
    """The identity with payoffs (docs/graphs.md, "Payoffs on a graph"): deleting e_k also
    deletes v_k, the payoff of the state it leaves. On the spine, the chain's identity with
    payoffs (`pcsc.analysis.seams.payoffs`) over the spine's blocks, W_i the payoff of
    item i's exit; inside a branch, reach_k·[c_k − v_k + (1 − p_k)·x_k] when d_k = 1
    ("branch"), else Q_{<j}·δ_j ("slowest branch"); under abandonment the spine's prefix
    F, with payoffs, decides: Δ_k = F(max(0, v_j + δ_j)) − F(max(0, v_j)), each F by the
    planner's first stop in the prefix."""
    P, C, D = ([Fraction(x) for x in xs] for xs in (ps, cs, ds))
    Wt = [Fraction(w) for w in ws]
    V = Fraction(value)
    g = graph_fold(shape, names, sources, targets, P, C, D, V, abandonment, vs=Wt)
    at = dict(zip(targets, Wt, strict=True))  # each state's payoff
    items = spine(shape)
    Qs = [g.blocks[id(x)].P * g.blocks[id(x)].D for x in items]
    Cs = [g.blocks[id(x)].C for x in items]
    Ws = g.spine_W
    R = g.spine_R
    out = []
    for k in ks:
        name = names[k]
        p, c, d = P[k], C[k], D[k]
        q = p * d
        v = at.get(sources[k], Fraction(0))  # the payoff of the state e_k leaves
        reach, x = g.reach[name], g.next[name]
        j = _spine_index(shape, name)
        local: Fraction | None = None
        threshold: Fraction | None = None
        if j is not None:  # the chain's identity with payoffs over the spine's blocks
            case, stops = payoff_case(Qs, Cs, Ws, R, j, abandonment)
            formula = payoff_formula(Qs, Cs, Ws, j, Ws[j] + R[j + 1], case, stops)
            threshold = None if q == 1 else (v - c) / (1 - q) - Ws[j]
            R_next = R[j + 1]
            shown: str | None = case if abandonment else None
        else:
            j = g.item_of[name]
            item, honest = items[j], g.blocks[id(items[j])]
            follows = g.after(j)
            if d == 1:  # the affine case: no discount moves
                local = g.local[name] * (c - v + (1 - p) * x)
                shown = "branch"
                threshold = None if p == 1 else (v - c) / (1 - p)
            else:
                picked = _slowest_branches(remove_edge(shape, name), dict(zip(names, D, strict=True)))
                new = _without(g, item, name, picked)
                local = (-new.C + new.P * new.D * follows) - (-honest.C + honest.P * honest.D * follows)
                shown = "slowest branch"
            R_next = x
            prefix_reach = Fraction(1)
            for i in range(j):
                prefix_reach *= Qs[i]
            if not abandonment:
                formula = prefix_reach * local
            else:
                item_value = -honest.C + honest.P * honest.D * follows
                before, after = max(Fraction(0), item_value), max(Fraction(0), item_value + local)
                (f_after, s_after), (f_before, s_before) = (paid_prefix(Qs, Cs, Ws, j, y) for y in (after, before))
                formula = f_after - f_before
                shown = "both walk the prefix" if s_after is None and s_before is None else "prefix-stops"
        s_names, s_sources, s_targets, s_P, s_C, s_D = _minus(names, sources, targets, P, C, D, k)
        spliced = graph_fold(remove_edge(shape, name), s_names, s_sources, s_targets, s_P, s_C, s_D, V,
                             abandonment, vs=[at[t] for t in s_targets])
        out.append(
            SeamIdentity(
                k=k,
                delta_formula=formula,
                delta_refold=spliced.score - g.score,
                reach=reach,
                removed_cost=reach * c,
                retained_value=reach * (1 - q) * x,
                threshold=threshold,
                R_next=R_next,
                fold="graph-abandonment" if abandonment else "graph",
                case=shown,
                local=local,
                removed_payoff=reach * v,
            )
        )
    return out


def paid_prefix(Q: Sequence[Any], C: Sequence[Any], W: Sequence[Any], j: int, y: Any) -> tuple[Any, int | None]:
    """F(y), the score when spine item j is worth y under the option to stop, in closed
    form (`prefix_value` at the planner's first stop in the prefix, or walking it), and
    that first stop (None: it walks the prefix to item j)."""
    if j == 0:
        return y, None
    first = first_stop(Q, C, W, j, W[j - 1] + y)
    if first is None:
        return prefix_value(Q, C, W, j, W[j - 1] + y), None
    return prefix_value(Q, C, W, first, W[first - 1] if first else 0 * y), first


def _minus(
    names: Sequence[str],
    sources: Sequence[str],
    targets: Sequence[str],
    P: Sequence[Fraction],
    C: Sequence[Fraction],
    D: Sequence[Fraction],
    k: int,
) -> tuple[list[str], list[str], list[str], list[Fraction], list[Fraction], list[Fraction]]:
    """The edge lists of the spliced route: e_k gone, its predecessor retargeted."""
    before = next(i for i, t in enumerate(targets) if t == sources[k])
    tgt = [targets[k] if i == before else t for i, t in enumerate(targets)]

    def drop(xs: Sequence[Any]) -> list[Any]:
        return [x for i, x in enumerate(xs) if i != k]

    return drop(names), drop(sources), drop(tgt), drop(P), drop(C), drop(D)


def _slowest_branches(shape: Shape, d: Mapping[str, Fraction]) -> dict[frozenset[str], str]:
    """The slowest branch of each parallel block (named by its first edge, keyed by the
    block's edges): the discounts alone decide it (D_b = Π d along it, the first of the
    smallest)."""
    out: dict[frozenset[str], str] = {}

    def disc(s: Shape) -> Fraction:
        if isinstance(s, Edge):
            return d[s.transition]
        if isinstance(s, Series):
            r = Fraction(1)
            for x in s.items:
                r *= disc(x)
            return r
        ds = [disc(b) for b in s.branches]
        i = min(range(len(ds)), key=lambda i: ds[i])
        out[frozenset(edges_of(s))] = edges_of(s.branches[i])[0]
        return ds[i]

    disc(shape)
    return out


def seam_picks(
    shape: Shape, names: Sequence[str], ds: Sequence[float], k: int
) -> tuple[dict[frozenset[str], str], dict[frozenset[str], str]]:
    """The slowest branches of the honest route and of the route without e_k."""
    d = {n: Fraction(x) for n, x in zip(names, ds, strict=True)}
    return _slowest_branches(shape, d), _slowest_branches(remove_edge(shape, names[k]), d)


def proof_picks(
    shape: Shape, names: Sequence[str], ds: Sequence[float], k: int
) -> tuple[tuple[dict[frozenset[str], str], dict[frozenset[str], str]] | None, str | None]:
    """What the symbolic proof of seam k needs beyond the shape: None when every d is 1
    or the seam is on the spine (the proof needs no discount there); else the slowest
    branches (honest, spliced) and the case, "branch" when the seam's own d is 1."""
    if _spine_index(shape, names[k]) is not None or all(d == 1 for d in ds):
        return None, None
    return seam_picks(shape, names, ds, k), "branch" if ds[k] == 1 else "slowest branch"


# --- symbolic ---------------------------------------------------------------------------


def shape_key(shape: Shape, name: str) -> str:
    """The shape with edges anonymised and the seam marked: `S(e,P(S(e,*),e),e)`."""
    if isinstance(shape, Edge):
        return "*" if shape.transition == name else "e"
    parts = shape.items if isinstance(shape, Series) else shape.branches
    tag = "S" if isinstance(shape, Series) else "P"
    return f"{tag}({','.join(shape_key(p, name) for p in parts)})"


def verify_graph_seam(
    shape: Shape,
    name: str,
    fold: str,
    picks: tuple[Mapping[frozenset[str], str], Mapping[frozenset[str], str]] | None = None,
    case: str | None = None,
    paid: bool = False,
) -> bool:
    """The identity for seam ``name`` proved as a polynomial identity with sympy, per
    shape: on the spine, the chain's proof over the spine's blocks; inside a branch, over
    the SP fold with a symbol for every p and c and for V, and under abandonment also
    each case of the spine's prefix. Without ``picks`` every d = 1 (the paper's fold);
    with them a symbol for every d, each min resolved as ``picks`` says (honest,
    spliced), the seam's own d = 1 in ``case`` "branch"."""
    from pcsc.analysis.seams.folds import verify_fold_shape
    from pcsc.analysis.seams.payoffs import verify_payoff_shape
    from pcsc.analysis.seams.symbolic import verify_shape

    j = _spine_index(shape, name)
    m = len(spine(shape))
    if j is not None:
        if paid:  # the chain's proof with payoffs, over the spine's blocks
            return verify_payoff_shape(m, j, fold == "abandonment")
        return verify_shape(m, j) if fold == "default" else verify_fold_shape(m, j, fold == "abandonment")
    return _verify_branch(*_branch_key(shape, name, fold, picks, case), affine_formula, paid)


def _branch_key(
    shape: Shape,
    name: str,
    fold: str,
    picks: tuple[Mapping[frozenset[str], str], Mapping[frozenset[str], str]] | None,
    case: str | None,
) -> tuple[str, bool, tuple[Picks, Picks] | None, bool]:
    """The arguments of the cached branch proof: the anonymous shape, abandonment, the
    anonymous picks and whether the seam's d is 1 (the case "branch")."""
    key = shape_key(shape, name)
    if picks is None:
        return key, fold == "abandonment", None, False
    anonymous = {e: f"e{i}" for i, e in enumerate(edges_of(shape))}

    def rename(pick: Mapping[frozenset[str], str]) -> tuple[tuple[tuple[str, ...], str], ...]:
        return tuple(sorted((tuple(sorted(anonymous[e] for e in k)), anonymous[v]) for k, v in pick.items()))

    return key, fold == "abandonment", (rename(picks[0]), rename(picks[1])), case == "branch"


Picks = tuple[tuple[tuple[str, ...], str], ...]


BranchFormula = Callable[[GraphFold[Any], str, Any, Any], Any]


def affine_formula(g: GraphFold[Any], name: str, p: Any, c: Any) -> Any:
    """reach_k·[c_k + (1 − p_k)·x_k], over any ring; with payoffs
    reach_k·[c_k − v_k + (1 − p_k)·x_k], v_k the payoff of the state e_k leaves."""
    if g.payoff is not None:
        return g.reach[name] * (c - g.w(g.entry(Edge(name))) + (1 - p) * g.next[name])
    return g.reach[name] * (c + (1 - p) * g.next[name])


def check_branch_formula(shape: Shape, name: str, formula: BranchFormula) -> bool:
    """The symbolic check of a (possibly wrong) formula for a seam inside a branch, every d = 1."""
    return _verify_branch(shape_key(shape, name), False, None, False, formula)


@cache
def _verify_branch(
    key: str, abandonment: bool, picks: tuple[Picks, Picks] | None, unit_seam: bool, affine: BranchFormula,
    paid: bool = False,
) -> bool:
    """``picks`` None: the affine formula, every d = 1, in the polynomial ring. Else a
    symbol for every d, each min resolved as ``picks`` says (honest, spliced), in the
    field of rational functions: with ``unit_seam`` the seam's d = 1 and the affine
    formula, else the slowest-branch formula."""
    from sympy import QQ
    from sympy.polys.fields import field
    from sympy.polys.rings import ring

    n = len(edges_of(_parse_key(key)[0]))
    symbols = [f"p{i}" for i in range(n)] + [f"c{i}" for i in range(n)] + [f"d{i}" for i in range(n)]
    symbols += [f"w{i}" for i in range(n)] if paid else []
    _, *gens = (ring if picks is None else field)([*symbols, "V", "y", "z"], QQ)
    algebra = _branch_algebra(key, abandonment, picks, unit_seam, affine, gens, paid)
    return all(derived - formula == 0 for _, derived, formula in algebra)


def _branch_algebra(
    key: str,
    abandonment: bool,
    picks: tuple[Picks, Picks] | None,
    unit_seam: bool,
    affine: BranchFormula,
    gens: Sequence[Any],
    paid: bool = False,
) -> list[tuple[str, Any, Any]]:
    """What the proof of a branch seam compares, over any ring or field whose generators
    ``gens`` stand for p_0…, c_0…, d_0…, V, y, z: (what, derived, formula) for the
    identity and, under abandonment, for each case of the spine's prefix (y the
    original's value of item j, z the spliced route's)."""
    shape, name = _parse_key(key)
    names = list(edges_of(shape))
    n = len(names)
    m = 4 * n if paid else 3 * n  # with payoffs a generator w per state but the start (by its first edge in)
    ps, cs, V, y, z = list(gens[:n]), list(gens[n : 2 * n]), gens[m], gens[m + 1], gens[m + 2]
    one = V * 0 + 1
    k = names.index(name)
    ds = [one] * n if picks is None else list(gens[2 * n : 3 * n])
    if unit_seam:
        ds[k] = one
    sources, targets = synthetic_states(shape)
    src = [sources[e] for e in names]
    tgt = [targets[e] for e in names]
    hp = None if picks is None else {frozenset(a): b for a, b in picks[0]}
    sp = None if picks is None else {frozenset(a): b for a, b in picks[1]}
    at: dict[str, Any] | None = None
    if paid:
        at = {}
        for i, t in enumerate(tgt):
            at.setdefault(t, gens[3 * n + i])
    honest = graph_fold(shape, names, src, tgt, ps, cs, ds, V, False, hp,
                        None if at is None else [at[t] for t in tgt])
    s_names, s_src, s_tgt, s_ps, s_cs, s_ds = _minus(names, src, tgt, ps, cs, ds, k)
    spliced = graph_fold(remove_edge(shape, name), s_names, s_src, s_tgt, s_ps, s_cs, s_ds, V, False, sp,
                         None if at is None else [at[t] for t in s_tgt])
    j = honest.item_of[name]
    items = spine(shape)
    Qs = [honest.blocks[id(x)].P * honest.blocks[id(x)].D for x in items]
    Cs = [honest.blocks[id(x)].C for x in items]
    if picks is None or unit_seam:
        formula = affine(honest, name, ps[k], cs[k])
    else:
        item, after = items[j], honest.after(j)
        old, new = honest.blocks[id(item)], _without(honest, item, name, sp)
        formula = (-new.C + new.P * new.D * after) - (-old.C + old.P * old.D * after)
        for i in range(j):
            formula = formula * Qs[i]
    out = [("spliced fold − original fold", spliced.score - honest.score, formula)]
    if not abandonment:
        return out
    if paid:  # the spine's prefix with payoffs: walked to item j, or stopped first before item i < j
        Ws = honest.spine_W
        if j == 0:
            return out
        walked = chain_fold(Qs[:j], Cs[:j], y, vs=Ws[:j])[0]
        rows = [("walks the prefix: F(y)", walked, prefix_value(Qs, Cs, Ws, j, Ws[j - 1] + y))]
        for i in range(1, j):
            rows.append((f"stops first before item {i}: F = L_{i}", chain_fold(Qs[:i], Cs[:i], 0 * V, vs=Ws[:i])[0],
                         prefix_value(Qs, Cs, Ws, i, Ws[i - 1] + 0 * V)))
        return out + rows
    offset, reach = 0 * V, one
    for i in range(j):
        offset, reach = offset - reach * Cs[i], reach * Qs[i]

    def prefix(x: Any) -> Any:
        return chain_fold(Qs[:j], Cs[:j], x)[0]

    return out + [
        ("both start: F(z) − F(y)", prefix(z) - prefix(y), reach * (z - y)),
        ("only the spliced route starts: F(z)", prefix(z), offset + reach * z),
        ("only the original starts: −F(y)", -prefix(y), -(offset + reach * y)),
    ]


def synthetic_states(shape: Shape) -> tuple[dict[str, str], dict[str, str]]:
    """Synthetic states for an anonymous shape: each edge's source and target."""
    sources: dict[str, str] = {}
    targets: dict[str, str] = {}
    counter = [0]

    def fresh() -> str:
        counter[0] += 1
        return f"s{counter[0]}"

    def walk(s: Shape, a: str, b: str) -> None:
        if isinstance(s, Edge):
            sources[s.transition], targets[s.transition] = a, b
        elif isinstance(s, Series):
            points = [a] + [fresh() for _ in s.items[1:]] + [b]
            for i, item in enumerate(s.items):
                walk(item, points[i], points[i + 1])
        else:
            for br in s.branches:
                walk(br, a, b)

    walk(shape, "start", "end")
    return sources, targets


def _parse_key(key: str) -> tuple[Shape, str]:
    """The shape of `shape_key` with edges e0, e1, … and the seam's name."""
    pos = 0
    count = 0
    seam = ""

    def parse() -> Shape:
        nonlocal pos, count, seam
        ch = key[pos]
        if ch in "e*":
            pos += 1
            edge = f"e{count}"
            count += 1
            if ch == "*":
                seam = edge
            return Edge(edge)
        pos += 2  # "S(" or "P("
        parts = [parse()]
        while key[pos] == ",":
            pos += 1
            parts.append(parse())
        pos += 1  # ")"
        return Series(tuple(parts)) if ch == "S" else Parallel(tuple(parts))

    shape = parse()
    return shape, seam


def graph_derivation(
    shape: Shape,
    name: str,
    fold: str = "default",
    picks: tuple[Mapping[frozenset[str], str], Mapping[frozenset[str], str]] | None = None,
    case: str | None = None,
    paid: bool = False,
) -> dict[str, Any]:
    """For `pcsc seams --symbolic` on a graph route: what `verify_graph_seam` proves,
    in sympy expressions. On the spine under a policy fold, the chain's derivation over
    the spine's blocks; else the difference of the two series-parallel folds (a symbol
    for every p, c and V, and for every d when ``picks`` are given), factored, beside the
    identity's formula and the residual, and under abandonment each case of the spine's
    prefix."""
    import sympy

    key = shape_key(shape, name)
    j = _spine_index(shape, name)
    m = len(spine(shape))
    if j is not None and paid:  # the chain's derivation with payoffs over the spine's blocks
        from pcsc.analysis.seams.payoffs import payoff_derivation

        return payoff_derivation(m, j, fold == "abandonment")
    if j is not None and fold != "default":
        from pcsc.analysis.seams.folds import fold_derivation

        where = f"graph {key}, spine item {j} of {m} (p_i·d_i: block i's P·D, c_i: its C)"
        return fold_derivation(m, j, fold == "abandonment", where)
    key, abandonment, anonymous_picks, unit_seam = _branch_key(shape, name, fold, picks, case)
    n = len(edges_of(_parse_key(key)[0]))
    gens = [*sympy.symbols(f"p0:{n}"), *sympy.symbols(f"c0:{n}"), *sympy.symbols(f"d0:{n}"),
            *(sympy.symbols(f"w0:{n}") if paid else ()), *sympy.symbols("V y z")]
    algebra = _branch_algebra(key, abandonment, anonymous_picks, unit_seam, affine_formula, gens, paid)
    rows = []
    for what, derived, formula in algebra:
        difference = sympy.factor(sympy.cancel(sympy.expand(derived)))
        rows.append({
            "case": what,
            "difference": sympy.sstr(difference),
            "formula": sympy.sstr(sympy.factor(sympy.cancel(formula))),
            "residual": sympy.sstr(sympy.cancel(sympy.expand(difference - formula))),
        })
    out: dict[str, Any] = {
        "fold": ("graph" if fold == "default" else f"graph-{fold}") + ("-payoffs" if paid else ""),
        "shape": f"graph {key} (edges e0… depth first, * the deleted one"
                 + ("; w_i the payoff of the state e_i reaches first)" if paid else ")"),
        "verified": str(_verify_branch(key, abandonment, anonymous_picks, unit_seam, affine_formula, paid)),
    }
    if len(rows) == 1:
        out.update({k: v for k, v in rows[0].items() if k != "case"})
        if fold == "default" and not paid:
            out["paper"] = out["formula"]
    else:
        out["cases"] = rows
    return out
