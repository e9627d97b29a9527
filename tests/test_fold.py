"""The one chain fold (`pcsc.score.fold.chain_fold`) and the one choice of fold
(`pcsc.score.route.route_fold`): each against a fold written here from its definition,
on random chains in floats, `Fraction`s and sympy; and the recurrence written nowhere
else in the library (the certificate checker keeps its own on purpose)."""

from __future__ import annotations

import ast
import math
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.analysis.seams import symbolic
from pcsc.lang.ir.shape import Edge, Parallel, Series
from pcsc.policy.model import FoldPolicy
from pcsc.score import fold as fold_module
from pcsc.score.finite import NotFinite
from pcsc.score.fold import ChainFold, chain_fold
from pcsc.score.graph import GraphFold
from pcsc.score.route import route_fold
from tests.conftest import ROOT

probabilities = st.fractions(0, 1, max_denominator=64)
discounts = st.fractions(Fraction(1, 2), 1, max_denominator=64)
costs = st.fractions(0, 10**6, max_denominator=16)
values = st.fractions(0, 10**9, max_denominator=16)
chains = st.lists(st.tuples(probabilities, costs, discounts), min_size=0, max_size=8)


def definition(steps: list[tuple[Fraction, Fraction, Fraction]], value: Fraction, stop: bool, i: int = 0) -> Fraction:
    """R_i from the definition, by recursion: V at the end; −c_i + p_i·d_i·R_{i+1} before
    it, and 0 instead when that is negative under the option to stop."""
    if i == len(steps):
        return value
    p, c, d = steps[i]
    r = -c + p * d * definition(steps, value, stop, i + 1)
    return max(Fraction(0), r) if stop else r


def unrolled(steps: list[tuple[Fraction, Fraction, Fraction]], value: Fraction) -> Fraction:
    """R_0 without the option to stop, unrolled: −Σ_i (Π_{j<i} p_j·d_j)·c_i + (Π p_j·d_j)·V."""
    reach = [math.prod((p * d for p, _, d in steps[:i]), start=Fraction(1)) for i in range(len(steps) + 1)]
    return -sum((reach[i] * c for i, (_, c, _) in enumerate(steps)), start=Fraction(0)) + reach[-1] * value


@settings(max_examples=300, deadline=None)
@given(chains, values, st.booleans(), st.booleans())
def test_the_exact_fold_is_the_definition(steps: list[tuple[Fraction, Fraction, Fraction]], value: Fraction,
                                          discounted: bool, stop: bool) -> None:
    if not discounted:
        steps = [(p, c, Fraction(1)) for p, c, _ in steps]
    ps, cs, ds = [s[0] for s in steps], [s[1] for s in steps], [s[2] for s in steps]
    R = chain_fold(ps, cs, value, ds if discounted else None, stop=stop)
    assert len(R) == len(steps) + 1 and R[-1] == value
    assert R == [definition(steps, value, stop, i) for i in range(len(steps) + 1)]
    assert all(isinstance(r, Fraction) for r in R)
    if not stop:
        assert R[0] == unrolled(steps, value)


@settings(max_examples=300, deadline=None)
@given(chains, values, st.booleans(), st.booleans())
def test_the_float_fold_is_the_definition_step_by_step(steps: list[tuple[Fraction, Fraction, Fraction]],
                                                      value: Fraction, discounted: bool, stop: bool) -> None:
    """In floats each R_i is the float of −c_i + p_i·d_i·R_{i+1} as written (so a float
    score is the same bits as ever), and within float error of the exact fold."""
    ps, cs = [float(s[0]) for s in steps], [float(s[1]) for s in steps]
    ds = [float(s[2]) for s in steps] if discounted else [1.0] * len(steps)
    v = float(value)
    R = chain_fold(ps, cs, v, ds if discounted else None, stop=stop)
    expected = [v]
    for p, c, d in reversed(list(zip(ps, cs, ds, strict=True))):
        r = -c + p * d * expected[0]
        expected.insert(0, max(0.0, r) if stop else r)
    assert [x.hex() for x in R] == [x.hex() for x in expected]
    exact = [Fraction(p) for p in ps], [Fraction(c) for c in cs], [Fraction(d) for d in ds]
    R_exact = definition(list(zip(*exact, strict=True)), Fraction(v), stop)
    scale = sum(cs) + v + 1.0
    assert math.isclose(R[0], float(R_exact), rel_tol=1e-9, abs_tol=1e-12 * scale)


def test_without_discounts_the_fold_multiplies_by_no_d() -> None:
    ps, cs = [Fraction(1, 2), Fraction(1, 3)], [Fraction(10), Fraction(20)]
    assert chain_fold(ps, cs, Fraction(600)) == [Fraction(-10 + 90), Fraction(180), Fraction(600)]
    # the same with every d = 1; a d below 1 discounts the value after it
    assert chain_fold(ps, cs, Fraction(600), [Fraction(1)] * 2) == chain_fold(ps, cs, Fraction(600))
    assert chain_fold(ps, cs, Fraction(600), [Fraction(1), Fraction(1, 2)])[1] == -20 + Fraction(1, 3) * 300


