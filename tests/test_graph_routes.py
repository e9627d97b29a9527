"""Routes that fork and join (docs/graphs.md): lowering, the series-parallel fold, its
derived numbers, and the deletion identity on graphs, exact and symbolic."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.analysis.seams.graphs import (
    check_branch_formula,
    graph_seam_identities,
    seam_picks,
    synthetic_states,
    verify_graph_seam,
)
from pcsc.analysis.seams.splice import graph_seams, seam_indices, splice
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.model import Diagnostic
from pcsc.lang.ir import Edge, Parallel, Series, Shape
from pcsc.lang.printer import route_to_text
from pcsc.policy.load import PolicyStore
from pcsc.score.fold import chain_fold
from pcsc.score.graph import edges_of, graph_fold

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = ROOT / "examples" / "graphs"
LOCK = GRAPHS / "lock_cert_pilot.route"
POLICIES = ROOT / "tests" / "data" / "graphs" / "policies"
SHIPPED = sorted(GRAPHS.glob("*.route"))


def session() -> Session:
    return Session(policies=PolicyStore([POLICIES]))


def compile_text(text: str, shown: str = "r.route") -> tuple[Session, list[Compiled]]:
    s = session()
    routes = s.routes_from_text(text, shown, GRAPHS)
    out = [c for c in (s.compile_route(r) for r in routes) if c is not None]
    return s, out


def compile_file(path: Path, policy: str | None = None) -> Compiled:
    text = path.read_text(encoding="utf-8")
    if policy is not None:
        text = text.replace('"venture@1.1.0"', f'"{policy}"')
    s, out = compile_text(text, str(path.relative_to(ROOT)))
    assert len(out) == 1 and not s.diags.has_errors, [d.message for d in s.diags.items]
    return out[0]


def errors(text: str) -> list[Diagnostic]:
    s, _ = compile_text(text)
    return [d for d in s.diags.sorted() if d.severity == "error"]


# ---------------------------------------------------------------- a small graph route

SMALL = """\
route small {
    as_of   2020-01-01
    policy  "venture@1.1.0"
    uses    startup
    state funded    { units 0  certified false  customers 0 }
    state piloted   { units 100 }
    state certified { certified true }
    state ready     { }
    state sold      { customers 50 }
    vision sold { tam 1B usd  capture 10%  defensibility 0.5 }
    transition pilot:    funded -> piloted   {
        class "hardware/pilot"
        horizon 6 months
    }
    transition certify:  funded -> certified {
        class "hardware/certification"
        horizon 9 months
    }
    transition launch_a: piloted -> ready    {
        class "hardware/channel"
        horizon 1 months
    }
    transition launch_b: certified -> ready  {
        class "hardware/channel"
        horizon 2 months
    }
    transition sell:     ready -> sold       {
        class "hardware/scale"
        horizon 1 years
    }
}
"""


def test_a_fork_and_a_join_lower_to_a_series_parallel_shape() -> None:
    _, (c,) = compile_text(SMALL)
    r = c.route
    assert r.shape == Series((
        Parallel((Series((Edge("pilot"), Edge("launch_a"))), Series((Edge("certify"), Edge("launch_b"))))),
        Edge("sell"),
    ))
    # topological order, stable by source order; a join comes after every transition into it
    assert [t.name for t in r.transitions] == ["pilot", "certify", "launch_a", "launch_b", "sell"]
    assert [s.name for s in r.states] == ["funded", "piloted", "certified", "ready", "sold"]
    # the join is the merge of its branches; each branch starts from the fork's values
    assert dict(r.state("ready").values) == {"units": 100.0, "certified": True, "customers": 0.0}
    assert dict(r.state("certified").values)["units"] == 0.0
    # a join's date is its slowest branch's: 2020-01-01 + 9 + 2 months, then a year
    assert [str(t.due) for t in r.transitions] == ["2020-07-01", "2020-10-01", "2020-08-01", "2020-12-01",
                                                   "2021-12-01"]
    # an edge into the join claims only what the join lists (here nothing)
    deltas = {t.name: {d.field for d in t.deltas if d.material} for t in c.numbers.transitions}
    assert deltas == {"pilot": {"units"}, "certify": {"certified"}, "launch_a": set(), "launch_b": set(),
                      "sell": {"customers"}}


def test_the_fold_of_the_small_route_by_hand() -> None:
    _, (c,) = compile_text(SMALL)
    n = c.numbers
    p = {t.name: t.p for t in n.transitions}
    cost = {t.name: t.cost.c for t in n.transitions}
    V = 1e9 * 0.1 * 0.5
    R_ready = -cost["sell"] + p["sell"] * V
    P_a, C_a = p["pilot"] * p["launch_a"], cost["pilot"] + p["pilot"] * cost["launch_a"]
    P_b, C_b = p["certify"] * p["launch_b"], cost["certify"] + p["certify"] * cost["launch_b"]
    score = -(C_a + C_b) + P_a * P_b * R_ready
    assert n.score == pytest.approx(score, rel=1e-12)
    assert dict(zip([s.name for s in c.route.states], n.R, strict=True))["ready"] == pytest.approx(R_ready)
    by = {t.name: t for t in n.transitions}
    # launch_a: reached when pilot succeeds; its continuation carries the other branch's P
    assert by["launch_a"].reach == pytest.approx(p["pilot"])
    assert by["launch_a"].R_next == pytest.approx(P_b * R_ready)
    assert by["sell"].reach == pytest.approx(P_a * P_b)
    assert by["sell"].D == pytest.approx(P_a * P_b * V)
    assert n.flat_product == pytest.approx(p["pilot"] * p["certify"] * p["launch_a"] * p["launch_b"] * p["sell"])
    assert n.binding == max(range(5), key=lambda i: (n.transitions[i].U * n.transitions[i].D, -i))


def test_under_discount_the_join_waits_for_the_slowest_branch() -> None:
    _, (c,) = compile_text(SMALL.replace("venture@1.1.0", "venture-discount@1.1.0"))
    n = c.numbers
    by = {t.name: t for t in n.transitions}
    d = {t.name: t.d for t in n.transitions}
    assert d["certify"] == pytest.approx(1.1 ** -0.75) and d["launch_b"] == pytest.approx(1.1 ** (-2 / 12))
    V = 1e9 * 0.1 * 0.5
    R_ready = -by["sell"].cost.c + by["sell"].p * d["sell"] * V
    P_a = by["pilot"].p * by["launch_a"].p
    P_b = by["certify"].p * by["launch_b"].p
    C_a = by["pilot"].cost.c + by["pilot"].p * d["pilot"] * by["launch_a"].cost.c
    C_b = by["certify"].cost.c + by["certify"].p * d["certify"] * by["launch_b"].cost.c
    D_join = min(d["pilot"] * d["launch_a"], d["certify"] * d["launch_b"])  # 11 months beat 7
    assert D_join == pytest.approx(1.1 ** (-11 / 12))
    assert n.score == pytest.approx(-(C_a + C_b) + P_a * P_b * D_join * R_ready, rel=1e-12)


@pytest.mark.parametrize(
    ("edit", "code", "message"),
    [
        (("launch_a: piloted -> ready", "launch_a: piloted -> funded"), "PCSC-E211",
         "the route has a cycle: `funded` -> `piloted` -> `funded`"),
        (("launch_b: certified -> ready", "launch_b: certified -> certified"), "PCSC-E211", "cycle"),
        (("launch_a: piloted -> ready", "launch_a: piloted -> piloted2"), "PCSC-E201", "unknown state `piloted2`"),
        (("sell:     ready -> sold", "sell:     piloted -> sold"), "PCSC-E210",
         "the branch through `launch_a` ends at `ready`, which does not join the route again"),
        (("launch_b: certified -> ready", "launch_b: sold -> ready"), "PCSC-E211", "cycle"),
        (("certify:  funded -> certified", "certify:  extra -> certified"), "PCSC-E201", "unknown state"),
    ],
)
def test_bad_graphs_are_clear_errors(edit: tuple[str, str], code: str, message: str) -> None:
    text = SMALL.replace(*edit)
    assert text != SMALL
    found = errors(text)
    assert found and found[0].code == code and message in found[0].message, [(d.code, d.message) for d in found]
    assert found[0].help or code != "PCSC-E210"


def test_a_second_start_state_is_unreachable() -> None:
    text = SMALL.replace("    state sold", "    state other { }\n    state sold").replace(
        "transition sell:",
        "transition side: other -> ready {\n        class \"hardware/pilot\"\n    }\n    transition sell:",
    )
    found = errors(text)
    assert [d.code for d in found] == ["PCSC-E212"]
    assert found[0].message == "transition `side` is not reachable from the start state `funded`"


def test_forks_and_joins_that_do_not_nest_are_an_error() -> None:
    # the "bridge": piloted feeds both the join and certified, so no block nests
    text = SMALL.replace(
        "transition sell:", "transition cross: piloted -> certified {\n        class \"hardware/pilot\"\n    }\n"
        "    transition sell:")
    found = errors(text)
    assert [d.code for d in found] == ["PCSC-E210"]
    assert "do not nest" in found[0].message and "`piloted`" in found[0].message
    assert found[0].help is not None and "nested forks are fine" in found[0].help


def test_branches_that_set_a_field_differently_need_the_join_to_say() -> None:
    text = SMALL.replace("state certified { certified true }", "state certified { certified true  units 50 }")
    found = errors(text)
    assert [d.code for d in found] == ["PCSC-E224"]
    assert found[0].message == ("join state `ready` gets `units` = 100 from the branch through `pilot` and "
                                "= 50 from the branch through `certify`")
    assert not errors(text.replace("state ready     { }", "state ready     { units 150 }"))


def test_printing_a_graph_route_lowers_back_to_the_same_route() -> None:
    for path in SHIPPED:
        c = compile_file(path)
        _, (again,) = compile_text(route_to_text(c.route), c.route.file)
        assert again.route.shape == c.route.shape
        assert [t.name for t in again.route.transitions] == [t.name for t in c.route.transitions]
        assert [s.values for s in again.route.states] == [s.values for s in c.route.states]
        assert again.numbers.score == c.numbers.score
        assert [t.deltas for t in again.numbers.transitions] == [t.deltas for t in c.numbers.transitions]


# ---------------------------------------------------------------- the certification beside the pilot


def _by_hand(c: Compiled, stop: bool) -> tuple[float, dict[str, float]]:
    """The fold of lock_cert_pilot from its p and c, by the block rules (no discount)."""
    p = {t.name: t.p for t in c.numbers.transitions}
    k = {t.name: t.cost.c for t in c.numbers.transitions}
    V = 10e9 * 0.08 * 0.5
    cap = (lambda x: max(0.0, x)) if stop else (lambda x: x)
    R_retail = cap(-k["national"] + p["national"] * V)
    R_first = cap(-k["retail"] + p["retail"] * R_retail)
    R_ready = cap(-k["first_run"] + p["first_run"] * R_first)
    P_lab, C_lab = p["certify"] * p["retailer_review"], k["certify"] + p["certify"] * k["retailer_review"]
    P_pilot = p["host_pilot"] * p["pilot_renewals"] * p["installer_network"]
    C_pilot = (k["host_pilot"] + p["host_pilot"] * k["pilot_renewals"]
               + p["host_pilot"] * p["pilot_renewals"] * k["installer_network"])
    R_beta = cap(-(C_lab + C_pilot) + P_lab * P_pilot * R_ready)
    R_bench = cap(-k["beta_batch"] + p["beta_batch"] * R_beta)
    return R_bench, {"retail": R_retail, "first_run": R_first, "ready": R_ready, "beta": R_beta}


def test_certification_beside_the_pilot_compiles_and_folds_by_hand() -> None:
    c = compile_file(LOCK)
    score, R = _by_hand(c, stop=False)
    assert c.numbers.score == pytest.approx(score, rel=1e-12)
    states = dict(zip([s.name for s in c.route.states], c.numbers.R, strict=True))
    for name, value in R.items():
        assert states[name] == pytest.approx(value, rel=1e-12)
    assert isinstance(c.route.shape, Series) and isinstance(c.route.shape.items[1], Parallel)
    assert c.decision.verdict == "released"


def test_abandonment_moves_the_binding_to_an_earlier_cheaper_step() -> None:
    plain, stop = compile_file(LOCK), compile_file(LOCK, "venture-stop@1.1.0")
    # by hand: the national step is worth less than nothing (−c + p·V < 0), so every
    # continuation of the plain fold is negative and only the last step has D > 0 …
    score, R = _by_hand(plain, stop=False)
    assert R["retail"] < 0 and R["first_run"] < 0 and R["ready"] < 0 and R["beta"] < 0 and score < 0
    names = [t.name for t in plain.numbers.transitions]
    assert [t.D > 0 for t in plain.numbers.transitions] == [n == "national" for n in names]
    assert names[plain.numbers.binding] == "national"
    # … while a planner who may stop does not start: R = 0 everywhere, every D is 0, and
    # the binding transition is the first, cheapest step of the route
    stop_score, stop_R = _by_hand(stop, stop=True)
    assert stop_score == 0.0 and all(v == 0.0 for v in stop_R.values())
    assert stop.numbers.score == 0.0 and all(t.D == 0.0 for t in stop.numbers.transitions)
    b_plain, b_stop = plain.numbers.binding, stop.numbers.binding
    assert names[b_stop] == "beta_batch" and b_stop < b_plain
    cost = {t.name: t.cost.c for t in plain.numbers.transitions}
    assert cost["beta_batch"] < cost["national"]
    # each spine item is worth less than nothing on its own once the rest is worth 0
    assert [t.name for t in stop.numbers.transitions if t.stops] == [
        "beta_batch", "certify", "host_pilot", "first_run", "retail", "national"]


def _cli(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out = subprocess.run([sys.executable, "-m", "pcsc", *argv], capture_output=True, text=True, cwd=ROOT,
                         input=stdin)
    return out.returncode, out.stdout, out.stderr


def test_the_certification_route_gates_splices_and_seams() -> None:
    rel = str(LOCK.relative_to(ROOT))
    code, out, err = _cli("gate", rel)
    assert code == 0 and "lock_cert_pilot: released" in out, err
    code, out, err = _cli("splice", rel, "--seam", "4")
    assert code == 0, err
    assert "Transition `pilot_renewals` (renewed <- " not in out
    assert "transition host_pilot: beta -> renewed {" in out and "transition pilot_renewals:" not in out
    code, out, err = _cli("splice", rel, "--seam", "3")
    assert code != 0 and "not a seam of graph route `lock_cert_pilot`" in err + out
    code, out, err = _cli("seams", "--format", "json", rel)
    assert code == 0, err
    seams = json.loads(out)["routes"][0]["seams"]
    assert [s["transition"] for s in seams] == ["pilot_renewals", "retail"]
    assert all(s["identity_holds"] and s["symbolically_verified"] and s["sign_matches"] for s in seams)
    assert [s["case"] for s in seams] == ["branch", None]


@pytest.mark.parametrize("policy", [None, "venture-stop@1.1.0", "venture-discount@1.1.0"])
def test_every_seam_of_every_shipped_graph_route(policy: str | None) -> None:
    for path in SHIPPED:
        c = compile_file(path, policy)
        n, r = c.numbers, c.route
        assert r.shape is not None
        ks = list(seam_indices(r))
        assert ks, path
        ids = graph_seam_identities(
            r.shape, [t.name for t in n.transitions], [t.source for t in n.transitions],
            [t.target for t in n.transitions], [t.p for t in n.transitions], [t.cost.c for t in n.transitions],
            [t.d for t in n.transitions], n.value, ks, n.fold.abandonment,
        )
        fold = "default" if policy is None else "abandonment" if "stop" in policy else "discounted"
        for k, i in zip(ks, ids, strict=True):
            assert i.identity_holds, (path.name, k)
            assert i.sign_matches in (True, None)
            picks = None
            if i.case == "slowest branch":
                picks = seam_picks(r.shape, [t.name for t in n.transitions], [t.d for t in n.transitions], k)
            assert verify_graph_seam(r.shape, r.transitions[k].name, fold, picks)
            # the pipeline's splice scores what the identity says (no p or c moves)
            spliced = splice(r, k)
            assert spliced.shape is not None


# ---------------------------------------------------------------- hypothesis: SP graphs


def _build(tree: Any, counter: list[int]) -> Shape:
    if tree == "e":
        counter[0] += 1
        return Edge(f"e{counter[0] - 1}")
    kind, kids = tree
    parts = [_build(k, counter) for k in kids]
    flat: list[Shape] = []
    for part in parts:
        if kind == "S" and isinstance(part, Series):
            flat.extend(part.items)
        elif kind == "P" and isinstance(part, Parallel):
            flat.extend(part.branches)
        else:
            flat.append(part)
    return Series(tuple(flat)) if kind == "S" else Parallel(tuple(flat))


trees = st.recursive(
    st.one_of(st.just("e"), st.just(("S", ["e", "e", "e"]))),  # runs of three give seams inside branches
    lambda kids: st.tuples(st.sampled_from("SP"), st.lists(kids, min_size=2, max_size=3)),
    max_leaves=8,
)
prob = st.one_of(st.just(0.0), st.just(1.0), st.floats(0, 1))
factor = st.one_of(st.just(1.0), st.floats(0.05, 1))
cost = st.one_of(st.just(0.0), st.floats(0, 1e6))


@st.composite
def graphs(draw: st.DrawFn) -> tuple[Shape, list[str], list[str], list[str], list[float], list[float],
                                     list[float], float]:
    shape = _build(draw(trees), [0])
    if isinstance(shape, Edge):
        shape = Series((shape, Edge("e1")))
    names = list(edges_of(shape))
    src, tgt = synthetic_states(shape)
    n = len(names)
    return (
        shape, names, [src[e] for e in names], [tgt[e] for e in names],
        draw(st.lists(prob, min_size=n, max_size=n)),
        draw(st.lists(cost, min_size=n, max_size=n)),
        draw(st.lists(factor, min_size=n, max_size=n)),
        draw(st.floats(0, 1e8)),
    )


@settings(max_examples=300, deadline=None)
@given(graphs(), st.booleans())
def test_graph_identity_equals_the_refold_exactly(g: Any, stop: bool) -> None:
    shape, names, src, tgt, ps, cs, ds, v = g
    ks = graph_seams(src, tgt)
    for i in graph_seam_identities(shape, names, src, tgt, ps, cs, ds, v, ks, stop):
        assert i.identity_holds, (shape, i)
        assert i.sign_matches in (True, None), (shape, i)
        if stop:
            assert i.delta_formula >= 0 and i.case != "only the original starts"  # the sign condition


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_D_is_the_positive_part_of_the_derivative(g: Any) -> None:
    """∂R/∂p_e = reach_e·d_e·x_e (R is affine in each p), so D_e = max(0, ∂R/∂p_e)
    when d_e = 1: exactly, in rationals."""
    shape, names, src, tgt, ps, cs, ds, v = g
    P = [Fraction(p) for p in ps]
    C = [Fraction(c) for c in cs]
    D = [Fraction(d) for d in ds]
    base = graph_fold(shape, names, src, tgt, P, C, D, Fraction(v), False)
    for i, e in enumerate(names):
        hi = graph_fold(shape, names, src, tgt, P[:i] + [Fraction(1)] + P[i + 1:], C, D, Fraction(v), False)
        lo = graph_fold(shape, names, src, tgt, P[:i] + [Fraction(0)] + P[i + 1:], C, D, Fraction(v), False)
        assert hi.score - lo.score == base.reach[e] * D[i] * base.next[e]


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 7), st.data())
def test_on_a_chain_the_graph_fold_is_the_chain_fold(n: int, data: st.DataObject) -> None:
    ps = [Fraction(x) for x in data.draw(st.lists(prob, min_size=n, max_size=n))]
    cs = [Fraction(x) for x in data.draw(st.lists(cost, min_size=n, max_size=n))]
    ds = [Fraction(x) for x in data.draw(st.lists(factor, min_size=n, max_size=n))]
    v = Fraction(data.draw(st.floats(0, 1e8)))
    stop = data.draw(st.booleans())
    names = [f"e{i}" for i in range(n)]
    states = [f"s{i}" for i in range(n + 1)]
    g = graph_fold(Series(tuple(Edge(e) for e in names)), names, states[:-1], states[1:], ps, cs, ds, v, stop)
    R = chain_fold(ps, cs, v, ds, stop=stop)
    assert [g.R[s] for s in states] == R
    reach = Fraction(1)
    for i, e in enumerate(names):
        assert g.reach[e] == reach and g.next[e] == R[i + 1]  # D_i = reach_i·max(R_{i+1}, 0)
        reach *= ps[i] * ds[i]


# ---------------------------------------------------------------- sympy, per shape

FORK = Series((Edge("a"), Parallel((Series((Edge("b"), Edge("c"), Edge("d"))), Edge("x"))), Edge("f"), Edge("g")))
NESTED = Series((
    Edge("a"),
    Parallel((
        Series((Edge("b"), Edge("m"), Parallel((Series((Edge("c"), Edge("n"), Edge("d"))), Edge("y"))), Edge("e"))),
        Edge("x"),
    )),
    Edge("z"),
))


@pytest.mark.parametrize("shape", [FORK, NESTED], ids=["fork", "nested"])
@pytest.mark.parametrize("fold", ["default", "discounted", "abandonment"])
def test_symbolic_proof_per_shape(shape: Shape, fold: str) -> None:
    names = list(edges_of(shape))
    src, tgt = synthetic_states(shape)
    ks = graph_seams([src[e] for e in names], [tgt[e] for e in names])
    assert ks
    for k in ks:
        assert verify_graph_seam(shape, names[k], fold)
    # with a symbol for every d, the slowest branches resolved as given
    ds = [0.9 if e in ("c", "x") else 1.0 for e in names]
    for k in ks:
        assert verify_graph_seam(shape, names[k], fold, seam_picks(shape, names, ds, k))


def test_a_wrong_formula_is_rejected() -> None:
    # the chain's formula read naively: R at the join for the continuation, which forgets
    # that the other branch must also succeed
    def join_value(g: Any, name: str, p: Any, c: Any) -> Any:
        return g.reach[name] * (c + (1 - p) * g.R["s3"])

    def no_reach(g: Any, name: str, p: Any, c: Any) -> Any:
        return c + (1 - p) * g.next[name]

    names = list(edges_of(FORK))
    assert check_branch_formula(FORK, "c", lambda g, n, p, c: g.reach[n] * (c + (1 - p) * g.next[n]))
    assert not check_branch_formula(FORK, "c", no_reach)
    src, tgt = synthetic_states(FORK)
    assert tgt["d"] == src["f"]  # the join
    assert not check_branch_formula(FORK, "c", lambda g, n, p, c: g.reach[n] * (c + (1 - p) * g.R[tgt["d"]]))
    assert join_value  # (named for the reader)
    # and exactly: the naive formula disagrees with the re-fold on numbers
    P = [Fraction(1, 2)] * len(names)
    C = [Fraction(1)] * len(names)
    V = Fraction(1000)
    S, T = [src[e] for e in names], [tgt[e] for e in names]
    k = names.index("c")
    (i,) = graph_seam_identities(FORK, names, S, T, P, C, [1.0] * len(names), V, [k], False)
    g = graph_fold(FORK, names, S, T, P, C, [Fraction(1)] * len(names), V, False)
    naive = g.reach["c"] * (C[k] + (1 - P[k]) * g.R[tgt["d"]])
    assert i.identity_holds and naive != i.delta_refold


# ---------------------------------------------------------------- forecasts


def test_resolution_follows_the_branches() -> None:
    """A branch's negative blocks the join's successor but not the other branch; the
    successor's window starts at the later of the two joining due dates."""
    import datetime as dt

    from pcsc.forecast.outcomes import Observation, Outcomes
    from pcsc.forecast.resolve import resolve_packets

    fields = [{"name": "units", "type": "count"}, {"name": "customers", "type": "count"}]
    ts = [
        {"name": "pilot", "from": "f", "to": "p", "due": "2020-06-01", "threshold": "units >= 100",
         "kill": "units < 10"},
        {"name": "certify", "from": "f", "to": "c", "due": "2020-09-01", "threshold": "customers >= 5",
         "kill": None},
        {"name": "join_a", "from": "p", "to": "r", "due": "2020-07-01", "threshold": None, "kill": None},
        {"name": "join_b", "from": "c", "to": "r", "due": "2020-10-01", "threshold": None, "kill": None},
        {"name": "sell", "from": "r", "to": "s", "due": "2021-06-01", "threshold": "customers >= 100",
         "kill": None},
    ]
    packet = {"route": "g", "as_of": "2020-01-01", "fields": fields, "transitions": ts, "graph": {}}
    obs = (
        Observation("g", dt.date(2020, 3, 1), (("customers", 6.0), ("units", 5.0))),  # kill of pilot; certify met
        Observation("g", dt.date(2021, 3, 1), (("customers", 60.0), ("units", 5.0))),
    )
    results = resolve_packets([packet], Outcomes("o.toml", obs, ()), dt.date(2021, 7, 1))
    status = {r.transition: r.status for r in results}
    assert status["pilot"] == "negative" and status["certify"] == "positive"
    assert status["sell"] == "censored"  # not reached: the pilot branch failed
    blocked = next(r for r in results if r.transition == "sell")
    assert "`join_a`" in blocked.reason and "was not reached" in blocked.reason
    # without `graph` the packet is read as a chain: sell would follow join_b, which was reached
    chain = resolve_packets([{**packet, "graph": None}], Outcomes("o.toml", obs, ()), dt.date(2021, 7, 1))
    assert "`join_b`" not in next(r for r in chain if r.transition == "sell").reason


