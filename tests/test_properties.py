"""Invariants of lowering and of the numbers (docs/language.md, docs/formulas.md), checked with hypothesis.

Two kinds of input: routes generated as `.route` text and compiled through the real
pipeline (`pcsc.compiler.session.Session`), and direct calls of the pure functions in
`pcsc.score`. Budgets are small (see SETTINGS) so the suite stays fast.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import tempfile
from decimal import Decimal
from fractions import Fraction
from functools import cache
from pathlib import Path

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pcsc.base import canonical
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.model import Span
from pcsc.lang.ir import CostItem, Evidence, FieldDecl, Material, Route, Transition
from pcsc.lang.serialize import ir_from_json, ir_json
from pcsc.lang.syntax.literals import parse_number
from pcsc.policy.load import PolicyStore
from pcsc.policy.model import FloorTable, Policy, Reweighting
from pcsc.score.cost import Delta, cost, deltas, is_material, piecewise_floor
from pcsc.score.evidence import admissible, effective_weight, reweight
from pcsc.score.fold import chain_fold
from tests.conftest import EXAMPLES

# When a property fails, hypothesis's pytest plugin imports libcst to suggest an
# `@example` patch, and libcst's import warns (mypy_extensions.TypedDict is deprecated).
# Under `filterwarnings = error` that warning turns the failure report into an
# INTERNALERROR that ends the whole run; this keeps a failure a plain failure.
pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

SETTINGS = settings(max_examples=100, deadline=None)
SPAN = Span("generated.route", 1, 1, 1, 1)
AS_OF = dt.date(2015, 6, 1)
CLASSES = ("devtools/first-users", "devtools/first-revenue", "devtools/scale")
FIELD_TYPES = {"developers": "count", "paying_teams": "count", "arr": "usd", "soc2": "bool"}


@cache
def policy_store() -> PolicyStore:
    """One store for the module: it caches venture@1.0.0 once loaded."""
    return PolicyStore()


def venture() -> Policy:
    return policy_store().load_ref("venture@1.0.0").policy


# ---------------------------------------------------------------------- generated routes
@attrs.frozen
class RouteSpec:
    """What the generated text says, kept beside the text to check the IR against."""

    text: str
    fields: tuple[str, ...]
    states: tuple[tuple[str, tuple[tuple[str, float | bool], ...]], ...]  # chain order, as written
    transitions: tuple[str, ...]  # chain order


@st.composite
def numbers(draw: st.DrawFn) -> tuple[str, float]:
    """A non-negative number as source text (`_` separators, `k`/`M` suffixes) and its value."""
    n = draw(st.integers(0, 999_999))
    suffix = draw(st.sampled_from(["", "", "k", "M"]))
    scale = {"": 1, "k": 1_000, "M": 1_000_000}[suffix]
    digits = f"{n:_}" if draw(st.booleans()) else str(n)
    return digits + suffix, float(n * scale)


@st.composite
def field_values(draw: st.DrawFn, field: str) -> tuple[str, float | bool]:
    if FIELD_TYPES[field] == "bool":
        b = draw(st.booleans())
        return ("true" if b else "false"), b
    text, value = draw(numbers())
    return (f"{text} usd" if FIELD_TYPES[field] == "usd" else text), value


def condition(field: str, op: str, value: float | bool) -> str:
    if isinstance(value, bool):
        return f"{field} == {'true' if value else 'false'}"
    amount = repr(value).removesuffix(".0")
    return f"{field} {op} {amount}{' usd' if FIELD_TYPES[field] == 'usd' else ''}"


@st.composite
def route_specs(draw: st.DrawFn) -> RouteSpec:
    n = draw(st.integers(1, 5))
    fields = tuple(draw(st.lists(st.sampled_from(sorted(FIELD_TYPES)), min_size=1, max_size=4, unique=True)))
    # states s0 … sn along the chain; the start state lists every field, later ones any subset
    written: list[tuple[str, list[tuple[str, str, float | bool]]]] = []
    for i in range(n + 1):
        listed = list(fields) if i == 0 else draw(st.lists(st.sampled_from(fields), unique=True))
        if i == 0:
            listed = draw(st.permutations(listed))
        written.append((f"s{i}", [(f, *draw(field_values(f))) for f in listed]))
    current: dict[str, float | bool] = {}
    full: list[dict[str, float | bool]] = []
    for _, items in written:
        current = {**current, **{f: v for f, _, v in items}}
        full.append(current)

    lines = ["route generated {", f"    as_of {AS_OF.isoformat()}", '    policy "venture@1.0.0"', "    uses venture"]
    state_blocks = [
        f"    state {name} {{ " + "  ".join(f"{f} {text}" for f, text, _ in items) + " }" for name, items in written
    ]
    tam, _ = draw(numbers())
    capture = draw(st.integers(0, 100))
    defensibility = draw(st.integers(0, 10)) / 10
    vision = [
        f"    vision s{n} {{",
        f"        tam {tam} usd",
        f"        capture {capture}%",
        f"        defensibility {defensibility}",
        "    }",
    ]
    transition_blocks = []
    for i in range(1, n + 1):
        body = [f"    transition t{i}: s{i - 1} -> s{i} {{", f'        class "{draw(st.sampled_from(CLASSES))}"']
        if draw(st.booleans()):
            body.append('        mechanism "a mechanism"')
        target = full[i]
        measured = draw(st.lists(st.sampled_from(sorted(target)), unique=True, max_size=3))
        if measured:
            body.append("        threshold " + " and ".join(condition(f, ">=", target[f]) for f in measured))
            body.append("        kill " + condition(measured[0], "<", target[measured[0]]))
        if draw(st.booleans()):
            amount = draw(st.integers(1, 36))
            body.append(f"        horizon {amount} {draw(st.sampled_from(['days', 'months', 'years']))}")
        cost_items = draw(st.lists(st.tuples(st.integers(0, 20), numbers()), max_size=3))
        if cost_items:
            body.append("        cost {")
            body += [f"            item{j} {count} * {text} usd" for j, (count, (text, _)) in enumerate(cost_items)]
            body.append("        }")
        if draw(st.booleans()):
            body.append(f"        learning_cost {draw(numbers())[0]} usd")
        estimates = draw(st.lists(st.integers(0, 100), max_size=3))
        if estimates:
            body.append("        estimates " + " ".join(str(e / 100) for e in estimates))
        if draw(st.booleans()):
            body.append("        discharges adoption")
        body.append("    }")
        transition_blocks.append("\n".join(body))
    evidence_blocks = []
    names = [f"t{i}" for i in range(1, n + 1)]
    for j in range(draw(st.integers(0, 4))):
        supports = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
        contradicts = draw(st.lists(st.sampled_from(names), unique=True, max_size=2, min_size=0 if supports else 1))
        captured = AS_OF + dt.timedelta(days=draw(st.integers(-400, 60)))
        body = [
            f"    evidence e{j} {{",
            f"        captured {captured.isoformat()}",
            f"        tier {draw(st.integers(1, 3))}",
            f"        weight {draw(st.integers(0, 100)) / 100}",
            f'        excerpt "excerpt {j}"',
        ]
        if supports:
            body.append("        supports " + ", ".join(supports))
        if contradicts:
            body.append("        contradicts " + ", ".join(contradicts))
        if draw(st.booleans()):
            body.append("        unverified")
        body.append("    }")
        evidence_blocks.append("\n".join(body))
    criteria = draw(st.lists(st.sampled_from(["team", "market", "wedge"]), unique=True))
    criteria_block = ["    criteria {", *(f"        {c} {draw(st.integers(0, 100))}" for c in criteria), "    }"]

    # declaration order is free: lowering must put states and transitions in chain order
    state_blocks = draw(st.permutations(state_blocks))
    transition_blocks = draw(st.permutations(transition_blocks))
    lines += state_blocks + vision + transition_blocks + evidence_blocks
    if criteria:
        lines += criteria_block
    lines.append("}")
    states = tuple((name, tuple((f, v) for f, _, v in items)) for name, items in written)
    return RouteSpec("\n".join(lines) + "\n", fields, states, tuple(names))


def compile_text(text: str) -> Compiled:
    """Compile one generated route through the pipeline; any error fails the test."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated.route"
        path.write_text(text, encoding="utf-8")
        session = Session(policies=policy_store())
        routes = session.load_routes(path, "generated.route")
        compiled = [session.compile_route(r) for r in routes]
    errors = [f"{d.code} {d.span.line}: {d.message}" for d in session.diags.items if d.severity == "error"]
    assert not errors, "\n".join(errors) + "\n\n" + text
    assert len(compiled) == 1 and compiled[0] is not None
    return compiled[0]


