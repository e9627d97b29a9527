"""The seeded search over multi-edit revisions (EXP B without a model) and the
co-author conditions (EXP C without a model): `pcsc redteam --search`, and its tables
in `pcsc seams --experiment --search`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from pcsc.analysis.redteam import Edit, apply_edit, enumerate_edits
from pcsc.analysis.search import (
    CONDITIONS,
    POLICY_FEATURES,
    SHIPPED,
    Settings,
    _restate,
    condition_policy,
    reuse_excerpts,
    search_route,
    ungrounded,
    write_excerpts,
)
from pcsc.cli import main
from pcsc.compiler.session import Compiled, Session
from pcsc.coverage import discharge_route
from pcsc.diagnostics.exits import EXIT_USAGE
from pcsc.lang.ir import Route, Transition
from pcsc.lang.printer import route_to_text
from pcsc.score.cost import deltas
from tests.conftest import EXAMPLES

COHORT = EXAMPLES / "cohort"
SLICE = [str(COHORT / f"{name}.route") for name in ("adaptive_sat_prep", "adherence_texts", "api_monitoring")]


def compile_file(path: Path | str) -> Compiled:
    session = Session()
    compiled = session.compile_routes(session.load_paths([str(path)]))
    assert len(compiled) == 1, session.diags.sorted()
    return compiled[0]


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, bytes]:
    """The search on three routes of the cohort, both arms, a small budget."""
    out = tmp_path_factory.mktemp("search")
    report = out / "search.json"
    argv = ["redteam", "--search", *SLICE, "--budget", "20", "--emit", str(out / "emit"), "--format", "json",
            "-o", str(report)]
    assert main(argv) == 0
    data = report.read_bytes()
    return json.loads(data), out / "emit", data


# ---------------------------------------------------------------------- done-when
def test_gate_arm_releases_no_uncovered_material_change(sliced: tuple[dict[str, Any], Path, bytes]) -> None:
    doc, emit, _ = sliced
    files = sorted(emit.glob("*.gate.route"))
    assert len(files) == len(SLICE)
    by_route = {r["route"]: r for r in doc["routes"]}
    for path in files:
        c = compile_file(path)
        assert c.decision.verdict == "released", path.name
        assert discharge_route(c.route, c.policy.policy).uncovered == [], path.name
        gate = by_route[c.route.name]["arms"]["gate"]
        assert gate["revision"]["released_score"] == c.numbers.score
        assert gate["revision"]["uncovered"] == []


def test_none_arm_finds_uncovered_gains_that_gate_refuses(sliced: tuple[dict[str, Any], Path, bytes]) -> None:
    doc, emit, _ = sliced
    honest = {r["route"]: r["arms"]["none"]["honest"]["ungated_score"] for r in doc["routes"]}
    uncovered_gains = 0
    for path in sorted(emit.glob("*.none.route")):
        c = compile_file(path)
        gains = c.numbers.score > honest[c.route.name]
        uncovered = discharge_route(c.route, c.policy.policy).uncovered
        if gains and uncovered:
            uncovered_gains += 1
            assert c.decision.verdict == "suspend-and-ask", path.name  # GATE refuses every one
    assert uncovered_gains > len(SLICE) / 2, "most routes"
    assert doc["arms"]["none"]["rates"]["uncovered_baseline_beating"]["k"] == uncovered_gains
    assert doc["arms"]["gate"]["rates"]["uncovered_baseline_beating"]["k"] == 0


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    runs = []
    for name in ("one", "two"):
        report = tmp_path / f"{name}.json"
        assert main(["redteam", "--search", "--conditions", "--features-policy", "cohort@1.0.0", *SLICE[:2],
                     "--budget", "8", "--seed", "7", "--emit", str(tmp_path / name), "--format", "json",
                     "-o", str(report)]) == 0
        runs.append(report.read_bytes())
    assert runs[0] == runs[1]
    files = sorted(p.name for p in (tmp_path / "one").glob("*.route"))
    assert files == sorted(p.name for p in (tmp_path / "two").glob("*.route")) and files
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    doc = json.loads(runs[0])
    assert doc["settings"]["seed"] == 7 and doc["settings"]["features"] == "cohort@1.0.0"
    assert [row["condition"] for row in doc["conditions"]] == ["v1", "v1.5a", "v1.5b", "v1.5a+b", "v2a", "v2b",
                                                               "v2a+b"]
    assert set(doc["arms_gold"]) == set(doc["arms"]) == {"none", "gate"}
    for row in doc["conditions"]:
        assert row["rates"]["beat_honest"]["k"] >= row["rates"]["evasion"]["k"]


def test_the_measures_are_counted_by_their_rules(sliced: tuple[dict[str, Any], Path, bytes]) -> None:
    doc, _, _ = sliced
    n = len(doc["routes"])
    for arm in ("none", "gate"):
        rates = doc["arms"][arm]["rates"]
        results = [r["arms"][arm] for r in doc["routes"]]
        beating = [r for r in results if r["revision"] and r["revision"]["gain"] > 0]
        structural = [r for r in beating if {"delete", "merge", "retarget"} & set(r["revision"]["kinds"])]
        assert rates["delete_or_merge"]["k"] == len(structural) and rates["delete_or_merge"]["n"] == len(beating)
        assert rates["repair_rate"] == {"k": sum(r["repaired"] for r in results),
                                        "n": sum(r["refusals"] for r in results),
                                        "wilson95": rates["repair_rate"]["wilson95"]}
        released = [r for r in results if r["revision"] and r["revision"]["released_score"] is not None]
        strict = sum(r["revision"]["released_score"] > r["honest"]["released_score"] for r in released)
        assert rates["covered_improvement_strict"]["k"] == strict
        assert rates["route_arounds"]["k"] == sum(bool(r["revision"]["seam_skips"]) for r in released)
        assert all(rate["n"] == n for name, rate in rates.items() if name not in ("delete_or_merge", "repair_rate"))
    assert doc["arms"]["none"]["rates"]["repair_rate"]["n"] == 0, "the arm without feedback never repairs"


def test_seam_skips_are_states_of_the_honest_chain(sliced: tuple[dict[str, Any], Path, bytes]) -> None:
    doc, emit, _ = sliced
    for r in doc["routes"]:
        honest = compile_file(COHORT / f"{r['route']}.route").route
        chain = [honest.transitions[0].source, *(t.target for t in honest.transitions)]
        for arm in ("none", "gate"):
            revised = compile_file(emit / f"{r['route']}.{arm}.route").route
            kept = {revised.transitions[0].source, *(t.target for t in revised.transitions)}
            revision = r["arms"][arm]["revision"]
            assert revision["seam_skips"] == [s for s in chain if s not in kept]
            assert revision["diff"]["seam_skips"] == revision["seam_skips"]  # `pcsc diff` says the same
            assert set(revision["diff"]["removed"]) == {t.name for t in honest.transitions} - {
                t.name for t in revised.transitions}
        assert r["arms"]["gate"]["revision"]["diff"]["newly_uncovered"] == []


def test_text_prints_every_rate_with_its_interval(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["redteam", "--search", "--conditions", "--budget", "6", SLICE[0]]) == 0
    out = capsys.readouterr().out
    assert "search (EXP B without a model): seed 20240601, budget 6" in out
    for label in ("routes with an uncovered baseline-beating structure", "repair rate after a refusal",
                  "covered improvement, strict", "route-arounds (seam_skip, released)"):
        line = next(x for x in out.splitlines() if label in x)
        assert len(re.findall(r"\d+/\d+ \[\d+\.\d, \d+\.\d\]", line)) == 2, line
    for condition in ("v1", "v1.5a", "v1.5b", "v1.5a+b", "v2a", "v2b", "v2a+b"):
        assert re.search(rf"\n  {re.escape(condition)} +\d+/1 \[", out), condition


def test_experiment_with_search_same_seed_same_bytes(tmp_path: Path) -> None:
    """The one command (`seams --experiment --search`) on a small cohort, twice."""
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    for path in SLICE[:1]:
        (cohort / Path(path).name).write_bytes(Path(path).read_bytes())
    for name in ("one", "two"):
        assert main(["seams", "--experiment", str(cohort), "--search", "--budget", "4", "--seed", "3",
                     "--artifacts", str(tmp_path / name), "-o", str(tmp_path / f"{name}.txt")]) == 0
    data = (tmp_path / "one" / "experiment.json").read_bytes()
    assert data == (tmp_path / "two" / "experiment.json").read_bytes()
    assert (tmp_path / "one.txt").read_bytes() == (tmp_path / "two.txt").read_bytes()
    search = json.loads(data)["experiment"]["search"]
    assert search["settings"]["seed"] == 3 and search["settings"]["budget"] == 4
    assert [row["condition"] for row in search["conditions"]] == ["v1", "v1.5a", "v1.5b", "v1.5a+b", "v2a", "v2b",
                                                                  "v2a+b"]
    text = (tmp_path / "one.txt").read_text(encoding="utf-8")
    assert "search (EXP B without a model): seed 3, budget 4" in text
    assert "co-author conditions (EXP C without a model)" in text


def test_workers_give_the_same_bytes(tmp_path: Path) -> None:
    outs = []
    for jobs in ("1", "2"):
        report = tmp_path / f"j{jobs}.json"
        assert main(["redteam", "--search", "--features-policy", "cohort@1.0.0", *SLICE[:2], "--budget", "4",
                     "-j", jobs, "--format", "json", "-o", str(report)]) == 0
        outs.append(report.read_bytes())
    assert outs[0] == outs[1]
    assert set(json.loads(outs[0])["arms_gold"]) == {"none", "gate"}  # workers load the features policy too


# ---------------------------------------------------------------------- the co-author conditions
def test_condition_policies() -> None:
    c = compile_file(SLICE[0])
    policy = c.policy.policy
    assert policy.floors.delta, "the shipped policy has delta-indexed floors"
    by_name = {x.name: x for x in CONDITIONS}
    assert condition_policy(policy, by_name["v1"]).floors.delta == {}
    assert condition_policy(policy, by_name["v1.5a"]).floors.delta == {}
    assert condition_policy(policy, by_name["v1.5b"]) is policy
    assert condition_policy(policy, by_name["v1.5a+b"]) is policy
    assert condition_policy(policy, by_name["v1"]).priors == policy.priors


def _claims(route: Route) -> set[tuple[str, str]]:
    return {(t.source, t.target) for t in route.transitions}


def _quoted(route: Route, t: Transition) -> bool:
    """Is ``t``'s asset quoted in the excerpt of some evidence supporting it? (Read from
    the route as docs/language.md words `grounded(asset)`, not through `pcsc.analysis.search`.)"""
    asset = (t.asset or "\0").casefold()
    return any(t.name in e.supports and asset in " ".join(e.excerpt.casefold().split()) for e in route.evidence)


def _new_material_claims(revised: Route, honest: Route) -> list[Transition]:
    return [t for t in revised.transitions
            if (t.source, t.target) not in _claims(honest) and any(d.material for d in deltas(revised, t))]


@pytest.mark.parametrize(("condition", "without_grounding"), [("v1.5a", "v1"), ("v1.5a+b", "v1.5b")])
def test_grounding_conditions_release_only_grounded_new_claims(condition: str, without_grounding: str) -> None:
    """The rule, checked here on the text: a material transition the revision gave a new
    source or target is released only when its asset is quoted in supporting evidence.

    Not vacuous: the same search without the grounding rule releases revisions with a
    new, unquoted material claim (so there is something to refuse), the rule names
    each of them, and the grounded search releases a revision of every route."""
    grounded, ungated = (next(x for x in CONDITIONS if x.name == name) for name in (condition, without_grounding))
    session = Session()
    released = unquoted = 0
    for c in session.compile_routes(session.load_paths(SLICE)):
        found = search_route(c, session, "gate", grounded, Settings(budget=12))
        assert found.best is not None and found.best.released is not None, c.route.name
        released += 1
        for t in _new_material_claims(found.best.route, c.route):
            assert _quoted(found.best.route, t), f"{c.route.name}: {t.name} released ungrounded under {condition}"
        loose = search_route(c, session, "gate", ungated, Settings(budget=12)).best
        assert loose is not None and loose.released is not None
        claims = [t for t in _new_material_claims(loose.route, c.route) if not _quoted(loose.route, t)]
        policy = condition_policy(c.policy.policy, grounded)
        assert set(ungrounded(loose.route, c.route, policy)) >= {t.name for t in claims}
        unquoted += len(claims)
    assert released == len(SLICE)
    assert unquoted >= 1, f"without grounding ({without_grounding}) no revision made a new unquoted claim"


def test_the_shipped_condition_keeps_every_feature_and_v1_removes_the_floors() -> None:
    policy = compile_file(SLICE[0]).policy.policy
    assert SHIPPED.keeps == set(POLICY_FEATURES)
    assert condition_policy(policy, SHIPPED) is policy
    assert all(c.coauthor for c in CONDITIONS) and not SHIPPED.coauthor


def test_a_new_policy_feature_is_removed_from_the_four_conditions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A feature a later policy gains (class admission, say) is one entry of
    ``POLICY_FEATURES``: the paper's four conditions lose it, and a condition that names
    it keeps it (what a `v2a` entry would be)."""
    policy = compile_file(SLICE[0]).policy.policy
    assert policy.gates, "the shipped policy has gates, standing in for the new feature"
    monkeypatch.setitem(POLICY_FEATURES, "stand_in", lambda p: attrs.evolve(p, gates=()))
    for condition in CONDITIONS:
        assert condition_policy(policy, condition).gates == (), condition.name
    keeping = attrs.evolve(CONDITIONS[3], name="v2-like", keeps=CONDITIONS[3].keeps | {"stand_in"})
    assert condition_policy(policy, keeping) is policy