def test_dock_removes_the_value_of_a_graph_route() -> None:
    """DOCK's score is the fold with V = 0: minus the expected cost, Σ reach_e·c_e."""
    from pcsc.score.route import docked_score

    c = compile_file(LOCK)
    expected = -sum(t.reach * t.cost.c for t in c.numbers.transitions)
    assert docked_score(c.numbers) == pytest.approx(expected, rel=1e-12)
    assert c.docked == docked_score(c.numbers)  # the score pass's, computed once
    assert c.numbers.score == pytest.approx(expected + c.numbers.flat_product * c.numbers.value, rel=1e-9)


def test_the_ir_of_a_graph_route_round_trips_through_json() -> None:
    from pcsc.lang.serialize import ir_from_json, ir_json

    for path in SHIPPED:
        route = compile_file(path).route
        data = ir_json(route)
        assert data["shape"]["node"] == "Series"
        assert ir_from_json(json.loads(json.dumps(data))) == route
    chain = compile_file(ROOT / "examples" / "cohort" / "smart_door_lock.route").route
    assert "shape" not in ir_json(chain) and ir_from_json(ir_json(chain)) == chain


def test_the_picture_shows_the_fork_and_the_join() -> None:
    import re

    from pcsc.render.graph import render, route_graph

    c = compile_file(LOCK)
    g = route_graph(c, 0)
    assert g.grid is not None
    cell = dict(zip([n.name for n in g.nodes], g.grid, strict=True))
    # the branches sit in two lanes of the same columns; the join returns to the fork's lane
    assert cell["certified"] == (2, 0) and cell["piloted"] == (2, 1) and cell["renewed"] == (3, 1)
    assert cell["ready"] == (4, 0) and cell["beta"][1] == cell["ready"][1]
    svg = render([c], "svg")
    assert svg.count("<rect x=") - 1 == len(c.route.states)  # and the background
    assert len(re.findall(r"<path d=", svg)) == len(c.route.transitions)
    dot = render([c], "dot")
    assert '"lock_cert_pilot/beta" -> "lock_cert_pilot/certified"' in dot
    assert '"lock_cert_pilot/beta" -> "lock_cert_pilot/piloted"' in dot


