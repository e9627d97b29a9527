"""Seams (docs/formulas.md, "Seams"): the deletion identity in exact rationals, its symbolic proof,
splicing and printing routes, and the `pcsc seams` / `pcsc splice` contract (§9, §10).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pcsc.analysis.seams.analysis import analyse
from pcsc.analysis.seams.identity import seam_identity
from pcsc.analysis.seams.splice import SpliceError, seam_indices, splice, splice_text
from pcsc.analysis.seams.symbolic import derivation, paper_formula, verify_shape
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.model import Span
from pcsc.lang.ir import Route
from pcsc.lang.printer import expression, route_to_text
from pcsc.policy.load import PolicyStore
from tests.conftest import EXAMPLES, ROOT, SPEC_ROUTE, pin_libraries, run_cli
from tests.test_spec_numbers import hand_computation

pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

STORE = PolicyStore()
AS_OF = dt.date(2012, 6, 1)


# ---------------------------------------------------------------------- the identity, exactly
def exact_fold(ps: list[Fraction], cs: list[Fraction], value: Fraction) -> Fraction:
    """R_0 of R_n = V, R_i = −c_i + p_i·R_{i+1} (written out again here, on purpose)."""
    r = value
    for p, c in zip(reversed(ps), reversed(cs), strict=True):
        r = p * r - c
    return r


probabilities = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))
costs = st.one_of(st.just(0.0), st.floats(0.0, 1e10))
values = st.floats(-1e13, 1e13)


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[float], list[float], float]:
    n = draw(st.integers(3, 12))
    ps = draw(st.lists(probabilities, min_size=n, max_size=n))
    cs = draw(st.lists(costs, min_size=n, max_size=n))
    return ps, cs, draw(values)


@settings(max_examples=100, deadline=None)
@given(chains())
@example(([0.0, 0.5, 0.5], [1.0, 2.0, 3.0], 10.0))  # reach 0: the corollary says nothing
@example(([0.5, 1.0, 0.5, 0.5], [1.0, 2.0, 3.0, 4.0], 10.0))  # p_k = 1: no threshold
@example(([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], -5.0))
@example(([0.3, 0.0, 0.9], [10.0, 5.0, 1.0], 1e6))  # p_k = 0: the whole tail is value kept
def test_identity_holds_exactly(chain: tuple[list[float], list[float], float]) -> None:
    ps, cs, value = chain
    P, C, V = [Fraction(p) for p in ps], [Fraction(c) for c in cs], Fraction(value)
    honest = exact_fold(P, C, V)
    for k in range(1, len(ps) - 1):
        s = seam_identity(ps, cs, value, k)
        refold = exact_fold(P[:k] + P[k + 1 :], C[:k] + C[k + 1 :], V) - honest
        assert s.delta_refold == refold
        assert s.delta_formula == refold and s.identity_holds
        reach = Fraction(1)
        for p in P[:k]:
            reach *= p
        assert s.reach == reach
        assert s.R_next == exact_fold(P[k + 1 :], C[k + 1 :], V)
        assert s.removed_cost == reach * C[k]
        assert s.removed_cost + s.retained_value == s.delta_formula
        assert s.silence_rewarded is (refold > 0)
        if reach == 0 or P[k] == 1:
            assert s.sign_matches is None
        else:
            assert s.threshold == -C[k] / (1 - P[k])
            assert s.sign_matches is True
        if P[k] == 1:
            assert s.threshold is None


# ---------------------------------------------------------------------- the symbolic proof
Formula = Callable[[list[Any], list[Any], Any, int], Any]


def _reach(ps: list[Any], upto: int) -> Any:
    r: Any = 1
    for p in ps[:upto]:
        r = r * p
    return r


def no_survival(ps: list[Any], cs: list[Any], R: Any, k: int) -> Any:  # drops the (1 − p_k) factor
    return _reach(ps, k) * (cs[k] + R)


def reach_through_k(ps: list[Any], cs: list[Any], R: Any, k: int) -> Any:  # Π over i ≤ k, not i < k
    return _reach(ps, k + 1) * (cs[k] + (1 - ps[k]) * R)


def cost_sign(ps: list[Any], cs: list[Any], R: Any, k: int) -> Any:  # −c_k instead of +c_k
    return _reach(ps, k) * (-cs[k] + (1 - ps[k]) * R)


def success_not_failure(ps: list[Any], cs: list[Any], R: Any, k: int) -> Any:  # p_k for (1 − p_k)
    return _reach(ps, k) * (cs[k] + ps[k] * R)


def previous_cost(ps: list[Any], cs: list[Any], R: Any, k: int) -> Any:  # c_{k−1} for c_k
    return _reach(ps, k) * (cs[k - 1] + (1 - ps[k]) * R)


def removed_cost_only(ps: list[Any], cs: list[Any], R: Any, k: int) -> Any:  # one channel of two
    return _reach(ps, k) * cs[k]


WRONG: list[Formula] = [no_survival, reach_through_k, cost_sign, success_not_failure, previous_cost,
                        removed_cost_only]


def test_symbolic_verification_accepts_the_paper_formula() -> None:
    shapes = [(n, k) for n in range(3, 11) for k in range(1, n - 1)]
    assert len(shapes) == 36
    assert all(verify_shape(n, k) for n, k in shapes)
    assert all(verify_shape(n, k, formula=paper_formula) for n, k in [(3, 1), (10, 8)])


@pytest.mark.parametrize("wrong", WRONG, ids=lambda f: f.__name__)
def test_symbolic_verification_rejects_wrong_formulas(wrong: Formula) -> None:
    for n, k in [(3, 1), (4, 2), (6, 1), (7, 3), (10, 8)]:
        assert verify_shape(n, k, formula=wrong) is False, (wrong.__name__, n, k)


def test_wrong_formulas_still_agree_on_some_numbers() -> None:
    # why a symbolic proof and not a numeric spot check: wherever p_k = 0 the formula
    # without the (1 − p_k) factor gives the paper's number
    ps, cs, R = [0.5, 0.0, 0.5], [1.0, 0.0, 1.0], 7.0
    assert no_survival(ps, cs, R, 1) == paper_formula(ps, cs, R, 1)
    assert verify_shape(3, 1, formula=no_survival) is False


def test_verify_shape_refuses_a_seam_that_is_not_interior() -> None:
    for n, k in [(3, 0), (3, 2), (5, 4), (2, 1)]:
        with pytest.raises(ValueError):
            verify_shape(n, k)


@pytest.mark.parametrize(("n", "k"), [(3, 1), (5, 2), (7, 5), (10, 1)])
def test_derivation(n: int, k: int) -> None:
    d = derivation(n, k)
    assert d["residual"] == "0" and d["verified"] == "True" and d["shape"] == f"n={n}, k={k}"
    ps, cs = list(sympy.symbols(f"p0:{n}")), list(sympy.symbols(f"c0:{n}"))
    R = sympy.Symbol(f"R{k + 1}")
    expected = sympy.Mul(*ps[:k]) * (cs[k] + (1 - ps[k]) * R)
    assert sympy.expand(sympy.sympify(d["paper"]) - expected) == 0
    assert sympy.expand(sympy.sympify(d["difference"]) - expected) == 0


# ---------------------------------------------------------------------- generated routes
CLASSES = ("devtools/first-users", "devtools/first-revenue", "devtools/scale")
UNIT = {"developers": "", "paying_teams": "", "arr": " usd"}
TEXT = st.text(st.sampled_from("abcdefgh XYZ0123#{}\"\\'\n\t.,-é"), max_size=30)


def literal(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


@st.composite
def counts(draw: st.DrawFn) -> tuple[str, float]:
    n = draw(st.integers(0, 999_999))
    suffix = draw(st.sampled_from(["", "", "k", "M"]))
    scale = {"": 1, "k": 1_000, "M": 1_000_000}[suffix]
    return (f"{n:_}" if draw(st.booleans()) else str(n)) + suffix, float(n * scale)


@st.composite
def comparison(draw: st.DrawFn, field: str, value: float | bool) -> str:
    if isinstance(value, bool):
        return f"soc2 == {'true' if draw(st.booleans()) else 'false'}"
    op = draw(st.sampled_from([">=", ">=", "<=", "==", ">", "<"]))
    bound = value if draw(st.booleans()) else draw(counts())[1]
    text = repr(bound).removesuffix(".0")
    if draw(st.booleans()):
        return f"{field} {op} {text}{UNIT[field]}"
    return f"{text}{UNIT[field]} {op} {field}"


@st.composite
def routes(draw: st.DrawFn, min_n: int = 3, max_n: int = 7) -> str:
    """A route like the spec route, of min_n..max_n transitions, that compiles without
    an error under venture@1.0.0 (coverage may or may not hold)."""
    n = draw(st.integers(min_n, max_n))
    fields = ["developers", "paying_teams", "arr"] + (["soc2"] if draw(st.booleans()) else [])
    written: list[dict[str, tuple[str, float | bool]]] = []
    for i in range(n + 1):
        listed = fields if i == 0 else draw(st.lists(st.sampled_from(fields), unique=True, min_size=1))
        items: dict[str, tuple[str, float | bool]] = {}
        for f in listed:
            if f == "soc2":
                b = draw(st.booleans())
                items[f] = ("true" if b else "false", b)
            else:
                text, v = draw(counts())
                items[f] = (text + UNIT[f], v)
        written.append(items)
    full: list[dict[str, float | bool]] = []
    current: dict[str, float | bool] = {}
    for items in written:
        current = {**current, **{f: v for f, (_, v) in items.items()}}
        full.append(current)

    blocks = [f"as_of {AS_OF.isoformat()}", 'policy "venture@1.0.0"', "uses venture"]
    for i, listed_items in enumerate(written):
        blocks.append(f"state s{i} {{ " + "  ".join(f"{f} {t}" for f, (t, _) in listed_items.items()) + " }")
    tam = draw(st.integers(1, 50_000))
    blocks.append(f"vision s{n} {{\n    tam {tam}M usd\n    capture {draw(st.integers(0, 100))}%\n"
                  f"    defensibility {draw(st.integers(0, 10)) / 10}\n}}")
    names = [f"t{i}" for i in range(1, n + 1)]
    for i, name in enumerate(names, start=1):
        body = [f'class "{draw(st.sampled_from(CLASSES))}"']
        for key in ("actor", "mechanism", "asset"):
            if draw(st.integers(0, 3)):
                body.append(f"{key} {literal(draw(TEXT))}")
        target = full[i]
        bounded = draw(st.lists(st.sampled_from(sorted(target)), unique=True, max_size=4))
        if bounded:
            parts = [draw(comparison(f, target[f])) for f in bounded]
            joiner = " or " if draw(st.integers(0, 5)) == 0 else " and "
            threshold = joiner.join(parts)
            if len(parts) > 1 and draw(st.booleans()):  # spread over lines, with a comment
                threshold = threshold.replace(joiner, f"  # part\n        {joiner.strip()} ", 1)
            body.append(f"threshold {threshold}")
        if draw(st.booleans()):
            body.append(f"kill developers < {draw(st.integers(0, 1000))}")
        if draw(st.booleans()):
            body.append(f"horizon {draw(st.integers(1, 36))} {draw(st.sampled_from(['days', 'months', 'years']))}")
        cost = draw(st.lists(st.tuples(st.integers(0, 20), counts()), max_size=3))
        if cost:
            lines = [f"    c{j} {m} * {t} usd" for j, (m, (t, _)) in enumerate(cost)]
            body.append("cost {\n" + "\n".join(lines) + "\n}")
        if draw(st.booleans()):
            body.append(f"learning_cost {draw(counts())[0]} usd")
        estimates = draw(st.lists(st.integers(0, 100), max_size=3))
        if estimates:
            body.append("estimates " + " ".join(str(e / 100) for e in estimates))
        discharges = draw(st.lists(st.sampled_from(["adoption", "monetization", "compliance"]), unique=True))
        if discharges:
            body.append("discharges " + ", ".join(discharges))
        blocks.append(f"transition {name}: s{i - 1} -> s{i} {{\n" + "\n".join(f"    {b}" for b in body) + "\n}")
    for j in range(draw(st.integers(0, 4))):
        supports = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
        contradicts = draw(st.lists(st.sampled_from(names), unique=True, max_size=2, min_size=0 if supports else 1))
        body = [
            f"captured {(AS_OF + dt.timedelta(days=draw(st.integers(-400, 30)))).isoformat()}",
            f"tier {draw(st.integers(1, 3))}",
            f"weight {draw(st.integers(0, 100)) / 100}",
            f"excerpt {literal(draw(TEXT))}",
        ]
        if draw(st.booleans()):
            body.append(f"source {literal(draw(TEXT))}")
        if supports:
            body.append("supports " + ", ".join(supports))
        if contradicts:
            body.append("contradicts " + ", ".join(contradicts))
        if draw(st.integers(0, 4)) == 0:
            body.append("unverified")
        blocks.append(f"evidence e{j} {{\n" + "\n".join(f"    {b}" for b in body) + "\n}")
    criteria = draw(st.lists(st.sampled_from(["team", "market", "wedge"]), unique=True))
    if criteria:
        blocks.append("criteria {\n" + "\n".join(f"    {c} {draw(st.integers(0, 100))}" for c in criteria) + "\n}")
    blocks = draw(st.permutations(blocks))
    indented = ["\n".join("    " + line for line in b.splitlines()) for b in blocks]
    title = f" {literal(draw(TEXT))}" if draw(st.booleans()) else ""
    return f"# generated\nroute generated{title} {{\n" + "\n\n".join(indented) + "\n}\n"


def compile_one(text: str, shown: str = "generated.route", route_dir: Path = EXAMPLES) -> tuple[Compiled, Session]:
    session = Session(policies=STORE)
    found = session.routes_from_text(text, shown, route_dir)
    compiled = [session.compile_route(r) for r in found]
    errors = [f"{d.code} {d.span.line}:{d.span.column}: {d.message}" for d in session.diags.items
              if d.severity == "error"]
    assert not errors, "\n".join(errors) + "\n\n" + text
    assert len(compiled) == 1 and compiled[0] is not None
    return compiled[0], session


IGNORED = {
    "file",  # where the text came from
    "listed",  # printed states list every field (carry-forward resolved)
    "value_spans",  # where each listed field is written: as `listed`, and spans are aside
    "threshold_text",  # compared on their own: printed on one line, comments dropped
    "kill_text",
    "percent",  # how a number is written (`10%` or `0.1`): the value is compared
    "written",  # the names a vision block's lines state, as `listed`
}


def plain(x: Any) -> Any:
    """The IR's values, spans and provenance aside; bools stay apart from numbers."""
    if isinstance(x, Span):
        return None
    if attrs.has(type(x)):
        return (type(x).__name__,) + tuple(
            (f.name, plain(getattr(x, f.name))) for f in attrs.fields(type(x)) if f.name not in IGNORED
        )
    if isinstance(x, (tuple, list)):
        return tuple(plain(v) for v in x)
    if isinstance(x, (bool, int, float)):
        return (type(x).__name__, x)
    return x