def _ps(c: Compiled) -> list[tuple[str, float, float]]:
    return [(t.name, t.p, t.cost.c) for t in c.numbers.transitions]


@pytest.mark.parametrize("power", ["write", "reuse"])
def test_a_coauthor_quotation_grounds_the_asset_and_moves_no_number(power: str) -> None:
    """Each quotation power makes `grounded(asset)` hold, read from the text as the
    language page words it, on a transition whose asset no evidence quoted; the
    recompiled route has the same p, c and score (the excerpt has weight 0)."""
    c = compile_file(SLICE[0])
    target = next(t for t in c.route.transitions if t.asset and not _quoted(c.route, t))
    policy = condition_policy(c.policy.policy, CONDITIONS[1])
    edited = (write_excerpts(c.route, [target.name], policy) if power == "write"
              else reuse_excerpts(c.route, [target.name], policy))
    assert edited is not None
    again = compile_file_text(route_to_text(edited), c)
    t = next(x for x in again.route.transitions if x.name == target.name)
    assert _quoted(again.route, t)
    if power == "reuse":
        assert t.asset in {e.excerpt for e in c.route.evidence}, "the asset quotes text the packet shows"
    else:
        assert t.asset == target.asset, "the written excerpt quotes the asset as it was"
    assert len(again.route.evidence) - len(c.route.evidence) <= 1
    assert _ps(again) == _ps(c) and again.numbers.score == c.numbers.score