# ---------------------------------------------------------------- certificates


def test_a_graph_route_certifies_and_a_tampered_block_is_caught(tmp_path: Path) -> None:
    shutil.copytree(GRAPHS, tmp_path / "graphs")  # a certificate names only files inside its folder
    cert = tmp_path / "graphs.json"
    code, _, err = _cli("compile", str(tmp_path / "graphs"), "--cert", str(cert), "-q")
    assert code == 0, err
    code, out, err = _cli("verify-cert", str(cert))
    assert code == 0 and "verified" in out, out + err
    doc = json.loads(cert.read_text(encoding="utf-8"))
    lock = next(r for r in doc["routes"] if r["route"] == "lock_cert_pilot")
    rules = {s["rule"] for s in lock["steps"]}
    assert {"parallel: C = Σ C_b", "x = (Π P of the other branches) · x(parent) (parallel branch)"} <= rules
    # the parallel block's cost, made smaller: the checker recomputes it from the branches
    step = next(s for s in lock["steps"] if s["rule"] == "parallel: C = Σ C_b")
    value = step["value"]["f"] / 2
    step["value"] = {"f": value, "q": f"{Fraction(value).numerator}/{Fraction(value).denominator}"}
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = _cli("verify-cert", str(tampered))
    assert code != 0 and "PCSC-E912" in out + err


