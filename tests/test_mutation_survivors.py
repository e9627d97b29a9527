"""What mutmut's survivors showed untested (docs/architecture.md, "Mutation testing"):
the unit algebra of rules and `require` lines, the type checks of thresholds, the
uncovered-change diagnostics, the help of an unknown policy, and a ledger head
recorded before later appends or deletions. Each case states the behaviour the
module docstring or docs/ promise; a mutant of the named function fails it."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from pcsc.compiler.session import Session
from pcsc.coverage.diagnose import show_value, transition_name_span
from pcsc.diagnostics.model import Span
from pcsc.forecast.ledger import Ledger
from pcsc.lang.lower.common import policy_help
from pcsc.lang.lower.units import GATE_DIMENSIONS, REQUIRE_DIMENSIONS, dimension, unit_problems
from pcsc.policy.load import compile_rule, rule_problems
from pcsc.score.finite import NotFinite
from pcsc.score.fold import chain_fold
from pcsc.score.route import discount_factor
from pcsc.score.voi import stages_flat
from tests.conftest import SPEC_ROUTE


# ---------------------------------------------------------------------- units (pcsc.lang.lower.units)
@pytest.mark.parametrize(("rule", "dim"), [
    ("score + value", "usd"),
    ("score - 0", "usd"),  # a literal 0 is 0 in any unit
    ("0 - score", "usd"),
    ("-score", "usd"),
    ("2 * score", "usd"),  # `*` by a dimensionless number keeps the other side's dimension
    ("score * 2", "usd"),
    ("score / 2", "usd"),  # `/` by one keeps it
    ("value / flat_product", "usd"),
    ("score / value", "plain"),  # an amount over an amount of the same dimension
    ("score * value", None),  # the product of two amounts: not checked
    ("2 / score", None),
    ("score + flat_product", None),  # mixed: reported, no dimension
    ("flat_product * 2", "plain"),
    ("flat_product + criteria_score", "plain"),
    ("count(transitions) * 2", "plain"),
    ("min(score, value)", "usd"),
    ("max(criteria_score, 1)", "plain"),
])
def test_the_dimension_of_a_gate_expression(rule: str, dim: str | None) -> None:
    assert dimension(compile_rule(rule), GATE_DIMENSIONS) == dim


@pytest.mark.parametrize(("rule", "problem"), [
    ("score >= 1000", "`score` is in usd, but it is compared with `1k`, a plain number (column 10 of the rule): "
                      "write the amount with its unit: `1k usd`"),
    ("score + flat_product >= 1 usd", "`score` is in usd, but `+` combines it with `flat_product`, a plain number "
                                      "(column 9 of the rule): compare quantities in the same unit"),
    ("min(score, 5) >= 0", "`score` is in usd, but `min` weighs it against `5`, a plain number (column 12 of the "
                           "rule): write the amount with its unit: `5 usd`"),
    ("score >= 1k usd", None),
    ("score >= 0", None),
    ("criteria_score >= 40%", None),  # plain beside a ratio
    ("score / value >= 0.5", None),
    ("2 * score >= 1M usd", None),
])
def test_gate_rules_compare_quantities_in_one_unit(rule: str, problem: str | None) -> None:
    assert rule_problems(rule) == ([problem] if problem else [])


@pytest.mark.parametrize(("line", "help"), [
    ("horizon <= 12", "write the duration with its unit: `12 days`, `12 months` or `12 years`"),
    ("budget >= 5", "write the amount with its unit: `5 usd`"),
    ("budget + learning_cost >= horizon", "compare quantities in the same unit"),
    ("horizon <= 12 months", None),
    ("budget - 0 >= learning_cost", None),
])
def test_require_lines_in_units(line: str, help: str | None) -> None:
    problems = unit_problems(compile_rule(line), REQUIRE_DIMENSIONS)
    assert [p.help for p in problems] == ([help] if help else [])


@pytest.mark.parametrize(("line", "help"), [
    ("count(transitions) >= 10%", "`%` is only for ratios: write the count itself"),
    ("count(transitions) >= delta.share", "compare quantities in the same unit"),  # a ratio, but no `%` written
    ("delta.share >= 10%", None),
])
def test_a_count_beside_a_ratio(line: str, help: str | None) -> None:
    problems = unit_problems(compile_rule(line), {}, {"share": "ratio"})
    assert [p.help for p in problems] == ([help] if help else [])


# ---------------------------------------------------------------------- thresholds (ConditionTypes)
def threshold_diagnostics(threshold: str) -> list[tuple[str, str]]:
    """Check the spec route with `launch`'s threshold replaced; its E301/E312 errors."""
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("threshold  developers >= 500",
                                                          f"threshold  {threshold}", 1)
    session = Session()
    for route in session.routes_from_text(text, "t.route", SPEC_ROUTE.parent):
        session.check_route(route)
    return [(d.code, d.message) for d in session.diags if d.code in ("PCSC-E301", "PCSC-E312")]