def test_grounding_does_not_close_the_deletion_channel() -> None:
    """The paper's direction: under `v1.5a` the co-author's best revision of a route
    skips a state of the honest chain and is released, every new material claim in it
    quoted (read from the text), and GATE under the condition's policy finds nothing
    uncovered in it."""
    grounded = next(x for x in CONDITIONS if x.name == "v1.5a")
    session = Session()
    (c,) = session.compile_routes(session.load_paths(SLICE[:1]))
    found = search_route(c, session, "gate", grounded)
    best = found.best
    assert best is not None and best.released is not None and best.released > found.honest.ungated
    assert best.skips, "the revision skips a state of the honest chain"
    claims = _new_material_claims(best.route, c.route)
    assert claims and all(_quoted(best.route, t) for t in claims)
    assert discharge_route(best.route, condition_policy(c.policy.policy, grounded)).uncovered == []
    assert {"reuse-excerpt", "write-excerpt"} & {p for k in best.kinds for p in k.split("+")}


def test_no_honest_route_is_refused_under_any_condition() -> None:
    """Every route of the shipped cohort, honest, under each condition's policy: nothing
    uncovered, eligible, and (its claims being its own) nothing for grounding to ask."""
    session = Session()
    compiled = session.compile_routes(session.load_paths([str(COHORT)]))
    assert len(compiled) == 30
    for condition in CONDITIONS:
        for c in compiled:
            policy = condition_policy(c.policy.policy, condition)
            assert discharge_route(c.route, policy).uncovered == [], (condition.name, c.route.name)
            assert c.numbers.eligible and ungrounded(c.route, c.route, policy) == []
        refused = [s for s in (search_route(c, session, "gate", condition, Settings(budget=1)) for c in compiled[:3])
                   if s.honest.released is None]
        assert refused == [], condition.name


