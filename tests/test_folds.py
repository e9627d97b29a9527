"""The policy-selected folds (`[fold]`): discounting and the option to stop, each with
its own deletion identity, exact and symbolic (pcsc/analysis/seams/folds.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.analysis.seams.folds import (
    abandonment_formulas,
    fold_seam_identities,
    verify_abandonment,
    verify_discounted,
)
from pcsc.policy.model import FoldPolicy, PolicyValueError
from pcsc.score.fold import chain_fold
from pcsc.score.route import discount_factor, horizon_years

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "folds"
ROUTE = DATA / "late_audit.route"

Chain = tuple[list[float], list[float], list[float], float]
prob = st.one_of(st.just(0.0), st.just(1.0), st.floats(0, 1))
factor = st.one_of(st.just(1.0), st.floats(0.01, 1))
cost = st.one_of(st.just(0.0), st.floats(0, 1e7))


@st.composite
def chains(draw: st.DrawFn) -> Chain:
    n = draw(st.integers(3, 8))
    return (
        draw(st.lists(prob, min_size=n, max_size=n)),
        draw(st.lists(cost, min_size=n, max_size=n)),
        draw(st.lists(factor, min_size=n, max_size=n)),
        draw(st.floats(0, 1e9)),
    )


@settings(max_examples=200, deadline=None)
@given(chains(), st.booleans())
def test_identity_equals_refold_exactly(chain: Chain, stop: bool) -> None:
    ps, cs, ds, v = chain
    ids = fold_seam_identities(ps, cs, ds, v, range(1, len(ps) - 1), stop)
    assert all(i.identity_holds for i in ids)
    if stop:
        assert all(i.delta_formula >= 0 and i.sign_matches for i in ids)  # the sign condition
    else:
        assert all(i.sign_matches in (True, None) for i in ids)


@settings(max_examples=100, deadline=None)
@given(chains())
def test_discounted_identity_is_the_papers_when_d_is_one(chain: Chain) -> None:
    from pcsc.analysis.seams.identity import seam_identities

    ps, cs, _, v = chain
    ks = range(1, len(ps) - 1)
    general = fold_seam_identities(ps, cs, [1.0] * len(ps), v, ks, False)
    paper = seam_identities(ps, cs, v, list(ks))
    assert [g.delta_formula for g in general] == [p.delta_formula for p in paper]


def test_every_abandonment_case_occurs() -> None:
    """The four cases of the identity under abandonment are each exercised."""
    seen = set()
    for ps, cs, v in [
        ([0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 1.0, 1.0], 100.0),  # both start, continue at k
        ([0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 60.0, 1.0], 100.0),  # the spliced chain only
        ([0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 60.0, 1.0], 100.0),  # free prefix: both start, stop at k
        ([0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 1.0, 1.0], 0.0),  # neither starts
    ]:
        for i in fold_seam_identities(ps, cs, [1.0] * 4, v, [1, 2], True):
            assert i.identity_holds
            seen.add(i.case)
    assert seen == {"continue", "stop", "spliced-only", "neither"}


@pytest.mark.parametrize("n", range(3, 8))
def test_symbolic_proof_per_shape(n: int) -> None:
    for k in range(1, n - 1):
        assert verify_discounted(n, k)
        assert verify_abandonment(n, k)


def test_wrong_formulas_are_rejected() -> None:
    def undiscounted_retention(ps, ds, cs, R, k):  # (1 − p_k) where (1 − p_k·d_k) belongs
        reach = 1
        for p, d in zip(ps[:k], ds[:k], strict=True):
            reach = reach * p * d
        return reach * (cs[k] + (1 - ps[k]) * R)

    assert not verify_discounted(5, 2, undiscounted_retention)

    def no_stop_case(ps, ds, cs, R, k):  # "stop" treated as "continue"
        f = abandonment_formulas(ps, ds, cs, R, k)
        return {**f, "stop": f["continue"]}

    assert not verify_abandonment(5, 2, no_stop_case)
    # and exactly: the paper's formula (undiscounted) disagrees with the discounted re-fold
    P, D, C, V = [Fraction(1, 2)] * 4, [Fraction(9, 10)] * 4, [Fraction(1)] * 4, Fraction(100)
    Q = [p * d for p, d in zip(P, D, strict=True)]
    R = chain_fold(Q, C, V)
    refold = chain_fold(Q[:1] + Q[2:], C[:1] + C[2:], V)[0] - R[0]
    assert Q[0] * (C[1] + (1 - P[1]) * R[2]) != refold
    assert Q[0] * (C[1] + (1 - Q[1]) * R[2]) == refold


def test_float_fold_is_the_papers_under_the_default() -> None:
    ps, cs = [0.5, 0.3, 0.9], [10.0, 20.0, 5.0]
    assert chain_fold(ps, cs, 800.0, [1.0] * 3) == chain_fold(ps, cs, 800.0)
    assert FoldPolicy().is_default
    assert discount_factor(0.0, (5.0, "years")) == 1.0


def test_horizons_in_years() -> None:
    assert horizon_years((365.25, "days")) == 1.0
    assert horizon_years((6.0, "months")) == 0.5
    assert horizon_years((2.0, "years")) == 2.0
    assert horizon_years(None) == 0.0
    assert discount_factor(0.1, (12.0, "months")) == pytest.approx(1 / 1.1)


@pytest.mark.parametrize("bad", [-0.1, float("inf"), float("nan")])
def test_discount_must_be_finite_and_non_negative(bad: float) -> None:
    with pytest.raises(PolicyValueError):
        FoldPolicy(discount=bad)


def _compile(route: Path, policy: str) -> dict:
    text = route.read_text(encoding="utf-8").replace("venture-stop@1.0.0", policy)
    out = subprocess.run(
        [sys.executable, "-m", "pcsc", "compile", "--format", "json", "--policy-path", str(DATA / "policies"), "-"],
        input=text, capture_output=True, text=True, cwd=ROOT,
    )
    payload = json.loads(out.stdout)
    return payload["routes"][0]


@pytest.fixture(scope="module")
def packets() -> dict[str, dict]:
    return {p: _compile(ROUTE, p) for p in ("venture@1.0.0", "venture-stop@1.0.0", "venture-discount@1.0.0")}


def test_abandonment_moves_the_binding_to_an_earlier_cheaper_step(packets: dict[str, dict]) -> None:
    plain, stop = packets["venture@1.0.0"], packets["venture-stop@1.0.0"]
    assert plain["ungated_score"] < 0 and "fold" not in plain
    assert stop["ungated_score"] == 0.0
    assert stop["fold"] == {"discount": 0.0, "abandonment": True, "stops": [
        "design_partners", "open_beta", "team_plan", "marketplace", "soc2_audit"]}
    names = [t["name"] for t in plain["transitions"]]
    cost = {t["name"]: t["c"] for t in plain["transitions"]}
    b_plain, b_stop = plain["binding"]["transition"], stop["binding"]["transition"]
    assert (b_plain, b_stop) == ("enterprise", "design_partners")
    assert names.index(b_stop) < names.index(b_plain) and cost[b_stop] < cost[b_plain]


def test_discount_in_the_packet(packets: dict[str, dict]) -> None:
    plain, disc = packets["venture@1.0.0"], packets["venture-discount@1.0.0"]
    d = disc["fold"]["d"]
    assert disc["fold"]["discount"] == 0.1 and len(d) == len(disc["transitions"])
    assert d[3] == pytest.approx(1 / 1.1)  # 12 months
    assert disc["ungated_score"] < plain["ungated_score"]  # the vision is further off in value


@pytest.mark.parametrize("policy", ["venture-stop@1.0.0", "venture-discount@1.0.0"])
def test_seams_under_each_fold(policy: str) -> None:
    text = ROUTE.read_text(encoding="utf-8").replace("venture-stop@1.0.0", policy)
    out = subprocess.run(
        [sys.executable, "-m", "pcsc", "seams", "--format", "json", "--policy-path", str(DATA / "policies"), "-"],
        input=text, capture_output=True, text=True, cwd=ROOT,
    )
    seams = json.loads(out.stdout)["routes"][0]["seams"]
    assert len(seams) == 4
    for s in seams:
        assert s["identity_holds"] and s["symbolically_verified"] and s["sign_matches"]
        assert s["fold"] == ("abandonment" if "stop" in policy else "discounted")


def test_every_seam_of_every_shipped_route_under_each_fold() -> None:
    routes = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*.route"))
    out = subprocess.run([sys.executable, "-m", "pcsc", "compile", "--format", "json", *routes],
                         capture_output=True, text=True, cwd=ROOT)
    packets = json.loads(out.stdout)["routes"]
    assert len(packets) >= 5
    checked = 0
    for r in packets:
        if "graph" in r:  # a route that forks and joins has its own identity (tests/test_graph_routes.py)
            continue
        ps = [t["p"] for t in r["transitions"]]
        cs = [t["c"] for t in r["transitions"]]
        hs = [None if (h := t["horizon"]) is None else (h["amount"], h["unit"]) for t in r["transitions"]]
        ks = range(1, len(ps) - 1)
        for rate in (0.0, 0.1, 0.35):
            ds = [discount_factor(rate, h) for h in hs]
            for stop in (False, True):
                ids = fold_seam_identities(ps, cs, ds, r["value"], ks, stop)
                assert all(i.identity_holds for i in ids), (r["route"], rate, stop)
                checked += len(ids)
    assert checked > 0


# ---------------------------------------------------------------------- `pcsc seams --symbolic` under a policy fold
def _seams_symbolic(route: str, *extra: str) -> tuple[dict, str]:
    def run(*fmt: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pcsc", "seams", "--symbolic", route, *extra, *fmt],
                              capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return done.stdout

    return json.loads(run("--format", "json")), run()


def _discounted_delta(n: int, k: int) -> object:
    import sympy

    ps, ds, cs = (sympy.symbols(f"{x}0:{n}") for x in "pdc")
    R = sympy.Symbol(f"R{k + 1}")
    return sympy.Mul(*ps[:k], *ds[:k]) * (cs[k] + (1 - ps[k] * ds[k]) * R)


def test_symbolic_under_a_discount_prints_the_discounted_identity() -> None:
    """`examples/domains/solid_electrolyte.route` (planner-discount) printed the paper's
    identity `-p0*(R2*p1 - R2 - c1)`, no d_i."""
    import sympy

    from pcsc.render import schemas

    doc, text = _seams_symbolic("examples/domains/solid_electrolyte.route")
    schemas.validate(doc)
    rows = doc["symbolic"]
    assert [(d["fold"], d["shape"]) for d in rows] == [("discounted", "n=4, k=1"), ("discounted", "n=4, k=2")]
    for d, k in zip(rows, (1, 2), strict=True):
        expected = _discounted_delta(4, k)
        assert sympy.expand(sympy.sympify(d["formula"]) - expected) == 0
        assert sympy.expand(sympy.sympify(d["difference"]) - expected) == 0
        assert d["residual"] == "0" and d["verified"] == "True" and "paper" not in d
    assert "-p0*(R2*p1 - R2 - c1)" not in text
    assert "derived: -d0*p0*(R2*d1*p1 - R2 - c1)" in text and "discounted (d_i kept as symbols)" in text
    assert "  fold        discount 0.08/year" in text


def test_symbolic_under_the_option_to_stop_proves_each_case() -> None:
    import sympy

    doc, text = _seams_symbolic("examples/domains/organoid_screens.route")
    (d,) = doc["symbolic"]
    assert d["fold"] == "abandonment" and d["verified"] == "True"
    cases = {row["case"]: row for row in d["cases"]}
    assert list(cases) == ["continue", "stop", "spliced-only", "neither"]
    assert all(row["residual"] == "0" for row in cases.values())
    p0, d0, c0, R2 = sympy.symbols("p0 d0 c0 R2")
    assert sympy.sympify(cases["stop"]["formula"]) == p0 * d0 * R2
    assert sympy.expand(sympy.sympify(cases["spliced-only"]["difference"]) - (p0 * d0 * R2 - c0)) == 0
    assert sympy.expand(sympy.sympify(cases["continue"]["difference"]) - _discounted_delta(3, 1)) == 0
    assert "stop (both chains start, the planner stops at k):" in text
    assert "identity verified in every case: True" in text
    assert doc["routes"][0]["seams"][0]["case"] == "continue"
    assert "  k  deleted       Δ_k (formula)  identity  case" in text  # the seam table names the case


def test_the_paper_fold_keeps_its_derivation() -> None:
    doc, _ = _seams_symbolic("examples/devtools_api.route")
    (d,) = doc["symbolic"]
    assert d["fold"] == "chain" and d["paper"] == d["formula"] == "p0*(R2*(1 - p1) + c1)"


def test_a_derivation_shows_a_wrong_identity_as_a_residual() -> None:
    """The derivation's algebra is the proof's: the paper's formula read under a
    discount leaves a residual, and the proof rejects it."""
    import sympy

    from pcsc.analysis.seams.folds import _derived, discounted_folds
    from pcsc.analysis.seams.symbolic import paper_formula

    n, k = 4, 1
    ps, ds, cs = (list(sympy.symbols(f"{x}0:{n}")) for x in "pdc")
    R = sympy.Symbol("R2")
    spliced, original = discounted_folds(ps, ds, cs, R, k)
    assert _derived(spliced, original, paper_formula(ps, cs, R, k))["residual"] != "0"

    def plain(ps, ds, cs, R, k):  # the paper's formula, every d_i dropped
        return paper_formula(ps, cs, R, k)

    assert not verify_discounted(n, k, plain)

    def stop_as_neither(ps, ds, cs, R, k):
        return {**abandonment_formulas(ps, ds, cs, R, k), "stop": 0 * R}

    assert not verify_abandonment(n, k, stop_as_neither)


def test_graph_seams_under_a_discount_keep_every_d() -> None:
    from pcsc.analysis.seams.graphs import _branch_key, _verify_branch, graph_derivation, proof_picks
    from pcsc.lang.ir import Edge, Parallel, Series
    from pcsc.score.graph import edges_of

    fork = Series((Edge("a"), Parallel((Series((Edge("b"), Edge("c"), Edge("d"))), Edge("x"))), Edge("f"), Edge("g")))
    names = list(edges_of(fork))
    for d_c, case in ((0.9, "slowest branch"), (1.0, "branch")):
        ds = [d_c if e == "c" else 0.8 if e == "x" else 0.95 for e in names]
        picks, found = proof_picks(fork, names, ds, names.index("c"))
        assert found == case and picks is not None
        for policy_fold in ("discounted", "abandonment"):
            d = graph_derivation(fork, "c", policy_fold, picks, case)
            assert d["fold"] == f"graph-{policy_fold}" and d["verified"] == "True"
            rows = d["cases"] if policy_fold == "abandonment" else [d]
            assert len(rows) == (4 if policy_fold == "abandonment" else 1)
            assert all(r["residual"] == "0" for r in rows)
            assert "d0" in rows[0]["difference"] and ("d2" in rows[0]["difference"]) == (case != "branch")

        def no_reach(g, name, p, c):  # the branch formula without the seam's reach
            return c + (1 - p) * g.next[name]

        key, abandonment, anonymous, unit = _branch_key(fork, "c", "discounted", picks, case)
        if unit:  # the affine formula is the one checked in case "branch"
            assert not _verify_branch(key, abandonment, anonymous, unit, no_reach)
    # a seam on the spine under a policy fold: the chain's derivation over the spine's blocks
    spine_seam = graph_derivation(fork, "f", "discounted", None, None)
    assert spine_seam["fold"] == "discounted" and "spine item 2 of 4" in spine_seam["shape"]