def test_the_option_to_stop_floors_each_stage_at_zero() -> None:
    ps, cs, v = [0.5, 0.5], [10.0, 500.0], 800.0  # the last stage is worth −100: the planner stops there
    assert chain_fold(ps, cs, v) == [-10.0 + 0.5 * -100.0, -100.0, 800.0]
    assert chain_fold(ps, cs, v, stop=True) == [0.0, 0.0, 800.0]


def test_on_sympy_expressions_the_caller_passes_max() -> None:
    """Generic arithmetic: sympy symbols fold as written; the option to stop takes sympy's
    Max as the clip, and substituting numbers gives the exact fold."""
    sympy = pytest.importorskip("sympy")
    ps, cs, ds = (list(sympy.symbols(f"{x}0:3")) for x in "pcd")
    V = sympy.Symbol("V")
    plain = chain_fold(ps, cs, V)
    assert sympy.expand(plain[0] - unrolled_symbols(ps, cs, V)) == 0
    R = chain_fold(ps, cs, V, ds, stop=True, clip=lambda r: sympy.Max(0, r))
    numbers: dict[object, Fraction | int] = {
        ps[0]: Fraction(1, 2), ps[1]: Fraction(1, 3), ps[2]: Fraction(3, 4), cs[0]: 5, cs[1]: 40, cs[2]: 7,
        ds[0]: Fraction(9, 10), ds[1]: 1, ds[2]: Fraction(1, 2), V: 100,
    }
    steps = [(Fraction(numbers[ps[i]]), Fraction(numbers[cs[i]]), Fraction(numbers[ds[i]])) for i in range(3)]
    for i in range(4):
        assert sympy.Rational(R[i].subs(numbers)) == sympy.Rational(str(definition(steps, Fraction(100), True, i)))
    with pytest.raises(TypeError):  # Python's max cannot decide the sign of a symbol
        chain_fold(ps, cs, V, stop=True)


def unrolled_symbols(ps: list[object], cs: list[object], V: object) -> object:
    total, reach = 0, 1
    for p, c in zip(ps, cs, strict=True):
        total, reach = total - reach * c, reach * p  # type: ignore[operator]
    return total + reach * V  # type: ignore[operator]


def test_a_float_step_that_overflows_names_its_numbers() -> None:
    with pytest.raises(NotFinite, match=r"R_0 = −c \+ p·R_1 = −1\.7e\+308 \+ 1·-1\.7e\+308 overflows"):
        chain_fold([1.0, 1.0], [1.7e308, 1.7e308], 0.0)
    with pytest.raises(NotFinite, match=r"R_0 = −c \+ p·d·R_1 overflows \(from 1\.7e\+308, 1, 1, -1\.7e\+308\)"):
        chain_fold([1.0, 1.0], [1.7e308, 1.7e308], 0.0, [1.0, 1.0])
    with pytest.raises(NotFinite, match="^R at the start overflows"):
        chain_fold([1.0, 1.0], [1.7e308, 1.7e308], 0.0, what=lambda i: "R at the start")


# ---------------------------------------------------------------------- the choice of fold
CHAIN = (["a", "b", "c"], ["s0", "s1", "s2"], ["s1", "s2", "s3"])
PS, CS, DS, V = [0.5, 0.8, 0.4], [100.0, 50.0, 900.0], [0.9, 0.8, 0.5], 1000.0


def test_route_fold_picks_the_chain_fold_the_policy_names() -> None:
    paper = route_fold(FoldPolicy(), None, *CHAIN, PS, CS, DS, V)
    assert isinstance(paper, ChainFold)
    assert paper.R == [-100 + 0.5 * (-50 + 0.8 * (-900 + 0.4 * 1000)), -50 + 0.8 * -500.0, -500.0, 1000.0]
    discounted = route_fold(FoldPolicy(discount=0.08), None, *CHAIN, PS, CS, DS, V)
    assert discounted.score == -100 + 0.5 * 0.9 * (-50 + 0.8 * 0.8 * (-900 + 0.4 * 0.5 * 1000))
    stop = route_fold(FoldPolicy(abandonment=True), None, *CHAIN, PS, CS, DS, V)
    assert isinstance(stop, ChainFold) and stop.R == [0.0, 0.0, 0.0, 1000.0]  # −900 + 0.2·1000 < 0: stop


def test_route_fold_gives_a_forking_route_to_the_graph_fold() -> None:
    fork = Series((Edge("a"), Parallel((Edge("b"), Edge("c")))))
    names, sources, targets = ["a", "b", "c"], ["s0", "s1", "s1"], ["s1", "s2", "s2"]
    g = route_fold(FoldPolicy(discount=0.08), fork, names, sources, targets, PS, CS, DS, V)
    assert isinstance(g, GraphFold)
    # the branches run together: P = 0.8·0.4, C = 50 + 900, D = min(0.8, 0.5)
    assert g.score == -100 + 0.5 * 0.9 * (-950 + 0.8 * 0.4 * 0.5 * 1000)
    # a series of edges is a chain: the graph fold and the chain fold agree
    line = Series(tuple(Edge(n) for n in CHAIN[0]))
    for spec, ds in ((FoldPolicy(), [1.0] * 3), (FoldPolicy(discount=0.08), DS), (FoldPolicy(0.08, True), DS)):
        graph = route_fold(spec, line, *CHAIN, PS, CS, ds, V)
        chain = route_fold(spec, None, *CHAIN, PS, CS, ds, V)
        assert isinstance(graph, GraphFold) and graph.spine_R == chain.R