@pytest.mark.parametrize("policy", ["venture-discount@1.1.0", "venture-stop@1.1.0"])
def test_a_graph_route_under_a_policy_fold_certifies(policy: str, tmp_path: Path) -> None:
    """Under `[fold] discount` each block has D (a series the product, a parallel block the
    slowest branch's) and a branch's continuation carries D/D_b; under abandonment the spine
    folds with max(0, ·) and the planner stops before lock_cert_pilot's first item (its
    plain fold is negative), so no transition walks and every D is 0."""
    text = LOCK.read_text(encoding="utf-8").replace('"venture@1.1.0"', f'"{policy}"')
    route = tmp_path / "lock.route"
    route.write_text(text, encoding="utf-8")
    shutil.copytree(POLICIES, tmp_path / "policies")
    cert = tmp_path / "c.json"
    code, out, err = _cli("compile", str(route), "--policy-path", str(tmp_path / "policies"), "--cert", str(cert), "-q")
    assert code == 0, err
    code, out, err = _cli("verify-cert", str(cert))
    assert code == 0 and "verified" in out, out + err
    doc = json.loads(cert.read_text(encoding="utf-8"))
    steps = {s["symbol"]: s for s in doc["routes"][0]["steps"]}
    c = compile_file(LOCK, policy)
    if policy.startswith("venture-discount"):
        d = {t.name: t.d for t in c.numbers.transitions}
        assert {k: steps[f"{k}.d"]["value"]["f"] for k in d} == d
        joined = steps["[1].D"]
        assert joined["rule"] == "parallel: D = min D_b (the join waits for the slowest branch)"
        branches = [steps[o["step"]]["value"]["f"] for o in joined["operands"]["d"]]
        assert joined["value"]["f"] == min(branches) and branches[0] != branches[1]  # one branch is slower
        assert steps["[1.1].D"]["value"]["f"] == d["host_pilot"] * d["pilot_renewals"] * d["installer_network"]
    else:
        assert doc["routes"][0]["fold"]["abandonment"] == {"v": True, "policy": ["fold", "abandonment"]}
        assert steps["beta_batch.stops"]["value"] == {"v": True}
        assert not any(s["value"]["v"] for k, s in steps.items() if k.endswith(".walking"))
        assert all(steps[f"{t.name}.D"]["value"]["f"] == 0.0 for t in c.numbers.transitions)
        assert steps["score"]["value"]["f"] == c.numbers.score == 0.0