def assert_same_ir(printed: Route, original: Route) -> None:
    assert plain(printed) == plain(original)
    for a, b in zip(printed.transitions, original.transitions, strict=True):
        for text_a, text_b in ((a.threshold_text, b.threshold_text), (a.kill_text, b.kill_text)):
            assert (text_a is None) == (text_b is None)
            if text_b is not None and text_a is not None:
                assert text_a == expression(text_b) and "\n" not in text_a


@settings(max_examples=100, deadline=None)
@given(routes())
def test_splice_then_compile_never_crashes(text: str) -> None:
    honest, session = compile_one(text)
    route = honest.route
    assert 3 <= len(route.transitions) <= 7
    for k in seam_indices(route):
        spliced_text = splice_text(route, k)
        spliced, _ = compile_one(spliced_text, f"seam-{k}.route")
        assert [t.name for t in spliced.route.transitions] == [t.name for i, t in enumerate(route.transitions)
                                                                 if i != k]
        assert_same_ir(spliced.route, splice(route, k))
        assert spliced.decision.verdict in ("released", "suspend-and-ask")
    result = analyse(honest, session)
    assert [s.k for s in result.seams] == list(seam_indices(route))
    assert not session.diags.has_errors
    for s in result.seams:
        assert s.identity.identity_holds and s.symbolically_verified
        assert s.pipeline is not None
        assert s.pipeline.gate.verdict in ("released", "suspend-and-ask")
        assert s.pipeline.dock.verdict in ("released", "docked")