# ---------------------------------------------------------------------- carry-forward
@SETTINGS
@given(route_specs())
def test_carry_forward_writes_every_state_in_full(spec: RouteSpec) -> None:
    route = compile_text(spec.text).route
    assert [s.name for s in route.states] == [name for name, _ in spec.states]
    assert [t.name for t in route.transitions] == list(spec.transitions)
    assert {f.name for f in route.fields} == set(spec.fields)
    order = [f.name for f in route.fields]
    previous: dict[str, float | bool] | None = None
    for state, (_, written) in zip(route.states, spec.states, strict=True):
        values = dict(state.values)
        assert [f for f, _ in state.values] == order  # every route field, in the route's order
        assert set(state.listed) == {f for f, _ in written}
        for f, v in written:  # listed fields are what was written
            assert values[f] == v and type(values[f]) is type(v)
        for f in order:  # unlisted fields are the previous state's value
            if f not in state.listed:
                assert previous is not None, "the start state lists every field"
                assert values[f] == previous[f] and type(values[f]) is type(previous[f])
        previous = values


# ---------------------------------------------------------------------- the IR round trip
@SETTINGS
@given(route_specs())
def test_ir_round_trip_through_cattrs_and_json(spec: RouteSpec) -> None:
    route = compile_text(spec.text).route
    assert_round_trips(route)