def test_a_tampered_discount_of_a_graph_route_is_caught(tmp_path: Path) -> None:
    """A parallel block's D made the faster branch's (the max), the certificate re-signed:
    the checker recomputes the min and names the block."""
    text = LOCK.read_text(encoding="utf-8").replace('"venture@1.1.0"', '"venture-discount@1.1.0"')
    route = tmp_path / "lock.route"
    route.write_text(text, encoding="utf-8")
    shutil.copytree(POLICIES, tmp_path / "policies")
    cert = tmp_path / "c.json"
    code, _, err = _cli("compile", str(route), "--policy-path", str(tmp_path / "policies"), "--cert", str(cert), "-q")
    assert code == 0, err
    doc = json.loads(cert.read_text(encoding="utf-8"))
    steps = {s["symbol"]: s for s in doc["routes"][0]["steps"]}
    faster = max(steps[o["step"]]["value"]["f"] for o in steps["[1].D"]["operands"]["d"])
    x = Fraction(faster)
    steps["[1].D"]["value"] = {"f": faster, "q": f"{x.numerator}/{x.denominator}"}
    body = {k: v for k, v in doc.items() if k != "digest"}
    doc["digest"] = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False,
                                              separators=(",", ":")).encode("utf-8")).hexdigest()
    cert.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = _cli("verify-cert", str(cert))
    assert code == 1 and "PCSC-E912" in out + err and "[1].D (parallel: D = min D_b" in out + err, out + err