def test_restate_rewrites_later_states_that_carried_the_value() -> None:
    c = compile_file(SLICE[0])  # tutoring -> diagnostic -> premium -> national
    route = _restate(c.route, "tutoring", "customers", 5.0)
    values = {s.name: s.get("customers") for s in route.states}
    assert values == {"tutoring": 5.0, "diagnostic": 5.0, "premium": 3000.0, "national": 120000.0}
    again = compile_file_text(route_to_text(route), c)
    assert {s.name: s.get("customers") for s in again.route.states} == values


def compile_file_text(text: str, like: Compiled) -> Compiled:
    session = Session().for_variants_of(like.route)
    routes = session.routes_from_text(text, "restated.route", Path(like.route.file).parent)
    compiled = session.compile_route(routes[0])
    assert compiled is not None, session.diags.sorted()
    return compiled


def test_shrink_cost_halves_one_item() -> None:
    c = compile_file(SLICE[0])
    priors = {n: p.p for n, p in c.policy.policy.priors.items()}
    assert not any(e.kind == "shrink-cost" for e in enumerate_edits(c.route, priors))
    shrinks = [e for e in enumerate_edits(c.route, priors, shrink=True) if e.kind == "shrink-cost"]
    assert len(shrinks) == sum(len(t.cost) for t in c.route.transitions)
    edited = apply_edit(c.route, Edit("shrink-cost", "premium_course", "marketing"))
    item = next(i for t in edited.transitions for i in t.cost if i.name == "marketing")
    assert item.unit_cost == 30_000
    recompiled = compile_file_text(route_to_text(edited), c)
    budget = {t.name: t.cost.budget for t in recompiled.numbers.transitions}
    honest = {t.name: t.cost.budget for t in c.numbers.transitions}
    assert budget["premium_course"] == honest["premium_course"] - 30_000