def test_ir_round_trip_of_every_example() -> None:
    session = Session()
    routes: list[Route] = []
    for path in sorted(EXAMPLES.glob("*.route")):
        routes += session.load_routes(path)
    assert len(routes) >= 6 and not session.diags.has_errors
    for route in routes:
        assert_round_trips(route)


def assert_round_trips(route: Route) -> None:
    assert ir_from_json(ir_json(route)) == route
    # and through the JSON text that `--emit ir` prints. Python's == takes True for
    # 1.0, so compare the printed forms too: a bool must come back a bool.
    text = canonical.dumps(ir_json(route))
    back = ir_from_json(json.loads(text))
    assert back == route
    assert canonical.dumps(ir_json(back)) == text


# ---------------------------------------------------------------------- W
def reweightings() -> st.SearchStrategy[Reweighting]:
    return st.builds(
        Reweighting,
        corroborate_gain=st.floats(0, 2),
        contradict_gain=st.floats(0, 2),
        w_min=st.floats(0, 1),
        w_max=st.floats(1, 3),
        decay=st.floats(0, 1),
    )


@st.composite
def evidence_items(draw: st.DrawFn, name: str, *, admissible_only: bool = False) -> Evidence:
    late = False if admissible_only else draw(st.booleans())
    days = draw(st.integers(1, 90)) if late else -draw(st.integers(0, 400))
    return Evidence(
        name=name,
        source=None,
        captured=AS_OF + dt.timedelta(days=days),
        tier=draw(st.integers(1, 3)),
        weight=draw(st.floats(0, 1)),
        supports=tuple(draw(st.lists(st.sampled_from(["t", "other"]), unique=True))),
        contradicts=tuple(draw(st.lists(st.sampled_from(["t", "other"]), unique=True))),
        excerpt="",
        unverified=False if admissible_only else draw(st.booleans()),
        span=SPAN,
    )


@st.composite
def evidence_lists(draw: st.DrawFn) -> tuple[Evidence, ...]:
    n = draw(st.integers(0, 6))
    return tuple(draw(evidence_items(f"e{i}")) for i in range(n))


def with_reweighting(rw: Reweighting) -> Policy:
    return attrs.evolve(venture(), reweighting=rw)


# Gains of 2 and one item of weight 1 (sat = 1/2) put the unclipped W at 2 and at 0:
# the shipped policy's gains of 0.5 never reach its bounds.
STEEP = Reweighting(corroborate_gain=2.0, contradict_gain=2.0, w_min=0.3, w_max=1.5, decay=0.5)
ONE_FOR = Evidence("one", None, AS_OF, 3, 1.0, ("t",), (), "", False, SPAN)
ONE_AGAINST = Evidence("one", None, AS_OF, 3, 1.0, (), ("t",), "", False, SPAN)