def test_redteam_merges_and_retargets_inside_branches_and_on_the_spine() -> None:
    from pcsc.analysis.redteam import enumerate_edits

    c = compile_file(LOCK)
    priors = {k: v.p for k, v in c.policy.policy.priors.items()}
    edits = enumerate_edits(c.route, priors)
    assert [e.subject for e in edits if e.kind == "delete"] == ["pilot_renewals", "retail"]
    # bench -beta_batch-> beta, then the block {certify, retailer_review | host_pilot,
    # pilot_renewals, installer_network} joining at ready, then first_run, retail, national
    merges = {(e.subject, e.arg) for e in edits if e.kind == "merge"}
    assert merges == {("certify", "retailer_review"), ("host_pilot", "pilot_renewals"),
                      ("pilot_renewals", "installer_network"), ("first_run", "retail"), ("retail", "national")}
    retargets = {(e.subject, e.arg) for e in edits if e.kind == "retarget"}
    assert retargets == {
        ("beta_batch", "ready"), ("beta_batch", "first_run"), ("beta_batch", "retail"), ("beta_batch", "national"),
        ("certify", "ready"), ("host_pilot", "ready"), ("pilot_renewals", "ready"),
        ("first_run", "national"), ("retail", "national"),
    }  # (host_pilot, renewed) is the delete of pilot_renewals, (first_run, retail) that of retail
    code, out, err = _cli("redteam", str(LOCK.relative_to(ROOT)), "--format", "json")
    assert code == 0, err
    trials = json.loads(out)["routes"][0]["edits"]
    structural = [t for t in trials if t["kind"] in ("merge", "retarget")]
    assert {t["kind"] for t in structural} == {"merge", "retarget"}
    assert all(t["class"] != "invalid" for t in trials)
    # GATE refuses every edit that leaves a material change uncovered
    assert all(t["class"] == "refused" for t in structural if t["uncovered"])
    skips = [t for t in structural if t["description"].startswith("retarget `beta_batch`")]
    assert len(skips) == 4 and all(t["class"] == "refused" for t in skips)


