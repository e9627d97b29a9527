"""Units in `require` lines and gate rules: quantities are compared in one unit (durations
in days), and a bound without a unit against a quantity that has one is refused where
it is written (PCSC-E313). The independent checker (pcsc.certify.check) evaluates the same
expressions to the same results."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import pytest

from pcsc.certify.check import expressions as certcheck
from pcsc.certify.check.reading import rnd
from pcsc.cli import main
from pcsc.coverage.discharge import _TransitionContext
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.interp import BASE_FUNCTIONS, DAYS, EvalError, Interpreter, truthy
from pcsc.lang.lower.expr import lower_expression
from pcsc.lang.lower.library import lower_library
from pcsc.lang.syntax import parse_expression, parse_source
from pcsc.policy.load import rule_problems
from tests.conftest import ROOT, pin_libraries
from tests.test_coverage import compile_text, one_step, row

LIBRARY = """\
library probe version "1.0.0"

field developers    count   material 10%
field paying_teams  count   material 1
field arr           usd     material 10k usd
field retention     ratio   material 1%
field soc2          bool

obligation m covers developers, paying_teams, arr, retention, soc2 {
    require measured(delta)
}
obligation quick covers developers {
    require horizon <= 12 months
}
"""


def lowered(body: str) -> Diagnostics:
    text = LIBRARY + body
    diags = Diagnostics()
    lower_library(parse_source(text, "probe.obl", diags), "probe.obl", text, diags)
    return diags


def first_line() -> int:
    return LIBRARY.count("\n") + 2  # the obligation's first require line


@pytest.mark.parametrize(
    ("require", "blamed", "help_has"),
    [
        ("horizon <= 12", "12", "`12 months`"),
        ("12 >= horizon", "12", "`12 days`"),
        ("budget >= 100k", "100k", "`100k usd`"),
        ("learning_cost < 2.5M", "2.5M", "`2.5M usd`"),
        ("min(budget, 5k) > 0", "5k", "`5k usd`"),
        ("budget - 10 >= floor(delta)", "10", "`10 usd`"),
        ("delta.arr >= 100k", "100k", "`100k usd`"),
        ("delta.developers >= 5%", "5%", "only for ratios"),
        ("budget + horizon > 0 usd", "horizon", "same unit"),
        ("horizon > 30 days and budget > 1 years", "1 years", "same unit"),
        ("evidence(tier >= 2) >= 1 and floor(delta) <= 3", "3", "`3 usd`"),
    ],
)
def test_a_bound_in_another_unit_is_refused_where_it_is_written(require: str, blamed: str, help_has: str) -> None:
    diags = lowered(f"obligation x covers developers, arr {{\n    require {require}\n}}\n")
    problems = [d for d in diags if d.code == "PCSC-E313"]
    assert len(problems) == 1, [d.message for d in diags]
    (d,) = problems
    line = f"    require {require}"
    assert (d.span.line, d.span.column) == (first_line(), line.index(blamed) + 1)
    assert help_has in (d.help or "")


@pytest.mark.parametrize(
    "require",
    [
        "horizon <= 12 months",
        "horizon >= 90 days and horizon < 4 years",
        "horizon * 2 <= 1 years and horizon / 30 days < 12",  # a duration over a duration is plain
        "budget >= 100k usd and budget > 0 and floor(delta) == 0",  # 0 is 0 in any unit
        "budget > 2 * learning_cost and budget / 3 <= floor(delta) * 10",
        "min(budget, 5k usd) + max(1, 2, 3) / 3 * 1 usd > 0.1k usd",
        "delta.retention >= 5% and delta.retention >= 0.05 and delta.developers >= 10% * 100",
        "delta.developers >= 500 and delta.paying_teams > count(evidence())",
        "evidence(tier >= 2 and weight > 0.5) >= 1 and as_of > 2012-01-01",
    ],
)
def test_quantities_in_one_unit_pass_the_library_check(require: str) -> None:
    diags = lowered(f"obligation x covers developers, arr, retention, paying_teams {{\n    require {require}\n}}\n")
    assert [d.message for d in diags] == []


# ---------------------------------------------------------------------- evaluation in one unit
@pytest.mark.parametrize(
    ("horizon", "holds"),
    [
        ("2 years", False),  # 730.5 days: `horizon <= 12` read 2 <= 12 and passed
        ("400 days", False),
        ("300 days", True),  # 300 <= 12 was false
        ("12 months", True),
        ("1 years", True),  # 365.25 days, a year of twelve months
        ("13 months", False),
        ("365 days", True),
        ("366 days", False),
    ],
)
def test_a_horizon_is_compared_in_days(tmp_path: Path, horizon: str, holds: bool) -> None:
    (tmp_path / "probe.obl").write_text(LIBRARY, encoding="utf-8")
    pin_libraries(tmp_path / "policies", [tmp_path / "probe.obl"])  # a route uses only what its policy pins
    text = one_step("developers 0", "developers 500", threshold="developers >= 500", discharges="quick")
    text = text.replace("        discharges quick", f"        horizon {horizon}\n        discharges quick")
    c = compile_text(text, tmp_path)
    assert row(c, "t", "developers").covered is holds
    ctx = _TransitionContext(c.route, c.route.transitions[0], (), c.policy.policy)
    assert ctx.interpreter([]).names["horizon"] == pytest.approx(float(horizon.split()[0]) * DAYS[horizon.split()[1]])


def test_a_failed_comparison_of_durations_says_so_in_days(tmp_path: Path) -> None:
    (tmp_path / "probe.obl").write_text(LIBRARY, encoding="utf-8")
    pin_libraries(tmp_path / "policies", [tmp_path / "probe.obl"])  # a route uses only what its policy pins
    text = one_step("developers 0", "developers 500", threshold="developers >= 500", discharges="quick")
    text = text.replace("        discharges quick", "        horizon 2 years\n        discharges quick")
    (attempt,) = [a for a in row(compile_text(text, tmp_path), "t", "developers").tried if a.obligation == "quick"]
    (failed,) = attempt.failed
    assert failed.reason == "730.5 days <= 365.25 days is false"


# ---------------------------------------------------------------------- gate rules
@pytest.mark.parametrize(
    ("rule", "problem", "fixed"),
    [
        ("score > 1M", "`score` is in usd, but it is compared with `1M`, a plain number (column 9 of the rule)",
         "score > 1M usd"),
        ("min(score, 1) > 2 usd", "`min` weighs it against `1`, a plain number", "min(score, 1 usd) > 2 usd"),
        ("value - 5 > 0", "`-` combines it with `5`", "value - 5 usd > 0"),
    ],
)
def test_gate_rules_compare_in_one_unit(rule: str, problem: str, fixed: str) -> None:
    found = rule_problems(rule)
    assert len(found) == 1 and problem in found[0], found
    assert rule_problems(fixed) == []


def test_score_over_value_is_plain() -> None:
    assert rule_problems("score / value > 0.001 and flat_product * 100 >= 1.5 and criteria_score < 50") == []


# ---------------------------------------------------------------------- the checker agrees
HORIZONS = [(90, "days"), (400, "days"), (365, "days"), (12, "months"), (13, "months"), (2, "years"), (1, "years"),
            (487, "days"), (16, "months")]
EXPRESSIONS = [
    "horizon <= 12 months",
    "horizon < 1 years",
    "horizon == 16 months",
    "horizon >= 400 days or horizon < 91.3125 days",
    "horizon + 1 days > 1 years - 1 days",
    "horizon * 2 / 90 days >= 8",
    "horizon / 2 <= 6 months - 90 days",
    "max(horizon, 1 years) == horizon and min(horizon, 3 months) < 100 days",
    "budget >= 100k usd and horizon >= 3 months",
    "-budget < -(1_000 usd) and 2 * learning_cost <= budget",
    "budget * 10% >= 12k usd",
]


def _compiler(expr: str, names: dict[str, float]) -> bool:
    diags = Diagnostics()
    node = parse_expression(expr, "rule", diags)
    assert node is not None
    try:
        return truthy(Interpreter(names, BASE_FUNCTIONS).eval(lower_expression(node, diags)))
    except EvalError:
        return False


def _checker(expr: str, names: dict[str, Fraction]) -> bool:
    try:
        evaluator = certcheck.Evaluator(names, certcheck.BASE_FUNCTIONS)
        return certcheck.truthy(evaluator.eval(certcheck.parse_expression(expr)))
    except certcheck.ExprError:
        return False


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_the_checker_compares_durations_as_the_compiler_does(expr: str) -> None:
    results = set()
    for (amount, unit), budget in itertools.product(HORIZONS, (99_000.0, 720_000.0)):
        horizon = amount * DAYS[unit]
        exact = rnd(Fraction(amount) * certcheck.DAYS[unit])
        assert Fraction(horizon) == exact  # the two tables agree, exactly
        compiled = _compiler(expr, {"horizon": horizon, "budget": budget, "learning_cost": 50_000.0})
        checked = _checker(expr, {"horizon": exact, "budget": Fraction(budget), "learning_cost": Fraction(50_000)})
        assert compiled is checked, (expr, amount, unit, budget)
        results.add(compiled)
    assert lowered(f"obligation x covers developers {{\n    require {expr}\n}}\n").items == []
    assert results == {True, False} or expr.startswith("budget *"), "each expression is true for some horizons only"


# ---------------------------------------------------------------------- ratios in routes
PHOTO_BOOKS = ROOT / "examples" / "cohort" / "photo_books.route"


@pytest.mark.parametrize(
    ("old", "new", "column_of", "exit_code"),
    [
        # a state's value: the threshold's 55% then no longer bounds the change to 55 (PCSC-E501)
        ("revenue 1.8M usd retention 55% }", "revenue 1.8M usd retention 55 }", "55 }", 1),
        ("revenue >= 1.8M usd and retention >= 55%\n", "revenue >= 1.8M usd and retention >= 55\n", "55\n", 0),
    ],
    ids=["state", "threshold"],
)
def test_a_ratio_over_one_in_a_route_warns_at_the_value(
    old: str, new: str, column_of: str, exit_code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`retention 55` meant 55%: a ratio of 55 is 5,500%. The outcomes file warns of the
    same value (PCSC-W701); the route does too, where it is written (PCSC-W610)."""
    text = PHOTO_BOOKS.read_text(encoding="utf-8")
    assert text.count(old) == 1
    edited = text.replace(old, new)
    route = tmp_path / "photo_books.route"
    route.write_text(edited, encoding="utf-8")
    code = main(["check", str(route)])
    _, err = capsys.readouterr()
    line = edited[: edited.index(new)].count("\n") + 1 + new[: new.index(column_of)].count("\n")
    start = edited.index(new) + new.index(column_of)
    column = start - edited.rfind("\n", 0, start)
    assert code == exit_code  # the warning itself fails nothing
    assert f"{route}:{line}:{column}: warning: field `retention` is a ratio, written as a fraction: 55 is 5,500% " \
           "[PCSC-W610]" in err, err
    assert "help: if you meant 55 percent, write `55%`" in err


def test_a_ratio_written_as_a_fraction_or_a_percentage_does_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(PHOTO_BOOKS)]) == 0
    assert "W610" not in capsys.readouterr().err
    diags = Diagnostics()
    text = LIBRARY + "obligation x covers retention {\n    require delta.retention >= 1.5\n}\n"
    lower_library(parse_source(text, "probe.obl", diags), "probe.obl", text, diags)
    assert diags.items == []  # a require line's bound is not a route's value