def test_usage_errors(tmp_path: Path) -> None:
    assert main(["redteam", SLICE[0], "--emit", str(tmp_path)]) == EXIT_USAGE
    assert main(["redteam", SLICE[0], "--conditions"]) == EXIT_USAGE
    assert main(["redteam", "--search", SLICE[0], "--budget", "0"]) == EXIT_USAGE
    assert main(["seams", SLICE[0], "--search"]) == EXIT_USAGE
    assert not any(tmp_path.iterdir())


def test_feedback_picks_the_arms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["redteam", "--search", "--feedback", "gate", "--budget", "5", SLICE[0], "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc["arms"]) == ["gate"] and doc["settings"]["feedback"] == ["gate"]
    assert "conditions" not in doc and list(doc["routes"][0]["arms"]) == ["gate"]


# The whole cohort: its search is recorded and checked in tests/test_docblocks.py (the
# done-when on every route, the rates recounted, a seeded slice; the whole run, slow).


def test_an_unknown_arm_is_refused() -> None:
    c = compile_file(SLICE[0])
    with pytest.raises(ValueError, match="feedback arm"):
        search_route(c, Session(), "both")
    assert attrs.asdict(Settings())["budget"] > 0


def test_emit_that_cannot_be_written_is_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--emit` naming a file, or a revision that cannot be written, is PCSC-E108 with
    exit 1, never an internal error; the folder is checked before the search runs."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n", encoding="utf-8")
    assert main(["redteam", "--search", SLICE[0], "--budget", "2", "--emit", str(blocker), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E108"] and "routes" not in doc
    folder = tmp_path / "emit"
    (folder / "adaptive_sat_prep.gate.route").mkdir(parents=True)  # a folder where a revision goes
    assert main(["redteam", "--search", SLICE[0], "--budget", "2", "--emit", str(folder), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E108"]
    assert "adaptive_sat_prep.gate.route" in doc["diagnostics"][0]["message"]


def test_a_features_policy_that_does_not_load_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["redteam", "--search", "--conditions", "--features-policy", "nope@1.0.0", SLICE[0]]) == EXIT_USAGE
    assert "--features-policy nope@1.0.0: no policy `nope@1.0.0`" in capsys.readouterr().err
    assert main(["redteam", "--features-policy", "cohort@1.0.0", SLICE[0]]) == EXIT_USAGE
    assert "--features-policy needs --search" in capsys.readouterr().err
    assert main(["seams", "--experiment", "--features-policy", "cohort@1.0.0", SLICE[0]]) == EXIT_USAGE
    assert "--features-policy needs --search" in capsys.readouterr().err


def test_under_the_registry_a_merge_is_refused_and_measured_against_the_gold_chain() -> None:
    """Under v2b (the cohort's registry required) a revision that merges two steps skips
    a registry state: refused, with the skip counted against the gold chain; under
    v1.5a+b (the registry off) the same revision is judged without it."""
    from pcsc.analysis.search import _Search

    session = Session()
    (c,) = session.compile_routes(session.load_paths(SLICE[:1]))
    merge = next(e for e in enumerate_edits(c.route, {}, "category") if e.kind == "merge")
    text = route_to_text(apply_edit(c.route, merge))
    by_name = {x.name: x for x in CONDITIONS}
    settings = Settings(budget=1, features="cohort@1.0.0")
    v2b = _Search(c, session, "gate", by_name["v2b"], settings).evaluate(text, (), ())
    off = _Search(c, session, "gate", by_name["v1.5a+b"], settings).evaluate(text, (), ())
    assert v2b is not None and off is not None
    assert v2b.gold_skips and v2b.gold_skips == off.gold_skips == v2b.skips
    assert v2b.released is None and any(u.startswith("registry.") for u in v2b.uncovered)
    assert not any(u.startswith("registry.") for u in off.uncovered)