def test_diff_of_a_block_skipping_retarget_reports_the_skipped_states(tmp_path: Path) -> None:
    from pcsc.analysis.redteam import Edit, apply_edit

    c = compile_file(LOCK)
    edited = apply_edit(c.route, Edit("retarget", "beta_batch", "ready"))
    assert edited.shape is None  # the only parallel block is gone: a chain
    path = tmp_path / "skip.route"
    path.write_text(route_to_text(edited, "beta_batch routed around the block"), encoding="utf-8")
    code, out, err = _cli("diff", str(LOCK.relative_to(ROOT)), str(path), "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["seam_skips"] == ["beta", "certified", "piloted", "renewed"]
    assert sorted(d["removed"]) == ["certify", "host_pilot", "installer_network", "pilot_renewals", "retailer_review"]
    assert d["retargeted"][0]["after"] == {"source": "bench", "target": "ready"}


def _branch(p: dict[str, float], k: dict[str, float], *names: str) -> tuple[float, float]:
    """(P, C) of a series of transitions: Π p, and Σ_i (Π_{j<i} p_j)·c_i."""
    P, C = 1.0, 0.0
    for n in names:
        C += P * k[n]
        P *= p[n]
    return P, C


def test_the_other_shipped_graph_routes_fold_by_hand() -> None:
    oss = compile_file(GRAPHS / "oss_sponsors_freeze.route")
    p = {t.name: t.p for t in oss.numbers.transitions}
    k = {t.name: t.cost.c for t in oss.numbers.transitions}
    V = 4e9 * 0.06 * 0.5
    R_stable = -k["hosted"] + p["hosted"] * (-k["grow"] + p["grow"] * V)
    P_a, C_a = _branch(p, k, "sponsors", "fiscal_host")
    P_b, C_b = _branch(p, k, "api_freeze", "release_1_0", "lts_branch")
    assert oss.route.shape is not None and isinstance(oss.route.shape.items[0], Parallel)  # the start is a fork
    assert oss.numbers.score == pytest.approx(-(C_a + C_b) + P_a * P_b * R_stable, rel=1e-12)

    saas = compile_file(GRAPHS / "saas_retention_upsell.route")
    p = {t.name: t.p for t in saas.numbers.transitions}
    k = {t.name: t.cost.c for t in saas.numbers.transitions}
    V = 3e9 * 0.10 * 0.5
    R_ready = -k["scale"] + p["scale"] * V
    P_a, C_a = _branch(p, k, "onboarding", "health_scores", "churn_review")
    P_b, C_b = _branch(p, k, "pricing_tiers", "group_upsell", "billing_move")
    R_paying = -(C_a + C_b) + P_a * P_b * R_ready
    assert saas.numbers.score == pytest.approx(-k["first_clinics"] + p["first_clinics"] * R_paying, rel=1e-12)
    # the retention branch's seam: Δ = reach·[c + (1 − p)·x], x with the upsell branch's P
    by = {t.name: t for t in saas.numbers.transitions}
    x = (-k["churn_review"] + p["churn_review"] * P_b * R_ready)
    assert by["health_scores"].R_next == pytest.approx(x, rel=1e-12)
    reach = p["first_clinics"] * p["onboarding"]
    assert by["health_scores"].reach == pytest.approx(reach, rel=1e-12)
    (i,) = [s for s in graph_seam_identities(
        saas.route.shape, [t.name for t in saas.numbers.transitions],  # type: ignore[arg-type]
        [t.source for t in saas.numbers.transitions], [t.target for t in saas.numbers.transitions],
        [t.p for t in saas.numbers.transitions], [t.cost.c for t in saas.numbers.transitions],
        [1.0] * len(p), saas.numbers.value, [2], False)]
    assert float(i.delta_formula) == pytest.approx(reach * (k["health_scores"] + (1 - p["health_scores"]) * x))
    assert i.delta_formula > 0 and i.silence_rewarded  # deleting the health scores pays: GATE must catch it


# ---------------------------------------------------------------- hypothesis: lowering


def _canon(shape: Shape) -> str:
    if isinstance(shape, Edge):
        return shape.transition
    if isinstance(shape, Series):
        return "S(" + ",".join(_canon(x) for x in shape.items) + ")"
    return "P(" + ",".join(sorted(_canon(b) for b in shape.branches)) + ")"


def _route_text(pairs: list[tuple[str, str, str]], states: list[str], end: str) -> str:
    lines = ["route g {", "    as_of   2020-01-01", '    policy  "venture@1.1.0"', "    uses    startup"]
    lines += [f"    state {s} {{ units 0 }}" for s in states]
    lines.append(f"    vision {end} {{ tam 1B usd  capture 10%  defensibility 0.5 }}")
    for name, s, t in pairs:
        lines += [f"    transition {name}: {s} -> {t} {{", '        class "hardware/pilot"', "    }"]
    return "\n".join([*lines, "}", ""])


@settings(max_examples=60, deadline=None)
@given(graphs(), st.randoms(use_true_random=False))
def test_lowering_recovers_any_series_parallel_shape(g: Any, rnd: Any) -> None:
    shape, names, src, tgt, *_ = g
    pairs = list(zip(names, src, tgt, strict=True))
    rnd.shuffle(pairs)  # the file's order does not matter
    states = ["start"] + sorted({s for s in src + tgt} - {"start"})
    _, out = compile_text(_route_text(pairs, states, "end"))
    (c,) = out
    r = c.route
    if isinstance(shape, Series) and all(isinstance(x, Edge) for x in shape.items):
        assert r.shape is None  # a chain stays a chain
    else:
        assert r.shape is not None and _canon(r.shape) == _canon(shape)
    seen = {"start"}
    for t in r.transitions:  # a topological order
        assert t.source in seen
        seen.add(t.target)
    assert [s.name for s in r.states][0] == "start" and r.states[-1].name == "end"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=9))