@settings(max_examples=100, deadline=None)
@given(routes(min_n=1, max_n=7))
def test_printer_round_trip_of_generated_routes(text: str) -> None:
    honest, _ = compile_one(text)
    printed, _ = compile_one(route_to_text(honest.route), "printed.route")
    assert_same_ir(printed.route, honest.route)
    assert printed.numbers.score == honest.numbers.score
    assert printed.decision.verdict == honest.decision.verdict


def test_printer_round_trip_of_every_example() -> None:
    files = sorted(EXAMPLES.glob("*.route")) + sorted((EXAMPLES / "cohort").glob("*.route"))
    assert len(files) >= 30
    checked = 0
    for path in files:
        session = Session(policies=STORE)
        for route in session.load_routes(path):
            printed, _ = compile_one(route_to_text(route), "printed.route", path.parent)
            assert_same_ir(printed.route, route)
            checked += 1
    assert checked >= 35


def test_printer_keeps_a_multi_line_threshold_whole() -> None:
    # a comment inside a threshold that spans lines must not swallow the rest of it
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace(
        "threshold  developers >= 5k and paying_teams >= 200",
        "threshold  developers >= 5k   # the users\n            and paying_teams >= 200",
    )
    assert "# the users" in text
    honest, _ = compile_one(text)
    printed_text = route_to_text(honest.route)
    assert "# the users" not in printed_text
    assert "threshold  developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd" in printed_text
    printed, _ = compile_one(printed_text)
    assert_same_ir(printed.route, honest.route)
    assert printed.decision.verdict == "released"


