"""The examples do what their header comments say they show.

Each example in examples/ opens with a `#` comment naming what it demonstrates; these
tests hold it to that, through the in-process pipeline. The exact numbers are pinned
by the golden files (tests/test_golden.py); here are the claims in words.
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import pytest

from pcsc.cli import main
from pcsc.compiler.session import Compiled, Session
from pcsc.score.route import TransitionNumbers
from tests.conftest import EXAMPLES, ROOT


def compile_example(name: str) -> tuple[Session, dict[str, Compiled]]:
    session = Session()
    out: dict[str, Compiled] = {}
    for route in session.load_routes(EXAMPLES / name, f"examples/{name}"):
        compiled = session.compile_route(route)
        assert compiled is not None, [d.message for d in session.diags.items]
        out[route.name] = compiled
    assert not session.diags.has_errors
    return session, out


def warnings_of(session: Session) -> list[tuple[str, str]]:
    return [(d.code, d.message.split("`")[1]) for d in session.diags.items if d.severity == "warning"]


def by_name(c: Compiled) -> dict[str, TransitionNumbers]:
    return {t.name: t for t in c.numbers.transitions}


def test_compile_examples_folder_exits_zero() -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compile", "examples/"])
    assert code == 0, err.getvalue()
    assert "route ci_cache" in out.getvalue() and "route subscription_switch" in out.getvalue()


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.route")), ids=lambda p: Path(p).name)
def test_every_example_opens_with_a_comment_and_pins_venture(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# ")
    assert 'policy  "venture@1.0.0"' in text


def test_ci_cache_is_the_long_shape_with_a_class_floor_and_soc2() -> None:
    session, routes = compile_example("ci_cache.route")
    assert warnings_of(session) == []
    n = routes["ci_cache"].numbers
    assert 4 <= len(n.transitions) <= 7
    first = n.transitions[0]
    assert first.cost.budget == 30_000 and first.cost.floor_class == 50_000
    assert first.cost.bound_by == "floor_class" and first.cost.c == 50_000
    audit = by_name(routes["ci_cache"])["soc2_audit"]
    soc2 = [d for d in audit.deltas if d.field == "soc2"]
    assert len(soc2) == 1 and soc2[0].source is False and soc2[0].target is True and soc2[0].material
    for name in ("marketplace", "enterprise"):  # contradicted by the tier-3 announcement
        assert by_name(routes["ci_cache"])[name].reweight.contradicting == (("builtin_caching", 0.5),)
    # six compounding steps: the staged score is negative although the vision is 500M;
    # only the last step is worth its cost, every earlier one costs more than p·R_next
    assert n.value == 500e6 and n.score < 0 and n.eligible
    last = n.transitions[-1]
    assert last.cost.c < last.p * last.R_next
    assert all(t.cost.c > t.p * t.R_next for t in n.transitions[:-1])
    assert n.flat_product == pytest.approx(math.prod(t.p for t in n.transitions), rel=1e-12)


def test_feature_flags_has_two_competing_routes_with_contradictions() -> None:
    session, routes = compile_example("feature_flags.route")
    assert warnings_of(session) == []
    assert list(routes) == ["self_serve", "enterprise_first"]
    a, b = routes["self_serve"].numbers, routes["enterprise_first"].numbers
    assert a.value == b.value  # one decision, one vision
    for numbers, contradicted in ((a, ("free_tier", "team_plan")), (b, ("land_expand",))):
        for t in numbers.transitions:
            assert (t.reweight.W < 1) == (t.name in contradicted), t.name
            assert bool(t.reweight.contradicting) == (t.name in contradicted), t.name
    pilots = b.transitions[0]
    assert pilots.cost.bound_by == "floor_class" and pilots.cost.budget == 250_000 and pilots.cost.c == 300_000
    assert a.eligible and b.eligible and a.score > b.score > 0


def test_log_search_excludes_evidence_captured_after_as_of() -> None:
    session, routes = compile_example("log_search.route")
    assert warnings_of(session) == [("PCSC-W601", "growth_post"), ("PCSC-W601", "analyst_note")]
    c = routes["log_search"]
    n = c.numbers
    assert "growth_post" not in n.admissible_evidence and "analyst_note" not in n.admissible_evidence
    launch, paid = n.transitions
    assert [name for name, _ in launch.reweight.supporting] == ["trial_cohort"]
    assert [name for name, _ in paid.reweight.supporting] == ["plan_choice"]
    assert [name for name, _ in paid.reweight.contradicting] == ["storage_costs"]
    assert [f.name for f in c.route.fields] == ["developers", "arr"]
    assert n.criteria_score == pytest.approx((2 * 60 + 50) / 3) and n.eligible
    assert len(n.transitions) == 2 and c.route.vision.state == "revenue"


def test_db_gui_subscription_fails_its_eligibility_gate() -> None:
    session, routes = compile_example("db_gui_subscription.route")
    assert warnings_of(session) == [
        ("PCSC-W601", "switch_survey"), ("PCSC-W608", "deck_claim"), ("PCSC-W608", "reseller_forecast"),
    ]  # the unverified items are excluded with a note
    c = routes["subscription_switch"]
    n = c.numbers
    assert [e.unverified for e in c.route.evidence] == [True, True, False]
    assert n.admissible_evidence == ()
    assert [t.reweight.W for t in n.transitions] == [1.0]
    assert [(g.id, g.kind, g.passed) for g in n.gates] == [("has-admissible-evidence", "eligibility", False)]
    assert n.eligible is False and n.score > 0  # a positive score does not make it eligible
    assert n.criteria_score is None and n.bucket is None
    assert [f.name for f in c.route.fields] == ["paying_teams", "arr"]


def test_compile_of_the_shipped_examples_ends_with_a_summary() -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    proc = subprocess.run([sys.executable, "-m", "pcsc", "compile", "examples/"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    import re

    routes = sorted(ROOT.joinpath("examples").rglob("*.route"))
    declared = sum(len(re.findall(r"^route\s", p.read_text(encoding="utf-8"), re.M)) for p in routes)
    last = proc.stdout.rstrip().splitlines()[-1]
    assert declared >= len(routes) >= 55
    assert last.startswith(f"compiled {declared} routes from {len(routes)} files: {declared} released")
    assert last.endswith("1 ineligible (a blocking gate failed)")


def test_a_folder_without_routes_is_an_error(tmp_path: Path) -> None:
    from pcsc.cli import main

    (tmp_path / "notes.txt").write_text("no routes here", encoding="utf-8")
    for command in ("check", "compile", "gate", "seams"):
        assert main([command, str(tmp_path)]) == 1