@pytest.mark.parametrize(("threshold", "expected"), [
    ("developers >= 500 and developers / 0 >= 1", [("PCSC-E312", "division by zero in the threshold")]),
    ("developers >= 500 and developers / -0 >= 1", [("PCSC-E312", "division by zero in the threshold")]),
    ("developers >= 500 and arr + developers >= 1 usd",
     [("PCSC-E301", "in the threshold: `+` adds an amount in usd and a number")]),
    ("developers >= 500 and arr * arr >= 1 usd",
     [("PCSC-E301", "in the threshold: `*` multiplies an amount in usd by an amount in usd")]),
    ("developers >= 500 and developers / arr >= 1",
     [("PCSC-E301", "in the threshold: `/` divides a number by an amount in usd")]),
    ('developers >= 500 and max(developers, "5") >= 1',
     [("PCSC-E301", "in the threshold: `max` takes numbers of one unit")]),
    ("developers >= 500 and arr * 2 >= 1 usd", []),
    ("developers >= 500 and 2 * arr >= 1 usd", []),
    ("developers >= 500 and arr / arr >= 0.5", []),  # usd / usd is a ratio
    ("developers >= 500 and arr / 2 >= 1 usd", []),
    ("developers >= 500 and max(developers, 5) >= 1", []),
    ("developers >= 500 and arr - arr >= 0 usd", []),
])
def test_threshold_types(threshold: str, expected: list[tuple[str, str]]) -> None:
    assert threshold_diagnostics(threshold) == expected


# ---------------------------------------------------------------------- uncovered changes (coverage.diagnose)
def uncovered(text: str, mode: str) -> list[tuple[str, str, str | None]]:
    session = Session(coverage_mode=mode)  # type: ignore[arg-type]
    for route in session.routes_from_text(text, "u.route", SPEC_ROUTE.parent):
        session.check_route(route)
    return [(d.code, d.message, d.help) for d in session.diags if d.code in ("PCSC-E501", "PCSC-W501")]


@pytest.mark.parametrize(("mode", "code", "consequence"), [
    ("gate", "PCSC-E501", "GATE withholds the score"), ("dock", "PCSC-W501", "DOCK docks the score")])
def test_an_unclaimed_obligation_that_would_hold_is_named_in_the_help(mode: str, code: str, consequence: str) -> None:
    """`launch` without `discharges adoption`: the change of developers is uncovered, and
    the obligation that would cover it is offered."""
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("        discharges adoption\n", "", 1)
    assert uncovered(text, mode) == [(
        code,
        f"`launch` changes developers 0 -> 500, and no obligation it discharges covers that: {consequence}",
        "obligation `adoption` (not in `discharges`) would hold: add it to `discharges`",
    )]
    assert uncovered(text, "off") == []


def test_an_uncovered_change_is_located_on_the_transition_name() -> None:
    session = Session()
    (route,) = session.routes_from_text(SPEC_ROUTE.read_text(encoding="utf-8"), "s.route", SPEC_ROUTE.parent)
    t = route.transitions[0]
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    line = text.splitlines()[t.span.line - 1]
    name = line.index("launch") + 1
    assert transition_name_span(t, text) == Span(t.span.file, t.span.line, name, t.span.line, name + len("launch"))
    keyword = Span(t.span.file, t.span.line, t.span.column, t.span.line, t.span.column + len("transition"))
    assert transition_name_span(t, None) == keyword  # no source at hand: the keyword
    split = text.replace("transition launch:", "transition\n    launch:", 1)
    assert transition_name_span(t, split) == keyword  # the header split across lines