def test_expression_text() -> None:
    assert expression("a >= 1   # x\n  and b == \"p  # q\"  # y\n") == 'a >= 1 and b == "p  # q"'
    assert expression('x == "say \\"hi\\"  #"') == 'x == "say \\"hi\\"  #"'


def test_splice_recomputes_due_dates() -> None:
    honest, _ = compile_one(SPEC_ROUTE.read_text(encoding="utf-8"), str(SPEC_ROUTE))
    spliced = splice(honest.route, 1)
    # launch: 90 days from 2012-06-01; expand: 4 years after that (monetize's 12 months gone)
    assert [t.due for t in spliced.transitions] == [dt.date(2012, 8, 30), dt.date(2016, 8, 30)]
    assert [t.due for t in honest.route.transitions][-1] == dt.date(2017, 8, 30)


# ---------------------------------------------------------------------- the command line
SEAM_KEYS = {"k", "transition", "delta", "delta_exact", "delta_refold", "identity_holds", "symbolically_verified",
             "threshold", "sign_matches", "removed_cost", "retained_value", "silence_rewarded", "pipeline"}
SUMMARY_KEYS = {"routes", "deletions", "identity_holds", "sign_matches", "routes_with_rewarded_deletion",
                "rewarded_deletions", "spliced_refused", "honest_suspended"}