@SETTINGS
@given(reweightings(), evidence_lists())
@example(STEEP, (ONE_FOR,)).via("W clipped to w_max")
@example(STEEP, (ONE_AGAINST,)).via("W clipped to w_min")
def test_W_stays_within_bounds(rw: Reweighting, evidence: tuple[Evidence, ...]) -> None:
    result = reweight("t", evidence, AS_OF, with_reweighting(rw))
    assert rw.w_min <= result.W <= rw.w_max
    assert 0.0 <= result.sat_c < 1.0 and 0.0 <= result.sat_k < 1.0


@SETTINGS
@given(reweightings(), evidence_lists())
def test_W_is_one_without_admissible_evidence(rw: Reweighting, evidence: tuple[Evidence, ...]) -> None:
    policy = with_reweighting(rw)
    # keep only what is inadmissible, or admissible but about another transition
    kept = tuple(
        e for e in evidence if not admissible(e, AS_OF, policy) or ("t" not in e.supports and "t" not in e.contradicts)
    )
    result = reweight("t", kept, AS_OF, policy)
    assert result.W == 1.0
    assert result.supporting == () and result.contradicting == ()


@SETTINGS
@given(reweightings(), evidence_lists(), evidence_items("added", admissible_only=True))
def test_W_monotone_in_added_evidence(rw: Reweighting, evidence: tuple[Evidence, ...], extra: Evidence) -> None:
    policy = with_reweighting(rw)
    before = reweight("t", evidence, AS_OF, policy).W
    supporting = attrs.evolve(extra, supports=("t",), contradicts=())
    contradicting = attrs.evolve(extra, supports=(), contradicts=("t",))
    assert reweight("t", (*evidence, supporting), AS_OF, policy).W >= before
    assert reweight("t", (*evidence, contradicting), AS_OF, policy).W <= before


def exact_reference_W(sup: list[float], con: list[float], rw: Reweighting) -> Fraction:
    """docs/formulas.md in fractions.Fraction, straight from the formula."""

    def sat(ws: list[float]) -> Fraction:
        s = sum(
            (Fraction(w) * Fraction(rw.decay) ** i for i, w in enumerate(sorted(ws, reverse=True))),
            Fraction(0),
        )
        return s / (1 + s)

    raw = 1 + Fraction(rw.corroborate_gain) * sat(sup) - Fraction(rw.contradict_gain) * sat(con)
    return min(max(raw, Fraction(rw.w_min)), Fraction(rw.w_max))


@SETTINGS
@given(reweightings(), evidence_lists())
@example(STEEP, (ONE_FOR,)).via("W clipped to w_max")
@example(STEEP, (ONE_AGAINST,)).via("W clipped to w_min")
def test_W_is_the_exact_value_rounded_once(rw: Reweighting, evidence: tuple[Evidence, ...]) -> None:
    policy = with_reweighting(rw)
    result = reweight("t", evidence, AS_OF, policy)
    sup = [w for _, w in result.supporting]
    con = [w for _, w in result.contradicting]
    if sup or con:
        assert result.W == float(exact_reference_W(sup, con, rw))
    expected_sup = sorted(
        (effective_weight(e, policy) for e in evidence if admissible(e, AS_OF, policy) and "t" in e.supports),
        reverse=True,
    )
    assert sup == expected_sup


def test_W_monotone_where_float_arithmetic_was_not() -> None:
    """A case hypothesis-style search found against the float implementation: adding
    a tiny supporting weight lowered W by an ulp (1.5916025108919252 to
    1.591602510891925). W is now computed exactly and rounded once."""
    ws = [0.14254211294578145, 0.24679069171954782, 0.7907145915117042, 0.973722145151735]
    policy = with_reweighting(Reweighting(corroborate_gain=1.0, contradict_gain=1.0, w_min=0.3, w_max=3.0, decay=0.5))
    items = tuple(Evidence(f"e{i}", None, AS_OF, 3, w, ("t",), (), "", False, SPAN) for i, w in enumerate(ws))
    tiny = Evidence("tiny", None, AS_OF, 3, 6.373556431303261e-15, ("t",), (), "", False, SPAN)
    before = reweight("t", items, AS_OF, policy).W
    after = reweight("t", (*items, tiny), AS_OF, policy).W
    assert after >= before
    exact = sum((Fraction(w) * Fraction(1, 2**i) for i, w in enumerate(sorted(ws, reverse=True))), Fraction(0))
    assert before == float(1 + exact / (1 + exact))  # correctly rounded