def test_the_cached_proofs_are_named_by_the_fold_they_use() -> None:
    """A proof folds with `chain_fold`: an edited fold must prove again, so its source is
    part of the proof file's name."""
    assert Path(fold_module.__file__) in symbolic.PROOF_SOURCES
    assert Path(symbolic.__file__) in symbolic.PROOF_SOURCES


# ---------------------------------------------------------------------- written once
def chain_folds(source: str) -> list[int]:
    """The lines where ``source`` folds a chain by hand: inside a loop, a value is set
    from a stage −c + p·…·x (or p·…·x − c) whose last factor x is the value carried
    from the previous step: the value itself (r = −c + p·r) or a name the loop sets
    from it (R[i] = max(0, r) beside r = −c + p·R[i + 1])."""
    found: list[int] = []
    for loop in ast.walk(ast.parse(source)):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        sets: dict[str, list[ast.expr]] = {}  # name -> what the loop assigns it
        for node in ast.walk(loop):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for name in _bases(t):
                        sets.setdefault(name, []).append(node.value)
        for name, exprs in sets.items():
            for expr in exprs:
                for carried, line in _stages(expr):
                    if carried == name or any(name in _names(e) for e in sets.get(carried, [])):
                        found.append(line)
    return sorted(set(found))


def _bases(t: ast.expr) -> list[str]:
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _bases(e)]
    while isinstance(t, (ast.Subscript, ast.Attribute)):
        t = t.value
    return [t.id] if isinstance(t, ast.Name) else []


def _names(e: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def _stages(e: ast.expr) -> list[tuple[str, int]]:
    """(the base name of the last factor, line) of each −c + p·…·x or p·…·x − c in ``e``."""
    out = []
    for node in ast.walk(e):
        if not isinstance(node, ast.BinOp):
            continue
        products = []
        if isinstance(node.op, ast.Add):
            products = [side for side, other in ((node.left, node.right), (node.right, node.left))
                        if isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mult)
                        and isinstance(other, ast.UnaryOp) and isinstance(other.op, ast.USub)]
        elif isinstance(node.op, ast.Sub) and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult):
            products = [node.left]
        for product in products:
            out += [(name, node.lineno) for name in _bases(product.right)]
    return out


def test_the_detector_finds_the_folds_it_must() -> None:
    """The control: every way the fold was written by hand before it was written once."""
    styles = [
        """
        R = [value] * (len(ps) + 1)
        for i in range(len(ps) - 1, -1, -1):
            R[i] = -cs[i] + ps[i] * R[i + 1]
        """,
        """
        for i in range(len(ps) - 1, -1, -1):
            r = -cs[i] + ps[i] * ds[i] * R[i + 1]
            R[i] = max(zero, r) if abandonment else r
        """,
        """
        r = R[i + 1]
        for j in range(i, -1, -1):
            r = -cs[j] + (q if j == i else ps[j]) * ds[j] * r
        """,
        """
        for i in range(len(items) - 1, -1, -1):
            b = blocks[i]
            r = _finite(-b.C + b.P * b.D * R[i + 1], "R")
            R[i] = r
        """,
        """
        for i in range(n - 1, 0, -1):
            after[i - 1] = parts[i].P * after[i] - parts[i].C
        """,
    ]
    for code in styles:
        assert chain_folds(textwrap.dedent(code)), code
    # a single stage in a loop is not a fold: the stops, the seams' local changes
    assert not chain_folds(textwrap.dedent("""
        for i, t in enumerate(ts):
            stops = -t.c + t.p * d[i] * R[i + 1] < 0
            local = (-new.C + new.P * new.D * R[j + 1]) - (-old.C + old.P * old.D * R[j + 1])
            nxt = R[i + 1]
            flat = check(-cs[i] + lo * ds[i] * nxt)
        """))
    assert chain_folds((ROOT / "pcsc" / "score" / "fold.py").read_text(encoding="utf-8"))


def test_the_chain_fold_is_written_once() -> None:
    """No module of the library folds a chain by hand but `pcsc/score/fold.py`; the
    certificate checker (`pcsc/certify/check*`) keeps its own fold on purpose."""
    package = ROOT / "pcsc"
    by_hand = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel == "score/fold.py" or rel.startswith("certify/check"):
            continue
        lines = chain_folds(path.read_text(encoding="utf-8"))
        if lines:
            by_hand[rel] = lines
    assert by_hand == {}, f"fold with pcsc.score.fold.chain_fold instead: {by_hand}"