def spec_seam_by_hand() -> dict[str, float]:
    h = hand_computation()
    p, c, V = h["p"], h["c"], h["V"]
    assert isinstance(p, list) and isinstance(c, list) and isinstance(V, float)
    R2 = -c[2] + p[2] * V
    return {
        "delta": p[0] * (c[1] + (1 - p[1]) * R2),  # docs/formulas.md, "Seams", k = 1
        "removed_cost": p[0] * c[1],
        "retained_value": p[0] * (1 - p[1]) * R2,
        "threshold": -c[1] / (1 - p[1]),
        "R_next": R2,
    }


def test_seams_json_contract(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "seams", "--format", "json", "examples/devtools_api.route",
                           "examples/ci_cache.route")
    assert code == 0
    packet = json.loads(out)
    assert SUMMARY_KEYS <= set(packet["summary"])
    assert [r["route"] for r in packet["routes"]] == ["devtools_api", "ci_cache"]
    seams = [s for r in packet["routes"] for s in r["seams"]]
    assert seams and packet["summary"]["deletions"] == len(seams)
    assert packet["summary"]["routes"] == 2
    for s in seams:
        assert SEAM_KEYS <= set(s), SEAM_KEYS - set(s)
        assert {"delta", "drift", "verdict"} <= set(s["pipeline"])
        num, den = s["delta_exact"].split("/")
        assert Fraction(int(num), int(den)) == Fraction(s["delta_refold"])
        assert s["identity_holds"] is True and s["symbolically_verified"] is True
        assert s["delta"] == float(Fraction(s["delta_exact"]))
    assert packet["summary"]["identity_holds"] == len(seams)

    # delta_exact is the exact formula over the compiled p and c (floats read exactly)
    code, out, _ = run_cli(capsys, "compile", "--format", "json", "examples/devtools_api.route")
    (compiled,) = json.loads(out)["routes"]
    P = [Fraction(t["p"]) for t in compiled["transitions"]]
    C = [Fraction(t["c"]) for t in compiled["transitions"]]
    V = Fraction(compiled["value"])
    R2 = -C[2] + P[2] * V
    spec = packet["routes"][0]["seams"]
    assert len(spec) == 1
    assert Fraction(spec[0]["delta_exact"]) == P[0] * (C[1] + (1 - P[1]) * R2)


