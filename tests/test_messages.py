"""Messages an author meets while writing a route: each says what is valid and how to
fix it, and every semantic error comes in the first run.

Each case edits the reference route (examples/devtools_api.route) and checks it
in-process through `pcsc.compiler.session.Session`, as `pcsc check` does.
"""

from __future__ import annotations

from pathlib import Path

from pcsc.compiler.session import Session
from pcsc.diagnostics.model import Diagnostic
from pcsc.lang.lower.common import policy_help
from tests.conftest import SPEC_ROUTE

SPEC = SPEC_ROUTE.read_text(encoding="utf-8")


def check(tmp_path: Path, *edits: tuple[str, str]) -> list[Diagnostic]:
    """The diagnostics of the reference route after ``edits`` (each must apply once)."""
    text = SPEC
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new, 1)
    path = tmp_path / "r.route"
    path.write_text(text, encoding="utf-8")
    session = Session()
    for route in session.load_routes(path, "r.route"):
        session.compile_route(route)
    return session.diags.items


def only(diags: list[Diagnostic], code: str) -> Diagnostic:
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in diags]
    return found[0]


# ---------------------------------------------------------------------- horizon units
def test_unknown_horizon_unit_lists_the_valid_units(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("horizon    90 days", "horizon    6 weeks")), "PCSC-E109")
    assert d.message == "unknown unit `weeks` for a horizon: a horizon is a number of days, months or years"
    assert d.help == "write `horizon 42 days`"
    assert (d.span.line, d.span.column) == (25, 22)


def test_other_horizon_words_get_the_units_too(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("horizon    90 days", "horizon    3 quarters")), "PCSC-E109")
    assert "a horizon is a number of days, months or years" in d.message
    assert d.help == "write `horizon 3 days`, `3 months` or `3 years`"
    d = only(check(tmp_path, ("horizon    90 days", "horizon    1.5 hours")), "PCSC-E109")
    assert d.help == "a horizon is a whole number of days, months or years"


def test_other_syntax_errors_keep_their_wording(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("actor      \"two founders\"", "actor      two founders")), "PCSC-E101")
    assert "horizon" not in d.message and d.message.startswith("unexpected `two`")


# ---------------------------------------------------------------------- unknown fields
def test_unknown_field_in_a_threshold_names_the_libraries(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("threshold  developers >= 500", "threshold  nps >= 500")), "PCSC-E205")
    assert d.message == "`nps` in the threshold is not a field of this route"
    assert d.help is not None
    assert d.help.startswith("fields come from the libraries the route uses: venture (")
    assert d.help.endswith("venture.obl) declares developers, paying_teams, arr, soc2")


def test_unknown_field_in_a_state_names_the_libraries(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("state wedge  { developers 500 }", "state wedge  { nps 500 }")), "PCSC-E205")
    assert d.message == "unknown field `nps`"
    assert d.help is not None and "venture (" in d.help and "declares developers, paying_teams, arr, soc2" in d.help


def test_misspelt_field_keeps_its_did_you_mean(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("threshold  developers >= 500", "threshold  developer >= 500")), "PCSC-E205")
    assert d.help == "did you mean `developers`?"


def test_library_field_without_a_value_says_so(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("threshold  developers >= 500", "threshold  soc2 == true")), "PCSC-E205")
    assert d.help is not None
    assert "`soc2` is declared by `venture`" in d.help and "no state of this route gives it a value" in d.help


# ---------------------------------------------------------------------- bare fields
def test_bare_bool_threshold_says_compare_with_true(tmp_path: Path) -> None:
    diags = check(
        tmp_path,
        ("state garage { developers 0 ", "state garage { soc2 false  developers 0 "),
        ("threshold  developers >= 500", "threshold  soc2"),
    )
    d = only(diags, "PCSC-E301")
    assert d.message == (
        "a threshold must be a comparison (or comparisons joined by `and`, `or`, `not`), not the bare field `soc2`"
    )
    assert d.help == "`soc2` is a bool field: write `soc2 == true`"