@pytest.mark.parametrize(("value", "shown"), [
    (True, "true"), (False, "false"), (5000.0, "5,000"), (1_200_000.0, "1,200,000"), (0.25, "0.25"),
    (12345.678, "1.235e+04"), (0.0, "0")])
def test_values_in_the_uncovered_message(value: float | bool, shown: str) -> None:
    assert show_value(value) == shown


# ---------------------------------------------------------------------- unknown policies (lower.common)
AVAILABLE = ["venture@1.0.0", "venture@1.1.0", "planner@1.0.0"]


@pytest.mark.parametrize(("ref", "available", "help"), [
    ("venture@9.9.9", AVAILABLE, "policy `venture` has versions 1.0.0, 1.1.0"),
    ("venture@9.9.9", ["venture@1.0.0"], "policy `venture` has version 1.0.0"),
    ("ventur@1.0.0", AVAILABLE, "did you mean `venture@1.0.0`?"),  # the same version, when it exists
    ("ventur@7", AVAILABLE, "did you mean `venture@1.1.0`?"),  # else the latest
    ("zzz@1", AVAILABLE, "available policies: planner@1.0.0, venture@1.0.0, venture@1.1.0"),
    ("zzz@1", [f"p{i:02}@1.0.0" for i in range(12)],
     "available policies: " + ", ".join(f"p{i:02}@1.0.0" for i in range(10)) + " and 2 more"),
    ("zzz@1", [f"p{i:02}@1.0.0" for i in range(10)],
     "available policies: " + ", ".join(f"p{i:02}@1.0.0" for i in range(10))),
    ("zzz@1", [], None),
])
def test_the_help_of_an_unknown_policy(ref: str, available: list[str], help: str | None) -> None:
    assert policy_help(ref, available) == help


# ---------------------------------------------------------------------- a recorded head (ledger)
def test_a_recorded_head_holds_after_later_appends_and_counts_them(tmp_path: Path) -> None:
    from tests.test_ledger_hardening import observations, records

    path = tmp_path / "l.sqlite"
    with Ledger.open(path) as ledger:
        ledger.append_forecasts(records(2), inputs=[])
        early = ledger.verify().head.token
        ledger.append_outcomes(observations(1))
        ledger.append_forecasts(records(3, 2), inputs=[])
        check = ledger.verify(early).head_check
    assert check is not None and (check.ok, check.appended_entries, check.appended_outcomes) == (True, 3, 1)
    assert (early.entries_seq, early.outcomes_seq) == (2, 0)
    with Ledger.open(path, create=False) as ledger:
        now = ledger.verify().head.token
        check = ledger.verify(now).head_check
    assert check is not None and (check.ok, check.appended_entries, check.appended_outcomes) == (True, 0, 0)


def test_a_head_still_found_after_earlier_rows_are_deleted(tmp_path: Path) -> None:
    """Rows before the head deleted: the chain fails, and the head's own row is still
    found by its seq (not by its position), so the head check names no rewrite."""
    from tests.test_ledger_hardening import build
    from tests.test_ledger_tamper import corrupt

    path = build(tmp_path / "l.sqlite")
    with Ledger.open(path, create=False) as ledger:
        head = ledger.verify().head.token
    corrupt(path, lambda conn: conn.execute("DELETE FROM entries WHERE seq = 1"))
    with Ledger.open(path, create=False) as ledger:
        verification = ledger.verify(head)
    assert verification.head_check is not None and verification.head_check.ok
    assert [p.table for p in verification.problems] == ["entries"]
    corrupt(path, lambda conn: conn.execute(f"DELETE FROM entries WHERE seq = {head.entries_seq}"))
    with Ledger.open(path, create=False) as ledger:
        lost = [str(p) for p in ledger.verify(head).problems if p.table == "head"]
    assert lost == [f"head: entries ends at seq {head.entries_seq - 1} but the head was recorded at seq "
                    f"{head.entries_seq}: rows at or before the recorded head {head} were deleted"]
    corrupt(path, lambda conn: conn.execute("DELETE FROM entries"))
    with Ledger.open(path, create=False) as ledger:
        lost = [str(p) for p in ledger.verify(head).problems if p.table == "head"]
    assert lost == [f"head: entries ends at seq 0 but the head was recorded at seq {head.entries_seq}: rows at or "
                    f"before the recorded head {head} were deleted"]