def test_spec_route_seam_one(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    hand = spec_seam_by_hand()
    assert hand["delta"] == pytest.approx(3.6251e6, rel=1e-4)
    code, out, _ = run_cli(capsys, "seams", "--format", "json", "examples/devtools_api.route")
    assert code == 0
    (s,) = json.loads(out)["routes"][0]["seams"]
    assert (s["k"], s["transition"]) == (1, "monetize")
    for key in ("delta", "removed_cost", "retained_value", "threshold"):
        assert s[key] == pytest.approx(hand[key], rel=1e-12), key
    assert s["silence_rewarded"] is True and s["sign_matches"] is True
    # the pipeline arm: launch now pays the delta-indexed floor of what it claims, and GATE refuses
    pipe = s["pipeline"]
    assert pipe["verdict"] == "suspend-and-ask" and pipe["drift"] is True
    assert pipe["drifted"] == ["launch.c: 99000.0 -> 613333.3333333333"]
    h = hand_computation()
    p, c, V, R = h["p"], h["c"], h["V"], h["R"]
    assert isinstance(p, list) and isinstance(c, list) and isinstance(V, float) and isinstance(R, list)
    c_launch = (1e5 + 100 / 900 * 5e5) + (4e5 + 0.2e6 / 9e6 * 2.6e6)
    spliced = -c_launch + p[0] * (-c[2] + p[2] * V)
    assert pipe["delta"] == pytest.approx(spliced - R[0], rel=1e-12)
    summary = json.loads(out)["summary"]
    assert summary["spliced_refused"] == 1 and summary["honest_suspended"] == 0
    assert summary["rewarded_deletions"] == 1 and summary["routes_with_rewarded_deletion"] == 1


def test_seams_symbolic_text_prints_the_paper_formula(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "seams", "--symbolic", "examples/devtools_api.route")
    assert code == 0
    p0, p1, c1, R2 = sympy.symbols("p0 p1 c1 R2")
    paper = sympy.sstr(p0 * (c1 + (1 - p1) * R2))
    assert f"paper:   {paper}" in out
    assert "shape n=3, k=1" in out and "expands to 0" in out and "verified: True" in out
    code, out, _ = run_cli(capsys, "seams", "--symbolic", "--format", "json", "examples/devtools_api.route")
    (d,) = json.loads(out)["symbolic"]
    assert d["paper"] == paper and d["residual"] == "0"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["examples/devtools_api.route", "--seam", "2"],
         "seam 2 is not interior: route `devtools_api` has seams 1 to 1"),
        (["examples/devtools_api.route", "--seam", "0"], "seam 0 is not interior"),
        (["examples/devtools_api.route", "--seam=-1"], "argument --seam: expected a whole number in ASCII digits"),
        (["examples/devtools_api.route", "--route", "devtool_api", "--seam", "1"],
         "no route `devtool_api` in examples/devtools_api.route; did you mean `devtools_api`?"),
        (["examples/feature_flags.route", "--seam", "1"], "the file holds several routes; choose one with --route"),
        (["examples/log_search.route", "--seam", "1"], "has 2 transitions: a seam needs at least three"),
        (["examples/db_gui_subscription.route", "--seam", "1"], "has 1 transition: a seam needs at least three"),
    ],
)
def test_splice_usage_errors(at_root: None, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, "splice", *argv)
    assert code == 2 and out == ""
    assert "\npcsc splice: error: " in "\n" + err and message in err  # argparse's follows its usage line
    assert "Traceback" not in err