def test_any_small_graph_lowers_or_gets_a_clear_error(edges: list[tuple[int, int]]) -> None:
    pairs = [(f"t{i}", f"s{a}", f"s{b}") for i, (a, b) in enumerate(edges)]
    states = [f"s{i}" for i in range(6)]
    text = _route_text(pairs, states, "s5")
    s, out = compile_text(text)
    codes = {d.code for d in s.diags.items if d.severity == "error"}
    if out:
        (c,) = out
        assert not codes and c.route.transitions[-1].target == "s5"
        if c.route.shape is not None:
            assert sorted(edges_of(c.route.shape)) == sorted(n for n, _, _ in pairs)
    else:
        assert codes and codes <= {"PCSC-E210", "PCSC-E211", "PCSC-E212", "PCSC-E215"}, codes


def test_the_symbolic_derivation_of_a_graph_seam() -> None:
    from pcsc.analysis.seams.graphs import graph_derivation

    d = graph_derivation(FORK, "c")
    assert d["shape"].startswith("graph S(e,P(S(e,*,e),e),e,e)")
    assert d["residual"] == "0" and d["verified"] == "True"
    assert "V" in d["difference"] and d["difference"] == d["paper"]


# ---------------------------------------------------------------- value of information on a graph


def test_the_value_of_information_refolds_a_graph_route_by_hand() -> None:
    """EVI of learning `certify`'s p on the small fork: R(q) = −(C_A + C_B(q)) + P_A·P_B(q)·R_sell,
    with branch A = pilot; launch_a and branch B = certify; launch_b (docs/graphs.md). The
    vision is scaled so that R is 0 at the scored p, so the spread straddles break-even."""
    text = SMALL.replace('class "hardware/certification"', 'class "hardware/certification"\n        estimates 0.3 0.8')

    def numbers(t: str) -> tuple[Any, dict[str, tuple[float, float]], float]:
        _, (c,) = compile_text(t)
        return c, {x.name: (x.p, x.cost.c) for x in c.numbers.transitions}, c.numbers.value

    def R(pc: dict[str, tuple[float, float]], V: float, q: float) -> float:
        (pp, cp), (pa, ca), (_, cc), (pb, cb), (ps, cs) = (pc[n] for n in ("pilot", "launch_a", "certify",
                                                                            "launch_b", "sell"))
        return -(cp + pp * ca + cc + q * cb) + pp * pa * q * pb * (-cs + ps * V)

    _, pc, V = numbers(text)
    p = pc["certify"][0]
    # V* where R = 0, then the tam scaled to it (the value is proportional to the tam)
    (pp, cp), (pa, ca), (_, cc), (pb, cb), (ps, cs) = (pc[n] for n in ("pilot", "launch_a", "certify", "launch_b",
                                                                        "sell"))
    v_star = ((cp + pp * ca + cc + p * cb) / (pp * pa * p * pb) + cs) / ps
    c2, pc2, V2 = numbers(text.replace("tam 1B usd", f"tam {1e9 * v_star / V:.6f} usd"))
    assert abs(R(pc2, V2, p)) < 1e-3 * pc2["sell"][1]
    row = next(r for r in c2.numbers.voi.rows if r.name == "certify")
    qs = [p - 0.25, p + 0.25]  # p + (e − ē) for the estimates 0.3 and 0.8
    assert row.values == pytest.approx(qs)
    evi = sum(max(0.0, R(pc2, V2, q)) for q in qs) / 2 - max(0.0, R(pc2, V2, p))
    assert evi > 0
    assert row.evi == pytest.approx(evi, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(graphs())
def test_no_merge_or_retarget_of_a_graph_route_is_invalid(g: Any) -> None:
    from pcsc.analysis.redteam import apply_edit, enumerate_edits

    shape, names, src, tgt, *_ = g
    states = ["start"] + sorted({s for s in src + tgt} - {"start"})
    _, out = compile_text(_route_text(list(zip(names, src, tgt, strict=True)), states, "end"))
    (c,) = out
    edits = [e for e in enumerate_edits(c.route, {"hardware/pilot": 0.5}, reclass="none")
             if e.kind in ("merge", "retarget")]
    if c.route.shape is not None:
        assert any(e.kind == "merge" for e in edits) == any(
            isinstance(a, Edge) and isinstance(b, Edge)
            for run in _runs(c.route.shape) for a, b in zip(run.items, run.items[1:], strict=False)
        )
    for edit in edits:
        edited = apply_edit(c.route, edit)
        s, again = compile_text(route_to_text(edited, "edited"))
        assert len(again) == 1 and not s.diags.has_errors, (edit, [d.message for d in s.diags.items])
        r = again[0].route
        # the edited IR is the route its text compiles to: same shape, transitions and states
        assert (r.shape is None) == (edited.shape is None), edit
        if r.shape is not None and edited.shape is not None:
            assert _canon(r.shape) == _canon(edited.shape), edit
        assert {(t.name, t.source, t.target) for t in r.transitions} == {
            (t.name, t.source, t.target) for t in edited.transitions
        }
        assert {x.name for x in r.states} == {x.name for x in edited.states}
        assert len(r.transitions) < len(c.route.transitions)


def _runs(shape: Shape) -> list[Series]:
    if isinstance(shape, Edge):
        return []
    kids = shape.items if isinstance(shape, Series) else shape.branches
    return ([shape] if isinstance(shape, Series) else []) + [x for k in kids for x in _runs(k)]