# ---------------------------------------------------------------------- the policy's fold overflowing (score.fold)
@pytest.mark.parametrize("abandonment", [False, True])
def test_the_policys_fold_names_the_step_that_overflows(abandonment: bool) -> None:
    """R_2 = 1.5e308 is finite; R_1 = −0 + 1·2·R_2 leaves the floats: NotFinite names
    that step and its operands (c, p, d, R_2), never a silent inf."""
    with pytest.raises(NotFinite) as caught:
        chain_fold([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], 1e308, [1.0, 2.0, 1.5], stop=abandonment)
    assert caught.value.message == ("R_1 = −c + p·d·R_2 overflows (from 0, 1, 2, 1.5e+308): the result is beyond "
                                    "about 1.8e308, the largest number a float holds")
    # the same fold in exact arithmetic has no overflow to report
    exact = chain_fold([Fraction(1)] * 3, [Fraction(0)] * 3, Fraction(10**308),
                       [Fraction(1), Fraction(2), Fraction(3, 2)], stop=abandonment)
    assert exact == [3 * 10**308, 3 * 10**308, 15 * 10**307, 10**308]


# ---------------------------------------------------------------------- VoI under the option to stop (score.voi)
def minus(amount: float) -> Callable[[int, float], float]:
    return lambda j, r: r - amount


@pytest.mark.parametrize(("pre", "scales", "stage", "flat"), [
    ((-1.0, -1.0), [1.0], minus(0), True),  # clearly negative at both ends: R_0 is constant (0)
    ((1.0, 2.0), [1.0], minus(0), True),  # clearly positive: affine
    ((-1.0, 1.0), [1.0], minus(0), False),  # changes sign inside
    ((math.inf, 1.0), [1.0], minus(0), False),
    ((1.0, math.nan), [1.0], minus(0), False),
    ((0.0, 0.0), [0.0], minus(0), False),  # neither side of the margin
    ((0.0, -1.0), [1.0], minus(0), False),  # one end clear, the other not
    ((-1.0, 0.0), [1.0], minus(0), False),
    ((1e-9, 1.0), [0.0], minus(0), False),  # on the margin is not past it
    ((1.5e-9, 1.5e-9), [0.0], minus(0), True),  # clears MARGIN·(scale + 1) = 1e-9
    ((-1.5e-9, -1.5e-9), [0.0], minus(0), True),
    ((0.5, 0.5), [1e9], minus(0), False),  # within MARGIN·(1e9 + 1) ≈ 1 of 0
    ((1.0, 1.0), [1.0, 1.0], minus(2.0), True),  # the earlier stage is clearly negative at both ends
    ((1.0, 2.0), [1.0, 1.0], minus(1.5), False),  # the earlier stage changes sign
    ((3.0, 4.0), [1.0, 1.0], minus(1.0), True),  # both stages positive
])
def test_when_the_option_to_stop_leaves_R0_affine(pre: tuple[float, float], scales: list[float],
                                                   stage: Callable[[int, float], float], flat: bool) -> None:
    """`stages_flat` (its docstring): R_0 is affine in q when every stage is clearly of
    one sign at both ends, and constant from the first stage clearly negative at both."""
    assert stages_flat(*pre, scales, stage) is flat


# ---------------------------------------------------------------------- discounting (score.route)
@pytest.mark.parametrize(("rate", "horizon", "d"), [
    (0.0, (5.0, "years"), 1.0), (1.0, (2.0, "years"), 0.25), (1.0, (6.0, "months"), 2 ** -0.5),
    (1.0, None, 1.0), (0.1, (0.0, "days"), 1.0)])
def test_the_discount_factor(rate: float, horizon: tuple[float, str] | None, d: float) -> None:
    """d = (1 + r)^(−h), h in years; exactly 1 when r = 0 or h = 0."""
    assert discount_factor(rate, horizon) == d


def test_no_transition_of_a_graph_route_stops_without_the_option_to_stop() -> None:
    from tests.conftest import EXAMPLES

    path = EXAMPLES / "graphs" / "lock_cert_pilot.route"
    session = Session()
    (route,) = session.routes_from_text(path.read_text(encoding="utf-8"), path.name, path.parent)
    compiled = session.compile_route(route)
    assert compiled is not None and route.shape is not None
    assert [t.stops for t in compiled.numbers.transitions] == [False] * len(route.transitions)