def test_splice_error_for_every_non_interior_seam() -> None:
    honest, _ = compile_one(SPEC_ROUTE.read_text(encoding="utf-8"))
    for k in (-2, -1, 0, 2, 3, 100):
        with pytest.raises(SpliceError):
            splice(honest.route, k)
        with pytest.raises(SpliceError):
            splice_text(honest.route, k)


def test_splice_writes_a_file_that_compiles(at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_path = tmp_path / "seam.route"
    code, out, _ = run_cli(capsys, "splice", "examples/devtools_api.route", "--seam", "1", "-o", str(out_path))
    assert code == 0 and out == ""
    code, stdout_text, _ = run_cli(capsys, "splice", "examples/devtools_api.route", "--seam", "1")
    assert code == 0 and stdout_text == out_path.read_text(encoding="utf-8")
    assert stdout_text.startswith("# Spliced by pcsc: seam k=1 of route devtools_api")
    code, _, err = run_cli(capsys, "check", "--coverage", "off", str(out_path))
    assert code == 0, err  # well-formed: it parses, lowers and binds
    # but `check` discharges coverage: launch now claims changes it never measured
    code, _, err = run_cli(capsys, "check", str(out_path))
    assert code == 1
    assert err.count("[PCSC-E501]") == 3 and "`launch` changes developers 0 -> 5,000" in err


def test_pipeline_arm_finds_the_route_s_own_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the route is shown under a name that is not a path to it; its library sits beside it
    library = (ROOT / "obligations/venture.obl").read_text(encoding="utf-8")
    (tmp_path / "mine.obl").write_text(library.replace("library venture version", "library mine version"),
                                       encoding="utf-8")
    ref = pin_libraries(tmp_path / "policies", [tmp_path / "mine.obl"])  # the route's policy pins it
    route_file = tmp_path / "r.route"
    route_file.write_text(SPEC_ROUTE.read_text(encoding="utf-8").replace("uses    venture", "uses    mine")
                          .replace('"venture@1.0.0"', f'"{ref}"'), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    session = Session(policies=PolicyStore([tmp_path / "policies"]))
    (route,) = session.load_routes(route_file, "shown-as.route")
    honest = session.compile_route(route)
    assert honest is not None and honest.decision.verdict == "released"
    (seam,) = analyse(honest, session).seams
    assert not session.diags.has_errors, [d.message for d in session.diags.items]
    assert seam.pipeline is not None and seam.pipeline.verdict == "suspend-and-ask"
    assert seam.pipeline.failed_requires == ("require measured(delta)",)