def test_W_moves_strictly_with_weighty_evidence() -> None:
    """The monotonicity above is not vacuous: one tier-3 item of weight 1 moves W."""
    policy = venture()
    item = Evidence("e", None, AS_OF, 3, 1.0, ("t",), (), "", False, SPAN)
    assert reweight("t", (item,), AS_OF, policy).W == 1.0 + 0.5 * 0.5  # sat = 1/(1+1)
    against = attrs.evolve(item, supports=(), contradicts=("t",))
    assert reweight("t", (against,), AS_OF, policy).W == 1.0 - 0.5 * 0.5
    assert reweight("t", (attrs.evolve(item, captured=AS_OF + dt.timedelta(days=1)),), AS_OF, policy).W == 1.0


# ---------------------------------------------------------------------- materiality
def declared(field_type: str, material_text: str) -> FieldDecl:
    """A field declared `field f <type> material <material_text>`, its amount parsed
    as lowering parses it."""
    amount, percent = parse_number(material_text)
    return FieldDecl("f", field_type, Material(amount, percent), "lib", SPAN)


@SETTINGS
@given(st.integers(1, 1000), st.integers(-2, 2))
def test_relative_materiality_is_exact_at_the_threshold(tenths: int, offset: int) -> None:
    """`material p%` with p = tenths/10: from 1000·k, a change of exactly p·k reaches it
    (checked for every k up to 300, where float products miss by an ulp)."""
    decl = declared("count", f"{tenths / 10}%")
    for k in range(1, 301):
        source = 1000 * k
        threshold = tenths * k  # exact: 1000·k × tenths/1000
        change = threshold + offset
        if change <= 0:
            continue
        for target in (source + change, source - change):
            if target >= 0:
                assert is_material(decl, float(source), float(target)) == (change >= threshold), (source, target)


@SETTINGS
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(1, 1000))
def test_absolute_materiality_compares_the_decimals_written(a: int, b: int, hundredths: int) -> None:
    decl = declared("ratio", str(hundredths / 100))
    source, target = parse_number(str(a / 100))[0], parse_number(str(b / 100))[0]
    assert is_material(decl, source, target) == (a != b and abs(a - b) >= hundredths)


