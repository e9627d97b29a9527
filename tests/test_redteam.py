"""`pcsc redteam` (docs/cli.md): edits that raise the score, recompiled through the whole
pipeline, and which of them the coverage check catches. The expected numbers on the
spec route are computed here by hand from docs/formulas.md (`hand_computation`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc import cli
from pcsc.analysis import redteam
from pcsc.analysis.redteam import Edit, NotApplicable, RouteReport, Runner, Trial, apply_edit, enumerate_edits
from pcsc.analysis.seams.splice import splice
from pcsc.cli.outcome import EXIT_USAGE
from pcsc.compiler.session import Compiled, Session
from pcsc.lang.ir import Route
from pcsc.lang.printer import route_to_text
from pcsc.policy.load import PolicyStore
from tests.conftest import EXAMPLES, SPEC_ROUTE, pin_libraries
from tests.test_spec_numbers import hand_computation

COHORT = sorted((EXAMPLES / "cohort").glob("*.route"))


def compile_file(path: Path, session: Session | None = None) -> tuple[Session, Compiled]:
    session = session or Session()
    routes = session.load_routes(path)
    assert len(routes) == 1 and not session.diags.has_errors
    compiled = session.compile_route(routes[0])
    assert compiled is not None
    return session, compiled


@cache
def spec_report() -> RouteReport:
    session, c = compile_file(SPEC_ROUTE)
    return redteam.redteam(c, session)


def trial(report: RouteReport, key: str) -> Trial:
    found = [t for t in report.trials if t.key == key]
    assert len(found) == 1, [t.key for t in report.trials]
    return found[0]


def sat(ws: list[float]) -> float:
    s = sum(w * 0.5**i for i, w in enumerate(sorted(ws, reverse=True)))
    return s / (1 + s)


# ---------------------------------------------------------------------- the spec route
def test_delete_of_seam_1_gains_the_pipeline_arms_delta_and_gate_refuses_it() -> None:
    hand = hand_computation()
    p, R = hand["p"], hand["R"]
    assert isinstance(p, list) and isinstance(R, list)
    # spliced: launch now claims garage -> bridge and pays its delta-indexed floor
    floor_delta = (1e5 + (200 - 100) / 900 * 5e5) + (4e5 + (1.2e6 - 1e6) / 9e6 * 2.6e6)
    spliced = -floor_delta + p[0] * R[2]
    t = trial(spec_report(), "delete:monetize")
    assert t.gain == pytest.approx(spliced - R[0], rel=1e-12)
    assert round(t.gain or 0.0, 2) == 3_110_796.59
    # the same number as the seams' pipeline arm
    from pcsc.analysis.seams.analysis import analyse

    session, c = compile_file(SPEC_ROUTE)
    arm = analyse(c, session).seams[0].pipeline
    assert arm is not None and t.gain == arm.delta
    assert t.outcome == "refused" and t.gate == "suspend-and-ask" and t.dock == "docked"
    assert t.uncovered == ("launch.developers", "launch.paying_teams", "launch.arr")
    assert t.failed_requires == ("adoption: require measured(delta)",)
    assert t.floors_bound and [(c.transition, round(c.c_to, 2), c.bound_by) for c in t.costs] == [
        ("launch", 613_333.33, "floor_delta")
    ]


def test_dropping_hosting_from_launch_gains_exactly_9000_and_is_released() -> None:
    # budget 2·45k + 6·1.5k = 99,000 -> 90,000, still above floor_class 50,000 (no delta
    # floor on developers): c falls by 9,000 and R_0 = −c_0 + p_0·R_1 rises by exactly that
    t = trial(spec_report(), "drop-cost:launch:hosting")
    assert t.gain == 9_000.0
    assert t.outcome == "covered-gain" and t.gate == "released" and t.dock == "released"
    assert t.uncovered == () and not t.floors_bound
    assert [(c.budget_from, c.budget_to, c.c_to, c.bound_by) for c in t.costs] == [
        (99_000.0, 90_000.0, 90_000.0, "budget")
    ]
    # without the engineers, floor_class 50,000 sets c: the floor catches 40,000 of the 90,000 dropped
    eng = trial(spec_report(), "drop-cost:launch:engineers")
    assert eng.gain == 49_000.0 and eng.floors_bound and eng.outcome == "covered-gain"
    # monetize pays its delta-indexed floor through `budget >= floor(delta)`: GATE refuses
    sales = trial(spec_report(), "drop-cost:monetize:sales")
    assert sales.outcome == "refused"
    assert "monetization: require budget >= floor(delta)" in sales.failed_requires


def test_reclass_only_towards_higher_priors() -> None:
    report = spec_report()
    priors = {k: v.p for k, v in report.compiled.policy.policy.priors.items()}
    reclasses = [t for t in report.trials if t.kind == "re-class"]
    assert sorted(t.key for t in reclasses) == [
        "re-class:expand:devtools/first-revenue",
        "re-class:expand:devtools/first-users",
        "re-class:monetize:devtools/first-users",
    ]
    route = report.compiled.route
    for t in reclasses:
        (e,) = t.edits
        old = next(x.ref_class for x in route.transitions if x.name == e.subject)
        assert priors[e.arg] > priors[old]
        # the class is the author's claim: coverage cannot see it
        assert t.gate == "released"
    hand = hand_computation()
    p, R = hand["p"], hand["R"]
    assert isinstance(p, list) and isinstance(R, list)
    W_monetize = 1 + 0.5 * sat([0.7 * 0.8]) - 0.5 * sat([0.6 * 1.0])
    t = trial(report, "re-class:monetize:devtools/first-users")
    assert t.gain == pytest.approx(p[0] * (0.45 - 0.30) * W_monetize * R[2], rel=1e-12)
    assert t.outcome == "covered-gain"


def test_reclass_order_same_category_first_then_prior() -> None:
    _, c = compile_file(EXAMPLES / "cohort" / "api_monitoring.route")
    priors = {k: v.p for k, v in c.policy.policy.priors.items()}
    edits = [e for e in enumerate_edits(c.route, priors) if e.kind == "re-class" and e.subject == "status_pages"]
    classes = [e.arg for e in edits]
    same = [x for x in classes if x.startswith("devtools/")]
    assert classes[: len(same)] == same and len(same) >= 2
    assert all(priors[x] > priors["devtools/scale"] for x in classes)
    assert set(classes) == {k for k, p in priors.items() if p > priors["devtools/scale"]}
    assert [priors[x] for x in same] == sorted((priors[x] for x in same), reverse=True)
    only = enumerate_edits(c.route, priors, "category")
    assert {e.arg for e in only if e.kind == "re-class" and e.subject == "status_pages"} == set(same)
    assert not [e for e in enumerate_edits(c.route, priors, "none") if e.kind == "re-class"]


def test_merge_of_launch_and_monetize() -> None:
    """The merge keeps launch's class (the higher prior), takes monetize's threshold, pays
    both budgets and is supported and contradicted by the evidence of both: every
    delta stays measured and funded, so GATE releases it. A covered gain."""
    hand = hand_computation()
    p, R = hand["p"], hand["R"]
    assert isinstance(p, list) and isinstance(R, list)
    W = 1 + 0.5 * sat([0.8 * 0.8, 0.7 * 0.8]) - 0.5 * sat([0.6 * 1.0])
    merged = -(99_000 + 720_000) + 0.45 * W * R[2]
    t = trial(spec_report(), "merge:launch:monetize")
    assert t.gain == pytest.approx(merged - R[0], rel=1e-12)
    assert round(t.gain or 0.0, 2) == 2_353_409.54
    assert t.outcome == "covered-gain" and t.gate == "released" and t.uncovered == ()
    text = t.text
    assert "transition launch: garage -> bridge {" in text and "transition monetize" not in text
    assert "threshold  developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd" in text
    assert "kill       developers < 100" in text
    # 90 days then 12 months from 2012-06-01 ends 2013-08-30: 455 days
    assert "horizon    455 days" in text
    assert "engineers_monetize  4 * 150_000 usd" in text and "hosting" in text and "sales" in text
    assert "discharges adoption, monetization" in text
    assert "state wedge" not in text


def test_retarget_skips_what_a_delete_already_tries() -> None:
    report = spec_report()
    assert sorted(t.key for t in report.trials if t.kind == "retarget") == [
        "retarget:launch:scale", "retarget:monetize:scale"
    ]
    assert report.duplicates == 0 and report.enumerated == len(report.trials) == 20
    texts = [t.text for t in report.trials]
    assert len(set(texts)) == len(texts)
    for t in report.trials:
        if t.kind == "retarget":
            assert t.outcome == "refused"


def test_kill_and_threshold_drops_gain_nothing_and_are_refused() -> None:
    for t in spec_report().trials:
        if t.kind in ("drop-kill", "drop-threshold"):
            assert t.gain == 0.0 and t.outcome == "refused"
            want = "require kill" if t.kind == "drop-kill" else "require measured(delta)"
            assert any(f.endswith(want) for f in t.failed_requires)


def test_summary_counts_and_order() -> None:
    report = spec_report()
    gains = [t.gain for t in report.trials]
    assert all(g is not None for g in gains)
    assert gains == sorted(gains, key=lambda g: -(g or 0.0))
    s = redteam.summarise([report])
    counts = dict(s.by_outcome)
    assert s.tried == 20 and counts["refused"] == 12 and counts["covered-gain"] == 8 and counts["invalid"] == 0
    assert s.raising == 14 and s.refused_raising == 6
    assert [t.key for _, t in s.covered_gains][-2:] == ["drop-cost:launch:engineers", "drop-cost:launch:hosting"]


# ---------------------------------------------------------------------- bounds, pairs, classes
def test_depth_two_and_max_edits_bound_the_work() -> None:
    session, c = compile_file(SPEC_ROUTE)
    report = redteam.redteam(c, session, max_edits=60, depth=2)
    assert len(report.trials) == 60 and report.not_tried > 0
    pairs = [t for t in report.trials if len(t.edits) == 2]
    assert pairs and all(" + " in t.key and "; then " in t.description for t in pairs)
    both = trial(report, "merge:monetize:expand + merge:launch:monetize")
    assert both.outcome == "covered-gain" and "transition launch: garage -> scale {" in both.text
    assert (both.gain or 0.0) > trial(report, "merge:monetize:expand").gain  # type: ignore[operator]
    small = redteam.redteam(c, session, max_edits=5)
    assert len(small.trials) == 5 and small.not_tried == 15


def test_an_edit_that_does_not_apply_is_refused_by_name() -> None:
    route = spec_report().compiled.route
    with pytest.raises(NotApplicable):
        apply_edit(route, Edit("delete", "launch"))  # not interior
    with pytest.raises(NotApplicable):
        apply_edit(route, Edit("merge", "launch", "expand"))  # not adjacent
    with pytest.raises(NotApplicable):
        apply_edit(route, Edit("drop-evidence", "hn_launch"))  # contradicts nothing
    assert apply_edit(route, Edit("delete", "monetize")) == splice(route, 1)


def test_invalid_and_ineligible_edits_are_classified(tmp_path: Path) -> None:
    session, c = compile_file(SPEC_ROUTE)
    runner = Runner(c, session)
    bad = attrs.evolve(c.route, transitions=tuple(
        attrs.evolve(t, ref_class="devtools/nope") if t.name == "launch" else t for t in c.route.transitions
    ))
    t = runner.trial((Edit("re-class", "launch", "devtools/nope"),), "a class the policy lacks", route_to_text(bad))
    assert t.outcome == "invalid" and any("PCSC-E207" in e for e in t.errors) and t.gain is None
    assert not session.diags.has_errors  # an invalid edit is reported, not blamed on the input
    # the only evidence contradicts `expand`, under a copy of the venture library that asks
    # for no evidence (under a new name, which the route's policy pins: a changed `venture`
    # would replace the pinned library): dropping it raises p_expand, and GATE still
    # releases the route, but the policy's has-admissible-evidence gate makes it ineligible
    library = (SPEC_ROUTE.parent.parent / "obligations" / "venture.obl").read_text(encoding="utf-8")
    assert "    require evidence(tier >= 2) >= 1\n" in library
    library = library.replace("library venture", "library lenient")
    (tmp_path / "lenient.obl").write_text(library.replace("    require evidence(tier >= 2) >= 1\n", ""), "utf-8")
    ref = pin_libraries(tmp_path / "policies", [tmp_path / "lenient.obl"])
    only = attrs.evolve(c.route, uses=("lenient",), evidence=tuple(
        attrs.evolve(e, contradicts=("expand",)) for e in c.route.evidence if e.name == "price_war"
    ))
    path = tmp_path / "only_contra.route"
    path.write_text(route_to_text(only).replace('"venture@1.0.0"', f'"{ref}"'), encoding="utf-8")
    s2, c2 = compile_file(path, Session(policies=PolicyStore([tmp_path / "policies"])))
    assert c2.decision.verdict == "released" and c2.numbers.eligible
    t = trial(redteam.redteam(c2, s2, reclass="none"), "drop-evidence:price_war")
    assert (t.gain or 0.0) > 0 and t.gate == "released" and t.eligible is False and t.outcome == "ineligible"


# ---------------------------------------------------------------------- every edit is an input
@cache
def cohort_compiled() -> tuple[tuple[Session, Compiled], ...]:
    return tuple(compile_file(p) for p in COHORT)


@cache
def cohort_edits() -> tuple[tuple[int, Edit], ...]:
    out = []
    for i, (_, c) in enumerate(cohort_compiled()):
        priors = {k: v.p for k, v in c.policy.policy.priors.items()}
        out += [(i, e) for e in enumerate_edits(c.route, priors)]
    return tuple(out)


def recompile(c: Compiled, edited: Route) -> Compiled:
    text = route_to_text(edited)
    child = Session(policies=Session().policies)
    routes = child.routes_from_text(text, "edited.route", Path(c.route.file).parent)
    assert len(routes) == 1
    compiled = child.compile_route(routes[0])
    errors = [f"{d.code} {d.message}" for d in child.diags if d.severity == "error"]
    assert compiled is not None and not errors, errors
    # what compiles is what was edited: the text prints back identically and the due
    # dates (merged horizons included) are the ones the edit computed
    assert route_to_text(compiled.route) == text
    assert [t.due for t in compiled.route.transitions] == [t.due for t in edited.transitions]
    return compiled


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_edited_route_compiles_without_errors(data: st.DataObject) -> None:
    edits = cohort_edits()
    i, first = data.draw(st.sampled_from(edits))
    c = cohort_compiled()[i][1]
    edited = apply_edit(c.route, first)
    if data.draw(st.booleans()):  # sometimes a second edit on the first one's result
        priors = {k: v.p for k, v in c.policy.policy.priors.items()}
        second = data.draw(st.sampled_from(enumerate_edits(edited, priors)))
        edited = apply_edit(edited, second)
    recompile(c, edited)


def test_the_cohort_without_reclass_has_no_invalid_edit_and_every_delete_is_refused() -> None:
    deletes = 0
    for session, c in cohort_compiled()[:10]:
        report = redteam.redteam(c, session, reclass="none")
        assert report.count("invalid") == 0
        for t in report.trials:
            if t.kind == "delete":
                deletes += 1
                assert t.outcome == "refused"  # examples/cohort/README.md: every splice is refused
            if t.kind in ("retarget", "drop-kill") and t.gain and t.gain > 0:
                assert t.outcome == "refused"
    assert deletes > 10


# ---------------------------------------------------------------------- the command line
@pytest.fixture
def pcsc(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    """`pcsc …` through `pcsc.cli.main`: the exit code and standard output."""

    def run(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        code = cli.main(list(argv))
        return code, capsys.readouterr().out

    return run


def test_json_is_deterministic_and_complete(pcsc: Callable[..., tuple[int, str]]) -> None:
    code, first = pcsc("redteam", str(SPEC_ROUTE), "--format", "json")
    code2, second = pcsc("redteam", str(SPEC_ROUTE), "--format", "json")
    assert code == code2 == 0 and first == second
    doc = json.loads(first)
    route = doc["routes"][0]
    assert route["tried"] == 20 and route["by_class"]["covered-gain"] == 8
    assert doc["summary"]["by_kind"]["delete"]["refused"] == 1
    keys = {"kind", "edit", "description", "class", "gain", "gate", "dock", "uncovered", "failed_requires",
            "drift", "costs", "floors_bound", "verdict", "dock_gain", "steps"}
    assert all(keys <= set(e) for e in route["edits"])
    gains = [g["gain"] for g in doc["summary"]["covered_gains"]]
    assert gains == sorted(gains, reverse=True) and len(gains) == 8
    assert doc["settings"] == {"depth": 1, "max_edits": 500, "reclass": "all"}


def test_text_and_options(pcsc: Callable[..., tuple[int, str]]) -> None:
    code, text = pcsc("redteam", str(SPEC_ROUTE))
    assert code == 0
    assert "covered gains remaining" in text and "delete `monetize`; `launch` now ends at `bridge`" in text
    assert "3,110,796.59" in text and "9,000.00" in text
    code, off = pcsc("redteam", str(SPEC_ROUTE), "--coverage", "off", "--format", "json", "--max-edits", "3")
    edits = json.loads(off)["routes"][0]["edits"]
    assert code == 0 and len(edits) == 3 and {e["verdict"] for e in edits} == {"ungated"}
    assert {e["gate"] for e in edits} <= {"released", "suspend-and-ask"}
    assert pcsc("redteam", str(SPEC_ROUTE), "--route", "nope")[0] == EXIT_USAGE
    assert pcsc("redteam", str(SPEC_ROUTE), "--max-edits", "0")[0] == EXIT_USAGE
    code, out = pcsc("redteam", str(EXAMPLES / "cohort" / "api_monitoring.route"), "--route", "api_monitoring",
                     "--reclass", "category", "--format", "json")
    assert code == 0 and json.loads(out)["routes"][0]["route"] == "api_monitoring"



def test_o_writes_the_report_and_prints_nothing(pcsc: Callable[..., tuple[int, str]], tmp_path: Path) -> None:
    argv = ("redteam", str(SPEC_ROUTE), "--max-edits", "3")
    _, text = pcsc(*argv)
    target = tmp_path / "redteam.txt"
    assert pcsc(*argv, "-o", str(target)) == (0, "")
    assert target.read_text(encoding="utf-8") == text and "redteam summary" in text
    _, shown = pcsc(*argv, "--format", "json")
    assert pcsc(*argv, "--format", "json", "--output", str(target)) == (0, "")
    assert target.read_text(encoding="utf-8") == shown
    doc = json.loads(shown)
    assert doc["schema"] == {"kind": "redteam", "version": 1} and doc["diagnostics"] == []
    assert len(doc["routes"][0]["edits"]) == 3


def test_a_progress_bar_on_a_terminal_leaves_the_report_unchanged(
    pcsc: Callable[..., tuple[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    argv = ("redteam", *map(str, COHORT[:2]), "--max-edits", "1", "--reclass", "none")
    plain = pcsc(*argv)
    terminal = Terminal()
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.stderr", terminal)
    assert pcsc(*argv) == plain and plain[0] == 0
    assert "redteam" in terminal.getvalue()  # the bar was drawn, on standard error only
    terminal.seek(0)
    terminal.truncate()
    assert pcsc(*argv, "--quiet") == plain and terminal.getvalue() == ""