def test_bare_numeric_threshold_and_negated_bool_kill(tmp_path: Path) -> None:
    d = only(check(tmp_path, ("threshold  developers >= 500", "threshold  developers")), "PCSC-E301")
    assert d.message.endswith("not the bare field `developers`")
    assert d.help == "`developers` is a count field: compare it with a value, e.g. `developers >= 100`"
    diags = check(
        tmp_path,
        ("state garage { developers 0 ", "state garage { soc2 false  developers 0 "),
        ("kill       developers < 100", "kill       developers < 100 or not soc2"),
    )
    d = only(diags, "PCSC-E301")
    assert d.message.startswith("a kill must be a comparison")
    assert d.help == "`soc2` is a bool field: write `soc2 == false`"


def test_comparisons_of_bool_fields_are_fine(tmp_path: Path) -> None:
    diags = check(
        tmp_path,
        ("state garage { developers 0 ", "state garage { soc2 false  developers 0 "),
        ("threshold  developers >= 500", "threshold  developers >= 500 and soc2 == false"),
    )
    assert not [d for d in diags if d.severity == "error"]


# ---------------------------------------------------------------------- tier errors
def test_tier_error_comes_with_the_other_errors_of_its_evidence(tmp_path: Path) -> None:
    """A tier the policy gives no weight used to be reported only once the evidence
    block's other errors were fixed: the policy never saw that evidence."""
    edits = [("tier      2", "tier      4")]
    for other in (
        ("weight    0.8", "weight    1.8"),  # out of range
        ("supports  launch", "supports  lanch"),  # unknown transition
        ("captured  2012-05-20\n", ""),  # missing
    ):
        codes_ = sorted(d.code for d in check(tmp_path, *edits, other) if d.severity == "error")
        assert "PCSC-E307" in codes_ and len(codes_) == 2, (other, codes_)
        assert any("which policy venture@1.0.0 gives no weight" in d.message for d in check(tmp_path, *edits, other))


def test_tier_below_the_minimum_comes_with_an_unrelated_error(tmp_path: Path) -> None:
    diags = check(
        tmp_path,
        ("tier      2", "tier      0"),
        ("weight    0.8", "weight    1.8"),
        ("threshold  developers >= 500", "threshold  nps >= 500"),
    )
    assert {d.code for d in diags} >= {"PCSC-W605", "PCSC-E307", "PCSC-E205"}


# ---------------------------------------------------------------------- unknown policy
def test_unknown_policy_does_not_suggest_an_unrelated_id(tmp_path: Path) -> None:
    d = only(check(tmp_path, ('"venture@1.0.0"', '"myv@1.0.0"')), "PCSC-E401")
    assert d.help is not None and "did you mean" not in d.help
    assert d.help.startswith("available policies: ") and "venture@1.0.0" in d.help


def test_unknown_policy_suggests_a_close_id_or_the_versions(tmp_path: Path) -> None:
    d = only(check(tmp_path, ('"venture@1.0.0"', '"ventura@1.0.0"')), "PCSC-E401")
    assert d.help == "did you mean `venture@1.0.0`?"
    d = only(check(tmp_path, ('"venture@1.0.0"', '"venture@9.0.0"')), "PCSC-E401")
    assert d.help is not None and d.help.startswith("policy `venture` has versions ") and "1.0.0" in d.help


def test_policy_help_rules() -> None:
    available = ["venture@1.0.0", "venture@1.1.0", "seed@2.0.0"]
    assert policy_help("myv@1.0.0", available) == "available policies: seed@2.0.0, venture@1.0.0, venture@1.1.0"
    assert policy_help("venturee@1.1.0", available) == "did you mean `venture@1.1.0`?"
    assert policy_help("venturee@3.0.0", available) == "did you mean `venture@1.1.0`?"
    assert policy_help("seed@1.0.0", available) == "policy `seed` has version 2.0.0"
    assert policy_help("x@1.0.0", []) is None
    many = [f"p{i}@1.0.0" for i in range(12)]
    assert policy_help("zzz@1.0.0", many) == "available policies: " + ", ".join(sorted(many)[:10]) + " and 2 more"