decimals = st.decimals(0, 10**7, places=3, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(decimals, decimals, st.decimals("0.001", 100, places=3), st.booleans())
def test_materiality_agrees_with_exact_decimals(a: Decimal, b: Decimal, amount: Decimal, relative: bool) -> None:
    decl = declared("number", f"{amount}%" if relative else str(amount))
    source, target = parse_number(str(a))[0], parse_number(str(b))[0]
    threshold = amount / 100 * a if relative else amount  # exact in Decimal at these sizes
    if a == b:
        expected = False
    elif relative and a == 0:
        expected = True  # from 0 any change is material
    else:
        expected = abs(b - a) >= threshold
    assert is_material(decl, source, target) == expected


def test_materiality_boundaries_that_floats_get_wrong() -> None:
    assert 0.07 * 100 > 7 and 0.3 - 0.2 < 0.1  # the float facts behind these cases
    assert is_material(declared("count", "7%"), 100.0, 107.0)
    assert not is_material(declared("count", "7%"), 100.0, 106.0)
    assert is_material(declared("ratio", "0.1"), 0.2, 0.3)
    assert not is_material(declared("ratio", "0.1"), 0.2, 0.29)
    assert is_material(declared("count", "10%"), 0.0, 1.0)  # from 0 any change is material
    assert is_material(declared("bool", "1"), False, True) and not is_material(declared("bool", "1"), True, True)


# ---------------------------------------------------------------------- floors and c
@st.composite
def floor_tables(draw: st.DrawFn) -> list[tuple[float, float]]:
    """Valid tables (as the policy loader requires): |Δ| breakpoints positive and
    strictly increasing, floors non-negative and non-decreasing."""
    n = draw(st.integers(1, 5))
    xs = sorted(draw(st.lists(st.floats(1e-3, 1e9), min_size=n, max_size=n, unique=True)))
    ys = sorted(draw(st.lists(st.floats(0, 1e8), min_size=n, max_size=n)))
    return list(zip(xs, ys, strict=True))


magnitudes = st.floats(0, 1e10)


@SETTINGS
@given(floor_tables(), magnitudes, magnitudes)
def test_piecewise_floor_is_monotone(points: list[tuple[float, float]], a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    assert 0.0 <= piecewise_floor(points, lo) <= piecewise_floor(points, hi)


@SETTINGS
@given(floor_tables())
def test_piecewise_floor_is_exact_and_monotone_at_its_breakpoints(points: list[tuple[float, float]]) -> None:
    assert piecewise_floor(points, 0.0) == 0.0
    for x, y in points:
        below, above = math.nextafter(x, 0.0), math.nextafter(x, math.inf)
        assert piecewise_floor(points, below) <= piecewise_floor(points, x) == y <= piecewise_floor(points, above)


@SETTINGS
@given(floor_tables(), magnitudes)
def test_piecewise_floor_is_the_exact_value_rounded_once(points: list[tuple[float, float]], x: float) -> None:
    xs = [Fraction(0)] + [Fraction(a) for a, _ in points]
    ys = [Fraction(0)] + [Fraction(b) for _, b in points]
    i = next((i for i in range(1, len(xs)) if Fraction(x) <= xs[i]), len(xs) - 1)
    exact = ys[i - 1] + (ys[i] - ys[i - 1]) * (Fraction(x) - xs[i - 1]) / (xs[i] - xs[i - 1])
    assert piecewise_floor(points, x) == float(exact)


def test_piecewise_floor_does_not_dip_past_a_breakpoint() -> None:
    """A table on which float interpolation gave 115.02229551109346 at the first
    breakpoint and 115.02229551109345 one ulp past it."""
    points = [(101.26040589036039, 115.02229551109345), (997.9943952871475, 493.65680242896525)]
    x = points[0][0]
    assert piecewise_floor(points, x) == points[0][1]
    assert piecewise_floor(points, x) <= piecewise_floor(points, math.nextafter(x, math.inf))


def test_piecewise_floor_extends_the_last_segment() -> None:
    points = [(1e5, 5e4), (1e6, 4e5)]
    assert piecewise_floor(points, 5e4) == 2.5e4
    assert math.isclose(piecewise_floor(points, 2e6), 4e5 + 3.5e5 * 1e6 / 9e5, rel_tol=1e-12)  # slope 350k/900k


def transition(cost_items: list[tuple[float, float]], ref_class: str) -> Transition:
    return Transition(
        name="t",
        source="a",
        target="b",
        actor=None,
        mechanism=None,
        asset=None,
        ref_class=ref_class,
        class_span=SPAN,
        threshold=None,
        threshold_text=None,
        kill=None,
        kill_text=None,
        horizon=None,
        cost=tuple(CostItem(f"i{i}", n, u, SPAN) for i, (n, u) in enumerate(cost_items)),
        learning_cost=None,
        estimates=(),
        discharges=(),
        due=None,
        span=SPAN,
    )


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 50).map(float), st.floats(0, 1e8)), max_size=4),
    st.sampled_from(CLASSES),
    st.lists(st.tuples(st.sampled_from(["arr", "paying_teams", "developers"]), magnitudes, st.booleans()), max_size=3),
    floor_tables(),
)
def test_c_is_the_largest_of_budget_and_floors(
    items: list[tuple[float, float]],
    ref_class: str,
    changes: list[tuple[str, float, bool]],
    table: list[tuple[float, float]],
) -> None:
    policy = attrs.evolve(venture(), floors=attrs.evolve(venture().floors, delta={"arr": FloorTable(table)}))
    ds = tuple(Delta(f, 0.0, x, material) for f, x, material in changes)
    c = cost(transition(items, ref_class), ds, policy)
    assert c.budget == sum(n * u for n, u in items)  # Σ n·u, summed in order
    assert c.floor_class == policy.priors[ref_class].floor_usd
    assert c.c >= c.budget and c.c >= c.floor_class and c.c >= c.floor_delta
    assert c.c == max(c.budget, c.floor_class, c.floor_delta)
    assert c.c == getattr(c, c.bound_by)
    # floor_delta sums the material changes of fields with a table, and only those
    expected = [(f, x) for f, x, material in changes if material and f in policy.floors.delta]
    assert [(f, x) for f, x, _ in c.floor_terms] == expected
    assert c.floor_delta >= 0.0


@SETTINGS
@given(route_specs())
def test_compiled_numbers_obey_section_5(spec: RouteSpec) -> None:
    """On whole compiled routes: c ≥ every bound, p = clip(p_prior·W), R is the fold."""
    compiled = compile_text(spec.text)
    numbers, policy = compiled.numbers, compiled.policy.policy
    rw = policy.reweighting
    for tn, t in zip(numbers.transitions, compiled.route.transitions, strict=True):
        assert tn.cost.c >= max(tn.cost.budget, tn.cost.floor_class, tn.cost.floor_delta)
        assert rw.w_min <= tn.reweight.W <= rw.w_max
        assert tn.p == min(max(tn.p_prior * tn.reweight.W, 0.0), 1.0)
        assert tn.deltas == deltas(compiled.route, t)
    R = chain_fold([tn.p for tn in numbers.transitions], [tn.cost.c for tn in numbers.transitions], numbers.value)
    assert list(numbers.R) == R and numbers.score == R[0]
    assert numbers.eligible == (len(numbers.admissible_evidence) >= 1)


# ---------------------------------------------------------------------- the staged fold
probabilities = st.fractions(0, 1, max_denominator=1000)
costs = st.fractions(0, 10**8, max_denominator=100)
values = st.fractions(-(10**10), 10**10, max_denominator=100)


@SETTINGS
@given(st.lists(st.tuples(probabilities, costs), min_size=1, max_size=8), values, values, values, values)
def test_fold_is_affine_in_V_exactly(
    steps: list[tuple[Fraction, Fraction]], v1: Fraction, v2: Fraction, a: Fraction, b: Fraction
) -> None:
    ps, cs = [p for p, _ in steps], [c for _, c in steps]
    slope = math.prod(ps, start=Fraction(1))

    def r0(v: Fraction) -> Fraction:
        return chain_fold(ps, cs, v)[0]

    assert isinstance(r0(v1), Fraction)
    assert r0(v1) - r0(v2) == slope * (v1 - v2)
    assert r0(a * v1 + b) == a * r0(v1) + (1 - a) * r0(Fraction(0)) + slope * b
    # the intercept is the fold of the costs alone: −Σ_i (Π_{j<i} p_j)·c_i
    intercept = -sum((math.prod(ps[:i], start=Fraction(1)) * cs[i] for i in range(len(ps))), start=Fraction(0))
    assert r0(Fraction(0)) == intercept


@SETTINGS
@given(st.lists(st.tuples(probabilities, costs), min_size=1, max_size=8), values, values)
def test_fold_in_floats_matches_the_exact_fold(
    steps: list[tuple[Fraction, Fraction]], v1: Fraction, v2: Fraction
) -> None:
    ps, cs = [float(p) for p, _ in steps], [float(c) for _, c in steps]
    slope = math.prod(ps)
    r1, r2 = chain_fold(ps, cs, float(v1))[0], chain_fold(ps, cs, float(v2))[0]
    scale = abs(float(v1)) + abs(float(v2)) + sum(cs) + 1.0
    assert math.isclose(r1 - r2, slope * (float(v1) - float(v2)), rel_tol=1e-9, abs_tol=1e-9 * scale)
    exact = chain_fold([Fraction(p) for p in ps], [Fraction(c) for c in cs], Fraction(float(v1)))[0]
    assert math.isclose(r1, float(exact), rel_tol=1e-9, abs_tol=1e-9 * scale)


def test_fold_recurrence_on_a_small_case() -> None:
    assert chain_fold([0.5, 0.25], [10.0, 20.0], 800.0) == [-10.0 + 0.5 * (-20.0 + 0.25 * 800.0), -20.0 + 200.0, 800.0]
